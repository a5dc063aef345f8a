"""jdr_stats: joint dimension reduction for two feature blocks.

Li and Bresler's estimator of the subspaces through which a response depends
on two feature vectors, with inference, the classical baselines and
simulation of the paper's models.

Layers
------
The modules are layered; a module imports only from its own layer or the
layers below it, and the imports have no cycle (``tests/test_layering.py``
parses every module and enforces both).  From the ground up:

0. ``_validation`` (checks of options and seeds), ``exceptions`` (every error and warning class), ``summary``
   (the ``Summary`` builder);
1. ``_linalg``: moments (:class:`~jdr_stats._linalg.BlockMoments`), the one
   whitening object (:class:`~jdr_stats._linalg.Whitening`), SVD with the sign
   convention, principal angles; ``_sources`` (row sources: arrays, Parquet,
   CSV chunks, dask);
2. ``_data`` (validated data, :class:`~jdr_stats._data.ModelData`),
   ``moments`` (exact mergeable sufficient statistics,
   :class:`~jdr_stats.Moments`), ``metrics``, ``simulate``, ``datasets``;
3. ``_estimate`` (the estimator on moments), ``sparse``, ``_streamed`` (model
   data held as moments, for models without rows);
4. ``inference/`` (rank tests, bootstrap, hypothesis tables, weighted
   chi-square tails), ``support`` (coordinate tests), ``baselines/`` (SIR,
   pHd, SAVE): each takes validated data and/or moments plus whitenings,
   never a model;
5. ``model`` (``JointDimReduction``, ``JDRResults``), ``compare``;
6. ``plotting``, ``cli`` (and a future ``sklearn``); 7. this package's
   namespace.
"""

from __future__ import annotations

from . import baselines, datasets, exceptions, metrics, simulate
from ._version import __version__
from .baselines import PHD, SAVE, SIR
from .compare import compare
from .inference.bootstrap import BootstrapResults
from .inference.hypotheses import InapplicableTestResult, TestResult, TestTable
from .inference.ladle import LadleResults
from .inference.rank_tests import RankTestResults
from .model import JDRResults, JointDimReduction
from .moments import Moments
from .support import SupportResults, select_support

__all__ = [
    "JointDimReduction",
    "JDRResults",
    "Moments",
    "SIR",
    "PHD",
    "SAVE",
    "compare",
    "RankTestResults",
    "LadleResults",
    "TestResult",
    "InapplicableTestResult",
    "TestTable",
    "BootstrapResults",
    "SupportResults",
    "select_support",
    "baselines",
    "datasets",
    "exceptions",
    "metrics",
    "simulate",
    "__version__",
]

