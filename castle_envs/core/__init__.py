"""What the four games truly share: the state contract, action tables, env layers, raster."""
from .actions import ActionTable
from .errors import EpisodeOverError, IllegalActionError, InvalidStateError
from .state import GameState, check_options, choice_error

__all__ = ["ActionTable", "EpisodeOverError", "GameState", "IllegalActionError",
           "InvalidStateError", "check_options", "choice_error"]
