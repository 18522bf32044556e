"""Agents that search from what the player sees: MCTS, information-set MCTS, perfect-
information Monte Carlo over sampled deals, and the Castellion planner. Compiled parts sit
beside the agent that uses them (``*_kernel``)."""
