"""The documentation site: it builds in MkDocs' strict mode (a warning, a broken
link or anchor fails it) and every environment page is generated with its sections and a
frame drawn at build time.

Needs the ``docs`` extra (``make test`` installs it); skipped where MkDocs is missing.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("mkdocs")
pytest.importorskip("material")
pytest.importorskip("mkdocs_gen_files")
pytest.importorskip("mkdocstrings_handlers.python")

from castle_envs.registry import GAMES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
PNG = b"\x89PNG\r\n\x1a\n"


def game_folder(spec) -> str:
    return spec.env_class.split(":")[0].split(".")[1]


def test_the_site_builds_strictly_with_every_page(tmp_path):
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "DISABLE_MKDOCS_2_WARNING": "true"}
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "--config-file",
            str(ROOT / "mkdocs.yml"),
            "--site-dir",
            str(site),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stderr[-4000:]}"
    assert not re.search(r"^(WARNING|ERROR)\b", done.stderr, re.MULTILINE), done.stderr

    for spec in GAMES.values():
        folder = game_folder(spec)
        page = site / "environments" / f"{folder}.html"
        assert page.is_file(), f"no page for {spec.title}"
        html = page.read_text(encoding="utf-8")
        for section in ("description", "action-space", "observation-space", "version-history"):
            assert f'id="{section}"' in html, f"{spec.title}: no {section} section"
        assert f'src="{folder}.png"' in html, f"{spec.title}: no frame on the page"
        frame = site / "environments" / f"{folder}.png"
        assert frame.read_bytes().startswith(PNG), f"{spec.title}: the frame is not a PNG"
        actions = importlib.import_module(f"castle_envs.{folder}.actions").ACTIONS
        assert f"Discrete({len(actions)})" in html, f"{spec.title}: not the live action space"
        assert (site / "rules" / f"{folder}.html").is_file(), f"no rules page for {spec.title}"

    for name in (
        "index",
        "batched",
        "changelog",
        "architecture",
        "models/index",
        "api/index",
        "api/envs",
        "api/vector",
        "api/agents",
        "api/core",
        "results",
        "castle_siege_winnability",
        "castellion_winnability",
        "move_features",
        "pictures",
        "howto/train_sb3",
        "howto/train_rllib",
        "howto/train_torchrl",
        "howto/train_cleanrl",
        "howto/evaluate",
        "howto/write_agent",
        "howto/replay",
        "source/ppo_vec",
    ):
        assert (site / f"{name}.html").is_file(), f"no page {name}.html"
    for card in (ROOT / "models").glob("*/README.md"):
        assert (site / "models" / card.parent.name / "index.html").is_file(), card
    _check_offline_search_links_and_tables(site)
    api = (site / "api" / "agents.html").read_text(encoding="utf-8")
    assert 'id="castle_envs.agents.registry.make_agent"' in api
    assert 'id="castle_envs.registry.make_vec"' in (site / "api" / "vector.html").read_text(
        encoding="utf-8"
    )


def _check_offline_search_links_and_tables(site: Path) -> None:
    """Opened from disk, the site searches (the index as a script, the Web Worker shim from
    the site itself, no script from the network), every link and picture of every page
    finds its file, and no table starts with an empty header row."""
    index = site / "search" / "search_index.js"
    assert index.is_file() and index.read_text(encoding="utf-8").startswith("var __index = ")
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    assert hooks.broken_links(site) == []
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        scripts = re.findall(r"<script[^>]*\ssrc=\"([^\"]+)\"", html)
        assert not [s for s in scripts if "://" in s or s.startswith("//")], page
        if page.name != "404.html":
            assert any(s.endswith("iframe-worker-shim.js") for s in scripts), page
        assert not hooks.EMPTY_HEAD.search(html), page
    winnability = (site / "castellion_winnability.html").read_text(encoding="utf-8")
    for linked in ("undecided_now.csv", "undecided.csv", "castellion_pimc/index.html"):
        assert f"data/{'castellion_winnability/' if linked.endswith('csv') else ''}{linked}" in (
            winnability
        ), linked
