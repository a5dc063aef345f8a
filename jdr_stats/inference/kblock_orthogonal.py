"""The orthogonal interaction estimand of K blocks and the residual's
influence term (theory page "K blocks", section "Interactions orthogonal to
the main effects").

``fit(..., interactions="orthogonal")`` of ``K >= 3`` blocks (or two with a
rank per block) replaces the response by its least squares residual ``e``
on ``[1, x_1, ..., x_K]`` before every piece is formed, so no pure linear
main effect enters any piece, whatever the design's third moments.  Each
piece is linear in the response, ``M(e) = M(y) - M(Z) gamma`` (``Z`` the
stacked whitened rows, which span the same columns as the centred blocks;
the intercept is the response's centring), so the estimated coefficients
``gamma = R^{-1} (1/m) sum_i z_i y_i`` (``R`` the covariance of ``Z``) add
to each row's influence

    - M(Z) R^{-1} z_i e_i,

``M(Z)`` the pieces with the columns of ``Z`` as responses (the pieces'
scales and weights held).  The rank tests add it to the rows' analytic
influences; delete-one refits re-estimate the residual instead.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from ..core._linalg import centred_basis
from ..core.kestimate import KBlockFactors, stacked_pieces

__all__ = ["kblock_residual", "residual_influences"]

NAME = 'interactions="orthogonal"'


def kblock_residual(y: np.ndarray, blocks: Sequence[np.ndarray]) -> np.ndarray:
    """Least squares residual of ``y`` on ``[1, x_1, ..., x_K]`` (``sum e = 0``
    and ``x_k^T e = 0`` for every block).

    Raises ``ValueError`` naming ``interactions`` for a response of more
    than one column, too few rows, or linearly dependent columns.

    Examples
    --------
    >>> import numpy as np
    >>> from jdr_stats.inference.kblock_orthogonal import kblock_residual
    >>> rng = np.random.default_rng(0)
    >>> xs = [rng.standard_normal((200, 3)) for _ in range(3)]
    >>> y = xs[0][:, 0] * xs[1][:, 0] + 2.0 * xs[2][:, 1] + rng.standard_normal(200)
    >>> e = kblock_residual(y, xs)
    >>> bool(np.allclose(e, kblock_residual(y + 5.0 * xs[1][:, 2], xs)))
    True
    """
    y = np.asarray(y, dtype=float)
    if y.ndim != 1:
        raise ValueError(f"{NAME} needs a single numeric response column; got an array "
                         f"of shape {y.shape}")
    x = np.hstack([np.asarray(b, float) for b in blocks])
    m, p = x.shape
    if m <= p + 1:
        raise ValueError(f"{NAME} regresses y on [1, every block] ({p + 1} columns) and "
                         f"needs more rows than that; got m = {m}")
    _, q = centred_basis(x, NAME, "[1, every block]")
    yc = y - y.mean()
    return np.asarray(yc - q @ (q.T @ yc))


def residual_influences(e: np.ndarray, zs: Sequence[np.ndarray], fac: KBlockFactors, *,
                        cross_cov: dict[tuple[int, int], np.ndarray] | None,
                        only: Collection[int] | None = None) -> list[np.ndarray]:
    """Each row's influence on every block's stacked pieces through the
    residual's estimated coefficients, ``- M_k(Z) R^{-1} z_i e_i``
    (``m x n_k x D_k`` per block; module docstring), to add to the
    influences of the pieces of the response ``e`` held fixed.

    ``e`` the residual (mean zero), ``zs`` the whitened, centred rows,
    ``cross_cov`` the Hermite correction's cross covariances (None:
    uncorrected), as :func:`~jdr_stats.core.kestimate.stacked_pieces`.
    Unweighted rows only.  ``only``: the blocks formed (the others' arrays
    empty, ``m x n_k x 0``).
    """
    zfull = np.hstack(list(zs))
    m, p = zfull.shape
    rmat = zfull.T @ zfull / m
    gains = np.linalg.solve((rmat + rmat.T) / 2, (zfull * e[:, None]).T).T  # (m, p)
    per_col = [stacked_pieces(zfull[:, j], zs, fac, cross_cov=cross_cov) for j in range(p)]
    out = []
    for k in range(len(zs)):
        if only is not None and k not in only:
            out.append(np.empty((m, zs[k].shape[1], 0)))
            continue
        mz = np.stack([cols[k] for cols in per_col])  # (p, n_k, D_k)
        out.append(-np.einsum("il,lnd->ind", gains, mz, optimize=True))
    return out
