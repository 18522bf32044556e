"""MkDocs hooks of the documentation site (``hooks:`` in mkdocs.yml).

Loading this module (as MkDocs does, or ``python docs/hooks.py``, which ``make lint`` runs for
mypy) lays out ``build/docs-api/castle_envs``: the package as the wheel installs it,
made of symbolic links (every entry of ``castle_envs/``, plus ``agents/``, ``experiments/``,
``models/`` and ``configs/`` under the names pyproject.toml's ``package-dir`` gives them).
mkdocstrings reads the sources statically from there, so ``castle_envs.agents.registry``
is found although its folder is ``agents/`` at the top of the repository.

``on_page_markdown`` reads lists as GitHub does, where Python-Markdown would not: it puts a
blank line between a paragraph and a list that follows it at once (else the list runs into
the paragraph), and indents a nested list item by a multiple of 4 spaces (``   - x`` under
``2. y`` would otherwise become an item of the outer list).

``on_page_content`` drops a table's header row when every cell of it is empty: Markdown
needs one, so the key-value tables of the env docstrings and pages write ``| | |``, which
would show as an empty band over the table.

``on_post_build`` fails the build on a link or picture of a built page that points at no
file of the site. MkDocs checks only the links between pages it builds; a link into a
folder left out of the site (``exclude_docs``), or to a file it does not know, it reports at
most as information, which strict mode lets pass.
"""

from __future__ import annotations

import contextlib
import html
import os
import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10 (make lint runs this file there too)
    tomllib = None  # type: ignore[assignment]

ROOT = Path(__file__).resolve().parents[1]
VIEW = ROOT / "build" / "docs-api"
LIST_ITEM = re.compile(r"^(\s*)([-*+]|\d+[.)])\s+\S")
FENCE = re.compile(r"^\s*(```|~~~)")


def _link(link: Path, target: Path) -> None:
    if link.is_symlink() and Path(os.readlink(link)) == target:
        return
    if link.is_symlink() or link.exists():
        link.unlink()
    # another build may make the same link at the same time
    with contextlib.suppress(FileExistsError):
        link.symlink_to(target, target_is_directory=target.is_dir())


def _package_dirs(pyproject: str) -> dict:
    """``[tool.setuptools.package-dir]`` of pyproject.toml (read by hand without tomllib:
    its lines are ``"castle_envs.agents" = "agents"``)."""
    if tomllib is not None:
        return tomllib.loads(pyproject)["tool"]["setuptools"]["package-dir"]
    table = pyproject.split("[tool.setuptools.package-dir]", 1)[1].split("\n[", 1)[0]
    return dict(re.findall(r'^"([^"]+)"\s*=\s*"([^"]+)"', table, re.MULTILINE))


def package_view() -> Path:
    """``build/docs-api``: ``castle_envs`` as installed, as symbolic links into the checkout."""
    package = VIEW / "castle_envs"
    package.mkdir(parents=True, exist_ok=True)
    mapped = _package_dirs((ROOT / "pyproject.toml").read_text())
    wanted = {
        entry.name: entry
        for entry in (ROOT / "castle_envs").iterdir()
        if entry.name != "__pycache__"
    }
    for name, folder in mapped.items():
        wanted[name.removeprefix("castle_envs.")] = ROOT / folder
    for stale in package.iterdir():
        if stale.name not in wanted:
            stale.unlink()
    for name, target in wanted.items():
        _link(package / name, target)
    return VIEW


# made as the hook loads, while MkDocs reads mkdocs.yml: the Python handler drops search
# paths that do not exist when it reads its options, which is before any on_config event
package_view()


def on_page_markdown(markdown: str, **kwargs) -> str:
    out: list[str] = []
    fenced = False
    for line in markdown.splitlines():
        if FENCE.match(line):
            fenced = not fenced
        elif (
            not fenced
            and (item := LIST_ITEM.match(line))
            and len(item.group(1)) % 4
            and out
            and out[-1].strip()
            and (LIST_ITEM.match(out[-1]) or out[-1][0] == " ")
        ):
            depth = -(-len(item.group(1)) // 4)  # 1-3 spaces: 4; 5-7: 8
            line = " " * (4 * depth) + line.lstrip()
        elif (
            not fenced
            and out
            and LIST_ITEM.match(line)
            and out[-1].strip()
            and not LIST_ITEM.match(out[-1])
            and not out[-1].startswith(("#", "|", " "))
            and not LIST_ITEM.match(line).group(1)
        ):
            out.append("")
        out.append(line)
    return "\n".join(out) + "\n"


EMPTY_HEAD = re.compile(r"<thead>\s*<tr>(?:\s*<th[^>]*>\s*</th>)+\s*</tr>\s*</thead>\s*")


def on_page_content(html: str, **kwargs) -> str:
    return EMPTY_HEAD.sub("", html)


LINK = re.compile(r"""\s(?:href|src)=(?:"([^"]*)"|'([^']*)')""")


def broken_links(site: Path) -> list[str]:
    """``page: link`` for each relative link or picture source of the built ``site`` whose
    file is not in it (a link to a folder needs its index.html)."""
    site = Path(site)
    broken = []
    for page in sorted(site.rglob("*.html")):
        if page == site / "404.html":  # its links start at the site's root, for a server
            continue
        text = page.read_text(encoding="utf-8", errors="replace")
        for match in LINK.finditer(text):
            link = html.unescape(match.group(1) if match.group(1) is not None else match.group(2))
            parts = urlsplit(link)
            if parts.scheme or parts.netloc or not parts.path:  # elsewhere, or this page
                continue
            base = site if parts.path.startswith("/") else page.parent
            target = (base / unquote(parts.path).lstrip("/")).resolve()
            if target.is_dir():
                target = target / "index.html"
            if not target.is_file():
                broken.append(f"{page.relative_to(site).as_posix()}: {link}")
    return broken


def on_post_build(config, **kwargs) -> None:
    broken = broken_links(Path(config["site_dir"]))
    if broken:
        from mkdocs.exceptions import PluginError

        raise PluginError(
            f"{len(broken)} link(s) to no file of the site:\n  " + "\n  ".join(broken[:40])
        )
