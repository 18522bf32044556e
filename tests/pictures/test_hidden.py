"""Pictures and text boards show only what the player to act may know: re-dealing everything
hidden from them (``determinize``: the deck order, other players' hands, face-down Ordeal
cards) leaves the picture, the SVG and the text board unchanged."""

import numpy as np
import pytest
from castle_envs.agents import make_agent

from castle_envs.castellion.data import ORDEALS
from castle_envs.registry import get_game

CASES = [
    ("castle-siege", "very_hard"),
    ("castellion", "menace"),
    ("castellion", "school"),
    ("castle-rooms", 3),
    ("castell", 4),
]


def _states(slug, variant, seeds=(0, 1, 2)):
    spec = get_game(slug)
    env = spec.make(**{spec.variant_arg: variant})
    for seed in seeds:
        state = env.new_state(np.random.default_rng(seed), {})
        agent = make_agent("random", slug, seed=seed)
        step = 0
        while True:
            if step % 4 == 0 or state.is_terminal():
                yield state.clone()
            if state.is_terminal():
                break
            state.apply_action(agent.act(None, state.legal_action_mask(), None))
            step += 1


@pytest.mark.parametrize("slug,variant", CASES, ids=[f"{s}-{v}" for s, v in CASES])
def test_redealing_hidden_information_changes_no_picture(slug, variant):
    render = __import__(f"castle_envs.{slug.replace('-', '_')}.render", fromlist=["x"])
    rng = np.random.default_rng(0)
    changed = 0
    for state in _states(slug, variant):
        viewer = max(state.current_player, 0)
        scene, text = render.build_scene(state), render.render_ansi(state)
        for _ in range(2):
            other = state.determinize(viewer, rng)
            changed += other.to_dict() != state.to_dict()
            assert render.build_scene(other).items == scene.items
            assert render.render_ansi(other) == text
    assert changed > 10  # the hidden part really was re-dealt


def test_face_down_ordeals_are_named_nowhere_until_turned_up():
    from castle_envs.castellion.render import build_scene, render_ansi

    for state in _states("castellion", "menace", seeds=range(6)):
        hidden = {ORDEALS[state.ordeals[s]].title for s in range(3) if state.face_down[s]}
        words = render_ansi(state) + build_scene(state).to_svg()
        words += " ".join(t.text for t in build_scene(state).texts())
        for title in hidden:  # e.g. "Assault II: Harpy"
            assert title not in words


def test_replay_events_name_an_ordeal_only_once_it_is_turned_up():
    from castle_envs.castellion.render import events

    for seed in range(8):
        spec = get_game("castellion")
        state = spec.make(level="menace").new_state(np.random.default_rng(seed), {})
        agent = make_agent("heuristic", "castellion", seed=seed)
        while not state.is_terminal():
            before = state.clone()
            state.apply_action(agent.act(None, state.legal_action_mask(), state.clone()))
            said = " ".join(events(before, state))
            for s in range(3):
                if state.face_down[s]:
                    assert ORDEALS[state.ordeals[s]].title not in said


def test_play_and_replay_never_name_a_face_down_ordeal():
    """The move lists and echoes of castle-envs play, and the replay's move texts, name a
    face-down Ordeal by its slot (rules.describe_action may name the card)."""
    import io

    from castle_envs.experiments.cli import build_parser
    from castle_envs.experiments.play import run

    from castle_envs.castellion.render import describe

    for state in _states("castellion", "menace", seeds=range(4)):
        hidden = [ORDEALS[state.ordeals[s]].title for s in range(3) if state.face_down[s]]
        for action in np.flatnonzero(state.legal_action_mask()):
            words = describe(state, int(action))
            assert not any(title in words for title in hidden), words
    for seed in range(4):
        args = build_parser().parse_args(
            ["play", "castellion", "--level", "menace", "--seed", str(seed)]
        )
        out = io.StringIO()
        run(args, stdin=io.StringIO("q\n"), stdout=out)
        state = (
            get_game("castellion").make(level="menace").new_state(np.random.default_rng(seed), {})
        )
        text = out.getvalue()  # the board and the first decision's moves
        assert "encounter face-down Ordeal I now" in text
        assert not any(ORDEALS[i].title in text for i in state.ordeals)


@pytest.mark.parametrize("compiled", [False, True])
def test_castellion_envs_name_no_face_down_ordeal(compiled):
    """Every legal move's description (``State.describe_action`` itself, not only the play
    wrapper), the ansi board, the picture's texts and the info of the Python and the compiled
    env: a face-down card is never named; the early-encounter move says which slot."""
    if compiled:
        pytest.importorskip("numba")
        from castle_envs.castellion.vector import CompiledCastellionEnv as Env
    else:
        from castle_envs.castellion.env import CastellionEnv as Env
    from castle_envs.castellion.render import build_scene

    env = Env(level="menace", render_mode="ansi")
    rng = np.random.default_rng(0)
    said_encounter = 0
    for seed in range(4):
        obs, info = env.reset(seed=seed)
        done = False
        while not done:
            state = env.unwrapped.state
            hidden = [ORDEALS[state.ordeals[s]].title for s in range(3) if state.face_down[s]]
            legal = np.flatnonzero(info["action_mask"])
            words = [state.describe_action(int(a)) for a in legal]
            said_encounter += any(w.startswith("encounter face-down Ordeal") for w in words)
            words += [env.render(), repr(info)]
            words += [t.text for t in build_scene(state).texts()]
            for title in hidden:
                assert not any(title in w for w in words), title
            # mostly build, so that towers turn cards up and the games last
            places = legal[(legal >= 7) & (legal <= 13)]
            action = rng.choice(places if len(places) and rng.random() < 0.8 else legal)
            obs, _, term, trunc, info = env.step(int(action))
            done = term or trunc
    assert said_encounter > 0
