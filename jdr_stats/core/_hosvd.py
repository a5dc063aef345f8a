"""The estimator for a response of ``q > 1`` columns: HOSVD of the q cross moments.

With a whitened response ``Yw`` (m x q: class indicators or several
responses, :mod:`jdr_stats.io._responses`) the population object is the set of
cross moments ``X_c = E[a' Yw_c b'^T]``, ``c = 1..q``, whose joint column and
row spaces are the two subspaces.  ``U`` is spanned by the top-r left
singular vectors of the mode-1 unfolding ``M1 = [X_1 ... X_q]`` (n1 x q n2),
``V`` by those of ``M2 = [X_1^T ... X_q^T]`` (n2 x q n1); for ``q = 1`` this
is the SVD of ``X_lin``.  Rank statistics: :func:`complement_statistic`.
Derivation: docs/theory/responses.md.
"""

from __future__ import annotations

import numpy as np

from ._linalg import Whitening, sign_columns, unit_columns, whiten_cross

__all__ = ["complement_statistic", "decompose_q", "hosvd", "whitened_crosses"]


def whitened_crosses(cross_q: np.ndarray, wa: Whitening | None,
                     wb: Whitening | None) -> np.ndarray:
    """``(q, n1, n2)``: each cross moment in whitened coordinates."""
    if wa is None or wb is None:
        return np.array(cross_q, dtype=float)
    return np.stack([whiten_cross(c, wa, wb) for c in cross_q])


def hosvd(xq: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Full factor matrices of the mode-1 and mode-2 unfoldings of ``xq``.

    Returns ``(u, s1, v, s2)``: ``u`` (n1 x n1) and ``v`` (n2 x n2)
    orthogonal, columns in decreasing order of the singular values ``s1``
    of ``M1`` and ``s2`` of ``M2`` (signs as :func:`~jdr_stats.core._linalg.svd_signed`: largest
    entry of each column positive), so ``u[:, :k]``, ``v[:, :k]`` are the
    rank-k HOSVD estimates and ``u[:, k:]``, ``v[:, k:]`` their complements.
    """
    q, n1, n2 = xq.shape
    m1 = xq.transpose(1, 0, 2).reshape(n1, q * n2)
    m2 = xq.transpose(2, 0, 1).reshape(n2, q * n1)
    u, s1 = _left_factors(m1)
    v, s2 = _left_factors(m2)
    return sign_columns(u)[0], s1, sign_columns(v)[0], s2


def _left_factors(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All ``n`` left singular vectors (``n x n``) and the singular values of
    ``mat`` (``n x p``), without the ``p x p`` right factor.

    A wide ``mat`` (``n <= p``, the usual unfolding with ``q > 1``) has ``n``
    left singular vectors in its thin SVD already; a tall one (``n > p``)
    needs the full factorisation for the complement, whose right factor is
    then the small one.  The full SVD of a wide unfolding (216 x 2400 at ten
    classes) spent 94% of its time on the 2400 x 2400 right factor.
    """
    u, s, _ = np.linalg.svd(mat, full_matrices=mat.shape[0] > mat.shape[1])
    return u, s


def complement_statistic(xq: np.ndarray, u: np.ndarray, v: np.ndarray, k: int,
                         m: int) -> float:
    """``Lambda_k = m sum_c ||U0^T X_c V0||_F^2`` with ``U0 = u[:, k:]``, ``V0 = v[:, k:]``.

    For ``q = 1`` with the SVD factors this is ``m sum_{j>k} s_j^2`` (the
    response whitened: ``s_y^2 = 1``).
    """
    # two batched products (GEMMs): the unoptimised three-operand einsum
    # looped over every index (0.2 s a rank at 76 + 64 columns, q = 9)
    core = np.matmul(np.matmul(u[:, k:].T, xq), v[:, k:])
    return float(m * np.sum(core**2))


def decompose_q(
    cross_q: np.ndarray, wa: Whitening | None, wb: Whitening | None, rank: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The dense fit for ``q`` responses, as ``_estimate._decompose`` for one.

    Returns ``(xq, s1, u_std, v_std, dir_a, dir_b)`` with ``s1`` the
    singular values of the mode-1 unfolding (first ``min(n1, n2)``).
    """
    xq = whitened_crosses(cross_q, wa, wb)
    u, s1, v, _ = hosvd(xq)
    n = min(xq.shape[1], xq.shape[2])
    u_std, v_std = u[:, :rank], v[:, :rank]
    if wa is None or wb is None:
        dir_a, dir_b = unit_columns(u_std.copy()), unit_columns(v_std.copy())
    else:
        dir_a, dir_b = wa.to_original(u_std), wb.to_original(v_std)
    s = np.zeros(n)
    s[: min(n, s1.size)] = s1[:n]
    return xq, s, u_std, v_std, dir_a, dir_b

