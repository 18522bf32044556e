"""Castell's move view: one row of features per legal move, from the actor's seat.

What each move spends (an action of the turn, a special-action token, castellers for a
level), where it takes the pawn (the region, its distance to the next festival, what lies
there), and what it leaves: the player's tower (levels, castellers, whether it would compete
at the next festival and its score there, the local performances it meets where the pawn
stands), the castellers still free, the skills and the actions left this turn. Everything in
Castell is public but the bag's order, which no row reads. The layout is ``FEATURES``,
documented in ``docs/move_features.md``; pure Python (the game has no compiled kernel).
A view holds the whole action space (395 rows) unless given a capacity.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..core.moves import StateMoves, feature_columns
from . import data as D
from .actions import (
    DISMANTLE_ALL,
    DISMANTLE_TOP,
    LEVEL0,
    LEVEL_TUPLES,
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
from .rules import State, tower_meets

KINDS = (
    "move",
    "recruit",
    "train",
    "token_recruit",
    "token_move",
    "token_perform",
    "wheel_recruit",
    "wheel_move",
    "wheel_perform",
    "add_level",
    "dismantle_top",
    "dismantle_all",
    "end_turn",
)
FEATURES = (
    *KINDS,
    # where the pawn stands after the move
    *[f"region_{a}" for a in D.REGION_ABBR],
    "off_board",
    "at_next_festival",
    "festival_distance/3",
    "region_castellers/5",
    "region_tokens/8",
    "performable_here/2",
    # a casteller recruited, a skill trained, a tile performed, a level added
    "size/10",
    "size_in_next_festival",
    "owned_of_size/8",
    *[f"skill_{k.lower()}" for k in D.SKILLS],
    "skill_after/3",
    "tile_points/5",
    "tokens_collected/8",
    "level_width/8",
    "level_number/10",
    "level_mixed",
    # the tower after the move
    "tower_levels/10",
    "tower_castellers/30",
    "tower_bottom_width/8",
    "tower_festival_ready",
    "next_sizes_in_tower/2",
    "tower_score_next/20",
    "competes_next",
    # the player after the move
    "free_castellers/15",
    "owned/30",
    "tokens_left/7",
    "moved",
    "trained",
    "specialed",
    "second_recruit_open",
    "edits_left/12",
    # the same in every row
    "round/10",
    "rounds_to_next_festival/8",
    "festivals_left/14",
    "my_best/20",
    "rivals_at_next_festival/3",
    "rival_tower_levels/10",
)
NUM_FEATURES = len(FEATURES)
COLUMN = feature_columns(FEATURES)
CAPACITY = NUM_ACTIONS
_REGION = COLUMN["region_" + D.REGION_ABBR[0]]
_SKILL = COLUMN["skill_" + D.SKILLS[0].lower()]
_LEVEL_SIZE = {a: LEVEL_TUPLES[a - LEVEL0] for a in range(LEVEL0, DISMANTLE_TOP)}


def _distances() -> np.ndarray:
    """Shortest path lengths between regions (moves of the pawn)."""
    n = D.NUM_REGIONS
    dist = np.full((n, n), 99, np.int64)
    for start in range(n):
        dist[start, start] = 0
        todo = [start]
        while todo:
            r = todo.pop(0)
            for a in D.ADJACENT[r]:
                if dist[start, a] > dist[start, r] + 1:
                    dist[start, a] = dist[start, r] + 1
                    todo.append(a)
    return dist


DIST = _distances()


def next_festival(state: State) -> int:
    """The calendar space of the next festival still to be held, or -1."""
    for i, (rnd, _) in enumerate(D.CALENDAR):
        if rnd >= state.round and state.fest_held[i]:
            return i
    return -1


def move_rows(state: State, actions: np.ndarray) -> np.ndarray:
    """(len(actions), NUM_FEATURES) float32: the rows of these legal moves."""
    p = state.current_player
    fest = next_festival(state)
    sizes = state.fest_sizes[fest] if fest >= 0 else ()
    fest_region = int(state.fest_region[fest]) if fest >= 0 else -1
    common = np.zeros(NUM_FEATURES, np.float32)
    c = COLUMN
    common[c["round/10"]] = state.round / D.ROUNDS
    if fest >= 0:
        common[c["rounds_to_next_festival/8"]] = (D.CALENDAR[fest][0] - state.round) / 8
    common[c["festivals_left/14"]] = (
        sum(1 for i, (rnd, _) in enumerate(D.CALENDAR) if rnd >= state.round and state.fest_held[i])
        / 14
    )
    common[c["my_best/20"]] = min(int(state.best[p]), 20) / 20
    rivals = [q for q in range(state.num_players) if q != p]
    common[c["rivals_at_next_festival/3"]] = (
        sum(1 for q in rivals if fest_region >= 0 and state.pawn[q] == fest_region) / 3
    )
    common[c["rival_tower_levels/10"]] = min(max(len(state.towers[q]) for q in rivals), 10) / 10
    out = np.tile(common, (len(actions), 1))
    for i, action in enumerate(actions):
        _fill(out[i], int(action), state, p, sizes, fest_region)
    return out


@dataclass
class _After:
    """The mover's side of the position after a move, as far as the features need it."""

    kind: int
    pawn: int
    tower: list
    free: np.ndarray
    owned: np.ndarray
    skills: np.ndarray
    tokens: int
    moved: bool
    trained: bool
    specialed: bool
    edits: int
    region_castellers: int
    recruit_open: bool = False
    performed_tile: int = -1
    recruited: int = -1  # the size recruited, if the move recruits


def _fill(
    row: np.ndarray, a: int, state: State, p: int, sizes: Sequence[int], fest_region: int
) -> None:
    after = _after(row, a, state, p)
    row[after.kind] = 1
    _fill_region(row, after, state, fest_region)
    _fill_player(row, after, state, sizes, fest_region)


def _after(row: np.ndarray, a: int, state: State, p: int) -> _After:
    """What move ``a`` changes for seat ``p`` (and the features only the move itself gives)."""
    pawn = int(state.pawn[p])
    x = _After(
        kind=12,
        pawn=pawn,
        tower=list(state.towers[p]),
        free=state.free(p).copy(),
        owned=state.hand[p].copy(),
        skills=state.skills[p].copy(),
        tokens=int(state.tokens[p]),
        moved=state.moved,
        trained=state.trained,
        specialed=state.specialed,
        edits=state.edits,
        region_castellers=state.regions[pawn].sum() if pawn >= 0 else 0,
    )
    if a >= LEVEL0:
        _tower_edit(row, a, x)
    elif a < RECRUIT0:
        x.kind, x.pawn, x.moved = 0, a - MOVE0, True
        x.region_castellers = state.regions[x.pawn].sum()
    elif a < TRAIN0:
        x.kind = 1
        _recruit(row, x, a - RECRUIT0)
        x.recruit_open = state.recruits == 0
    elif a < TOKEN0:
        skill = a - TRAIN0
        x.kind, x.trained = 2, True
        x.skills[skill] += 1
        row[_SKILL + skill] = 1
        row[COLUMN["skill_after/3"]] = min(x.skills[skill], 3) / 3
    else:
        _special(row, a, state, x)
    return x


def _tower_edit(row: np.ndarray, a: int, x: _After) -> None:
    c = COLUMN
    if a < DISMANTLE_TOP:
        x.kind = 9
        w, lo, mixed = _LEVEL_SIZE[a]
        x.tower.append((w, lo, mixed))
        x.free[lo] -= w - mixed
        if mixed:
            x.free[lo + 1] -= mixed
        row[c["level_width/8"]] = w / 8
        row[c["level_number/10"]] = (lo + 1) / 10
        row[c["level_mixed"]] = mixed > 0
        x.edits += 1
    elif a == DISMANTLE_TOP:
        x.kind = 10
        w, lo, mixed = x.tower.pop()
        x.free[lo] += w - mixed
        if mixed:
            x.free[lo + 1] += mixed
        x.edits += 1
    elif a == DISMANTLE_ALL:
        x.kind = 11
        x.free = x.owned.copy()
        x.tower = []
        x.edits += 1


def _recruit(row: np.ndarray, x: _After, size: int) -> None:
    c = COLUMN
    x.free[size] += 1
    x.owned[size] += 1
    x.region_castellers -= 1
    row[c["size/10"]] = (size + 1) / 10
    row[c["owned_of_size/8"]] = min(x.owned[size], 8) / 8
    x.recruited = size


def _special(row: np.ndarray, a: int, state: State, x: _After) -> None:
    """A token action or a wheel action: a recruit, a move or a local performance."""
    c = COLUMN
    token = a < WHEEL0
    offset = a - (TOKEN0 if token else WHEEL0)
    base_kind = 3 if token else 6
    if token:
        x.tokens -= 1
        x.specialed = True
    else:
        x.trained = True
    if offset < SP_MOVE:
        x.kind = base_kind
        _recruit(row, x, offset - SP_RECRUIT)
    elif offset < SP_PERFORM:
        x.kind = base_kind + 1
        x.pawn = offset - SP_MOVE
        x.region_castellers = state.regions[x.pawn].sum()
    else:
        x.kind = base_kind + 2
        slot = offset - SP_PERFORM
        x.performed_tile = int(state.lp[x.pawn, slot])
        row[c["tile_points/5"]] = D.LOCAL_PERFORMANCES[x.performed_tile].points / 5
        lying = int(state.lp_tokens[x.pawn].sum())
        row[c["tokens_collected/8"]] = min(lying, 8) / 8


def _fill_region(row: np.ndarray, x: _After, state: State, fest_region: int) -> None:
    """Where the pawn stands after the move, and what it could perform there."""
    c = COLUMN
    pawn = x.pawn
    if pawn < 0:
        row[c["off_board"]] = 1
        row[c["festival_distance/3"]] = 1.0
        return
    row[_REGION + pawn] = 1
    row[c["at_next_festival"]] = pawn == fest_region
    row[c["festival_distance/3"]] = min(DIST[pawn, fest_region], 3) / 3 if fest_region >= 0 else 0
    row[c["region_castellers/5"]] = min(x.region_castellers, 5) / 5
    row[c["region_tokens/8"]] = min(int(state.lp_tokens[pawn].sum()), 8) / 8
    if x.tower:
        meets = 0
        for j in range(D.LP_PER_ROW):
            tile = int(state.lp[pawn, j])
            if (
                tile >= 0
                and tile != x.performed_tile
                and tower_meets(x.tower, x.skills, D.LOCAL_PERFORMANCES[tile])
            ):
                meets += 1
        row[c["performable_here/2"]] = meets / 2


def _fill_player(
    row: np.ndarray, x: _After, state: State, sizes: Sequence[int], fest_region: int
) -> None:
    """The mover's tower, castellers and turn after the move."""
    c = COLUMN
    if x.recruited >= 0:
        row[c["size_in_next_festival"]] = x.recruited in sizes
    tower = x.tower
    in_tower = x.owned - x.free
    row[c["tower_levels/10"]] = min(len(tower), 10) / 10
    row[c["tower_castellers/30"]] = min(int(in_tower.sum()), 30) / 30
    row[c["tower_bottom_width/8"]] = (tower[0][0] if tower else 0) / 8
    ready = len(tower) >= D.FESTIVAL_LEVELS and all(in_tower[s] > 0 for s in sizes)
    row[c["tower_festival_ready"]] = ready
    row[c["next_sizes_in_tower/2"]] = sum(1 for s in sizes if in_tower[s] > 0) / 2
    if ready:
        score = len(tower) + int(sum(in_tower[s] for s in set(sizes)))
        row[c["tower_score_next/20"]] = min(score, 20) / 20
        row[c["competes_next"]] = x.pawn == fest_region
    row[c["free_castellers/15"]] = min(int(x.free.sum()), 15) / 15
    row[c["owned/30"]] = min(int(x.owned.sum()), 30) / 30
    row[c["tokens_left/7"]] = x.tokens / D.TOKENS_PER_PLAYER
    row[c["moved"]] = x.moved
    row[c["trained"]] = x.trained
    row[c["specialed"]] = x.specialed
    row[c["second_recruit_open"]] = x.recruit_open
    row[c["edits_left/12"]] = max(state.edit_limit - x.edits, 0) / max(state.edit_limit, 12)


class CastellMoves(StateMoves, game="castell", features=FEATURES, capacity=CAPACITY):
    """Castell move views of a rules state (the player to act's)."""

    rows = staticmethod(move_rows)

    def observation(self, state: State) -> np.ndarray:
        from .observation import observe

        return observe(state, state.current_player)
