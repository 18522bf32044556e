"""Shared builders for the Castell tests: positions from a seeded deal, then edited."""

from __future__ import annotations

import numpy as np

from castle_envs.castell import data as D
from castle_envs.castell.actions import (
    ACTIONS,
    AddLevel,
    Dismantle,
    EndTurn,
    Move,
    Recruit,
    Special,
    Train,
)
from castle_envs.castell.rules import State


def deal(num_players=2, seed=0, **rules) -> State:
    return State.deal(np.random.default_rng(seed), num_players, **rules)


def give(state: State, p: int, *numbers):
    """Move castellers with these printed numbers from the bag (else a region) to player p."""
    for n in numbers:
        if n - 1 in state.bag:
            state.bag.remove(n - 1)
        else:
            region = int(np.flatnonzero(state.regions[:, n - 1])[0])
            state.regions[region, n - 1] -= 1
        state.hand[p, n - 1] += 1
    state._mask = None


def clear_hand(state: State, p: int):
    """Put all of player p's castellers back in the bag (tower taken down)."""
    for size in range(D.SIZES):
        state.bag.extend([size] * int(state.hand[p, size]))
    state.hand[p] = 0
    state.in_tower[p] = 0
    state.towers[p] = []
    state._mask = None


def set_wheel(state: State, window_kinds):
    """Arrange the wheel so window w shows window_kinds[w] this round (rotation kept)."""
    for w, kind in enumerate(window_kinds):
        state.wheel[(w + state.rotation) % D.WHEEL_WINDOWS] = kind
    assert sorted(state.wheel) == sorted(D.WHEEL_TILES)
    state._mask = None


def act(state: State, move):
    state.apply_action(ACTIONS.encode(move))


def legal(state: State, move) -> bool:
    return bool(state.legal_action_mask()[ACTIONS.encode(move)])


def build(state: State, *levels):
    """Build levels given as (width, number) or (width, number, mixed)."""
    for lv in levels:
        act(state, AddLevel(*lv) if len(lv) == 3 else AddLevel(lv[0], lv[1], 0))


def end_turns(state: State, count: int):
    for _ in range(count):
        act(state, EndTurn())


def round_trip(state: State) -> State:
    return State.from_json(state.to_json())


__all__ = [
    "ACTIONS",
    "AddLevel",
    "D",
    "Dismantle",
    "EndTurn",
    "Move",
    "Recruit",
    "Special",
    "State",
    "Train",
    "act",
    "build",
    "clear_hand",
    "deal",
    "end_turns",
    "give",
    "legal",
    "round_trip",
    "set_wheel",
]
