"""jdr_stats: joint dimension reduction for two feature blocks.

Li and Bresler's estimator of the subspaces through which a response depends
on two feature vectors, with inference, the classical baselines and
simulation of the paper's models.

Layers
------
The modules are layered; a module imports only from its own layer or the
layers below it, and the imports have no cycle (``tests/test_layering.py``
parses every module and enforces both).  From the ground up:

0. ``config`` (resources: memory, chunks; read at call time), ``policy``
   (every automatic choice and the thresholds it uses, from the data's shape
   and values only), ``_settings`` (the fit's settings record),
   ``_validation`` (checks of options and seeds), ``_lazy`` (``scipy.stats``
   and ``scipy.integrate``, imported at first use so that importing the
   package stays fast), ``exceptions`` (every
   error and warning class), ``_warn``, ``summary`` (the ``Summary``
   builder), ``_export`` (``to_json``, ``save``, :func:`load`), ``_persist``
   (the results file ``save`` writes and ``load`` reads; it rebuilds the
   classes of its fixed table, found by name at run time), ``_atomic`` (the
   atomic writes of every file);
1. ``_linalg``: moments (:class:`~jdr_stats.data.BlockMoments`), the one
   whitening object (:class:`~jdr_stats.data.Whitening`), SVD with the sign
   convention, principal angles; ``_sources`` (row sources: arrays, Parquet,
   CSV chunks, dask; public in :mod:`jdr_stats.sources`), ``_progress``
   (public in :mod:`jdr_stats.progress`), ``whitenings/`` (the registry of
   whitenings: one module per kind, building each block's map);
2. ``_data`` (validated data, :class:`~jdr_stats.data.ModelData`),
   ``moments`` (exact mergeable sufficient statistics,
   :class:`~jdr_stats.Moments`), ``metrics``, ``simulate``, ``datasets``;
3. ``_estimate`` (the estimator on moments), ``sparse``, ``_streamed`` (model
   data held as moments, for models without rows), ``data`` (the public
   home of the data and moments types);
4. ``inference/`` (rank tests, bootstrap, hypothesis tables, weighted
   chi-square tails), then ``support`` (coordinate tests) and ``baselines/``
   (SIR, pHd, SAVE), which use inference's tables and never each other:
   each takes validated data and/or moments plus whitenings, never a model;
5. ``model`` (``JointDimReduction``), ``results`` (``JDRResults``), ``compare``;
6. ``plotting``, ``cli`` (and a future ``sklearn``); 7. this package's
   namespace.
"""

from __future__ import annotations

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
from ._export import load
from ._kfit import KBlockBootstrapResults, KBlockRankTests, KBlockResults
from ._version import __version__
from .baselines import PHD, SAVE, SIR, PHDResults, SAVEResults, SDRResults, SIRResults
from .compare import Comparison, compare
from .inference.bootstrap import BootstrapResults
from .inference.hypotheses import InapplicableTestResult, TestResult, TestTable
from .inference.ladle import LadleResults
from .inference.rank_tests import RankTestResults
from .model import JointDimReduction
from .moments import Moments
from .results import JDRResults
from .support import SupportResults, select_support
from .support._kblock import KBlockSupportResults

__all__ = [
    "PHD",
    "SAVE",
    "SIR",
    "BootstrapResults",
    "Comparison",
    "InapplicableTestResult",
    "JDRResults",
    "JointDimReduction",
    "KBlockBootstrapResults",
    "KBlockRankTests",
    "KBlockResults",
    "KBlockSupportResults",
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
