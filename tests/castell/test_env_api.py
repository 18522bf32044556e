"""PettingZoo API checks, seeding, rewards and infos, bad input, renders, the registry."""

import json

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from castle_envs import castell_v0
from castle_envs.castell.actions import ACTIONS, END_TURN, EndTurn, Move
from castle_envs.castell.env import SCORE_KEYS
from castle_envs.castell.rules import State
from castle_envs.core.errors import EpisodeOverError, IllegalActionError, InvalidStateError


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("advanced", [False, True])
def test_pettingzoo_api_test(players, advanced):
    api_test(castell_v0.env(num_players=players, advanced=advanced), num_cycles=300)


@pytest.mark.parametrize("players", [2, 3, 4])
@pytest.mark.parametrize("advanced", [False, True])
def test_pettingzoo_seed_test(players, advanced):
    seed_test(lambda: castell_v0.env(num_players=players, advanced=advanced), num_cycles=100)


def _play_out(e, rng, policy=None):
    for _agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        if term or trunc:
            e.step(None)
            continue
        legal = np.flatnonzero(obs["action_mask"])
        e.step(int(rng.choice(legal)) if policy is None else policy(e.unwrapped.game_state))


def test_rewards_and_final_scores_in_infos():
    e = castell_v0.env(num_players=3)
    e.reset(seed=1)
    totals = {a: 0.0 for a in e.possible_agents}
    rng = np.random.default_rng(0)
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        totals[agent] += reward
        if term or trunc:
            seat = e.unwrapped.agent_name_mapping[agent]
            state = e.unwrapped.game_state
            assert info["scores"].tolist() == state.scores().tolist()
            own = state.category_scores(seat)
            assert info["category_scores"].tolist() == [own[c] for c in SCORE_KEYS[:-1]] + [
                state.scores()[seat]
            ]
            e.step(None)
            continue
        e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    scores = e.unwrapped.game_state.scores()
    expected = e.unwrapped.game_state.returns()
    assert [totals[a] for a in e.possible_agents] == expected.tolist()
    assert sorted(set(expected.tolist())) in ([-1.0, 1.0], [-1.0, 0.0], [0.0])
    assert (expected == 1).sum() <= 1 and scores.shape == (3,)


def test_score_diff_reward():
    from castle_envs.castell.measure import heuristic_action

    e = castell_v0.env(num_players=2, reward="score_diff")
    e.reset(seed=3)
    got = {a: 0.0 for a in e.possible_agents}
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        got[agent] += reward
        e.step(None if term or trunc else heuristic_action(e.unwrapped.game_state))
    s = e.unwrapped.game_state.scores()
    assert got["player_0"] == pytest.approx((s[0] - s[1]) / 50)
    assert got["player_1"] == pytest.approx((s[1] - s[0]) / 50)


def test_observation_in_space_and_own_seat_first():
    e = castell_v0.raw_env(num_players=3)
    e.reset(seed=0)
    e.step(ACTIONS.encode(Move(4)))
    for agent in e.agents:
        obs = e.observe(agent)
        assert e.observation_space(agent)["observation"].contains(obs["observation"])
    from castle_envs.castell.observation import OFFSETS, PLAYER_SIZE

    p0 = OFFSETS["players"][0]
    pawn_block = slice(p0 + 2, p0 + 10)
    assert e.observe("player_0")["observation"][pawn_block].argmax() == 4 + 1
    # player_1 sees player_0 last
    last = p0 + 2 * PLAYER_SIZE
    assert e.observe("player_1")["observation"][last + 2 : last + 10].argmax() == 4 + 1
    assert e.observe("player_1")["action_mask"].sum() == 0
    assert (e.observe("player_0")["action_mask"] == e.action_masks()).all()


def test_decode_encode_action():
    e = castell_v0.raw_env()
    assert e.decode_action(END_TURN) == EndTurn()
    assert e.encode_action("move to Girona") == 6
    assert all(e.encode_action(e.decode_action(a)) == a for a in range(395))


def test_illegal_action_raises_naming_the_move_and_why():
    e = castell_v0.env(num_players=2, illegal_action="raise")
    e.reset(seed=0)
    with pytest.raises(IllegalActionError, match="recruit a 3.*pawn is not on the board"):
        e.step(ACTIONS.encode("recruit a 3"))
    with pytest.raises(IllegalActionError, match="out of range"):
        e.unwrapped.step(395)


def test_illegal_action_penalty_ends_the_game():
    e = castell_v0.env(num_players=2, illegal_action="penalty")
    e.reset(seed=0)
    e.step(ACTIONS.encode("recruit a 3"))
    assert e.terminations == {"player_0": True, "player_1": True}
    assert e.rewards["player_0"] == -1.0 and e.infos["player_0"]["illegal_action"]


def test_step_after_the_end():
    e = castell_v0.raw_env(num_players=2)
    e.reset(seed=0)
    _play_out(e, np.random.default_rng(0))
    assert not e.agents
    e.reset(seed=0)
    rng = np.random.default_rng(1)
    while not e.game_state.is_terminal():
        e.step(int(rng.choice(np.flatnonzero(e.action_masks()))))
    with pytest.raises(EpisodeOverError):
        e.step(END_TURN)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_players": 5},
        {"num_players": 1},
        {"advanced": "yes"},
        {"max_skill": 0},
        {"tower_edits_per_turn": 0},
        {"variety_counts": "some"},
        {"size_token_ties": "coin"},
        {"first_player": 3},
        {"reward": "elo"},
        {"render_mode": "window"},
        {"colour": "red"},
        {"illegal_action": "ignore"},
        {"collect_own_token": 1},
        {"festival_size_tokens": 2},
    ],
)
def test_bad_options(kwargs):
    with pytest.raises(ValueError):
        castell_v0.env(**kwargs)


def test_bad_reset_options():
    e = castell_v0.env()
    with pytest.raises(ValueError, match="options must be a dict"):
        e.reset(options=[1])
    other = State.deal(np.random.default_rng(0), 3).to_dict()
    with pytest.raises(ValueError, match="num_players 3, but this env plays num_players 2"):
        e.reset(options={"state": other})


def test_reset_from_a_saved_state():
    e = castell_v0.raw_env(num_players=2)
    e.reset(seed=5)
    e.step(ACTIONS.encode(Move(2)))
    saved = json.loads(e.game_state.to_json())
    f = castell_v0.raw_env(num_players=2)
    f.reset(options={"state": saved})
    assert f.game_state == e.game_state and f.agent_selection == "player_0"


def _corrupt(edit):
    d = State.deal(np.random.default_rng(0), 2).to_dict()
    edit(d)
    return d


@pytest.mark.parametrize(
    "edit",
    [
        lambda d: d["bag"].pop(),  # a casteller vanishes
        lambda d: d["regions"][0].__setitem__(0, 99),
        lambda d: d["hand"][0].__setitem__(0, -1),
        lambda d: d["tokens"].__setitem__(0, 8),
        lambda d: d["towers"][0].append([3, 9, 0]),  # tower not in the hand
        lambda d: d["wheel"].__setitem__(0, 7),
        lambda d: d.__setitem__("round", 12),
        lambda d: d["skills"][0].__setitem__(0, 9),
        lambda d: d["lp"][0].__setitem__(1, d["lp"][0][0]),  # a tile twice
        lambda d: d.__setitem__("game", "chess"),
        lambda d: d.pop("pawn"),
        lambda d: d.__setitem__("moved", 1),
        lambda d: d["fest_sizes"].__setitem__(0, [1, 2, 3]),
        lambda d: d.__setitem__("num_players", 7),
        lambda d: d["pawn"].__setitem__(0, 9),
    ],
)
def test_corrupt_states_are_rejected(edit):
    with pytest.raises((InvalidStateError, ValueError)):
        State.from_dict(_corrupt(edit))


def test_illegal_tower_in_a_saved_state_is_rejected():
    def edit(d):
        d["hand"][0] = [0, 0, 3, 0, 0, 0, 0, 0, 0, 3]
        d["bag"] += [0] * 0
        d["towers"][0] = [[3, 2, 0], [3, 9, 0]]  # wider numbers on top
        d["in_tower"][0] = d["hand"][0]

    d = _corrupt(lambda d: None)
    bag = d["bag"]
    hand = d["hand"][0]
    for size, n in enumerate(hand):
        bag += [size] * n
    for _ in range(3):
        bag.remove(2)
    for _ in range(3):
        bag.remove(9)
    edit(d)
    with pytest.raises(InvalidStateError, match="tower rules"):
        State.from_dict(d)


def test_render_and_step_before_reset():
    e = castell_v0.raw_env(render_mode="ansi")
    with pytest.raises(EpisodeOverError):
        e.render()
    with pytest.raises(EpisodeOverError):
        e.step(0)


@pytest.mark.parametrize("players", [2, 4])
def test_renders(players):
    e = castell_v0.env(num_players=players, render_mode="ansi")
    e.reset(seed=0)
    text = e.render()
    assert isinstance(text, str) and "Girona" in text and "round 1/10" in text
    r = castell_v0.env(num_players=players, render_mode="rgb_array")
    r.reset(seed=0)
    from castle_envs.castell.measure import heuristic_action

    for _ in range(40):
        r.step(heuristic_action(r.unwrapped.game_state))
    img = r.render()
    from castle_envs.castell.render import HEIGHT, WIDTH

    assert img.dtype == np.uint8 and img.shape == (HEIGHT, WIDTH, 3) and img.std() > 10


def test_registry_builds_the_game_for_the_cli():
    from castle_envs.registry import get_game

    spec = get_game("castell")
    e = spec.make(num_players=3, render_mode="ansi")
    state = e.new_state(np.random.default_rng(0), {})
    assert state.num_players == 3
    assert state.describe_action(ACTIONS.encode(Move(1))) == "move to Valls (from off the board)"
    assert spec.state_type() is State


def test_cached_observation_equals_a_fresh_encoding():
    from castle_envs.castell.measure import heuristic_action
    from castle_envs.castell.observation import OBS_SIZE, observe

    rng = np.random.default_rng(0)
    s = State.deal(rng, 3)
    checked = 0
    while not s.is_terminal():
        if rng.random() < 0.3:
            seat = int(rng.integers(3))
            cached = observe(s, seat)
            fresh = observe(s.clone(), seat)
            assert cached.shape == (OBS_SIZE,) and (cached == fresh).all()
            assert cached.min() >= 0 and cached.max() <= 1
            checked += 1
        a = (
            heuristic_action(s)
            if rng.random() < 0.9
            else int(rng.choice(np.flatnonzero(s.legal_action_mask())))
        )
        s.apply_action(a)
    assert checked > 20


def test_describe_action_names_the_position():
    from castle_envs.castell.actions import AddLevel, Dismantle

    from .helpers import clear_hand, give

    s = State.deal(np.random.default_rng(0), 2)
    s.skills[0] = 1
    clear_hand(s, 0)
    give(s, 0, 9, 9, 9, 8, 8)
    assert (
        s.describe_action(ACTIONS.encode(AddLevel(3, 9, 0))) == "add level 3x9 as the bottom level"
    )
    s.apply_action(ACTIONS.encode(AddLevel(3, 9, 0)))
    assert s.describe_action(ACTIONS.encode(AddLevel(2, 8, 0))) == "add level 2x8 on 3x9"
    assert (
        s.describe_action(ACTIONS.encode(AddLevel(3, 8, 0)))
        == "add level 3x8 on 3x9, using Balance"
    )
    assert s.describe_action(ACTIONS.encode(Dismantle(False))) == "dismantle the top level (3x9)"
    assert s.describe_action(ACTIONS.encode(Move(3))) == "move to Vilafranca (from off the board)"
