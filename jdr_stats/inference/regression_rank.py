"""The regression interaction estimand and its rank test (two blocks).

``fit(..., interactions="regression")`` estimates the interaction by the least
squares coefficient matrix ``B`` (n1 x n2) of the cross products ``a_j b_l``
in the regression of ``y`` on ``[1, a, b]``, the within-block products
``a_j a_l``, ``b_j b_l`` (``j <= l``) and the cross products.  For
``y = a^T U C V^T b + g(a) + h(b) + e`` with ``g``, ``h`` at most quadratic and
``e`` uncorrelated with the regressors, ``B = U C V^T`` exactly whatever the
design's distribution (the population least squares projection); for
Gaussian designs it is the cross block of ``E[d2 f / dx dx^T]``, the
default's target (theory page "Whitening", section "Interactions by
regression").  ``B`` is reported in the fit's whitened metric,
``X = G_a B G_b^T`` (``G_k^T G_k`` the inverse of block ``k``'s block of the
inverse covariance the fit whitens with), which makes it unit free.

The rank test refers ``Lambda_k = m sum_{j>k} s_j^2`` (``s_j`` the singular
values of ``X``) to the weighted chi-square sum of the HC2 sandwich
covariance (HC2) of the complement block ``U_perp^T X V_perp``, whose influence
rows are ``(U_perp^T M_a) [(P^T P / m)^{-1} P_i r_i] (M_b^T V_perp)``:
``P`` the cross products residualised on the other regressors, ``r`` the
regression's residual.  The whitening's estimation does not enter at first
order (``X V_perp = 0`` under the null).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..core.moments import response_scale
from .chi2mix import weighted_chi2_sf
from .orthogonal_rank import n_regressors, regressor_basis
from .rank_tests import RankTestResults

__all__ = ["RegressionDesign", "regression_design", "regression_rank_tests",
           "regression_response", "n_regression_columns"]

NAME = 'interactions="regression"'
METHOD = "regression"
LABEL = ("regression interactions: Lambda_k against sum_j w_j chi2_1, w_j the eigenvalues "
         "of the HC2 sandwich of the cross-product coefficients' complement block (Imhof)")
NOTE = ("H0: rank of B <= k, B the least squares coefficients of the cross products "
        "a_j b_l in the regression of y on [1, a, b, within-block products, cross "
        "products], in the fit's whitened metric. Statistic Lambda_k = m sum_{j>k} s_j^2 "
        "(s_j the singular values of the whitened B), referred to sum_j w_j chi2_1, w_j "
        "the eigenvalues of the HC2 sandwich covariance of the complement block "
        "U_perp^T B V_perp (each influence row divided by sqrt(1 - h_ii), h_ii the leverage "
        "of the full regression); eff_df = (sum w)^2 / sum w^2, scale = sum w^2 / sum w; "
        "df is d = (n1-k)(n2-k). Assumes i.i.d. rows, finite fourth moments of the "
        "products and a link whose projection on the regressors carries the "
        "interaction (exact for bilinear links plus main effects and within-block "
        "quadratics, whatever the design).")


def n_regression_columns(n1: int, n2: int) -> int:
    """Columns of the regression that defines ``B``, intercept included."""
    return n_regressors(n1, n2, True) + n1 * n2


def _cholesky_whiten(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(x', L)``: the centred rows whitened by the lower Cholesky factor
    ``L`` of their covariance, ``x' = (x - xbar) L^{-T}``."""
    xc = x - x.mean(axis=0)
    low = np.linalg.cholesky(xc.T @ xc / x.shape[0])
    return np.linalg.solve(low, xc.T).T, low


@dataclass(frozen=True)
class RegressionDesign:
    """The quantities of the regression estimand, from rows in memory.

    ``B'`` (``b_prime``) is the cross-product coefficient matrix in each
    block's Cholesky-whitened coordinates; ``X = M_a B' M_b^T`` the same in
    the fit's whitened metric (``M_k = G_k L_k^{-T}``).  ``psi`` are the
    influence rows of ``vec(B')`` (row-major), already divided by
    ``sqrt(1 - h_ii)`` (HC2).
    """

    b_prime: np.ndarray
    m_a: np.ndarray
    m_b: np.ndarray
    psi: np.ndarray
    x_mat: np.ndarray
    u: np.ndarray
    s: np.ndarray
    v: np.ndarray
    n_cols: int
    b_raw: np.ndarray  # B in the original coordinates, L_a^{-T} B' L_b^{-1}
    w_prod: np.ndarray  # products w_a,j w_b,l of the fit's coordinates

    @property
    def n1(self) -> int:
        return int(self.b_prime.shape[0])

    @property
    def n2(self) -> int:
        return int(self.b_prime.shape[1])

    @property
    def m(self) -> int:
        return int(self.psi.shape[0])


def regression_design(y: np.ndarray, a: np.ndarray, b: np.ndarray, *,
                      joint: bool = True) -> RegressionDesign:
    """:class:`RegressionDesign` of the rows ``(y, a, b)``.

    Raises ``ValueError`` naming ``interactions`` when ``m`` does not exceed
    the regression's columns, or when the cross products are collinear with
    the other regressors (a column repeated across blocks).
    """
    a = np.asarray(a, float)
    b = np.asarray(b, float)
    y = np.asarray(y, float)
    if y.ndim != 1:
        raise ValueError(f"{NAME} needs a single numeric response column; got an array "
                         f"of shape {y.shape}")
    m, n1, n2 = a.shape[0], a.shape[1], b.shape[1]
    need = n_regression_columns(n1, n2)
    if m <= need:
        raise ValueError(
            f"{NAME} regresses y on [1, a, b, within-block products, cross products] "
            f"({need} columns for n1 = {n1}, n2 = {n2}) and needs more rows than that; "
            f"got m = {m}. Use fewer variables or interactions=\"orthogonal\"")
    try:
        q = regressor_basis(a, b, quadratic=True)
    except ValueError as err:  # the same checks, named for this estimand
        raise ValueError(str(err).replace('interactions="orthogonal_quadratic"', NAME)
                         ) from None
    # regressor_basis has checked that [1, a, b] has full column rank
    ap, low_a = _cholesky_whiten(a)
    bp, low_b = _cholesky_whiten(b)
    prod = (ap[:, :, None] * bp[:, None, :]).reshape(m, -1)
    prod = prod - prod.mean(axis=0)
    before = np.linalg.norm(prod, axis=0)
    prod -= q @ (q.T @ prod)
    sv = np.linalg.svd(prod, compute_uv=False)
    if not sv[-1] > 1e-8 * max(float(before.max()), 1e-300):
        raise ValueError(f"{NAME}: the cross products a_j b_l are linearly dependent on "
                         "the main effects and within-block products (a column repeated "
                         "in both blocks, or a constant product); drop the redundant "
                         "columns")
    gram = prod.T @ prod / m
    gram_inv = np.linalg.inv(gram)
    gram_inv = (gram_inv + gram_inv.T) / 2
    yc = y - y.mean()
    ry = yc - q @ (q.T @ yc)
    coef = gram_inv @ (prod.T @ ry / m)
    resid = ry - prod @ coef
    lev = np.sum(q * q, axis=1) + 1.0 / m + np.einsum("ij,jk,ik->i", prod, gram_inv,
                                                       prod) / m
    # HC2: r_i^2 / (1 - h_ii) is unbiased for the noise variance under
    # homoscedasticity (HC3's square overstates it at heavy-tailed
    # high-leverage rows; the study measures both)
    psi = (prod @ gram_inv) * (resid / np.sqrt(1.0 - np.clip(lev, None, 1 - 1e-12)))[:, None]
    psi -= psi.mean(axis=0)
    b_prime = coef.reshape(n1, n2)
    # the fit's metric: w = Omega (x - xbar), G_k^T G_k = (Omega_kk)^{-1}
    x = np.hstack([a, b])
    xc = x - x.mean(axis=0)
    sigma = xc.T @ xc / m
    if not joint:
        sigma[:n1, n1:] = 0.0
        sigma[n1:, :n1] = 0.0
    omega = np.linalg.inv(sigma)
    omega = (omega + omega.T) / 2
    g_a = np.linalg.cholesky(np.linalg.inv(omega[:n1, :n1])).T
    g_b = np.linalg.cholesky(np.linalg.inv(omega[n1:, n1:])).T
    m_a = g_a @ np.linalg.inv(low_a).T
    m_b = g_b @ np.linalg.inv(low_b).T
    x_mat = m_a @ b_prime @ m_b.T
    b_raw = np.linalg.solve(low_a.T, np.linalg.solve(low_b.T, b_prime.T).T)
    u, s, vt = np.linalg.svd(x_mat)
    w = xc @ omega
    w_prod = (w[:, :n1, None] * w[:, None, n1:]).reshape(m, -1)
    return RegressionDesign(b_prime, m_a, m_b, psi, x_mat, u, s, vt.T, need, b_raw, w_prod)


def regression_response(des: RegressionDesign) -> np.ndarray:
    """A centred response ``e*`` whose cross moment in the fit's whitened
    coordinates is the whitened ``B``: ``(1/m) sum_i w_a,i e*_i w_b,i^T =
    G_a^{-1} X G_b^{-T}`` (the raw-coordinate ``B``), so the fit's pipeline
    (directions, mapping back, transform, summary) serves this estimand
    unchanged.  ``e* = Z (Z^T Z / m)^{-1} vec(B)``, ``Z`` the centred products
    ``w_a,j w_b,l``.
    """
    z = des.w_prod - des.w_prod.mean(axis=0)
    return np.asarray(z @ np.linalg.solve(z.T @ z / des.m, des.b_raw.reshape(-1)))


def _row(des: RegressionDesign, k: int) -> dict[str, float]:
    m = des.m
    d = (des.n1 - k) * (des.n2 - k)
    if m - des.n_cols <= d:
        raise ValueError(
            f"{NAME}: the rank test at k={k} estimates the covariance of the "
            f"(n1-k)(n2-k) = {d} complement entries and needs m - {des.n_cols} > {d} "
            f"rows ({des.n_cols} regressors); got m = {m}. Give the rank, or fewer "
            "variables")
    up, vp = des.u[:, k:], des.v[:, k:]
    ua = des.m_a.T @ up
    vb = des.m_b.T @ vp
    c = (ua.T @ des.b_prime @ vb).reshape(-1)
    psi = des.psi @ np.kron(ua, vb)
    cov = psi.T @ psi / m
    lam = np.clip(np.linalg.eigvalsh(cov), 0.0, None)
    if not lam.max() > 0:
        raise ValueError(f"{NAME}: the influence rows of the complement block at k={k} "
                         "are degenerate (a response without noise?)")
    stat = float(m * np.sum(c * c))
    tr1, tr2 = float(lam.sum()), float(np.sum(lam * lam))
    return {"statistic": stat, "df": float(d),
            "pvalue": float(weighted_chi2_sf(stat, lam[lam > lam.max() * 1e-12])),
            "eff_df": tr1 * tr1 / tr2, "scale": tr2 / tr1}


def regression_rank_tests(y: np.ndarray, a: np.ndarray, b: np.ndarray, *,
                          joint: bool = True, max_rank: int | None = None,
                          stop_alpha: float | None = None) -> RankTestResults:
    """Sequential tests of ``H0: r <= k`` of the regression interaction estimand.

    Parameters
    ----------
    y, a, b : ndarray
        The response (m,) and the blocks (m x n1, m x n2), rows in memory.
    joint : bool
        The metric of the joint estimator's whitening (True) or the per-block one.
    max_rank : int, optional
        Largest ``k`` (default ``min(n1, n2) - 1``).
    stop_alpha : float, optional
        Stop after the first row whose p-value exceeds it (a rank selection).

    Returns
    -------
    RankTestResults
        Method ``"regression"``; columns ``statistic`` (``Lambda_k = m
        sum_{j>k} s_j^2``), ``df`` (``d = (n1-k)(n2-k)``), ``pvalue``,
        ``eff_df`` and ``scale``.

    Notes
    -----
    See the theory page "Whitening", section "Interactions by regression";
    the study ``studies/study_regression_estimand.py``.

    Examples
    --------
    >>> import numpy as np
    >>> from jdr_stats.inference.regression_rank import regression_rank_tests
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.standard_normal((2000, 4)), rng.standard_normal((2000, 3))
    >>> y = a[:, 0] * b[:, 0] + a[:, 1] + rng.standard_normal(2000)
    >>> t = regression_rank_tests(y, a, b)
    >>> list(t.table.columns), t.select_rank(0.05)
    (['statistic', 'df', 'pvalue', 'eff_df', 'scale'], 1)
    """
    # the p-values are free of the response's unit: a response of extreme
    # units is brought near unit size (exact), Lambda_k and the scale are
    # folded back into its units (squared) below
    c = response_scale(y)
    y = y if c == 1.0 else np.asarray(y, float) * c
    des = regression_design(y, a, b, joint=joint)
    top = min(des.n1, des.n2) - 1
    if max_rank is not None:
        if not 0 <= int(max_rank) <= top:
            raise ValueError(f"max_rank must be between 0 and {top}; got {max_rank!r}")
        top = int(max_rank)
    rows = []
    for k in range(top + 1):
        rows.append(_row(des, k))
        if stop_alpha is not None and rows[-1]["pvalue"] > stop_alpha:
            break
    table = pd.DataFrame(rows, index=pd.Index(range(len(rows)), name="k"))
    if c != 1.0:
        with np.errstate(over="ignore"):  # beyond float64 in the response's units: inf
            table[["statistic", "scale"]] = table[["statistic", "scale"]] / c / c
    return RankTestResults(
        table, "Rank tests (regression interactions)", METHOD, notes=[NOTE],
        method_label=LABEL, nobs=des.m, n1=des.n1, n2=des.n2,
        full=len(rows) == min(des.n1, des.n2))
