"""Castle Siege afterstate value (n-tuple tables learned by TD(lambda)) and its 1-ply agent.

``NTupleValue`` holds the tables (``castle_siege_ntuple_kernel``: what they look up, why the
afterstate, how the draws stay hidden); ``NTuplePolicy`` plays the legal move whose
afterstate it values most, one evaluation a legal move, no search and no endgame planner.
A model directory of kind ``ntuple_value`` (``--agent model:DIR``) holds ``model.json`` and
``weights.npz`` (one float32 or float16 array, read without pickles and checked: its
length is the tables' and every entry is finite); the card's ``policy`` names the tables
and their sizes, so weights of another layout are refused instead of misread.
"""

from __future__ import annotations

import zipfile
from pathlib import Path

import numpy as np
from castle_envs.agents.learned.model_files import write_card

from castle_envs.castle_siege.actions import NUM_ACTIONS
from castle_envs.castle_siege.cards import NUM_CARDS
from castle_envs.core import jit

KIND = "ntuple_value"
WEIGHTS = "weights.npz"
#: the value's play settings a card's ``options`` may give
OPTIONS = {"prune": True, "shaped": 0.1, "two_ply": False}


def _kernel():
    if not jit.HAVE_NUMBA:
        raise ImportError("the ntuple_value agent needs numba: " + jit.INSTALL_HINT)
    from castle_envs.agents.learned import castle_siege_ntuple_kernel as M

    return M


def layout() -> list[list]:
    """The tables' names and sizes, as a card records them."""
    return [[name, int(size)] for name, size in _kernel().TABLES]


class NTupleValue:
    """The tables' weights (a float32 vector over ``castle_siege_ntuple_kernel.TABLES``) and
    the settings play reads: ``prune`` (skip attacks carrying a card they do not need),
    ``shaped`` (a lost game's value per share of castles taken) and ``two_ply`` (play the
    kernel's two-ply player, ``best_move2``: a small search, no longer the value alone)."""

    def __init__(
        self,
        weights: np.ndarray | None = None,
        prune: bool = True,
        shaped: float = 0.1,
        two_ply: bool = False,
    ) -> None:
        M = _kernel()
        if weights is None:
            weights = np.zeros(M.N_WEIGHTS, np.float32)
        self.weights = check_weights(weights, M.N_WEIGHTS, "weights")
        if not isinstance(prune, bool):
            raise ValueError(f"prune must be true or false, got {prune!r}")
        if isinstance(shaped, bool) or not isinstance(shaped, (int, float)):
            raise ValueError(f"shaped must be a number in [0, 1], got {shaped!r}")
        if not 0.0 <= shaped <= 1.0:
            raise ValueError(f"shaped must be a number in [0, 1], got {shaped!r}")
        if not isinstance(two_ply, bool):
            raise ValueError(f"two_ply must be true or false, got {two_ply!r}")
        self.prune, self.shaped, self.two_ply = prune, float(shaped), two_ply

    def save(self, directory, extra: dict | None = None) -> Path:
        """A model directory of kind ``ntuple_value`` (``extra``: more card entries)."""
        directory = write_card(
            directory,
            {
                "kind": KIND,
                "game": "castle-siege",
                "variant": {},
                "env_kwargs": {},
                "policy": {"tables": layout()},
                "options": {"prune": self.prune, "shaped": self.shaped, "two_ply": self.two_ply},
                "weights": WEIGHTS,
                **(extra or {}),
            },
        )
        np.savez_compressed(directory / WEIGHTS, weights=self.weights)
        return directory

    @classmethod
    def load(cls, directory, card: dict) -> NTupleValue:
        """The value a model directory holds (``card``: its checked ``model.json``);
        ValueError naming what does not fit."""
        directory = Path(directory)
        policy = card.get("policy")
        tables = policy.get("tables") if isinstance(policy, dict) else None
        if tables != layout():
            raise ValueError(
                f"{directory}: policy.tables {tables!r} is not this version's table layout"
            )
        options = card.get("options", {})
        unknown = sorted(set(options) - set(OPTIONS))
        if unknown:
            raise ValueError(f"unknown ntuple_value options {unknown}; known: {list(OPTIONS)}")
        path = directory / card["weights"]
        try:
            data = np.load(path, allow_pickle=False)
        except FileNotFoundError:
            raise ValueError(f"{path}: no such weights file") from None
        except (OSError, EOFError, ValueError, zipfile.BadZipFile) as err:
            raise ValueError(f"{path}: not an .npz of plain arrays ({err})") from None
        if not isinstance(data, np.lib.npyio.NpzFile):
            raise ValueError(f"{path}: not an .npz of plain arrays (a bare array)")
        with data as f:
            if list(f.files) != ["weights"]:
                raise ValueError(f"{path}: expected one array 'weights', got {f.files}")
            try:
                weights = f["weights"]
            except (OSError, EOFError, ValueError, zipfile.BadZipFile) as err:
                raise ValueError(f"{path}: not an .npz of plain arrays ({err})") from None
        return cls(weights, **{**OPTIONS, **options})


def check_weights(weights, size: int, what: str) -> np.ndarray:
    """``weights`` as a float32 vector of ``size`` finite entries, or ValueError."""
    array = np.asarray(weights)
    if array.dtype not in (np.float32, np.float16, np.float64):
        raise ValueError(f"{what}: expected float32 or float16 numbers, got dtype {array.dtype}")
    if array.shape != (size,):
        raise ValueError(f"{what}: expected shape ({size},), got {array.shape}")
    array = array.astype(np.float32)
    if not np.isfinite(array).all():
        raise ValueError(f"{what}: holds {int((~np.isfinite(array)).sum())} non-finite entries")
    return array


class NTuplePolicy:
    """``policy(state, rng) -> action``: the legal move whose afterstate ``value`` rates
    highest (the first of equals). Reads only what the player sees (the kernel's
    docstring); ``values`` keeps the last decision's value of every move it rated."""

    def __init__(self, value: NTupleValue) -> None:
        from castle_envs.castle_siege import kernel as K

        M = _kernel()
        self.value = value
        self._M = M
        self._bb = np.zeros(K.CARD_WORDS, np.int8)
        self._vv = np.zeros(K.INT_WORDS, np.int32)
        self._mask = np.zeros(K.MASK_WIDTH, np.bool_)
        self._unseen = np.zeros(NUM_CARDS, np.int64)
        self._ranks = np.zeros(14, np.int64)
        self._work = np.zeros(M.WORK, np.int64)
        self._idx = np.zeros(M.MAX_FEATURES, np.int64)
        self.values = np.full(NUM_ACTIONS, np.nan)
        # the two-ply player's scratch: two positions deep
        self._rows = np.zeros((2, K.CARD_WORDS), np.int8)
        self._ints = np.zeros((2, K.INT_WORDS), np.int32)
        self._masks = np.zeros((2, K.MASK_WIDTH), np.bool_)
        self._unseen2 = np.zeros((2, NUM_CARDS), np.int64)
        self._ranks2 = np.zeros((2, 14), np.int64)

    def __call__(self, state, rng: np.random.Generator | None = None) -> int:
        # the kernel reads the rows; copies keep a live state untouched
        b = state.b.astype(np.int8)
        v = state.v.astype(np.int32)
        self.values[:] = np.nan
        recent, leave = state.attack == "most_recent", state.defeated == "leave_game"
        if self.value.two_ply:
            return int(
                self._M.best_move2(
                    b,
                    v,
                    self.value.weights,
                    recent,
                    leave,
                    self.value.prune,
                    self.value.shaped,
                    self._rows,
                    self._ints,
                    self._masks,
                    self._unseen2,
                    self._ranks2,
                    self._work,
                    self._idx,
                    self.values,
                )  # fmt: skip
            )
        action, _, _ = self._M.best_move(
            b, v, self.value.weights,
            recent, leave, self.value.prune, self.value.shaped, 0.0,
            self._bb, self._vv, self._mask, self._unseen, self._ranks, self._work,
            self._idx, self.values,
        )  # fmt: skip
        return int(action)


def load_agent(directory, card: dict, name: str, seed: int | None):
    """``MODEL_KINDS``' loader of kind ``ntuple_value``."""
    from castle_envs.agents.base import PolicyAgent
    from castle_envs.agents.learned.model_files import BadModel

    try:
        value = NTupleValue.load(directory, card)
    except ValueError as err:
        raise BadModel(str(err)) from None
    return PolicyAgent(NTuplePolicy(value), name, seed)
