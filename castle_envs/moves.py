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
"""
from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np
from pettingzoo.utils import BaseWrapper

MOVE_GAMES = ("castle-siege", "castellion", "castle-rooms", "castell")
DEFAULT_CAPACITY = {"castle-siege": 256, "castellion": 137, "castle-rooms": 109, "castell": 395}
AEC_MOVE_GAMES = ("castle-rooms", "castell")

SIEGE_FEATURES = (
    # move kind, one-hot
    "end_battle", "regroup", "attack", "capture", "royal_attack", "recycle",
    "royal_capture", "discard",
    # what it spends (plays, Regroup: the whole hand, discard: the card)
    "cards_spent/5", "rank_sum_spent/65",
    *[f"spent_rank_{r}/4" for r in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10",
                                    "J", "Q", "K")],
    *[f"spent_suit_{s}/5" for s in ("spades", "clubs", "hearts", "diamonds")],
    # what it targets (attacked defender, captured castle, recycled card, royal castle)
    "target_rank/13", *[f"target_suit_{s}" for s in ("spades", "clubs", "hearts", "diamonds")],
    *[f"target_column_{c}" for c in range(4)],
    "column_length/44", "target_depth_from_newest/44", "target_is_newest",
    "column_castle_rank/13",
    # what it triggers
    "precision_strike", "flush_siege", "clears_column", "hand_left/5", "rank_sum_left/65",
    # the CEM linear scorer's features (agents.castle_siege_linear), each / LINEAR_SCALE
    *[f"linear.battle.{n}" for n in (
        "capture", "royal", "royal_own_column", "attack", "cards", "rank_spent", "overkill",
        "target_rank", "focus", "clear", "capture_next", "precision", "flush", "royals_spent",
        "royals_spent_late", "cards_late", "regroup", "regroup_royals")],
    *[f"linear.recycle.{n}" for n in (
        "castle_distance", "rank", "castle_exact", "defender_match", "royal_rank",
        "royal_missing", "soon", "soon_castle_exact", "soon_royal_missing")],
    *[f"linear.royal.{n}" for n in ("defenders", "defender_ranks", "castle_rank")],
)


def _check_game(game: str) -> str:
    from .registry import get_game

    slug = get_game(game).slug
    if slug not in MOVE_GAMES:
        raise ValueError(f"no move-feature view for {slug!r} yet; games with one: "
                         f"{list(MOVE_GAMES)}")
    return slug


def _check_capacity(capacity) -> int:
    if isinstance(capacity, bool) or not isinstance(capacity, (int, np.integer)) or capacity < 1:
        raise ValueError(f"capacity must be a positive int, got {capacity!r}")
    return int(capacity)


def feature_names(game: str) -> tuple[str, ...]:
    game = _check_game(game)
    if game == "castle-rooms":
        from .castle_rooms.moves import FEATURES
        return FEATURES
    if game == "castellion":
        from .vector.castellion_moves import FEATURES
        return FEATURES
    if game == "castell":
        from .castell.moves import FEATURES
        return FEATURES
    return SIEGE_FEATURES


def move_view(game: str, capacity: int | None = None):
    """The game's view object: ``from_state(state) -> (view dict, legal move count)`` for the
    player to act, ``observation(state)`` that player's observation vector, ``empty()``."""
    game = _check_game(game)
    capacity = DEFAULT_CAPACITY[game] if capacity is None else capacity
    if game == "castle-rooms":
        from .castle_rooms.moves import RoomsMoves
        return RoomsMoves(capacity)
    if game == "castellion":
        return CastellionMoves(capacity)
    if game == "castell":
        from .castell.moves import CastellMoves
        return CastellMoves(capacity)
    return SiegeMoves(capacity)


def linear_scale(game: str = "castle-siege") -> np.ndarray:
    """Castle Siege: the linear scorer's feature i is column ``LINEAR + i`` times this."""
    from .vector import siege_moves
    _check_game(game)
    return siege_moves.LINEAR_SCALE.copy()


def move_spaces(game: str, obs_space: gym.spaces.Box, num_actions: int,
                capacity: int) -> gym.spaces.Dict:
    n_feat = len(feature_names(game))
    return gym.spaces.Dict({
        "observation": obs_space,
        "move_features": gym.spaces.Box(0.0, 1.0, (capacity, n_feat), np.float32),
        "move_ids": gym.spaces.Box(0, num_actions - 1, (capacity,), np.int64),
        "move_mask": gym.spaces.MultiBinary(capacity),
    })


class MoveView:
    """What every game's view object shares: ``capacity`` rows of ``num_features``, and the
    zeroed arrays one view fills (``empty()``; ``batch``: a leading batch dimension)."""

    game = ""

    def __init__(self, capacity: int, num_features: int):
        self.capacity = _check_capacity(capacity)
        self.num_features = num_features

    def empty(self, batch: int | None = None) -> dict:
        lead = () if batch is None else (batch,)
        return {"move_features": np.zeros(lead + (self.capacity, self.num_features), np.float32),
                "move_ids": np.zeros(lead + (self.capacity,), np.int64),
                "move_mask": np.zeros(lead + (self.capacity,), np.int8)}


class StateMoves(MoveView):
    """A view computed in Python from the rules state (the games without a kernel): the
    subclass gives ``rows(state, actions)`` (one row per legal action of the player to act)
    and ``observation(state)``."""

    def rows(self, state, actions) -> np.ndarray:
        raise NotImplementedError

    def from_state(self, state, out: dict | None = None) -> tuple[dict, int]:
        """The view of the player to act (all zero once the game is over) and its count of
        legal moves; past the capacity the lowest action ids are kept."""
        out = self.empty() if out is None else out
        for a in out.values():
            a[:] = 0
        if state.is_terminal():
            return out, 0
        legal = np.flatnonzero(state.legal_action_mask())
        rows = self.rows(state, legal[:self.capacity])
        k = len(rows)
        out["move_features"][:k] = rows
        out["move_ids"][:k] = legal[:k]
        out["move_mask"][:k] = 1
        return out, len(legal)


class SiegeMoves(MoveView):
    """Castle Siege move views from a rules ``State`` or from kernel rows."""

    game = "castle-siege"

    def __init__(self, capacity: int = 256):
        from .vector import siege_kernel as K
        from .vector import siege_moves as M
        from .vector._base import state_dtype
        from .vector._jit import HAVE_NUMBA

        super().__init__(capacity, M.NUM_FEATURES)
        self._M = M
        self.scratch = M.Scratch()
        self._b = np.zeros(K.CARD_WORDS, state_dtype())
        self._v = np.zeros(K.INT_WORDS, np.int32 if HAVE_NUMBA else np.int64)

    def observation(self, state) -> np.ndarray:
        from .castle_siege.observation import encode
        return encode(state)

    def from_rows(self, b, v, recent: bool, out: dict) -> int:
        """Fill ``out`` (``empty()``) from one env's kernel rows; returns the legal moves."""
        valid = out["move_mask"].view(np.bool_)
        n, _ = self._M.move_rows(b, v, recent, out["move_features"], out["move_ids"], valid,
                                 *self.scratch.args())
        return int(n)

    def from_state(self, state, out: dict | None = None) -> tuple[dict, int]:
        """The view of a ``castle_siege.rules.State`` (and its legal move count)."""
        from .vector.castle_siege import write_state

        out = self.empty() if out is None else out
        if state.outcome:   # the game is over: no legal move
            for a in out.values():
                a[:] = 0
            return out, 0
        write_state(self._b, self._v, state, state.rows,
                    {"attack": state.attack, "defeated": state.defeated})
        return out, self.from_rows(self._b, self._v, state.attack == "most_recent", out)

    def batch(self, cards, ints, recent: bool, out: dict, legal: np.ndarray) -> None:
        valid = out["move_mask"].view(np.bool_)
        self._M.move_rows_batch(cards, ints, recent, out["move_features"], out["move_ids"],
                                valid, legal, *self.scratch.args())


class CastellionMoves(MoveView):
    """Castellion move views from a rules ``State`` or from kernel rows (one compiled
    kernel, ``vector.castellion_moves``, for the Python, compiled and batched envs)."""

    game = "castellion"

    def __init__(self, capacity: int = 137):
        from .vector import castellion_kernel as K
        from .vector import castellion_moves as M
        from .vector._base import state_dtype

        super().__init__(capacity, M.NUM_FEATURES)
        self._M, self._K = M, K
        self.scratch = M.Scratch()
        self._s = np.zeros(K.WORDS, state_dtype())

    def observation(self, state) -> np.ndarray:
        from .castellion.observation import encode
        return encode(state)

    def from_rows(self, s, level: int, rules: int, out: dict) -> int:
        """Fill ``out`` (``empty()``) from one env's kernel row; returns the legal moves."""
        valid = out["move_mask"].view(np.bool_)
        return int(self._M.move_rows(s, level, rules, out["move_features"], out["move_ids"],
                                     valid, *self.scratch.args()))

    def from_state(self, state, out: dict | None = None) -> tuple[dict, int]:
        """The view of a ``castellion.rules.State`` (and its legal move count)."""
        from .vector.castellion import write_state

        out = self.empty() if out is None else out
        rules = {"foundation_exemption": state.foundation_exemption,
                 "early_encounter": state.early_encounter}
        write_state(self._s, state, state.level, rules)
        return out, self.from_rows(self._s, state.level, self._K.rule_flags(rules), out)

    def batch(self, st, level: int, rules: int, out: dict, legal: np.ndarray) -> None:
        valid = out["move_mask"].view(np.bool_)
        self._M.move_rows_batch(st, level, rules, out["move_features"], out["move_ids"],
                                valid, legal, *self.scratch.args())


def _solitaire_game(base) -> str:
    """The move-view game of a Gymnasium env (Python or compiled), or a clear error."""
    from .castellion.env import CastellionEnv
    from .castle_siege.env import CastleSiegeEnv
    from .vector.castellion import CompiledCastellionEnv
    from .vector.single import CompiledCastleSiegeEnv

    if isinstance(base, (CastleSiegeEnv, CompiledCastleSiegeEnv)):
        return "castle-siege"
    if isinstance(base, (CastellionEnv, CompiledCastellionEnv)):
        return "castellion"
    raise ValueError(f"MoveFeatureObservation needs a Castle Siege or Castellion env, got "
                     f"{type(base).__name__}; games with a move view: {list(MOVE_GAMES)}")


class MoveFeatureObservation(gym.Wrapper):
    """A Castle Siege or Castellion env (the Python env or its compiled drop-in,
    ``make_single``) whose observation is a dict: the env's vector plus the move view.
    Actions, rewards and the rest of ``info`` are the env's; ``info["legal_moves"]`` counts
    the legal moves (more than ``move_mask.sum()`` only when the capacity cut some)."""

    def __init__(self, env: gym.Env, capacity: int | None = None):
        from .vector.castellion import CompiledCastellionEnv
        from .vector.single import CompiledCastleSiegeEnv

        base = getattr(env, "unwrapped", env)
        game = _solitaire_game(base)
        super().__init__(env)
        self.game = game
        self._compiled = isinstance(base, (CompiledCastleSiegeEnv, CompiledCastellionEnv))
        self.moves = move_view(self.game, capacity)
        self.observation_space = move_spaces(
            self.game, cast(gym.spaces.Box, env.observation_space),
            int(cast(gym.spaces.Discrete, env.action_space).n), self.moves.capacity)

    def _view(self, obs, info: dict, done: bool) -> dict:
        out = self.moves.empty()
        base: Any = self.env.unwrapped       # the game env: its rows or its state
        if done:
            n = 0
        elif self._compiled and self.game == "castellion":
            n = self.moves.from_rows(base._s, base._level, base._rules, out)
        elif self._compiled:
            n = self.moves.from_rows(base._b, base._v, base._recent, out)
        else:
            n = self.moves.from_state(base.state, out)[1]
        info["legal_moves"] = n
        return {"observation": obs, **out}

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        return self._view(obs, info, False), info

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._view(obs, info, terminated), reward, terminated, truncated, info


class MoveFeatureVectorEnv(gym.vector.VectorWrapper):
    """The batched Castle Siege or Castellion env (``make_vec(game, ...)``) with the move
    view: observations are dicts of (num_envs, ...) arrays, filled by one compiled call per
    step straight from the batch's state rows. ``info["final_obs"]`` stays the env's vector;
    ``info["legal_moves"]`` (num_envs,) counts each env's legal moves."""

    def __init__(self, env, capacity: int | None = None):
        super().__init__(env)
        from .vector.castellion import CastellionVectorEnv
        from .vector.castle_siege import CastleSiegeVectorEnv

        base = env.unwrapped if hasattr(env, "unwrapped") else env
        if isinstance(base, CastleSiegeVectorEnv):
            self.game = "castle-siege"
        elif isinstance(base, CastellionVectorEnv):
            self.game = "castellion"
        else:
            raise ValueError(f"MoveFeatureVectorEnv needs the batched Castle Siege or "
                             f"Castellion env, got {type(base).__name__}")
        self._base = base
        self.moves = move_view(self.game, capacity)
        self.single_observation_space = move_spaces(
            self.game, base.single_observation_space, int(base.single_action_space.n),
            self.moves.capacity)
        self.observation_space = gym.vector.utils.batch_space(self.single_observation_space,
                                                              self.num_envs)
        self._out = self.moves.empty(self.num_envs)
        self._legal = np.zeros(self.num_envs, np.int64)

    def _view(self, obs, info: dict) -> dict:
        base = self._base
        if self.game == "castellion":
            self.moves.batch(base._st, base._level, base._rules, self._out, self._legal)
        else:
            self.moves.batch(base._cards, base._ints, base.recent, self._out, self._legal)
        info["legal_moves"] = self._legal.copy()
        return {"observation": obs, **{k: a.copy() for k, a in self._out.items()}}

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        return self._view(obs, info), info

    def _row_arrays(self) -> dict:
        base = self._base
        if self.game == "castellion":
            return {"st": base._st, "steps": base._steps, "rng": base._rng.view(np.int64)}
        return {"cards": base._cards, "ints": base._ints, "rng": base._rng.view(np.int64)}

    def rows(self) -> dict:
        """The batch's whole position and generators as plain integer arrays (what a
        training checkpoint keeps; ``load_rows`` puts them back)."""
        return {k: a.copy() for k, a in self._row_arrays().items()}

    def load_rows(self, rows: dict) -> dict:
        """Restore ``rows()`` (same batch size, variant and rules); returns the current
        observation dict, as ``reset`` would."""
        base = self._base
        for name, target in self._row_arrays().items():
            value = np.asarray(rows[name])
            if value.shape != target.shape:
                raise ValueError(f"saved {name} rows have shape {value.shape}, this batch "
                                 f"{target.shape}")
            target[:] = value
        base._refresh(slice(None))
        base._started = True
        return self._view(base._out(base._obs), {})

    def step(self, actions):
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        return self._view(obs, info), rewards, terminated, truncated, info


class MoveFeatureAECWrapper(BaseWrapper):
    """A PettingZoo AEC env (Castle Rooms, Castell) whose ``observe(agent)`` adds the move
    view of that seat beside ``observation`` and ``action_mask``: the legal moves' rows for
    the seat to act, all zero for the others and once the game is over. Actions stay the
    env's ids."""

    def __init__(self, env, capacity: int | None = None):
        from .castell.env import raw_env as castell_env
        from .castle_rooms.env import raw_env as rooms_env

        raw = env.unwrapped
        if not isinstance(raw, (rooms_env, castell_env)):
            raise ValueError(f"MoveFeatureAECWrapper needs a Castle Rooms or Castell env, got "
                             f"{type(raw).__name__}; games with a move view: {list(MOVE_GAMES)}")
        super().__init__(env)
        self.game = "castle-rooms" if isinstance(raw, rooms_env) else "castell"
        self.moves = move_view(self.game, capacity)
        agent = raw.possible_agents[0]
        base = raw.observation_space(agent)
        space = move_spaces(self.game, base["observation"], int(raw.action_space(agent).n),
                            self.moves.capacity)
        space = gym.spaces.Dict({"observation": base["observation"],
                                 "action_mask": base["action_mask"],
                                 **{k: v for k, v in space.items() if k != "observation"}})
        self.observation_spaces = {a: space for a in raw.possible_agents}

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def observe(self, agent):
        obs = self.env.observe(agent)
        out = self.moves.empty()
        if obs["action_mask"].any():     # the seat to act
            self.moves.from_state(self.env.unwrapped.game_state, out)
        return {**obs, **out}


def make_move_env(game: str = "castle-siege", compiled: bool = False,
                  capacity: int | None = None, **kwargs):
    """The env with the move view: a Gymnasium single env (``compiled=True``: on the
    kernels) wrapped in ``MoveFeatureObservation``, or the PettingZoo game (``env()``, with
    its order checks) wrapped in ``MoveFeatureAECWrapper``."""
    game = _check_game(game)
    if game in AEC_MOVE_GAMES:
        if compiled:
            raise ValueError(f"{game} has no compiled env; drop compiled=True")
        from .registry import get_game
        from .core.aec_env import wrap
        return MoveFeatureAECWrapper(wrap(get_game(game).make(**kwargs)), capacity)
    if compiled:
        from .vector import make_single
        env = make_single(game, **kwargs)
    else:
        from .registry import get_game
        env = get_game(game).make(**kwargs)
    return MoveFeatureObservation(env, capacity)


def make_move_vec(game: str, num_envs: int, capacity: int | None = None,
                  **kwargs) -> MoveFeatureVectorEnv:
    """The batched env (``castle_envs.make_vec``'s keywords) with the move view."""
    game = _check_game(game)
    from .vector import make_vec
    return MoveFeatureVectorEnv(make_vec(game, num_envs, **kwargs), capacity)
