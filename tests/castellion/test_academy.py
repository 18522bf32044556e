"""Academy level: tile powers, Traitor discards, Simulations, early encounters."""

from .helpers import act, conserved, grid_text, legal, position, tile

SIMS = ["sim-1", "sim-2a", "sim-3a"]
POWER = "discard the tile and use its power"


def academy(**kw):
    kw.setdefault("ordeals", SIMS)
    return position(level="academy", **kw)


def test_power_is_optional():
    s = academy(castle=["S^ C#"], hand="J^")
    assert {"discard the tile", POWER} <= legal(s)
    act(s, "discard the tile")
    assert s.phase == 0 and grid_text(s) == ["S^ C#"]


# --- Juggler -----------------------------------------------------------------------------
def test_juggler_swaps_two_adjacent_tiles_ignoring_the_shape_rule():
    s = academy(castle=["S^ C# Jo", "P#"], hand="J^")
    act(s, POWER)
    assert s.phase == 4  # juggle
    swaps = {m for m in legal(s) if m.startswith("swap")}
    assert swaps == {"swap r0c0 with r0c1", "swap r0c1 with r0c2", "swap r0c0 with r1c0"}
    act(s, "swap r0c0 with r1c0")  # P# now stands on... S^ on top, P# below
    assert grid_text(s) == ["P# C# Jo", "S^"] and s.phase == 0
    s = academy(castle=["S^ C# Jo", ". P#"], hand="J^")
    act(s, POWER, "swap r0c0 with r0c1")  # C# lands beside... under P#: squares touch
    assert grid_text(s) == ["C# S^ Jo", ". P#"]


def test_juggler_power_needs_two_tiles():
    assert POWER not in legal(academy(castle=["S^"], hand="J^"))


# --- Seer --------------------------------------------------------------------------------
def test_seer_reveals_four_from_either_pile_then_they_must_be_played_first():
    s = academy(castle=["S^ C#"], hand="So", regular_top="P^ T", safe_top="J#")
    act(s, POWER)
    assert s.phase == 5 and s.reveal_left == 4
    act(
        s,
        "reveal from the safe pile",
        "reveal from the regular pile",
        "reveal from the regular pile",
        "reveal from the safe pile",
    )
    assert len(s.revealed) == 4 and s.revealed[:3].tolist() == [tile("J#"), tile("P^"), tile("T")]
    assert s.phase == 0
    assert legal(s) == {f"play revealed tile {i}" for i in range(4)} | {
        "encounter the lowest ordeal now"
    }
    act(s, "play revealed tile 2")
    assert s.phase == 2 and s.hand == tile("T") and len(s.revealed) == 3
    assert conserved(s)


def test_a_second_seer_tops_the_revealed_tiles_up_to_four():
    s = academy(castle=["S^ C#"], revealed="P^ J# Co", hand="So")
    act(s, POWER)
    assert s.reveal_left == 1
    act(s, "reveal from the regular pile")
    assert len(s.revealed) == 4 and s.phase == 0


def test_seer_power_refused_with_four_revealed():
    s = academy(castle=["S^ C#"], revealed="P^ J# Co J^", hand="So")
    assert POWER not in legal(s)


# --- Chameleon ---------------------------------------------------------------------------
def test_chameleon_recovers_a_same_shape_defender_and_uses_it():
    s = academy(castle=["S^ C#"], hand="C^", discard="P^ J# Co S^")
    act(s, POWER)
    assert s.phase == 6
    assert {m for m in legal(s)} == {"recover pyro-triangle", "recover seer-triangle"}
    act(s, "recover seer-triangle")
    assert s.hand == tile("S^") and s.phase == 1
    assert POWER in legal(s)  # the recovered tile may be discarded for power
    act(s, "place on column 1")
    assert grid_text(s) == ["S^ C#", ". S^"] and conserved(s)


def test_chameleon_cannot_recover_a_chameleon_nor_use_power_without_a_target():
    s = academy(castle=["S^ C#"], hand="C^", discard="C^ Jo")
    assert POWER not in legal(s)


# --- Pyro --------------------------------------------------------------------------------
def test_pyro_destroys_then_the_column_slides_then_moves_a_top_tile():
    s = academy(castle=["S^ C# Jo", "P# S^", "Co"], hand="P^")
    act(s, POWER)
    assert s.phase == 3
    act(s, "destroy row 0 column 0")  # S^ under P# and Co: the column slides down
    assert grid_text(s) == ["P# C# Jo", "Co S^"]
    assert s.phase == 7
    lifts = {m for m in legal(s) if m.startswith("move the top")}
    assert lifts == {f"move the top tile of column {c}" for c in (0, 1, 2)}
    act(s, "move the top tile of column 1")  # S^
    assert s.phase == 8
    assert "place on column 1" not in legal(s)  # back where it was: not a move
    act(s, "place on column 0")  # onto Co: triangle on circle, fine
    assert grid_text(s) == ["P# C# Jo", "Co", "S^"] and s.phase == 0 and conserved(s)


def test_pyro_may_not_split_the_castle():
    s = academy(castle=["S^ C# Jo", "P# . S^"], hand="P^")
    act(s, POWER)
    assert "destroy row 0 column 1" not in legal(s)  # middle column of one tile
    assert {"destroy row 0 column 0", "destroy row 1 column 2"} <= legal(s)


def test_pyro_move_ignores_the_shape_rule_and_may_not_split():
    s = academy(castle=["S^ C# Jo So"], hand="P^")
    act(s, POWER, "destroy row 0 column 3")
    assert grid_text(s) == ["S^ C# Jo"]
    assert "move the top tile of column 1" not in legal(s)  # would split
    act(s, "move the top tile of column 2")  # Jo
    act(s, "place on column 1")  # onto C#, beside nothing
    assert grid_text(s) == ["S^ C#", ". Jo"]
    s = academy(castle=["S^ C# Jo So"], hand="P^")
    act(s, POWER, "destroy row 0 column 3", "move the top tile of column 0")
    # S^ left the left edge: the castle re-aligns and a new left column is its old place
    assert grid_text(s) == ["C# Jo"] and "place at a new left column" not in legal(s)
    act(s, "place on column 0")  # onto C# (same-shape rule does not apply)
    assert grid_text(s) == ["C# Jo", "S^"]


def test_pyro_power_needs_a_tile_left_to_move():
    assert POWER not in legal(academy(castle=["S^ C#"], hand="P^"))
    assert POWER in legal(academy(castle=["S^ C# Jo"], hand="P^"))


# --- Traitors ----------------------------------------------------------------------------
def test_discarding_a_traitor_destroys_four_tiles():
    s = academy(castle=["S^ C# Jo P^ S#", "Co"], hand="T")
    assert legal(s) == {
        "place the traitor beside the lowest ordeal",
        "discard the traitor",
        "encounter the lowest ordeal now",
    }
    act(s, "discard the traitor")
    assert s.phase == 3 and s.destroy_left == 4
    act(s, "destroy row 0 column 4", "destroy row 0 column 0")  # Co slides down to row 0
    assert grid_text(s) == ["Co C# Jo P^"] and s.destroy_left == 2
    act(s, "destroy row 0 column 0", "destroy row 0 column 2")  # then the castle re-aligns
    assert grid_text(s) == ["C# Jo"] and s.phase == 0 and conserved(s)
    assert s.discard[12] == 1


def test_traitor_discard_with_fewer_than_four_tiles_destroys_all_or_nothing():
    s = academy(castle=["S^ C#"], hand="T")
    act(s, "discard the traitor")
    assert s.destroy_left == 2
    act(s, "destroy row 0 column 0", "destroy row 0 column 0")
    assert s.castle_size == 0 and s.phase == 0
    s = academy(hand="T")
    act(s, "discard the traitor")
    assert s.phase == 0 and s.discard[12] == 1


def test_black_traitor_must_be_placed():
    s = academy(castle=["S^ C#"], hand="B")
    assert legal(s) == {
        "place the traitor beside the lowest ordeal",
        "encounter the lowest ordeal now",
    }
    s = academy(castle=["S^ C#"], hand="B", rules={"early_encounter": "turn_start"})
    assert legal(s) == {"place the traitor beside the lowest ordeal"}


# --- Simulations, early encounters -------------------------------------------------------
def test_simulation_triggers_on_the_third_traitor():
    s = academy(castle=["S^"], hand="T", beside=[[2, 0], [0, 0], [0, 0]])
    act(s, "place the traitor beside the lowest ordeal")
    assert s.is_terminal() and not s.won  # sim-1 needs 3 formations


def test_encountering_early_passes_and_discards_the_traitors():
    castle = ["C^ J# Jo P^ S# Po", "C# J^ J# Po C^ So", "Co S# S^ So S#", "C^ P#"]
    s = academy(castle=castle, beside=[[1, 0], [0, 0], [0, 0]])
    assert "encounter the lowest ordeal now" in legal(s)
    act(s, "encounter the lowest ordeal now")
    assert s.current == 1 and s.beside[0].tolist() == [0, 0] and s.removed[12] == 1 and s.phase == 0


def test_encountering_early_without_the_formations_loses():
    s = academy(castle=["S^ C#"])
    act(s, "encounter the lowest ordeal now")
    assert s.is_terminal() and not s.won


def test_passing_simulation_three_wins():
    from .helpers import at_ordeal

    # sim-3a: 2 bastions + 2 lines
    castle = ["J^ J# P^ P# S^ S#", "Jo J^ Po P^ C# Co", "S# So S^ So P^ J^", "C^ C# Co C^"]
    s = at_ordeal(castle, 2, 2, SIMS, level="academy")
    assert s.formations() == (0, 2, 2)
    act(s, "place the traitor beside the lowest ordeal")
    assert s.won and s.is_terminal()


def test_recovered_tile_discarded_with_its_power():
    s = academy(castle=["S^ C# Jo"], hand="C#", discard="J#")
    act(s, POWER, "recover juggler-square", POWER)
    assert s.phase == 4  # the recovered Juggler's swap
    act(s, "swap r0c0 with r0c1")
    assert grid_text(s) == ["C# S^ Jo"] and conserved(s)
    assert s.discard[tile("C#")] >= 1 and s.discard[tile("J#")] >= 1


# --- early_encounter: "any_time" (default, the rule text) or "turn_start" -----------------
PASSING = ["C^ J# Jo P^ S# Po", "C# J^ J# Po C^ So", "Co S# S^ So S#", "C^ P#"]


def test_any_time_encounter_with_a_drawn_defender_keeps_it_in_hand():
    s = academy(castle=PASSING, hand="So", beside=[[1, 0], [0, 0], [0, 0]])
    assert "encounter the lowest ordeal now" in legal(s)
    act(s, "encounter the lowest ordeal now")
    # sim-1 passed; the turn goes on with the Seer still in hand
    assert s.current == 1 and s.removed[12] == 1 and s.phase == 1 and s.hand == tile("So")
    assert "encounter the lowest ordeal now" in legal(s) and "discard the tile" in legal(s)
    act(s, "discard the tile")
    assert s.phase == 0 and s.hand == -1 and conserved(s)


def test_any_time_encounter_with_a_traitor_in_hand_places_it_beside_the_next_ordeal():
    s = academy(castle=PASSING, hand="T", beside=[[2, 0], [0, 0], [0, 0]])
    act(s, "encounter the lowest ordeal now")
    assert s.current == 1 and s.phase == 2 and s.beside[0].tolist() == [0, 0]
    act(s, "place the traitor beside the lowest ordeal")
    assert s.beside[1].tolist() == [1, 0] and s.phase == 0 and conserved(s)


def test_any_time_encounter_that_fails_ends_the_game_with_the_tile_in_hand():
    s = academy(castle=["S^ C#"], hand="Po")
    act(s, "encounter the lowest ordeal now")
    assert s.is_terminal() and not s.won and s.hand == tile("Po") and conserved(s)
    again = type(s).from_dict(s.to_dict())  # a valid saved state
    assert again.to_dict() == s.to_dict()


def test_turn_start_reading_refuses_the_encounter_with_a_tile_in_hand():
    rules = {"early_encounter": "turn_start"}
    s = academy(castle=PASSING, hand="So", rules=rules)
    assert "encounter the lowest ordeal now" not in legal(s)
    assert "start of a turn" in s.illegal_reason(6)
    s = academy(castle=PASSING, rules=rules)
    assert "encounter the lowest ordeal now" in legal(s)  # at the start of a turn
    school = position(level="school", castle=["S^"], hand="So")
    assert "encounter the lowest ordeal now" not in legal(school)
    assert "school" in school.illegal_reason(6)


def test_early_encounter_option_is_saved_and_checked():
    import pytest

    from castle_envs.castellion.rules import State
    from castle_envs.core.errors import InvalidStateError

    s = academy(castle=PASSING, rules={"early_encounter": "turn_start"})
    d = s.to_dict()
    assert d["rules"] == {"foundation_exemption": "placed", "early_encounter": "turn_start"}
    assert State.from_dict(d).early_encounter == "turn_start"
    # a state saved before the option existed was played under the turn-start reading
    del d["rules"]["early_encounter"]
    old = State.from_dict(d)
    assert old.early_encounter == "turn_start"
    assert "encounter the lowest ordeal now" not in legal(
        academy(castle=PASSING, hand="So", rules={"early_encounter": "turn_start"})
    )
    for bad in ("sometimes", None, 1):
        d["rules"]["early_encounter"] = bad
        with pytest.raises(InvalidStateError, match="early_encounter"):
            State.from_dict(d)
    with pytest.raises(ValueError, match="early_encounter"):
        State(1, early_encounter="never")
