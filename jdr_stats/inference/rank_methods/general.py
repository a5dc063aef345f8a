"""The general rank test (``method="general"``; theory of rank tests,
section 5): ``Lambda_k`` against ``sum_j w_j chi2_1``, the weights the
eigenvalues of the estimated covariance of the complement block, tail by
Imhof's (1961) formula (two-moment Bentler-Xie tail for large ``d``).

:func:`complement` (the moments of the complement block's influence
functions) also serves the Wald test."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ... import config, policy
from ...exceptions import RowsNotInMemoryError
from ...runtime._lazy import stats
from .._rank_stats import WhitenedDesign
from ..chi2mix import weighted_chi2_sf
from ..rank_robust import ComplementMoments, complement_moments_all, cross_sums
from ._record import LAMBDA, RankTestMethod, Row, RowOptions


def complement(w: WhitenedDesign, k: int) -> ComplementMoments:
    """Moments of the influence functions of the complement block at rank ``k``.

    When ``n1 n2 <= policy.MAX_EXACT_DIM`` every ``k`` comes from one pass over
    the rows (``Omega`` of rank ``k`` is a principal sub-matrix of that
    of rank 0), made at the first call (kept in ``w.cache``); otherwise one
    pass per ``k``.  The first-order sums (:func:`cross_sums`) are one more
    pass, or come from the moments of a row source.
    """
    if w.first is None:
        w.cache.setdefault("first", cross_sums(w.row_chunks()))
    first = w.first if w.first is not None else w.cache["first"]
    if w.n1 * w.n2 <= policy.MAX_EXACT_DIM:
        if "all" not in w.cache:
            w.cache["all"] = complement_moments_all(
                w.row_chunks(), w.u, w.v, min(w.n1, w.n2) - 1, first=first)
        out: ComplementMoments = w.cache["all"][k]
        return out
    one = complement_moments_all(w.row_chunks(), w.u[:, k:], w.v[:, k:], 0, first=first)
    return replace(one[0], k=k)


def general_weights(w: WhitenedDesign, k: int) -> tuple[np.ndarray | None, float, float]:
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
        mom = complement(w, k)
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


def _row(w: WhitenedDesign, k: int, opts: RowOptions) -> Row:
    stat = w.statistic(k)
    lam, tr1, tr2 = general_weights(w, k)
    eff = tr1 * tr1 / tr2 if tr2 > 0 else np.nan
    tails: tuple[str, ...]
    if lam is not None and np.any(lam > 0):
        pv, tails = float(weighted_chi2_sf(stat, lam)), ("imhof",)
    elif tr2 > 0:
        pv = float(stats.chi2.sf(stat * eff / tr1, eff))
        tails = ("bentler-xie",)
    else:
        pv, tails = 1.0, ()
    return {"statistic": stat, "df": np.nan, "pvalue": pv, "eff_df": eff}, tails


def _limits() -> dict[str, object]:
    return {"bentler-xie": policy.MAX_EXACT_DIM}


METHOD = RankTestMethod(
    name="general",
    label="weighted chi-square with estimated weights (Imhof)",
    distribution="weighted chi2",
    assumptions=(
        "General theory: only finite second moments of vec(u y v'); the "
        "covariance Omega of the complement block is estimated from the data "
        "and Lambda_k ~ sum_j w_j chi2_1 with w = eig(Omega) / s_y^2 as m grows "
        "(tail by Imhof's formula)."
    ),
    statistic_note=LAMBDA,
    needs="source",
    columns=("eff_df",),
    columns_note="`eff_df = (sum w)^2 / sum w^2`; `df` is NaN",
    docs=(
        "weighted chi-square, weights estimated from the data (Imhof's formula)",
        "finite moments; large `m / d`",
        "`O(m d^2)`",
    ),
    theory="5",
    row=_row,
    tail_notes={
        "bentler-xie": (
            "Rows with more than %d complement entries use the two-moment "
            "(Bentler-Xie) tail with eff_df = (sum w)^2 / sum w^2."
        ),
    },
    tail_limits=_limits,
)
