"""The package's layers, read from the source: core <- games <- agents <- experiments.

- the environment library (``castle_envs``: ``core``, the game packages and the modules
  beside them) never imports ``castle_envs.agents`` or ``castle_envs.experiments``, and
  never names them, nor a lab command, in a string, docstring or comment; agents never
  import or name experiments;
- ``core`` imports no game package;
- no module imports another module's private (underscore) names, nor reads one as an
  attribute (``K._table``, ``state._step``) unless the module defines that name itself;
- no lower layer imports a higher one, and no import circle. The debt lists are empty and
  must stay so.
"""

import ast
import re
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


def _layer(module: str) -> int:
    parts = module.split(".")
    if parts[1:2] == ["experiments"]:
        return 4
    if parts[1:2] == ["agents"]:
        return 3
    if parts[1:2] == ["core"]:
        return 0
    return 1  # the games, and the package's own modules (registry, moves, wrappers)


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


#: what names the lab: its packages as modules or paths, and its commands
LAB_NAMES = re.compile(
    r"castle_envs[./](agents|experiments)\b|\b(agents|experiments)[./][a-z_]+"
    r"|castle-envs (evaluate|train|solve|tournament|play|replay|bench|demo|benchmark)\b"
)
EXPERIMENT_NAMES = re.compile(r"castle_envs[./]experiments\b|\bexperiments[./][a-z_]+")


def _named(path: Path, pattern: re.Pattern) -> list[tuple[int, str]]:
    """(line, text) of every string constant (docstrings too) and comment matching."""
    source = path.read_text()
    hits = [
        (node.lineno, match.group(0))
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Constant) and isinstance(node.value, str)
        for match in pattern.finditer(node.value)
    ]
    for number, line in enumerate(source.splitlines(), 1):
        _, hash_, comment = line.partition("#")
        if hash_ and (match := pattern.search(comment)):
            hits.append((number, match.group(0)))
    return hits


def test_the_env_library_names_nothing_above_it_even_in_strings():
    bad = [
        (module, *hit)
        for module, path in MODULES.items()
        if _layer(module) < 3
        for hit in _named(path, LAB_NAMES)
    ]
    assert not bad, bad


def test_agents_name_no_experiment_even_in_strings():
    bad = [
        (module, *hit)
        for module, path in MODULES.items()
        if _layer(module) == 3
        for hit in _named(path, EXPERIMENT_NAMES)
    ]
    assert not bad, bad


def test_the_string_check_catches_a_named_lab_module(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        '"""Plays like ``castle_envs.agents.search.mcts``."""\n'
        'SPEC = "castle_envs.experiments.solve:run"  # see castle-envs solve\n'
    )
    assert [text for _, text in _named(sample, LAB_NAMES)] == [
        "castle_envs.agents",
        "castle_envs.experiments",
        "castle-envs solve",
    ]


#: private attributes of third-party objects that a module reads by their documented API
#: (numba's ``cgutils`` structs expose ``_getvalue`` as the way to produce their value)
THIRD_PARTY_PRIVATE = {("castle_envs.core.jit", "_getvalue")}


def _private_reads(path: Path) -> list[tuple[int, str]]:
    """``x._name`` reads where ``x`` is not ``self``/``cls`` and the module defines no
    ``_name`` of its own (a function, class, variable or attribute it assigns)."""
    tree = ast.parse(path.read_text())
    defined = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            defined.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            defined.add(node.id)
    return [
        (node.lineno, ast.unparse(node))
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and node.attr.startswith("_")
        and not node.attr.startswith("__")
        and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
        and node.attr not in defined
    ]


def test_no_module_reads_another_modules_private_attributes():
    bad = [
        (module, line, text)
        for module, path in MODULES.items()
        for line, text in _private_reads(path)
        if (module, text.rpartition(".")[2]) not in THIRD_PARTY_PRIVATE
    ]
    assert not bad, bad


def test_the_private_read_check_catches_a_kernel_table(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "from castle_envs.castellion import kernel as K\n"
        "def f(state):\n"
        "    return K._TABLE[0] + state._step() + state._own\n"
        "class A:\n"
        "    def __init__(self):\n"
        "        self._own = 1\n"
    )
    assert sorted(text for _, text in _private_reads(sample)) == ["K._TABLE", "state._step"]
