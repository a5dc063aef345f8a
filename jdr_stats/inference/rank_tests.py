"""Tests of the dimension ``r`` of the joint estimator, and rank selection.

For ``k = 0, 1, ...`` the null hypothesis ``H0: r <= k`` (the population
matrix ``E[a' y b'^T]`` of the whitened blocks has rank at most ``k``) is
tested against ``r > k`` with the statistic

    Lambda_k = m * sum_{j > k} sigma_j(X_lin)^2 / s_y^2,

``X_lin`` the whitened cross moment (eq. ``lin`` of the paper, centred ``y``)
and ``s_y^2`` the sample variance of ``y``, or by the self-normalised
statistic ``T_k`` of ``rank_robust``.  The methods:

* ``"robust"`` (default): ``Lambda_k`` against ``g chi2(h)`` whose mean and
  variance are the finite-sample moments of ``Lambda_k`` estimated from the
  influence functions of the complement block; no distributional
  assumption; within the size band in 41 of the 42 settings of the
  robustness battery (the miss conservative);
* ``"wald"``: ``T_k = m vec(C)^T Omega^{-1} vec(C)``, ``C`` the
  complement block and ``Omega`` the second moment of its influence
  functions (Kleibergen-Paap type), referred to Hotelling's ``F(d, m - d)``;
* ``"chi2"``: chi-square with ``(n1 - k)(n2 - k)`` degrees of freedom
  (Gaussian blocks, independent of each other);
* ``"general"``: ``sum_j w_j chi2_1``, the weights the eigenvalues of the
  estimated covariance of the complement block (no distributional
  assumption), tail by Imhof's (1961) inversion formula;
* ``"permutation"``: the complement coordinates' rows are permuted (Cook and
  Yin 2001) and the statistic recomputed.

``fit(rank="auto", rank_method="ladle")`` chooses the rank by the ladle
estimator (Luo and Li 2016) instead of tests.

The derivations are in ``docs/theory/rank_tests.md``.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.iolib.summary2 import Summary

from .. import _config
from .._data import ModelData
from .._linalg import BlockMoments, Whitening, block_moments, block_whitenings, whiten_cross
from .._progress import (ProgressArg, check_n_jobs, check_progress, progress_bar,
                         progress_forwarder, run_batches)
from ..exceptions import RowsNotInMemoryError
from .._validation import check_choice, check_fraction, check_int, normalize_seed
from ..exceptions import RankSelectionWarning
from ..summary import build_summary
from .chi2mix import weighted_chi2_sf
from .hypotheses import TestTable, perm_pvalue
from .rank_robust import (
    ComplementMoments,
    complement_block,
    complement_moments_all,
    cross_sums,
    frobenius_from_moments,
    ladle_from_chunks,
    wald_from_moments,
    whitened_chunks,
)

__all__ = [
    "RankTestResults",
    "rank_tests",
    "choose_rank",
]

RankMethod = Literal["robust", "wald", "chi2", "general", "permutation"]
_METHODS = ("robust", "wald", "chi2", "general", "permutation")
#: What fit(rank="auto", rank_method=...) accepts: the tests and the ladle.
_SELECTORS = _METHODS + ("ladle",)

#: Largest number of entries of the complement block for which the general
#: test forms its covariance (d x d) and uses its exact eigenvalues.
_MAX_EXACT_DIM = _config.MAX_EXACT_DIM
#: Floats held by one chunk of intermediate products (about 32 MB).
_CHUNK_FLOATS = _config.CHUNK_FLOATS

_ASSUMPTIONS = {
    "robust": (
        "Robust two-moment test: i.i.d. rows and finite fourth moments of the "
        "influence functions psi of the complement block; no Gaussian blocks, "
        "homoscedasticity or independent noise needed. Lambda_k ~ g chi2(h) with "
        "g h = tr(Omega) / s_y^2 and 2 g^2 h the finite-sample variance of Lambda_k "
        "estimated from the rows (including the kurtosis of psi)."
    ),
    "wald": (
        "Wald (Kleibergen-Paap type): i.i.d. rows and finite second moments of "
        "the influence functions psi of the complement block C = U_perp' X_lin V_perp, "
        "with nonsingular covariance; no Gaussian blocks, homoscedasticity or "
        "independent noise needed. T_k = m vec(C)' Omega^{-1} vec(C) (Omega the "
        "uncentred second moment of psi, T_k <= m); F = (m - d) T_k / (d (m - T_k)) "
        "~ F(d, m - d) (Hotelling), d = (n1-k)(n2-k). Conservative for heavy-tailed "
        "y, little power for rare binary y."
    ),
    "chi2": (
        "Normal theory (valid only under its premise; liberal for heavy-tailed "
        "blocks or noise whose variance depends on the blocks): the whitened "
        "complement coordinates U_perp'a', "
        "V_perp'b' are independent of each other and of (y, U'a', V'b') "
        "(Gaussian blocks independent of each other), so the complement block "
        "has covariance E[y^2] I / m and Lambda_k ~ chi2((n1-k)(n2-k)) as m "
        "grows."
    ),
    "general": (
        "General theory: only finite second moments of vec(u y v'); the "
        "covariance Omega of the complement block is estimated from the data "
        "and Lambda_k ~ sum_j w_j chi2_1 with w = eig(Omega) / s_y^2 as m grows "
        "(tail by Imhof's formula)."
    ),
    "permutation": (
        "Permutation (Cook and Yin 2001): under H0 the complement coordinates "
        "(U_perp'a', V_perp'b') are independent of (y, U'a', V'b') (normal-theory "
        "premise; liberal for heavy-tailed blocks); their rows "
        "are permuted jointly and the whole statistic (re-whitening included) "
        "recomputed; p = (1 + #{T* >= T}) / (B + 1)."
    ),
    "ladle": (
        "Ladle (Luo and Li 2016): r = argmin_k f(k) + phi(k), f the normalised "
        "Poisson-bootstrap variability of the top-k singular vectors of X_lin (both "
        "sides), phi the normalised (k+1)-th eigenvalue s_{k+1}^2 / var(y); no level, "
        "no distribution theory; candidates k = 0..kmax."
    ),
}


# ---------------------------------------------------------------------------
# Results object
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class RankTestResults(TestTable):
    """Sequential tests of ``H0: r = k`` for the joint estimator.

    Attributes
    ----------
    table : DataFrame
        Index ``k`` (row ``k`` tests ``H0: r <= k`` against ``r > k``);
        columns ``statistic`` (``Lambda_k``; ``T_k`` for the Wald test),
        ``df`` (chi-square or numerator F degrees of freedom; NaN where no
        single df applies), ``pvalue``; the robust test adds ``eff. df`` and
        ``scale`` (``Lambda_k ~ scale * chi2(eff. df)``), the Wald test ``F``
        and ``df2``, the general test ``eff. df`` (``(sum w)^2 / sum w^2``),
        the permutation test ``n_perm``.  For the ladle (``method="ladle"``,
        from ``fit(rank="auto", rank_method="ladle")``) the columns are
        ``boot_var``, ``eig_part`` and ``criterion`` and there are no tests.
    method : {"robust", "wald", "chi2", "general", "permutation", "ladle"}
    nobs, n1, n2 : int
    full : bool
        True when the table runs up to ``k = min(n1, n2) - 1``, the last
        testable rank.

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(2000, 6, 5, 2, seed=3)
    >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    >>> rt = res.rank_tests("chi2")
    >>> rt.select_rank(0.05)
    2
    >>> list(rt.table.columns)
    ['statistic', 'df', 'pvalue']
    """

    __test__ = False

    nobs: int = 0
    n1: int = 0
    n2: int = 0
    full: bool = True
    chosen: int | None = None

    @property
    def max_rank(self) -> int:
        """Largest ``k`` tested."""
        return int(self.table.index.max())

    @property
    def pvalues(self) -> pd.Series:
        if "pvalue" not in self.table:
            raise AttributeError(f"the {self.method} rank choice has no p-values")
        return self.table["pvalue"]

    @property
    def statistics(self) -> pd.Series:
        return self.table["statistic"]

    def select_rank(self, alpha: float = 0.05) -> int:
        """The first ``k`` whose test is not rejected at level ``alpha``.

        For the ladle (no tests) the ladle's choice, whatever ``alpha``.

        If every computed test rejects, the dimension is at least
        ``max_rank + 1``: that value is returned (it equals ``min(n1, n2)``
        when the table is :attr:`full`).
        """
        alpha = check_fraction(alpha, "alpha")
        if self.method == "ladle":
            return int(self.chosen)
        for k, p in zip(self.table.index, self.table["pvalue"]):
            if not p <= alpha:
                return int(k)
        return self.max_rank + 1

    def summary(self) -> Summary:
        info = {
            "Method:": self.method,
            "No. observations:": self.nobs,
            "n1, n2:": f"{self.n1}, {self.n2}",
            "Tests:": len(self.table),
            "Selected r (alpha=0.05):": self.select_rank(0.05),
        }
        return build_summary(self.title, info, [("k", self.table)], self.notes)


# ---------------------------------------------------------------------------
# Whitened data and the per-k statistics
# ---------------------------------------------------------------------------
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
    chunks: Callable[[], Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]] | None = None
    #: cross_sums of the whitened rows (from the moments of a row source)
    first: tuple[int, np.ndarray, np.ndarray, np.ndarray, float] | None = None
    cache: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def n1(self) -> int:
        return int(self.u.shape[0])

    @property
    def n2(self) -> int:
        return int(self.v.shape[0])

    def statistic(self, k: int) -> float:
        return float(self.m * np.sum(self.s[k:] ** 2) / self.var_y)

    def complement(self, k: int) -> ComplementMoments:
        """Moments of the influence functions of the complement block at rank ``k``.

        When ``n1 n2 <= _MAX_EXACT_DIM`` every ``k`` comes from one pass over
        the rows (``Omega`` of rank ``k`` is a principal sub-matrix of that
        of rank 0), made at the first call; otherwise one pass per ``k``.
        The first-order sums (:func:`cross_sums`) are one more pass, or come
        from the moments of a row source.
        """
        if self.first is None:
            self.cache.setdefault("first", cross_sums(self.chunks))
        first = self.first if self.first is not None else self.cache["first"]
        if self.n1 * self.n2 <= _MAX_EXACT_DIM:
            if "all" not in self.cache:
                self.cache["all"] = complement_moments_all(
                    self.chunks, self.u, self.v, min(self.n1, self.n2) - 1, first=first)
            return self.cache["all"][k]
        one = complement_moments_all(self.chunks, self.u[:, k:], self.v[:, k:], 0, first=first)
        return replace(one[0], k=k)


def _whiten(
    data: ModelData,
    mom: BlockMoments,
    whitening: tuple[Whitening, Whitening] | None = None,
    *,
    rows: bool = True,
) -> _Whitened:
    """SVD of the whitened ``X_lin`` (and the whitened rows when ``rows``).

    A model built from a row source (``data.source``) gets a factory of
    whitened chunks over the source instead of the rows, and the
    first-order sums from its :class:`~jdr_stats.Moments`.
    """
    if data.weights is not None or getattr(data, "weighted", False):
        raise ValueError(
            "rank tests need an unweighted model (their null distributions are "
            "derived for i.i.d. rows); got a model with case weights"
        )
    if np.isnan(mom.cov_a).any():  # a fit with standardize=False skips them
        mom = block_moments(data.endog, data.blocks["exog_a"], data.blocks["exog_b"])
        whitening = None
    if whitening is None:
        whitening = block_whitenings(mom, data.names["exog_a"], data.names["exog_b"])
    wa, wb = whitening
    xw = whiten_cross(mom.cross, wa, wb)  # X_lin (whitened, centred y)
    u, s, vt = np.linalg.svd(xw, full_matrices=True)
    out = _Whitened(m=data.nobs, var_y=mom.var_y, u=u, s=s, v=vt.T)
    if not rows:
        return out
    source = getattr(data, "source", None)
    if source is not None:
        sums = data.moments
        wsum = float(sums.weight)
        first = (
            int(sums.nobs), wa.solve(sums.m2_ay) / wsum, wb.solve(sums.m2_by) / wsum,
            wb.solve(wa.solve(sums.m2_ab).T).T / wsum, mom.var_y,
        )
        chunks = whitened_chunks(source, mom.mean_y, wa.mean, wb.mean, wa.chol, wb.chol)
        return replace(out, chunks=chunks, first=first)
    a_raw, b_raw = data.blocks["exog_a"], data.blocks["exog_b"]
    w = replace(out, a=wa.to_white(a_raw), b=wb.to_white(b_raw), y=data.endog - mom.mean_y)
    return replace(w, chunks=lambda: _row_chunks(w))


def _row_chunks(w: _Whitened) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Row chunks ``(y, a', b')`` of the whitened data (about 32 MB each)."""
    step = max(1, _CHUNK_FLOATS // (w.n1 + w.n2 + 1))
    for start in range(0, w.m, step):
        sl = slice(start, start + step)
        yield w.y[sl], w.a[sl], w.b[sl]


def _kr_chunks(uc: np.ndarray, vc: np.ndarray) -> Iterator[tuple[slice, np.ndarray]]:
    """Row chunks of the Khatri-Rao product: row i is vec(u_i v_i^T) (row-major)."""
    m, p = uc.shape
    q = vc.shape[1]
    step = max(1, _CHUNK_FLOATS // max(p * q, 1))
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
    heavy-tailed ``y``), and, when ``d = (n1-k)(n2-k) <= _MAX_EXACT_DIM``,
    the eigenvalues of ``Omega`` shrunk linearly towards their mean so that
    their sum of squares is ``tr2`` (else None); all divided by ``s_y^2``.
    """
    m = w.m
    d = (w.n1 - k) * (w.n2 - k)
    scale = w.var_y
    if d <= _MAX_EXACT_DIM:
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
            f"more than {_MAX_EXACT_DIM}: its tail then needs sums over pairs of rows, "
            "which a model built from a row source cannot stream. Use method='robust' "
            "with fewer variables, or a model built from arrays"
        )
    uc = w.a @ w.u[:, k:]
    vc = w.b @ w.v[:, k:]
    y = w.y
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
    step = max(1, int(np.sqrt(_CHUNK_FLOATS / 8)))
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


def _permutation_stats(
    w: _Whitened,
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
    """
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

    def __init__(self, w: _Whitened, k: int) -> None:
        m, n1, n2 = w.m, w.n1, w.n2
        y = w.y
        alpha, uc = w.a @ w.u[:, :k], w.a @ w.u[:, k:]
        beta, vc = w.b @ w.v[:, :k], w.b @ w.v[:, k:]
        p, q = n1 - k, n2 - k
        # columns gathered by each permutation: alpha, beta, alpha*y, beta*y
        self.side = np.hstack([alpha, beta, alpha * y[:, None], beta * y[:, None]])  # m x 4k
        self.comp_t = np.hstack([uc, vc]).T  # (p + q) x m
        self.uc, self.vc = uc, vc
        per_perm = m * (1 + 4 * k) + 3 * n1 * n2 + p * q + 4 * k * (p + q)
        self.batch = int(max(1, _CHUNK_FLOATS // per_perm))
        self.w, self.k = w, k

    def __call__(self, rngs: list[Any]) -> np.ndarray:
        w, k = self.w, self.k
        m, n1, n2 = w.m, w.n1, w.n2
        p, q = n1 - k, n2 - k
        nb = len(rngs)
        idx = np.stack([g.permutation(m) for g in rngs])  # permutation j from rngs[j]
        yp = w.y[idx]  # nb x m
        cc = np.zeros((nb, p * q))
        for sl, kr in _kr_chunks(self.uc, self.vc):
            cc += yp[:, sl] @ kr
        xp = np.zeros((nb, n1, n2))
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


def _test_row(
    w: _Whitened, k: int, method: str, n_perm: int, rng: np.random.Generator | None,
    *, n_jobs: int | None = None, progress: ProgressArg = False,
) -> tuple[dict[str, float], str | None]:
    n1, n2 = w.n1, w.n2
    df = float((n1 - k) * (n2 - k))
    if method in ("robust", "wald") and df > _MAX_EXACT_DIM:
        raise ValueError(
            f"the {method} rank test at k={k} forms the covariance of the "
            f"(n1-k)(n2-k) = {int(df)} complement entries, more than {_MAX_EXACT_DIM}; "
            "use method='general' (two-moment tail for large d) or fewer variables"
        )
    if method == "robust":
        res = frobenius_from_moments(w.complement(k), w.s)
        return {"statistic": res.statistic, "df": np.nan, "eff. df": res.df,
                "scale": res.scale, "pvalue": res.pvalue}, None
    if method == "wald":
        if w.m <= df + 1:
            raise ValueError(
                f"the Wald rank test at k={k} needs more than (n1-k)(n2-k) + 1 = "
                f"{int(df) + 1} observations (it estimates the covariance of the "
                f"{int(df)} complement entries); got {w.m}. Use method='robust' "
                "or max_rank"
            )
        res = wald_from_moments(w.complement(k), complement_block(w.s, k, n1, n2).reshape(-1))
        return {"statistic": res.statistic, "F": res.fstat, "df": float(res.df1),
                "df2": float(res.df2), "pvalue": res.pvalue}, None
    stat = w.statistic(k)
    if method == "chi2":
        return {"statistic": stat, "df": df, "pvalue": float(stats.chi2.sf(stat, df))}, None
    if method == "general":
        lam, tr1, tr2 = _general_weights(w, k)
        eff = tr1 * tr1 / tr2 if tr2 > 0 else np.nan
        if lam is not None and np.any(lam > 0):
            pv, tail = float(weighted_chi2_sf(stat, lam)), "imhof"
        elif tr2 > 0:
            pv = float(stats.chi2.sf(stat * eff / tr1, eff))
            tail = "bentler-xie"
        else:
            pv, tail = 1.0, None
        return {"statistic": stat, "df": np.nan, "pvalue": pv, "eff. df": eff}, tail
    null = _permutation_stats(w, k, n_perm, rng, n_jobs=n_jobs, progress=progress)
    # guard against rounding: a permuted statistic equal to T up to 1e-10 counts as >= T
    pv = float(perm_pvalue(stat * (1 - 1e-10), null))
    return {"statistic": stat, "df": np.nan, "pvalue": pv, "n_perm": float(n_perm)}, None


def _check_max_rank(max_rank: Any, n1: int, n2: int) -> int:
    top = min(n1, n2) - 1
    if max_rank is None:
        return top
    why = " (min(n1, n2) - 1: H0: r = min(n1, n2) leaves no complement to test)"
    return check_int(max_rank, "max_rank", low=0, high=top, why=why)


def _build(
    w: _Whitened, method: str, rows: list[dict[str, float]], tails: set[str], n1: int, n2: int
) -> RankTestResults:
    table = pd.DataFrame(rows, index=pd.Index(np.arange(len(rows)), name="k"))
    notes = [
        "Row k tests H0: r <= k (the whitened population cross moment E[a' y b'^T] "
        "has rank <= k) against H1: r > k. "
        + ("Statistic T_k (Wald, see below); " if method == "wald" else
           "Statistic Lambda_k = m * sum_{j>k} s_j(X_lin)^2 / var(y); ")
        + "s_j the singular values of the whitened X_lin (centred y).",
        _ASSUMPTIONS[method],
        "Not rejecting k = 0 does not mean that y is unrelated to the blocks: "
        "additive or even links give a zero cross moment; correlated blocks can "
        "make its rank exceed the number of directions of the model.",
    ]
    if method == "chi2":
        notes.append("df = (n1 - k)(n2 - k).")
    if "bentler-xie" in tails:
        notes.append(
            "Rows with more than %d complement entries use the two-moment "
            "(Bentler-Xie) tail with eff. df = (sum w)^2 / sum w^2." % _MAX_EXACT_DIM
        )
    notes.append("select_rank(alpha) = first k whose test is not rejected.")
    return RankTestResults(
        table=table,
        title="Rank tests for the joint estimator",
        method=method,
        notes=notes,
        nobs=w.m,
        n1=n1,
        n2=n2,
        full=len(rows) == min(n1, n2),
    )


def _run(
    data: ModelData,
    mom: BlockMoments,
    whitening: tuple[Whitening, Whitening] | None,
    *,
    method: str,
    max_rank: int | None,
    n_perm: int,
    seed: Any,
    stop_alpha: float | None = None,
    progress: ProgressArg = False,
    n_jobs: int | None = None,
) -> RankTestResults:
    check_choice(method, "method", _METHODS)
    check_int(n_perm, "n_perm", low=1)
    check_progress(progress)
    n_jobs = check_n_jobs(n_jobs)
    n1, n2 = len(data.names["exog_a"]), len(data.names["exog_b"])
    top = _check_max_rank(max_rank, n1, n2)
    # A model built from sums (moments, Parquet, dask) holds no rows: the
    # chi2 test needs only the singular values; the robust, Wald and general
    # tests need sums over rows, streamed from the model's row source (if
    # any); the permutation test needs the rows.
    if hasattr(data, "require_rows"):
        if method == "permutation":
            data.require_rows("the permutation rank test")
        elif method != "chi2":
            data.require_source(f"the {method} rank test")
    rng = normalize_seed(seed) if method == "permutation" else None
    if data.nobs < max(n1, n2) + 2:
        raise ValueError(
            f"rank tests need at least max(n1, n2) + 2 = {max(n1, n2) + 2} "
            f"observations to whiten the blocks; got {data.nobs}"
        )
    w = _whiten(data, mom, whitening, rows=method != "chi2")
    rows, tails = [], set()
    shown = progress if method == "permutation" else False
    with progress_bar(shown, n_perm * (top + 1), "permutation tests") as update:
        for k in range(top + 1):
            row, tail = _test_row(w, k, method, n_perm, rng, n_jobs=n_jobs,
                                  progress=progress_forwarder(update) if shown else False)
            rows.append(row)
            if tail:
                tails.add(tail)
            if stop_alpha is not None and not row["pvalue"] <= stop_alpha:
                break
    return _build(w, method, rows, tails, n1, n2)


# ---------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------
def rank_tests(
    data: ModelData,
    moments: BlockMoments,
    whitening: tuple[Whitening, Whitening] | None = None,
    *,
    method: RankMethod = "robust",
    max_rank: int | None = None,
    n_perm: int = 999,
    seed: int | np.random.Generator | None = None,
    progress: ProgressArg = False,
    n_jobs: int | None = None,
) -> RankTestResults:
    """Sequential tests of ``H0: r = k``, ``k = 0, 1, ..., max_rank``.

    The narrow entry point: ``JDRResults.rank_tests`` calls it with the
    fit's data and moments.

    Parameters
    ----------
    data : ModelData
        The validated data (unweighted).
    moments : BlockMoments
        Their sufficient statistics (with covariances; recomputed from
        ``data`` when they hold none).
    whitening : (Whitening, Whitening), optional
        The blocks' whitenings if already factored.
    method : {"robust", "wald", "chi2", "general", "permutation"}
        ``"robust"`` (default): ``Lambda_k`` against a scaled chi-square with
        its finite-sample mean and variance estimated from the rows, no
        distributional assumption (within the size band in 41 of the 42
        settings of the robustness battery, the miss conservative:
        ``benchmarks/results/study_rank_robust_fs.txt``).
        ``"wald"``: the self-normalised ``T_k`` with Hotelling's F reference
        (conservative, less powerful).  ``"chi2"``: the normal-theory
        chi-square (Gaussian blocks, noise independent of them); ``"general"``:
        weighted chi-square with estimated weights; ``"permutation"``
        (normal-theory premise).
    max_rank : int, optional
        Largest ``k`` tested, ``0 <= max_rank <= min(n1, n2) - 1`` (default).
    n_perm : int
        Permutations per row (permutation test only).
    seed : int, Generator or None
        Seed of the permutations (permutation test only).
    progress : bool or callable
        Permutation test only: ``True`` shows a progress bar (tqdm, or
        lines on standard error); a callable is called as
        ``progress(done, total)`` with permutations counted over all rows.
    n_jobs : int or None
        Processes for the batches of permutations (joblib; None or 1: this
        process).  The p-values do not depend on ``n_jobs``.

    Returns
    -------
    RankTestResults

    Notes
    -----
    ``Lambda_k = m sum_{j>k} sigma_j(X_lin)^2 / s_y^2``, ``X_lin`` the
    whitened cross moment with centred ``y`` (eq. ``lin``; section 5.1 for
    the whitening).  Under ``H0: r = k``, ``sum_{j>k} sigma_j^2`` is, to
    first order, the squared norm of the complement block
    ``U_perp^T X_lin V_perp = (1/m) sum u_i y_i v_i^T`` (``u = U_perp^T a'``,
    ``v = V_perp^T b'``); estimating the means and covariances and centring
    ``y`` change it only by ``O_p(1/m)``.  Normal theory (Lemma
    ``independent``): covariance ``E[y^2] I / m``, so ``Lambda_k ->
    chi2((n1-k)(n2-k))``.  In general ``Lambda_k -> sum_j w_j chi2_1`` with
    ``w = eig(Omega) / sigma_y^2``, ``Omega`` the covariance of the influence
    function ``psi_i = u_i y_i v_i^T - u_i c_yv^T - c_uy v_i^T - y_i C_uv``.
    The tests always use the whitened ``X_lin`` (whatever the fit's
    ``standardize``; the rank does not depend on it) and the dense fit
    (whatever its ``sparsity``).  See ``docs/theory/rank_tests.md``.

    References
    ----------
    Li, K.-C. (1991, 1992), SIR and pHd tests; Cook, R. D. and Yin, X. (2001),
    Dimension reduction and visualization in discriminant analysis,
    Aust. N. Z. J. Stat. 43, 147-199; Bentler, P. M. and Xie, J. (2000);
    Imhof, J. P. (1961), Computing the distribution of quadratic forms in
    normal variables, Biometrika 48, 419-426.

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(2000, 6, 5, 2, seed=3)
    >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    >>> rt = res.rank_tests("permutation", max_rank=2, n_perm=199, seed=1)
    >>> rt.table["pvalue"].round(3).tolist()[:2]
    [0.005, 0.005]
    >>> rt.select_rank()
    2
    >>> from jdr_stats.inference.rank_tests import rank_tests
    >>> rank_tests(res.model.data, res.moments).select_rank()
    2
    """
    return _run(
        data,
        moments,
        whitening,
        method=method,
        max_rank=max_rank,
        n_perm=n_perm,
        seed=seed,
        progress=progress,
        n_jobs=n_jobs,
    )


def choose_rank(
    data: ModelData,
    moments: BlockMoments,
    whitening: tuple[Whitening, Whitening] | None = None,
    *,
    method: RankMethod | Literal["ladle"] = "robust",
    alpha: float = 0.05,
    seed: int | np.random.Generator | None = None,
    n_perm: int = 999,
) -> tuple[int, RankTestResults]:
    """Choose ``r`` as the first ``k`` whose test of ``H0: r = k`` is not rejected.

    Used by ``fit(rank="auto")``.  Tests (default: the robust test) run for
    ``k = 0, 1, ...`` and stop at the first non-rejection (the table holds
    the rows computed).  ``method="ladle"`` uses the ladle estimator (Luo and
    Li 2016; 100 Poisson-bootstrap replicates drawn from ``seed``) instead.  If
    ``H0: r = 0`` is not rejected (no evidence of any direction) the fit
    still needs ``r >= 1``: ``r = 1`` is used and a
    :class:`~jdr_stats.exceptions.RankSelectionWarning` is issued.  If every
    test rejects, ``r = min(n1, n2)``.

    The tests always use the whitened cross moment (its rank equals that of
    the unwhitened one), whatever the fit's ``standardize``.

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(2000, 6, 5, 2, seed=3)
    >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto", rank_method="general")
    >>> res.rank, res.rank_method
    (2, 'general')
    """
    alpha = check_fraction(alpha, "alpha")
    check_choice(method, "rank_method", _SELECTORS)
    if method == "ladle":
        out = _ladle(data, moments, whitening, seed=seed)
    else:
        out = _run(
            data, moments, whitening, method=method, max_rank=None, n_perm=n_perm,
            seed=seed, stop_alpha=alpha,
        )
    rank = out.select_rank(alpha)
    if rank == 0:
        why = (
            "the ladle chose r = 0" if method == "ladle" else
            f"no rank test rejected H0: r = 0 ({method} tests, alpha={alpha}, "
            f"p = {out.table['pvalue'].iloc[0]:.3g})"
        )
        warnings.warn(
            f"{why}: the data show no evidence of any direction of the cross moment "
            "E[a' y b'^T] (y may still depend on the blocks through additive or even "
            "links); fitting r = 1",
            RankSelectionWarning,
            stacklevel=3,
        )
        rank = 1
    return rank, out


def _ladle(
    data: ModelData,
    mom: BlockMoments,
    whitening: tuple[Whitening, Whitening] | None,
    *,
    seed: Any,
    n_boot: int = 100,
) -> RankTestResults:
    """The ladle estimate (Luo and Li 2016) as a table without tests."""
    if hasattr(data, "require_rows"):
        data.require_source("the ladle")
    n1, n2 = len(data.names["exog_a"]), len(data.names["exog_b"])
    if data.nobs < max(n1, n2) + 2:
        raise ValueError(
            f"the ladle needs at least max(n1, n2) + 2 = {max(n1, n2) + 2} "
            f"observations to whiten the blocks; got {data.nobs}"
        )
    w = _whiten(data, mom, whitening, rows=True)
    lad = ladle_from_chunks(w.chunks, w.var_y, w.u, w.s, w.v, n_boot=n_boot,
                            rng=normalize_seed(seed))
    table = pd.DataFrame(
        {"boot_var": lad.boot_var, "eig_part": lad.eig_part, "criterion": lad.criterion},
        index=pd.Index(np.arange(lad.criterion.size), name="k"),
    )
    notes = [
        "Ladle estimate of the rank of the whitened population cross moment "
        f"E[a' y b'^T] (chosen r = {lad.rank}, the k of the smallest criterion; "
        f"{n_boot} Poisson-bootstrap replicates).",
        _ASSUMPTIONS["ladle"],
    ]
    return RankTestResults(
        table=table, title="Ladle estimate of the rank", method="ladle", notes=notes,
        nobs=w.m, n1=n1, n2=n2, full=False, chosen=lad.rank,
    )
