"""Seeded random games: conservation, mask == what apply accepts, JSON round trips, the end."""

import numpy as np
import pytest

from castle_envs.castell import data as D
from castle_envs.castell.rules import State, tower_legal
from castle_envs.core.errors import IllegalActionError


def _check_invariants(s: State):
    total = (
        np.bincount(np.array(s.bag, dtype=np.int64), minlength=10)
        + s.regions.sum(axis=0)
        + s.hand.sum(axis=0)
    )
    assert total.tolist() == [15] * 10  # 150 castellers accounted for
    assert s.tokens.sum() + s.lp_tokens.sum() + s.collected.sum() == 7 * s.num_players
    assert (s.in_tower <= s.hand).all()
    for p in range(s.num_players):
        assert tower_legal(s.towers[p], s.skills[p])
    assert (s.skills <= s.max_skill).all()


def _check_mask_matches_apply(s: State):
    mask = s.legal_action_mask().copy()
    for a in range(len(mask)):
        c = s.clone()
        if mask[a]:
            c.apply_action(a)
        else:
            with pytest.raises(IllegalActionError):
                c.apply_action(a)
    assert (s.legal_action_mask() == mask).all()  # probing left s untouched


def _random_game(players, seed, advanced=False, probe_every=0, check=True):
    rng = np.random.default_rng(seed)
    s = State.deal(rng, players, advanced=advanced)
    steps = 0
    while not s.is_terminal():
        if check:
            _check_invariants(s)
        if probe_every and steps % probe_every == 0:
            _check_mask_matches_apply(s)
            assert State.from_json(s.to_json()) == s
        legal = np.flatnonzero(s.legal_action_mask())
        assert len(legal) > 0
        s.apply_action(int(rng.choice(legal)))
        steps += 1
        assert steps < 5000
    _check_invariants(s)
    return s, steps


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("advanced", [False, True])
def test_mask_is_exactly_what_apply_accepts(players, advanced):
    for seed in range(2):
        _random_game(players, seed, advanced, probe_every=7)


@pytest.mark.parametrize("players", [2, 3, 4])
def test_every_game_ends_after_round_ten_with_castellers_conserved(players):
    for seed in range(40):
        s, _ = _random_game(players, 100 + seed, advanced=seed % 2 == 1)
        assert s.round == D.ROUNDS + 1 and s.current_player == -1
        assert s.returns().shape == (players,)


def test_games_are_deterministic_given_the_seed():
    a, na = _random_game(3, 7, check=False)
    b, nb = _random_game(3, 7, check=False)
    assert na == nb and a == b


def test_clone_is_independent():
    s = State.deal(np.random.default_rng(0), 2)
    c = s.clone()
    c.apply_action(0)
    c.towers[0].append((1, 0, 0))
    assert s.pawn[0] == -1 and s.towers[0] == [] and c != s


def test_json_round_trip_at_the_end():
    s, _ = _random_game(4, 3, check=False)
    assert State.from_json(s.to_json()) == s


@pytest.mark.parametrize("players", [2, 3, 4])
def test_festival_seeker_games_keep_the_invariants(players):
    """A scripted agent (with some random steps) reaches festivals and performances."""
    from castle_envs.castell.measure import heuristic_action

    scored = performed = 0
    for seed in range(6):
        rng = np.random.default_rng(seed)
        s = State.deal(rng, players, advanced=seed % 2 == 1)
        steps = 0
        while not s.is_terminal():
            _check_invariants(s)
            if steps % 25 == 0:
                _check_mask_matches_apply(s)
            if rng.random() < 0.05:
                a = int(rng.choice(np.flatnonzero(s.legal_action_mask())))
            else:
                a = heuristic_action(s)
            s.apply_action(a)
            steps += 1
        assert State.from_json(s.to_json()) == s
        scored += int((s.best > 0).sum())
        performed += sum(len(x) for x in s.performed)
    assert scored > 0 and performed > 0
