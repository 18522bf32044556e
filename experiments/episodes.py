"""Playing seeded episodes with agents: the one loop evaluate, tournament and the parallel
backends share.

An episode is a pure function of (game, variant, env options, agent specs, deal seed, agent
seed): the deal comes from ``default_rng(deal)`` with ``deal = seed + index`` (the same deal
``env.reset(seed=deal)`` gives), and the agent in seat ``s`` is reset with seed
``[agent_seed, deal, s]`` before it. So every agent sees the same deals (common random
numbers), and a deal plays the same whether it is run alone, first or last in a batch,
whatever the run's first seed, and however episodes are split among workers (an agent is
built once per worker and reused: ``reset`` must clear everything it carries between
games).

The loop drives the rules core directly (what the env does, without building observations
nobody reads): agents with ``needs_observation`` get the env's encoding for their seat.
"""

from __future__ import annotations

import numpy as np

from castle_envs.registry import get_game

_ENVS: dict = {}
_AGENTS: dict = {}


def _env(game: str, variant: tuple, env_options: tuple):
    key = (game, variant, env_options)
    if key not in _ENVS:
        _ENVS[key] = get_game(game).make(**dict(variant), **dict(env_options))
    return _ENVS[key]


def _agent(spec: str, game: str, seat: int):
    from castle_envs.agents.registry import make_agent

    key = (spec, game, seat)
    if key not in _AGENTS:  # built once per worker (a PPO model loads once)
        _AGENTS[key] = make_agent(spec, game)
    return _AGENTS[key]


#: info entries that are codes or flags, not counters (Castellion's ``phase`` is an index
#: into ``PHASE_NAMES``)
_NOT_COUNTERS = ("action_mask", "won", "illegal_action", "phase")


def _numeric_info(info: dict) -> dict:
    """The per-episode counters an env reports, by name: Castle Siege's ``events_<name>``
    info entries as ``<name>`` (evaluate writes them as the ``events_<name>`` columns), a
    multi-player game's ``{"events": state.event_counts()}`` likewise, and the other scalar
    numbers (e.g. Castellion's ``ordeals_passed``); arrays, bools and codes are left out."""
    out = {}

    def number(v):
        return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(
            v, (bool, np.bool_)
        )

    for key, value in info.items():
        if key in _NOT_COUNTERS:
            continue
        if isinstance(value, dict):
            for k, v in value.items():
                if number(v):
                    out[k] = float(v)
        elif number(value):
            out[key.removeprefix("events_")] = float(value)
    return out


def play_episode(
    game: str,
    variant: tuple,
    env_options: tuple,
    seats: tuple,
    seed: int,
    index: int,
    record: bool = False,
    agent_seed: int = 0,
) -> dict:
    """One game with ``seats[s]`` (agent specs) in seat ``s``; returns a small summary, and
    with ``record`` the game record as well (``records.py``: the deal, every action)."""
    spec = get_game(game)
    env = _env(game, variant, env_options)
    state = env.new_state(np.random.default_rng(seed + index), {})
    if len(seats) != state.num_players:
        raise ValueError(
            f"{game} with {dict(variant)} has {state.num_players} seats, got {len(seats)} agents"
        )
    agents = [_agent(s, game, i) for i, s in enumerate(seats)]
    deal = seed + index
    for seat, agent in enumerate(agents):
        agent.reset([agent_seed, deal, seat])
    recorder = None
    if record:
        from .records import Recorder

        recorder = Recorder(
            game,
            dict(variant),
            dict(env_options),
            seed + index,
            state,
            list(seats),
            "castle-envs episodes",
            [[agent_seed, deal, s] for s in range(len(seats))],
        )
    solitaire = spec.solitaire
    limit = env.max_episode_steps
    steps = 0
    while not state.is_terminal() and steps < limit:
        seat = state.current_player
        agent = agents[seat]
        mask = state.legal_action_mask()
        obs = None
        if agent.needs_observation:
            obs = env.observe_state(state) if solitaire else env.observe_state(state, seat)
        view = None
        if agent.needs_state:
            view = state.player_view(seat)
        action = agent.act(obs, mask, view)
        state.apply_action(action)
        steps += 1
        if recorder is not None:
            recorder.step(action, state)
    returns = [float(r) for r in state.returns()]
    events = {}
    if solitaire:
        events = _numeric_info(env.state_info(state))
    elif hasattr(state, "event_counts"):
        events = _numeric_info({"events": state.event_counts()})
    out = {
        "index": index,
        "returns": returns,
        "length": steps,
        "truncated": not state.is_terminal(),
        "events": events,
    }
    if recorder is not None:
        out["record"] = recorder.finish(state)
    return out


def play_chunk(
    game: str,
    variant: tuple,
    env_options: tuple,
    seat_plan: tuple,
    seed: int,
    indices: tuple,
    record_below: int = 0,
    agent_seed: int = 0,
) -> list:
    """Episodes ``indices``; ``seat_plan`` is a list of seat tuples, episode ``i`` uses
    ``seat_plan[i % len(seat_plan)]`` (one entry for evaluation; rotations for tournaments).
    Episodes with ``index < record_below`` carry their game record."""
    return [
        play_episode(
            game,
            variant,
            env_options,
            seat_plan[i % len(seat_plan)],
            seed,
            i,
            record=i < record_below,
            agent_seed=agent_seed,
        )
        for i in indices
    ]
