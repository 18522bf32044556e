"""Errors shared by every game: each names what was wrong, never a silent bad state."""


class IllegalActionError(ValueError):
    """An action id that is out of range or not legal in the current state."""


class ActionTypeError(IllegalActionError, TypeError):
    """An action that is not one integer (a float of any kind, a bool, a string, an array):
    a caller's mistake, refused in every ``illegal_action`` mode, never truncated."""


class InvalidStateError(ValueError):
    """A serialized state (``from_dict``) that no legal game could reach."""


class EpisodeOverError(RuntimeError):
    """``step`` called after the episode ended; call ``reset()`` first."""
