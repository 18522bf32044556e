"""The Castle Siege information-set MCTS agent: the view hash sees exactly what the player
sees, worlds are reshuffles of the unseen cards only, play is legal and reads no hidden card,
and a decision depends only on the position and the agent's seed."""

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("numba")

from castle_envs.agents import make_agent  # noqa: E402
from castle_envs.agents.learned.castle_siege_linear import LinearPolicy  # noqa: E402
from castle_envs.agents.search import castle_siege_ismcts_kernel as M  # noqa: E402
from castle_envs.agents.search.castle_siege_ismcts import ISMCTSPolicy  # noqa: E402
from castle_envs.agents.solvers import castle_siege_kernel as S  # noqa: E402
from castle_envs.agents.solvers import castle_siege_nested_kernel as N  # noqa: E402
from castle_envs.agents.solvers.castle_siege import deal_deck  # noqa: E402
from castle_envs.agents.solvers.castle_siege_compiled import shared_memo  # noqa: E402

from castle_envs.castle_siege import kernel as K  # noqa: E402
from castle_envs.castle_siege.actions import END_BATTLE  # noqa: E402
from castle_envs.castle_siege.env import CastleSiegeEnv  # noqa: E402
from castle_envs.castle_siege.rules import State  # noqa: E402
from castle_envs.castle_siege.vector import write_state  # noqa: E402

from .test_castle_siege_search import _reshuffle_unseen, _twin_walk  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
SCORER = ROOT / "models" / "castle_siege_very_hard_linear" / "policy.json"
SMALL = dict(iterations=60, width=4, endgame=2000)


def _policy(**options):
    return ISMCTSPolicy(LinearPolicy.load(SCORER), **{**SMALL, **options})


def _rows(state):
    b = np.zeros(K.CARD_WORDS, np.int8)
    v = np.zeros(K.INT_WORDS, np.int32)
    write_state(b, v, state, state.rows, {"attack": state.attack, "defeated": state.defeated})
    return b, v


def _midgame(seed=3, moves=25, difficulty="hard"):
    """A position some moves into a scorer game, with recycled cards in the deck if any."""
    s = State.new_game(difficulty=difficulty, deck=deal_deck(seed))
    scorer = LinearPolicy.load(SCORER)
    for _ in range(moves):
        if s.outcome:
            break
        s.apply_action(scorer(s))
    return s


def test_view_hash_ignores_the_unseen_order_and_sees_every_visible_change():
    s = _midgame()
    h = M.view_hash(*_rows(s), M._ZV)
    rng = np.random.default_rng(0)
    for _ in range(5):
        assert M.view_hash(*_rows(_reshuffle_unseen(s, rng)), M._ZV) == h
    # every legal move changes what the player sees
    for action in np.flatnonzero(s.legal_action_mask())[:40]:
        other = s.clone()
        other.apply_action(int(action))
        assert M.view_hash(*_rows(other), M._ZV) != h, s.describe_action(int(action))


def test_shuffle_unseen_keeps_the_cards_and_the_recycled_order():
    for seed in range(20):
        s = _midgame(seed, moves=30, difficulty="medium")
        b, v = _rows(s)
        before = s.deck_cards()
        recycled = [c for c in before if s.recycled[c]]
        n = M.shuffle_unseen(b, v, np.array([seed * 7 + 1], np.uint64))
        after = [int(b[K.DECK + (v[K.HEAD] + k) % 52]) for k in range(v[K.DSIZE])]
        assert n == len(before) - len(recycled)
        assert sorted(after) == sorted(before)
        assert after[n:] == before[n:] == recycled
        assert not any(s.recycled[c] for c in after[:n])


@pytest.mark.parametrize("difficulty", ["easy", "very_hard"])
def test_plays_legal_moves_to_the_end(difficulty):
    policy = _policy()
    s = State.new_game(difficulty=difficulty, deck=deal_deck(4))
    rng = np.random.default_rng(0)
    moves = 0
    while not s.outcome:
        action = policy(s.player_view(), rng)
        assert s.legal_action_mask()[action]
        s.apply_action(action)
        moves += 1
    assert moves > 5


def test_plays_legal_moves_to_the_end_under_victory_deck_left():
    # the option travels in the kernel rows the search builds from the player's view
    policy = _policy()
    s = State.new_game(difficulty="easy", deck=deal_deck(4), victory="deck_left")
    rng = np.random.default_rng(0)
    b, v = _rows(s.player_view().determinize(0, rng))
    assert v[K.STRICT] == 1
    while not s.outcome:
        action = policy(s.player_view(), rng)
        assert s.legal_action_mask()[action]
        s.apply_action(action)
    assert s.won == (s.deck_size > 0)


@pytest.mark.parametrize(
    "options",
    [{}, {"halving": 1, "root_width": 6}, {"trees": 2}, {"chance": 2}, {"endplay": 300}],
)
def test_decisions_depend_only_on_what_the_player_sees(options):
    """Two deals that differ only in the order of unseen cards get the same decision at
    every position of a game (the agent is handed the full state here on purpose)."""
    policy_a, policy_b = _policy(**options), _policy(**options)
    s = State.new_game(difficulty="hard", deck=deal_deck(21))
    shuffler = np.random.default_rng(1)
    checked = 0
    for position, _ in _twin_walk(policy_a, policy_b, s, shuffler, 40):
        checked += len(np.flatnonzero(position.legal_action_mask())) > 1
    assert checked > 10


def _game_actions(agent, seed):
    env = CastleSiegeEnv(difficulty="very_hard")
    obs, info = env.reset(seed=seed)
    agent.reset([seed, 0])
    actions, done = [], False
    while not done:
        a = agent.act(obs, info["action_mask"], env.game_state.player_view())
        actions.append(a)
        obs, _, term, trunc, info = env.step(a)
        done = term or trunc
    return actions


@pytest.mark.parametrize(
    "spec",
    [
        "ismcts:iterations=40,width=4",
        "ismcts:iterations=40,width=4,halving=1,root_width=6",
        "ismcts:iterations=20,width=4,trees=3",
        "ismcts:iterations=40,width=4,chance=2",
        "ismcts:iterations=40,width=4,endplay=300",
        "search:samples=3,candidates=3,nodes=300",
    ],
)
def test_a_deal_plays_the_same_alone_and_after_other_games(spec):
    """The agent's play on a deal depends only on the deal and its seed: no noise state
    survives from the games it played before."""
    alone = _game_actions(make_agent(spec, "castle-siege"), 31_000_005)
    busy = make_agent(spec, "castle-siege")
    for seed in (31_000_000, 31_000_001):
        _game_actions(busy, seed)
    assert _game_actions(busy, 31_000_005) == alone


@pytest.mark.parametrize("trees", [1, 3])
def test_root_statistics_count_the_iterations(trees):
    """With ``trees`` > 1 the root's visits are summed over the trees and the move played is
    the most visited of the sum."""
    policy = _policy(iterations=80, trees=trees)
    s = State.new_game(difficulty="very_hard", deck=deal_deck(9))
    while len(np.flatnonzero(s.legal_action_mask())) == 1:
        s.apply_action(int(np.flatnonzero(s.legal_action_mask())[0]))
    action = policy(s, np.random.default_rng(0))
    stats = policy.root_stats()
    assert sum(n for _, n, _, _ in stats) == 80 * trees
    assert abs(sum(p for *_, p in stats) - 1) < 1e-9
    assert len({a for a, *_ in stats}) == len(stats)
    assert action == max(stats, key=lambda r: r[1])[0]
    assert all(s.legal_action_mask()[a] for a, *_ in stats)


@pytest.mark.parametrize(
    "options,word",
    [
        ({"iterations": 0}, "iterations"),
        ({"width": 1}, "width"),
        ({"temp": 0.0}, "temp"),
        ({"noise": 1.5}, "noise"),
        ({"c": "x"}, "c"),
        ({"standing": -0.1}, "standing"),
        ({"halving": 2}, "halving"),
        ({"trees": 0}, "trees"),
        ({"chance": -1}, "chance"),
        ({"endplay": -5}, "endplay"),
        ({"endmiss": 0}, "endmiss"),
        ({"root_width": M.MAX_WIDTH + 1}, "root_width"),
    ],
)
def test_bad_options_are_named(options, word):
    with pytest.raises(ValueError, match=f"ismcts option {word}"):
        _policy(**options)


def test_root_parallel_trees_do_not_combine_with_halving():
    with pytest.raises(ValueError, match="trees > 1 and halving=1"):
        _policy(trees=2, halving=1)


def test_spec_options_and_errors():
    agent = make_agent("ismcts:iterations=30,width=3,c=0.7", "castle-siege")
    assert agent.policy.iterations == 30 and agent.policy.c == 0.7
    with pytest.raises(ValueError, match="unknown ismcts option"):
        make_agent("ismcts:iters=3", "castle-siege")
    with pytest.raises(ValueError, match="castle-siege only"):
        make_agent("ismcts", "castellion")


@pytest.mark.parametrize(
    "directory",
    [
        "castle_siege_very_hard_ismcts",
        "castle_siege_very_hard_ismcts_standing",
        "castle_siege_very_hard_ismcts_wide",
        "castle_siege_very_hard_ismcts_endgame",
    ],
)
def test_shipped_model_card_matches_its_options(directory):
    path = ROOT / "models" / directory / "model.json"
    meta = json.loads(path.read_text())
    agent = make_agent(f"model:{path.parent}", "castle-siege")
    assert meta["kind"] == "ismcts" and meta["options"] == agent.policy.options


def test_search_agent_noise_does_not_outlive_a_decision():
    """The ``search`` agent's probe noise lives in its work buffer: a decision must not
    depend on what that buffer holds from earlier decisions (it is reseeded from the
    agent's generator each time). Very Hard positions where a leftover buffer changed the
    default agent's move before the fix."""
    from castle_envs.agents.search.castle_siege_search import SearchPolicy

    for seed, moves in ((2, 14), (7, 14), (9, 14)):
        s = _midgame(seed, moves=moves, difficulty="very_hard")
        fresh = SearchPolicy(LinearPolicy.load(SCORER))
        used = SearchPolicy(LinearPolicy.load(SCORER))
        used._w.rng[0] = np.uint64(12345 + seed)  # left over from other games
        assert fresh(s, np.random.default_rng(seed)) == used(s, np.random.default_rng(seed))


def _first_choice(seed=9):
    s = State.new_game(difficulty="very_hard", deck=deal_deck(seed))
    while len(np.flatnonzero(s.legal_action_mask())) == 1:
        s.apply_action(int(np.flatnonzero(s.legal_action_mask())[0]))
    return s


def test_sequential_halving_keeps_the_better_half_on_common_worlds():
    """With ``halving`` every root child still in the running plays the same worlds: four
    children, 60 iterations: round one gives each 7 worlds, round two the better two 16 more,
    and the winner is the better finalist by mean value."""
    s = _first_choice()
    policy = _policy(iterations=60, width=4, halving=1)
    action = policy(s, np.random.default_rng(0))
    stats = policy.root_stats()
    assert len(stats) == 4 and all(s.legal_action_mask()[a] for a, *_ in stats)
    assert sorted(n for _, n, _, _ in stats) == [7, 7, 23, 23]
    finalists = [r for r in stats if r[1] == 23]
    assert action == max(finalists, key=lambda r: r[2])[0]


def test_the_root_may_be_wider_than_the_tree():
    s = _first_choice()
    legal = len(np.flatnonzero(s.legal_action_mask()))
    policy = _policy(iterations=40, width=3, root_width=10)
    policy(s, np.random.default_rng(0))
    assert len(policy.root_stats()) == min(10, legal) > 3


def test_standing_defenders_lower_a_lost_worlds_value():
    s = State.new_game(difficulty="very_hard", deck=deal_deck(9))
    while len(np.flatnonzero(s.legal_action_mask())) == 1:
        s.apply_action(int(np.flatnonzero(s.legal_action_mask())[0]))
    plain, weighted = _policy(iterations=60), _policy(iterations=60, standing=0.5)
    plain(s, np.random.default_rng(0))
    weighted(s, np.random.default_rng(0))
    # a lost world is worth shaped * castles captured / 4 >= 0, less 0.5 * standing / 52
    assert min(q for _, n, q, _ in plain.root_stats() if n) >= 0.0
    assert min(q for _, n, q, _ in weighted.root_stats() if n) < 0.0


def _end_of_turn(seed=9, difficulty="hard"):
    """A battle phase whose end (the new defenders, then the next hand) draws unseen cards."""
    s = _first_choice(seed)
    assert s.legal_action_mask()[END_BATTLE] and s.deck_size > int(s.recycled.sum())
    return s


def _deck(b, v):
    """The deck's cards from its top, read from the kernel rows."""
    return [int(b[K.DECK + (v[K.HEAD] + i) % 52]) for i in range(v[K.DSIZE])]


def test_a_kept_draw_replaces_a_later_worlds_draw_and_reshuffles_the_rest():
    """Sparse sampling with one draw kept: a second world that ends the turn is handed the
    first world's draw (the same view after it), its other unseen cards shuffled again, and
    no card is lost or duplicated."""
    s = _end_of_turn()
    t = M.new_tree(10)
    M.clear(t)
    t.rng[0] = np.uint64(12345)
    worlds = []
    for k in range(2):
        b, v = _rows(_reshuffle_unseen(s, np.random.default_rng(k)))
        hidden = K.unseen(b, v)
        K.apply(b, v, END_BATTLE, False)
        assert K.unseen(b, v) < hidden
        first = (b.copy(), v.copy())
        M.sparse_outcome(t, 0, 0, b, v, 1)
        worlds.append((first, (b, v)))
    (a_drawn, a_kept), (b_drawn, b_kept) = worlds
    assert M.view_hash(*a_drawn, M._ZV) != M.view_hash(*b_drawn, M._ZV)  # two draws...
    assert M.view_hash(*b_kept, M._ZV) == M.view_hash(*a_drawn, M._ZV)  # ...one kept
    assert t.ocount[0, 0] == 1 and t.ovisits[t.obase[0, 0]] == 2
    n = K.unseen(*b_kept)
    assert sorted(_deck(*b_kept)) == sorted(_deck(*a_drawn))
    assert _deck(*b_kept)[n:] == _deck(*a_drawn)[n:]  # the recycled cards keep their order
    assert _deck(*b_kept)[:n] != _deck(*a_drawn)[:n]  # the unseen ones are dealt again


def test_sparse_sampling_keeps_at_most_k_draws_an_edge_and_searches_below_them():
    s = _end_of_turn()
    policy = _policy(iterations=400, width=4, chance=2)
    policy(s, np.random.default_rng(0))
    t = policy._tree
    edges = [
        (node, e)
        for node in range(int(t.used[0]))
        for e in range(int(t.width[node]))
        if t.obase[node, e] >= 0
    ]
    assert edges
    reused = 0
    for node, e in edges:
        base, m = int(t.obase[node, e]), int(t.ocount[node, e])
        assert 1 <= m <= 2
        # every iteration through a drawing edge went through one of its kept draws
        assert int(t.ovisits[base : base + m].sum()) == int(t.n[node, e])
        reused += int(t.n[node, e]) > m
    assert reused > 0


def _settings(state, **options):
    base = dict(
        recent=False,
        leave=False,
        weights=LinearPolicy.load(SCORER).vector(),
        width=12,
        temp=2.0,
        c_puct=2.0,
        noise=0.0,
        shaped=0.1,
        leaf=0,
        standing=0.2,
        net=M.new_value_net(),
        lam=0.0,
        rows=state.rows,
        endplay=0,
        endmiss=4,
        chance=0,
        afterstate=M.new_afterstate(),
        afterstate_mix=0.0,
    )
    return M.Settings(**{**base, **options})


@pytest.mark.parametrize(
    "seed,endmiss,won", [(7, 4, True), (7, 1, True), (144, 4, True), (144, 1, False)]
)
def test_the_solver_finishes_a_playout_once_every_card_is_known(seed, endmiss, won):
    """Hard deals from their start: the scorer's playout loses (deal 7 with one castle
    standing, deal 144 with two), but at its first position with no unseen card left
    (where the player knows every card, and the agent's endgame planner takes over) the
    solver proves a win with 1,000 nodes, so with ``endplay`` the world counts as won,
    unless the scorer's finish left more than ``endmiss`` castles standing."""
    s = State.new_game(difficulty="hard", deck=deal_deck(seed))
    memo = shared_memo()
    x, w = N.new_scratch(), S.new_work(11)
    x.B[0][:], x.V[0][:] = _rows(s)
    line = x.lines[0]
    _, end = N.playout(x, w, memo, 0, False, False, _settings(s).weights, 12, 0.0, line, 0, True)
    assert x.V[0][K.OUTCOME] == 0 and K.unseen(x.B[0], x.V[0]) == 0 < K.unseen(*_rows(s))
    values = {}
    for endplay in (0, 1000):
        x.B[0][:], x.V[0][:] = _rows(s)
        cfg = _settings(s, endplay=endplay, endmiss=endmiss)
        values[endplay] = M._playout(x, w, memo, cfg, line)
    assert values[0] < 1.0
    assert (values[1000] == 1.0) == won
    if not won:
        assert values[1000] == values[0]


def _value_net_arrays(seed=0, hidden=16):
    """A small random value network whose estimates spread over (0, 1)."""
    rng = np.random.default_rng(seed)
    return {
        "w1": rng.normal(0, 0.3, (M.OBS_SIZE, hidden)),
        "b1": rng.normal(0, 0.1, hidden),
        "w2": rng.normal(0, 0.3, (hidden, hidden)),
        "b2": rng.normal(0, 0.1, hidden),
        "wv": rng.normal(0, 0.2, hidden),
        "bv": np.array([0.4]),
    }


def test_the_compiled_value_network_is_the_move_networks_value_head():
    torch = pytest.importorskip("torch")
    from castle_envs.agents.learned.move_policy import build_net
    from castle_envs.experiments.exit_siege_net import value_arrays

    from castle_envs.castle_siege.observation import encode

    torch.manual_seed(0)
    net = build_net(M.OBS_SIZE, 75, hidden=16)
    with torch.no_grad():
        net.value.bias.fill_(0.5)
        net.value.weight.mul_(3.0)
    compiled = M.new_value_net(value_arrays(net))
    seen = []
    for seed, moves in ((1, 0), (2, 10), (3, 25), (4, 40)):
        s = _midgame(seed, moves=moves, difficulty="very_hard")
        with torch.no_grad():
            ref = float(net.value(net.embed(torch.as_tensor(encode(s))[None]))[0, 0])
        got = M.net_value(
            compiled, *_rows(s), s.rows, s.attack == "most_recent", s.defeated == "leave_game"
        )
        assert got == pytest.approx(min(max(ref, -1.0), 1.0), abs=1e-5)
        seen.append(got)
    assert len(set(np.round(seen, 4))) > 1  # the positions are told apart


def test_a_learned_leaf_value_replaces_the_playouts_and_reads_only_the_view(tmp_path):
    path = tmp_path / "value.npz"
    np.savez(path, **_value_net_arrays())
    policy = _policy(value=str(path), lam=1.0, iterations=50)
    twin_policy = _policy(value=str(path), lam=1.0, iterations=50)
    s = State.new_game(difficulty="very_hard", deck=deal_deck(12))
    shuffler = np.random.default_rng(2)
    checked = 0
    for _ in _twin_walk(policy, twin_policy, s, shuffler, 30):
        if policy.searched:
            assert policy._tree.stats[1] == 0  # no playout: the network valued the leaves
            checked += 1
    assert checked > 5
    mixed = _policy(value=str(path), lam=0.5, iterations=50)
    s = _midgame(5, moves=3, difficulty="very_hard")
    mixed(s, np.random.default_rng(0))
    assert mixed._tree.stats[1] > 0


def test_bad_value_networks_are_refused_clearly(tmp_path):
    with pytest.raises(ValueError, match="lam > 0 needs value"):
        _policy(lam=0.5)
    arrays = _value_net_arrays()
    np.savez(tmp_path / "short.npz", **{k: v for k, v in arrays.items() if k != "wv"})
    with pytest.raises(ValueError, match=r"lacks \['wv'\]"):
        _policy(value=str(tmp_path / "short.npz"), lam=0.5)
    np.savez(tmp_path / "shape.npz", **{**arrays, "w2": np.zeros((3, 3))})
    with pytest.raises(ValueError, match="array w2: expected"):
        _policy(value=str(tmp_path / "shape.npz"), lam=0.5)
    np.savez(tmp_path / "pickled.npz", **{**arrays, "b1": np.array([object()], dtype=object)})
    with pytest.raises(ValueError, match="not a value network"):
        _policy(value=str(tmp_path / "pickled.npz"), lam=0.5)
    with pytest.raises(FileNotFoundError):
        _policy(value=str(tmp_path / "none.npz"), lam=0.5)


def _prior_file(tmp_path, seed=0):
    """A small random move network exported as root priors, and the network itself."""
    torch = pytest.importorskip("torch")
    from castle_envs.agents.learned.move_policy import build_net
    from castle_envs.experiments.exit_siege_net import prior_arrays

    torch.manual_seed(seed)
    net = build_net(M.OBS_SIZE, 75, hidden=16)
    with torch.no_grad():  # the move MLP and the linear term start silent: wake them
        for p in list(net.move.parameters()) + list(net.linear.parameters()):
            p.normal_(0, 0.5)
    path = tmp_path / "prior.npz"
    np.savez(path, **prior_arrays(net))
    return path, net


def test_the_root_prior_is_the_move_networks_logits_and_reads_only_the_view(tmp_path):
    import torch
    from castle_envs.agents.search.castle_siege_ismcts import MovePrior, load_prior

    path, net = _prior_file(tmp_path)
    prior = MovePrior(load_prior(path))
    for seed, moves in ((1, 0), (2, 10), (3, 25)):
        s = _midgame(seed, moves=moves, difficulty="very_hard").player_view()
        ids, logits = prior.logits(s)
        view, n = prior.moves.from_state(s)
        keep = view["move_mask"].astype(bool)
        with torch.no_grad():
            h = net.embed(torch.as_tensor(prior.moves.observation(s))[None])
            feats = torch.as_tensor(view["move_features"][keep])
            ref = net.move_logits(h, torch.zeros(len(feats), dtype=torch.long), feats).numpy()
        assert list(ids) == list(view["move_ids"][keep]) and len(ids) == min(n, 256)
        assert np.allclose(logits, ref, atol=1e-4)
    # the priors move the root: the children's priors are the mix, and a twin deal that
    # differs only in unseen cards gets the same decision
    mixed, twin_policy = (
        _policy(prior=str(path), prior_mix=1.0),
        _policy(prior=str(path), prior_mix=1.0),
    )
    plain = _policy()
    s = _midgame(4, moves=2, difficulty="very_hard")
    twin = _reshuffle_unseen(s, np.random.default_rng(3))
    a = mixed(s.player_view(), np.random.default_rng(0))
    assert a == twin_policy(twin.player_view(), np.random.default_rng(0))
    plain(s.player_view(), np.random.default_rng(0))
    got = [p for *_, p in mixed.root_stats()]
    base = [p for *_, p in plain.root_stats()]
    ids, logits = MovePrior(load_prior(path)).logits(s.player_view())
    z = dict(zip(ids.tolist(), logits.tolist()))
    acts = [act for act, *_ in mixed.root_stats()]
    want = np.exp([z.get(act, min(z[x] for x in acts if x in z)) for act in acts])
    assert np.allclose(got, want / want.sum()) and not np.allclose(got, base)


def test_bad_priors_are_refused_clearly(tmp_path):
    with pytest.raises(ValueError, match="prior_mix > 0 needs prior"):
        _policy(prior_mix=0.5)
    path, _ = _prior_file(tmp_path)
    with np.load(path) as f:
        arrays = {k: f[k] for k in f.files}
    np.savez(tmp_path / "short.npz", **{k: v for k, v in arrays.items() if k != "m2"})
    with pytest.raises(ValueError, match=r"lacks \['m2'\]"):
        _policy(prior=str(tmp_path / "short.npz"), prior_mix=0.5)
    np.savez(tmp_path / "shape.npz", **{**arrays, "m1": np.zeros((3, 3))})
    with pytest.raises(ValueError, match="array m1: expected"):
        _policy(prior=str(tmp_path / "shape.npz"), prior_mix=0.5)
    np.savez(tmp_path / "pickled.npz", **{**arrays, "c1": np.array([object()], dtype=object)})
    with pytest.raises(ValueError, match="not a prior network"):
        _policy(prior=str(tmp_path / "pickled.npz"), prior_mix=0.5)


def _nested_endgame():
    """data/known_deck_endgame_nested.json: the first position of a lost Hard screen game
    (deal 20,000,263, the shipped agent's settings) at which every card left in the deck was
    recycled by the player."""
    return State.from_dict(
        json.loads((Path(__file__).parent / "data" / "known_deck_endgame_nested.json").read_text())
    )


def test_nested_endgame_wins_a_known_deck_position_the_solver_alone_does_not():
    """data/known_deck_endgame_nested.json: the first position of a lost Hard screen game
    (deal 20,000,263, the shipped agent's settings) at which every card left in the deck was
    recycled by the player. The endgame planner's 20,000 solver nodes prove no win there;
    with ``endnested`` the nested search finds one, and the agent plays it to the end
    without searching again."""
    s = _nested_endgame()
    assert s.deck_size == int(s.recycled.sum()) > 0 and not s.outcome
    from castle_envs.agents.solvers.castle_siege import WINNABLE
    from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver

    assert CompiledSolver(max_nodes=20000).solve(s.clone()).verdict != WINNABLE
    policy, rng = _policy(endgame=20000, endnested=2), np.random.default_rng(0)
    while not s.outcome:
        s.apply_action(policy(s.player_view(), rng))
        assert not policy.searched
    assert s.outcome == 1


def test_nested_endgame_options_are_checked():
    agent = make_agent("ismcts:iterations=10,endnested=4,endwidth=8", "castle-siege", seed=0)
    assert (agent.policy.options["endnested"], agent.policy.options["endwidth"]) == (4, 8)
    with pytest.raises(ValueError, match="endwidth must be an int in 2..16"):
        make_agent("ismcts:endwidth=1", "castle-siege")
    # endbudget reaches the nested search (0: every run)
    assert agent.policy.endgame.solver.budget == 0
    capped = make_agent("ismcts:iterations=10,endnested=4,endbudget=5000", "castle-siege")
    assert capped.policy.endgame.solver.budget == 5000
    with pytest.raises(ValueError, match="endbudget"):
        make_agent("ismcts:endbudget=-1", "castle-siege")
    # the agent's reset starts a game for the planner: its nested tries are counted afresh
    solver = agent.policy.endgame.solver
    assert solver.tries_left == 2
    solver.tries = 3
    agent.reset([0, 1, 0])
    assert solver.tries_left == 3


def test_a_plan_survives_forced_moves_played_without_asking_the_planner():
    """The agent plays a forced move (one legal move) without asking its endgame planner; the
    planner then finds the game further down its line and keeps to it instead of solving
    again (a fresh solve from there may fail where the first one succeeded)."""
    from castle_envs.agents.learned.castle_siege_linear import EndgamePlanner, NestedEndgameSolver

    s = _nested_endgame()
    weights = LinearPolicy.load(SCORER).vector()
    inner = NestedEndgameSolver(20000, 2, 16, weights)
    calls = []

    class Counting:
        def solve(self, state):
            calls.append(1)
            return inner.solve(state)

    planner = EndgamePlanner(Counting())
    forced = 0
    while not s.outcome:
        legal = np.flatnonzero(s.legal_action_mask())
        if len(legal) == 1:
            forced += 1
            s.apply_action(int(legal[0]))
            continue
        action = planner.move(s)
        assert action is not None
        s.apply_action(action)
    assert s.outcome == 1 and forced > 0 and len(calls) == 1


def _turn_starts(n: int) -> list:
    """The first position of each of the first ``n`` turns of a game the scorer plays."""
    scorer, s = LinearPolicy.load(SCORER), _midgame(seed=3, moves=0)
    positions = [s.clone()]
    while len(positions) < n and not s.outcome:
        s.apply_action(scorer(s))
        if s.turn != positions[-1].turn:
            positions.append(s.clone())
    assert len(positions) == n
    return positions


def test_nested_endgame_tries_once_a_turn_and_at_most_endtries_a_game():
    from castle_envs.agents.learned.castle_siege_linear import NestedEndgameSolver
    from castle_envs.agents.solvers.castle_siege import UNKNOWN, Result

    solver = NestedEndgameSolver(10, 1, 4, LinearPolicy.load(SCORER).vector(), tries=2)

    class Fails:
        def __init__(self):
            self.turns = []

        def solve(self, state, budget=None):
            self.turns.append(state.turn)
            return Result(UNKNOWN)

    solver.solver, solver.nested = Fails(), Fails()
    positions = _turn_starts(4)
    asked = [positions[0], positions[0], *positions[1:]]
    for state in asked:
        assert solver.solve(state).verdict == UNKNOWN
    assert solver.solver.turns == [p.turn for p in asked]  # the solver at every call
    # the nested search once a turn, and no more than twice a game
    assert solver.nested.turns == [positions[0].turn, positions[1].turn]
    solver.reset()  # a new game
    solver.solve(positions[3])
    assert solver.nested.turns[-1] == positions[3].turn and len(solver.nested.turns) == 3


def test_nested_endgame_budget_is_shared_by_the_tries_of_a_game():
    """``budget``: the nested searches of a game start no run once they have counted that many
    nodes together; each try is handed what its predecessors left, and none is made once it
    is spent (a new game has the whole budget again)."""
    from castle_envs.agents.learned.castle_siege_linear import NestedEndgameSolver
    from castle_envs.agents.solvers.castle_siege import UNKNOWN, Result

    solver = NestedEndgameSolver(10, 1, 4, LinearPolicy.load(SCORER).vector(), tries=5, budget=1000)

    class Fails:
        def __init__(self):
            self.budgets = []

        def solve(self, state, budget=None):
            self.budgets.append(budget)
            return Result(UNKNOWN, nodes=600)

    solver.solver, solver.nested = Fails(), Fails()
    positions = _turn_starts(4)
    for state in positions[:3]:
        assert solver.solve(state).verdict == UNKNOWN
    # 1,000 nodes: the first try gets them all, the second the 400 left, the third none
    assert solver.nested.budgets == [1000, 400]
    solver.reset()
    solver.solve(positions[3])
    assert solver.nested.budgets == [1000, 400, 1000]
