"""``CastleSiegeVectorEnv``: many Castle Siege games stepped at once by a compiled kernel.

```python
import castle_envs
envs = castle_envs.make_vec("castle-siege", num_envs=4096, difficulty="very_hard")
obs, info = envs.reset(seed=0)          # obs (4096, 882) float32
masks = envs.action_masks()             # (4096, 1676) bool, also info["action_mask"]
obs, rew, term, trunc, info = envs.step(actions)
```

It is a ``gymnasium.vector.VectorEnv`` with the single env's layouts (observation exactly
``castle_siege.observation.encode``, ``Discrete(1676)`` per env, the same mask), and it is
the same game: env ``i`` reset with ``seed=s`` plays exactly the games of
``CastleSiegeEnv`` reset with ``seed=s + i`` (what ``gymnasium.vector.SyncVectorEnv`` does),
action for action; ``tests/vector`` checks this over thousands of games.

**Autoreset** is ``SAME_STEP``: a finished env starts its next game in the same ``step``; the
returned observation and mask are the new game's, the last observation of the finished
game is ``info["final_obs"][i]`` where ``info["_final_obs"][i]``, and ``info["won"][i]`` says
whether it was won.

**Keyword arguments**: those of ``CastleSiegeEnv`` (``difficulty``, ``reward``,
``illegal_action``, ``illegal_action_penalty``, ``max_episode_steps``, ``render_mode``,
rules options ``attack``/``defeated``), plus ``copy`` (default True: returned arrays are
fresh copies, yours to change; False returns the env's own buffers, overwritten by the next
step, which is faster: treat them as read-only, because each step updates the observation
rows in place, writing only the entries that change, so an entry changed by the caller
would stay wrong, and checks actions against the mask rows), and ``threads`` (default 1)
or ``parallel`` (default False; True means one thread per available core, as long as each
gets 256 envs or more; ``threads``, when given, is used exactly, at most one per env): the
batch is split into that many contiguous row ranges, stepped concurrently
on Python threads (a persistent ``ThreadPoolExecutor``, shut down by ``close()``) by kernels
that release the GIL; no numba threading layer is involved. Rows are independent, so the
results are exactly those of one thread (``tests/vector/test_threads.py``). Whether it is
faster depends on free cores: measure with ``castle-envs bench castle-siege --parallel both``.
With ``illegal_action="raise"`` an illegal action raises ``IllegalActionError`` naming the env,
the move and why, before any env moves; with ``"penalty"`` that env's episode ends with the
penalty and ``info["illegal_action"][i]`` is True.
"""
from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..castle_siege.actions import NUM_ACTIONS
from ..castle_siege.env import CastleSiegeEnv
from ..castle_siege.observation import OBS_SIZE
from ..castle_siege.render import render_ansi, render_rgb
from ..castle_siege.rules import DIFFICULTIES, EVENTS, NO_CARD, State
from ..core.errors import EpisodeOverError, IllegalActionError
from . import pcg64
from . import siege_kernel as K
from ._jit import HAVE_NUMBA, INSTALL_HINT
from ._threads import RowThreads, resolve_threads

_warned = False


def _wrapping_ok():
    """The generator's uint64 arithmetic wraps by design; plain NumPy would warn."""
    return np.errstate(over="ignore")


class CastleSiegeVectorEnv(VectorEnv):
    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4,
                "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int, difficulty: str = "very_hard", reward: str = "win",
                 illegal_action: str = "raise", illegal_action_penalty: float = -1.0,
                 max_episode_steps: int = 1000, render_mode: str | None = None,
                 copy: bool = True, parallel: bool = False, threads: int | None = None,
                 **rules):
        global _warned
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        # the single env validates every option and owns the spaces
        single = CastleSiegeEnv(difficulty, render_mode, reward, illegal_action,
                                illegal_action_penalty, max_episode_steps, **rules)
        if not HAVE_NUMBA and not _warned:
            warnings.warn(f"numba is not installed: the batched Castle Siege kernels run as plain "
                          f"Python (correct but slow); {INSTALL_HINT}", stacklevel=3)
            _warned = True
        self.num_envs = int(num_envs)
        self.render_mode = render_mode
        self.copy = bool(copy)
        self._split = RowThreads(self.num_envs,
                                 resolve_threads(parallel, threads, self.num_envs))
        #: threads stepping the batch (contiguous row ranges; 1: the calling thread only)
        self.threads = self._split.threads
        self.parallel = self.threads > 1
        self.difficulty = difficulty
        self.rules = dict(single.rules)
        self.rows = DIFFICULTIES[difficulty]
        self.recent = self.rules["attack"] == "most_recent"
        self.leave = self.rules["defeated"] == "leave_game"
        self.shaped = single.reward_mode == "shaped"
        self.illegal_action = single.illegal_action
        self.penalty = single.illegal_action_penalty
        self.max_episode_steps = single.max_episode_steps
        self.single_observation_space = single.observation_space
        self.single_action_space = single.action_space
        self.observation_space = batch_space(single.observation_space, self.num_envs)
        self.action_space = batch_space(single.action_space, self.num_envs)

        n = self.num_envs
        # compiled kernels widen int8 arithmetic to int64; plain Python (NumPy scalars) would
        # not, so without numba the state lives in int64
        self._cards = np.zeros((n, K.CARD_WORDS), np.int8 if HAVE_NUMBA else np.int64)
        self._ints = np.zeros((n, K.INT_WORDS), np.int32 if HAVE_NUMBA else np.int64)
        self._rng = np.zeros((n, pcg64.WORDS), np.uint64)
        self._obs = np.zeros((n, OBS_SIZE), np.float32)
        self._mask_padded = np.zeros((n, K.MASK_WIDTH), bool)
        self._mask = self._mask_padded[:, :NUM_ACTIONS]
        self._final_obs = np.zeros((n, OBS_SIZE), np.float32)
        self._rewards = np.zeros(n, np.float64)
        self._terminated = np.zeros(n, bool)
        self._truncated = np.zeros(n, bool)
        self._done = np.zeros(n, bool)
        self._won = np.zeros(n, bool)
        self._illegal = np.zeros(n, bool)
        self._actions = np.zeros(n, np.int64)
        self._all = np.ones(n, bool)
        self._started = False

    # --- gymnasium API ---------------------------------------------------------------------
    def reset(self, *, seed=None, options: dict | None = None):
        """``seed``: an int (env i gets ``seed + i``), a list of per-env seeds, or None.
        ``options``: ``{"decks": (num_envs, 52) card ids, top first}`` deals those decks."""
        self._seed(seed)
        options = dict(options or {})
        unknown = sorted(set(options) - {"decks"})
        if unknown:
            raise ValueError(f"unknown reset option {unknown}; known: ['decks']")
        if options.get("decks") is not None:
            from ..castle_siege.rules import check_deck
            decks = [check_deck(d) for d in options["decks"]]
            if len(decks) != self.num_envs:
                raise ValueError(f"options['decks'] needs {self.num_envs} decks, got {len(decks)}")
            for i, deck in enumerate(decks):
                K.load_deal(self._cards[i], self._ints[i], self.rows, deck)
            self._mask_padded[:] = False
            K.refresh_all(self._cards, self._ints, self.rows, self.recent, self.leave,
                          self._obs, self._mask_padded)
        else:
            self.run_rows(K.reset_rows, self._cards, self._ints, self._rng, self.rows,
                          self.recent, self.leave, self._obs, self._mask_padded)
        self._started = True
        return self._out(self._obs), {"action_mask": self._out(self._mask),
                                      "_action_mask": self._all.copy()}

    def step(self, actions):
        if not self._started:
            raise EpisodeOverError("step() called before reset()")
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or not np.issubdtype(actions.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} integer action ids, "
                             f"got shape {actions.shape} dtype {actions.dtype}")
        self._actions[:] = actions
        if self.illegal_action == "raise":
            self._check_legal(self._actions)
        self.run_rows(K.step_rows, self._cards, self._ints, self._rng, self._actions, self.rows,
                      self.recent, self.leave, self.shaped, self.max_episode_steps, self.penalty,
                      self._obs, self._mask_padded, self._rewards, self._terminated,
                      self._truncated, self._done, self._won, self._illegal, self._final_obs)
        info = {"action_mask": self._out(self._mask), "_action_mask": self._all.copy()}
        if self._done.any():
            done = self._done.copy()
            info["_final_obs"] = done
            if self.copy:
                final = np.zeros_like(self._final_obs)
                final[done] = self._final_obs[done]
                info["final_obs"] = final
            else:
                info["final_obs"] = self._final_obs
            info["won"] = self._won & done
            info["_won"] = done
        if self.illegal_action == "penalty":
            info["illegal_action"] = self._illegal.copy()
            info["_illegal_action"] = self._all.copy()
        return (self._out(self._obs), self._out(self._rewards), self._out(self._terminated),
                self._out(self._truncated), info)

    def action_masks(self) -> np.ndarray:
        """(num_envs, 1676) bool: the legal actions of every env's current position."""
        if not self._started:
            raise EpisodeOverError("action_masks() called before reset()")
        return self._mask.copy()

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without render_mode; pass render_mode to make_vec()")
            return None
        draw = render_ansi if self.render_mode == "ansi" else render_rgb
        return tuple(draw(self.state(i)) for i in range(self.num_envs))

    def close_extras(self, **kwargs):
        self._split.close()

    def run_rows(self, kernel, *args) -> None:
        """``kernel(lo, hi, *args)`` on each of this env's row ranges, concurrently on its
        threads (one range, ``0, num_envs``, with one thread); for row-range kernels such as
        ``sample_counted_rows`` that touch only rows ``lo`` to ``hi - 1`` of every array."""
        with _wrapping_ok():
            self._split.run(kernel, *args)

    # --- positions as rules-core states ---------------------------------------------------------
    def state(self, i: int) -> State:
        """Env ``i``'s position as a ``castle_siege.rules.State`` (a copy)."""
        return read_state(self._cards[i], self._ints[i], self.rows, self.rules)

    def set_state(self, i: int, state: State) -> None:
        """Put ``state`` (same difficulty and rules) into env ``i``; its episode step count
        restarts at 0."""
        write_state(self._cards[i], self._ints[i], state, self.rows, self.rules)
        K.refresh_all(self._cards[i:i + 1], self._ints[i:i + 1], self.rows, self.recent,
                      self.leave, self._obs[i:i + 1], self._mask_padded[i:i + 1])
        self._started = True

    # --- helpers ---------------------------------------------------------------------------
    def _seed(self, seed) -> None:
        if seed is None:
            seeds = [None] * self.num_envs
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"need {self.num_envs} seeds, got {len(seeds)}")
        if seed is None and self._started:
            return   # keep playing from each env's generator, as a single env does
        for i, s in enumerate(seeds):
            generator, _ = seeding.np_random(s)
            self._rng[i] = pcg64.to_words(generator)

    def _check_legal(self, actions: np.ndarray) -> None:
        i = K.first_illegal(self._mask_padded, actions)
        if i < 0:
            return
        try:
            self.state(i).apply_action(int(actions[i]))
        except IllegalActionError as err:
            raise IllegalActionError(f"env {i}: {err}") from None
        raise AssertionError(f"env {i}: the mask and the rules disagree on {actions[i]}")

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self.copy else array


def read_state(b: np.ndarray, v: np.ndarray, rows: int, rules: dict) -> State:
    """The position in kernel rows ``b``/``v`` as a ``castle_siege.rules.State``."""
    s = State(rows, **rules)
    s.deck[:] = b[K.DECK:K.DECK + 52]
    s.deck_head, s.deck_size = int(v[K.HEAD]), int(v[K.DSIZE])
    s.hand[:] = b[K.HAND:K.HAND + 7]
    s.hand_size = int(v[K.HSIZE])
    s.columns[:] = b[K.COLS:K.COLS + 208].reshape(4, 52)
    s.col_len[:] = v[K.CLEN:K.CLEN + 4]
    s.castles[:] = b[K.CASTLES:K.CASTLES + 4]
    s.captured[:] = b[K.CAPTURED:K.CAPTURED + 4] != 0
    s.discard[:] = b[K.DISCARDED:K.DISCARDED + 52] != 0
    s.out_of_game[:] = b[K.OUT:K.OUT + 52] != 0
    s.recycled[:] = b[K.RECYCLED:K.RECYCLED + 52] != 0
    s.phase, s.regroup_used = int(v[K.PHASE]), bool(v[K.REGROUPED])
    s.turn, s.outcome = int(v[K.TURN]), int(v[K.OUTCOME])
    s.events[:] = v[K.EVENTS:K.EVENTS + len(EVENTS)]
    return s


def write_state(b: np.ndarray, v: np.ndarray, state: State, rows: int, rules: dict) -> None:
    """Load ``state`` into kernel rows ``b``/``v`` (episode step count 0)."""
    if state.rows != rows or (state.attack, state.defeated) != (rules["attack"], rules["defeated"]):
        raise ValueError("the state's difficulty and rules must match the env's")
    b[:] = 0
    v[:] = 0
    b[K.DECK:K.DECK + 52] = state.deck
    b[K.HAND:K.HAND + 7] = state.hand
    b[K.COLS:K.COLS + 208] = state.columns.ravel()
    b[K.CASTLES:K.CASTLES + 4] = state.castles
    b[K.CAPTURED:K.CAPTURED + 4] = state.captured
    b[K.DISCARDED:K.DISCARDED + 52] = state.discard
    b[K.OUT:K.OUT + 52] = state.out_of_game
    b[K.RECYCLED:K.RECYCLED + 52] = state.recycled
    v[K.HEAD], v[K.DSIZE], v[K.HSIZE] = state.deck_head, state.deck_size, state.hand_size
    v[K.CLEN:K.CLEN + 4] = state.col_len
    v[K.PHASE], v[K.REGROUPED] = state.phase, state.regroup_used
    v[K.TURN], v[K.OUTCOME] = state.turn, state.outcome
    v[K.EVENTS:K.EVENTS + len(EVENTS)] = state.events
