"""Classical single-block dimension reduction: SIR, pHd and SAVE.

Implementations whose numbers agree with R's ``dr`` package (version
3.0.11): the same slicing, standardisation, eigenvector scaling and tests.
"""

from __future__ import annotations

from ._base import (
    CoordinateTest,
    DimensionTests,
    SliceInfo,
    arc_slices,
    bentler_xie_pvalue,
    dr_slices,
    wood_pvalue,
)
from .phd import PHD, PHDResults
from .save import SAVE, SAVEResults
from .sir import SIR, SIRResults

__all__ = [
    "SIR",
    "SIRResults",
    "PHD",
    "PHDResults",
    "SAVE",
    "SAVEResults",
    "DimensionTests",
    "CoordinateTest",
    "SliceInfo",
    "dr_slices",
    "arc_slices",
    "bentler_xie_pvalue",
    "wood_pvalue",
]
