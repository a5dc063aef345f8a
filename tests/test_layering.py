"""The package's layers, read from its folders.

Every module of ``jdr_stats`` is parsed with ``ast``.  Its *unit* is the
folder it lives in (``core``, ``io``, ``inference``, ...) or, for a public
module at the package root, the module itself.  The imports between units
(at the top of a file, inside a function or under ``TYPE_CHECKING``) must
form a graph without a cycle, so the folders are layers: each unit's floor
is one above the highest floor it imports, computed here from the code.
A few rules say what a layer may never import; the package root holds only
public modules.
"""

from __future__ import annotations

import ast
import pathlib

import pytest

import jdr_stats

ROOT = pathlib.Path(jdr_stats.__file__).parent
#: private modules allowed at the package root (the version stamp, the entry point)
ROOT_PRIVATE = {"_version", "__main__", "__init__"}


def _modules() -> dict[str, pathlib.Path]:
    out = {}
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT).with_suffix("")
        parts = list(rel.parts)
        if parts[-1] == "__init__" and len(parts) > 1:
            parts = parts[:-1]
        out[".".join(parts)] = path
    return out


MODULES = _modules()


def _resolve(current: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    """Package modules named by one ``from ... import ...`` statement."""
    if node.level == 0:
        if not (node.module or "").startswith("jdr_stats"):
            return []
        base = (node.module or "").split(".")[1:]
    else:
        here = current.split(".") if current != "__init__" else []
        pkg = here if is_package else here[:-1]
        base = pkg[: len(pkg) - (node.level - 1)] + (node.module.split(".") if node.module else [])
    targets = []
    for alias in node.names:
        sub = ".".join(base + [alias.name])
        targets.append(sub if sub in MODULES else ".".join(base))
    return [t if t else "__init__" for t in targets]


def _imports() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for name, path in MODULES.items():
        is_package = path.name == "__init__.py"
        tree = ast.parse(path.read_text(), filename=str(path))
        deps: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                deps.update(_resolve(name, is_package, node))
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name.startswith("jdr_stats."):
                        deps.add(alias.name.split(".", 1)[1])
        graph[name] = {d for d in deps if d != name and d in MODULES}
    return graph


GRAPH = _imports()


def unit(module: str) -> str:
    """The folder of ``module``, or the module itself at the package root."""
    return module.split(".")[0]


def _unit_graph() -> dict[str, set[str]]:
    out: dict[str, set[str]] = {unit(m): set() for m in MODULES}
    for mod, deps in GRAPH.items():
        out[unit(mod)].update(unit(d) for d in deps if unit(d) != unit(mod))
    return out


UNITS = _unit_graph()


def _floors() -> dict[str, int]:
    floors: dict[str, int] = {}

    def floor(u: str, seen: tuple[str, ...] = ()) -> int:
        if u in seen:
            pytest.fail("the folders import each other in a cycle: "
                        + " -> ".join((*seen[seen.index(u):], u)))
        if u not in floors:
            floors[u] = 1 + max((floor(d, (*seen, u)) for d in UNITS[u]), default=-1)
        return floors[u]

    for u in sorted(UNITS):
        floor(u)
    return floors


def _reaches(start: str) -> set[str]:
    seen, todo = set(), [start]
    while todo:
        for d in UNITS[todo.pop()]:
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def test_the_parser_sees_the_known_imports():
    # guards the test itself: these edges exist, so a parser bug cannot pass silently
    assert "inference.rank_tests" in GRAPH["model"]
    assert "core._linalg" in GRAPH["estimation._estimate"]
    assert "baselines._base" in GRAPH["baselines.sir"]
    assert "io._data" in GRAPH["inference.rank_tests"]


def test_no_cycle_between_folders():
    floors = _floors()
    assert floors["runtime"] < floors["core"] < floors["estimation"] < floors["inference"]
    assert floors["inference"] < floors["fitting"] < floors["model"]


def test_no_import_cycle_between_modules():
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(GRAPH[node]):
            if state.get(dep) == 1:
                pytest.fail("import cycle: " + " -> ".join(stack[stack.index(dep):] + [dep]))
            if dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for mod in sorted(GRAPH):
        if mod not in state:
            visit(mod)


def test_the_root_holds_only_public_modules():
    private = sorted(p.stem for p in ROOT.glob("_*.py") if p.stem not in ROOT_PRIVATE)
    assert not private, f"private modules at the package root (give them a folder): {private}"


@pytest.mark.parametrize(("lower", "never", "why"), [
    ("policy", {"*"}, "every automatic choice reads the data's shape and values only"),
    ("config", {"*"}, "resources only"),
    ("runtime", {"*"}, "the ground floor"),
    ("core", {"io", "streams", "estimation", "fitting", "inference", "support", "baselines",
              "policy", "model", "results", "report", "persistence"},
     "numerics only: no data sources, no policy, no reporting"),
    ("inference", {"model", "results", "compare", "fitting", "support", "baselines"},
     "the tests take whitened designs and moments, never a model"),
    ("support", {"model", "results", "compare", "fitting", "baselines"},
     "support selection takes data and moments, never a model"),
    ("baselines", {"model", "results", "compare", "fitting", "support"},
     "the single-block methods stand on their own"),
])
def test_what_a_layer_never_imports(lower, never, why):
    reached = _reaches(lower)
    bad = sorted(reached) if never == {"*"} else sorted(reached & never)
    if never == {"*"}:
        bad = [u for u in bad if u not in {"runtime", "config", "exceptions"}
               or lower in {"policy", "config"}]
    assert not bad, f"{lower} reaches {bad} ({why})"


def test_core_imports_no_pandas():
    for mod, path in MODULES.items():
        if unit(mod) == "core":
            tree = ast.parse(path.read_text())
            names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
            names |= {n.module for n in ast.walk(tree)
                      if isinstance(n, ast.ImportFrom) and n.level == 0}
            assert "pandas" not in names, mod


def _code_lines(lines: list[str], node: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    """A function's lines of code: its body less its docstring, blank lines
    and comment lines."""
    first = node.body[0]
    skip_doc = (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str))
    start = first.end_lineno if skip_doc and first.end_lineno is not None else node.lineno
    body = lines[start:node.end_lineno]
    return sum(1 for line in body if line.strip() and not line.strip().startswith("#"))


#: modules allowed beyond 800 lines, with the reason: the thresholds are read
#: from one module at run time (``monkeypatch.setattr(jdr_stats.policy, ...)``),
#: and a submodule reading them back from the package would import it in a cycle
LONG_MODULES = {"policy": "every automatic choice and threshold in one module"}


def test_modules_and_functions_stay_short():
    """No module over 800 lines (but those named above, with their reason),
    no function over 80 lines of code."""
    long_modules, long_functions = [], []
    for name, path in MODULES.items():
        text = path.read_text()
        lines = text.splitlines()
        if len(lines) > 800 and name not in LONG_MODULES:
            long_modules.append(f"{name}: {len(lines)}")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if (n := _code_lines(lines, node)) > 80:
                    long_functions.append(f"{name}.{node.name}: {n}")
    assert long_modules == [] and long_functions == []
