"""Reading saved states (``from_dict``) strictly: every game's loader reads its fields
through a ``StateReader``, so that a bad field always gets the same kind of answer.

A saved state comes from a file or a user, so it is read as untrusted input: each value
must have exactly the type ``to_dict`` writes (an ``int`` is not a float, a bool or a string;
a ``bool`` is not ``"false"`` or 0), lie in its range, and lists are measured before they are
walked (a 300,000-entry deck is refused at once, in constant time). Every failure is an
``InvalidStateError`` (a ``ValueError``) naming the game and the field, never an
``AttributeError``, ``IndexError`` or ``OverflowError``.
"""

from __future__ import annotations

import builtins
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, NoReturn

import numpy as np

from .errors import InvalidStateError

if TYPE_CHECKING:
    from .state import GameState


class StateReader:
    """Checks for one game's saved states; ``title`` names the game in every message."""

    def __init__(self, title: str) -> None:
        self.title = title

    def bad(self, why: str) -> NoReturn:
        raise InvalidStateError(f"invalid {self.title} state: {why}")

    # --- containers ------------------------------------------------------------------------
    def dict(
        self, value: Any, what: str, required: Iterable[str] = (), optional: Iterable[str] = ()
    ) -> dict:
        """``value`` as a dict with string keys: every ``required`` key present, and (when
        ``required`` or ``optional`` is given) no key outside them."""
        if not isinstance(value, dict):
            self.bad(f"{what} must be a dict, got {type(value).__name__}")
        required, optional = list(required), list(optional)
        if required or optional:
            missing = [k for k in required if k not in value]
            unknown = sorted(str(k) for k in value if k not in required and k not in optional)
            if missing or unknown:
                self.bad(
                    f"{what}: missing keys {missing}, unknown keys {unknown}"
                    if missing and unknown
                    else f"{what}: missing keys {missing}"
                    if missing
                    else f"{what}: unknown keys {unknown}"
                )
        return value

    def list(
        self, value: Any, what: str, length: int | None = None, max_length: int | None = None
    ) -> list:
        """``value`` as a list (or tuple), its length checked before anything reads it."""
        if not isinstance(value, (list, tuple)):
            self.bad(f"{what} must be a list, got {type(value).__name__}")
        if length is not None and len(value) != length:
            self.bad(f"{what} must hold {length} entries, got {len(value)}")
        if max_length is not None and len(value) > max_length:
            self.bad(f"{what} holds {len(value)} entries; at most {max_length} fit")
        return list(value)

    # --- scalars ---------------------------------------------------------------------------
    def int(self, value: Any, what: str, lo: int, hi: int) -> int:
        """An int (not a bool, not a float however integral) in ``lo``-``hi``."""
        if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
            self.bad(f"{what} must be an int, got {value!r}")
        if not lo <= value <= hi:
            self.bad(f"{what} = {value} is outside {lo}-{hi}")
        return int(value)

    def bool(self, value: Any, what: str) -> bool:
        """``True`` or ``False`` exactly (not ``"false"``, not 0)."""
        if not isinstance(value, (bool, np.bool_)):
            self.bad(f"{what} must be true or false, got {value!r}")
        return bool(value)

    def choice(self, value: Any, what: str, choices: Iterable) -> Any:
        """One of ``choices`` (compared by type and value: 1 is not True)."""
        for choice in choices:
            if type(value) is type(choice) and value == choice:
                return value
        self.bad(f"{what} must be one of {list(choices)}, got {value!r}")

    # --- lists of numbers --------------------------------------------------------------------
    # (annotations in this class say builtins.int and so on: int, list, ... name its methods)
    def ints(
        self,
        value: Any,
        what: str,
        lo: builtins.int,
        hi: builtins.int,
        length: builtins.int | None = None,
        max_length: builtins.int | None = None,
    ) -> builtins.list[builtins.int]:
        """A list of ints, each in ``lo``-``hi``."""
        items = self.list(value, what, length, max_length)
        return [self.int(v, f"{what}[{i}]", lo, hi) for i, v in enumerate(items)]

    def bools(
        self, value: Any, what: str, length: builtins.int | None = None
    ) -> builtins.list[builtins.bool]:
        items = self.list(value, what, length)
        return [self.bool(v, f"{what}[{i}]") for i, v in enumerate(items)]

    def int_array(
        self,
        value: Any,
        what: str,
        shape: tuple[builtins.int, ...],
        lo: builtins.int,
        hi: builtins.int,
        dtype: type[np.integer] = np.int64,
    ) -> np.ndarray:
        """Nested lists of exactly ``shape`` holding ints in ``lo``-``hi``, as an array."""

        def read(node: Any, depth: builtins.int, where: str) -> Any:
            if depth == len(shape):
                return self.int(node, where, lo, hi)
            items = self.list(node, where, shape[depth])
            return [read(v, depth + 1, f"{where}[{i}]") for i, v in enumerate(items)]

        return np.array(read(value, 0, what), dtype=dtype).reshape(shape)

    def bool_array(self, value: Any, what: str, shape: tuple[builtins.int, ...]) -> np.ndarray:
        def read(node: Any, depth: builtins.int, where: str) -> Any:
            if depth == len(shape):
                return self.bool(node, where)
            items = self.list(node, where, shape[depth])
            return [read(v, depth + 1, f"{where}[{i}]") for i, v in enumerate(items)]

        return np.array(read(value, 0, what), dtype=bool).reshape(shape)

    # --- the position as a whole -----------------------------------------------------------------
    def playable(self, state: GameState) -> None:
        """A position that is not over must have a legal move."""
        if not state.is_terminal() and not state.legal_action_mask().any():
            self.bad("the game is not over but no move is legal")

    def same_game(self, saved: builtins.dict, env: builtins.dict) -> None:
        """A state loaded into an env must be of the env's variant and rules: ``saved`` and
        ``env`` map each setting's name to the state's and the env's value."""
        for name, value in saved.items():
            if value != env[name]:
                raise InvalidStateError(
                    f"the saved {self.title} state has {name} {value!r}, but this env "
                    f"plays {name} {env[name]!r}: make the env with the state's settings"
                )
