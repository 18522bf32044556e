"""Castellion's rules in plain Python over lists and ints: the reference the compiled kernel
(``castle_envs.castellion.kernel``, the package's rules) is checked against.

``ReferenceState`` is a ``GameState`` with the package State's attributes (as lists) and dict
format; ``reference_encode`` is the observation; ``ReferenceCastellionEnv`` is
``CastellionEnv`` playing them. The castle is a 6 x 6 grid, row 0 the foundation, kept
left-aligned: each column is a stack on row 0, so ``heights`` says everything about the
castle's shape, and a castle splits exactly when a middle column loses its last tile.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from castle_envs.castellion.actions import (
    ACTIONS,
    DESTROY,
    DISCARD,
    DISCARD_POWER,
    DISCARD_TRAITOR,
    DRAW,
    ENCOUNTER_NOW,
    LIFT,
    NUM_ACTIONS,
    PILE_NAMES,
    PLACE,
    PLACE_LEFT,
    PLACE_TRAITOR,
    RECOVER,
    REVEAL,
    REVEAL_ORDEAL,
    SIZE,
    SWAP,
    SWAP_PAIRS,
    TAKE_REVEALED,
)
from castle_envs.castellion.data import (
    ASSAULT,
    BLACK_TRAITOR,
    CHAMELEON,
    FORMATIONS,
    JUGGLER,
    KIND_BY_NAME,
    KIND_NAMES,
    LEVELS,
    MENACE,
    NO_TILE,
    NUM_DEFENDER_KINDS,
    NUM_KINDS,
    ORDEAL_BY_NAME,
    ORDEALS,
    ORDEALS_BY_SLOT,
    REGULAR_COUNTS,
    ROWS,
    SAFE_COUNTS,
    SCHOOL,
    SEER,
    SHAPES,
    TOTAL_COUNTS,
    TRAITOR,
)
from castle_envs.castellion.env import RESET_OPTIONS, CastellionEnv
from castle_envs.castellion.layout import (
    CELL_OFF,
    DISCARD_OFF,
    HAND_OFF,
    LEVEL_OFF,
    OBS_SIZE,
    ORDEAL_OFF,
    ORDEAL_WIDTH,
    PHASE_OFF,
    REGULAR_OFF,
    REVEALED_OFF,
    SAFE_OFF,
    SCALAR_OFF,
)
from castle_envs.core.errors import HiddenInformationError, InvalidStateError
from castle_envs.core.options import check_choice
from castle_envs.core.saved import StateReader
from castle_envs.core.state import SolitaireState, check_options

# phases: what the player is deciding now
(
    DRAW_PHASE,
    DEFENDER_PHASE,
    TRAITOR_PHASE,
    DESTROY_PHASE,
    JUGGLE_PHASE,
    REVEAL_PHASE,
    RECOVER_PHASE,
    LIFT_PHASE,
    MOVE_PHASE,
    REVEAL_ORDEAL_PHASE,
    OVER,
) = range(11)
PHASE_NAMES = (
    "draw",
    "defender",
    "traitor",
    "destroy",
    "juggle",
    "reveal",
    "recover",
    "pyro_lift",
    "pyro_move",
    "reveal_ordeal",
    "over",
)
NUM_PHASES = len(PHASE_NAMES)
# why tiles are being destroyed: what follows the last one
TRAITOR_COST, PYRO_DESTROY, PENALTY = 1, 2, 3
DESTROY_REASONS = ("none", "traitor", "pyro", "penalty")

FOUNDATION_EXEMPTIONS = ("placed", "neighbors")  # I3 in RULES.md
EARLY_ENCOUNTERS = ("any_time", "turn_start")  # I7 in RULES.md
RULE_DEFAULTS = {"foundation_exemption": "placed", "early_encounter": "any_time"}
#: a saved state written before ``early_encounter`` existed was played under this reading
LEGACY_EARLY_ENCOUNTER = "turn_start"
MAX_REVEALED = 4
CELLS = SIZE * SIZE

# bitboards: bit r*6+c; shifting by 1 must not wrap from one row into the next
_FULL = (1 << CELLS) - 1
_COL0 = sum(1 << (r * SIZE) for r in range(SIZE))
_NOT_COL0 = _FULL & ~_COL0
_NOT_COL5 = _FULL & ~(_COL0 << (SIZE - 1))
_LINE = 0b1111
_TOWER = 1 | 1 << SIZE | 1 << 2 * SIZE | 1 << 3 * SIZE
_BASTION = 1 | 2 | 1 << SIZE | 1 << (SIZE + 1)


def _component(board: int, seed: int) -> int:
    """The orthogonally connected part of ``board`` holding bit ``seed``. Written in the
    subset of Python that numba compiles: the Castellion kernel compiles this very
    function."""
    comp = seed
    while True:
        grown = (
            comp
            | ((comp << 1) & _NOT_COL0)
            | ((comp >> 1) & _NOT_COL5)
            | (comp << SIZE)
            | (comp >> SIZE)
        ) & board
        if grown == comp:
            return comp
        comp = grown


def _shape_of_group(comp: int) -> int:
    """0 tower, 1 bastion, 2 line of defense, -1 nothing (exactly four tiles in pattern)."""
    if comp.bit_count() != 4:
        return -1
    return four_tile_shape(comp)


def four_tile_shape(comp: int) -> int:
    """``shape_of_group`` of a group known to hold four tiles. Written in the subset of
    Python that numba compiles: the Castellion kernel compiles this very function."""
    low = comp & -comp
    if comp == low * _TOWER:
        return 0
    if comp == low * _BASTION:
        return 1
    if comp == low * _LINE:
        return 2
    return -1


def formations_of_boards(boards) -> tuple[int, int, int]:
    """(towers, bastions, lines) over the faction bitboards."""
    counts = [0, 0, 0]
    for board in boards:
        while board:
            comp = _component(board, board & -board)
            board &= ~comp
            kind = _shape_of_group(comp)
            if kind >= 0:
                counts[kind] += 1
    return counts[0], counts[1], counts[2]


def _move_possible(heights) -> bool:
    """Can Pyro's second effect move some top tile to a different legal place?"""
    hs = [h for h in heights if h]
    width = len(hs)
    if sum(hs) < 2:
        return False
    for s in range(width):
        if hs[s] == 1:
            if 0 < s < width - 1:
                continue  # lifting it would split the castle
            return True  # a new column on the other side is open
        if width < SIZE:
            return True
        for c in range(width):
            if c != s and hs[c] < SIZE:
                return True
    return False


def _parse_tiles(value, what: str, limit) -> list[int]:
    if isinstance(value, (str, bytes)) or not isinstance(value, (Sequence, np.ndarray)):
        raise ValueError(
            f"options[{what!r}] must be a list of tile names, got {type(value).__name__}"
        )
    kinds = []
    for tile in value:
        if isinstance(tile, str):
            if tile not in KIND_BY_NAME:
                raise ValueError(
                    f"options[{what!r}] holds unknown tile {tile!r}; tiles are {list(KIND_BY_NAME)}"
                )
            kinds.append(KIND_BY_NAME[tile])
        elif (
            isinstance(tile, (int, np.integer))
            and not isinstance(tile, (bool, np.bool_))
            and 0 <= tile < NUM_KINDS
        ):
            kinds.append(int(tile))
        else:
            raise ValueError(f"options[{what!r}] holds {tile!r}, not a tile name or kind 0-13")
    for kind in range(NUM_KINDS):
        if kinds.count(kind) > limit[kind]:
            raise ValueError(
                f"options[{what!r}] holds {kinds.count(kind)} {KIND_NAMES[kind]} "
                f"tiles; the pile has only {limit[kind]}"
            )
    return kinds


class ReferenceState(SolitaireState):
    actions = ACTIONS
    hidden = False  # a player's view (player_view): pile order and face-down cards unknown

    def __init__(
        self,
        level: int = SCHOOL,
        foundation_exemption: str = "placed",
        early_encounter: str = "any_time",
    ):
        check_choice("foundation_exemption", foundation_exemption, FOUNDATION_EXEMPTIONS)
        check_choice("early_encounter", early_encounter, EARLY_ENCOUNTERS)
        self.level = level
        self.foundation_exemption = foundation_exemption
        self._neighbors_exempt = foundation_exemption == "neighbors"
        self.early_encounter = early_encounter
        # any_time: also with a tile in hand (a drawn, revealed or recovered tile or a Traitor)
        self._encounter_in_hand = early_encounter == "any_time" and level != SCHOOL
        self.regular: list[int] = []  # top of the pile is the END of the list
        self.safe: list[int] = []
        self.revealed: list[int] = []
        self.hand = NO_TILE
        self.cells = [NO_TILE] * CELLS  # index row * 6 + column, row 0 = foundation
        self.heights = [0] * SIZE
        self.discard = [0] * NUM_KINDS
        self.removed = [0] * NUM_KINDS
        self.ordeals = [0, 0, 0]
        self.face_down = [False, False, False]
        self.beside = [[0, 0], [0, 0], [0, 0]]  # [normal, black] Traitors per ordeal
        self.current = 0  # lowest unresolved ordeal
        self.phase = DRAW_PHASE
        self.destroy_left = 0
        self.destroy_reason = 0
        self.reveal_left = 0
        self.recover_shape = -1
        self.lifted = NO_TILE
        self.lift_origin = 0  # Place column that would put the lifted tile back
        self.outcome = 0  # 1 won, -1 lost
        self._mask: np.ndarray | None = None
        # cache; every change of the castle clears it
        self._formations: tuple[int, int, int] | None = None

    # --- the deal ----------------------------------------------------------------------------
    @classmethod
    def new_game(
        cls,
        rng: np.random.Generator | None = None,
        level: str = "school",
        options: dict | None = None,
        **rules,
    ) -> ReferenceState:
        """Deal a game. ``options`` may fix the piles (``regular_order`` / ``safe_order``: the
        whole pile, top first; ``regular_top`` / ``safe_top``: only its top tiles, the rest
        shuffled) and the ``ordeals`` (three card names, slots I, II, III)."""
        check_choice("level", level, LEVELS)
        rules = check_options(rules, RULE_DEFAULTS, "Castellion rules options")
        options = check_options(
            options,
            {
                "regular_order": None,
                "safe_order": None,
                "regular_top": None,
                "safe_top": None,
                "ordeals": None,
            },
            "reset options",
        )
        rng = rng if rng is not None else np.random.default_rng()
        state = cls(LEVELS.index(level), **rules)
        state.regular = state._deal_pile(rng, options, "regular", REGULAR_COUNTS)
        state.safe = state._deal_pile(rng, options, "safe", SAFE_COUNTS)
        if options["ordeals"] is None:
            state.ordeals = [
                int(ids[rng.integers(len(ids))]) for ids in ORDEALS_BY_SLOT[state.level]
            ]
        else:
            state.ordeals = state._check_ordeals(options["ordeals"])
        state.face_down = [state.level == MENACE] * 3
        return state

    @staticmethod
    def _deal_pile(rng, options, name, counts) -> list[int]:
        order, top = options[f"{name}_order"], options[f"{name}_top"]
        if order is not None and top is not None:
            raise ValueError(
                f"give options[{name + '_order'!r}] or options[{name + '_top'!r}], not both"
            )
        full = [k for k in range(NUM_KINDS) for _ in range(counts[k])]
        if order is not None:
            kinds = _parse_tiles(order, f"{name}_order", counts)
            if len(kinds) != len(full):
                raise ValueError(
                    f"options[{name + '_order'!r}] must hold all {len(full)} "
                    f"tiles of the {name} pile, got {len(kinds)}"
                )
            return kinds[::-1]
        fixed = [] if top is None else _parse_tiles(top, f"{name}_top", counts)
        rest = list(full)
        for kind in fixed:
            rest.remove(kind)
        rest = [rest[i] for i in rng.permutation(len(rest))]
        return (fixed + rest)[::-1]

    def _check_ordeals(self, names) -> list[int]:
        if isinstance(names, (str, bytes)) or not isinstance(names, Sequence) or len(names) != 3:
            raise ValueError("options['ordeals'] must list 3 ordeal cards (slots I, II, III)")
        ids = []
        for slot, name in enumerate(names):
            card = ORDEAL_BY_NAME.get(name) if isinstance(name, str) else None
            allowed = [ORDEALS[i].name for i in ORDEALS_BY_SLOT[self.level][slot]]
            if card is None or card not in ORDEALS_BY_SLOT[self.level][slot]:
                raise ValueError(
                    f"options['ordeals'][{slot}] = {name!r} is not a slot "
                    f"{slot + 1} card of the {LEVELS[self.level]} level; "
                    f"choose one of {allowed}"
                )
            ids.append(card)
        return ids

    # --- derived facts -------------------------------------------------------------------
    @property
    def width(self) -> int:
        return SIZE - self.heights.count(0)

    @property
    def castle_size(self) -> int:
        return sum(self.heights)

    def foundation_complete(self) -> bool:
        return 0 not in self.heights

    def faction_boards(self) -> list[int]:
        boards = [0, 0, 0, 0]
        cells = self.cells
        for c in range(SIZE):
            for r in range(self.heights[c]):
                i = r * SIZE + c
                boards[cells[i] // 3] |= 1 << i
        return boards

    def formations(self) -> tuple[int, int, int]:
        """(towers, bastions, lines of defense) now in the castle."""
        if self._formations is None:
            self._formations = formations_of_boards(self.faction_boards())
        return self._formations

    def tiles_played(self) -> bool:
        return not self.regular and not self.safe and not self.revealed and self.hand == NO_TILE

    @property
    def ordeals_passed(self) -> int:
        return self.current

    # --- legality --------------------------------------------------------------------------
    def _shape_clash(self, kind: int, r: int, c: int) -> bool:
        """Would a ``kind`` tile at (r, c), r >= 1, touch a tile of its shape (rule 3)?"""
        shape = kind % 3
        cells, heights = self.cells, self.heights
        if not (r == 1 and self._neighbors_exempt) and cells[(r - 1) * SIZE + c] % 3 == shape:
            return True
        if c > 0 and heights[c - 1] > r and cells[r * SIZE + c - 1] % 3 == shape:
            return True
        if c < SIZE - 1 and heights[c + 1] > r and cells[r * SIZE + c + 1] % 3 == shape:
            return True
        return False

    def _placements(self, mask, kind: int, rule3: bool, exclude: int = 99) -> None:
        heights = self.heights
        width = SIZE - heights.count(0)
        if width == 0:
            if exclude != 0:
                mask[PLACE] = True
            return
        for c in range(width):
            r = heights[c]
            if r < SIZE and c != exclude and not (rule3 and self._shape_clash(kind, r, c)):
                mask[PLACE + c] = True
        if width < SIZE:
            if exclude != width:
                mask[PLACE + width] = True
            if exclude != -1:
                mask[PLACE_LEFT] = True

    def _splits(self, c: int) -> bool:
        return self.heights[c] == 1 and 0 < c < SIZE - self.heights.count(0) - 1

    def _pyro_destroy_ok(self, c: int) -> bool:
        heights = list(self.heights)
        heights[c] -= 1
        return _move_possible(heights)

    def _power_ok(self, kind: int) -> bool:
        faction = kind // 3
        if faction == JUGGLER:
            return self.castle_size >= 2
        if faction == SEER:
            return len(self.revealed) < MAX_REVEALED and bool(self.regular or self.safe)
        if faction == CHAMELEON:
            return any(self.discard[f * 3 + kind % 3] for f in range(4) if f != CHAMELEON)
        for c in range(SIZE):  # Pyro: some destroy must leave a legal move
            if self.heights[c] and not self._splits(c) and self._pyro_destroy_ok(c):
                return True
        return False

    def _lift_ok(self, c: int) -> bool:
        h = self.heights[c]
        if h == 0 or self._splits(c):
            return False
        heights = list(self.heights)
        width = SIZE - heights.count(0)
        if sum(heights) < 2:
            return False
        if h == 1:
            return True  # the column vanishes: a new column on the other side is open
        if width < SIZE:
            return True
        return any(heights[o] < SIZE for o in range(SIZE) if o != c)

    def legal_action_mask(self) -> np.ndarray:
        if self._mask is not None:
            return self._mask
        mask = np.zeros(NUM_ACTIONS, dtype=bool)
        phase = self.phase
        if phase == DRAW_PHASE:
            if self.revealed:
                mask[TAKE_REVEALED : TAKE_REVEALED + len(self.revealed)] = True
            else:
                mask[DRAW] = bool(self.regular)
                mask[DRAW + 1] = bool(self.safe)
            mask[ENCOUNTER_NOW] = self.level != SCHOOL
        elif phase == DEFENDER_PHASE:
            self._placements(mask, self.hand, True)
            mask[DISCARD] = True
            mask[DISCARD_POWER] = self.level != SCHOOL and self._power_ok(self.hand)
            mask[ENCOUNTER_NOW] = self._encounter_in_hand
        elif phase == TRAITOR_PHASE:
            mask[PLACE_TRAITOR] = True
            mask[DISCARD_TRAITOR] = self.level != SCHOOL and self.hand != BLACK_TRAITOR
            mask[ENCOUNTER_NOW] = self._encounter_in_hand
        elif phase == DESTROY_PHASE:
            pyro = self.destroy_reason == PYRO_DESTROY
            for c in range(SIZE):
                h = self.heights[c]
                if h and not self._splits(c) and (not pyro or self._pyro_destroy_ok(c)):
                    for r in range(h):
                        mask[DESTROY + r * SIZE + c] = True
        elif phase == JUGGLE_PHASE:
            cells = self.cells
            for i, (a, b) in enumerate(SWAP_PAIRS):
                if cells[a] >= 0 and cells[b] >= 0:
                    mask[SWAP + i] = True
        elif phase == REVEAL_PHASE:
            mask[REVEAL] = bool(self.regular)
            mask[REVEAL + 1] = bool(self.safe)
        elif phase == RECOVER_PHASE:
            for f in range(4):
                kind = f * 3 + self.recover_shape
                if f != CHAMELEON and self.discard[kind]:
                    mask[RECOVER + kind] = True
        elif phase == LIFT_PHASE:
            for c in range(SIZE):
                mask[LIFT + c] = self._lift_ok(c)
        elif phase == MOVE_PHASE:
            self._placements(mask, self.lifted, False, self.lift_origin)
        elif phase == REVEAL_ORDEAL_PHASE:
            for slot in range(self.current, 3):
                mask[REVEAL_ORDEAL + slot] = self.face_down[slot]
        self._mask = mask
        return mask

    # --- changing the castle ---------------------------------------------------------------
    def _put(self, kind: int, column: int) -> int:
        """Place ``kind`` by a Place column (-1 = new left column); return its cell."""
        if column < 0:
            self._shift(1)
            column = 0
        r = self.heights[column]
        cell = r * SIZE + column
        self._formations = None
        self.cells[cell] = kind
        self.heights[column] = r + 1
        return cell

    def _take(self, r: int, c: int) -> int:
        """Remove the tile at (r, c); the column above slides down; return its kind."""
        self._formations = None
        cells = self.cells
        kind = cells[r * SIZE + c]
        h = self.heights[c]
        for row in range(r, h - 1):
            cells[row * SIZE + c] = cells[(row + 1) * SIZE + c]
        cells[(h - 1) * SIZE + c] = NO_TILE
        self.heights[c] = h - 1
        return kind

    def _shift(self, by: int) -> None:
        """Shift the castle ``by`` columns right (negative: left)."""
        cells, heights = self.cells, self.heights
        if by > 0:
            new_cells = [NO_TILE] * CELLS
            for r in range(SIZE):
                base = r * SIZE
                new_cells[base + by : base + SIZE] = cells[base : base + SIZE - by]
            self.cells = new_cells
            self.heights = [0] * by + heights[: SIZE - by]
        else:
            by = -by
            new_cells = [NO_TILE] * CELLS
            for r in range(SIZE):
                base = r * SIZE
                new_cells[base : base + SIZE - by] = cells[base + by : base + SIZE]
            self.cells = new_cells
            self.heights = heights[by:] + [0] * by

    def _left_align(self) -> None:
        if self.heights[0] == 0 and any(self.heights):
            first = next(c for c in range(SIZE) if self.heights[c])
            self._shift(-first)

    def _remove_rows(self, rows: int) -> None:
        self._formations = None
        cells = self.cells
        for c in range(SIZE):
            h = self.heights[c]
            for r in range(min(rows, h)):
                self.discard[cells[r * SIZE + c]] += 1
            for r in range(SIZE):
                src = r + rows
                cells[r * SIZE + c] = cells[src * SIZE + c] if src < h else NO_TILE
            self.heights[c] = max(0, h - rows)
        self._left_align()

    # --- applying moves ----------------------------------------------------------------------
    def apply_legal(self, action: int) -> None:
        self._mask = None
        phase = self.phase
        if phase == DRAW_PHASE:
            if action == ENCOUNTER_NOW:
                if self._encounter():
                    self._end_turn()
                return
            if action < TAKE_REVEALED:
                self._unseen("the next tile of a pile")
                self.hand = (self.regular if action == DRAW else self.safe).pop()
            else:
                self.hand = self.revealed.pop(action - TAKE_REVEALED)
            self.phase = DEFENDER_PHASE if self.hand < NUM_DEFENDER_KINDS else TRAITOR_PHASE
        elif action == ENCOUNTER_NOW:
            # early encounter with a tile in hand (any_time): the tile stays in hand
            if self._encounter():
                self._resume()
        elif phase == DEFENDER_PHASE:
            kind, self.hand = self.hand, NO_TILE
            if action < DISCARD:
                self._after_place(self._put(kind, action - PLACE if action < PLACE_LEFT else -1))
                return
            self.discard[kind] += 1
            if action == DISCARD:
                self._end_turn()
                return
            faction = kind // 3
            if faction == JUGGLER:
                self.phase = JUGGLE_PHASE
            elif faction == SEER:
                self.reveal_left = min(
                    MAX_REVEALED - len(self.revealed), len(self.regular) + len(self.safe)
                )
                self.phase = REVEAL_PHASE
            elif faction == CHAMELEON:
                self.recover_shape = kind % 3
                self.phase = RECOVER_PHASE
            else:
                self.destroy_left, self.destroy_reason = 1, PYRO_DESTROY
                self.phase = DESTROY_PHASE
        elif phase == TRAITOR_PHASE:
            kind, self.hand = self.hand, NO_TILE
            if action == PLACE_TRAITOR:
                slot = self.current
                self.beside[slot][kind == BLACK_TRAITOR] += 1
                count = sum(self.beside[slot])
                if count >= ORDEALS[self.ordeals[slot]].traitors and not self._encounter():
                    return
                self._end_turn()
                return
            self.discard[kind] += 1
            cost = 4
            if self.level == MENACE:
                cost = max(0, cost - self.formations()[2])
            cost = min(cost, self.castle_size)
            if cost:
                self.destroy_left, self.destroy_reason = cost, TRAITOR_COST
                self.phase = DESTROY_PHASE
            else:
                self._end_turn()
        elif phase == DESTROY_PHASE:
            cell = action - DESTROY
            self.discard[self._take(cell // SIZE, cell % SIZE)] += 1
            self._left_align()
            self.destroy_left -= 1
            if self.destroy_left and self.castle_size:
                return
            self.destroy_left, reason, self.destroy_reason = 0, self.destroy_reason, 0
            if reason == PYRO_DESTROY:
                self.phase = LIFT_PHASE
            elif reason == PENALTY:
                self._conclude(self.foundation_complete())
                self._resume()
            else:
                self._end_turn()
        elif phase == JUGGLE_PHASE:
            a, b = SWAP_PAIRS[action - SWAP]
            self.cells[a], self.cells[b] = self.cells[b], self.cells[a]
            self._formations = None
            self._end_turn()
        elif phase == REVEAL_PHASE:
            self._unseen("the next tile of a pile")
            self.revealed.append((self.regular if action == REVEAL else self.safe).pop())
            self.reveal_left -= 1
            if not self.reveal_left:
                self._end_turn()
        elif phase == RECOVER_PHASE:
            kind = action - RECOVER
            self.discard[kind] -= 1
            self.hand, self.recover_shape = kind, -1
            self.phase = DEFENDER_PHASE
        elif phase == LIFT_PHASE:
            c = action - LIFT
            self.lifted = self._take(self.heights[c] - 1, c)
            if self.heights[c]:
                self.lift_origin = c
            elif c == 0:
                self._left_align()
                self.lift_origin = -1
            else:
                self.lift_origin = c  # the new right column is where it stood
            self.phase = MOVE_PHASE
        elif phase == MOVE_PHASE:
            kind, self.lifted, self.lift_origin = self.lifted, NO_TILE, 0
            self._after_place(self._put(kind, action - PLACE if action < PLACE_LEFT else -1))
        elif phase == REVEAL_ORDEAL_PHASE:
            self._unseen("a face-down ordeal")
            self.face_down[action - REVEAL_ORDEAL] = False
            self._end_turn()

    def _after_place(self, cell: int) -> None:
        """Menace: completing a tower turns up a face-down ordeal of the player's choice."""
        if self.level == MENACE and any(self.face_down[self.current :]):
            kind = self.cells[cell]
            board = self.faction_boards()[kind // 3]
            if _shape_of_group(_component(board, 1 << cell)) == 0:
                self.phase = REVEAL_ORDEAL_PHASE
                return
        self._end_turn()

    def _resume(self) -> None:
        """After an encounter: the turn goes on with the tile still in hand (an early
        encounter with a tile in hand), else a new turn."""
        if self.outcome == 0 and self.hand >= 0:
            self.phase = DEFENDER_PHASE if self.hand < NUM_DEFENDER_KINDS else TRAITOR_PHASE
            return
        self._end_turn()

    def _end_turn(self) -> None:
        """Resolve what the rules force (complete castle, tiles exhausted), then a new turn."""
        while self.outcome == 0:
            if self.castle_size == CELLS or self.tiles_played():
                if not self._encounter():
                    return  # waiting for the player to choose the penalty's tiles
                continue
            self.phase = DRAW_PHASE
            return
        self.phase = OVER

    def _encounter(self) -> bool:
        """Encounter the lowest ordeal; False while its penalty awaits the player's choices."""
        slot = self.current
        if self.face_down[slot]:
            self._unseen("a face-down ordeal")
        card = ORDEALS[self.ordeals[slot]]
        self.face_down[slot] = False
        if card.kind == ROWS:
            self._remove_rows(card.rows)
            return self._conclude(self.foundation_complete())
        towers, bastions, lines = self.formations()
        met = towers >= card.towers and bastions >= card.bastions and lines >= card.lines
        if card.kind == FORMATIONS or met:
            return self._conclude(met and self.foundation_complete())
        penalty = max(0, card.penalty - 4 * bastions)
        if not penalty:
            return self._conclude(self.foundation_complete())
        if not self.foundation_complete() or self.castle_size - penalty < SIZE:
            # no choice of tiles can leave a complete foundation: the loss is certain
            return self._conclude(False)
        self.destroy_left, self.destroy_reason = penalty, PENALTY
        self.phase = DESTROY_PHASE
        return False

    def _conclude(self, passed: bool) -> bool:
        if not passed:
            self.outcome = -1
            self.phase = OVER
            return True
        slot = self.current
        self.removed[TRAITOR] += self.beside[slot][0]
        self.removed[BLACK_TRAITOR] += self.beside[slot][1]
        self.beside[slot] = [0, 0]
        self.current += 1
        if self.current == 3:
            self.outcome = 1
            self.phase = OVER
        return True

    # --- naming moves and refusals -----------------------------------------------------------
    def _cell_name(self, cell: int) -> str:
        return f"{KIND_NAMES[self.cells[cell]]} at row {cell // SIZE} column {cell % SIZE}"

    def describe_action(self, action) -> str:
        """The move in words; a face-down Ordeal is named by its slot, never by its card."""
        text = self._describe(action)
        for slot in range(3):
            if self.face_down[slot]:
                text = text.replace(
                    ORDEALS[self.ordeals[slot]].title, f"face-down Ordeal {'I' * (slot + 1)}"
                )
        return text

    def _describe(self, action) -> str:
        action = self.actions.check(action)
        move = str(self.actions.decode(action))
        phase = self.phase
        try:
            if DESTROY <= action < SWAP and self.cells[action - DESTROY] >= 0:
                return f"destroy {self._cell_name(action - DESTROY)}"
            if SWAP <= action < REVEAL:
                a, b = SWAP_PAIRS[action - SWAP]
                if self.cells[a] >= 0 and self.cells[b] >= 0:
                    return f"swap {self._cell_name(a)} with {self._cell_name(b)}"
            if PLACE <= action <= PLACE_LEFT and phase in (DEFENDER_PHASE, MOVE_PHASE):
                kind = self.hand if phase == DEFENDER_PHASE else self.lifted
                verb = "place" if phase == DEFENDER_PHASE else "move"
                col = action - PLACE
                where = (
                    "a new left column"
                    if action == PLACE_LEFT
                    else (f"column {col} row {self.heights[col]}" if col < SIZE else "")
                )
                return f"{verb} {KIND_NAMES[kind]} on {where}"
            if action in (DISCARD, DISCARD_POWER) and self.hand >= 0:
                return f"{move.replace('the tile', KIND_NAMES[self.hand])}"
            if TAKE_REVEALED <= action < ENCOUNTER_NOW and action - TAKE_REVEALED < len(
                self.revealed
            ):
                return f"play revealed {KIND_NAMES[self.revealed[action - TAKE_REVEALED]]}"
            if action in (DRAW, DRAW + 1, REVEAL, REVEAL + 1):
                pile = self.regular if action in (DRAW, REVEAL) else self.safe
                return f"{move} ({len(pile)} left)"
            if LIFT <= action < REVEAL_ORDEAL and self.heights[action - LIFT]:
                c = action - LIFT
                return f"move {self._cell_name((self.heights[c] - 1) * SIZE + c)}"
            if action in (PLACE_TRAITOR, DISCARD_TRAITOR) and self.hand >= 0 and self.current < 3:
                traitor = KIND_NAMES[self.hand]
                if action == DISCARD_TRAITOR:
                    cost = 4 - (self.formations()[2] if self.level == MENACE else 0)
                    cost = min(max(cost, 0), self.castle_size)
                    return f"discard the {traitor} (destroy {cost} tile{'s' * (cost != 1)})"
                slot = self.current
                card = (
                    "a face-down ordeal"
                    if self.face_down[slot]
                    else ORDEALS[self.ordeals[slot]].title
                )
                need = 2 if self.face_down[slot] else ORDEALS[self.ordeals[slot]].traitors
                return f"place the {traitor} beside {card} ({sum(self.beside[slot]) + 1}/{need})"
            if action == ENCOUNTER_NOW:
                slot = min(self.current, 2)
                if self.face_down[slot]:
                    return f"encounter face-down Ordeal {'I' * (slot + 1)} now"
                return f"encounter {ORDEALS[self.ordeals[slot]].title} now"
            if action >= REVEAL_ORDEAL:
                return f"reveal ordeal {action - REVEAL_ORDEAL + 1} (face down)"
        except IndexError:
            pass
        return move

    def illegal_reason(self, action: int) -> str:
        phase = self.phase
        name = PHASE_NAMES[phase]
        if phase == DRAW_PHASE:
            if DRAW <= action <= DRAW + 1:
                if self.revealed:
                    return "revealed tiles must be played before drawing a face-down tile"
                return f"the {PILE_NAMES[action - DRAW]} pile is empty"
            if TAKE_REVEALED <= action < ENCOUNTER_NOW:
                return f"there is no revealed tile {action - TAKE_REVEALED}"
            if action == ENCOUNTER_NOW:
                return "encountering an ordeal early is not allowed at the school level"
        if phase in (DEFENDER_PHASE, TRAITOR_PHASE) and action == ENCOUNTER_NOW:
            if self.level == SCHOOL:
                return "encountering an ordeal early is not allowed at the school level"
            return (
                "with early_encounter='turn_start' an ordeal is encountered early only at "
                "the start of a turn, not with a tile in hand"
            )
        if phase == DEFENDER_PHASE and PLACE <= action <= PLACE_LEFT:
            return self._placement_reason(action, True)
        if phase == MOVE_PHASE and PLACE <= action <= PLACE_LEFT:
            if action - PLACE == self.lift_origin or (
                action == PLACE_LEFT and self.lift_origin == -1
            ):
                return "the tile must move to a different place"
            return self._placement_reason(action, False)
        if phase == DEFENDER_PHASE and action == DISCARD_POWER:
            if self.level == SCHOOL:
                return "tile powers are not used at the school level"
            return (
                f"the {KIND_NAMES[self.hand]} power cannot be used in full here "
                "(powers are all or nothing)"
            )
        if phase == TRAITOR_PHASE and action == DISCARD_TRAITOR:
            if self.level == SCHOOL:
                return "Traitors cannot be discarded at the school level"
            return "a black-bordered Traitor must be placed"
        if phase == DESTROY_PHASE and DESTROY <= action < SWAP:
            cell = action - DESTROY
            if self.cells[cell] < 0:
                return f"there is no tile at row {cell // SIZE} column {cell % SIZE}"
            if self._splits(cell % SIZE):
                return "destroying it would split the castle in two"
            return "after it no tile could be moved, so Pyro's power would not be used in full"
        if phase == JUGGLE_PHASE and SWAP <= action < REVEAL:
            return "the Juggler swaps two tiles of the castle; a cell of this pair is empty"
        if phase == REVEAL_PHASE and REVEAL <= action < RECOVER:
            return f"the {PILE_NAMES[action - REVEAL]} pile is empty"
        if phase == RECOVER_PHASE and RECOVER <= action < LIFT:
            kind = action - RECOVER
            if kind % 3 != self.recover_shape:
                return f"the Chameleon recovers a {SHAPES[self.recover_shape]}"
            if kind // 3 == CHAMELEON:
                return "a Chameleon may not recover a Chameleon"
            return f"no {KIND_NAMES[kind]} is in the discard pile"
        if phase == LIFT_PHASE and LIFT <= action < REVEAL_ORDEAL:
            c = action - LIFT
            if not self.heights[c]:
                return f"column {c} is empty"
            if self._splits(c):
                return "moving it would split the castle in two"
            return "that tile has no other legal place to go"
        if phase == REVEAL_ORDEAL_PHASE and action >= REVEAL_ORDEAL:
            return "that ordeal is already face up"
        return f"it is not a decision of the current phase ({name})"

    def _placement_reason(self, action: int, rule3: bool) -> str:
        width = self.width
        col = action - PLACE if action < PLACE_LEFT else -1
        if width == 0:
            return "the first tile goes on column 0 of the foundation"
        if col > width:
            return f"column {col} is not beside the castle (width {width})"
        if col in (-1, width) and width == SIZE:
            return "the castle may not be wider than 6 tiles"
        if 0 <= col < width and self.heights[col] == SIZE:
            return f"column {col} is already 6 tiles tall"
        kind = self.hand if rule3 else self.lifted
        r = self.heights[col] if 0 <= col < width else 0
        where = f"a {SHAPES[kind % 3]} on column {col} row {r}"
        if r >= 1:
            shape = kind % 3
            below = (r - 1) * SIZE + col
            if not (r == 1 and self._neighbors_exempt) and self.cells[below] % 3 == shape:
                what = "the foundation tile below it" if r == 1 else "the tile below it"
                return (
                    f"{where} would stand on {what}, {self._cell_name(below)}, of the "
                    "same shape (only tiles placed in the foundation row are exempt)"
                )
            for side in (col - 1, col + 1):
                if (
                    0 <= side < SIZE
                    and self.heights[side] > r
                    and self.cells[r * SIZE + side] % 3 == shape
                ):
                    return (
                        f"{where} would touch {self._cell_name(r * SIZE + side)} beside "
                        "it, of the same shape"
                    )
        return f"{where} is not a legal place"

    # --- copies and serialization ------------------------------------------------------------
    def player_view(self, player: int = 0) -> ReferenceState:
        """What the player knows: a copy whose piles are in tile-kind order (their contents,
        not their order) and whose face-down ordeals read as the first card of their level
        and slot, marked ``hidden``: drawing or revealing from it raises
        ``HiddenInformationError``. Agents get this; ``determinize`` of it deals a world."""
        view = self.clone()
        view.regular, view.safe = sorted(self.regular), sorted(self.safe)
        for slot in range(3):
            if self.face_down[slot]:
                view.ordeals[slot] = int(ORDEALS_BY_SLOT[self.level][slot][0])
        view.hidden = True
        return view

    def _unseen(self, what: str) -> None:
        if self.hidden:
            raise HiddenInformationError(
                f"this is the player's view: {what} is hidden; "
                "search determinize(0, rng) of it instead"
            )

    def determinize(self, player: int, rng: np.random.Generator) -> ReferenceState:
        """The order of each pile and the face-down ordeal cards are hidden. A player who
        remembers what came from each pile knows its contents, so each pile is shuffled
        separately; a face-down card is drawn again from its level and slot's cards."""
        other = self.clone()
        for name in ("regular", "safe"):
            pile = sorted(getattr(self, name))
            setattr(other, name, [pile[i] for i in rng.permutation(len(pile))])
        for slot in range(3):
            if self.face_down[slot]:
                ids = ORDEALS_BY_SLOT[self.level][slot]
                other.ordeals[slot] = int(ids[rng.integers(len(ids))])
        other.hidden = False
        other._mask = None
        return other

    def clone(self) -> ReferenceState:
        other = ReferenceState.__new__(ReferenceState)
        other.__dict__.update(self.__dict__)
        other.regular = list(self.regular)
        other.safe = list(self.safe)
        other.revealed = list(self.revealed)
        other.cells = list(self.cells)
        other.heights = list(self.heights)
        other.discard = list(self.discard)
        other.removed = list(self.removed)
        other.ordeals = list(self.ordeals)
        other.face_down = list(self.face_down)
        other.beside = [list(b) for b in self.beside]
        other._mask = None
        other._formations = None
        return other

    def tile_counts(self) -> dict[str, list[int]]:
        """Tiles per kind in each place; every kind sums to its box count (84 tiles)."""

        def count(tiles):
            out = [0] * NUM_KINDS
            for k in tiles:
                out[k] += 1
            return out

        castle = count(k for k in self.cells if k >= 0)
        beside = [0] * NUM_KINDS
        beside[TRAITOR] = sum(b[0] for b in self.beside)
        beside[BLACK_TRAITOR] = sum(b[1] for b in self.beside)
        held = count(k for k in (self.hand, self.lifted) if k >= 0)
        return {
            "regular": count(self.regular),
            "safe": count(self.safe),
            "revealed": count(self.revealed),
            "held": held,
            "castle": castle,
            "discard": list(self.discard),
            "beside": beside,
            "removed": list(self.removed),
        }

    def to_dict(self) -> dict:
        return {
            "level": LEVELS[self.level],
            "rules": {
                "foundation_exemption": self.foundation_exemption,
                "early_encounter": self.early_encounter,
            },
            "regular": self.regular[::-1],
            "safe": self.safe[::-1],
            "revealed": list(self.revealed),
            "hand": self.hand,
            "castle": [self.cells[r * SIZE : (r + 1) * SIZE] for r in range(SIZE)],
            "discard": list(self.discard),
            "removed": list(self.removed),
            "ordeals": [ORDEALS[i].name for i in self.ordeals],
            "face_down": list(self.face_down),
            "beside": [list(b) for b in self.beside],
            "current": self.current,
            "phase": PHASE_NAMES[self.phase],
            "destroy_left": self.destroy_left,
            "destroy_reason": DESTROY_REASONS[self.destroy_reason],
            "reveal_left": self.reveal_left,
            "recover_shape": self.recover_shape,
            "lifted": self.lifted,
            "lift_origin": self.lift_origin,
            "outcome": self.outcome,
        }

    @classmethod
    def from_dict(cls, data: dict) -> ReferenceState:
        try:
            return cls._from_dict(data)
        except InvalidStateError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
            raise InvalidStateError(f"not a Castellion state: {err!r}") from None

    @classmethod
    def _from_dict(cls, data: dict) -> ReferenceState:
        def bad(why):
            raise InvalidStateError(f"invalid Castellion state: {why}")

        if not isinstance(data, dict):
            bad("expected a dict")
        expected = set(cls().to_dict())
        if set(data) != expected:
            bad(
                f"keys differ: missing {sorted(expected - set(data))}, "
                f"unknown {sorted(set(data) - expected)}"
            )
        if data["level"] not in LEVELS:
            bad(f"unknown level {data['level']!r}")
        rules = data["rules"]
        if isinstance(rules, dict) and set(rules) == {"foundation_exemption"}:
            # saved before the early_encounter option: played under the turn-start reading
            rules = dict(rules, early_encounter=LEGACY_EARLY_ENCOUNTER)
        if (
            not isinstance(rules, dict)
            or set(rules) != set(RULE_DEFAULTS)
            or rules["foundation_exemption"] not in FOUNDATION_EXEMPTIONS
            or rules["early_encounter"] not in EARLY_ENCOUNTERS
        ):
            bad(
                f"bad rules {rules!r} (expected {sorted(RULE_DEFAULTS)}: foundation_exemption "
                f"in {list(FOUNDATION_EXEMPTIONS)}, early_encounter in "
                f"{list(EARLY_ENCOUNTERS)})"
            )
        s = cls(LEVELS.index(data["level"]), **rules)

        def ints(value, what, lo, hi, length=None, max_length=None):
            if not isinstance(value, list) or (length is not None and len(value) != length):
                bad(f"{what} must be a list" + (f" of {length}" if length else ""))
            if max_length is not None and len(value) > max_length:  # before reading it
                bad(f"{what} holds {len(value)} entries; at most {max_length} fit")
            for v in value:
                if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                    bad(f"{what} holds {v!r}, outside {lo}-{hi}")
            return list(value)

        def scalar(name, lo, hi):
            v = data[name]
            if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                bad(f"{name} = {v!r}, outside {lo}-{hi}")
            return v

        s.regular = ints(
            data["regular"], "regular", 0, NUM_KINDS - 1, max_length=sum(REGULAR_COUNTS)
        )[::-1]
        s.safe = ints(data["safe"], "safe", 0, NUM_KINDS - 1, max_length=sum(SAFE_COUNTS))[::-1]
        s.revealed = ints(data["revealed"], "revealed", 0, NUM_KINDS - 1, max_length=MAX_REVEALED)
        s.hand = scalar("hand", -1, NUM_KINDS - 1)
        castle = data["castle"]
        if not isinstance(castle, list) or len(castle) != SIZE:
            bad("castle must be 6 rows")
        s.cells = [
            v
            for r in range(SIZE)
            for v in ints(castle[r], f"castle row {r}", -1, NUM_DEFENDER_KINDS - 1, SIZE)
        ]
        s.discard = ints(data["discard"], "discard", 0, 12, NUM_KINDS)
        s.removed = ints(data["removed"], "removed", 0, 12, NUM_KINDS)
        ordeals = data["ordeals"]
        if not isinstance(ordeals, list) or len(ordeals) != 3:
            bad("ordeals must name 3 cards")
        try:
            s.ordeals = s._check_ordeals(ordeals)
        except ValueError as err:
            bad(str(err))
        face = data["face_down"]
        if (
            not isinstance(face, list)
            or len(face) != 3
            or not all(isinstance(f, bool) for f in face)
        ):
            bad("face_down must be 3 booleans")
        s.face_down = list(face)
        beside = data["beside"]
        if not isinstance(beside, list) or len(beside) != 3:
            bad("beside must be 3 [normal, black] pairs")
        s.beside = [ints(b, "beside", 0, 12, 2) for b in beside]
        s.current = scalar("current", 0, 3)
        if data["phase"] not in PHASE_NAMES:
            bad(f"unknown phase {data['phase']!r}")
        s.phase = PHASE_NAMES.index(data["phase"])
        s.destroy_left = scalar("destroy_left", 0, 42)
        if data["destroy_reason"] not in DESTROY_REASONS:
            bad(f"unknown destroy_reason {data['destroy_reason']!r}")
        s.destroy_reason = DESTROY_REASONS.index(data["destroy_reason"])
        s.reveal_left = scalar("reveal_left", 0, MAX_REVEALED)
        s.recover_shape = scalar("recover_shape", -1, 2)
        s.lifted = scalar("lifted", -1, NUM_DEFENDER_KINDS - 1)
        s.lift_origin = scalar("lift_origin", -1, SIZE)
        s.outcome = scalar("outcome", -1, 1)
        s._validate(bad)
        return s

    def _validate(self, bad) -> None:
        # the castle: stacks on the foundation, left-aligned, one piece
        for c in range(SIZE):
            column = [self.cells[r * SIZE + c] for r in range(SIZE)]
            h = sum(1 for k in column if k >= 0)
            if any(k < 0 for k in column[:h]):
                bad(f"column {c} has a tile hanging in the air")
            self.heights[c] = h
        width = self.width
        if self.outcome == 0 and any(self.heights[c] == 0 for c in range(width)):
            bad("the castle is not left-aligned in one piece")
        counts = self.tile_counts()
        totals = [sum(place[k] for place in counts.values()) for k in range(NUM_KINDS)]
        if totals != list(TOTAL_COUNTS):
            bad(f"tiles per kind {totals} differ from the box {list(TOTAL_COUNTS)}")
        if any(self.removed[:NUM_DEFENDER_KINDS]):
            bad("only Traitors leave the game; destroyed Defenders go to the discard pile")
        for k in range(NUM_KINDS):
            if counts["regular"][k] > REGULAR_COUNTS[k] or counts["safe"][k] > SAFE_COUNTS[k]:
                bad(f"a pile holds more {KIND_NAMES[k]} tiles than it was dealt")
        if len(self.revealed) > MAX_REVEALED:
            bad("more than 4 revealed tiles")
        if self.revealed and self.level == SCHOOL:
            bad("no tile is revealed at the school level")
        for slot in range(3):
            # (mypy types the right of "and" from its left: sum() over ints, read as bools)
            if slot < self.current and sum(self.beside[slot]):  # type: ignore[arg-type]
                bad(f"resolved ordeal {slot + 1} still has Traitors beside it")
            if slot > self.current and sum(self.beside[slot]):  # type: ignore[arg-type]
                bad(f"Traitors beside ordeal {slot + 1}, which is not the lowest")
            if slot < self.current and self.face_down[slot]:
                bad(f"resolved ordeal {slot + 1} is face down")
        if self.level != MENACE and any(self.face_down):
            bad("only Assault cards are dealt face down")
        phase = self.phase
        if (self.outcome != 0) != (phase == OVER):
            bad("the outcome and the phase disagree")
        if self.outcome == 1 and self.current != 3:
            bad("a won game has resolved all three ordeals")
        if self.outcome == 0 and self.current == 3:
            bad("all three ordeals resolved but the game is not won")
        if (
            self.outcome == 0
            and self.destroy_reason != PENALTY
            and sum(self.beside[self.current]) >= ORDEALS[self.ordeals[self.current]].traitors
        ):
            bad("an ordeal has reached its Traitor count without being encountered")
        # a tile stays in hand through an early encounter's penalty and at the game's end
        in_hand_ok = (
            (DEFENDER_PHASE, TRAITOR_PHASE)
            if not self._encounter_in_hand
            else (DEFENDER_PHASE, TRAITOR_PHASE, OVER)
            + ((DESTROY_PHASE,) if self.destroy_reason == PENALTY else ())
        )
        if (self.hand >= 0 and phase not in in_hand_ok) or (
            self.hand < 0 and phase in (DEFENDER_PHASE, TRAITOR_PHASE)
        ):
            bad(f"a tile in hand does not fit the {PHASE_NAMES[phase]} phase")
        if phase == DEFENDER_PHASE and self.hand >= NUM_DEFENDER_KINDS:
            bad("a Traitor in hand in the defender phase")
        if phase == TRAITOR_PHASE and self.hand < NUM_DEFENDER_KINDS:
            bad("a Defender in hand in the traitor phase")
        if (self.lifted >= 0) != (phase == MOVE_PHASE):
            bad("a lifted tile outside Pyro's move")
        if (self.destroy_left > 0) != (phase == DESTROY_PHASE) or (self.destroy_reason != 0) != (
            phase == DESTROY_PHASE
        ):
            bad("tiles to destroy outside the destroy phase")
        if phase == DESTROY_PHASE and self.destroy_left > self.castle_size:
            bad("more tiles to destroy than the castle holds")
        if (
            (self.reveal_left > 0) != (phase == REVEAL_PHASE)
            or self.reveal_left > len(self.regular) + len(self.safe)
            or len(self.revealed) + self.reveal_left > MAX_REVEALED
        ):
            bad("tiles to reveal do not fit the phase and piles")
        if (self.recover_shape >= 0) != (phase == RECOVER_PHASE):
            bad("a Chameleon recovery outside the recover phase")
        if phase != MOVE_PHASE and self.lift_origin != 0:
            bad("lift_origin set outside Pyro's move")
        if phase in (DRAW_PHASE, DEFENDER_PHASE, TRAITOR_PHASE) and self.castle_size == CELLS:
            bad("a complete castle must have encountered its ordeal")
        if phase == DRAW_PHASE and self.tiles_played():
            bad("all tiles are played: the ordeals must have been resolved")
        if self.level == SCHOOL and phase not in (DRAW_PHASE, DEFENDER_PHASE, TRAITOR_PHASE, OVER):
            bad(f"the {PHASE_NAMES[phase]} phase does not exist at the school level")
        if not self.legal_action_mask().any() and phase != OVER:
            bad("no legal move in a position that is not over")


#: public names for the renderer and the agents (a group of cells, and its shape)
component = _component
shape_of_group = _shape_of_group


# --- the observation ------------------------------------------------------------------------
_REGULAR_SCALE = np.array([1.0 / max(c, 1) for c in REGULAR_COUNTS], dtype=np.float32)
# row kind + 1 of this table is a cell's 7 values (row 0: the empty cell)
_CELL_TABLE = np.zeros((NUM_DEFENDER_KINDS + 1, 7), dtype=np.float32)
for _k in range(NUM_DEFENDER_KINDS):
    _CELL_TABLE[_k + 1, _k // 3] = _CELL_TABLE[_k + 1, 4 + _k % 3] = 1.0


def reference_encode(state: ReferenceState, out: np.ndarray | None = None) -> np.ndarray:
    obs = np.zeros(OBS_SIZE, dtype=np.float32) if out is None else out
    if out is not None:
        obs[:] = 0.0
    obs[CELL_OFF:HAND_OFF] = _CELL_TABLE[np.asarray(state.cells) + 1].ravel()
    held = state.hand if state.hand >= 0 else state.lifted
    if held >= 0:
        obs[HAND_OFF + held] = 1.0
    for slot, kind in enumerate(state.revealed):
        obs[REVEALED_OFF + slot * NUM_KINDS + kind] = 1.0
    regular = np.bincount(state.regular, minlength=NUM_KINDS) if state.regular else 0
    obs[REGULAR_OFF : REGULAR_OFF + NUM_KINDS] = regular * _REGULAR_SCALE
    for kind in state.safe:
        obs[SAFE_OFF + kind] = 1.0
    obs[DISCARD_OFF : DISCARD_OFF + NUM_DEFENDER_KINDS] = (
        np.asarray(state.discard[:NUM_DEFENDER_KINDS], dtype=np.float32) / 6.0
    )
    for slot in range(3):
        base = ORDEAL_OFF + slot * ORDEAL_WIDTH
        if slot < state.current:
            obs[base + 2] = 1.0
        elif state.face_down[slot]:
            obs[base] = 1.0
            obs[base + 3] = sum(state.beside[slot]) / 2  # every Assault triggers at 2
            continue
        else:
            obs[base + 1] = 1.0
        card = ORDEALS[state.ordeals[slot]]
        obs[base + 3] = sum(state.beside[slot]) / card.traitors
        obs[base + 4] = card.towers / 5
        obs[base + 5] = card.bastions / 5
        obs[base + 6] = card.lines / 5
        obs[base + 7] = card.rows / 3
        obs[base + 8] = card.penalty / 42
        obs[base + 9] = card.kind == FORMATIONS
        obs[base + 10] = card.kind == ASSAULT
        obs[base + 11] = card.kind == ROWS
    obs[PHASE_OFF + state.phase] = 1.0
    obs[LEVEL_OFF + state.level] = 1.0
    towers, bastions, lines = state.formations()
    sc = SCALAR_OFF
    obs[sc : sc + 3] = (towers / 9, bastions / 9, lines / 9)
    obs[sc + 3] = state.castle_size / 36
    obs[sc + 4] = len(state.regular) / 72
    obs[sc + 5] = len(state.safe) / 12
    obs[sc + 6] = state.destroy_left / 42
    obs[sc + 7] = state.reveal_left / 4
    if state.recover_shape >= 0:
        obs[sc + 8 + state.recover_shape] = 1.0
    obs[sc + 11] = state.foundation_complete()
    if state.phase == MOVE_PHASE:
        obs[sc + 12 + (state.lift_origin if state.lift_origin >= 0 else 6)] = 1.0
    obs[sc + 19] = state.foundation_exemption == "neighbors"
    return obs


class ReferenceCastellionEnv(CastellionEnv):
    """``CastellionEnv`` over ``ReferenceState`` and ``reference_encode``."""

    @classmethod
    def state_type(cls):
        return ReferenceState

    def new_state(self, rng, options):
        options = check_options(options, RESET_OPTIONS, "reset option")
        saved = options.pop("state")
        if saved is not None:
            if any(v is not None for v in options.values()):
                raise ValueError("reset option 'state' excludes the pile and ordeal options")
            state = ReferenceState.from_dict(saved)
            StateReader("Castellion").same_game(
                {"level": LEVELS[state.level], "rules": state.to_dict()["rules"]},
                {"level": self.level, "rules": self.rules},
            )
            return state
        return ReferenceState.new_game(rng, self.level, options, **self.rules)

    def observe_state(self, state):
        return reference_encode(state)
