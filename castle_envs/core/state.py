"""The contract every game's rules core fulfils (OpenSpiel's game/state split, pgx's purity).

A ``GameState`` holds a whole game position in numpy arrays and plain ints, hidden
information included (the deck order is part of the state; observation encoders decide what
a player may see). Rules live in methods that read and change only the state itself: no
randomness after the deal, no I/O, no globals. Environments, agents, search and the solver
all drive games through this interface alone.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable
from typing import Any

import numpy as np

from .actions import ActionTable
from .errors import IllegalActionError, InvalidStateError, UnknownOptionError
from .files import UnreadableFile, parse_json


class GameState(ABC):
    #: the game's action layout; set by each game
    actions: ActionTable
    #: number of seats (1 for solitaire games)
    num_players: int = 1

    # --- the rules -------------------------------------------------------------------------
    @abstractmethod
    def legal_action_mask(self) -> np.ndarray:
        """Bool array of ``len(actions)``: True exactly for the moves ``apply_action`` accepts.

        Games may return a cached array: callers must not modify it (copy it first)."""

    @abstractmethod
    def apply_legal(self, action: int) -> None:
        """Apply a legal action, unchecked: the primitive that search and solvers call on
        mask-legal actions (``apply_action`` checks first)."""

    @abstractmethod
    def is_terminal(self) -> bool: ...

    @abstractmethod
    def returns(self) -> np.ndarray:
        """Final (or current) return of each player, shape ``(num_players,)``."""

    @property
    def current_player(self) -> int:
        """Seat to act; -1 once the game is over."""
        return -1 if self.is_terminal() else 0

    def illegal_reason(self, action: int) -> str:
        """Why a (range-checked) action is illegal now; games override with specifics."""
        return "it is not legal in the current position"

    def apply_action(self, action: Any) -> None:
        """Check and apply ``action``; raise ``IllegalActionError`` naming the move and why."""
        action = self.actions.check(action)
        if self.is_terminal():
            raise IllegalActionError("the game is over: no action is legal")
        if not self.legal_action_mask()[action]:
            raise IllegalActionError(
                f"illegal action {action} ({self.describe_action(action)}): "
                f"{self.illegal_reason(action)}"
            )
        self.apply_legal(action)

    def winning_seats(self) -> list[int]:
        """The seats that won, in seat order: ``[]`` while the game is on (and for a lost
        solitaire). Default: the seats with a positive return once the game is over."""
        if not self.is_terminal():
            return []
        return [int(s) for s in np.flatnonzero(self.returns() > 0)]

    def legal_actions(self) -> np.ndarray:
        return np.flatnonzero(self.legal_action_mask())

    def determinize(self, player: int, rng: np.random.Generator) -> GameState:
        """A clone whose information hidden from ``player`` is re-sampled uniformly among the
        arrangements consistent with what that player has seen (for information-set search:
        an agent may search the result without cheating)."""
        raise NotImplementedError(f"{type(self).__name__} does not implement determinize")

    def player_view(self, player: int = 0) -> GameState:
        """What ``player`` knows, as a state an agent may read without cheating (OpenSpiel's
        information state): a copy whose hidden information is replaced by what the player
        can tell of it. Games with hidden information override this; a view refuses with
        ``HiddenInformationError`` to reveal what it hides (apply ``determinize(player, rng)``
        to it to search). The default is a plain clone (no hidden information)."""
        return self.clone()

    # --- naming moves ------------------------------------------------------------------------
    def decode_action(self, action: Any) -> Any:
        return self.actions.decode(action)

    def encode_action(self, move: Any) -> int:
        return self.actions.encode(move)

    def describe_action(self, action: Any) -> str:
        """A readable move in this position's terms (games override to name actual cards)."""
        return str(self.actions.decode(action))

    # --- copies and serialization ----------------------------------------------------------
    @abstractmethod
    def clone(self) -> GameState: ...

    @abstractmethod
    def to_dict(self) -> dict:
        """A JSON-serializable dict that ``from_dict`` turns back into an equal state."""

    @classmethod
    @abstractmethod
    def from_dict(cls, data: dict) -> GameState:
        """Rebuild a state; raise ``InvalidStateError`` for anything no game could reach."""

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> GameState:
        """``from_dict`` of the JSON ``text``; text that is not JSON, or nests deeper than a
        state could (which would exhaust the parser's recursion), is an
        ``InvalidStateError`` in one line."""
        try:
            # allow_nan: to_json writes a non-finite float as json.dumps does; from_dict checks
            data = parse_json(text, "saved state", allow_nan=True)
        except UnreadableFile as err:
            raise InvalidStateError(str(err)) from None
        return cls.from_dict(data)

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.to_dict() == other.to_dict()

    __hash__ = None  # type: ignore[assignment]  # mutable (mypy wants a method here)


class SolitaireState(GameState):
    """A one-player game whose ``outcome`` is 1 (won), -1 (lost) or 0 (playing); the
    return is 1 for a win and 0 otherwise."""

    num_players = 1
    outcome: int = 0

    def is_terminal(self) -> bool:
        return self.outcome != 0

    def returns(self) -> np.ndarray:
        return np.array([1.0 if self.outcome == 1 else 0.0])

    @property
    def won(self) -> bool:
        return self.outcome == 1

    def winning_seats(self) -> list[int]:
        return [0] if self.outcome == 1 else []


def check_options(given: dict | None, allowed: dict[str, Any], what: str) -> dict:
    """Merge ``given`` over ``allowed`` defaults; unknown keys raise ``UnknownOptionError``
    naming them (a ``TypeError``, as Python answers an unexpected keyword argument, and a
    ``ValueError``)."""
    given = dict(given or {})
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise UnknownOptionError(f"unknown {what} {unknown}; known: {sorted(allowed)}")
    return {**allowed, **given}


def choice_error(name: str, value: Any, choices: Iterable) -> ValueError:
    return ValueError(f"unknown {name} {value!r}; choose one of {list(choices)}")
