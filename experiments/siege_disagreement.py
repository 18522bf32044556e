"""Where hidden information hurts in Castle Siege: do sampled worlds agree on the move?

Long, Sturtevant, Buro and Furtak (2010) explain when perfect-information Monte Carlo works
by how much the worlds consistent with a player's view disagree about the right move. This
study measures it along the games of an agent (default: ``--agent best``, the ``ismcts``
agent), deal by deal:

1. replay the agent's game on the deal exactly as ``castle-envs evaluate`` plays it (agent
   seed ``[agent_seed, deal, 0]``, the player's view handed to the agent);
2. at every decision the agent searched, take the ``ismcts`` root's moves (or, for another
   agent, the linear scorer's best ``--candidates``), deal ``--worlds`` worlds consistent
   with the view (``State.determinize``, from a generator of its own so the agent's game is
   not changed) and ask the compiled solver, world by world, which of those moves lead to a
   proven win with ``--nodes`` nodes (``solvers.castle_siege_kernel.evaluate_moves``: probes, then
   depth-first search);
3. per decision, record each move's count of worlds won and how many worlds some move wins.

A decision is **informative** when some move wins some world, and then the worlds
**disagree** when no move wins in every world that some move wins: a player who knew the
deal would move differently in different worlds, and the best a player who does not know it
can do is the move that wins the most of them. The **fusion gap** of a decision is the share
of worlds some move wins (what clairvoyance gets) less the best single move's share (what a
player gets): zero where the worlds agree. The summary splits decisions by whether the agent
won the game, and by turn.

    python -m castle_envs.experiments.siege_disagreement --seed 1000000 --episodes 200 \\
        --out docs/data/castle_siege_disagreement/vh-1000000-n200.jsonl

The journal holds one line per game (its decisions inside) and is resumed: games already in
it are skipped. ``--summary`` prints (and with ``--json`` writes) the figures of journals.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from castle_envs.castle_siege.rules import BATTLE, State


def decision_worlds(
    view: State, moves: list[int], worlds: int, nodes: int, rng: np.random.Generator, solver
) -> list[list[int]]:
    """Per world dealt from ``view``, which of ``moves`` lead to a proven win (0/1 each)."""
    from castle_envs.agents.solvers import castle_siege_kernel as S

    from castle_envs.castle_siege.vector import write_state

    w, memo, weights = solver
    rules = {"attack": view.attack, "defeated": view.defeated}
    recent, leave = view.attack == "most_recent", view.defeated == "leave_game"
    out = []
    cand = np.array(moves, np.int64)
    wins = np.zeros(len(moves), np.int64)
    for _ in range(worlds):
        world = view.determinize(0, rng)
        b = np.zeros((1, S.CARD_WORDS), np.int8)
        v = np.zeros((1, S.INT_WORDS), np.int32)
        write_state(b[0], v[0], world, world.rows, rules)
        w.rng[0] = np.uint64(int(rng.integers(1, 1 << 63)))
        S.evaluate_moves(
            w,
            S.ZOBRIST,
            memo,
            b,
            v,
            cand,
            recent,
            leave,
            nodes,
            0.5,
            0.15,
            weights,
            True,
            True,
            wins,
            1,
        )
        out.append([int(x) for x in wins])
    return out


def play_and_measure(
    agent, seed: int, difficulty: str, agent_seed: int, worlds: int, nodes: int, solver
) -> dict:
    """One game of ``agent`` on deal ``seed`` with the worlds' verdicts at its decisions."""
    state = State.new_game(np.random.default_rng(seed), difficulty=difficulty)
    agent.reset([agent_seed, seed, 0])
    probe_rng = np.random.default_rng([agent_seed, seed, 1])  # never the agent's stream
    policy = getattr(agent, "policy", None)
    decisions = []
    step = 0
    while not state.outcome:
        view = state.player_view()
        action = agent.act(None, None, state=view)
        if policy is not None and getattr(policy, "searched", False) and view.phase == BATTLE:
            moves = [a for a, _, _, _ in policy.root_stats()]
            verdicts = decision_worlds(view, moves, worlds, nodes, probe_rng, solver)
            decisions.append(
                {
                    "step": step,
                    "turn": int(view.turn),
                    "deck": int(view.deck_size),
                    "moves": moves,
                    "chosen": moves.index(action) if action in moves else -1,
                    "worlds": verdicts,
                }
            )
        state.apply_action(action)
        step += 1
    return {"seed": seed, "won": bool(state.outcome == 1), "decisions": decisions}


def decision_figures(d: dict) -> dict:
    m = np.array(d["worlds"], dtype=bool)  # worlds x moves
    some = m.any(axis=1)
    if not some.any():
        return {"informative": False}
    best = m.sum(axis=0).max()
    return {
        "informative": True,
        "disagree": bool(not m[some].all(axis=0).any()),
        "gap": float((some.sum() - best) / len(m)),
        "chosen_share": float(m[:, d["chosen"]].mean()) if d["chosen"] >= 0 else None,
        "best_share": float(best / len(m)),
    }


def check_game(number: int, game: dict) -> None:
    """A journal line as ``play_and_measure`` writes it, else ValueError naming the line: the
    figures index its verdicts by the moves and the chosen one."""

    def bad(why: str) -> ValueError:
        return ValueError(f"line {number}: {why}")

    if not isinstance(game.get("seed"), int) or not isinstance(game.get("won"), bool):
        raise bad("expected a game with an int seed and a true/false won")
    if not isinstance(game.get("decisions"), list):
        raise bad("expected a list of decisions")
    for i, d in enumerate(game["decisions"]):
        worlds = d.get("worlds") if isinstance(d, dict) else None
        rows = worlds if isinstance(worlds, list) and worlds else [None]
        width = len(rows[0]) if isinstance(rows[0], list) else 0
        if not width or any(
            not isinstance(r, list) or len(r) != width or any(v not in (0, 1) for v in r)
            for r in rows
        ):
            raise bad(f"decision {i}: worlds must be rows of 0/1 verdicts, one per move")
        chosen, turn = d.get("chosen"), d.get("turn")
        if type(chosen) is not int or not -1 <= chosen < width or type(turn) is not int:
            raise bad(f"decision {i}: expected an int turn and chosen in -1..{width - 1}")


def read_games(path: str, repair: bool = False) -> list[dict]:
    """A journal's games, each line checked (``check_game``); a cut last line (a killed
    run) is dropped, and with ``repair`` cut off the file so that the run resumes there."""
    from . import journal

    def check(number: int, game: dict) -> None:
        try:
            check_game(number, game)
        except ValueError as err:
            raise ValueError(f"{path}: {err}") from None

    return journal.read(path, repair=repair, check=check)


def summary(paths: list[str]) -> dict:
    games: list[dict] = []
    for p in paths:
        games += read_games(p)
    out = {
        "files": paths,
        "games": len(games),
        "won": sum(g["won"] for g in games),
        "by_outcome": {},
        "by_turn": {},
    }
    for label, chosen in (("won", True), ("lost", False)):
        figs = [decision_figures(d) for g in games if g["won"] == chosen for d in g["decisions"]]
        info = [f for f in figs if f["informative"]]
        out["by_outcome"][label] = {
            "games": sum(g["won"] == chosen for g in games),
            "decisions": len(figs),
            "informative": len(info),
            "disagree_share": float(np.mean([f["disagree"] for f in info])) if info else None,
            "mean_gap": float(np.mean([f["gap"] for f in info])) if info else None,
            "chosen_vs_best": float(
                np.mean(
                    [
                        f["best_share"] - f["chosen_share"]
                        for f in info
                        if f["chosen_share"] is not None
                    ]
                )
            )
            if info
            else None,
        }
    for g in games:
        for d in g["decisions"]:
            f = decision_figures(d)
            row = out["by_turn"].setdefault(
                str(d["turn"]), {"decisions": 0, "informative": 0, "disagree": 0}
            )
            row["decisions"] += 1
            if f["informative"]:
                row["informative"] += 1
                row["disagree"] += f["disagree"]
    # per lost game, the last turn at which some move still won some sampled world: after
    # it, no line the solver finds wins in any world the player could be in
    last: dict[str, int] = {}
    for g in games:
        if g["won"]:
            continue
        turns = [d["turn"] for d in g["decisions"] if np.array(d["worlds"]).any()]
        key = str(max(turns)) if turns else "none"
        last[key] = last.get(key, 0) + 1
    out["lost_games_last_winnable_turn"] = dict(sorted(last.items()))
    # games the agent lost although, at some decision, a move won every world sampled
    out["lost_with_a_sure_move"] = sum(
        1
        for g in games
        if not g["won"]
        and any(np.array(d["worlds"], dtype=bool).all(axis=0).any() for d in g["decisions"])
    )
    return out


def check_outputs(p: argparse.ArgumentParser, args) -> None:
    """Before any game: ``--json`` writes over nothing but figures of this script, ``--out``
    appends to nothing but its journal (one game a line); else a usage error."""
    from .common import check_overwrite, json_starting_with

    try:
        if args.json:
            check_overwrite(args.json, "--json", json_starting_with("files"), "its figures")
        if args.out and args.summary is None:  # (with --summary it is read, not written)
            check_overwrite(args.out, "--out", is_journal, "its journal")
    except ValueError as err:
        p.error(str(err))


def is_journal(head: bytes) -> bool:
    """Do a file's first bytes begin as this script's journal (a game's line)?"""
    return head.startswith(b'{"seed": ')


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--agent", default="best")
    p.add_argument("--difficulty", default="very_hard")
    p.add_argument("--seed", type=int, default=1_000_000)
    p.add_argument("--episodes", type=int, default=20)
    p.add_argument("--agent-seed", type=int, default=0)
    p.add_argument("--worlds", type=int, default=16)
    p.add_argument("--nodes", type=int, default=2000)
    p.add_argument("--out", help="the journal (JSON lines), resumed where it exists")
    p.add_argument("--summary", nargs="*", help="journals to summarise (no games played)")
    p.add_argument("--json", help="with --summary: also write the figures here")
    args = p.parse_args(argv)
    check_outputs(p, args)
    if args.summary is not None:
        try:
            figures = summary(args.summary or [args.out])
        except ValueError as err:  # a damaged or foreign journal (JournalError, check_game)
            p.error(str(err))
        text = json.dumps(figures, indent=1)
        print(text)
        if args.json:
            Path(args.json).write_text(text + "\n")
        return
    if not args.out:
        p.error("--out is needed to play games (or --summary to read journals)")
    from castle_envs.agents.registry import make_agent
    from castle_envs.agents.solvers import castle_siege_kernel as S
    from castle_envs.agents.solvers.castle_siege_compiled import shared_memo

    agent = make_agent(args.agent, "castle-siege", seed=args.agent_seed)
    weights = getattr(getattr(agent, "policy", None), "weights", None)
    if weights is None:
        raise SystemExit(f"agent {args.agent!r} has no linear scorer to guide the solver")
    solver = (
        S.new_work(max(10, min(22, (2 * args.nodes * 16).bit_length()))),
        shared_memo(),
        weights,
    )
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    done = set()
    if out.exists():
        try:
            done = {g["seed"] for g in read_games(str(out), repair=True)}
        except ValueError as err:
            p.error(str(err))
    with out.open("a") as f:
        for seed in range(args.seed, args.seed + args.episodes):
            if seed in done:
                continue
            game = play_and_measure(
                agent, seed, args.difficulty, args.agent_seed, args.worlds, args.nodes, solver
            )
            f.write(json.dumps(game) + "\n")
            f.flush()
            print(
                f"deal {seed}: {'won' if game['won'] else 'lost'}, "
                f"{len(game['decisions'])} decisions measured",
                flush=True,
            )


if __name__ == "__main__":
    main()
