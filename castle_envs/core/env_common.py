"""What the Gymnasium and the PettingZoo layers share: checking the common keywords,
naming moves, and rendering through the game's two renderers."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import gymnasium
import numpy as np

from .errors import EpisodeOverError
from .options import check_choice, check_int, check_real

if TYPE_CHECKING:
    from .state import GameState

ILLEGAL_ACTION_MODES = ("raise", "penalty")
#: every env's default: an illegal action ends the episode with ``illegal_action_penalty``
#: (PettingZoo classic's convention, and what Gymnasium's and PettingZoo's checkers need,
#: as they step unmasked random actions); ``illegal_action="raise"`` raises instead
DEFAULT_ILLEGAL_ACTION = "penalty"
#: the keyword arguments every env's constructor names after its game's own (the constructors'
#: ``KEYWORDS``, beside the rules options); Castle Rooms has no ``reward``
ENV_KEYWORDS = (
    "render_mode",
    "reward",
    "illegal_action",
    "illegal_action_penalty",
    "max_episode_steps",
    "observation",
)


def screen_action(
    action: Any,
    actions: Any,
    mask: np.ndarray,
    illegal_action: str,
    position: Callable[[], Any],
    who: str = "",
) -> tuple:
    """``(action id, legal)`` for a step's action, read against ``mask``. With
    ``illegal_action="raise"`` an illegal one raises ``IllegalActionError`` naming the move
    and why (``position()`` gives the state that explains it); with ``"penalty"`` it comes
    back with ``legal`` False, for the caller to end the episode with the penalty. An action
    outside the action space (not an integer, below 0, at or above its size) raises
    ``ActionSpaceError`` naming ``who`` (the env), the value and the space, in both modes: a
    caller's bug, not a move."""
    action = actions.check(action, who)
    legal = bool(mask[action])
    if not legal and illegal_action == "raise":
        position().apply_action(action)  # raises, naming the move and why
    return action, legal


def flat_space(observation: gymnasium.spaces.Box, num_actions: int) -> gymnasium.spaces.Box:
    """The ``observation="flat"`` space: the observation vector, then the action mask as
    0/1 floats, in one float32 ``Box`` (what SuperSuit-style observation wrappers take)."""
    return gymnasium.spaces.Box(
        np.concatenate([observation.low, np.zeros(num_actions)]).astype(np.float32),
        np.concatenate([observation.high, np.ones(num_actions)]).astype(np.float32),
        dtype=np.float32,
    )


def flatten(observation: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """An ``observation="flat"`` observation: ``observation`` then ``mask`` as float32."""
    return np.concatenate([observation, mask]).astype(np.float32, copy=False)


class GameEnvMixin:
    """Needs ``state_type()``, ``render_state_ansi``, ``render_state_rgb`` and ``self.game_state``
    (the rules state; the Gymnasium envs also call it ``state``)."""

    # what the env classes provide, declared for the type checker
    metadata: dict[str, Any]
    game_state: Any
    state_type: Callable[[], type[GameState]]
    render_state_ansi: Callable[[GameState], str]
    render_state_rgb: Callable[[GameState], np.ndarray]

    def _set_common(
        self,
        render_mode: str | None,
        illegal_action: str,
        illegal_action_penalty: float,
        max_episode_steps: int,
    ) -> None:
        # every check names the argument, the value and what is accepted (core.options)
        self.render_mode = check_choice(
            "render_mode", render_mode, [None, *self.metadata["render_modes"]]
        )
        self.illegal_action = check_choice("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        self.illegal_action_penalty = check_real("illegal_action_penalty", illegal_action_penalty)
        self.max_episode_steps = check_int("max_episode_steps", max_episode_steps, 1)

    def decode_action(self, action: Any) -> Any:
        return self.state_type().actions.decode(action)

    def encode_action(self, move: Any) -> int:
        return self.state_type().actions.encode(move)

    def winners(self) -> list[int]:
        """Who won, the same question for every game: the winning seats (``player_k`` is
        seat ``k``), ``[]`` while the game is on. Solitaires: ``[0]`` on a win, ``[]``
        otherwise (playing, lost, truncated); Castle Rooms: the winners (a shared win lists
        every sharer); Castell: every player with the top total once the game is over."""
        if self.game_state is None:
            raise EpisodeOverError("winners() called before reset(): call reset() first")
        return self.game_state.winning_seats()

    def describe_action(self, action: Any) -> str:
        if self.game_state is None:
            raise EpisodeOverError("describe_action() needs a position: call reset() first")
        return self.game_state.describe_action(action)

    def render(self) -> str | np.ndarray | None:
        if self.render_mode is None:
            gymnasium.logger.warn(
                "render() called without render_mode; pass render_mode when making the env"
            )
            return None
        if self.game_state is None:
            raise EpisodeOverError("render() called before reset(): call reset() first")
        if self.render_mode == "ansi":
            return self.render_state_ansi(self.game_state)
        return self.render_state_rgb(self.game_state)
