"""Subspace error metrics: principal angles and the paper's NSEE."""

from __future__ import annotations

from typing import Any

import numpy as np

from .core._linalg import orthonormal_basis
from .core._linalg import principal_angles as _principal_angles

__all__ = ["principal_angles", "subspace_error", "nsee"]


def _as_matrix(x: Any, argname: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(f"{argname} must be a matrix (basis in columns); got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{argname} contains NaN or infinite values")
    if np.linalg.matrix_rank(arr) < arr.shape[1]:
        raise ValueError(f"{argname} must have linearly independent columns")
    return arr


def principal_angles(A: Any, B: Any) -> np.ndarray:
    """Principal angles between span(A) and span(B), radians, ascending.

    Parameters
    ----------
    A, B : array_like, shape (n, k) and (n, l)
        Bases in columns; any scaling, need not be orthonormal.

    Returns
    -------
    ndarray, shape (min(k, l),)

    Examples
    --------
    >>> import numpy as np
    >>> principal_angles(np.eye(3)[:, :2], np.array([[1.0], [1.0], [0.0]]))
    array([0.])
    """
    return _principal_angles(_as_matrix(A, "A"), _as_matrix(B, "B"))


def subspace_error(U: Any, U_hat: Any) -> float:
    """``||U_perp^T orth(U_hat)||_F / sqrt(r)``, between 0 and 1.

    ``U_perp`` spans the orthogonal complement of span(U) and ``r`` is the
    number of columns of ``U``.  Equals ``sqrt(sum sin^2 theta_j / r)`` over
    the principal angles when both subspaces have dimension r.
    """
    u = _as_matrix(U, "U")
    uh = _as_matrix(U_hat, "U_hat")
    if u.shape[0] != uh.shape[0]:
        raise ValueError(f"U has {u.shape[0]} rows but U_hat has {uh.shape[0]}")
    qu = orthonormal_basis(u)
    qh = orthonormal_basis(uh)
    resid = qh - qu @ (qu.T @ qh)
    return float(np.linalg.norm(resid) / np.sqrt(u.shape[1]))


def nsee(U: Any, U_hat: Any, V: Any, V_hat: Any) -> float:
    """Normalised subspace estimation error of the paper (section 5.4).

    ``max(||U_perp^T U_hat||_F, ||V_perp^T V_hat||_F) / sqrt(r)`` with
    orthonormalised estimates: 0 for exact recovery, 1 for orthogonal
    subspaces.

    Examples
    --------
    >>> import numpy as np
    >>> U = np.eye(4)[:, :2]
    >>> nsee(U, U @ np.array([[2.0, 1.0], [0.0, 1.0]]), U, U)
    0.0
    """
    return max(subspace_error(U, U_hat), subspace_error(V, V_hat))
