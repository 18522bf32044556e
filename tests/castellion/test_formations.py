"""Formations: exactly four same-faction tiles, connected, in the pattern (RULES.md §Formations)."""

import pytest

from .helpers import position


def formations(*rows):
    return position(castle=list(rows)).formations()  # (towers, bastions, lines)


def test_tower_line_bastion_each_counted():
    assert formations("C^ S#", "C# So", "Co S^", "C^") == (1, 0, 0)
    assert formations("P^ P# Po P^") == (0, 0, 1)
    assert formations("J^ J# S^", "Jo J^ S#") == (0, 1, 0)


def test_rule_example_tower_survives_other_factions_beside_it():
    # "None of the tiles next to the Chameleon tower are of the same faction"
    assert formations("S^ C# Jo", "P# Co S#", "J^ C^ Po", "S# C# J^") == (1, 0, 0)


def test_rule_example_extra_pyro_above_a_line_cancels_it():
    assert formations("P^ P# Po P^") == (0, 0, 1)
    assert formations("P^ P# Po P^", ". Po") == (0, 0, 0)


def test_rule_example_eight_seers_nullify_each_other():
    assert formations("S^ S# So S^", "S# So S^ S#") == (0, 0, 0)


def test_larger_group_in_any_shape_forms_nothing():
    # five in a row, an L of four, a 2x2 plus one
    assert formations("J^ J# Jo J^ J#") == (0, 0, 0)
    assert formations("J^ J# Jo", "Jo") == (0, 0, 0)
    assert formations("J^ J# Jo", "Jo J^") == (0, 0, 0)


def test_diagonal_tiles_do_not_join_a_group():
    # two separate Pyro lines touching only at a corner
    assert formations("P^ P# Po P^ S#", "S^ S# Co C^ P#", "So C^ C# So Po") == (0, 0, 1)


def test_several_formations_of_different_factions():
    castle = (
        "S^ S# So S^ C# Co",
        "P# J^ J# Po C^ C#",
        "P^ Jo J^ P# C# Co",
        "Po S^ S# P^ C^ C#",
        "P#",
    )
    # Seer line (row 0), Juggler bastion, Pyro tower (column 0) canceled? column 0 rows 1-4
    # is P# P^ Po P# (4 tall) -> tower; column 3 rows 1-3 Po P# P^ joins no other Pyro
    towers, bastions, lines = position(castle=list(castle)).formations()
    assert (towers, bastions, lines) == (1, 1, 1)


@pytest.mark.parametrize(
    "rows, expected",
    [
        (("S^ S#", "So S^", "S# So", "S^ S#"), (0, 0, 0)),  # 8 seers in a 2x4 block
        (("S^ C#", "So C^", "S# Co", "S^ C#"), (2, 0, 0)),  # two towers side by side
        (
            (
                "P^ P#",
                "Po P^",
                ". .",
            ),
            (0, 1, 0),
        ),
    ],
)
def test_more_patterns(rows, expected):
    assert formations(*[r for r in rows if r.strip(". ")]) == expected
