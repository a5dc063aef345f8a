"""Covariates on streamed rows: a row source residualised on ``[1, Z]``, in two passes.

The in-memory model residualises the response and the blocks on the
covariates before anything else (:func:`jdr_stats._responses.residualize`).
A stream cannot hold the rows, but the least squares coefficients are
second-order sums: one pass of :class:`~jdr_stats.Moments` over a base
source whose block b carries the covariate columns last gives
``B_x = S_xz S_zz^{-1}`` for every variable ``x``; :class:`AdjustedSource`
then yields each chunk residualised, ``x - xbar - (z - zbar) B_x^T``, so
every later pass (the moments, the robust rank tests' sums) sees the same
rows as the in-memory model.  Covariates must be numeric columns (code a
categorical covariate as indicator columns).
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from ._responses import Adjustment
from .exceptions import CovariateWarning
from .moments import Moments, whitening_of_covariance

__all__ = ["AdjustedSource", "adjust_source"]


class AdjustedSource:
    """A row source yielding the chunks of ``base`` residualised on ``[1, Z]``.

    ``base`` yields ``(y, a, [b | z])`` with the ``p`` covariate columns last
    in block b; this source yields ``(y_r, a_r, b_r)``.
    """

    def __init__(self, base: Any, n2: int, means: tuple[np.ndarray, ...],
                 coefs: tuple[np.ndarray, ...], keep: np.ndarray) -> None:
        self.base = base
        self.n2 = n2
        self.means = means  # y, a, b, z
        self.coefs = coefs  # y (p,), a (n1, p), b (n2, p) on the kept z columns
        self.keep = keep
        self.nobs = base.nobs
        self.endog_name = base.endog_name
        self.names_a = list(base.names_a)
        self.names_b = list(base.names_b)[:n2]
        self.batch_rows = getattr(base, "batch_rows", None)

    weighted = False  # covariates on a stream: no case weights (refused before)

    def iter_weighted_chunks(self, batch_rows: int | None = None
                             ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, None]]:
        for y, a, b in self.iter_chunks(batch_rows):
            yield y, a, b, None

    def iter_chunks(self, batch_rows: int | None = None
                    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        my, ma, mb, mz = self.means
        cy, ca, cb = self.coefs
        for y, a, bz in self.base.iter_chunks(batch_rows):
            zc = np.asarray(bz[:, self.n2:], dtype=float)[:, self.keep] - mz
            yield (y - my - zc @ cy, a - ma - zc @ ca.T,
                   np.asarray(bz[:, :self.n2], dtype=float) - mb - zc @ cb.T)


def adjust_source(base: Any, znames: Sequence[str]) -> tuple[AdjustedSource, Adjustment]:
    """One pass over ``base`` for the coefficients; the adjusted source.

    Covariate columns collinear with the others (or constant) are dropped
    with a :class:`CovariateWarning`, as in memory.
    """
    p = len(znames)
    mom = Moments.from_source(base)
    n2 = mom.n2 - p
    w = mom.weight
    szz = mom.m2_b[n2:, n2:] / w
    sd = np.sqrt(np.clip(np.diag(szz), 0.0, None))
    live = np.flatnonzero(sd > 1e-12 * max(float(np.abs(mom.mean_b[n2:]).max()), 1e-300))
    keep = live[whitening_of_covariance(szz[np.ix_(live, live)])[0]] if live.size else live
    dropped = [znames[j] for j in range(p) if j not in set(keep.tolist())]
    if dropped:
        warnings.warn(f"covariates column(s) {dropped} are constant or collinear with the "
                      "other covariates and the intercept; dropped", CovariateWarning,
                      stacklevel=3)
    inv = np.linalg.inv(szz[np.ix_(keep, keep)])
    zk = n2 + keep
    coefs = (mom.m2_by[zk] / w @ inv, mom.m2_ab[:, zk] / w @ inv, mom.m2_b[:n2, zk] / w @ inv)
    means = (mom.mean_y, mom.mean_a, mom.mean_b[:n2], mom.mean_b[zk])
    src = AdjustedSource(base, n2, means, coefs, keep)
    return src, Adjustment(names=tuple(znames[int(j)] for j in keep), dropped=tuple(dropped))
