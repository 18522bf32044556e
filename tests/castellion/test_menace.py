"""Menace level: face-down Assaults, the four avatars, formation powers."""

import numpy as np

from castle_envs.castellion import observation
from castle_envs.castellion.rules import State

from .helpers import act, at_ordeal, conserved, grid_text, legal, position

HARPIES = ["assault-1-harpy", "assault-2-harpy", "assault-3-harpy"]


def menace(**kw):
    kw.setdefault("ordeals", HARPIES)
    return position(level="menace", **kw)


def test_assaults_start_face_down_and_the_observation_hides_them():
    a = menace(ordeals=HARPIES)
    b = menace(ordeals=["assault-1-earthworm", "assault-2-horde", "assault-3-behemoth"])
    assert a.face_down.tolist() == [True, True, True]
    assert np.array_equal(observation.encode(a), observation.encode(b))
    assert "face-down Assault" in __import__(
        "castle_envs.castellion.render", fromlist=["x"]
    ).render_ansi(a)


def test_each_line_of_defense_lowers_the_traitor_discard_cost():
    one_line = ["P^ P# Po P^ S# C^", "S# Co"]
    s = menace(castle=one_line, hand="T")
    assert s.formations()[2] == 1
    act(s, "discard the traitor")
    assert s.destroy_left == 3


def test_four_lines_make_traitor_discards_free():
    # rows 0-3 hold Pyro, Seer, Chameleon and Juggler lines of four
    lines = ["P^ P# Po P^ S# C^", "S# So S^ S# Jo J^", "C^ C# Co C^ Po P#", "J# Jo J^ J# S^ So"]
    s = menace(castle=lines, hand="T")
    assert s.formations()[2] == 4
    act(s, "discard the traitor")
    assert s.phase == 0 and s.castle_size == 24 and conserved(s)


def test_completing_a_tower_reveals_a_face_down_ordeal_of_choice():
    s = menace(castle=["C^ S# Jo", "C# Po", "Co"], hand="C^")
    act(s, "place on column 0")
    assert s.formations()[0] == 1 and s.phase == 9
    assert legal(s) == {"reveal ordeal 1", "reveal ordeal 2", "reveal ordeal 3"}
    act(s, "reveal ordeal 3")
    assert s.face_down.tolist() == [True, True, False] and s.phase == 0


def test_tower_power_does_nothing_when_all_ordeals_are_face_up():
    s = menace(castle=["C^ S# Jo", "C# Po", "Co"], hand="C^", face_down=[False, False, False])
    act(s, "place on column 0")
    assert s.phase == 0


def test_harpy_met_costs_nothing():
    castle = ["C^ J# S^ P# Po Jo", "C# J^ S# Po P^", "Co J# So", "C^ Jo"]
    s = menace(castle=castle, hand="T", beside=[[1, 0], [0, 0], [0, 0]])
    assert s.formations()[0] == 2
    act(s, "place the traitor beside the lowest ordeal")
    assert s.current == 1 and s.castle_size == 16 and not s.face_down[0]


def test_harpy_failed_destroys_tiles_less_four_per_bastion_then_checks_the_foundation():
    castle = ["C^ J# S^ P# Po Jo", "C# J^ S# Po P^ S^", "Co S# Jo S#", "C^ P#"]
    s = menace(castle=castle, hand="T", beside=[[1, 0], [0, 0], [0, 0]])
    assert s.formations() == (1, 1, 0)  # one tower (needs 2), one bastion
    act(s, "place the traitor beside the lowest ordeal")
    assert s.phase == 3 and s.destroy_left == 12 and not s.face_down[0]
    for _ in range(12):
        cell = next(a for a in sorted(legal(s)) if a.startswith("destroy"))
        act(s, cell)
    assert s.castle_size == 6 and conserved(s)
    # the foundation decides: whatever is left, the game continued or ended by it
    assert s.is_terminal() == (not s.foundation_complete())


def test_harpy_penalty_keeping_the_foundation_survives():
    castle = ["C^ J# S^ P# Po Jo", "C# J^ S# Po P^ S^", "Co S# Jo S#", "C^ P#"]
    s = menace(castle=castle, hand="T", beside=[[1, 0], [0, 0], [0, 0]])
    act(s, "place the traitor beside the lowest ordeal")
    for cell in (
        ["destroy row 1 column 0"] * 3
        + ["destroy row 1 column 1"] * 3
        + ["destroy row 1 column 2"] * 2
        + ["destroy row 1 column 3"] * 2
        + ["destroy row 1 column 4", "destroy row 1 column 5"]
    ):
        act(s, cell)
    assert grid_text(s) == ["C^ J# S^ P# Po Jo"]
    assert s.current == 1 and not s.is_terminal() and s.phase == 0
    assert s.beside[0].tolist() == [0, 0] and s.removed[12] == 2


def test_penalty_that_must_take_the_foundation_loses_at_once():
    # the castle cannot keep a complete foundation: no tile is asked for, the game is lost
    s = menace(castle=["C^ J#"], hand="T", beside=[[1, 0], [0, 0], [0, 0]])
    act(s, "place the traitor beside the lowest ordeal")
    assert s.is_terminal() and not s.won and s.castle_size == 2 and s.current == 0
    # a complete foundation, 17 tiles, one bastion: 16 - 4 = 12 to destroy leaves 5 < 6
    castle = ["C^ J# S^ P# Po Jo", "C# J^ S# Po P^ S^", "Co S# Jo S#", "C^"]
    s = menace(castle=castle, hand="T", beside=[[1, 0], [0, 0], [0, 0]])
    assert s.formations()[1] == 1 and s.castle_size == 17
    act(s, "place the traitor beside the lowest ordeal")
    assert s.is_terminal() and not s.won and s.castle_size == 17
    # one tile more (18 - 12 = 6): the player chooses the 12 tiles and may keep the
    # foundation (test_harpy_penalty_keeping_the_foundation_survives plays it)
    castle[3] = "C^ P#"
    s = menace(castle=castle, hand="T", beside=[[1, 0], [0, 0], [0, 0]])
    act(s, "place the traitor beside the lowest ordeal")
    assert s.phase == 3 and s.destroy_left == 12


def test_earthworm_destroys_rows_regardless_of_bastions():
    castle = ["C^ J# S^ P# Po Jo", "C# J^ S# Po P^ S^", "Co S# Jo S# C^ P#", "C^ P#"]
    s = at_ordeal(
        castle, 1, 1, ["assault-1-harpy", "assault-2-earthworm", "assault-3-harpy"], level="menace"
    )
    assert s.formations()[1] == 1
    act(s, "place the traitor beside the lowest ordeal")
    assert grid_text(s) == ["Co S# Jo S# C^ P#", "C^ P#"]
    assert s.current == 2 and not s.is_terminal() and conserved(s)


def test_winning_the_third_assault():
    castle = ["C^ J# S^ P# Po Jo", "C# J^ S# Po P^ S^", "Co J# So C^ C# J#", "C^ Jo S^ Co C^ S#"]
    s = at_ordeal(castle, 1, 2, HARPIES, level="menace")
    towers, bastions, _ = s.formations()
    act(s, "place the traitor beside the lowest ordeal")
    # assault-3-harpy needs 5 towers: with fewer, 42 - 4 per bastion tiles must go, more
    # than the 24-tile castle can lose and keep its foundation: lost at once
    assert towers < 5 and 42 - 4 * bastions > 24 - 6
    assert s.is_terminal() and not s.won
    # five towers (Chameleon and Juggler columns alternating): Assault III passes, won
    towers5 = ["C^ J# Co J^ C# S^", "C# Jo C^ J# Co", "C^ J# Co J^ C#", "C# Jo C^ J# Co"]
    s = at_ordeal(towers5, 1, 2, HARPIES, level="menace")
    assert s.formations()[0] == 5
    act(s, "place the traitor beside the lowest ordeal")
    assert s.is_terminal() and s.won


def test_tower_completed_by_the_castle_filling_placement_reveals_before_the_encounter():
    castle = [
        "C^ J# Jo P^ S# Po",
        "C# J^ J# Po C^ So",
        "Co S# S^ So S# J^",
        "J^ P# Jo C^ P# J#",
        "C^ Co P# J^ Co J^",
        "P^ J# S^ Po P^",
    ]
    s = menace(
        castle=castle,
        hand="Jo",
        ordeals=["assault-1-behemoth", "assault-2-horde", "assault-3-harpy"],
    )
    act(s, "place on column 5")  # Jugglers, column 5, rows 2-5: a tower
    assert s.castle_size == 36 and s.phase == 9  # the reveal comes first
    act(s, "reveal ordeal 3")
    # then the complete castle forces Assault I (Behemoth: 2 bastions); the one bastion
    # (Jugglers, columns 1-2, rows 0-1) lowers the 16-tile penalty by 4
    assert s.face_down.tolist() == [False, True, False] and s.formations()[1] == 1
    assert s.phase == 3 and s.destroy_left == 12


def test_early_encounter_turns_the_card_up():
    s = menace(
        castle=["C^ J#"], ordeals=["assault-1-earthworm", "assault-2-harpy", "assault-3-harpy"]
    )
    act(s, "encounter the lowest ordeal now")
    assert not s.face_down[0] and s.is_terminal()  # Earthworm I: no row 1 left


def test_tiles_running_out_resolves_assaults_in_order_with_their_penalties():
    castle = ["C^ J# S^ P# Po Jo", "C# J^ S# Po P^ S^", "Co S# Jo S#", "C^ P#"]
    s = menace(castle=castle, ordeals=HARPIES)
    d = s.to_dict()
    last = d["regular"].pop()
    for k in d["regular"] + d["safe"]:
        d["discard"][k] += 1
    d["regular"], d["safe"] = [last], []
    s = State.from_dict(d)
    act(s, "draw from the regular pile")
    act(s, "discard the tile" if last < 12 else "place the traitor beside the lowest ordeal")
    # Assault I (Harpy, 2 towers; one tower, one bastion): 16 - 4 = 12 tiles to destroy
    assert s.current == 0 and s.phase == 3 and s.destroy_left == 12
    for _ in range(12):
        act(s, sorted(m for m in legal(s) if m.startswith("destroy row 1"))[0])
    # the foundation held: Assault I passed, and Assault II follows at once; its 32-tile
    # penalty would take the whole 6-tile castle, so the game is lost at once
    assert s.current == 1 and s.is_terminal() and not s.won and s.castle_size == 6
