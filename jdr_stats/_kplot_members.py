"""Public members of the K-block results that the plots read.

:class:`KRankTestTableMixin` gives a K-block fit the ``rank_test_table``
of the two-block results (the tests that chose the ranks of a
``rank="auto"`` fit); :class:`KBootAnglesMixin` gives a K-block bootstrap
each replicate's largest principal angle, by block (the histograms of
:func:`jdr_stats.plotting.plot_bootstrap_angles`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["KBootAnglesMixin", "KRankTestTableMixin"]


class KRankTestTableMixin:
    """``rank_test_table`` of a K-block fit (needs ``_tables``, ``_settings``)."""

    _tables: Any
    _settings: dict[str, Any]
    #: the K-block rank tests' class (set where it is defined, no import cycle)
    _rank_tests_type: Any = None

    @property
    def rank_test_table(self) -> Any:
        """The rank tests that chose each block's rank of a ``rank="auto"``
        fit, a :class:`~jdr_stats._kfit.KBlockRankTests` (None when the
        ranks were given: :meth:`rank_tests` computes them)."""
        if self._tables is None:
            return None
        return self._rank_tests_type(self._tables, str(self._settings["influence"]["reason"]))


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
