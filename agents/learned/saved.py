"""Saved models as directories that load without running code (``--agent model:DIR``).

A model directory holds ``model.json``, plain JSON that says what the model is, and the
weights beside it in formats whose loaders cannot execute anything:

    models/castle_siege_very_hard/
        model.json     {"format": "castle-envs-model", "version": 1, "kind": "maskable_ppo",
                        "game": "castle-siege", "variant": {"difficulty": "very_hard"}, ...}
        weights.pt     the policy's tensors, read with torch.load(weights_only=True)

``kind`` names the loader (``KINDS``): ``maskable_ppo`` (an sb3-contrib MaskablePPO policy,
rebuilt from ``policy.net_arch`` / ``policy.activation`` and the game's own spaces, then
given the tensors), ``linear`` (the Castle Siege linear move scorer, a JSON weights
file; ``options.endgame`` sets its endgame search), ``search`` (the Castle Siege search
agent over that scorer, ``castle_siege_search``; ``options`` are its settings), ``ismcts``
(the information-set MCTS agent over that scorer, ``castle_siege_ismcts``) or
``move_policy`` (a network scoring each legal move's features, ``agents/learned/move_policy.py``:
``policy`` gives its sizes, ``weights.pt`` its tensors) or ``ntuple_value`` (a Castle Siege
afterstate value of n-tuple tables played 1-ply, ``agents/learned/castle_siege_ntuple.py``:
``weights.npz``). Each kind is an entry of
``MODEL_KINDS`` (a ``ModelKind``: its loader and its default weights file); another learner
adds its kind with ``register_model_kind(ModelKind("name", "module:function", ...))``.

Why not Stable-Baselines3 zips: ``MaskablePPO.load`` unpickles objects stored in the zip's
``data`` entry before anything is checked, so opening a downloaded zip can run arbitrary
code. ``ppo:FILE.zip`` is therefore refused unless the user says the file is their own
(``ppo:FILE.zip,trust_pickle=1``); ``convert_sb3_zip`` turns such a file into a safe
directory once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

import numpy as np

from castle_envs.core.files import UnreadableFile, read_json

# the card's format and the weights' reader, shared with the kinds' modules (and kept here)
from .model_files import (  # noqa: F401
    FORMAT,
    MODEL_FILE,
    VERSION,
    WEIGHTS_FILE,
    BadModel,
    check_size,
    load_tensors,
    load_weights,
    mlp_parameters,
    write_card,
    write_weights,
)

ACTIVATIONS = ("relu", "tanh")
#: a model card is a few hundred bytes; this is room for long notes, not for a payload
MAX_CARD_BYTES = 1 << 20
#: the most hidden layers of a MaskablePPO policy
MAX_LAYERS = 64


@dataclass(frozen=True)
class ModelKind:
    """One ``kind`` a ``model.json`` may name. ``load`` makes its agent: a function
    ``(directory, card, name, seed) -> Agent``, or ``"module:function"`` naming one, imported
    only when a model of the kind is loaded; it raises ``BadModel(why)`` for a directory
    that does not hold a model of the kind (reported as "DIR is not a castle-envs model
    directory: why"). ``weights``: the weights file when the card names none."""

    name: str
    load: Callable | str
    weights: str = WEIGHTS_FILE


#: every saved-model kind by name; ``register_model_kind`` adds one (an entry, never a branch)
MODEL_KINDS: dict[str, ModelKind] = {}


def register_model_kind(kind: ModelKind) -> None:
    """Add a saved-model kind (a name already taken raises ValueError)."""
    if kind.name in MODEL_KINDS:
        raise ValueError(f"model kind {kind.name!r} is taken")
    MODEL_KINDS[kind.name] = kind


def valid_net_arch(net_arch: object) -> TypeGuard[list[int]]:
    """Layer widths a model may have: a list of 1 to ``MAX_LAYERS`` ints of 1 to 65,536."""
    return (
        isinstance(net_arch, list)
        and 0 < len(net_arch) <= MAX_LAYERS
        and all(isinstance(n, int) and not isinstance(n, bool) and 0 < n <= 65536 for n in net_arch)
    )


def _bad(path, why: str) -> ValueError:
    return ValueError(f"{path} is not a castle-envs model directory: {why}")


def read_card(path) -> dict:
    """The validated ``model.json`` of model directory ``path`` (plain JSON only)."""
    path = Path(path)
    card_path = path / MODEL_FILE if path.is_dir() else path
    if card_path.name != MODEL_FILE or not card_path.exists():
        raise FileNotFoundError(
            f"no model at {str(path)!r}: expected a directory holding {MODEL_FILE}"
        )
    try:
        card = read_json(card_path, MODEL_FILE, max_bytes=MAX_CARD_BYTES)
    except UnreadableFile as err:
        raise _bad(path, str(err)) from None
    if not isinstance(card, dict):
        raise _bad(path, f"{MODEL_FILE} must hold a JSON object")
    if card.get("format") != FORMAT or card.get("version") != VERSION:
        raise _bad(path, f"{MODEL_FILE} needs format {FORMAT!r} version {VERSION}")
    if card.get("kind") not in MODEL_KINDS:
        raise _bad(path, f"unknown kind {card.get('kind')!r}; known: {', '.join(MODEL_KINDS)}")
    if not isinstance(card.get("game"), str):
        raise _bad(path, "model.json names no game")
    for key in ("variant", "env_kwargs", "options"):
        if not isinstance(card.setdefault(key, {}), dict):
            raise _bad(path, f"{key} must be a JSON object")
    weights = card.setdefault("weights", MODEL_KINDS[card["kind"]].weights)
    # a file beside model.json, never a path that leaves the directory
    if (
        not isinstance(weights, str)
        or not weights
        or Path(weights).name != weights
        or weights in (".", "..")
    ):
        raise _bad(path, f"weights must name a file in the directory, got {weights!r}")
    return card


# --- kinds ---------------------------------------------------------------------------------
def _spaces(card: dict):
    """The observation and action spaces of the env the model was trained on."""
    from castle_envs.registry import get_game

    spec = get_game(card["game"])
    env = spec.make(**{**card["env_kwargs"], **card["variant"]})
    try:
        if spec.solitaire:
            return env.observation_space, env.action_space
        agent = env.possible_agents[0]
        return env.observation_space(agent)["observation"], env.action_space(agent)
    finally:
        env.close()


def build_maskable_policy(card: dict, observation_space=None, action_space=None):
    """An untrained sb3-contrib ``MaskableActorCriticPolicy`` of the card's architecture."""
    import torch
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

    policy = card.get("policy", {})
    if not isinstance(policy, dict):
        raise ValueError("policy must be a JSON object with net_arch and activation")
    net_arch, activation = policy.get("net_arch"), policy.get("activation")
    if not valid_net_arch(net_arch):
        got = repr(net_arch)
        if len(got) > 80:  # a line, however long the card's list
            got = f"a list of {len(net_arch)}" if isinstance(net_arch, list) else got[:77] + "..."
        raise ValueError(
            f"policy.net_arch must be a list of 1 to {MAX_LAYERS} layer sizes of at most "
            f"65536, got {got}"
        )
    if activation not in ACTIVATIONS:
        raise ValueError(f"policy.activation must be one of {ACTIVATIONS}, got {activation!r}")
    if observation_space is None:
        observation_space, action_space = _spaces(card)
    check_size(
        "policy.net_arch",
        mlp_parameters(
            [int(np.prod(observation_space.shape)), *net_arch], int(action_space.n), heads=2
        ),
    )
    return MaskableActorCriticPolicy(
        observation_space,
        action_space,
        lr_schedule=lambda _: 0.0,
        net_arch=list(net_arch),
        activation_fn={"relu": torch.nn.ReLU, "tanh": torch.nn.Tanh}[activation],
    )


def load_maskable_policy(directory, card: dict | None = None):
    directory = Path(directory)
    card = card or read_card(directory)
    policy = build_maskable_policy(card)
    load_weights(policy, directory, card)
    policy.set_training_mode(False)
    return policy


def save_maskable_ppo(
    state_dict,
    directory,
    game: str,
    variant: dict,
    env_kwargs: dict,
    net_arch,
    activation: str,
    extra: dict | None = None,
) -> Path:
    """Write a MaskablePPO policy's ``state_dict()`` as a safe model directory."""
    policy = {"net_arch": list(net_arch), "activation": activation}
    return write_weights(
        directory, "maskable_ppo", game, variant, env_kwargs, policy, dict(state_dict), extra
    )


def init_from_model(net, arch: dict, game: str, directory) -> None:
    """Start ``net`` (built for ``arch`` and ``game``) at the weights of a saved move-policy
    model (``kind: move_policy``): fine-tuning a network learned from search, for example.
    ValueError, naming what differs, when the model is of another kind, game or shape."""
    from castle_envs.agents.learned.move_policy import ARCH_KEYS, check_arch
    from castle_envs.agents.options import locate_shipped, shipped_models_dir

    directory = locate_shipped(str(directory), shipped_models_dir(), "models")
    card = read_card(directory)
    if card["kind"] != "move_policy" or card["game"] != game:
        raise ValueError(
            f"{directory}: a {card['game']} {card['kind']} model; starting a network needs "
            f"a {game} move_policy model"
        )
    saved = check_arch(card.get("policy"))
    # the capacity (rows a position shows) shapes no weight: a run may show more or fewer
    shaped = [k for k in ARCH_KEYS if k != "capacity"]
    differ = [f"{k} {saved[k]} (this run: {arch[k]})" for k in shaped if saved[k] != arch[k]]
    if differ:
        raise ValueError(f"{directory}: the model's shape differs: {', '.join(differ)}")
    load_weights(net, directory, card)


def load_agent(path, game: str, seed: int | None = None):
    """The agent a model directory describes, for ``game`` (refused if trained on another)."""
    from castle_envs.registry import get_game, load

    card = read_card(path)
    directory = Path(path) if Path(path).is_dir() else Path(path).parent
    if get_game(card["game"]).slug != get_game(game).slug:
        raise ValueError(f"{path} is a {card['game']} model, not a {game} one")
    loader = load(MODEL_KINDS[card["kind"]].load)
    try:
        return loader(directory, card, f"model:{path}", seed)
    except BadModel as err:
        raise _bad(path, str(err)) from None


def _load_maskable_ppo(directory: Path, card: dict, name: str, seed: int | None):
    from castle_envs.agents.learned.ppo import PPOAgent

    try:
        return PPOAgent(load_maskable_policy(directory, card), name=name, seed=seed)
    except ValueError as err:
        raise BadModel(str(err)) from None


def _load_move_policy(directory: Path, card: dict, name: str, seed: int | None):
    from castle_envs.agents.learned import move_policy

    try:
        return move_policy.load(directory, card, seed=seed, name=name)
    except ValueError as err:
        raise BadModel(str(err)) from None


def _load_linear(directory: Path, card: dict, name: str, seed: int | None):
    from castle_envs.agents.base import PolicyAgent

    endgame = card["options"].get("endgame", 0)
    return PolicyAgent(_linear_policy(directory, card, endgame), name, seed)


def _linear_policy(directory: Path, card: dict, endgame_nodes: int = 0):
    """The card's linear weights file, its refusal a ``BadModel``."""
    from castle_envs.agents.learned.castle_siege_linear import LinearPolicy

    try:
        return LinearPolicy.load(directory / card["weights"], endgame_nodes=endgame_nodes)
    except ValueError as err:
        raise BadModel(str(err)) from None


def _known_options(card: dict, kind: str, known) -> None:
    unknown = sorted(set(card["options"]) - set(known))
    if unknown:
        raise BadModel(f"unknown {kind} options {unknown}; known: {list(known)}")


def _load_search(directory: Path, card: dict, name: str, seed: int | None):
    from castle_envs.agents.base import PolicyAgent
    from castle_envs.agents.search.castle_siege_search import SEARCH_OPTIONS, SearchPolicy

    _known_options(card, "search", SEARCH_OPTIONS)
    scorer = _linear_policy(directory, card)
    return PolicyAgent(SearchPolicy(scorer, **card["options"]), name, seed)


def _load_ismcts(directory: Path, card: dict, name: str, seed: int | None):
    from castle_envs.agents.base import PolicyAgent
    from castle_envs.agents.search.castle_siege_ismcts import ISMCTS_OPTIONS, ISMCTSPolicy

    _known_options(card, "ismcts", ISMCTS_OPTIONS)
    options = dict(card["options"])
    for key in ("value", "prior"):  # the network files sit in the model directory
        if options.get(key):
            options[key] = str(directory / Path(str(options[key])).name)
    search = ISMCTSPolicy(_linear_policy(directory, card), **options)
    for key in ("value", "prior"):
        search.options[key] = card["options"].get(key, "")  # as the card says
    return PolicyAgent(search, name, seed)


for _kind in (
    ModelKind("maskable_ppo", _load_maskable_ppo),
    ModelKind("linear", _load_linear, weights="policy.json"),
    ModelKind("search", _load_search, weights="policy.json"),
    ModelKind("ismcts", _load_ismcts, weights="policy.json"),
    ModelKind("move_policy", _load_move_policy),
    ModelKind(
        "ntuple_value",
        "castle_envs.agents.learned.castle_siege_ntuple:load_agent",
        weights="weights.npz",
    ),
):
    register_model_kind(_kind)

#: the kind names, in registration order (kept for callers of the old tuple)
KINDS = tuple(MODEL_KINDS)


# --- Stable-Baselines3 zips (pickles: only files the user trusts) -----------------------------
def load_sb3_zip_trusted(path):
    """``MaskablePPO.load`` for a file the user vouches for: it unpickles, so it can run code."""
    try:
        from sb3_contrib import MaskablePPO
    except ImportError as err:
        raise ValueError(
            f"loading a MaskablePPO zip needs the 'train' extra "
            f'(pip install "castle-envs[train]"): {err}'
        ) from None
    try:
        return MaskablePPO.load(path, device="cpu")
    except Exception as err:  # a zip that is not a MaskablePPO model
        raise ValueError(f"cannot load a MaskablePPO model from {path!r}: {err}") from None


def convert_sb3_zip(
    path,
    directory,
    game: str,
    variant: dict,
    env_kwargs: dict | None = None,
    trust_pickle: bool = False,
) -> Path:
    """Turn a MaskablePPO zip you made yourself into a safe model directory."""
    if not trust_pickle:
        raise ValueError(
            f"{path} is a Stable-Baselines3 zip, which holds pickled objects that "
            "run code when loaded; convert it only if you made it yourself "
            "(trust_pickle=True)"
        )
    model = load_sb3_zip_trusted(path)
    kwargs = model.policy_kwargs or {}
    activation = kwargs.get("activation_fn")
    name = getattr(activation, "__name__", "Tanh").lower()
    arch = kwargs.get("net_arch", [64, 64])
    if isinstance(arch, dict):
        arch = arch.get("pi", [64, 64])
    return save_maskable_ppo(
        model.policy.state_dict(),
        directory,
        game,
        variant,
        env_kwargs or {},
        arch,
        {"relu": "relu", "tanh": "tanh"}.get(name, name),
    )
