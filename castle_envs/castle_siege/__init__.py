"""Castle Siege: rules core (``State``), action layout, observation, renderer and env."""

from .actions import ACTIONS, NUM_ACTIONS, decode_action, encode_action, play_action
from .env import CastleSiegeEnv
from .rules import DIFFICULTIES, State

__all__ = [
    "ACTIONS",
    "NUM_ACTIONS",
    "CastleSiegeEnv",
    "DIFFICULTIES",
    "State",
    "decode_action",
    "encode_action",
    "play_action",
]
