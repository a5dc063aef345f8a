"""Whitened data of the rank tests and the per-``k`` quantities they share.

:class:`_Whitened` holds the full SVD of the whitened cross moment ``X_lin``
and, for the tests that need sums over rows, the whitened rows (in memory)
or a re-iterable factory of whitened chunks (a row source);
:func:`_general_weights` gives the covariance of the complement block that
the general test refers ``Lambda_k`` to.  The methods themselves are in
:mod:`~jdr_stats.inference.rank_methods`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from .. import config, policy
from .._data import RowsData
from .._linalg import (
    BlockMoments,
    Whitening,
    block_whitenings,
    whiten_cross,
)
from ..core.whitening import DesignWhitening
from ..exceptions import RowsNotInMemoryError
from ._robust_core import (
    RobustMoments,
    RotatedFirst,
    first_from_sums,
    robust_moments,
    rotated_first,
)
from ._robust_signal import crossfit_residual_chunks
from .rank_robust import (
    Chunks,
    ComplementMoments,
    complement_moments_all,
    cross_sums,
    whitened_chunks,
)


@dataclass(frozen=True)
class _Whitened:
    """The full SVD of ``X_lin`` and, for the tests that need sums over rows,
    the whitened rows: in memory (``a``, ``b``, ``y``) or as a re-iterable
    factory of whitened chunks (``chunks``, e.g. over a row source).  The
    chi-square test needs only the singular values, so it never builds them."""

    m: int
    var_y: float
    u: np.ndarray  # n1 x n1 orthogonal
    s: np.ndarray  # min(n1, n2) singular values, descending
    v: np.ndarray  # n2 x n2 orthogonal
    a: np.ndarray | None = None  # m x n1, a'_i = La^{-1}(a_i - abar)
    b: np.ndarray | None = None  # m x n2
    y: np.ndarray | None = None  # centred
    chunks: Chunks | None = None
    #: cross_sums of the whitened rows (from the moments of a row source)
    first: tuple[int, np.ndarray, np.ndarray, np.ndarray, float] | None = None
    #: True when ``a``, ``b`` and ``chunks`` hold the rotated rows ``a'^T U``,
    #: ``b'^T V`` (the robust test's; built with ``rows="rotated"``)
    rotated: bool = False
    #: covariate columns partialled out of the rows (the degrees of freedom
    #: they take: the Wald test's F denominator is ``m - n_lost - d``)
    n_lost: int = 0
    cache: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def n1(self) -> int:
        return int(self.u.shape[0])

    @property
    def n2(self) -> int:
        return int(self.v.shape[0])

    def statistic(self, k: int) -> float:
        return float(self.m * np.sum(self.s[k:] ** 2) / self.var_y)

    def row_chunks(self) -> Chunks:
        """The factory of whitened row chunks (built with ``rows=True``)."""
        if self.chunks is None:
            raise RuntimeError("the whitened rows were not built (rows=False)")
        return self.chunks

    def in_memory(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``(y, a', b')`` of a model whose rows are in memory."""
        if self.y is None or self.a is None or self.b is None:
            raise RuntimeError("the whitened rows are not in memory")
        return self.y, self.a, self.b

    def robust(self, k: int, rng: np.random.Generator | None = None) -> RobustMoments:
        """Moments of the robust test at rank ``k`` (:mod:`._robust_core`).

        One pass over the rotated rows per ``k`` (no ``d x d`` matrix unless
        it is the cheapest exact route); the first-order sums of every ``k``
        come from one pass (rows in memory) or from the moments of a row
        source, made at the first call.
        """
        if not self.rotated:
            raise RuntimeError("the robust test needs the rotated rows (rows='rotated')")
        if "rfirst" not in self.cache:
            if self.first is not None:
                m, c_ay, c_by, c_ab, var_y = self.first
                self.cache["rfirst"] = first_from_sums(m, c_ay, c_by, c_ab, var_y,
                                                       self.u, self.s, self.v)
            else:
                self.cache["rfirst"] = rotated_first(self.row_chunks())
        first: RotatedFirst = self.cache["rfirst"]
        mom = robust_moments(self.row_chunks(), first, k, rng=rng)
        if config.ROBUST_CROSSFIT_FOLDS < 2 or k >= min(self.n1, self.n2):
            return mom
        res = crossfit_residual_chunks(self.row_chunks(), k, config.ROBUST_CROSSFIT_FOLDS,
                                       config.ROBUST_CROSSFIT_EDGE, config.ROBUST_CROSSFIT_DIRS)
        if res is None:
            return mom
        # theory 6c: the mean from the rows, the variance from the noise
        noise = robust_moments(res, rotated_first(res), k, rng=rng)
        return replace(noise, tau=mom.tau, s2=mom.s2, bias=mom.bias, reference=mom.reference)

    def complement(self, k: int) -> ComplementMoments:
        """Moments of the influence functions of the complement block at rank ``k``.

        When ``n1 n2 <= policy.MAX_EXACT_DIM`` every ``k`` comes from one pass over
        the rows (``Omega`` of rank ``k`` is a principal sub-matrix of that
        of rank 0), made at the first call; otherwise one pass per ``k``.
        The first-order sums (:func:`cross_sums`) are one more pass, or come
        from the moments of a row source.
        """
        if self.first is None:
            self.cache.setdefault("first", cross_sums(self.row_chunks()))
        first = self.first if self.first is not None else self.cache["first"]
        if self.n1 * self.n2 <= policy.MAX_EXACT_DIM:
            if "all" not in self.cache:
                self.cache["all"] = complement_moments_all(
                    self.row_chunks(), self.u, self.v, min(self.n1, self.n2) - 1, first=first)
            return self.cache["all"][k]
        one = complement_moments_all(
            self.row_chunks(), self.u[:, k:], self.v[:, k:], 0, first=first)
        return replace(one[0], k=k)


def _whiten(
    data: RowsData,
    mom: BlockMoments,
    whitening: DesignWhitening[Whitening] | None = None,
    *,
    rows: bool | Literal["rotated"] = True,
) -> _Whitened:
    """SVD of the whitened ``X_lin`` (and the whitened rows when ``rows``).

    A model built from a row source (``data.source``) gets a factory of
    whitened chunks over the source instead of the rows, and the
    first-order sums from its :class:`~jdr_stats.Moments`.  With
    ``rows="rotated"`` the rows are the rotated ``a'^T U``, ``b'^T V`` (one
    product with ``L^{-T} U`` per block, no whitened copy).
    """
    if data.weighted:
        raise ValueError(
            "rank tests need an unweighted model (their null distributions are "
            "derived for i.i.d. rows); got a model with case weights"
        )
    if not mom.has_covariances:  # a fit with standardize=False skips them
        mom = data.moments()
        whitening = None
    if whitening is None:
        whitening = block_whitenings(mom, data.names["exog_a"], data.names["exog_b"])
    wa, wb = whitening
    xw = whiten_cross(mom.cross, wa, wb)  # X_lin (whitened, centred y)
    u, s, vt = np.linalg.svd(xw, full_matrices=True)
    adjustment = getattr(data, "adjustment", None)
    out = _Whitened(m=data.nobs, var_y=mom.var_y, u=u, s=s, v=vt.T,
                    n_lost=int(getattr(adjustment, "p", 0) or 0))
    if not rows:
        return out
    source, sums = data.source, data.sums
    if source is not None and sums is not None:  # sums in memory, rows in the source
        wsum = float(sums.weight)
        first = (
            int(sums.nobs), wa.solve(sums.m2_ay) / wsum, wb.solve(sums.m2_by) / wsum,
            wb.solve(wa.solve(sums.m2_ab).T).T / wsum, mom.var_y,
        )
        if rows == "rotated":
            return replace(out, chunks=_rotated_source(source, mom.mean_y, wa, wb, out),
                           first=first, rotated=True)
        chunks = whitened_chunks(source, mom.mean_y, wa.mean, wb.mean, wa.chol, wb.chol)
        return replace(out, chunks=chunks, first=first)
    y, a_raw, b_raw = data.rows("the rank tests")
    if rows == "rotated":
        w = replace(out, a=_rotate(a_raw, wa.mean, wa.solve_t(u)),
                    b=_rotate(b_raw, wb.mean, wb.solve_t(out.v)), y=y - mom.mean_y, rotated=True)
        return replace(w, chunks=lambda: _row_chunks(w))
    w = replace(out, a=wa.to_white(a_raw), b=wb.to_white(b_raw), y=y - mom.mean_y)
    return replace(w, chunks=lambda: _row_chunks(w))


def _rotate(x: np.ndarray, mean: np.ndarray, rot: np.ndarray) -> np.ndarray:
    """``(x - mean) @ rot`` in blocks of rows written into one output (no
    centred copy of ``x``: at 1000 + 1000 variables and ``m = 1e5`` that is
    0.8 GB less at the peak)."""
    out = np.empty((x.shape[0], rot.shape[1]))
    step = max(1, config.CHUNK_FLOATS // max(x.shape[1], 1))
    for start in range(0, x.shape[0], step):
        sl = slice(start, start + step)
        np.matmul(x[sl] - mean, rot, out=out[sl])
    return out


def _rotated_source(source: Any, mean_y: float, wa: Whitening, wb: Whitening,
                    w: _Whitened) -> Chunks:
    """Chunks ``(y - ybar, (a - abar) L_a^{-T} U, (b - bbar) L_b^{-T} V)`` of a row source."""
    ra, rb = wa.solve_t(w.u), wb.solve_t(w.v)

    def gen() -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        for y, a, b in source.iter_chunks(None):
            yield y - mean_y, (a - wa.mean) @ ra, (b - wb.mean) @ rb

    return gen


def _row_chunks(w: _Whitened) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Row chunks ``(y, a', b')`` of the whitened data (about 32 MB each)."""
    step = max(1, config.CHUNK_FLOATS // (w.n1 + w.n2 + 1))
    y, a, b = w.in_memory()
    for start in range(0, w.m, step):
        sl = slice(start, start + step)
        yield y[sl], a[sl], b[sl]


def _kr_chunks(uc: np.ndarray, vc: np.ndarray) -> Iterator[tuple[slice, np.ndarray]]:
    """Row chunks of the Khatri-Rao product: row i is vec(u_i v_i^T) (row-major)."""
    m, p = uc.shape
    q = vc.shape[1]
    step = max(1, config.CHUNK_FLOATS // max(p * q, 1))
    for start in range(0, m, step):
        sl = slice(start, min(start + step, m))
        yield sl, (uc[sl, :, None] * vc[sl, None, :]).reshape(-1, p * q)


def _general_weights(w: _Whitened, k: int) -> tuple[np.ndarray | None, float, float]:
    """Covariance ``Omega`` of the complement block, scaled by ``1 / s_y^2``.

    The influence function of ``(1/m) sum (u_i - ubar)(y_i - ybar)(v_i - vbar)^T``
    is ``psi_i = u_i y_i v_i^T - u_i c_yv^T - c_uy v_i^T - y_i C_uv`` (centred
    variables; whitening has no first-order effect) and ``E[psi] = 0`` under
    H0, so ``Omega = (1/m) sum psi_i psi_i^T``.

    Returns ``(lam, tr1, tr2)``: ``tr1 = tr(Omega)``, ``tr2`` the unbiased
    U-statistic ``sum_{i != j} <psi_i, psi_j>^2 / (m (m - 1))`` of
    ``tr(Omega^2)`` (the plug-in value adds ``sum_i ||psi_i||^4 / m^2``, a
    bias that inflates the dispersion of the weights, badly so for
    heavy-tailed ``y``), and, when ``d = (n1-k)(n2-k) <= policy.MAX_EXACT_DIM``,
    the eigenvalues of ``Omega`` shrunk linearly towards their mean so that
    their sum of squares is ``tr2`` (else None); all divided by ``s_y^2``.
    """
    m = w.m
    d = (w.n1 - k) * (w.n2 - k)
    scale = w.var_y
    if d <= policy.MAX_EXACT_DIM:
        mom = w.complement(k)
        omega, fourth = mom.omega, mom.psi4
        lam = np.clip(np.linalg.eigvalsh(omega), 0.0, None) / scale
        tr1 = float(np.trace(omega)) / scale
        tr2 = (m * m * float(np.sum(omega * omega)) - fourth) / (m * (m - 1.0)) / scale**2
        # shrink the eigenvalues towards their mean to match tr2 (never expand)
        mean = tr1 / d
        disp_hat = float(np.sum((lam - mean) ** 2))
        disp_u = max(tr2 - d * mean * mean, 0.0)
        if disp_hat > 0:
            lam = mean + np.sqrt(min(disp_u / disp_hat, 1.0)) * (lam - mean)
        tr2 = max(tr2, d * mean * mean)
        return np.clip(lam, 0.0, None), tr1, tr2
    if w.a is None:
        raise RowsNotInMemoryError(
            f"the general rank test at k={k} has (n1-k)(n2-k) = {d} complement entries, "
            f"more than {policy.MAX_EXACT_DIM}: its tail then needs sums over pairs of rows, "
            "which a model built from a row source cannot stream. Use method='robust' "
            "with fewer variables, or a model built from arrays"
        )
    y, a, b = w.in_memory()
    uc = a @ w.u[:, k:]
    vc = b @ w.v[:, k:]
    c_uy = uc.T @ y / m
    c_yv = vc.T @ y / m
    c_uv = uc.T @ vc / m
    tr1, tr2 = _psi_gram_traces(uc, vc, y, c_uy, c_yv, c_uv)
    return None, tr1 / scale, max(tr2, tr1 * tr1 / d) / scale**2


def _psi_gram_traces(
    uc: np.ndarray, vc: np.ndarray, y: np.ndarray,
    e: np.ndarray, c: np.ndarray, cmat: np.ndarray,
) -> tuple[float, float]:
    """``tr(Omega)`` and the U-statistic of ``tr(Omega^2)`` without forming ``psi``.

    ``psi_i = u_i r_i^T - e v_i^T - y_i C`` with ``r_i = y_i v_i - c``, so
    ``<psi_i, psi_j>`` is a combination of the Gram entries ``u_i.u_j``,
    ``r_i.r_j``, ``r_i.v_j``, ``v_i.v_j`` and of per-row scalars; it is
    accumulated over pairs of row chunks (``O(m^2 (p + q))`` time, no
    ``m x m`` or ``m x p q`` array).
    """
    m = uc.shape[0]
    r = y[:, None] * vc - c[None, :]
    ue = uc @ e
    ucr = np.sum((uc @ cmat) * r, axis=1)  # u_i^T C r_i
    ecv = vc @ (cmat.T @ e)  # e^T C v_i
    ee, cc = float(e @ e), float(np.sum(cmat * cmat))
    step = max(1, int(np.sqrt(config.CHUNK_FLOATS / 8)))
    tr1 = 0.0
    tr2 = 0.0
    starts = list(range(0, m, step))
    for i0 in starts:
        si = slice(i0, min(i0 + step, m))
        for j0 in starts[starts.index(i0):]:
            sj = slice(j0, min(j0 + step, m))
            g = (uc[si] @ uc[sj].T) * (r[si] @ r[sj].T)
            g -= ue[si, None] * (r[si] @ vc[sj].T)
            g -= (vc[si] @ r[sj].T) * ue[None, sj]
            g += ee * (vc[si] @ vc[sj].T)
            g -= y[None, sj] * ucr[si, None] + y[si, None] * ucr[None, sj]
            g += y[None, sj] * ecv[si, None] + y[si, None] * ecv[None, sj]
            g += cc * np.outer(y[si], y[sj])
            if i0 == j0:
                tr1 += float(np.trace(g))
                np.fill_diagonal(g, 0.0)
                tr2 += float(np.sum(g * g))
            else:
                tr2 += 2.0 * float(np.sum(g * g))
    return tr1 / m, tr2 / (m * (m - 1.0))
