"""Batched refits and the upper bounds on the largest principal angle.

Shared by :mod:`jdr_stats.inference.bootstrap`, the Poisson bootstrap and
the coverage studies in ``studies/``.  All angles here are in radians.
The derivations are in ``docs/theory/bootstrap.md``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..core._linalg import BlockMoments

__all__ = [
    "batched_dense_estimate",
    "pair_angles",
    "order_index",
    "percentile_bound",
    "calibrated_bound",
    "calibrated_level",
    "subsample_bound",
    "gap_diagnostics",
]

#: Relative tolerance of the collinearity check (as ``cholesky_factor``).
_COLLINEAR_TOL = 1e-10


def _stack(moms: Sequence[BlockMoments]):
    cov_a = np.stack([mm.cov_a for mm in moms])
    cov_b = np.stack([mm.cov_b for mm in moms])
    cross = np.stack([mm.cross for mm in moms])
    return cov_a, cov_b, cross


def _batched_cholesky(cov: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Lower Cholesky factors of a stack of covariances and which are usable.

    A covariance is usable when no variance is zero and the smallest
    eigenvalue of its correlation matrix is at least ``1e-10 n`` (the rule
    of :func:`jdr_stats.core._linalg.cholesky_factor`).
    """
    n = cov.shape[-1]
    d = np.sqrt(np.clip(np.diagonal(cov, axis1=1, axis2=2), 0.0, None))
    ok = np.all(d > 0, axis=1)
    dd = np.where(d > 0, d, 1.0)
    corr = cov / (dd[:, :, None] * dd[:, None, :])
    corr[~ok] = np.eye(n)
    ev = np.linalg.eigvalsh(corr)[:, 0]
    ok &= ev >= _COLLINEAR_TOL * n
    corr[~ok] = np.eye(n)
    return dd[:, :, None] * np.linalg.cholesky(corr), ok


def batched_dense_estimate(
    moms: Sequence[BlockMoments], rank: int, *, standardize: bool = True
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The dense estimator for a stack of moments at once.

    Returns ``dir_a`` (B, n1, r), ``dir_b`` (B, n2, r), all singular values
    (B, k) and a boolean mask of the replicates that could be fitted (the
    others, with a constant or collinear block, hold NaN).  The spans of
    ``dir_a`` and ``dir_b`` equal those of :func:`jdr_stats.estimation._estimate.estimate`
    (dense fits); column scaling and signs may differ.
    """
    cov_a, cov_b, cross = _stack(moms)
    if standardize:
        la, ok_a = _batched_cholesky(cov_a)
        lb, ok_b = _batched_cholesky(cov_b)
        ok = ok_a & ok_b
        xw = np.linalg.solve(la, cross)
        xw = np.swapaxes(np.linalg.solve(lb, np.swapaxes(xw, 1, 2)), 1, 2)
    else:
        ok = np.ones(cross.shape[0], dtype=bool)
        xw = cross
    u, s, vt = np.linalg.svd(xw, full_matrices=False)
    ur, vr = u[:, :, :rank], np.swapaxes(vt, 1, 2)[:, :, :rank]
    if standardize:
        dir_a = np.linalg.solve(np.swapaxes(la, 1, 2), ur)
        dir_b = np.linalg.solve(np.swapaxes(lb, 1, 2), vr)
    else:
        dir_a, dir_b = ur, vr
    dir_a[~ok] = np.nan
    dir_b[~ok] = np.nan
    s[~ok] = np.nan
    return dir_a, dir_b, s, ok


def pair_angles(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Principal angles (radians, ascending) between span(x_b) and span(y_b).

    ``x`` (B, n, r) and ``y`` (B, n, r) (or (n, r), broadcast) are any
    full-rank bases.  Angles below 45 degrees come from the sines (Bjorck
    and Golub), the others from the cosines.
    """
    qx, _ = np.linalg.qr(x)
    qy, _ = np.linalg.qr(y)
    if qx.ndim == 2:
        qx = np.broadcast_to(qx, qy.shape)
    proj = np.swapaxes(qx, -1, -2) @ qy
    cos = np.linalg.svd(proj, compute_uv=False)
    sin = np.linalg.svd(qy - qx @ proj, compute_uv=False)[..., ::-1]
    cos = np.clip(cos, -1.0, 1.0)
    sin = np.clip(sin, 0.0, 1.0)
    return np.where(sin**2 <= 0.5, np.arcsin(sin), np.arccos(cos))


def order_index(n: int, level: float) -> int:
    """0-based index of the ``ceil((n + 1) level)``-th order statistic, clipped."""
    k = math.ceil((n + 1) * level - 1e-9)
    return int(min(max(k, 1), n)) - 1


def percentile_bound(theta: np.ndarray, level: float) -> float:
    """The ``ceil((B + 1) level)``-th smallest replicate angle."""
    t = np.sort(np.asarray(theta, dtype=float))
    return float(t[order_index(t.size, level)])


def calibrated_level(theta: np.ndarray, theta_inner: np.ndarray, level: float) -> float:
    """Level of the fast double bootstrap (prepivoting with one inner replicate).

    ``theta[b]``: angle between replicate ``b`` and the estimate;
    ``theta_inner[b]``: angle between a resample *of replicate b* and
    replicate ``b``.  In the bootstrap world the estimate plays the truth, so
    the percentile bound at level ``lam`` covers there with probability about
    ``P*(theta* <= Q**(lam))``, ``Q**`` the quantile function of the inner
    angles.  Setting that to ``level`` gives
    ``lam = G**(Q*(level))`` (``G**`` the inner angles' distribution
    function), the level at which the outer percentile bound is taken.
    """
    q = percentile_bound(theta, level)
    inner = np.asarray(theta_inner, dtype=float)
    return float(np.mean(inner <= q))


def calibrated_bound(theta: np.ndarray, theta_inner: np.ndarray, level: float) -> float:
    """Percentile bound at the calibrated level (:func:`calibrated_level`)."""
    lam = calibrated_level(theta, theta_inner, level)
    return percentile_bound(theta, lam)


def subsample_bound(theta_k: np.ndarray, k: int, m: int, level: float) -> float:
    """m-out-of-n bound: replicates of ``k < m`` rows, ``sin`` rescaled by ``sqrt(k / m)``."""
    q = percentile_bound(theta_k, level)
    return float(np.arcsin(min(1.0, math.sqrt(k / m) * math.sin(q))))


def gap_diagnostics(s_hat: np.ndarray, s_boot: np.ndarray, rank: int) -> dict:
    """Gap of the sample singular values and its stability across replicates.

    Returns ``ratio`` ``s_r / s_{r+1}`` of the sample (``inf`` when
    ``r`` is the last), and ``crossing``: the share of replicates whose
    ``r``-th singular value is below the sample's ``(r+1)``-th.
    """
    s_hat = np.asarray(s_hat, dtype=float)
    s_boot = np.asarray(s_boot, dtype=float)
    if rank >= s_hat.size or s_hat[rank] <= 0:
        return {"ratio": math.inf, "crossing": 0.0}
    ratio = float(s_hat[rank - 1] / s_hat[rank])
    crossing = float(np.mean(s_boot[:, rank - 1] < s_hat[rank]))
    return {"ratio": ratio, "crossing": crossing}
