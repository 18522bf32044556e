"""The kernels update observation rows in place and count legal actions per mask row.

``update_obs`` writes only what changed since the row was last written, so a row is right
only if every earlier step kept it right: these tests compare rows with a fresh full encode
(kernel and Python reference) after long runs and after every way a row can be rewritten
(deal, autoreset, ``set_state``, ``reset`` with decks, penalty endings). ``compute_mask``
also leaves per-row legal counts in ``ints`` for ``sample_counted``; they must match the mask.
"""

import numpy as np
import pytest

from castle_envs.castle_siege import kernel as K
from castle_envs.castle_siege.actions import NUM_ACTIONS, NUM_SUBSETS
from castle_envs.castle_siege.cards import NUM_CARDS
from castle_envs.castle_siege.observation import OBS_SIZE, encode
from castle_envs.castle_siege.rules import State
from castle_envs.castle_siege.vector import CastleSiegeVectorEnv
from castle_envs.core.jit import HAVE_NUMBA

from .helpers import games, random_actions

VARIANTS = [
    {},
    {"difficulty": "easy", "defeated": "leave_game"},
    {"difficulty": "medium", "attack": "most_recent"},
]


def row_counts(mask_row):
    """Legal actions per subset row of 52 targets, then in the rest of the mask."""
    attack = mask_row[: NUM_SUBSETS * NUM_CARDS].reshape(NUM_SUBSETS, NUM_CARDS).sum(axis=1)
    return np.append(attack, mask_row[NUM_SUBSETS * NUM_CARDS : NUM_ACTIONS].sum())


def full_encode(envs, i):
    """Env ``i``'s observation written from scratch by the kernel (on copies of its rows)."""
    b, v = envs._cards[i].copy(), envs._ints[i].copy()
    obs = np.full(OBS_SIZE, np.nan, np.float32)
    K.encode(b, v, envs.rows, envs.recent, envs.leave, obs)
    return obs


def check_all(envs):
    masks = envs.action_masks()
    for i in range(envs.num_envs):
        assert np.array_equal(envs._obs[i], encode(envs.state(i)))
        assert np.array_equal(envs._obs[i], full_encode(envs, i))
        assert (
            envs._ints[i, K.COUNTS : K.COUNTS + NUM_SUBSETS + 1].tolist()
            == row_counts(masks[i]).tolist()
        )


@pytest.mark.parametrize("kwargs", VARIANTS)
def test_updated_rows_equal_full_encodes_and_counts_match_masks(kwargs):
    envs = CastleSiegeVectorEnv(8, copy=False, **kwargs)
    rng = np.random.default_rng(0)
    envs.reset(seed=1)
    check_all(envs)
    finished = 0
    for _ in range(games(600) // 4):
        _, _, terminated, truncated, _ = envs.step(random_actions(envs.action_masks(), rng))
        finished += int(np.count_nonzero(terminated | truncated))
        check_all(envs)
    assert finished > 0 or not HAVE_NUMBA


def test_rows_stay_right_across_every_rewrite():
    envs = CastleSiegeVectorEnv(4, illegal_action="penalty", difficulty="hard")
    rng = np.random.default_rng(5)
    envs.reset(seed=3)
    source = State.new_game(np.random.default_rng(9), "hard")
    for step in range(120):
        actions = random_actions(envs.action_masks(), rng)
        if step % 7 == 3:
            # penalty: the episode ends without a move
            actions[1] = np.flatnonzero(~envs.action_masks()[1])[0]
        if step % 11 == 5:
            envs.set_state(2, source)  # a position from elsewhere, mid-game
            actions[2] = rng.choice(np.flatnonzero(envs.action_masks()[2]))
        if step == 60:
            decks = [np.random.default_rng(s).permutation(52) for s in range(4)]
            envs.reset(options={"decks": decks})
            actions = random_actions(envs.action_masks(), rng)
        _, _, terminated, _, info = envs.step(actions)
        if "_final_obs" in info:
            for i in np.flatnonzero(info["_final_obs"]):
                assert np.isfinite(info["final_obs"][i]).all()
        check_all(envs)
        if step % 5 == 0:
            source = envs.state(0)


def test_moved_card_list_and_its_overflow():
    # the card movements list the cards they moved (MOVED, NMOVED) and update_obs looks at
    # those only; past MOVED_CAP entries it compares every card. Random play moves at most
    # about ten cards a step, so the overflow is forced here by filling the list beforehand
    envs = CastleSiegeVectorEnv(6, copy=False, difficulty="easy", defeated="leave_game")
    rng = np.random.default_rng(2)
    envs.reset(seed=8)
    for step in range(games(300) // 2):
        if step % 3 == 0:
            envs._ints[::2, K.NMOVED] = K.MOVED_CAP - 1 - step % 2  # stale entries: harmless
        envs.step(random_actions(envs.action_masks(), rng))
        assert (envs._ints[:, K.NMOVED] == 0).all()
        check_all(envs)
    # only listed cards are looked at: a location entry the list does not name stays as it is
    listed = envs._cards[0, K.SHOWN_LOC : K.SHOWN_LOC + NUM_CARDS].copy()
    K.update_obs(envs._cards[0], envs._ints[0], envs.recent, envs.leave, envs._obs[0])
    assert np.array_equal(envs._cards[0, K.SHOWN_LOC : K.SHOWN_LOC + NUM_CARDS], listed)
    envs._cards[0, K.CODE + 5] = (envs._cards[0, K.CODE + 5] + 1) % 11
    K.update_obs(envs._cards[0], envs._ints[0], envs.recent, envs.leave, envs._obs[0])
    assert envs._cards[0, K.SHOWN_LOC + 5] == listed[5]


def test_sample_counted_draws_every_legal_action_and_only_legal_ones():
    envs = CastleSiegeVectorEnv(4, copy=False)
    envs.reset(seed=0)
    words = np.arange(1, 5, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    out = np.zeros(4, np.int64)
    legal = [np.flatnonzero(m) for m in envs.action_masks()]
    draws = 400 * max(len(x) for x in legal) if HAVE_NUMBA else 1500
    hits = np.zeros((4, NUM_ACTIONS), np.int64)
    for _ in range(draws):
        with np.errstate(over="ignore"):  # the generator wraps by design (plain NumPy warns)
            K.sample_counted(envs._mask_padded, envs._ints, words, out)
        hits[np.arange(4), out] += 1
    for i in range(4):
        assert set(np.flatnonzero(hits[i]).tolist()) <= set(legal[i].tolist())
        if HAVE_NUMBA:  # uniform: every legal action near draws / legal (seeded, exact)
            expected = draws / len(legal[i])
            counts = hits[i, legal[i]]
            assert counts.min() > 0.7 * expected and counts.max() < 1.3 * expected


def test_sample_counted_without_legal_actions_and_in_other_phases():
    ints = np.zeros((2, K.INT_WORDS), np.int32 if HAVE_NUMBA else np.int64)
    mask = np.zeros((2, K.MASK_WIDTH), bool)
    out = np.zeros(2, np.int64)
    words = np.array([1, 2], np.uint64)
    with np.errstate(over="ignore"):
        K.sample_counted(mask, ints, words, out)
    assert out.tolist() == [-1, -1]
    # only the tail of the mask is legal (a precision strike's recycle choices)
    mask[1, K.RECYCLE_BASE + 7] = mask[1, K.RECYCLE_BASE + 30] = True
    ints[1, K.COUNTS + NUM_SUBSETS] = 2
    seen = set()
    for _ in range(200):
        with np.errstate(over="ignore"):
            K.sample_counted(mask, ints, words, out)
        assert out[0] == -1
        seen.add(int(out[1]))
    assert seen == {K.RECYCLE_BASE + 7, K.RECYCLE_BASE + 30}


def test_copy_false_buffers_are_updated_in_place_and_copies_are_independent():
    # the env's own rows are the reference for the next step's update: a copy handed out
    # with copy=True may be changed freely without affecting later observations
    rng_a, rng_b = np.random.default_rng(1), np.random.default_rng(1)
    shared, copied = CastleSiegeVectorEnv(3, copy=False), CastleSiegeVectorEnv(3)
    a, _ = shared.reset(seed=4)
    b, _ = copied.reset(seed=4)
    for _ in range(30):
        b[:] = -1.0  # the user scribbles on a returned copy
        a, *_ = shared.step(random_actions(shared.action_masks(), rng_a))
        b, *_ = copied.step(random_actions(copied.action_masks(), rng_b))
        assert np.array_equal(a, b)
    assert a is shared._obs
