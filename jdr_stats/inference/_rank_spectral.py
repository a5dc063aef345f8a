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
rows of the other tests are.  The sequential p-values need only whether
each replicate reaches each statistic (:meth:`_SpectralBatch.reaches`):
the ranks already decided are skipped, the second side is formed only
where the first reaches the statistic, and a side below it is certified by
a Cholesky factorisation instead of its eigenvalue (:func:`_reaches`).

The flips stream: each batch of replicates is one pass over the whitened
row chunks (in memory, or from the model's row source: Parquet, CSV
chunks, dask), every replicate's sums accumulated in the same pass.  A
row's half and its signs are bits of its block of ``policy.BLOCK_ROWS``
rows, drawn from that block's own generator
(:func:`~jdr_stats.resampling._engine.row_bits`), so the p-values do not depend on
where the rows are stored nor on how they are chunked.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any

import numpy as np

from .. import config
from ..core._linalg import blas_for_blocks, blas_single_thread, mp_edge
from ..resampling._engine import row_bits, row_signs
from ..resampling._progress import ProgressArg, progress_bar, run_batches
from ..runtime._lazy import lapack, linalg, sparse_linalg
from ._rank_stats import WhitenedDesign
from ._spectral_sums import (
    _accumulate,
    _all_w,
    _FlippedRows,
    _GroupSums,
    _row_groups,
    _row_of,
    _Sides,
    _zero_sums,
)
from .rank_robust import Chunks

__all__ = ["flip_signs", "pass_plan", "plan_passes", "row_halves", "spectral_null",
           "spectral_pvalues", "spectral_pvalues_settled", "spectral_statistic"]

#: rows per pass after the first (which runs to the noise edge's guess + 1)
PASS_ROWS = 8
#: sequential p-values (Besag and Clifford 1991): a rank's flips stop once
#: this many replicates reach its statistic, its p-value then ``h / L``
SEQUENTIAL_EXCEEDANCES = 10

#: below this smaller dimension the largest eigenvalue comes from a dense
#: eigensolver, above it from Lanczos iterations (faster from about 300)
_DENSE_EIG_MAX = 256


def spectral_statistic(w: WhitenedDesign, k: int) -> float:
    """``m s_{k+1}^2 / s_y^2``: the (k+1)-th squared singular value of ``X_lin``
    in units of the noise of one entry; for ``q`` response columns the
    smaller of the two unfoldings' (k+1)-th (:attr:`WhitenedDesign.s_joint`)."""
    return float(w.m * w.s_joint[k] ** 2 / w.var_y)


def pass_plan(w: WhitenedDesign, top: int) -> list[range]:
    """The passes of ranks ``0..top``: the first runs to one past the number of
    statistics above the noise edge ``(sqrt(n1) + sqrt(n2))^2`` (the directions
    a selection is expected to find), the others :data:`PASS_ROWS` ranks each.
    Depends on the singular values only, so a rank selection's rows are the
    first rows of the full table with the same seed.  For ``q`` response
    columns the statistics are the unfoldings' and the edge the smaller of
    theirs (:func:`~jdr_stats.core._linalg.mp_edge`)."""
    return plan_passes(w.m * w.s_joint[: top + 1] ** 2 / w.var_y,
                       mp_edge(w.n1, w.n2, 0, w.q), top)


def plan_passes(stats: np.ndarray, edge: float | np.ndarray, top: int) -> list[range]:
    """:func:`pass_plan` from the statistics of ranks ``0..top`` and the noise edge."""
    first = min(top, int(np.sum(stats > edge)) + 1)
    plan, lo = [range(0, first + 1)], first + 1
    while lo <= top:
        plan.append(range(lo, min(top, lo + PASS_ROWS - 1) + 1))
        lo += PASS_ROWS
    return plan


def _gram(x: np.ndarray) -> np.ndarray:
    """The smaller Gram matrix of ``x``: ``x x^T`` or ``x^T x``."""
    return x @ x.T if x.shape[0] <= x.shape[1] else x.T @ x


def _top_eig(x: np.ndarray) -> float:
    """Largest squared singular value of ``x``: a dense eigensolver on the
    smaller Gram matrix, or Lanczos iterations (to machine precision) for
    large ``x``."""
    small = min(x.shape)
    if small <= _DENSE_EIG_MAX:
        return _gram_top(_gram(x))
    if x.shape[0] <= x.shape[1]:
        op = sparse_linalg.LinearOperator((small, small), matvec=lambda v: x @ (x.T @ v),
                                          dtype=float)
    else:
        op = sparse_linalg.LinearOperator((small, small), matvec=lambda v: x.T @ (x @ v),
                                          dtype=float)
    try:
        return float(sparse_linalg.eigsh(op, k=1, which="LA", v0=np.ones(small), tol=0,
                           return_eigenvectors=False)[0])
    except sparse_linalg.ArpackNoConvergence:  # pragma: no cover - dense fallback
        return float(np.linalg.norm(x, 2) ** 2)


def _gram_top(g: np.ndarray) -> float:
    """Largest eigenvalue of the symmetric ``g`` (a dense eigensolver)."""
    n = g.shape[0]
    return float(linalg.eigh(g, eigvals_only=True, subset_by_index=[n - 1, n - 1],
                             check_finite=False)[0])


#: relative margin of the certificate of :func:`_reaches` (far above the
#: rounding of a Cholesky factorisation, ``n eps`` of the matrix's norm)
_CERTIFICATE_MARGIN = 1e-8


def _reaches(x: np.ndarray, level: float, scale: float) -> bool:
    """``_top_eig(x) / scale >= level``, the same decision with less work.

    Below the dense solver's size, a Cholesky factorisation of ``c I - G``
    (``G`` the smaller Gram matrix of ``x``, ``c = level scale (1 -``
    :data:`_CERTIFICATE_MARGIN` ``)``) that succeeds certifies that every
    eigenvalue of ``G`` is below ``c``, hence (the factorisation backward
    stable, the eigensolver accurate to ``n eps ||G||``) the eigenvalue
    :func:`_top_eig` computes is below ``level scale``: the answer is no,
    at a fraction of the eigensolver's cost.  Otherwise the eigenvalue is
    computed as :func:`_top_eig` computes it."""
    if min(x.shape) > _DENSE_EIG_MAX:
        return _top_eig(x) / scale >= level
    return _gram_reaches(_gram(x), level, scale)


def _gram_reaches(g: np.ndarray, level: float, scale: float) -> bool:
    """:func:`_reaches` from the smaller Gram matrix ``g`` of ``x``."""
    below = -g
    below.flat[:: g.shape[0] + 1] += level * scale * (1 - _CERTIFICATE_MARGIN)
    if lapack.dpotrf(below, lower=1, overwrite_a=1, clean=0)[1] == 0:
        return False
    return _gram_top(g) / scale >= level


def _directions(xs: list[np.ndarray], k: int) -> tuple[np.ndarray, np.ndarray]:
    """Top ``k`` left and right singular vectors of one half's ``X_lin``; for a
    response of ``q`` columns (``xs`` the q matrices) the rank-k HOSVD
    estimates: top ``k`` left singular vectors of the unfoldings
    ``[X_1, ..., X_q]`` and ``[X_1^T, ..., X_q^T]``."""
    if len(xs) == 1:
        u, _, vt = np.linalg.svd(xs[0], full_matrices=False)
        return u[:, :k], vt[:k].T
    u = np.linalg.svd(np.hstack(xs), full_matrices=False)[0]
    v = np.linalg.svd(np.vstack(xs), full_matrices=False)[2].T
    return u[:, :k], v[:, :k]


def _columns(y: np.ndarray) -> list[np.ndarray]:
    return [y] if y.ndim == 1 else list(y.T)


def _offset_chunks(chunks: Chunks) -> Iterator[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """``(start, y, a', b')``: the whitened row chunks with the index of their first row."""
    start = 0
    for y, a, b in chunks():
        yield start, y, a, b
        start += len(y)


def _whitened_chunks(w: WhitenedDesign) -> Chunks:
    """The whitened rows of ``w`` as a re-iterable factory of chunks: its row
    source's (streamed) or, for rows given in memory only, one chunk."""
    if w.chunks is not None:
        return w.chunks
    y, a, b = w.in_memory()
    return lambda: iter([(y, a, b)])


def row_halves(entropy: int, start: int, stop: int) -> np.ndarray:
    """The cross-fit half (0 or 1) of the rows ``start..stop-1``: one fair bit
    per row, drawn by blocks of rows (:func:`~jdr_stats.resampling._engine.row_bits`)."""
    return row_bits(entropy, start, stop, 1)[0]


def flip_signs(seed: int, start: int, stop: int) -> tuple[np.ndarray, np.ndarray]:
    """The signs ``sa``, ``sb`` of the rows ``start..stop-1`` in the replicate
    whose seed word is ``seed`` (:func:`~jdr_stats.resampling._engine.row_signs`)."""
    sa, sb = row_signs(seed, start, stop, 2)
    return sa, sb


class _SpectralBatch:
    """``batch(rngs)``: the two one-sided bounds of ``len(rngs)`` sign flips at
    the ranks ``ks`` (a range), as a ``len(rngs) x len(ks) x 2`` array (left:
    the first block projected, right: the second; equal at ``k = 0``).

    The rows are read in one pass per batch of replicates, from memory or
    streamed from the model's row source (:attr:`WhitenedDesign.chunks`), the
    sums of every replicate of the batch accumulated together (memory: the
    batch's ``q n1 n2`` sums each, the batch bounded by
    ``config.CHUNK_FLOATS``).  Every random draw is a function of the row's
    index: row ``i``'s half is a bit of the block of rows it belongs to
    (:func:`row_halves`, from a word drawn from ``split_rng``), and its signs
    in replicate ``j`` are bits of that block drawn from a word of the
    replicate's generator (:func:`flip_signs`).  So the p-values depend
    neither on the chunks of rows (in memory, Parquet, CSV, dask), nor on the
    batches of replicates, nor on ``n_jobs`` (the object is picklable for
    joblib workers).
    """

    def __init__(self, w: WhitenedDesign, ks: range | int, split_rng: np.random.Generator) -> None:
        self.ks = range(ks, ks + 1) if isinstance(ks, int) else ks
        self.chunks = _whitened_chunks(w)
        #: rows in memory (one chunk): each chunk's halves, corrections and
        #: groups (:meth:`_prepared`) are made once, not once per batch
        self._in_memory = w.chunks is None or w.a is not None
        self._prepared_chunks: dict[int, Any] = {}
        #: the halves' copies of the rows (:class:`_FlippedRows`) are kept for
        #: every batch only while all the rows fit in the rank tests' chunk
        #: budget; beyond, a response column's sums run over all the rows of
        #: the chunk in blocks (:func:`_accumulate_blocks`: the same sums to
        #: rounding, a few products of ``2 K`` columns more, no copy)
        self._copy_halves = not self._in_memory or w.a is None or \
            w.a.shape[0] * (w.n1 + w.n2) <= config.CHUNK_FLOATS
        self.scale = w.m * w.var_y
        self.n1, self.n2 = w.n1, w.n2
        kmax = self.kmax = self.ks[-1]
        #: the halves' word is drawn whatever the ranks, so a part of a pass
        #: draws the halves (and the replicates' words) the whole pass would
        self.half_entropy = int(split_rng.integers(2**63 - 1))
        #: ``u1``, ``v1``: direction j of half h in column 2 j + h, the
        #: directions that the rows of half h are projected off (fitted on the
        #: other half), so that row i's corrections are ``a'_i u1`` in the
        #: columns of its half (zeros in the other half's)
        self.u1: np.ndarray | None = None
        self.v1: np.ndarray | None = None
        self.q = 1
        if kmax > 0:
            sums: list[list[np.ndarray]] = [[], []]
            counts = [0, 0]
            # without the halves' copies, each half's rows a block at a time
            step = None if self._copy_halves else config.chunk_rows(w.n1 + w.n2)
            for start, y_all, a_all, b_all in _offset_chunks(self.chunks):
                half_all = row_halves(self.half_entropy, start, start + len(y_all))
                for lo in range(0, len(y_all), step or max(len(y_all), 1)):
                    sl = slice(lo, None if step is None else lo + step)
                    y, a, b, half = y_all[sl], a_all[sl], b_all[sl], half_all[sl]
                    for h in (0, 1):
                        rows = half == h
                        counts[h] += int(rows.sum())
                        ah, bh = a[rows], b[rows]
                        xs = [ah.T @ (yc[rows, None] * bh) for yc in _columns(y)]
                        sums[h] = xs if not sums[h] else [
                            s0 + x for s0, x in zip(sums[h], xs, strict=True)]
            if min(counts) == 0:
                raise ValueError("the spectral rank test needs rows in both halves of its "
                                 f"cross-fit; got {counts[0]} and {counts[1]} rows")
            self.u1, self.v1 = np.zeros((w.n1, 2 * kmax)), np.zeros((w.n2, 2 * kmax))
            for h in (0, 1):
                other = 1 - h
                with blas_for_blocks(w.n1, w.n2):
                    u1, v1 = _directions([x / counts[other] for x in sums[other]], kmax)
                self.u1[:, h::2], self.v1[:, h::2] = u1, v1
        if w.y is not None:
            self.q = 1 if w.y.ndim == 1 else w.y.shape[1]
        q, n1, n2, k2 = self.q, w.n1, w.n2, 2 * kmax
        per_rep = q * (n1 * n2 + 2 * k2 * (n1 + n2) + 2 * k2 * n2 + 2 * k2 * k2)
        self.batch = int(max(1, min(64, config.CHUNK_FLOATS // per_rep)))

    #: True: one sign per row flips the row's whole term on both sides (the
    #: approximation of the first version, kept for the comparison of
    #: ``studies/check_spectral_sides.py``)
    one_sign = False

    def __call__(self, rngs: list[Any]) -> np.ndarray:
        # many small products and eigensolves: one BLAS thread is faster
        # (threads spin on matrices of a few dozen rows) and makes the
        # numbers independent of the machine's thread count and of n_jobs
        with blas_single_thread():
            sums = self._sums(rngs)
            one = sums["full"].shape[1] == 1  # q = 1: at k = 0 the two sides are equal
            out = np.empty((len(rngs), len(self.ks), 2))
            for i, side in enumerate(self._unfoldings(sums)):
                grams = side.left_gram()
                for j in range(len(rngs)):
                    top = _top_eig(side.left(j)) if grams is None else _gram_top(grams[j])
                    out[j, i] = top, (top if self.ks[i] == 0 and one else _top_eig(side.right(j)))
            return out / self.scale

    def reaches(self, rngs: list[Any], levels: np.ndarray) -> np.ndarray:
        """Whether each replicate reaches ``levels`` (one per rank of the pass):
        ``self(rngs).min(axis=2) >= levels`` as a ``len(rngs) x len(ks)``
        boolean array, False at the ranks whose level is NaN (not needed).

        The same decisions with less work: the second side is decided only
        where the first reaches its level (the minimum is below it
        otherwise), the ranks past the last needed one are not formed, and a
        side below its level is certified by a Cholesky factorisation
        instead of its eigenvalue (:func:`_reaches`)."""
        levels = np.asarray(levels, dtype=float)
        out = np.zeros((len(rngs), len(self.ks)), dtype=bool)
        needed = np.flatnonzero(~np.isnan(levels))
        if needed.size == 0:
            return out
        with blas_single_thread():
            sums = self._sums(rngs)
            one = sums["full"].shape[1] == 1  # q = 1: at k = 0 the two sides are equal
            for i, side in enumerate(self._unfoldings(sums)):
                if i > needed[-1]:
                    break
                level = levels[i]
                if np.isnan(level):
                    continue
                grams = side.left_gram()
                for j in range(len(rngs)):
                    if not (_reaches(side.left(j), level, self.scale) if grams is None
                            else _gram_reaches(grams[j], level, self.scale)):
                        continue
                    out[j, i] = (self.ks[i] == 0 and one) or _reaches(side.right(j), level,
                                                                      self.scale)
        return out

    def _sums(self, rngs: list[Any]) -> dict[str, np.ndarray]:
        """Each replicate's sums over the rows (:func:`_accumulate`), the
        replicates and the response columns stacked: a dict of ``R x q x ...``
        arrays (``R = len(rngs)``)."""
        seeds = [int(g.integers(2**63 - 1)) for g in rngs]
        n1, n2, k2 = self.n1, self.n2, 2 * self.kmax
        projected = self.u1 is not None
        stacked: dict[str, np.ndarray] | None = None
        acc: list[dict[str, np.ndarray]] = []
        for start, y, a, b in _offset_chunks(self.chunks):
            cols = _columns(y)
            if stacked is None:
                stacked = _zero_sums(n1, n2, k2, projected, (len(seeds), len(cols)))
                acc = [{key: arr[j] for key, arr in stacked.items()} for j in range(len(seeds))]
            ca, cb, halves, groups = self._prepared(start, y, a, b)
            for j, seed in enumerate(seeds):
                sa, sb = flip_signs(seed, start, start + len(y))
                if self.one_sign:  # the whole row flipped (before 2026-11-27)
                    sb = np.ones_like(sb)
                # one column's sums: views of the stacked ones
                per_col = [{key: arr[c] for key, arr in acc[j].items()}
                           for c in range(len(cols))] if groups is None else []
                if not projected:
                    for c, yc in enumerate(cols):
                        _accumulate(per_col[c], yc, a, b, sa, sb, ca, cb, self.one_sign)
                    continue
                assert ca is not None and cb is not None
                if groups is not None:
                    groups.add(acc[j], sa, sb, self.one_sign)
                    continue
                if not halves:  # no copies of the halves: all the rows, in blocks
                    for c, yc in enumerate(cols):
                        _accumulate_blocks(per_col[c], yc, a, b, sa, sb, ca, cb, self.one_sign)
                    continue
                flipped = _FlippedRows(a, b, ca, cb, sa, sb, halves, self.one_sign)
                for c, yc in enumerate(cols):
                    flipped.accumulate(per_col[c], yc, self.u1, self.v1)
        assert stacked is not None
        return stacked

    def _prepared(self, start: int, y: np.ndarray, a: np.ndarray, b: np.ndarray) -> Any:
        """The chunk's corrections ``ca``, ``cb`` (None without projections),
        halves and groups (:func:`_row_groups`), which do not depend on the
        replicate; kept for the next batch when the rows are in memory."""
        if start in self._prepared_chunks:
            return self._prepared_chunks[start]
        ca = cb = None
        halves: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        if self.u1 is not None:
            assert self.v1 is not None
            k2 = 2 * self.kmax
            half = row_halves(self.half_entropy, start, start + len(y))
            ca, cb = np.zeros((len(y), k2)), np.zeros((len(y), k2))
            copy = self._copy_halves or (y.ndim == 2 and y.shape[1] > 1)
            if not copy:  # all the directions on all the rows, no copy of a half
                ca[...], cb[...] = a @ self.u1, b @ self.v1
            for h in (0, 1):
                rows = half == h
                if copy:
                    ca[rows, h::2] = a[rows] @ self.u1[:, h::2]
                    cb[rows, h::2] = b[rows] @ self.v1[:, h::2]
                    halves.append((rows, a[rows], b[rows]))
                else:  # row i keeps the directions of its own half's columns
                    ca[rows, 1 - h::2] = 0.0
                    cb[rows, 1 - h::2] = 0.0
        groups = _row_groups(y, a, b, ca, cb, halves) if self.u1 is not None else None
        out = ca, cb, halves, None if groups is None else _GroupSums(groups)
        if self._in_memory:
            self._prepared_chunks[start] = out
        return out

    def __getstate__(self) -> dict[str, Any]:
        # joblib workers get the object without the prepared chunks
        state = self.__dict__.copy()
        state["_prepared_chunks"] = {}
        return state

    def _unfoldings(self, sums: dict[str, np.ndarray]) -> Iterator[_Sides]:
        """Per rank of the pass, in order, the two sides of every replicate
        (:class:`_Sides`), from the stacked sums of :meth:`_sums` (``R x q x
        ...``): the first block's unfolding ``[L_1, ..., L_q]`` (``n1 x q n2``)
        and the second's ``[R_1; ...; R_q]`` (``q n1 x n2``); at ``k = 0`` both
        from ``full``.

        With ``a~_i = P_i a'_i + sa_i (I - P_i) a'_i`` and ``b~_i`` likewise,
        the left side is ``L_k = sum_i y_i (I - P_i) a~_i b~_i^T = F - U C +
        (D - U E) V^T`` and the right side ``R_k = sum_i y_i a~_i ((I - Q_i)
        b~_i)^T = F - G V^T + U (H - J V^T)``, where ``U``, ``V`` are the first
        ``2 k`` columns of ``u1``, ``v1`` and ``F``, ``C``, ``G``, ``D``, ``E``,
        ``H``, ``J`` the sums ``full``, ``c_left``, ``c_right``, ``d_left``,
        ``e_left``, ``f_right``, ``g_right`` over the rows cut to ``2 k``
        (:func:`_accumulate`; weights ``wy = y sa sb``, ``cl = y sa (1 - sb)``,
        ``cr = y sb (1 - sa)``).  The right side is formed so when asked for,
        the left side so at the pass's first positive rank ``s``.  From one
        rank to the next the left side changes by a product of four columns by
        four rows (``new``: the rank's two columns of ``U``, ``V``; ``old``:
        the ``2 k - 2`` before):

        ``L_k - L_{k-1} = X_k Y_k``, ``X_k = [U_new, DX_new]``, ``Y_k =
        [CY_new; V_new^T]``, ``DX_new = D_new - U_old E_old,new``, ``CY_new =
        -(C_new + E_new,: V^T)``

        (``DX`` and ``CY`` of every rank of the pass are one product each).
        Where the left side's smaller Gram matrix ``G_k = sum_c L_c L_c^T`` is
        the ``n1 x n1`` one and the dense eigensolver's, only ``G_k`` is kept:
        ``G_k = G_{k-1} + W X_k^T + X_k W^T`` with ``W = L_{k-1} Y_k^T + X_k
        Y_k Y_k^T / 2`` (``X``, ``W`` the ``q`` columns' side by side), and
        ``L_{k-1} Y_k^T = L_s Y_k^T + sum_{s < i < k} X_i Y_i Y_k^T`` comes from
        the products ``L_s CY^T``, ``L_s V``, ``CY CY^T``, ``CY V``, ``V^T V``
        of all the pass's columns, made once: a rank costs ``n1 x 4 q``
        products instead of the ``n1 x n1 x q n2`` Gram (the same to
        rounding), and the left sides themselves are formed only if asked.
        Otherwise the left side is updated rank by rank.  Every product runs
        over the replicates and columns at once.
        """
        full = sums["full"]
        nrep, q, n1, n2 = full.shape
        by_gram = n1 <= q * n2 and n1 <= _DENSE_EIG_MAX

        def unfolded(x: np.ndarray) -> Callable[[int], np.ndarray]:
            return lambda j: x[j].transpose(1, 0, 2).reshape(n1, q * n2)

        if self.ks[0] == 0:
            yield _Sides(unfolded(full), lambda j: full[j].reshape(q * n1, n2), lambda: None)
        if self.u1 is None:  # the pass is k = 0 alone
            return
        u1, v1 = self.u1, self.v1
        assert v1 is not None
        c_left, c_right, d_left = sums["c_left"], sums["c_right"], sums["d_left"]
        e_left, f_right, g_right = sums["e_left"], sums["f_right"], sums["g_right"]

        def right(c: int) -> Callable[[int], np.ndarray]:
            uc, vc_t = u1[:, :c], v1[:, :c].T
            return lambda j: (full[j] - c_right[j, :, :, :c] @ vc_t + uc @ (
                f_right[j, :, :c] - g_right[j, :, :c, :c] @ vc_t)).reshape(q * n1, n2)

        start, kmax = max(self.ks[0], 1), self.ks[-1]
        c0 = 2 * start
        lu = _left_sides_at(sums, u1, v1, c0)
        lu_flat = lu.reshape(nrep, n1, q * n2)
        #: the Gram of the left sides and the last update in it (-1: at ``s``):
        #: formed at ``s`` once asked, then updated rank by rank, so that its
        #: value at a rank does not depend on the rank it was first asked at
        gram: list[np.ndarray] = []
        in_gram = [-1]
        wv: list[np.ndarray] = []  # W of every later rank: CY parts summed over q, V parts

        def left_of(r: int, j: int) -> np.ndarray:
            """Replicate ``r``'s left side after update ``j`` (-1: at ``s``)."""
            if j < 0:
                return lu_flat[r]
            done = slice(0, 2 * j + 2)
            return (lu_flat[r] + u1[:, c0:c0 + 2 * j + 2] @ cy[r, :, done].transpose(
                1, 0, 2).reshape(2 * j + 2, q * n2)
                + (dxu[r, :, :, done].reshape(n1 * q, 2 * j + 2) @ vn[:, done].T
                   ).reshape(n1, q * n2))

        def gram_at(j: int) -> Callable[[], np.ndarray | None]:
            def get() -> np.ndarray | None:
                if not by_gram:
                    return None
                if not gram:
                    gram.append(lu_flat @ lu_flat.transpose(0, 2, 1))
                if in_gram[0] < j and not wv:
                    wv.extend(_all_w(lu, u1[:, cols], dxu, cy, vn, blk[cols]))
                while in_gram[0] < j:  # G + W X^T + X W^T
                    i = in_gram[0] = in_gram[0] + 1
                    w_cy, w_v = wv
                    jj = slice(2 * i, 2 * i + 2)
                    wx = w_cy[..., jj] @ u1[:, c0 + 2 * i:c0 + 2 * i + 2].T
                    wx += (w_v[..., jj].reshape(nrep, n1, 2 * q)
                           @ dxu[..., jj].reshape(nrep, n1, 2 * q).transpose(0, 2, 1))
                    gram[0] = gram[0] + wx + wx.transpose(0, 2, 1)
                return gram[0]
            return get

        yield _Sides(partial(_row_of, lu_flat), right(c0), gram_at(-1))
        if kmax == start:
            return
        # the columns of the pass's later ranks: DX (unfolded) and CY of each at once
        cols = slice(c0, 2 * kmax)
        blk = np.arange(2 * kmax) // 2
        vn = v1[:, cols]
        dxu = np.ascontiguousarray((d_left[..., cols] - u1 @ (
            e_left[..., :, cols] * (blk[:, None] < blk[None, cols]))).transpose(0, 2, 1, 3))
        cy = -(c_left[..., cols, :]
               + (e_left[..., cols, :] * (blk[None, :] <= blk[cols, None])) @ v1.T)
        if not by_gram:  # the left side rank by rank, updated in place (the
            # sides of a rank are read before the next rank's are asked for)
            for j, k in enumerate(range(start + 1, kmax + 1)):
                jj = slice(2 * j, 2 * j + 2)
                un = u1[:, c0 + 2 * j:c0 + 2 * j + 2]
                cyj = cy[..., jj, :].transpose(0, 2, 1, 3).reshape(nrep, 2, q * n2)
                dxj = dxu[..., jj].reshape(nrep, -1, 2)
                for r in range(nrep):
                    lu_flat[r] += un @ cyj[r]
                    lu_flat[r] += (dxj[r] @ vn[:, jj].T).reshape(n1, q * n2)
                yield _Sides(partial(_row_of, lu_flat), right(2 * k), lambda: None)
            return
        for j, k in enumerate(range(start + 1, kmax + 1)):
            yield _Sides(partial(left_of, j=j), right(2 * k), gram_at(j))


def _accumulate_blocks(sums: dict[str, np.ndarray], y: np.ndarray, a: np.ndarray,
                       b: np.ndarray, sa: np.ndarray, sb: np.ndarray, ca: np.ndarray,
                       cb: np.ndarray, one_sign: bool) -> None:
    """:func:`._spectral_sums._accumulate` over blocks of
    :func:`config.chunk_rows` rows (its weighted copies of the rows are a
    block's, not the chunk's)."""
    step = config.chunk_rows(a.shape[1] + b.shape[1])
    for lo in range(0, len(y), step):
        sl = slice(lo, lo + step)
        _accumulate(sums, y[sl], a[sl], b[sl], sa[sl], sb[sl], ca[sl], cb[sl], one_sign)


def spectral_null(
    w: WhitenedDesign,
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


def spectral_pvalues(*args: Any, **kwargs: Any) -> tuple[np.ndarray, int]:
    """Sequential Monte Carlo p-values of the ranks ``ks`` (one pass) and the
    number of sign flips drawn: :func:`spectral_pvalues_settled` (the same
    arguments), whose largest count is the flips the pass draws."""
    pv, settled = spectral_pvalues_settled(*args, **kwargs)
    return pv, int(settled.max())


def spectral_pvalues_settled(
    w: WhitenedDesign,
    ks: range,
    n_rep: int,
    rng: np.random.Generator,
    *,
    n_jobs: int | None = None,
    progress: ProgressArg = False,
    timing: Callable[[float, float], None] | None = None,
    stats: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Sequential Monte Carlo p-values of the ranks ``ks`` (one pass) and, per
    rank, the sign flips drawn by the end of the chunk that settled its
    p-value (``n_rep`` if none did).

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
    statistics of ``ks`` (default :func:`spectral_statistic`).  The halves and the
    replicates' words are drawn from ``rng`` whatever ``ks``, so a part of
    a pass (the ranks of the combined test that need flips) has the
    replicates, and the p-values, of the whole pass; and a pass of any ranks
    ``S`` of ``ks`` (from the same first rank: the same sums, to rounding)
    draws the largest of their settled counts.
    """
    start = time.perf_counter()
    work = _SpectralBatch(w, ks, rng)
    setup = time.perf_counter() - start
    entropy = int(rng.integers(2**62))
    if stats is None:
        stats = np.array([spectral_statistic(w, k) for k in ks])
    stats = np.asarray(stats, dtype=float) * (1 - 1e-10)
    h = SEQUENTIAL_EXCEEDANCES
    count = np.zeros(len(ks), dtype=int)
    reached = np.zeros(len(ks), dtype=int)  # replicate (1-based) of the h-th exceedance
    settled = np.full(len(ks), n_rep, dtype=int)  # flips drawn when it was reached
    done = 0
    with progress_bar(progress, n_rep, f"sign flips k={ks[0]}..{ks[-1]}") as update:
        while done < n_rep and not np.all(reached > 0):
            step = min(config.SPECTRAL_SEQUENTIAL_CHUNK, n_rep - done)
            # a rank whose count reached h needs no more decisions (NaN level)
            levels = np.where(reached > 0, np.nan, stats)
            parts = run_batches(partial(work.reaches, levels=levels), step, seed=entropy,
                                batch_size=min(step, work.batch), n_jobs=n_jobs, first=done)
            hits = np.concatenate(parts)  # step x len(ks): the replicates at or above stats
            total = count + np.cumsum(hits, axis=0)
            for j in np.flatnonzero(reached == 0):
                at = np.flatnonzero(total[:, j] >= h)
                if at.size:
                    reached[j] = done + at[0] + 1
                    settled[j] = done + step
            count = total[-1]
            if timing is not None and done == 0:
                timing(setup, (time.perf_counter() - start - setup) / step)
            done += step
            update(step)
    pv = np.where(reached > 0, h / np.maximum(reached, 1), (1 + count) / (n_rep + 1))
    return pv, settled


def _left_sides_at(sums: dict[str, np.ndarray], u1: np.ndarray, v1: np.ndarray,
                   c0: int) -> np.ndarray:
    """Every replicate's left side ``L = F - U C + (D - U E) V^T`` at the
    pass's first positive rank, ``U``, ``V`` the first ``c0`` columns of
    ``u1``, ``v1`` (:meth:`_SpectralBatch._unfoldings`), unfolded:
    ``lu[r, :, c, :]`` is ``L_c`` of replicate ``r`` (``R x n1 x q x n2``)."""
    full, c_left, d_left, e_left = sums["full"], sums["c_left"], sums["d_left"], sums["e_left"]
    nrep, q, n1, n2 = full.shape
    uc = u1[:, :c0]
    lu = np.empty((nrep, n1, q, n2))
    lu[...] = full.transpose(0, 2, 1, 3)
    lu_flat = lu.reshape(nrep, n1, q * n2)
    # replicate by replicate: temporaries of one replicate's side, not the batch's
    cl0 = c_left[..., :c0, :].transpose(0, 2, 1, 3).reshape(nrep, c0, q * n2)
    dx0 = np.ascontiguousarray((d_left[..., :c0] - uc @ e_left[..., :c0, :c0])
                               .transpose(0, 2, 1, 3)).reshape(nrep, -1, c0)
    for r in range(nrep):
        lu_flat[r] -= uc @ cl0[r]
        lu[r] += (dx0[r] @ v1[:, :c0].T).reshape(n1, q, n2)
    return lu
