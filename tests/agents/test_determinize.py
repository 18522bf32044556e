"""Information-set samplers of the multi-player games: they keep what the player saw, keep
every card, and depend only on the player's information."""

import numpy as np
from castle_envs.agents import make_agent


def _castle_rooms(seed, moves=15):
    from castle_envs.castle_rooms.rules import CastleRoomsState

    s = CastleRoomsState.deal(3, np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        if s.is_terminal():
            break
        legal = np.flatnonzero(s.legal_action_mask())
        s.apply_action(int(legal[rng.integers(len(legal))]))
    return s


def _reshuffle_rooms(s, player, rng):
    """Another state the player cannot tell apart: the hidden cards dealt differently."""
    o = s.clone()
    others = [p for p in range(s.num_players) if p != player]
    pool = list(s.deck) + [c for p in others for c in s.hands[p]]
    pool = [pool[i] for i in rng.permutation(len(pool))]
    k = 0
    for p in others:
        o.hands[p] = sorted(pool[k : k + len(s.hands[p])])
        k += len(s.hands[p])
    o.deck = pool[k:]
    o._mask = None
    return o


def test_castle_rooms_sampler_keeps_the_visible_and_every_card():
    s = _castle_rooms(0)
    p = s.current_player
    d = s.determinize(p, np.random.default_rng(1))
    assert d.hands[p] == s.hands[p] and d.discard == s.discard
    assert [len(h) for h in d.hands] == [len(h) for h in s.hands]
    assert len(d.deck) == len(s.deck)
    assert sorted([c for h in d.hands for c in h] + d.deck) == sorted(
        [c for h in s.hands for c in h] + s.deck
    )
    assert d.to_dict()["rows"] == s.to_dict()["rows"]
    assert d.deck != s.deck  # something hidden was re-dealt


def test_castle_rooms_sampler_depends_only_on_the_information_set():
    rng = np.random.default_rng(0)
    for seed in range(5):
        s = _castle_rooms(seed)
        if s.is_terminal():
            continue
        p = s.current_player
        o = _reshuffle_rooms(s, p, rng)
        assert o.deck != s.deck
        a = s.determinize(p, np.random.default_rng(9))
        b = o.determinize(p, np.random.default_rng(9))
        assert a.deck == b.deck and a.hands == b.hands


def test_mcts_choices_do_not_change_with_hidden_cards_in_castle_rooms():
    agent = make_agent("mcts:sims=30", "castle-rooms")
    rng = np.random.default_rng(3)
    for seed in range(3):
        s = _castle_rooms(seed, moves=9)
        if s.is_terminal():
            continue
        choices = set()
        for state in (s, _reshuffle_rooms(s, s.current_player, rng)):
            agent.reset(seed)
            choices.add(agent.act(None, state.legal_action_mask(), state.clone()))
        assert len(choices) == 1


def test_castell_sampler_reorders_only_the_bag():
    from castle_envs.castell.rules import State

    s = State.deal(np.random.default_rng(0), 3)
    o = s.clone()
    o.bag = list(np.random.default_rng(5).permutation(o.bag).tolist())
    a = s.determinize(0, np.random.default_rng(2))
    b = o.determinize(0, np.random.default_rng(2))
    assert a.bag == b.bag and sorted(a.bag) == sorted(s.bag)
    da, ds = a.to_dict(), s.to_dict()
    da.pop("bag"), ds.pop("bag")
    assert da == ds
