"""Public members of the K-block results that the plots read.

:class:`KBootAnglesMixin` gives a K-block bootstrap
each replicate's largest principal angle, by block (the histograms of
:func:`jdr_stats.plotting.plot_bootstrap_angles`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["KBootAnglesMixin"]


class KBootAnglesMixin:
    """``angles`` of a K-block bootstrap (needs ``_angles``, ``_table``)."""

    _angles: np.ndarray | None
    _table: Any

    @property
    def angles(self) -> dict[str, np.ndarray] | None:
        """Each block's largest principal angle (degrees) between every
        replicate's subspace and the estimate, one entry per replicate, by
        block name (None for a bootstrap restored without them)."""
        angles = getattr(self, "_angles", None)  # absent from a file saved without them
        if angles is None:
            return None
        return {str(n): angles[:, k].copy() for k, n in enumerate(self._table.index)}
