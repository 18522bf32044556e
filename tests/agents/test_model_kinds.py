"""Saved-model kinds are entries of ``MODEL_KINDS``: a new kind is registered, never a branch
added to ``load_agent``."""

import pytest
from castle_envs.agents.base import RandomAgent
from castle_envs.agents.learned.saved import (
    KINDS,
    MODEL_KINDS,
    BadModel,
    ModelKind,
    load_agent,
    read_card,
    register_model_kind,
    write_card,
)


@pytest.fixture
def toy_kind():
    """A kind ``toy`` whose loader makes a random agent, or refuses a card with ``bad``."""

    def load(directory, card, name, seed):
        if card["options"].get("bad"):
            raise BadModel("the toy says no")
        agent = RandomAgent(seed)
        agent.name = name
        return agent

    register_model_kind(ModelKind("toy", load, weights="toy.json"))
    try:
        yield
    finally:
        del MODEL_KINDS["toy"]


def test_the_shipped_kinds_are_the_registry_in_order():
    assert KINDS == ("maskable_ppo", "linear", "search", "ismcts", "move_policy", "ntuple_value")
    assert tuple(MODEL_KINDS)[: len(KINDS)] == KINDS
    weights = {k.name: k.weights for k in MODEL_KINDS.values()}
    assert weights["maskable_ppo"] == weights["move_policy"] == "weights.pt"
    assert weights["linear"] == weights["search"] == weights["ismcts"] == "policy.json"
    assert weights["ntuple_value"] == "weights.npz"


def test_a_taken_kind_name_is_refused():
    with pytest.raises(ValueError, match="model kind 'linear' is taken"):
        register_model_kind(ModelKind("linear", "castle_envs.agents.base:RandomAgent"))


def test_a_registered_kind_loads_through_the_table(tmp_path, toy_kind):
    write_card(tmp_path / "toy", {"kind": "toy", "game": "castle-siege"})
    assert read_card(tmp_path / "toy")["weights"] == "toy.json"  # the kind's default
    agent = load_agent(tmp_path / "toy", "castle-siege", seed=3)
    assert isinstance(agent, RandomAgent) and agent.name == f"model:{tmp_path / 'toy'}"


def test_a_loader_refusal_names_the_directory(tmp_path, toy_kind):
    write_card(tmp_path / "bad", {"kind": "toy", "game": "castle-siege", "options": {"bad": 1}})
    with pytest.raises(ValueError, match="is not a castle-envs model directory: the toy says no"):
        load_agent(tmp_path / "bad", "castle-siege")


def test_an_unregistered_kind_lists_the_known_ones(tmp_path):
    write_card(tmp_path / "m", {"kind": "toy", "game": "castle-siege"})
    with pytest.raises(ValueError, match="unknown kind 'toy'; known: maskable_ppo, linear"):
        read_card(tmp_path / "m")
