"""The Castle Siege ISMCTS agent with a learned n-tuple afterstate value at its leaves: the
value changes the search only through what it values, reads only the player's view, plays
the same with the same seed, and bad settings are refused by name."""

import numpy as np
import pytest

pytest.importorskip("numba")

from castle_envs.agents import make_agent  # noqa: E402
from castle_envs.agents.learned import castle_siege_ntuple_kernel as NT  # noqa: E402
from castle_envs.agents.learned.castle_siege_ntuple import NTupleValue  # noqa: E402
from castle_envs.agents.solvers.castle_siege import deal_deck  # noqa: E402

from castle_envs.castle_siege.rules import State  # noqa: E402

from .test_castle_siege_ismcts import ROOT, _game_actions, _midgame, _policy  # noqa: E402
from .test_castle_siege_search import _twin_walk  # noqa: E402


def _value_dir(tmp_path, seed=0):
    weights = np.random.default_rng(seed).normal(0, 0.5, NT.N_WEIGHTS).astype(np.float32)
    return str(NTupleValue(weights).save(tmp_path / f"value{seed}"))


def _root(policy, state):
    action = policy(state, np.random.default_rng(0))
    assert policy.searched
    return action, policy.root_stats(), policy._tree.stats.copy()


def test_a_zero_mix_leaves_the_search_unchanged_and_a_full_one_replaces_the_playouts(
    tmp_path,
):
    s = _midgame(5, moves=3, difficulty="very_hard")
    plain = _root(_policy(), s)
    unmixed = _root(_policy(afterstate=_value_dir(tmp_path), afterstate_mix=0.0), s)
    assert plain[:2] == unmixed[:2]
    full = _root(_policy(afterstate=_value_dir(tmp_path), afterstate_mix=1.0), s)
    assert full[1] != plain[1]  # the leaves were valued differently
    assert full[2][1] < full[2][0] // 4  # few playouts: only worlds the rules already ended
    assert plain[2][1] > plain[2][0] // 2


def test_the_search_changes_only_through_the_value(tmp_path):
    """Two different tables give different roots; the same tables, loaded twice, the same."""
    s = _midgame(5, moves=3, difficulty="very_hard")
    one = _root(_policy(afterstate=_value_dir(tmp_path, 1), afterstate_mix=0.5), s)
    again = _root(_policy(afterstate=_value_dir(tmp_path, 1), afterstate_mix=0.5), s)
    other = _root(_policy(afterstate=_value_dir(tmp_path, 2), afterstate_mix=0.5), s)
    assert one[1] == again[1]
    assert one[1] != other[1]


def test_the_afterstate_search_reads_only_the_view(tmp_path):
    """Deals that differ only in the unseen cards' order get the same decisions (the
    value at a leaf treats the cards its last move drew as still unseen)."""
    options = dict(afterstate=_value_dir(tmp_path), afterstate_mix=0.7, iterations=40)
    policy, twin_policy = _policy(**options), _policy(**options)
    s = State.new_game(difficulty="very_hard", deck=deal_deck(12))
    shuffler = np.random.default_rng(2)
    checked = 0
    for _ in _twin_walk(policy, twin_policy, s, shuffler, 30):
        checked += policy.searched
    assert checked > 5


def test_a_deal_plays_the_same_with_the_same_seed():
    spec = (
        "ismcts:iterations=30,width=4,afterstate_mix=0.5,"
        f"afterstate={ROOT / 'models' / 'castle_siege_ntuple_value'}"
    )
    alone = _game_actions(make_agent(spec, "castle-siege"), 31_000_005)
    busy = make_agent(spec, "castle-siege")
    _game_actions(busy, 31_000_000)
    assert _game_actions(busy, 31_000_005) == alone


def test_bad_afterstate_settings_are_refused_by_name(tmp_path):
    good = _value_dir(tmp_path)
    with pytest.raises(ValueError, match="ismcts option afterstate_mix"):
        _policy(afterstate=good, afterstate_mix=1.5)
    with pytest.raises(ValueError, match="afterstate_mix > 0 needs afterstate"):
        _policy(afterstate_mix=0.5)
    with pytest.raises(ValueError, match="lam and afterstate_mix do not combine"):
        _policy(afterstate=good, afterstate_mix=0.5, lam=0.5, value=good)
    other_kind = ROOT / "models" / "castle_siege_very_hard_ismcts"
    with pytest.raises(ValueError, match="not 'ntuple_value'"):
        _policy(afterstate=str(other_kind), afterstate_mix=0.5)
    with pytest.raises(FileNotFoundError):
        _policy(afterstate=str(tmp_path / "none"), afterstate_mix=0.5)
    (tmp_path / "value0" / "weights.npz").write_bytes(b"not an npz")
    with pytest.raises(ValueError, match="not a n-tuple value .npz"):
        _policy(afterstate=good, afterstate_mix=0.5)
    with pytest.raises(ValueError, match="unknown ismcts option"):
        make_agent("ismcts:afterstate_mx=0.5", "castle-siege")


def _move_values(value_dir, state):
    """Every legal move's afterstate value by the n-tuple player itself (no pruning)."""
    from castle_envs.agents.learned.castle_siege_ntuple import NTuplePolicy
    from castle_envs.agents.search.castle_siege_ismcts import load_afterstate

    player = NTuplePolicy(NTupleValue(load_afterstate(value_dir), prune=False))
    player(state)
    return player.values


@pytest.mark.parametrize("weight,temp", [(1.0, 1.0), (0.5, 0.25)])
def test_the_afterstate_prior_mixes_the_values_log_odds_into_the_root(tmp_path, weight, temp):
    value = _value_dir(tmp_path)
    s = _midgame(4, moves=2, difficulty="very_hard")
    plain = _policy()
    plain(s, np.random.default_rng(0))
    mixed = _policy(afterstate=value, afterstate_prior=weight, afterstate_temp=temp)
    mixed(s, np.random.default_rng(0))
    acts = [a for a, *_ in mixed.root_stats()]
    assert acts == [a for a, *_ in plain.root_stats()]  # the scorer still picks the children
    values = _move_values(value, s)[acts]
    assert np.isfinite(values).all() and np.ptp(values) > 0
    z = np.log(values / (1 - values)) / temp
    learned = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
    base = np.array([p for *_, p in plain.root_stats()])
    got = np.array([p for *_, p in mixed.root_stats()])
    assert np.allclose(got, (1 - weight) * base + weight * learned)
    assert not np.allclose(got, base)


def test_the_afterstate_prior_reads_only_the_view(tmp_path):
    options = dict(afterstate=_value_dir(tmp_path), afterstate_prior=1.0, iterations=40)
    policy, twin_policy = _policy(**options), _policy(**options)
    s = State.new_game(difficulty="very_hard", deck=deal_deck(14))
    shuffler = np.random.default_rng(5)
    checked = 0
    for _ in _twin_walk(policy, twin_policy, s, shuffler, 30):
        if policy.searched:
            assert policy.root_stats() == twin_policy.root_stats()
            checked += 1
    assert checked > 5


def test_bad_afterstate_prior_settings_are_refused_by_name(tmp_path):
    good = _value_dir(tmp_path)
    with pytest.raises(ValueError, match="afterstate_prior > 0 needs afterstate"):
        _policy(afterstate_prior=0.5)
    with pytest.raises(ValueError, match="prior_mix and afterstate_prior do not combine"):
        _policy(afterstate=good, afterstate_prior=0.5, prior_mix=0.5, prior=good)
    with pytest.raises(ValueError, match="ismcts option afterstate_temp"):
        _policy(afterstate=good, afterstate_prior=0.5, afterstate_temp=0.0)
    with pytest.raises(ValueError, match="ismcts option afterstate_prior"):
        _policy(afterstate=good, afterstate_prior=1.5)
    with pytest.raises(ValueError, match="not 'ntuple_value'"):
        _policy(
            afterstate=str(ROOT / "models" / "castle_siege_very_hard_ismcts"), afterstate_prior=1
        )
