"""Saved states are read strictly in every game.

The property: take a position reached in play, change one field of its ``to_dict`` (any
junk: wrong types, NaN, inf, huge ints, strings for booleans, short or long lists, missing
or unknown keys, or a plausible value of the right type), and load it. ``from_dict`` either
refuses it with a ``ValueError``/``TypeError`` carrying a message, or the state it builds is
exactly the one the dict describes (saving it again gives the same dict, value for value and
type for type), a live position has a legal move, and play goes on from it.
"""

from __future__ import annotations

import json

import gymnasium
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import castle_envs
from castle_envs.castell.rules import State as CastellState
from castle_envs.castellion.rules import LEGACY_EARLY_ENCOUNTER
from castle_envs.castellion.rules import State as CastellionState
from castle_envs.castle_rooms.rules import CastleRoomsState
from castle_envs.castle_siege.rules import EVENTS
from castle_envs.castle_siege.rules import State as SiegeState
from castle_envs.core.errors import InvalidStateError
from castle_envs.registry import make_single

DEAL = {
    "castle-siege": lambda rng: SiegeState.new_game(
        rng,
        ("easy", "medium", "hard", "very_hard")[rng.integers(4)],
        defeated=("discard", "leave_game")[rng.integers(2)],
        victory=("any_time", "deck_left")[rng.integers(2)],
    ),
    "castellion": lambda rng: CastellionState.new_game(
        rng, ("school", "academy", "menace")[rng.integers(3)]
    ),
    "castle-rooms": lambda rng: CastleRoomsState.deal(int(rng.integers(2, 5)), rng),
    "castell": lambda rng: CastellState.deal(rng, int(rng.integers(2, 5))),
}
LOAD = {
    "castle-siege": SiegeState.from_dict,
    "castellion": CastellionState.from_dict,
    "castle-rooms": CastleRoomsState.from_dict,
    "castell": CastellState.from_dict,
}

JUNK = [
    None,
    True,
    False,
    "false",
    "true",
    "",
    2.7,
    3.0,
    float("nan"),
    float("inf"),
    float("-inf"),
    -1,
    0,
    1,
    2,
    10**9,
    10**30,
    -(10**30),
    [],
    {},
    [0],
    [[]],
    [None],
    [1.5],
    [True],
    {"x": 1},
    "x",
]


def position(game: str, seed: int, moves: int):
    rng = np.random.default_rng(seed)
    state = DEAL[game](rng)
    for _ in range(moves):
        if state.is_terminal():
            break
        state.apply_action(int(rng.choice(state.legal_actions())))
    return state


def paths(node, prefix=()):
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from paths(value, prefix + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from paths(value, prefix + (i,))


def at(node, path):
    for key in path:
        node = node[key]
    return node


def strings_of(game: str) -> list[str]:
    """Every string any saved position of the game holds: plausible wrong values."""
    found = set()
    for seed in range(8):
        d = position(game, seed, 60 * seed).to_dict()
        found.update(v for p in paths(d) if isinstance(v := at(d, p), str))
    return sorted(found)


STRINGS = {game: strings_of(game) for game in DEAL}


@st.composite
def edits(draw, game: str, saved: dict):
    """(a changed copy of ``saved``, what was changed)."""
    d = json.loads(json.dumps(saved))
    path = draw(st.sampled_from(list(paths(d))[1:]))
    parent, key = at(d, path[:-1]), path[-1]
    old = parent[key]
    how = draw(st.sampled_from(["junk", "plausible", "delete", "shorten", "extend", "unknown key"]))
    if how == "delete" or (how == "shorten" and isinstance(old, list) and old):
        if how == "delete":
            del parent[key]
        else:
            del old[draw(st.integers(0, len(old) - 1))]
    elif how == "extend" and isinstance(old, list):
        old.append(old[0] if old else 0)
    elif how == "unknown key" and isinstance(old, dict):
        old["unknown"] = 1
    elif how == "plausible" and not isinstance(old, (list, dict)):
        if isinstance(old, bool):
            parent[key] = not old
        elif isinstance(old, int):
            parent[key] = draw(st.integers(-2, 60))
        else:
            parent[key] = draw(st.sampled_from(STRINGS[game]))
    else:
        how = "junk"
        parent[key] = draw(st.sampled_from(JUNK))
    return d, f"{how} at {list(path)}"


def same(a, b) -> bool:
    """Equal value for value and type for type (1 is not True, 2.0 is not 2)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return a == b


def as_saved(game: str, edited: dict) -> dict:
    """What saving again may change: Castle Siege's optional event counts are written (0
    when left out), and cards held as sets (hands, Castle Siege's discard pile and cards out
    of the game) are written in order."""
    if game == "castle-siege":
        edited = {
            **edited,
            "events": {name: edited.get("events", {}).get(name, 0) for name in EVENTS},
        }
        for name in ("hand", "discard", "out_of_game"):
            edited[name] = sorted(edited[name])
        if isinstance(edited.get("rules"), dict) and "victory" not in edited["rules"]:
            # a state saved before the victory option is read (and saved again) as any_time
            edited["rules"] = {**edited["rules"], "victory": "any_time"}
    if game == "castle-rooms":
        edited = {**edited, "hands": [sorted(hand) for hand in edited["hands"]]}
    if (
        game == "castellion"
        and isinstance(edited.get("rules"), dict)
        and edited["rules"].keys() == {"foundation_exemption"}
    ):
        # a state saved before the early_encounter option is read under the reading it was
        # played by, and saved again with that reading named
        edited = {**edited, "rules": {**edited["rules"], "early_encounter": LEGACY_EARLY_ENCOUNTER}}
    return edited


@pytest.mark.parametrize("game", sorted(DEAL))
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), seed=st.integers(0, 2**32 - 1), moves=st.integers(0, 250))
def test_an_edited_saved_state_is_refused_or_is_exactly_what_it_says(game, data, seed, moves):
    saved = position(game, seed, moves).to_dict()
    edited, how = data.draw(edits(game, saved))
    try:
        state = LOAD[game](edited)
    except (ValueError, TypeError) as err:
        assert str(err), how
        return
    resaved = state.to_dict()
    json.dumps(resaved, allow_nan=False)
    assert same(resaved, as_saved(game, edited)), how
    assert LOAD[game](resaved) == state
    rng = np.random.default_rng(seed)
    for _ in range(30):
        if state.is_terminal():
            break
        legal = state.legal_actions()
        assert len(legal), f"{how}: a live position without a legal move"
        state.apply_action(int(rng.choice(legal)))


# --- the cases the review found ------------------------------------------------------------------
@pytest.mark.parametrize("game", sorted(DEAL))
@pytest.mark.parametrize("data", [None, [], "state", 3, {"game": 1}])
def test_what_is_not_a_saved_state_is_a_value_error(game, data):
    with pytest.raises(InvalidStateError):
        LOAD[game](data)


@pytest.mark.parametrize("game", sorted(DEAL))
@pytest.mark.parametrize(
    "deep", ["[" * 100_000 + "]" * 100_000, '{"a":' * 100_000 + "1" + "}" * 100_000]
)
def test_a_saved_state_nested_100000_deep_is_a_one_line_error(game, deep):
    # plain json.loads would exhaust its recursion: a RecursionError, not a message
    with pytest.raises(InvalidStateError, match="^saved state: JSON nested") as caught:
        type(position(game, 0, 0)).from_json(deep)
    assert "\n" not in str(caught.value)
    state = position(game, 0, 20)
    assert type(state).from_json(state.to_json()) == state  # a real one still loads


@pytest.mark.parametrize("game", sorted(DEAL))
def test_a_huge_list_is_refused_before_it_is_read(game):
    saved = position(game, 0, 20).to_dict()
    name = {
        "castle-siege": "deck",
        "castellion": "regular",
        "castle-rooms": "deck",
        "castell": "bag",
    }[game]
    saved[name] = [0] * 300_000
    with pytest.raises(InvalidStateError, match=r"300000 entries|must hold"):
        LOAD[game](saved)


@pytest.mark.parametrize(
    "field, value, message",
    [
        ("turn", 2.7, "turn must be an int"),
        ("turn", 10**30, "outside"),
        ("regroup_used", "false", "regroup_used must be true or false"),
        ("regroup_used", 0, "regroup_used must be true or false"),
        ("events", [1, 2], "events must be a dict"),
        ("events", {"turns": float("nan")}, "events.turns must be an int"),
        ("events", {"turns": 10**30}, "outside"),
        ("captured", [False, False], "captured must hold 4"),
        ("castles", [0, 1, 2], "castles must hold 4"),
        ("difficulty", "impossible", "difficulty must be one of"),
    ],
)
def test_castle_siege_fields_of_the_wrong_type_are_named(field, value, message):
    saved = position("castle-siege", 1, 10).to_dict()
    saved[field] = value
    with pytest.raises(InvalidStateError, match=message):
        SiegeState.from_dict(saved)


def test_castle_siege_refuses_a_discard_with_nothing_to_discard():
    saved = position("castle-siege", 2, 0).to_dict()
    saved["discard"] = sorted(saved["discard"] + saved["hand"])
    saved["hand"], saved["phase"] = [], "discard"
    with pytest.raises(InvalidStateError, match="end-of-turn discard with 0 cards"):
        SiegeState.from_dict(saved)


def castell_after_festivals() -> dict:
    """A 3-player Castell game played to its end by the heuristic, festivals won."""
    from castle_envs.castell.measure import heuristic_action

    state = CastellState.deal(np.random.default_rng(1), 3)
    while not state.is_terminal():
        state.apply_action(heuristic_action(state))
    assert state.best.any()
    return state.to_dict()


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["best"].__setitem__(0, 10**9), r"best\[0\] = 1000000000 is outside"),
        (lambda d: d["best"].__setitem__(0, 400), "best festival tower"),
        (lambda d: d["best"].__setitem__(0, 3), "best festival tower"),
        (lambda d: d["size_tokens"][0][0].__setitem__(0, 5), "size tokens that no festival"),
        (lambda d: d["prizes"][1][3].__setitem__(0, 4), "more prizes in a region"),
        (lambda d: d["prizes"][1][3].__setitem__(2, 1), "prize beyond the 2 places"),
        (lambda d: d["fest_region"].__setitem__(0, d["fest_region"][1]), "festival tiles"),
        (
            lambda d: (
                d["fest_sizes"].__setitem__(0, [0])
                or d["fest_sizes"].__setitem__(1, [0])
                or d["fest_sizes"].__setitem__(2, [0])
                or d["fest_sizes"].__setitem__(3, [0])
            ),
            "more size tokens of a number",
        ),
        (lambda d: d["rules"].__setitem__("max_skill", True), "rules.max_skill must be a int"),
    ],
)
def test_castell_refuses_tokens_prizes_and_best_towers_no_festival_gave(edit, message):
    saved = castell_after_festivals()
    CastellState.from_dict(saved)  # the unedited one loads
    edit(saved)
    with pytest.raises(InvalidStateError, match=message):
        CastellState.from_dict(saved)


# --- a state of another variant or rules set is refused by the env ---------------------------
def test_envs_refuse_a_state_saved_under_other_settings():
    siege = gymnasium.make("castle_envs/CastleSiege-v0", difficulty="easy").unwrapped
    siege.reset(seed=0)
    saved = siege.state.to_dict()
    for kwargs in ({"difficulty": "hard"}, {"difficulty": "easy", "attack": "most_recent"}):
        for make in (
            lambda **kw: gymnasium.make("castle_envs/CastleSiege-v0", **kw),
            lambda **kw: make_single("castle-siege", **kw),
        ):
            with pytest.raises(ValueError, match="difficulty|rules"):
                make(**kwargs).reset(options={"state": saved})

    castellion = gymnasium.make("castle_envs/Castellion-v0", level="academy").unwrapped
    castellion.reset(seed=0)
    saved = castellion.state.to_dict()
    for kwargs in ({"level": "menace"}, {"level": "academy", "foundation_exemption": "neighbors"}):
        with pytest.raises(ValueError, match="level|rules"):
            gymnasium.make("castle_envs/Castellion-v0", **kwargs).reset(options={"state": saved})

    castell = castle_envs.castell_v0.raw_env(num_players=2)
    castell.reset(seed=0)
    saved = (
        json.loads(castell.unwrapped.game_state.to_json())
        if hasattr(castell.unwrapped, "game_state")
        else castell.state.to_dict()
    )
    for kwargs in (
        {"num_players": 3},
        {"num_players": 2, "advanced": True},
        {"num_players": 2, "max_skill": 5},
    ):
        with pytest.raises(ValueError, match="num_players|rules"):
            castle_envs.castell_v0.raw_env(**kwargs).reset(options={"state": saved})
