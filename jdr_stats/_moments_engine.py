"""The moments engine: the sufficient statistics of a two-block fit.

One computation for every way the rows arrive.  A part of the rows (a
chunk) is reduced in two passes, its own means then its centred products
(:func:`chunk_sums`), so a large common offset costs no precision; parts
merge exactly (:func:`merge_sums`: Chan, Golub and LeVeque 1979; Pebay 2008
for the third-order cross term; derivation in docs/theory/large_data.md).
In-memory arrays are reduced in cache-sized slices (:func:`array_sums`,
slices of ``config.chunk_rows`` rows); the estimator's
:func:`block_moments` and the public :class:`jdr_stats.Moments` (streamed
chunks, dask partitions, ``m1 + m2``) both run this engine.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal, NamedTuple

import numpy as np

from . import config

__all__ = [
    "BlockMoments",
    "CentredSums",
    "array_sums",
    "block_moments",
    "chunk_sums",
    "empty_sums",
    "merge_sums",
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

    @property
    def q(self) -> int:
        """Number of response columns (1 unless ``cross_q`` is set)."""
        return 1 if self.cross_q is None else int(self.cross_q.shape[0])


class CentredSums(NamedTuple):
    """Centred sums of one part of the rows: the state of the moments engine.

    ``weight`` is the total weight ``W`` (the number of rows without
    weights); the means are weighted; ``m2_*`` are centred co-moment sums
    (``m2_ab = sum_i w_i (a_i - abar)(b_i - bbar)^T``, ...) and ``m3_ayb`` the
    y-weighted cross co-moment ``sum_i w_i (a_i - abar)(y_i - ybar)(b_i - bbar)^T``.
    Two parts merge exactly (:func:`merge_sums`); :class:`jdr_stats.Moments`
    is this state with names and the public arithmetic.
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


def empty_sums(n1: int, n2: int, nobs: int = 0) -> CentredSums:
    """The sums of no weight (``nobs`` rows of weight zero)."""
    return CentredSums(nobs, 0.0, 0.0, np.zeros(n1), np.zeros(n2), 0.0, np.zeros((n1, n1)),
                       np.zeros((n2, n2)), np.zeros((n1, n2)), np.zeros(n1), np.zeros(n2),
                       np.zeros((n1, n2)))


def chunk_sums(y: np.ndarray, a: np.ndarray, b: np.ndarray,
               w: np.ndarray | None) -> CentredSums | None:
    """Two-pass centred sums of one chunk (shapes and weights already checked).

    The chunk's own means first, then one Gram matrix of the centred chunk
    ``[a - abar | b - bbar | y - ybar]`` and the y-weighted cross product, so
    a large common offset costs no precision.  Returns None when a mean is
    not finite (the chunk holds NaN or infinite values: they propagate into
    the mean, which costs no extra pass in the common, finite case).
    """
    k, n1 = a.shape
    n2 = b.shape[1]
    wsum = float(k) if w is None else float(w.sum())
    if k == 0 or wsum == 0.0:
        return empty_sums(n1, n2, k)
    # Means by matrix-vector products (one read of the chunk).
    wn = np.full(k, 1.0 / k) if w is None else w / wsum
    my = float(wn @ y)
    ma = wn @ a
    mb = wn @ b
    if not (np.isfinite(my) and np.isfinite(ma).all() and np.isfinite(mb).all()):
        return None
    # One buffer for the centred chunk, in the memory order of the input
    # (Parquet chunks are column-major), so the centring copies are contiguous.
    order: Literal["C", "F"] = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
    z = np.empty((k, n1 + n2 + 1), order=order)
    np.subtract(a, ma, out=z[:, :n1])
    np.subtract(b, mb, out=z[:, n1:n1 + n2])
    np.subtract(y, my, out=z[:, -1])
    if w is None:
        g = z.T @ z
        m3 = z[:, :n1].T @ (z[:, n1:n1 + n2] * z[:, -1:])
    else:
        zw = z * w[:, None]
        g = zw.T @ z
        m3 = zw[:, :n1].T @ (z[:, n1:n1 + n2] * z[:, -1:])
    g = (g + g.T) / 2
    return CentredSums(k, wsum, my, ma, mb, float(g[-1, -1]), g[:n1, :n1],
                       g[n1:n1 + n2, n1:n1 + n2], g[:n1, n1:n1 + n2], g[:n1, -1],
                       g[n1:n1 + n2, -1], m3)


def merge_sums(p: CentredSums, q: CentredSums) -> CentredSums:
    """Exact sums of the union of two disjoint parts (Chan, Golub and LeVeque
    1979; Pebay 2008 for the third-order cross term; derivation in
    docs/theory/large_data.md).  Only differences of means enter."""
    nobs = p.nobs + q.nobs
    if q.weight == 0.0 or p.weight == 0.0:
        return (p if q.weight == 0.0 else q)._replace(nobs=nobs)
    wp, wq = p.weight, q.weight
    wsum = wp + wq
    fp, fq = wp / wsum, wq / wsum
    c = wp * fq  # wp * wq / W
    da = q.mean_a - p.mean_a
    db = q.mean_b - p.mean_b
    dy = q.mean_y - p.mean_y
    m3 = (
        p.m3_ayb + q.m3_ayb
        + (c * (fp - fq) * dy) * np.outer(da, db)
        + fp * (np.outer(da, q.m2_by) + dy * q.m2_ab + np.outer(q.m2_ay, db))
        - fq * (np.outer(da, p.m2_by) + dy * p.m2_ab + np.outer(p.m2_ay, db))
    )
    return CentredSums(
        nobs, wsum, p.mean_y + fq * dy, p.mean_a + fq * da, p.mean_b + fq * db,
        p.m2_y + q.m2_y + c * dy * dy,
        p.m2_a + q.m2_a + c * np.outer(da, da),
        p.m2_b + q.m2_b + c * np.outer(db, db),
        p.m2_ab + q.m2_ab + c * np.outer(da, db),
        p.m2_ay + q.m2_ay + (c * dy) * da,
        p.m2_by + q.m2_by + (c * dy) * db,
        m3,
    )


def array_sums(y: np.ndarray, a: np.ndarray, b: np.ndarray, w: np.ndarray | None,
               step: int | None = None) -> CentredSums | None:
    """Centred sums of in-memory (or memory-mapped) rows, merged slice by slice.

    Slices of ``step`` rows (default :func:`jdr_stats.config.chunk_rows`
    of the width ``1 + n1 + n2``: cache-sized); None when a slice is not finite.
    Memory beyond the input: one slice of centred rows and a few
    ``(n1 + n2 + 1)^2`` matrices.
    """
    k = y.shape[0]
    if step is None:
        step = config.chunk_rows(a.shape[1] + b.shape[1] + 1)
    if k <= step:
        return chunk_sums(y, a, b, w)
    total = None
    for lo in range(0, k, step):
        sl = slice(lo, lo + step)
        part = chunk_sums(np.asarray(y[sl], dtype=float), np.asarray(a[sl], dtype=float),
                          np.asarray(b[sl], dtype=float), None if w is None else w[sl])
        if part is None:
            return None
        total = part if total is None else merge_sums(total, part)
    return total


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
    :func:`chunk_sums`) and merged exactly (:func:`merge_sums`), the very
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
    t = array_sums(y, a, b, w)
    if t is None:
        raise ValueError("y, a and b must be finite (a mean is NaN or infinite)")
    if t.weight <= 0:
        raise ValueError("the weights sum to zero: the moments hold no data")
    mom = sums_to_block_moments(t)
    if not covariances:
        mom.cov_a[:] = np.nan
        mom.cov_b[:] = np.nan
        mom = replace(mom, has_covariances=False)
    return mom


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
