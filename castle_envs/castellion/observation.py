"""Castellion's observation: a fixed float32 vector of all the player sees, nothing hidden.

Layout (``OBS_SIZE`` = 449 values, all in [0, 1]):

| offset | size   | what                                                                     |
|--------|--------|--------------------------------------------------------------------------|
| 0      | 36 × 7 | castle cell (row·6 + column, row 0 = foundation): faction one-hot (seer, |
|        |        | chameleon, juggler, pyro), shape one-hot (triangle, square, circle);     |
|        |        | all zero when empty                                                      |
| 252    | 14     | tile in hand (or lifted by Pyro): kind one-hot (12 Defenders, Traitor,   |
|        |        | black Traitor)                                                           |
| 266    | 4 × 14 | revealed tile slot i: kind one-hot                                       |
| 322    | 14     | regular pile: tiles left per kind / box count (public by counting)       |
| 336    | 12     | safe pile: tiles left per Defender kind                                  |
| 348    | 12     | discard pile: Defenders per kind / 6                                     |
| 360    | 3 × 12 | ordeal slot I, II, III: face down, face up, resolved, Traitors beside /  |
|        |        | its trigger count, requirement (towers, bastions, lines) / 5, rows / 3,  |
|        |        | penalty / 42, is a formations card, an Assault, a row-removal card;      |
|        |        | a face-down card shows only its flag and its Traitors / 2 (every Assault |
|        |        | triggers at 2)                                                           |
| 396    | 11     | pending decision one-hot (``rules.PHASE_NAMES``)                         |
| 407    | 3      | level one-hot (school, academy, menace)                                  |
| 410    | 39     | towers, bastions, lines now / 9; castle size / 36; regular size / 72;    |
|        |        | safe size / 12; tiles still to destroy / 42; tiles still to reveal / 4;  |
|        |        | Chameleon's shape one-hot (3); foundation complete; Pyro's lifted tile's |
|        |        | origin one-hot over the 7 Place columns (0-5, new left); rules option    |
|        |        | foundation_exemption = neighbors; 20 spare zeros                         |
"""
from __future__ import annotations

import numpy as np

from .data import ASSAULT, FORMATIONS, NUM_DEFENDER_KINDS, NUM_KINDS, ORDEALS, ROWS
from .layout import (CELL_OFF, CELL_TABLE, DISCARD_OFF, HAND_OFF, LEVEL_OFF, OBS_SIZE,
                     ORDEAL_OFF, ORDEAL_WIDTH, PHASE_OFF, REGULAR_OFF, REGULAR_SCALE,
                     REVEALED_OFF, SAFE_OFF, SCALAR_OFF)
from .rules import MOVE_PHASE, State

__all__ = ["OBS_SIZE", "encode", "CELL_OFF", "HAND_OFF", "REVEALED_OFF", "REGULAR_OFF",
           "SAFE_OFF", "DISCARD_OFF", "ORDEAL_OFF", "ORDEAL_WIDTH", "PHASE_OFF", "LEVEL_OFF",
           "SCALAR_OFF"]


def encode(state: State, out: np.ndarray | None = None) -> np.ndarray:
    obs = np.zeros(OBS_SIZE, dtype=np.float32) if out is None else out
    if out is not None:
        obs[:] = 0.0
    obs[CELL_OFF:HAND_OFF] = CELL_TABLE[np.asarray(state.cells) + 1].ravel()
    held = state.hand if state.hand >= 0 else state.lifted
    if held >= 0:
        obs[HAND_OFF + held] = 1.0
    for slot, kind in enumerate(state.revealed):
        obs[REVEALED_OFF + slot * NUM_KINDS + kind] = 1.0
    regular = np.bincount(state.regular, minlength=NUM_KINDS) if state.regular else 0
    obs[REGULAR_OFF:REGULAR_OFF + NUM_KINDS] = regular * REGULAR_SCALE
    for kind in state.safe:
        obs[SAFE_OFF + kind] = 1.0
    obs[DISCARD_OFF:DISCARD_OFF + NUM_DEFENDER_KINDS] = \
        np.asarray(state.discard[:NUM_DEFENDER_KINDS], dtype=np.float32) / 6.0
    for slot in range(3):
        base = ORDEAL_OFF + slot * ORDEAL_WIDTH
        if slot < state.current:
            obs[base + 2] = 1.0
        elif state.face_down[slot]:
            obs[base] = 1.0
            obs[base + 3] = sum(state.beside[slot]) / 2   # every Assault triggers at 2
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
    obs[sc:sc + 3] = (towers / 9, bastions / 9, lines / 9)
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
