"""The thin PettingZoo AEC layer shared by the multi-player games (PettingZoo classic style).

A game supplies its ``GameState`` factory (with ``current_player`` naming the seat to act),
an observation encoder per seat, and renderers. Agents are ``player_0`` … ``player_{n-1}``;
``observe(agent)`` returns ``{"observation": vector, "action_mask": int8 mask}`` (with
``observation="flat"``: one float32 vector, the observation then the mask as 0/1, in a
``Box``, for SuperSuit-style observation wrappers, with the mask as a 0/1 array in
``infos[agent]["action_mask"]`` too); ``action_masks()`` gives the acting agent's mask in
both forms. The mask is all zero for every agent but the one to act, and for everyone once
the game ended or was truncated. It is in the observation or in the info, never in both:
TorchRL's ``PettingZooWrapper`` reads it from one place and takes every other info entry as
data (and PettingZoo's ``api_test`` requires ``last()``'s info to be ``infos[agent]``).
Rewards are the game's returns, paid when the game ends. By default
(``illegal_action="penalty"``) an illegal action gives the offender the penalty and ends the
game for everyone (PettingZoo's ``TerminateIllegalWrapper`` convention); with
``illegal_action="raise"`` it raises ``IllegalActionError`` naming the move. An action
outside the action space (not an integer, below 0, at or above its size) raises
``ActionSpaceError`` in both modes and changes nothing. ``winners()`` gives the winning
seats.

The rules state of the game is ``env.game_state``. ``env.state()`` is PettingZoo's global
state for centralized critics (MAPPO and the like): every seat's observation, concatenated
in seat order, in ``env.state_space``. (``env.state`` read as an attribute still answers
with the rules state, with a ``DeprecationWarning``: it was the rules state's name.)

Infos have the same keys and shapes at every step (replay buffers such as Tianshou's stack
them): each game's own entries, ``illegal_action`` in penalty mode, and with
``observation="flat"`` ``action_mask``.
``render_mode="human"`` prints the ``ansi`` text at each reset and step.
"""

from __future__ import annotations

import warnings
from abc import abstractmethod
from typing import Any

import gymnasium
import numpy as np
from pettingzoo import AECEnv
from pettingzoo.utils.wrappers import OrderEnforcingWrapper

from .env_common import DEFAULT_ILLEGAL_ACTION, GameEnvMixin, flat_space, flatten
from .errors import EpisodeOverError, IllegalActionError
from .options import check_choice
from .state import GameState

#: reset option keys dropped without a word: PettingZoo's ``api_test`` and
#: ``parallel_api_test`` reset with ``options={"options": 1}`` to check that ``reset`` takes
#: the argument, and a checker passing is nothing for its user to act on
IGNORED_RESET_OPTIONS = frozenset({"options"})


class _StateMethod:
    """``env.state``: called, PettingZoo's global state; read as an attribute, the rules
    state it used to be (deprecated: ``env.game_state``)."""

    __slots__ = ("_env",)

    def __init__(self, env: Any) -> None:
        self._env = env

    def __call__(self) -> np.ndarray:
        return self._env.global_state()

    def __getattr__(self, name: str) -> Any:
        warnings.warn(
            "env.state as the rules state is deprecated: use env.game_state "
            "(env.state() is PettingZoo's global state)",
            DeprecationWarning,
            stacklevel=2,
        )
        if self._env.game_state is None:
            raise EpisodeOverError("the env has no position yet: call reset() first")
        return getattr(self._env.game_state, name)

    def __repr__(self) -> str:
        return f"<state() of {self._env!r}>"


class MaskedAECEnv(GameEnvMixin, AECEnv):
    metadata = {
        "render_modes": ["ansi", "rgb_array", "human"],
        "is_parallelizable": False,
        "render_fps": 2,
    }

    #: the keys ``reset(options=...)`` understands; others are dropped with a warning, but
    #: for ``IGNORED_RESET_OPTIONS``; known values are checked
    reset_option_keys: tuple[str, ...] = ("state",)
    #: ``observation=``: ``"dict"`` (``{"observation": vector, "action_mask": int8 mask}``) or
    #: ``"flat"`` (one float32 Box: the vector, then the mask as 0/1; the mask also in
    #: ``infos[agent]["action_mask"]``), for SuperSuit-style wrappers; ``action_masks()`` in both
    observation_modes = ("dict", "flat")
    _no_moves: np.ndarray  # the all-zero mask of the seats not to act (infos)

    def __init__(
        self,
        num_players: int,
        render_mode: str | None = None,
        illegal_action: str = DEFAULT_ILLEGAL_ACTION,
        illegal_action_penalty: float = -1.0,
        max_episode_steps: int = 5000,
        observation: str = "dict",
    ) -> None:
        super().__init__()
        self._set_common(render_mode, illegal_action, illegal_action_penalty, max_episode_steps)
        self.observation_mode = check_choice("observation", observation, self.observation_modes)
        self.num_players = int(num_players)
        self.possible_agents = [f"player_{i}" for i in range(self.num_players)]
        self.agent_name_mapping = {a: i for i, a in enumerate(self.possible_agents)}
        n_actions = len(self.state_type().actions)
        seat_space = self._observation_space()
        obs_space = (
            gymnasium.spaces.Dict(
                {
                    "observation": seat_space,
                    "action_mask": gymnasium.spaces.Box(0, 1, (n_actions,), dtype=np.int8),
                }
            )
            if self.observation_mode == "dict"
            else flat_space(seat_space, n_actions)
        )
        self.observation_spaces = {a: obs_space for a in self.possible_agents}
        self.action_spaces = {a: gymnasium.spaces.Discrete(n_actions) for a in self.possible_agents}
        self.state_space = gymnasium.spaces.Box(
            np.tile(seat_space.low, self.num_players),
            np.tile(seat_space.high, self.num_players),
            dtype=seat_space.dtype,
        )
        self.game_state: GameState | None = None
        self._rng = np.random.default_rng()

    # --- what each game provides -----------------------------------------------------------
    @classmethod
    @abstractmethod
    def state_type(cls) -> type[GameState]: ...

    @abstractmethod
    def _observation_space(self) -> gymnasium.spaces.Box: ...

    @abstractmethod
    def new_state(self, rng: np.random.Generator, options: dict) -> GameState: ...

    @abstractmethod
    def observe_state(self, state: GameState, seat: int) -> np.ndarray: ...

    @abstractmethod
    def render_state_ansi(self, state: GameState) -> str: ...

    @abstractmethod
    def render_state_rgb(self, state: GameState) -> np.ndarray: ...

    def _final_rewards(self, state: GameState) -> np.ndarray:
        """Each seat's reward when the game ends (default: the game's returns)."""
        return state.returns()

    def _game_infos(self, state: GameState, seat: int) -> dict:
        """A game's own info entries for ``seat``: the same keys and shapes at every step."""
        return {}

    # --- the global state -------------------------------------------------------------------
    @property
    def state(self) -> _StateMethod:
        return _StateMethod(self)

    def global_state(self) -> np.ndarray:
        """PettingZoo's ``state()``: every seat's observation, in seat order."""
        state = self._need_position("state()")
        return np.concatenate(
            [self.observe_state(state, seat) for seat in range(self.num_players)]
        ).astype(self.state_space.dtype, copy=False)

    # --- pettingzoo API --------------------------------------------------------------------
    def observation_space(self, agent: str) -> gymnasium.spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> gymnasium.spaces.Discrete:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        if options is not None and not isinstance(options, dict):
            raise ValueError(f"options must be a dict, got {type(options).__name__}")
        options = {k: v for k, v in (options or {}).items() if k not in IGNORED_RESET_OPTIONS}
        unknown = sorted(set(options) - set(self.reset_option_keys))
        if unknown:
            gymnasium.logger.warn(
                f"ignoring unknown reset options {unknown}; known: {sorted(self.reset_option_keys)}"
            )
            options = {k: v for k, v in options.items() if k in self.reset_option_keys}
        self.game_state = self.new_state(self._rng, options)
        self.agents = list(self.possible_agents)
        self.rewards = {a: 0.0 for a in self.agents}
        self._cumulative_rewards = {a: 0.0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self._steps = 0
        self.agent_selection = self.possible_agents[self.game_state.current_player]
        self._refresh_infos()
        self._render_human()

    def _acting_seat(self) -> int:
        """The seat whose moves are legal now; -1 once the game ended or was truncated."""
        state = self.game_state
        assert state is not None  # called after reset()
        if state.is_terminal() or any(self.truncations.values()) or any(self.terminations.values()):
            return -1
        return state.current_player

    def _need_position(self, what: str) -> GameState:
        """``what`` needs a game: before the first ``reset`` there is none (the project's
        error, as the solitaires answer, rather than an ``AttributeError`` on ``None``).
        Returns the game."""
        if self.game_state is None:
            raise EpisodeOverError(f"{what} called before reset(): call reset() first")
        return self.game_state

    def last(self, observe: bool = True) -> tuple:
        self._need_position("last()")
        return super().last(observe)

    def observe(self, agent: str) -> np.ndarray | dict[str, np.ndarray]:
        state = self._need_position("observe()")
        seat = self.agent_name_mapping[agent]
        mask = np.zeros(len(state.actions), dtype=np.int8)
        if self._acting_seat() == seat:
            mask[state.legal_action_mask()] = 1
        vector = self.observe_state(state, seat)
        if self.observation_mode == "flat":
            return flatten(vector, mask)
        return {"observation": vector, "action_mask": mask}

    def action_masks(self) -> np.ndarray:
        """Mask of the agent to act (for sb3-contrib style single-agent views); all False
        once the game ended or was truncated."""
        state = self._need_position("action_masks()")
        if self._acting_seat() < 0:
            return np.zeros(len(state.actions), dtype=bool)
        return state.legal_action_mask().copy()

    def step(self, action: Any) -> None:
        state = self._need_position("step()")
        if not self.agents:
            raise EpisodeOverError("the game is over and every agent is done; call reset()")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise EpisodeOverError(
                    f"{agent} is done: step(None) is the only move once the game has ended"
                )
            self._was_dead_step(action)
            return
        if action is None:
            raise IllegalActionError(f"{agent} must act: step(None) is only for finished agents")
        # outside the action space: a caller's bug, refused in every mode before any change
        action = state.actions.check(
            action, f"{self.metadata.get('name', type(self).__name__)} {agent}"
        )
        self._cumulative_rewards[agent] = 0.0
        try:
            state.apply_action(action)
        except IllegalActionError:
            if self.illegal_action == "raise":
                raise
            self.rewards = {a: 0.0 for a in self.agents}
            self.rewards[agent] = self.illegal_action_penalty
            self.terminations = {a: True for a in self.agents}
            self._accumulate_rewards()
            self._refresh_infos()
            self.infos[agent]["illegal_action"] = True
            self._render_human()
            return
        self._steps += 1
        if state.is_terminal():
            returns = self._final_rewards(state)
            self.rewards = {a: float(returns[i]) for i, a in enumerate(self.agents)}
            self.terminations = {a: True for a in self.agents}
        else:
            self.rewards = {a: 0.0 for a in self.agents}
            if self._steps >= self.max_episode_steps:
                self.truncations = {a: True for a in self.agents}
            self.agent_selection = self.possible_agents[state.current_player]
        self._accumulate_rewards()
        self._refresh_infos()
        self._render_human()

    def render(self) -> str | np.ndarray | None:
        if self.render_mode == "human":
            if self.game_state is None:
                raise EpisodeOverError("render() called before reset(): call reset() first")
            print(self.render_state_ansi(self.game_state), flush=True)
            return None
        return super().render()

    def _render_human(self) -> None:
        if self.render_mode == "human":
            self.render()

    def close(self) -> None:
        pass

    def _refresh_infos(self) -> None:
        state = self.game_state
        assert state is not None  # called after reset()
        acting = self._acting_seat()
        penalty = self.illegal_action == "penalty"
        # the dict observation carries the mask; the flat one only as floats, so the info does
        masked = self.observation_mode == "flat"
        if masked:
            # agents not to act share one read-only all-zero mask: infos are rebuilt every step
            n = len(state.actions)
            if getattr(self, "_no_moves", None) is None or len(self._no_moves) != n:
                self._no_moves = np.zeros(n, dtype=np.int8)
                self._no_moves.flags.writeable = False
        self.infos = {}
        for i, a in enumerate(self.agents):
            info = self._game_infos(state, i)
            if masked:
                info["action_mask"] = (
                    state.legal_action_mask().astype(np.int8) if i == acting else self._no_moves
                )
            if penalty:
                info["illegal_action"] = False
            self.infos[a] = info


def wrap(raw: MaskedAECEnv) -> StrictOrderEnforcingWrapper:
    """A raw env as ``env()`` gives it: in ``StrictOrderEnforcingWrapper``."""
    return StrictOrderEnforcingWrapper(raw)


class StrictOrderEnforcingWrapper(OrderEnforcingWrapper):
    """PettingZoo's ``OrderEnforcingWrapper``, except that a ``step`` after every agent is
    done raises ``EpisodeOverError`` (the raw env's answer) instead of a logged warning: a
    loop that keeps stepping a finished game has a bug worth hearing about."""

    def step(self, action: Any) -> None:
        if self._has_reset and not self.agents:
            raise EpisodeOverError("the game is over and every agent is done; call reset()")
        super().step(action)
