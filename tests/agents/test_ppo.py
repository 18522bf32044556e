"""MaskablePPO agents load from safe model directories; pickled zips run no code."""

import json
import os
import zipfile

import pytest

pytestmark = pytest.mark.train
sb3_contrib = pytest.importorskip("sb3_contrib")


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    import gymnasium

    import castle_envs  # noqa: F401

    env = gymnasium.make("castle_envs/CastleSiege-v0", difficulty="easy", reward="shaped")
    model = sb3_contrib.MaskablePPO(
        "MlpPolicy",
        env,
        n_steps=64,
        batch_size=32,
        n_epochs=1,
        policy_kwargs={"net_arch": [16]},
        seed=0,
        device="cpu",
    )
    model.learn(64)
    root = tmp_path_factory.mktemp("ppo")
    model.save(root / "tiny.zip")
    from castle_envs.agents.learned.saved import save_maskable_ppo

    save_maskable_ppo(
        model.policy.state_dict(),
        root / "tiny",
        "castle-siege",
        {"difficulty": "easy"},
        {"reward": "shaped"},
        [16],
        "tanh",
    )
    return model, root


def test_model_directory_plays_like_the_trained_model(trained):
    import gymnasium
    from castle_envs.agents import make_agent

    model, root = trained
    agent = make_agent(f"model:{root / 'tiny'}", "castle-siege")
    env = gymnasium.make("castle_envs/CastleSiege-v0", difficulty="easy", reward="shaped")
    obs, info = env.reset(seed=3)
    for _ in range(40):
        expected, _ = model.predict(obs, action_masks=info["action_mask"], deterministic=True)
        assert agent.act(obs, info["action_mask"]) == int(expected)
        obs, _, terminated, truncated, info = env.step(int(expected))
        if terminated or truncated:
            break


def test_loaded_model_plays_legal_moves(trained):
    from castle_envs.experiments.evaluate import evaluate

    spec = f"ppo:{trained[1] / 'tiny'}"
    r = evaluate("castle-siege", ["easy"], ["random", spec], 3, seed=0, workers=1)
    ppo = r["results"][1]
    assert ppo["agent"] == spec and ppo["mean_length"] > 0
    assert ppo["truncated"] == 0  # every move legal (apply_action would raise) to the end


def test_model_is_deterministic(trained):
    from castle_envs.experiments.episodes import play_episode

    seats = (f"model:{trained[1] / 'tiny'}",)
    a = play_episode("castle-siege", (("difficulty", "easy"),), (), seats, 0, 1)
    b = play_episode("castle-siege", (("difficulty", "easy"),), (), seats, 0, 1)
    assert a == b


def test_a_zip_is_refused_unless_trusted(trained):
    from castle_envs.agents import make_agent

    path = trained[1] / "tiny.zip"
    with pytest.raises(ValueError, match="pickled objects that can run code"):
        make_agent(f"ppo:{path}", "castle-siege")
    agent = make_agent(f"ppo:{path},trust_pickle=1", "castle-siege")
    assert agent.name == f"ppo:{path},trust_pickle=1"


class _Payload:
    """Unpickling this writes a file: the proof that code ran."""

    def __init__(self, marker):
        self.marker = marker

    def __reduce__(self):
        return (open, (self.marker, "w"))


def _crafted_zip(path, marker):
    import base64
    import pickle

    blob = base64.b64encode(pickle.dumps(_Payload(str(marker)))).decode()
    data = {
        "policy_class": {":type:": "<class 'abc.ABCMeta'>", ":serialized:": blob},
        "observation_space": {":type:": "x", ":serialized:": blob},
    }
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("data", json.dumps(data))
        z.writestr("policy.pth", b"")


def test_a_crafted_zip_runs_no_code(tmp_path):
    from castle_envs.agents import make_agent

    marker = tmp_path / "pwned"
    evil = tmp_path / "evil.zip"
    _crafted_zip(evil, marker)
    with pytest.raises(ValueError, match="refused"):
        make_agent(f"ppo:{evil}", "castle-siege")
    assert not marker.exists()
    from castle_envs.experiments.cli import main

    assert (
        main(["evaluate", "--game", "castle-siege", "--agent", f"ppo:{evil}", "--episodes", "1"])
        == 2
    )
    assert not marker.exists()
    # the payload is live: Stable-Baselines3's own loader, reached only with the explicit
    # trust flag, does run it (which is why nothing else may reach that loader)
    with pytest.raises(ValueError):
        make_agent(f"ppo:{evil},trust_pickle=1", "castle-siege")
    assert marker.exists()


def test_crafted_weights_run_no_code(trained, tmp_path):
    """A model directory whose weights file is a pickle with a payload: refused, nothing runs."""
    import pickle
    import shutil

    from castle_envs.agents import make_agent

    marker = tmp_path / "pwned"
    bad = tmp_path / "bad"
    shutil.copytree(trained[1] / "tiny", bad)
    with open(bad / "weights.pt", "wb") as f:
        pickle.dump(_Payload(str(marker)), f)
    with pytest.raises(ValueError, match="refused"):
        make_agent(f"model:{bad}", "castle-siege")
    assert not marker.exists()


@pytest.mark.parametrize(
    "change,message",
    [
        ({"kind": "shell"}, "unknown kind"),
        ({"format": "other"}, "needs format"),
        ({"weights": "../../etc/passwd"}, "weights must name a file"),
        ({"game": "castellion"}, "is a castellion model, not a castle-siege one"),
        ({"policy": {"net_arch": [16, "x"], "activation": "tanh"}}, "net_arch"),
    ],
)
def test_bad_model_cards_are_clear_errors(trained, tmp_path, change, message):
    import shutil

    from castle_envs.agents import make_agent

    bad = tmp_path / "bad"
    shutil.copytree(trained[1] / "tiny", bad)
    card = json.loads((bad / "model.json").read_text())
    card.update(change)
    (bad / "model.json").write_text(json.dumps(card))
    with pytest.raises(ValueError, match=message):
        make_agent(f"model:{bad}", "castle-siege")


def test_missing_model_is_a_clear_error(tmp_path):
    from castle_envs.agents import make_agent

    with pytest.raises(FileNotFoundError, match="no model"):
        make_agent(f"model:{tmp_path / 'nothing'}", "castle-siege")
    (tmp_path / "d").mkdir()
    with pytest.raises(FileNotFoundError, match="model.json"):
        make_agent(f"model:{tmp_path / 'd'}", "castle-siege")


@pytest.mark.parametrize(
    "directory,game",
    [
        ("castle_siege_very_hard", "castle-siege"),
        ("castellion_academy", "castellion"),
        ("castle_siege_very_hard_linear", "castle-siege"),
        ("castle_siege_very_hard_search", "castle-siege"),
        ("castle_siege_very_hard_ismcts", "castle-siege"),
        ("castle_siege_very_hard_ismcts_standing", "castle-siege"),
        ("castle_siege_very_hard_ismcts_wide", "castle-siege"),
        ("castle_siege_very_hard_ismcts_endgame", "castle-siege"),
        ("castle_siege_hard_move_ppo", "castle-siege"),
        ("castle_siege_very_hard_exit_net", "castle-siege"),
        ("castle_rooms_2p_move_ppo", "castle-rooms"),
        ("castellion_move_ppo", "castellion"),
    ],
)
def test_every_shipped_model_loads_safely(directory, game):
    from castle_envs.agents import make_agent

    root = os.path.join(os.path.dirname(__file__), "..", "..", "models", directory)
    assert not any(name.endswith((".zip", ".pkl", ".pickle")) for name in os.listdir(root))
    agent = make_agent(f"model:{root}", game, seed=0)
    variant = json.load(open(os.path.join(root, "model.json")))["variant"]
    if game == "castle-rooms":  # a multi-player model plays a tournament game
        from castle_envs.experiments.tournament import tournament

        r = tournament(game, variant["num_players"], [agent.name, "heuristic"], 1, workers=1)
        assert r["truncated"] == 0
        return
    from castle_envs.experiments.evaluate import evaluate

    r = evaluate(game, [next(iter(variant.values()))], [agent.name], 1, seed=0, workers=1)
    assert r["results"][0]["truncated"] == 0


def test_every_shipped_model_is_tested_above_and_has_a_model_card():
    root = os.path.join(os.path.dirname(__file__), "..", "..", "models")
    tested = {
        "castle_siege_very_hard",
        "castellion_academy",
        "castle_siege_very_hard_linear",
        "castle_siege_very_hard_search",
        "castle_siege_very_hard_ismcts",
        "castle_siege_very_hard_ismcts_standing",
        "castle_siege_very_hard_ismcts_wide",
        "castle_siege_very_hard_ismcts_endgame",
        "castle_siege_hard_move_ppo",
        "castle_siege_very_hard_exit_net",
        "castle_rooms_2p_move_ppo",
        "castellion_move_ppo",
        "castle_siege_ntuple_value",  # test_castle_siege_ntuple.py
    }
    shipped = {d for d in os.listdir(root) if os.path.isdir(os.path.join(root, d))}
    assert shipped == tested
    for d in shipped:
        assert os.path.isfile(os.path.join(root, d, "README.md")), d
        assert os.path.isfile(os.path.join(root, d, "model.json")), d
