"""The package's Castellion rules (the compiled kernel, seen through ``rules.State`` and
``CastellionEnv``) against the plain-Python reference in ``tests/reference``, which was the
package's rules before the kernel took over: the same games, move for move, give the same
masks, observations, rewards, saved states, readable moves and refusals, player's views and
determinized worlds."""

import pickle

import numpy as np
import pytest

from castle_envs.castellion.actions import ENCOUNTER_NOW, NUM_ACTIONS
from castle_envs.castellion.env import CastellionEnv
from castle_envs.castellion.observation import encode
from castle_envs.castellion.rules import State
from castle_envs.core.errors import HiddenInformationError

from ..reference.castellion import ReferenceCastellionEnv, ReferenceState, reference_encode
from ..vector.helpers import games, single_lockstep

RULES = [{}, {"foundation_exemption": "neighbors"}, {"early_encounter": "turn_start"}]


def rarely_encounter_now(legal, rng):
    if len(legal) > 1 and rng.random() < 0.95:
        return legal[legal != ENCOUNTER_NOW]  # longer games at the Academy and Menace
    return legal


@pytest.mark.parametrize("level", ["school", "academy", "menace"])
@pytest.mark.parametrize("rules", RULES)
def test_env_is_the_reference_env(level, rules):
    illegal = single_lockstep(
        CastellionEnv(level, illegal_action="penalty", **rules),
        ReferenceCastellionEnv(level, illegal_action="penalty", **rules),
        games(100),
        seed=17,
        illegal_ids=(0, NUM_ACTIONS),
        illegal_every=40,
        narrow=rarely_encounter_now,
    )
    assert illegal > 0 or games(100) < 100


@pytest.mark.parametrize("level", ["school", "academy", "menace"])
@pytest.mark.parametrize("rules", RULES)
def test_states_views_and_worlds_match_the_reference(level, rules):
    rng = np.random.default_rng(3)
    for game in range(games(25)):
        seed = 1000 + game
        s = State.new_game(np.random.default_rng(seed), level, **rules)
        r = ReferenceState.new_game(np.random.default_rng(seed), level, **rules)
        while True:
            assert s.to_dict() == r.to_dict()
            assert np.array_equal(s.legal_action_mask(), r.legal_action_mask())
            assert np.array_equal(encode(s), reference_encode(r))
            assert s.formations() == r.formations() and s.tile_counts() == r.tile_counts()
            assert s.player_view().to_dict() == r.player_view().to_dict()
            world = int(rng.integers(1 << 30))
            assert (
                s.player_view().determinize(0, np.random.default_rng(world)).to_dict()
                == r.player_view().determinize(0, np.random.default_rng(world)).to_dict()
            )
            assert State.from_dict(r.to_dict()).to_dict() == r.to_dict()
            if s.is_terminal():
                assert s.outcome == r.outcome
                break
            for action in rng.choice(NUM_ACTIONS, 3):
                assert s.describe_action(int(action)) == r.describe_action(int(action))
                if not r.legal_action_mask()[action]:
                    assert s.illegal_reason(int(action)) == r.illegal_reason(int(action))
            legal = rarely_encounter_now(np.flatnonzero(r.legal_action_mask()), rng)
            action = int(rng.choice(legal))
            assert s.describe_action(action) == r.describe_action(action)
            s.apply_action(action)
            r.apply_action(action)


@pytest.mark.parametrize("level", ["school", "menace"])
def test_a_view_refuses_what_it_cannot_know_as_the_reference_does_and_stays_as_it_was(level):
    rng = np.random.default_rng(5)
    refused = 0
    for game in range(games(20)):
        s = State.new_game(np.random.default_rng(game), level)
        r = ReferenceState.new_game(np.random.default_rng(game), level)
        while not s.is_terminal():
            action = int(
                rng.choice(rarely_encounter_now(np.flatnonzero(s.legal_action_mask()), rng))
            )
            view, ref_view = s.player_view(), r.player_view()
            before = view.to_dict()
            try:
                ref_view.apply_action(action)
            except HiddenInformationError as err:
                with pytest.raises(HiddenInformationError) as ours:
                    view.apply_action(action)
                assert str(ours.value) == str(err)
                assert view.to_dict() == before
                assert np.array_equal(view.legal_action_mask(), s.player_view().legal_action_mask())
                refused += 1
            else:
                view.apply_action(action)
                assert view.to_dict() == ref_view.to_dict()
            s.apply_action(action)
            r.apply_action(action)
    assert refused > 0


def test_clones_and_pickles_own_their_rows():
    s = State.new_game(np.random.default_rng(8), "menace")
    for other in (s.clone(), pickle.loads(pickle.dumps(s))):
        assert other == s
        action = int(np.flatnonzero(other.legal_action_mask())[0])
        other.apply_action(action)
        assert other.to_dict() != s.to_dict()
        # the attributes are views of the copy's own row, not of the original's
        for name in ("cells", "heights", "discard", "ordeals", "beside", "regular", "safe"):
            assert np.shares_memory(getattr(other, name), other.s)
            assert not np.shares_memory(getattr(other, name), s.s)


def test_assigning_an_attribute_writes_the_row():
    s = State.new_game(np.random.default_rng(9), "menace")
    s.regular = s.regular[::-1].tolist()[:10]
    assert len(s.regular) == 10 and s.to_dict()["regular"] == s.regular[::-1].tolist()
    s.face_down = [False, True, False]
    s.beside = [[1, 0], [0, 0], [0, 0]]
    s.ordeals[2] = s.ordeals[2]
    assert s.to_dict()["face_down"] == [False, True, False]
    assert s.to_dict()["beside"] == [[1, 0], [0, 0], [0, 0]]
    assert bool(s.regular) and not s.revealed  # a pile's truth value: any tiles


@pytest.mark.parametrize(
    "hide", ["sys.modules['numba'] = None", "os.environ['NUMBA_DISABLE_JIT'] = '1'"]
)
def test_the_state_works_without_numba(hide):
    # without numba, or with numba's compiler off, the rows are int64 and the kernel runs as
    # plain Python: the same games as the reference, the face-down flags written through the
    # State (no bool view there)
    from ..vector.helpers import assert_runs_without_numba

    assert_runs_without_numba(f"""
import os, sys, warnings
{hide}
warnings.simplefilter('ignore', UserWarning)
import numpy as np
from castle_envs.castellion.rules import State
from castle_envs.castellion.actions import ENCOUNTER_NOW
from castle_envs.castellion.observation import encode
from tests.reference.castellion import ReferenceState, reference_encode
rng = np.random.default_rng(0)
for level in ('school', 'academy', 'menace'):
    s = State.new_game(np.random.default_rng(1), level)
    r = ReferenceState.new_game(np.random.default_rng(1), level)
    assert s.s.dtype == np.int64
    for _ in range(60):
        assert s.to_dict() == r.to_dict()
        assert np.array_equal(s.legal_action_mask(), r.legal_action_mask())
        assert np.array_equal(encode(s), reference_encode(r))
        assert s.player_view().determinize(0, np.random.default_rng(2)).to_dict() == \\
            r.player_view().determinize(0, np.random.default_rng(2)).to_dict()
        assert State.from_dict(r.to_dict()) == s
        if s.is_terminal():
            break
        legal = np.flatnonzero(r.legal_action_mask())
        action = int(rng.choice(legal[legal != ENCOUNTER_NOW] if len(legal) > 1 else legal))
        s.apply_action(action)
        r.apply_action(action)
s.face_down = [True, False, True]
assert s.to_dict()['face_down'] == [True, False, True] and s.face_down.dtype == bool
print('ok')
""")
