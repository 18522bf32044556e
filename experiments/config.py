"""Training configs: YAML files read into typed, frozen dataclasses, unknown keys rejected by name.

A config is one ``TrainConfig`` holding a dataclass per section (``PPOConfig``,
``PolicyConfig``, ``SelfPlayConfig``, ``PretrainConfig``, ``EvalConfig``,
``CheckpointConfig``, ``MovePPOConfig``, ``CEMConfig``, ``ExItConfig``); the dataclasses are
the schema: every
allowed key, its type (the field's annotation), its default and, for a few, its allowed values
(``choices`` in the field's metadata). ``SCHEMA`` is the same thing as a nested mapping
(generated from them). ``load_config(path, overrides)`` and ``resolve(raw, overrides)``
return the checked ``TrainConfig`` (defaults filled in) or raise ``ValueError`` naming the
bad key, e.g. ``ppo.n_stepz: unknown key``. ``TrainConfig.to_dict()`` is the resolved
mapping a run folder's ``config.yaml`` holds (key for key what it held before the
dataclasses, so run folders of either age read back the same; a section added since, such as
``exit_siege``, is filled with its defaults when an older file lacks it).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from castle_envs.agents.registry import LINEAR_GAMES

from .algorithms import ALGORITHMS


def _choices(*values: str) -> dict:
    return {"choices": values}


def _live_choices(values) -> dict:
    """Choices read when a config is checked (a registry's keys, which may grow)."""
    return {"choices": values}


@dataclass(frozen=True)
class PPOConfig:
    """``ppo``: MaskablePPO's and move PPO's update settings (passed to MaskablePPO as is)."""

    learning_rate: float = 3e-4
    n_steps: int = 256
    batch_size: int = 256
    n_epochs: int = 4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip_range: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5


@dataclass(frozen=True)
class PolicyConfig:
    """``policy``: MaskablePPO's network."""

    net_arch: list = field(default_factory=lambda: [256, 256])
    activation: str = field(default="relu", metadata=_choices("relu", "tanh"))


@dataclass(frozen=True)
class SelfPlayConfig:
    """``self_play``: snapshots of the learner as opponents (multi-player games)."""

    enabled: bool = False
    snapshot_every: int = 50_000
    pool_size: int = 5
    fixed_opponent_share: float = 0.5  # share of episodes against `opponents`


@dataclass(frozen=True)
class PretrainConfig:
    """``pretrain``: behaviour cloning before PPO."""

    agent: str = ""  # e.g. heuristic; empty = no pretraining
    episodes: int = 0
    epochs: int = 5
    batch_size: int = 512
    learning_rate: float = 1e-3
    seed: int = 2_000_000  # its deals, disjoint from the eval seeds
    dagger: int = 0  # move_ppo: rounds of the network's games, teacher-labelled


@dataclass(frozen=True)
class EvalConfig:
    """``eval``: the held-out evaluations of the learning curve."""

    every_steps: int = 20_000
    episodes: int = 200
    seed: int = 1_000_000  # held-out deals: seeds from here on
    opponent: str = "heuristic"  # multi-player move_ppo: the agent it is rated against


@dataclass(frozen=True)
class CheckpointConfig:
    """``checkpoint``: how often the run folder's ``checkpoints/latest`` is replaced."""

    every_steps: int = 50_000


@dataclass(frozen=True)
class MovePPOConfig:
    """``move_ppo``: algo move_ppo (``experiments/train_moves.py``)."""

    capacity: int = 256  # move rows per position (castle_envs.moves)
    hidden: int = 128  # width of the state and move MLPs
    init_linear: str = ""  # a CEM policy.json: the linear term starts there
    init_model: str = ""  # a move_policy model directory: every weight starts there
    temperature: float = 1.0  # ... divided by this (higher: more exploration)
    levels: list = field(default_factory=list)  # variants side by side (n_envs split evenly;
    # one named twice gets twice the envs)


@dataclass(frozen=True)
class CEMConfig:
    """``cem``: algo cem (``experiments/train_cem.py``)."""

    games: dict = field(default_factory=lambda: {"hard": 400, "very_hard": 1000})  # per candidate
    fitness_weights: dict = field(default_factory=lambda: {"hard": 1.0, "very_hard": 10.0})
    population: int = 16
    elite: int = 4
    generations: int = 20
    sigma_floor: float = 0.3  # spread floor, as a share of the initial spread
    init: str = ""  # starting weights: a policy.json ("" = heuristic's)
    deal_seed: int = 10_000_000  # training deals: from here, 10**6 per generation
    eval_games: dict = field(default_factory=lambda: {"hard": 1000, "very_hard": 3000})
    eval_seed: int = 1_000_000
    eval_every: int = 3
    workers: int = 0  # 0: every core
    backend: str = field(default="local", metadata=_choices("local", "ray"))


@dataclass(frozen=True)
class ExItConfig:
    """``exit_siege``: algo exit_siege (``experiments/exit_siege.py``), Castle Siege's expert
    iteration; its training deals start at ``seed`` (20,000,000 or more)."""

    rounds: int = 3
    games: int = 100  # training games a round
    eval_games: int = 100  # check games a round (old scorer against new)
    iterations: int = 1000  # ISMCTS iterations a decision
    temp: float = 4.0  # the prior's temperature, in the search and the fit
    init: str = ""  # starting scorer: a policy.json ("" = the shipped
    # castle_siege_very_hard_linear's)


@dataclass(frozen=True)
class NTupleConfig:
    """``ntuple``: algo ntuple_value (``experiments/train_ntuple.py``), a Castle Siege
    afterstate value learned by TD(lambda) from self-play; its training deals start at
    ``seed`` (20,000,000 or more)."""

    games: int = 200_000  # training games in all
    chunk_games: int = 10_000  # games a chunk (a checkpoint after each)
    levels: dict = field(default_factory=lambda: {"hard": 1, "very_hard": 1})  # games a cycle
    lr: float = 1.0  # step of the logistic loss, shared among a position's lookups
    lr_end: float = 0.0  # the step at the last game, falling geometrically from lr (0: lr)
    lam: float = 0.5  # TD(lambda)
    eps: float = 0.01  # chance of a random legal move
    shaped: float = 0.1  # a lost game's value per share of castles taken
    prune: bool = True  # skip attacks that carry a card they do not need
    guide: float = 0.5  # chance a decision follows the linear scorer at the start ...
    guide_until: int = 60_000  # ... falling to 0 at this many games
    eval_every: int = 20_000  # games between held-out evaluations (0: none)
    eval_games: int = 500  # held-out deals per difficulty
    eval_levels: list = field(default_factory=lambda: ["hard", "very_hard"])
    eval_seed: int = 1_005_000  # study deals, away from the 1,000,000-1,001,999 figures
    init: str = ""  # start from this ntuple_value model directory ("" = zero tables)


#: the algorithms a config can name (``algo``), each a trainer of the harness (``ALGORITHMS``)
ALGOS = tuple(ALGORITHMS)


@dataclass(frozen=True)
class TrainConfig:
    """A whole training config; ``to_dict()`` is what a run folder's ``config.yaml`` holds."""

    name: str = "run"
    # the registry's names as they stand when a config is read (register_algorithm adds one)
    algo: str = field(default="maskable_ppo", metadata=_live_choices(ALGORITHMS.keys()))
    game: str = "castle-siege"
    variant: dict = field(default_factory=dict)  # e.g. {difficulty: very_hard}
    env_kwargs: dict = field(default_factory=dict)  # passed to the env (reward, rules options)
    shaping: str = field(default="", metadata=_choices("", "heuristic_potential"))
    seed: int = 0
    total_timesteps: int = 100_000
    n_envs: int = 8
    vec_env: str = field(default="dummy", metadata=_choices("dummy", "subproc"))
    device: str = field(default="cpu", metadata=_choices("cpu", "cuda", "auto"))
    torch_threads: int = 1  # 1 avoids oversubscribing small CPUs
    run_dir: str = "runs"
    ppo: PPOConfig = field(default_factory=PPOConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    curriculum: list = field(default_factory=list)  # [{variant: {...}, until_steps: N}, ...]
    opponents: list = field(default_factory=lambda: ["random"])  # agent specs, other seats
    self_play: SelfPlayConfig = field(default_factory=SelfPlayConfig)
    pretrain: PretrainConfig = field(default_factory=PretrainConfig)
    eval: EvalConfig = field(default_factory=EvalConfig)
    checkpoint: CheckpointConfig = field(default_factory=CheckpointConfig)
    move_ppo: MovePPOConfig = field(default_factory=MovePPOConfig)
    cem: CEMConfig = field(default_factory=CEMConfig)
    exit_siege: ExItConfig = field(default_factory=ExItConfig)
    ntuple: NTupleConfig = field(default_factory=NTupleConfig)

    def to_dict(self) -> dict:
        """The resolved config as a plain nested mapping (fresh copies), in schema order."""
        return dataclasses.asdict(self)

    def replace(self, **changes: Any) -> TrainConfig:
        """A copy with top-level ``changes`` (e.g. ``seed=0``), not checked again."""
        return dataclasses.replace(self, **changes)


# --- the schema, read off the dataclasses -----------------------------------------------------
_Section = TypeVar("_Section")


def _kind(hint: Any) -> type:
    """The runtime type a field's annotation asks for (``dict`` for ``dict[str, int]``)."""
    return typing.get_origin(hint) or hint


def _schema(cls: type) -> dict[str, Any]:
    """``{key: (kind, default, choices) | nested schema}`` of a config dataclass."""
    hints = typing.get_type_hints(cls)
    blank = cls()
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        kind = _kind(hints[f.name])
        if dataclasses.is_dataclass(kind):
            out[f.name] = _schema(kind)
        else:
            out[f.name] = (kind, getattr(blank, f.name), f.metadata.get("choices"))
    return out


#: every allowed key: ``(type, default, allowed values or None)``, sections nested
SCHEMA: dict[str, Any] = _schema(TrainConfig)


def _defaults(schema: dict) -> dict:
    return {
        k: _defaults(v) if isinstance(v, dict) else copy.deepcopy(v[1]) for k, v in schema.items()
    }


def _merge(schema: dict, given: Any, prefix: str = "") -> dict:
    if not isinstance(given, dict):
        raise ValueError(
            f"{prefix.rstrip('.') or 'config'}: expected a mapping, got {type(given).__name__}"
        )
    out = _defaults(schema)
    for key, value in given.items():
        path = f"{prefix}{key}"
        if key not in schema:
            raise ValueError(f"{path}: unknown key (known: {', '.join(sorted(schema))})")
        spec = schema[key]
        if isinstance(spec, dict):
            out[key] = _merge(spec, value or {}, f"{path}.")
            continue
        kind, _, choices = spec
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if kind is int and isinstance(value, float) and value.is_integer():
            value = int(value)
        if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
            raise ValueError(
                f"{path}: expected {kind.__name__}, got {type(value).__name__} {value!r}"
            )
        if choices is not None and value not in choices:
            raise ValueError(f"{path}: {value!r} is not one of {list(choices)}")
        out[key] = value
    return out


def _build(cls: type[_Section], values: dict) -> _Section:
    """The dataclass ``cls`` of a merged (complete, type-checked) mapping."""
    hints = typing.get_type_hints(cls)
    kwargs = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]  # cls is a dataclass
        kind = _kind(hints[f.name])
        value = values[f.name]
        kwargs[f.name] = _build(kind, value) if dataclasses.is_dataclass(kind) else value
    return cls(**kwargs)


def _set_override(config: dict, assignment: str) -> None:
    """``ppo.n_steps=128`` style overrides, values parsed as YAML."""
    if "=" not in assignment:
        raise ValueError(f"override {assignment!r} must look like key.sub=value")
    path, _, text = assignment.partition("=")
    keys = path.strip().split(".")
    node = config
    for key in keys[:-1]:
        node = node.setdefault(key, {})
        if not isinstance(node, dict):
            raise ValueError(f"override {assignment!r}: {key} is not a mapping")
    node[keys[-1]] = _parse_yaml(text, f"override {assignment!r}")


def _parse_yaml(text: str, where: str):
    """``yaml.safe_load`` (no Python tags: nothing runs) with its errors as one-line
    ``ValueError``s naming ``where``."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        at = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ValueError(f"{where}: not valid YAML{at}: {problem}") from None


def resolve(raw: dict | TrainConfig | None, overrides: list[str] | None = None) -> TrainConfig:
    """The checked ``TrainConfig`` of a raw mapping (as read from YAML; a ``TrainConfig``
    is checked again) with ``key.sub=value`` ``overrides`` applied."""
    raw = raw.to_dict() if isinstance(raw, TrainConfig) else copy.deepcopy(raw or {})
    for assignment in overrides or []:
        _set_override(raw, assignment)
    merged = _merge(SCHEMA, raw)
    _check_variant(merged)
    config = _build(TrainConfig, merged)
    _check_values(config)
    return config


def shipped_configs_dir() -> Path:
    """The shipped ``configs/`` folder: beside ``experiments/`` in a checkout, and installed
    as ``castle_envs/configs`` beside ``castle_envs/experiments`` in a wheel."""
    return Path(__file__).resolve().parents[1] / "configs"


def load_config(path: str | Path, overrides: list[str] | None = None) -> TrainConfig:
    """``configs/...`` paths that do not exist here are read from the shipped configs."""
    from castle_envs.agents.registry import locate_shipped

    path = Path(locate_shipped(str(path), shipped_configs_dir(), "configs"))
    if not path.is_file():
        raise FileNotFoundError(f"no config file {path}")
    try:
        text = path.read_text()
    except UnicodeDecodeError:
        raise ValueError(f"{path}: not a text file") from None
    raw = _parse_yaml(text, str(path))
    return resolve(raw if raw is not None else {}, overrides)


def _check_variant(config: dict) -> None:
    """The game's variant argument only, its value one of the game's (default: the first),
    written back in full."""
    from castle_envs.registry import get_game

    spec = get_game(config["game"])
    for key in config["variant"]:
        if key != spec.variant_arg:
            raise ValueError(f"variant.{key}: {spec.slug} takes variant.{spec.variant_arg}")
    value = config["variant"].get(spec.variant_arg, spec.variants[0])
    if value not in spec.variants:
        raise ValueError(
            f"variant.{spec.variant_arg}: {value!r} is not one of {list(spec.variants)}"
        )
    config["variant"] = {spec.variant_arg: value}


def _get(config: Any, dotted: str) -> Any:
    for key in dotted.split("."):
        config = getattr(config, key)
    return config


def _check_values(config: TrainConfig) -> None:
    from castle_envs.agents.registry import POTENTIALS

    from castle_envs.registry import get_game, load

    spec = get_game(config.game)
    for name in (
        "total_timesteps",
        "n_envs",
        "torch_threads",
        "ppo.n_steps",
        "ppo.batch_size",
        "ppo.n_epochs",
        "eval.every_steps",
        "eval.episodes",
        "checkpoint.every_steps",
        "self_play.snapshot_every",
        "self_play.pool_size",
        "pretrain.epochs",
        "pretrain.batch_size",
    ):
        if _get(config, name) < 1:
            raise ValueError(f"{name}: must be at least 1, got {_get(config, name)}")
    for name, rule in (
        ("ppo.learning_rate", "positive"),
        ("ppo.clip_range", "positive"),
        ("ppo.max_grad_norm", "positive"),
        ("pretrain.learning_rate", "positive"),
        ("ppo.gamma", "share"),
        ("ppo.gae_lambda", "share"),
        ("self_play.fixed_opponent_share", "share"),
        ("ppo.ent_coef", "finite"),
        ("ppo.vf_coef", "finite"),
        ("cem.sigma_floor", "finite"),
    ):
        value = _get(config, name)
        if (
            not math.isfinite(value)
            or (rule == "positive" and value <= 0)
            or (rule == "share" and not 0 <= value <= 1)
        ):
            want = {
                "positive": "a number above 0",
                "share": "a number in 0-1",
                "finite": "a finite number",
            }[rule]
            raise ValueError(f"{name}: expected {want}, got {value!r}")
    check_net_arch(config.policy.net_arch)
    ppo = config.ppo
    whole_games = config.algo == "move_ppo" and not spec.solitaire
    if not whole_games and (ppo.n_steps * config.n_envs) % ppo.batch_size:
        raise ValueError("ppo.batch_size: must divide ppo.n_steps * n_envs")
    for i, stage in enumerate(config.curriculum):
        if not isinstance(stage, dict) or set(stage) - {"variant", "until_steps"}:
            raise ValueError(f"curriculum[{i}]: expected keys variant and until_steps")
        stage_value = (stage.get("variant") or {}).get(spec.variant_arg)
        if stage_value not in spec.variants:
            raise ValueError(
                f"curriculum[{i}].variant.{spec.variant_arg}: {stage_value!r} "
                f"is not one of {list(spec.variants)}"
            )
        if not isinstance(stage.get("until_steps"), int):
            raise ValueError(f"curriculum[{i}].until_steps: expected int")
    pre = config.pretrain
    if pre.agent and not spec.solitaire:
        raise ValueError("pretrain.agent: behaviour cloning is for the solitaire games")
    if pre.agent and pre.episodes < 1:
        raise ValueError("pretrain.episodes: must be at least 1 when pretrain.agent is set")
    if spec.solitaire and config.self_play.enabled:
        raise ValueError("self_play.enabled: self-play needs a multi-player game")
    check = ALGORITHMS[config.algo].check
    if check is not None:
        load(check)(config, spec)
    if config.shaping == "heuristic_potential" and spec.slug not in POTENTIALS:
        raise ValueError(
            f"shaping: heuristic_potential is defined for {', '.join(POTENTIALS)} only"
        )


def check_net_arch(arch: list) -> None:
    """The layer widths the model loader accepts (``saved.MAX_LAYERS`` layers of at most
    65,536, no more than ``model_files.MAX_PARAMETERS`` between them), so that a run never
    trains a model it cannot load, nor tries to allocate more than memory holds."""
    from castle_envs.agents.learned.model_files import check_size, mlp_parameters
    from castle_envs.agents.learned.saved import MAX_LAYERS, valid_net_arch

    got = repr(arch) if len(repr(arch)) <= 60 else f"{repr(arch)[:57]}..."
    if not valid_net_arch(arch):
        raise ValueError(
            f"policy.net_arch: expected a list of 1 to {MAX_LAYERS} layer widths of 1 to 65536 "
            f"such as [256, 256], got {got}"
        )
    check_size(f"policy.net_arch {got}", mlp_parameters(arch, 1))


def check_move_ppo(config: TrainConfig, spec) -> None:
    from castle_envs.moves import MOVE_GAMES

    if spec.slug not in MOVE_GAMES:
        raise ValueError(
            f"algo: move_ppo needs a game with a move-feature view "
            f"({', '.join(MOVE_GAMES)}), not {spec.slug}"
        )
    from castle_envs.agents.learned.model_files import check_size
    from castle_envs.agents.learned.move_policy import MAX_CAPACITY

    m = config.move_ppo
    for name in ("capacity", "hidden"):
        if getattr(m, name) < 1:
            raise ValueError(f"move_ppo.{name}: must be at least 1, got {getattr(m, name)}")
    if m.capacity > MAX_CAPACITY:
        raise ValueError(f"move_ppo.capacity: must be at most {MAX_CAPACITY}, got {m.capacity}")
    # the state and move MLPs hold at least 2 * hidden**2 weights: refused here, before any
    # allocation, when the model it trains would be one the loader refuses
    check_size(f"move_ppo.hidden {m.hidden}", 2 * m.hidden * m.hidden)
    if not math.isfinite(m.temperature) or m.temperature <= 0:
        raise ValueError(f"move_ppo.temperature: expected a number above 0, got {m.temperature!r}")
    if m.init_model and m.init_linear:
        raise ValueError("move_ppo: give init_model (every weight) or init_linear, not both")
    if config.curriculum or config.shaping:
        raise ValueError("algo: move_ppo does not take curriculum or shaping")
    pre = config.pretrain
    if pre.agent:
        from castle_envs.agents.registry import parse_spec

        parse_spec(pre.agent)
        if pre.seed < 20_000_000:
            raise ValueError(
                f"pretrain.seed: the teacher's deals must be training deals, "
                f"20,000,000 or more, got {pre.seed}"
            )
    if pre.dagger < 0 or (pre.dagger and not pre.agent):
        raise ValueError("pretrain.dagger: rounds (0 or more) of a pretrain.agent teacher")
    levels = m.levels
    if levels:
        if not spec.solitaire:
            raise ValueError("move_ppo.levels: mixes the variants of a solitaire game")
        for value in levels:
            if value not in spec.variants:
                raise ValueError(f"move_ppo.levels: {value!r} is not one of {list(spec.variants)}")
        if config.n_envs % len(levels):
            raise ValueError(
                "move_ppo.levels: their count must divide n_envs (a level named "
                "twice gets twice the envs)"
            )
    if not spec.solitaire:
        # experiments/train_moves_aec.py: n_envs whole games per update (ppo.n_steps unused)
        from castle_envs.agents.registry import parse_spec

        for spec_text in [*config.opponents, config.eval.opponent]:
            parse_spec(spec_text)
        if not config.opponents and not config.self_play.enabled:
            raise ValueError("opponents: give fixed opponents or enable self_play")
    if config.seed < 20_000_000:
        raise ValueError(
            f"seed: move_ppo trains on deals seeded from here; use 20,000,000 or "
            f"more (the study and evaluation deals are below), got {config.seed}"
        )


def check_cem(config: TrainConfig, spec) -> None:
    if spec.slug not in LINEAR_GAMES:
        raise ValueError(
            "algo: cem trains the Castle Siege linear scorer; game must be castle-siege"
        )
    cem = config.cem
    for block in ("games", "fitness_weights", "eval_games"):
        for difficulty, value in getattr(cem, block).items():
            if difficulty not in spec.variants:
                raise ValueError(
                    f"cem.{block}.{difficulty}: not a difficulty (one of {list(spec.variants)})"
                )
            kind = float if block == "fitness_weights" else int
            if (
                isinstance(value, bool)
                or not isinstance(value, (int, float))
                or (kind is int and not float(value).is_integer())
                or value < 0
            ):
                raise ValueError(
                    f"cem.{block}.{difficulty}: expected a non-negative "
                    f"{kind.__name__}, got {value!r}"
                )
    if not cem.games or sum(cem.games.values()) < 1:
        raise ValueError("cem.games: needs at least one training deal")
    for name in ("population", "elite", "generations", "eval_every"):
        if getattr(cem, name) < 1:
            raise ValueError(f"cem.{name}: must be at least 1")
    if cem.elite > cem.population + 1:
        raise ValueError("cem.elite: cannot exceed population + 1 (the mean competes too)")
    if cem.workers < 0:
        raise ValueError("cem.workers: must be 0 (every core) or more")


def check_exit_siege(config: TrainConfig, spec) -> None:
    if spec.slug not in LINEAR_GAMES:
        raise ValueError(
            "algo: exit_siege trains the Castle Siege linear scorer; game must be castle-siege"
        )
    ex = config.exit_siege
    for name in ("rounds", "games", "eval_games", "iterations"):
        if getattr(ex, name) < 1:
            raise ValueError(f"exit_siege.{name}: must be at least 1, got {getattr(ex, name)}")
    if not math.isfinite(ex.temp) or ex.temp <= 0:
        raise ValueError(f"exit_siege.temp: expected a number above 0, got {ex.temp!r}")
    if config.seed < 20_000_000:
        raise ValueError(
            f"seed: exit_siege plays its training deals from here; use 20,000,000 "
            f"or more (the evaluation deals are below), got {config.seed}"
        )


def check_ntuple(config: TrainConfig, spec) -> None:
    from castle_envs.castle_siege.rules import DIFFICULTIES

    if spec.slug != "castle-siege":
        raise ValueError(
            "algo: ntuple_value learns a Castle Siege value; game must be castle-siege"
        )
    nt = config.ntuple
    for name in ("games", "chunk_games", "eval_games"):
        if getattr(nt, name) < 1:
            raise ValueError(f"ntuple.{name}: must be at least 1, got {getattr(nt, name)}")
    for name in ("eval_every", "guide_until"):
        if getattr(nt, name) < 0:
            raise ValueError(f"ntuple.{name}: must be 0 or more, got {getattr(nt, name)}")
    for name in ("lam", "eps", "shaped", "guide"):
        value = getattr(nt, name)
        if not math.isfinite(value) or not 0.0 <= value <= 1.0:
            raise ValueError(f"ntuple.{name}: expected a number in [0, 1], got {value!r}")
    if not math.isfinite(nt.lr) or nt.lr <= 0:
        raise ValueError(f"ntuple.lr: expected a number above 0, got {nt.lr!r}")
    if not math.isfinite(nt.lr_end) or nt.lr_end < 0:
        raise ValueError(f"ntuple.lr_end: expected 0 (none) or a number above 0, got {nt.lr_end!r}")
    levels = list(nt.levels) + list(nt.eval_levels)
    unknown = sorted({str(d) for d in levels} - set(DIFFICULTIES))
    if unknown:
        raise ValueError(f"ntuple levels {unknown}: known difficulties are {list(DIFFICULTIES)}")
    counts = list(nt.levels.values())
    if not counts or not all(type(c) is int and 0 < c <= 1000 for c in counts):
        raise ValueError(
            f"ntuple.levels: map difficulties to games a cycle (1-1000), got {nt.levels}"
        )
    if not nt.eval_levels:
        raise ValueError("ntuple.eval_levels: name at least one difficulty")
    if config.seed < 20_000_000:
        raise ValueError(
            f"seed: ntuple_value plays its training deals from here; use 20,000,000 "
            f"or more (the evaluation deals are below), got {config.seed}"
        )


def dump_config(config: TrainConfig | dict, path: str | Path) -> None:
    """``config`` as YAML, in schema order (``config.yaml`` of a run folder)."""
    data = config.to_dict() if isinstance(config, TrainConfig) else config
    with open(path, "w") as f:
        yaml.safe_dump(data, f, sort_keys=False)


def new_run_dir(config: TrainConfig | dict, run_dir=None) -> tuple[TrainConfig, Path]:
    """Resolve ``config``, create the run folder (default ``run_dir/NAME_TIMESTAMP``; an
    existing one must be empty) and save the resolved config in it as ``config.yaml``."""
    import time

    config = resolve(config)
    run_dir = Path(
        run_dir or Path(config.run_dir) / f"{config.name}_{time.strftime('%Y%m%d-%H%M%S')}"
    )
    # a new run writes its config, progress, evaluations and checkpoints over files of the
    # same names: only into an empty or new folder, never over another run or other files
    from .common import new_folder

    resume = f"continue that run with --resume {run_dir}, or give a new --run-dir"
    is_run = (run_dir / "config.yaml").is_file()
    new_folder(run_dir, "--run-dir", resume if is_run else "give a new or empty --run-dir")
    run_dir.mkdir(parents=True, exist_ok=True)
    dump_config(config, run_dir / "config.yaml")
    return config, run_dir


def levels_of(config: TrainConfig) -> list[dict]:
    """The variants trained side by side (``move_ppo.levels``), else the config's one."""
    from castle_envs.registry import get_game

    arg = get_game(config.game).variant_arg
    return [{arg: v} for v in config.move_ppo.levels] or [dict(config.variant)]
