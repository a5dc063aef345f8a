"""R^2-type fit measures of the joint model (``docs/theory/estimator.md``,
"How much of y the reduction explains").

The joint model says that ``E[y | a, b] = f(U^T a, V^T b)``.  The 2r reduced
features ``f_a = U^T a`` and ``f_b = V^T b`` are therefore all a regression
of ``y`` needs; the measures below fit the simplest flexible regression that
matches the estimator, the *bilinear* one (what the cross moment
``E[a y b^T]`` sees): ``y`` on ``1``, ``f_a``, ``f_b`` and the ``r^2``
products ``f_aj f_bk``.

* :attr:`FitMeasures.rsquared`: the R^2 of that regression on the 2r
  estimated features (``r^2 + 2r`` regressors);
* :attr:`FitMeasures.rsquared_full`: the R^2 of the same bilinear regression
  on all the variables (``1, a, b`` and the ``n1 n2`` products ``a_j b_k``);
  None when it has too many regressors for the rows (see
  :data:`MAX_FULL_COLUMNS`);
* :attr:`FitMeasures.rsquared_ratio`: the squared correlation between the
  fitted values of the two regressions.  The first regression is nested in
  the second (each feature is affine in its block), so the ratio equals
  ``rsquared / rsquared_full``: the share of what the bilinear regression on
  all variables explains that the 2r features keep, the analogue of the R
  package dr's ``R^2(OLS | dr)``.

A response of ``q > 1`` columns (class indicators, several responses): each
R^2 is the multivariate regression's Pillai trace over ``q``, the average
R^2 of the whitened response columns (``docs/theory/responses.md``); the
ratio is then ``rsquared / rsquared_full`` (the regressions are nested).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .core.moments import column_scales

__all__ = ["FitMeasures", "MAX_FULL_COLUMNS", "bilinear_design", "block_fit_measures",
           "fit_measures", "pairwise_design"]

#: The full bilinear regression is computed only with at most this many
#: regressors and at least five rows per regressor (it costs O(m p^2)).
MAX_FULL_COLUMNS = 600


@dataclass(frozen=True)
class FitMeasures:
    """R^2 of the bilinear regression of y on the reduced features and on all
    variables (see the module docstring)."""

    rsquared: float
    rsquared_adj: float
    n_regressors: int
    rsquared_full: float | None
    rsquared_full_adj: float | None
    n_regressors_full: int
    rsquared_ratio: float | None

    def to_dict(self) -> dict[str, Any]:
        """The measures as plain floats (None where not computed)."""
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def bilinear_design(fa: np.ndarray, fb: np.ndarray) -> np.ndarray:
    """Columns ``f_a``, ``f_b`` and every product ``f_aj f_bk`` (no intercept)."""
    return pairwise_design([fa, fb])


def pairwise_design(features: Sequence[np.ndarray]) -> np.ndarray:
    """Columns of every block's features ``f_1, ..., f_K`` (in block order),
    then, for every pair of blocks ``j < k`` (in the order ``(1, 2), (1, 3),
    ..., (K-1, K)``), every product ``f_ji f_kl`` (no intercept): the design
    of what the pairwise cross moments see.  For two blocks it is
    :func:`bilinear_design`."""
    feats = [np.asarray(f, dtype=float) for f in features]
    m = feats[0].shape[0]
    prods = [(feats[j][:, :, None] * feats[k][:, None, :]).reshape(m, -1)
             for j in range(len(feats)) for k in range(j + 1, len(feats))]
    return np.hstack([*feats, *prods])


class _Gram:
    """Weighted cross products of ``[x, y]`` summed over chunks of rows,
    shifted by the first chunk's means (so that large means do not cancel)."""

    def __init__(self) -> None:
        self.n = 0.0
        self.shift: np.ndarray | None = None
        self.s = np.zeros(0)
        self.ss = np.zeros((0, 0))

    def add(self, xy: np.ndarray, w: np.ndarray | None) -> None:
        w = np.ones(xy.shape[0]) if w is None else w
        if self.shift is None:
            self.shift = w @ xy / w.sum()
            self.s = np.zeros(xy.shape[1])
            self.ss = np.zeros((xy.shape[1], xy.shape[1]))
        d = xy - self.shift
        self.n += float(w.sum())
        self.s += w @ d
        self.ss += (d * w[:, None]).T @ d

    def rsquared(self, q: int = 1) -> tuple[float, float]:
        """R^2 and adjusted R^2 of y (last column) on an intercept and the rest;
        for ``q > 1`` response columns (the last ``q``), Pillai's trace over
        ``q`` (:func:`_pillai`)."""
        c = self.ss - np.outer(self.s, self.s) / self.n  # centred cross products
        if q > 1:
            return _pillai(c, q, self.n)
        cxx, cxy, cyy = c[:-1, :-1], c[:-1, -1], float(c[-1, -1])
        # unit-free: the regressors' correlation matrix (a constant column drops)
        sd = np.sqrt(np.clip(np.diag(cxx), 0.0, None))
        sd = np.where(sd > 0, sd, np.inf)
        cxx, cxy = cxx / np.outer(sd, sd), cxy / sd
        vals, vecs = np.linalg.eigh(cxx)
        keep = vals > max(vals.max(), 0.0) * 1e-12 * len(vals) if len(vals) else vals > 0
        proj = vecs[:, keep].T @ cxy
        explained = float(proj @ (proj / vals[keep]))
        r2 = explained / cyy if cyy > 0 else float("nan")
        dof = self.n - int(keep.sum()) - 1
        r2_adj = 1.0 - (1.0 - r2) * (self.n - 1) / dof if dof > 0 else float("nan")
        return r2, r2_adj


def _pillai(c: np.ndarray, q: int, n: float) -> tuple[float, float]:
    """``V / q`` with Pillai's trace ``V = tr(C_yy^{-1} C_yx C_xx^+ C_xy)`` of the
    last ``q`` columns of the centred cross products ``c`` on the others, and
    its adjusted form ``1 - (1 - V/q)(n - 1)/(n - p - 1)``.

    ``V`` is the sum of the squared canonical correlations between the
    responses and the regressors, and the sum of the R^2 of the whitened
    responses: ``V / q`` is their average R^2 (the R^2 itself for ``q = 1``),
    invariant to any invertible recoding of the response columns.
    """
    cxx, cxy, cyy = c[:-q, :-q], c[:-q, -q:], c[-q:, -q:]
    sd = np.sqrt(np.clip(np.diag(cxx), 0.0, None))
    sd = np.where(sd > 0, sd, np.inf)
    cxx, cxy = cxx / np.outer(sd, sd), cxy / sd[:, None]
    vals, vecs = np.linalg.eigh(cxx)
    keep = vals > max(vals.max(), 0.0) * 1e-12 * len(vals)
    proj = vecs[:, keep].T @ cxy
    explained = proj.T @ (proj / vals[keep][:, None])
    r2 = float(np.trace(np.linalg.solve(cyy, explained))) / q
    dof = n - int(keep.sum()) - 1
    r2_adj = 1.0 - (1.0 - r2) * (n - 1) / dof if dof > 0 else float("nan")
    return r2, r2_adj


Chunks = Iterable[tuple[np.ndarray, np.ndarray, np.ndarray, "np.ndarray | None"]]
BlockChunks = Iterable[tuple[np.ndarray, Sequence[np.ndarray], "np.ndarray | None"]]


def fit_measures(
    chunks: Chunks,
    directions_a: np.ndarray,
    directions_b: np.ndarray,
    *,
    nobs: int,
) -> FitMeasures:
    """The measures of :class:`FitMeasures` from ``(y, a, b, w)`` chunks of
    rows (one chunk for data in memory; a row source's chunks when streamed)
    and the fitted bases (``n1 x r``, ``n2 x r``): one pass, the normal
    equations of both regressions summed chunk by chunk (two blocks of
    :func:`block_fit_measures`).

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> from jdr_stats.fit_measures import fit_measures
    >>> sim = jdr.simulate.bilinear(2000, 4, 3, 1, seed=0)
    >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    >>> fm = fit_measures([(sim.y, sim.a, sim.b, None)], res.directions_a,
    ...                   res.directions_b, nobs=2000)
    >>> bool(0 < fm.rsquared <= fm.rsquared_full + 1e-12)
    True
    """
    return block_fit_measures(((y, (a, b), w) for y, a, b, w in chunks),
                              [directions_a, directions_b], nobs=nobs)


def block_fit_measures(
    chunks: BlockChunks,
    bases: Sequence[np.ndarray],
    *,
    nobs: int,
) -> FitMeasures:
    """The measures of :class:`FitMeasures` over K blocks, from
    ``(y, [x_1, ..., x_K], w)`` chunks of rows and the fitted bases
    ``U_k`` (``n_k x r_k``, one per block, in block order).

    The reduced regression is of ``y`` on an intercept, every block's
    features ``f_k = x_k U_k`` and, for every pair of blocks ``j < k``,
    the ``r_j r_k`` products ``f_ji f_kl`` (:func:`pairwise_design`:
    ``sum_k r_k + sum_{j<k} r_j r_k`` regressors, what the pairwise cross
    moments see; the K-way products are not included).  The full one is the
    same design on all the variables (``x_k`` for ``U_k``:
    ``sum_k n_k + sum_{j<k} n_j n_k`` regressors), computed when it has at
    most :data:`MAX_FULL_COLUMNS` regressors and five rows per regressor.
    For two blocks this is the bilinear regression of :func:`fit_measures`.
    """
    us = [np.asarray(u, dtype=float) for u in bases]
    widths = [u.shape[0] for u in us]
    ranks = [u.shape[1] for u in us]
    p_full = sum(widths) + sum(widths[j] * widths[k] for j in range(len(widths))
                               for k in range(j + 1, len(widths)))
    with_full = p_full <= MAX_FULL_COLUMNS and nobs >= 5 * (p_full + 1)
    red, full = _Gram(), _Gram()
    q = 1
    scales: list[np.ndarray | None] | None = None
    feature_scales: tuple[np.ndarray | None] | None = None
    y_scale: np.ndarray | None = None
    cuts = np.cumsum(ranks)[:-1]
    for y, blocks, w in chunks:
        y = np.asarray(y, dtype=float)
        y = y[:, None] if y.ndim == 1 else y  # q > 1: the response matrix
        q = y.shape[1]
        feats = [x @ u for x, u in zip(blocks, us, strict=True)]
        if feature_scales is None:  # R^2 is unit-free: features of extreme units scaled
            feature_scales = (column_scales(tuple(feats)),)
            y_scale = column_scales((y,))  # and a response of extreme units
        if y_scale is not None:
            y = y * y_scale
        if feature_scales[0] is not None:
            feats = [f * sc for f, sc in zip(feats, np.split(feature_scales[0], cuts),
                                             strict=True)]
        red.add(np.hstack([pairwise_design(feats), y]), w)
        if with_full:
            if scales is None:  # extreme units: power-of-two column scales (R^2 unit-free)
                scales = [column_scales((x,)) for x in blocks]
            xs = [x if sc is None else np.asarray(x, float) * sc
                  for x, sc in zip(blocks, scales, strict=True)]
            full.add(np.hstack([pairwise_design(xs), y]), w)
    r2, r2_adj = red.rsquared(q)
    r2f, r2f_adj = full.rsquared(q) if with_full else (None, None)
    # nested regressions: corr^2 of the two fitted values = R^2 / R^2_full
    ratio = None if not r2f else r2 / r2f
    return FitMeasures(
        rsquared=r2, rsquared_adj=r2_adj, n_regressors=red.ss.shape[0] - q,
        rsquared_full=r2f, rsquared_full_adj=r2f_adj, n_regressors_full=p_full,
        rsquared_ratio=ratio,
    )
