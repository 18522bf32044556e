"""The four placement rules, drawing, discarding and Traitor placement (every level)."""

import pytest

from .helpers import act, grid_text, legal, position

PLACES = {f"place on column {c}" for c in range(6)} | {"place at a new left column"}


def placements(state):
    return legal(state) & PLACES


def test_first_tile_starts_the_foundation():
    s = position(hand="S^")
    assert placements(s) == {"place on column 0"}
    act(s, "place on column 0")
    assert grid_text(s) == ["S^"] and s.phase == 0


def test_rule1_adjacency_new_columns_only_beside_the_castle():
    s = position(castle=["S^ C#"], hand="Jo")
    # column 2 (right end) and a new left column are adjacent; column 3 is not
    assert {"place on column 2", "place at a new left column"} <= placements(s)
    assert "place on column 3" not in placements(s)


def test_rule2_support_tiles_go_on_top_of_a_column_only():
    s = position(castle=["S^ C#", "Jo"], hand="P#")
    # on column 0 the tile lands on row 2, above Jo; nothing can hang beside row 1
    act(s, "place on column 0")
    assert grid_text(s) == ["S^ C#", "Jo", "P#"]


def test_new_left_column_shifts_the_castle_right():
    s = position(castle=["S^ C#", ". Jo"], hand="Po")
    act(s, "place at a new left column")
    assert grid_text(s) == ["Po S^ C#", ". . Jo"]


def test_rule3_same_shape_may_not_touch_outside_the_foundation():
    s = position(castle=["S^ C# Jo", "P#"], hand="Po")
    # column 2: Po would stand on Jo (circle) -> refused; column 1: above C#, beside P# -> ok
    assert placements(s) == {
        "place on column 0",
        "place on column 1",
        "place on column 3",
        "place at a new left column",
    }
    s = position(castle=["S^ C# Jo", "P# . Co"], hand="J^")
    # column 1 row 1 sits between P# and Co and above C#: a square would clash, a triangle not
    assert "place on column 1" in placements(s)
    s = position(castle=["S^ C^ Jo", "P# . Co"], hand="J#")
    assert "place on column 1" not in placements(s)  # P# beside it


def test_rule3_side_neighbour_blocks():
    s = position(castle=["S^ C# Jo", "Po"], hand="Jo")
    assert "place on column 1" not in placements(s)  # Po beside it (row 1)


def test_rule3_foundation_tiles_may_touch_their_shape():
    s = position(castle=["S^ C^"], hand="J^")
    assert {"place on column 2", "place at a new left column"} <= placements(s)
    act(s, "place on column 2")
    assert grid_text(s) == ["S^ C^ J^"]


@pytest.mark.parametrize("rule, allowed", [("placed", False), ("neighbors", True)])
def test_foundation_exemption_option(rule, allowed):
    s = position(castle=["S# Co"], hand="P#", rules={"foundation_exemption": rule})
    assert ("place on column 0" in placements(s)) is allowed


def test_rule4_six_wide_and_six_tall():
    s = position(castle=["S^ C# Jo P^ S# Co"], hand="J^")
    assert "place at a new left column" not in placements(s)
    assert placements(s) == {f"place on column {c}" for c in (1, 2, 4, 5)}  # not on S^ or P^
    s = position(castle=["S^ C#", "Co", "J^", "P#", "So", "C^"], hand="J^")
    assert placements(s) == {
        "place on column 1",
        "place on column 2",
        "place at a new left column",
    }  # column 0 is 6 tall


def test_discard_defender_goes_to_the_discard_pile():
    s = position(castle=["S^"], hand="Po")
    before = s.discard[s.hand]
    act(s, "discard the tile")
    assert s.discard[3 * 3 + 2] == before + 1 and s.hand == -1 and s.phase == 0


def test_draw_choices_and_safe_pile_running_out():
    s = position(regular_top="S^", safe_top="Po")
    assert legal(s) == {"draw from the regular pile", "draw from the safe pile"}
    act(s, "draw from the safe pile")
    assert s.hand == 3 * 3 + 2 and len(s.safe) == 11
    s = position(safe_empty=True)
    assert legal(s) == {"draw from the regular pile"}


def test_school_traitor_must_be_placed_beside_the_lowest_ordeal():
    s = position(regular_top="T")
    act(s, "draw from the regular pile")
    assert legal(s) == {"place the traitor beside the lowest ordeal"}
    act(s, "place the traitor beside the lowest ordeal")
    assert s.beside[0].tolist() == [1, 0] and s.phase == 0


def test_school_has_no_powers_or_early_encounters():
    s = position(castle=["S^ C#"], hand="Jo")
    assert "discard the tile and use its power" not in legal(s)
    s = position()
    assert "encounter the lowest ordeal now" not in legal(s)


def test_illegal_placement_raises_and_changes_nothing():
    from castle_envs.core.errors import IllegalActionError

    s = position(castle=["S^ C# Jo"], hand="Jo")
    before = s.to_dict()
    with pytest.raises(IllegalActionError, match="same shape"):
        act(s, "place on column 2")
    with pytest.raises(IllegalActionError, match="not beside"):
        act(s, "place on column 5")
    assert s.to_dict() == before


def test_illegal_placement_names_the_real_clash():
    from castle_envs.castellion.actions import ACTIONS

    s = position(castle=["S^ C# Jo", "P#"], hand="Po")
    # column 2 row 1: Po would stand on Jo, a foundation tile (not "outside the foundation")
    why = s.illegal_reason(ACTIONS.encode("place on column 2"))
    assert "foundation tile below it" in why and "juggler-circle at row 0 column 2" in why
    s = position(castle=["S^ C# Jo", "Po"], hand="Jo")
    why = s.illegal_reason(ACTIONS.encode("place on column 1"))  # beside Po on row 1
    assert "pyro-circle at row 1 column 0 beside it" in why
    s = position(castle=["S^ C^ Jo", "C#"], hand="S#")
    why = s.illegal_reason(ACTIONS.encode("place on column 0"))  # row 2 on C# (row 1)
    assert "the tile below it, chameleon-square at row 1 column 0" in why


def test_ansi_board_marks_the_current_ordeal_face_down_too():
    from castle_envs.castellion.render import render_ansi

    s = position(level="menace", ordeals=["assault-1-harpy", "assault-2-harpy", "assault-3-harpy"])
    lines = render_ansi(s).splitlines()[1:4]
    assert lines[0].startswith(" *1. face-down") and lines[1].startswith("  2. face-down")
