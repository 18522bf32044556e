"""Invariants over seeded random games: tile conservation, mask = what apply accepts,
serialization round trip, every game ends (all three levels)."""

import numpy as np
import pytest

from castle_envs.castellion import observation
from castle_envs.castellion.actions import ENCOUNTER_NOW, NUM_ACTIONS
from castle_envs.castellion.rules import OVER, PHASE_NAMES, State, formations_of_boards
from castle_envs.core.errors import IllegalActionError

from .helpers import conserved

LEVELS = ("school", "academy", "menace")
GAMES_PER_LEVEL = 1000  # thousands more: python -m castle_envs.castellion.measure --check


def random_game(level, seed, check_every_action=False, avoid_early=0.95, phases=None):
    """Play one random masked game, checking invariants at each step; return the state."""
    rng = np.random.default_rng(seed)
    s = State.new_game(rng, level)
    steps = 0
    while not s.is_terminal():
        mask = s.legal_action_mask()
        assert mask.any()
        assert conserved(s)
        # the cached formation count always matches a fresh count
        assert s.formations() == formations_of_boards(s.faction_boards())
        if phases is not None:
            phases.add(PHASE_NAMES[s.phase])
        legal = np.flatnonzero(mask)
        if check_every_action:
            for a in legal:  # every masked action applies and leaves a valid state
                t = s.clone()
                t.apply_action(int(a))
                State.from_dict(t.to_dict())
            for a in rng.choice(np.flatnonzero(~mask), size=3, replace=False):
                t = s.clone()
                with pytest.raises(IllegalActionError):
                    t.apply_action(int(a))
                assert t == s  # refused moves change nothing
        choices = legal
        if len(legal) > 1 and rng.random() < avoid_early:
            choices = legal[legal != ENCOUNTER_NOW]
        s.apply_action(int(rng.choice(choices)))
        steps += 1
        assert steps < 1000
    assert s.phase == OVER and conserved(s)
    return s


@pytest.mark.parametrize("level", LEVELS)
def test_random_games_conserve_tiles_and_end(level):
    phases = set()
    for seed in range(GAMES_PER_LEVEL):
        random_game(level, seed, phases=phases)
    # the sweep reaches every kind of decision the level has
    expected = {"draw", "defender", "traitor"}
    if level != "school":
        expected |= {"destroy", "juggle", "reveal", "recover", "pyro_lift", "pyro_move"}
    if level == "menace":
        expected.add("reveal_ordeal")
    assert phases == expected


@pytest.mark.parametrize("level", LEVELS)
def test_mask_is_exactly_what_apply_accepts(level):
    for seed in range(4):
        random_game(level, 1000 + seed, check_every_action=True)


@pytest.mark.parametrize("level", LEVELS)
def test_json_round_trip_and_clone_independence(level):
    rng = np.random.default_rng(7)
    s = State.new_game(rng, level)
    for _ in range(120):
        if s.is_terminal():
            break
        copy = State.from_json(s.to_json())
        assert copy == s and copy.to_dict() == s.to_dict()
        assert np.array_equal(copy.legal_action_mask(), s.legal_action_mask())
        assert np.array_equal(observation.encode(copy), observation.encode(s))
        twin = s.clone()
        legal = np.flatnonzero(s.legal_action_mask())
        legal = legal[legal != ENCOUNTER_NOW] if len(legal) > 1 else legal
        a = int(rng.choice(legal))
        twin.apply_action(a)
        assert copy == s  # the clone's move did not touch the original
        s.apply_action(a)
        assert twin == s


@pytest.mark.parametrize("level", LEVELS)
def test_observation_in_bounds(level):
    rng = np.random.default_rng(3)
    s = State.new_game(rng, level)
    while not s.is_terminal():
        obs = observation.encode(s)
        assert obs.shape == (observation.OBS_SIZE,) and obs.dtype == np.float32
        assert obs.min() >= 0.0 and obs.max() <= 1.0
        legal = np.flatnonzero(s.legal_action_mask())
        legal = legal[legal != ENCOUNTER_NOW] if len(legal) > 1 else legal
        s.apply_action(int(rng.choice(legal)))


def test_action_table_round_trip():
    s = State()
    for a in range(NUM_ACTIONS):
        move = s.decode_action(a)
        assert s.encode_action(move) == a and s.encode_action(str(move)) == a
