"""Castellion's rules core: a ``State`` over the compiled kernel's row.

Nothing here knows about Gymnasium. The rules themselves are ``kernel`` (one implementation,
compiled with numba): ``State`` keeps a position in one row of the kernel's layout and gives
it the rules-core interface (``legal_action_mask``, ``apply_action``, ``clone``,
``player_view``, ``determinize``, ``to_dict``/``from_dict``, readable moves and errors).
``State.new_game`` deals; ``to_dict``/``from_dict`` serialize it (pile orders, hidden from
the player, included). RULES.md beside this file states every rule and interpretation the
kernel implements.

The castle is a 6 x 6 grid, row 0 the foundation, kept left-aligned. Because every tile
but the foundation's stands on another and the foundation is one unbroken row, each
column is a stack on row 0: ``heights`` says everything about the castle's shape, and a
castle splits exactly when a middle column loses its last tile.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, NoReturn

import numpy as np

from ..core.errors import HiddenInformationError, InvalidStateError
from ..core.jit import COMPILED
from ..core.options import check_choice
from ..core.state import SolitaireState, check_options
from . import kernel as K
from .actions import (
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
from .data import (
    BLACK_TRAITOR,
    CHAMELEON,
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
    SAFE_COUNTS,
    SCHOOL,
    SHAPES,
    TOTAL_COUNTS,
    TRAITOR,
)
from .layout import (
    CELLS,
    DEFENDER_PHASE,
    DESTROY_PHASE,
    DESTROY_REASONS,
    DRAW_PHASE,
    JUGGLE_PHASE,
    LIFT_PHASE,
    MAX_REVEALED,
    MOVE_PHASE,
    NUM_PHASES,
    OVER,
    PENALTY,
    PHASE_NAMES,
    PYRO_DESTROY,
    RECOVER_PHASE,
    REVEAL_ORDEAL_PHASE,
    REVEAL_PHASE,
    TRAITOR_COST,
    TRAITOR_PHASE,
    component,
    four_tile_shape,
)

__all__ = [
    "State",
    "Tiles",
    "FOUNDATION_EXEMPTIONS",
    "EARLY_ENCOUNTERS",
    "RULE_CHOICES",
    "RULE_DEFAULTS",
    "LEGACY_EARLY_ENCOUNTER",
    "MAX_REVEALED",
    "CELLS",
    "SIZE",
    "NO_TILE",
    "DRAW_PHASE",
    "DEFENDER_PHASE",
    "TRAITOR_PHASE",
    "DESTROY_PHASE",
    "JUGGLE_PHASE",
    "REVEAL_PHASE",
    "RECOVER_PHASE",
    "LIFT_PHASE",
    "MOVE_PHASE",
    "REVEAL_ORDEAL_PHASE",
    "OVER",
    "PHASE_NAMES",
    "NUM_PHASES",
    "TRAITOR_COST",
    "PYRO_DESTROY",
    "PENALTY",
    "DESTROY_REASONS",
    "component",
    "shape_of_group",
    "four_tile_shape",
    "formations_of_boards",
]

FOUNDATION_EXEMPTIONS = ("placed", "neighbors")  # I3 in RULES.md
EARLY_ENCOUNTERS = ("any_time", "turn_start")  # I7 in RULES.md
#: the rules options: name -> allowed values, default first (the env's keywords, the saved
#: state's ``rules``, the solve command's flags and the kernels' flags read this one table)
RULE_CHOICES = {"foundation_exemption": FOUNDATION_EXEMPTIONS, "early_encounter": EARLY_ENCOUNTERS}
RULE_DEFAULTS = {name: values[0] for name, values in RULE_CHOICES.items()}
#: a saved state written before ``early_encounter`` existed was played under this reading
LEGACY_EARLY_ENCOUNTER = "turn_start"

# the row's type: the compiled kernels' int8; uncompiled (no numba, or NUMBA_DISABLE_JIT) the
# kernels run on NumPy scalars, which do not widen int8 arithmetic as numba does, so int64
# (the batched env's too)
_ROW_DTYPE = np.int8 if COMPILED else np.int64
# the fixed blocks of the row a State shows as NumPy views: (first word, length)
_BLOCKS = {
    "cells": (K.CELL, CELLS),
    "heights": (K.HEIGHT, SIZE),
    "discard": (K.DISC, NUM_KINDS),
    "removed": (K.REMOVED, NUM_KINDS),
    "ordeals": (K.ORD, 3),
}
# the piles: (first word, word of their size); the top of a pile is its last entry
_PILES = {"regular": (K.REG, K.REG_N), "safe": (K.SAFE, K.SAFE_N), "revealed": (K.REV, K.REV_N)}


def _view(s: np.ndarray, name: str) -> np.ndarray | None:
    """The view ``name`` of the row ``s`` (a block, ``beside`` or ``face_down``)."""
    if name in _BLOCKS:
        at, n = _BLOCKS[name]
        return s[at : at + n]
    if name == "beside":
        return s[K.BESIDE : K.BESIDE + 6].reshape(3, 2)
    # the face-down flags as a bool view of the int8 row; int64 rows (no numba) have none:
    # read as a bool copy
    return s[K.FACE : K.FACE + 3].view(np.bool_) if s.dtype == np.int8 else None


def shape_of_group(comp: int) -> int:
    """0 tower, 1 bastion, 2 line of defense, -1 nothing (exactly four tiles in pattern)."""
    if comp.bit_count() != 4:
        return -1
    return four_tile_shape(comp)


def formations_of_boards(boards: Iterable[int]) -> tuple[int, int, int]:
    """(towers, bastions, lines) over the faction bitboards."""
    counts = [0, 0, 0]
    for board in boards:
        while board:
            comp = component(board, board & -board)
            board &= ~comp
            kind = shape_of_group(comp)
            if kind >= 0:
                counts[kind] += 1
    return counts[0], counts[1], counts[2]


def _parse_tiles(value: Any, what: str, limit: Sequence[int]) -> list[int]:
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


class _Word:
    """A scalar of the position: one word of the State's row."""

    def __init__(self, index: int) -> None:
        self.index = index

    def __get__(self, state: State | None, owner: type | None = None) -> Any:
        if state is None:
            return self
        return int(state.s[self.index])

    def __set__(self, state: State, value: int) -> None:
        state.s[self.index] = value
        state._mask = None


class _Block:
    """A fixed block of the row, as a NumPy view (made on first use: a State's views are
    dropped by ``clone`` and pickling, which copy the row); assigning to it writes the row."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, state: State | None, owner: type | None = None) -> Any:
        if state is None:
            return self
        views = state._views
        view = views.get(self.name)
        if view is None:
            view = views[self.name] = _view(state.s, self.name)
        return view

    def __set__(self, state: State, value: Any) -> None:
        self.__get__(state)[...] = value
        state._mask = None


class Tiles(np.ndarray):
    """A pile's tiles: a NumPy view of the row whose truth value, like the list it once
    was, says whether it holds any (``if state.revealed:``), whatever the tiles are."""

    def __bool__(self) -> bool:
        return self.size > 0


class _Pile:
    """A pile (bottom first, its top the last entry) or the revealed tiles: a view (``Tiles``)
    of the row's words in use; assigning a list of tile kinds writes them and their number."""

    def __init__(self, name: str) -> None:
        self.at, self.size = _PILES[name]

    def __get__(self, state: State | None, owner: type | None = None) -> Any:
        if state is None:
            return self
        s = state.s
        return s[self.at : self.at + s[self.size]].view(Tiles)

    def __set__(self, state: State, value: Any) -> None:
        s = state.s
        kinds = np.asarray(value, dtype=np.int64).ravel()
        n = len(kinds)
        old = int(s[self.size])
        s[self.at : self.at + n] = kinds
        if old > n:
            s[self.at + n : self.at + old] = NO_TILE
        s[self.size] = n
        state._mask = None


class _FaceDown:
    """The face-down flags: a bool view of the int8 row; with int64 rows (no numba) a bool
    copy (write them by assigning the whole list)."""

    def __get__(self, state: State | None, owner: type | None = None) -> Any:
        if state is None:
            return self
        views = state._views
        if "face_down" not in views:
            views["face_down"] = _view(state.s, "face_down")
        view = views["face_down"]
        if view is not None:
            return view
        return state.s[K.FACE : K.FACE + 3] != 0

    def __set__(self, state: State, value: Any) -> None:
        state.s[K.FACE : K.FACE + 3] = np.asarray(value, dtype=bool)
        state._mask = None


def _read_rules(rules: Any, bad: Callable[[str], NoReturn]) -> dict:
    """A saved state's rules options, checked against ``RULE_CHOICES``."""
    if isinstance(rules, dict) and set(rules) == {"foundation_exemption"}:
        # saved before the early_encounter option: played under the turn-start reading
        rules = dict(rules, early_encounter=LEGACY_EARLY_ENCOUNTER)
    if (
        not isinstance(rules, dict)
        or set(rules) != set(RULE_CHOICES)
        or any(rules[name] not in values for name, values in RULE_CHOICES.items())
    ):
        choices = ", ".join(f"{name} in {list(values)}" for name, values in RULE_CHOICES.items())
        bad(f"bad rules {rules!r} (expected {sorted(RULE_CHOICES)}: {choices})")
    return rules


class State(SolitaireState):
    """A Castellion position: one row in the compiled kernel's layout (``kernel``: ``s``),
    which is the rules; this class is the Python view of it. ``cells``, ``heights``,
    ``discard``, ``removed``, ``ordeals``, ``beside`` (3 x [normal, black]) and
    ``face_down`` are NumPy views of the row; ``regular``, ``safe`` (bottom first: the top
    is the last entry) and ``revealed`` are views of the words in use; ``hand``,
    ``current``, ``phase``, ``destroy_left``, ``destroy_reason``, ``reveal_left``,
    ``recover_shape``, ``lifted``, ``lift_origin`` and ``outcome`` read and write their
    words. Assigning any of them writes the row."""

    actions = ACTIONS
    hidden = False  # a player's view (player_view): pile order and face-down cards unknown

    hand = _Word(K.HAND)
    current = _Word(K.CURRENT)  # lowest unresolved ordeal
    phase = _Word(K.PHASE)
    destroy_left = _Word(K.DLEFT)
    destroy_reason = _Word(K.DREASON)
    reveal_left = _Word(K.RLEFT)
    recover_shape = _Word(K.RSHAPE)
    lifted = _Word(K.LIFTED)
    lift_origin = _Word(K.LORIGIN)  # Place column that would put the lifted tile back
    outcome = _Word(K.OUTCOME)  # 1 won, -1 lost, 0 playing
    regular = _Pile("regular")
    safe = _Pile("safe")
    revealed = _Pile("revealed")
    cells = _Block("cells")  # index row * 6 + column, row 0 = foundation
    heights = _Block("heights")
    discard = _Block("discard")
    removed = _Block("removed")
    ordeals = _Block("ordeals")
    beside = _Block("beside")  # [normal, black] Traitors per ordeal
    face_down = _FaceDown()

    def __init__(
        self,
        level: int = SCHOOL,
        foundation_exemption: str = "placed",
        early_encounter: str = "any_time",
    ) -> None:
        check_choice("foundation_exemption", foundation_exemption, FOUNDATION_EXEMPTIONS)
        check_choice("early_encounter", early_encounter, EARLY_ENCOUNTERS)
        self.level = level
        self.foundation_exemption = foundation_exemption
        self._neighbors_exempt = foundation_exemption == "neighbors"
        self.early_encounter = early_encounter
        # any_time: also with a tile in hand (a drawn, revealed or recovered tile or a Traitor)
        self._encounter_in_hand = early_encounter == "any_time" and level != SCHOOL
        self.rule_flags = K.rule_flags(self.rule_options())
        self.s = np.zeros(K.WORDS, _ROW_DTYPE)
        K.clear(self.s)
        self._mask: np.ndarray | None = None
        self._views: dict = {}  # the NumPy views of the row handed out (``_Block``)

    def __getstate__(self) -> dict:
        # the views would unpickle as arrays of their own: made again from the row instead
        return dict(self.__dict__, _views={})

    # --- the deal ----------------------------------------------------------------------------
    @classmethod
    def new_game(
        cls,
        rng: np.random.Generator | None = None,
        level: str = "school",
        options: dict | None = None,
        **rules: Any,
    ) -> State:
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
    def _deal_pile(
        rng: np.random.Generator, options: dict, name: str, counts: Sequence[int]
    ) -> list[int]:
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

    def _check_ordeals(self, names: Any) -> list[int]:
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
        return int(K.castle_width(self.s))

    @property
    def castle_size(self) -> int:
        return int(K.castle_size(self.s))

    def foundation_complete(self) -> bool:
        return bool(K.foundation_complete(self.s))

    def faction_boards(self) -> list[int]:
        return [int(K.faction_board(self.s, f)) for f in range(4)]

    def formations(self) -> tuple[int, int, int]:
        """(towers, bastions, lines of defense) now in the castle."""
        t, b, li = K.formations(self.s)
        return int(t), int(b), int(li)

    def tiles_played(self) -> bool:
        s = self.s
        return bool(
            s[K.REG_N] == 0 and s[K.SAFE_N] == 0 and s[K.REV_N] == 0 and s[K.HAND] == NO_TILE
        )

    @property
    def ordeals_passed(self) -> int:
        return self.current

    def _splits(self, c: int) -> bool:
        return bool(self.heights[c] == 1 and 0 < c < self.width - 1)

    # --- the rules: the kernel's ----------------------------------------------------------
    def legal_action_mask(self) -> np.ndarray:
        if self._mask is None:
            m = np.zeros(K.MASK_WIDTH, np.bool_)
            K.compute_mask(self.s, self.level, self.rule_flags, m)
            self._mask = m[:NUM_ACTIONS]
        return self._mask

    def apply_legal(self, action: int) -> None:
        self._mask = None
        if not self.hidden:
            K.apply(self.s, action, self.level)
            return
        # a player's view: a move that would draw or reveal an unseen tile or turn up a
        # face-down ordeal is refused, the position left as it was
        before = self.s.copy()
        K.apply(self.s, action, self.level)
        s = self.s
        if s[K.REG_N] < before[K.REG_N] or s[K.SAFE_N] < before[K.SAFE_N]:
            what = "the next tile of a pile"
        elif any(before[K.FACE + k] and not s[K.FACE + k] for k in range(3)):
            what = "a face-down ordeal"
        else:
            return
        s[:] = before
        self._unseen(what)

    def _encounter(self) -> bool:
        """Encounter the lowest ordeal (the kernel's ``encounter``); False while its penalty
        awaits the player's choices."""
        self._mask = None
        if self.face_down[self.current]:
            self._unseen("a face-down ordeal")
        return bool(K.encounter(self.s))

    def _unseen(self, what: str) -> None:
        if self.hidden:
            raise HiddenInformationError(
                f"this is the player's view: {what} is hidden; "
                "search determinize(0, rng) of it instead"
            )

    # --- naming moves and refusals -----------------------------------------------------------
    def _cell_name(self, cell: int) -> str:
        return f"{KIND_NAMES[self.cells[cell]]} at row {cell // SIZE} column {cell % SIZE}"

    def describe_action(self, action: Any) -> str:
        """The move in words; a face-down Ordeal is named by its slot, never by its card."""
        text = self._describe(action)
        for slot in range(3):
            if self.face_down[slot]:
                text = text.replace(
                    ORDEALS[self.ordeals[slot]].title, f"face-down Ordeal {'I' * (slot + 1)}"
                )
        return text

    def _describe(self, action: int) -> str:
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
    # --- copies and serialization ------------------------------------------------------------
    def player_view(self, player: int = 0) -> State:
        """What the player knows: a copy whose piles are in tile-kind order (their contents,
        not their order) and whose face-down ordeals read as the first card of their level
        and slot, marked ``hidden``: drawing or revealing from it raises
        ``HiddenInformationError``. Agents get this; ``determinize`` of it deals a world."""
        view = self.clone()
        view.regular.sort()
        view.safe.sort()
        for slot in range(3):
            if self.face_down[slot]:
                view.ordeals[slot] = ORDEALS_BY_SLOT[self.level][slot][0]
        view.hidden = True
        return view

    def determinize(self, player: int, rng: np.random.Generator) -> State:
        """The order of each pile and the face-down ordeal cards are hidden. A player who
        remembers what came from each pile knows its contents, so each pile is shuffled
        separately; a face-down card is drawn again from its level and slot's cards."""
        other = self.clone()
        for pile in (other.regular, other.safe):
            # sorted first, so the result depends only on the pile's contents
            pile.sort()
            pile[:] = pile[rng.permutation(len(pile))]
        for slot in range(3):
            if self.face_down[slot]:
                ids = ORDEALS_BY_SLOT[self.level][slot]
                other.ordeals[slot] = ids[rng.integers(len(ids))]
        other.hidden = False
        other._mask = None
        return other

    def clone(self) -> State:
        other = State.__new__(State)
        other.__dict__.update(self.__dict__)
        other.s = self.s.copy()
        other._mask = None
        other._views = {}
        return other

    def tile_counts(self) -> dict[str, list[int]]:
        """Tiles per kind in each place; every kind sums to its box count (84 tiles)."""

        def count(tiles: Any) -> list[int]:
            tiles = np.asarray(tiles, dtype=np.int64)
            return np.bincount(tiles[tiles >= 0], minlength=NUM_KINDS).tolist()

        beside = [0] * NUM_KINDS
        beside[TRAITOR] = int(self.beside[:, 0].sum())
        beside[BLACK_TRAITOR] = int(self.beside[:, 1].sum())
        return {
            "regular": count(self.regular),
            "safe": count(self.safe),
            "revealed": count(self.revealed),
            "held": count([self.hand, self.lifted]),
            "castle": count(self.cells),
            "discard": self.discard.tolist(),
            "beside": beside,
            "removed": self.removed.tolist(),
        }

    def rule_options(self) -> dict:
        """The rules options of this game, as ``new_game`` and the env take them."""
        return {name: getattr(self, name) for name in RULE_CHOICES}

    def to_dict(self) -> dict:
        return {
            "level": LEVELS[self.level],
            "rules": self.rule_options(),
            "regular": self.regular[::-1].tolist(),
            "safe": self.safe[::-1].tolist(),
            "revealed": self.revealed.tolist(),
            "hand": self.hand,
            "castle": self.cells.reshape(SIZE, SIZE).tolist(),
            "discard": self.discard.tolist(),
            "removed": self.removed.tolist(),
            "ordeals": [ORDEALS[i].name for i in self.ordeals],
            "face_down": [bool(f) for f in self.face_down],
            "beside": self.beside.tolist(),
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
    def from_dict(cls, data: dict) -> State:
        try:
            return cls._from_dict(data)
        except InvalidStateError:
            raise
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as err:
            raise InvalidStateError(f"not a Castellion state: {err!r}") from None

    @classmethod
    def _from_dict(cls, data: dict) -> State:
        def bad(why: str) -> NoReturn:
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
        s = cls(LEVELS.index(data["level"]), **_read_rules(data["rules"], bad))

        def ints(
            value: Any,
            what: str,
            lo: int,
            hi: int,
            length: int | None = None,
            max_length: int | None = None,
        ) -> list[int]:
            if not isinstance(value, list) or (length is not None and len(value) != length):
                bad(f"{what} must be a list" + (f" of {length}" if length else ""))
            if max_length is not None and len(value) > max_length:  # before reading it
                bad(f"{what} holds {len(value)} entries; at most {max_length} fit")
            for v in value:
                if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
                    bad(f"{what} holds {v!r}, outside {lo}-{hi}")
            return list(value)

        def scalar(name: str, lo: int, hi: int) -> int:
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

    def _validate(self, bad: Callable[[str], NoReturn]) -> None:
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
            if slot < self.current and self.beside[slot].any():
                bad(f"resolved ordeal {slot + 1} still has Traitors beside it")
            if slot > self.current and self.beside[slot].any():
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
