"""``castle-envs demo``: the newcomer's first run: agents on Castle Siege Very Hard.

Plays ``--episodes`` seeded games per agent on the same deals and prints each agent's win
rate with its 95% Wilson interval: by default uniform random, the rule-based heuristic of
``castle_envs.agents.baselines.castle_siege``, ``value``, the shipped learned value playing
alone (one evaluation per legal move, no search: ``models/castle_siege_ntuple_value``), and
``trained``, the shipped trained move scorer with its endgame search
(``models/castle_siege_very_hard_linear``); then the strongest shipped agent,
``best`` (a search, about 3 s a game), on the first ``--best-episodes`` (10) of those deals,
so that the whole demo takes about a minute. ``best``'s games run on a second process from
the start, beside the others: on a first run its kernels take the longest to compile.
``castle-envs evaluate`` measures more agents, variants and events on as many deals as you
like.
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
    # on 10 deals (on a second process) the demo took 78 and 83 s wall (108 and 116 CPU-s)
    # on the 2-core reference machine when it compiled its kernels first, 48 s once
    # compiled (`make demo`'s pip install comes on top)
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
        "value,trained; best is the strongest shipped agent)",
    )
    p.set_defaults(run=run)


DEFAULT_AGENTS = "random,heuristic,value,trained"
#: the deal of the demo's untimed warm-up game: a training seed, no study deal
WARM_UP = 20_000_000


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

    def play_all() -> None:
        for name, agent in demo_agents(parse_agents(args.agents, DEFAULT_AGENTS)).items():
            start = time.perf_counter()
            wins = play_episodes(agent, args.difficulty, args.episodes, args.seed)
            report(name, wins, args.episodes, f"{time.perf_counter() - start:.1f} s")

    if args.agents or args.best_episodes == 0:
        play_all()
        return 0
    from castle_envs.agents.registry import resolve_spec

    from .parallel import background

    # best's games start at once on another process: its kernels take the longest to
    # compile on a first run, and meanwhile this process plays the other agents. It first
    # plans one endgame as best does: the endgame planner's kernels compile here while the
    # other process compiles the search, and that one loads them from the cache when its
    # first endgame comes (core.jit: one process compiles a kernel, the others wait for it)
    with background(play_best, args.difficulty, args.best_episodes, args.seed) as best:
        warm_best_endgame(args.difficulty)
        play_all()
        wins, seconds = best.result()
    spec = resolve_spec("best", "castle-siege")
    report(
        "best",
        wins,
        args.best_episodes,
        f"{seconds:.1f} s, first {args.best_episodes} deals; {spec}",
    )
    return 0


def report(name: str, wins: int, episodes: int, note: str) -> None:
    low, high = wilson_interval(wins, episodes)
    print(
        f"  {name:<10} win rate {wins / episodes:6.1%}  95% CI [{low:.1%}, {high:.1%}]  ({note})",
        flush=True,
    )


def warm_best_endgame(difficulty: str) -> None:
    """Plan one endgame with ``best``'s endgame planner (on a training deal, the heuristic
    playing until no card is unseen), which compiles its kernels: the first run's longest
    compile after the search's."""
    import numpy as np
    from castle_envs.agents.baselines.castle_siege import heuristic_policy

    from castle_envs.castle_siege.rules import State

    planner = getattr(getattr(make_agent("best", "castle-siege"), "policy", None), "endgame", None)
    if planner is None:  # best is another kind of agent here (no numba): nothing to warm
        return
    rng = np.random.default_rng(WARM_UP)
    state = State.new_game(np.random.default_rng(WARM_UP), difficulty=difficulty)
    while not state.outcome and state.deck_size != int(state.recycled.sum()):
        state.apply_action(heuristic_policy(state, rng))
    if not state.outcome:
        planner.reset()
        planner.move(state.player_view())


def play_best(difficulty: str, episodes: int, seed: int) -> tuple[int, float]:
    """The strongest shipped agent's wins on the demo's first ``episodes`` deals, and the
    seconds it took (compiling its kernels included, on a first run)."""
    from castle_envs.core.jit import general_notice_written

    general_notice_written()  # the demo's own process says it once
    start = time.perf_counter()
    wins = play_episodes(make_agent("best", "castle-siege"), difficulty, episodes, seed)
    return wins, time.perf_counter() - start


__all__ = ["run", "np"]
