"""The package's layers, read from the source: core <- games <- vector <- agents <- experiments.

- ``castle_envs`` proper (the env packages, ``core``, ``vector``) never imports
  ``castle_envs.agents`` or ``castle_envs.experiments``; agents never import experiments;
- no module imports another module's private (underscore) names;
- no lower layer imports a higher one, and no import circle; the package's public face
  (``castle_envs`` itself and ``castle_envs.moves``, which re-export the batched envs and
  the move views) stands on the vector layer (``FACADE``). The debt lists are empty and must
  stay so.
"""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {
    "castle_envs": ROOT / "castle_envs",
    "castle_envs.agents": ROOT / "agents",
    "castle_envs.experiments": ROOT / "experiments",
}
GAMES = ("castle_siege", "castellion", "castle_rooms", "castell")

#: lower layer -> higher layer imports still present (module, imported module): none left
CROSSING_DEBT: set[tuple[str, str]] = set()
#: import circles still present (each as the set of its modules): none left
CIRCLE_DEBT: set[frozenset] = set()


def _modules() -> dict:
    out = {}
    for package, folder in FOLDERS.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder).with_suffix("").parts
            if any(part.startswith(".") or part == "__pycache__" for part in rel):
                continue
            if package == "castle_envs" and rel[0] in ("agents", "experiments"):
                continue
            parts = list(rel[:-1]) if rel[-1] == "__init__" else list(rel)
            out[".".join([package, *parts])] = path
    return out


MODULES = _modules()


def _imports(module: str, path: Path):
    """(imported module, name or None) for every castle_envs import, function bodies too."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("castle_envs"):
                    yield alias.name, None
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith("castle_envs"):
                for alias in node.names:
                    yield target, alias.name


def _edges() -> dict:
    edges = {}
    for module, path in MODULES.items():
        deps = set()
        for target, name in _imports(module, path):
            full = f"{target}.{name}" if name else None
            deps.add(full if full in MODULES else target)
        edges[module] = {d for d in deps if d in MODULES and d != module}
    return edges


#: the package's public face: ``import castle_envs`` (``make_vec``, the ids) and
#: ``castle_envs.moves`` (the move-feature views of every game) re-export the batched and
#: compiled envs, so they stand on the vector layer, below agents
FACADE = {"castle_envs", "castle_envs.moves"}


def _layer(module: str) -> int:
    if module in FACADE:
        return 2
    parts = module.split(".")
    if parts[1:2] == ["experiments"]:
        return 4
    if parts[1:2] == ["agents"]:
        return 3
    if parts[1:2] == ["vector"]:
        return 2
    if parts[1:2] == ["core"]:
        return 0
    return 1  # the games, and the package's own modules


def test_the_modules_are_found():
    assert {
        "castle_envs.core.state",
        "castle_envs.castle_siege.kernel",
        "castle_envs.agents.registry",
        "castle_envs.experiments.cli",
    } <= set(MODULES)
    assert all(f"castle_envs.{g}.rules" in MODULES for g in GAMES)


def test_envs_never_import_agents_or_experiments_and_agents_never_import_experiments():
    bad = [
        (m, d)
        for m, deps in _edges().items()
        for d in deps
        if (_layer(m) < 3 <= _layer(d)) or (_layer(m) == 3 and _layer(d) == 4)
    ]
    assert not bad, bad


def test_no_module_imports_another_modules_private_names():
    bad = [
        (module, target, name)
        for module, path in MODULES.items()
        for target, name in _imports(module, path)
        if name
        and name.startswith("_")
        and not name.startswith("__")
        and target != module
        and f"{target}.{name}" not in MODULES
    ]  # a module such as vector._jit is no name
    assert not bad, bad


def test_no_new_layer_crossing_and_the_debt_list_is_current():
    crossings = {(m, d) for m, deps in _edges().items() for d in deps if _layer(d) > _layer(m)}
    assert crossings - CROSSING_DEBT == set(), "new imports of a higher layer"
    assert CROSSING_DEBT - crossings == set(), "paid debts: remove them from CROSSING_DEBT"


def test_no_new_import_circle_and_the_debt_list_is_current():
    edges = _edges()
    index, low, stack, on, circles = {}, {}, [], set(), set()

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = set()
            while True:
                w = stack.pop()
                on.discard(w)
                group.add(w)
                if w == v:
                    break
            if len(group) > 1:
                circles.add(frozenset(group))

    for v in edges:
        if v not in index:
            visit(v)
    assert circles - CIRCLE_DEBT == set(), "new import circles"
    assert CIRCLE_DEBT - circles == set(), "paid debts: remove them from CIRCLE_DEBT"
