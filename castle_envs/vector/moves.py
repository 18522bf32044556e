"""The move-feature views of the games with compiled kernels (Castle Siege, Castellion) and
the Gymnasium wrappers that add them to the Python, compiled and batched envs.

``castle_envs.moves`` is their public face (it re-exports these names and documents the
views); they live here, in the vector layer, because they read the compiled envs' rows and
run the move kernels (``siege_moves``, ``castellion_moves``), one kernel per game for the
three envs alike.
"""

from __future__ import annotations

from typing import Any, cast

import gymnasium as gym
import numpy as np

from ..core.moves import MoveView, view_spaces
from ..registry import GAMES, get_game

SIEGE_FEATURES = (
    # move kind, one-hot
    "end_battle",
    "regroup",
    "attack",
    "capture",
    "royal_attack",
    "recycle",
    "royal_capture",
    "discard",
    # what it spends (plays, Regroup: the whole hand, discard: the card)
    "cards_spent/5",
    "rank_sum_spent/65",
    *[
        f"spent_rank_{r}/4"
        for r in ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
    ],
    *[f"spent_suit_{s}/5" for s in ("spades", "clubs", "hearts", "diamonds")],
    # what it targets (attacked defender, captured castle, recycled card, royal castle)
    "target_rank/13",
    *[f"target_suit_{s}" for s in ("spades", "clubs", "hearts", "diamonds")],
    *[f"target_column_{c}" for c in range(4)],
    "column_length/44",
    "target_depth_from_newest/44",
    "target_is_newest",
    "column_castle_rank/13",
    # what it triggers
    "precision_strike",
    "flush_siege",
    "clears_column",
    "hand_left/5",
    "rank_sum_left/65",
    # the CEM linear scorer's features (agents.castle_siege_linear), each / LINEAR_SCALE
    *[
        f"linear.battle.{n}"
        for n in (
            "capture",
            "royal",
            "royal_own_column",
            "attack",
            "cards",
            "rank_spent",
            "overkill",
            "target_rank",
            "focus",
            "clear",
            "capture_next",
            "precision",
            "flush",
            "royals_spent",
            "royals_spent_late",
            "cards_late",
            "regroup",
            "regroup_royals",
        )
    ],
    *[
        f"linear.recycle.{n}"
        for n in (
            "castle_distance",
            "rank",
            "castle_exact",
            "defender_match",
            "royal_rank",
            "royal_missing",
            "soon",
            "soon_castle_exact",
            "soon_royal_missing",
        )
    ],
    *[f"linear.royal.{n}" for n in ("defenders", "defender_ranks", "castle_rank")],
)


class _KernelMoves(MoveView):
    """A view filled by a game's move kernel ``_M`` (``move_rows_batch``) with its scratch:
    ``_env_rows`` names the batched env's attributes that ``batch`` takes, ``_env_arrays``
    those that hold its whole position."""

    _M: Any
    scratch: Any
    _env_rows: tuple[str, ...] = ()
    _env_arrays: dict[str, str] = {}

    def _batch(self, rows: tuple, out: dict, legal: np.ndarray) -> None:
        valid = out["move_mask"].view(np.bool_)
        self._M.move_rows_batch(
            *rows, out["move_features"], out["move_ids"], valid, legal, *self.scratch.args()
        )

    def batch_env(self, env, out: dict, legal: np.ndarray) -> None:
        """Fill ``out`` and ``legal`` from the batched env ``env`` of the view's game."""
        self._batch(tuple(getattr(env, name) for name in self._env_rows), out, legal)

    @classmethod
    def row_arrays(cls, env) -> dict:
        """The batched env's whole position and generators (views, not copies)."""
        return {
            **{key: getattr(env, name) for key, name in cls._env_arrays.items()},
            "rng": env._rng.view(np.int64),
        }


class SiegeMoves(_KernelMoves):
    """Castle Siege move views from a rules ``State`` or from kernel rows."""

    game = "castle-siege"
    _env_rows = ("_cards", "_ints", "recent")
    _env_arrays = {"cards": "_cards", "ints": "_ints"}

    def __init__(self, capacity: int = 256):
        from ..castle_siege import kernel as K
        from . import siege_moves as M
        from ._base import state_dtype
        from ..core.jit import HAVE_NUMBA

        super().__init__(capacity, M.NUM_FEATURES)
        self._M = M
        self.scratch = M.Scratch()
        self._b = np.zeros(K.CARD_WORDS, state_dtype())
        self._v = np.zeros(K.INT_WORDS, np.int32 if HAVE_NUMBA else np.int64)

    @classmethod
    def feature_names(cls) -> tuple[str, ...]:
        return SIEGE_FEATURES

    def observation(self, state) -> np.ndarray:
        from ..castle_siege.observation import encode

        return encode(state)

    def from_rows(self, b, v, recent: bool, out: dict) -> int:
        """Fill ``out`` (``empty()``) from one env's kernel rows; returns the legal moves."""
        valid = out["move_mask"].view(np.bool_)
        n, _ = self._M.move_rows(
            b, v, recent, out["move_features"], out["move_ids"], valid, *self.scratch.args()
        )
        return int(n)

    def from_state(self, state, out: dict | None = None) -> tuple[dict, int]:
        """The view of a ``castle_siege.rules.State`` (and its legal move count)."""
        from .castle_siege import write_state

        out = self.empty() if out is None else out
        if state.outcome:  # the game is over: no legal move
            for a in out.values():
                a[:] = 0
            return out, 0
        write_state(
            self._b,
            self._v,
            state,
            state.rows,
            {"attack": state.attack, "defeated": state.defeated},
        )
        return out, self.from_rows(self._b, self._v, state.attack == "most_recent", out)

    def from_env(self, env, out: dict) -> int:
        """Fill ``out`` from the compiled single env ``env`` (``CompiledCastleSiegeEnv``)."""
        return self.from_rows(env._b, env._v, env.recent, out)

    def batch(self, cards, ints, recent: bool, out: dict, legal: np.ndarray) -> None:
        self._batch((cards, ints, recent), out, legal)


class CastellionMoves(_KernelMoves):
    """Castellion move views from a rules ``State`` or from kernel rows (one compiled
    kernel, ``vector.castellion_moves``, for the Python, compiled and batched envs)."""

    game = "castellion"
    _env_rows = ("_st", "_level", "_rules")
    _env_arrays = {"st": "_st", "steps": "_steps"}

    def __init__(self, capacity: int = 137):
        from ..castellion import kernel as K
        from . import castellion_moves as M
        from ._base import state_dtype

        super().__init__(capacity, M.NUM_FEATURES)
        self._M, self._K = M, K
        self.scratch = M.Scratch()
        self._s = np.zeros(K.WORDS, state_dtype())

    @classmethod
    def feature_names(cls) -> tuple[str, ...]:
        from .castellion_moves import FEATURES

        return FEATURES

    def observation(self, state) -> np.ndarray:
        from ..castellion.observation import encode

        return encode(state)

    def from_rows(self, s, level: int, rules: int, out: dict) -> int:
        """Fill ``out`` (``empty()``) from one env's kernel row; returns the legal moves."""
        valid = out["move_mask"].view(np.bool_)
        return int(
            self._M.move_rows(
                s, level, rules, out["move_features"], out["move_ids"], valid, *self.scratch.args()
            )
        )

    def from_state(self, state, out: dict | None = None) -> tuple[dict, int]:
        """The view of a ``castellion.rules.State`` (and its legal move count)."""
        from .castellion import write_state

        out = self.empty() if out is None else out
        rules = {
            "foundation_exemption": state.foundation_exemption,
            "early_encounter": state.early_encounter,
        }
        write_state(self._s, state, state.level, rules)
        return out, self.from_rows(self._s, state.level, self._K.rule_flags(rules), out)

    def from_env(self, env, out: dict) -> int:
        """Fill ``out`` from the compiled single env ``env`` (``CompiledCastellionEnv``)."""
        return self.from_rows(env._s, env._level, env._rules, out)

    def batch(self, st, level: int, rules: int, out: dict, legal: np.ndarray) -> None:
        self._batch((st, level, rules), out, legal)


def _made(view, capacity: int | None):
    """A ``view`` object of ``capacity`` rows (its game spec's ``move_capacity`` if None)."""
    return view(get_game(view.game).move_capacity if capacity is None else capacity)


def _solitaire_view(base) -> type[SiegeMoves] | type[CastellionMoves]:
    """The view class of a Gymnasium env (Python or compiled), or a clear error."""
    from ..castellion.env import CastellionEnv
    from ..castle_siege.env import CastleSiegeEnv
    from .castellion import CompiledCastellionEnv
    from .single import CompiledCastleSiegeEnv

    if isinstance(base, (CastleSiegeEnv, CompiledCastleSiegeEnv)):
        return SiegeMoves
    if isinstance(base, (CastellionEnv, CompiledCastellionEnv)):
        return CastellionMoves
    games = [slug for slug, spec in GAMES.items() if spec.move_view]
    raise ValueError(
        f"MoveFeatureObservation needs a Castle Siege or Castellion env, got "
        f"{type(base).__name__}; games with a move view: {games}"
    )


class MoveFeatureObservation(gym.Wrapper):
    """A Castle Siege or Castellion env (the Python env or its compiled drop-in,
    ``make_single``) whose observation is a dict: the env's vector plus the move view.
    Actions, rewards and the rest of ``info`` are the env's; ``info["legal_moves"]`` counts
    the legal moves (more than ``move_mask.sum()`` only when the capacity cut some)."""

    def __init__(self, env: gym.Env, capacity: int | None = None):
        from .castellion import CompiledCastellionEnv
        from .single import CompiledCastleSiegeEnv

        base = getattr(env, "unwrapped", env)
        view = _solitaire_view(base)
        super().__init__(env)
        self.game = view.game
        self._compiled = isinstance(base, (CompiledCastleSiegeEnv, CompiledCastellionEnv))
        self.moves = _made(view, capacity)
        self.observation_space = view_spaces(
            cast(gym.spaces.Box, env.observation_space),
            int(cast(gym.spaces.Discrete, env.action_space).n),
            self.moves.capacity,
            len(view.feature_names()),
        )

    def _view(self, obs, info: dict, done: bool) -> dict:
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
        from .castellion import CastellionVectorEnv
        from .castle_siege import CastleSiegeVectorEnv

        base = env.unwrapped if hasattr(env, "unwrapped") else env
        view: type[SiegeMoves] | type[CastellionMoves]
        if isinstance(base, CastleSiegeVectorEnv):
            view = SiegeMoves
        elif isinstance(base, CastellionVectorEnv):
            view = CastellionMoves
        else:
            raise ValueError(
                f"MoveFeatureVectorEnv needs the batched Castle Siege or "
                f"Castellion env, got {type(base).__name__}"
            )
        self.game = view.game
        self._base = base
        self.moves = _made(view, capacity)
        self.single_observation_space = view_spaces(
            base.single_observation_space,
            int(base.single_action_space.n),
            self.moves.capacity,
            len(view.feature_names()),
        )
        self.observation_space = gym.vector.utils.batch_space(
            self.single_observation_space, self.num_envs
        )
        self._out = self.moves.empty(self.num_envs)
        self._legal = np.zeros(self.num_envs, np.int64)

    def _view(self, obs, info: dict) -> dict:
        self.moves.batch_env(self._base, self._out, self._legal)
        info["legal_moves"] = self._legal.copy()
        return {"observation": obs, **{k: a.copy() for k, a in self._out.items()}}

    def reset(self, *, seed=None, options=None):
        obs, info = self.env.reset(seed=seed, options=options)
        return self._view(obs, info), info

    def _row_arrays(self) -> dict:
        return self.moves.row_arrays(self._base)

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
                raise ValueError(
                    f"saved {name} rows have shape {value.shape}, this batch {target.shape}"
                )
            target[:] = value
        base._refresh(slice(None))
        base._started = True
        return self._view(base._out(base._obs), {})

    def step(self, actions):
        obs, rewards, terminated, truncated, info = self.env.step(actions)
        return self._view(obs, info), rewards, terminated, truncated, info


def linear_scale() -> np.ndarray:
    """Castle Siege: the linear scorer's feature i is column ``LINEAR + i`` times this."""
    from . import siege_moves

    return siege_moves.LINEAR_SCALE.copy()


def compiled_move_env(game: str, capacity: int | None = None, **kwargs) -> MoveFeatureObservation:
    """The compiled single env of ``game`` (``make_single``) with the move view."""
    from . import make_single

    return MoveFeatureObservation(make_single(game, **kwargs), capacity)


def make_move_vec(
    game: str, num_envs: int, capacity: int | None = None, **kwargs
) -> MoveFeatureVectorEnv:
    """The batched env (``castle_envs.make_vec``'s keywords) with the move view."""
    from . import make_vec

    return MoveFeatureVectorEnv(make_vec(game, num_envs, **kwargs), capacity)
