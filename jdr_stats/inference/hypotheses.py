"""Small objects for hypothesis tests: one test, and a table of tests.

Every test of the package (rank tests, coordinate and support tests, the
baselines' dimension tests) returns one of these, so they print alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from statsmodels.iolib.summary2 import Summary

from ..summary import SummaryMixin, build_summary

__all__ = ["TestTable", "bh_qvalues", "perm_pvalue"]


@dataclass(frozen=True)
class TestTable(SummaryMixin):
    """A sequence of tests as a DataFrame plus a summary.

    Attributes
    ----------
    table : DataFrame
        One row per null hypothesis.
    title : str
    method : str
    notes : list of str
        Null hypothesis, method and assumptions, printed under the table.
    """

    __test__ = False

    table: pd.DataFrame
    title: str
    method: str
    notes: list[str] = field(default_factory=list)

    def summary(self) -> Summary:
        return build_summary(
            self.title,
            {"Method:": self.method, "Tests:": len(self.table)},
            [(self.table.index.name or "", self.table)],
            self.notes,
        )


def bh_qvalues(pvalues: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values), same order as input.

    ``statsmodels.stats.multitest.multipletests(method="fdr_bh")`` on the
    p-values that are not NaN; a NaN p-value gets a NaN q-value and does not
    count among the hypotheses.
    """
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(pvalues, dtype=float).reshape(-1)
    q = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        q[ok] = multipletests(p[ok], method="fdr_bh")[1]
    return q


def perm_pvalue(stat: float | np.ndarray, null_stats: np.ndarray) -> np.ndarray:
    """Monte Carlo p-value ``(1 + #{T* >= T}) / (B + 1)`` (STYLE.md, 9).

    ``null_stats`` has the B resampled statistics in its first axis.
    """
    null_stats = np.asarray(null_stats, dtype=float)
    b = null_stats.shape[0]
    return (1.0 + np.sum(null_stats >= np.asarray(stat), axis=0)) / (b + 1.0)
