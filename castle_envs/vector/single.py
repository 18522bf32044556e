"""``CompiledCastleSiegeEnv``: the single Gymnasium env, stepped by the batched env's kernels.

A drop-in for ``castle_siege.env.CastleSiegeEnv`` (same constructor, spaces, reset options,
observations, masks, rewards, info, errors; ``tests/vector`` compares them step by step) that
makes one compiled call per step instead of running the rules in Python. It exists to show
what the single env gains from the compiled core, and as the piece ``CastleSiegeEnv`` could
delegate to (one source of truth for the rules). ``env.state`` is a ``rules.State`` copy of
the position, built on demand (for rendering, describing moves, saving).
"""

from __future__ import annotations

import gymnasium as gym
import numpy as np

from ..castle_siege.env import CastleSiegeEnv, event_info
from ..castle_siege.observation import OBS_SIZE
from ..castle_siege.render import render_ansi, render_rgb
from ..castle_siege.rules import DIFFICULTIES, EVENTS, NUM_ACTIONS, State, check_deck
from ..core.env_common import DEFAULT_ILLEGAL_ACTION
from ..core.errors import EpisodeOverError
from ..core.state import check_options
from ..core import pcg64
from ..castle_siege import kernel as K
from ._base import KernelSingleEnv, state_dtype
from ..core.jit import COMPILED
from .castle_siege import read_state, write_state


class CompiledCastleSiegeEnv(KernelSingleEnv):
    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4}
    _state_type = State
    _num_actions = NUM_ACTIONS
    _view_names = ("_b", "_v")

    def __init__(
        self,
        difficulty: str = "very_hard",
        render_mode: str | None = None,
        reward: str = "win",
        illegal_action: str = DEFAULT_ILLEGAL_ACTION,
        illegal_action_penalty: float = -1.0,
        max_episode_steps: int = 1000,
        **rules,
    ):
        reference = CastleSiegeEnv(
            difficulty,
            render_mode,
            reward,
            illegal_action,
            illegal_action_penalty,
            max_episode_steps,
            **rules,
        )
        self._adopt_settings(reference)
        self.difficulty = difficulty
        self._rows = DIFFICULTIES[difficulty]
        self._recent = self.rules["attack"] == "most_recent"
        self._leave = self.rules["defeated"] == "leave_game"
        self._shaped = self.reward_mode == "shaped"
        self._cards = np.zeros((1, K.CARD_WORDS), state_dtype())
        self._ints = np.zeros((1, K.INT_WORDS), np.int32 if COMPILED else np.int64)
        self._ints[:, K.STRICT] = self.rules["victory"] == "deck_left"  # kept by every deal
        self._rng = np.zeros((1, pcg64.WORDS), np.uint64)
        self._obs = np.zeros((1, OBS_SIZE), np.float32)
        self._mask = np.zeros((1, K.MASK_WIDTH), bool)
        self._out = np.zeros(3)
        self._bind_views()
        self._started = self._done = False

    def _bind_views(self) -> None:
        self._b, self._v = self._cards[0], self._ints[0]

    def _load(self, options) -> None:
        options = check_options(dict(options or {}), {"deck": None, "state": None}, "reset option")
        if options["state"] is not None:
            if options["deck"] is not None:
                raise ValueError("reset options 'deck' and 'state' exclude each other")
            write_state(self._b, self._v, State.from_dict(options["state"]), self._rows, self.rules)
        elif options["deck"] is not None:
            K.load_deal(self._b, self._v, self._rows, check_deck(options["deck"]))
        else:
            # the deal comes from the env's np_random, exactly as CastleSiegeEnv draws it
            self._deal_from_np_random(lambda words: K.deal(self._b, self._v, words, self._rows))
        K.refresh_all(
            self._cards, self._ints, self._rows, self._recent, self._leave, self._obs, self._mask
        )

    def _step_kernel(self, action, out) -> None:
        K.step_one(
            self._b,
            self._v,
            action,
            self._rows,
            self._recent,
            self._leave,
            self._shaped,
            self.max_episode_steps,
            self._obs[0],
            self._mask[0],
            out,
        )

    @property
    def state(self) -> State:
        """The position as a ``castle_siege.rules.State`` (a copy)."""
        if not self._started:
            return None  # type: ignore[return-value]  # before reset() (as the Python env)
        return read_state(self._b, self._v, self._rows, self.rules)

    def describe_action(self, action) -> str:
        return self.state.describe_action(action)

    def render(self):
        if self.render_mode is None:
            gym.logger.warn("render() called without render_mode; pass render_mode to make()")
            return None
        if not self._started:
            raise EpisodeOverError("render() called before reset(): call reset() first")
        return (render_ansi if self.render_mode == "ansi" else render_rgb)(self.state)

    def _info(self) -> dict:
        v = self._v
        return {
            **event_info(v[K.EVENTS : K.EVENTS + len(EVENTS)].tolist()),
            "won": bool(v[K.OUTCOME] == 1),
            "action_mask": self._mask[0, :NUM_ACTIONS].copy(),
        }
