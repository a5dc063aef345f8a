"""The per-block rank tests of a K-block fit from sums over rows: streamed.

:func:`jdr_stats.inference.kblock_rank.block_rank_table` reads ``m x m``
matrices of the rows' influences.  With the analytic influences of the
per-block estimator every quantity it forms is a sum over rows of
functions of the row and of fitted quantities, so two more passes give the
same table without holding the rows (docs/theory/k_blocks.md, section
"Per-block rank tests").  Write ``g_iS`` for row ``i``'s contribution to
piece ``S`` in its other modes, scaled by ``sqrt(c_S / s_S^2)``, ``h_i =
(g_iS - gbar_S)_S`` (``D`` numbers), ``p_i = U_k^T z_ik`` and ``M = (1/m)
sum_i h_i p_i^T``.  The test of ``H0: rank_k <= r`` reads the rows' centred
influences ``f_i = p_i[r:] o h_i - fbar`` in the metric ``I o G_r``, ``G_r
= I - M_r Lambda_r^-1 M_r^T``:

- ``sum_ij psi_ij^2 = tr(K C K C)``, ``C = sum_i f_i f_i^T`` (one
  ``n_k D x n_k D`` matrix, every ``r`` a sub-block of it);
- each row's norm ``psi_ii = sum_{a >= r} (|f_ia|^2 - sum_{t < r} (f_ia^T
  M_t)^2 / lambda_t)``, summed, squared and summed, and against the rows'
  shares of the pieces' normalisers;
- the diagonal parts ``sum_i |p_i[r:]|^2 |h_iS|^2``.

Pass one sums ``g``, ``p``, ``g p^T`` and the rows' energies (``gbar``,
``M``, ``fbar`` and the normalisers' means); pass two the rest.  The
reference is then the robust two-moment one of the in-memory table,
number for number.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core.kestimate import KBlockFactors
from ..core.tensor import sketch_row_factor
from ..runtime._lazy import stats
from .kblock_rank import _block_pieces, _stops, raw_piece_energies

__all__ = ["MAX_INFLUENCE_GRAM", "streamed_block_rank_tables"]

#: Largest ``(n_k D)^2`` (numbers) of a block's influence second moment.
MAX_INFLUENCE_GRAM = 25_000_000

Rows = Callable[[np.ndarray, list[np.ndarray], np.ndarray | None], Any]


def _features(y: np.ndarray, zs: Sequence[np.ndarray], k: int,
              fac: KBlockFactors) -> list[np.ndarray]:
    """Each piece's ``g_iS`` (``c x D_S``) for block ``k``, in the fit's order."""
    y2 = y[:, None] if y.ndim == 1 else y
    out = []
    for piece in _block_pieces(fac, k):
        c = fac.weights[(piece, k)]
        s2 = fac.scales[piece]
        coef = c / s2 if s2 > 0 else c
        if fac.tests is not None and len(piece) == len(zs) >= 3:  # the sketched piece
            r = sketch_row_factor(zs, fac.tests, k)
            g = (y2[:, :, None] * r[:, None, :]).reshape(len(y2), -1)
        else:
            g = y2
            for j in piece:
                if j != k:
                    g = (g[:, :, None] * zs[j][:, None, :]).reshape(len(g), -1)
        out.append(np.sqrt(coef) * g)
    return out


def _add(parts: list[Any]) -> Any:
    """Sums of nested lists/tuples of arrays, entry by entry."""
    first = parts[0]
    if isinstance(first, (list, tuple)):
        return type(first)(_add([p[i] for p in parts]) for i in range(len(first)))
    return sum(parts[1:], first)


def streamed_block_rank_tables(reduce_rows: Callable[[Rows], Any], nobs: int,
                               fac: KBlockFactors, names: Sequence[str],
                               stop_alpha: float | None) -> dict[str, pd.DataFrame]:
    """Every block's table of :func:`~jdr_stats.inference.kblock_rank.block_rank_table`
    from two passes over the rows.

    ``reduce_rows(fn)`` calls ``fn(y, zs, w)`` on every chunk (``y`` centred
    at the mean of all rows, ``zs`` the chunk's whitened blocks, ``w`` its
    case weights or None) and adds the results; ``nobs`` rows in all, or
    observations: whole-number case weights are copies of rows, each sum
    one over the copies (the analytic influences of the rows repeated).
    """
    K = len(fac.factors)
    widths = [f.shape[0] for f in fac.factors]
    m = float(nobs)

    def first(y: np.ndarray, zs: list[np.ndarray], w: np.ndarray | None) -> Any:
        c = np.ones(len(y)) if w is None else np.asarray(w, float)
        out = []
        for k in range(K):
            g = np.hstack(_features(y, zs, k, fac))
            p = zs[k] @ fac.factors[k]
            out.append((c @ g, c @ p, (c[:, None] * g).T @ p,
                        c @ raw_piece_energies(y, zs, k, fac)))
        return out

    sums1 = reduce_rows(first)
    consts = []
    for k in range(K):
        gsum, psum, gp, esum = sums1[k]
        gbar = gsum / m
        mfull = (gp - np.outer(gbar, psum)) / m  # D x n_k
        d_total = gbar.size
        if (widths[k] * d_total) ** 2 > MAX_INFLUENCE_GRAM:
            raise ValueError(
                f'rank="auto": the streamed rank tests of block {names[k]!r} hold the '
                f"second moment of its rows' influences, ({widths[k]} x {d_total})^2 "
                f"numbers > {MAX_INFLUENCE_GRAM}; give the ranks, or load the rows")
        consts.append((gbar, mfull, esum / m))

    def second(y: np.ndarray, zs: list[np.ndarray], w: np.ndarray | None) -> Any:
        copies = np.ones(len(y)) if w is None else np.asarray(w, float)
        out = []
        for k in range(K):
            gbar, mfull, ebar = consts[k]
            feats = _features(y, zs, k, fac)
            h = np.hstack(feats) - gbar
            cuts = np.cumsum([f.shape[1] for f in feats])[:-1]
            pdiag = np.column_stack([(b**2).sum(axis=1) for b in np.split(h, cuts, axis=1)])
            p = zs[k] @ fac.factors[k]
            c, n_k = p.shape
            f = p[:, :, None] * h[:, None, :] - mfull.T[None]
            flat = f.reshape(c, -1)
            gram = flat.T @ (copies[:, None] * flat)
            sq = np.sum(f**2, axis=2)  # c x a
            lam = np.clip(fac.values[k], 1e-300, None)
            x2 = np.einsum("iad,dt->iat", f, mfull, optimize=True) ** 2 / lam  # c x a x t
            before = np.concatenate([np.zeros((c, n_k, 1)), np.cumsum(x2, axis=2)[:, :, :-1]],
                                    axis=2)  # sum over t < r, indexed by r
            v = sq[:, :, None] - before  # c x a x r
            keep = np.arange(n_k)[:, None] >= np.arange(n_k)[None, :]  # a >= r
            norms = np.einsum("iar,ar->ir", v, keep.astype(float))
            psq = np.einsum("ia,ar->ir", p**2, keep.astype(float))
            rho = raw_piece_energies(y, zs, k, fac)
            rho = rho / np.where(ebar > 0, ebar, 1.0) * (ebar > 0) + (ebar <= 0)
            wn, wr = copies[:, None] * norms, copies[:, None] * rho
            out.append((gram, copies @ norms, copies @ norms**2, wn.T @ rho,
                        (copies[:, None] * psq).T @ pdiag, wr.T @ rho))
        return out

    sums2 = reduce_rows(second)
    tables = {}
    for k in range(K):
        tables[names[k]] = _table(k, fac, consts[k][1], sums2[k], m, stop_alpha)
    return tables


def _table(k: int, fac: KBlockFactors, mfull: np.ndarray, sums: Sequence[np.ndarray],
           m: float, stop_alpha: float | None) -> pd.DataFrame:
    """Block ``k``'s tests from the second pass's sums (module docstring)."""
    gram, s_norm, s_norm2, s_norm_rho, s_parts, s_rho2 = sums
    n_k = fac.factors[k].shape[0]
    d_total = mfull.shape[0]
    full = gram.reshape(n_k, d_total, n_k, d_total)
    values = fac.values[k]
    rows = []
    for r in range(n_k):
        stat = float(np.sum(values[r:]))
        lam = np.clip(values[:r], 1e-300, None)
        metric = np.eye(d_total) - (mfull[:, :r] / lam) @ mfull[:, :r].T
        n_free = n_k - r
        cr = full[r:, :, r:, :].reshape(n_free * d_total, n_free * d_total)
        kc = np.kron(np.eye(n_free), metric) @ cr
        s_all = float(np.sum(kc * kc.T))
        total_norm = float(s_norm[r])
        parts = s_parts[r]
        total = float(parts.sum())
        nbar = parts / m * (total_norm / total if total > 0 else 0.0)
        dev = float(s_norm2[r] - 2.0 * nbar @ s_norm_rho[r] + nbar @ s_rho2 @ nbar)
        rows.append(_two_moment_sums(stat, m, total_norm, s_all - float(s_norm2[r]), dev))
        if _stops(rows, stop_alpha):
            break
    out = pd.DataFrame(rows, columns=["statistic", "df", "pvalue", "eff_df", "scale"])
    out.index.name = "rank"
    return out


def _two_moment_sums(stat: float, m: float, sum_norms: float, s_off: float,
                     dev: float) -> tuple[float, ...]:  # same arithmetic as the rows' form
    """:func:`~jdr_stats.inference.kblock_rank._two_moment_row` from its sums
    (one copy of each row)."""
    tau = sum_norms / m**2
    var = (2.0 * s_off + dev) / m**4
    if tau <= 0 or var <= 0:
        return (stat, np.nan, np.nan, np.nan, np.nan)
    h = 2.0 * tau**2 / var
    g = tau / h
    return (stat, np.nan, float(stats.chi2.sf(stat / g, h)), h, g)

