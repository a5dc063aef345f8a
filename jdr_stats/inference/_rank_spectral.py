"""The spectral rank test (``method="spectral"``; theory of rank tests, 6e).

Row ``k`` refers ``m s_{k+1}^2 / s_y^2`` (``s_j`` the singular values of the
whitened ``X_lin``) to sign flips of the rows of a bound that holds in
every sample: for any rank-``k`` projector ``P`` of the first block,
``s_{k+1}(X_lin) <= ||(I - P) X_lin||`` (spectral norm), and the same with
a projector ``Q`` of the second block on the right.  The projectors are
cross-fitted: the rows of each random half are projected off the top ``k``
singular vectors of the other half's ``X_lin``, so that no row's noise
chooses its own projector.  Each replicate draws Rademacher signs
``e_i`` and computes

``T* = min(||sum_i e_i y_i (I - P_i) a'_i b_i'^T||^2,
||sum_i e_i y_i a'_i ((I - Q_i) b'_i)^T||^2) / (m s_y^2)``;

one ``n1 x n2`` product per replicate, plus ``O(m k (n1 + n2))`` for the
projections.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy import linalg

from .._progress import ProgressArg, run_batches
from ._rank_stats import _CHUNK_FLOATS, _Whitened

__all__ = ["spectral_statistic", "spectral_null"]


def spectral_statistic(w: _Whitened, k: int) -> float:
    """``m s_{k+1}^2 / s_y^2``: the (k+1)-th squared singular value of ``X_lin``
    in units of the noise of one entry."""
    return float(w.m * w.s[k] ** 2 / w.var_y)


def _top_eig(x: np.ndarray) -> float:
    """Largest squared singular value of ``x`` (from the smaller Gram matrix)."""
    g = x @ x.T if x.shape[0] <= x.shape[1] else x.T @ x
    n = g.shape[0]
    return float(linalg.eigh(g, eigvals_only=True, subset_by_index=[n - 1, n - 1],
                             check_finite=False)[0])


def _half_directions(a: np.ndarray, b: np.ndarray, y: np.ndarray, rows: np.ndarray,
                     k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``k`` left and right singular vectors of ``X_lin`` of the given rows."""
    x = a[rows].T @ (y[rows, None] * b[rows]) / rows.size
    u, _, vt = np.linalg.svd(x, full_matrices=False)
    return u[:, :k], vt[:k].T


class _SpectralBatch:
    """``batch(rngs)``: the bound ``T*`` of ``len(rngs)`` sign flips.

    Picklable (joblib workers for ``n_jobs``); every replicate has its own
    generator, so the p-values depend neither on the batches nor on
    ``n_jobs``.  The halves of the cross-fit are drawn from ``split_rng``
    before any replicate.
    """

    def __init__(self, w: _Whitened, k: int, split_rng: np.random.Generator) -> None:
        y, a, b = w.in_memory()
        self.y, self.a, self.b = y, a, b
        self.scale = w.m * w.var_y
        #: the projections' corrections, both halves at once: row i of ``ca``
        #: holds a'_i U_h in the k columns of its half h (zeros in the other
        #: half's), ``u1`` the halves' directions side by side, so that
        #: ``u1 @ (ca^T diag(w) b')`` is sum_i w_i P_i a'_i b_i'^T
        self.ca: np.ndarray | None = None
        if k > 0:
            order = split_rng.permutation(w.m)
            first, second = np.sort(order[: w.m // 2]), np.sort(order[w.m // 2:])
            self.ca, self.cb = np.zeros((w.m, 2 * k)), np.zeros((w.m, 2 * k))
            u1s, v1s = [], []
            for h, (fit_rows, own) in enumerate(((second, first), (first, second))):
                u1, v1 = _half_directions(a, b, y, fit_rows, k)
                # the rows `own` are projected off the other half's directions
                cols = slice(h * k, (h + 1) * k)
                self.ca[own, cols], self.cb[own, cols] = a[own] @ u1, b[own] @ v1
                u1s.append(u1)
                v1s.append(v1)
            self.u1, self.v1 = np.hstack(u1s), np.hstack(v1s)
        per_rep = w.m + 3 * w.n1 * w.n2
        self.batch = int(max(1, min(64, _CHUNK_FLOATS // per_rep)))

    def __call__(self, rngs: list[Any]) -> np.ndarray:
        y, a, b = self.y, self.a, self.b
        out = np.empty(len(rngs))
        for j, g in enumerate(rngs):
            wy = y * g.choice(np.array([-1.0, 1.0]), size=y.size)
            full = a.T @ (wy[:, None] * b)
            if self.ca is None:
                out[j] = _top_eig(full)
                continue
            left = full - self.u1 @ ((self.ca * wy[:, None]).T @ b)
            full -= (a.T @ (self.cb * wy[:, None])) @ self.v1.T
            out[j] = min(_top_eig(left), _top_eig(full))
        return out / self.scale


def spectral_null(
    w: _Whitened,
    k: int,
    n_rep: int,
    rng: np.random.Generator,
    *,
    n_jobs: int | None = None,
    progress: ProgressArg = False,
) -> np.ndarray:
    """``n_rep`` sign-flip replicates of the bound on ``m s_{k+1}^2 / s_y^2``."""
    work = _SpectralBatch(w, k, rng)
    parts = run_batches(work, n_rep, seed=rng, batch_size=min(n_rep, work.batch),
                        n_jobs=n_jobs, progress=progress, desc=f"sign flips k={k}")
    return np.concatenate(parts)
