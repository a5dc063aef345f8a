"""jdr_stats: joint dimension reduction for two feature blocks.

Li and Bresler's estimator of the subspaces through which a response depends
on two feature vectors, with inference, the classical baselines and
simulation of the paper's models.
"""

from __future__ import annotations

from . import baselines, datasets, metrics, simulate
from .baselines import PHD, SAVE, SIR
from .compare import compare
from .inference.bootstrap import BootstrapResults
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
    "BootstrapResults",
    "SupportResults",
    "select_support",
    "baselines",
    "datasets",
    "metrics",
    "simulate",
    "__version__",
]

__version__ = "0.1.0"
