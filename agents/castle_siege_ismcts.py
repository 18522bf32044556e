"""Castle Siege information-set MCTS agent: a tree over what the player sees.

``vector.siege_ismcts`` holds the search and why it is exact here (the player's view is a
sufficient statistic of the belief, so a tree of views with a fresh world dealt per
iteration averages over the worlds instead of solving each as if its cards were known, as
the ``search`` agent's perfect-information Monte Carlo does). At each decision with a
choice the agent determinizes the state once (``State.determinize``: the unseen cards
shuffled, the recycled ones kept in their known order), hands that view to the compiled
search, and plays the root's most visited move. Once no unseen card is left the game is a
puzzle, solved exactly as the ``search`` agent does (``EndgamePlanner``).

Agent spec: ``ismcts[:iterations=1000,width=8,temp=1.0,c=1.0,noise=0.0,shaped=0.1,
endgame=20000,standing=0.0,value=NPZ,lam=0.0,policy=PATH]``: ``policy`` is the linear scorer
that ranks the moves, gives the priors and plays the playouts (default: the shipped Very Hard
scorer); ``value`` a leaf value network (``siege_ismcts.VALUE_ARRAYS`` in a ``.npz``, written
by ``experiments/exit_siege_net.py export``) mixed into the leaves with weight ``lam``.
"""
from __future__ import annotations

import numpy as np

from castle_envs.castle_siege.rules import State
from castle_envs.core.options import check_int, check_real

from .castle_siege_linear import LinearPolicy
from .castle_siege_search import EndgamePlanner

DEFAULTS = {"iterations": 1000, "width": 8, "temp": 1.0, "c": 1.0, "noise": 0.0,
            "shaped": 0.1, "leaf": 0, "endgame": 20000, "standing": 0.0, "value": "",
            "lam": 0.0}
#: the settings a spec or a model directory may give, with their types
ISMCTS_OPTIONS = {k: type(v) for k, v in DEFAULTS.items()}


class ISMCTSPolicy:
    """``policy(state, rng) -> action`` (module docstring)."""

    def __init__(self, weights: LinearPolicy, iterations: int = 1000, width: int = 8,
                 temp: float = 1.0, c: float = 1.0, noise: float = 0.0, shaped: float = 0.1,
                 leaf: int = 0, endgame: int = 20000, standing: float = 0.0, value: str = "",
                 lam: float = 0.0):
        from castle_envs.vector import _jit
        if not _jit.HAVE_NUMBA:
            raise ImportError("the ismcts agent needs numba: " + _jit.INSTALL_HINT)
        from castle_envs.vector.solve_castle_siege import CompiledSolver, shared_memo
        from castle_envs.vector import siege_ismcts as M
        from castle_envs.vector import siege_nested, siege_solver
        iterations = check_int("ismcts option iterations", iterations, 1)
        width = check_int("ismcts option width", width, 2, M.MAX_WIDTH)
        leaf = check_int("ismcts option leaf", leaf, 0)
        endgame = check_int("ismcts option endgame", endgame, 1)
        temp = check_real("ismcts option temp", temp, 0.0, low_open=True)
        c = check_real("ismcts option c", c, 0.0)
        noise = check_real("ismcts option noise", noise, 0.0, 1.0)
        shaped = check_real("ismcts option shaped", shaped, 0.0, 1.0)
        standing = check_real("ismcts option standing", standing, 0.0, 1.0)
        lam = check_real("ismcts option lam", lam, 0.0, 1.0)
        if lam > 0 and not value:
            raise ValueError("ismcts option lam > 0 needs value=FILE.npz (a leaf value network)")
        self._net = M.new_value_net(load_value_net(value) if value else None)
        #: the settings, as a spec or ``model.json`` gives them
        self.options = {"iterations": iterations, "width": width, "temp": float(temp),
                        "c": float(c), "noise": float(noise), "shaped": float(shaped),
                        "leaf": leaf, "endgame": endgame, "standing": float(standing),
                        "value": str(value), "lam": float(lam)}
        self.iterations, self.width, self.temp, self.c = iterations, width, float(temp), float(c)
        self.noise, self.shaped, self.leaf = float(noise), float(shaped), leaf
        self.standing, self.lam = float(standing), float(lam)
        self.scorer = weights
        self.weights = weights.vector()
        self._M = M
        self._tree = M.new_tree(max(10, min(20, (4 * iterations).bit_length())))
        self._x = siege_nested.new_scratch()
        self._w = siege_solver.new_work(max(10, min(22, (2 * max(leaf, 1)).bit_length())))
        self._memo = shared_memo()
        self.searched = False
        self.endgame = EndgamePlanner(CompiledSolver(max_nodes=endgame,
                                                     probe_weights=self.weights))

    def __call__(self, state: State, rng: np.random.Generator) -> int:
        self.searched = False
        legal = np.flatnonzero(state.legal_action_mask())
        if len(legal) == 1:
            return int(legal[0])
        if state.deck_size == int(state.recycled.sum()):   # no unseen card left
            action = self.endgame.move(state)
            if action is not None:
                return action
        self.searched = True   # root_stats() describes this decision
        b, v = self._rows(state.determinize(0, rng))
        best = self._M.search(self._tree, self._x, self._w, self._memo, b, v,
                              state.attack == "most_recent", state.defeated == "leave_game",
                              self.weights, self.iterations, self.width, self.temp, self.c,
                              self.noise, self.shaped, self.leaf, int(rng.integers(1 << 62)),
                              self.standing, self._net, self.lam, state.rows)
        return int(self._tree.act[0, best])

    def root_stats(self) -> list[tuple[int, int, float, float]]:
        """The last decision's root: (action, visits, mean value, prior) per child."""
        t = self._tree
        return [(int(t.act[0, i]), int(t.n[0, i]),
                 float(t.w[0, i] / t.n[0, i]) if t.n[0, i] else 0.0, float(t.prior[0, i]))
                for i in range(int(t.width[0]))]

    @staticmethod
    def _rows(world: State):
        from castle_envs.vector import siege_kernel as K
        from castle_envs.vector.castle_siege import write_state
        b = np.zeros(K.CARD_WORDS, np.int8)
        v = np.zeros(K.INT_WORDS, np.int32)
        write_state(b, v, world, world.rows, {"attack": world.attack,
                                              "defeated": world.defeated})
        return b, v


def load_value_net(path) -> dict:
    """The arrays of a leaf value network file (``.npz`` of plain arrays; nothing pickled is
    read), checked by ``siege_ismcts.new_value_net``."""
    from castle_envs.vector.siege_ismcts import VALUE_ARRAYS
    try:
        with np.load(path, allow_pickle=False) as f:
            missing = sorted(set(VALUE_ARRAYS) - set(f.files))
            if missing:
                raise ValueError(f"ismcts option value={path}: the file lacks {missing}")
            return {k: f[k] for k in VALUE_ARRAYS}
    except (OSError, ValueError) as err:
        if isinstance(err, FileNotFoundError) or "lacks" in str(err):
            raise
        raise ValueError(f"ismcts option value={path}: not a value network .npz ({err})") from None


def make_ismcts_policy(options: dict, default_weights) -> ISMCTSPolicy:
    path = options.pop("policy", None)
    weights = LinearPolicy.load(path) if path else LinearPolicy.load(default_weights)
    return ISMCTSPolicy(weights, **options)
