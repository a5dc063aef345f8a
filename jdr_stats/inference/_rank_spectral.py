"""The spectral rank test (``method="spectral"``; theory of rank tests, 6e).

Row ``k`` refers ``m s_{k+1}^2 / s_y^2`` (``s_j`` the singular values of the
whitened ``X_lin``) to sign flips of the rows of a bound that holds in
every sample: for any rank-``k`` projector ``P`` of the first block,
``s_{k+1}(X_lin) <= ||(I - P) X_lin||`` (spectral norm), and the same with
a projector ``Q`` of the second block on the right.  The projectors are
cross-fitted: the rows of each random half are projected off the top ``k``
singular vectors of the other half's ``X_lin``, so that no row's noise
chooses its own projector.  Each replicate transforms the rows by
independent Rademacher signs ``sa_i``, ``sb_i`` of their complement
coordinates, ``a~_i = P_i a'_i + sa_i (I - P_i) a'_i`` and ``b~_i`` likewise
(a map of the data under which their law is invariant under the premise),
and computes

``T* = min(||sum_i y_i (I - P_i) a~_i b~_i^T||^2,
||sum_i y_i a~_i ((I - Q_i) b~_i)^T||^2) / (m s_y^2)``.

The rows ``k`` of one *pass* (consecutive ranks, :func:`pass_plan`) share
the halves and the signs: the top ``k`` directions of a half are the first
``k`` of its top ``K``, so one ``n1 x n2`` product per replicate serves
every ``k`` of the pass, each further ``k`` adding two rank-two updates
and two largest eigenvalues.  Each row's p-value is exact in its own
right (the same argument as for one row); the rows are dependent, as the
rows of the other tests are.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np
from scipy import linalg
from scipy.sparse.linalg import ArpackNoConvergence, LinearOperator, eigsh

from .. import config
from .._linalg import mp_edge
from .._progress import ProgressArg, progress_bar, run_batches
from ._rank_stats import _CHUNK_FLOATS, _Whitened

__all__ = ["spectral_statistic", "spectral_null", "spectral_pvalues", "pass_plan", "plan_passes"]

#: rows per pass after the first (which runs to the noise edge's guess + 1)
PASS_ROWS = 8
#: sequential p-values (Besag and Clifford 1991): a rank's flips stop once
#: this many replicates reach its statistic, its p-value then ``h / L``
SEQUENTIAL_EXCEEDANCES = 10

#: below this smaller dimension the largest eigenvalue comes from a dense
#: eigensolver, above it from Lanczos iterations (faster from about 300)
_DENSE_EIG_MAX = 256


def spectral_statistic(w: _Whitened, k: int) -> float:
    """``m s_{k+1}^2 / s_y^2``: the (k+1)-th squared singular value of ``X_lin``
    in units of the noise of one entry."""
    return float(w.m * w.s[k] ** 2 / w.var_y)


def pass_plan(w: _Whitened, top: int) -> list[range]:
    """The passes of ranks ``0..top``: the first runs to one past the number of
    statistics above the noise edge ``(sqrt(n1) + sqrt(n2))^2`` (the directions
    a selection is expected to find), the others :data:`PASS_ROWS` ranks each.
    Depends on the singular values only, so a rank selection's rows are the
    first rows of the full table with the same seed."""
    return plan_passes(w.m * w.s[: top + 1] ** 2 / w.var_y, mp_edge(w.n1, w.n2), top)


def plan_passes(stats: np.ndarray, edge: float | np.ndarray, top: int) -> list[range]:
    """:func:`pass_plan` from the statistics of ranks ``0..top`` and the noise edge."""
    first = min(top, int(np.sum(stats > edge)) + 1)
    plan, lo = [range(0, first + 1)], first + 1
    while lo <= top:
        plan.append(range(lo, min(top, lo + PASS_ROWS - 1) + 1))
        lo += PASS_ROWS
    return plan


def _top_eig(x: np.ndarray) -> float:
    """Largest squared singular value of ``x``: a dense eigensolver on the
    smaller Gram matrix, or Lanczos iterations (to machine precision) for
    large ``x``."""
    small = min(x.shape)
    if small <= _DENSE_EIG_MAX:
        g = x @ x.T if x.shape[0] <= x.shape[1] else x.T @ x
        return float(linalg.eigh(g, eigvals_only=True, subset_by_index=[small - 1, small - 1],
                                 check_finite=False)[0])
    if x.shape[0] <= x.shape[1]:
        op = LinearOperator((small, small), matvec=lambda v: x @ (x.T @ v), dtype=float)
    else:
        op = LinearOperator((small, small), matvec=lambda v: x.T @ (x @ v), dtype=float)
    try:
        return float(eigsh(op, k=1, which="LA", v0=np.ones(small), tol=0,
                           return_eigenvectors=False)[0])
    except ArpackNoConvergence:  # pragma: no cover - dense fallback
        return float(np.linalg.norm(x, 2) ** 2)


def _half_directions(a: np.ndarray, b: np.ndarray, y: np.ndarray, rows: np.ndarray,
                     k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``k`` left and right singular vectors of ``X_lin`` of the given rows;
    for a response of ``q`` columns (``y`` of shape (m, q)) the rank-k HOSVD
    estimates: top ``k`` left singular vectors of the unfoldings
    ``[X_1, ..., X_q]`` and ``[X_1^T, ..., X_q^T]``."""
    if y.ndim == 1:
        x = a[rows].T @ (y[rows, None] * b[rows]) / rows.size
        u, _, vt = np.linalg.svd(x, full_matrices=False)
        return u[:, :k], vt[:k].T
    xs = [a[rows].T @ (y[rows, c, None] * b[rows]) / rows.size for c in range(y.shape[1])]
    u = np.linalg.svd(np.hstack(xs), full_matrices=False)[0]
    v = np.linalg.svd(np.vstack(xs), full_matrices=False)[2].T
    return u[:, :k], v[:, :k]


def _sides(left: list[np.ndarray], right: list[np.ndarray]) -> tuple[float, float]:
    """The squared spectral norms of the two bounds from the per-column
    matrices: ``||[L_1, ..., L_q]||^2`` (the first block's unfolding) and
    ``||[R_1; ...; R_q]||^2`` (the second's); ``q = 1``: ``||L||^2, ||R||^2``."""
    if len(left) == 1:
        top = _top_eig(left[0])
        return top, (top if right[0] is left[0] else _top_eig(right[0]))
    return _top_eig(np.hstack(left)), _top_eig(np.vstack(right))


class _SpectralBatch:
    """``batch(rngs)``: the two one-sided bounds of ``len(rngs)`` sign flips at
    the ranks ``ks`` (a range), as a ``len(rngs) x len(ks) x 2`` array (left:
    the first block projected, right: the second; equal at ``k = 0``).

    Picklable (joblib workers for ``n_jobs``); every replicate has its own
    generator, so the p-values depend neither on the batches nor on
    ``n_jobs``.  The halves of the cross-fit are drawn from ``split_rng``
    before any replicate (when some ``k`` of the pass is positive, or
    ``draw_halves``).
    """

    def __init__(self, w: _Whitened, ks: range | int, split_rng: np.random.Generator,
                 draw_halves: bool = False) -> None:
        self.ks = range(ks, ks + 1) if isinstance(ks, int) else ks
        y, a, b = w.in_memory()
        self.y, self.a, self.b = y, a, b
        self.scale = w.m * w.var_y
        kmax = self.kmax = self.ks[-1]
        #: the projections' corrections, both halves at once: row i of ``ca``
        #: holds a'_i U_h in the columns of its half h (columns h, h + 2,
        #: ... : direction j of half h in column 2 j + h; zeros in the other
        #: half's), ``u1`` the halves' directions in the same order, so that
        #: ``u1[:, :2k] @ (ca[:, :2k]^T diag(w) b')`` is sum_i w_i P_i a'_i b_i'^T
        self.ca: np.ndarray | None = None
        # the halves are drawn when the pass has a positive rank (or when asked:
        # a part of a planned pass draws what the whole pass would)
        order = split_rng.permutation(w.m) if kmax > 0 or draw_halves else None
        if kmax > 0:
            assert order is not None
            first, second = np.sort(order[: w.m // 2]), np.sort(order[w.m // 2:])
            self.ca, self.cb = np.zeros((w.m, 2 * kmax)), np.zeros((w.m, 2 * kmax))
            self.u1, self.v1 = np.zeros((w.n1, 2 * kmax)), np.zeros((w.n2, 2 * kmax))
            for h, (fit_rows, own) in enumerate(((second, first), (first, second))):
                u1, v1 = _half_directions(a, b, y, fit_rows, kmax)
                # the rows `own` are projected off the other half's directions
                self.ca[own, h::2], self.cb[own, h::2] = a[own] @ u1, b[own] @ v1
                self.u1[:, h::2], self.v1[:, h::2] = u1, v1
        q = 1 if y.ndim == 1 else y.shape[1]
        per_rep = q * (w.m + 3 * w.n1 * w.n2 + 4 * kmax * (w.m + w.n1 + w.n2))
        self.batch = int(max(1, min(64, _CHUNK_FLOATS // per_rep)))

    def __call__(self, rngs: list[Any]) -> np.ndarray:
        y, ks = self.y, self.ks
        columns = [y] if y.ndim == 1 else list(y.T)
        pm = np.array([-1.0, 1.0])
        out = np.empty((len(rngs), len(ks), 2))
        for j, g in enumerate(rngs):
            # row i's complement coordinates (I - P_i) a'_i and (I - Q_i) b'_i
            # get independent signs sa_i and sb_i
            sa, sb = g.choice(pm, size=y.shape[0]), g.choice(pm, size=y.shape[0])
            if self.one_sign:  # the whole row flipped (before 2026-11-27)
                sb = np.ones_like(sb)
            # one generator per response column, advanced one rank at a time
            per_rank = zip(*(self._matrices(yc, sa, sb) for yc in columns), strict=True)
            for i, mats in enumerate(per_rank):
                out[j, i] = _sides([lk for lk, _ in mats], [rk for _, rk in mats])
        return out / self.scale

    #: True: one sign per row flips the row's whole term on both sides (the
    #: approximation of the first version, kept for the comparison of
    #: ``studies/check_spectral_sides.py``)
    one_sign = False

    def _matrices(self, y: np.ndarray, sa: np.ndarray, sb: np.ndarray
                  ) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The two sides' matrices ``(L_k, R_k)`` of one response column at the
        ranks of the pass, in order (the same matrix twice at ``k = 0``)."""
        wy = y * sa * sb
        full = self.a.T @ (wy[:, None] * self.b)
        if self.ks[0] == 0:
            yield full, full
        if self.ca is None:  # the pass is k = 0 alone
            return
        cl, cr = y * sa * (1 - sb), y * sb * (1 - sa)
        if self.one_sign:
            cl = cr = np.zeros_like(y)
        yield from self._projected(full, wy, cl, cr)

    def _projected(self, full: np.ndarray, wy: np.ndarray, cl: np.ndarray,
                   cr: np.ndarray) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """The two sides at the positive ranks of the pass.

        With ``a~_i = P_i a'_i + sa_i (I - P_i) a'_i`` and ``b~_i`` likewise,
        the left side is ``sum_i y_i (I - P_i) a~_i b~_i^T =
        sum_i wy_i (I - P_i) a'_i b_i'^T + sum_i cl_i (I - P_i) a'_i (Q_i b'_i)^T``
        (``wy = y sa sb``, ``cl = y sa (1 - sb)``), and the right side
        ``sum_i wy_i a'_i ((I - Q_i) b'_i)^T + sum_i cr_i P_i a'_i ((I - Q_i) b'_i)^T``
        (``cr = y sb (1 - sa)``).
        """
        assert self.ca is not None
        b, a, ks = self.b, self.a, self.ks
        ca, cb, u1, v1 = self.ca, self.cb, self.u1, self.v1
        c_left = (ca * wy[:, None]).T @ b          # sum wy (U_h^T a') b'^T
        c_right = a.T @ (cb * wy[:, None])         # sum wy a' (V_h^T b')^T
        d_left = a.T @ (cb * cl[:, None])          # sum cl a' (V_h^T b')^T
        e_left = (ca * cl[:, None]).T @ cb         # sum cl (U_h^T a')(V_h^T b')^T
        ca_r = ca * cr[:, None]
        f_right = ca_r.T @ b                       # sum cr (U_h^T a') b'^T
        g_right = ca_r.T @ cb                      # sum cr (U_h^T a')(V_h^T b')^T
        start = max(ks[0], 1)
        left = full - u1[:, : 2 * start] @ c_left[: 2 * start]
        right = full - c_right[:, : 2 * start] @ v1[:, : 2 * start].T
        for k in range(start, ks[-1] + 1):
            if k > start:
                cols = slice(2 * k - 2, 2 * k)
                left -= u1[:, cols] @ c_left[cols]
                right -= c_right[:, cols] @ v1[:, cols].T
            c = 2 * k
            yield (left + (d_left[:, :c] - u1[:, :c] @ e_left[:c, :c]) @ v1[:, :c].T,
                   right + u1[:, :c] @ (f_right[:c] - g_right[:c, :c] @ v1[:, :c].T))


def spectral_null(
    w: _Whitened,
    ks: range | int,
    n_rep: int,
    rng: np.random.Generator,
    *,
    n_jobs: int | None = None,
    progress: ProgressArg = False,
) -> np.ndarray:
    """``n_rep`` sign-flip replicates of the two one-sided bounds on
    ``m s_{k+1}^2 / s_y^2`` at the ranks ``ks``: an ``n_rep x len(ks) x 2``
    array (one pass)."""
    work = _SpectralBatch(w, ks, rng)
    parts = run_batches(work, n_rep, seed=rng, batch_size=min(n_rep, work.batch),
                        n_jobs=n_jobs, progress=progress,
                        desc=f"sign flips k={work.ks[0]}..{work.ks[-1]}")
    return np.concatenate(parts)


def spectral_pvalues(
    w: _Whitened,
    ks: range,
    n_rep: int,
    rng: np.random.Generator,
    *,
    n_jobs: int | None = None,
    progress: ProgressArg = False,
    timing: Callable[[float, float], None] | None = None,
    stats: np.ndarray | None = None,
    draw_halves: bool = False,
) -> tuple[np.ndarray, int]:
    """Sequential Monte Carlo p-values of the ranks ``ks`` (one pass) and the
    number of sign flips drawn.

    The flips come in chunks of ``config.SPECTRAL_SEQUENTIAL_CHUNK``; the pass stops once
    every rank has ``h =`` :data:`SEQUENTIAL_EXCEEDANCES` replicates at or
    above its statistic, or after ``n_rep``.  A rank whose count reached
    ``h`` at replicate ``L`` gets ``p = h / L``, any other ``(1 + count) /
    (n_rep + 1)``: the p-value of Besag and Clifford (1991), exact for a
    sequence of exchangeable replicates stopped by its own count, so drawing
    further flips for the other ranks changes nothing.  A non-rejection is
    reached after about ``h / p`` flips, a rejection needs all ``n_rep``.
    ``timing``, if given, is called after the first chunk with the seconds of
    the setup (the halves' directions) and per replicate.  ``stats``: the
    statistics of ``ks`` (default :func:`spectral_statistic`; a ``q``-column
    response passes its own, :mod:`._rank_q`).  ``draw_halves=True``: ``ks``
    is the part of a pass with positive ranks that needs flips; the halves
    are drawn as for the whole pass, so each rank's replicates, and its
    p-value, are those of the whole pass.
    """
    start = time.perf_counter()
    work = _SpectralBatch(w, ks, rng, draw_halves)
    setup = time.perf_counter() - start
    entropy = int(rng.integers(2**62))
    if stats is None:
        stats = np.array([spectral_statistic(w, k) for k in ks])
    stats = np.asarray(stats, dtype=float) * (1 - 1e-10)
    h = SEQUENTIAL_EXCEEDANCES
    count = np.zeros(len(ks), dtype=int)
    reached = np.zeros(len(ks), dtype=int)  # replicate (1-based) of the h-th exceedance
    done = 0
    with progress_bar(progress, n_rep, f"sign flips k={ks[0]}..{ks[-1]}") as update:
        while done < n_rep and not np.all(reached > 0):
            step = min(config.SPECTRAL_SEQUENTIAL_CHUNK, n_rep - done)
            parts = run_batches(work, step, seed=entropy, batch_size=min(step, work.batch),
                                n_jobs=n_jobs, first=done)
            hits = np.concatenate(parts).min(axis=2) >= stats  # step x len(ks)
            total = count + np.cumsum(hits, axis=0)
            for j in np.flatnonzero(reached == 0):
                at = np.flatnonzero(total[:, j] >= h)
                if at.size:
                    reached[j] = done + at[0] + 1
            count = total[-1]
            if timing is not None and done == 0:
                timing(setup, (time.perf_counter() - start - setup) / step)
            done += step
            update(step)
    pv = np.where(reached > 0, h / np.maximum(reached, 1), (1 + count) / (n_rep + 1))
    return pv, done
