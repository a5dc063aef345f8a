"""Weighted chi-square reference distributions and the test tables of the
baselines (marginal dimension tests, coordinate tests of Cook 2004)."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from ..core._linalg import Whitening
from ..inference.chi2mix import bentler_xie_pvalue, wood_pvalue
from ..inference.hypotheses import TestResult, TestTable
from ..runtime._lazy import stats

__all__ = [
    "chi2_sf",
    "weighted_chi2_pvalue",
    "cov_of_products",
    "DimensionTests",
    "CoordinateTest",
    "dim_row_labels",
    "coordinate_bases",
]


# ---------------------------------------------------------------------------
# reference distributions
# ---------------------------------------------------------------------------
def chi2_sf(stat: npt.ArrayLike, df: npt.ArrayLike) -> np.ndarray:
    """Chi-square upper tail; NaN where ``df <= 0`` (no test exists)."""
    stat = np.asarray(stat, dtype=float)
    df = np.asarray(df, dtype=float)
    out = np.full(np.broadcast(stat, df).shape, np.nan)
    ok = df > 0
    out[ok] = stats.chi2.sf(np.broadcast_to(stat, out.shape)[ok], df[ok])
    return out


def weighted_chi2_pvalue(coef: np.ndarray, stat: float, method: str) -> float:
    """``P(sum c_j chi2_1 > stat)`` by ``"bx"`` or ``"wood"``."""
    if method == "wood":
        return wood_pvalue(coef, stat)
    return bentler_xie_pvalue(coef, stat)


def cov_of_products(
    u: np.ndarray,
    v: np.ndarray,
    w: np.ndarray | None,
    *,
    ddof: int,
    mult: np.ndarray | None = None,
    pairs: tuple[np.ndarray, np.ndarray] | None = None,
    shift: np.ndarray | None = None,
    scale: np.ndarray | None = None,
    chunk: int = 4096,
) -> np.ndarray:
    """Covariance of the per-row vectors ``g_i = mult_i vec(u_i v_i^T)``.

    With ``pairs = (ia, ib)`` only the entries ``u_i[ia] * v_i[ib]`` are used;
    ``shift`` is subtracted from and ``scale`` multiplies each entry before
    ``mult``.  Accumulated in row chunks so the n x q matrix of products is
    never held.
    """
    n = u.shape[0]
    if pairs is None:
        ia = np.repeat(np.arange(u.shape[1]), v.shape[1])
        ib = np.tile(np.arange(v.shape[1]), u.shape[1])
    else:
        ia, ib = pairs
    q = ia.shape[0]
    total = float(n) if w is None else float(w.sum())

    def block(start: int, stop: int) -> np.ndarray:
        g = u[start:stop, ia] * v[start:stop, ib]
        if shift is not None:
            g -= shift
        if scale is not None:
            g *= scale
        if mult is not None:
            g *= mult[start:stop, None]
        return g

    s1 = np.zeros(q)
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        g = block(start, stop)
        s1 += g.sum(axis=0) if w is None else w[start:stop] @ g
    mean = s1 / total
    s2 = np.zeros((q, q))
    for start in range(0, n, chunk):  # second pass: centred products
        stop = min(start + chunk, n)
        g = block(start, stop) - mean
        s2 += g.T @ g if w is None else (g * w[start:stop, None]).T @ g
    cov = s2 / (total - ddof)
    return (cov + cov.T) / 2


# ---------------------------------------------------------------------------
# test tables
# ---------------------------------------------------------------------------
class DimensionTests(TestTable):
    """Marginal dimension tests: the tests of ``dr.test``, plus a summary.

    ``table`` has one row per null hypothesis ``"kD vs >= (k+1)D"`` and the
    columns ``statistic``, ``df``, ``pvalue`` (``dr``'s ``Stat``, ``df``,
    ``p.value``; its first reference distribution), then those of the
    method's other references (``pvalue_general``, ...), declared in
    ``pvalue_columns``.
    """

    __test__ = False


class CoordinateTest(TestTable):
    """A coordinate test (Cook 2004) as a one-row table, plus :attr:`statistic`
    and :attr:`pvalue` of the default reference distribution (the table's
    ``statistic`` and ``pvalue`` columns) and :meth:`result`, the same as a
    :class:`~jdr_stats.inference.hypotheses.TestResult`."""

    __test__ = False

    @property
    def statistic(self) -> float:
        return float(self.table["statistic"].iloc[0])

    @property
    def stat(self) -> float:
        """Alias of :attr:`statistic` (kept for compatibility)."""
        return self.statistic

    @property
    def pvalue(self) -> float:
        return float(self.table["pvalue"].iloc[0])

    def result(self, row: Any = None) -> TestResult:
        """The test with the default reference as a :class:`TestResult`
        (``row``: the only row, ``"Test"``)."""
        if row is not None and row not in self.table.index:
            raise KeyError(f"row must be one of {list(self.table.index)}; got {row!r}")
        df = float(self.table["df"].iloc[0])
        return TestResult(
            statistic=self.statistic, df=None if np.isnan(df) else df, pvalue=self.pvalue,
            null=self.notes[0].removeprefix("H0: ") if self.notes else "",
            distribution="weighted chi2" if np.isnan(df) else f"chi2({df:g})",
            method=self.method, name=self.title,
        )


def dim_row_labels(k: int) -> list[str]:
    return [f"{m}D vs >= {m + 1}D" for m in range(k)]


# ---------------------------------------------------------------------------
# coordinate hypotheses (Cook 2004)
# ---------------------------------------------------------------------------
def coordinate_bases(
    std: Whitening, names: list[str], drop: Any
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """z-scale bases of the hypothesis ``span(beta) in span(gamma)``.

    ``gamma`` holds the columns of the identity for the kept predictors.  In
    z-coordinates (``beta = L^{-T} v``) the hypothesis is
    ``span(v) in span(L^T gamma)``; returns an orthonormal basis ``QH`` of
    ``span(L^T gamma)``, one ``H`` of its orthogonal complement (p x r,
    r = number dropped) and the dropped names.
    """
    p = len(names)
    if isinstance(drop, (str, int, np.integer)):
        drop = [drop]
    try:
        items = list(drop)
    except TypeError:
        raise TypeError(
            f"drop must be a list of predictor names or column indices; got {drop!r}"
        ) from None
    idx: list[int] = []
    for it in items:
        if isinstance(it, str):
            if it not in names:
                raise ValueError(f"drop: {it!r} is not a predictor; predictors are {names}")
            idx.append(names.index(it))
        elif isinstance(it, (int, np.integer)) and not isinstance(it, bool):
            if not 0 <= it < p:
                raise ValueError(f"drop: column index {it} out of range 0..{p - 1}")
            idx.append(int(it))
        else:
            raise TypeError(f"drop entries must be names or integer indices; got {it!r}")
    if not idx:
        raise ValueError("drop must name at least one predictor; got an empty list")
    if len(set(idx)) != len(idx):
        raise ValueError(f"drop lists a predictor twice: {items}")
    if len(idx) >= p:
        raise ValueError(f"drop must leave at least one predictor; got all {p}")
    keep = [j for j in range(p) if j not in idx]
    basis = std.chol.T[:, keep]  # L^T gamma
    q, _ = np.linalg.qr(basis, mode="complete")
    k = len(keep)
    return q[:, :k], q[:, k:], [names[j] for j in idx]
