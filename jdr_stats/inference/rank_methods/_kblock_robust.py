"""The robust rank test over K blocks (``method="robust"`` of a K-block fit;
theory page "K blocks", section 4): each block's tests of ``H0: rank_k <=
r`` against the robust two-moment reference, from the rows' influences on
its pieces (:mod:`jdr_stats.inference.kblock_rank`).

The influences are analytic for the per-block estimator without case
weights or with whole-number ones (``psi_i = U0^T z_ik o h_i``, each row
counted as its copies), analytic through the joint mean,
covariance and Hermite correction for the joint estimator of ``K >= 3``
blocks on the tensor route, and delete-one refits elsewhere: an algorithm
chosen by :func:`jdr_stats.policy.kblock_influence`, recorded in
``design.cache["influence"]`` (the fit's settings report it).  An orthogonal
design (``interactions="orthogonal"``) reads explicit rows on every route,
the analytic ones with the residual's term
(:func:`~jdr_stats.inference.kblock_orthogonal.residual_influences`), the
refits re-estimating the residual.

The joint estimator's rank-0 tests (tensor route, not orthogonal) refer the
statistic to the rows' own contributions instead
(:func:`~jdr_stats.inference.kblock_rank.rank_zero_row`): their mean is the
block's pieces, so the statistic's diagonal part is realised and only the
pairs of rows are random; where no block rejects rank 0 at the sequential
level, the influences are never formed."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import policy
from ...core.kestimate import stacked_pieces
from ...core.tensor import pieces
from ...runtime._frequency import whole_numbers
from .._kblock_design import KBlockDesign
from ..kblock_influence import contribution_grams, joint_influences, row_contributions
from ..kblock_orthogonal import residual_influences
from ..kblock_rank import (
    block_influence_grams,
    block_rank_table,
    block_rank_table_rows,
    block_row_grams,
    piece_energies,
    rank_frame,
    rank_zero_from_gram,
    rank_zero_row,
)
from ._record import RowOptions

__all__ = ["kblock_robust_tables"]


def _influence_choice(d: KBlockDesign) -> policy.Choice:
    """How the rows' influences are had (:func:`jdr_stats.policy.kblock_influence`)."""
    fac, widths = d.factors, d.widths
    cols = [sum(d.q * (fac.tests[0].shape[1] if fac.tests is not None  # sketched
                       and len(piece) == len(widths) else
                       int(np.prod([widths[j] for j in piece if j != k])))
                for piece in pieces(len(widths), d.main_effects) if k in piece)
            for k in range(len(widths))]
    per_block = [d.m * n * c for n, c in zip(widths, cols, strict=True)]
    own = sum(d.m * d.q * int(np.prod([widths[j] for j in piece]))
              for piece in pieces(len(widths), d.main_effects))
    w = d.weights
    whole = w is not None and whole_numbers(w)  # copies of rows
    out = policy.kblock_influence(d.estimator, w is not None, d.m, sum(per_block),
                                  fac.tests is not None, len(widths), whole, max(per_block),
                                  piece_entries=own)
    if not d.orthogonal:
        return out
    if out.name == "jackknife":
        return policy.Choice(out.name, out.reason + ", each re-estimating y's residual on "
                             "[1, every block]", out.inputs)
    name = "analytic-joint" if d.estimator == "joint" else "analytic-rows"
    held = ("; one block's influences at a time" + (
        ", each piece's formed once" if out.inputs.get("pieces_once") else "")
        if out.inputs.get("blockwise") else "")
    return policy.Choice(name, f"{d.estimator} whitening, y's residual on [1, every block]: "
                         "each row's influence through the whitening plus the residual's "
                         "term - M(Z) R^-1 z_i e_i (theory page 'K blocks', section "
                         f"'Interactions orthogonal to the main effects'){held}", out.inputs)


def kblock_robust_tables(d: KBlockDesign, opts: RowOptions) -> dict[str, pd.DataFrame]:
    """Each block's robust tests of ``H0: rank_k <= r`` (columns ``statistic,
    df, pvalue, eff_df, scale``), up to the first ``r`` not rejected at
    ``opts.stop_alpha`` when it is given."""
    influence = _influence_choice(d)
    d.cache["influence"] = influence
    fac, w, stop = d.factors, d.weights, opts.stop_alpha
    tables: dict[str, pd.DataFrame] = {}
    if influence.name == "analytic":
        for k, name in enumerate(d.names):
            tables[name] = block_rank_table(d.y, d.blocks, k, fac, stop_alpha=stop, mult=w)
        return tables
    stacked = stacked_pieces(d.y, d.blocks, fac, cross_cov=d.cross_cov, w=w)
    zero = _rank_zero_rows(d, stacked)
    if zero is not None and stop is not None and all(
            not row[2] < stop for row in zero.values()):  # no block beyond rank 0
        return {name: rank_frame([row]) for name, row in zero.items()}
    if influence.name in ("analytic-joint", "analytic-rows"):
        # blocks one at a time: each piece's rows formed once, dropped once read
        held: dict[tuple[int, ...], np.ndarray] | None = (
            {} if influence.inputs.get("pieces_once") else None)
        served: set[int] = set()

        def psi_of(k: int | None) -> list[np.ndarray]:
            only = None if k is None else (k,)
            psis = joint_influences(d.y, d.blocks, fac, cross_cov=d.cross_cov, w=w,
                                    joint=d.estimator == "joint", only=only,
                                    pieces_held=held)
            if held is not None and k is not None:
                served.add(k)
                for piece in [p for p in held if served.issuperset(p)]:
                    del held[piece]
            if d.orthogonal:  # the residual's estimated coefficients
                extra = residual_influences(d.y, d.blocks, fac, cross_cov=d.cross_cov,
                                            only=only)
                psis = [p + x for p, x in zip(psis, extra, strict=True)]
            return psis
        if influence.inputs.get("blockwise"):  # one block's at a time: the same numbers
            dims = [(n, s.shape[1]) for n, s in zip(d.widths, stacked, strict=True)]
            rows = block_influence_grams(lambda k: psi_of(k)[k], dims, fac, d.m)
            for k, name in enumerate(d.names):
                psi, gram = next(rows)
                tables[name] = _table(d, k, psi, stacked[k], stop, gram, zero)
                del psi, gram
            return tables
        psis = psi_of(None)
    else:
        if d.jackknife is None:
            raise RuntimeError("the jackknife influences need the design's refit")
        psis = d.jackknife(stacked)
    grams = block_row_grams(psis, fac)  # one block's at a time
    for k, name in enumerate(d.names):
        tables[name] = _table(d, k, psis[k], stacked[k], stop, next(grams), zero)
    return tables


def _rank_zero_rows(d: KBlockDesign, stacked: list[np.ndarray]
                    ) -> dict[str, tuple[float, ...]] | None:
    """Each block's rank-0 test against the self-normalised reference
    (:func:`~jdr_stats.inference.kblock_rank.rank_zero_row`) for the joint
    estimator, whatever the route of its pieces (tensor or sketch) and of its
    influences; None for the per-block estimator (its influences' reference
    holds its level) and an orthogonal design (its residual's estimated
    coefficients enter the rows' influences, theory page "K blocks").
    ``stacked``: the blocks' stacked pieces (their widths choose the route)."""
    if d.estimator != "joint" or d.orthogonal:
        return None
    fac, m = d.factors, d.m
    # the m x m route where a block's rows are wider than m: each piece's
    # Gram formed once for all its blocks (tensor route)
    wide = [k for k, s in enumerate(stacked) if s.size > m] if fac.tests is None else []
    grams = contribution_grams(d.y, d.blocks, fac, cross_cov=d.cross_cov, blocks=wide,
                               w=d.weights) if wide else {}
    w = np.ones(m) if d.weights is None else np.asarray(d.weights, float)
    out = {}
    for k, name in enumerate(d.names):
        stat = float(np.sum(fac.values[k]))
        if k in grams:
            gram, raw = grams.pop(k)
            out[name] = rank_zero_from_gram(stat, gram, float(w @ raw) / float(w.sum()) ** 2, w)
            del gram
            continue
        contrib = row_contributions(d.y, d.blocks, fac, cross_cov=d.cross_cov, only=(k,))[k]
        out[name] = rank_zero_row(stat, contrib, d.weights)
        del contrib
    return out


def _table(d: KBlockDesign, k: int, psi: np.ndarray, stacked: np.ndarray,
           stop: float | None, gram: np.ndarray | None,
           zero: dict[str, tuple[float, ...]] | None = None) -> pd.DataFrame:
    """Block ``k``'s table from its rows' influences and their Gram (its
    rank-0 row from ``zero`` when given)."""
    rho = piece_energies(d.y, d.blocks, k, d.factors, d.weights)
    return block_rank_table_rows(psi, stacked, k, d.factors, rho, mult=d.weights,
                                 stop_alpha=stop, gram=gram,
                                 rank0=None if zero is None else zero[d.names[k]])
