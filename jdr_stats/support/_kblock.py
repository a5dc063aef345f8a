"""Support selection for three or more blocks: a robust Wald test of every
variable of every block, false discovery control over all of them.

For block ``k`` the combined pieces stacked side by side are
``M_k = m^{-1} sum_i z_ik h_i^T`` (``h_i`` the row's scaled contribution to
the other modes of every piece containing ``k``).  Variable ``j`` does not
enter ``U_k`` (row ``j`` of ``U_k`` zero, original coordinates) implies
that row ``j`` of ``G_k = Sigma_k^{-1/2 T} M_k = m^{-1} sum_i zt_ik h_i^T``
(``zt_i = Sigma_k^{-1}(x_ik - mean_k)``) is zero.  Given block ``k``'s rank
``r_k``, the row is projected on the top ``r_k`` right singular vectors
``V_k^{(-j)}`` of ``M_k`` projected off the whitened direction
``L_k^{-1} e_j`` that row ``j`` reads (a leave-one-variable-out basis: the
basis of the whole ``M_k`` follows row ``j``'s own noise and made the test
anti-conservative; the conditional test: ``r_k`` degrees of freedom) and
tested by the Wald statistic with the sandwich covariance of its rows'
influences ``psi_ij = zt_ij (h_i - hbar - M_k^T z_ik) V_k`` (the last term:
the estimated covariance of block ``k``), referred to ``chi2(r_k)``.  The
p-values of all blocks' variables go through Benjamini-Hochberg (or
Benjamini-Yekutieli) together.  Derivation and assumptions:
docs/theory/k_blocks.md, section "Support selection".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

import numpy as np
import pandas as pd

from .. import policy
from ..core.kestimate import piece_scale, piece_weight
from ..core.moments import column_scales
from ..core.tensor import pieces
from ..inference.hypotheses import fdr_qvalues
from ..policy import Choice
from ..runtime._lazy import linalg as sla
from ..runtime._lazy import stats
from ._results import SupportResults

__all__ = ["kblock_results", "kblock_support"]


def _whitened(x: np.ndarray, name: str,
              labels: Sequence[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``z_i = L^{-1}(x_i - mean)`` and ``zt_i = Sigma^{-1}(x_i - mean)`` (sample
    covariance, divisor ``m``)."""
    xc = x - x.mean(axis=0)
    cov = xc.T @ xc / x.shape[0]
    try:
        chol = np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        raise ValueError(f"block {name!r}: its sample covariance is singular (constant or "
                         f"collinear columns among {list(labels)}); drop them") from None
    z = sla.solve_triangular(chol, xc.T, lower=True).T
    zt = sla.solve_triangular(chol.T, z.T, lower=False).T
    return z, zt, chol


def _contributions(y: np.ndarray, zs: Sequence[np.ndarray], k: int) -> np.ndarray:
    """``H_k``: each row's scaled contribution to the other modes of every
    piece containing block ``k`` (``m x D_k``; scales and weights as the fit)."""
    weighting = policy.kblock_weighting().name
    parts = []
    for piece in pieces(len(zs)):
        if k not in piece:
            continue
        h = y[:, None]
        for j in piece:
            if j != k:
                h = (h[:, :, None] * zs[j][:, None, :]).reshape(y.shape[0], -1)
        s2 = piece_scale(y, zs, piece)
        c = piece_weight(weighting, h.shape[1])  # type: ignore[arg-type]
        parts.append(h * (np.sqrt(c / s2) if s2 > 0 else np.sqrt(c)))
    return np.hstack(parts)


def kblock_support(y: np.ndarray, blocks: Sequence[np.ndarray], names: Sequence[str],
                   labels: Sequence[Sequence[str]], ranks: Mapping[str, int], *,
                   fdr: float = 0.1, rule: Literal["bh", "by"] = "bh",
                   estimator: Choice | None = None) -> SupportResults:
    """The per-variable tests of every block and the selection (module docstring).

    ``y`` the response (one column), ``blocks`` the rows of each block,
    ``labels`` their variables, ``ranks`` each block's rank (1 .. n_k).
    """
    y = np.asarray(y, float)
    if y.ndim != 1:
        raise ValueError(f"support selection of three or more blocks takes one numeric "
                         f"response column; got shape {y.shape}")
    m = y.shape[0]
    widths = [x.shape[1] for x in blocks]
    if m < max(widths) + 2:
        raise ValueError(f"support selection whitens each block with its sample covariance: "
                         f"needs at least max(n_k) + 2 = {max(widths) + 2} rows; got {m}")
    if not 0 < fdr < 1:
        raise ValueError(f"fdr must be in (0, 1); got {fdr!r}")
    if rule not in ("bh", "by"):
        raise ValueError(f'rule must be "bh" or "by" for three or more blocks; got {rule!r}')
    cols = max(sum(int(np.prod([widths[j] for j in p if j != k]))
                   for p in pieces(len(widths)) if k in p) for k in range(len(widths)))
    if m * cols > policy.KBLOCK_INFLUENCE_MAX_ENTRIES:
        raise ValueError(f"support selection holds each row's contribution to a block's "
                         f"pieces, m D_k = {m * cols} > {policy.KBLOCK_INFLUENCE_MAX_ENTRIES} "
                         f"numbers (policy.KBLOCK_INFLUENCE_MAX_ENTRIES); use fewer rows or "
                         "narrower blocks")
    yc = y - y.mean()
    # the tests are unit-free: columns of extreme units times powers of two
    # (exact), so that their squares neither overflow nor vanish
    scaled = [np.asarray(x, float) for x in blocks]
    scaled = [x if (sc := column_scales((x,))) is None else x * sc for x in scaled]
    white = [_whitened(x, n, lab) for x, n, lab in zip(scaled, names, labels, strict=True)]
    zs = [w[0] for w in white]
    white_chol = [w[2] for w in white]
    rows = []
    for k, name in enumerate(names):
        z, zt, _ = white[k]
        r = int(ranks[name])
        h = _contributions(yc, zs, k)
        mk = z.T @ h / m
        gram = mk @ mk.T
        ainv = sla.solve_triangular(white_chol[k], np.eye(widths[k]), lower=True)
        for j, var in enumerate(labels[k]):
            # the basis without variable j's own row: M_k projected off the
            # whitened direction a_j = L^{-1} e_j that row j of G_k reads
            a = ainv[:, j] / np.linalg.norm(ainv[:, j])
            proj = np.eye(widths[k]) - np.outer(a, a)
            _, evecs = np.linalg.eigh(proj @ gram @ proj)
            top = evecs[:, ::-1][:, :r]
            v = mk.T @ (proj @ top)
            v /= np.linalg.norm(v, axis=0)
            p = h @ v
            g = zt[:, j] @ p / m                        # (r,): the tested row
            q = p - p.mean(axis=0) - z @ (mk @ v)       # the influences' common factor
            psi = zt[:, j:j + 1] * q
            omega = psi.T @ psi / m
            try:
                stat = float(m * g @ np.linalg.solve(omega, g))
            except np.linalg.LinAlgError:
                stat = np.nan
            rows.append((name, var, stat, r, float(stats.chi2.sf(stat, r))
                         if np.isfinite(stat) else np.nan))
    table = pd.DataFrame(rows, columns=["block", "variable", "statistic", "df", "pvalue"])
    table = table.set_index(["block", "variable"])
    table["qvalue"] = fdr_qvalues(table["pvalue"].to_numpy(), rule)
    table["selected"] = table["qvalue"].to_numpy() <= fdr
    return kblock_results(table, names=names, fdr=fdr, rule=rule, ranks=ranks,
                          estimator=estimator)


#: The null hypothesis and statistic of each estimator's K-block tests.
_NULL_NOTES = {
    "joint": ("H0: variable j does not enter block k's directions (its row of the "
              "directions zero). Statistic: Wald with the covariance of the rows' "
              "jackknife influences under the joint whitening, the row on the block's "
              "basis without the variable (chi2(r_k)) and whole (Hotelling F), p-value "
              "min(1, 2 min) of the two (results.drop1(); theory page 'K blocks', "
              "section 5a)."),
    "per-block": ("H0: variable j does not enter block k's directions (row j of U_k zero, "
                  "original coordinates), so row j of Sigma_k^{-1} times block k's stacked "
                  "pieces is zero. Statistic: that row on the top r_k right singular "
                  "vectors, Wald with the sandwich covariance of the rows' influences (the "
                  "block's estimated covariance included), chi2(r_k) (theory page 'K "
                  "blocks', section 'Support selection'). Assumes independent blocks and "
                  "linear conditional means within each block."),
}


def kblock_results(table: pd.DataFrame, *, names: Sequence[str], fdr: float, rule: str,
                   ranks: Mapping[str, int], estimator: Choice | None) -> SupportResults:
    """The :class:`~jdr_stats.support.SupportResults` of the K-block tests
    (``table`` indexed by ``(block, variable)``: ``statistic, df, pvalue,
    qvalue, selected``) of the estimator ``estimator`` (default: the
    per-block one), each block at its rank of ``ranks``, ``rule`` at
    ``fdr`` over all blocks' variables."""
    est = estimator or Choice("per-block", "the per-block estimator")
    joint = est.name == "joint"
    rank_by = {str(n): int(ranks[n]) for n in names}
    same = len(set(rank_by.values())) == 1
    return SupportResults(
        table=table, title="Support selection of the K-block fit", method="chi2",
        method_label=("jackknife Wald, conditional and marginal combined" if joint
                      else "robust conditional Wald, chi2(r_k)"),
        notes=[_NULL_NOTES["joint" if joint else "per-block"],
               f"Estimator: {est.name} ({est.reason})."],
        test="combined" if joint else "conditional", rule=rule, fdr=float(fdr),
        rank=next(iter(rank_by.values())) if same else rank_by,
        settings={"covariance": "jackknife" if joint else "sandwich", "standardize": True,
                  "estimator": est.name, "estimator_reason": est.reason},
        block_names=tuple(rank_by))
