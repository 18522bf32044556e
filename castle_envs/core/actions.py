"""A finite, flat action layout shared by every game.

Each game lists its moves once, as hashable, printable tuples; the table gives the
id <-> move mapping both ways (``decode`` / ``encode``), so every action id has a
readable move and every readable move (or its string) has an id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .errors import ActionSpaceError, ActionTypeError


def _integer_dtype(dtype: Any) -> bool:
    if isinstance(dtype, np.dtype):
        return dtype.kind in "iu"
    # torch (and similar) dtypes print as "torch.int64", "torch.uint8", "torch.float32", ...
    name = str(dtype).rpartition(".")[2]
    return name.startswith(("int", "uint"))


def _who(who: str) -> str:
    return f"{who}: " if who else ""


def action_int(action: Any, who: str = "") -> int:
    """``action`` as a Python int, when it is one integer: a Python or NumPy integer, or a
    0-d integer array or tensor. Anything else (floats of every kind, even 3.0; bools;
    strings; arrays with more than one element) raises ``ActionTypeError``, as Gymnasium's
    ``Discrete.contains`` refuses them: truncating ``np.float64(4.5)`` to 4 would play a
    move nobody chose. ``who`` (the env, its row) begins the message."""
    if isinstance(action, (int, np.integer)) and not isinstance(action, (bool, np.bool_)):
        return int(action)
    dtype, shape = getattr(action, "dtype", None), getattr(action, "shape", None)
    if dtype is not None and shape is not None and tuple(shape) == () and _integer_dtype(dtype):
        return int(action)
    raise ActionTypeError(
        f"{_who(who)}action {action!r} is not an integer "
        "(actions are integer ids of a Discrete space)"
    )


def out_of_space(value: int, num_actions: int, who: str = "") -> ActionSpaceError:
    """The error for the integer ``value`` outside ``Discrete(num_actions)``, naming ``who``
    (the env, and the row of a batch), the value and the space."""
    return ActionSpaceError(
        f"{_who(who)}action {value} is out of range: the action space is "
        f"Discrete({num_actions}), ids 0 to {num_actions - 1}"
    )


def check_action(action: Any, num_actions: int, who: str = "") -> int:
    """``action`` as a Python int in ``Discrete(num_actions)``, or ``ActionSpaceError`` naming
    ``who``, the value and the space (``ActionTypeError`` when it is not one integer): what
    every env kind checks before its position changes, in every ``illegal_action`` mode."""
    as_int = action_int(action, who)
    if not 0 <= as_int < num_actions:
        raise out_of_space(as_int, num_actions, who)
    return as_int


class ActionTable:
    # the moves are hashable, each game's of several classes: typed Any so that the rules
    # read a decoded move's fields without a cast
    def __init__(self, moves: Sequence[Any]) -> None:
        self.moves = tuple(moves)
        # keyed with the type too: NamedTuples of different kinds compare equal as tuples
        self._index = {(type(m), m): i for i, m in enumerate(self.moves)}
        self._by_text = {str(m): i for i, m in enumerate(self.moves)}
        if len(self._index) != len(self.moves) or len(self._by_text) != len(self.moves):
            raise ValueError("action table has duplicate moves or duplicate move texts")

    def __len__(self) -> int:
        return len(self.moves)

    def decode(self, action: Any) -> Any:
        return self.moves[self.check(action)]

    def encode(self, move: Any) -> int:
        if isinstance(move, str):
            index = self._by_text.get(move)
        else:
            index = self._index.get((type(move), move))
        if index is None:
            raise ValueError(f"not a move of this game: {move!r}")
        return index

    def check(self, action: Any, who: str = "") -> int:
        """The action as a Python int in range, or ``ActionSpaceError`` naming ``who`` (the
        env), the value and the space (``check_action``)."""
        return check_action(action, len(self.moves), who)
