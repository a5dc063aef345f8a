"""Shared numerics: moments, whitening, truncated SVD, complements, angles.

Every estimator of the package calls these; nothing here knows about a
particular method.

Moments are computed in row chunks (two passes: means, then centred products),
so a fit needs O(chunk x (n1 + n2) + n1 n2) memory beyond its input and works
on any array that supports row slicing (``numpy.memmap`` included).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from scipy import linalg as sla

__all__ = [
    "BlockMoments",
    "block_moments",
    "cholesky_factor",
    "whiten_cross",
    "unwhiten",
    "svd_signed",
    "orthonormal_basis",
    "orthogonal_complement",
    "principal_angles",
    "unit_columns",
]

#: Bytes of one chunk of centred rows (per block) in :func:`block_moments`.
CHUNK_BYTES = 1 << 25


@dataclass(frozen=True)
class BlockMoments:
    """Sufficient statistics of a two-block fit (divisor: the total weight).

    With normalised weights ``w_i`` (sum 1; ``1/m`` without weights),
    ``cov_a = sum w_i (a_i - mean_a)(a_i - mean_a)^T``, likewise ``cov_b``, and
    ``cross = sum w_i (a_i - mean_a) (y_i - mean_y) (b_i - mean_b)^T``, the
    centred cross moment ``S`` of the theory page.  ``var_y`` is
    ``sum w_i (y_i - mean_y)^2``.
    """

    nobs: int
    mean_y: float
    var_y: float
    mean_a: np.ndarray
    mean_b: np.ndarray
    cov_a: np.ndarray
    cov_b: np.ndarray
    cross: np.ndarray


def _chunk_rows(width: int) -> int:
    return max(1024, CHUNK_BYTES // (8 * max(width, 1)))


def block_moments(
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    weights: np.ndarray | None = None,
    *,
    center_y: bool = True,
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
    center_y : bool
        Centre y at its (weighted) mean in the cross moment.  ``False`` uses
        y as given, as in the paper's eq. (lin).
    covariances : bool
        Compute the block covariances (needed for whitening).  ``False``
        skips their two products and leaves ``cov_a`` and ``cov_b`` as NaN.

    Notes
    -----
    Two passes over the rows, each in chunks: the first computes the means,
    the second accumulates the centred products.  No copy of a full block is
    made; ``a`` and ``b`` may be memory maps.
    """
    m = y.shape[0]
    n1, n2 = a.shape[1], b.shape[1]
    if weights is None:
        w = None
        wsum = float(m)
        mean_y = float(y.mean())
        mean_a = a.mean(axis=0)
        mean_b = b.mean(axis=0)
    else:
        w = np.asarray(weights, dtype=float)
        wsum = float(w.sum())
        mean_y = float(w @ y) / wsum
        mean_a = (w @ a) / wsum
        mean_b = (w @ b) / wsum
    yc_all = y - mean_y if center_y else np.asarray(y, dtype=float)
    cov_a = np.zeros((n1, n1))
    cov_b = np.zeros((n2, n2))
    cross = np.zeros((n1, n2))
    step = min(_chunk_rows(n1 + n2), m)
    # Reused buffers for the centred rows of one chunk.
    buf_a = np.empty((step, n1))
    buf_b = np.empty((step, n2))
    for start in range(0, m, step):
        stop = min(start + step, m)
        k = stop - start
        ac = np.subtract(a[start:stop], mean_a, out=buf_a[:k])
        bc = np.subtract(b[start:stop], mean_b, out=buf_b[:k])
        yc = yc_all[start:stop] if w is None else w[start:stop] * yc_all[start:stop]
        if not covariances:
            pass
        elif w is None:
            cov_a += ac.T @ ac
            cov_b += bc.T @ bc
        else:
            sw = np.sqrt(w[start:stop])[:, None]
            cov_a += (ac * sw).T @ (ac * sw)
            cov_b += (bc * sw).T @ (bc * sw)
        cross += ac.T @ (yc[:, None] * bc)
    yc_dev = y - mean_y
    var_y = float(yc_dev @ yc_dev) / wsum if w is None else float(w @ yc_dev**2) / wsum
    if not covariances:
        cov_a[:] = np.nan
        cov_b[:] = np.nan
    return BlockMoments(
        nobs=m,
        mean_y=mean_y,
        var_y=var_y,
        mean_a=mean_a,
        mean_b=mean_b,
        cov_a=(cov_a + cov_a.T) / (2 * wsum),
        cov_b=(cov_b + cov_b.T) / (2 * wsum),
        cross=cross / wsum,
    )


def cholesky_factor(
    cov: np.ndarray, argname: str, names: Sequence[str], *, tol: float = 1e-10
) -> np.ndarray:
    """Lower Cholesky factor ``L`` of a covariance (``cov = L L^T``).

    Raises a ``ValueError`` naming the variables involved when the block's
    columns are collinear: the smallest eigenvalue of the correlation matrix
    is below ``tol`` (relative to the number of variables).
    """
    d = np.sqrt(np.diag(cov))
    if not np.all(d > 0):
        const = [names[j] for j in np.flatnonzero(~(d > 0))]
        raise ValueError(f"{argname} has constant column(s) {const}")
    corr = cov / np.outer(d, d)
    evals, evecs = np.linalg.eigh(corr)
    if evals[0] < tol * corr.shape[0]:
        v = evecs[:, 0]
        involved = [names[j] for j in np.flatnonzero(np.abs(v) > 0.05)]
        raise ValueError(
            f"{argname} has collinear columns {involved} (smallest eigenvalue of "
            f"their correlation matrix {evals[0]:.3g}); remove redundant columns"
        )
    return d[:, None] * np.linalg.cholesky(corr)


def whiten_cross(cross: np.ndarray, la: np.ndarray, lb: np.ndarray) -> np.ndarray:
    """``La^{-1} S Lb^{-T}``: the cross moment in whitened coordinates."""
    left = sla.solve_triangular(la, cross, lower=True)
    return sla.solve_triangular(lb, left.T, lower=True).T


def unwhiten(l_factor: np.ndarray, u_std: np.ndarray) -> np.ndarray:
    """Map whitened directions back: ``L^{-T} U'`` (then unit columns)."""
    return unit_columns(sla.solve_triangular(l_factor.T, u_std, lower=False))


def unit_columns(x: np.ndarray) -> np.ndarray:
    """Scale each column to unit Euclidean length (zero columns kept)."""
    norms = np.linalg.norm(x, axis=0)
    norms[norms == 0] = 1.0
    return x / norms


def _sign_fix(u: np.ndarray, v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Make the entry of largest magnitude of each column of ``u`` positive."""
    idx = np.argmax(np.abs(u), axis=0)
    signs = np.sign(u[idx, np.arange(u.shape[1])])
    signs[signs == 0] = 1.0
    return u * signs, v * signs


def svd_signed(x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin SVD ``x = U diag(s) V^T`` with deterministic signs.

    Returns ``U`` (n1 x k), all singular values ``s`` (descending) and
    ``V`` (n2 x k), k = min(n1, n2); each column of ``U`` has its entry of
    largest magnitude positive, and ``V`` is flipped with it.
    """
    u, s, vt = np.linalg.svd(x, full_matrices=False)
    u, v = _sign_fix(u, vt.T)
    return u, s, v


def orthonormal_basis(x: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the column span of ``x`` (full column rank)."""
    q, _ = np.linalg.qr(np.asarray(x, dtype=float))
    return q


def orthogonal_complement(x: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the orthogonal complement of span(x)."""
    x = np.asarray(x, dtype=float)
    q, _ = np.linalg.qr(x, mode="complete")
    return q[:, x.shape[1] :]


def principal_angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Principal angles (radians, ascending) between span(a) and span(b).

    Any bases, any column scaling.  Small angles are computed from sines
    (Bjorck and Golub 1973), so they are accurate to machine precision rather
    than to its square root.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim == 1:
        a = a[:, None]
    if b.ndim == 1:
        b = b[:, None]
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"the bases must have the same number of rows; got {a.shape[0]} and "
            f"{b.shape[0]}"
        )
    return np.sort(sla.subspace_angles(a, b))
