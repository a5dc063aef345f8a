"""Which variables of each block matter: coordinate tests and support selection.

For every variable ``j`` of block a the null hypothesis is that row ``j`` of
``U`` is zero (the variable does not enter ``U^T a``), in the original
coordinates; likewise for block b and ``V``.  Under the model (independent
blocks, linear conditional mean of each block given its reduction) this
implies that row ``j`` of ``M = Sigma_a^{-1} S Sigma_b^{-1}`` is zero, ``S``
the centred cross moment, and that is what the tests test.

Three tests (``docs/theory/support.md`` has the derivations):

* **marginal**: the Wald statistic of row ``j`` of ``M`` (``n2`` degrees of
  freedom), with the influence function that accounts for the estimated
  covariance of the block;
* **conditional** on a fitted rank ``r``: the row projected on the estimated
  other-block subspace (``r`` degrees of freedom; much more power);
* **permutation**: the same statistics against the distribution obtained by
  permuting the partial residual of the variable.

Each is computed as the homoscedastic partial F test of a reverse regression
or, robust to heavy-tailed correlated blocks, with a heteroscedasticity-
robust covariance (``jdr_stats.support_robust``): the wild bootstrap of the
robust score statistic is the default of the conditional test.

Selection rules: Benjamini-Hochberg at a target false discovery rate (the
default), Benjamini-Yekutieli (any dependence), the threshold rule of
section 5.3 of the paper, and stability selection (complementary-pairs
subsampling of the sparse estimator).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy import linalg as sla
from scipy import stats

from ._data import check_fraction, normalize_seed
from ._estimate import check_rank, estimate
from ._linalg import cholesky_factor
from .inference.hypotheses import TestTable, perm_pvalue
from .sparse import check_sparsity
from .summary import build_summary
from .support_robust import fdr_qvalues, robust_coordinate_tests

__all__ = ["SupportResults", "select_support", "choose_sparsity"]

Method = Literal["wild", "chi2", "permutation", "studentized-permutation"]
Test = Literal["conditional", "marginal"]
Covariance = Literal["factored", "sandwich", "hc3"]
Rule = Literal["bh", "by", "threshold", "stability"]

#: Largest number of floats of one intermediate block in the sandwich and
#: permutation computations (chunks of rows / variables are used above it).
_CHUNK_FLOATS = 1 << 22


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class SupportResults(TestTable):
    """Coordinate tests of every variable and the selected support.

    Attributes
    ----------
    table : DataFrame
        One row per variable, indexed by ``(block, variable)``, with columns
        ``stat``, ``df``, ``pvalue``, ``qvalue`` (Benjamini-Hochberg within the
        block) and ``selected``; the threshold rule adds ``max_abs_t`` and
        stability selection adds ``frequency``.
    title, method, notes :
        As for :class:`~jdr_stats.inference.hypotheses.TestTable`.
    test : {"conditional", "marginal"}
    rule : {"bh", "threshold", "stability"}
    fdr : float
        Target false discovery rate of the Benjamini-Hochberg rule.
    rank : int or None
        Rank the conditional test (or stability selection) used.
    settings : dict
        Remaining options (covariance, n_perm, threshold, ...).
    """

    __test__ = False

    test: str = "marginal"
    rule: str = "bh"
    fdr: float = 0.1
    rank: int | None = None
    settings: dict | None = None

    def _block(self, block: str) -> pd.DataFrame:
        return self.table.xs(block, level="block")

    @property
    def selected_a(self) -> list[str]:
        """Names of the selected variables of block a."""
        t = self._block("a")
        return [str(v) for v in t.index[t["selected"].to_numpy(bool)]]

    @property
    def selected_b(self) -> list[str]:
        """Names of the selected variables of block b."""
        t = self._block("b")
        return [str(v) for v in t.index[t["selected"].to_numpy(bool)]]

    @property
    def counts(self) -> tuple[int, int]:
        """Numbers of selected variables ``(s1, s2)``."""
        return len(self.selected_a), len(self.selected_b)

    def summary(self):
        """A statsmodels ``Summary``: settings, counts, the table of tests."""
        info = {
            "Method:": self.method,
            "Test:": self.test,
            "Selection rule:": self.rule,
            "Target FDR:": self.fdr if self.rule in ("bh", "by") else "-",
            "Rank:": "-" if self.rank is None else self.rank,
            "Selected (a, b):": self.counts,
        }
        shown = self.table.reset_index(level="block")
        shown.index.name = "variable"
        shown["df"] = shown["df"].astype(int).astype(str)
        shown["selected"] = np.where(shown["selected"].to_numpy(bool), "yes", "no")
        return build_summary(self.title, info, [("variable", shown)], self.notes)


# ---------------------------------------------------------------------------
# validation helpers
# ---------------------------------------------------------------------------
def _check_choice(value: object, name: str, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {choices}; got {value!r}")
    return value


def _check_count(value: object, name: str, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an integer; got {value!r}")
    if value < low:
        raise ValueError(f"{name} must be at least {low}; got {int(value)}")
    return int(value)


# ---------------------------------------------------------------------------
# the statistics of one block
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class _Prepared:
    """Centred and transformed data shared by the tests of both blocks."""

    yc: np.ndarray  # (m,) centred response
    z_a: np.ndarray  # (m, n1) partial-residual scores Sigma_a^{-1}(a - abar)
    z_b: np.ndarray  # (m, n2)
    w_a: np.ndarray  # (m, n1) whitened (or centred) block a
    w_b: np.ndarray  # (m, n2)


def _prepare(model: Any, standardize: bool) -> _Prepared:
    mom = model.moments()
    yc = model.endog - mom.mean_y
    ac = model.exog_a - mom.mean_a
    bc = model.exog_b - mom.mean_b
    if not standardize:
        return _Prepared(yc=yc, z_a=ac, z_b=bc, w_a=ac, w_b=bc)
    out = []
    for xc, cov, arg, names in (
        (ac, mom.cov_a, "exog_a", model.exog_names_a),
        (bc, mom.cov_b, "exog_b", model.exog_names_b),
    ):
        low = cholesky_factor(cov, arg, names)
        w = sla.solve_triangular(low, xc.T, lower=True)  # L^{-1} x
        z = sla.solve_triangular(low.T, w, lower=False)  # Sigma^{-1} x
        out.append((np.ascontiguousarray(z.T), np.ascontiguousarray(w.T)))
    (z_a, w_a), (z_b, w_b) = out
    return _Prepared(yc=yc, z_a=z_a, z_b=z_b, w_a=w_a, w_b=w_b)


@dataclass(frozen=True)
class _BlockStats:
    stat: np.ndarray
    df: int
    pvalue: np.ndarray
    dist: str


def _loo_bases(k_mat: np.ndarray, g: np.ndarray, rho: np.ndarray, rank: int) -> np.ndarray:
    """Top-``rank`` eigenvectors of ``K - rho_j g_j g_j^T`` for every j.

    ``K = X^T X`` for the whitened cross moment ``X`` (focal block on the
    left): ``K - g_j g_j^T / (Sigma^{-1})_jj`` is ``X^T X`` of the fit without
    variable j, so the result is the other block's fitted basis with the
    tested variable left out.  Shape (nf, no, rank).
    """
    nf, no = g.shape
    out = np.empty((nf, no, rank))
    step = max(1, _CHUNK_FLOATS // (no * no))
    for j0 in range(0, nf, step):
        j1 = min(nf, j0 + step)
        gj = g[j0:j1]
        stack = k_mat[None, :, :] - rho[j0:j1, None, None] * gj[:, :, None] * gj[:, None, :]
        _, vecs = np.linalg.eigh(stack)
        out[j0:j1] = vecs[:, :, ::-1][:, :, :rank]
    return out


def _sandwich_wald(z: np.ndarray, h: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``m t_j^T Omega_j^{-1} t_j`` with ``Omega_j = mean_i z_ij^2 h_i h_i^T``.

    Accumulated over chunks of rows and of variables, so the largest
    intermediate has about ``_CHUNK_FLOATS`` entries whatever m, nf and d.
    """
    m, nf = z.shape
    d = h.shape[1]
    stat = np.empty(nf)
    jstep = max(1, min(nf, _CHUNK_FLOATS // max(d * d, 1)))
    rstep = max(1, _CHUNK_FLOATS // max(d * d, nf, 1))
    for j0 in range(0, nf, jstep):
        j1 = min(nf, j0 + jstep)
        omega = np.zeros((j1 - j0, d * d))
        for r0 in range(0, m, rstep):
            r1 = min(m, r0 + rstep)
            hh = (h[r0:r1, :, None] * h[r0:r1, None, :]).reshape(r1 - r0, d * d)
            omega += (z[r0:r1, j0:j1] ** 2).T @ hh
        omega = omega.reshape(j1 - j0, d, d) / m
        sol = np.linalg.solve(omega, t[j0:j1, :, None])[..., 0]
        stat[j0:j1] = m * np.einsum("jd,jd->j", t[j0:j1], sol)
    return stat


def _block_tests(
    yc: np.ndarray,
    z: np.ndarray,
    w_focal: np.ndarray,
    w_other: np.ndarray,
    *,
    rank: int | None,
    conditional: bool,
    standardize: bool,
    covariance: str,
    method: str,
    n_perm: int,
    rng: np.random.Generator | None,
) -> _BlockStats:
    """Tests of every variable of one (focal) block.

    ``z``: scores ``Sigma_f^{-1}(f - fbar)`` of the focal block (its centred
    values when not standardized); ``w_focal``, ``w_other``: the blocks
    whitened (or centred).  The statistic of variable j is the partial F (or
    Wald) test of ``W_j`` in the reverse regression of ``f_j`` on the rest of
    its block and ``W_j = (y - ybar) w_other V_j`` (``V_j``: the other
    block's fitted basis without variable j; the identity for the marginal
    test).  See ``docs/theory/support.md``.
    """
    m, nf = z.shape
    wy = yc[:, None] * w_other  # (m, no): W
    g = z.T @ wy / m  # rows g_j, (nf, no)
    zeta = np.einsum("ij,ij->j", z, z) / m  # (Sigma^{-1})_jj (or var f_j)
    cbar = wy.mean(axis=0)
    # C = W^T (I - P) W, P the projection on (1, focal block): shared by all j
    c_full = wy.T @ wy - m * np.outer(cbar, cbar)
    p0 = 1
    xhat = None
    if standardize:
        xhat = w_focal.T @ wy / m  # whitened X_lin, focal block on the left
        c_full -= m * xhat.T @ xhat
        p0 = nf
    if conditional:
        k_mat = xhat.T @ xhat if standardize else g.T @ g
        rho = 1.0 / zeta if standardize else np.ones(nf)
        bases = _loo_bases(k_mat, g, rho, rank)  # (nf, no, r)
        t = np.einsum("jk,jkd->jd", g, bases)
        c_j = np.einsum("jkd,kl,jle->jde", bases, c_full, bases)
    else:
        bases = None
        t = g
        c_j = np.broadcast_to(c_full, (nf,) + c_full.shape)
    d = t.shape[1]
    df2 = m - p0 - d
    if df2 < 1:
        raise ValueError(
            f"too few observations for the {'conditional' if conditional else 'marginal'} "
            f"test: m={m} must exceed {p0 + d} (block width plus degrees of freedom)"
        )
    if method == "chi2" and covariance == "sandwich":
        # h_i = W_i - mean(W) - X_r^T f'_i, X_r the rank-r truncation of the
        # whitened cross moment (no fit term without a rank: conservative).
        # The full X would remove n_f / m of noise variance per direction that
        # a chi-square reference does not account for (anti-conservative).
        h = wy - cbar
        if rank is not None:
            k_full = xhat.T @ xhat if standardize else g.T @ g
            _, vecs = np.linalg.eigh(k_full)
            v_r = vecs[:, ::-1][:, :rank]
            if standardize:
                h -= (w_focal @ (xhat @ v_r)) @ v_r.T
            if conditional:
                # full-data basis for the covariance (consistent); LOO basis for t
                h = h @ v_r
        stat = _sandwich_wald(z, h, t)
        return _BlockStats(stat=stat, df=d, pvalue=stats.chi2.sf(stat, d), dist=f"chi2({d})")
    # Homoscedastic (factored) form: the partial F test of W_j in the reverse
    # regression of f_j on (1, rest of the block, W_j); exact for Gaussian
    # blocks.  With r_j = z_j / zeta_j (the residual of f_j on the null model,
    # RSS_j = m / zeta_j) and c_j = W_j^T r_j = m t_j / zeta_j:
    #   num_j = c_j^T [W_j^T (I - P_{-j}) W_j]^{-1} c_j, and
    #   W_j^T (I - P_{-j}) W_j = C_j + c_j c_j^T / RSS_j  (standardized).
    try:
        chol = np.linalg.cholesky(c_j)  # (nf, d, d)
    except np.linalg.LinAlgError:
        raise ValueError(
            "the residualised products (y - ybar) x (other block) are collinear, so "
            "the coordinate tests are undefined; use fewer variables, more "
            "observations or a conditional test (rank=...)"
        ) from None
    u_obs = np.linalg.solve(chol, (m * t / zeta[:, None])[:, :, None])[..., 0]
    q_obs = np.einsum("jd,jd->j", u_obs, u_obs)
    rss = m / zeta
    extra = rss + q_obs if standardize else None

    def f_stat(u: np.ndarray, rss_: np.ndarray) -> np.ndarray:
        q = np.einsum("jd,jd->j", u, u)
        if standardize:
            q = q - np.einsum("jd,jd->j", u, u_obs) ** 2 / extra
        return (q / d) / (np.maximum(rss_ - q, 1e-300) / df2)

    fstat = f_stat(u_obs, rss)
    stat = d * fstat
    if method == "chi2":
        return _BlockStats(
            stat=stat, df=d, pvalue=stats.f.sf(fstat, d, df2), dist=f"F({d}, {df2})"
        )
    # Permutation of the rows of z (the partial residuals), one permutation
    # shared by all variables of the block (Freedman-Lane): the permuted
    # residual is projected off the null model of variable j, whose
    # projection is P_{-j} = P - r_j r_j^T / RSS_j, and the F statistic is
    # recomputed (it is studentised by the permuted residual's own RSS).
    h_res = wy - cbar
    if standardize:
        h_res -= w_focal @ xhat
    null = np.empty((n_perm, nf))
    for b in range(n_perm):
        zp = z[rng.permutation(m)]
        cross = np.einsum("ij,ij->j", zp, z)
        gs = zp.T @ h_res / m
        rss_p = np.einsum("ij,ij->j", zp, zp)
        if standardize:
            gs += (cross / (m * zeta))[:, None] * g
            proj = w_focal.T @ zp / m
            rss_p = rss_p - m * np.einsum("kj,kj->j", proj, proj) + cross**2 / (m * zeta)
        ts = gs if bases is None else np.einsum("jk,jkd->jd", gs, bases)
        u_p = np.linalg.solve(chol, (m * ts)[:, :, None])[..., 0]
        null[b] = d * f_stat(u_p, rss_p)
    return _BlockStats(
        stat=stat, df=d, pvalue=perm_pvalue(stat, null), dist=f"permutation, B={n_perm}"
    )


# ---------------------------------------------------------------------------
# selection rules
# ---------------------------------------------------------------------------
def _threshold_scores(prep: _Prepared) -> np.ndarray:
    """Entrywise t statistics ``sqrt(m) M_jk / se_jk`` (sandwich se)."""
    m = prep.yc.shape[0]
    mhat = prep.z_a.T @ (prep.yc[:, None] * prep.z_b) / m
    var = (prep.z_a**2).T @ ((prep.yc**2)[:, None] * prep.z_b**2) / m
    return np.sqrt(m) * mhat / np.sqrt(var)


def _stability(
    model: Any,
    rank: int,
    sparsity: tuple[int, int],
    *,
    standardize: bool,
    n_subsamples: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Selection frequencies of the sparse estimator over complementary halves."""
    m = model.nobs
    n1, n2 = model.exog_a.shape[1], model.exog_b.shape[1]
    half = m // 2
    need = max(n1, n2) + 2 if standardize else 3
    if half < need:
        raise ValueError(
            f"stability selection fits on halves of the data: {half} rows, need at "
            f"least {need} to whiten the blocks (use rule='bh')"
        )
    freq_a = np.zeros(n1)
    freq_b = np.zeros(n2)
    n_pairs = (n_subsamples + 1) // 2
    done = 0
    for _ in range(n_pairs):
        perm = rng.permutation(m)
        for part in (perm[:half], perm[half : 2 * half]):
            if done == n_subsamples:
                break
            w = np.zeros(m)
            w[part] = 1.0
            est = estimate(
                model.moments(weights=w), rank, standardize=standardize,
                sparsity=sparsity, names_a=model.exog_names_a,
                names_b=model.exog_names_b,
            )
            freq_a[est.rows] += 1
            freq_b[est.cols] += 1
            done += 1
    return freq_a / n_subsamples, freq_b / n_subsamples


# ---------------------------------------------------------------------------
# public functions
# ---------------------------------------------------------------------------
def select_support(
    model: Any,
    *,
    rank: int | None = None,
    method: Method | None = None,
    fdr: float = 0.1,
    seed: int | np.random.Generator | None = None,
    test: Test | None = None,
    covariance: Covariance | None = None,
    standardize: bool = True,
    n_perm: int = 999,
    n_boot: int = 999,
    rule: Rule = "bh",
    threshold: float | None = None,
    n_subsamples: int = 100,
    stability_threshold: float = 0.6,
    sparsity: tuple[int, int] | None = None,
) -> SupportResults:
    """Coordinate tests for every variable of both blocks, and the support.

    Parameters
    ----------
    model : JointDimReduction
    rank : int, optional
        Rank ``r`` of the fit.  When given, the conditional test (``r``
        degrees of freedom) is the default.
    method : {"wild", "chi2", "permutation", "studentized-permutation"}, optional
        ``"wild"``: wild (Rademacher) bootstrap of the heteroscedasticity-
        robust score statistic of the reverse regression, ``n_boot``
        resamples: valid for heavy-tailed blocks with correlated variables
        and heteroscedastic noise (the measured FDR is on the theory page).
        ``"chi2"``: analytic reference (exact F for Gaussian blocks with the
        factored covariance; see ``covariance``).  ``"permutation"``:
        permutation of the variable's partial residual with the F
        statistic (exchangeable residuals).  ``"studentized-permutation"``:
        permutation studentized by the robust covariance (DiCiccio and
        Romano 2017), ``n_perm`` permutations.  Default: ``"wild"`` for the
        conditional test; ``"chi2"`` for the marginal test (the wild
        bootstrap costs ``O(B m n1 n2)`` there) and whenever ``covariance``
        is given.
    fdr : float
        Target false discovery rate of the Benjamini-Hochberg (or
        Benjamini-Yekutieli) rule, applied within each block.
    seed : int, Generator or None
        For the resampling tests and stability selection.
    test : {"conditional", "marginal"}, optional
        Default: ``"conditional"`` when ``rank`` is given, else ``"marginal"``.
    covariance : {"factored", "sandwich", "hc3"}, optional
        Covariance of the row's influence function for ``method="chi2"``
        (default ``"factored"``).  ``"factored"``
        (``mean(z_j^2) * mean(h h^T)``) is exact when the variable's partial
        residual is independent of the rest (Gaussian blocks, or independent
        variables); ``"sandwich"`` (``mean(z_j^2 h h^T)``, chi-square) and
        ``"hc3"`` (robust Wald test of the reverse regression with the HC3
        leverage correction, F reference) are robust to dependence between
        them asymptotically, but anti-conservative in the far tail for
        heavy-tailed blocks at small ``m`` (see the theory page).
    standardize : bool
        Test rows of ``Sigma_a^{-1} S Sigma_b^{-1}`` (``True``, the support of
        ``U`` in the original coordinates) or of ``S`` itself (``False``, as
        the unstandardized fit's sparse step).
    n_perm : int
        Permutations for ``method="permutation"`` and
        ``"studentized-permutation"``.
    n_boot : int
        Wild bootstrap resamples for ``method="wild"``.
    rule : {"bh", "by", "threshold", "stability"}
        How the ``selected`` flag is set: Benjamini-Hochberg q-values at most
        ``fdr`` (``statsmodels`` ``multipletests``, ``"fdr_bh"``);
        Benjamini-Yekutieli q-values (``"fdr_by"``, valid under any
        dependence between the tests, more conservative); the threshold rule of section 5.3 (some entry of the row of
        ``M`` exceeds ``threshold`` standard errors); or stability selection
        (selection frequency of the sparse estimator over ``n_subsamples``
        complementary half-samples at least ``stability_threshold``).
    threshold : float, optional
        Threshold of the ``"threshold"`` rule on the entrywise t statistics;
        default the universal threshold ``sqrt(2 log(n1 n2))``.
    n_subsamples : int
        Half-samples for stability selection (drawn as complementary pairs).
    stability_threshold : float
        Selection frequency needed by stability selection, in (0.5, 1).
    sparsity : (s1, s2), optional
        Sparsity of the base sparse fit of stability selection; default the
        Benjamini-Hochberg counts (at least ``rank``).

    Returns
    -------
    SupportResults

    Notes
    -----
    Let ``z_i = Sigma_a^{-1}(a_i - abar)`` (partial residuals, scaled),
    ``b'_i = L_b^{-1}(b_i - bbar)`` and ``g_j = (1/m) sum_i z_ij (y_i - ybar) b'_i``,
    row ``j`` of ``Sigma_a^{-1} S L_b^{-T}``: zero under ``H0_j`` (the rows
    of the whitened ``X_lin`` are not, when the variables are correlated).
    Under ``H0_j`` its influence function is ``z_ij h_i`` with
    ``h_i = (y_i - ybar) b'_i - X^T a'_i - E[y b']`` (``X^T a'_i``: the effect
    of estimating ``Sigma_a``).  With ``covariance="factored"`` the statistic
    is the partial F test of ``W`` in the reverse regression of ``a_j`` on
    ``(1, a_{-j}, W)``, ``W = (y - ybar) b'`` (marginal, ``d = n2``) or
    ``(y - ybar) b' Vhat_{(-j)}`` (conditional, ``d = r``; ``Vhat_{(-j)}``:
    the b-basis of the fit without variable j), exact ``F(d, m - n1 - d)``
    for Gaussian blocks; ``stat`` is ``d F`` (chi-square scale).  With
    ``covariance="sandwich"``, ``stat = m t_j^T Omega_j^{-1} t_j`` against
    ``chi2(d)``, ``Omega_j = mean_i z_ij^2 h_i h_i^T``.
    The robust methods
    (``"wild"``, ``"studentized-permutation"``, ``covariance="hc3"``) use
    :func:`jdr_stats.support_robust.robust_coordinate_tests`.  A NaN p-value
    (an undefined test) gets a NaN q-value and is never selected; the other
    q-values are adjusted among the defined tests.  Block b is treated
    symmetrically.  Derivations: ``docs/theory/support.md``.

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(3000, 12, 10, 2, s1=3, s2=3, seed=1)
    >>> model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    >>> sup = model.select_support(rank=2, fdr=0.1, seed=0)
    >>> sup.test, sup.counts[0] >= 2, sup.method
    ('conditional', True, 'conditional robust score test, wild bootstrap, B=999')
    >>> truth = [f"a{j}" for j in range(12) if abs(sim.U[j]).sum() > 0]
    >>> set(truth) <= set(sup.selected_a)
    True
    """
    n1, n2 = model.exog_a.shape[1], model.exog_b.shape[1]
    if covariance is not None:
        covariance = _check_choice(covariance, "covariance", ("factored", "sandwich", "hc3"))
    rule = _check_choice(rule, "rule", ("bh", "by", "threshold", "stability"))
    fdr = check_fraction(fdr, "fdr")
    if not isinstance(standardize, (bool, np.bool_)):
        raise TypeError(f"standardize must be True or False; got {standardize!r}")
    standardize = bool(standardize)
    if rank is not None:
        rank = check_rank(rank, n1, n2)
    if test is None:
        test = "marginal" if rank is None else "conditional"
    test = _check_choice(test, "test", ("conditional", "marginal"))
    if test == "conditional" and rank is None:
        raise ValueError('test="conditional" needs the rank of the fit; got rank=None')
    if method is None:
        method = "wild" if test == "conditional" and covariance is None else "chi2"
    method = _check_choice(
        method, "method", ("wild", "chi2", "permutation", "studentized-permutation")
    )
    if covariance is None:
        covariance = "factored"
    elif method != "chi2":
        raise ValueError(f'covariance applies to method="chi2" only; got method={method!r}')
    if rule == "stability" and rank is None:
        raise ValueError('rule="stability" fits the sparse estimator and needs rank; got rank=None')
    if method in ("permutation", "studentized-permutation"):
        n_perm = _check_count(n_perm, "n_perm", 1)
    if method == "wild":
        n_boot = _check_count(n_boot, "n_boot", 1)
    if rule == "threshold" and threshold is not None:
        numeric = isinstance(threshold, (int, float, np.floating))
        if isinstance(threshold, bool) or not numeric or not threshold > 0:
            raise ValueError(f"threshold must be a positive number; got {threshold!r}")
    if rule == "stability":
        n_subsamples = _check_count(n_subsamples, "n_subsamples", 2)
        stability_threshold = check_fraction(stability_threshold, "stability_threshold", low=0.5)
        if sparsity is not None:
            sparsity = check_sparsity(sparsity, n1, n2, rank=rank)
    if model.weights is not None:
        raise ValueError(
            "select_support does not handle case weights yet; the model has weights"
        )
    if standardize:
        model._check_rows_for_whitening()
    rng = normalize_seed(seed)

    prep = _prepare(model, standardize)
    common = dict(
        rank=rank, conditional=test == "conditional", standardize=standardize,
        covariance=covariance, method=method, n_perm=n_perm, rng=rng,
    )
    robust = method in ("wild", "studentized-permutation") or covariance == "hc3"
    if robust:
        kw = dict(
            rank=rank if test == "conditional" else None, standardize=standardize,
            method="hc3" if method == "chi2" else method,
            n_resample=n_boot if method == "wild" else n_perm, seed=rng,
        )
        res_a = robust_coordinate_tests(prep.yc, prep.z_a, prep.w_a, prep.w_b, **kw)
        res_b = robust_coordinate_tests(prep.yc, prep.z_b, prep.w_b, prep.w_a, **kw)
    else:
        res_a = _block_tests(prep.yc, prep.z_a, prep.w_a, prep.w_b, **common)
        res_b = _block_tests(prep.yc, prep.z_b, prep.w_b, prep.w_a, **common)

    frames = []
    extra_a: dict[str, np.ndarray] = {}
    extra_b: dict[str, np.ndarray] = {}
    fdr_rule = "by" if rule == "by" else "bh"
    q_a, q_b = fdr_qvalues(res_a.pvalue, fdr_rule), fdr_qvalues(res_b.pvalue, fdr_rule)
    sel_a, sel_b = q_a <= fdr, q_b <= fdr  # NaN q-values are never selected
    settings: dict[str, Any] = {"covariance": covariance, "standardize": standardize}
    if method in ("permutation", "studentized-permutation"):
        settings["n_perm"] = n_perm
    if method == "wild":
        settings["n_boot"] = n_boot
    if rule == "threshold":
        tau = float(np.sqrt(2 * np.log(n1 * n2))) if threshold is None else float(threshold)
        t = np.abs(_threshold_scores(prep))
        extra_a["max_abs_t"] = t.max(axis=1)
        extra_b["max_abs_t"] = t.max(axis=0)
        sel_a, sel_b = extra_a["max_abs_t"] > tau, extra_b["max_abs_t"] > tau
        settings["threshold"] = tau
    elif rule == "stability":
        if sparsity is None:
            sparsity = (
                int(np.clip(sel_a.sum(), rank, n1)), int(np.clip(sel_b.sum(), rank, n2))
            )
        fa, fb = _stability(
            model, rank, sparsity, standardize=standardize,
            n_subsamples=n_subsamples, rng=rng,
        )
        extra_a["frequency"], extra_b["frequency"] = fa, fb
        sel_a, sel_b = fa >= stability_threshold, fb >= stability_threshold
        settings.update(
            n_subsamples=n_subsamples, stability_threshold=stability_threshold,
            sparsity=sparsity,
            pfer_bound=tuple(
                s**2 / ((2 * stability_threshold - 1) * n)
                for s, n in zip(sparsity, (n1, n2))
            ),
        )
    for block, names, res, q, sel, extra in (
        ("a", model.exog_names_a, res_a, q_a, sel_a, extra_a),
        ("b", model.exog_names_b, res_b, q_b, sel_b, extra_b),
    ):
        cols = {
            "stat": res.stat,
            "df": np.full(res.stat.shape, res.df),
            "pvalue": res.pvalue,
            "qvalue": q,
            **extra,
            "selected": np.asarray(sel, dtype=bool),
        }
        idx = pd.MultiIndex.from_arrays(
            [[block] * len(names), list(names)], names=["block", "variable"]
        )
        frames.append(pd.DataFrame(cols, index=idx))
    table = pd.concat(frames)
    return SupportResults(
        table=table,
        title="Support selection: coordinate tests",
        method=_method_label(method, test, covariance, n_perm, n_boot),
        notes=_notes(test, method, covariance, rule, standardize, fdr, rank, settings),
        test=test,
        rule=rule,
        fdr=fdr,
        rank=rank,
        settings=settings,
    )


def _method_label(method: str, test: str, covariance: str, n_perm: int, n_boot: int) -> str:
    if method == "wild":
        return f"{test} robust score test, wild bootstrap, B={n_boot}"
    if method == "studentized-permutation":
        return f"{test} robust score test, studentized permutation, B={n_perm}"
    if method == "chi2" and covariance == "factored":
        return f"{test} partial F test (reverse regression)"
    if method == "chi2" and covariance == "hc3":
        return f"{test} robust (HC3) Wald test of the reverse regression, F"
    if method == "chi2":
        return f"{test} Wald test, sandwich covariance, chi2"
    return f"{test} partial F test, permutation of partial residuals, B={n_perm}"


def _notes(
    test: str, method: str, covariance: str, rule: str, standardize: bool,
    fdr: float, rank: int | None, settings: dict,
) -> list[str]:
    coords = "Sigma_a^{-1} S Sigma_b^{-1}" if standardize else "S (centred cross moment)"
    notes = [
        "H0 (per variable): the variable is not in its block's subspace (its row of "
        f"U, resp. V, is zero); tested as: its row (column) of {coords} is zero.",
    ]
    if test == "conditional":
        notes.append(
            f"Conditional test: the row projected on the other block's rank-{rank} "
            "subspace fitted without the variable; df = rank."
        )
    else:
        notes.append("Marginal test: the whole row; df = width of the other block.")
    if method == "chi2" and covariance == "factored":
        notes.append(
            "stat = df x F; p-value from F(df, m - "
            + ("width of the block" if standardize else "1")
            + " - df), exact for Gaussian blocks (chi2(df) asymptotically)."
        )
    elif method == "chi2" and covariance == "hc3":
        notes.append(
            "stat: robust (HC3) Wald statistic of the reverse regression; p-value "
            "from F(df, residual df) of stat / df."
        )
    elif method == "chi2":
        notes.append("stat: Wald statistic with the sandwich covariance; p-value from chi2(df).")
    if method in ("wild", "studentized-permutation"):
        how = (
            f"wild bootstrap (Rademacher signs on the restricted residuals), B={settings['n_boot']}"
            if method == "wild"
            else f"studentized permutation of the restricted residuals, B={settings['n_perm']}"
        )
        notes.append(
            "stat: heteroscedasticity-robust score statistic of the reverse regression; "
            f"p-value (1 + #{{T* >= T}}) / (B + 1) from the {how}."
        )
        notes.append(
            "Assumptions: independent blocks; linear conditional mean of each block "
            "given its reduction; i.i.d. rows with finite fourth moments; no "
            "homoscedasticity, Gaussianity or exchangeability needed (asymptotically "
            "valid; measured FDR on heavy-tailed correlated blocks in the docs)."
        )
    elif method == "chi2":
        if covariance == "factored":
            notes.append(
                "Assumptions: independent blocks; linear conditional mean of each "
                "block given its reduction; the variable's partial residual "
                "independent of the reductions, the other block and y (Gaussian "
                "blocks or independent variables); exact F for Gaussian blocks, "
                "asymptotic otherwise."
            )
        else:
            notes.append(
                "Assumptions: independent blocks; linear conditional mean of each "
                "block given its reduction; finite fourth moments; m large "
                "compared with the df (sandwich covariance)."
            )
    elif method == "permutation":
        notes.append(
            "Permutation p-values (1 + #{T* >= T}) / (B + 1): exact when the "
            "variable's partial residual is exchangeable and independent of the "
            "rest under H0 (no moment conditions); one permutation is shared by "
            "all variables of a block."
        )
    if rule == "bh":
        notes.append(f"Selected: Benjamini-Hochberg q-value <= {fdr}, within each block.")
    elif rule == "by":
        notes.append(
            f"Selected: Benjamini-Yekutieli q-value <= {fdr}, within each block "
            "(valid under any dependence between the tests)."
        )
    elif rule == "threshold":
        notes.append(
            "Selected (threshold rule, section 5.3): some entry of the variable's row "
            f"exceeds {settings['threshold']:.3g} sandwich standard errors; no error "
            "rate guarantee."
        )
    else:
        notes.append(
            f"Selected (stability selection): selected by the sparse fit with "
            f"sparsity {settings['sparsity']} in at least "
            f"{settings['stability_threshold']:g} of {settings['n_subsamples']} "
            "complementary half-samples; Meinshausen-Buhlmann bound on the expected "
            f"number of false selections (a, b): "
            f"({settings['pfer_bound'][0]:.3g}, {settings['pfer_bound'][1]:.3g})."
        )
    return notes


def choose_sparsity(
    model: Any,
    *,
    rank: int,
    fdr: float = 0.1,
    seed: int | np.random.Generator | None = None,
) -> tuple[tuple[int, int], SupportResults]:
    """Sparsity levels ``(s1, s2)`` for ``fit(sparsity="auto")``.

    The counts of variables selected by the conditional coordinate tests
    (the default of :func:`select_support`: the wild bootstrap of the robust
    score statistic) at false discovery rate ``fdr`` (Benjamini-Hochberg
    within each block), raised to at least ``rank`` (and at most the
    block's width).

    Returns
    -------
    (s1, s2), SupportResults
    """
    res = select_support(model, rank=rank, fdr=fdr, seed=seed)
    n1, n2 = model.exog_a.shape[1], model.exog_b.shape[1]
    s1, s2 = res.counts
    return (int(np.clip(s1, rank, n1)), int(np.clip(s2, rank, n2))), res
