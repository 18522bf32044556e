"""What the four games truly share: the state contract, action tables, env layers, raster."""

from .actions import ActionTable
from .errors import (
    ActionSpaceError,
    ActionTypeError,
    EpisodeOverError,
    IllegalActionError,
    InvalidOptionError,
    InvalidStateError,
    OptionTypeError,
    UnknownOptionError,
)
from .state import GameState, check_options, choice_error

__all__ = [
    "ActionSpaceError",
    "ActionTable",
    "ActionTypeError",
    "EpisodeOverError",
    "GameState",
    "IllegalActionError",
    "InvalidOptionError",
    "InvalidStateError",
    "OptionTypeError",
    "UnknownOptionError",
    "check_options",
    "choice_error",
]
