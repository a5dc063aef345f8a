"""jdr_stats: joint dimension reduction for two or more feature blocks.

Li and Bresler's estimator of the subspaces through which a response depends
on two or more feature vectors, with inference, the classical baselines and
simulation of the paper's models.

Layers
------
Each folder of the package is one layer, and the public modules at its root
stand beside them; the imports between these units have no cycle, so each
sits one floor above the highest it imports (``tests/test_layering.py``
reads the folders, computes the floors and enforces what a layer may never
import).  From the ground up:

- ``runtime/`` (argument validation, warnings at the caller, lazy heavy
  imports, atomic writes, frequency weights), ``config`` (resources),
  ``policy`` (every automatic choice, from the data's shape and values),
  ``exceptions``;
- ``core/`` (numerics over K named blocks: moments, whitenings, pieces, the
  K-way tensor and its sketch; no pandas, no policy, no I/O),
  ``resampling/`` (counts, Poisson weights, seeds, workers), ``report/``
  (rendering of tables), ``whitenings/`` (the registry: one module per
  kind), ``streams/`` (row sources: arrays, Parquet, CSV, dask, with their
  integrity checks; public in :mod:`jdr_stats.sources`), ``summary``,
  ``metrics``, ``simulate``;
- ``moments`` (exact mergeable sufficient statistics), ``persistence/``
  (exports and the allow-listed results file), ``io/`` (inputs, formulas,
  responses, covariates: the model's data; public in :mod:`jdr_stats.data`);
- ``estimation/`` (the two-block estimate and the joint estimator's rows),
  ``diagnostics``; ``inference/`` (rank tests, bootstrap, association, main
  effects: each takes whitened designs and moments, never a model), then
  ``support/`` and ``baselines/``, which never import each other;
- ``fitting/`` (the fit of K blocks and the results' shared members),
  ``results``, ``model``; ``compare``, ``sklearn``, ``cli``, ``plotting``
  (which reads results by their public members) and this namespace.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import types
from typing import TYPE_CHECKING, Any

from ._version import __version__

# The public names other than modules, each with the module that defines it.
# They, and the public modules, are imported at first access (module
# ``__getattr__``), so ``import jdr_stats`` loads neither pandas nor the
# package's own modules; ``tests/test_import_time.py`` checks both, and that
# every name resolves to the same object as its module's.
_NAMES = {
    "PHD": "baselines", "SAVE": "baselines", "SIR": "baselines",
    "PHDResults": "baselines", "SAVEResults": "baselines", "SDRResults": "baselines",
    "SIRResults": "baselines",
    "Comparison": "compare", "compare": "compare",
    "BootstrapResults": "inference.bootstrap",
    "InapplicableTestResult": "inference.hypotheses", "TestResult": "inference.hypotheses",
    "TestTable": "inference.hypotheses",
    "LadleResults": "inference.ladle",
    "RankTestResults": "inference.rank_tests",
    "JointDimReduction": "model",
    "Moments": "moments",
    "load": "persistence._export",
    "JDRResults": "results",
    "SupportResults": "support", "select_support": "support",
}

if TYPE_CHECKING:  # type checkers and IDEs see the eager imports
    from . import (
        baselines,
        config,
        data,
        datasets,
        exceptions,
        metrics,
        policy,
        progress,
        simulate,
        sources,
    )
    from .baselines import PHD, SAVE, SIR, PHDResults, SAVEResults, SDRResults, SIRResults
    from .compare import Comparison, compare
    from .inference.bootstrap import BootstrapResults
    from .inference.hypotheses import InapplicableTestResult, TestResult, TestTable
    from .inference.ladle import LadleResults
    from .inference.rank_tests import RankTestResults
    from .model import JointDimReduction
    from .moments import Moments
    from .persistence._export import load
    from .results import JDRResults
    from .support import SupportResults, select_support


def __getattr__(name: str) -> Any:
    """Import a public name's module (or a public module) at the name's
    first access, and bind the name here: later accesses are plain reads."""
    if name in _NAMES:
        value = getattr(importlib.import_module(f".{_NAMES[name]}", __name__), name)
    elif not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = importlib.import_module(f".{name}", __name__)  # a public module
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


class _Namespace(types.ModuleType):
    """The package's module type: a public name that is also a subpackage's
    name (``compare``, the function, beside ``jdr_stats.compare``) keeps
    naming the function when the subpackage is first imported (the import
    system binds a loaded submodule on its parent by ``setattr``)."""

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _NAMES and isinstance(value, types.ModuleType):
            return
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = _Namespace


__all__ = [
    "PHD",
    "SAVE",
    "SIR",
    "BootstrapResults",
    "Comparison",
    "InapplicableTestResult",
    "JDRResults",
    "JointDimReduction",
    "LadleResults",
    "Moments",
    "PHDResults",
    "RankTestResults",
    "SAVEResults",
    "SDRResults",
    "SIRResults",
    "SupportResults",
    "TestResult",
    "TestTable",
    "__version__",
    "baselines",
    "compare",
    "config",
    "data",
    "datasets",
    "exceptions",
    "load",
    "metrics",
    "policy",
    "progress",
    "select_support",
    "simulate",
    "sources",
]
