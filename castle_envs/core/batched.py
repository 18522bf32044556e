"""What the kernel-backed envs share, whatever the game.

``KernelVectorEnv`` is the batched ``gymnasium.vector.VectorEnv`` plumbing: seeding (env ``i``
gets ``seed + i``, one PCG64 generator per row), the ``step`` checks and the row-range kernel
call, the info dict (``action_mask``, the game's own entries and ``won`` as the single env
gives them, ``final_obs`` where an episode ended, ``illegal_action`` in penalty mode),
``copy`` handling, ``action_masks``, rendering, the
``RowThreads`` split and ``close``. A game's env adds only what differs: its kernel module,
its state rows and their conversion to and from a rules ``State``, its reset options.

``KernelSingleEnv`` is the same for the compiled single envs: the ``reset``/``step``
preamble (option type, episode over, action check and illegal-action handling) around the
game's one-row kernels.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from castle_envs.core import pcg64
from castle_envs.core.actions import out_of_space
from castle_envs.core.env_common import DEFAULT_ILLEGAL_ACTION, flatten, screen_action
from castle_envs.core.errors import (
    ActionTypeError,
    EpisodeOverError,
    IllegalActionError,
    InvalidOptionError,
    InvalidStateError,
)
from castle_envs.core.jit import COMPILED, HAVE_NUMBA, INSTALL_HINT
from castle_envs.core.options import check_bool, check_int
from castle_envs.core.threads import RowThreads, resolve_threads


def _wrapping_ok() -> np.errstate:
    """The generator's uint64 arithmetic wraps by design; plain NumPy would warn."""
    return np.errstate(over="ignore")


def state_dtype() -> type[np.integer]:
    """int8 rows when compiled; uncompiled (no numba, or ``NUMBA_DISABLE_JIT``) the kernels run
    on NumPy scalars, which do not widen int8 arithmetic as numba does, so the rows are int64."""
    return np.int8 if COMPILED else np.int64


class OwnViews:
    """Copies and pickles of an env that keeps views of its own arrays (``_mask`` of the
    padded mask, a single env's row of its state rows): ``copy.deepcopy`` and ``pickle`` copy
    a view as a separate array, which would leave the kernels writing one buffer while the
    env reads another. The views named in ``_view_names`` are left out of the copied state
    and made again by ``_bind_views`` from the copied arrays."""

    _view_names: tuple[str, ...] = ()

    def _bind_views(self) -> None:
        raise NotImplementedError

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        for name in self._view_names:
            state.pop(name, None)
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self._bind_views()


def check_options_type(options: Any) -> None:
    if options is not None and not isinstance(options, dict):
        raise ValueError(f"options must be a dict, got {type(options).__name__}")


class KernelVectorEnv(OwnViews, VectorEnv):
    """Subclasses set ``kernel`` (the kernels' module: ``reset_rows``, ``step_rows``,
    ``first_illegal``, ``MASK_WIDTH``), ``game_title``, ``single_env``, ``_obs_size`` and
    ``_num_actions``, name their game's first argument in a two-line ``__init__`` (the rest
    is this ``__init__``'s), and define ``_set_game(single, n)`` (the game's attributes and
    state rows; it sets ``_row_state``, the per-row state arrays the row kernels take before
    the generator, ``_game_args``, the game's parameters after it, and ``_reward_arg``) and
    ``state(i)``."""

    metadata = {
        "render_modes": ["ansi", "rgb_array"],
        "render_fps": 4,
        "autoreset_mode": AutoresetMode.SAME_STEP,
    }

    kernel: Any = None
    game_title = ""
    # what each game's env defines (see above), declared for the type checker
    _row_state: tuple
    _game_args: tuple
    _reward_arg: Any
    state: Callable[[int], Any]
    _refresh: Callable[[slice], None]
    _warned_games: set = set()
    _view_names = ("_mask",)

    #: the game's Python env (its first argument, then the common ones: see ``__init__``)
    single_env: Any
    #: the state rows the game's info entries are read from (``info_entries``); the step
    #: kernels copy a finished game's rows into ``_final_rows`` before the next deal
    info_rows_attr: str
    #: the observation's length and the number of action ids
    _obs_size: int
    _num_actions: int

    def __init__(
        self,
        num_envs: int,
        game_option: Any,
        reward: str = "win",
        illegal_action: str = DEFAULT_ILLEGAL_ACTION,
        illegal_action_penalty: float = -1.0,
        max_episode_steps: int = 1000,
        render_mode: str | None = None,
        copy: bool = True,
        parallel: bool = False,
        threads: int | None = None,
        **rules: Any,
    ) -> None:
        """``game_option``: the game's own first argument (each game's ``__init__`` names it
        and gives its default); the rest are the single env's keywords and the batch's."""
        num_envs = check_int("num_envs", num_envs, 1)
        # the single env validates every option and owns the spaces
        single = self.single_env(
            game_option,
            render_mode,
            reward,
            illegal_action,
            illegal_action_penalty,
            max_episode_steps,
            **rules,
        )
        self._setup(single, num_envs, render_mode, copy, parallel, threads)
        self._set_game(single, self.num_envs)
        self._allocate(self._obs_size, self._num_actions)

    def _set_game(self, single: Any, n: int) -> None:
        """The game's own attributes and ``n`` state rows; sets ``_row_state``,
        ``_game_args`` and ``_reward_arg`` (the game's ``GameRows``)."""
        raise NotImplementedError

    def _setup(
        self,
        single: Any,
        num_envs: int,
        render_mode: str | None,
        copy: bool,
        parallel: bool,
        threads: int | None,
    ) -> None:
        """The common attributes, from the single env (which validated every option and owns
        the spaces); warns once per game when numba is missing."""
        if not HAVE_NUMBA and self.game_title not in KernelVectorEnv._warned_games:
            # stacklevel: _setup, the base's and the game's __init__, its caller, then the
            # user's line
            warnings.warn(
                f"numba is not installed: the batched {self.game_title} kernels run "
                f"as plain Python (correct but slow); {INSTALL_HINT}",
                stacklevel=5,
            )
            KernelVectorEnv._warned_games.add(self.game_title)
        if single.observation_mode != "vector":
            raise InvalidOptionError(
                f"observation {single.observation_mode!r}: the batched envs give the "
                "observation vector only, with the masks in info['action_mask'] and "
                "action_masks(); for flat observations with the mask use "
                "gymnasium.make_vec(id, n, vectorization_mode='sync', observation='flat')"
            )
        self._single = single  # it also parses reset options (Castellion)
        self.num_envs = int(num_envs)
        self.render_mode = render_mode
        self.copy = check_bool("copy", copy)
        parallel = check_bool("parallel", parallel)
        self._split = RowThreads(self.num_envs, resolve_threads(parallel, threads, self.num_envs))
        #: threads stepping the batch (contiguous row ranges; 1: the calling thread only)
        self.threads = self._split.threads
        self.parallel = self.threads > 1
        self.rules = dict(single.rules)
        self.illegal_action = single.illegal_action
        self.penalty = single.illegal_action_penalty
        self.max_episode_steps = single.max_episode_steps
        self.single_observation_space = single.observation_space
        self.single_action_space = single.action_space
        self.observation_space = batch_space(single.observation_space, self.num_envs)
        self.action_space = batch_space(single.action_space, self.num_envs)

    def _allocate(self, obs_size: int, num_actions: int) -> None:
        """The buffers every game has (the game's state rows are its own)."""
        n = self.num_envs
        self._rng = np.zeros((n, pcg64.WORDS), np.uint64)
        self._obs = np.zeros((n, obs_size), np.float32)
        self._mask_padded = np.zeros((n, self.kernel.MASK_WIDTH), bool)
        self._num_actions = int(num_actions)
        self._bind_views()
        self._final_obs = np.zeros((n, obs_size), np.float32)
        self._final_rows = np.zeros_like(getattr(self, self.info_rows_attr))
        self._rewards = np.zeros(n, np.float64)
        self._terminated = np.zeros(n, bool)
        self._truncated = np.zeros(n, bool)
        self._done = np.zeros(n, bool)
        self._won = np.zeros(n, bool)
        self._illegal = np.zeros(n, bool)
        self._actions = np.zeros(n, np.int64)
        self._sample_words = np.ones(n, np.uint64)  # sample_actions' streams (xorshift64*)
        self._all = np.ones(n, bool)
        self._started = False

    def _bind_views(self) -> None:
        self._mask = self._mask_padded[:, : self._num_actions]

    def __getstate__(self) -> dict:
        # a thread pool cannot be copied: the copy gets its own (none once closed)
        state = super().__getstate__()
        state["_split"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        self._split = RowThreads(self.num_envs, 1 if self.closed else self.threads)

    # --- gymnasium API ---------------------------------------------------------------------
    def _reset_rows(self) -> None:
        """Every env deals a fresh game from its generator (the row kernels, on the threads)."""
        self.run_rows(
            self.kernel.reset_rows,
            *self._row_state,
            self._rng,
            *self._game_args,
            self._obs,
            self._mask_padded,
        )

    def _reset_result(self) -> tuple[np.ndarray, dict]:
        self._started = True
        info = {"action_mask": self._out(self._mask), "_action_mask": self._all.copy()}
        self._with_game_info(info, None)
        if self.illegal_action == "penalty":
            info["illegal_action"] = np.zeros(self.num_envs, bool)
            info["_illegal_action"] = self._all.copy()
        return self._out(self._obs), info

    def info_entries(self, rows: np.ndarray, obs: np.ndarray) -> dict[str, np.ndarray]:
        """The game's own info entries (the single env's, but ``won``), one array row per
        row of ``rows`` (state rows of ``info_rows_attr``'s layout) and ``obs``."""
        raise NotImplementedError

    def _with_game_info(self, info: dict, done: np.ndarray | None) -> dict:
        """``info`` with the game's entries and ``won``, each with its ``_`` mask (all True):
        the keys the single env's info has. Where ``done``, they describe the game that
        just ended (its last position, as ``final_obs``), not the one dealt after it."""
        entries = self.info_entries(getattr(self, self.info_rows_attr), self._obs)
        won = np.zeros(self.num_envs, bool)
        if done is not None:
            for key, final in self.info_entries(
                self._final_rows[done], self._final_obs[done]
            ).items():
                entries[key][done] = final
            won = self._won & done
        entries["won"] = won
        for key, values in entries.items():
            info[key] = values
            info[f"_{key}"] = self._all.copy()
        return info

    def step(self, actions: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
        if not self._started:
            raise EpisodeOverError("step() called before reset(): call reset() first")
        self._read_actions(actions)
        if self.illegal_action == "raise":
            self._check_legal(self._actions)
        # the kernels' BatchStep, as a plain tuple (numba types it faster than a named one)
        step = (
            self.max_episode_steps,
            self.penalty,
            self._rewards,
            self._terminated,
            self._truncated,
            self._done,
            self._won,
            self._illegal,
            self._final_obs,
            self._final_rows,
        )
        self.run_rows(
            self.kernel.step_rows,
            *self._row_state,
            self._rng,
            self._actions,
            *self._game_args,
            self._reward_arg,
            self._obs,
            self._mask_padded,
            step,
        )
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
            self._with_game_info(info, done)
        else:
            self._with_game_info(info, None)
        if self.illegal_action == "penalty":
            info["illegal_action"] = self._illegal.copy()
            info["_illegal_action"] = self._all.copy()
        return (
            self._out(self._obs),
            self._out(self._rewards),
            self._out(self._terminated),
            self._out(self._truncated),
            info,
        )

    def action_masks(self) -> np.ndarray:
        if not self._started:
            raise EpisodeOverError("action_masks() called before reset(): call reset() first")
        return self._mask.copy()

    def sample_actions(self, out: np.ndarray | None = None) -> np.ndarray:
        """A uniformly random legal action for every env, ``(num_envs,)`` int64, drawn by the
        compiled kernels on the env's threads (much faster than sampling the masks in NumPy).
        Each env draws from its own stream, seeded by ``reset(seed=...)`` (env ``i`` from
        seed ``s + i``), so a seeded run is reproducible; the game's own random streams are
        not touched. Rows always have a legal action (episodes restart in the same step);
        for masks that may not (Gymnasium's next-step autoreset), see
        ``castle_envs.sample_masked``. ``out``: an int64 array to fill instead."""
        if not self._started:
            raise EpisodeOverError("sample_actions() called before reset(): call reset() first")
        if out is None:
            out = np.empty(self.num_envs, np.int64)
        elif out.shape != (self.num_envs,) or out.dtype != np.int64:
            raise ValueError(f"out must be an int64 array of shape ({self.num_envs},)")
        self._draw_actions(out)
        return out

    def _draw_actions(self, out: np.ndarray) -> None:
        """Games whose kernels count the legal actions per row override this."""
        self.run_rows(self.kernel.sample_legal_rows, self._mask_padded, self._sample_words, out)

    def render(self) -> tuple | None:
        if self.render_mode is None:
            gym.logger.warn("render() called without render_mode; pass render_mode to make_vec()")
            return None
        single = self._single  # the game's renderers
        draw = single.render_state_ansi if self.render_mode == "ansi" else single.render_state_rgb
        return tuple(draw(self.state(i)) for i in range(self.num_envs))

    def close_extras(self, **kwargs: Any) -> None:
        self._split.close()

    #: the game's attributes that hold the batch's whole position (checkpoint key ->
    #: attribute), and those its move kernel takes (``row_args``), set by each game
    position_attrs: dict[str, str] = {}
    row_attrs: tuple[str, ...] = ()

    def position_arrays(self) -> dict[str, np.ndarray]:
        """The batch's whole position and generators (views, not copies): what a training
        checkpoint keeps; write into them, then call ``restart()``."""
        return {
            **{key: getattr(self, name) for key, name in self.position_attrs.items()},
            "rng": self._rng.view(np.int64),
        }

    def restart(self) -> np.ndarray:
        """After ``position_arrays()`` were written: check every row (``check_row``), then
        recompute every row's observation and mask and return the observations, as
        ``reset`` would (no deal is made). Rows written from outside (a training checkpoint
        read back) are untrusted: the compiled kernels index arrays with their words
        unchecked, so a row is refused here, before any kernel reads it."""
        self._started = False
        for i in range(self.num_envs):
            self.check_row(i)
        self._refresh(slice(None))
        self._started = True
        return self._out(self._obs)

    def check_row(self, i: int) -> None:
        """Row ``i`` must hold a game in play exactly as the kernels write one: it reads as a
        state the game's saved-state checks accept (``from_dict`` of its ``to_dict``), not
        over, that encodes back to the same words (``_same_row``: a word out of range reads
        as something else, or not at all), with an episode step count below
        ``max_episode_steps``; its scratch words are cleared. Else ``InvalidStateError``
        naming the env and what is wrong."""
        try:
            state = self.state(i)
            checked = type(state).from_dict(state.to_dict())
            same = self._same_row(i, checked)
        except InvalidStateError as err:
            raise InvalidStateError(f"env {i}: {err}") from None
        except (IndexError, KeyError, OverflowError, TypeError, ValueError) as err:
            raise InvalidStateError(
                f"env {i}: the row holds no {self.game_title} position ({err})"
            ) from None
        if not same:
            raise InvalidStateError(
                f"env {i}: the row holds words out of range or out of place for the "
                f"position it reads as"
            )
        if checked.is_terminal():
            raise InvalidStateError(f"env {i}: its game is over (a batch row is always in play)")
        steps = self._episode_steps(i)
        if not 0 <= steps < self.max_episode_steps:
            raise InvalidStateError(
                f"env {i}: episode step count {steps} is outside 0-{self.max_episode_steps - 1}"
            )

    def _same_row(self, i: int, state: Any) -> bool:
        """Whether row ``i``'s position words are ``state`` written by the game's writer;
        if so the row is rewritten from it (scratch cleared, step count kept)."""
        raise NotImplementedError

    def _episode_steps(self, i: int) -> int:
        """Row ``i``'s step count in its episode."""
        raise NotImplementedError

    def row_args(self) -> tuple:
        """The position rows and game parameters the game's move kernel takes."""
        return tuple(getattr(self, name) for name in self.row_attrs)

    def run_rows(self, kernel: Callable[..., Any], *args: Any) -> None:
        """``kernel(lo, hi, *args)`` on each of this env's row ranges, concurrently on its
        threads (one range, ``0, num_envs``, with one thread); for row-range kernels such as
        ``sample_counted_rows`` that touch only rows ``lo`` to ``hi - 1`` of every array."""
        with _wrapping_ok():
            self._split.run(kernel, *args)

    # --- helpers ---------------------------------------------------------------------------
    def _seed(self, seed: Any) -> None:
        seeds: list[int | None]
        if seed is None:
            seeds = [None] * self.num_envs
        elif isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
            seeds = [int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"need {self.num_envs} seeds, got {len(seeds)}")
        if seed is None and self._started:
            return  # keep playing from each env's generator, as a single env does
        for i, s in enumerate(seeds):
            generator, _ = seeding.np_random(s)
            self._rng[i] = pcg64.to_words(generator)
            # sample_actions' stream: from the same seed, apart from the game's (never 0)
            entropy = np.random.SeedSequence(s, spawn_key=(1,)).generate_state(1, np.uint64)
            self._sample_words[i] = entropy[0] | np.uint64(1)

    def _read_actions(self, actions: Any) -> None:
        """Checks ``actions`` and copies them into ``self._actions`` (int64). Ids outside the
        action space are read before the copy (a huge unsigned id would wrap to a small or
        negative one): the first one raises ``ActionSpaceError`` naming its env, value and
        the space, in every ``illegal_action`` mode, before any row changes."""
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,) or actions.dtype.kind not in "iu":
            raise ActionTypeError(
                f"{type(self).__name__}: actions must be {self.num_envs} integer action ids, "
                f"got shape {actions.shape} dtype {actions.dtype}"
            )
        out = (actions < 0) | (actions >= self._num_actions)
        if out.any():
            i = int(np.flatnonzero(out)[0])
            raise out_of_space(int(actions[i]), self._num_actions, f"{type(self).__name__} env {i}")
        self._actions[:] = actions

    def _check_legal(self, actions: np.ndarray) -> None:
        i = self.kernel.first_illegal(self._mask_padded, actions)
        if i < 0:
            return
        try:
            self.state(i).apply_action(int(actions[i]))
        except IllegalActionError as err:
            raise IllegalActionError(f"env {i}: {err}") from None
        raise AssertionError(f"env {i}: the mask and the rules disagree on {actions[i]}")

    def _out(self, array: np.ndarray) -> np.ndarray:
        return array.copy() if self.copy else array


class KernelSingleEnv(OwnViews, gym.Env):
    """Subclasses set ``reference_env`` (the game's Python env, whose arguments they take),
    ``kernel``, ``_obs_size``, ``_num_actions`` and ``_state_type``, and define
    ``_set_game(reference, n)`` (the game's attributes and state row), ``_load(options)`` (deal or load a
    position, then refresh observation and mask), ``_step_kernel(action, out)``,
    ``_info()`` and the ``state`` property; state rows they keep a view of are named in
    ``_view_names`` and made by ``_bind_views`` (``OwnViews``)."""

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    # what each game's env defines (see above) and sets, declared for the type checker
    _obs: np.ndarray
    _mask: np.ndarray
    _out: np.ndarray
    _num_actions: int
    _state_type: Any
    _load: Callable[[dict | None], None]
    _step_kernel: Callable[[int, np.ndarray], None]
    _info: Callable[[], dict]
    state: Any
    illegal_action: str
    illegal_action_penalty: float
    _started: bool
    _done: bool

    #: the game's Python env: this env takes its arguments (names, order, defaults)
    reference_env: Any
    #: the kernels' module (``MASK_WIDTH``)
    kernel: Any
    _obs_size: int

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        """The arguments of ``reference_env``, which checks every one of them."""
        reference = self.reference_env(*args, **kwargs)
        self._reference = reference
        self._adopt_settings(reference)
        self._set_game(reference, 1)
        self._obs = np.zeros((1, self._obs_size), np.float32)
        self._mask = np.zeros((1, self.kernel.MASK_WIDTH), bool)
        self._out = np.zeros(3)
        self._bind_views()
        self._started = self._done = False

    def _set_game(self, reference: Any, n: int) -> None:
        """The game's own attributes and its state row (``n`` = 1; the game's ``GameRows``)."""
        raise NotImplementedError

    def _adopt_settings(self, reference: Any) -> None:
        """The settings and spaces of ``reference``, the game's Python env made with the
        same arguments: it has checked every one of them."""
        self.render_mode = reference.render_mode
        self.illegal_action = reference.illegal_action
        self.illegal_action_penalty = reference.illegal_action_penalty
        self.max_episode_steps = reference.max_episode_steps
        self.rules = dict(reference.rules)
        self.reward_mode = reference.reward_mode
        self.observation_mode = reference.observation_mode
        self.action_space = reference.action_space
        self.observation_space = reference.observation_space

    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        super().reset(seed=seed)
        check_options_type(options)
        self._load(options)
        self._started, self._done = True, False
        return self._present(), self._full_info()

    def _present(self) -> np.ndarray:
        """The observation in the ``observation`` form the env was made with."""
        if getattr(self, "observation_mode", "vector") == "flat":
            return flatten(self._obs[0], self._mask[0, : self._num_actions])
        return self._obs[0].copy()

    def _deal_from_np_random(self, deal: Callable[[np.ndarray], Any]) -> None:
        """``deal(words)`` from the env's np_random, exactly as the Python env draws it; the
        generator then continues where the kernel's copy of it stopped."""
        words = pcg64.to_words(self.np_random)
        with _wrapping_ok():
            deal(words)
        self.np_random.bit_generator.state = pcg64.from_words(words).bit_generator.state

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        if not self._started:
            raise EpisodeOverError("step() called before reset(): call reset() first")
        if self._done:
            raise EpisodeOverError("step() called after the episode ended; call reset() first")
        action, legal = screen_action(
            action,
            self._state_type.actions,
            self._mask[0],
            self.illegal_action,
            lambda: self.state,
            type(self).__name__,
        )
        if not legal:
            self._done = True
            info = self._full_info()
            info["illegal_action"] = True
            return self._present(), self.illegal_action_penalty, True, False, info
        out = self._out
        self._step_kernel(action, out)
        terminated, truncated = bool(out[1]), bool(out[2])
        self._done = terminated or truncated
        return self._present(), float(out[0]), terminated, truncated, self._full_info()

    def _full_info(self) -> dict:
        """``_info()`` with ``illegal_action`` (False) in penalty mode: the same keys at
        every step, as the Python envs give them."""
        info = self._info()
        if self.illegal_action == "penalty":
            info["illegal_action"] = False
        return info

    def action_masks(self) -> np.ndarray:
        if not self._started:
            raise EpisodeOverError("action_masks() called before reset(): call reset() first")
        return self._mask[0, : self._num_actions].copy()

    def winners(self) -> list[int]:
        """``[0]`` once the game is won, ``[]`` otherwise (as the Python envs answer)."""
        if not self._started:
            raise EpisodeOverError("winners() called before reset(): call reset() first")
        return [0] if self._info()["won"] else []

    @property
    def game_state(self) -> Any:
        """The position as a rules state (a copy; ``state``: the name every env kind shares)."""
        return self.state
