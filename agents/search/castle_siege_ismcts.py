"""Castle Siege information-set MCTS agent: a tree over what the player sees.

``search.castle_siege_ismcts_kernel`` holds the search and why it is exact here (the player's view is a
sufficient statistic of the belief, so a tree of views with a fresh world dealt per
iteration averages over the worlds instead of solving each as if its cards were known, as
the ``search`` agent's perfect-information Monte Carlo does). At each decision with a
choice the agent determinizes the state once (``State.determinize``: the unseen cards
shuffled, the recycled ones kept in their known order), hands that view to the compiled
search, and plays the root's most visited move. Once no unseen card is left the game is a
puzzle, solved exactly as the ``search`` agent does (``EndgamePlanner``).

Agent spec: ``ismcts[:iterations=1000,width=8,temp=1.0,c=1.0,noise=0.0,shaped=0.1,
endgame=20000,standing=0.0,value=NPZ,lam=0.0,prior=NPZ,prior_mix=0.0,prior_temp=1.0,
root_width=0,halving=0,trees=1,chance=0,endplay=0,
endmiss=4,endnested=0,endwidth=16,endtries=2,endbudget=0,afterstate=DIR,afterstate_mix=0.0,
afterstate_prior=0.0,afterstate_temp=1.0,policy=PATH]``: ``policy`` is the linear scorer that ranks the moves, gives the priors and
plays the playouts (default: the shipped Very Hard scorer); ``value`` a leaf value network
(``siege_ismcts.VALUE_ARRAYS`` in a ``.npz``, as the endgame-network training exports it) mixed into the leaves with weight ``lam``; ``prior`` a move network's move scores
(``PRIOR_ARRAYS``, ``export --what prior``) whose softmax over ``prior_temp`` is mixed into
the root's priors with weight ``prior_mix`` (the root only: one network call a decision);
``root_width`` the root's moves (0: ``width``); ``halving=1`` picks the root's move by
sequential halving over common worlds instead of the most visits (``search.castle_siege_ismcts_kernel``);
``trees`` independent searches a decision (each its own world and seed, ``iterations`` each),
the move with the most visits summed over their roots (root parallelisation: the same
iterations spent on shallower trees whose errors differ); ``chance`` > 0 keeps at most that
many draws below each move that draws unseen cards (sparse sampling: the tree then searches
the moves after a draw instead of leaving them to the playout; 0: every iteration's own draw);
``endplay`` > 0 lets the solver finish a playout, with that many nodes, once no unseen card is
left, as the agent's endgame planner then does (the player knows every card from there, so
this reads nothing hidden), where the scorer's own finish left at most ``endmiss`` castles
standing (1: near misses only, where the solver's wins are); ``endnested`` > 0: where the
endgame planner's ``endgame`` solver nodes prove no win, that many runs of level-2 nested
search (``endwidth`` candidates a step, the solver's ``endgame`` nodes checked along its
line) look for a winning line before the search takes over again, once a turn and at most
``endtries`` times a game (``NestedEndgameSolver``); ``endbudget`` > 0 bounds that search's
work in a game: no run starts once its tries together counted that many nodes (a count, not
a clock, so that a deal's result stays the same on any machine). ``afterstate`` names an
n-tuple afterstate value model directory (kind ``ntuple_value``, ``castle_siege_ntuple``)
whose value of the position a leaf's last move led to (the cards that move drew still unseen)
is mixed into the leaf's value with weight ``afterstate_mix`` (1: no playout; not with ``lam``).
With ``afterstate_prior`` > 0 the same value is also a prior at the root: a softmax of the
log-odds of each legal move's afterstate value over ``afterstate_temp`` mixed into the root's
priors with that weight (one evaluation per legal move a decision; not with ``prior_mix``).
"""

from __future__ import annotations

import numpy as np
from castle_envs.agents.learned.castle_siege_linear import (
    EndgamePlanner,
    LinearPolicy,
    NestedEndgameSolver,
)
from castle_envs.agents.search.castle_siege_ismcts_kernel import MAX_WIDTH

from castle_envs.castle_siege.actions import NUM_ACTIONS
from castle_envs.castle_siege.rules import State
from castle_envs.core.options import Option, Options

#: the settings a spec or a model directory may give (``ismcts:iterations=...``)
OPTIONS = Options(
    iterations=Option(1000, 1),
    width=Option(8, 2, MAX_WIDTH),
    temp=Option(1.0, 0.0, low_open=True),
    c=Option(1.0, 0.0),
    noise=Option(0.0, 0.0, 1.0),
    shaped=Option(0.1, 0.0, 1.0),
    leaf=Option(0, 0),
    endgame=Option(20000, 1),
    standing=Option(0.0, 0.0, 1.0),
    value=Option(""),
    lam=Option(0.0, 0.0, 1.0),
    prior=Option(""),
    prior_mix=Option(0.0, 0.0, 1.0),
    prior_temp=Option(1.0, 0.0, low_open=True),
    root_width=Option(0, 0, MAX_WIDTH),
    halving=Option(0, 0, 1),
    trees=Option(1, 1, 64),
    chance=Option(0, 0, 64),
    endplay=Option(0, 0),
    endmiss=Option(4, 1, 4),
    endnested=Option(0, 0, 1 << 16),
    endwidth=Option(16, 2, MAX_WIDTH),
    endtries=Option(2, 1, 1 << 16),
    endbudget=Option(0, 0, 1 << 40),
    afterstate=Option(""),
    afterstate_mix=Option(0.0, 0.0, 1.0),
    afterstate_prior=Option(0.0, 0.0, 1.0),
    afterstate_temp=Option(1.0, 0.0, low_open=True),
)
DEFAULTS = OPTIONS.defaults()
#: the settings' types
ISMCTS_OPTIONS = OPTIONS.types()
#: the arrays of a root prior file: the move network's state encoder (w1, b1, w2, b2), its
#: move MLP over [state embedding, move features] (m1, c1, m2, c2) and its linear term over
#: the last ``len(lin)`` move features, weights input x output (``agents/learned/move_policy.py``)
PRIOR_ARRAYS = ("w1", "b1", "w2", "b2", "m1", "c1", "m2", "c2", "lin")


class ISMCTSPolicy:
    """``policy(state, rng) -> action`` (module docstring)."""

    @OPTIONS.keywords
    def __init__(self, weights: LinearPolicy, **options):
        from castle_envs.core import jit as _jit

        if not _jit.HAVE_NUMBA:
            raise ImportError("the ismcts agent needs numba: " + _jit.INSTALL_HINT)
        from castle_envs.agents.search import castle_siege_ismcts_kernel as M
        from castle_envs.agents.solvers import castle_siege_kernel as siege_solver
        from castle_envs.agents.solvers import castle_siege_nested_kernel as siege_nested
        from castle_envs.agents.solvers.castle_siege_compiled import CompiledSolver, shared_memo

        #: the settings, as a spec or ``model.json`` gives them
        self.options = o = OPTIONS.check(options, "ismcts option", "ISMCTSPolicy")
        if o["trees"] > 1 and o["halving"]:
            raise ValueError(
                "ismcts options trees > 1 and halving=1 do not combine: halving "
                "picks one tree's move, trees sums the roots' visits"
            )
        if o["lam"] > 0 and not o["value"]:
            raise ValueError("ismcts option lam > 0 needs value=FILE.npz (a leaf value network)")
        if o["prior_mix"] > 0 and not o["prior"]:
            raise ValueError(
                "ismcts option prior_mix > 0 needs prior=FILE.npz (a move network's"
                " scores, exit_siege_net export --what prior)"
            )
        if o["afterstate_mix"] > 0 and not o["afterstate"]:
            raise ValueError(
                "ismcts option afterstate_mix > 0 needs afterstate=DIR (an ntuple_value model)"
            )
        if o["afterstate_mix"] > 0 and o["lam"] > 0:
            raise ValueError("ismcts options lam and afterstate_mix do not combine: pick one")
        self._root_value = self._afterstate_prior(o)
        iterations, leaf, endgame = o["iterations"], o["leaf"], o["endgame"]
        value, prior = o["value"], o["prior"]
        self._net = M.new_value_net(load_value_net(value) if value else None)
        self._prior = MovePrior(load_prior(prior)) if prior else None
        afterstate = o["afterstate"]
        self._afterstate = M.new_afterstate(load_afterstate(afterstate) if afterstate else None)
        self.afterstate_mix = o["afterstate_mix"]
        self.prior_mix, self.prior_temp = o["prior_mix"], o["prior_temp"]
        self._logits = np.full(NUM_ACTIONS, -np.inf)
        self.iterations, self.width, self.temp, self.c = iterations, o["width"], o["temp"], o["c"]
        self.noise, self.shaped, self.leaf = o["noise"], o["shaped"], leaf
        self.standing, self.lam = o["standing"], o["lam"]
        self.root_width, self.halving, self.trees = o["root_width"], o["halving"], o["trees"]
        self.chance, self.endplay, self.endmiss = o["chance"], o["endplay"], o["endmiss"]
        self._roots: list[tuple[int, int, float, float]] = []  # summed roots (trees > 1)
        self.scorer = weights
        self.weights = weights.vector()
        self._M = M
        self._tree = M.new_tree(max(10, min(20, (4 * iterations).bit_length())))
        self._x = siege_nested.new_scratch()
        solver_nodes = max(leaf, o["endplay"], 1)
        self._w = siege_solver.new_work(max(10, min(22, (2 * solver_nodes).bit_length())))
        self._memo = shared_memo()
        self.searched = False
        solver: CompiledSolver | NestedEndgameSolver
        if o["endnested"]:
            solver = NestedEndgameSolver(
                endgame,
                o["endnested"],
                o["endwidth"],
                self.weights,
                tries=o["endtries"],
                probe_weights=self.weights,
                budget=o["endbudget"],
            )
        else:
            solver = CompiledSolver(max_nodes=endgame, probe_weights=self.weights)
        self.endgame = EndgamePlanner(solver)

    def reset(self) -> None:
        """A new game (the agent's ``reset``): the endgame planner's per-game state."""
        self.endgame.reset()

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        self.searched = False
        legal = np.flatnonzero(state.legal_action_mask())
        if len(legal) == 1:
            return int(legal[0])
        if state.deck_size == int(state.recycled.sum()):  # no unseen card left
            action = self.endgame.move(state)
            if action is not None:
                return action
        self.searched = True  # root_stats() describes this decision
        mix = 0.0
        if self._prior is not None:
            mix = self.prior_mix
            self._logits[:] = -np.inf
            ids, logits = self._prior.logits(state)
            self._logits[ids] = logits / self.prior_temp
        elif self._root_value is not None:
            mix = self.options["afterstate_prior"]
            self._logits[:] = self.afterstate_logits(state)
        self._roots = []
        settings = self._M.Settings(
            recent=state.attack == "most_recent",
            leave=state.defeated == "leave_game",
            weights=self.weights,
            width=self.width,
            temp=self.temp,
            c_puct=self.c,
            noise=self.noise,
            shaped=self.shaped,
            leaf=self.leaf,
            standing=self.standing,
            net=self._net,
            lam=self.lam,
            rows=state.rows,
            endplay=self.endplay,
            endmiss=self.endmiss,
            chance=self.chance,
            afterstate=self._afterstate,
            afterstate_mix=self.afterstate_mix,
        )
        # halving is a kernel of its own, so that a search without it does not compile it
        search = self._M.search_halving if self.halving else self._M.search
        for _tree in range(self.trees):
            best = search(
                self._tree,
                self._x,
                self._w,
                self._memo,
                *self._rows(state.determinize(0, rng)),
                settings,
                self.iterations,
                int(rng.integers(1 << 62)),
                self._logits,
                mix,
                self.root_width,
            )
            if self.trees == 1:
                return int(self._tree.act[0, best])
            self._add_root(self._tree_root())
        # the most visits summed; a tie goes to the child listed first (the scorer's order)
        return max(self._roots, key=lambda r: r[1])[0]

    @staticmethod
    def _afterstate_prior(o: dict):
        """The n-tuple player whose move values make the root prior (``afterstate_prior``
        > 0), or None."""
        if o["afterstate_prior"] == 0:
            return None
        if not o["afterstate"]:
            raise ValueError(
                "ismcts option afterstate_prior > 0 needs afterstate=DIR (an ntuple_value model)"
            )
        if o["prior_mix"] > 0:
            raise ValueError(
                "ismcts options prior_mix and afterstate_prior do not combine: pick one"
            )
        from castle_envs.agents.learned.castle_siege_ntuple import NTuplePolicy, NTupleValue

        # every legal move valued (no pruning), lost games' values as the tables learned them
        return NTuplePolicy(NTupleValue(load_afterstate(o["afterstate"]), prune=False))

    def afterstate_logits(self, state: State) -> np.ndarray:
        """One logit per action id: the log-odds of the move's afterstate value over
        ``afterstate_temp`` (-inf for an illegal move)."""
        assert self._root_value is not None
        self._root_value(state)
        values = np.clip(self._root_value.values, 1e-9, 1.0 - 1e-9)  # a won game's 1.0
        logits = np.log(values) - np.log1p(-values)
        logits[~np.isfinite(self._root_value.values)] = -np.inf
        return logits / self.options["afterstate_temp"]

    def _tree_root(self) -> list[tuple[int, int, float, float]]:
        t = self._tree
        return [
            (
                int(t.act[0, i]),
                int(t.n[0, i]),
                float(t.w[0, i] / t.n[0, i]) if t.n[0, i] else 0.0,
                float(t.prior[0, i]),
            )
            for i in range(int(t.width[0]))
        ]

    def _add_root(self, root: list[tuple[int, int, float, float]]) -> None:
        where = {a: i for i, (a, _, _, _) in enumerate(self._roots)}
        for a, n, q, p in root:
            if a not in where:
                where[a] = len(self._roots)
                self._roots.append((a, 0, 0.0, p))
            a0, n0, q0, p0 = self._roots[where[a]]
            self._roots[where[a]] = (a, n0 + n, (q0 * n0 + q * n) / (n0 + n) if n0 + n else 0.0, p0)

    def root_stats(self) -> list[tuple[int, int, float, float]]:
        """The last decision's root: (action, visits, mean value, prior) per child (with
        ``trees`` > 1, the visits summed over the trees and the values visit-weighted)."""
        return self._roots if self.trees > 1 else self._tree_root()

    @staticmethod
    def _rows(world: State):
        from castle_envs.castle_siege import kernel as K
        from castle_envs.castle_siege.vector import write_state

        b = np.zeros(K.CARD_WORDS, np.int8)
        v = np.zeros(K.INT_WORDS, np.int32)
        write_state(b, v, world, world.rows, {"attack": world.attack, "defeated": world.defeated})
        return b, v


def load_value_net(path) -> dict:
    """The arrays of a leaf value network file (``.npz`` of plain arrays; nothing pickled is
    read), checked by ``siege_ismcts.new_value_net``."""
    from castle_envs.agents.learned.model_files import load_npz_arrays
    from castle_envs.agents.search.castle_siege_ismcts_kernel import VALUE_ARRAYS

    return load_npz_arrays(path, VALUE_ARRAYS, "ismcts option value", "value network")


def load_afterstate(path) -> np.ndarray:
    """The tables of an n-tuple afterstate value model directory (kind ``ntuple_value``:
    ``model.json`` naming this version's table layout, ``weights.npz`` of finite numbers);
    ValueError naming what does not fit."""
    from pathlib import Path

    from castle_envs.agents.learned.castle_siege_ntuple_kernel import N_WEIGHTS, TABLES
    from castle_envs.agents.learned.model_files import load_npz_arrays

    from castle_envs.core.files import UnreadableFile, read_json

    option = "ismcts option afterstate"
    try:
        card = read_json(Path(path) / "model.json", "model directory's model.json")
    except UnreadableFile as err:
        raise ValueError(f"{option}={err}") from None
    kind = card.get("kind") if isinstance(card, dict) else None
    if kind != "ntuple_value":
        raise ValueError(f"{option}={path}: a model of kind {kind!r}, not 'ntuple_value'")
    policy = card.get("policy")
    tables = policy.get("tables") if isinstance(policy, dict) else None
    if tables != [[name, int(size)] for name, size in TABLES]:
        raise ValueError(f"{option}={path}: its tables are not this version's table layout")
    weights = load_npz_arrays(Path(path) / "weights.npz", ["weights"], option, "n-tuple value")
    array = weights["weights"]
    if array.shape != (N_WEIGHTS,):
        raise ValueError(f"{option}={path}: expected {N_WEIGHTS} weights, got {array.shape}")
    return array.astype(np.float32)


class MovePrior:
    """A move network's logits over a position's moves, in numpy (``PRIOR_ARRAYS``), read
    through the player's observation and move view only."""

    def __init__(self, arrays: dict):
        from castle_envs.moves import move_view

        self.a = {k: np.asarray(arrays[k], np.float64) for k in PRIOR_ARRAYS}
        hidden, features = self.a["b1"].shape[0], self.a["m1"].shape[0] - self.a["b1"].shape[0]
        self.moves = move_view("castle-siege", 256)
        want = {
            "w1": (self.a["w1"].shape[0], hidden),
            "w2": (hidden, hidden),
            "b2": (hidden,),
            "m1": (hidden + features, hidden),
            "c1": (hidden,),
            "m2": (hidden,),
            "c2": (1,),
        }
        for name, shape in want.items():
            if self.a[name].shape != shape:
                raise ValueError(
                    f"prior network array {name}: expected shape {shape}, got {self.a[name].shape}"
                )
        if features != self.moves.num_features or self.a["lin"].shape[0] > features:
            raise ValueError(
                f"prior network: {features} move features; this version's move "
                f"view has {self.moves.num_features}"
            )
        self.offset = features - self.a["lin"].shape[0]

    def logits(self, state) -> tuple[np.ndarray, np.ndarray]:
        """(move ids, logits) of the position's moves the view keeps."""
        view, n = self.moves.from_state(state)
        keep = view["move_mask"].astype(bool)
        feats = view["move_features"][keep].astype(np.float64)
        a = self.a
        obs = self.moves.observation(state).astype(np.float64)
        h = np.maximum(np.maximum(obs @ a["w1"] + a["b1"], 0.0) @ a["w2"] + a["b2"], 0.0)
        z = np.maximum(h @ a["m1"][: len(h)] + feats @ a["m1"][len(h) :] + a["c1"], 0.0)
        out = z @ a["m2"] + a["c2"][0] + feats[:, self.offset :] @ a["lin"]
        return view["move_ids"][keep].astype(np.int64), out


def load_prior(path) -> dict:
    """The arrays of a root prior file (``.npz`` of plain arrays; nothing pickled is read)."""
    from castle_envs.agents.learned.model_files import load_npz_arrays

    return load_npz_arrays(path, PRIOR_ARRAYS, "ismcts option prior", "prior network")


def make_ismcts_policy(options: dict, default_weights) -> ISMCTSPolicy:
    path = options.pop("policy", None)
    weights = LinearPolicy.load(path) if path else LinearPolicy.load(default_weights)
    return ISMCTSPolicy(weights, **options)


def build_agent(name: str, rest: str, game: str, seed: int | None):
    """The agent registry's entry: options ``key=value,...``; ``policy=PATH`` is the linear
    scorer it plays with (the shipped one by default)."""
    from castle_envs.agents.base import PolicyAgent
    from castle_envs.agents.options import parse_options, shipped_models_dir

    options = parse_options(rest, {**ISMCTS_OPTIONS, "policy": str}, name)
    policy = make_ismcts_policy(
        options, shipped_models_dir() / "castle_siege_very_hard_linear" / "policy.json"
    )
    return PolicyAgent(policy, name + (":" + rest if rest else ""), seed)
