"""Every picture keeps its layout at every state: text fits its box uncut, no ink leaves its
box, no text box leaves the canvas or overlaps another, for positions of random and
heuristic games of every game and variant, fitted by Pillow's font and by the numpy raster's
bitmap font; plus hand-built extremes (long columns, full piles, tall towers)."""

import numpy as np
import pytest
from castle_envs.agents import make_agent

from castle_envs.core.scene import Scene, pillow_available
from castle_envs.registry import GAMES, get_game

BACKENDS = ["numpy"] + (["pillow"] if pillow_available() else [])


def render_module(slug):
    return __import__(f"castle_envs.{slug.replace('-', '_')}.render", fromlist=["build_scene"])


def positions(slug, variant, seeds=(0, 1), every=3):
    """States along games of random and heuristic agents: every ``every``-th step and the end."""
    spec = get_game(slug)
    env = spec.make(**{spec.variant_arg: variant})
    for seed in seeds:
        for kind in ("random", "heuristic"):
            state = env.new_state(np.random.default_rng(seed), {})
            agents = [make_agent(kind, slug, seed=seed + 10 * s) for s in range(state.num_players)]
            step = 0
            while True:
                if step % every == 0 or state.is_terminal():
                    yield state
                if state.is_terminal() or step > 3000:
                    break
                agent = agents[state.current_player]
                obs = None
                if agent.needs_observation:
                    obs = (
                        env.observe_state(state)
                        if spec.api == "gymnasium"
                        else env.observe_state(state, state.current_player)
                    )
                state.apply_action(agent.act(obs, state.legal_action_mask(), state.clone()))
                step += 1


def check(scene: Scene, backend: str, where: str):
    problems = scene.layout_problems(backend)
    assert not problems, f"{where} ({backend}): " + "; ".join(problems[:5])


CASES = [(slug, v) for slug, spec in GAMES.items() for v in spec.variants]


@pytest.mark.parametrize("slug,variant", CASES, ids=[f"{s}-{v}" for s, v in CASES])
def test_text_fits_its_box_at_every_sampled_state(slug, variant):
    build = render_module(slug).build_scene
    size = None
    count = 0
    # Castell games run to hundreds of steps: sample them more sparsely
    for state in positions(slug, variant, every=15 if slug == "castell" else 3):
        scene = build(state)
        size = size or (scene.width, scene.height)
        assert (scene.width, scene.height) == size, "frames of one game keep one size"
        for backend in BACKENDS:
            check(scene, backend, f"{slug} {variant} turn {getattr(state, 'turn', '?')}")
        count += 1
    assert count > 20


def test_layout_check_catches_what_it_should():
    scene = Scene(100, 40)
    scene.text(0, 0, 20, 16, "a text far too long for its box", size=13)
    scene.text(90, 30, 30, 16, "off", size=13)
    scene.text(0, 20, 50, 16, "one", size=13)
    scene.text(10, 24, 50, 16, "two", size=13)
    for backend in BACKENDS:
        problems = " | ".join(scene.layout_problems(backend))
        assert "was cut" in problems and "off the 100x40 canvas" in problems
        assert "overlap: 'one' and 'two'" in problems


def _siege_extremes():
    from castle_envs.castle_siege.rules import State
    from tests.castle_siege.helpers import position

    long_column = position(
        hand=list(range(5)),
        columns=(list(range(5, 35)), [], [], []),
        castles=[48, 49, 50, 51],
        discard=list(range(35, 48)),
    )
    full_discard = position(
        hand=[],
        columns=((), (), (), ()),
        castles=[48, 49, 50, 51],
        captured=(False, True, False, True),
        discard=list(range(0, 48)),
    )
    six_in_hand = position(
        hand=[9, 10, 11, 12, 22, 23],
        columns=([0], [1], [2], [3]),
        castles=[48, 49, 50, 51],
        phase="discard",
    )
    deck = list(range(4, 48))
    recycled = position(
        hand=[], columns=((), (), (), ()), castles=[0, 1, 2, 3], deck=deck, recycled=deck[-20:]
    )
    assert isinstance(long_column, State)
    return [long_column, full_discard, six_in_hand, recycled]


def _castell_extremes():
    from castle_envs.castell.rules import State

    state = State.deal(np.random.default_rng(0), 4)
    state.towers[0] = [(8, 9 - 1, 0)] + [(w, 5, 1) for w in (7, 6, 5, 4, 3, 2, 2, 1, 1, 1)]
    state.hand[1] = 9  # nine of every number
    state.regions[2] = 2  # every number, twice
    state.skills[:] = state.max_skill
    state.tokens[:] = 7
    state.lp[3] = -1
    return [state]


@pytest.mark.parametrize("name", ["castle-siege", "castell"])
def test_extreme_positions_keep_their_layout(name):
    states = _siege_extremes() if name == "castle-siege" else _castell_extremes()
    build = render_module(name).build_scene
    for i, state in enumerate(states):
        for backend in BACKENDS:
            check(build(state), backend, f"{name} extreme {i}")
