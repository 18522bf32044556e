"""Building Castellion positions from pictures of the castle, for scenario tests."""

from __future__ import annotations

import numpy as np

from castle_envs.castellion.actions import ACTIONS
from castle_envs.castellion.data import (
    FACTION_LETTERS,
    KIND_BY_NAME,
    NUM_KINDS,
    SHAPE_GLYPHS,
    TOTAL_COUNTS,
)
from castle_envs.castellion.rules import State


def tile(token: str) -> int:
    """'P^' -> pyro-triangle; 'T' -> traitor; 'B' -> black traitor; full names work too."""
    if token in KIND_BY_NAME:
        return KIND_BY_NAME[token]
    if token == "T":
        return KIND_BY_NAME["traitor"]
    if token == "B":
        return KIND_BY_NAME["black-traitor"]
    return FACTION_LETTERS.index(token[0]) * 3 + SHAPE_GLYPHS.index(token[1])


def tiles(text: str) -> list[int]:
    return [tile(t) for t in text.split()]


def castle_rows(rows) -> list[list[int]]:
    """Rows given bottom (foundation) first, tokens left to right, '.' for empty."""
    grid = [[-1] * 6 for _ in range(6)]
    for r, row in enumerate(rows):
        for c, token in enumerate(row.split()):
            grid[r][c] = -1 if token == "." else tile(token)
    return grid


def position(
    level="school",
    castle=(),
    hand=None,
    phase=None,
    revealed="",
    discard="",
    regular_top="",
    safe_top="",
    safe_empty=False,
    ordeals=None,
    beside=None,
    current=0,
    face_down=None,
    rules=None,
    seed=0,
    **extra,
) -> State:
    """A valid state from its parts; tiles not named stay in the piles (the named pile tops
    first, the rest in a seeded shuffle). Extra keys override ``to_dict`` fields."""
    s = State.new_game(np.random.default_rng(seed), level, {"ordeals": ordeals}, **(rules or {}))
    d = s.to_dict()
    regular, safe = list(d["regular"]), list(d["safe"])
    grid = castle_rows(castle)

    def take(kind):
        # tiles for the castle, hand, etc. come from the safe pile only when asked to empty it
        for pile in (safe, regular) if safe_empty else (regular, safe):
            if kind in pile:
                pile.remove(kind)
                return
        raise AssertionError(f"no {kind} tile left to place")

    used = [k for row in grid for k in row if k >= 0] + tiles(revealed) + tiles(discard)
    if hand is not None:
        used.append(tile(hand))
    for kind in used:
        take(kind)
    if safe_empty:
        for kind in safe:
            d["discard"][kind] += 1
        safe = []
    for kind in tiles(discard):
        d["discard"][kind] += 1
    top_r, top_s = tiles(regular_top), tiles(safe_top)
    for kind in top_r:
        regular.remove(kind)
    for kind in top_s:
        safe.remove(kind)
    d.update(
        regular=top_r + regular,
        safe=top_s + safe,
        castle=grid,
        revealed=tiles(revealed),
        hand=-1 if hand is None else tile(hand),
    )
    if phase is None:
        phase = "draw" if hand is None else ("traitor" if d["hand"] >= 12 else "defender")
    d["phase"] = phase
    d["current"] = current
    if beside is not None:
        d["beside"] = [list(b) for b in beside]
        for b in beside:  # Traitors beside ordeals come from the regular pile
            for kind, n in ((12, b[0]), (13, b[1])):
                for _ in range(n):
                    d["regular"].remove(kind)
    if face_down is not None:
        d["face_down"] = list(face_down)
    if current:
        d["face_down"][:current] = [False] * current
        # traitors of passed ordeals are out of the game
    d.update(extra)
    return State.from_dict(d)


def legal(state: State) -> set[str]:
    return {str(ACTIONS.decode(a)) for a in np.flatnonzero(state.legal_action_mask())}


def act(state: State, *moves: str) -> State:
    for move in moves:
        state.apply_action(ACTIONS.encode(move))
    return state


def conserved(state: State) -> bool:
    counts = state.tile_counts()
    return [sum(p[k] for p in counts.values()) for k in range(NUM_KINDS)] == list(TOTAL_COUNTS)


def grid_text(state: State) -> list[str]:
    """The castle as rows bottom first, in the same tokens ``position`` reads."""
    from castle_envs.castellion.data import short_name

    rows = []
    for r in range(6):
        row = state.cells[r * 6 : (r + 1) * 6]
        if all(k < 0 for k in row):
            break
        rows.append(" ".join(short_name(k).strip() if k >= 0 else "." for k in row).rstrip(" ."))
    return rows


def at_ordeal(
    castle, beside, current, ordeals=("exam-1", "exam-2", "exam-3c"), level="school", hand="T", **kw
) -> State:
    """A position at ordeal ``current`` (earlier ones passed, their Traitors out of the game)
    with ``beside`` Traitors waiting beside it and, by default, a Traitor in hand."""
    from castle_envs.castellion.data import ORDEAL_BY_NAME, ORDEALS

    gone = sum(ORDEALS[ORDEAL_BY_NAME[n]].traitors for n in ordeals[:current])
    d = position(level=level, castle=castle, ordeals=list(ordeals), **kw).to_dict()

    def traitor():  # normal Traitors first, then black ones
        kind = 12 if 12 in d["regular"] else 13
        d["regular"].remove(kind)
        return kind

    for _ in range(gone):
        d["removed"][traitor()] += 1
    d["beside"][current] = [0, 0]
    for _ in range(beside):
        d["beside"][current][traitor() - 12] += 1
    d["current"] = current
    d["face_down"] = [f and i >= current for i, f in enumerate(d["face_down"])]
    if hand == "T":
        d["hand"], d["phase"] = traitor(), "traitor"
    return State.from_dict(d)
