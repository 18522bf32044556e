"""``CastellionVectorEnv``: many Castellion games stepped at once by a compiled kernel.

```python
import castle_envs
envs = castle_envs.make_vec("castellion", num_envs=4096, level="menace")
obs, info = envs.reset(seed=0)          # obs (4096, 449) float32
masks = envs.action_masks()             # (4096, 137) bool, also info["action_mask"]
obs, rew, term, trunc, info = envs.step(actions)
```

It is a ``gymnasium.vector.VectorEnv`` with the single env's layouts (observation exactly
``castellion.observation.encode``, ``Discrete(137)`` per env, the same mask), and it is the
same game: env ``i`` reset with ``seed=s`` plays exactly the games of ``CastellionEnv``
reset with ``seed=s + i`` (what ``gymnasium.vector.SyncVectorEnv`` does), action for action;
``tests/vector/test_castellion_*`` check this over thousands of games at every level.

**Autoreset** is ``SAME_STEP``: a finished env starts its next game in the same ``step``; the
returned observation and mask are the new game's, the last observation of the finished
game is ``info["final_obs"][i]`` where ``info["_final_obs"][i]``, and ``info["won"][i]`` says
whether it was won.

**Keyword arguments**: those of ``CastellionEnv`` (``level``, ``reward``, ``illegal_action``,
``illegal_action_penalty``, ``max_episode_steps``, ``render_mode``, rules option
``foundation_exemption``), plus ``copy`` (default True: returned arrays are fresh copies;
False returns the env's own buffers, overwritten by the next step, which is faster) and
``threads``/``parallel`` (as ``CastleSiegeVectorEnv``'s: the batch split into contiguous row
ranges stepped concurrently on Python threads, identical results). With
``illegal_action="raise"`` an illegal action raises ``IllegalActionError`` naming the env, the
move and why, before any env moves; with ``"penalty"`` that env's episode ends with the
penalty and ``info["illegal_action"][i]`` is True.

**Reset options** are the single env's (``regular_order``, ``regular_top``, ``safe_order``,
``safe_top``, ``ordeals``, ``state``), applied to every env as ``SyncVectorEnv`` passes them
to each of its envs (each env draws what the options leave open from its own generator);
later autoresets deal plain games, as the single env's ``reset()`` without options does.
"""
from __future__ import annotations

import warnings

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..castellion.actions import NUM_ACTIONS
from ..castellion.data import LEVELS, NUM_KINDS
from ..castellion.env import CastellionEnv
from ..castellion.observation import OBS_SIZE
from ..castellion.render import render_ansi, render_rgb
from ..castellion.rules import PHASE_NAMES, State
from ..core.env_common import GameEnvMixin
from ..core.errors import EpisodeOverError, IllegalActionError
from . import castellion_kernel as K
from . import pcg64
from ._jit import HAVE_NUMBA, INSTALL_HINT
from ._threads import RowThreads, resolve_threads

_warned = False


def _wrapping_ok():
    """The generator's uint64 arithmetic wraps by design; plain NumPy would warn."""
    return np.errstate(over="ignore")


def state_dtype():
    """int8 rows when compiled; without numba the kernels run on NumPy scalars, which do not
    widen int8 arithmetic as numba does, so the rows are int64."""
    return np.int8 if HAVE_NUMBA else np.int64


class CastellionVectorEnv(VectorEnv):
    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4,
                "autoreset_mode": AutoresetMode.SAME_STEP}

    def __init__(self, num_envs: int, level: str = "school", reward: str = "win",
                 illegal_action: str = "raise", illegal_action_penalty: float = -1.0,
                 max_episode_steps: int = 1000, render_mode: str | None = None,
                 copy: bool = True, parallel: bool = False, threads: int | None = None,
                 **rules):
        global _warned
        if isinstance(num_envs, bool) or not isinstance(num_envs, (int, np.integer)) or num_envs < 1:
            raise ValueError(f"num_envs must be a positive int, got {num_envs!r}")
        # the single env validates every option, owns the spaces and parses reset options
        single = CastellionEnv(level, render_mode, reward, illegal_action,
                               illegal_action_penalty, max_episode_steps, **rules)
        if not HAVE_NUMBA and not _warned:
            warnings.warn(f"numba is not installed: the batched Castellion kernels run as plain "
                          f"Python (correct but slow); {INSTALL_HINT}", stacklevel=3)
            _warned = True
        self._single = single
        self.num_envs = int(num_envs)
        self.render_mode = render_mode
        self.copy = bool(copy)
        self._split = RowThreads(self.num_envs,
                                 resolve_threads(parallel, threads, self.num_envs))
        #: threads stepping the batch (contiguous row ranges; 1: the calling thread only)
        self.threads = self._split.threads
        self.parallel = self.threads > 1
        self.level = level
        self.rules = dict(single.rules)
        self._level = LEVELS.index(level)
        self._nexempt = self.rules["foundation_exemption"] == "neighbors"
        self._ordeals_reward = single.reward_mode == "ordeals"
        self.illegal_action = single.illegal_action
        self.penalty = single.illegal_action_penalty
        self.max_episode_steps = single.max_episode_steps
        self.single_observation_space = single.observation_space
        self.single_action_space = single.action_space
        self.observation_space = batch_space(single.observation_space, self.num_envs)
        self.action_space = batch_space(single.action_space, self.num_envs)

        n = self.num_envs
        self._st = np.zeros((n, K.WORDS), state_dtype())
        self._steps = np.zeros(n, np.int64)
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

    #: the kernels' module (``castle-envs bench`` samples with its ``sample_legal``)
    kernel = K

    # --- gymnasium API ---------------------------------------------------------------------
    def reset(self, *, seed=None, options: dict | None = None):
        """``seed``: an int (env i gets ``seed + i``), a list of per-env seeds, or None.
        ``options``: the single env's reset options, applied to every env."""
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        self._seed(seed)
        if options:
            states = []
            for i in range(self.num_envs):
                generator = pcg64.from_words(self._rng[i])
                states.append(self._single._new_state(generator, dict(options)))
                self._rng[i] = pcg64.to_words(generator)
            for i, state in enumerate(states):
                write_state(self._st[i], state, self._level, self.rules)
            self._steps[:] = 0
            K.refresh_all(self._st, self._level, self._nexempt, self._obs, self._mask_padded)
        else:
            self.run_rows(K.reset_rows, self._st, self._steps, self._rng, self._level,
                          self._nexempt, self._obs, self._mask_padded)
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
        self.run_rows(K.step_rows, self._st, self._steps, self._rng, self._actions, self._level,
                      self._nexempt, self._ordeals_reward, self.max_episode_steps, self.penalty,
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
        """(num_envs, 137) bool: the legal actions of every env's current position."""
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
        """Env ``i``'s position as a ``castellion.rules.State`` (a copy)."""
        return read_state(self._st[i], self._level, self.rules)

    def set_state(self, i: int, state: State) -> None:
        """Put ``state`` (same level and rules) into env ``i``; its episode step count
        restarts at 0."""
        write_state(self._st[i], state, self._level, self.rules)
        self._steps[i] = 0
        K.refresh_all(self._st[i:i + 1], self._level, self._nexempt, self._obs[i:i + 1],
                      self._mask_padded[i:i + 1])
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


def read_state(s: np.ndarray, level: int, rules: dict) -> State:
    """The position in the kernel row ``s`` as a ``castellion.rules.State``."""
    st = State(level, **rules)
    ints = [int(x) for x in s]
    st.regular = ints[K.REG:K.REG + ints[K.REG_N]]
    st.safe = ints[K.SAFE:K.SAFE + ints[K.SAFE_N]]
    st.revealed = ints[K.REV:K.REV + ints[K.REV_N]]
    st.hand = ints[K.HAND]
    st.cells = ints[K.CELL:K.CELL + K.CELLS]
    st.heights = ints[K.HEIGHT:K.HEIGHT + K.SIZE]
    st.discard = ints[K.DISC:K.DISC + NUM_KINDS]
    st.removed = ints[K.REMOVED:K.REMOVED + NUM_KINDS]
    st.ordeals = ints[K.ORD:K.ORD + 3]
    st.face_down = [bool(x) for x in ints[K.FACE:K.FACE + 3]]
    st.beside = [ints[K.BESIDE + 2 * slot:K.BESIDE + 2 * slot + 2] for slot in range(3)]
    st.current, st.phase = ints[K.CURRENT], ints[K.PHASE]
    st.destroy_left, st.destroy_reason = ints[K.DLEFT], ints[K.DREASON]
    st.reveal_left, st.recover_shape = ints[K.RLEFT], ints[K.RSHAPE]
    st.lifted, st.lift_origin = ints[K.LIFTED], ints[K.LORIGIN]
    st.outcome = ints[K.OUTCOME]
    return st


def write_state(s: np.ndarray, state: State, level: int, rules: dict) -> None:
    """Load ``state`` into the kernel row ``s``."""
    if state.level != level or state.foundation_exemption != rules["foundation_exemption"]:
        raise ValueError("the state's level and rules must match the env's")
    K.clear(s)
    s[K.REG:K.REG + len(state.regular)] = state.regular
    s[K.SAFE:K.SAFE + len(state.safe)] = state.safe
    s[K.REV:K.REV + len(state.revealed)] = state.revealed
    s[K.REG_N], s[K.SAFE_N], s[K.REV_N] = len(state.regular), len(state.safe), len(state.revealed)
    s[K.HAND] = state.hand
    s[K.CELL:K.CELL + K.CELLS] = state.cells
    s[K.HEIGHT:K.HEIGHT + K.SIZE] = state.heights
    s[K.DISC:K.DISC + NUM_KINDS] = state.discard
    s[K.REMOVED:K.REMOVED + NUM_KINDS] = state.removed
    s[K.ORD:K.ORD + 3] = state.ordeals
    s[K.FACE:K.FACE + 3] = state.face_down
    s[K.BESIDE:K.BESIDE + 6] = [n for pair in state.beside for n in pair]
    s[K.CURRENT], s[K.PHASE] = state.current, state.phase
    s[K.DLEFT], s[K.DREASON] = state.destroy_left, state.destroy_reason
    s[K.RLEFT], s[K.RSHAPE] = state.reveal_left, state.recover_shape
    s[K.LIFTED], s[K.LORIGIN] = state.lifted, state.lift_origin
    s[K.OUTCOME] = state.outcome


class CompiledCastellionEnv(GameEnvMixin, gym.Env):
    """The single Gymnasium env, stepped by the batched env's kernels: a drop-in for
    ``castellion.env.CastellionEnv`` (same constructor, spaces, reset options, observations,
    masks, rewards, info, errors; ``tests/vector/test_castellion_single.py`` compares them
    step by step) that makes one compiled call per step. ``env.state`` is a
    ``rules.State`` copy of the position, built on demand (rendering, naming moves, saving)."""
    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, level: str = "school", render_mode: str | None = None,
                 reward: str = "win", illegal_action: str = "raise",
                 illegal_action_penalty: float = -1.0, max_episode_steps: int = 1000, **rules):
        reference = CastellionEnv(level, render_mode, reward, illegal_action,
                                  illegal_action_penalty, max_episode_steps, **rules)
        self._reference = reference
        self._set_common(render_mode, illegal_action, illegal_action_penalty, max_episode_steps)
        self.level, self.rules = level, dict(reference.rules)
        self.reward_mode = reference.reward_mode
        self.action_space = reference.action_space
        self.observation_space = reference.observation_space
        self._level = LEVELS.index(level)
        self._nexempt = self.rules["foundation_exemption"] == "neighbors"
        self._ordeals_reward = self.reward_mode == "ordeals"
        self._st = np.zeros((1, K.WORDS), state_dtype())
        self._s = self._st[0]
        self._steps = np.zeros(1, np.int64)
        self._obs = np.zeros((1, OBS_SIZE), np.float32)
        self._mask = np.zeros((1, K.MASK_WIDTH), bool)
        self._out = np.zeros(3)
        self._started = self._done = False

    @classmethod
    def state_type(cls):
        return State

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        if options:
            # fixed piles, ordeals or a saved state: the Python env's own parsing and deal
            write_state(self._s, self._reference._new_state(self.np_random, dict(options)),
                        self._level, self.rules)
        else:
            # the deal comes from the env's np_random, exactly as CastellionEnv draws it
            words = pcg64.to_words(self.np_random)
            with _wrapping_ok():
                K.deal(self._s, words, self._level)
            self.np_random.bit_generator.state = pcg64.from_words(words).bit_generator.state
        K.refresh_all(self._st, self._level, self._nexempt, self._obs, self._mask)
        self._steps[0] = 0
        self._started, self._done = True, False
        return self._obs[0].copy(), self._info()

    def step(self, action):
        if not self._started:
            raise EpisodeOverError("step() called before reset()")
        if self._done:
            raise EpisodeOverError("step() called after the episode ended; call reset() first")
        try:
            action = State.actions.check(action)
            legal = bool(self._mask[0, action])
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            legal = False
        if not legal:
            if self.illegal_action == "raise":
                self.state.apply_action(action)   # raises, naming the move and why
            self._done = True
            info = self._info()
            info["illegal_action"] = True
            return self._obs[0].copy(), self.illegal_action_penalty, True, False, info
        out = self._out
        K.step_one(self._s, self._steps, action, self._level, self._nexempt,
                   self._ordeals_reward, self.max_episode_steps, self._obs[0], self._mask[0], out)
        terminated, truncated = bool(out[1]), bool(out[2])
        self._done = terminated or truncated
        return self._obs[0].copy(), float(out[0]), terminated, truncated, self._info()

    def action_masks(self) -> np.ndarray:
        if not self._started:
            raise EpisodeOverError("action_masks() called before reset()")
        return self._mask[0, :NUM_ACTIONS].copy()

    @property
    def state(self) -> State | None:
        """The position as a ``castellion.rules.State`` (a copy); None before ``reset``."""
        if not self._started:
            return None
        return read_state(self._s, self._level, self.rules)

    def _render_ansi(self, state):
        return render_ansi(state)

    def _render_rgb(self, state):
        return render_rgb(state)

    def _info(self) -> dict:
        s = self._s
        return {"phase": PHASE_NAMES[int(s[K.PHASE])], "ordeals_passed": int(s[K.CURRENT]),
                "formations": tuple(int(x) for x in K.formations(s)),
                "won": bool(s[K.OUTCOME] == 1),
                "action_mask": self._mask[0, :NUM_ACTIONS].copy()}
