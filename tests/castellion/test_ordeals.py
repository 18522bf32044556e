"""Ordeals: triggering, Exams, the complete castle, tiles running out (School level)."""

from castle_envs.castellion.rules import OVER, State

from .helpers import act, at_ordeal, conserved, grid_text, legal, position

# a complete foundation holding a tower (Chameleons, column 0), a bastion (Jugglers,
# columns 1-2, rows 0-1) and a line of defense (Seers, row 2, columns 1-4)
EXAM1_CASTLE = ["C^ J# Jo P^ S# Po", "C# J^ J# Po C^ So", "Co S# S^ So S#", "C^ P#"]
FULL_ROW_ONLY = ["C^ J# Jo P^ S# Po"]
SCHOOL = ["exam-1", "exam-2", "exam-3c"]


def test_formation_counts_of_the_exam_castle():
    assert position(castle=EXAM1_CASTLE).formations() == (1, 1, 1)


def test_exam1_triggers_on_the_fifth_traitor_and_passes():
    s = at_ordeal(EXAM1_CASTLE, 4, 0)
    act(s, "place the traitor beside the lowest ordeal")
    assert s.current == 1 and s.beside[0].tolist() == [0, 0] and s.removed[12] == 5
    assert not s.is_terminal() and conserved(s)


def test_exam1_fails_without_the_formations():
    s = at_ordeal(FULL_ROW_ONLY, 4, 0)
    act(s, "place the traitor beside the lowest ordeal")
    assert s.is_terminal() and not s.won and s.phase == OVER and s.current == 0


def test_exam1_fails_with_an_incomplete_foundation():
    castle = ["C^ J# Jo P^ S#", "C# J^ J# Po C^", "Co S# S^ So S#", "C^ P#"]  # 5 below
    s = at_ordeal(castle, 4, 0)
    assert s.formations() == (1, 1, 1)
    act(s, "place the traitor beside the lowest ordeal")
    assert s.is_terminal() and not s.won


def test_traitor_below_the_threshold_only_waits():
    s = at_ordeal(FULL_ROW_ONLY, 3, 0)
    act(s, "place the traitor beside the lowest ordeal")
    assert not s.is_terminal() and s.beside[0].tolist() == [4, 0] and s.current == 0


def test_exam2_destroys_the_foundation_and_needs_a_complete_new_one():
    castle = ["C^ J# Jo P^ S# Po", "So P^ S# J^ C# Co", "P#"]
    s = at_ordeal(castle, 1, 1)
    discard = sum(s.discard)
    act(s, "place the traitor beside the lowest ordeal")
    assert s.current == 2 and not s.is_terminal()
    assert grid_text(s) == ["So P^ S# J^ C# Co", "P#"]
    assert sum(s.discard) == discard + 6 and conserved(s)


def test_exam2_fails_when_the_new_foundation_is_incomplete():
    castle = ["C^ J# Jo P^ S# Po", "So P^ S# J^ C#"]
    s = at_ordeal(castle, 1, 1)
    act(s, "place the traitor beside the lowest ordeal")
    assert s.is_terminal() and not s.won and s.current == 1


def test_exam3_passed_wins_the_game():
    # exam-3c: 3 towers + 2 bastions
    castle = ["C^ J# S^ P# Po Jo", "C# J^ S# Po P^ S^", "Co J# So C^ C#", "C^ Jo S^ Co C^"]
    s = at_ordeal(castle, 4, 2)
    assert s.formations() == (3, 2, 0)
    act(s, "place the traitor beside the lowest ordeal")
    assert (
        s.won and s.is_terminal() and s.returns()[0] == 1.0 and s.removed[12] + s.removed[13] == 12
    )


def test_exam3_missing_a_tower_loses():
    castle = ["C^ J# S^ P# Po Jo", "C# J^ S# Po P^ S^", "Co J# So C^ C#", "C^ Jo P^ Co C^"]
    s = at_ordeal(castle, 4, 2)
    act(s, "place the traitor beside the lowest ordeal")
    assert s.is_terminal() and not s.won and s.returns()[0] == 0.0


def full_castle_minus_one(last_row="C^ J# S^ Po P^"):
    return [
        "C^ J# Jo P^ S# Po",
        "C# J^ J# Po C^ So",
        "Co S# S^ So S# P^",
        "C^ P# Jo C^ P# Co",
        "J^ Co P# J^ Co J#",
        last_row,
    ]


def test_completing_the_castle_forces_the_lowest_ordeal_then_chains():
    # Exam I passed by completing the castle -> Exam II at once (certain to pass) -> stop,
    # since the castle is no longer complete
    s = at_ordeal(full_castle_minus_one(), 2, 0, hand=None)
    d = s.to_dict()
    d["regular"].remove(11)
    d["hand"], d["phase"] = 11, "defender"  # pyro-circle
    s = State.from_dict(d)
    assert s.formations() == (1, 1, 1)
    act(s, "place on column 5")
    assert s.current == 2 and s.castle_size == 30 and s.phase == 0
    assert s.removed[12] == 2 and s.beside.tolist() == [[0, 0], [0, 0], [0, 0]]


def test_completing_the_castle_without_formations_loses():
    castle = full_castle_minus_one()
    castle[2] = "Co S# P^ So S# P^"  # breaks the Seer line
    s = at_ordeal(castle, 0, 0, hand=None)
    d = s.to_dict()
    d["regular"].remove(11)
    d["hand"], d["phase"] = 11, "defender"
    s = State.from_dict(d)
    act(s, "place on column 5")
    assert s.is_terminal() and not s.won


def test_when_all_tiles_are_played_the_ordeals_resolve_in_order():
    # the last tile of the game is played; Exam I and II then pass (row 1 is full), III fails
    s = position(castle=EXAM1_CASTLE, ordeals=SCHOOL)
    d = s.to_dict()
    last = d["regular"].pop()
    for k in d["regular"] + d["safe"]:
        d["discard"][k] += 1
    d["regular"], d["safe"] = [last], []
    s = State.from_dict(d)
    assert legal(s) == {"draw from the regular pile"}
    act(s, "draw from the regular pile")
    act(s, "discard the tile" if last < 12 else "place the traitor beside the lowest ordeal")
    assert s.is_terminal() and s.current == 2 and not s.won


def test_ordeals_resolved_in_a_row_see_the_castle_each_one_leaves():
    # before Exam II this castle has 3 towers + 2 bastions + 1 line (Exam I and Exam III c
    # would both pass); Exam II's row removal shortens the towers, so Exam III c fails
    castle = [
        "C^ J# S^ P# Po Jo",
        "C# J^ S# Po P^ S^",
        "Co J# So C^ C#",
        "C^ Jo S^ Co C^",
        "P^ P# Po P^",
    ]
    s = position(castle=castle, ordeals=SCHOOL)
    assert s.formations() == (3, 2, 1)
    d = s.to_dict()
    last = d["regular"].pop()
    for k in d["regular"] + d["safe"]:
        d["discard"][k] += 1
    d["regular"], d["safe"] = [last], []
    s = State.from_dict(d)
    act(s, "draw from the regular pile")
    act(s, "discard the tile" if last < 12 else "place the traitor beside the lowest ordeal")
    assert s.is_terminal() and not s.won and s.current == 2
    assert s.formations() == (0, 1, 1)
