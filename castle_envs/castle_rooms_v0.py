"""Castle Rooms (2-4 players), PettingZoo AEC: ``castle_rooms_v0.env(num_players=...)``."""

from .castle_rooms.env import env, raw_env

__all__ = ["env", "raw_env"]
