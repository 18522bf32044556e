"""Castellion: the heuristic plays legally, passes more ordeals than random, and the
information-set sampler keeps what the player saw."""

import numpy as np
from castle_envs.agents.baselines.castellion import heuristic_policy
from castle_envs.experiments.evaluate import evaluate

from castle_envs.castellion.rules import State


def test_heuristic_plays_legal_moves_to_the_end():
    for level in ("school", "academy", "menace"):
        for seed in range(4):
            s = State.new_game(np.random.default_rng(seed), level)
            rng = np.random.default_rng(seed)
            while not s.is_terminal():
                a = heuristic_policy(s, rng)
                assert s.legal_action_mask()[a]
                s.apply_action(a)


def test_heuristic_passes_more_ordeals_than_random():
    # nobody wins Castellion under these rules yet; the ordeals passed tell the agents apart
    r = evaluate("castellion", ["menace"], ["random", "heuristic"], 40, seed=0, workers=1)
    d = r["paired"][0]["events_diff"]["ordeals_passed"]
    assert d["low"] > 0


def _mid_game(seed, level="menace", moves=12):
    s = State.new_game(np.random.default_rng(seed), level)
    rng = np.random.default_rng(seed)
    for _ in range(moves):
        if s.is_terminal():
            break
        s.apply_action(heuristic_policy(s, rng))
    return s


def test_sampler_keeps_the_visible_and_depends_only_on_the_information_set():
    s = _mid_game(1)
    d = s.determinize(0, np.random.default_rng(3))
    assert sorted(d.regular) == sorted(s.regular) and sorted(d.safe) == sorted(s.safe)
    assert (
        d.cells.tolist() == s.cells.tolist()
        and d.hand == s.hand
        and d.revealed.tolist() == s.revealed.tolist()
    )
    for slot in range(3):
        if not s.face_down[slot]:
            assert d.ordeals[slot] == s.ordeals[slot]
    o = s.clone()
    o.regular = list(np.random.default_rng(4).permutation(o.regular).tolist())
    from castle_envs.castellion.data import ORDEALS_BY_SLOT

    hidden = [i for i in range(3) if s.face_down[i]]
    assert hidden  # Menace deals its ordeals face down
    for i in hidden:  # another card the player cannot tell from this one
        ids = ORDEALS_BY_SLOT[s.level][i]
        o.ordeals[i] = ids[(ids.index(s.ordeals[i]) + 1) % len(ids)]
    e = o.determinize(0, np.random.default_rng(3))
    assert e.regular.tolist() == d.regular.tolist() and e.ordeals.tolist() == d.ordeals.tolist()


def test_heuristic_does_not_read_hidden_tiles_or_face_down_ordeals():
    from castle_envs.castellion.data import ORDEALS_BY_SLOT

    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(3):
        s = State.new_game(np.random.default_rng(seed), "menace")
        while not s.is_terminal() and checked < 300:
            o = s.clone()
            o.regular = [o.regular[i] for i in rng.permutation(len(o.regular))]
            o.safe = [o.safe[i] for i in rng.permutation(len(o.safe))]
            for i in range(3):
                if s.face_down[i]:
                    ids = ORDEALS_BY_SLOT[s.level][i]
                    o.ordeals[i] = ids[rng.integers(len(ids))]
            a = heuristic_policy(s, np.random.default_rng(1))
            assert heuristic_policy(o, np.random.default_rng(1)) == a
            s.apply_action(a)
            checked += 1
    assert checked > 100


def test_heuristic_plays_the_menace_from_the_players_view():
    # every harness hands agents the player's view (face-down ordeals hidden); the heuristic's
    # planning copy used to keep the view's guard and raised HiddenInformationError when a
    # planned step turned up a face-down ordeal (deals 1,000,000-1,000,029 met it)
    rng = np.random.default_rng(0)
    for seed in range(1_000_000, 1_000_030):
        s = State.new_game(np.random.default_rng(seed), "menace")
        while not s.is_terminal():
            a = heuristic_policy(s.player_view(), rng)
            assert s.legal_action_mask()[a]
            s.apply_action(a)
