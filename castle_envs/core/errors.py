"""Errors shared by every game: each names what was wrong, never a silent bad state."""


class IllegalActionError(ValueError):
    """An action id that is out of range or not legal in the current state."""


class ActionSpaceError(IllegalActionError):
    """An action outside the action space ``Discrete(n)``: an integer below 0 or at or above
    ``n`` (a sentinel such as -1, an overflow), or not one integer (``ActionTypeError``). A
    caller's bug, not a move: refused in every ``illegal_action`` mode before the env changes
    (``illegal_action="penalty"`` is for moves of the space that the rules forbid now)."""


class ActionTypeError(ActionSpaceError, TypeError):
    """An action that is not one integer (a float of any kind, a bool, a string, an array):
    a caller's mistake, refused in every ``illegal_action`` mode, never truncated."""


class UnknownOptionError(TypeError, ValueError):
    """An unknown keyword argument or option name. A ``TypeError`` as Python's own answer to
    an unexpected keyword argument (pipelines such as TorchRL's ``GymEnv`` retry without a
    keyword on ``TypeError`` when its message reads as Python's: constructors word it so,
    ``"CastleSiegeEnv.__init__() got an unexpected keyword argument 'frameskip'"``), and a
    ``ValueError`` as every other bad option here."""


class InvalidOptionError(ValueError):
    """A constructor argument or rules option of the right kind with a value that is not
    accepted (a difficulty no game has, ``max_episode_steps=0``); the message names the
    argument, the value and what is accepted."""


class OptionTypeError(InvalidOptionError, TypeError):
    """A constructor argument or rules option of the wrong kind (``difficulty=["easy"]``,
    ``max_episode_steps="x"``): a ``TypeError`` as Python's, and an ``InvalidOptionError``."""


class InvalidStateError(ValueError):
    """A serialized state (``from_dict``) that no legal game could reach."""


class EpisodeOverError(RuntimeError):
    """``step`` called after the episode ended; call ``reset()`` first."""


class HiddenInformationError(RuntimeError):
    """A player's view (``GameState.player_view``) was asked for something the player does not
    know (the next unseen card, the order of a hidden pile): determinize it first."""
