"""Agents by name, as the command line writes them.

Every name is an entry of ``AGENT_KINDS`` (``AgentKind``: the function that builds it, the
games it plays, whether it takes options), and ``register_agent`` adds one:

- ``random``, ``greedy``, ``heuristic`` (the game's hand-written policies, ``HEURISTICS``);
- ``mcts`` (``mcts:sims=200,rollout=heuristic``; also ``time``, ``c``,
  ``max_rollout_steps``, ``widening``);
- ``model:DIR`` (any saved model directory: its ``model.json`` says what it is, see
  ``learned.saved``), ``ppo:DIR`` (a MaskablePPO directory; ``ppo:FILE.zip,trust_pickle=1``
  for a Stable-Baselines3 zip of your own);
- Castle Siege: ``linear:PATH`` (a trained linear move scorer), ``search`` (perfect-
  information Monte Carlo over the compiled solver), ``ismcts`` (information-set MCTS over
  the player's views); Castellion: ``planner``, ``pimc``; each module's ``build_agent``
  documents its options;
- ``best``: the game's strongest shipped agent (``BEST_AGENTS``); Castle Siege's
  ``trained``: its shipped trained move scorer with its endgame search
  (``SIEGE_TRAINED_SCORER``; ``castle-envs demo`` names it so) and ``value``: its shipped
  learned value alone, one evaluation per legal move, no search (``SIEGE_VALUE``).

``make_agent(spec, game)`` builds one for a game (the registry slug);
``split_agent_list("random,mcts:sims=50,rollout=heuristic,heuristic")`` splits a comma list,
keeping ``key=value`` options with the agent before them. Bad names and options raise
``ValueError`` with the fix in the message.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from castle_envs.registry import get_game, load

from .base import Agent, PolicyAgent, RandomAgent
from .options import locate_shipped, parse_options, shipped_models_dir  # noqa: F401  (also here)

#: ``best``: the strongest shipped agent of each game, by measured win rate (the model
#: cards and docs/ give the figures), strongest first, each with the module it needs: the
#: first one whose module is installed is chosen. A ``{models}/`` prefix is the shipped
#: models folder.
#: Castle Siege's shipped trained move scorer with its endgame search, or without numba the
#: scorer alone (its endgame search is the compiled solver); ``castle-envs demo``'s ``trained``
SIEGE_TRAINED_SCORER: list[tuple[str, str | None]] = [
    ("model:{models}/castle_siege_very_hard_linear", "numba"),
    ("linear:{models}/castle_siege_very_hard_linear/policy.json", None),
]
#: Castle Siege's shipped learned value (an n-tuple afterstate value trained by self-play),
#: playing alone: the legal move whose afterstate it values most, no search; ``value``
SIEGE_VALUE: list[tuple[str, str | None]] = [("model:{models}/castle_siege_ntuple_value", None)]
BEST_AGENTS: dict[str, list[tuple[str, str | None]]] = {
    "castle-siege": [
        ("model:{models}/castle_siege_very_hard_ismcts_endgame", "numba"),
        *SIEGE_TRAINED_SCORER,
    ],
    "castellion": [("pimc", "numba"), ("heuristic", None)],
    "castle-rooms": [("heuristic", None)],
    "castell": [("heuristic", None)],
}


def resolve_spec(spec: str, game: str) -> str:
    """``best`` -> the game's strongest shipped agent spec that can run here (``BEST_AGENTS``);
    any other spec unchanged."""
    if not isinstance(spec, str) or spec.strip().lower() != "best":
        return spec
    return first_runnable(BEST_AGENTS[get_game(game).slug])


def first_runnable(choices: list[tuple[str, str | None]]) -> str:
    """The first spec template of ``(template, module it needs)`` pairs whose module is
    installed (the last one when none is), its ``{models}/`` the shipped models folder
    (relative to the working directory when it lies below it)."""
    import importlib.util

    template = next(
        (t for t, needs in choices if needs is None or importlib.util.find_spec(needs) is not None),
        choices[-1][0],
    )
    models = shipped_models_dir()
    try:
        shown = models.relative_to(Path.cwd())
    except ValueError:
        shown = models
    return template.replace("{models}", str(shown) if str(shown) != "." else os.curdir)


#: the hand-written ``policy(state, rng)`` of each game, by agent name
HEURISTICS: dict[str, dict[str, str]] = {
    "castle-siege": {
        "heuristic": "castle_envs.agents.baselines.castle_siege:heuristic_policy",
        "greedy": "castle_envs.agents.baselines.castle_siege:greedy_policy",
    },
    "castellion": {"heuristic": "castle_envs.agents.baselines.castellion:heuristic_policy"},
    "castle-rooms": {"heuristic": "castle_envs.castle_rooms.balance:greedy_policy"},
    "castell": {"heuristic": "castle_envs.castell.measure:heuristic_policy"},
}

#: the heuristic position value ``value(state)`` (one ordeal, or the game's unit of
#: progress, about 1) that ``shaping: heuristic_potential`` turns into a potential-based
#: reward, by game
POTENTIALS: dict[str, str] = {
    "castellion": "castle_envs.agents.baselines.castellion:heuristic_potential",
}


def heuristic_policy(game: str, name: str = "heuristic"):
    """The game's hand-written ``policy(state, rng)`` named ``name`` (``heuristic``/``greedy``,
    ``HEURISTICS``), or ValueError when the game has none."""
    target = HEURISTICS.get(get_game(game).slug, {}).get(name)
    if target is not None:
        return load(target)
    raise ValueError(
        f"no {name} agent for {game} yet; agents for it: {', '.join(available_agents(game))}"
    )


def heuristic_potential(game: str):
    """The game's heuristic position value (``POTENTIALS``), or None."""
    target = POTENTIALS.get(get_game(game).slug)
    return None if target is None else load(target)


@dataclass(frozen=True)
class AgentKind:
    """One agent name of the command line. ``build`` makes the agent: a function ``(name,
    text after "name:", game slug, seed) -> Agent``, or ``"module:function"`` naming one,
    imported only when the agent is made. ``games``: the games it plays (None: all);
    ``shown``: how ``available_agents`` writes it; ``argument``: it takes text after the
    colon; ``key_values``: that text is ``key=value`` options, which a comma list may
    spread over several items."""

    name: str
    build: Callable[..., Agent] | str
    games: tuple[str, ...] | None = None
    shown: str | None = None
    argument: bool = True
    key_values: bool = True


#: every agent kind by name; ``register_agent`` adds one (a name is an entry, never a branch)
AGENT_KINDS: dict[str, AgentKind] = {}


def register_agent(kind: AgentKind) -> None:
    """Add an agent kind (a name already taken raises ValueError)."""
    if kind.name in AGENT_KINDS:
        raise ValueError(f"agent name {kind.name!r} is taken")
    AGENT_KINDS[kind.name] = kind


def _build_best(name: str, rest: str, game: str, seed: int | None) -> Agent:
    return make_agent(resolve_spec("best", game), game, seed)


def _build_trained(name: str, rest: str, game: str, seed: int | None) -> Agent:
    return make_agent(first_runnable(SIEGE_TRAINED_SCORER), game, seed)


def _build_value(name: str, rest: str, game: str, seed: int | None) -> Agent:
    return make_agent(first_runnable(SIEGE_VALUE), game, seed)


def _build_random(name: str, rest: str, game: str, seed: int | None) -> Agent:
    return RandomAgent(seed)


def _build_heuristic(name: str, rest: str, game: str, seed: int | None) -> Agent:
    return PolicyAgent(heuristic_policy(game, name), name, seed)


def _build_model(name: str, rest: str, game: str, seed: int | None) -> Agent:
    from castle_envs.agents.learned.saved import load_agent

    if not rest.strip():
        raise ValueError("model needs a model directory: model:models/DIR")
    return load_agent(locate_shipped(rest.strip(), shipped_models_dir(), "models"), game, seed)


def _ppo_agent(name: str, rest: str, game: str, seed: int | None) -> Agent:
    """``ppo:DIR`` (a safe model directory) or ``ppo:FILE.zip,trust_pickle=1``."""
    from castle_envs.agents.learned.ppo import PPOAgent
    from castle_envs.agents.learned.saved import load_agent, load_sb3_zip_trusted

    path, _, opts = rest.strip().partition(",")
    path = path.strip()
    options = parse_options(opts, {"trust_pickle": _flag}, "ppo") if opts else {}
    if not path:
        raise ValueError("ppo agent needs a model path: ppo:models/DIR")
    if os.path.isdir(path):
        if options:
            raise ValueError(
                "trust_pickle applies to .zip files only; a model directory loads safely without it"
            )
        agent = load_agent(path, game, seed)
        agent.name = f"ppo:{path}"
        return agent
    if not (os.path.isfile(path) or os.path.isfile(path + ".zip")):
        raise FileNotFoundError(f"no MaskablePPO model at {path!r}")
    if not options.get("trust_pickle"):
        raise ValueError(
            f"refused {path!r}: a Stable-Baselines3 zip holds pickled objects that can run "
            "code when loaded. Load a safe model directory instead (model:DIR, what "
            "castle-envs train writes), or, for a file you made yourself, "
            f"ppo:{path},trust_pickle=1"
        )
    model = load_sb3_zip_trusted(path)
    return PPOAgent(model.policy, f"ppo:{rest.strip()}", seed)


def _flag(text: str) -> bool:
    value = text.strip().lower()
    if value in ("1", "true", "yes"):
        return True
    if value in ("0", "false", "no"):
        return False
    raise ValueError(f"expected 1 or 0, got {text!r}")


for _kind in (
    AgentKind("best", _build_best, argument=False, key_values=False),
    AgentKind("random", _build_random, argument=False, key_values=False),
    AgentKind("greedy", _build_heuristic, argument=False, key_values=False),
    AgentKind("heuristic", _build_heuristic, argument=False, key_values=False),
    AgentKind("mcts", "castle_envs.agents.search.mcts:build_agent"),
    AgentKind("model", _build_model, shown="model:DIR", key_values=False),
    AgentKind("ppo", _ppo_agent, shown="ppo:DIR"),
    AgentKind(
        "linear",
        "castle_envs.agents.learned.castle_siege_linear:build_agent",
        games=("castle-siege",),
        shown="linear:PATH",
    ),
    AgentKind(
        "search", "castle_envs.agents.search.castle_siege_search:build_agent", ("castle-siege",)
    ),
    AgentKind(
        "ismcts", "castle_envs.agents.search.castle_siege_ismcts:build_agent", ("castle-siege",)
    ),
    AgentKind(
        "planner", "castle_envs.agents.search.castellion_planner:build_agent", ("castellion",)
    ),
    AgentKind("pimc", "castle_envs.agents.search.castellion_pimc:build_agent", ("castellion",)),
    AgentKind("trained", _build_trained, games=("castle-siege",), argument=False, key_values=False),
    AgentKind("value", _build_value, games=("castle-siege",), argument=False, key_values=False),
):
    register_agent(_kind)

#: the names, in the order the command line lists them
AGENT_NAMES = tuple(AGENT_KINDS)
#: the games the linear move scorer plays (``algo: cem``, ``linear:PATH``; its columns close
#: the game's move view)
LINEAR_GAMES: tuple[str, ...] = AGENT_KINDS["linear"].games or ()


def game_agents(game: str) -> list[str]:
    """The agent names made for ``game`` alone (``AgentKind.games``)."""
    slug = get_game(game).slug
    return [k.name for k in AGENT_KINDS.values() if k.games is not None and slug in k.games]


def available_agents(game: str) -> list[str]:
    names = ["best", "random", "mcts", "model:DIR", "ppo:DIR"] + [
        AGENT_KINDS[name].shown or name for name in game_agents(game)
    ]
    for name in ("heuristic", "greedy"):
        if name in HEURISTICS.get(get_game(game).slug, {}):
            names.insert(1, name)
    return names


def parse_spec(spec: str) -> tuple[str, str]:
    """``'mcts:sims=5'`` -> ``('mcts', 'sims=5')``; unknown names raise ValueError."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"empty agent name; choose one of {', '.join(AGENT_NAMES)}")
    name, _, rest = spec.strip().partition(":")
    name = name.strip().lower()
    if name not in AGENT_KINDS:
        raise ValueError(
            f"unknown agent {name!r}; choose one of {', '.join(AGENT_NAMES)} "
            "(e.g. random, heuristic, mcts:sims=200, model:models/DIR)"
        )
    return name, rest


def make_agent(spec: str, game: str, seed: int | None = None) -> Agent:
    name, rest = parse_spec(spec)
    kind = AGENT_KINDS[name]
    if kind.games is not None and get_game(game).slug not in kind.games:
        raise ValueError(f"the {name} agent plays {', '.join(kind.games)} only, not {game!r}")
    if rest and not kind.argument:
        if name == "best":
            raise ValueError("best takes no options: it names the game's strongest shipped agent")
        raise ValueError(f"the {name} agent takes no options")
    return load(kind.build)(name, rest, game, seed)


def split_agent_list(text: str) -> list[str]:
    """Split a comma list of agent specs; ``key=value`` items belong to the agent before."""
    specs: list[str] = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            raise ValueError(f"empty agent name in {text!r}")
        if "=" in item and ":" not in item.split("=")[0]:
            head = specs[-1].partition(":")[0].strip().lower() if specs else ""
            if head not in AGENT_KINDS or not AGENT_KINDS[head].key_values:
                raise ValueError(f"option {item!r} does not follow an agent that takes options")
            specs[-1] += ("," if not specs[-1].endswith(":") else "") + item
        else:
            specs.append(item)
    return specs
