"""Heteroscedasticity-robust coordinate tests for support selection.

The coordinate test of variable ``j`` of a (focal) block is a test of the
``d`` coefficients of ``W_j`` in the *reverse regression* of ``f_j`` on
``(1, f_{-j}, W_j)``, ``W_j = (y - ybar) w_other V_j`` (``V_j``: the other
block's fitted rank-``r`` basis with variable ``j`` left out, the conditional
test; the identity, the marginal test); see ``docs/theory/support.md``.  The
homoscedastic partial F test (the factored covariance) is exact for Gaussian
blocks but not for heavy-tailed blocks whose variables are correlated: the
regression error of ``f_j`` is then uncorrelated with, but not independent
of, the regressors.  This module gives, on narrow inputs (centred response,
partial-residual scores and whitened blocks),

* ``"hc3"`` (``"hc2"``, ``"hc0"``): the Wald statistic with the
  heteroscedasticity-consistent covariance of the reverse regression, with
  the leverage correction of MacKinnon and White (1985), against
  ``F(d, m - p - d)`` (``p`` the columns of the null model);
* ``"wild"``: the wild (Rademacher sign-flip) bootstrap of the robust score
  statistic with restricted residuals (Kline and Santos, 2012);
* ``"studentized-permutation"``: permutation of the restricted residual, with
  the statistic studentized by the robust covariance in every permutation
  (DiCiccio and Romano, 2017).

All statistics of a block are computed together (vectorised over the
variables, in chunks of about ``config.CHUNK_FLOATS`` floats).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

import numpy as np

from .. import config
from ..inference.hypotheses import fdr_qvalues, perm_pvalue
from ..runtime._lazy import stats
from ..runtime._validation import check_bool, check_choice, check_int, normalize_seed
from ._loo import loo_bases
from ._statistics import CoordinateTests, products

__all__ = [
    "ROBUST_METHODS",
    "CoordinateTests",
    "RobustMethod",
    "fdr_qvalues",
    "robust_coordinate_tests",
]

RobustMethod = Literal["hc3", "hc2", "hc0", "wild", "studentized-permutation"]
ROBUST_METHODS: tuple[RobustMethod, ...] = get_args(RobustMethod)


#: Precision of the wild bootstrap's resample sums ``c* = sum_i v_i rs_ij Wt_ij``
#: (one matrix product per chunk of variables, the O(B m nf d) part of the
#: cost): single precision halves the time of the product; the signs are exact
#: and the relative error of a sum of m terms, about 1e-7 sqrt(m), is far below
#: the Monte Carlo resolution 1/(B + 1) of the p-value (checked in
#: ``tests/test_support_robust.py`` against double precision).
_RESAMPLE_DTYPE = np.float32


def _as_matrix(value: object, name: str, ndim: int | tuple[int, ...]) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        raise TypeError(f"{name} must be a numpy array; got {type(value).__name__}")
    dims = (ndim,) if isinstance(ndim, int) else ndim
    if value.ndim not in dims:
        want = " or ".join(str(k) for k in dims)
        raise ValueError(f"{name} must be {want}-dimensional; got shape {value.shape}")
    if not np.issubdtype(value.dtype, np.number) or np.iscomplexobj(value):
        raise TypeError(f"{name} must hold real numbers; got dtype {value.dtype}")
    out = np.asarray(value, dtype=float)
    if not np.all(np.isfinite(out)):
        raise ValueError(f"{name} must be finite; it has NaN or infinite entries")
    return out


@dataclass(frozen=True)
class _Setup:
    resid: np.ndarray  # (m, nf) residual r_j of f_j on the null model (1, f_{-j})
    rss: np.ndarray  # (nf,)
    lev_p: np.ndarray  # (m,) leverage of (1, focal block) (standardized) or 1/m
    w_res: np.ndarray  # (m, no) (I - P) W
    wr: np.ndarray  # (nf, no) W^T r_j
    bases: np.ndarray | None  # (nf, no, d) or None (marginal)
    standardize: bool
    p0: int
    d: int


def _setup(yc, z, w_focal, w_other, rank, standardize) -> _Setup:
    m, nf = z.shape
    wy = products(yc, w_other)
    g = z.T @ wy / m
    zeta = np.einsum("ij,ij->j", z, z) / m
    if np.any(zeta <= 0):
        raise ValueError("z has a column of zeros: a constant variable cannot be tested")
    w_res = wy - wy.mean(axis=0)
    if standardize:
        xhat = w_focal.T @ wy / m
        w_res -= w_focal @ xhat
        resid = z / zeta
        rss = m / zeta
        wr = m * g / zeta[:, None]
        lev_p = (1.0 + np.einsum("ij,ij->i", w_focal, w_focal)) / m
        p0 = nf + 1
    else:
        xhat = None
        resid = z
        rss = m * zeta
        wr = m * g
        lev_p = np.full(m, 1.0 / m)
        p0 = 1
    bases, d = _bases(rank, xhat, g, zeta, standardize, wy.shape[1])
    return _Setup(resid=resid, rss=rss, lev_p=lev_p, w_res=w_res, wr=wr, bases=bases,
                  standardize=standardize, p0=p0, d=d)


def _bases(rank: int | None, xhat: np.ndarray | None, g: np.ndarray, zeta: np.ndarray,
           standardize: bool, d_marginal: int) -> tuple[np.ndarray | None, int]:
    """The leave-one-out bases of the conditional test and their dimension
    (``None`` and ``d_marginal`` for the marginal test, ``rank is None``)."""
    if rank is None:
        return None, d_marginal
    if standardize:
        assert xhat is not None
        k_mat, rho = xhat.T @ xhat, 1.0 / zeta
    else:
        k_mat, rho = g.T @ g, np.ones(zeta.size)
    return loo_bases(k_mat, g, rho, rank), rank


def _design(s: _Setup, j0: int, j1: int) -> tuple[np.ndarray, np.ndarray]:
    """Residualised designs ``Wt_j = (I - P_{-j}) W_j`` (k, m, d) and the
    scores ``c_j = Wt_j^T r_j = W_j^T r_j`` (k, d) of variables j0..j1-1
    (a view of :func:`_design_rows`)."""
    wt, c = _design_rows(s, j0, j1)
    return wt.transpose(1, 0, 2), c


def _design_rows(s: _Setup, j0: int, j1: int) -> tuple[np.ndarray, np.ndarray]:
    """The designs of :func:`_design` row-major, (m, k, d) contiguous: the
    conditional ones from one matrix product ``(I - P) W [V_j0 ... V_j1-1]``."""
    m, no = s.w_res.shape
    k = j1 - j0
    if s.bases is None:
        c = s.wr[j0:j1]
        wt = np.repeat(s.w_res[:, None, :], k, axis=1)
    else:
        c = np.einsum("jk,jkd->jd", s.wr[j0:j1], s.bases[j0:j1])
        stacked = s.bases[j0:j1].transpose(1, 0, 2).reshape(no, k * s.d)
        wt = (s.w_res @ stacked).reshape(m, k, s.d)
    if s.standardize:
        # P_{-j} = P - r_j r_j^T / RSS_j, so (I - P_{-j}) W_j = (I - P) W_j + r_j c_j^T / RSS_j
        wt += (s.resid[:, j0:j1] / s.rss[j0:j1])[:, :, None] * c[None, :, :]
    return wt, c


def _weighted_gram(wt: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``sum_i weights_ji Wt_ji Wt_ji^T`` for each j: (k, d, d)."""
    return np.matmul(wt.transpose(0, 2, 1) * weights[:, None, :], wt)


def _weighted_gram_rows(wt: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """:func:`_weighted_gram` of row-major designs ``wt`` (m, k, d)."""
    wtt = np.ascontiguousarray(wt.transpose(1, 2, 0))  # (k, d, m)
    return np.matmul(wtt * weights[:, None, :], wtt.transpose(0, 2, 1))


def _quad(omega: np.ndarray, c: np.ndarray) -> np.ndarray:
    """``c_j^T omega_j^{-1} c_j`` (singular omega: NaN)."""
    out = np.full(c.shape[0], np.nan)
    try:
        sol = np.linalg.solve(omega, c[..., None])[..., 0]
        return np.einsum("jd,jd->j", c, sol)
    except np.linalg.LinAlgError:
        for k in range(c.shape[0]):
            try:
                out[k] = c[k] @ np.linalg.solve(omega[k], c[k])
            except np.linalg.LinAlgError:
                pass
        return out


def _scaled_resid(s: _Setup, j0: int, j1: int, scale: bool,
                  rows: tuple[int, int] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Restricted residuals ``r_j`` (k, m) and ``r_j / sqrt(1 - h0_j)`` with
    ``h0_j`` the leverages of the null model (HC2 scaling; unscaled when
    ``scale`` is False); ``rows``: those rows only."""
    r0, r1 = rows if rows is not None else (0, s.resid.shape[0])
    r = s.resid[r0:r1, j0:j1].T
    if not scale:
        return r, r
    lev0 = s.lev_p[None, r0:r1] - (r**2 / s.rss[j0:j1, None] if s.standardize else 0.0)
    return r, r / np.sqrt(np.clip(1.0 - lev0, 1e-8, None))


def _hc_stat(s: _Setup, j0: int, j1: int, power: int) -> np.ndarray:
    """Robust Wald statistic ``c^T Omega^{-1} c`` (= gamma^T Var_HC(gamma)^{-1} gamma)."""
    wt, c = _design(s, j0, j1)
    r = s.resid[:, j0:j1].T  # (k, m)
    gram = np.matmul(wt.transpose(0, 2, 1), wt)  # A_j
    try:
        gamma = np.linalg.solve(gram, c[..., None])[..., 0]
    except np.linalg.LinAlgError:
        gram = gram + 1e-12 * np.trace(gram, axis1=1, axis2=2)[:, None, None] * np.eye(s.d)
        gamma = np.linalg.solve(gram, c[..., None])[..., 0]
    e = r - np.einsum("jid,jd->ji", wt, gamma)
    weights = e**2
    if power:
        lev0 = s.lev_p[None, :] - (r**2 / s.rss[j0:j1, None] if s.standardize else 0.0)
        ainv_wt = np.linalg.solve(gram, wt.transpose(0, 2, 1))  # (k, d, m)
        lev = lev0 + np.einsum("jid,jdi->ji", wt, ainv_wt)
        one_minus = np.clip(1.0 - lev, 1e-8, None)
        weights = weights / one_minus**power
    return _quad(_weighted_gram(wt, weights), c)


def robust_coordinate_tests(
    yc: np.ndarray,
    z: np.ndarray,
    w_focal: np.ndarray,
    w_other: np.ndarray,
    *,
    rank: int | None = None,
    standardize: bool = True,
    method: RobustMethod = "hc3",
    n_resample: int = 199,
    seed: int | np.random.Generator | None = None,
    scale_residuals: bool = True,
    n_lost: int = 0,
) -> CoordinateTests:
    """Heteroscedasticity-robust coordinate tests of every variable of a block.

    Parameters
    ----------
    yc : ndarray (m,) or (m, q)
        Centred response ``y - ybar`` (or the centred whitened response
        matrix ``Yw`` of ``q`` columns: the products ``W`` then stack the
        ``q`` columns, :func:`~jdr_stats.support._statistics.products`).
    z : ndarray (m, nf)
        Partial-residual scores of the focal block, ``Sigma_f^{-1}(f_i - fbar)``
        (``standardize=True``), or the centred focal block.
    w_focal : ndarray (m, nf)
        The focal block whitened, ``L_f^{-1}(f_i - fbar)`` (only used when
        ``standardize=True``; pass the centred block otherwise).
    w_other : ndarray (m, no)
        The other block whitened (or centred).
    rank : int, optional
        Rank of the conditional test (``d = rank``); ``None``: the marginal
        test (``d = no``).
    standardize : bool
        Null model of the reverse regression ``(1, f_{-j})`` (``True``) or the
        intercept alone (``False``), as in :func:`jdr_stats.support.select_support`.
    method : {"hc3", "hc2", "hc0", "wild", "studentized-permutation"}
        ``"hc3"``/``"hc2"``/``"hc0"``: robust Wald statistic against
        ``F(d, m - p - d)``, ``p`` the columns of the null model (``stat`` is
        ``d F``); ``"wild"``: Rademacher wild bootstrap of the robust score
        statistic; ``"studentized-permutation"``: permutation of the null
        model's residual, studentized with the robust covariance.
    n_resample : int
        Resamples B of the two resampling methods (p-values
        ``(1 + #{T* >= T}) / (B + 1)``).
    seed : int, Generator or None
        For the resampling methods.
    scale_residuals : bool
        Resampling methods: divide the restricted residuals by
        ``sqrt(1 - h0_ij)`` (``h0``: leverages of the null model) in the
        studentizer and the resamples (default), which removes the
        ``1 / (1 - p/m)`` inflation of the statistic relative to its resamples;
        ``False`` (raw residuals) only for comparison.
    n_lost : int
        Covariate columns the rows are residuals on (a model with
        ``covariates=``): the F reference of the HC methods has
        ``m - p - d - n_lost`` denominator degrees of freedom.

    Returns
    -------
    CoordinateTests

    Notes
    -----
    With ``r_j`` the residual of ``f_j`` on the null model, ``Wt_j`` the
    residualised ``W_j``, ``c_j = Wt_j^T r_j`` and ``A_j = Wt_j^T Wt_j``, the
    Wald statistic of ``gamma_j = A_j^{-1} c_j`` with the sandwich
    ``A_j^{-1} Omega_j A_j^{-1}`` is ``c_j^T Omega_j^{-1} c_j``,
    ``Omega_j = sum_i e_ij^2 / (1 - h_ij)^k Wt_ij Wt_ij^T``; ``e_j`` and
    ``h_j`` are the residuals and leverages of the full reverse regression,
    ``k = 2`` (HC3), 1 (HC2), 0 (HC0).  The leverages of all variables come
    from the shared projection on ``(1, f)``: ``h_ij = (P)_ii - r_ij^2/RSS_j +
    Wt_ij^T A_j^{-1} Wt_ij``.  The resampling methods use the score statistic
    ``S_j = c_j^T Omega_0j^{-1} c_j``, ``Omega_0j = sum_i rs_ij^2 Wt_ij Wt_ij^T``
    with the scaled restricted residuals ``rs_ij = r_ij / sqrt(1 - h0_ij)``;
    the wild bootstrap resamples ``c*_j = sum_i v_i rs_ij Wt_ij`` (Rademacher
    ``v``), the permutation ``c^pi_j = sum_i rs_pi(i)j Wt_ij`` with its own
    studentizer.  Derivation: ``docs/theory/support.md``.

    References
    ----------
    MacKinnon, J. G. and White, H. (1985). J. Econometrics 29, 305-325.
    Kline, P. and Santos, A. (2012). A score based approach to wild bootstrap
    inference. J. Econometric Methods 1, 23-41.
    DiCiccio, C. J. and Romano, J. P. (2017). Robust permutation tests for
    correlation and regression coefficients. JASA 112, 1211-1220.

    Examples
    --------
    >>> import numpy as np
    >>> from jdr_stats.support import robust_coordinate_tests
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.standard_normal((400, 5)), rng.standard_normal((400, 4))
    >>> y = a[:, 0] * b[:, 0] + rng.standard_normal(400)
    >>> res = robust_coordinate_tests(y - y.mean(), a - a.mean(0), a - a.mean(0),
    ...                               b - b.mean(0), standardize=False)
    >>> res.df, bool(res.pvalue[0] < 1e-6), res.dist
    (4, True, 'F(4, 395), HC3')
    """
    yc, z, w_focal, w_other = _check_inputs(yc, z, w_focal, w_other)
    nf = z.shape[1]
    q = 1 if yc.ndim == 1 else yc.shape[1]
    rank = _check_rank(rank, min(nf, q * w_other.shape[1]))
    standardize = check_bool(standardize, "standardize")
    method = check_choice(method, "method", ROBUST_METHODS)
    n_resample = check_int(n_resample, "n_resample", low=1)
    s = _setup(yc, z, w_focal, w_other, rank, bool(standardize))
    return run_tests(s, method=method, n_resample=n_resample, seed=seed,
                     scale_residuals=scale_residuals, n_lost=check_int(n_lost, "n_lost", low=0))


def run_tests(s: _Setup, *, method: RobustMethod, n_resample: int,
              seed: int | np.random.Generator | None, scale_residuals: bool = True,
              n_lost: int = 0) -> CoordinateTests:
    """The tests of :func:`robust_coordinate_tests` from its shared pieces ``s``
    (options already checked)."""
    m, nf = s.resid.shape
    d = s.d
    df2 = m - s.p0 - d - n_lost
    if df2 < 1:
        raise ValueError(
            f"too few observations for the {'marginal' if s.bases is None else 'conditional'} "
            f"test: m={m} must exceed "
            f"{s.p0 + d} (null model columns plus degrees of freedom)"
        )
    step = max(1, config.CHUNK_FLOATS // (m * d))
    chunks = [(j0, min(nf, j0 + step)) for j0 in range(0, nf, step)]
    if method.startswith("hc"):
        power = {"hc0": 0, "hc2": 1, "hc3": 2}[method]
        stat = np.concatenate([_hc_stat(s, j0, j1, power) for j0, j1 in chunks])
        pvalue = stats.f.sf(stat / d, d, df2)
        return CoordinateTests(stat=stat, df=d, pvalue=pvalue,
                               dist=f"F({d}, {df2}), {method.upper()}")
    rng = normalize_seed(seed)
    if method == "wild":
        stat, null = _wild(s, chunks, n_resample, rng, scale_residuals)
        return CoordinateTests(stat=stat, df=d, pvalue=perm_pvalue(stat, null),
                               dist=f"wild bootstrap (Rademacher), B={n_resample}")
    stat, null = _studentized_permutation(s, chunks, n_resample, rng, scale_residuals)
    return CoordinateTests(stat=stat, df=d, pvalue=perm_pvalue(stat, null),
                           dist=f"studentized permutation, B={n_resample}")


def _check_inputs(yc, z, w_focal, w_other) -> tuple[np.ndarray, ...]:
    """The four arrays as finite float arrays of matching shapes."""
    yc = _as_matrix(yc, "yc", (1, 2))
    z = _as_matrix(z, "z", 2)
    w_focal = _as_matrix(w_focal, "w_focal", 2)
    w_other = _as_matrix(w_other, "w_other", 2)
    m = z.shape[0]
    if yc.shape[0] != m or w_focal.shape != z.shape or w_other.shape[0] != m:
        raise ValueError(
            f"yc, z, w_focal and w_other must have the same number of rows and w_focal "
            f"the shape of z; got {yc.shape}, {z.shape}, {w_focal.shape}, {w_other.shape}"
        )
    return yc, z, w_focal, w_other


def _check_rank(rank: object, cap: int) -> int | None:
    if rank is None:
        return None
    return check_int(rank, "rank", low=1, high=cap)


def _wild(s: _Setup, chunks, n_resample: int, rng: np.random.Generator,
          scale_residuals: bool) -> tuple[np.ndarray, np.ndarray]:
    """Score statistics and their wild bootstrap resamples ``(nf,), (B, nf)``.

    Rademacher signs on the scaled restricted residuals ``rs = r / sqrt(1 - h0)``:
    ``c* = sum_i v_i rs_i Wt_i`` has ``E*[c* c*^T] = Omega_0 = sum_i rs_i^2 Wt_i Wt_i^T``,
    the studentizer of ``S = c^T Omega_0^{-1} c`` (unchanged by sign flips).
    One row of signs per resample, shared by all variables, stored as int8.
    The rows ``rs_ij Wt_ij`` of as many chunks of variables as
    ``config.SUPPORT_RESAMPLE_BYTES`` holds are stacked in single precision
    (:func:`_resample_rows`), and each batch of signs is converted once and
    multiplied with all of them (one matrix product, ``O(B m k d)``).
    """
    m, nf = s.resid.shape
    d = s.d
    stat = np.empty(nf)
    null = np.empty((n_resample, nf))
    flips = rng.integers(0, 2, size=(n_resample, m), dtype=np.int8)
    # a batch of signs in single precision fills the memory budget
    bstep = max(1, min(n_resample, config.MEMORY_BUDGET // (4 * m)))
    for group in _groups(chunks, config.SUPPORT_RESAMPLE_BYTES // (4 * m * d)):
        g0, g1 = group[0][0], group[-1][1]
        x, omega, c = _resample_rows(s, g0, g1, scale_residuals)
        stat[g0:g1] = _quad(omega, c)
        for b0 in range(0, n_resample, bstep):
            b1 = min(n_resample, b0 + bstep)
            signs = 2 * flips[b0:b1].astype(_RESAMPLE_DTYPE) - 1
            cstar = (signs @ x).astype(float).reshape(b1 - b0, g1 - g0, d)
            sol = np.linalg.solve(omega, cstar.transpose(1, 2, 0))  # (k, d, b)
            null[b0:b1, g0:g1] = np.einsum("bjd,jdb->bj", cstar, sol)
    return stat, null


def _resample_rows(s: _Setup, j0: int, j1: int,
                   scale_residuals: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rows ``rs_ij Wt_ij`` of variables j0..j1-1 in single precision
    (m, k d), their studentizers ``Omega_0j`` (k, d, d) and scores ``c_j`` (k, d).

    Formed in blocks of rows: each block's designs for all k variables come
    from one product ``(I - P) W[rows] [V_j0 ... V_j1-1]`` (a wide product,
    near the processor's peak) and are consumed at once.
    """
    m, no = s.w_res.shape
    k, d = j1 - j0, s.d
    x = np.empty((m, k * d), dtype=_RESAMPLE_DTYPE)
    omega = np.zeros((k, d, d))
    if s.bases is None:
        c = s.wr[j0:j1]
    else:
        c = np.einsum("jk,jkd->jd", s.wr[j0:j1], s.bases[j0:j1])
        stacked = s.bases[j0:j1].transpose(1, 0, 2).reshape(no, k * d)
    step = max(1, min(m, config.CHUNK_FLOATS // (k * d)))
    for r0 in range(0, m, step):
        r1 = min(m, r0 + step)
        if s.bases is None:
            wt = np.repeat(s.w_res[r0:r1, None, :], k, axis=1)
        else:
            wt = (s.w_res[r0:r1] @ stacked).reshape(r1 - r0, k, d)
        if s.standardize:
            wt += (s.resid[r0:r1, j0:j1] / s.rss[j0:j1])[:, :, None] * c[None, :, :]
        rs = _scaled_resid(s, j0, j1, scale_residuals, rows=(r0, r1))[1]  # (k, rows)
        omega += _weighted_gram_rows(wt, rs**2)
        wt *= rs.T[:, :, None]  # the rows rs_ij Wt_ij, in place
        x[r0:r1] = wt.reshape(r1 - r0, k * d)
    return x, omega, c


def _groups(chunks: list[tuple[int, int]], most: int) -> list[list[tuple[int, int]]]:
    """Consecutive chunks of variables grouped to at most ``most`` variables
    (at least one chunk per group)."""
    out: list[list[tuple[int, int]]] = []
    for j0, j1 in chunks:
        if out and j1 - out[-1][0][0] <= most:
            out[-1].append((j0, j1))
        else:
            out.append([(j0, j1)])
    return out


def _studentized_permutation(s: _Setup, chunks, n_resample: int, rng: np.random.Generator,
                             scale_residuals: bool) -> tuple[np.ndarray, np.ndarray]:
    """Score statistics and their studentized permutations ``(nf,), (B, nf)``:
    the scaled restricted residual permuted, each permutation with its own
    studentizer."""
    m, nf = s.resid.shape
    stat = np.empty(nf)
    null = np.empty((n_resample, nf))
    perms = [rng.permutation(m) for _ in range(n_resample)]
    for j0, j1 in chunks:
        wt, c = _design(s, j0, j1)
        _, rs = _scaled_resid(s, j0, j1, scale_residuals)
        stat[j0:j1] = _quad(_weighted_gram(wt, rs**2), c)
        for b, perm in enumerate(perms):
            rp = rs[:, perm]
            cp = np.einsum("jid,ji->jd", wt, rp)
            null[b, j0:j1] = _quad(_weighted_gram(wt, rp**2), cp)
    return stat, null
