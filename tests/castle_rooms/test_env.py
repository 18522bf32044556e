"""The PettingZoo AEC env: API checkers, rewards and infos, bad input, renders, no leaks."""

import numpy as np
import pytest
from castle_rooms_helpers import DRAGONS, build, rooms
from pettingzoo.test import api_test, seed_test

import castle_envs
from castle_envs import castle_rooms_v0
from castle_envs.castle_rooms import actions as A
from castle_envs.castle_rooms.env import END_REASONS
from castle_envs.castle_rooms.observation import OBS_SIZE, encode
from castle_envs.castle_rooms.rules import CastleRoomsState
from castle_envs.core import EpisodeOverError, IllegalActionError, InvalidStateError

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


@pytest.mark.parametrize("n", [2, 3, 4])
def test_pettingzoo_api_and_seed_tests(n):
    api_test(castle_rooms_v0.env(num_players=n), num_cycles=300)
    seed_test(lambda: castle_rooms_v0.env(num_players=n), num_cycles=300)


def test_public_module_is_lazy_attribute():
    assert castle_envs.castle_rooms_v0.raw_env is castle_rooms_v0.raw_env
    assert castle_envs.get_game("castle-rooms").load_env_class() is castle_rooms_v0.raw_env


def play_out(env, seed, pick=lambda legal, rng: legal[rng.integers(len(legal))]):
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    totals = {a: 0.0 for a in env.possible_agents}
    env.final_infos = {}
    for agent in env.agent_iter():
        obs, reward, term, trunc, info = env.last()
        totals[agent] += reward
        assert obs["observation"].shape == (OBS_SIZE,) and obs["observation"].dtype == np.float32
        # the mask is the observation's (in one place: TorchRL reads it from there)
        assert "action_mask" not in info
        assert np.array_equal(obs["action_mask"].astype(bool), env.action_masks())
        if term or trunc:
            env.final_infos[agent] = info
            env.step(None)
            continue
        env.step(int(pick(np.flatnonzero(obs["action_mask"]), rng)))
    return totals


@pytest.mark.parametrize("n", [2, 3, 4])
def test_rewards_winners_plus_one_others_minus_one_and_scores_in_infos(n):
    env = castle_rooms_v0.raw_env(num_players=n)
    for seed in range(8):
        totals = play_out(env, seed)
        infos = env.final_infos
        assert env.agents == [] and set(infos) == set(env.possible_agents)
        winners = {f"player_{w}" for w in np.flatnonzero(infos["player_0"]["winners"])}
        assert winners == {f"player_{w}" for w in env.game_state.winners}
        assert totals == {a: (1.0 if a in winners else -1.0) for a in env.possible_agents}
        for i, agent in enumerate(env.possible_agents):
            assert infos[agent]["scores"].tolist() == list(env.game_state.score(i))
            assert END_REASONS[infos[agent]["end_reason"]] == env.game_state.end_reason


def test_observation_hides_opponent_hands_and_deck_order():
    hh = rooms("HH>HH")
    a = build(3, hands=[[hh[0]], [hh[1], DRAGONS[0]], [hh[2]]], player=0)
    # same public position: swap one card of player 1's hand with the deck, reorder the deck
    d = a.to_dict()
    d["hands"][1] = [hh[1], hh[3]]
    d["deck"] = [DRAGONS[0]] + [c for c in reversed(d["deck"]) if c != hh[3]]
    b = CastleRoomsState.from_dict(d)
    assert np.array_equal(encode(a, 0), encode(b, 0))
    assert np.array_equal(encode(a, 2), encode(b, 2))
    assert not np.array_equal(encode(a, 1), encode(b, 1))  # the owner sees the difference


def test_observation_is_relative_and_in_bounds():
    env = castle_rooms_v0.raw_env(num_players=3)
    env.reset(seed=3)
    space = env.observation_space("player_0")["observation"]
    for _ in range(40):
        if env.terminations[env.agent_selection]:
            break
        for agent in env.agents:
            assert space.contains(env.observe(agent)["observation"])
        mask = env.observe(env.agent_selection)["action_mask"]
        env.step(int(np.flatnonzero(mask)[0]))
    # each seat sees its own rows in block 0
    for seat in range(3):
        own = len(env.game_state.rows[seat])
        assert encode(env.game_state, seat)[A.HAND_SLOTS * 11 :][::18][: A.MAX_ROWS].sum() == own


def test_only_the_agent_to_act_has_a_nonzero_mask():
    env = castle_rooms_v0.env(num_players=4)
    env.reset(seed=0)
    for agent in env.agents:
        assert env.observe(agent)["action_mask"].any() == (agent == env.agent_selection)


def test_reset_options_first_player_deck_and_state():
    env = castle_rooms_v0.raw_env(num_players=2)
    env.reset(options={"first_player": 1})
    assert env.agent_selection == "player_1"
    deck = list(range(54)) + [54, 55, 56, 57, 60, 61]
    env.reset(options={"deck": deck})
    assert env.game_state.hands == [[0, 1, 4, 5], [2, 3]]
    saved = env.game_state.to_dict()
    env.reset(options={"state": saved})
    assert env.game_state.to_dict() == saved


@pytest.mark.parametrize(
    "kwargs",
    [
        {"num_players": 5},
        {"num_players": 1},
        {"num_players": True},
        {"later_rows": "sideways"},
        {"new_row": "never"},
        {"render_mode": "window"},
        {"illegal_action": "ignore"},
    ],
)
def test_bad_constructor_options(kwargs):
    with pytest.raises(ValueError):
        castle_rooms_v0.raw_env(**kwargs)


@pytest.mark.parametrize(
    "options",
    [
        {"first_player": 2},
        {"first_player": "me"},
        {"deck": [0, 1, 2]},
        {"deck": list(range(64))},
        {"state": {"game": "castle-rooms"}},
        {"state": {}, "deck": list(range(60))},
    ],
)
def test_bad_reset_options(options):
    env = castle_rooms_v0.raw_env(num_players=2)
    with pytest.raises(ValueError):
        env.reset(options=options)


def test_state_of_another_player_count_is_refused():
    other = CastleRoomsState.deal(3, np.random.default_rng(0)).to_dict()
    with pytest.raises(ValueError, match="player count"):
        castle_rooms_v0.raw_env(num_players=2).reset(options={"state": other})


def test_illegal_and_out_of_range_actions_raise_naming_the_move():
    env = castle_rooms_v0.env(num_players=2, illegal_action="raise")
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match=r"illegal action 108 \(end turn\)"):
        env.step(A.END_TURN)  # 4 cards in hand
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(A.NUM_ACTIONS)
    with pytest.raises(IllegalActionError, match="not an integer"):
        env.step(1.5)
    with pytest.raises(IllegalActionError, match="must act"):
        env.step(None)


def test_penalty_mode_ends_the_game_for_everyone():
    env = castle_rooms_v0.raw_env(
        num_players=3, illegal_action="penalty", illegal_action_penalty=-5
    )
    env.reset(seed=0)
    env.step(A.END_TURN)
    assert all(env.terminations.values())
    assert env._cumulative_rewards["player_0"] == -5
    assert env.infos["player_0"]["illegal_action"]


def test_step_after_end_is_refused():
    env = castle_rooms_v0.raw_env(num_players=2)
    play_out(env, 1)
    env.reset(seed=1)
    play_out(env, 1)
    with pytest.raises(EpisodeOverError, match="call reset"):
        env.step(A.END_TURN)


def test_dead_agent_may_only_step_none():
    env = castle_rooms_v0.raw_env(num_players=2)
    env.reset(seed=2)
    rng = np.random.default_rng(2)
    while not env.terminations[env.agent_selection]:
        legal = np.flatnonzero(env.observe(env.agent_selection)["action_mask"])
        env.step(int(legal[rng.integers(len(legal))]))
    with pytest.raises(EpisodeOverError, match="step\\(None\\)"):
        env.step(A.END_TURN)


def test_step_before_reset():
    with pytest.raises(EpisodeOverError):
        castle_rooms_v0.raw_env().step(0)
    with pytest.raises(AssertionError):  # PettingZoo's order-enforcing wrapper
        castle_rooms_v0.env().step(0)


def _valid():
    return CastleRoomsState.deal(2, np.random.default_rng(0)).to_dict()


def _corrupt(edit):
    d = _valid()
    edit(d)
    return d


@pytest.mark.parametrize(
    "data",
    [
        {},
        _corrupt(lambda d: d.update(game="castell")),
        _corrupt(lambda d: d.update(num_players=5)),
        _corrupt(lambda d: d["deck"].append(d["deck"][0])),  # duplicated card
        _corrupt(lambda d: d["deck"].pop()),  # lost card
        _corrupt(lambda d: d["deck"].append(58)),  # removed card in play
        _corrupt(lambda d: d["deck"].__setitem__(0, "x")),
        _corrupt(lambda d: d.update(player=2)),
        _corrupt(lambda d: d.update(winners=[0])),
        _corrupt(lambda d: d["rules"].update(new_row="never")),
        _corrupt(
            lambda d: (
                d["hands"].__setitem__(1, d["hands"][1] + d["deck"][:3])
                or d.update(deck=d["deck"][3:])
            )
        ),  # 5 cards off turn
        _corrupt(
            lambda d: d["rows"].__setitem__(
                0, [{"cards": [d["deck"].pop(0)], "helmet": "left", "dragon": None}]
            )
        ),
    ],
)
def test_corrupt_states_are_rejected(data):
    with pytest.raises(InvalidStateError):
        CastleRoomsState.from_dict(data)


def test_corrupt_rows_are_rejected():
    hh, hl = rooms("HH>HH"), rooms("HH>LL")
    with pytest.raises(InvalidStateError, match="does not match"):
        build(2, rows=[[([hh[0], hl[0], hh[1]], "up", None)], []])
    with pytest.raises(InvalidStateError, match="not a Dragon"):
        build(2, rows=[[([hh[0]], "up", 60)], []])
    with pytest.raises(InvalidStateError, match="same way"):
        build(2, rows=[[([hh[0]], "up", None), ([hh[1]], "up", None)], []])
    with pytest.raises(InvalidStateError, match="10 Rooms"):
        build(2, rows=[[(hh[:10], "up", None)], []])


@pytest.mark.parametrize("n", [2, 4])
def test_renders(n):
    env = castle_rooms_v0.raw_env(num_players=n, render_mode="rgb_array")
    env.reset(seed=4)
    first = env.render()
    assert first.dtype == np.uint8 and first.ndim == 3 and first.shape[2] == 3
    play_out(env, 4)
    last = env.render()
    assert last.shape == first.shape and not np.array_equal(last, first)
    text_env = castle_rooms_v0.raw_env(num_players=n, render_mode="ansi")
    play_out(text_env, 4)
    text = text_env.render()
    assert isinstance(text, str) and "game over" in text and f"player_{n - 1}" in text


def test_render_without_mode_warns_and_returns_none():
    env = castle_rooms_v0.raw_env()
    env.reset(seed=0)
    assert env.render() is None


def test_decode_and_encode_action():
    env = castle_rooms_v0.raw_env()
    assert env.decode_action(A.END_TURN) == A.EndTurn()
    assert env.encode_action(A.Dragon(2, 3)) == A.dragon_id(2, 3)
    assert env.encode_action("knight on row 4") == A.knight_id(4)
    for a in range(A.NUM_ACTIONS):
        assert env.encode_action(env.decode_action(a)) == a


def test_observation_layout_matches_the_table():
    from castle_envs.castle_rooms import observation as O

    hh, hl = rooms("HH>HH"), rooms("LL>HH")
    state = build(
        3,
        hands=[[hh[0], DRAGONS[0]], [hh[1]], []],
        player=0,
        rows=[[], [], [([hh[2], hl[0]], "down", DRAGONS[1])]],
        discard=[DRAGONS[2]],
        deck=None,
    )
    obs = O.encode(state, 1)  # seen by player 1: player 2 is +1, player 0 is +2
    hand = obs[: O.HAND_SIZE].reshape(4, O.HAND_FEATURES)
    assert hand[0, 0] == 1 and hand[1:].sum() == 0  # one Room in hand
    rows = obs[O.ROWS_START : O.COUNTS_START].reshape(4, A.MAX_ROWS, O.ROW_FEATURES)
    row = rows[1, 0]
    # turned, HH>HH lies LL>LL and LL>HH lies LL>HH: the row ends HH (side 0)
    assert list(row[:4]) == [1, 1, 1, 0.2] and row[4 + 0] == 1 and row[4:8].sum() == 1
    assert row[8] == pytest.approx((hh[2] + 1) / 64) and row[9] == pytest.approx((hl[0] + 1) / 64)
    assert rows[0].sum() == rows[2].sum() == rows[3].sum() == 0
    counts = obs[O.COUNTS_START : O.DECK_AT]
    assert list(counts) == [0.25, 0, 0.5, 0]
    assert obs[O.DECK_AT] == pytest.approx(len(state.deck) / 64)
    assert obs[O.DISCARD_START + DRAGONS[2]] == 1
    assert obs[O.DISCARD_START : O.PLAYERS_START].sum() == 1
    assert list(obs[O.PLAYERS_START :]) == [0, 1, 0]


def test_pickled_env_continues_identically():
    import pickle

    env = castle_rooms_v0.raw_env(num_players=3)
    env.reset(seed=11)
    for _ in range(10):
        env.step(int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[0]))
    twin = pickle.loads(pickle.dumps(env))
    for _ in range(30):
        if env.terminations[env.agent_selection]:
            break
        a = int(np.flatnonzero(env.observe(env.agent_selection)["action_mask"])[-1])
        env.step(a)
        twin.step(a)
    assert twin.game_state == env.game_state and twin.agent_selection == env.agent_selection


@pytest.mark.parametrize("n", [2, 4])
def test_pettingzoo_render_test(n):
    from pettingzoo.test import render_test

    # render_test first builds a "human" env only to read metadata; the core offers no
    # "human" mode, so that one probe gets no render mode
    def make(render_mode=None):
        return castle_rooms_v0.env(
            num_players=n, render_mode=None if render_mode == "human" else render_mode
        )

    render_test(make)
