"""Moments of the design for the single-block baselines, in passes over row chunks.

Every fit needs only sums over rows: the mean and covariance of ``x``, the
slice sums and slice Gram matrices (SIR, SAVE) and the weighted Gram matrix
``sum_i q_i (x_i - xbar)(x_i - xbar)^T`` (pHd).  They are accumulated over
chunks of rows copied into one reused buffer of a few hundred kilobytes, so a
fit never holds a centred (or sorted) copy of the design.

Accuracy: each chunk is shifted by ``c``, an approximate mean of ``x`` (that
of about 1000 rows spread over the data), before any sum is formed, and the
exact mean is ``c + d`` with ``d`` the mean of the shifted rows.  Centred moments then
follow from the shifted ones, e.g. ``sum (u_i - d)(u_i - d)^T = G - W d d^T``
with ``u_i = x_i - c``; the cancellation in such a difference is of the order
of ``|d|^2 / var`` (for slice moments: the squared distance of a slice mean
from ``c`` in units of the within-slice spread), not of ``|xbar|^2 / var`` as
in the uncentred Gram matrix ``X^T X - n xbar xbar^T``.  A design shifted by
``1e6`` keeps the accuracy its rounding allows.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .. import config
from ._slicing import SliceInfo

__all__ = [
    "row_chunks",
    "DesignMoments",
    "design_moments",
    "residual_gram",
    "centred_cross",
    "SliceMoments",
    "slice_moments",
]

def _step(n: int, p: int) -> int:
    """Rows of the reused buffer of shifted rows: about half of
    ``config.CHUNK_BYTES`` (at least ``config.MIN_CHUNK_ROWS``), so that the
    buffer and the copy its products read (pHd's scaled rows) stay in a
    core's cache together."""
    return max(1, min(n, max(config.MIN_CHUNK_ROWS, config.CHUNK_BYTES // (16 * max(p, 1)))))


def row_chunks(
    x: np.ndarray, shift: np.ndarray, order: np.ndarray | None = None
) -> Iterator[tuple[int, int, np.ndarray]]:
    """``(start, stop, u)`` with ``u = x[rows] - shift`` for consecutive chunks.

    ``rows`` are ``start:stop`` or, with ``order``, ``order[start:stop]``
    (the rows in that permutation).  ``u`` is a view of one reused buffer:
    it is overwritten by the next chunk.
    """
    n, p = x.shape
    step = _step(n, p)
    # Rows of a column-major x (a DataFrame's values) are gathered from its
    # transpose, one contiguous column at a time; a row gather would visit
    # p scattered entries per row.
    by_column = order is not None and x.flags.f_contiguous and not x.flags.c_contiguous
    buf = np.empty((p, step) if by_column else (step, p))
    for start in range(0, n, step):
        stop = min(start + step, n)
        # indices are a permutation; "clip" skips the buffered bounds check
        if by_column and order is not None:
            ut = buf if stop - start == step else np.empty((p, stop - start))
            np.take(x.T, order[start:stop], axis=1, out=ut, mode="clip")
            u = ut.T
            u -= shift
        elif order is None:
            u = buf[: stop - start]
            np.subtract(x[start:stop], shift, out=u)
        else:
            u = buf[: stop - start]
            np.take(x, order[start:stop], axis=0, out=u, mode="clip")
            u -= shift
        yield start, stop, u


def _shift(x: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """An approximate mean of the rows: the (weighted) mean of about 1000 rows
    spread evenly over the data (whatever their order, within a small
    fraction of a standard deviation of the mean)."""
    stride = max(1, x.shape[0] // 1024)
    xs = x[::stride]
    if w is None:
        return xs.mean(axis=0)
    ws = w[::stride]
    return (ws @ xs) / ws.sum()


def _sum(u: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """``sum_i w_i u_i`` (a matrix-vector product)."""
    return (np.ones(u.shape[0]) if w is None else w) @ u


def _gram(u: np.ndarray, q: np.ndarray | None) -> np.ndarray:
    """``sum_i q_i u_i u_i^T`` (``q`` of any sign; ``None``: all ones).

    The rows scaled by ``sqrt|q_i|`` give one symmetric rank-k product when
    every ``q_i`` is positive (case weights), else two (the rows with
    ``q_i > 0`` and the others): half the work of ``(u * q)^T u``.
    """
    if q is None:
        return u.T @ u
    root = np.sqrt(np.abs(q))
    pos = q > 0
    if pos.all():
        a = u * root[:, None]
        return a.T @ a
    out = np.zeros((u.shape[1], u.shape[1]))
    for rows, sign in ((np.flatnonzero(pos), 1.0), (np.flatnonzero(~pos), -1.0)):
        if rows.size:
            a = np.take(u, rows, axis=0, mode="clip")
            a *= root[rows, None]
            out += sign * (a.T @ a)
    return out


@dataclass(frozen=True)
class DesignMoments:
    """Mean and covariance of the rows (divisor: the total weight ``wsum``)."""

    mean: np.ndarray
    cov: np.ndarray
    wsum: float


def _finish(shift: np.ndarray, wsum: float, s: np.ndarray, g: np.ndarray) -> DesignMoments:
    """Centred moments from the shifted sums ``s = sum w u`` and ``g = sum w u u^T``."""
    d = s / wsum
    cov = g / wsum - np.outer(d, d)
    return DesignMoments(mean=shift + d, cov=(cov + cov.T) / 2, wsum=wsum)


def design_moments(
    x: np.ndarray,
    w: np.ndarray | None,
    *,
    q: np.ndarray | None = None,
    r: np.ndarray | None = None,
) -> tuple[DesignMoments, np.ndarray | None, np.ndarray | None]:
    """One pass: the moments of the rows and, optionally, weighted cross sums.

    Parameters
    ----------
    x : ndarray, shape (n, p)
    w : ndarray, shape (n,), optional
        Case weights.
    q : ndarray, shape (n,), optional
        Row weights of any sign: also returns
        ``sum_i q_i (x_i - xbar)(x_i - xbar)^T`` (pHd's kernel, x-scale).
    r : ndarray, shape (n,), optional
        Also returns ``sum_i r_i (x_i - xbar)`` (a cross product with y).

    Returns
    -------
    (DesignMoments, weighted Gram or None, cross sum or None)
    """
    c = _shift(x, w)
    p = x.shape[1]
    s = np.zeros(p)
    g = np.zeros((p, p))
    sq = np.zeros(p)
    gq = np.zeros((p, p))
    sr = np.zeros(p)
    for start, stop, u in row_chunks(x, c):
        wk = None if w is None else w[start:stop]
        s += _sum(u, wk)
        g += _gram(u, wk)
        if q is not None:
            qk = q[start:stop]
            sq += qk @ u
            gq += _gram(u, qk)
        if r is not None:
            sr += r[start:stop] @ u
    wsum = float(x.shape[0]) if w is None else float(w.sum())
    mom = _finish(c, wsum, s, g)
    d = mom.mean - c
    gram_q = None
    if q is not None:
        gram_q = _centre_gram(gq, sq, float(q.sum()), d)
    cross = None if r is None else sr - float(r.sum()) * d
    return mom, gram_q, cross


def _centre_gram(gq: np.ndarray, sq: np.ndarray, qsum: float, d: np.ndarray) -> np.ndarray:
    """``sum q (u - d)(u - d)^T`` from ``gq = sum q u u^T`` and ``sq = sum q u``."""
    out = gq - np.outer(d, sq) - np.outer(sq, d) + qsum * np.outer(d, d)
    return (out + out.T) / 2


def residual_gram(
    x: np.ndarray, mean: np.ndarray, r0: np.ndarray, beta: np.ndarray, w: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Residuals ``r_i = r0_i - (x_i - mean)^T beta`` and
    ``sum_i w_i r_i (x_i - mean)(x_i - mean)^T``, in one pass (pHd on the
    OLS residuals; ``mean`` must be the exact mean of the rows)."""
    p = x.shape[1]
    gq = np.zeros((p, p))
    r = np.empty(x.shape[0])
    for start, stop, u in row_chunks(x, mean):
        rk = r0[start:stop] - u @ beta
        r[start:stop] = rk
        gq += _gram(u, rk if w is None else w[start:stop] * rk)
    return (gq + gq.T) / 2, r


def centred_cross(x: np.ndarray, mean: np.ndarray, v: np.ndarray) -> np.ndarray:
    """``sum_i v_i (x_i - mean)`` in one pass over row chunks."""
    out = np.zeros(x.shape[1])
    for start, stop, u in row_chunks(x, mean):
        out += v[start:stop] @ u
    return out


@dataclass(frozen=True)
class SliceMoments:
    """Per-slice moments of the design (x-scale).

    ``f`` = slice weight / total weight; ``means`` (H x p) slice means minus
    the overall mean; ``covs`` (H x p x p) slice covariances with divisor the
    slice weight (``dr``'s ``wvar``), or None.
    """

    f: np.ndarray
    means: np.ndarray
    covs: np.ndarray | None


def slice_moments(
    x: np.ndarray, w: np.ndarray | None, slices: SliceInfo, *, second: bool
) -> tuple[DesignMoments, SliceMoments]:
    """The moments of the rows and their slice moments, in one pass.

    With ``second`` (SAVE) the rows are visited in the slices' sort order
    (gathered chunk by chunk), so each slice is a run of consecutive rows,
    and the Gram matrix of each slice is accumulated; the total covariance
    is the within-slice plus the between-slice covariance.  Without (SIR)
    the rows are read in their own order: the total Gram matrix, and the
    slice sums as the product of each chunk's slice indicators with it.
    """
    n, p = x.shape
    h = slices.n_slices
    order = slices.order
    ws = None if w is None else w[order]
    ends = slices.starts + slices.sizes
    c = _shift(x, w)
    sums = np.zeros((h, p))
    grams = np.zeros((h, p, p) if second else (p, p))
    if not second:  # SIR: the rows in their own order, no gather
        for start, stop, u in row_chunks(x, c):
            wk = None if w is None else w[start:stop]
            grams += _gram(u, wk)
            # the slice sums: the chunk's (weighted) slice indicators times its rows
            ind = np.zeros((stop - start, h))
            ind[np.arange(stop - start), slices.indicator[start:stop]] = 1.0 if wk is None else wk
            sums += ind.T @ u
    for start, stop, u in (row_chunks(x, c, order) if second else ()):
        wk = None if ws is None else ws[start:stop]
        # the slices met by this chunk and their bounds inside it
        first = int(np.searchsorted(ends, start, side="right"))
        last = int(np.searchsorted(ends, stop - 1, side="right"))
        bounds = np.concatenate(([start], ends[first:last], [stop])) - start
        for j, k in enumerate(range(first, last + 1)):
            seg = slice(bounds[j], bounds[j + 1])
            wseg = None if wk is None else wk[seg]
            sums[k] += _sum(u[seg], wseg)
            grams[k] += _gram(u[seg], wseg)
    wk_all = slices.sizes.astype(float) if ws is None else np.add.reduceat(ws, slices.starts)
    wsum = float(n) if w is None else float(w.sum())
    d_slice = sums / wk_all[:, None]
    f = wk_all / wsum
    if second:
        covs = grams / wk_all[:, None, None] - d_slice[:, :, None] * d_slice[:, None, :]
        covs = (covs + covs.transpose(0, 2, 1)) / 2
        d = f @ d_slice
        means = d_slice - d
        within = np.einsum("k,kij->ij", f, covs)
        cov = within + (means.T * f) @ means
        mom = DesignMoments(mean=c + d, cov=(cov + cov.T) / 2, wsum=wsum)
    else:
        covs = None
        mom = _finish(c, wsum, sums.sum(axis=0), grams)
        means = d_slice - (mom.mean - c)
    return mom, SliceMoments(f=f, means=means, covs=covs)
