"""Self-normalised rank tests and the ladle estimator of the rank.

Narrow inputs only (no model object): centred ``y``, the sample-whitened
blocks ``a' = La^{-1}(a - abar)``, ``b' = Lb^{-1}(b - bbar)`` (or a callable
that returns an iterator over row chunks of them) and the full SVD
``X_lin = U diag(s) V^T`` of the whitened cross moment.  Every sum over rows
is a loop over row chunks, so the same code runs on a streaming row source
(:func:`whitened_chunks` maps raw chunks ``(y, a, b)`` to whitened ones).

* :func:`frobenius_from_moments`: ``Lambda_k = m sum_{j>k} s_j^2 / s_y^2``
  referred to a scaled chi-square with its finite-sample mean and variance
  estimated from the influence functions (``method="robust"``, the default
  rank test);
* :func:`wald_rank_test`: ``H0: rank(E[a' y b'^T]) <= k`` by the Wald
  (Kleibergen-Paap type) statistic
  ``T_k = m vec(C)^T Omega^{-1} vec(C)``, ``C = U_0^T X_lin V_0`` the
  complement block and ``Omega`` the uncentred second moment of its influence
  functions, referred to Hotelling's ``F(d, m - d)``.
* :func:`ladle_rank`: the ladle estimator of Luo and Li (2016): bootstrap
  variability of the singular vectors plus the normalised excess of the
  squared singular values over the noise edge (module ``_ladle_criterion``);
  Poisson bootstrap weights, so it also runs in one pass per chunk.

The derivations are in ``docs/theory/rank_tests.md`` (sections 6, 7 and 9).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import config
from ..runtime._lazy import linalg as sla
from ..runtime._lazy import stats
from ..runtime._validation import check_int, normalize_seed
from ._ladle_criterion import LadleResult, ladle_from_chunks, ladle_kmax
from .hypotheses import TestResult

__all__ = [
    "WaldResult",
    "complement_moments",
    "complement_moments_all",
    "cross_sums",
    "frobenius_from_moments",
    "FrobeniusResult",
    "wald_rank_test",
    "wald_from_moments",
    "ladle_rank",
    "ladle_from_chunks",
    "LadleResult",
    "ladle_kmax",
    "whitened_chunks",
]


_FROB_NAME = "Robust rank test"

Chunks = Callable[[], Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]]]


# ---------------------------------------------------------------------------
# Input handling
# ---------------------------------------------------------------------------
def _as_2d(x: Any, name: str) -> np.ndarray:
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} must be a numpy array; got {type(x).__name__}")
    if x.ndim != 2:
        raise ValueError(f"{name} must be 2-dimensional; got shape {x.shape}")
    return np.asarray(x, dtype=float)


def _array_chunks(y: np.ndarray, a: np.ndarray, b: np.ndarray, batch_rows: int | None) -> Chunks:
    m = y.shape[0]
    step = m if batch_rows is None else int(batch_rows)

    def gen() -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        for start in range(0, m, step):
            sl = slice(start, min(start + step, m))
            yield y[sl], a[sl], b[sl]

    return gen


def _check_rows(y: Any, a: Any, b: Any, batch_rows: Any) -> Chunks:
    """Validate in-memory rows; return a re-iterable chunk factory."""
    if not isinstance(y, np.ndarray):
        raise TypeError(f"y must be a numpy array; got {type(y).__name__}")
    if y.ndim != 1:
        raise ValueError(f"y must be 1-dimensional; got shape {y.shape}")
    a = _as_2d(a, "a")
    b = _as_2d(b, "b")
    if not a.shape[0] == b.shape[0] == y.shape[0]:
        raise ValueError(
            f"y, a and b must have the same number of rows; got {y.shape[0]}, "
            f"{a.shape[0]} and {b.shape[0]}"
        )
    if batch_rows is not None:
        batch_rows = check_int(batch_rows, "batch_rows", low=1)
    for name, x in (("y", y), ("a", a), ("b", b)):
        if not np.all(np.isfinite(x)):
            raise ValueError(f"{name} has non-finite values")
    return _array_chunks(np.asarray(y, dtype=float), a, b, batch_rows)


def _check_svd(u: Any, s: Any, v: Any, n1: int, n2: int) -> tuple[np.ndarray, ...]:
    u = _as_2d(u, "u")
    v = _as_2d(v, "v")
    s = np.asarray(s, dtype=float).reshape(-1)
    if u.shape != (n1, n1) or v.shape != (n2, n2) or s.shape[0] != min(n1, n2):
        raise ValueError(
            f"u, s, v must be the full SVD of an {n1} x {n2} matrix (u {n1} x {n1}, "
            f"{min(n1, n2)} singular values, v {n2} x {n2}); got shapes {u.shape}, "
            f"{s.shape}, {v.shape}"
        )
    return u, s, v


def _check_inputs(
    y: Any, a: Any, b: Any, u: Any, s: Any, v: Any, batch_rows: Any
) -> tuple[Chunks, np.ndarray, np.ndarray, np.ndarray]:
    """Rows and SVD of :func:`wald_rank_test` and :func:`ladle_rank`, validated."""
    chunks = _check_rows(y, a, b, batch_rows)
    u, s, v = _check_svd(u, s, v, a.shape[1], b.shape[1])
    return chunks, u, s, v


def _check_k(k: Any, n1: int, n2: int) -> int:
    k = check_int(k, "k")
    top = min(n1, n2) - 1
    if not 0 <= k <= top:
        raise ValueError(f"k must be between 0 and min(n1, n2) - 1 = {top}; got {int(k)}")
    return int(k)


def whitened_chunks(
    source: Any,
    mean_y: float,
    mean_a: np.ndarray,
    mean_b: np.ndarray,
    la: np.ndarray,
    lb: np.ndarray,
    batch_rows: int | None = None,
) -> Chunks:
    """Map a row source's raw chunks to centred ``y`` and whitened blocks.

    ``source`` follows the row-source protocol (``iter_chunks(batch_rows)``
    yielding ``(y, a, b)``); ``la``, ``lb`` are the lower Cholesky factors of
    the block covariances (divisor ``m``).
    """
    if not hasattr(source, "iter_chunks"):
        raise TypeError(
            f"source must have an iter_chunks method (a row source); got {type(source).__name__}"
        )

    def gen() -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        for y, a, b in source.iter_chunks(batch_rows):
            aw = sla.solve_triangular(la, (a - mean_a).T, lower=True).T
            bw = sla.solve_triangular(lb, (b - mean_b).T, lower=True).T
            yield y - mean_y, aw, bw

    return gen


# ---------------------------------------------------------------------------
# Influence functions of the complement block
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class ComplementMoments:
    """Sums over rows for the complement block at rank ``k``.

    ``omega`` is ``(1/m) sum_i vec(psi_i) vec(psi_i)^T`` (row-major vec),
    ``mean`` is ``(1/m) sum_i vec(psi_i)`` (equal to ``vec(U_0^T X_lin V_0)``
    when the rows are exactly centred and whitened), ``var_y`` the mean of
    ``y^2``; ``psi4 = sum_i ||psi_i||^4``, ``psi2y2 = sum_i ||psi_i||^2 y_i^2``
    and ``y4 = sum_i y_i^4`` give the finite-sample variance of ``Lambda_k``.
    """

    nobs: int
    k: int
    p: int
    q: int
    omega: np.ndarray
    mean: np.ndarray
    var_y: float
    psi4: float = float("nan")
    psi2y2: float = float("nan")
    y4: float = float("nan")


def _kr(uc: np.ndarray, vc: np.ndarray) -> np.ndarray:
    """Rows ``vec(u_i v_i^T)`` (row-major) of a chunk."""
    return (uc[:, :, None] * vc[:, None, :]).reshape(uc.shape[0], -1)


def complement_moments(
    chunks: Chunks, u0: np.ndarray, v0: np.ndarray, k: int = 0
) -> ComplementMoments:
    """Second moment of the influence functions of ``U_0^T X_lin V_0``.

    ``psi_i = u_i y_i v_i^T - u_i c_yv^T - c_uy v_i^T - y_i C_uv`` with
    ``u_i = U_0^T a'_i``, ``v_i = V_0^T b'_i`` and the sample cross moments
    ``c_uy``, ``c_yv``, ``C_uv`` (first pass); the second pass accumulates
    ``sum_i psi_i psi_i^T`` over row chunks of at most ``config.CHUNK_FLOATS``
    floats (no ``m x d`` array, no ``m x d x d`` array).
    """
    return replace(complement_moments_all(chunks, u0, v0, kmax=0)[0], k=k)


def cross_sums(chunks: Chunks) -> tuple[int, np.ndarray, np.ndarray, np.ndarray, float]:
    """``(m, c_ay, c_by, C_ab, mean(y^2))`` of whitened rows, by one pass.

    ``c_ay = (1/m) sum_i a'_i y_i``, ``c_by`` likewise and
    ``C_ab = (1/m) sum_i a'_i b'_i^T``: the first-order terms of the
    influence functions in :func:`complement_moments_all`.  A model built
    from a row source takes them from its :class:`~jdr_stats.Moments`
    instead (no pass).
    """
    m = 0
    c_ay = c_by = c_ab = None
    sum_y2 = 0.0
    for y, a, b in chunks():
        if c_ay is None:
            c_ay, c_by = np.zeros(a.shape[1]), np.zeros(b.shape[1])
            c_ab = np.zeros((a.shape[1], b.shape[1]))
        c_ay += a.T @ y
        c_by += b.T @ y
        c_ab += a.T @ b
        sum_y2 += float(y @ y)
        m += y.shape[0]
    if m == 0 or c_ay is None or c_by is None or c_ab is None:
        raise ValueError("the row chunks are empty")
    return m, c_ay / m, c_by / m, c_ab / m, sum_y2 / m


def complement_moments_all(
    chunks: Chunks,
    u: np.ndarray,
    v: np.ndarray,
    kmax: int,
    *,
    first: tuple[int, np.ndarray, np.ndarray, np.ndarray, float] | None = None,
) -> list[ComplementMoments]:
    """:class:`ComplementMoments` for ``k = 0..kmax`` from one pass over the rows.

    With ``u`` (n1 x p) and ``v`` (n2 x q) the trailing singular vectors of
    ``X_lin`` for the smallest ``k`` (``U[:, k0:]``), the influence function
    of rank ``k0 + j`` is the trailing ``(p - j) x (q - j)`` sub-block of the
    one of rank ``k0`` (its first-order terms are sub-vectors and
    sub-matrices of ``c_uy``, ``c_yv``, ``C_uv``), so ``Omega`` of each
    ``k`` is a principal sub-matrix of the largest one, and the per-row
    norms ``||psi_i^(k)||^2`` are tail sums of ``psi_i * psi_i``.  ``first``
    holds :func:`cross_sums` (computed by a first pass when None).
    """
    p, q = u.shape[1], v.shape[1]
    kmax = check_int(kmax, "kmax", low=0, high=min(p, q) - 1)
    m, c_ay, c_by, c_ab, var_y = cross_sums(chunks) if first is None else first
    c_uy, c_yv, c_uv = u.T @ c_ay, v.T @ c_by, u.T @ c_ab @ v
    corr = c_uv.reshape(-1)
    d = p * q
    omega = np.zeros((d, d))
    total = np.zeros(d)
    nk = kmax + 1
    psi4, psi2y2 = np.zeros(nk), np.zeros(nk)
    y4 = 0.0
    step = max(1, config.CHUNK_FLOATS // max(d, 1))
    for y, a, b in chunks():
        for start in range(0, y.shape[0], step):
            sl = slice(start, start + step)
            yy = y[sl]
            uc, vc = a[sl] @ u, b[sl] @ v
            psi = _kr(uc, vc) * yy[:, None]
            psi -= _kr(uc, np.broadcast_to(c_yv, vc.shape))
            psi -= _kr(np.broadcast_to(c_uy, uc.shape), vc)
            psi -= yy[:, None] * corr[None, :]
            omega += psi.T @ psi
            total += psi.sum(axis=0)
            # tails[i, j] = ||psi_i^(k0 + j)||^2: sums over the trailing sub-blocks
            sq = (psi * psi).reshape(-1, p, q)
            tails = np.stack([sq[:, j:, j:].sum(axis=(1, 2)) for j in range(nk)], axis=1)
            y2 = yy * yy
            psi4 += np.einsum("ij,ij->j", tails, tails)
            psi2y2 += tails.T @ y2
            y4 += float(y2 @ y2)
    omega /= m
    total /= m
    out = []
    for j in range(nk):
        idx = (np.arange(j, p)[:, None] * q + np.arange(j, q)[None, :]).reshape(-1)
        out.append(ComplementMoments(
            nobs=m, k=j, p=p - j, q=q - j, omega=omega[np.ix_(idx, idx)], mean=total[idx],
            var_y=var_y, psi4=float(psi4[j]), psi2y2=float(psi2y2[j]), y4=y4,
        ))
    return out


@dataclass(frozen=True)
class FrobeniusResult(TestResult):
    """``Lambda_k`` with the finite-sample two-moment reference: a
    :class:`~jdr_stats.inference.hypotheses.TestResult` with
    ``distribution="scaled chi2"``.

    Attributes
    ----------
    statistic : float
        ``Lambda_k = m sum_{j>k} s_j^2 / s_y^2``.
    df, scale : float
        ``Lambda_k ~ scale * chi2(df)``, ``df = 2 mean^2 / var`` (the
        effective df; NaN when the moments are degenerate).
    pvalue : float
    mean, var : float
        Estimated null mean ``tr(Omega) / s_y^2`` and finite-sample variance.
    """

    mean: float = float("nan")
    var: float = float("nan")
    scale: float = float("nan")


def frobenius_from_moments(mom: ComplementMoments, s: np.ndarray) -> FrobeniusResult:
    """``Lambda_k`` referred to a scaled chi-square with its finite-sample moments.

    With ``tau = tr(Omega) / s_y^2``: ``Lambda_k = (1/(m s_y^2)) (sum_i ||psi_i||^2
    + sum_{i != j} <psi_i, psi_j>)``; the diagonal part, normalised by ``s_y^2``,
    fluctuates like ``sum_i (||psi_i||^2 - tau y_i^2) / (m s_y^2)`` and the
    off-diagonal part has variance ``2 sum_{i != j} <psi_i, psi_j>^2 / (m s_y^2)^2``
    (given the rows' sizes), so

    ``var = [sum_i (||psi_i||^2 - tau y_i^2)^2 + 2 (m^2 ||Omega||_F^2 - sum_i ||psi_i||^4)]
    / (m s_y^2)^2``

    (``2 d`` exactly for Gaussian blocks and ``y`` independent of them).
    """
    m = mom.nobs
    s2 = mom.var_y
    if not s2 > 0:
        raise ValueError("y is constant")
    stat = float(m * np.sum(np.asarray(s, dtype=float)[mom.k:] ** 2) / s2)
    tau = float(np.trace(mom.omega)) / s2
    diag = mom.psi4 - 2.0 * tau * mom.psi2y2 + tau * tau * mom.y4
    off = m * m * float(np.sum(mom.omega * mom.omega)) - mom.psi4
    var = (max(diag, 0.0) + 2.0 * max(off, 0.0)) / (m * s2) ** 2
    null = f"rank(E[a' y b'^T]) <= {mom.k}"
    if not (tau > 0 and var > 0):
        return FrobeniusResult(stat, float("nan"), 1.0, null=null, distribution="scaled chi2",
                               method="robust", name=_FROB_NAME, mean=tau, var=var)
    df = 2.0 * tau * tau / var
    scale = tau / df
    return FrobeniusResult(stat, df, float(stats.chi2.sf(stat / scale, df)), null=null,
                           distribution=f"{scale:.4g} chi2({df:.4g})", method="robust",
                           name=_FROB_NAME, mean=tau, var=var, scale=scale)


# ---------------------------------------------------------------------------
# The Wald statistic and its F reference
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class WaldResult(TestResult):
    """One row of the Wald rank test: a
    :class:`~jdr_stats.inference.hypotheses.TestResult` whose p-value is that
    of Hotelling's F.

    Attributes
    ----------
    statistic : float
        ``T_k = m vec(C)^T Omega^{-1} vec(C)`` (``Omega`` uncentred; ``0 <= T_k
        <= m``).
    df, df_denom : float
        ``d = (n1 - k)(n2 - k)`` (rank of ``Omega``) and ``m - d``; also as
        the integers :attr:`df1` and :attr:`df2`.
    fstat : float
        Hotelling's ``F = (m - d) T_k / (d (m - T_k))``.
    pvalue : float
        ``P(F(d, m - d) > fstat)``.
    """

    fstat: float = float("nan")

    @property
    def df1(self) -> int:
        """Numerator df ``d`` (alias of :attr:`df`)."""
        return int(self.df)  # type: ignore[arg-type]

    @property
    def df2(self) -> int:
        """Denominator df ``m - d`` (alias of :attr:`df_denom`)."""
        return int(self.df_denom)  # type: ignore[arg-type]


def wald_from_moments(mom: ComplementMoments, c: np.ndarray, *,
                      n_lost: int = 0) -> WaldResult:
    """Wald statistic and Hotelling F p-value from the complement moments.

    ``c`` is ``vec(U_0^T X_lin V_0)`` (row-major).  With ``q = c^T Omega^{-1} c``
    (``Omega`` the uncentred second moment, ``q <= 1``) the centred
    Hotelling statistic is ``(m - 1) q / (1 - q)`` (Sherman-Morrison), so
    ``F = (m - d) T / (d (m - T))`` with ``T = m q``.  Rows that are
    residuals on ``p`` covariate columns (``n_lost = p``) have ``m - 1 - p``
    residual degrees of freedom instead of ``m - 1``: ``F = (m - p - d) q /
    (d (1 - q))`` against ``F(d, m - p - d)``.
    """
    m, d = mom.nobs, mom.p * mom.q
    c = np.asarray(c, dtype=float).reshape(-1)
    if c.shape[0] != d:
        raise ValueError(f"c must have {d} entries; got {c.shape[0]}")
    # scale-free solve: divide by the diagonal first
    scale = np.sqrt(np.clip(np.diag(mom.omega), 0.0, None))
    if not np.all(scale > 0):
        raise ValueError("the influence functions of the complement block are degenerate")
    corr = mom.omega / np.outer(scale, scale)
    evals, evecs = np.linalg.eigh(corr)
    keep = evals > evals[-1] * d * np.finfo(float).eps * 10
    rank = int(keep.sum())
    z = evecs[:, keep].T @ (c / scale)
    q = float(np.sum(z * z / evals[keep]))
    q = min(q, 1.0)
    stat = m * q
    df2 = m - int(n_lost) - rank
    if df2 < 1:
        raise ValueError(
            f"the Wald test needs more rows than complement entries: m = {m}, d = {rank}"
        )
    fstat = np.inf if q >= 1.0 else df2 * stat / (rank * (m - stat))
    pvalue = float(stats.f.sf(fstat, rank, df2)) if np.isfinite(fstat) else 0.0
    return WaldResult(statistic=stat, df=float(rank), pvalue=pvalue, df_denom=float(df2),
                      null=f"rank(E[a' y b'^T]) <= {mom.k}", distribution=f"F({rank}, {df2})",
                      method="wald", name="Wald rank test", fstat=float(fstat))


def wald_rank_test(
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    u: np.ndarray,
    s: np.ndarray,
    v: np.ndarray,
    k: int,
    *,
    batch_rows: int | None = None,
) -> WaldResult:
    """Wald (Kleibergen-Paap type) test of ``H0: rank(E[a' y b'^T]) <= k``.

    Parameters
    ----------
    y : ndarray (m,)
        Centred response.
    a, b : ndarray (m, n1), (m, n2)
        Sample-whitened blocks (centred, identity sample covariance).
    u, s, v : ndarray
        Full SVD of the whitened cross moment ``X_lin = (1/m) a^T diag(y) b``:
        ``u`` (n1 x n1), ``s`` (min(n1, n2),), ``v`` (n2 x n2) with
        ``X_lin = u[:, :j] diag(s) v[:, :j]^T``.
    k : int
        Rank under the null, ``0 <= k < min(n1, n2)``.
    batch_rows : int, optional
        Rows per chunk of the sums (all at once by default).

    Returns
    -------
    WaldResult

    Notes
    -----
    ``C = U_0^T X_lin V_0`` (``U_0 = u[:, k:]``, ``V_0 = v[:, k:]``) holds the
    trailing singular values on its diagonal; ``Omega`` is the uncentred
    second moment of the influence functions ``psi_i`` whose mean is ``C``.
    ``T_k = m vec(C)^T Omega^{-1} vec(C)``; the reference is Hotelling's
    ``F(d, m - d)``, ``d = (n1 - k)(n2 - k)``.  See
    ``docs/theory/rank_tests.md``.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.standard_normal((500, 4)), rng.standard_normal((500, 3))
    >>> y = a[:, 0] * b[:, 0] + rng.standard_normal(500)
    >>> aw = np.linalg.solve(np.linalg.cholesky(np.cov(a.T, bias=True)),
    ...                      (a - a.mean(0)).T).T
    >>> bw = np.linalg.solve(np.linalg.cholesky(np.cov(b.T, bias=True)),
    ...                      (b - b.mean(0)).T).T
    >>> yc = y - y.mean()
    >>> u, s, vt = np.linalg.svd(aw.T @ (yc[:, None] * bw) / 500)
    >>> wald_rank_test(yc, aw, bw, u, s, vt.T, 0).pvalue < 1e-6
    True
    >>> round(wald_rank_test(yc, aw, bw, u, s, vt.T, 1).pvalue, 2)
    0.34
    """
    chunks, u, s, v = _check_inputs(y, a, b, u, s, v, batch_rows)
    n1, n2 = u.shape[0], v.shape[0]
    k = _check_k(k, n1, n2)
    mom = complement_moments(chunks, u[:, k:], v[:, k:], k)
    return wald_from_moments(mom, complement_block(s, k, n1, n2).reshape(-1))


def complement_block(s: np.ndarray, k: int, n1: int, n2: int) -> np.ndarray:
    """``U_0^T X_lin V_0``: the trailing singular values on the diagonal."""
    c = np.zeros((n1 - k, n2 - k))
    tail = np.asarray(s, dtype=float)[k:]
    c[np.arange(tail.size), np.arange(tail.size)] = tail
    return c


# ---------------------------------------------------------------------------
# The ladle estimator (Luo and Li 2016; the criterion in _ladle_criterion)
# ---------------------------------------------------------------------------
def ladle_rank(
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    u: np.ndarray,
    s: np.ndarray,
    v: np.ndarray,
    *,
    n_boot: int = 200,
    kmax: int | None = None,
    seed: int | np.random.Generator | None = None,
    batch_rows: int | None = None,
) -> LadleResult:
    """The ladle estimator of the rank of ``E[a' y b'^T]`` (Luo and Li 2016).

    For ``k = 0..kmax``: ``f0(k)`` is the bootstrap mean of
    ``1 - (|det(U_k^T U*_k)| + |det(V_k^T V*_k)|) / 2`` (``U_k``, ``V_k`` the
    top-``k`` singular vectors of ``X_lin``, starred: of a Poisson-bootstrap
    replicate; ``f0(0) = 0``), ``f(k) = f0(k) / (1 + sum_j f0(j))``;
    ``phi(k) = lam~_{k+1} / (1 + sum_{j=1}^{kmax+1} lam~_j)`` with
    ``lam~_j = max(0, lam_j - e_{j-1})``, ``lam_j = s_j^2 / mean(y^2)`` and
    ``e_k`` the noise edge of the ``k``-th complement block, estimated by
    sign-flip draws of its noise
    (:func:`jdr_stats.inference._ladle_criterion.noise_edge`; ``O((n1 +
    n2) / m)``, so on narrow designs this is Luo and Li's ``phi``); the
    estimate is ``argmin_k f(k) + phi(k)``.  Theory:
    ``docs/theory/rank_tests.md``, section 9.

    Parameters
    ----------
    y, a, b, u, s, v :
        As for :func:`wald_rank_test`.
    n_boot : int
        Bootstrap replicates (Poisson(1) weights per row).
    kmax : int, optional
        Largest candidate rank (default :func:`ladle_kmax`), at most
        ``min(n1, n2) - 1``.
    seed : int, Generator or None
    batch_rows : int, optional

    Returns
    -------
    LadleResult

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(2000, 6, 5, 2, seed=3)
    >>> from jdr_stats.inference.rank_robust import ladle_rank
    >>> import numpy as np
    >>> a = sim.a - sim.a.mean(0); b = sim.b - sim.b.mean(0); y = sim.y - sim.y.mean()
    >>> a = np.linalg.solve(np.linalg.cholesky(a.T @ a / 2000), a.T).T
    >>> b = np.linalg.solve(np.linalg.cholesky(b.T @ b / 2000), b.T).T
    >>> uu, ss, vt = np.linalg.svd(a.T @ (y[:, None] * b) / 2000)
    >>> ladle_rank(y, a, b, uu, ss, vt.T, n_boot=50, seed=0).rank
    2
    """
    chunks, u, s, v = _check_inputs(y, a, b, u, s, v, batch_rows)
    return ladle_from_chunks(chunks, float(y @ y) / y.shape[0], u, s, v, n_boot=n_boot, kmax=kmax,
                             rng=normalize_seed(seed))
