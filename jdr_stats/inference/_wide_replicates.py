"""Pairs-bootstrap replicate moments for wide blocks, one replicate at a time.

:class:`~jdr_stats.core._reweighted.ReweightedMoments` forms ``m x width`` per-row
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

from collections.abc import Iterator

import numpy as np

from .. import config
from ..core._linalg import BlockMoments, ReweightedMoments
from ..runtime._lazy import blas

__all__ = ["DirectMoments"]


class DirectMoments:
    """Replicate moments of an unweighted model from integer resampling weights
    (pairs counts, or the ladle's Poisson(1) weights; divisor: their sum)."""

    def __init__(self, y: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        self.m = y.shape[0]
        self.n1, self.n2 = a.shape[1], b.shape[1]
        self.ybar, self.abar, self.bbar = float(y.mean()), a.mean(axis=0), b.mean(axis=0)
        self.yc = y - self.ybar
        # the rows are kept as given (no centred double-precision copy: at
        # 1000 + 1000 variables and m = 1e5 that is 1.6 GB); centred blocks of
        # rows are formed when needed, and once in single precision
        self.a, self.b = a, b
        self.ac32 = np.empty(a.shape, dtype=np.float32)
        self.bc32 = np.empty(b.shape, dtype=np.float32)
        self.saa = np.zeros((self.n1, self.n1))
        self.sbb = np.zeros((self.n2, self.n2))
        self.sab = np.zeros((self.n1, self.n2))
        self.saby = np.zeros((self.n1, self.n2))
        for sl, ac, bc in self._centred():
            self.ac32[sl], self.bc32[sl] = ac, bc
            self.saa += ac.T @ ac
            self.sbb += bc.T @ bc
            self.sab += ac.T @ bc
            self.saby += ac.T @ (self.yc[sl, None] * bc)
        self.scale_a = np.ptp(a, axis=0) ** 2
        self.scale_b = np.ptp(b, axis=0) ** 2

    def _centred(self) -> Iterator[tuple[slice, np.ndarray, np.ndarray]]:
        """Blocks of rows ``(slice, a - abar, b - bbar)`` (about 32 MB each)."""
        step = max(1, config.CHUNK_FLOATS // (self.n1 + self.n2))
        for start in range(0, self.m, step):
            sl = slice(start, start + step)
            yield sl, self.a[sl] - self.abar, self.b[sl] - self.bbar

    def _products(self, c: np.ndarray, wy: np.ndarray) -> tuple[np.ndarray, ...]:
        """``c @ ac``, ``c @ bc``, ``wy @ ac``, ``wy @ bc`` over blocks of centred rows."""
        ca, cb = np.zeros(self.n1), np.zeros(self.n2)
        wa, wb = np.zeros(self.n1), np.zeros(self.n2)
        for sl, ac, bc in self._centred():
            ca += c[sl] @ ac
            cb += c[sl] @ bc
            wa += wy[sl] @ ac
            wb += wy[sl] @ bc
        return ca, cb, wa, wb

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
            wy = c * (self.yc - dy)
            ca, cb, wya, wyb = self._products(c, wy)
            da, db = ca / m, cb / m
            var_y = float(c @ (self.yc * self.yc)) / m - dy * dy
            cov_a = (self.saa + self._dev_gram(self.ac32, d)) / m - np.outer(da, da)
            cov_b = (self.sbb + self._dev_gram(self.bc32, d)) / m - np.outer(db, db)
            for cov, scale in ((cov_a, self.scale_a), (cov_b, self.scale_b)):
                ReweightedMoments._zero_constant(cov[None], scale)
            sel = np.flatnonzero(d)
            wd = (d[sel] * (self.yc[sel] - dy)).astype(np.float32)
            dev = (self.ac32[sel] * wd[:, None]).T @ self.bc32[sel]
            swab = self.saby - dy * self.sab + dev
            cross = swab - np.outer(wya, db) - np.outer(da, wyb)
            out.append(BlockMoments(
                nobs=self.m, mean_y=self.ybar + dy, var_y=var_y, mean_a=self.abar + da,
                mean_b=self.bbar + db, cov_a=cov_a, cov_b=cov_b, cross=cross / m,
            ))
        return out
