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
The features are computed by one compiled kernel (``vector.siege_moves``) for the Python
env, the compiled single env and the batched env alike, so the three agree exactly; in the
batched env the kernel reads the batch's state rows directly (no per-env Python).

**Capacity.** The matrix has a fixed number of rows (``capacity``, default 256). Early Very
Hard turns can have ~700 legal moves (31 hand subsets x ~20 defenders); then the rows kept
are the end of the battle phase, Regroup, captures, Royal Assaults, Precision Strikes and
Flush Sieges, then the plays with the fewest cards and least overkill
(``info["legal_moves"]`` gives the full count). Raise ``capacity`` to keep all.

**Castellion** has one too, computed by one compiled kernel (``vector.castellion_moves``) for
its Python, compiled and batched envs. **Castle Rooms** and **Castell** (PettingZoo AEC) have
views computed in Python from the rules state (``castle_rooms/moves.py``,
``castell/moves.py``: the games have no compiled kernel): ``make_move_env("castle-rooms",
num_players=2)`` is the AEC env whose ``observe(agent)`` adds the same three keys beside
``observation`` and ``action_mask`` (all zero for a seat not to act). Their capacity is the
whole action space, so every legal move has a row.

``move_view(game, capacity)`` gives a game's view object (``from_state(state)``: the rows of
the player to act); games without one (``MOVE_GAMES``) raise a clear error.

Where the code lives: each game's spec names its view class (``GameSpec.move_view``); the
Castle Siege and Castellion views and the Gymnasium wrappers are in ``vector/moves.py``
(they read the compiled envs' rows), re-exported here and loaded on first use; the shared
base classes are in ``core/moves.py``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from pettingzoo.utils import BaseWrapper

# MoveView and StateMoves: the base classes, also importable from here
from .core.moves import MoveView, StateMoves, view_spaces  # noqa: F401
from .registry import GAMES, get_game, load

MOVE_GAMES = tuple(slug for slug, spec in GAMES.items() if spec.move_view)
DEFAULT_CAPACITY = {slug: GAMES[slug].move_capacity for slug in MOVE_GAMES}
AEC_MOVE_GAMES = tuple(slug for slug in MOVE_GAMES if not GAMES[slug].solitaire)

#: the names that live in the vector layer (``vector/moves.py``), loaded on first use so
#: that the multi-player games' views do not import the compiled kernels
_VECTOR_NAMES = (
    "SIEGE_FEATURES",
    "SiegeMoves",
    "CastellionMoves",
    "MoveFeatureObservation",
    "MoveFeatureVectorEnv",
)


def __getattr__(name: str) -> Any:
    if name in _VECTOR_NAMES:
        from .vector import moves

        return getattr(moves, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _check_game(game: str) -> str:
    slug = get_game(game).slug
    if slug not in MOVE_GAMES:
        raise ValueError(
            f"no move-feature view for {slug!r} yet; games with one: {list(MOVE_GAMES)}"
        )
    return slug


def _view_class(game: str):
    target = GAMES[_check_game(game)].move_view
    assert target is not None  # a game of MOVE_GAMES
    return load(target)


def feature_names(game: str) -> tuple[str, ...]:
    return _view_class(game).feature_names()


def move_view(game: str, capacity: int | None = None):
    """The game's view object: ``from_state(state) -> (view dict, legal move count)`` for the
    player to act, ``observation(state)`` that player's observation vector, ``empty()``."""
    game = _check_game(game)
    capacity = DEFAULT_CAPACITY[game] if capacity is None else capacity
    return _view_class(game)(capacity)


def linear_scale(game: str = "castle-siege") -> np.ndarray:
    """Castle Siege: the linear scorer's feature i is column ``LINEAR + i`` times this."""
    from .vector.moves import linear_scale as scale

    _check_game(game)
    return scale()


def move_spaces(
    game: str, obs_space: gym.spaces.Box, num_actions: int, capacity: int
) -> gym.spaces.Dict:
    return view_spaces(obs_space, num_actions, capacity, len(feature_names(game)))


class MoveFeatureAECWrapper(BaseWrapper):
    """A PettingZoo AEC env (Castle Rooms, Castell) whose ``observe(agent)`` adds the move
    view of that seat beside ``observation`` and ``action_mask``: the legal moves' rows for
    the seat to act, all zero for the others and once the game is over. Actions stay the
    env's ids."""

    def __init__(self, env, capacity: int | None = None):
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

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def observe(self, agent):
        obs = self.env.observe(agent)
        out = self.moves.empty()
        if obs["action_mask"].any():  # the seat to act
            self.moves.from_state(self.env.unwrapped.game_state, out)
        return {**obs, **out}


def make_move_env(
    game: str = "castle-siege", compiled: bool = False, capacity: int | None = None, **kwargs
):
    """The env with the move view: a Gymnasium single env (``compiled=True``: on the
    kernels) wrapped in ``MoveFeatureObservation``, or the PettingZoo game (``env()``, with
    its order checks) wrapped in ``MoveFeatureAECWrapper``."""
    game = _check_game(game)
    if game in AEC_MOVE_GAMES:
        if compiled:
            raise ValueError(f"{game} has no compiled env; drop compiled=True")
        from .core.aec_env import wrap

        return MoveFeatureAECWrapper(wrap(get_game(game).make(**kwargs)), capacity)
    from .vector.moves import MoveFeatureObservation, compiled_move_env

    if compiled:
        return compiled_move_env(game, capacity, **kwargs)
    return MoveFeatureObservation(get_game(game).make(**kwargs), capacity)


def make_move_vec(game: str, num_envs: int, capacity: int | None = None, **kwargs):
    """The batched env (``castle_envs.make_vec``'s keywords) with the move view."""
    game = _check_game(game)
    from .vector.moves import make_move_vec as make

    return make(game, num_envs, capacity, **kwargs)
