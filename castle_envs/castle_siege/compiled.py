"""``CompiledCastleSiegeEnv``: the single Gymnasium env, stepped by the batched env's kernels.

A drop-in for ``castle_siege.env.CastleSiegeEnv`` (same constructor, spaces, reset options,
observations, masks, rewards, info, errors; ``tests/vector`` compares them step by step) that
makes one compiled call per step, on the batched env's row layout and step kernel
(``kernel.step_one``, updating the observation in place). ``CastleSiegeEnv`` (what
``gymnasium.make`` gives) also plays a legal step in one kernel call (``kernel.play_shown``,
on its live ``rules.State``), and is as fast or faster; this env is the batched env's code
path one game at a time. ``env.state`` is a ``rules.State`` copy of the position, built on
demand (for rendering, describing moves, saving).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from castle_envs.castle_siege import kernel as K
from castle_envs.castle_siege.env import CastleSiegeEnv, event_info
from castle_envs.castle_siege.render import render_ansi, render_rgb
from castle_envs.castle_siege.rules import EVENTS, NUM_ACTIONS, State, check_deck
from castle_envs.castle_siege.vector import GameRows, read_state, write_state
from castle_envs.core.batched import KernelSingleEnv
from castle_envs.core.errors import EpisodeOverError
from castle_envs.core.state import check_options


class CompiledCastleSiegeEnv(GameRows, KernelSingleEnv):
    _view_names = ("_b", "_v")

    reference_env = CastleSiegeEnv

    def _bind_views(self) -> None:
        self._b, self._v = self._cards[0], self._ints[0]

    def _load(self, options: dict | None) -> None:
        options = check_options(dict(options or {}), {"deck": None, "state": None}, "reset option")
        if options["state"] is not None:
            if options["deck"] is not None:
                raise ValueError("reset options 'deck' and 'state' exclude each other")
            write_state(self._b, self._v, State.from_dict(options["state"]), self.rows, self.rules)
        elif options["deck"] is not None:
            K.load_deal(self._b, self._v, self.rows, check_deck(options["deck"]))
        else:
            # the deal comes from the env's np_random, exactly as CastleSiegeEnv draws it
            self._deal_from_np_random(lambda words: K.deal(self._b, self._v, words, self.rows))
        K.refresh_all(
            self._cards, self._ints, self.rows, self.recent, self.leave, self._obs, self._mask
        )

    def _step_kernel(self, action: int, out: Any) -> None:
        K.step_one(
            self._b,
            self._v,
            action,
            self.rows,
            self.recent,
            self.leave,
            self.shaped,
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
        return read_state(self._b, self._v, self.rows, self.rules)

    def describe_action(self, action: int) -> str:
        return self.state.describe_action(action)

    def render(self) -> str | np.ndarray | None:
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
