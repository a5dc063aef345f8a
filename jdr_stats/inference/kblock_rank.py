"""Per-block rank tests of a K-block fit (docs/theory/k_blocks.md, section
"Per-block rank tests").

For block ``k`` and ``H0: rank_k <= r`` the statistic is the part of block
``k``'s combined pieces outside its estimated top-``r`` directions,
``Lambda = sum_{j > r} lambda_j(G_k)`` (the combined Gram's eigenvalues, in
unit-noise units).  Under ``H0`` each column of every piece has mean zero
in the complement, and ``Lambda = |(1/m) sum_i psi_i|^2`` with per-row
influence functions ``psi_i = (U0^T z_ik) o h_i``, ``h_i`` the row's
(weighted, scaled and centred) contribution to every piece's other modes.
Their inner products are the ``m x m`` matrix ``A * H`` (``A = Z_k U0 U0^T
Z_k^T``, ``H = sum_S c_S / s_S^2 J G_S J``), so the reference needs no
tensor.  On the sketched route (``fac.tests``) the K-way piece's rows are
``Y_i o Omega_k^T (o_{j != k} z_ij) / sqrt(s)``, the rows of the sketch
the fit used, so ``G_S`` is their inner products with the same test
vectors.  The reference is the robust two-moment one of the two-block test
(theory of rank tests, section 6, the per-row variance): ``Lambda ~ g
chi2(h)`` with the mean and variance of ``Lambda`` estimated from the rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._lazy import stats
from ..core.kestimate import KBlockFactors
from ..core.tensor import piece_row_gram, sketch_row_factor

__all__ = ["block_rank_table", "block_rank_table_rows", "choose_block_rank",
           "influence_gram"]


def influence_gram(y: np.ndarray, zs: Sequence[np.ndarray], k: int,
                   fac: KBlockFactors) -> np.ndarray:
    """``H``: the inner products of the rows' contributions to block ``k``'s
    pieces in their other modes, each piece weighted ``c_S / s_S^2`` and
    doubly centred (the pieces' means estimated), ``m x m``."""
    y2 = y[:, None] if y.ndim == 1 else y
    m = y2.shape[0]
    h = np.zeros((m, m))
    for (piece, j), c in fac.weights.items():
        if j != k:
            continue
        s2 = fac.scales[piece]
        if fac.tests is not None and len(piece) == len(zs) >= 3:  # the sketched piece
            r = sketch_row_factor(zs, fac.tests, k)
            g = (y2 @ y2.T) * (r @ r.T)
        else:
            g = piece_row_gram(y2, [zs[i] for i in piece if i != k])
        h += (c / s2 if s2 > 0 else c) * g
    rows = h.mean(axis=1)
    return h - rows[:, None] - rows[None, :] + rows.mean()


def block_rank_table(y: np.ndarray, zs: Sequence[np.ndarray], k: int, fac: KBlockFactors,
                     max_rank: int | None = None,
                     stop_alpha: float | None = None) -> pd.DataFrame:
    """The tests of ``H0: rank_k <= r``, ``r = 0 .. max_rank`` (default
    ``n_k - 1``), for block ``k``; with ``stop_alpha``, up to the first
    ``r`` not rejected at that level (all the sequential choice reads).

    Columns ``statistic, df, pvalue, eff_df, scale`` (``df`` NaN: the
    reference is ``scale * chi2(eff_df)``), indexed by ``r``.
    """
    y2 = y[:, None] if y.ndim == 1 else y
    m = y2.shape[0]
    zk = zs[k]
    n_k = zk.shape[1]
    top = n_k - 1 if max_rank is None else min(max_rank, n_k - 1)
    hmat = influence_gram(y2, zs, k, fac)
    ynorm = np.sum(y2**2, axis=1)
    rho = ynorm / ynorm.mean()
    proj = zk @ fac.factors[k]  # the rows in the block's estimated frame
    rows = []
    for r in range(top + 1):
        stat = float(np.sum(fac.values[k][r:]))
        a = proj[:, r:] @ proj[:, r:].T
        # the estimated top-r directions absorb the noise along the signal's
        # row space: the rows' contributions are taken off it (theory)
        if r:
            qmat = hmat @ proj[:, :r] / m
            lam = np.clip(fac.values[k][:r], 1e-300, None)
            psi = a * (hmat - (qmat / lam) @ qmat.T)
        else:
            psi = a * hmat
        # centred at the mean influence (theory of rank tests, section 6)
        means = psi.mean(axis=1)
        psi -= means[:, None] + means[None, :] - means.mean()
        norms = np.diag(psi).copy()
        tau = float(norms.sum()) / m**2
        s_off = float(np.sum(psi**2) - np.sum(norms**2))
        var = (2.0 * s_off + float(np.sum((norms - norms.mean() * rho) ** 2))) / m**4
        if tau <= 0 or var <= 0:
            rows.append((stat, np.nan, np.nan, np.nan, np.nan))
            if _stops(rows, stop_alpha):
                break
            continue
        h = 2.0 * tau**2 / var
        g = tau / h
        rows.append((stat, np.nan, float(stats.chi2.sf(stat / g, h)), h, g))
        if _stops(rows, stop_alpha):
            break
    out = pd.DataFrame(rows, columns=["statistic", "df", "pvalue", "eff_df", "scale"])
    out.index.name = "rank"
    return out


def _stops(rows: Sequence[Sequence[float]], stop_alpha: float | None) -> bool:
    """The last row ends a sequential choice at ``stop_alpha``: its p-value
    is not below it (NaN included)."""
    return stop_alpha is not None and not rows[-1][2] < stop_alpha


def _two_moment_row(stat: float, gram: np.ndarray, rho: np.ndarray,
                    mult: np.ndarray | None = None) -> tuple[float, ...]:
    """``(stat, df, pvalue, eff_df, scale)`` of the robust two-moment
    reference from the rows' centred influences' inner products ``gram``;
    ``mult``: each row's number of copies (frequency weights: the reference
    of the data with row ``i`` repeated ``mult_i`` times)."""
    norms = np.diag(gram).copy()
    if mult is None:
        mult = np.ones(gram.shape[0])
    total = float(mult.sum())
    tau = float(mult @ norms) / total**2
    # pairs of distinct copies: all pairs of rows, less each copy with itself
    s_off = float(mult @ (gram**2) @ mult - mult @ norms**2)
    nbar = float(mult @ norms) / total
    var = (2.0 * s_off + float(mult @ (norms - nbar * rho) ** 2)) / total**4
    if tau <= 0 or var <= 0:
        return (stat, np.nan, np.nan, np.nan, np.nan)
    h = 2.0 * tau**2 / var
    g = tau / h
    return (stat, np.nan, float(stats.chi2.sf(stat / g, h)), h, g)


def block_rank_table_rows(psi: np.ndarray, mk: np.ndarray, k: int, fac: KBlockFactors,
                          rho: np.ndarray, max_rank: int | None = None,
                          mult: np.ndarray | None = None,
                          stop_alpha: float | None = None) -> pd.DataFrame:
    """The tests of ``H0: rank_k <= r`` from explicit per-row influences.

    ``psi`` (``m x n_k x D``): each row's influence on block ``k``'s stacked
    pieces ``mk`` (``n_k x D``, :func:`~jdr_stats.core.kestimate.stacked_pieces`),
    e.g. jackknife pseudo-values (the influence of one copy of the row);
    ``rho`` the rows' relative response energies; ``mult`` the frequency
    weights (copies of each row; None: one).  Each influence is taken to the estimated complement
    ``U0^T psi_i``, off the estimated signal's row space, centred at the
    mean influence, and the statistic ``sum_{j > r} lambda_j(G_k)`` gets the
    robust two-moment reference of :func:`block_rank_table`.
    """
    m, n_k, _ = psi.shape
    top = n_k - 1 if max_rank is None else min(max_rank, n_k - 1)
    factors, values = fac.factors[k], fac.values[k]
    rows = []
    for r in range(top + 1):
        stat = float(np.sum(values[r:]))
        proj = np.einsum("ind,nj->ijd", psi, factors[:, r:], optimize=True)
        if r:
            lam = np.sqrt(np.clip(values[:r], 1e-300, None))
            vs = (mk.T @ factors[:, :r]) / lam  # the signal's row space, orthonormal
            proj = proj - (proj @ vs) @ vs.T
        flat = proj.reshape(m, -1)
        centre = flat.mean(axis=0) if mult is None else (mult @ flat) / mult.sum()
        flat = flat - centre
        rows.append(_two_moment_row(stat, flat @ flat.T, rho, mult))
        if _stops(rows, stop_alpha):
            break
    out = pd.DataFrame(rows, columns=["statistic", "df", "pvalue", "eff_df", "scale"])
    out.index.name = "rank"
    return out


def choose_block_rank(table: pd.DataFrame, alpha: float, n_k: int) -> int:
    """The first ``r`` whose test does not reject at ``alpha`` (``n_k`` when
    every test rejects)."""
    for r, p in zip(table.index, table["pvalue"], strict=True):
        if not p < alpha:
            return int(r)
    return n_k
