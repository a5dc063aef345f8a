"""Leave-one-variable-out bases of the conditional coordinate tests.

The conditional test of variable ``j`` of the focal block projects on the
other block's fitted rank-``r`` basis computed without variable ``j``: the
top-``r`` eigenvectors of ``K_j = K - rho_j g_j g_j^T`` (``K = X^T X`` for
the whitened cross moment ``X``, focal block on the left).  Each ``K_j`` is a
rank-one downdate of ``K``, so one eigendecomposition ``K = Q diag(lam) Q^T``
serves every ``j``: with ``gh = Q^T g_j`` and ``w_l = rho_j gh_l^2``, the
eigenvalues ``mu`` of ``K_j`` are the roots of the secular equation

    f(mu) = 1 - sum_l w_l / (lam_l - mu) = 0,

one in each interval ``(lam_{c+1}, lam_c)`` (interlacing; below ``lam_n`` for
the last), and the eigenvector of ``mu`` is ``Q (diag(lam) - mu)^{-1} gh``
(Golub 1973; Bunch, Nielsen and Sorensen 1978).  The roots are found by
bisection vectorised over the variables (``f`` is monotone in each
interval), so the bases of all ``nf`` variables cost one ``no x no``
eigendecomposition plus ``O(nf no (r ITER + no r))`` instead of ``nf`` of
them (``O(nf no^3)``).  A variable whose root is not resolved to the
tolerance (a component ``gh_c = 0`` or tied eigenvalues: the secular form
degenerates) is recomputed by a dense eigendecomposition.  The statistics use
only the span of each basis, so the result equals the dense computation up
to rounding (checked in ``tests/test_support_loo.py``).
"""

from __future__ import annotations

import numpy as np

from .. import config

__all__ = ["align_bases", "loo_bases", "loo_bases_dense", "top_basis"]

#: Bisection steps of the secular equation: each halves the bracket, so 80
#: steps resolve a root to about 1e-24 of its interval, below the rounding of
#: ``lam_l - mu`` for every ``l``.
_ITER = 80

#: Relative eigen-residual ``||K_j v - mu v|| / lam_1`` above which a
#: variable's basis is recomputed densely.
_RESID_TOL = 1e-9


#: Largest entry of ``V^T V - I`` accepted from the secular vectors.
_ORTH_TOL = 1e-8


def loo_bases_dense(k_mat: np.ndarray, g: np.ndarray, rho: np.ndarray, rank: int) -> np.ndarray:
    """The bases by one dense eigendecomposition per variable (the reference)."""
    nf, no = g.shape
    out = np.empty((nf, no, rank))
    step = max(1, config.CHUNK_FLOATS // (no * no))
    for j0 in range(0, nf, step):
        j1 = min(nf, j0 + step)
        gj = g[j0:j1]
        stack = k_mat[None, :, :] - rho[j0:j1, None, None] * gj[:, :, None] * gj[:, None, :]
        _, vecs = np.linalg.eigh(stack)
        out[j0:j1] = vecs[:, :, ::-1][:, :, :rank]
    return out


def loo_bases(k_mat: np.ndarray, g: np.ndarray, rho: np.ndarray, rank: int) -> np.ndarray:
    """Top-``rank`` eigenvectors of ``K - rho_j g_j g_j^T`` for every j.

    ``K = X^T X`` for the whitened cross moment ``X`` (focal block on the
    left): ``K - g_j g_j^T / (Sigma^{-1})_jj`` is ``X^T X`` of the fit without
    variable j, so the result is the other block's fitted basis with the
    tested variable left out.  Shape (nf, no, rank); columns orthonormal up to
    rounding, spanning the same subspace as :func:`loo_bases_dense`.
    """
    nf, no = g.shape
    lam, q = np.linalg.eigh(k_mat)
    lam, q = lam[::-1].copy(), np.ascontiguousarray(q[:, ::-1])
    out = np.empty((nf, no, rank))
    step = max(1, config.CHUNK_FLOATS // (no * (rank + 2)))
    for j0 in range(0, nf, step):
        j1 = min(nf, j0 + step)
        gh = g[j0:j1] @ q  # (k, no): g_j in the eigenbasis of K
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            vh, bad = _secular_vectors(lam, gh, rho[j0:j1], rank)
        k = j1 - j0
        # back to the original coordinates: one product for the whole chunk
        out[j0:j1] = (q @ vh.transpose(1, 0, 2).reshape(no, k * rank)).reshape(
            no, k, rank).transpose(1, 0, 2)
        if bad.any():
            idx = np.flatnonzero(bad) + j0
            out[idx] = loo_bases_dense(k_mat, g[idx], rho[idx], rank)
    return out


def top_basis(k_mat: np.ndarray, rank: int) -> np.ndarray:
    """The top-``rank`` eigenvectors of the symmetric ``k_mat`` (no x rank),
    largest first: the other block's fitted basis when ``k_mat = X^T X``."""
    _, vecs = np.linalg.eigh(k_mat)
    return vecs[:, ::-1][:, :rank]


def align_bases(bases: np.ndarray, full: np.ndarray) -> np.ndarray:
    """Each basis rotated within its span to the one closest to ``full``.

    ``bases`` (nf, no, r) with orthonormal columns, ``full`` (no, r): returns
    ``B_j R_j`` with ``R_j = U_j W_j^T`` from the SVD ``B_j^T full = U_j S_j
    W_j^T`` (the orthogonal Procrustes rotation, minimising
    ``||B_j R - full||_F``).  The result depends on ``B_j`` only through its
    span, and turns with ``full`` (``full O`` gives ``B_j R_j O``), so a
    statistic that takes coordinates in the aligned basis and a covariance in
    ``full`` no longer depends on the eigensolvers' signs and rotations.
    """
    u, _, wt = np.linalg.svd(np.einsum("jnd,ne->jde", bases, full))
    return np.matmul(bases, np.matmul(u, wt))


def _secular_vectors(
    lam: np.ndarray, gh: np.ndarray, rho: np.ndarray, rank: int
) -> tuple[np.ndarray, np.ndarray]:
    """Top-``rank`` eigenvectors of ``diag(lam) - rho_j gh_j gh_j^T`` (k, no, rank)
    in the eigenbasis, and a flag for the rows not resolved to tolerance."""
    k, no = gh.shape
    w = rho[:, None] * gh**2
    vh = np.empty((k, no, rank))
    bad = np.zeros(k, dtype=bool)
    scale = max(abs(lam[0]), np.finfo(float).tiny)
    for c in range(rank):
        hi = lam[c]
        lo = np.full(k, lam[c + 1]) if c + 1 < no else lam[-1] - w.sum(axis=1)
        dl = lam - hi  # lam_l - mu = dl_l + delta, mu = hi - delta
        a, b = np.zeros(k), hi - lo
        for _ in range(_ITER):
            mid = 0.5 * (a + b)
            f = 1.0 - np.sum(w / (dl[None, :] + mid[:, None]), axis=1)
            low = f < 0  # f rises with delta: the root lies above mid
            a = np.where(low, mid, a)
            b = np.where(low, b, mid)
        delta = 0.5 * (a + b)
        mu = hi - delta
        v = gh / (dl[None, :] + delta[:, None])
        v /= np.linalg.norm(v, axis=1, keepdims=True)
        resid = (lam[None, :] - mu[:, None]) * v - (
            rho * np.einsum("jl,jl->j", gh, v))[:, None] * gh
        err = np.linalg.norm(resid, axis=1) / scale
        bad |= ~(np.isfinite(err) & (err <= _RESID_TOL)) | (hi - lo <= 0)
        vh[:, :, c] = v
    # nearly tied roots: each vector may have a small residual while their
    # span is not the invariant subspace; orthonormality tells
    gram = np.matmul(vh.transpose(0, 2, 1), vh) - np.eye(rank)
    bad |= ~(np.abs(gram).max(axis=(1, 2)) <= _ORTH_TOL)
    return vh, bad
