"""The package's Castle Siege rules (the compiled kernel, seen through ``rules.State`` and
``CastleSiegeEnv``) against the plain-Python reference in ``tests/reference``, which was
written apart from the kernel from the rule text: the same games, move for move, give the
same masks, observations, rewards, saved states, player's views and determinized worlds."""

import numpy as np
import pytest

from castle_envs.castle_siege.env import CastleSiegeEnv
from castle_envs.castle_siege.observation import encode
from castle_envs.castle_siege.rules import State
from castle_envs.core.errors import HiddenInformationError

from ..reference.castle_siege import ReferenceCastleSiegeEnv, ReferenceState, reference_encode
from ..vector.helpers import games, single_lockstep

RULES = [
    {},
    {"attack": "most_recent"},
    {"defeated": "leave_game"},
    {"victory": "deck_left"},
    {"attack": "most_recent", "defeated": "leave_game", "victory": "deck_left"},
]


@pytest.mark.parametrize("difficulty", ["easy", "very_hard"])
@pytest.mark.parametrize("rules", RULES)
def test_env_is_the_reference_env(difficulty, rules):
    illegal = single_lockstep(
        CastleSiegeEnv(difficulty, illegal_action="penalty", **rules),
        ReferenceCastleSiegeEnv(difficulty, illegal_action="penalty", **rules),
        games(150),
        seed=17,
        illegal_ids=(0, 1676),
        illegal_every=40,
    )
    assert illegal > 0 or games(150) < 150


@pytest.mark.parametrize("rules", RULES)
def test_states_views_and_worlds_match_the_reference(rules):
    rng = np.random.default_rng(3)
    for game in range(games(60)):
        seed = 1000 + game
        s = State.new_game(np.random.default_rng(seed), "easy", **rules)
        r = ReferenceState.new_game(np.random.default_rng(seed), "easy", **rules)
        while True:
            assert s.to_dict() == r.to_dict()
            assert np.array_equal(s.legal_action_mask(), r.legal_action_mask())
            assert np.array_equal(encode(s), reference_encode(r))
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
            action = int(rng.choice(np.flatnonzero(r.legal_action_mask())))
            assert s.describe_action(action) == r.describe_action(action)
            s.apply_action(action)
            r.apply_action(action)


def test_a_view_refuses_a_draw_and_stays_as_it_was():
    s = State.new_game(np.random.default_rng(5), "very_hard")
    view = s.player_view()
    end = int(np.flatnonzero(view.legal_action_mask())[-1])  # end the battle: a deal follows
    before = view.to_dict()
    with pytest.raises(HiddenInformationError):
        view.apply_action(end)
    assert view.to_dict() == before
    assert np.array_equal(view.legal_action_mask(), s.legal_action_mask())


def test_clones_and_pickles_own_their_rows():
    import pickle

    s = State.new_game(np.random.default_rng(8), "hard")
    for other in (s.clone(), pickle.loads(pickle.dumps(s))):
        action = int(np.flatnonzero(other.legal_action_mask())[0])
        other.apply_action(action)
        assert other.to_dict() != s.to_dict()
        # the attributes are views of the copy's own rows, not of the original's
        for name in ("deck", "hand", "columns", "captured", "discard", "recycled"):
            assert np.shares_memory(getattr(other, name), other.b)
            assert not np.shares_memory(getattr(other, name), s.b)
        assert np.shares_memory(other.col_len, other.v)


@pytest.mark.parametrize(
    "hide", ["sys.modules['numba'] = None", "os.environ['NUMBA_DISABLE_JIT'] = '1'"]
)
def test_the_env_and_state_work_without_the_compiler(hide):
    # without numba, or with numba's compiler off, the rows are int64 and the kernel runs as
    # plain Python (int8 rows overflowed there): the env plays the reference's games and
    # the flags are written through the State
    from ..vector.helpers import assert_runs_without_numba

    assert_runs_without_numba(f"""
import os, sys, warnings
{hide}
warnings.simplefilter('ignore', UserWarning)
import numpy as np
from castle_envs.castle_siege.env import CastleSiegeEnv
from castle_envs.castle_siege.rules import State
from tests.reference.castle_siege import ReferenceCastleSiegeEnv
for difficulty in ('easy', 'very_hard'):
    env, ref = CastleSiegeEnv(difficulty), ReferenceCastleSiegeEnv(difficulty)
    rng = np.random.default_rng(0)
    for seed in range(3):
        obs, info = env.reset(seed=seed)
        robs, rinfo = ref.reset(seed=seed)
        assert env.unwrapped.game_state.b.dtype == np.int64
        done = False
        while not done:
            assert np.array_equal(obs, robs)
            assert np.array_equal(info['action_mask'], rinfo['action_mask'])
            action = int(rng.choice(np.flatnonzero(info['action_mask'])))
            obs, r, term, trunc, info = env.step(action)
            robs, rr, rterm, rtrunc, rinfo = ref.step(action)
            assert (r, term, trunc) == (rr, rterm, rtrunc)
            done = term or trunc
s = State.new_game(np.random.default_rng(1), 'easy')
flags = s.discard.copy()
flags[5] = True
s.discard = flags                       # assigning writes the row
assert 5 in s.to_dict()['discard'] and s.clone().discard[5]
try:
    s.discard[6] = True                 # a write into the copy would be lost: refused
    raise SystemExit('a flag written into a copy')
except ValueError:
    pass
print('ok')
""")


def test_assigning_a_view_writes_the_rows():
    from castle_envs.castle_siege import kernel as K

    s = State.new_game(np.random.default_rng(3), "easy")
    castles = s.castles.copy()
    s.castles = castles[::-1].copy()  # into the row, not a new array beside it
    assert np.array_equal(s.b[K.CASTLES : K.CASTLES + 4], castles[::-1])
    assert np.array_equal(s.clone().castles, castles[::-1])
    flags = np.zeros(52, bool)
    flags[[7, 9]] = True
    s.discard = flags
    assert sorted(s.to_dict()["discard"]) == [7, 9] and s.clone().discard[[7, 9]].all()
    with pytest.raises(ValueError):
        s.castles = [1, 2]  # a wrong shape is refused, nothing half-written
    assert np.array_equal(s.castles, castles[::-1])
