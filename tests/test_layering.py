"""The package's import layers (docs: the package docstring of jdr_stats).

Every module of ``jdr_stats`` is parsed with ``ast``; each import of another
module of the package (at the top of the file, inside a function, or under
``TYPE_CHECKING``) must go to a module of the same or a lower layer, and the
graph of these imports must have no cycle.  The subpackages of one layer
(``inference``, ``support``, ``baselines``) are ordered: ``inference`` below
``support`` and ``baselines``, which may not import each other (no sideways
import between packages of one layer).
"""

from __future__ import annotations

import ast
import pathlib

import pytest

import jdr_stats

ROOT = pathlib.Path(jdr_stats.__file__).parent

#: Layer of each top-level module or subpackage, from the ground up.
LAYERS = {
    "_validation": 0, "_lazy": 0, "exceptions": 0, "summary": 0, "_render": 0, "_report": 0, "_version": 0, "config": 0, "_export": 0,
    "_atomic": 0, "_persist": 0, "_frequency": 0, "_scaled_source": 1,
    "policy": 0, "_settings": 0, "_warn": 0,
    "core": 1, "_linalg": 1, "_sources": 1, "_dask_source": 1, "_integrity": 0.5, "_csv_stream": 0.5, "_progress": 1, "_resampling": 1, "_moments_engine": 1,
    "sources": 1, "progress": 1, "whitenings": 1,
    "moments": 2, "_adjusted_source": 3, "_stream_levels": 3, "_streamed": 3, "data": 3,
    "_formula": 2, "_inputs": 2, "_responses": 2, "_data": 2, "metrics": 2, "fit_measures": 2, "simulate": 2, "datasets": 2,
    "_estimate": 3, "_hosvd": 3, "_joint": 3, "sparse": 3, "diagnostics": 3,
    # the packages of layer 4, ordered: support and baselines use inference's
    # test tables and chi-square tails; inference never uses them
    "inference": 4, "support": 4.5, "baselines": 4.5,
    "_block_view": 5, "_kpremises": 3.5, "_kview": 5,
    "model": 5, "results": 5, "_kfit": 5, "_orthogonal_fit": 5, "_ksparse": 5, "_kwhiten": 5, "_kstream": 5, "_results_extra": 5, "_kresults_extra": 5, "_kresults_infer": 5, "_kcompare": 5, "_compare_common": 5, "compare": 5,
    "sklearn": 6, "plotting": 6, "_plot_blocks": 6, "_plot_layout": 6, "cli": 6, "_cli_input": 6, "__main__": 6,
    "__init__": 7,
}


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


def _layer(module: str) -> float:
    return LAYERS[module.split(".")[0]]


def test_every_module_has_a_layer():
    missing = sorted({m.split(".")[0] for m in MODULES} - set(LAYERS))
    assert not missing, f"modules without a layer in LAYERS: {missing}"


def test_the_parser_sees_the_known_imports():
    # guards the test itself: these edges exist, so a parser bug cannot pass silently
    assert "inference.rank_tests" in GRAPH["model"]
    assert "_linalg" in GRAPH["_estimate"]
    assert "baselines._base" in GRAPH["baselines.sir"]
    assert "_data" in GRAPH["inference.rank_tests"]


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_import_runs_upward(module):
    up = sorted(d for d in GRAPH[module] if _layer(d) > _layer(module))
    assert not up, f"{module} (layer {_layer(module)}) imports from a higher layer: {up}"


def _package(module: str) -> str | None:
    """The top-level subpackage of ``module`` (None for a top-level module)."""
    top = module.split(".")[0]
    return top if (ROOT / top).is_dir() else None


@pytest.mark.parametrize("module", sorted(m for m in MODULES if _package(m)))
def test_no_sideways_import_between_packages_of_one_layer(module):
    """A package never imports another package of its own layer (support and
    baselines), nor one of a higher sub-layer (inference from support)."""
    own = _package(module)
    sideways = sorted(d for d in GRAPH[module] if _package(d) not in (None, own)
                      and _layer(d) >= _layer(module))
    assert not sideways, f"{module} imports from a sibling package: {sideways}"


def test_policy_depends_on_nothing_but_the_standard_library():
    """policy (layer 0) imports no module of the package: every automatic
    choice is a function of the data's shape and values."""
    assert GRAPH["policy"] == set()
    assert GRAPH["config"] == set()


def test_no_import_cycle():
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for dep in sorted(GRAPH[node]):
            if state.get(dep) == 1:
                cycle = stack[stack.index(dep):] + [dep]
                pytest.fail("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep)
        stack.pop()
        state[node] = 2

    for mod in sorted(GRAPH):
        if mod not in state:
            visit(mod)


def test_inference_never_imports_the_model():
    for mod, deps in GRAPH.items():
        if _layer(mod) <= LAYERS["baselines"]:
            assert not deps & {"model", "compare"}, mod
