"""The orthogonal interaction estimand and its rank test (two blocks).

``fit(..., interactions="orthogonal")`` replaces the response by its least
squares residual ``e`` on ``[1, a, b]`` before the cross moment is formed, so
the estimand is the cross block of ``Sigma^{-1} E[e x x^T] Sigma^{-1}``
(``x = (a, b)``, ``Sigma`` its covariance; per block for the paper's
estimator), zero under any pure linear main effect whatever the design's
distribution (theory page "Whitening", section "Interactions orthogonal to
the main effects").  The estimated residual coefficients enter the cross
moment at first order whenever the design has a third moment; the
influence rows below carry that term (the cross products residualised on
the same regressors, ``P_i e_i``) and the estimation of the whitening, and
the rank test refers the complement block's squared norm to the weighted
chi-square sum of their (HC3) sandwich covariance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core._linalg import centred_basis
from ..core.moments import response_scale
from .chi2mix import weighted_chi2_sf
from .rank_tests import RankTestResults

__all__ = ["OrthogonalDesign", "influence_rows", "n_regressors",
           "orthogonal_design", "orthogonal_rank_tests", "orthogonal_residual",
           "regressor_basis"]

#: the method key of the test (``results.rank_tests()`` of an orthogonal fit)
METHOD = "orthogonal"
LABEL = ("orthogonal interactions: Lambda_k against sum_j w_j chi2_1, w_j the eigenvalues "
         "of the HC3 sandwich of the main-effect-corrected influence rows (Imhof)")
NOTE = ("H0: rank of the cross block of Sigma^{-1} E[e x x^T] Sigma^{-1} <= k, e the "
        "least squares residual of y on [1, a, b]. Statistic Lambda_k = m sum_{j>k} s_j^2 "
        "(s_j the singular values of the fit's X_lin of e), referred to sum_j w_j chi2_1, "
        "w_j the eigenvalues of the covariance of the complement block's influence rows "
        "(the cross products residualised on [1, a, b] times e, plus the whitening's "
        "term, each divided by 1 - h_ii, h_ii the leverage of [1, a, b]); eff_df = "
        "(sum w)^2 / sum w^2, scale = sum w^2 / sum w; df is d = (n1-k)(n2-k). Assumes "
        "i.i.d. rows, finite fourth moments of the design and second moments of the "
        "influence rows, main effects linear in the blocks (within-block curvature of y "
        "still enters on correlated non-Gaussian blocks).")


def _design(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.hstack([a, b])


def _name(quadratic: bool) -> str:
    return 'interactions="orthogonal_quadratic"' if quadratic else 'interactions="orthogonal"'


def n_regressors(n1: int, n2: int, quadratic: bool) -> int:
    """Columns of the regression that defines the residual, intercept included."""
    extra = n1 * (n1 + 1) // 2 + n2 * (n2 + 1) // 2 if quadratic else 0
    return 1 + n1 + n2 + extra


def _within_squares(x: np.ndarray) -> np.ndarray:
    j, k = np.triu_indices(x.shape[1])
    return x[:, j] * x[:, k]


def regressor_basis(a: np.ndarray, b: np.ndarray, *, quadratic: bool = False) -> np.ndarray:
    """Orthonormal basis (m x p_R) of the centred regressors ``[a, b]``, with
    ``quadratic`` also every within-block product ``a_j a_l``, ``b_j b_l``
    (``j <= l``; products a dummy column repeats are dropped as collinear).

    Raises ``ValueError`` (naming ``interactions``) unless ``m`` exceeds the
    regressors plus the intercept and ``[1, a, b]`` has full column rank.
    """
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    m, n1, n2 = a.shape[0], a.shape[1], b.shape[1]
    need = n_regressors(n1, n2, quadratic)
    what = "[1, a, b" + (", within-block products]" if quadratic else "]")
    if m <= need:
        raise ValueError(f"{_name(quadratic)} regresses y on {what} ({need} columns) and "
                         f"needs more rows than that; got m = {m}")
    xc, q = centred_basis(np.hstack([a, b]), _name(quadratic), "[1, a, b]")
    if not quadratic:
        return np.asarray(q)
    # products of the standardised columns (unit free), then what [1, a, b] leaves
    xs = xc / np.sqrt(np.mean(xc * xc, axis=0))
    sq = np.hstack([_within_squares(xs[:, :n1]), _within_squares(xs[:, n1:])])
    sq = sq - sq.mean(axis=0)
    before = np.linalg.norm(sq, axis=0)
    sq -= q @ (q.T @ sq)
    norms = np.linalg.norm(sq, axis=0)
    # a product [1, a, b] explains (a dummy's square) is dropped as collinear
    keep = norms > before * 1e-8
    uq, sv, _ = np.linalg.svd(sq[:, keep] / norms[keep], full_matrices=False)
    uq = uq[:, sv > sv[0] * sq.shape[1] * np.finfo(float).eps * 100]
    return np.hstack([q, uq])


def orthogonal_residual(y: np.ndarray, a: np.ndarray, b: np.ndarray, *,
                        quadratic: bool = False) -> np.ndarray:
    """Least squares residual of ``y`` on ``[1, a, b]`` (``sum e = 0``,
    ``a^T e = b^T e = 0``), with ``quadratic`` also on the within-block
    products (:func:`regressor_basis`, which raises on too few rows)."""
    y = np.asarray(y, dtype=float)
    if y.ndim != 1:
        raise ValueError(f"{_name(quadratic)} needs a single numeric response "
                         f"column; got an array of shape {y.shape}")
    q = regressor_basis(a, b, quadratic=quadratic)
    yc = y - y.mean()
    return np.asarray(yc - q @ (q.T @ yc))


@dataclass(frozen=True)
class OrthogonalDesign:
    """The quantities of the orthogonal estimand, from rows in memory.

    ``w = Omega (x - xbar)`` with ``Omega`` the inverse sample covariance of
    ``x = (a, b)`` (block diagonal for the per-block estimator, ``joint``
    False); ``K = (1/m) sum w_a e w_b^T``; ``G_k`` with ``G_k^T G_k =
    (Omega_kk)^{-1}`` maps it to the fit's whitened coordinates,
    ``X = G_a K G_b^T`` (singular values those of the fit's ``X_lin`` on
    ``e``).
    """

    e: np.ndarray
    xc: np.ndarray
    basis: np.ndarray  # orthonormal basis of the centred regressors of the residual
    w: np.ndarray
    k_mat: np.ndarray
    g_a: np.ndarray
    g_b: np.ndarray
    n_tilde: np.ndarray  # Omega N Omega (only its off-diagonal blocks per block)
    u: np.ndarray
    s: np.ndarray
    v: np.ndarray
    joint: bool

    @property
    def quadratic(self) -> bool:
        """True when the regressors include the within-block products."""
        return bool(self.basis.shape[1] > self.xc.shape[1])

    @property
    def n1(self) -> int:
        return int(self.g_a.shape[0])

    @property
    def n2(self) -> int:
        return int(self.g_b.shape[0])

    @property
    def m(self) -> int:
        return int(self.e.shape[0])


def orthogonal_design(y: np.ndarray, a: np.ndarray, b: np.ndarray, *,
                      joint: bool = True, quadratic: bool = False) -> OrthogonalDesign:
    """:class:`OrthogonalDesign` of the rows ``(y, a, b)``; ``quadratic``:
    the residual and the cross products also on the within-block products."""
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    y = np.asarray(y, dtype=float)
    if y.ndim != 1:
        raise ValueError(f"{_name(quadratic)} needs a single numeric response "
                         f"column; got an array of shape {y.shape}")
    basis = regressor_basis(a, b, quadratic=quadratic)
    e = np.asarray(y - y.mean() - basis @ (basis.T @ (y - y.mean())))
    n1 = a.shape[1]
    xc = _design(a, b)
    xc = xc - xc.mean(axis=0)
    m = xc.shape[0]
    sigma = xc.T @ xc / m
    if not joint:
        sigma[:n1, n1:] = 0.0
        sigma[n1:, :n1] = 0.0
    omega = np.linalg.inv(sigma)
    omega = (omega + omega.T) / 2
    w = xc @ omega
    k_mat = (w[:, :n1] * e[:, None]).T @ w[:, n1:] / m
    nmat = (xc * e[:, None]).T @ xc / m
    n_tilde = omega @ nmat @ omega
    if not joint:  # the per-block whitening estimates within-block covariances only
        n_tilde[:n1, :n1] = 0.0
        n_tilde[n1:, n1:] = 0.0
        n_tilde[:n1, n1:] = k_mat
        n_tilde[n1:, :n1] = k_mat.T
    g_a = np.linalg.cholesky(np.linalg.inv(omega[:n1, :n1])).T
    g_b = np.linalg.cholesky(np.linalg.inv(omega[n1:, n1:])).T
    x_mat = g_a @ k_mat @ g_b.T
    u, s, vt = np.linalg.svd(x_mat)
    return OrthogonalDesign(e, xc, basis, w, k_mat, g_a, g_b, n_tilde, u, s, vt.T, joint)


def influence_rows(des: OrthogonalDesign, k: int) -> tuple[np.ndarray, np.ndarray]:
    """``(psi, c)``: the influence rows (m x d) of the complement block at
    rank ``k`` and its value ``c = vec(U_perp^T X V_perp)`` (row-major).

    ``psi_i = Ut^T P_i Vt e_i - (Ut^T w_a,i)(Vt^T h_b,i)^T
    - (Ut^T h_a,i)(Vt^T w_b,i)^T`` (up to a constant), ``Ut = G_a^T U_perp``,
    ``Vt = G_b^T V_perp``, ``P_i`` the cross products ``w_a,i w_b,i^T``
    residualised on ``[1, x]`` and ``h_i = Omega N Omega (x_i - xbar)``.
    """
    n1 = des.n1
    ut = des.g_a.T @ des.u[:, k:]
    vt = des.g_b.T @ des.v[:, k:]
    ua = des.w[:, :n1] @ ut
    vb = des.w[:, n1:] @ vt
    m = des.m
    prod = (ua[:, :, None] * vb[:, None, :]).reshape(m, -1)
    # residual of the products on the regressors: the main effects' estimation
    q = des.basis
    prod = prod - prod.mean(axis=0)
    prod -= q @ (q.T @ prod)
    h = des.xc @ des.n_tilde
    ha, hb = h[:, :n1] @ ut, h[:, n1:] @ vt
    psi = prod * des.e[:, None]
    psi -= (ua[:, :, None] * hb[:, None, :]).reshape(m, -1)
    psi -= (ha[:, :, None] * vb[:, None, :]).reshape(m, -1)
    c = (des.u[:, k:].T @ (des.g_a @ des.k_mat @ des.g_b.T) @ des.v[:, k:]).reshape(-1)
    return psi, c


def _leverage(des: OrthogonalDesign) -> np.ndarray:
    """``h_ii`` of the regression that defines the residual."""
    q = des.basis
    return np.asarray(np.sum(q * q, axis=1) + 1.0 / des.m)


def _row(des: OrthogonalDesign, k: int, lev: np.ndarray) -> dict[str, float]:
    m, p = des.m, des.basis.shape[1]
    d = (des.n1 - k) * (des.n2 - k)
    if m - p - 1 <= d:
        raise ValueError(
            f"{_name(des.quadratic)}: the rank test at k={k} estimates the covariance "
            f"of the (n1-k)(n2-k) = {d} complement entries and needs m - {p + 1} > "
            f"{d} rows ({p + 1} regressors); got m = {m}. Give the rank, or fewer "
            "variables")
    psi, c = influence_rows(des, k)
    # HC3: each row divided by 1 - h_ii (the leverage of [1, a, b])
    psi = psi / (1.0 - lev)[:, None]
    psi -= psi.mean(axis=0)
    cov = psi.T @ psi / m
    lam = np.clip(np.linalg.eigvalsh(cov), 0.0, None)
    if not lam.max() > 0:
        raise ValueError(f"{_name(des.quadratic)}: the influence rows of the "
                         f"complement block at k={k} are degenerate")
    stat = float(m * np.sum(c * c))
    tr1, tr2 = float(lam.sum()), float(np.sum(lam * lam))
    return {"statistic": stat, "df": float(d),
            "pvalue": float(weighted_chi2_sf(stat, lam[lam > lam.max() * 1e-12])),
            "eff_df": tr1 * tr1 / tr2, "scale": tr2 / tr1}


def orthogonal_rank_tests(y: np.ndarray, a: np.ndarray, b: np.ndarray, *,
                          joint: bool = True, quadratic: bool = False,
                          max_rank: int | None = None,
                          stop_alpha: float | None = None) -> RankTestResults:
    """Sequential tests of ``H0: r <= k`` of the orthogonal interaction estimand.

    Parameters
    ----------
    y, a, b : ndarray
        The response (m,) and the blocks (m x n1, m x n2), rows in memory.
    joint : bool
        The joint estimator's whitening (True) or the per-block one.
    quadratic : bool
        The residual (and the cross products) also on the within-block
        products (``interactions="orthogonal_quadratic"``).
    max_rank : int, optional
        Largest ``k`` (default ``min(n1, n2) - 1``).
    stop_alpha : float, optional
        Stop after the first row whose p-value exceeds it (a rank selection).

    Returns
    -------
    RankTestResults
        Method ``"orthogonal"``; columns ``statistic`` (``Lambda_k = m
        sum_{j>k} s_j^2``), ``df`` (``d = (n1-k)(n2-k)``), ``pvalue``,
        ``eff_df`` and ``scale`` (the two-moment summary of the weights).

    Notes
    -----
    See the theory page "Whitening", section "Interactions orthogonal to the
    main effects"; the study ``studies/study_main_effect_leak.py``.

    Examples
    --------
    >>> import numpy as np
    >>> from jdr_stats.inference.orthogonal_rank import orthogonal_rank_tests
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.standard_normal((2000, 4)), rng.standard_normal((2000, 3))
    >>> y = a[:, 0] * b[:, 0] + a[:, 1] + rng.standard_normal(2000)
    >>> t = orthogonal_rank_tests(y, a, b)
    >>> list(t.table.columns), t.select_rank(0.05)
    (['statistic', 'df', 'pvalue', 'eff_df', 'scale'], 1)
    """
    # the p-values are free of the response's unit: a response of extreme
    # units is brought near unit size (exact), Lambda_k and the scale are
    # folded back into its units (squared) below
    c = response_scale(y)
    y = y if c == 1.0 else np.asarray(y, float) * c
    des = orthogonal_design(y, a, b, joint=joint, quadratic=quadratic)
    top = min(des.n1, des.n2) - 1
    if max_rank is not None:
        if not 0 <= int(max_rank) <= top:
            raise ValueError(f"max_rank must be between 0 and {top}; got {max_rank!r}")
        top = int(max_rank)
    rows = []
    lev = _leverage(des)
    for k in range(top + 1):
        rows.append(_row(des, k, lev))
        if stop_alpha is not None and rows[-1]["pvalue"] > stop_alpha:
            break
    table = pd.DataFrame(rows, index=pd.Index(range(len(rows)), name="k"))
    if c != 1.0:
        with np.errstate(over="ignore"):  # beyond float64 in the response's units: inf
            table[["statistic", "scale"]] = table[["statistic", "scale"]] / c / c
    return RankTestResults(
        table, "Rank tests (orthogonal interactions)", METHOD, notes=[NOTE],
        method_label=LABEL, nobs=des.m, n1=des.n1, n2=des.n2,
        full=len(rows) == min(des.n1, des.n2))
