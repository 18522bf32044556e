"""``castle-envs demo``: the newcomer's first run: agents on Castle Siege Very Hard.

Plays ``--episodes`` seeded games per agent on the same deals and prints each agent's win
rate with its 95% Wilson interval: by default uniform random, the rule-based heuristic of
``castle_envs.agents.baselines.castle_siege``, and ``trained``, the shipped trained move scorer with its
endgame search (``models/castle_siege_very_hard_linear``); then the strongest shipped agent,
``best`` (a search, about 2 s a game), on the first ``--best-episodes`` (10) of those deals,
so that the whole demo takes under a minute. ``castle-envs evaluate`` measures more agents,
variants and events on as many deals as you like.
"""

from __future__ import annotations

import time

import gymnasium
import numpy as np
from castle_envs.agents.registry import make_agent

import castle_envs  # noqa: F401  (registers the ids)

from .stats import wilson_interval


def add_parser(sub):
    p = sub.add_parser("demo", help="play agents on Castle Siege Very Hard, print win rates")
    # 100: the trained scorer's endgame search costs about 0.15 s a Very Hard game; with best
    # on 10 deals the demo took 47-55 CPU-seconds on the 2-core reference machine with the
    # kernels cached and 122 when it compiled them first (user+sys; `make demo`'s pip
    # install comes on top)
    p.add_argument("--episodes", type=int, default=100)
    p.add_argument("--difficulty", default="very_hard")
    p.add_argument("--seed", type=int, default=0)
    # the strongest agent searches (about 2 s a Very Hard game): a few deals show it
    p.add_argument(
        "--best-episodes",
        type=int,
        default=10,
        help="deals for the strongest shipped agent (best) after the others "
        "(default 10; 0 skips it)",
    )
    p.add_argument(
        "--agent",
        dest="agents",
        action="append",
        help="agent specs, comma-separated or repeated (default random,heuristic,"
        "trained; best is the strongest shipped agent)",
    )
    p.set_defaults(run=run)


DEFAULT_AGENTS = "random,heuristic,trained"


def demo_agents(specs: list[str] | None = None) -> dict:
    """Agents by the label the demo prints: the spec as given, an agent name that
    ``evaluate --agent`` takes too (``trained``: the shipped trained scorer with its endgame
    search, or without numba the scorer alone; ``best`` as itself)."""
    from .evaluate import parse_agents, resolve_best

    specs = specs or parse_agents(None, DEFAULT_AGENTS)
    return {spec: make_agent(resolve_best(spec, "castle-siege"), "castle-siege") for spec in specs}


def play_episodes(agent, difficulty: str, episodes: int, seed: int) -> int:
    env = gymnasium.make("castle_envs/CastleSiege-v0", difficulty=difficulty)
    wins = 0
    for episode in range(episodes):
        agent.reset(seed + episode)
        obs, info = env.reset(seed=seed + episode)  # same deals for every agent
        done = False
        while not done:
            state = (
                env.unwrapped.state.player_view()  # type: ignore[attr-defined]  # the game's
                if agent.needs_state
                else None
            )
            action = agent.act(obs, info["action_mask"], state)
            obs, reward, terminated, truncated, info = env.step(action)
            done = terminated or truncated
        wins += int(info["won"])
    return wins


def run(args) -> int:
    if args.episodes < 1:
        raise ValueError("--episodes must be at least 1")
    if args.best_episodes < 0:
        raise ValueError("--best-episodes must be 0 or more")
    print(
        f"Castle Siege {args.difficulty}: {args.episodes} deals (seeds {args.seed}.."
        f"{args.seed + args.episodes - 1}), the same deals for every agent"
    )
    from .evaluate import parse_agents

    def report(name: str, agent, episodes: int, note: str = "") -> None:
        start = time.perf_counter()
        wins = play_episodes(agent, args.difficulty, episodes, args.seed)
        low, high = wilson_interval(wins, episodes)
        print(
            f"  {name:<10} win rate {wins / episodes:6.1%}  "
            f"95% CI [{low:.1%}, {high:.1%}]  ({time.perf_counter() - start:.1f} s{note})"
        )

    for name, agent in demo_agents(parse_agents(args.agents, DEFAULT_AGENTS)).items():
        report(name, agent, args.episodes)
    if not args.agents and args.best_episodes > 0:
        from castle_envs.agents.registry import resolve_spec

        agent = make_agent("best", "castle-siege")
        note = f", first {args.best_episodes} deals; {resolve_spec('best', 'castle-siege')}"
        report("best", agent, args.best_episodes, note)
    return 0


__all__ = ["run", "np"]
