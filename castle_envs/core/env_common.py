"""What the Gymnasium and the PettingZoo layers share: checking the common keywords,
naming moves, and rendering through the game's two renderers."""
from __future__ import annotations

import gymnasium

from .errors import ActionTypeError, EpisodeOverError, IllegalActionError
from .state import choice_error

ILLEGAL_ACTION_MODES = ("raise", "penalty")


def screen_action(action, actions, mask, illegal_action: str, position) -> tuple:
    """``(action id, legal)`` for a step's action, read against ``mask``. With
    ``illegal_action="raise"`` an illegal one raises ``IllegalActionError`` naming the move
    and why (``position()`` gives the state that explains it); with ``"penalty"`` it comes
    back with ``legal`` False, for the caller to end the episode with the penalty. An action
    that is not an integer raises ``ActionTypeError`` in both modes: a caller's bug, not a
    move."""
    try:
        action = actions.check(action)
        legal = bool(mask[action])
    except IllegalActionError as err:
        if illegal_action == "raise" or isinstance(err, ActionTypeError):
            raise
        return action, False
    if not legal and illegal_action == "raise":
        position().apply_action(action)   # raises, naming the move and why
    return action, legal


class GameEnvMixin:
    """Needs ``state_type()``, ``_render_ansi``, ``_render_rgb`` and ``self.game_state``
    (the rules state; the Gymnasium envs also call it ``state``)."""

    def _set_common(self, render_mode, illegal_action, illegal_action_penalty,
                    max_episode_steps) -> None:
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise choice_error("render_mode", render_mode, self.metadata["render_modes"])
        if illegal_action not in ILLEGAL_ACTION_MODES:
            raise choice_error("illegal_action", illegal_action, ILLEGAL_ACTION_MODES)
        if int(max_episode_steps) < 1:
            raise ValueError(f"max_episode_steps must be >= 1, got {max_episode_steps}")
        self.render_mode = render_mode
        self.illegal_action = illegal_action
        self.illegal_action_penalty = float(illegal_action_penalty)
        self.max_episode_steps = int(max_episode_steps)

    def decode_action(self, action):
        return self.state_type().actions.decode(action)

    def encode_action(self, move) -> int:
        return self.state_type().actions.encode(move)

    def describe_action(self, action) -> str:
        if self.game_state is None:
            raise EpisodeOverError("describe_action() needs a position: call reset() first")
        return self.game_state.describe_action(action)

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without render_mode; pass render_mode "
                                  "when making the env")
            return None
        if self.game_state is None:
            raise EpisodeOverError("render() called before reset()")
        if self.render_mode == "ansi":
            return self._render_ansi(self.game_state)
        return self._render_rgb(self.game_state)
