"""Classical single-block dimension reduction: SIR, pHd and SAVE.

Implementations whose numbers agree with R's ``dr`` package (version
3.0.11): the same slicing, standardisation, eigenvector scaling and tests.

Modules: ``_base`` (the pipeline validate -> standardize -> kernel -> eigen
-> results, shared by all three), ``_slicing`` (slices and slice moments),
``_tables`` (weighted chi-square tails and test tables), and one module per
method supplying its kernel and tests (``sir``, ``phd``, ``save``).
"""

from __future__ import annotations

from ..inference.chi2mix import bentler_xie_pvalue, wood_pvalue
from ._base import SDRResults
from ._slicing import SliceInfo, arc_slices, dr_slices
from ._tables import CoordinateTest, DimensionTests
from .phd import PHD, PHDResults
from .save import SAVE, SAVEResults
from .sir import SIR, SIRResults

__all__ = [
    "PHD",
    "SAVE",
    "SIR",
    "CoordinateTest",
    "DimensionTests",
    "PHDResults",
    "SAVEResults",
    "SDRResults",
    "SIRResults",
    "SliceInfo",
    "arc_slices",
    "bentler_xie_pvalue",
    "dr_slices",
    "wood_pvalue",
]
