"""Agents by name, as the command line writes them.

``random``, ``greedy``, ``heuristic``, ``mcts`` (options ``mcts:sims=200,rollout=heuristic``;
also ``time``, ``c``, ``max_rollout_steps``), ``model:DIR`` (any saved model directory,
``castle_envs.agents.saved``: its ``model.json`` says what it is, e.g. a MaskablePPO policy,
the linear scorer, the search agent or a move-feature network ``move_policy``), ``ppo:DIR`` (a MaskablePPO
model directory; ``ppo:FILE.zip,trust_pickle=1`` for a Stable-Baselines3 zip of your own),
``linear:PATH`` (a trained Castle Siege linear move scorer, ``castle_envs.agents.castle_siege_linear``),
``search`` (Castle Siege: perfect-information Monte Carlo over the compiled solver,
``castle_envs.agents.castle_siege_search``; options ``samples``, ``candidates``, ``nodes``,
``endgame``, ``policy=PATH``), ``ismcts`` (Castle Siege: information-set MCTS over the
player's views, ``castle_envs.agents.castle_siege_ismcts``; options ``iterations``,
``width``, ``temp``, ``c``, ``noise``, ``shaped``, ``leaf``, ``endgame``, ``policy=PATH``).
``make_agent(spec, game)``
builds one for a game (the registry slug); ``split_agent_list("random,mcts:sims=50,
rollout=heuristic,heuristic")`` splits a comma list, keeping ``key=value`` options with the
agent before them. Bad names and options raise ``ValueError`` with the fix in the message.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from castle_envs.registry import GAMES, get_game, load

from .base import Agent, PolicyAgent, RandomAgent
from .options import locate_shipped, parse_options, shipped_models_dir  # noqa: F401  (also here)

AGENT_NAMES = (
    "best",
    "random",
    "greedy",
    "heuristic",
    "mcts",
    "model",
    "ppo",
    "linear",
    "search",
    "ismcts",
    "planner",
    "pimc",
)

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


_MCTS_OPTIONS = {
    "sims": int,
    "time": float,
    "c": float,
    "rollout": str,
    "max_rollout_steps": int,
    "widening": float,
}


def heuristic_policy(game: str, name: str = "heuristic"):
    """The game's hand-written ``policy(state, rng)`` named ``name`` (``heuristic``/``greedy``,
    the game spec's ``heuristics``), or ValueError when the game has none."""
    spec = get_game(game)
    if name in spec.heuristics:
        return load(spec.heuristics[name])
    raise ValueError(
        f"no {name} agent for {game} yet; agents for it: {', '.join(available_agents(game))}"
    )


#: how ``available_agents`` writes the game-only agents that take an argument
_SHOWN = {"linear": "linear:PATH"}


def available_agents(game: str) -> list[str]:
    names = ["best", "random", "mcts", "model:DIR", "ppo:DIR"] + [
        _SHOWN.get(name, name) for name in get_game(game).agents
    ]
    for name in ("heuristic", "greedy"):
        try:
            heuristic_policy(game, name)
        except (ValueError, ImportError):
            continue
        names.insert(1, name)
    return names


def _only_for(name: str, game: str) -> None:
    """ValueError unless ``name`` is one of the agents made for ``game`` alone."""
    if name not in get_game(game).agents:
        games = ", ".join(slug for slug, spec in GAMES.items() if name in spec.agents)
        raise ValueError(f"the {name} agent plays {games} only, not {game!r}")


def parse_spec(spec: str) -> tuple[str, str]:
    """``'mcts:sims=5'`` -> ``('mcts', 'sims=5')``; unknown names raise ValueError."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"empty agent name; choose one of {', '.join(AGENT_NAMES)}")
    name, _, rest = spec.strip().partition(":")
    name = name.strip().lower()
    if name not in AGENT_NAMES:
        raise ValueError(
            f"unknown agent {name!r}; choose one of {', '.join(AGENT_NAMES)} "
            "(e.g. random, heuristic, mcts:sims=200, model:models/DIR)"
        )
    return name, rest


def make_agent(spec: str, game: str, seed: int | None = None) -> Agent:
    name, rest = parse_spec(spec)
    if name == "best":
        if rest:
            raise ValueError("best takes no options: it names the game's strongest shipped agent")
        return make_agent(resolve_spec("best", game), game, seed)
    if name == "random":
        if rest:
            raise ValueError("the random agent takes no options")
        return RandomAgent(seed)
    if name in ("heuristic", "greedy"):
        if rest:
            raise ValueError(f"the {name} agent takes no options")
        return PolicyAgent(heuristic_policy(game, name), name, seed)
    if name == "mcts":
        from .mcts import MCTSAgent

        options = parse_options(rest, _MCTS_OPTIONS, "mcts")
        if options.get("rollout") == "heuristic":
            options["rollout_policy"] = heuristic_policy(game, "heuristic")
        agent = MCTSAgent(seed, **options)
        agent.name = "mcts" + (":" + rest if rest else "")
        return agent
    if name == "linear":
        _only_for("linear", game)
        if not rest.strip():
            raise ValueError(
                "linear needs a weights file: linear:models/castle_siege_linear/policy.json"
            )
        from .castle_siege_linear import LinearPolicy

        path, _, opts = rest.strip().partition(",")
        options = parse_options(opts, {"endgame": int}, "linear") if opts else {}
        policy: Callable = LinearPolicy.load(  # each kind of agent has its own policy class
            locate_shipped(path.strip(), shipped_models_dir(), "models"),
            endgame_nodes=options.get("endgame", 0),
        )
        return PolicyAgent(policy, f"linear:{rest.strip()}", seed)
    if name in ("search", "ismcts"):
        _only_for(name, game)
        from . import castle_siege_ismcts, castle_siege_search

        searches: dict[str, tuple[dict, Callable]] = {
            "search": (castle_siege_search.SEARCH_OPTIONS, castle_siege_search.make_search_policy),
            "ismcts": (castle_siege_ismcts.ISMCTS_OPTIONS, castle_siege_ismcts.make_ismcts_policy),
        }
        known, make = searches[name]
        options = parse_options(rest, {**known, "policy": str}, name)
        policy = make(
            options, shipped_models_dir() / "castle_siege_very_hard_linear" / "policy.json"
        )
        return PolicyAgent(policy, name + (":" + rest if rest else ""), seed)
    if name == "planner":
        _only_for("planner", game)
        from .castellion_planner import OPTION_TYPES, make_planner_policy

        policy = make_planner_policy(parse_options(rest, OPTION_TYPES, "planner"))
        return PolicyAgent(policy, "planner" + (":" + rest if rest else ""), seed)
    if name == "pimc":
        _only_for("pimc", game)
        from .castellion_pimc import OPTION_TYPES as PIMC_OPTIONS, make_pimc_policy

        policy = make_pimc_policy(parse_options(rest, PIMC_OPTIONS, "pimc"))
        return PolicyAgent(policy, "pimc" + (":" + rest if rest else ""), seed)
    if name == "model":
        from .saved import load_agent

        if not rest.strip():
            raise ValueError("model needs a model directory: model:models/DIR")
        return load_agent(locate_shipped(rest.strip(), shipped_models_dir(), "models"), game, seed)
    return _ppo_agent(rest, game, seed)


def _ppo_agent(rest: str, game: str, seed: int | None = None) -> Agent:
    """``ppo:DIR`` (a safe model directory) or ``ppo:FILE.zip,trust_pickle=1``."""
    from .ppo import PPOAgent
    from .saved import load_agent, load_sb3_zip_trusted

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


def split_agent_list(text: str) -> list[str]:
    """Split a comma list of agent specs; ``key=value`` items belong to the agent before."""
    specs: list[str] = []
    for item in (t.strip() for t in text.split(",")):
        if not item:
            raise ValueError(f"empty agent name in {text!r}")
        if "=" in item and ":" not in item.split("=")[0]:
            if not specs or not specs[-1].startswith(
                ("mcts", "linear", "ppo", "search", "ismcts", "planner", "pimc")
            ):
                raise ValueError(f"option {item!r} does not follow an agent that takes options")
            specs[-1] += ("," if not specs[-1].endswith(":") else "") + item
        else:
            specs.append(item)
    return specs
