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

**Info** has the single env's keys at every step, each a ``(num_envs,)`` array (``(num_envs,
3)`` for ``formations``) with its ``_`` mask: ``action_mask`` (the new game's where one
ended), ``phase``, ``ordeals_passed``, ``formations``, ``won`` (where an episode ended, those
of the game that ended, as ``final_obs``), ``illegal_action`` in penalty mode; and
``final_obs`` where an episode ended.

**Keyword arguments**: those of ``CastellionEnv`` (``level``, ``reward``, ``illegal_action``,
``illegal_action_penalty``, ``max_episode_steps``, ``render_mode``, rules options
``foundation_exemption`` and ``early_encounter``), plus ``copy`` (default True: returned arrays are fresh copies;
False returns the env's own buffers, overwritten by the next step, which is faster) and
``threads``/``parallel`` (as ``CastleSiegeVectorEnv``'s: the batch split into contiguous row
ranges stepped concurrently on Python threads, identical results). With
``illegal_action="raise"`` an illegal action raises ``IllegalActionError`` naming the env, the
move and why, before any env moves; with ``"penalty"`` that env's episode ends with the
penalty and ``info["illegal_action"][i]`` is True. An action outside ``Discrete(137)`` raises
``ActionSpaceError`` naming the env in both modes, before any env moves.

**Reset options** are the single env's (``regular_order``, ``regular_top``, ``safe_order``,
``safe_top``, ``ordeals``, ``state``), applied to every env as ``SyncVectorEnv`` passes them
to each of its envs (each env draws what the options leave open from its own generator);
later autoresets deal plain games, as the single env's ``reset()`` without options does.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from castle_envs.castellion import kernel as K
from castle_envs.castellion.actions import NUM_ACTIONS
from castle_envs.castellion.data import LEVELS
from castle_envs.castellion.env import CastellionEnv, game_info
from castle_envs.castellion.layout import SCALAR_OFF
from castle_envs.castellion.observation import OBS_SIZE
from castle_envs.castellion.render import render_ansi, render_rgb
from castle_envs.castellion.rules import State
from castle_envs.core import pcg64
from castle_envs.core.batched import (
    KernelSingleEnv,
    KernelVectorEnv,
    check_options_type,
    state_dtype,
)
from castle_envs.core.env_common import GameEnvMixin


class GameRows:
    """What the batched and the compiled single env keep of the game: its parameters as the
    kernels take them, and the state rows."""

    #: the kernels' module (``sample_actions`` draws with its ``sample_legal``)
    kernel = K
    _obs_size, _num_actions, _state_type = OBS_SIZE, NUM_ACTIONS, State
    rules: dict

    def _set_game(self, reference: CastellionEnv, n: int) -> None:
        """From ``reference`` (the Python env made with the same arguments), ``n`` rows."""
        self.level = reference.level
        self.level_index = LEVELS.index(self.level)
        self.rule_flags = K.rule_flags(self.rules)
        self._ordeals_reward = reference.reward_mode == "ordeals"
        self._st = np.zeros((n, K.WORDS), state_dtype())
        self._steps = np.zeros(n, np.int64)
        # what the batched env's row kernels take
        self._row_state = (self._st, self._steps)
        self._game_args = (self.level_index, self.rule_flags)
        self._reward_arg = self._ordeals_reward


class CastellionVectorEnv(GameRows, KernelVectorEnv):
    game_title = "Castellion"
    single_env = CastellionEnv
    position_attrs = {"st": "_st", "steps": "_steps"}
    row_attrs = ("_st", "level_index", "rule_flags")
    info_rows_attr = "_st"

    def info_entries(self, rows: np.ndarray, obs: np.ndarray) -> dict[str, np.ndarray]:
        """``phase``, ``ordeals_passed`` (int64) and ``formations`` (int64, 3 a row) of every
        row, as the single env gives them; the formations are the observation's, which holds
        them divided by 9 (``observation``: towers, bastions, lines now / 9)."""
        formations = obs[:, SCALAR_OFF : SCALAR_OFF + 3].astype(np.float64) * 9
        return {
            "phase": rows[:, K.PHASE].astype(np.int64),
            "ordeals_passed": rows[:, K.CURRENT].astype(np.int64),
            "formations": np.rint(formations).astype(np.int64),
        }

    def __init__(self, num_envs: int, level: str = "school", *args: Any, **kwargs: Any) -> None:
        """``level`` and the other keyword arguments: module docstring."""
        super().__init__(num_envs, level, *args, **kwargs)

    # --- gymnasium API ---------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict | None = None
    ) -> tuple[np.ndarray, dict]:
        """``seed``: an int (env i gets ``seed + i``), a list of per-env seeds, or None.
        ``options``: the single env's reset options, applied to every env."""
        check_options_type(options)
        self._seed(seed)
        if options:
            states = []
            for i in range(self.num_envs):
                generator = pcg64.from_words(self._rng[i])
                states.append(self._single.new_state(generator, dict(options)))
                self._rng[i] = pcg64.to_words(generator)
            for i, state in enumerate(states):
                write_state(self._st[i], state, self.level_index, self.rules)
            self._steps[:] = 0
            self._refresh(slice(None))
        else:
            self._reset_rows()
        return self._reset_result()

    def action_masks(self) -> np.ndarray:
        """(num_envs, 137) bool: the legal actions of every env's current position."""
        return super().action_masks()

    # --- positions as rules-core states ---------------------------------------------------------
    def state(self, i: int) -> State:
        """Env ``i``'s position as a ``castellion.rules.State`` (a copy)."""
        return read_state(self._st[i], self.level_index, self.rules)

    def set_state(self, i: int, state: State) -> None:
        """Put ``state`` (same level and rules) into env ``i``; its episode step count
        restarts at 0."""
        write_state(self._st[i], state, self.level_index, self.rules)
        self._steps[i] = 0
        self._refresh(slice(i, i + 1))
        self._started = True

    def _same_row(self, i: int, state: State) -> bool:
        s = np.zeros_like(self._st[i])
        write_state(s, state, self.level_index, self.rules)
        same = np.array_equal(s[: K.SCRATCH], self._st[i, : K.SCRATCH])
        if same:
            self._st[i] = s
        return bool(same)

    def _episode_steps(self, i: int) -> int:
        return int(self._steps[i])

    def _refresh(self, rows: slice) -> None:
        """Observation and mask rows recomputed from the state rows."""
        K.refresh_all(
            self._st[rows],
            self.level_index,
            self.rule_flags,
            self._obs[rows],
            self._mask_padded[rows],
        )


def read_state(s: np.ndarray, level: int, rules: dict) -> State:
    """The position in the kernel row ``s`` as a ``castellion.rules.State`` (a copy)."""
    st = State(level, **rules)
    # a State is a view over a row of this layout: the position's words are copied, the
    # kernel's scratch words are not
    st.s[: K.SCRATCH] = s[: K.SCRATCH]
    return st


def write_state(s: np.ndarray, state: State, level: int, rules: dict) -> None:
    """Load ``state`` into the kernel row ``s``."""
    if state.level != level or state.rule_options() != rules:
        raise ValueError("the state's level and rules must match the env's")
    K.clear(s)
    s[: K.SCRATCH] = state.s[: K.SCRATCH]


class CompiledCastellionEnv(GameRows, GameEnvMixin, KernelSingleEnv):
    """The single Gymnasium env, stepped by the batched env's kernels: a drop-in for
    ``castellion.env.CastellionEnv`` (same constructor, spaces, reset options, observations,
    masks, rewards, info, errors; ``tests/vector/test_castellion_single.py`` compares them
    step by step) that makes one compiled call per step. ``env.state`` is a
    ``rules.State`` copy of the position, built on demand (rendering, naming moves, saving)."""

    _view_names = ("_s",)

    reference_env = CastellionEnv

    def _bind_views(self) -> None:
        self._s = self._st[0]

    @classmethod
    def state_type(cls) -> type[State]:
        return State

    def _load(self, options: dict | None) -> None:
        if options:
            # fixed piles, ordeals or a saved state: the Python env's own parsing and deal
            write_state(
                self._s,
                self._reference.new_state(self.np_random, dict(options)),
                self.level_index,
                self.rules,
            )
        else:
            # the deal comes from the env's np_random, exactly as CastellionEnv draws it
            self._deal_from_np_random(lambda words: K.deal(self._s, words, self.level_index))
        K.refresh_all(self._st, self.level_index, self.rule_flags, self._obs, self._mask)
        self._steps[0] = 0

    def _step_kernel(self, action: int, out: np.ndarray) -> None:
        K.step_one(
            self._s,
            self._steps,
            action,
            self.level_index,
            self.rule_flags,
            self._ordeals_reward,
            self.max_episode_steps,
            self._obs[0],
            self._mask[0],
            out,
        )

    @property
    def state(self) -> State | None:
        """The position as a ``castellion.rules.State`` (a copy); None before ``reset``."""
        if not self._started:
            return None
        return read_state(self._s, self.level_index, self.rules)

    def render_state_ansi(self, state) -> str:
        return render_ansi(state)

    def render_state_rgb(self, state) -> np.ndarray:
        return render_rgb(state)

    def _info(self) -> dict:
        s = self._s
        return {
            **game_info(s[K.PHASE], s[K.CURRENT], K.formations(s), s[K.OUTCOME] == 1),
            "action_mask": self._mask[0, :NUM_ACTIONS].copy(),
        }
