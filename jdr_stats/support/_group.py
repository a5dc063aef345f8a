"""Group tests of several variables and the ``drop1`` table of the joint
model (``docs/theory/support.md``, section 10).

H0 for a group ``G = G_a u G_b``: the rows of ``U`` for ``G_a`` and the rows
of ``V`` for ``G_b`` are all zero (none of these variables enters its
block's subspace).  The statistic stacks the rows ``g_j`` of the coordinate
tests (:func:`jdr_stats.support._statistics.prepare`: ``g_j`` the row of
``Sigma_f^{-1} S Sigma_o^{-1}`` on the whitened other block), projected on
the other block's rank-r basis fitted without the group (conditional test),
and refers the Wald form ``m t^T Omega^{-1} t`` with the sandwich
covariance of the stacked influence functions to ``chi2(|G| r)``.  For one
variable it is the coordinate test with ``covariance="sandwich"`` exactly.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..runtime._lazy import stats
from ._loo import align_bases, top_basis
from ._statistics import Prepared, products

__all__ = ["GroupStatistic", "group_statistic", "resolve_variables"]


@dataclass(frozen=True)
class GroupStatistic:
    """The Wald statistic of one group, its df and chi-square p-value."""

    statistic: float
    df: int
    pvalue: float


def resolve_variables(
    variables: str | Sequence[str] | Mapping[str, Sequence[str]],
    names_a: Sequence[str],
    names_b: Sequence[str],
) -> dict[str, list[int]]:
    """Column indices per block of the named variables.

    ``variables``: a name, a list of names (each looked up in both blocks;
    a name in both must be given as a mapping), or ``{"a": [...], "b": [...]}``.
    """
    blocks = {"a": list(map(str, names_a)), "b": list(map(str, names_b))}
    if isinstance(variables, str):
        variables = [variables]
    out: dict[str, list[int]] = {"a": [], "b": []}
    if isinstance(variables, Mapping):
        for block, names in variables.items():
            if block not in blocks:
                raise ValueError(f'variables keys must be "a" or "b"; got {block!r}')
            for name in ([names] if isinstance(names, str) else names):
                if str(name) not in blocks[block]:
                    raise ValueError(f"block {block} has no variable {name!r}; it has "
                                     f"{blocks[block]}")
                out[block].append(blocks[block].index(str(name)))
    else:
        for name in variables:
            where = [blk for blk, names in blocks.items() if str(name) in names]
            if not where:
                raise ValueError(f"no variable {name!r} in block a {blocks['a']} or block b "
                                 f"{blocks['b']}")
            if len(where) == 2:
                raise ValueError(f"{name!r} names a variable of both blocks; pass "
                                 f'{{"a": [...], "b": [...]}}')
            out[where[0]].append(blocks[where[0]].index(str(name)))
    for block, idx in out.items():
        if len(set(idx)) != len(idx):
            raise ValueError(f"variables of block {block} are named twice")
    if not out["a"] and not out["b"]:
        raise ValueError("variables must name at least one variable; got none")
    return out


def _block_pieces(
    yc: np.ndarray, z: np.ndarray, w_focal: np.ndarray, w_other: np.ndarray,
    idx: list[int], rank: int | None, standardize: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """``t`` (stacked rows of the group, length ``|G| d``) and the per-row
    influence functions ``psi`` (m, |G| d) of one block's part of the group."""
    m = yc.shape[0]
    wy = products(yc, w_other)  # W ((m, q no) for a response of q columns)
    g = z[:, idx].T @ wy / m  # (|G|, no)
    h = wy - wy.mean(axis=0)
    if rank is None:  # marginal: the rows themselves, no fit term
        t = g
    else:
        xhat = w_focal.T @ wy / m if standardize else None
        k_full = xhat.T @ xhat if xhat is not None else (z.T @ wy / m).T @ (z.T @ wy / m)
        v_r = top_basis(k_full, rank)
        if xhat is not None:
            h = h - (w_focal @ (xhat @ v_r)) @ v_r.T
        h = h @ v_r
        # the other block's basis fitted without the group: remove the
        # group's share g_G^T (Sigma^{-1}_GG)^{-1} g_G of X^T X
        zg = z[:, idx]
        if standardize:
            k_loo = k_full - g.T @ np.linalg.solve(zg.T @ zg / m, g)
        else:
            k_loo = k_full - g.T @ g
        # t in the basis without the group, turned to the full one (theory 12.1)
        t = g @ align_bases(top_basis(k_loo, rank)[None], v_r)[0]
    psi = (z[:, idx][:, :, None] * h[:, None, :]).reshape(m, -1)
    return t.reshape(-1), psi


def group_statistic(
    prep: Prepared,
    groups: Mapping[str, list[int]],
    *,
    rank: int | None,
    standardize: bool,
) -> GroupStatistic:
    """The Wald statistic of H0 "the rows of the group are zero" (module
    docstring); ``rank=None`` gives the marginal test."""
    ts, psis = [], []
    for block, idx in groups.items():
        if not idx:
            continue
        z, wf, wo = ((prep.z_a, prep.w_a, prep.w_b) if block == "a"
                     else (prep.z_b, prep.w_b, prep.w_a))
        t, psi = _block_pieces(prep.yc, z, wf, wo, list(idx), rank, standardize)
        ts.append(t)
        psis.append(psi)
    t = np.concatenate(ts)
    psi = np.hstack(psis)
    m = psi.shape[0]
    if m <= t.size:
        raise ValueError(f"too few observations for the group test: m={m} must exceed "
                         f"its {t.size} degrees of freedom")
    omega = psi.T @ psi / m
    try:
        stat = float(m * t @ np.linalg.solve(omega, t))
    except np.linalg.LinAlgError:
        raise ValueError("the group's influence functions are collinear, so its test is "
                         "undefined (a variable named twice, or constant products)") from None
    df = int(t.size)
    return GroupStatistic(statistic=stat, df=df, pvalue=float(stats.chi2.sf(stat, df)))
