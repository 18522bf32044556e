"""Checking constructor arguments and rules options: the one place every env's keywords are
read (the Gymnasium and PettingZoo envs, ``make_vec``, ``make_single``).

Each check names the argument, the value given and what is accepted, and never trips over
the value itself (an unhashable list, a NumPy array, a string where a number belongs):

    >>> check_choice("difficulty", ["easy"], ("easy", "hard"))
    Traceback (most recent call last):
    ...
    castle_envs.core.errors.OptionTypeError: unknown difficulty ['easy'] (a list); choose one of ['easy', 'hard']

A wrong kind of value raises ``OptionTypeError`` (a ``TypeError`` and a ``ValueError``), a
value of the right kind outside what is accepted raises ``InvalidOptionError`` (a
``ValueError``). Unknown keyword arguments raise ``UnknownOptionError`` worded as Python's
own ``"X.__init__() got an unexpected keyword argument 'k'"`` (pipelines such as TorchRL's
``GymEnv`` match that text to retry without the keyword).

An agent's or a search's options are written once, as an ``Options`` table of ``Option``s
(default and accepted range): it checks a constructor's ``**options``, gives the defaults
and the types a spec is parsed with, and shows the options in the constructor's signature.
"""

from __future__ import annotations

import inspect
import math
import numbers
from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple, TypeVar

import numpy as np

from .errors import InvalidOptionError, OptionTypeError, UnknownOptionError


def _kind(value: Any) -> str:
    """``'a list'``, ``'an int'``: the value's type, for messages."""
    name = type(value).__name__
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def _is_int(value: Any) -> bool:
    return isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_))


def _same(value: Any, choice: Any) -> bool:
    """``value`` is ``choice`` (never hashes ``value``, never compares arrays element-wise)."""
    if choice is None:
        return value is None
    if isinstance(choice, (bool, np.bool_)):
        return isinstance(value, (bool, np.bool_)) and bool(value) == bool(choice)
    if isinstance(choice, str):
        return isinstance(value, str) and value == choice
    if _is_int(choice):
        return _is_int(value) and int(value) == int(choice)
    return type(value) is type(choice) and value == choice


def _choice_kind_ok(value: Any, choices: Iterable) -> bool:
    """Whether ``value`` is of a kind some choice has (else a ``TypeError``)."""
    return any(
        _same(value, c)
        or (isinstance(c, str) and isinstance(value, str))
        or (_is_int(c) and _is_int(value))
        or (c is None and value is None)
        for c in choices
    )


def check_choice(name: str, value: Any, choices: Iterable) -> Any:
    """``value`` if it is one of ``choices`` (the choice itself: ``np.int64(2)`` gives 2)."""
    choices = list(choices)
    for choice in choices:
        if _same(value, choice):
            return choice
    cls = InvalidOptionError if _choice_kind_ok(value, choices) else OptionTypeError
    shown = f"{value!r}" if cls is InvalidOptionError else f"{value!r} ({_kind(value)})"
    raise cls(f"unknown {name} {shown}; choose one of {choices}")


def check_int(name: str, value: Any, low: float | None = None, high: float | None = None) -> int:
    """``value`` as an ``int`` if it is an integer (not a bool, not a float, not a string)
    within ``low``..``high`` (each bound optional, both included)."""
    bounds = (
        (f" >= {low}" if high is None else f" in {low}..{high}")
        if low is not None
        else (f" <= {high}" if high is not None else "")
    )
    if not _is_int(value):
        raise OptionTypeError(f"{name} must be an int{bounds}, got {value!r} ({_kind(value)})")
    if (low is not None and value < low) or (high is not None and value > high):
        raise InvalidOptionError(f"{name} must be an int{bounds}, got {value!r}")
    return int(value)


def check_real(
    name: str,
    value: Any,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
) -> float:
    """``value`` as a ``float`` if it is a finite real number (not a bool, not a string)
    within ``low``..``high`` (each bound optional and included; ``low_open``: above ``low``)."""
    bounds = "" if low is None else (f" > {low}" if low_open else f" >= {low}")
    if high is not None:
        bounds += (" and" if bounds else "") + f" <= {high}"
    if not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_)):
        raise OptionTypeError(
            f"{name} must be a finite number{bounds}, got {value!r} ({_kind(value)})"
        )
    v = float(value)
    if (
        not math.isfinite(v)
        or (low is not None and (v <= low if low_open else v < low))
        or (high is not None and v > high)
    ):
        raise InvalidOptionError(f"{name} must be a finite number{bounds}, got {value!r}")
    return v


def check_bool(name: str, value: Any) -> bool:
    """``value`` if it is ``True`` or ``False`` (a NumPy bool too; not 0, 1 or a string)."""
    if not isinstance(value, (bool, np.bool_)):
        raise OptionTypeError(f"{name} must be True or False, got {value!r} ({_kind(value)})")
    return bool(value)


def check_optional_int(name: str, value: Any, low: int | None = None) -> int | None:
    return None if value is None else check_int(name, value, low)


def unexpected_keyword(
    owner: str, unknown: Iterable[str], keywords: Iterable[str], rules: Iterable[str] = ()
) -> UnknownOptionError:
    """The error for keyword arguments ``owner`` does not take, worded as Python's own
    (``"CastleSiegeEnv.__init__() got an unexpected keyword argument 'frameskip'"``), then
    what is accepted: ``keywords`` (the named arguments) and ``rules`` (the rules options).
    TorchRL's ``GymEnv`` retries without ``frameskip`` on that text."""
    unknown = sorted(unknown)
    also = f" (and {', '.join(map(repr, unknown[1:]))})" if len(unknown) > 1 else ""
    rules = sorted(rules)
    return UnknownOptionError(
        f"{owner}.__init__() got an unexpected keyword argument {unknown[0]!r}{also}; "
        f"keyword arguments: {sorted(keywords)}" + (f"; rules options: {rules}" if rules else "")
    )


def check_keywords(
    owner: str, given: dict | None, defaults: dict, keywords: Iterable[str] = ()
) -> dict:
    """``given`` (a constructor's ``**rules``) merged over ``defaults`` (its rules options);
    a key that is not a rules option raises ``unexpected_keyword`` (``keywords``: the
    constructor's named arguments, for the message)."""
    given = dict(given or {})
    unknown = set(given) - set(defaults)
    if unknown:
        raise unexpected_keyword(owner, unknown, keywords, defaults)
    return {**defaults, **given}


class Option(NamedTuple):
    """One option of an agent or a search: its ``default``, whose type (``int``, ``float``
    or ``str``) is the option's (a float option takes an int too), and what it accepts:
    ``low``..``high`` for a number (each optional, both included; ``low_open``: above
    ``low``), one of ``choices`` for a string (none given: any string)."""

    default: Any
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    choices: tuple[str, ...] = ()


def check_option(label: str, option: Option, value: Any) -> Any:
    """``value`` checked against ``option`` (``label`` names it in the message, as
    ``"ismcts option width"``): an int, a float, or a string."""
    kind = type(option.default)
    if option.choices:
        if not (isinstance(value, str) and value in option.choices):
            cls = InvalidOptionError if isinstance(value, str) else OptionTypeError
            raise cls(f"{label} must be one of {', '.join(option.choices)}, got {value!r}")
        return value
    if kind is int:
        return check_int(label, value, option.low, option.high)
    if kind is float:
        return check_real(label, value, option.low, option.high, option.low_open)
    return str(value)


_F = TypeVar("_F", bound=Callable)


class Options(dict):
    """An options table, ``{name: Option}`` in the order written: what an agent's or a
    search's constructor takes as ``**options``::

        OPTIONS = Options(worlds=Option(8, 1, 1000), share=Option(0.3, 0, 1))

        class Agent:
            @OPTIONS.keywords
            def __init__(self, **options):
                o = OPTIONS.check(options, "agent option", "Agent")
    """

    def defaults(self) -> dict[str, Any]:
        """``{name: default}``."""
        return {name: option.default for name, option in self.items()}

    def types(self) -> dict[str, type]:
        """``{name: type}``: what a ``key=value`` spec is parsed with."""
        return {name: type(option.default) for name, option in self.items()}

    def check(self, given: Mapping[str, Any], what: str, owner: str) -> dict[str, Any]:
        """Every option, in order: the one ``given`` (a constructor's ``**options``), checked
        (``check_option``, named ``"{what} {name}"``), else its default. A name not in the
        table raises ``unexpected_keyword`` for ``owner``."""
        unknown = set(given) - set(self)
        if unknown:
            raise unexpected_keyword(owner, unknown, self)
        return {
            name: check_option(f"{what} {name}", option, given[name])
            if name in given
            else option.default
            for name, option in self.items()
        }

    def keywords(self, init: _F) -> _F:
        """Decorates a constructor that takes the options as ``**options``: its signature
        (``help``, ``inspect.signature``) shows them as keyword arguments with defaults."""
        sig = inspect.signature(init)
        params = [p for p in sig.parameters.values() if p.kind is not p.VAR_KEYWORD]
        params += [
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=option.default,
                annotation=type(option.default).__name__,
            )
            for name, option in self.items()
        ]
        init.__signature__ = sig.replace(parameters=params)  # type: ignore[attr-defined]
        return init
