"""Baseline and learned agents for castle-envs.

``make_agent("mcts:sims=200", "castle-siege", seed=0)`` builds an agent by its command-line
name (``castle_envs.agents.registry``); every agent implements ``castle_envs.agents.base.Agent``.
"""

from .base import Agent, PolicyAgent, RandomAgent
from .registry import available_agents, make_agent, split_agent_list

__all__ = [
    "Agent",
    "PolicyAgent",
    "RandomAgent",
    "make_agent",
    "split_agent_list",
    "available_agents",
]
