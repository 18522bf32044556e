"""Expert iteration for Castle Siege with the move network: the ISMCTS agent teaches it.

``exit_siege`` refits the 18 battle weights of the linear scorer to the search's visit
counts and found that 18 features cannot hold what the visits say. This script teaches the
move-feature network (``agents/learned/move_policy.py``: an MLP over the 882-value observation and
every legal move's 75 features) instead, read top to bottom in three steps:

1. **collect**: the teacher (``--teacher``, by default the shipped ``--agent best``,
   ``models/castle_siege_very_hard_ismcts_standing``) plays training deals (seeds
   ``--seed`` and up, at least 20,000,000) exactly as ``castle-envs evaluate`` would (agent
   seed ``[0, deal, 0]``, the player's view handed to it); a journal line per game keeps the
   deal, the moves played, the outcome and, at every decision the search made, the root's
   children with their visits and mean values. Only the moves and the search's answers are
   kept: the positions are dealt again from the seed when fitting, so a journal of
   thousands of games stays a few megabytes and is committed chunk by chunk; a stopped run
   resumes after the last finished game. With ``--teacher endgame:NODES`` and a
   ``--student``, the student plays and only the endgame planner labels: its proven move
   at every decision where every card left in the deck is known (the endgames the student
   reaches, which the teacher's wins seldom show).
2. **fit**: replay every journal's games; at each searched decision the network's move
   distribution is pulled towards the root's visit distribution (cross-entropy, the
   improved policy of Anthony, Tian and Barber 2017) and its value head towards the
   game's outcome or (``--value-target search``) the root's value as the search found it
   (squared error, ``--vf-coef``), from the weights of ``--init``; the
   leaf value for the search (``value.npz``) is the encoder and value head of the epoch
   with the lowest held-back value error.
   Positions from ``--holdout`` of the games (the last ones of each journal) are kept out
   of the fit and report the loss and the agreement with the search's move.
3. the result is a model directory of kind ``move_policy`` (``--out``): ``--agent
   model:DIR`` plays it alone, and ``experiments.eval_moves`` measures it batched.

    python -m castle_envs.experiments.exit_siege_net collect --seed 22000000 --games 500 --journal docs/data/castle_siege_exit_net/vh-22000000.jsonl
    python -m castle_envs.experiments.exit_siege_net fit --journals docs/data/castle_siege_exit_net/vh-*.jsonl --out runs/exit_net/round0
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np
from castle_envs.agents.registry import make_agent

from castle_envs.castle_siege.rules import State

TRAIN_SEEDS = 20_000_000
TEACHER = "model:models/castle_siege_very_hard_ismcts_standing"
LINEAR = "models/castle_siege_very_hard_linear/policy.json"
#: ``--teacher endgame:NODES``: the endgame planner alone labels (the compiled solver with
#: NODES nodes a solve, ordered by the wide agent's scorer as the best agent's endgame is)
ENDGAME = "endgame:"
PROBE = ("castle_siege_very_hard_ismcts_wide", "policy.json")


def _finished(journal: Path) -> set[int]:
    if not journal.exists():
        return set()
    done = set()
    for line in journal.read_text().split("\n")[:-1]:
        if line.strip():
            done.add(int(json.loads(line)["seed"]))
    return done


def play(agent, seed: int, difficulty: str, student=None, beta: float = 1.0) -> dict:
    """One game on deal ``seed``: its moves, outcome and the teacher's answer at every
    decision with a choice: the root's children where it searched (``searched``), its move
    where it did not (``planned``: the endgame planner's proven line).

    With a ``student`` (DAgger, Ross, Gordon and Bagnell 2011) the teacher still answers at
    every decision but the student's move is played, except with probability ``beta``
    (drawn per decision from the deal's own generator): the labels then come from the
    positions the student reaches, not only from the teacher's own games."""
    state = State.new_game(np.random.default_rng(seed), difficulty=difficulty)
    agent.reset([0, seed, 0])
    coin = np.random.default_rng([1, seed])
    if student is not None:
        student.reset([2, seed, 0])
    search = agent.policy
    actions: list[int] = []
    searched: list = []
    planned: list = []
    while not state.outcome:
        view = state.player_view()
        action = agent.act(None, None, state=view)
        if search.searched:
            searched.append(
                [len(actions), [[a, n, round(q, 5)] for a, n, q, _ in search.root_stats() if n > 0]]
            )
        elif int(state.legal_action_mask().sum()) > 1:
            planned.append([len(actions), int(action)])
        if student is not None and coin.random() >= beta:
            action = student.act(None, None, state=view)
        actions.append(int(action))
        state.apply_action(action)
    game = {
        "seed": seed,
        "difficulty": difficulty,
        "outcome": int(state.outcome),
        "actions": actions,
        "searched": searched,
        "planned": planned,
    }
    if student is not None:
        game["beta"] = beta
    return game


def collect(args) -> None:
    if args.seed < TRAIN_SEEDS:
        raise SystemExit(
            f"--seed {args.seed}: training deals start at {TRAIN_SEEDS:,}; "
            "lower seeds are evaluation deals"
        )
    journal = Path(args.journal)
    journal.parent.mkdir(parents=True, exist_ok=True)
    if journal.exists() and journal.stat().st_size:
        text = journal.read_text()
        if not text.endswith("\n"):  # a game cut off by a kill: drop it, replay it
            journal.write_text(text[: text.rfind("\n") + 1])
    done = _finished(journal)
    if not 0.0 <= args.beta <= 1.0:
        raise SystemExit(f"--beta {args.beta}: the share of the teacher's moves, in 0-1")
    student = make_agent(args.student, "castle-siege", seed=0) if args.student else None
    if args.teacher.startswith(ENDGAME):
        if student is None:
            raise SystemExit(f"--teacher {args.teacher!r} labels endgames only: give a --student")
        planner = endgame_planner(args.teacher)

        def one(seed):
            return play_endgame(student, planner, seed, args.difficulty, args.beta)
    else:
        agent = make_agent(args.teacher, "castle-siege", seed=0)
        if not hasattr(agent, "policy") or not hasattr(agent.policy, "root_stats"):
            raise SystemExit(
                f"--teacher {args.teacher!r} is not an ismcts agent (no root_stats) "
                f"nor {ENDGAME}NODES"
            )

        def one(seed):
            return play(agent, seed, args.difficulty, student, args.beta)

    t0, wins, played = time.process_time(), 0, 0
    with journal.open("a") as f:
        for seed in range(args.seed, args.seed + args.games):
            if seed in done:
                continue
            game = one(seed)
            game["teacher"] = args.teacher
            if args.student:
                game["student"] = args.student
            f.write(json.dumps(game, separators=(",", ":")) + "\n")
            f.flush()
            played += 1
            wins += game["outcome"] == 1
    print(
        json.dumps(
            {
                "journal": str(journal),
                "played": played,
                "wins": wins,
                "cpu_s_per_game": round((time.process_time() - t0) / max(played, 1), 2),
            }
        )
    )


def endgame_planner(spec: str):
    """The planner of ``--teacher endgame:NODES``."""
    from castle_envs.agents.learned.castle_siege_linear import EndgamePlanner, LinearPolicy
    from castle_envs.agents.registry import shipped_models_dir
    from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver

    text = spec[len(ENDGAME) :]
    if not text.isdigit() or int(text) < 1:
        raise SystemExit(f"--teacher {spec!r}: {ENDGAME}NODES with NODES a positive integer")
    probe = LinearPolicy.load(shipped_models_dir().joinpath(*PROBE)).vector()
    return EndgamePlanner(CompiledSolver(max_nodes=int(text), probe_weights=probe))


def play_endgame(student, planner, seed: int, difficulty: str, beta: float) -> dict:
    """One game on deal ``seed`` labelled by the endgame planner alone (the compiled solver's
    proven lines): the ``student`` plays, and at every decision with a choice where every
    card left in the deck is known and the planner proves a win, the planner's move is
    kept (``planned``) and played with probability ``beta`` (drawn per decision from the
    deal's own generator), the student's otherwise. The labels come from the endgames the
    student reaches, which the teacher's own games (its wins only) seldom show."""
    state = State.new_game(np.random.default_rng(seed), difficulty=difficulty)
    student.reset([2, seed, 0])
    planner.reset()
    coin = np.random.default_rng([1, seed])
    actions: list[int] = []
    planned: list = []
    while not state.outcome:
        view = state.player_view()
        action = None
        if int(state.legal_action_mask().sum()) > 1:
            best = planner.move(view)
            if best is not None:
                planned.append([len(actions), int(best)])
                if coin.random() < beta:
                    action = best
        if action is None:  # the student is asked only where its move is played
            action = student.act(None, None, state=view)
        actions.append(int(action))
        state.apply_action(action)
    return {
        "seed": seed,
        "difficulty": difficulty,
        "outcome": int(state.outcome),
        "actions": actions,
        "searched": [],
        "planned": planned,
        "beta": beta,
    }


class Positions:
    """The searched decisions of journalled games: observation, legal moves' rows (float16
    to keep tens of thousands of positions in memory), the root's visit share per row and
    the game's outcome (1 won, 0 lost)."""

    def __init__(self):
        self.obs, self.rows, self.target, self.won, self.game = [], [], [], [], []
        self.teachers: set[str] = set()  # the teachers named by the games read
        self.root: list[float] = []  # the root's value: its children's visit-weighted mean

    def __len__(self) -> int:
        return len(self.obs)

    def add_game(
        self,
        game: dict,
        index: int,
        view,
        planned: bool = False,
        q_temp: float = 0.0,
        q_visits: int = 10,
    ) -> None:
        """The game's searched decisions; with ``planned`` also the teacher's moves where it
        did not search (the endgame planner's, once every card is known; as a one-hot
        target). Journals of the teacher's own games written before ``planned`` was kept
        give them as the moves played. With ``q_temp`` > 0 the target is the softmax of the
        children's mean values over ``q_temp`` instead of their visit shares (children with
        fewer than ``q_visits`` visits left out: their means are noise), the search's
        estimate of every move's worth rather than where it spent its iterations."""
        from castle_envs.castle_siege.observation import encode

        state = State.new_game(np.random.default_rng(game["seed"]), difficulty=game["difficulty"])
        searched = {step: children for step, children in game["searched"]}
        if planned and "planned" in game:
            for step, action in game["planned"]:
                searched[step] = [[action, 1, 1.0]]
        # the teacher's own games journalled before "planned" was kept: its unsearched moves
        # with a choice are the moves played
        played = planned and "planned" not in game and "beta" not in game
        self.teachers.add(game.get("teacher", TEACHER))
        for step, action in enumerate(game["actions"]):
            if played and step not in searched and int(state.legal_action_mask().sum()) > 1:
                searched[step] = [[action, 1, 1.0]]
            if step in searched:
                out, n = view.from_state(state)
                k = min(n, view.capacity)
                where = {int(a): i for i, a in enumerate(out["move_ids"][:k])}
                target = np.zeros(k, np.float32)
                children = [c for c in searched[step] if c[0] in where]  # the capacity cut
                if q_temp > 0 and len(children) > 1:
                    sure = [c for c in children if c[1] >= q_visits] or children
                    best = max(q for _, _, q in sure)
                    for a, _, q in sure:
                        target[where[a]] = np.exp((q - best) / q_temp)
                else:
                    for a, visits, _ in children:
                        target[where[a]] += visits
                if target.sum() > 0:
                    self.obs.append(encode(state).astype(np.float32))
                    self.rows.append(out["move_features"][:k].astype(np.float16))
                    self.target.append(target / target.sum())
                    self.won.append(float(game["outcome"] == 1))
                    visits = sum(n for _, n, _ in searched[step])
                    self.root.append(sum(n * q for _, n, q in searched[step]) / visits)
                    self.game.append(index)
            state.apply_action(action)
        if state.outcome != game["outcome"]:
            raise ValueError(
                f"deal {game['seed']}: the journalled moves do not replay to the "
                "journalled outcome (a rules change since it was played?)"
            )


def load_positions(
    journals: list[str],
    capacity: int,
    holdout: float,
    planned: bool = False,
    q_temp: float = 0.0,
    q_visits: int = 10,
):
    """(fit positions, held-back positions, games read): the last ``holdout`` share of each
    journal's games is held back."""
    from castle_envs.moves import move_view

    view = move_view("castle-siege", capacity)
    fit_set, held, games = Positions(), Positions(), 0
    for path in journals:
        # a line without its newline is a game still being written by a running collect
        lines = [json.loads(x) for x in Path(path).read_text().split("\n")[:-1] if x.strip()]
        cut = len(lines) - int(round(holdout * len(lines)))
        for i, game in enumerate(lines):
            (fit_set if i < cut else held).add_game(game, games, view, planned, q_temp, q_visits)
            games += 1
    return fit_set, held, games


def _batches(data: Positions, idx, value_target: str = "outcome"):
    import torch

    counts = torch.as_tensor([len(data.rows[i]) for i in idx])
    width = int(counts.max())
    mask = torch.arange(width)[None, :] < counts[:, None]
    obs = torch.as_tensor(np.stack([data.obs[i] for i in idx]))
    rows = torch.as_tensor(np.concatenate([data.rows[i] for i in idx]).astype(np.float32))
    target = torch.zeros(len(idx), width)
    target[mask] = torch.as_tensor(np.concatenate([data.target[i] for i in idx]))
    values = data.won if value_target == "outcome" else data.root
    won = torch.as_tensor([values[i] for i in idx], dtype=torch.float32)
    return obs, rows, mask, target, won


def losses(net, batch):
    """(cross-entropy to the visit shares, value squared error, agreement with the search's
    most visited move) per position of a batch."""
    import torch

    obs, rows, mask, target, won = batch
    h = net.embed(obs)
    owner = torch.nonzero(mask, as_tuple=True)[0]
    logits = torch.full(mask.shape, float("-inf"))
    logits[mask] = net.move_logits(h, owner, rows)
    logp = torch.log_softmax(logits, 1).masked_fill(~mask, 0.0)
    ce = -(target * logp).sum(1)
    v_err = (net.value(h).squeeze(1) - won) ** 2
    agree = (logits.argmax(1) == target.argmax(1)).float()
    return ce, v_err, agree


def evaluate_loss(
    net, data: Positions, value_target: str = "outcome", batch_size: int = 512
) -> dict:
    import torch

    total = np.zeros(3)
    with torch.no_grad():
        for start in range(0, len(data), batch_size):
            idx = list(range(start, min(start + batch_size, len(data))))
            total += [float(x.sum()) for x in losses(net, _batches(data, idx, value_target))]
    return dict(zip(("ce", "value_mse", "agreement"), (total / max(len(data), 1)).round(4)))


def fit(args) -> None:
    """Fit the move network (fresh, or from ``--init``) to the journals' searched positions,
    keeping the value head of the epoch with the lowest held-back value error."""
    import torch

    torch.manual_seed(args.torch_seed)
    torch.set_num_threads(args.threads)
    net, arch = starting_net(args)
    t0 = time.time()
    data, held, games = load_positions(
        args.journals, arch["capacity"], args.holdout, args.planned, args.q_temp, args.q_visits
    )
    load_s = round(time.time() - t0, 1)
    report = {"games": games, "positions": len(data), "held_back": len(held), "load_s": load_s}
    print(json.dumps(report), flush=True)
    history, best_value = fit_epochs(net, args, data, held, t0)
    out = move_policy_save(net, args, arch, fit_card(args, data, held, games, best_value[1]))
    (out / "history.json").write_text(json.dumps(history, indent=1) + "\n")
    np.savez(out / "value.npz", **best_value[2])
    print(json.dumps({"saved": str(out), "value_npz_epoch": best_value[1]}))


def starting_net(args):
    """(the network to fit, its architecture): a fresh one of ``--hidden`` width whose linear
    term starts at the CEM scorer's, as the move PPO's did, or ``--init``'s."""
    from castle_envs.agents.learned import move_policy
    from castle_envs.agents.learned.saved import load_agent, read_card

    if args.hidden:
        arch = {
            "obs_size": 882,
            "num_features": 75,
            "hidden": args.hidden,
            "linear_offset": 45,
            "capacity": 256,
        }
        net = move_policy.build_net(
            arch["obs_size"], arch["num_features"], args.hidden, arch["linear_offset"]
        ).train()
        move_policy.init_linear(net, LINEAR)
        return net, arch
    init = load_agent(args.init, "castle-siege")
    return init.net.train(), move_policy.check_arch(read_card(args.init)["policy"])


def fit_epochs(net, args, data, held, t0: float) -> tuple[list[dict], tuple]:
    """``--epochs`` passes over ``data``; (the history of fit and held-back losses, the
    best value head as (held-back value error, epoch, arrays))."""
    import torch

    history: list[dict] = [{"epoch": 0, "held_back": evaluate_loss(net, held, args.value_target)}]
    print(json.dumps(history[-1]), flush=True)
    # the value head overfits the games' outcomes long before the policy stops learning
    # from the visits (a few thousand outcomes against tens of thousands of visit vectors):
    # the leaf value is taken from the epoch with the lowest held-back value error
    best_value = (history[0]["held_back"]["value_mse"], 0, value_arrays(net))
    optimizer = torch.optim.Adam(net.parameters(), lr=args.lr)
    gen = np.random.default_rng(args.torch_seed)
    for epoch in range(1, args.epochs + 1):
        net.train()
        order = gen.permutation(len(data))
        run = np.zeros(3)
        for start in range(0, len(data), args.batch_size):
            idx = order[start : start + args.batch_size]
            ce, v_err, agree = losses(net, _batches(data, idx, args.value_target))
            loss = ce.mean() + args.vf_coef * v_err.mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            run += [float(ce.detach().sum()), float(v_err.detach().sum()), float(agree.sum())]
        net.eval()
        history.append(
            {
                "epoch": epoch,
                "fit": dict(zip(("ce", "value_mse", "agreement"), (run / len(data)).round(4))),
                "held_back": evaluate_loss(net, held, args.value_target),
                "wall_s": round(time.time() - t0, 1),
            }
        )
        print(json.dumps(history[-1]), flush=True)
        if len(held) and history[-1]["held_back"]["value_mse"] < best_value[0]:
            best_value = (history[-1]["held_back"]["value_mse"], epoch, value_arrays(net))
    return history, best_value


def fit_card(args, data, held, games: int, value_epoch: int) -> dict:
    """The model card's ``trained`` entry: the data and settings of the fit."""
    return {
        "algo": "exit_siege_net",
        "teachers": sorted(data.teachers | held.teachers),
        "init": f"fresh, hidden {args.hidden}" if args.hidden else args.init,
        "journals": [Path(j).name for j in args.journals],
        "games": games,
        "positions": len(data),
        "held_back_positions": len(held),
        "epochs": args.epochs,
        "lr": args.lr,
        "vf_coef": args.vf_coef,
        "batch_size": args.batch_size,
        "value_npz_epoch": value_epoch,
        "value_target": args.value_target,
        "planned": args.planned,
        **({"q_temp": args.q_temp, "q_visits": args.q_visits} if args.q_temp > 0 else {}),
    }


def move_policy_save(net, args, arch: dict, trained: dict) -> Path:
    from castle_envs.agents.learned import move_policy

    return move_policy.save(
        net,
        args.out,
        arch,
        "castle-siege",
        {"difficulty": "very_hard"},
        {},
        extra={"trained": trained},
    )


def _encoder_arrays(net) -> tuple[dict, dict]:
    """The network's parameters as float32 arrays, and its state encoder's (w1, b1, w2, b2;
    weights transposed to input x output)."""
    sd = {k: v.detach().numpy().astype(np.float32) for k, v in net.state_dict().items()}
    encoder = {"w1": sd["state.0.weight"].T, "b1": sd["state.0.bias"]}
    encoder.update(w2=sd["state.2.weight"].T, b2=sd["state.2.bias"])
    return sd, encoder


def value_arrays(net) -> dict:
    """The move network's state encoder and value head as ``siege_ismcts.VALUE_ARRAYS``
    (weights transposed to input x output)."""
    sd, encoder = _encoder_arrays(net)
    return {**encoder, "wv": sd["value.weight"][0], "bv": sd["value.bias"]}


def prior_arrays(net) -> dict:
    """The move network's move scores as ``castle_siege_ismcts.PRIOR_ARRAYS`` (weights
    transposed to input x output), for the search's root priors."""
    sd, encoder = _encoder_arrays(net)
    return {
        **encoder,
        "m1": sd["move.0.weight"].T,
        "c1": sd["move.0.bias"],
        "m2": sd["move.2.weight"][0],
        "c2": sd["move.2.bias"],
        "lin": sd["linear.weight"][0],
    }


def export(args) -> None:
    from castle_envs.agents.learned.saved import load_agent

    net = load_agent(args.model, "castle-siege").net
    np.savez(args.out, **(prior_arrays(net) if args.what == "prior" else value_arrays(net)))
    print(json.dumps({"saved": args.out, "what": args.what}))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("collect", help="the teacher's games, journalled")
    c.add_argument("--seed", type=int, required=True)
    c.add_argument("--games", type=int, required=True)
    c.add_argument("--journal", required=True)
    c.add_argument("--difficulty", default="very_hard")
    c.add_argument(
        "--teacher",
        default=TEACHER,
        help=f"an ismcts agent spec, or {ENDGAME}NODES: the endgame planner labels the "
        "known-deck decisions of the --student's games",
    )
    c.add_argument(
        "--student",
        default="",
        help="an agent spec (model:DIR) whose moves are played while the teacher "
        "labels every decision (DAgger); default: the teacher plays",
    )
    c.add_argument(
        "--beta",
        type=float,
        default=0.0,
        help="with --student: the share of decisions where the teacher's move is played instead",
    )
    f = sub.add_parser("fit", help="the move network fitted to the journals' searches")
    f.add_argument("--journals", nargs="+", required=True)
    f.add_argument("--out", required=True)
    f.add_argument("--init", default="models/castle_siege_hard_move_ppo")
    f.add_argument(
        "--hidden",
        type=int,
        default=0,
        help="start from a fresh network this wide (its linear term the CEM "
        "scorer's) instead of --init",
    )
    f.add_argument("--epochs", type=int, default=4)
    f.add_argument("--lr", type=float, default=3e-4)
    f.add_argument("--batch-size", type=int, default=256)
    f.add_argument("--vf-coef", type=float, default=0.5)
    f.add_argument("--holdout", type=float, default=0.1)
    f.add_argument(
        "--value-target",
        choices=("outcome", "search"),
        default="outcome",
        help="the value head learns the game's outcome (1 won, 0 lost) or the "
        "search's value of the root (its visit-weighted mean)",
    )
    f.add_argument(
        "--planned",
        action="store_true",
        help="also learn the teacher's moves where it did not search (the "
        "endgame planner's proven lines)",
    )
    f.add_argument(
        "--q-temp",
        type=float,
        default=0.0,
        help="> 0: the move target is the softmax of the root children's mean "
        "values over this temperature, not their visit shares",
    )
    f.add_argument(
        "--q-visits",
        type=int,
        default=10,
        help="with --q-temp: children with fewer visits are left out of the target",
    )
    f.add_argument("--threads", type=int, default=1)
    f.add_argument("--torch-seed", type=int, default=0)
    e = sub.add_parser(
        "export",
        help="a move network's value head as an ismcts leaf value, "
        "or its move scores as the root's priors",
    )
    e.add_argument("--model", required=True)
    e.add_argument(
        "--what",
        choices=("value", "prior"),
        default="value",
        help="value: the ismcts option value=; prior: the ismcts option prior=",
    )
    e.add_argument("--out", required=True, help="the .npz file to write")
    args = p.parse_args(argv)
    try:
        check_outputs(args)
    except ValueError as err:
        p.error(str(err))
    {"collect": collect, "fit": fit, "export": export}[args.cmd](args)


def check_outputs(args) -> None:
    """Before any work, each command's output writes over (or cuts, or appends to) nothing
    but what it wrote: ``collect``'s journal (games, one a line), ``fit``'s model folder (new,
    empty, or a model), ``export``'s arrays (a ``.npz``, the name ``np.savez`` gives)."""
    from .common import check_overwrite, json_starting_with, new_folder

    if args.cmd == "collect":
        check_overwrite(args.journal, "--journal", json_starting_with("seed"), "a games journal")
    elif args.cmd == "fit" and not (Path(args.out) / "model.json").is_file():
        new_folder(args.out, "--out", "give a new or empty folder, or a model folder")
    elif args.cmd == "export":
        check_overwrite(npz_path(args.out), "--out", is_npz, "a .npz of arrays")


def npz_path(path: str) -> str:
    """Where ``np.savez(path)`` writes: ``.npz`` added unless the name ends so."""
    return path if path.endswith(".npz") else path + ".npz"


def is_npz(head: bytes) -> bool:
    """Does a file begin as ``np.savez`` writes one (a zip whose first entry is a ``.npy``)?"""
    if not head.startswith(b"PK\x03\x04") or len(head) < 30:
        return False
    size = int.from_bytes(head[26:28], "little")
    return head[30 : 30 + size].endswith(b".npy")


if __name__ == "__main__":
    main()
