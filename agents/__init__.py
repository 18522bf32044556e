"""Baseline and learned agents for castle-envs."""
from .base import Agent, RandomAgent

__all__ = ["Agent", "RandomAgent"]
