"""The three ways a scene is drawn: Pillow, the numpy fallback, SVG; and how one is chosen."""

import re
import xml.etree.ElementTree as ET

import numpy as np
import pytest

from castle_envs.core import scene as S
from castle_envs.registry import GAMES, get_game


def _scene(slug, steps=25, seed=3):
    spec = get_game(slug)
    env = spec.make()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if env.game_state.is_terminal():
            break
        env.game_state.apply_action(
            int(rng.choice(np.flatnonzero(env.game_state.legal_action_mask())))
        )
    render = __import__(f"castle_envs.{slug.replace('-', '_')}.render", fromlist=["x"])
    return render.build_scene(env.game_state), env.game_state


@pytest.mark.parametrize("slug", list(GAMES))
def test_both_rasters_draw_the_same_frame_size_in_many_colours(slug):
    scene, _ = _scene(slug)
    backends = ["numpy"] + (["pillow"] if S.pillow_available() else [])
    for backend in backends:
        image = scene.to_rgb(backend)
        assert image.dtype == np.uint8 and image.shape == (scene.height, scene.width, 3)
        assert len(np.unique(image.reshape(-1, 3), axis=0)) > 8


@pytest.mark.parametrize("slug", list(GAMES))
def test_svg_is_well_formed_and_keeps_every_text_in_its_box(slug):
    scene, _ = _scene(slug)
    svg = scene.to_svg()
    root = ET.fromstring(svg)
    assert (root.get("width"), root.get("height")) == (str(scene.width), str(scene.height))
    texts = root.findall("{http://www.w3.org/2000/svg}text")
    boxes = [t for t in scene.texts() if t.text]
    assert len(texts) == len(boxes)
    for element, box in zip(texts, boxes):
        assert float(element.get("textLength")) <= box.w + 0.05
        assert float(element.get("font-size")) <= box.size


def test_choosing_the_raster(monkeypatch):
    monkeypatch.setattr(S, "_BACKEND", None)
    monkeypatch.setenv("CASTLE_ENVS_RASTER", "numpy")
    assert S.raster_backend() == "numpy"
    scene, state = _scene("castle-siege")
    from castle_envs.castle_siege.render import render_rgb

    assert np.array_equal(render_rgb(state), scene.to_rgb("numpy"))
    with pytest.raises(ValueError, match="unknown raster backend 'ink'"):
        S.set_raster("ink")
    with pytest.raises(ValueError, match="unknown raster backend"):
        scene.to_rgb("ink")
    monkeypatch.setattr(S, "pillow_available", lambda: False)
    S.set_raster("auto")
    assert S.raster_backend() == "numpy"
    with pytest.raises(ValueError, match=re.escape('pip install "castle-envs[pictures]"')):
        S.set_raster("pillow")


def test_without_pillow_svg_text_is_measured_by_an_average_glyph(monkeypatch):
    import castle_envs.core.svg as svg

    monkeypatch.setattr(svg, "pillow_available", lambda: False)
    svg.font_face_css.cache_clear()
    try:
        assert svg.font_face_css() == ""
        scene = S.Scene(200, 40)
        scene.text(0, 0, 60, 20, "a long text that cannot fit", size=12)
        element = ET.fromstring(scene.to_svg()).find("{http://www.w3.org/2000/svg}text")
        assert element.text.endswith("…") and float(element.get("textLength")) <= 60
    finally:
        svg.font_face_css.cache_clear()


def test_text_the_font_lacks_is_written_plainly():
    assert S.plain_text("Penedès × 3 – ok") == "Penedes x 3 - ok"
    assert S.plain_text("♠") == "?"
