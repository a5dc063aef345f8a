"""Small objects for hypothesis tests: one test, and a table of tests.

Every test of the package (rank tests, coordinate and support tests, the
baselines' dimension tests) returns one of these, so they print alike.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Literal

import numpy as np
import pandas as pd
from statsmodels.iolib.summary2 import Summary
from statsmodels.stats.multitest import multipletests

from .._export import ExportMixin, clean_keys, records
from ..summary import SummaryMixin, build_summary, json_safe

__all__ = ["TestTable", "bh_qvalues", "fdr_qvalues", "perm_pvalue"]


@dataclass(frozen=True)
class TestTable(ExportMixin, SummaryMixin):
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

    def to_dict(self) -> dict[str, Any]:
        """The tests as plain JSON types: title, method, notes and one record
        per row (each named index level, such as ``k`` or ``block`` and
        ``variable``, as a field; keys without spaces); NaN become ``None``."""
        out: dict[str, Any] = {"title": self.title, "method": self.method,
                               "notes": list(self.notes), "tests": records(self.table)}
        for f in fields(self):  # a subclass's own fields (nobs, rule, ...)
            if f.name not in out and f.name != "table":
                out[f.name] = json_safe(getattr(self, f.name))
        return clean_keys(out)

    def summary(self) -> Summary:
        return build_summary(
            self.title,
            {"Method:": self.method, "Tests:": len(self.table)},
            [(self.table.index.name or "", self.table)],
            self.notes,
        )


_FDR_RULES = {"bh": "fdr_bh", "by": "fdr_by"}


def fdr_qvalues(pvalues: np.ndarray, rule: Literal["bh", "by"] = "bh") -> np.ndarray:
    """Benjamini-Hochberg or Benjamini-Yekutieli q-values, NaN-safe.

    The adjustment is ``statsmodels.stats.multitest.multipletests`` (methods
    ``"fdr_bh"`` and ``"fdr_by"``) applied to the p-values that are not NaN;
    a NaN p-value (an undefined test) gets a NaN q-value, is never selected
    (``q <= fdr`` is False) and does not count among the hypotheses.

    Parameters
    ----------
    pvalues : array_like (k,)
        p-values in [0, 1], or NaN.
    rule : {"bh", "by"}
        Benjamini-Hochberg (independent or positively dependent tests) or
        Benjamini-Yekutieli (any dependence; about ``sum_{i<=k} 1/i`` times
        more conservative).

    Returns
    -------
    ndarray (k,)

    Examples
    --------
    >>> import numpy as np
    >>> from jdr_stats.inference.hypotheses import fdr_qvalues
    >>> fdr_qvalues(np.array([0.01, np.nan, 0.04, 0.5])).round(3).tolist()
    [0.03, nan, 0.06, 0.5]
    """
    if not isinstance(rule, str) or rule not in _FDR_RULES:
        raise ValueError(f"rule must be one of {tuple(_FDR_RULES)}; got {rule!r}")
    p = np.asarray(pvalues, dtype=float).reshape(-1)
    ok = ~np.isnan(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise ValueError("pvalues must lie in [0, 1] (or be NaN)")
    q = np.full(p.shape, np.nan)
    if ok.any():
        q[ok] = multipletests(p[ok], method=_FDR_RULES[rule])[1]
    return q


def bh_qvalues(pvalues: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values), same order as input:
    :func:`fdr_qvalues` with ``rule="bh"``."""
    return fdr_qvalues(pvalues, "bh")


def perm_pvalue(stat: float | np.ndarray, null_stats: np.ndarray) -> np.ndarray:
    """Monte Carlo p-value ``(1 + #{T* >= T}) / (B + 1)`` (STYLE.md, 9).

    ``null_stats`` has the B resampled statistics in its first axis.
    """
    null_stats = np.asarray(null_stats, dtype=float)
    b = null_stats.shape[0]
    return (1.0 + np.sum(null_stats >= np.asarray(stat), axis=0)) / (b + 1.0)
