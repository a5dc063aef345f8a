"""The permutation rank test (Cook and Yin 2001): ``Lambda_k`` recomputed
after permuting the rows of the complement coordinates, in batches that
joblib can run in parallel."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from .. import config
from ..resampling._progress import ProgressArg, run_batches
from ._rank_stats import WhitenedDesign


def _kr_chunks(uc: np.ndarray, vc: np.ndarray) -> Iterator[tuple[slice, np.ndarray]]:
    """Row chunks of the Khatri-Rao product: row i is vec(u_i v_i^T) (row-major)."""
    m, p = uc.shape
    q = vc.shape[1]
    step = max(1, config.CHUNK_FLOATS // max(p * q, 1))
    for start in range(0, m, step):
        sl = slice(start, min(start + step, m))
        yield sl, (uc[sl, :, None] * vc[sl, None, :]).reshape(-1, p * q)


def _permutation_stats(
    w: WhitenedDesign,
    k: int,
    n_perm: int,
    rng: np.random.Generator,
    *,
    n_jobs: int | None = None,
    progress: ProgressArg = False,
) -> np.ndarray:
    """``Lambda_k`` recomputed after permuting the complement coordinates' rows.

    In the rotated whitened coordinates ``(alpha, u) = a'[U, U_perp]`` and
    ``(beta, v) = b'[V, V_perp]`` the data are ``(y_i, alpha_i, beta_i)`` and
    ``(u_i, v_i)``.  Permuting the rows of ``(u, v)`` by ``pi`` is the same as
    permuting ``(y, alpha, beta)`` by ``sigma = pi^{-1}``; the permuted
    ``X_lin`` (before re-whitening) has blocks

    * ``diag(s_1..s_k)`` (unchanged),
    * ``(1/m) sum_j alpha_sigma(j) y_sigma(j) v_j^T``,
    * ``(1/m) sum_j u_j y_sigma(j) beta_sigma(j)^T``,
    * ``(1/m) sum_j u_j y_sigma(j) v_j^T`` (Khatri-Rao product, chunked),

    and the within-block covariances become ``[[I, C], [C^T, I]]`` with
    ``C = (1/m) sum_j alpha_sigma(j) u_j^T``; re-whitening with their Cholesky
    factors makes the result the estimator's statistic on the permuted data.

    For ``q > 1`` response columns (``w.y`` is ``Yw``, ``m x q``) each
    permutation recomputes the whole statistic, re-whitening and HOSVD
    included (:func:`_stats_of_rows`), from the rows permuted by ``rng``
    (the null of the q-column test before the rank tests took a stack; its
    draws are kept so that its p-values do not change).
    """
    if w.q > 1:  # q response columns: each permutation re-runs the HOSVD
        y, a, b = w.in_memory()
        return _perm_null(y, a, b, w.u, w.v, k, n_perm, rng)
    work = _PermutationBatch(w, k)
    parts = run_batches(work, n_perm, seed=rng, batch_size=min(n_perm, work.batch),
                        n_jobs=n_jobs, progress=progress, desc=f"permutations k={k}")
    return np.concatenate(parts)


class _PermutationBatch:
    """``batch(rngs)``: ``Lambda_k`` of ``len(rngs)`` permutations, the
    ``j``-th drawn with ``rngs[j]``.

    Picklable (it runs in joblib workers for ``n_jobs``); ``batch`` is the
    number of permutations that fit in one chunk of memory.  Each
    permutation has its own generator, so the p-values depend neither on
    the batches nor on ``n_jobs``.
    """

    def __init__(self, w: WhitenedDesign, k: int) -> None:
        m, n1, n2 = w.m, w.n1, w.n2
        y, a, b = w.in_memory()
        alpha, uc = a @ w.u[:, :k], a @ w.u[:, k:]
        beta, vc = b @ w.v[:, :k], b @ w.v[:, k:]
        p, q = n1 - k, n2 - k
        # columns gathered by each permutation: alpha, beta, alpha*y, beta*y
        self.side = np.hstack([alpha, beta, alpha * y[:, None], beta * y[:, None]])  # m x 4k
        self.comp_t = np.hstack([uc, vc]).T  # (p + q) x m
        self.uc, self.vc = uc, vc
        per_perm = m * (1 + 4 * k) + 3 * n1 * n2 + p * q + 4 * k * (p + q)
        self.batch = int(max(1, config.CHUNK_FLOATS // per_perm))
        self.w, self.k = w, k

    def __call__(self, rngs: list[Any]) -> np.ndarray:
        w, k = self.w, self.k
        m, n1, n2 = w.m, w.n1, w.n2
        p, q = n1 - k, n2 - k
        nb = len(rngs)
        idx = np.stack([g.permutation(m) for g in rngs])  # permutation j from rngs[j]
        yp = w.in_memory()[0][idx]  # nb x m
        cc = np.zeros((nb, p * q))
        for sl, kr in _kr_chunks(self.uc, self.vc):
            cc += yp[:, sl] @ kr
        xp: np.ndarray = np.zeros((nb, n1, n2))
        xp[:, k:, k:] = cc.reshape(nb, p, q) / m
        if k > 0:
            # (p + q) x 4k products for every permutation, one batched matmul
            h = self.comp_t @ self.side[idx] / m  # nb x (p + q) x 4k
            ca = h[:, :p, :k].transpose(0, 2, 1)  # (1/m) sum alpha_sigma(j) u_j^T
            cb = h[:, p:, k : 2 * k].transpose(0, 2, 1)
            xp[:, :k, :k] = np.diag(w.s[:k])
            xp[:, :k, k:] = h[:, p:, 2 * k : 3 * k].transpose(0, 2, 1)
            xp[:, k:, :k] = h[:, :p, 3 * k :]
            cov_a = np.broadcast_to(np.eye(n1), (nb, n1, n1)).copy()
            cov_b = np.broadcast_to(np.eye(n2), (nb, n2, n2)).copy()
            cov_a[:, :k, k:] = ca
            cov_a[:, k:, :k] = ca.transpose(0, 2, 1)
            cov_b[:, :k, k:] = cb
            cov_b[:, k:, :k] = cb.transpose(0, 2, 1)
            la = np.linalg.cholesky(cov_a)
            lb = np.linalg.cholesky(cov_b)
            xp = np.linalg.solve(la, xp)
            xp = np.linalg.solve(lb, xp.transpose(0, 2, 1)).transpose(0, 2, 1)
        sv = np.linalg.svd(xp, compute_uv=False)
        return m * np.sum(sv[:, k:] ** 2, axis=1) / w.var_y


def _centred_factor(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centred blocks of a batch (B x m x n) and the inverse Cholesky factors of
    their covariances (divisor m)."""
    xc = x - x.mean(axis=1, keepdims=True)
    cov = xc.transpose(0, 2, 1) @ xc / x.shape[1]
    return xc, np.linalg.inv(np.linalg.cholesky(cov))


def _stats_of_rows(y: np.ndarray, a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """``Lambda_k`` of a batch of data sets (blocks B x m x n re-whitened, ``y`` centred):
    ``X_c = La^{-1} (A^T diag(y_c) B / m) Lb^{-T}``."""
    m = y.shape[0]
    (ac, la), (bc, lb) = _centred_factor(a), _centred_factor(b)
    yc = y - y.mean(axis=0)
    at = ac.transpose(0, 2, 1)
    raw = np.stack([at @ (bc * yc[None, :, c:c + 1]) for c in range(yc.shape[1])], axis=1)
    xq = la[:, None] @ raw @ lb[:, None].transpose(0, 1, 3, 2) / m  # B x q x n1 x n2
    nb, q, n1, n2 = xq.shape
    # the HOSVD of every data set at once (signs do not matter for Lambda_k)
    u = np.linalg.svd(xq.transpose(0, 2, 1, 3).reshape(nb, n1, q * n2))[0][:, :, k:]
    v = np.linalg.svd(xq.transpose(0, 3, 1, 2).reshape(nb, n2, q * n1))[0][:, :, k:]
    core = u.transpose(0, 2, 1)[:, None] @ xq @ v[:, None]
    return m * np.sum(core**2, axis=(1, 2, 3))


def _perm_null(y: np.ndarray, a: np.ndarray, b: np.ndarray, u: np.ndarray, v: np.ndarray,
               k: int, n_perm: int, rng: np.random.Generator) -> np.ndarray:
    ar, br = a @ u, b @ v  # rotated: first k columns signal, the rest complement
    m = y.shape[0]
    batch = max(1, min(n_perm, 4_000_000 // (m * (ar.shape[1] + br.shape[1]))))
    out = []
    for start in range(0, n_perm, batch):
        idx = np.stack([rng.permutation(m) for _ in range(min(batch, n_perm - start))])
        ap = np.repeat(ar[None], len(idx), axis=0)
        bp = np.repeat(br[None], len(idx), axis=0)
        ap[:, :, k:], bp[:, :, k:] = ar[idx, k:], br[idx, k:]
        out.append(_stats_of_rows(y, ap, bp, k))
    return np.concatenate(out)
