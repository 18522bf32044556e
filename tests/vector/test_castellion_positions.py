"""Rare positions that random play seldom reaches (ordeals passed, wins, complete castles,
Assault penalties, tower reveals, each tile power, tiles running out): from each one, every
legal action on the batched env and on the plain-Python reference rules
(``tests/reference/castellion.py``) gives the same next observation, mask, reward and
position; then random playouts from it are compared step by step to the end of the game."""

from __future__ import annotations

import numpy as np
import pytest

from castle_envs.castellion.rules import State
from castle_envs.castellion.vector import CastellionVectorEnv
from tests.castellion.helpers import at_ordeal, position

from ..reference.castellion import ReferenceState
from ..reference.castellion import reference_encode as encode
from .helpers import assert_row_is


def reference(state: State) -> ReferenceState:
    """The position ``state`` in the reference rules."""
    return ReferenceState.from_dict(state.to_dict())


EXAM1_CASTLE = ["C^ J# Jo P^ S# Po", "C# J^ J# Po C^ So", "Co S# S^ So S#", "C^ P#"]
EXAM3C_CASTLE = ["C^ J# S^ P# Po Jo", "C# J^ S# Po P^ S^", "Co J# So C^ C#", "C^ Jo S^ Co C^"]
FULL_MINUS_ONE = [
    "C^ J# Jo P^ S# Po",
    "C# J^ J# Po C^ So",
    "Co S# S^ So S# P^",
    "C^ P# Jo C^ P# Co",
    "J^ Co P# J^ Co J#",
    "C^ J# S^ Po P^",
]
SIMS = ["sim-1", "sim-2a", "sim-3a"]
HARPIES = ["assault-1-harpy", "assault-2-harpy", "assault-3-harpy"]
MENACE_CASTLE = ["C^ J# S^ P# Po Jo", "C# J^ S# Po P^ S^", "Co S# Jo S#", "C^ P#"]


def with_hand(state: State, kind: int) -> State:
    d = state.to_dict()
    d["regular"].remove(kind)
    d["hand"], d["phase"] = kind, "defender" if kind < 12 else "traitor"
    return State.from_dict(d)


def last_tile(state: State) -> State:
    """The same position with one tile left to draw (the rest discarded or held back)."""
    d = state.to_dict()
    last = d["regular"].pop()
    for k in d["regular"] + d["safe"]:
        d["discard"][k] += 1
    d["regular"], d["safe"] = [last], []
    return State.from_dict(d)


def positions() -> dict[str, State]:
    school, academy, menace = ({"level": lv} for lv in ("school", "academy", "menace"))
    return {
        "exam I passes": at_ordeal(EXAM1_CASTLE, 4, 0),
        "exam I fails": at_ordeal(["C^ J# Jo P^ S# Po"], 4, 0),
        "exam II removes a row": at_ordeal(["C^ J# Jo P^ S# Po", "So P^ S# J^ C# Co", "P#"], 1, 1),
        "exam III wins": at_ordeal(EXAM3C_CASTLE, 4, 2),
        "complete castle chains": with_hand(at_ordeal(FULL_MINUS_ONE, 2, 0, hand=None), 11),
        "school tiles run out": last_tile(
            position(castle=EXAM1_CASTLE, ordeals=["exam-1", "exam-2", "exam-3c"])
        ),
        "six wide, six tall": position(castle=["S^ C#", "Co", "J^", "P#", "So", "C^"], hand="J^"),
        "juggler": position(castle=["S^ C# Jo", "P#"], hand="J^", ordeals=SIMS, **academy),
        "seer": position(castle=["S^ C#"], revealed="P^ J#", hand="So", ordeals=SIMS, **academy),
        "chameleon": position(
            castle=["S^ C#"], hand="C^", discard="P^ J# Co S^", ordeals=SIMS, **academy
        ),
        "pyro": position(castle=["S^ C# Jo", "P# S^", "Co"], hand="P^", ordeals=SIMS, **academy),
        "pyro at the left edge": position(
            castle=["S^ C# Jo So"], hand="P^", ordeals=SIMS, **academy
        ),
        "academy traitor discard": position(
            castle=["S^ C# Jo P^ S#", "Co"], hand="T", ordeals=SIMS, **academy
        ),
        "early encounter passes": position(
            castle=EXAM1_CASTLE, beside=[[1, 0], [0, 0], [0, 0]], ordeals=SIMS, **academy
        ),
        "simulation III wins": at_ordeal(
            ["J^ J# P^ P# S^ S#", "Jo J^ Po P^ C# Co", "S# So S^ So P^ J^", "C^ C# Co C^"],
            2,
            2,
            SIMS,
            level="academy",
        ),
        "tower reveals an ordeal": position(
            castle=["C^ S# Jo", "C# Po", "Co"], hand="C^", ordeals=HARPIES, **menace
        ),
        "harpy met": position(
            castle=["C^ J# S^ P# Po Jo", "C# J^ S# Po P^", "Co J# So", "C^ Jo"],
            hand="T",
            ordeals=HARPIES,
            beside=[[1, 0], [0, 0], [0, 0]],
            **menace,
        ),
        "harpy penalty": position(
            castle=MENACE_CASTLE,
            hand="T",
            ordeals=HARPIES,
            beside=[[1, 0], [0, 0], [0, 0]],
            **menace,
        ),
        "penalty destroys all": position(
            castle=["C^ J#"], hand="T", ordeals=HARPIES, beside=[[1, 0], [0, 0], [0, 0]], **menace
        ),
        "four lines make discards free": position(
            castle=[
                "P^ P# Po P^ S# C^",
                "S# So S^ S# Jo J^",
                "C^ C# Co C^ Po P#",
                "J# Jo J^ J# S^ So",
            ],
            hand="T",
            ordeals=HARPIES,
            **menace,
        ),
        "earthworm": at_ordeal(
            ["C^ J# S^ P# Po Jo", "C# J^ S# Po P^ S^", "Co S# Jo S# C^ P#", "C^ P#"],
            1,
            1,
            ["assault-1-harpy", "assault-2-earthworm", "assault-3-harpy"],
            level="menace",
        ),
        "third assault": at_ordeal(
            ["C^ J# S^ P# Po Jo", "C# J^ S# Po P^ S^", "Co J# So C^ C# J#", "C^ Jo S^ Co C^ S#"],
            1,
            2,
            HARPIES,
            level="menace",
        ),
        "tower fills the castle": position(
            castle=[
                "C^ J# Jo P^ S# Po",
                "C# J^ J# Po C^ So",
                "Co S# S^ So S# J^",
                "J^ P# Jo C^ P# J#",
                "C^ Co P# J^ Co J^",
                "P^ J# S^ Po P^",
            ],
            hand="Jo",
            ordeals=["assault-1-behemoth", "assault-2-horde", "assault-3-harpy"],
            **menace,
        ),
        "menace tiles run out": last_tile(
            position(castle=MENACE_CASTLE, ordeals=HARPIES, **menace)
        ),
        "neighbors exemption": position(
            castle=["S# Co", "Jo"], hand="P#", rules={"foundation_exemption": "neighbors"}
        ),
        # early_encounter="any_time": with a tile in hand, through a penalty, to the end
        "early encounter holding a defender": position(
            castle=EXAM1_CASTLE, hand="So", beside=[[1, 0], [0, 0], [0, 0]], ordeals=SIMS, **academy
        ),
        "early penalty holding a traitor": position(
            castle=MENACE_CASTLE, hand="T", ordeals=HARPIES, **menace
        ),
        "early encounter wins holding a tile": at_ordeal(
            ["J^ J# P^ P# S^ S#", "Jo J^ Po P^ C# Co", "S# So S^ So P^ J^", "C^ C# Co C^"],
            1,
            2,
            SIMS,
            level="academy",
        ),
        "turn-start reading": position(
            castle=EXAM1_CASTLE,
            hand="So",
            beside=[[1, 0], [0, 0], [0, 0]],
            ordeals=SIMS,
            rules={"early_encounter": "turn_start"},
            **academy,
        ),
    }


POSITIONS = positions()


def vector_env(start: State, n: int, **kwargs) -> CastellionVectorEnv:
    level = ("school", "academy", "menace")[start.level]
    envs = CastellionVectorEnv(
        n,
        level=level,
        foundation_exemption=start.foundation_exemption,
        early_encounter=start.early_encounter,
        reward="ordeals",
        **kwargs,
    )
    envs.reset(seed=0)
    for i in range(n):
        envs.set_state(i, start)
    return envs


@pytest.mark.parametrize("name", sorted(POSITIONS))
def test_every_legal_action_matches(name):
    start = POSITIONS[name]
    legal = np.flatnonzero(start.legal_action_mask())
    assert len(legal) > 0
    envs = vector_env(start, len(legal))
    assert envs.state(0).to_dict() == start.to_dict()
    assert np.array_equal(envs.action_masks()[0], reference(start).legal_action_mask())
    obs, rewards, terminated, truncated, info = envs.step(legal)
    for i, action in enumerate(legal):
        after = reference(start)
        after.apply_action(int(action))
        assert terminated[i] == after.is_terminal()
        assert rewards[i] == (after.current - start.current) / 3.0
        assert_row_is(envs, i, after, obs, info, encode, (name, action))


@pytest.mark.parametrize("name", sorted(POSITIONS))
def test_random_playouts_match(name):
    start = POSITIONS[name]
    n = 12
    envs = vector_env(start, n)
    states = [reference(start) for _ in range(n)]
    live = np.ones(n, bool)
    rng = np.random.default_rng(len(name))
    while live.any():
        masks = envs.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs, rewards, terminated, truncated, info = envs.step(actions)
        for i in np.flatnonzero(live):
            before = states[i].current
            states[i].apply_action(int(actions[i]))
            assert rewards[i] == (states[i].current - before) / 3.0
            assert terminated[i] == states[i].is_terminal()
            if terminated[i]:
                assert np.array_equal(info["final_obs"][i], encode(states[i]))
                assert info["won"][i] == states[i].won
                live[i] = False
                continue
            assert np.array_equal(obs[i], encode(states[i])), (name, i)
            assert np.array_equal(envs.action_masks()[i], states[i].legal_action_mask())
            assert envs.state(i).to_dict() == states[i].to_dict()


def test_positions_cover_the_rare_rules():
    # the scenarios above really reach what they are named after
    def after(name, *moves):
        s = POSITIONS[name].clone()
        for move in moves:
            s.apply_action(s.actions.encode(move))
        return s

    assert after("exam III wins", "place the traitor beside the lowest ordeal").won
    assert after("simulation III wins", "place the traitor beside the lowest ordeal").won
    assert after("tower reveals an ordeal", "place on column 0").phase == 9
    assert after("harpy penalty", "place the traitor beside the lowest ordeal").destroy_left == 12
    assert after("harpy met", "place the traitor beside the lowest ordeal").current == 1
    assert after("complete castle chains", "place on column 5").current == 2
    s = after("school tiles run out", "draw from the regular pile")
    s.apply_action(
        s.actions.encode(
            "discard the tile" if s.hand < 12 else "place the traitor beside the lowest ordeal"
        )
    )
    assert s.tiles_played() and s.is_terminal() and s.current == 2


def test_early_encounter_positions_reach_what_they_are_named_after():
    encounter = "encounter the lowest ordeal now"
    s = POSITIONS["early penalty holding a traitor"].clone()
    s.apply_action(s.actions.encode(encounter))
    # Harpy I (one tower): 16 - 4 = 12 tiles to destroy, the Traitor still in hand
    assert s.phase == 3 and s.destroy_left == 12 and s.hand == 12
    for _ in range(12):
        s.apply_action(
            min(
                a
                for a in np.flatnonzero(s.legal_action_mask())
                if s.cells[a - 18] >= 0 and (a - 18) // 6 >= 1
            )
        )
    assert s.current == 1 and s.phase == 2 and s.hand == 12  # back to the Traitor
    s = POSITIONS["early encounter wins holding a tile"].clone()
    s.apply_action(s.actions.encode(encounter))
    assert s.won and s.hand == 12
    assert encounter not in {
        str(s.actions.decode(a))
        for a in np.flatnonzero(POSITIONS["turn-start reading"].legal_action_mask())
    }
