"""Castell's rules core: the whole position in numpy arrays and plain ints.

Casteller sizes are stored as indices 0-9 (the printed numbers 1-10). The bag's order is
fixed at the deal (so refills draw deterministically); observations hide it. A tower is a
list of levels ``(width, lo, mixed)``: ``width - mixed`` castellers of index ``lo`` and
``mixed`` of index ``lo + 1``, bottom level first.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from ..core.errors import InvalidStateError
from ..core.options import check_bool, check_choice, check_int
from ..core.saved import StateReader
from ..core.state import GameState, check_options
from . import data as D
from .actions import (
    ACTIONS,
    DISMANTLE_ALL,
    DISMANTLE_TOP,
    END_TURN,
    LEVEL0,
    LEVEL_HI,
    LEVEL_LO,
    LEVEL_MIXED,
    LEVEL_NEED_HI,
    LEVEL_NEED_LO,
    LEVEL_TUPLES,
    LEVEL_WIDTH,
    MOVE0,
    NUM_ACTIONS,
    RECRUIT0,
    SP_MOVE,
    SP_PERFORM,
    SP_RECRUIT,
    TOKEN0,
    TRAIN0,
    WHEEL0,
)

NR, NS = D.NUM_REGIONS, D.SIZES
#: the largest count a saved state may hold in any field (the real bounds are checked after)
_MAX_SAVED = 1_000_000
#: a state's array, int and bool fields (``clone``, ``to_dict``, ``from_dict``)
_ARRAYS = (
    "regions",
    "lp",
    "lp_tokens",
    "fest_region",
    "fest_held",
    "pawn",
    "hand",
    "in_tower",
    "skills",
    "tokens",
    "collected",
    "size_tokens",
    "prizes",
    "best",
)
#: the array fields that hold counts or indices, never negative (``_validate``, in its order)
_COUNTS = tuple(n for n in _ARRAYS if n not in ("lp", "fest_region", "fest_held", "pawn")) + (
    "fest_region",
)
_INTS = ("rotation", "round", "first", "turn_index", "recruits", "edits")
_BOOLS = ("moved", "trained", "specialed", "recruit_open")
_SAVED_KEYS = (
    ("game", "num_players", "rules")
    + _ARRAYS
    + _INTS
    + _BOOLS
    + ("bag", "wheel", "fest_sizes", "towers", "performed")
)
BAL, BAS, MIX, STR, WID = D.BALANCE, D.BASE, D.MIX, D.STRENGTH, D.WIDTH
ADJ_IDX = tuple(np.array(a, dtype=np.int64) for a in D.ADJACENT)
ADJ_SETS = tuple(frozenset(a) for a in D.ADJACENT)
CATEGORIES = ("best_tower", "variety", "prizes", "size_tokens", "local_performances")

RULE_DEFAULTS = {
    "advanced": False,  # the wheel's "No Regions" side
    "max_skill": D.MAX_SKILL,
    "tower_edits_per_turn": 12,  # free tower steps per turn (keeps every game finite)
    "collect_own_token": False,  # the performer's token is placed before collecting
    "variety_counts": "all",  # "all": tokens, tiles and prizes; "board": tokens only
    "size_token_ties": "tower_score",  # or "none": a tie for a size token gives it to nobody
    "festival_size_tokens": "by_phase",  # I spaces 1 size token, II spaces 2; or "one"
    "first_player": 0,
}
VARIETY_MODES = ("board", "all")
TIE_MODES = ("tower_score", "none")

# thresholds precomputed once so the level mask is a handful of vector ANDs
_LVL_HI_LT = [t > LEVEL_HI for t in range(NS + 1)]
_LVL_HI_EQ = [t == LEVEL_HI for t in range(NS + 1)]
_LVL_W_LT = [t > LEVEL_WIDTH for t in range(10)]
_LVL_W_EQ = [t == LEVEL_WIDTH for t in range(10)]
_LVL_W_LE = [t >= LEVEL_WIDTH for t in range(20)]
_LVL_PLAIN = ~LEVEL_MIXED
_ALL_LEVELS = np.ones(len(LEVEL_TUPLES), dtype=bool)


# --- towers -----------------------------------------------------------------------------
def forced_uses(levels: Sequence[Sequence[int]]) -> tuple[int, int, int]:
    """(Balance, Strength, Mix) uses a tower needs: each is forced by its levels."""
    bal = strength = mix = 0
    for i, (w, lo, m) in enumerate(levels):
        if m:
            mix += 1
        if i:
            bw, blo, _ = levels[i - 1]
            if w == bw:
                bal += 1
            if lo + (m > 0) == blo:
                strength += 1
    return bal, strength, mix


def width_resolutions(
    widths: Sequence[int], base_val: int, width_val: int
) -> list[tuple[int, int]]:
    """Ways to pay for wide levels: (base levels b, width uses k) pairs.

    Widths never grow upwards, so the Base levels are the b lowest; Width raises the limit
    3 + k for every other level. A resolution is listed only if each Base level is really over
    that limit, so "uses Base" / "uses Width" mean a skill did work.
    """
    out = []
    n = len(widths)
    for b in range(0, min(base_val, n) + 1):
        rest = widths[b] if b < n else 0
        k = max(0, rest - 3)
        if k <= width_val and (b == 0 or widths[b - 1] > 3 + k):
            out.append((b, k))
    return out


def tower_legal(levels: Sequence[Sequence[int]], skills: np.ndarray) -> bool:
    for i in range(1, len(levels)):
        w, lo, m = levels[i]
        bw, blo, _ = levels[i - 1]
        if w > bw or lo + (m > 0) > blo:
            return False
    bal, strength, mix = forced_uses(levels)
    if bal > skills[BAL] or strength > skills[STR] or mix > skills[MIX]:
        return False
    return bool(width_resolutions([lv[0] for lv in levels], int(skills[BAS]), int(skills[WID])))


def tower_meets(
    levels: Sequence[Sequence[int]], skills: np.ndarray, tile: D.LocalPerformance
) -> bool:
    """Does this (legal) tower meet a local performance tile?"""
    if tile.kind == "shape":
        return len(levels) == len(tile.shape) and all(
            lv[0] == w for lv, w in zip(levels, tile.shape)
        )
    if len(levels) != tile.points:
        return False
    bal, strength, mix = forced_uses(levels)
    need = set(tile.skills)
    if (BAL in need and not bal) or (STR in need and not strength) or (MIX in need and not mix):
        return False
    if BAS not in need and WID not in need:
        return True
    return any(
        (BAS not in need or b) and (WID not in need or k)
        for b, k in width_resolutions([lv[0] for lv in levels], int(skills[BAS]), int(skills[WID]))
    )


def level_text(level: Sequence[int]) -> str:
    w, lo, m = level
    text = f"{w - m}x{lo + 1}"
    return text + (f"+{m}x{lo + 2}" if m else "")


class State(GameState):
    actions = ACTIONS
    _obs_cache: dict  # observation.py's per-position cache, made on first use

    def __init__(self, num_players: int = 2, **rules: Any) -> None:
        self.num_players = check_choice("num_players", num_players, (2, 3, 4))
        self.rules = check_options(rules, RULE_DEFAULTS, "rules option")
        r = self.rules
        check_int("max_skill", r["max_skill"], 1, 9)
        check_int("tower_edits_per_turn", r["tower_edits_per_turn"], 1, 100)
        check_choice("variety_counts", r["variety_counts"], VARIETY_MODES)
        festival = check_choice(
            "festival_size_tokens", r["festival_size_tokens"], D.SIZE_TOKENS_PER_SPACE_OPTIONS
        )
        self.tokens_per_space = D.SIZE_TOKENS_PER_SPACE_OPTIONS[festival]
        check_choice("size_token_ties", r["size_token_ties"], TIE_MODES)
        check_int("first_player", r["first_player"], 0, self.num_players - 1)
        for key in ("advanced", "collect_own_token"):
            check_bool(key, r[key])
        self.advanced = bool(r["advanced"])
        self.max_skill = int(r["max_skill"])
        self.edit_limit = int(r["tower_edits_per_turn"])
        P = self.num_players
        # board
        self.bag: list[int] = []  # size indices, draw from the end
        self.regions = np.zeros((NR, NS), dtype=np.int64)
        self.wheel = list(D.WHEEL_TILES)  # tile kind at each wheel position
        self.rotation = 0
        self.lp = np.full((NR, D.LP_PER_ROW), -1, dtype=np.int64)  # tile id per row slot
        self.lp_tokens = np.zeros((NR, P), dtype=np.int64)  # tokens lying, by owner
        n_fest = len(D.CALENDAR)
        self.fest_region = np.zeros(n_fest, dtype=np.int64)
        self.fest_sizes: list[tuple[int, ...]] = [() for _ in range(n_fest)]
        self.fest_held = np.array(D.FESTIVAL_SPACES_HELD[P], dtype=bool)
        # players
        self.pawn = np.full(P, -1, dtype=np.int64)
        self.hand = np.zeros((P, NS), dtype=np.int64)  # all castellers owned
        self.in_tower = np.zeros((P, NS), dtype=np.int64)  # of which standing in the tower
        self.towers: list[list[tuple[int, int, int]]] = [[] for _ in range(P)]
        self.skills = np.full((P, 5), D.START_SKILL, dtype=np.int64)
        self.tokens = np.full(P, D.TOKENS_PER_PLAYER, dtype=np.int64)
        self.collected = np.zeros((P, NR), dtype=np.int64)  # special-action tokens won
        self.size_tokens = np.zeros((P, NR, NS), dtype=np.int64)  # by region, by number
        self.prizes = np.zeros((P, NR, 3), dtype=np.int64)  # by festival region, by kind
        self.performed: list[list[tuple[int, int]]] = [[] for _ in range(P)]  # (tile, region)
        self.best = np.zeros(P, dtype=np.int64)
        # turn
        self.round = 1
        self.first = int(r["first_player"])
        self.turn_index = 0  # turns taken this round
        self.moved = self.trained = self.specialed = False
        self.recruits = 0  # castellers recruited by this turn's Recruit action
        self.recruit_open = False  # the Recruit action can still take its second casteller
        self.edits = 0
        self.last_festivals: list[dict] = []
        self.player_version = [0] * P  # bumped when a player's state changes (caches)
        self.board_version = 0  # bumped when the board's castellers/tiles/tokens change
        self._mask: np.ndarray | None = None

    # --- setup ------------------------------------------------------------------------------
    @classmethod
    def deal(cls, rng: np.random.Generator, num_players: int = 2, **rules: Any) -> State:
        s = cls(num_players, **rules)
        P = s.num_players
        bag = np.repeat(np.arange(NS), D.CASTELLERS_PER_SIZE)
        s.bag = [int(x) for x in rng.permutation(bag)]
        per_region = D.REGION_SETUP[P]
        for region in range(NR):
            for _ in range(per_region):
                s.regions[region, s.bag.pop()] += 1
        s.wheel = [int(x) for x in rng.permutation(np.array(D.WHEEL_TILES))]
        phase_tiles = {
            1: list(rng.permutation(np.array(D.FESTIVAL_TILES_I))),
            2: list(rng.permutation(np.array(D.FESTIVAL_TILES_II))),
        }
        tokens = [int(x) for x in rng.permutation(np.array(D.SIZE_TOKENS))]
        for i, (_, phase) in enumerate(D.CALENDAR):
            s.fest_region[i] = phase_tiles[phase].pop()
            s.fest_sizes[i] = tuple(sorted(tokens.pop() for _ in range(s.tokens_per_space[phase])))
        tiles = [int(x) for x in rng.permutation(len(D.LOCAL_PERFORMANCES))]
        for region in range(NR):
            for j in range(D.LP_PER_ROW):
                s.lp[region, j] = tiles.pop()
        for p in range(P):
            for _ in range(D.HAND_SETUP):
                s.hand[p, s.bag.pop()] += 1
        return s

    # --- views ------------------------------------------------------------------------------
    @property
    def current_player(self) -> int:
        return -1 if self.round > D.ROUNDS else (self.first + self.turn_index) % self.num_players

    def is_terminal(self) -> bool:
        return self.round > D.ROUNDS

    def window_kind(self, window: int) -> int:
        """The wheel tile showing in a window this round (the wheel turns one step a round)."""
        return self.wheel[(window + self.rotation) % D.WHEEL_WINDOWS]

    def offered(self, pawn: int) -> list[int]:
        """Wheel tile kinds the player may train from, given the pawn's region."""
        kinds = []
        if pawn >= 0:
            kinds.append(self.window_kind(pawn))
        if not self.advanced:
            kinds.append(self.window_kind(D.ALL_REGIONS_WINDOW))
        return kinds

    def free(self, p: int) -> np.ndarray:
        return self.hand[p] - self.in_tower[p]

    # --- the mask -----------------------------------------------------------------------------
    def legal_action_mask(self) -> np.ndarray:
        if self._mask is not None:
            return self._mask
        m = np.zeros(NUM_ACTIONS, dtype=bool)
        self._mask = m
        if self.round > D.ROUNDS:
            return m
        p = (self.first + self.turn_index) % self.num_players
        pawn = int(self.pawn[p])
        if not self.moved:
            if pawn < 0:
                m[MOVE0 : MOVE0 + NR] = True
            else:
                m[MOVE0 + ADJ_IDX[pawn]] = True
        if pawn >= 0 and (self.recruits == 0 or (self.recruits == 1 and self.recruit_open)):
            m[RECRUIT0 : RECRUIT0 + NS] = self.regions[pawn] > 0
        if not self.trained:
            special = False
            for kind in self.offered(pawn):
                if kind == D.SPECIAL:
                    special = True
                elif self.skills[p, kind] < self.max_skill:
                    m[TRAIN0 + kind] = True
            if special:
                self._special_mask(m, WHEEL0, p, pawn)
        if not self.specialed and self.tokens[p] > 0:
            self._special_mask(m, TOKEN0, p, pawn)
        if self.edits < self.edit_limit:
            m[LEVEL0:DISMANTLE_TOP] = self._level_mask(p)
            if self.towers[p]:
                m[DISMANTLE_TOP] = m[DISMANTLE_ALL] = True
        m[END_TURN] = True
        return m

    def _special_mask(self, m: np.ndarray, base: int, p: int, pawn: int) -> None:
        if pawn >= 0:
            m[base + SP_RECRUIT : base + SP_RECRUIT + NS] = self.regions[pawn] > 0
            m[base + SP_MOVE + ADJ_IDX[pawn]] = True
            tower = self.towers[p]
            if tower:
                for j in range(D.LP_PER_ROW):
                    tile = self.lp[pawn, j]
                    if tile >= 0 and tower_meets(tower, self.skills[p], D.LOCAL_PERFORMANCES[tile]):
                        m[base + SP_PERFORM + j] = True
        else:
            m[base + SP_MOVE : base + SP_MOVE + NR] = True

    def _level_mask(self, p: int) -> np.ndarray:
        free = self.hand[p] - self.in_tower[p]
        ok = (free[LEVEL_LO] >= LEVEL_NEED_LO) & (free[LEVEL_HI] >= LEVEL_NEED_HI)
        skills = self.skills[p]
        tower = self.towers[p]
        height = len(tower)
        if skills[BAS] <= height:  # no Base use left for this level: the width limit holds
            ok &= _LVL_W_LE[3 + int(skills[WID])]
        if tower:
            bal, strength, mix = forced_uses(tower)
            w, lo, _ = tower[-1]
            ok &= (_LVL_HI_LT[lo] | _LVL_HI_EQ[lo]) if strength < skills[STR] else _LVL_HI_LT[lo]
            ok &= (_LVL_W_LT[w] | _LVL_W_EQ[w]) if bal < skills[BAL] else _LVL_W_LT[w]
        else:
            mix = 0
        if mix >= skills[MIX]:
            ok &= _LVL_PLAIN
        return ok

    # --- applying moves -------------------------------------------------------------------
    def apply_legal(self, a: int) -> None:
        self._mask = None
        p = (self.first + self.turn_index) % self.num_players
        self.player_version[p] += 1
        if a >= LEVEL0:
            if a < DISMANTLE_TOP:
                level = LEVEL_TUPLES[a - LEVEL0]
                w, lo, mixed = level
                self.towers[p].append(level)
                self.in_tower[p, lo] += w - mixed
                if mixed:
                    self.in_tower[p, lo + 1] += mixed
                self.edits += 1
            elif a == DISMANTLE_TOP:
                w, lo, mixed = self.towers[p].pop()
                self.in_tower[p, lo] -= w - mixed
                if mixed:
                    self.in_tower[p, lo + 1] -= mixed
                self.edits += 1
            elif a == DISMANTLE_ALL:
                self.towers[p] = []
                self.in_tower[p] = 0
                self.edits += 1
            else:
                self._end_turn()
            self.recruit_open = False
            return
        if a < RECRUIT0:
            self.pawn[p] = a - MOVE0
            self.moved = True
            self.recruit_open = False
        elif a < TRAIN0:
            self.board_version += 1
            self._take_from_region(p, a - RECRUIT0)
            self.recruits += 1
            self.recruit_open = self.recruits == 1
        elif a < TOKEN0:
            self.skills[p, a - TRAIN0] += 1
            self.trained = True
            self.recruit_open = False
        elif a < WHEEL0:
            self.specialed = True
            self.recruit_open = False
            self.tokens[p] -= 1
            self._special(p, a - TOKEN0, token=True)
        else:
            self.trained = True
            self.recruit_open = False
            self._special(p, a - WHEEL0, token=False)

    def _take_from_region(self, p: int, size: int) -> None:
        self.regions[self.pawn[p], size] -= 1
        self.hand[p, size] += 1

    def _special(self, p: int, offset: int, token: bool) -> None:
        self.board_version += 1
        if offset < SP_MOVE:
            self._take_from_region(p, offset - SP_RECRUIT)
        elif offset < SP_PERFORM:
            self.pawn[p] = offset - SP_MOVE
        else:
            region = int(self.pawn[p])
            slot = offset - SP_PERFORM
            tile = int(self.lp[region, slot])
            self.lp[region, slot] = -1
            self.performed[p].append((tile, region))
            if token and self.rules["collect_own_token"]:
                self.lp_tokens[region, p] += 1
                token = False
            self.collected[p, region] += self.lp_tokens[region].sum()
            self.lp_tokens[region] = 0
        if token:
            self.lp_tokens[self.pawn[p], p] += 1

    def _end_turn(self) -> None:
        self.moved = self.trained = self.specialed = self.recruit_open = False
        self.recruits = 0
        self.edits = 0
        self.turn_index += 1
        if self.turn_index == self.num_players:
            self.turn_index = 0
            self._end_round()

    def _end_round(self) -> None:
        rnd = self.round
        self.player_version = [v + 1 for v in self.player_version]
        self.board_version += 1
        self.last_festivals = []
        for i, (fest_round, _) in enumerate(D.CALENDAR):
            if fest_round == rnd and self.fest_held[i]:
                self.last_festivals.append(self._festival(i))
        self.rotation = (self.rotation + 1) % D.WHEEL_WINDOWS
        if rnd in D.REFILL_ROUNDS:
            target = D.REGION_SETUP[self.num_players]
            for region in range(NR):
                missing = target - int(self.regions[region].sum())
                for _ in range(min(missing, len(self.bag))):
                    self.regions[region, self.bag.pop()] += 1
        self.round += 1

    def festival_entry(self, p: int, i: int) -> tuple[int, list[int]] | None:
        """(tower score, matching castellers per token) if the player competes, else None."""
        region, sizes = int(self.fest_region[i]), self.fest_sizes[i]
        tower = self.towers[p]
        if self.pawn[p] != region or len(tower) < D.FESTIVAL_LEVELS:
            return None
        counts = self.in_tower[p]
        if any(counts[s] == 0 for s in sizes):
            return None
        return len(tower) + int(sum(counts[s] for s in set(sizes))), [int(counts[s]) for s in sizes]

    def _festival(self, i: int) -> dict:
        region = int(self.fest_region[i])
        entries = {
            p: e for p in range(self.num_players) if (e := self.festival_entry(p, i)) is not None
        }
        result: dict[str, Any] = {
            "space": i,
            "region": region,
            "scores": {p: e[0] for p, e in entries.items()},
            "prizes": {},
            "size_tokens": {},
        }
        for p, (score, _) in entries.items():
            self.best[p] = max(self.best[p], score)
        # standard competition ranking: tied towers share a place (and its prize)
        places = D.PRIZE_CHART[self.num_players]
        for p, (score, _) in entries.items():
            place = sum(1 for q, (other, _) in entries.items() if other > score)
            if place < places:
                self.prizes[p, region, place] += 1
                result["prizes"][p] = D.PRIZES[place]
        for t, size in enumerate(self.fest_sizes[i]):
            if not entries:
                break
            most = max(e[1][t] for e in entries.values())
            tied = [p for p, e in entries.items() if e[1][t] == most]
            if len(tied) > 1 and self.rules["size_token_ties"] == "tower_score":
                top = max(entries[p][0] for p in tied)
                tied = [p for p in tied if entries[p][0] == top]
            if len(tied) == 1:
                self.size_tokens[tied[0], region, size] += 1
                result["size_tokens"].setdefault(tied[0], []).append(size + 1)
        return result

    # --- scoring ------------------------------------------------------------------------------
    def regions_earned(self, p: int) -> np.ndarray:
        earned = (self.collected[p] > 0) | (self.size_tokens[p].sum(axis=1) > 0)
        if self.rules["variety_counts"] == "all":
            earned = earned | (self.prizes[p].sum(axis=1) > 0)
            for _, region in self.performed[p]:
                earned[region] = True
        return earned

    def category_scores(self, p: int) -> dict:
        by_size = self.size_tokens[p].sum(axis=0)
        return {
            "best_tower": int(self.best[p]),
            "variety": D.VARIETY_POINTS[int(self.regions_earned(p).sum())],
            "prizes": int((self.prizes[p].sum(axis=0) * np.array(D.PRIZE_POINTS)).sum()),
            "size_tokens": int(sum(c + 1 for c in by_size if c > 0)),
            "local_performances": int(
                sum(D.LOCAL_PERFORMANCES[t].points for t, _ in self.performed[p])
                + self.collected[p].sum()
            ),
        }

    def scores(self) -> np.ndarray:
        return np.array(
            [sum(self.category_scores(p).values()) for p in range(self.num_players)], dtype=np.int64
        )

    def returns(self) -> np.ndarray:
        """+1 for the sole winner, 0 for players tied on top, -1 for the rest (at the end)."""
        out = np.zeros(self.num_players)
        if not self.is_terminal():
            return out
        scores = self.scores()
        top = scores.max()
        winners = scores == top
        out[:] = -1.0
        out[winners] = 1.0 if winners.sum() == 1 else 0.0
        return out

    def winning_seats(self) -> list[int]:
        """Every player with the top total once the game is over (players tied on top all
        count; their ``win_loss`` reward is 0), ``[]`` before."""
        if not self.is_terminal():
            return []
        scores = self.scores()
        return [int(s) for s in np.flatnonzero(scores == scores.max())]

    # --- explanations -------------------------------------------------------------------------
    def illegal_reason(self, a: int) -> str:
        if self.is_terminal():
            return "the game is over"
        p = self.current_player
        pawn = int(self.pawn[p])
        move = ACTIONS.decode(a)
        kind = type(move).__name__
        if kind == "Move":
            if self.moved:
                return "the Move action was already taken this turn"
            return f"{D.REGIONS[move.region]} is not adjacent to {D.REGIONS[pawn]}"
        if kind == "Recruit":
            if pawn < 0:
                return "the pawn is not on the board yet"
            if self.recruits == 2 or (self.recruits == 1 and not self.recruit_open):
                return "the Recruit action was already taken this turn"
            return f"{D.REGIONS[pawn]} has no casteller numbered {move.size}"
        if kind == "Train":
            if self.trained:
                return "the Train action was already taken this turn"
            if self.skills[p, move.skill] >= self.max_skill:
                return f"{D.SKILLS[move.skill]} is at its maximum {self.max_skill}"
            return f"the wheel does not offer {D.SKILLS[move.skill]} to this pawn now"
        if kind == "Special":
            if move.source == "token":
                if self.specialed:
                    return "the Special action was already taken this turn"
                if self.tokens[p] == 0:
                    return "no special-action token is left"
            else:
                if self.trained:
                    return "the Train action was already taken this turn"
                if D.SPECIAL not in self.offered(pawn):
                    return "the wheel does not offer the special action to this pawn now"
            if pawn < 0 and move.kind != "move":
                return "the pawn is not on the board yet"
            if move.kind == "recruit":
                return f"{D.REGIONS[pawn]} has no casteller numbered {move.arg}"
            if move.kind == "move":
                return f"{D.REGIONS[move.arg]} is not adjacent to {D.REGIONS[pawn]}"
            tile = self.lp[pawn, move.arg]
            if tile < 0:
                return f"local performance slot {move.arg} of {D.REGIONS[pawn]} is empty"
            return f"the tower does not meet {D.LOCAL_PERFORMANCES[tile]}"
        if self.edits >= self.edit_limit and kind in ("AddLevel", "Dismantle"):
            return f"the tower was already changed {self.edit_limit} times this turn"
        if kind == "Dismantle":
            return "there is no tower"
        if kind == "AddLevel":
            free = self.free(p)
            w, lo, mixed = move.width, move.size - 1, move.mixed
            if free[lo] < w - mixed or (mixed and free[lo + 1] < mixed):
                return "not enough free castellers of those numbers"
            return self._level_problem(p, w, lo, mixed)
        return "it is not legal in the current position"

    def _level_problem(self, p: int, w: int, lo: int, mixed: int) -> str:
        """Which tower rule a level breaks, and the skill that would pay for it."""
        skills = self.skills[p]
        tower = self.towers[p]
        hi = lo + (mixed > 0)
        bal, strength, mix = forced_uses(tower)
        if tower:
            bw, blo, _ = tower[-1]
            if w > bw:
                return f"a level cannot be wider than the level below ({bw})"
            if hi > blo:
                return f"its numbers must be smaller than the level below (lowest {blo + 1})"
            if w == bw and bal >= skills[BAL]:
                return f"as wide as the level below needs Balance (value {skills[BAL]}, used {bal})"
            if hi == blo and strength >= skills[STR]:
                return (
                    f"the same number as the level below needs Strength "
                    f"(value {skills[STR]}, used {strength})"
                )
        if mixed and mix >= skills[MIX]:
            return f"two numbers in a level need Mix (value {skills[MIX]}, used {mix})"
        return (
            f"wider than the width limit {3 + skills[WID]} needs Width or a Base use "
            f"(Base {skills[BAS]}, levels so far {len(tower)})"
        )

    def describe_action(self, a: Any) -> str:
        move = ACTIONS.decode(a)
        if self.is_terminal():
            return str(move)
        p = self.current_player
        pawn = int(self.pawn[p])
        kind = type(move).__name__
        if kind == "Move" or (kind == "Special" and move.kind == "move"):
            origin = "from off the board" if pawn < 0 else f"from {D.REGIONS[pawn]}"
            return f"{move} ({origin})"
        if pawn >= 0 and (kind == "Recruit" or (kind == "Special" and move.kind == "recruit")):
            size = move.size if kind == "Recruit" else move.arg
            return f"{move} from {D.REGIONS[pawn]} ({self.regions[pawn, size - 1]} there)"
        if kind == "Special" and move.kind == "perform" and pawn >= 0:
            tile = self.lp[pawn, move.arg]
            if tile >= 0:
                return f"{move}: {D.LOCAL_PERFORMANCES[tile]} at {D.REGIONS[pawn]}"
        if kind == "Train":
            return f"{move} ({self.skills[p, move.skill]} -> {self.skills[p, move.skill] + 1})"
        tower = self.towers[p]
        if kind == "AddLevel":
            w, lo, mixed = move.width, move.size - 1, move.mixed
            skills = []
            if tower:
                bw, blo, _ = tower[-1]
                if w == bw:
                    skills.append("Balance")
                if lo + (mixed > 0) == blo:
                    skills.append("Strength")
            if mixed:
                skills.append("Mix")
            if w > 3:
                skills.append("Width/Base")
            where = f"on {level_text(tower[-1])}" if tower else "as the bottom level"
            return f"{move} {where}" + (f", using {', '.join(skills)}" if skills else "")
        if kind == "Dismantle" and tower:
            if move.whole:
                return f"{move} ({len(tower)} levels)"
            return f"{move} ({level_text(tower[-1])})"
        return str(move)

    # --- copies and serialization -------------------------------------------------------------
    def determinize(self, player: int, rng: np.random.Generator) -> State:
        """Only the bag's order is hidden (its contents are public by counting)."""
        other = self.clone()
        bag = sorted(self.bag)
        other.bag = [bag[i] for i in rng.permutation(len(bag))]
        return other

    def clone(self) -> State:
        s = State.__new__(State)
        s.__dict__.update(self.__dict__)
        for name in _ARRAYS:
            setattr(s, name, getattr(self, name).copy())
        s.rules = dict(self.rules)
        s.bag = list(self.bag)
        s.wheel = list(self.wheel)
        s.fest_sizes = list(self.fest_sizes)
        s.towers = [list(t) for t in self.towers]
        s.performed = [list(x) for x in self.performed]
        s.last_festivals = [dict(x) for x in self.last_festivals]
        s.player_version = list(self.player_version)
        s._mask = None
        s.__dict__.pop("_obs_cache", None)
        s.__dict__.pop("_won_cache", None)
        return s

    def to_dict(self) -> dict:
        d: dict[str, Any] = {
            "game": "castell",
            "num_players": self.num_players,
            "rules": dict(self.rules),
        }
        for name in _ARRAYS:
            d[name] = getattr(self, name).tolist()
        for name in _INTS:
            d[name] = int(getattr(self, name))
        for name in _BOOLS:
            d[name] = bool(getattr(self, name))
        d["bag"] = list(self.bag)
        d["wheel"] = list(self.wheel)
        d["fest_sizes"] = [list(x) for x in self.fest_sizes]
        d["towers"] = [[list(lv) for lv in t] for t in self.towers]
        d["performed"] = [[list(x) for x in perf] for perf in self.performed]
        d["rules"]["advanced"] = bool(d["rules"]["advanced"])
        return d

    @classmethod
    def from_dict(cls, data: dict) -> State:
        """The state ``to_dict`` saved, read strictly (``core.saved``): exact types, shapes
        and ranges, then ``_validate`` (conservation, the calendar, tokens and prizes only
        from festivals already held, the towers, a legal move unless the game is over).
        Anything else raises ``InvalidStateError`` naming the field."""
        try:
            s = cls._from_dict(data)
        except InvalidStateError:
            raise
        except ValueError as exc:  # a rules value the constructor refuses
            raise InvalidStateError(f"invalid Castell state: {exc}") from None
        s._validate()
        return s

    @classmethod
    def _from_dict(cls, data: dict) -> State:
        r = StateReader("Castell")
        d = r.dict(data, "the state", required=_SAVED_KEYS)
        if d["game"] != "castell":
            r.bad(f"game is {d['game']!r}, not 'castell'")
        P = r.choice(d["num_players"], "num_players", (2, 3, 4))
        rules = r.dict(d["rules"], "rules", required=RULE_DEFAULTS)
        for key, default in RULE_DEFAULTS.items():
            if type(rules[key]) is not type(default):
                r.bad(f"rules.{key} must be a {type(default).__name__}, got {rules[key]!r}")
        s = cls(P, **rules)
        for name in _ARRAYS:
            ref = getattr(s, name)
            if ref.dtype == bool:
                setattr(s, name, r.bool_array(d[name], name, ref.shape))
            else:
                setattr(s, name, r.int_array(d[name], name, ref.shape, -1, _MAX_SAVED))
        for name in _INTS:
            setattr(s, name, r.int(d[name], name, -1, _MAX_SAVED))
        for name in _BOOLS:
            setattr(s, name, r.bool(d[name], name))
        s.bag = r.ints(d["bag"], "bag", 0, NS - 1, max_length=sum(D.CASTELLERS_PER_SIZE))
        s.wheel = r.ints(d["wheel"], "wheel", 0, max(D.WHEEL_TILES), length=len(D.WHEEL_TILES))
        s.fest_sizes = [
            tuple(r.ints(sizes, f"fest_sizes[{i}]", 0, NS - 1, max_length=2))
            for i, sizes in enumerate(r.list(d["fest_sizes"], "fest_sizes", length=len(D.CALENDAR)))
        ]
        # (the tuples' lengths are checked by r.ints: the checker cannot see them)
        s.towers = [
            [
                tuple(r.ints(lv, f"towers[{p}][{k}]", 0, _MAX_SAVED, length=3))  # type: ignore[misc]
                for k, lv in enumerate(
                    r.list(t, f"towers[{p}]", max_length=sum(D.CASTELLERS_PER_SIZE))
                )
            ]
            for p, t in enumerate(r.list(d["towers"], "towers", length=P))
        ]
        tiles = len(D.LOCAL_PERFORMANCES)
        s.performed = [
            [
                tuple(r.ints(x, f"performed[{p}][{k}]", 0, _MAX_SAVED, length=2))  # type: ignore[misc]
                for k, x in enumerate(r.list(perf, f"performed[{p}]", max_length=tiles))
            ]
            for p, perf in enumerate(r.list(d["performed"], "performed", length=P))
        ]
        return s

    def _validate_festivals(self, bad: Callable[[str], NoReturn]) -> None:
        """The calendar holds the dealt festival tiles and size tokens, and what players won
        (size tokens, prizes, best tower) came from festivals already held."""
        P = self.num_players
        for phase, dealt in ((1, D.FESTIVAL_TILES_I), (2, D.FESTIVAL_TILES_II)):
            regions = [
                int(self.fest_region[i]) for i, (_, ph) in enumerate(D.CALENDAR) if ph == phase
            ]
            if sorted(regions) != sorted(dealt):
                bad(f"the festival tiles of phase {phase} are not one per region")
        dealt_sizes = np.bincount(np.array(D.SIZE_TOKENS, dtype=np.int64), minlength=NS)
        laid = np.zeros(NS, dtype=np.int64)
        won = np.zeros((NR, NS), dtype=np.int64)  # size tokens festivals held have offered
        held = np.zeros(NR, dtype=np.int64)  # festivals held per region
        for i, (fest_round, _) in enumerate(D.CALENDAR):
            for size in self.fest_sizes[i]:
                laid[size] += 1
            if fest_round < self.round and self.fest_held[i]:
                region = int(self.fest_region[i])
                held[region] += 1
                for size in self.fest_sizes[i]:
                    won[region, size] += 1
        if (laid > dealt_sizes).any():
            bad("the calendar holds more size tokens of a number than the game has")
        if (self.size_tokens.sum(axis=0) > won).any():
            bad("players hold size tokens that no festival held so far offered")
        places = D.PRIZE_CHART[P]
        if self.prizes[:, :, places:].any():
            bad(f"a prize beyond the {places} places given with {P} players")
        if (self.prizes.sum(axis=2) > held[None, :]).any():
            bad("a player holds more prizes in a region than festivals were held there")
        most = 2 * sum(D.CASTELLERS_PER_SIZE)  # tower levels + castellers: a loose bound
        entered = self.prizes.sum(axis=(1, 2)) + self.size_tokens.sum(axis=(1, 2)) > 0
        for p in range(P):
            if self.best[p] > most or (self.best[p] and not held.any()):
                bad(f"player {p}'s best festival tower ({self.best[p]}) was never scored")
            if 0 < self.best[p] <= D.FESTIVAL_LEVELS or (entered[p] and not self.best[p]):
                bad(
                    f"player {p}'s best festival tower ({self.best[p]}) does not fit a "
                    f"festival entry (at least {D.FESTIVAL_LEVELS} levels and a matching "
                    f"casteller)"
                )

    def _validate(self) -> None:
        P = self.num_players

        def bad(why: str) -> NoReturn:
            raise InvalidStateError(f"corrupt Castell state: {why}")

        if (self.pawn < -1).any():
            bad("a pawn index below -1")
        for name in _COUNTS:
            if (getattr(self, name) < 0).any():
                bad(f"{name} holds a negative number")
        if any(not 0 <= x < NS for x in self.bag):
            bad("the bag holds a casteller number outside 1-10")
        total = (
            np.bincount(np.array(self.bag, dtype=np.int64), minlength=NS)
            + self.regions.sum(axis=0)
            + self.hand.sum(axis=0)
        )
        if total.tolist() != list(D.CASTELLERS_PER_SIZE):
            bad(f"castellers are not conserved (per number {total.tolist()})")
        if sorted(self.wheel) != sorted(D.WHEEL_TILES):
            bad("the wheel does not hold the 8 board skill tiles")
        if not 0 <= self.rotation < D.WHEEL_WINDOWS:
            bad("wheel rotation out of range")
        if not 1 <= self.round <= D.ROUNDS + 1:
            bad(f"round {self.round} out of range")
        if not 0 <= self.turn_index < P or not 0 <= self.first < P:
            bad("turn index or first player out of range")
        if (self.pawn >= NR).any() or (self.fest_region >= NR).any():
            bad("a region index out of range")
        if (self.skills > self.max_skill).any():
            bad("a skill above the track's maximum")
        if not 0 <= self.recruits <= 2 or not 0 <= self.edits <= self.edit_limit:
            bad("turn counters out of range")
        if self.fest_held.tolist() != list(D.FESTIVAL_SPACES_HELD[P]):
            bad("festival spaces held do not match the player count")
        for i, (_, phase) in enumerate(D.CALENDAR):
            sizes = self.fest_sizes[i]
            if len(sizes) != self.tokens_per_space[phase] or any(not 0 <= x < NS for x in sizes):
                bad(f"festival space {i} has wrong size tokens")
            if list(sizes) != sorted(sizes):
                bad(f"festival space {i}'s size tokens are not in order")
        self._validate_festivals(bad)
        tiles = [int(t) for t in self.lp.ravel() if t >= 0]
        tiles += [t for perf in self.performed for t, _ in perf]
        if (
            (self.lp < -1).any()
            or any(not 0 <= t < len(D.LOCAL_PERFORMANCES) for t in tiles)
            or len(set(tiles)) != len(tiles)
        ):
            bad("local performance tiles are invalid or repeated")
        if any(not 0 <= r < NR for perf in self.performed for _, r in perf):
            bad("a performed tile names no region")
        placed = self.lp_tokens.sum(axis=0)
        if (
            (self.tokens > D.TOKENS_PER_PLAYER).any()
            or self.tokens.sum() + self.lp_tokens.sum() + self.collected.sum()
            != D.TOKENS_PER_PLAYER * P
        ):
            bad("special-action tokens are not conserved")
        if (placed > D.TOKENS_PER_PLAYER - self.tokens).any():
            bad("more tokens lie on the board than a player spent")
        for p in range(P):
            tower = self.towers[p]
            counts = np.zeros(NS, dtype=np.int64)
            for lv in tower:
                if len(lv) != 3:
                    bad("a tower level is not (width, lo, mixed)")
                w, lo, m = lv
                if not (w >= 1 and 0 <= lo < NS and 0 <= m < w and (m == 0 or lo + 1 < NS)):
                    bad(f"tower level {lv} is malformed")
                counts[lo] += w - m
                if m:
                    counts[lo + 1] += m
            if counts.tolist() != self.in_tower[p].tolist():
                bad(f"player {p}'s tower does not match the castellers counted in it")
            if (self.in_tower[p] > self.hand[p]).any():
                bad(f"player {p}'s tower uses castellers the player does not have")
            if not tower_legal(tower, self.skills[p]):
                bad(f"player {p}'s tower breaks the tower rules")
        StateReader("Castell").playable(self)
