"""The shared pieces of the robust coordinate tests straight from the rows.

:func:`robust_coordinate_tests` takes the scores, the whitened focal block
and the whitened other block as ``m x n`` arrays: four such arrays for the
two blocks (:func:`~jdr_stats.support._statistics.prepare`), which at
``n1 = n2 = 1000``, ``m = 1e5`` is 3.2 GB on top of the 1.6 GB of rows.  The
tests themselves need only the residual ``r_j`` of each focal variable
(``m x nf``), the residualised products ``(I - P) W`` (``m x no``), the
null model's leverages and a few ``n x n`` sums.  :func:`setup_from_rows`
forms them block by block from chunks of rows, whitening each chunk on the
fly: one pass accumulates ``g = Z^T W / m``, ``X = W_f^T W / m``,
``zeta_j = mean z_ij^2`` and the mean of ``W``, a second pass subtracts
``mean(W) + (f - fbar) C_f^{-T} X`` (``= mean(W) + w_f X``) from ``W`` in
place.  Peak memory: the rows plus ``m (nf + no)`` floats plus chunk
buffers; the numbers equal those of the arrays path up to rounding (sums
over chunks of rows).
"""

from __future__ import annotations

import numpy as np

from .. import config
from ..core._linalg import Whitening
from ..core.whitening import DesignWhitening
from ._robust import _bases, _Setup
from ._statistics import products

__all__ = ["setup_from_rows"]


def _chunks(m: int, width: int) -> list[tuple[int, int]]:
    step = max(config.MIN_CHUNK_ROWS, config.CHUNK_FLOATS // max(width, 1))
    return [(r0, min(m, r0 + step)) for r0 in range(0, m, step)]


def _white(x: np.ndarray, mean: np.ndarray, wh: Whitening | None) -> tuple[np.ndarray, np.ndarray]:
    """Whitened rows ``L^{-1}(x - mean)`` and scores ``Sigma^{-1}(x - mean)``
    of a chunk (both the centred rows when ``wh`` is None)."""
    xc = x - mean
    if wh is None:
        return xc, xc
    w = wh.solve(xc.T)
    return w.T, wh.solve_t(w).T


def setup_from_rows(
    yc: np.ndarray,
    focal: np.ndarray,
    other: np.ndarray,
    means: tuple[np.ndarray, np.ndarray],
    whitening: DesignWhitening[Whitening] | None,
    rank: int | None,
) -> _Setup:
    """The :class:`_Setup` of the focal block's tests (``whitening=None``: not
    standardized, rows only centred) from the raw rows of both blocks."""
    m, nf = focal.shape
    wh_f, wh_o = whitening if whitening is not None else (None, None)
    standardize = whitening is not None
    no = other.shape[1] * (1 if yc.ndim == 1 else yc.shape[1])
    w_res = np.empty((m, no))
    resid = np.empty((m, nf))
    g = np.zeros((nf, no))
    xhat = np.zeros((nf, no))
    zeta = np.zeros(nf)
    wsum = np.zeros(no)
    lev_p = np.full(m, 1.0 / m)
    rows = _chunks(m, 2 * nf + no)
    for r0, r1 in rows:
        w_o, _ = _white(other[r0:r1], means[1], wh_o)
        wy = products(yc[r0:r1], w_o)
        w_res[r0:r1] = wy
        w_f, z = _white(focal[r0:r1], means[0], wh_f)
        resid[r0:r1] = z
        g += z.T @ wy
        zeta += np.einsum("ij,ij->j", z, z)
        wsum += wy.sum(axis=0)
        if standardize:
            xhat += w_f.T @ wy
            lev_p[r0:r1] = (1.0 + np.einsum("ij,ij->i", w_f, w_f)) / m
    g /= m
    zeta /= m
    xhat /= m
    if np.any(zeta <= 0):
        raise ValueError("z has a column of zeros: a constant variable cannot be tested")
    # (I - P) W in place: w_f,i^T X = (f_i - fbar)^T C^{-T} X, one product per chunk
    proj = wh_f.solve_t(xhat) if wh_f is not None else None
    for r0, r1 in rows:
        w_res[r0:r1] -= wsum / m
        if proj is not None:
            w_res[r0:r1] -= (focal[r0:r1] - means[0]) @ proj
    if standardize:
        resid /= zeta
        rss, wr, p0 = m / zeta, m * g / zeta[:, None], nf + 1
    else:
        rss, wr, p0 = m * zeta, m * g, 1
    bases, d = _bases(rank, xhat, g, zeta, standardize, no)
    return _Setup(resid=resid, rss=rss, lev_p=lev_p, w_res=w_res, wr=wr, bases=bases,
                  standardize=standardize, p0=p0, d=d)
