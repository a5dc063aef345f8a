"""Pairs-bootstrap replicate moments for wide blocks, one replicate at a time.

:class:`~jdr_stats._linalg.ReweightedMoments` forms ``m x width`` per-row
features (``width ~ (n1 + n2)^2 / 2 + 2 n1 n2``) and multiplies them by the
count matrix.  For wide blocks the features cost more than the products,
and two of them (``a b^T`` and ``a y b^T``) are needed only to centre ``y``
at each replicate's mean.  Here each replicate's moments come from the
rows directly:

* ``sum_i c_i (a_i - abar)(a_i - abar)^T = A_c^T A_c + sum_i (c_i - 1) a_i a_i^T``,
  the first term once (double precision), the deviation only over the rows
  with ``c_i != 1`` (about 63% of them), as two single-precision rank
  updates (``c_i >= 2`` and ``c_i = 0``); likewise for ``b``;
* with ``w_i = c_i (y_i - ybar_c)`` (which sums to zero),
  ``sum_i c_i (a_i - abar_c)(y_i - ybar_c)(b_i - bbar_c)^T
  = sum_i w_i a_i b_i^T - (sum_i w_i a_i) db^T - da (sum_i w_i b_i)^T``
  and ``sum_i w_i a_i b_i^T = S_aby - dy S_ab + sum_i (c_i - 1)(y_i - dy) a_i b_i^T``
  (full-sample parts once, the deviation over the rows with ``c_i != 1``,
  single precision).

All with the rows centred at the full-sample means (``da``, ``db``, ``dy``
the replicate's shifts).  As in ``ReweightedMoments``, only the resampling
deviations carry single-precision rounding (relative error about 1e-7 of
them).  Flops per replicate about ``0.63 m (n1^2 / 2 + n2^2 / 2 + n1 n2) * 2``
in single precision, against ``2 m width`` for the feature product; no
``m x width`` features.
"""

from __future__ import annotations

import numpy as np
from scipy.linalg import blas

from .._linalg import BlockMoments, ReweightedMoments

__all__ = ["DirectMoments"]


class DirectMoments:
    """Replicate moments of an unweighted model from integer resampling weights
    (pairs counts, or the ladle's Poisson(1) weights; divisor: their sum)."""

    def __init__(self, y: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        self.m = y.shape[0]
        self.n1, self.n2 = a.shape[1], b.shape[1]
        self.ybar, self.abar, self.bbar = float(y.mean()), a.mean(axis=0), b.mean(axis=0)
        self.yc = y - self.ybar
        self.ac = a - self.abar
        self.bc = b - self.bbar
        self.ac32 = self.ac.astype(np.float32)
        self.bc32 = self.bc.astype(np.float32)
        self.saa = self.ac.T @ self.ac
        self.sbb = self.bc.T @ self.bc
        self.sab = self.ac.T @ self.bc
        self.saby = self.ac.T @ (self.yc[:, None] * self.bc)
        self.scale_a = np.ptp(a, axis=0) ** 2
        self.scale_b = np.ptp(b, axis=0) ** 2

    @staticmethod
    def _dev_gram(x32: np.ndarray, d: np.ndarray) -> np.ndarray:
        """``sum_i d_i x_i x_i^T`` for integer ``d_i >= -1`` (``d = c - 1``), by two
        single-precision rank updates (``ssyrk``), symmetrised, in double."""
        n = x32.shape[1]
        out = np.zeros((n, n))
        pos = np.flatnonzero(d > 0)
        if pos.size:
            xs = x32[pos] * np.sqrt(d[pos]).astype(np.float32)[:, None]
            out += blas.ssyrk(1.0, xs, trans=1, lower=0)
        neg = np.flatnonzero(d < 0)
        if neg.size:
            out -= blas.ssyrk(1.0, x32[neg], trans=1, lower=0)
        return np.triu(out) + np.triu(out, 1).T

    def moments(self, counts: np.ndarray) -> list[BlockMoments]:
        """BlockMoments of each replicate (rows of ``counts``)."""
        out = []
        for c in counts:
            m = float(c.sum())  # the replicate's total weight (m for the pairs bootstrap)
            d = c - 1.0
            dy = float(c @ self.yc) / m
            da = (c @ self.ac) / m
            db = (c @ self.bc) / m
            var_y = float(c @ (self.yc * self.yc)) / m - dy * dy
            cov_a = (self.saa + self._dev_gram(self.ac32, d)) / m - np.outer(da, da)
            cov_b = (self.sbb + self._dev_gram(self.bc32, d)) / m - np.outer(db, db)
            for cov, scale in ((cov_a, self.scale_a), (cov_b, self.scale_b)):
                ReweightedMoments._zero_constant(cov[None], scale)
            sel = np.flatnonzero(d)
            wd = (d[sel] * (self.yc[sel] - dy)).astype(np.float32)
            dev = (self.ac32[sel] * wd[:, None]).T @ self.bc32[sel]
            swab = self.saby - dy * self.sab + dev
            wy = c * (self.yc - dy)
            cross = swab - np.outer(wy @ self.ac, db) - np.outer(da, wy @ self.bc)
            out.append(BlockMoments(
                nobs=self.m, mean_y=self.ybar + dy, var_y=var_y, mean_a=self.abar + da,
                mean_b=self.bbar + db, cov_a=cov_a, cov_b=cov_b, cross=cross / m,
            ))
        return out
