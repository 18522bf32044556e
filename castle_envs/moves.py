"""Move-feature views: each legal move as a row of features, for learners that score moves.

A flat masked action space (Castle Siege: 1676 ids) says nothing about what an id *does*;
a network over it must learn that id 837 spends the 7 and the 9 at the Queen of hearts. A
move-feature view describes every legal move instead: what it spends, what it targets,
what it triggers. A policy then scores each row with one shared network and takes a
softmax over the legal moves (DouZero's and many card-game agents' design).

```python
import castle_envs
from castle_envs.moves import MoveFeatureObservation, make_move_vec

env = MoveFeatureObservation(castle_envs.get_game("castle-siege").make(difficulty="hard"))
obs, info = env.reset(seed=0)
obs["observation"]    # (882,) the env's own vector
obs["move_features"]  # (256, 75) float32 in [0, 1], one row per legal move
obs["move_ids"]       # (256,) int64: the env action id of each row
obs["move_mask"]      # (256,) int8: 1 where the row is a legal move
env.step(obs["move_ids"][i])          # actions stay the env's own ids

envs = make_move_vec("castle-siege", 64, difficulty="hard")   # batched, same dict, (64, ...)
```

The layout (column names in ``SIEGE_FEATURES``) is documented in ``docs/move_features.md``.
The features are computed by one compiled kernel (``castle_siege.moves``) for the Python
env, the compiled single env and the batched env alike, so the three agree exactly; in the
batched env the kernel reads the batch's state rows directly (no per-env Python).

**Capacity.** The matrix has a fixed number of rows (``capacity``, default 256). Early Very
Hard turns can have ~700 legal moves (31 hand subsets x ~20 defenders); then the rows kept
are the end of the battle phase, Regroup, captures, Royal Assaults, Precision Strikes and
Flush Sieges, then the plays with the fewest cards and least overkill
(``info["legal_moves"]`` gives the full count). Raise ``capacity`` to keep all.

**Castellion** has one too, computed by one compiled kernel (``castellion.moves``) for
its Python, compiled and batched envs. **Castle Rooms** and **Castell** (PettingZoo AEC) have
views computed in Python from the rules state (``castle_rooms/moves.py``,
``castell/moves.py``: the games have no compiled kernel): ``make_move_env("castle-rooms",
num_players=2)`` is the AEC env whose ``observe(agent)`` adds the same three keys beside
``observation`` and ``action_mask`` (all zero for a seat not to act). Their capacity is the
whole action space, so every legal move has a row.

``move_view(game, capacity)`` gives a game's view object (``from_state(state)``: the rows of
the player to act); games without one (``MOVE_GAMES``) raise a clear error.

Where the code lives: each game's ``moves.py`` holds its view class and its feature kernel,
and its spec names the class (``GameSpec.move_view``); this module holds the wrappers that
add a view to any env, and the shared base classes are in ``core/moves.py``.
"""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np
from pettingzoo.utils import BaseWrapper

# MoveView and StateMoves: the base classes, also importable from here
from .core.moves import MoveView, StateMoves, view_spaces  # noqa: F401
from .registry import GAMES, get_game, load, make_single, make_vec

MOVE_GAMES = tuple(slug for slug, spec in GAMES.items() if spec.move_view)
DEFAULT_CAPACITY = {slug: GAMES[slug].move_capacity for slug in MOVE_GAMES}
AEC_MOVE_GAMES = tuple(slug for slug in MOVE_GAMES if not GAMES[slug].solitaire)

#: the compiled games' view names, loaded on first use so that ``import castle_envs.moves``
#: (and the multi-player games' views) does not import the compiled kernels
_LAZY = {
    "SIEGE_FEATURES": "castle_envs.castle_siege.moves:SIEGE_FEATURES",
    "SiegeMoves": "castle_envs.castle_siege.moves:SiegeMoves",
    "CastellionMoves": "castle_envs.castellion.moves:CastellionMoves",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return load(_LAZY[name])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _check_game(game: str) -> str:
    slug = get_game(game).slug
    if slug not in MOVE_GAMES:
        raise ValueError(
            f"no move-feature view for {slug!r} yet; games with one: {list(MOVE_GAMES)}"
        )
    return slug


def _view_class(game: str) -> Any:
    target = GAMES[_check_game(game)].move_view
    assert target is not None  # a game of MOVE_GAMES
    return load(target)


def feature_names(game: str) -> tuple[str, ...]:
    return _view_class(game).feature_names()


def move_view(game: str, capacity: int | None = None) -> Any:
    """The game's view object: ``from_state(state) -> (view dict, legal move count)`` for the
    player to act, ``observation(state)`` that player's observation vector, ``empty()``."""
    game = _check_game(game)
    capacity = DEFAULT_CAPACITY[game] if capacity is None else capacity
    return _view_class(game)(capacity)


def linear_scale(game: str = "castle-siege") -> np.ndarray:
    """Castle Siege: the linear scorer's feature i is column ``LINEAR + i`` times this."""
    from .castle_siege.moves import LINEAR_SCALE

    _check_game(game)
    return LINEAR_SCALE.copy()


def move_spaces(
    game: str, obs_space: gym.spaces.Box, num_actions: int, capacity: int
) -> gym.spaces.Dict:
    return view_spaces(obs_space, num_actions, capacity, len(feature_names(game)))


class MoveFeatureAECWrapper(BaseWrapper):
    """A PettingZoo AEC env (Castle Rooms, Castell) whose ``observe(agent)`` adds the move
    view of that seat beside ``observation`` and ``action_mask``: the legal moves' rows for
    the seat to act, all zero for the others and once the game is over. Actions stay the
    env's ids."""

    def __init__(self, env: Any, capacity: int | None = None) -> None:
        raw = env.unwrapped
        game = next(
            (slug for slug in AEC_MOVE_GAMES if isinstance(raw, GAMES[slug].load_env_class())), None
        )
        if game is None:
            raise ValueError(
                f"MoveFeatureAECWrapper needs a Castle Rooms or Castell env, got "
                f"{type(raw).__name__}; games with a move view: {list(MOVE_GAMES)}"
            )
        super().__init__(env)
        self.game = game
        self.moves = move_view(self.game, capacity)
        agent = raw.possible_agents[0]
        base = raw.observation_space(agent)
        space = move_spaces(
            self.game, base["observation"], int(raw.action_space(agent).n), self.moves.capacity
        )
        space = gym.spaces.Dict(
            {
                "observation": base["observation"],
                "action_mask": base["action_mask"],
                **{k: v for k, v in space.items() if k != "observation"},
            }
        )
        self.observation_spaces = {a: space for a in raw.possible_agents}

    def observation_space(self, agent: str) -> gym.spaces.Space:
        return self.observation_spaces[agent]

    def observe(self, agent: str) -> dict:
        obs = self.env.observe(agent)
        out = self.moves.empty()
        if obs["action_mask"].any():  # the seat to act
            self.moves.from_state(self.env.unwrapped.game_state, out)
        return {**obs, **out}


def make_move_env(
    game: str = "castle-siege", compiled: bool = False, capacity: int | None = None, **kwargs: Any
) -> MoveFeatureAECWrapper | MoveFeatureObservation:
    """The env with the move view: a Gymnasium single env (``compiled=True``: on the
    kernels) wrapped in ``MoveFeatureObservation``, or the PettingZoo game (``env()``, with
    its order checks) wrapped in ``MoveFeatureAECWrapper``."""
    game = _check_game(game)
    if game in AEC_MOVE_GAMES:
        if compiled:
            raise ValueError(f"{game} has no compiled env; drop compiled=True")
        from .core.aec_env import wrap

        return MoveFeatureAECWrapper(wrap(get_game(game).make(**kwargs)), capacity)
    if compiled:
        return MoveFeatureObservation(make_single(game, **kwargs), capacity)
    return MoveFeatureObservation(get_game(game).make(**kwargs), capacity)


def make_move_vec(
    game: str, num_envs: int, capacity: int | None = None, **kwargs: Any
) -> MoveFeatureVectorEnv:
    """The batched env (``castle_envs.make_vec``'s keywords) with the move view."""
    game = _check_game(game)
    return MoveFeatureVectorEnv(make_vec(game, num_envs, **kwargs), capacity)


def _solitaire_specs() -> list:
    """The Gymnasium games with a move view and compiled envs."""
    return [
        GAMES[slug]
        for slug in MOVE_GAMES
        if GAMES[slug].solitaire and GAMES[slug].compiled_env and GAMES[slug].vector_env
    ]


def _solitaire_spec(base: Any) -> Any:
    """The spec of a Gymnasium env (Python or compiled) with a move view, or a clear error."""
    for spec in _solitaire_specs():
        if isinstance(base, (spec.load_env_class(), load(spec.compiled_env))):
            return spec
    raise ValueError(
        f"MoveFeatureObservation needs a {_titles()} env, got {type(base).__name__}; "
        f"games with a move view: {list(MOVE_GAMES)}"
    )


def _titles() -> str:
    return " or ".join(s.title for s in _solitaire_specs())


class MoveFeatureObservation(gym.Wrapper):
    """A Castle Siege or Castellion env (the Python env or its compiled drop-in,
    ``make_single``) whose observation is a dict: the env's vector plus the move view.
    Actions, rewards and the rest of ``info`` are the env's; ``info["legal_moves"]`` counts
    the legal moves (more than ``move_mask.sum()`` only when the capacity cut some)."""

    def __init__(self, env: gym.Env, capacity: int | None = None) -> None:
        base = getattr(env, "unwrapped", env)
        spec = _solitaire_spec(base)
        super().__init__(env)
        self.game = spec.slug
        self._compiled = isinstance(base, load(spec.compiled_env))
        self.moves = move_view(spec.slug, capacity)
        self.observation_space = move_spaces(
            self.game,
            cast(gym.spaces.Box, env.observation_space),
            int(cast(gym.spaces.Discrete, env.action_space).n),
            self.moves.capacity,
        )

    def _view(self, obs: np.ndarray, info: dict, done: bool) -> dict:
        out = self.moves.empty()
        base: Any = self.env.unwrapped  # the game env: its rows or its state
        if done:
            n = 0
        elif self._compiled:
            n = self.moves.from_env(base, out)
        else:
            n = self.moves.from_state(base.state, out)[1]
        info["legal_moves"] = n
        return {"observation": obs, **out}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        return self._view(obs, info, False), info

    def step(self, action: Any) -> tuple[dict, Any, bool, bool, dict]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._view(obs, info, terminated), reward, terminated, truncated, info


class MoveFeatureVectorEnv(gym.vector.VectorWrapper):
    """The batched Castle Siege or Castellion env (``make_vec(game, ...)``) with the move
    view: observations are dicts of (num_envs, ...) arrays, filled by one compiled call per
    step straight from the batch's state rows. ``info["final_obs"]`` stays the env's vector;
    ``info["legal_moves"]`` (num_envs,) counts each env's legal moves."""

    def __init__(self, env: Any, capacity: int | None = None) -> None:
        super().__init__(env)
        base = env.unwrapped if hasattr(env, "unwrapped") else env
        spec = next(
            (s for s in _solitaire_specs() if isinstance(base, load(str(s.vector_env)))), None
        )
        if spec is None:
            raise ValueError(
                f"MoveFeatureVectorEnv needs the batched {_titles()} env, got {type(base).__name__}"
            )
        self.game = spec.slug
        self._base = base
        self.moves = move_view(spec.slug, capacity)
        self.single_observation_space = move_spaces(
            self.game,
            base.single_observation_space,
            int(base.single_action_space.n),
            self.moves.capacity,
        )
        self.observation_space = gym.vector.utils.batch_space(
            self.single_observation_space, self.num_envs
        )
        self._out = self.moves.empty(self.num_envs)
        self._legal = np.zeros(self.num_envs, np.int64)

    def _view(self, obs: np.ndarray, info: dict) -> dict:
        self.moves.batch_env(self._base, self._out, self._legal)
        info["legal_moves"] = self._legal.copy()
        return {"observation": obs, **{k: a.copy() for k, a in self._out.items()}}

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        obs, info = self.env.reset(seed=seed, options=options)
        return self._view(obs, info), info

    def _row_arrays(self) -> dict:
        return self._base.position_arrays()

    def rows(self) -> dict:
        """The batch's whole position and generators as plain integer arrays (what a
        training checkpoint keeps; ``load_rows`` puts them back)."""
        return {k: a.copy() for k, a in self._row_arrays().items()}

    def load_rows(self, rows: dict) -> dict:
        """Restore ``rows()`` (same batch size, variant and rules); returns the current
        observation dict, as ``reset`` would. Each array must be integers that fit the
        batch's own (a wider value would wrap into another one silently), and every row
        must hold a game in play (the batched env's ``check_row``), else ValueError."""
        base = self._base
        for name, target in self._row_arrays().items():
            value = np.asarray(rows[name])
            if value.shape != target.shape:
                raise ValueError(
                    f"saved {name} rows have shape {value.shape}, this batch {target.shape}"
                )
            if value.dtype.kind not in "iu":
                raise ValueError(f"saved {name} rows are {value.dtype}, not integers")
            limits = np.iinfo(target.dtype)
            if value.size and (value.min() < limits.min or value.max() > limits.max):
                raise ValueError(
                    f"saved {name} rows hold values outside {target.dtype} "
                    f"({int(value.min())} to {int(value.max())})"
                )
            target[:] = value
        return self._view(base.restart(), {})

    def step(self, actions: Any) -> tuple[dict, Any, Any, Any, dict]:
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        return self._view(obs, info), rewards, terminated, truncated, info
