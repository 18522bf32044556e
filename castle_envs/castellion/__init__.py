"""Castellion: rules core (``State``), action layout, observation, renderer and env."""

from .actions import ACTIONS, NUM_ACTIONS
from .data import LEVELS
from .env import CastellionEnv
from .rules import State

__all__ = ["ACTIONS", "NUM_ACTIONS", "CastellionEnv", "LEVELS", "State"]
