"""The coordinate statistics of one block (see ``docs/theory/support.md``).

For variable ``j`` of the focal block: the partial F (or Wald) statistic of
row ``j`` of ``Sigma_f^{-1} S Sigma_o^{-1}`` (marginal), projected on the
other block's fitted basis without the variable (conditional), with the
factored or sandwich covariance, or against the permutation distribution of
the variable's partial residual; and the entrywise t statistics of the
threshold rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import config
from ..core._linalg import BlockMoments, Whitening, block_moments, block_whitenings
from ..core.whitening import DesignWhitening
from ..inference.hypotheses import perm_pvalue
from ..io._data import RowsData
from ..runtime._lazy import stats
from ._loo import align_bases, loo_bases, top_basis

__all__ = ["CoordinateTests", "Inputs", "Prepared", "block_tests", "inputs", "prepare",
           "prepare_from", "products", "threshold_scores"]



@dataclass(frozen=True)
class Prepared:
    """Centred and transformed data shared by the tests of both blocks."""

    yc: np.ndarray  # (m,) centred response, (m, q) for a response of q columns
    z_a: np.ndarray  # (m, n1) partial-residual scores Sigma_a^{-1}(a - abar)
    z_b: np.ndarray  # (m, n2)
    w_a: np.ndarray  # (m, n1) whitened (or centred) block a
    w_b: np.ndarray  # (m, n2)
    #: covariate columns the rows were residualised on (degrees of freedom lost)
    n_lost: int = 0


@dataclass(frozen=True)
class Inputs:
    """The rows, their centring and whitenings, before any m x n array is formed."""

    yc: np.ndarray  # (m,) or (m, q), centred response
    a: np.ndarray  # (m, n1) raw rows
    b: np.ndarray  # (m, n2)
    means: tuple[np.ndarray, np.ndarray]  # block means used for centring
    whitening: DesignWhitening[Whitening] | None  # None: not standardized
    n_lost: int


def inputs(
    data: RowsData,
    standardize: bool,
    mom: BlockMoments | None = None,
    whitening: DesignWhitening[Whitening] | None = None,
) -> Inputs:
    """Centred response, block means and whitenings of the coordinate tests."""
    # the selection is invariant to the response's unit: a response of
    # extreme units is brought near unit size (a power of two: exact)
    y, a, b = data.rows("support selection", unit=True)
    c = data.response_unit
    mean_y = None if mom is None else mom.mean_y * c
    if mom is None or (standardize and not mom.has_covariances):
        mom = block_moments(y if y.ndim == 1 else np.ascontiguousarray(y[:, 0]), a, b)
        whitening = None
        mean_y = mom.mean_y
    # q > 1: the whitened response matrix Yw, centred column by column
    yc = y - mean_y if y.ndim == 1 else y - y.mean(axis=0)
    n_lost = int(getattr(getattr(data, "adjustment", None), "p", 0) or 0)
    if standardize and whitening is None:
        whitening = block_whitenings(mom, data.names["exog_a"], data.names["exog_b"])
    return Inputs(yc=yc, a=a, b=b, means=(mom.mean_a, mom.mean_b),
                  whitening=whitening if standardize else None, n_lost=n_lost)


def prepare(
    data: RowsData,
    standardize: bool,
    mom: BlockMoments | None = None,
    whitening: DesignWhitening[Whitening] | None = None,
) -> Prepared:
    """Centred response, scores and whitened (or centred) blocks."""
    return prepare_from(inputs(data, standardize, mom, whitening))


def prepare_from(inp: Inputs) -> Prepared:
    """The arrays of :func:`prepare` from its :func:`inputs`."""
    ac = inp.a - inp.means[0]
    bc = inp.b - inp.means[1]
    if inp.whitening is None:
        return Prepared(yc=inp.yc, z_a=ac, z_b=bc, w_a=ac, w_b=bc, n_lost=inp.n_lost)
    out = []
    for xc, wh in zip((ac, bc), inp.whitening, strict=True):
        w = wh.solve(xc.T)  # L^{-1} x
        z = wh.solve_t(w)  # Sigma^{-1} x
        out.append((np.ascontiguousarray(z.T), np.ascontiguousarray(w.T)))
    (z_a, w_a), (z_b, w_b) = out
    return Prepared(yc=inp.yc, z_a=z_a, z_b=z_b, w_a=w_a, w_b=w_b, n_lost=inp.n_lost)


def products(yc: np.ndarray, w_other: np.ndarray) -> np.ndarray:
    """The products ``W = (y - ybar) w_other`` of the reverse regression.

    One response: ``(m, no)``, ``W_i = (y_i - ybar) w_i``.  A response of
    ``q`` columns (``yc``: m x q, the centred whitened ``Yw``): ``(m, q no)``,
    ``W_i = (Yw_i1 w_i, ..., Yw_iq w_i)``, columns in the order of the
    mode-1 unfolding ``[X_1 ... X_q]`` (block a focal; the mode-2 unfolding
    for block b), so that ``z_j^T W / m`` is row ``j`` of the unfolding of
    ``Sigma_f^{-1} S_c L_o^{-T}``; see ``docs/theory/support.md``.
    """
    if yc.ndim == 1:
        return yc[:, None] * w_other
    return (yc[:, :, None] * w_other[:, None, :]).reshape(yc.shape[0], -1)


@dataclass(frozen=True)
class CoordinateTests:
    """Statistics of every variable of one block.

    Attributes
    ----------
    stat : ndarray (nf,)
        The statistic on the chi-square scale (``d F`` for an F reference).
    df : int
        Degrees of freedom ``d`` (the rank, or the other block's width).
    pvalue : ndarray (nf,)
    dist : str
        Reference distribution.
    """

    stat: np.ndarray
    df: int
    pvalue: np.ndarray
    dist: str

    @property
    def statistic(self) -> np.ndarray:
        """The statistic (the same array as ``stat``)."""
        return self.stat


#: Largest width d of the tested rows for which the sandwich covariances of
#: all variables are accumulated together (outer products of the rows, m x d^2);
#: above it, one symmetric product per variable is cheaper.
_SANDWICH_BATCH_MAX_D = 16


def _sandwich_wald(z: np.ndarray, h: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``m t_j^T Omega_j^{-1} t_j`` with ``Omega_j = mean_i z_ij^2 h_i h_i^T``.

    Accumulated over chunks of rows and of variables, so the largest
    intermediate has about ``config.CHUNK_FLOATS`` entries whatever m, nf and d.
    """
    m, nf = z.shape
    d = h.shape[1]
    stat = np.empty(nf)
    if d > _SANDWICH_BATCH_MAX_D:
        # wide rows (the marginal test): one symmetric product per variable
        # (X^T X of X = z_j h, which BLAS forms as a rank-m update, half the
        # flops of the batched form below, without its m x d^2 outer products)
        for j in range(nf):
            zh = h * z[:, j, None]
            omega_j = zh.T @ zh / m
            stat[j] = m * float(t[j] @ np.linalg.solve(omega_j, t[j]))
        return stat
    jstep = max(1, min(nf, config.CHUNK_FLOATS // max(d * d, 1)))
    rstep = max(1, config.CHUNK_FLOATS // max(d * d, nf, 1))
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


@dataclass(frozen=True)
class _Design:
    """What the tests of one block share: the products ``W``, the rows ``g_j``,
    the statistic's numerator ``t_j`` and its covariance factor ``C_j``."""

    wy: np.ndarray  # (m, no) W = (y - ybar) w_other
    g: np.ndarray  # (nf, no) rows g_j
    zeta: np.ndarray  # (nf,) (Sigma^{-1})_jj (or var f_j)
    cbar: np.ndarray  # (no,) mean of W
    xhat: np.ndarray | None  # (nf, no) whitened X_lin, focal block on the left
    bases: np.ndarray | None  # (nf, no, r) leave-one-out bases (conditional)
    t: np.ndarray  # (nf, d)
    c_j: np.ndarray  # (nf, d, d) W_j^T (I - P) W_j
    df2: int


def _design(yc, z, w_focal, w_other, rank, conditional, standardize, n_lost=0) -> _Design:
    """The shared pieces of the tests of one block (see :func:`block_tests`)."""
    m, nf = z.shape
    wy = products(yc, w_other)  # (m, no) (or (m, q no)): W
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
        k_mat = xhat.T @ xhat if xhat is not None else g.T @ g
        rho = 1.0 / zeta if standardize else np.ones(nf)
        bases = loo_bases(k_mat, g, rho, rank)
        t = np.einsum("jk,jkd->jd", g, bases)
        c_j = np.einsum("jkd,kl,jle->jde", bases, c_full, bases)
    else:
        bases = None
        t = g
        c_j = np.broadcast_to(c_full, (nf, *c_full.shape))
    d = t.shape[1]
    df2 = m - p0 - d - n_lost  # n_lost: covariate columns partialled out of the rows
    if df2 < 1:
        raise ValueError(
            f"too few observations for the {'conditional' if conditional else 'marginal'} "
            f"test: m={m} must exceed {p0 + d} (block width plus degrees of freedom)"
        )
    return _Design(wy=wy, g=g, zeta=zeta, cbar=cbar, xhat=xhat, bases=bases, t=t,
                   c_j=c_j, df2=df2)


def _sandwich_tests(des: _Design, z, w_focal, rank, conditional, standardize) -> CoordinateTests:
    """Wald statistics with the sandwich covariance, chi-square reference."""
    # h_i = W_i - mean(W) - X_r^T f'_i, X_r the rank-r truncation of the
    # whitened cross moment (no fit term without a rank: conservative).
    # The full X would remove n_f / m of noise variance per direction that
    # a chi-square reference does not account for (anti-conservative).
    h = des.wy - des.cbar
    t = des.t
    if rank is not None:
        xhat = des.xhat
        k_full = xhat.T @ xhat if xhat is not None else des.g.T @ des.g
        v_r = top_basis(k_full, rank)
        if xhat is not None:
            h -= (w_focal @ (xhat @ v_r)) @ v_r.T
        if conditional:
            # covariance in the full-data basis (consistent); t in the LOO basis
            # turned to the full one (theory 12.1), so that the statistic
            # depends on the two bases' spans only
            assert des.bases is not None
            h = h @ v_r
            t = np.einsum("jk,jkd->jd", des.g, align_bases(des.bases, v_r))
    stat = _sandwich_wald(z, h, t)
    d = t.shape[1]
    return CoordinateTests(stat=stat, df=d, pvalue=stats.chi2.sf(stat, d), dist=f"chi2({d})")


class _FStat:
    """The partial F statistic of ``W_j`` in the reverse regression of ``f_j``
    on ``(1, rest of the block, W_j)``, exact for Gaussian blocks.

    With ``r_j = z_j / zeta_j`` (the residual of ``f_j`` on the null model,
    ``RSS_j = m / zeta_j``) and ``c_j = W_j^T r_j = m t_j / zeta_j``:
    ``num_j = c_j^T [W_j^T (I - P_{-j}) W_j]^{-1} c_j``, and
    ``W_j^T (I - P_{-j}) W_j = C_j + c_j c_j^T / RSS_j`` (standardized).
    """

    def __init__(self, des: _Design, m: int, standardize: bool) -> None:
        try:
            self.chol = np.linalg.cholesky(des.c_j)  # (nf, d, d)
        except np.linalg.LinAlgError:
            raise ValueError(
                "the residualised products (y - ybar) x (other block) are collinear, so "
                "the coordinate tests are undefined; use fewer variables, more "
                "observations or a conditional test (rank=...)"
            ) from None
        self.m, self.d, self.df2, self.standardize = m, des.t.shape[1], des.df2, standardize
        self.zeta = des.zeta
        self.u_obs = self.whiten(m * des.t / des.zeta[:, None])
        self.rss = m / des.zeta
        self.extra = self.rss + np.einsum("jd,jd->j", self.u_obs, self.u_obs)

    def whiten(self, c: np.ndarray) -> np.ndarray:
        """``chol_j^{-1} c_j`` for every j."""
        return np.linalg.solve(self.chol, c[:, :, None])[..., 0]

    def __call__(self, u: np.ndarray, rss: np.ndarray) -> np.ndarray:
        q = np.einsum("jd,jd->j", u, u)
        if self.standardize:
            q = q - np.einsum("jd,jd->j", u, self.u_obs) ** 2 / self.extra
        return (q / self.d) / (np.maximum(rss - q, 1e-300) / self.df2)


def _permutation_null(des: _Design, f_stat: _FStat, z, w_focal, standardize, n_perm, rng):
    """F statistics of ``n_perm`` permutations of the rows of ``z`` (n_perm, nf).

    One permutation shared by all variables of the block (Freedman-Lane):
    the permuted residual is projected off the null model of variable j,
    whose projection is ``P_{-j} = P - r_j r_j^T / RSS_j``, and the F
    statistic is recomputed (studentised by the permuted residual's own RSS).
    """
    m, nf = z.shape
    h_res = des.wy - des.cbar
    if des.xhat is not None:
        h_res -= w_focal @ des.xhat
    null = np.empty((n_perm, nf))
    for b in range(n_perm):
        zp = z[rng.permutation(m)]
        cross = np.einsum("ij,ij->j", zp, z)
        gs = zp.T @ h_res / m
        rss_p = np.einsum("ij,ij->j", zp, zp)
        if standardize:
            gs += (cross / (m * des.zeta))[:, None] * des.g
            proj = w_focal.T @ zp / m
            rss_p = rss_p - m * np.einsum("kj,kj->j", proj, proj) + cross**2 / (m * des.zeta)
        ts = gs if des.bases is None else np.einsum("jk,jkd->jd", gs, des.bases)
        null[b] = f_stat.d * f_stat(f_stat.whiten(m * ts), rss_p)
    return null


def block_tests(
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
    n_lost: int = 0,
) -> CoordinateTests:
    """Tests of every variable of one (focal) block.

    ``z``: scores ``Sigma_f^{-1}(f - fbar)`` of the focal block (its centred
    values when not standardized); ``w_focal``, ``w_other``: the blocks
    whitened (or centred).  The statistic of variable j is the partial F (or
    Wald) test of ``W_j`` in the reverse regression of ``f_j`` on the rest of
    its block and ``W_j = (y - ybar) w_other V_j`` (``V_j``: the other
    block's fitted basis without variable j; the identity for the marginal
    test).  ``n_lost``: covariate columns the rows are residuals on (the F
    reference's residual degrees of freedom become ``m - p - d - n_lost``).
    See ``docs/theory/support.md``.
    """
    sandwich = method == "chi2" and covariance == "sandwich"
    des = _design(yc, z, w_focal, w_other, rank, conditional, standardize, n_lost)
    if sandwich:
        return _sandwich_tests(des, z, w_focal, rank, conditional, standardize)
    f_stat = _FStat(des, z.shape[0], standardize)
    d, df2 = f_stat.d, des.df2
    fstat = f_stat(f_stat.u_obs, f_stat.rss)
    stat = d * fstat
    if method == "chi2":
        return CoordinateTests(
            stat=stat, df=d, pvalue=stats.f.sf(fstat, d, df2), dist=f"F({d}, {df2})"
        )
    null = _permutation_null(des, f_stat, z, w_focal, standardize, n_perm, rng)
    return CoordinateTests(
        stat=stat, df=d, pvalue=perm_pvalue(stat, null), dist=f"permutation, B={n_perm}"
    )


def threshold_scores(prep: Prepared) -> np.ndarray:
    """Entrywise t statistics ``sqrt(m) M_jk / se_jk`` (sandwich se).

    ``(n1, n2)`` for one response; ``(q, n1, n2)`` for a response of ``q``
    columns (the entries of ``M_c`` for each whitened response column).
    """
    m = prep.yc.shape[0]
    if prep.yc.ndim == 2:
        return np.stack([
            threshold_scores(Prepared(yc=prep.yc[:, c], z_a=prep.z_a, z_b=prep.z_b,
                                      w_a=prep.w_a, w_b=prep.w_b))
            for c in range(prep.yc.shape[1])
        ])
    mhat = prep.z_a.T @ (prep.yc[:, None] * prep.z_b) / m
    var = (prep.z_a**2).T @ ((prep.yc**2)[:, None] * prep.z_b**2) / m
    return np.sqrt(m) * mhat / np.sqrt(var)
