"""The agents' and searches' options tables (``core.options.Option``): one table gives each
constructor's defaults, its signature, the types a spec is parsed with and the checks."""

import inspect

import pytest
from castle_envs.agents.options import parse_options
from castle_envs.agents.search import (
    castellion_pimc,
    castellion_planner,
    castle_siege_ismcts,
    castle_siege_search,
)
from castle_envs.agents.solvers import castle_siege_nested as nested_castle_siege

from castle_envs.core.errors import InvalidOptionError, OptionTypeError, UnknownOptionError
from castle_envs.core.options import Option, Options

TABLES = [
    (castellion_planner.PlannerPolicy, castellion_planner.OPTIONS),
    (castellion_pimc.PimcPolicy, castellion_pimc.OPTIONS),
    (castle_siege_ismcts.ISMCTSPolicy, castle_siege_ismcts.OPTIONS),
    (castle_siege_search.SearchPolicy, castle_siege_search.OPTIONS),
    (nested_castle_siege.NestedSearch, nested_castle_siege.OPTIONS),
]


@pytest.mark.parametrize("cls,table", TABLES, ids=lambda x: getattr(x, "__name__", ""))
def test_signature_shows_the_table_and_defaults_pass_their_own_checks(cls, table):
    params = inspect.signature(cls).parameters
    for name, option in table.items():
        assert params[name].default == option.default
        assert params[name].kind is inspect.Parameter.KEYWORD_ONLY
    assert table.check(table.defaults(), "x option", cls.__name__) == table.defaults()
    # a spec writes each default back as it was
    text = ",".join(f"{k}={v}" for k, v in table.defaults().items())
    assert parse_options(text, table.types(), "x") == table.defaults()


def test_check_options_names_the_option_and_the_owner():
    table = Options(
        n=Option(3, 1, 9), x=Option(0.5, 0.0, 1.0), kind=Option("a", choices=("a", "b"))
    )
    assert table.check({"n": 4}, "demo option", "Demo") == {"n": 4, "x": 0.5, "kind": "a"}
    with pytest.raises(InvalidOptionError, match="demo option n must be an int in 1..9, got 0"):
        table.check({"n": 0}, "demo option", "Demo")
    with pytest.raises(OptionTypeError, match="demo option x must be a finite number"):
        table.check({"x": True}, "demo option", "Demo")
    with pytest.raises(InvalidOptionError, match="demo option kind must be one of a, b, got 'c'"):
        table.check({"kind": "c"}, "demo option", "Demo")
    with pytest.raises(
        UnknownOptionError, match="Demo.__init__.. got an unexpected keyword argument 'm'"
    ):
        table.check({"m": 1}, "demo option", "Demo")
