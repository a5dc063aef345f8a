"""The object every rank test receives: the whitened design.

:class:`WhitenedDesign` holds the whitened cross moments as a ``(q, n1,
n2)`` stack (``q = 1``: a stack of one, ``X_lin``), their decomposition
(the SVD for one response column, the HOSVD of the stack for ``q``), and,
for the tests that need sums over rows, the whitened rows (in memory) or a
re-iterable factory of whitened chunks (a row source).  It carries no
test's own computation: each test's is in its module of
:mod:`~jdr_stats.inference.rank_methods`.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np

from .. import config
from ..core._hosvd import complement_statistic, hosvd, whitened_crosses
from ..core._linalg import (
    BlockMoments,
    Whitening,
    blas_for_blocks,
    block_whitenings,
    whiten_cross,
)
from ..core.whitening import DesignWhitening
from ..exceptions import RowsNotInMemoryError
from ..io._data import ModelData, RowsData, map_rows
from ..runtime._lazy import linalg
from .rank_robust import Chunks, whitened_chunks

__all__ = ["WhitenedDesign", "whitened_response"]


@dataclass(frozen=True)
class WhitenedDesign:
    """The whitened design of the rank tests.

    ``xq`` is the stack of whitened cross moments ``X_c = E_m[a' y_c b'^T]``
    (``q x n1 x n2``; one response column: ``X_lin`` with centred ``y``);
    ``u`` (``n1 x n1``) and ``v`` (``n2 x n2``) their full left and right
    factors (the SVD of ``X_lin``, the HOSVD of the stack for ``q > 1``),
    ``s`` the singular values of the mode-1 unfolding ``[X_1, ..., X_q]``
    and ``s_right`` of the mode-2 one (for ``q = 1`` both those of
    ``X_lin``).  The rows, for the tests that sum over them: in memory
    (``a``, ``b``, ``y``; ``y`` is ``m`` or ``m x q``) or as a re-iterable
    factory of whitened chunks (``chunks``, e.g. over a row source).  The
    chi-square test needs only the singular values, so it never builds
    them.  ``cache`` keeps what a test computes once for every ``k``.
    """

    m: int
    var_y: float
    u: np.ndarray  # n1 x n1 orthogonal
    s: np.ndarray  # min(n1, n2) singular values, descending
    v: np.ndarray  # n2 x n2 orthogonal
    #: the whitened cross moments, q x n1 x n2 (None: the stack of one ``u diag(s) v'``)
    xq: np.ndarray | None = None
    #: singular values of the mode-2 unfolding (None: ``s``, one response column)
    s_right: np.ndarray | None = None
    a: np.ndarray | None = None  # m x n1, a'_i = La^{-1}(a_i - abar)
    b: np.ndarray | None = None  # m x n2
    y: np.ndarray | None = None  # centred (m), or whitened (m x q)
    chunks: Chunks | None = None
    #: cross_sums of the whitened rows (from the moments of a row source)
    first: tuple[int, np.ndarray, np.ndarray, np.ndarray, float] | None = None
    #: True when ``a``, ``b`` and ``chunks`` hold the rotated rows ``a'^T U``,
    #: ``b'^T V`` (the robust test's; built with ``rows="rotated"``)
    rotated: bool = False
    #: covariate columns partialled out of the rows (the degrees of freedom
    #: they take: the Wald test's F denominator is ``m - n_lost - d``)
    n_lost: int = 0
    #: case weights (None: unweighted; the rank tests refuse weighted models)
    weights: np.ndarray | None = None
    cache: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def n1(self) -> int:
        return int(self.u.shape[0])

    @property
    def n2(self) -> int:
        return int(self.v.shape[0])

    @property
    def q(self) -> int:
        """Response columns: the leading dimension of the stack."""
        return 1 if self.xq is None else int(self.xq.shape[0])

    @property
    def s_joint(self) -> np.ndarray:
        """The smaller of the two unfoldings' singular values, rank by rank
        (``min(n1, n2)``; for ``q = 1`` the singular values ``s``)."""
        if self.s_right is None:
            return self.s
        n = min(self.n1, self.n2)
        return np.minimum(self.s[:n], self.s_right[:n])

    def statistic(self, k: int) -> float:
        """``Lambda_k = m sum_c ||U0^T X_c V0||_F^2 / var(y)``, ``U0 = u[:, k:]``,
        ``V0 = v[:, k:]``: for one column ``m sum_{j>k} s_j^2 / var(y)``
        (:func:`~jdr_stats.core._hosvd.complement_statistic`)."""
        if self.q == 1:
            return float(self.m * np.sum(self.s[k:] ** 2) / self.var_y)
        assert self.xq is not None
        return complement_statistic(self.xq, self.u, self.v, k, self.m) / self.var_y

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


def _whiten(
    data: RowsData,
    mom: BlockMoments,
    whitening: DesignWhitening[Whitening] | None = None,
    *,
    rows: bool | Literal["rotated"] = True,
) -> WhitenedDesign:
    """The whitened design: the stack of whitened cross moments and its
    decomposition (and the whitened rows when ``rows``).

    One response column: ``X_lin`` (centred ``y``), a stack of one, and its
    SVD.  ``q > 1`` columns: the ``q`` cross moments of the whitened response
    ``Yw`` and their HOSVD (:func:`~jdr_stats.core._hosvd.hosvd`); ``var_y`` is 1
    and the rows' ``y`` is ``Yw`` (``m x q``).  A model built from a row
    source (``data.source``) gets a factory of whitened chunks over the
    source instead of the rows, and the first-order sums from its
    :class:`~jdr_stats.Moments` (one response column only).  With
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
    adjustment = getattr(data, "adjustment", None)
    n_lost = int(getattr(adjustment, "p", 0) or 0)
    n1, n2 = len(data.names["exog_a"]), len(data.names["exog_b"])
    with blas_for_blocks(n1, n2):
        if mom.cross_q is None:
            xw = whiten_cross(mom.cross, wa, wb)  # X_lin (whitened, centred y)
            u, s, vt = np.linalg.svd(xw, full_matrices=True)
            out = WhitenedDesign(m=data.nobs, var_y=mom.var_y, u=u, s=s, v=vt.T, xq=xw[None],
                                 n_lost=n_lost)
        else:  # q whitened response columns: the HOSVD of the stack
            xq = whitened_crosses(mom.cross_q, wa, wb)
            u, s, v, s_right = hosvd(xq)
            out = WhitenedDesign(m=data.nobs, var_y=1.0, u=u, s=s, v=v, xq=xq,
                                 s_right=s_right, n_lost=n_lost)
    if not rows:
        if isinstance(data, ModelData):  # rows in memory
            out = _unit_response(out, data.rows("the rank tests")[0], mom.mean_y,
                                 data.response_unit)[0]
        return out
    source, sums = data.source, data.sums
    if source is not None and sums is not None:  # sums in memory, rows in the source
        if out.q > 1:
            raise RowsNotInMemoryError(
                f"the rank tests that sum over rows need them in memory for a response of "
                f"q = {out.q} columns (they stream over a row source for one column only)")
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
    if rows == "rotated" and isinstance(data, ModelData):
        # the rotated rows straight from the model's (a joint model's
        # residual rows are not formed: ModelData.mapped_rows)
        y, (ra, rb) = data.mapped_rows("the rank tests", ((wa.mean, wa.solve_t(u)),
                                                          (wb.mean, wb.solve_t(out.v))))
        out, yc = _unit_response(out, y, mom.mean_y, data.response_unit)
        w = replace(out, a=ra, b=rb, y=yc, rotated=True)
        return replace(w, chunks=lambda: _row_chunks(w))
    y, a_raw, b_raw = data.rows("the rank tests")
    out, yc = _unit_response(out, y, mom.mean_y, data.response_unit)
    if rows == "rotated":
        w = replace(out, a=map_rows(a_raw, wa.mean, wa.solve_t(u)),
                    b=map_rows(b_raw, wb.mean, wb.solve_t(out.v)), y=yc, rotated=True)
        return replace(w, chunks=lambda: _row_chunks(w))
    w = replace(out, a=wa.to_white(a_raw), b=wb.to_white(b_raw), y=yc)
    return replace(w, chunks=lambda: _row_chunks(w))


def _unit_response(out: WhitenedDesign, y: np.ndarray, mean_y: float,
                   c: float) -> tuple[WhitenedDesign, np.ndarray]:
    """``out`` and the rows' response for a response brought near unit size.

    The tests are invariant to the response's unit: a response of extreme
    units is multiplied by its power of two ``c`` (exact; the data's
    :attr:`~jdr_stats.io._data.RowsData.response_unit`), with the cross
    moment, its singular values and the variance of ``y``; at unit size
    ``out`` is returned as it is.
    """
    if out.q > 1:
        return out, whitened_response(y * c)
    if c == 1.0:
        return out, y - mean_y
    yc = y * c - mean_y * c
    return replace(out, s=out.s * c, xq=None if out.xq is None else out.xq * c,
                   var_y=float(np.mean(yc**2))), yc


def whitened_response(y: np.ndarray) -> np.ndarray:
    """``Yw``: the centred response (``m x q``) times the inverse Cholesky
    factor of its covariance (divisor m), identity covariance (the units of
    the stack of cross moments)."""
    yc = y - y.mean(axis=0)
    chol = np.linalg.cholesky(yc.T @ yc / y.shape[0])
    return np.asarray(linalg.solve_triangular(chol, yc.T, lower=True).T)


def _rotated_source(source: Any, mean_y: float, wa: Whitening, wb: Whitening,
                    w: WhitenedDesign) -> Chunks:
    """Chunks ``(y - ybar, (a - abar) L_a^{-T} U, (b - bbar) L_b^{-T} V)`` of a row source."""
    ra, rb = wa.solve_t(w.u), wb.solve_t(w.v)

    def gen() -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        for y, a, b in source.iter_chunks(None):
            yield y - mean_y, (a - wa.mean) @ ra, (b - wb.mean) @ rb

    return gen


def _row_chunks(w: WhitenedDesign) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Row chunks ``(y, a', b')`` of the whitened data (about 32 MB each)."""
    step = max(1, config.CHUNK_FLOATS // (w.n1 + w.n2 + 1))
    y, a, b = w.in_memory()
    for start in range(0, w.m, step):
        sl = slice(start, start + step)
        yield y[sl], a[sl], b[sl]
