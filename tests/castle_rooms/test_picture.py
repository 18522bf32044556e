"""Castle Rooms' picture fits its table to the canvas: the Rooms are drawn as large as the
busiest seat's rows and the longest row allow (the cards fill their band across or down),
never outside their seat's band, the same size for every seat (rather than
40x26 px cards in a 1088 px frame whatever the table holds)."""

import numpy as np
from castle_envs.agents import make_agent
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from castle_envs.castle_rooms import render
from castle_envs.castle_rooms.rules import WIN_LENGTH
from castle_envs.registry import get_game

SPEC = get_game("castle-rooms")


def play(players: int, seed: int, steps: int, agent: str = "heuristic"):
    env = SPEC.make(**{SPEC.variant_arg: players})
    state = env.new_state(np.random.default_rng(seed), {})
    agents = [make_agent(agent, "castle-rooms", seed=seed + s) for s in range(players)]
    for _ in range(steps):
        if state.is_terminal():
            break
        state.apply_action(
            agents[state.current_player].act(None, state.legal_action_mask(), state.clone())
        )
    return state


def drawn_rooms(scene, state):
    """The Room cards drawn in the seats' bands: (x, y, w, h) rects filled with stone."""
    bottom = render.TOP + state.num_players * render.BAND_H
    return [
        it[1:5]
        for it in scene.items
        if it[0] == "rect" and it[5] == render.STONE and it[2] < bottom
    ]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    players=st.sampled_from(SPEC.variants),
    seed=st.integers(0, 10_000),
    steps=st.integers(0, 400),
    agent=st.sampled_from(["random", "heuristic"]),
)
def test_room_cards_are_sized_to_the_canvas(players, seed, steps, agent):
    state = play(players, seed, steps, agent)
    scene = render.build_scene(state)
    layout = render.table_layout(state)
    rooms = drawn_rooms(scene, state)
    assert len(rooms) == sum(len(r.cards) for seat in state.rows for r in seat)
    assert len({(round(w, 3), round(h, 3)) for _, _, w, h in rooms}) <= 1, "one card size"
    rows = max(len(r) for r in state.rows)
    longest = max([len(r.cards) + (r.dragon >= 0) for seat in state.rows for r in seat] + [0])
    for x, y, w, h in rooms:
        seat = int((y - render.TOP) // render.BAND_H)
        top = render.TOP + seat * render.BAND_H
        assert top + render.BAND_HEAD <= y and y + h <= top + render.BAND_H - 6
        assert x >= 8 and x + w <= scene.width - 8
    # the cards fill the band one way or the other (or are as big as they may be)
    inner_w = scene.width - 32
    inner_h = render.BAND_H - 6 - render.BAND_HEAD - 6
    across = (render.LABEL_W + layout.slots * layout.pitch) / layout.column_w
    down = layout.rows_per_column * layout.row_pitch / inner_h
    assert layout.card_w >= render.MAX_CARD_W - 1e-6 or max(across, down) >= 0.9
    assert layout.columns * layout.column_w <= inner_w + 1e-6
    # never the old fixed 40 px cards on a table with room for larger ones
    if rows <= 4 and longest <= 4:
        assert layout.card_w >= scene.width / 18
    # nor ever smaller than a card the text view's longest table needs
    assert layout.card_w >= scene.width / 30
    if rooms:
        assert rooms[0][2] == layout.card_w and layout.slots <= WIN_LENGTH + 1


def test_the_cards_grow_when_the_table_is_small():
    early = play(2, 0, 2)
    late = play(2, 0, 400)
    assert render.table_layout(early).card_w > 1.5 * render.table_layout(late).card_w
    assert (
        render.table_layout(early).card_w * 11 > 0.5 * render.WIDTH
        or render.table_layout(early).card_w >= render.MAX_CARD_W - 1e-6
    )
