"""The documentation site's hooks (docs/hooks.py), on small inputs: a built page's link to
no file of the site is found, and a table's empty header row is dropped. The whole site is
built by tests/test_docs_site.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _hooks():
    spec = importlib.util.spec_from_file_location("docs_hooks", ROOT / "docs" / "hooks.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _page(path: Path, body: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"<html><body>{body}</body></html>", encoding="utf-8")


def test_a_link_to_no_file_of_the_site_is_found(tmp_path):
    hooks = _hooks()
    site = tmp_path / "site"
    (site / "data" / "study").mkdir(parents=True)
    (site / "data" / "study" / "kept.csv").write_text("a\n")
    _page(site / "models" / "m" / "index.html", "")
    _page(
        site / "study.html",
        '<a href="data/study/kept.csv">kept</a> <a href="data/study/left_out.csv">gone</a> '
        '<a href="https://example.org/x.csv">web</a> <a href="#section">here</a> '
        '<a href="models/m/">model</a> <img src="study.svg"> '
        "<a href='howto/missing.html#part'>how</a> <a href=\"mailto:a@b.c\">mail</a>",
    )
    _page(site / "howto" / "page.html", '<a href="../study.html#x">up</a>')
    assert hooks.broken_links(site) == [
        "study.html: data/study/left_out.csv",
        "study.html: study.svg",
        "study.html: howto/missing.html#part",
    ]


def test_an_empty_header_row_is_dropped_and_a_real_one_kept():
    hooks = _hooks()
    empty = (
        "<table>\n<thead>\n<tr>\n<th></th>\n<th></th>\n</tr>\n</thead>\n"
        "<tbody>\n<tr>\n<td>id</td>\n<td>x</td>\n</tr>\n</tbody>\n</table>"
    )
    out = hooks.on_page_content(empty)
    assert "<thead>" not in out and "<td>id</td>" in out
    real = empty.replace("<th></th>", "<th>name</th>", 1)
    assert hooks.on_page_content(real) == real


def test_the_build_stops_on_a_broken_link(tmp_path):
    import pytest

    exceptions = pytest.importorskip("mkdocs.exceptions")
    hooks = _hooks()
    _page(tmp_path / "index.html", '<a href="data/left_out.csv">x</a>')
    with pytest.raises(exceptions.PluginError, match="index.html: data/left_out.csv"):
        hooks.on_post_build({"site_dir": str(tmp_path)})
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "left_out.csv").write_text("a\n")
    hooks.on_post_build({"site_dir": str(tmp_path)})
