"""The Gymnasium layer: API checker, options, determinism, bad input, rendering."""

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import castle_envs  # noqa: F401  (registers the ids)
from castle_envs.castellion import CastellionEnv, observation
from castle_envs.castellion.actions import NUM_ACTIONS
from castle_envs.castellion.data import KIND_BY_NAME, KIND_NAMES, REGULAR_COUNTS
from castle_envs.castellion.rules import PHASE_NAMES, State
from castle_envs.core.errors import EpisodeOverError, IllegalActionError, InvalidStateError

from .helpers import position

LEVELS = ("school", "academy", "menace")


@pytest.mark.parametrize("level", LEVELS)
def test_check_env(level):
    env = gymnasium.make(
        "castle_envs/Castellion-v0", level=level, illegal_action="penalty", render_mode="rgb_array"
    )
    check_env(env.unwrapped)
    assert env.action_space.n == NUM_ACTIONS
    assert env.observation_space.shape == (observation.OBS_SIZE,)


def play(env, seed, steps=200):
    obs, info = env.reset(seed=seed)
    trace = [obs]
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, term, trunc, info = env.step(a)
        trace.append(obs)
        if term or trunc:
            break
    return np.array(trace)


@pytest.mark.parametrize("level", LEVELS)
def test_determinism(level):
    a = play(CastellionEnv(level), 11)
    b = play(CastellionEnv(level), 11)
    c = play(CastellionEnv(level), 12)
    assert np.array_equal(a, b)
    assert a.shape != c.shape or not np.array_equal(a, c)


def test_mask_three_ways_and_info():
    env = CastellionEnv("academy")
    obs, info = env.reset(seed=0)
    assert info["action_mask"].dtype == bool and info["action_mask"].shape == (NUM_ACTIONS,)
    assert np.array_equal(env.action_masks(), info["action_mask"])
    assert info["phase"] == PHASE_NAMES.index("draw") == 0 and info["ordeals_passed"] == 0
    assert info["won"] is False and info["formations"].shape == (3,)


def test_reset_options_fix_piles_and_ordeals():
    env = CastellionEnv("school")
    order = ["pyro-circle", "traitor", "seer-square"]
    env.reset(
        seed=0,
        options={
            "regular_top": order,
            "safe_top": ["juggler-triangle"],
            "ordeals": ["exam-1", "exam-2", "exam-3b"],
        },
    )
    s = env.state
    assert s.regular[::-1][:3].tolist() == [KIND_BY_NAME[n] for n in order]
    assert s.safe[-1] == KIND_BY_NAME["juggler-triangle"]
    assert [int(o) for o in s.ordeals] == [0, 1, 3]
    env.step(0)  # draw regular
    assert s.hand == KIND_BY_NAME["pyro-circle"]
    full = [KIND_NAMES[k] for k in range(14) for _ in range(REGULAR_COUNTS[k])]
    env.reset(seed=5, options={"regular_order": full})
    assert env.state.regular[::-1].tolist() == [KIND_BY_NAME[n] for n in full]


@pytest.mark.parametrize(
    "options, match",
    [
        ({"bogus": 1}, "unknown reset option"),
        ({"regular_top": ["dragon"]}, "unknown tile"),
        ({"regular_top": ["traitor"] * 10}, "only 9"),
        ({"safe_top": ["traitor"]}, "only 0"),
        ({"regular_order": ["traitor"]}, "all 72"),
        ({"regular_order": [], "regular_top": []}, "not both"),
        ({"ordeals": ["exam-1", "exam-1", "exam-3a"]}, "slot 2"),
        ({"ordeals": ["sim-1", "sim-2a", "sim-3a"]}, "school"),
        ({"ordeals": "exam-1"}, "3 ordeal"),
        ({"regular_top": "traitor"}, "list"),
        ({"state": {"nonsense": 1}}, "keys"),
    ],
)
def test_bad_reset_options(options, match):
    env = CastellionEnv("school")
    with pytest.raises(ValueError, match=match):
        env.reset(seed=0, options=options)


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="level"):
        CastellionEnv("kindergarten")
    with pytest.raises(ValueError, match="reward"):
        CastellionEnv("school", reward="points")
    with pytest.raises(
        ValueError, match="CastellionEnv.__init__.. got an unexpected keyword argument .colour."
    ):
        CastellionEnv("school", colour="red")
    with pytest.raises(ValueError, match="foundation_exemption"):
        CastellionEnv("school", foundation_exemption="sometimes")
    with pytest.raises(ValueError, match="render_mode"):
        CastellionEnv("school", render_mode="human")


def test_state_option_round_trip_and_level_check():
    env = CastellionEnv("academy")
    env.reset(seed=3)
    env.step(0)
    saved = env.state.to_dict()
    other = CastellionEnv("academy")
    obs, _ = other.reset(options={"state": saved})
    assert other.state == env.state
    assert np.array_equal(obs, observation.encode(env.state))
    with pytest.raises(ValueError, match="level .academy., but this env plays level .school."):
        CastellionEnv("school").reset(options={"state": saved})


def test_illegal_action_raises_naming_the_move_and_keeps_the_state():
    env = CastellionEnv("school", illegal_action="raise")
    env.reset(seed=0)
    before = env.state.to_dict()
    with pytest.raises(IllegalActionError, match="destroy row 0 column 0"):
        env.step(18)
    with pytest.raises(IllegalActionError, match="out of range"):
        env.step(NUM_ACTIONS)
    with pytest.raises(IllegalActionError, match="not an integer"):
        env.step(1.5)
    assert env.state.to_dict() == before
    env.step(0)  # still playable


def test_illegal_action_penalty_mode_ends_the_episode():
    env = CastellionEnv("school", illegal_action="penalty")
    env.reset(seed=0)
    obs, reward, term, trunc, info = env.step(18)
    assert reward == -1.0 and term and info["illegal_action"]
    with pytest.raises(EpisodeOverError):
        env.step(0)


def test_step_after_the_end_and_before_reset():
    env = CastellionEnv("academy")
    with pytest.raises(EpisodeOverError):
        env.step(0)
    env.reset(seed=0)
    obs, reward, term, trunc, info = env.step(6)  # encounter Simulation I at once: lost
    assert term and reward == 0.0 and not info["won"]
    with pytest.raises(EpisodeOverError):
        env.step(0)


def test_rewards_win_and_ordeals():
    castle = ["C^ J# Jo P^ S# Po", "C# J^ J# Po C^ So", "Co S# S^ So S#", "C^ P#"]
    s = position("academy", castle=castle, ordeals=["sim-1", "sim-2a", "sim-3a"])
    env = CastellionEnv("academy", reward="ordeals")
    env.reset(options={"state": s.to_dict()})
    _, reward, term, _, info = env.step(6)  # Simulation I passes early
    assert reward == pytest.approx(1 / 3) and not term and info["ordeals_passed"] == 1
    env = CastellionEnv("academy")
    env.reset(options={"state": s.to_dict()})
    assert env.step(6)[1] == 0.0


@pytest.mark.parametrize("level", LEVELS)
def test_render_modes(level):
    env = CastellionEnv(level, render_mode="ansi")
    env.reset(seed=1)
    text = env.render()
    assert isinstance(text, str) and "Castellion" in text and "decision: Draw a tile" in text
    env = CastellionEnv(level, render_mode="rgb_array")
    env.reset(seed=1)
    for _ in range(30):
        if env.state.is_terminal():
            break
        env.step(int(np.flatnonzero(env.action_masks())[0]))
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    assert len(np.unique(img.reshape(-1, 3), axis=0)) > 5


def test_describe_action_names_real_tiles():
    s = position("academy", castle=["S^ C#"], hand="Jo")
    env = CastellionEnv("academy")
    env.reset(options={"state": s.to_dict()})
    assert env.describe_action(9) == "place juggler-circle on column 2 row 0"
    assert env.describe_action(15) == "discard juggler-circle and use its power"
    env.step(15)
    assert env.describe_action(54) == (
        "swap seer-triangle at row 0 column 0 with chameleon-square at row 0 column 1"
    )
    assert env.decode_action(54) == env.state.decode_action(54)
    assert env.encode_action("discard the tile") == 14


def test_observation_hides_pile_order():
    a = State.new_game(
        np.random.default_rng(1), "academy", {"ordeals": ["sim-1", "sim-2a", "sim-3a"]}
    )
    b = State.new_game(
        np.random.default_rng(2), "academy", {"ordeals": ["sim-1", "sim-2a", "sim-3a"]}
    )
    assert a.regular.tolist() != b.regular.tolist()
    assert np.array_equal(observation.encode(a), observation.encode(b))


CORRUPTIONS = [
    ("missing key", lambda d: d.pop("hand")),
    ("extra tile", lambda d: d["regular"].append(0)),
    ("lost tile", lambda d: d["regular"].pop()),
    ("hanging tile", lambda d: d["castle"][2].__setitem__(0, 3)),
    ("traitor in castle", lambda d: d["castle"][0].__setitem__(0, 12)),
    ("bad phase", lambda d: d.__setitem__("phase", "dance")),
    ("hand without phase", lambda d: d.__setitem__("phase", "defender")),
    ("bad level", lambda d: d.__setitem__("level", "expert")),
    ("wrong ordeal", lambda d: d.__setitem__("ordeals", ["sim-1", "exam-2", "exam-3a"])),
    ("won too early", lambda d: (d.__setitem__("outcome", 1), d.__setitem__("phase", "over"))),
    ("face down exam", lambda d: d.__setitem__("face_down", [True, False, False])),
    ("bool as int", lambda d: d.__setitem__("current", True)),
    ("not a list", lambda d: d.__setitem__("safe", "abc")),
]


@pytest.mark.parametrize("name, corrupt", CORRUPTIONS, ids=[c[0] for c in CORRUPTIONS])
def test_corrupt_from_dict_is_rejected(name, corrupt):
    d = position("school", castle=["S^ C#", "Jo"]).to_dict()
    State.from_dict(d)  # the clean one is fine
    corrupt(d)
    with pytest.raises(InvalidStateError):
        State.from_dict(d)
    with pytest.raises(InvalidStateError):
        State.from_dict("not a dict")


@pytest.mark.parametrize("level", LEVELS)
def test_terminal_play_driven_by_scripted_input(level):
    import io

    from castle_envs.experiments.cli import build_parser
    from castle_envs.experiments.play import run

    args = build_parser().parse_args(["play", "castellion", "--level", level, "--seed", "3"])
    script = "0\nxyz\n999\n\n" + "0\n" * 600
    out = io.StringIO()
    assert run(args, stdin=io.StringIO(script), stdout=out) == 0
    text = out.getvalue()
    assert "'xyz' is not a move number" in text and "'999' is not a move number" in text
    assert "draw from the regular pile" in text
    assert "game over" in text and ("VICTORY" in text or "DEFEAT" in text)
    out = io.StringIO()
    run(args, stdin=io.StringIO("q\n"), stdout=out)
    assert "game abandoned" in out.getvalue()


def test_cli_rejects_a_bad_level(capsys):
    from castle_envs.experiments.cli import main

    assert main(["play", "castellion", "--level", "kindergarten"]) == 2
    assert "kindergarten" in capsys.readouterr().err


def test_vector_env_stacks_masks():
    envs = gymnasium.make_vec(
        "castle_envs/Castellion-v0", num_envs=3, vectorization_mode="sync", level="menace"
    )
    obs, info = envs.reset(seed=0)
    assert obs.shape == (3, observation.OBS_SIZE)
    assert info["action_mask"].shape == (3, NUM_ACTIONS)
    assert np.array_equal(np.stack(envs.call("action_masks")), info["action_mask"])
    envs.close()


def test_maskable_ppo_runs_on_the_env():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO

    env = gymnasium.make("castle_envs/Castellion-v0", level="academy")
    model = MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, verbose=0)
    model.learn(total_timesteps=128)
    assert model.num_timesteps >= 128


def test_observation_layout():
    o = observation
    s = position(
        "academy",
        castle=["S^ C#", ". Po"],
        hand="J#",
        revealed="P^",
        ordeals=["sim-1", "sim-2b", "sim-3c"],
        beside=[[2, 0], [0, 0], [0, 0]],
    )
    obs = o.encode(s)
    assert list(obs[o.CELL_OFF : o.CELL_OFF + 7]) == [1, 0, 0, 0, 1, 0, 0]  # seer triangle
    assert list(obs[o.CELL_OFF + 7 : o.CELL_OFF + 14]) == [0, 1, 0, 0, 0, 1, 0]  # chameleon sq.
    assert list(obs[o.CELL_OFF + 7 * 7 : o.CELL_OFF + 7 * 8]) == [0, 0, 0, 1, 0, 0, 1]  # r1 c1
    assert obs[o.CELL_OFF + 7 * 2 : o.CELL_OFF + 7 * 7].sum() == 0
    assert obs[o.HAND_OFF + KIND_BY_NAME["juggler-square"]] == 1
    assert obs[o.REVEALED_OFF + KIND_BY_NAME["pyro-triangle"]] == 1
    assert obs[o.ORDEAL_OFF + 1] == 1 and obs[o.ORDEAL_OFF + 3] == pytest.approx(2 / 3)
    assert obs[o.PHASE_OFF + 1] == 1 and obs[o.LEVEL_OFF + 1] == 1
    # pile contents by counting: 4 of the 5 regular seer-triangles remain
    # (one went to the castle; the safe one stays in the safe pile)
    assert obs[o.REGULAR_OFF + KIND_BY_NAME["seer-triangle"]] == pytest.approx(4 / 5)
    assert obs[o.SAFE_OFF + KIND_BY_NAME["seer-triangle"]] == 1


def test_traitor_moves_are_described_with_their_ordeal_and_cost():
    s = position(
        "menace",
        castle=["P^ P# Po P^ S# C^", "S# Co"],
        hand="T",
        ordeals=["assault-1-harpy", "assault-2-harpy", "assault-3-harpy"],
    )
    assert s.describe_action(16) == "place the traitor beside a face-down ordeal (1/2)"
    assert s.describe_action(17) == "discard the traitor (destroy 3 tiles)"  # one line
    s = position("school", hand="B", ordeals=["exam-1", "exam-2", "exam-3a"])
    assert s.describe_action(16) == "place the black-traitor beside Exam I (1/5)"
