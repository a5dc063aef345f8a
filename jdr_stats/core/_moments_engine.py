"""The two-block view of the moments engine.

The rows are reduced by the K-block core (:mod:`jdr_stats.core.moments`:
two passes per chunk, exact merges; derivation in
docs/theory/large_data.md); this module reads its state for a design of two
blocks and one response column as :class:`CentredSums` (:func:`pair_view`,
views, no copies) and turns it into the averages the two-block estimator
takes (:class:`BlockMoments`).  The estimator's :func:`block_moments` and the
public :class:`jdr_stats.Moments` (streamed chunks, dask partitions,
``m1 + m2``) both run it.

:func:`one_pass_block_moments` is the per-block estimator's route for rows in
memory: the same averages in one pass over the rows, without the merges of
slices and so without the co-moment between the blocks, which only the
merges and :class:`jdr_stats.Moments` need.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple, overload

import numpy as np

from .. import config
from . import moments as core
from .design import BlockDesign

__all__ = [
    "BlockMoments",
    "CentredSums",
    "block_moments",
    "empty_sums",
    "design_sums",
    "merge_pair",
    "one_pass_block_moments",
    "pair_view",
    "response_block_moments",
    "sums_to_block_moments",
]


@dataclass(frozen=True)
class BlockMoments:
    """Sufficient statistics of a two-block fit (divisor: the total weight).

    With normalised weights ``w_i`` (sum 1; ``1/m`` without weights),
    ``cov_a = sum w_i (a_i - mean_a)(a_i - mean_a)^T``, likewise ``cov_b``, and
    ``cross = sum w_i (a_i - mean_a) (y_i - mean_y) (b_i - mean_b)^T``, the
    centred cross moment ``S`` of the theory page.  ``var_y`` is
    ``sum w_i (y_i - mean_y)^2``.  ``has_covariances`` is False when the
    block covariances were skipped (``block_moments(covariances=False)``;
    ``cov_a`` and ``cov_b`` then hold NaN and must not be used).
    """

    nobs: int
    mean_y: float
    var_y: float
    mean_a: np.ndarray
    mean_b: np.ndarray
    cov_a: np.ndarray
    cov_b: np.ndarray
    cross: np.ndarray
    has_covariances: bool = True
    #: ``(q, n1, n2)``: the centred cross moment of each response column, for a
    #: response of ``q > 1`` (whitened) columns; ``cross`` is then the first one's
    cross_q: np.ndarray | None = None
    #: power-of-two column scales of each block: the moments are those of the
    #: original columns times the scale (a fit of extreme units); None: unit
    scale_a: np.ndarray | None = None
    scale_b: np.ndarray | None = None

    @property
    def q(self) -> int:
        """Number of response columns (1 unless ``cross_q`` is set)."""
        return 1 if self.cross_q is None else int(self.cross_q.shape[0])


class CentredSums(NamedTuple):
    """Centred sums of one part of the rows: the state of the moments engine.

    ``weight`` is the total weight ``W`` (the number of rows without
    weights); the means are weighted; ``m2_*`` are centred co-moment sums
    (``m2_ab = sum_i w_i (a_i - abar)(b_i - bbar)^T``, ...) and ``m3_ayb`` the
    y-weighted cross co-moment ``sum_i w_i (a_i - abar)(y_i - ybar)(b_i - bbar)^T``;
    ``m3_aya`` and ``m3_byb`` the within-block ones (``(a_i - abar)(y_i -
    ybar)(a_i - abar)^T``, likewise for ``b``: the joint estimator's residual
    moments), None when not reduced (both or neither).  Two parts merge
    exactly (:func:`merge_pair`); :class:`jdr_stats.Moments` is this state
    with names and the public arithmetic.
    """

    nobs: int
    weight: float
    mean_y: float
    mean_a: np.ndarray
    mean_b: np.ndarray
    m2_y: float
    m2_a: np.ndarray
    m2_b: np.ndarray
    m2_ab: np.ndarray
    m2_ay: np.ndarray
    m2_by: np.ndarray
    m3_ayb: np.ndarray
    m3_aya: np.ndarray | None = None
    m3_byb: np.ndarray | None = None

    @property
    def within(self) -> bool:
        """Whether the within-block moments ``m3_aya``, ``m3_byb`` are held."""
        return self.m3_aya is not None and self.m3_byb is not None


def empty_sums(n1: int, n2: int, nobs: int = 0) -> CentredSums:
    """The sums of no weight (``nobs`` rows of weight zero)."""
    return pair_view(core.empty_sums(BlockDesign.of((n1, n2)), nobs))


@overload
def pair_view(t: core.DesignSums) -> CentredSums: ...
@overload
def pair_view(t: None) -> None: ...
def pair_view(t: core.DesignSums | None) -> CentredSums | None:
    """The two-block state of the core's sums of two blocks and one response
    column (views, no copies); None stays None (a chunk that was not finite).
    The within-block moments are read when the core reduced them
    (``within=True``: pairs (0, 0) and (1, 1))."""
    if t is None:
        return None
    a, b = t.design.span(0), t.design.span(1)
    within = (0, 0) in t.m3 and (1, 1) in t.m3
    return CentredSums(t.nobs, t.weight, float(t.mean_y[0]), t.mean_x[a], t.mean_x[b],
                       float(t.m2_yy[0, 0]), t.m2_xx[a, a], t.m2_xx[b, b], t.m2_xx[a, b],
                       t.m2_xy[a, 0], t.m2_xy[b, 0], t.m3[(0, 1)][0],
                       t.m3[(0, 0)][0] if within else None,
                       t.m3[(1, 1)][0] if within else None)


def design_sums(t: CentredSums) -> core.DesignSums:
    """The core's sums of the two-block state ``t`` (the inverse of :func:`pair_view`)."""
    n1, n2 = t.mean_a.size, t.mean_b.size
    m2_xx = np.block([[t.m2_a, t.m2_ab], [t.m2_ab.T, t.m2_b]])
    m2_xy = np.concatenate([t.m2_ay, t.m2_by])[:, None]
    m3 = {(0, 1): t.m3_ayb[None]}
    if t.m3_aya is not None and t.m3_byb is not None:  # the core's within order
        m3 = {(0, 0): t.m3_aya[None], (0, 1): t.m3_ayb[None], (1, 1): t.m3_byb[None]}
    return core.DesignSums(BlockDesign.of((n1, n2)), t.nobs, t.weight, np.array([t.mean_y]),
                           np.concatenate([t.mean_a, t.mean_b]), np.array([[t.m2_y]]), m2_xx,
                           m2_xy, m3)


def merge_pair(p: CentredSums, q: CentredSums) -> CentredSums:
    """Exact two-block sums of the union of two disjoint parts
    (:func:`jdr_stats.core.moments.merge_sums`).  The within-block moments
    are merged when both parts hold them, and dropped otherwise."""
    if p.within != q.within:
        p = p._replace(m3_aya=None, m3_byb=None)
        q = q._replace(m3_aya=None, m3_byb=None)
    return pair_view(core.merge_sums(design_sums(p), design_sums(q)))


def sums_to_block_moments(t: CentredSums, *, center_y: bool = True) -> BlockMoments:
    """The averages the estimator takes (divisor: the total weight).

    ``center_y=False``: the cross moment with ``y`` uncentred,
    ``(m3_ayb + ybar m2_ab) / W``.
    """
    if t.weight <= 0:
        raise ValueError("the moments hold no data (total weight 0)")
    wsum = t.weight
    cross = t.m3_ayb if center_y else t.m3_ayb + t.mean_y * t.m2_ab
    return BlockMoments(
        nobs=t.nobs, mean_y=t.mean_y, var_y=t.m2_y / wsum, mean_a=t.mean_a.copy(),
        mean_b=t.mean_b.copy(), cov_a=t.m2_a / wsum, cov_b=t.m2_b / wsum, cross=cross / wsum,
    )


def block_moments(
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    weights: np.ndarray | None = None,
    *,
    covariances: bool = True,
) -> BlockMoments:
    """Means, covariances and the centred cross moment of (y, a, b).

    Parameters
    ----------
    y : ndarray, shape (m,)
    a : ndarray, shape (m, n1)
    b : ndarray, shape (m, n2)
    weights : ndarray, shape (m,), optional
        Nonnegative case weights (frequency weights: a bootstrap resample is
        the count of each row).  They are normalised to sum to one.
    covariances : bool
        ``False`` leaves ``cov_a`` and ``cov_b`` as NaN (a fit that does not
        whiten does not use them).

    Notes
    -----
    The moments engine of the package: the rows are read in cache-sized
    slices, each reduced in two passes (its means, then centred products;
    :func:`jdr_stats.core.moments.chunk_sums`) and merged exactly, the very
    computation of :meth:`jdr_stats.Moments.from_arrays`, which gives the
    same numbers bit for bit.  No copy of a full block is made; ``a`` and
    ``b`` may be memory maps.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y, a, b = rng.normal(size=50), rng.normal(size=(50, 3)), rng.normal(size=(50, 2))
    >>> mom = block_moments(y, a, b)
    >>> bool(np.allclose(mom.cov_a, np.cov(a.T, bias=True)))
    True
    """
    w = None if weights is None else np.asarray(weights, dtype=float)
    t = pair_view(core.array_sums(y, (a, b), w))
    if t is None:
        raise ValueError("y, a and b must be finite (a mean is NaN or infinite)")
    if t.weight <= 0:
        raise ValueError("the weights sum to zero: the moments hold no data")
    mom = sums_to_block_moments(t)
    if not np.isfinite(mom.cross).all():
        raise core.response_overflow(y, "the cross moment")
    if not covariances:
        mom.cov_a[:] = np.nan
        mom.cov_b[:] = np.nan
        mom = replace(mom, has_covariances=False)
    return mom


def one_pass_block_moments(
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    weights: np.ndarray | None = None,
    *,
    covariances: bool = True,
    step: int | None = None,
) -> BlockMoments:
    """:func:`block_moments` of rows in memory (one response column) in one
    pass, without the co-moment between the blocks.

    Parameters
    ----------
    y, a, b, weights, covariances
        As :func:`block_moments` (``y`` one-dimensional).
    step : int, optional
        Rows per slice (default :func:`jdr_stats.config.chunk_rows` of the
        width ``n1 + n2 + 1``).

    Notes
    -----
    Merging the centred sums of two slices needs their co-moment between
    the blocks, ``sum w (a - abar)(b - bbar)^T`` (the y-centring of one
    slice differs from the other's), ``n1 n2`` products per row that the
    per-block estimator does not use.  Here nothing is merged: the response
    is centred at its weighted mean ``ybar`` (refined once,
    ``ybar = y0 + sum w (y - y0) / W``), each block at a fixed shift ``k``
    (the mean of its first slice, near the block's mean, so the shifted
    values keep the digits of the data); the slices add the shifted sums,
    and with ``d = sum w (x - k) / W`` the centred ones are exactly

    ``M2 = sum w (a-k)(a-k)^T - W d_a d_a^T``,
    ``M3 = sum w (a-k) yc (b-k)^T - d_a (sum w yc (b-k))^T - (sum w (a-k) yc) d_b^T``

    (``yc = y - ybar``, whose sum is zero to rounding).  With weights the
    slices are scaled by ``sqrt(w)``, so each block's sum is a symmetric
    rank-k update.  The numbers agree with :func:`block_moments` to
    rounding (not bit for bit: the sums are grouped differently).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y, a, b = rng.normal(size=500), rng.normal(size=(500, 3)), rng.normal(size=(500, 2))
    >>> one, ref = one_pass_block_moments(y, a, b, step=64), block_moments(y, a, b)
    >>> bool(np.allclose(one.cross, ref.cross) and np.allclose(one.cov_a, ref.cov_a))
    True
    """
    m, n1, n2 = y.shape[0], a.shape[1], b.shape[1]
    w = None if weights is None else np.asarray(weights, dtype=float)
    wsum = float(m) if w is None else float(w.sum())
    if not wsum > 0:
        if not np.isfinite(wsum):
            raise ValueError("y, a and b must be finite (a mean is NaN or infinite)")
        raise ValueError("the weights sum to zero: the moments hold no data")
    y = np.asarray(y, dtype=float)
    wn = None if w is None else w / wsum
    y0 = float(np.mean(y)) if wn is None else float(wn @ y)
    ybar = y0 + (float(np.mean(y - y0)) if wn is None else float(wn @ (y - y0)))
    if step is None:
        step = config.chunk_rows(n1 + n2 + 1)
    step = max(1, min(step, m))
    ka = np.mean(np.asarray(a[:step], dtype=float), axis=0)
    kb = np.mean(np.asarray(b[:step], dtype=float), axis=0)
    if not (np.isfinite(ybar) and np.isfinite(ka).all() and np.isfinite(kb).all()):
        raise ValueError("y, a and b must be finite (a mean is NaN or infinite)")
    saa, sbb = np.zeros((n1, n1)), np.zeros((n2, n2))
    sa, sb, say, sby = np.zeros(n1), np.zeros(n2), np.zeros(n1), np.zeros(n2)
    s3, syy = np.zeros((n1, n2)), 0.0
    za, zb, zy = np.empty((step, n1)), np.empty((step, n2)), np.empty((step, n2))
    ones = np.ones(step)
    with np.errstate(over="ignore", invalid="ignore"):  # beyond float64: refused below
        for lo in range(0, m, step):
            hi = min(lo + step, m)
            ua, ub, uy = za[:hi - lo], zb[:hi - lo], zy[:hi - lo]
            np.subtract(a[lo:hi], ka, out=ua)
            np.subtract(b[lo:hi], kb, out=ub)
            yc = y[lo:hi] - ybar
            if w is None:  # the column sums by matrix-vector products
                yw, sw = yc, ones[:hi - lo]
            else:
                sw = np.sqrt(w[lo:hi])
                yw = yc * sw
                ua *= sw[:, None]
                ub *= sw[:, None]
            sa += sw @ ua
            sb += sw @ ub
            if covariances:
                saa += ua.T @ ua
                sbb += ub.T @ ub
            say += ua.T @ yw
            sby += ub.T @ yw
            syy += float(yw @ yw)
            np.multiply(ub, yc[:, None], out=uy)
            s3 += ua.T @ uy
        da, db = sa / wsum, sb / wsum
        mean_a, mean_b = ka + da, kb + db
        if not (np.isfinite(mean_a).all() and np.isfinite(mean_b).all()):
            raise ValueError("y, a and b must be finite (a mean is NaN or infinite)")
        cross = (s3 - np.outer(da, sby) - np.outer(say, db)) / wsum
    if not np.isfinite(cross).all():
        raise core.response_overflow(y, "the cross moment")
    if covariances:
        cov_a = (saa - wsum * np.outer(da, da)) / wsum
        cov_b = (sbb - wsum * np.outer(db, db)) / wsum
    else:
        cov_a, cov_b = np.full((n1, n1), np.nan), np.full((n2, n2), np.nan)
    return BlockMoments(nobs=m, mean_y=ybar, var_y=syy / wsum, mean_a=mean_a, mean_b=mean_b,
                        cov_a=cov_a, cov_b=cov_b, cross=cross, has_covariances=covariances)


def response_block_moments(
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    weights: np.ndarray | None = None,
    *,
    covariances: bool = True,
) -> BlockMoments:
    """:func:`block_moments` for a response of ``q`` columns (``y``: m x q).

    The block moments and ``cross`` come from the first column (one run of
    the engine); ``cross_q[c]`` is the centred cross moment
    ``sum_i w_i (a_i - abar)(y_ic - ybar_c)(b_i - bbar)^T`` of column ``c``
    (the first one bit for bit equal to ``cross``), computed in slices of
    ``config.chunk_rows`` rows.  ``mean_y`` and ``var_y`` are those of the
    first column (1 for a whitened response).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y, a, b = rng.normal(size=(60, 2)), rng.normal(size=(60, 3)), rng.normal(size=(60, 2))
    >>> mom = response_block_moments(y, a, b)
    >>> mom.q, bool(np.allclose(mom.cross_q[1], block_moments(y[:, 1], a, b).cross))
    (2, True)
    """
    first = block_moments(np.ascontiguousarray(y[:, 0]), a, b, weights,
                          covariances=covariances)
    m, q = y.shape
    w = np.full(m, 1.0 / m) if weights is None else np.asarray(weights, float) / np.sum(weights)
    my = w @ y
    out = np.zeros((q, a.shape[1], b.shape[1]))
    step = config.chunk_rows(a.shape[1] + b.shape[1] + q)
    for lo in range(0, m, step):
        sl = slice(lo, lo + step)
        ac = (np.asarray(a[sl], float) - first.mean_a) * w[sl, None]
        bc = np.asarray(b[sl], float) - first.mean_b
        yc = np.asarray(y[sl], float) - my
        for c in range(1, q):
            out[c] += ac.T @ (bc * yc[:, c:c + 1])
    out[0] = first.cross
    return replace(first, cross_q=out)
