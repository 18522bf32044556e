"""``ppo:PATH`` loads a MaskablePPO zip and plays legal moves through the harness."""
import pytest

pytestmark = pytest.mark.train
sb3_contrib = pytest.importorskip("sb3_contrib")


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    import gymnasium

    import castle_envs  # noqa: F401
    env = gymnasium.make("castle_envs/CastleSiege-v0", difficulty="easy", reward="shaped")
    model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1,
                                    policy_kwargs={"net_arch": [16]}, seed=0, device="cpu")
    model.learn(64)
    path = tmp_path_factory.mktemp("ppo") / "tiny.zip"
    model.save(path)
    return str(path)


def test_loaded_model_plays_legal_moves(model_path):
    from castle_envs.experiments.evaluate import evaluate
    r = evaluate("castle-siege", ["easy"], ["random", f"ppo:{model_path}"], 3, seed=0, workers=1)
    ppo = r["results"][1]
    assert ppo["agent"] == f"ppo:{model_path}" and ppo["mean_length"] > 0
    assert ppo["truncated"] == 0   # every move legal (apply_action would raise) to the end


def test_model_is_deterministic(model_path):
    from castle_envs.experiments.episodes import play_episode
    seats = (f"ppo:{model_path}",)
    a = play_episode("castle-siege", (("difficulty", "easy"),), (), seats, 0, 1)
    b = play_episode("castle-siege", (("difficulty", "easy"),), (), seats, 0, 1)
    assert a == b


def test_a_zip_that_is_not_a_model_is_a_clear_error(tmp_path):
    from castle_envs.agents import make_agent
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match="cannot load a MaskablePPO model"):
        make_agent(f"ppo:{bad}", "castle-siege")
