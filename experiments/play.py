"""``castle-envs play GAME``: a person plays in the terminal.

The board is drawn with the env's ``ansi`` renderer, the legal moves are listed in words
and chosen by number. Bad input gets a message and a new prompt, never a crash; ``q``
quits. In the multi-player games the person holds the seats in ``--human`` (default 0;
``--hotseat`` for all) and the ``--opponent`` agent (default the game's heuristic) plays the
others.
"""
from __future__ import annotations

import sys

import numpy as np

from .common import add_game_arguments, game_and_variant


def add_parser(sub):
    p = sub.add_parser("play", help="play a game in the terminal")
    add_game_arguments(p)
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--human", type=int, nargs="*", default=[0],
                   help="multi-player games: the seats a person plays (default 0)")
    p.add_argument("--hotseat", action="store_true", help="a person plays every seat")
    p.add_argument("--opponent", default="heuristic",
                   help="multi-player games: the agent in the other seats (default heuristic; "
                        "best, random, mcts:sims=50, model:DIR, linear:PATH ...)")
    p.set_defaults(run=run)


def run(args, stdin=None, stdout=None) -> int:
    spec, variant = game_and_variant(args)
    env = spec.make(render_mode="ansi", **variant)
    session = _Session(stdin or sys.stdin, stdout or sys.stdout)
    if spec.api == "gymnasium":
        return _play_solitaire(env, args.seed, session)
    seats = set(range(env.num_players)) if args.hotseat else set(args.human or [])
    bad = sorted(s for s in seats if not 0 <= s < env.num_players)
    if bad:
        raise ValueError(f"--human seats {bad} are not seats 0-{env.num_players - 1}")
    from castle_envs.agents import make_agent

    from .evaluate import resolve_best
    opponent = make_agent(resolve_best(args.opponent, spec.slug), spec.slug, seed=args.seed)
    return _play_multiplayer(env, args.seed, seats, opponent, session)


class _Session:
    def __init__(self, stdin, stdout):
        self.stdin, self.stdout = stdin, stdout

    def say(self, text=""):
        print(text, file=self.stdout, flush=True)

    def choose(self, state, mask) -> int | None:
        """A legal action typed by the person, or None when they quit (q or end of input)."""
        legal = [int(a) for a in np.flatnonzero(mask)]
        for i, action in enumerate(legal):
            self.say(f"  {i:>3}  {state.describe_action(action)}")
        while True:
            self.stdout.write(f"move [0-{len(legal) - 1}, q to quit]> ")
            self.stdout.flush()
            line = self.stdin.readline()
            if not line:
                self.say("\n(end of input)")
                return None
            text = line.strip().lower()
            if text in ("q", "quit", "exit"):
                return None
            if text.isdigit() and int(text) < len(legal):
                return legal[int(text)]
            self.say(f"'{line.strip()}' is not a move number: type 0-{len(legal) - 1} or q")


def _play_solitaire(env, seed, session) -> int:
    obs, info = env.reset(seed=seed)
    total = 0.0
    while True:
        session.say(env.render())
        action = session.choose(env.state, info["action_mask"])
        if action is None:
            session.say("game abandoned")
            return 0
        session.say(f"> {env.state.describe_action(action)}")
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        if terminated or truncated:
            session.say(env.render())
            session.say(f"game over: return {total:g}")
            return 0


def _play_multiplayer(env, seed, humans, opponent, session) -> int:
    env.reset(seed=seed)
    totals = {agent: 0.0 for agent in env.agents}
    for agent in env.agent_iter():
        obs, reward, terminated, truncated, info = env.last()
        totals[agent] += reward
        if terminated or truncated:
            env.step(None)
            continue
        seat = env.agent_name_mapping[agent]
        mask = obs["action_mask"].astype(bool)
        if seat in humans:
            session.say(env.render())
            session.say(f"{agent} to move")
            action = session.choose(env.state, mask)
            if action is None:
                session.say("game abandoned")
                return 0
        else:
            state = env.state.clone() if opponent.needs_state else None
            action = opponent.act(obs, mask, state)
        session.say(f"{agent}: {env.state.describe_action(action)}")
        env.step(action)
    session.say(env.render())
    session.say("game over: " + ", ".join(f"{a} {r:+g}" for a, r in totals.items()))
    return 0
