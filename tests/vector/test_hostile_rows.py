"""Batch rows written back from outside (a training checkpoint's ``envs.pt``) are checked
where they enter (``load_rows`` and the batched env's ``restart``), before any compiled
kernel reads them: an edited row is refused naming its env, where the kernels would read
outside their arrays (SIGSEGV, SIGBUS) or play a wrapped value as another card."""

from __future__ import annotations

import numpy as np
import pytest

from castle_envs.castellion import kernel as KC
from castle_envs.castle_siege import kernel as KS
from castle_envs.moves import make_move_vec


def _played(game: str, **variant):
    envs = make_move_vec(game, 8, capacity=64, **variant)
    envs.reset(seed=20_000_000)
    for _ in range(25):  # into the game: columns, discards, recycled cards
        envs.step(np.argmax(envs.unwrapped.action_masks(), axis=1))
    return envs


def _fresh(game: str, **variant):
    return make_move_vec(game, 8, capacity=64, **variant)


SIEGE = [
    ("a negative card id in the deck", "cards", lambda a: a.__setitem__((3, KS.DECK), -100)),
    ("a card id past 52 in the hand", "cards", lambda a: a.__setitem__((3, KS.HAND), 60)),
    (
        "the largest int8 in the first columns",
        "cards",
        lambda a: a.__setitem__((3, slice(0, 8)), 127),
    ),
    ("a huge hand size", "ints", lambda a: a.__setitem__((3, KS.HSIZE), 2**30)),
    ("a negative deck head", "ints", lambda a: a.__setitem__((3, KS.HEAD), -(2**30))),
    ("a deck head past the ring", "ints", lambda a: a.__setitem__((3, KS.HEAD), 52)),
    ("a huge column length", "ints", lambda a: a.__setitem__((3, KS.CLEN), 100_000)),
    ("a phase no game has", "ints", lambda a: a.__setitem__((3, KS.PHASE), 77)),
    ("a negative phase", "ints", lambda a: a.__setitem__((3, KS.PHASE), -1)),
    (
        "a card in two places",
        "cards",
        lambda a: a.__setitem__((3, KS.CASTLES), a[3, KS.CASTLES + 1]),
    ),
    ("a negative step count", "ints", lambda a: a.__setitem__((3, KS.STEPS), -5)),
    ("a step count past the episode's end", "ints", lambda a: a.__setitem__((3, KS.STEPS), 1000)),
    ("a victory flag out of range", "ints", lambda a: a.__setitem__((3, KS.STRICT), 5)),
]


@pytest.mark.parametrize("name, key, edit", SIEGE, ids=[c[0] for c in SIEGE])
def test_an_edited_castle_siege_row_is_refused(name, key, edit):
    rows = _played("castle-siege", difficulty="easy").rows()
    rows[key] = rows[key].astype(np.int64)
    edit(rows[key])
    with pytest.raises(ValueError, match="env 3"):
        _fresh("castle-siege", difficulty="easy").load_rows(rows)


CASTELLION = [
    ("a pile longer than the pile", lambda a: a.__setitem__((3, KC.REG_N), 120)),
    ("a negative pile size", lambda a: a.__setitem__((3, KC.REG_N), -3)),
    ("a negative phase", lambda a: a.__setitem__((3, KC.PHASE), -1)),
    ("a tile kind no game has", lambda a: a.__setitem__((3, KC.HAND), 99)),
    ("an ordeal id past the table", lambda a: a.__setitem__((3, KC.ORD), 100)),
    ("a castle cell out of range", lambda a: a.__setitem__((3, KC.CELL), -50)),
]


@pytest.mark.parametrize("name, edit", CASTELLION, ids=[c[0] for c in CASTELLION])
def test_an_edited_castellion_row_is_refused(name, edit):
    rows = _played("castellion", level="academy").rows()
    rows["st"] = rows["st"].astype(np.int64)
    edit(rows["st"])
    with pytest.raises(ValueError, match="env 3"):
        _fresh("castellion", level="academy").load_rows(rows)


def test_castellion_steps_past_the_episode_are_refused():
    rows = _played("castellion", level="academy").rows()
    rows["steps"][3] = 10**6
    with pytest.raises(ValueError, match="env 3: episode step count 1000000"):
        _fresh("castellion", level="academy").load_rows(rows)


@pytest.mark.parametrize(
    "value, words",
    [(5 + 256, "outside int8"), (2**40, "outside int8"), (-129, "outside int8")],
)
def test_values_wider_than_the_rows_are_refused_not_wrapped(value, words):
    # 261 stored in an int8 row would read as card 5, silently
    rows = _played("castle-siege", difficulty="easy").rows()
    rows["cards"] = rows["cards"].astype(np.int64)
    rows["cards"][3, KS.HAND] = value
    with pytest.raises(ValueError, match=words):
        _fresh("castle-siege", difficulty="easy").load_rows(rows)


def test_rows_that_are_not_integers_are_refused():
    rows = _played("castle-siege", difficulty="easy").rows()
    rows["cards"] = rows["cards"].astype(np.float32)
    with pytest.raises(ValueError, match="not integers"):
        _fresh("castle-siege", difficulty="easy").load_rows(rows)


@pytest.mark.parametrize(
    "game, variant",
    [("castle-siege", {"difficulty": "easy"}), ("castellion", {"level": "menace"})],
)
def test_rows_read_back_play_on_exactly_as_the_batch_they_came_from(game, variant):
    """The checks accept every row the kernels write (scratch words damaged included: they
    are cleared and recomputed), and the batch plays on identically."""
    original = _played(game, **variant)
    rows = original.rows()
    if "cards" in rows:  # Castle Siege's scratch words are not part of a position
        rows["cards"][:, KS.NEED :] = -7
    copy = _fresh(game, **variant)
    copy.load_rows(rows)
    assert np.array_equal(copy.unwrapped.action_masks(), original.unwrapped.action_masks())
    for _ in range(60):
        actions = np.argmax(original.unwrapped.action_masks(), axis=1)
        seen, rewards, *_ = original.step(actions)
        again, rewards_again, *_ = copy.step(actions)
        for key in seen:
            assert np.array_equal(seen[key], again[key]), key
        assert np.array_equal(rewards, rewards_again)
