"""Mergeable centred sums over K blocks and a response of q columns.

The state of a fit's sufficient statistics for any number of blocks: the
weighted means of the response and of the stacked design, the centred
co-moment of the stacked design (so every block's covariance *and* every
covariance between blocks, which a whitening across blocks needs), the
co-moment of the design with each response column, and the y-weighted cross
co-moment of every pair of blocks with every response column,

``m3[(j, k)][c] = sum_i w_i (x_ij - xbar_j)(y_ic - ybar_c)(x_ik - xbar_k)^T``.

A chunk of rows is reduced in two passes, its own means then one Gram matrix
of the centred chunk (:func:`chunk_sums`), so a large common offset costs no
precision; two disjoint parts merge exactly (:func:`merge_sums`: Chan, Golub
and LeVeque's update for the co-moments, Pebay's for the third-order cross
term; derivation in docs/theory/large_data.md).  For two blocks and one
response column the arithmetic is, operation for operation, that of the
two-block engine, which runs on this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, TypeVar

import numpy as np

from .. import config
from ._blas import syrk_upper
from .design import BlockDesign

__all__ = ["DesignSums", "StackedSums", "array_sums", "chunk_sums", "column_scales",
           "empty_sums", "merge_sums", "merged_at_one_scale", "response_overflow",
           "response_scale", "stacked_sums", "unit_response"]

Pair = tuple[int, int]
T = TypeVar("T")


@dataclass(frozen=True)
class DesignSums:
    """Centred sums of one part of the rows of a K-block design.

    Attributes
    ----------
    design : BlockDesign
    nobs : int
        Rows (of any weight, zero included).
    weight : float
        Total weight ``W`` (the number of rows without weights).
    mean_y : ndarray (q,)
    mean_x : ndarray (p,)
        Weighted means of the response columns and of the stacked design.
    m2_yy : ndarray (q, q)
    m2_xx : ndarray (p, p)
        Centred co-moment of the stacked design: block ``(j, k)`` is
        ``sum_i w_i (x_ij - xbar_j)(x_ik - xbar_k)^T``.
    m2_xy : ndarray (p, q)
    m3 : dict of (j, k) to ndarray (q, n_j, n_k)
        The y-weighted cross co-moments of the block pairs held (``j < k``,
        and ``j == k`` when reduced with ``within=True``).
    """

    design: BlockDesign
    nobs: int
    weight: float
    mean_y: np.ndarray
    mean_x: np.ndarray
    m2_yy: np.ndarray
    m2_xx: np.ndarray
    m2_xy: np.ndarray
    m3: dict[Pair, np.ndarray]

    @property
    def pairs(self) -> tuple[Pair, ...]:
        """The block pairs whose cross moments are held, in order."""
        return tuple(self.m3)

    def block_mean(self, k: int) -> np.ndarray:
        return self.mean_x[self.design.span(k)]

    def block_m2(self, j: int, k: int) -> np.ndarray:
        """Co-moment of blocks ``j`` and ``k`` (a view of ``m2_xx``)."""
        return self.m2_xx[self.design.span(j), self.design.span(k)]

    def block_m2y(self, k: int) -> np.ndarray:
        """``(n_k, q)`` co-moment of block ``k`` with the response columns."""
        return self.m2_xy[self.design.span(k)]


def empty_sums(design: BlockDesign, nobs: int = 0, *, within: bool = False) -> DesignSums:
    """The sums of no weight (``nobs`` rows of weight zero)."""
    p, q, w = design.p, design.q, design.widths
    return DesignSums(
        design, nobs, 0.0, np.zeros(q), np.zeros(p), np.zeros((q, q)), np.zeros((p, p)),
        np.zeros((p, q)), {(j, k): np.zeros((q, w[j], w[k])) for j, k in design.pairs(within)},
    )


def _columns(y: np.ndarray) -> list[np.ndarray]:
    """The response's columns as contiguous vectors (one response: itself)."""
    if y.ndim == 1:
        return [y]
    return [np.ascontiguousarray(y[:, c]) for c in range(y.shape[1])]


def chunk_sums(y: np.ndarray, blocks: Sequence[np.ndarray], w: np.ndarray | None, *,
               design: BlockDesign | None = None, within: bool = False) -> DesignSums | None:
    """Two-pass centred sums of one chunk (shapes and weights already checked).

    ``y`` is ``(k,)`` or ``(k, q)``; ``blocks`` the K blocks' rows.  The
    chunk's own means first, then one Gram matrix of the centred chunk
    ``[x_1 - xbar_1 | ... | x_K - xbar_K | y - ybar]`` and, for each pair of
    blocks and each response column, the y-weighted cross product.  Returns
    None when a mean is not finite (the chunk holds NaN or infinite values:
    they propagate into the mean at no extra pass in the finite case).
    """
    ys = _columns(y)
    if design is None:
        design = BlockDesign.of([x.shape[1] for x in blocks], q=len(ys))
    k, p, q = ys[0].shape[0], design.p, design.q
    wsum = float(k) if w is None else float(w.sum())
    if k == 0 or wsum == 0.0:
        return empty_sums(design, k, within=within)
    wn = np.full(k, 1.0 / k) if w is None else w / wsum
    my = [float(wn @ yc) for yc in ys]
    mx = [wn @ x for x in blocks]
    if not (np.isfinite(my).all() and all(np.isfinite(m).all() for m in mx)):
        return None
    # One buffer for the centred chunk, in the memory order of the input
    # (Parquet chunks are column-major), so the centring copies are contiguous.
    first = blocks[0]
    order: Literal["C", "F"] = (
        "F" if first.flags.f_contiguous and not first.flags.c_contiguous else "C")
    z = np.empty((k, p + q), order=order)
    for j, (x, m) in enumerate(zip(blocks, mx, strict=True)):
        np.subtract(x, m, out=z[:, design.span(j)])
    for c, (yc, m) in enumerate(zip(ys, my, strict=True)):
        np.subtract(yc, m, out=z[:, p + c])
    zw = z if w is None else z * w[:, None]
    m3 = {}
    with np.errstate(over="ignore", invalid="ignore"):  # beyond float64: refused by the fit
        g = zw.T @ z
        g = (g + g.T) / 2
        for j, k2 in design.pairs(within):
            sj, sl = design.span(j), design.span(k2)
            m3[(j, k2)] = np.stack([zw[:, sj].T @ (z[:, sl] * z[:, p + c:p + c + 1])
                                   for c in range(q)])
    return DesignSums(design, k, wsum, np.array(my), np.concatenate(mx), g[p:, p:],
                      g[:p, :p], g[:p, p:], m3)


def merge_sums(a: DesignSums, b: DesignSums) -> DesignSums:
    """Exact sums of the union of two disjoint parts of the same design (only
    differences of means enter)."""
    if a.design != b.design or a.pairs != b.pairs:
        raise ValueError("merge_sums needs sums of the same design and block pairs")
    nobs = a.nobs + b.nobs
    if b.weight == 0.0 or a.weight == 0.0:
        keep = a if b.weight == 0.0 else b
        return DesignSums(keep.design, nobs, keep.weight, keep.mean_y, keep.mean_x,
                          keep.m2_yy, keep.m2_xx, keep.m2_xy, keep.m3)
    wa, wb = a.weight, b.weight
    wsum = wa + wb
    fa, fb = wa / wsum, wb / wsum
    c = wa * fb  # wa * wb / W
    dx = b.mean_x - a.mean_x
    dy = b.mean_y - a.mean_y
    cdy = c * dy
    span = a.design.span
    m3 = {}
    for (j, k), a3 in a.m3.items():
        sj, sk = span(j), span(k)
        dj, dk = dx[sj], dx[sk]
        stack = []
        for col in range(a.design.q):
            d = float(dy[col])
            stack.append(
                a3[col] + b.m3[(j, k)][col]
                + (c * (fa - fb) * d) * np.outer(dj, dk)
                + fa * (np.outer(dj, b.m2_xy[sk, col]) + d * b.m2_xx[sj, sk]
                        + np.outer(b.m2_xy[sj, col], dk))
                - fb * (np.outer(dj, a.m2_xy[sk, col]) + d * a.m2_xx[sj, sk]
                        + np.outer(a.m2_xy[sj, col], dk))
            )
        m3[(j, k)] = np.stack(stack)
    return DesignSums(
        a.design, nobs, wsum, a.mean_y + fb * dy, a.mean_x + fb * dx,
        a.m2_yy + b.m2_yy + np.outer(cdy, dy),
        a.m2_xx + b.m2_xx + c * np.outer(dx, dx),
        a.m2_xy + b.m2_xy + np.outer(dx, cdy),
        m3,
    )


def array_sums(y: np.ndarray, blocks: Sequence[np.ndarray], w: np.ndarray | None,
               step: int | None = None, *, design: BlockDesign | None = None,
               within: bool = False) -> DesignSums | None:
    """Centred sums of in-memory (or memory-mapped) rows, merged slice by slice.

    Slices of ``step`` rows (default :func:`jdr_stats.config.chunk_rows` of
    the width ``p + q``: cache-sized); None when a slice is not finite.
    Memory beyond the input: one slice of centred rows and the sums.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y, xs = rng.normal(size=90), [rng.normal(size=(90, n)) for n in (3, 2, 4)]
    >>> t = array_sums(y, xs, None, step=40)
    >>> one = chunk_sums(y, xs, None)
    >>> bool(np.allclose(t.m3[(0, 2)], one.m3[(0, 2)]))
    True
    """
    q = 1 if y.ndim == 1 else y.shape[1]
    if design is None:
        design = BlockDesign.of([x.shape[1] for x in blocks], q=q)
    k = y.shape[0]
    if step is None:
        step = config.chunk_rows(design.p + q)
    if k <= step:
        return chunk_sums(y, blocks, w, design=design, within=within)
    total = None
    for lo in range(0, k, step):
        sl = slice(lo, lo + step)
        part = chunk_sums(np.asarray(y[sl], dtype=float),
                          [np.asarray(x[sl], dtype=float) for x in blocks],
                          None if w is None else w[sl], design=design, within=within)
        if part is None:
            return None
        total = part if total is None else merge_sums(total, part)
    return total


@dataclass(frozen=True)
class StackedSums:
    """Centred sums of the stacked design ``x = (x_1, ..., x_K)`` with every
    y-weighted second moment, within blocks included: what the whitening
    across blocks and the joint estimate need (the residual rows' moments
    are linear in them, docs/theory/whitening.md, "Moments only").

    Attributes
    ----------
    nobs : int
    weight : float
        Total weight ``W``.
    mean_x : ndarray (p,)
    mean_y : ndarray (q,)
    m2_xx : ndarray (p, p)
        ``sum_i w_i (x_i - xbar)(x_i - xbar)^T``.
    m2_xy : ndarray (p, q)
    m2_yy : ndarray (q, q)
    s : ndarray (q, p, p)
        ``s[c] = sum_i w_i (y_ic - ybar_c)(x_i - xbar)(x_i - xbar)^T``.
    """

    nobs: int
    weight: float
    mean_x: np.ndarray
    mean_y: np.ndarray
    m2_xx: np.ndarray
    m2_xy: np.ndarray
    m2_yy: np.ndarray
    s: np.ndarray


def _syrk_into(c: np.ndarray, rows: np.ndarray, alpha: float = 1.0) -> None:
    """``c += alpha rows^T rows`` (upper triangle of the Fortran-ordered
    ``c``), without copying ``rows`` (C- or Fortran-ordered) and without
    holding the GIL (:func:`~jdr_stats.core._blas.syrk_upper`)."""
    if rows.shape[0] == 0:
        return
    if rows.flags.f_contiguous and not rows.flags.c_contiguous:  # column-major rows
        syrk_upper(c, rows, alpha, True)
        return
    syrk_upper(c, rows.T, alpha, False)


def _mirror(c: np.ndarray) -> np.ndarray:
    """The symmetric matrix of an upper triangle."""
    up = np.triu(c)
    return up + np.triu(c, 1).T


def column_scales(blocks: Sequence[np.ndarray], rows: int = 4096,
                  limit: int = 100) -> np.ndarray | None:
    """Power-of-two scales that bring each column of the stacked blocks near
    unit size, or None when every column is within ``2^+-limit`` of it.

    From the largest absolute value of each column's first ``rows`` rows
    (``2^-e`` for a largest value in ``[2^(e-1), 2^e)``; 1 for a column
    within range or zero there).  Multiplying by a power of two is exact,
    so the moments of the scaled columns are the original ones times the
    scales, and their squares and third-order products stay normal floats
    for any column whose values are normal (docs/theory/whitening.md,
    "Moments only").
    """
    tops = [np.abs(np.asarray(x[:rows], float)).max(axis=0) for x in blocks]
    top = np.concatenate(tops)
    e = np.frexp(top)[1]
    far = np.isfinite(top) & (top > 0) & (np.abs(e) > limit)
    if not far.any():
        return None
    return np.where(far, np.ldexp(1.0, -e), 1.0)


def response_scale(y: np.ndarray, limit: int = 100) -> float:
    """The power of two ``2^-e`` that brings the response's largest finite
    magnitude into ``[1/2, 1)`` when that magnitude is beyond ``2^+-limit``,
    else 1.0 (see :func:`unit_response`)."""
    y = np.asarray(y, float)
    finite = np.abs(y[np.isfinite(y)])
    top = float(finite.max()) if finite.size else 0.0
    if top == 0.0:
        return 1.0
    e = int(np.frexp(top)[1])
    return 1.0 if abs(e) <= limit else float(np.ldexp(1.0, -e))


def unit_response(y: np.ndarray, limit: int = 100) -> np.ndarray:
    """``y`` times :func:`response_scale` (``y`` itself at unit scale).

    For the procedures whose numbers do not depend on the response's unit
    (rank tests, association and main-effect tests, support selection,
    R-squared, the K-block fit): multiplying by a power of two is exact, so
    they see the same digits, and their products of up to eight response
    values stay normal floats for any response whose values are normal
    (docs/theory/whitening.md, "The response's unit").
    """
    y = np.asarray(y, float)
    c = response_scale(y, limit)
    return y if c == 1.0 else y * c


def response_overflow(y: np.ndarray, where: str) -> ValueError:
    """The error for a response whose products with the columns overflow
    float64 in ``where`` (the moments of a fit, which are in its units)."""
    top = float(np.max(np.abs(np.asarray(y, float)[np.isfinite(y)]), initial=0.0))
    tens = f"{10.0 ** np.floor(np.log10(top)):.0e}" if top > 0 else "a power of ten"
    return ValueError(
        f"endog: the products of the response (values up to {top:.3g}) with the columns "
        f"overflow float64 in {where}; rescale the response (e.g. divide it by {tens}): "
        "no direction, test or p-value depends on its unit, and the singular values "
        "scale with it")


def merged_at_one_scale(left: T, right: T, scales: Callable[[T], np.ndarray | None],
                        width: int, lift: Callable[[T, np.ndarray, np.ndarray], T],
                        merge: Callable[[T, T], T]) -> T:
    """``merge(left, right)`` of two sums held at power-of-two column scales
    (:func:`column_scales`; ``scales(x)`` the ``width`` stacked scales of
    ``x``, None for unit scale): each first re-expressed at the smaller
    scale of every column (the larger values keep their digits) by
    ``lift(x, factors, scale)``, ``factors = scale / scales(x)`` (powers of
    two: exact up to under- or overflow of negligible parts), so ``merge``
    sees sums of the same scaled columns.  Unit scale on both: ``merge``.
    """
    own = [scales(x) for x in (left, right)]
    if own[0] is None and own[1] is None:
        return merge(left, right)
    ones = np.ones(width)
    held = [ones if s is None else s for s in own]
    common = np.minimum(*held)
    return merge(lift(left, common / held[0], common), lift(right, common / held[1], common))


def stacked_sums(y: np.ndarray, blocks: Sequence[np.ndarray], w: np.ndarray | None,
                 step: int | None = None, *,
                 scale: np.ndarray | None = None) -> StackedSums | None:
    """The sums of :class:`StackedSums` in one pass over the rows.

    The weighted means first (one product per block, no copy), then slices
    of ``step`` rows (default: two slices in :data:`jdr_stats.config.CHUNK_BYTES`) centred
    into one buffer: ``[x - xbar | y - ybar]`` adds into the co-moment by a
    symmetric rank-k update, and each response column's y-weighted moment
    ``sum w (y - ybar) z z^T`` by two more on the rows of each sign, scaled
    by ``sqrt(w |y - ybar|)``: the flops of one symmetric product where a
    general one would take twice them.  Memory beyond the input: two
    slices and the sums (no ``m x p`` array).  None when a mean is not
    finite (NaN or infinite values).  ``scale`` (``(p,)``, powers of two,
    :func:`column_scales`): the sums of the columns times ``scale``, each
    slice scaled before it is centred and the means taken of the scaled
    columns, so columns of extreme units neither overflow nor lose digits.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y, a, b = rng.normal(size=300), rng.normal(size=(300, 3)), rng.normal(size=(300, 2))
    >>> t = stacked_sums(y, (a, b), None, step=64)
    >>> x = np.hstack([a, b]) - np.hstack([a, b]).mean(0)
    >>> bool(np.allclose(t.s[0], (x * (y - y.mean())[:, None]).T @ x))
    True
    """
    ys = _columns(y)
    q, k = len(ys), ys[0].shape[0]
    widths = [x.shape[1] for x in blocks]
    p = int(sum(widths))
    bounds = np.cumsum([0, *widths])
    wsum = float(k) if w is None else float(np.sum(w))
    if k == 0 or wsum == 0.0:
        return None if k else StackedSums(0, 0.0, np.zeros(p), np.zeros(q), np.zeros((p, p)),
                                          np.zeros((p, q)), np.zeros((q, q)),
                                          np.zeros((q, p, p)))
    wn = np.full(k, 1.0 / k) if w is None else np.asarray(w, float) / wsum
    if step is None:  # slices that stay in cache: the centring and scaling are cheap there
        step = max(256, config.CHUNK_BYTES // (8 * (2 * p + q)))
    step = max(1, min(step, k))
    if scale is None:
        mx = np.concatenate([wn @ x for x in blocks])
    else:  # the means of the scaled columns, slice by slice
        mx = np.zeros(p)
        for lo in range(0, k, step):
            hi = min(lo + step, k)
            for j, x in enumerate(blocks):
                sj = slice(bounds[j], bounds[j + 1])
                mx[sj] += wn[lo:hi] @ (np.asarray(x[lo:hi], float) * scale[sj])
    my = np.array([float(wn @ yc) for yc in ys])
    if not (np.isfinite(mx).all() and np.isfinite(my).all()):
        return None
    g = np.zeros((p + q, p + q), order="F")
    s = [np.zeros((p, p), order="F") for _ in range(q)]
    # the slices in the memory order of the input (Parquet chunks are
    # column-major), so that the centring copies run along contiguous memory
    first = blocks[0] if blocks else None
    order: Literal["C", "F"] = "F" if first is not None and first.flags.f_contiguous \
        and not first.flags.c_contiguous else "C"
    z = np.empty((step, p + q), order=order)
    u = np.empty((step, p))
    sq = None if w is None else np.sqrt(np.asarray(w, float))
    for lo in range(0, k, step):
        hi = min(lo + step, k)
        # (a column-major slice of fewer rows is a buffer of its own: contiguous)
        zz = z[:hi - lo] if order == "C" or hi - lo == step else \
            np.empty((hi - lo, p + q), order="F")
        for j, x in enumerate(blocks):
            sj = slice(bounds[j], bounds[j + 1])
            if scale is None:
                np.subtract(x[lo:hi], mx[sj], out=zz[:, sj])
            else:
                np.multiply(x[lo:hi], scale[sj], out=zz[:, sj])
                zz[:, sj] -= mx[sj]
        for c, yc in enumerate(ys):
            np.subtract(yc[lo:hi], my[c], out=zz[:, p + c])
        if sq is None:
            _syrk_into(g, zz)
        else:
            zw = zz * sq[lo:hi, None]
            _syrk_into(g, zw)
        for c in range(q):
            t = zz[:, p + c] if w is None else zz[:, p + c] * w[lo:hi]
            pos = np.flatnonzero(t > 0)
            neg = np.flatnonzero(t < 0)
            npos = pos.size
            if order == "C":
                uu = u[:npos + neg.size]
                up, un = uu[:npos], uu[npos:]
                np.multiply(zz[pos, :p], np.sqrt(t[pos])[:, None], out=up)
                np.multiply(zz[neg, :p], np.sqrt(-t[neg])[:, None], out=un)
            else:  # each sign's rows column-major and contiguous: the columns
                # of the transposed slice (contiguous rows) taken into ``u``
                zt, flat = zz[:, :p].T, u.reshape(-1)
                ut = flat[:p * npos].reshape(p, npos)
                np.take(zt, pos, axis=1, out=ut, mode="clip")
                ut *= np.sqrt(t[pos])
                vt = flat[p * npos:p * (npos + neg.size)].reshape(p, neg.size)
                np.take(zt, neg, axis=1, out=vt, mode="clip")
                vt *= np.sqrt(-t[neg])
                up, un = ut.T, vt.T
            _syrk_into(s[c], up)
            _syrk_into(s[c], un, -1.0)
    g = _mirror(g)
    return StackedSums(k, wsum, mx, my, g[:p, :p], g[:p, p:], g[p:, p:],
                       np.stack([_mirror(sc) for sc in s]))

