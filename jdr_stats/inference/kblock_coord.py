"""Coordinate (variable) tests of a K-block fit under its own estimator.

Block ``k``'s pieces stacked side by side are ``M_k`` (``n_k x D_k``,
:func:`~jdr_stats.core.kestimate.stacked_pieces`), in the fit's whitened
coordinates; its directions in the original variables are ``A_k U_k``, with
``A_k`` the whitening's map back (``C_k^{-T}``: ``C_k`` the Cholesky
factor of the block's covariance, per block, or of its partial covariance
given the other blocks under the joint estimator).  Variable ``j`` does not
enter block ``k``'s directions (row ``j`` of ``A_k U_k`` zero) implies that
row ``j`` of ``G_k = A_k M_k`` is zero.  The row is projected on the top
``r_k`` right singular vectors of ``M_k`` projected off the whitened
direction ``a_j = A_k^T e_j`` that the row reads (a leave-one-variable-out
basis ``V_k``, as the per-block support tests do; for a group, off all the
group's directions of the block) and tested by the Wald statistic
``m g^T Omega^{-1} g``, ``Omega`` the covariance of the rows' jackknife
influences on ``G_k V_k`` (each row deleted, the whitening, the centring
and the Hermite correction re-estimated, the pieces' scales and weights
held): so the test is that of the fitted estimator whatever the whitening,
the pieces (main effects pooled or not) or the route.  The conditional
test (``df = sum_k |J_k| r_k``) is referred to ``chi2(df)``; the
``marginal`` one (the whole rows, ``df = sum_k |J_k| D_k``, often a sizeable
share of ``m``) to Hotelling's form ``F(df, m - df)`` of the same statistic,
which a covariance estimated from ``m`` rows needs at such ``df``.

Where the tested variables carry all of their block's signal, the block's
rows without them are noise, so the conditional basis is noise too and the
conditional test has no power however strong the signal; the marginal test
does not depend on a basis.  The ``combined`` test rejects where either
does, its p-value ``min(1, 2 min(p_conditional, p_marginal))`` (Bonferroni:
valid whatever their dependence); where the marginal covariance cannot be
estimated well (``df > m / 2``) it is the conditional test alone.
Asymptotic: i.i.d. rows, finite fourth moments, the blocks' conditional
means linear.  Level and power: ``studies/study_kblock_support_joint.py``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..runtime._lazy import stats

__all__ = ["MARGINAL_MAX_SHARE", "combined_wald", "group_wald", "leave_out_basis"]

#: Largest ``df / m`` at which the combined test uses the marginal test.
MARGINAL_MAX_SHARE = 0.5


def leave_out_basis(mk: np.ndarray, dirs: np.ndarray, rank: int) -> np.ndarray:
    """``V``: the top ``rank`` right singular vectors of ``M_k`` projected off
    the columns of ``dirs`` (the whitened directions the tested rows read),
    unit columns, ``D_k x rank``."""
    q, _ = np.linalg.qr(dirs)
    proj = np.eye(mk.shape[0]) - q @ q.T
    _, evecs = np.linalg.eigh(proj @ (mk @ mk.T) @ proj)
    top = evecs[:, ::-1][:, :rank]
    v = mk.T @ (proj @ top)
    norms = np.linalg.norm(v, axis=0)
    return v / np.where(norms > 0, norms, 1.0)


def group_wald(mks: Sequence[np.ndarray], amaps: Sequence[np.ndarray],
               psis: Sequence[np.ndarray], groups: Mapping[int, Sequence[int]],
               ranks: Sequence[int], *, conditional: bool = True) -> tuple[float, int, float]:
    """``(statistic, df, pvalue)`` of the group ``groups`` (block index to
    variable indices), module docstring.

    ``mks[k]``: block ``k``'s stacked pieces; ``amaps[k]``: ``A_k``
    (``n_k x n_k``); ``psis[k]``: the rows' influences on ``G_k``
    (``m x n_k x D_k``); ``ranks[k]``: the block's rank.
    """
    gs, ps = [], []
    for k, idx in groups.items():
        idx = list(idx)
        if not idx:
            continue
        mk, amap = mks[k], amaps[k]
        rows = amap[idx]                       # |J| x n_k
        if conditional:
            v = leave_out_basis(mk, rows.T, int(ranks[k]))
        else:
            v = np.eye(mk.shape[1])
        gs.append((rows @ mk @ v).ravel())
        ps.append(np.einsum("ijd,dr->ijr", psis[k][:, idx, :], v).reshape(psis[k].shape[0], -1))
    g = np.concatenate(gs)
    psi = np.hstack(ps)
    m = psi.shape[0]
    df = int(g.size)
    if df >= m:
        raise ValueError(f"the variables' test has {df} degrees of freedom, at least the "
                         f"{m} rows: its covariance cannot be estimated (use "
                         'test="conditional" or fewer variables)')
    psi = psi - psi.mean(axis=0)
    omega = psi.T @ psi / m
    try:
        stat = float(m * g @ np.linalg.solve(omega, g))
    except np.linalg.LinAlgError:
        return float("nan"), df, float("nan")
    if not np.isfinite(stat):
        return float("nan"), df, float("nan")
    if conditional:
        return stat, df, float(stats.chi2.sf(stat, df))
    # Hotelling: m g' S^{-1} g (m - df) / (df (m - 1)) ~ F(df, m - df), S = omega m / (m - 1)
    return stat, df, float(stats.f.sf(stat * (m - df) / (df * m), df, m - df))


def combined_wald(mks: Sequence[np.ndarray], amaps: Sequence[np.ndarray],
                  psis: Sequence[np.ndarray], groups: Mapping[int, Sequence[int]],
                  ranks: Sequence[int]) -> dict[str, float]:
    """The conditional and marginal tests of the group and their
    combination (module docstring): keys ``statistic``, ``df``,
    ``pvalue_conditional`` (the conditional test), ``statistic_marginal``,
    ``df_marginal``, ``pvalue_marginal`` (NaN where not used) and ``pvalue``
    (the combined p-value)."""
    stat, df, pc = group_wald(mks, amaps, psis, groups, ranks, conditional=True)
    m = psis[0].shape[0]
    df_m = sum(len(list(idx)) * mks[k].shape[1] for k, idx in groups.items())
    sm, pm = float("nan"), float("nan")
    if df_m <= MARGINAL_MAX_SHARE * m:
        sm, _, pm = group_wald(mks, amaps, psis, groups, ranks, conditional=False)
    if not np.isfinite(pm):
        p = pc
    else:   # Bonferroni over the two tests (a NaN conditional p counts as 1)
        p = min(1.0, 2.0 * min(pc if np.isfinite(pc) else 1.0, pm))
    return {"statistic": stat, "df": float(df), "pvalue_conditional": pc,
            "statistic_marginal": sm, "df_marginal": float(df_m), "pvalue_marginal": pm,
            "pvalue": p}
