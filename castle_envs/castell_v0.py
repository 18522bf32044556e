"""Castell, PettingZoo AEC: ``castell_v0.env(num_players=2..4, advanced=False, render_mode=...)``."""

from .castell.env import env, raw_env

__all__ = ["env", "raw_env"]
