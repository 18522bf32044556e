"""A finite, flat action layout shared by every game.

Each game lists its moves once, as hashable, printable tuples; the table gives the
id <-> move mapping both ways (``decode`` / ``encode``), so every action id has a
readable move and every readable move (or its string) has an id.
"""
from __future__ import annotations

from typing import Hashable, Sequence

from .errors import IllegalActionError


class ActionTable:
    def __init__(self, moves: Sequence[Hashable]):
        self.moves = tuple(moves)
        # keyed with the type too: NamedTuples of different kinds compare equal as tuples
        self._index = {(type(m), m): i for i, m in enumerate(self.moves)}
        self._by_text = {str(m): i for i, m in enumerate(self.moves)}
        if len(self._index) != len(self.moves) or len(self._by_text) != len(self.moves):
            raise ValueError("action table has duplicate moves or duplicate move texts")

    def __len__(self) -> int:
        return len(self.moves)

    def decode(self, action) -> Hashable:
        return self.moves[self.check(action)]

    def encode(self, move) -> int:
        if isinstance(move, str):
            index = self._by_text.get(move)
        else:
            index = self._index.get((type(move), move))
        if index is None:
            raise ValueError(f"not a move of this game: {move!r}")
        return index

    def check(self, action) -> int:
        """The action as a Python int, or IllegalActionError naming why it is not one."""
        try:
            as_int = int(action)
        except (TypeError, ValueError):
            raise IllegalActionError(f"action {action!r} is not an integer") from None
        if as_int != action and not (hasattr(action, "shape") and action.shape == ()):
            raise IllegalActionError(f"action {action!r} is not an integer")
        if not 0 <= as_int < len(self.moves):
            raise IllegalActionError(
                f"action {as_int} is out of range: the action space is Discrete({len(self.moves)})")
        return as_int
