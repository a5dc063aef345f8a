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

from collections.abc import Callable, Iterator, Sequence

import numpy as np
import pandas as pd

from ..core.kestimate import KBlockFactors
from ..core.tensor import piece_row_gram, sketch_row_factor
from ..runtime._lazy import stats

__all__ = ["block_influence_grams", "block_rank_table", "block_rank_table_rows",
           "block_row_grams", "choose_block_rank", "influence_gram", "piece_energies",
           "rank_frame", "rank_zero_from_gram", "rank_zero_row"]


def influence_gram(y: np.ndarray, zs: Sequence[np.ndarray], k: int,
                   fac: KBlockFactors) -> np.ndarray:
    """``H``: the inner products of the rows' contributions to block ``k``'s
    pieces in their other modes, each piece weighted ``c_S / s_S^2`` and
    doubly centred (the pieces' means estimated), ``m x m``."""
    return _influence_parts(y, zs, k, fac)[0]


def _influence_parts(y: np.ndarray, zs: Sequence[np.ndarray], k: int,
                     fac: KBlockFactors,
                     mult: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """``H`` of :func:`influence_gram` and its diagonal piece by piece
    (``m x P``, the pieces containing ``k`` in the fit's order); ``mult``:
    each row's copies, the means those of the repeated rows."""
    y2 = y[:, None] if y.ndim == 1 else y
    m = y2.shape[0]
    h = np.zeros((m, m))
    diags = []
    for piece in _block_pieces(fac, k):
        c = fac.weights[(piece, k)]
        s2 = fac.scales[piece]
        if fac.tests is not None and len(piece) == len(zs) >= 3:  # the sketched piece
            r = sketch_row_factor(zs, fac.tests, k)
            g = (y2 @ y2.T) * (r @ r.T)
        else:
            g = piece_row_gram(y2, [zs[i] for i in piece if i != k])
        g = _centred(g, mult) * (c / s2 if s2 > 0 else c)
        diags.append(np.diag(g).copy())
        h += g
    return h, np.column_stack(diags)


def _centred(g: np.ndarray, mult: np.ndarray | None = None) -> np.ndarray:
    """``J g J``, ``J`` the centring matrix (at the mean of the rows repeated
    ``mult`` times, when given)."""
    share = np.full(g.shape[0], 1.0 / g.shape[0]) if mult is None else mult / mult.sum()
    rows = g @ share
    return g - rows[:, None] - rows[None, :] + share @ rows


def _block_pieces(fac: KBlockFactors, k: int) -> list[tuple[int, ...]]:
    """The pieces containing block ``k``, in the fit's order."""
    return [piece for piece in fac.scales if k in piece]


def raw_piece_energies(y: np.ndarray, zs: Sequence[np.ndarray], k: int,
                       fac: KBlockFactors) -> np.ndarray:
    """``e_iS = |Y_i|^2 prod_{j in S} |z_ij|^2`` for the pieces ``S``
    containing block ``k`` (``m x P``, the fit's order)."""
    y2 = y[:, None] if y.ndim == 1 else y
    energy = np.sum(y2**2, axis=1)
    norms = [np.sum(z**2, axis=1) for z in zs]
    cols = []
    for piece in _block_pieces(fac, k):
        e = energy.copy()
        for j in piece:
            e = e * norms[j]
        cols.append(e)
    return np.column_stack(cols)


def piece_energies(y: np.ndarray, zs: Sequence[np.ndarray], k: int, fac: KBlockFactors,
                   w: np.ndarray | None = None) -> np.ndarray:
    """``rho_iS = e_iS / mean(e_S)`` (:func:`raw_piece_energies`), for the
    pieces ``S`` containing block ``k`` (``m x P``, the fit's order; the
    mean weighted by ``w`` when given): each row's share of the normaliser
    ``s_S^2`` of piece ``S`` (theory page "K blocks", section 4, the
    diagonal part)."""
    cols = []
    for e in raw_piece_energies(y, zs, k, fac).T:
        e = np.ascontiguousarray(e)
        mean = float(e.mean() if w is None else (w @ e) / np.sum(w))
        cols.append(e / mean if mean > 0 else np.ones_like(e))
    return np.column_stack(cols)


def _expected_norms(parts: np.ndarray, rho: np.ndarray,
                    mult: np.ndarray | None = None) -> np.ndarray:
    """Each row's share of the diagonal part's mean, ``sum_S nbar_S rho_iS``
    (``parts``: the rows' squared influences piece by piece, ``m x P``;
    ``nbar_S`` their (weighted) means): what the pieces' normalisers
    ``s_S^2`` make of the row, so that ``n_i`` minus it is the row's
    fluctuation of the diagonal part once the normalisers are estimated."""
    nbar = parts.mean(axis=0) if mult is None else (mult @ parts) / mult.sum()
    return rho @ nbar


def block_rank_table(y: np.ndarray, zs: Sequence[np.ndarray], k: int, fac: KBlockFactors,
                     max_rank: int | None = None,
                     stop_alpha: float | None = None,
                     mult: np.ndarray | None = None) -> pd.DataFrame:
    """The tests of ``H0: rank_k <= r``, ``r = 0 .. max_rank`` (default
    ``n_k - 1``), for block ``k``; with ``stop_alpha``, up to the first
    ``r`` not rejected at that level (all the sequential choice reads).
    ``mult``: whole-number case weights, each row's copies; the table is
    that of the rows repeated, every mean and sum over rows one over the
    copies (the rows, the whitening and the factors those of the weighted
    fit, which are the repeated rows' fit).

    Columns ``statistic, df, pvalue, eff_df, scale`` (``df`` NaN: the
    reference is ``scale * chi2(eff_df)``), indexed by ``r``.
    """
    y2 = y[:, None] if y.ndim == 1 else y
    zk = zs[k]
    n_k = zk.shape[1]
    top = n_k - 1 if max_rank is None else min(max_rank, n_k - 1)
    hmat, pdiag = _influence_parts(y2, zs, k, fac, mult)
    rho = piece_energies(y2, zs, k, fac, mult)
    copies = np.ones(y2.shape[0]) if mult is None else np.asarray(mult, float)
    share = copies / copies.sum()
    proj = zk @ fac.factors[k]  # the rows in the block's estimated frame
    rows = []
    for r in range(top + 1):
        stat = float(np.sum(fac.values[k][r:]))
        a = proj[:, r:] @ proj[:, r:].T
        # the estimated top-r directions absorb the noise along the signal's
        # row space: the rows' contributions are taken off it (theory)
        if r:
            qmat = hmat @ (share[:, None] * proj[:, :r])
            lam = np.clip(fac.values[k][:r], 1e-300, None)
            psi = a * (hmat - (qmat / lam) @ qmat.T)
        else:
            psi = a * hmat
        # centred at the mean influence (theory of rank tests, section 6)
        means = psi @ share
        psi -= means[:, None] + means[None, :] - share @ means
        # the rows' norms piece by piece, in the shares of the pieces'
        # uncorrected diagonals (they add up to the corrected total)
        parts = np.diag(a)[:, None] * pdiag
        total = float(copies @ parts.sum(axis=1))
        norms = np.diag(psi)
        parts *= float(copies @ norms) / total if total > 0 else 0.0
        rows.append(_two_moment_row(stat, psi, _expected_norms(parts, rho, mult), mult))
        if _stops(rows, stop_alpha):
            break
    return rank_frame(rows)


def rank_frame(rows: Sequence[Sequence[float]]) -> pd.DataFrame:
    """A block's table of tests, one row per ``r`` (columns ``statistic, df,
    pvalue, eff_df, scale``, indexed by ``rank``)."""
    out = pd.DataFrame(list(rows), columns=["statistic", "df", "pvalue", "eff_df", "scale"])
    out.index.name = "rank"
    return out


def _stops(rows: Sequence[Sequence[float]], stop_alpha: float | None) -> bool:
    """The last row ends a sequential choice at ``stop_alpha``: its p-value
    is not below it (NaN included)."""
    return stop_alpha is not None and not rows[-1][2] < stop_alpha


def _two_moment_row(stat: float, gram: np.ndarray, expected: np.ndarray,
                    mult: np.ndarray | None = None) -> tuple[float, ...]:
    """``(stat, df, pvalue, eff_df, scale)`` of the robust two-moment
    reference from the rows' centred influences' inner products ``gram``
    and each row's expected squared norm given the normalisers
    (:func:`_expected_norms`); ``mult``: each row's number of copies
    (frequency weights: the reference of the data with row ``i`` repeated
    ``mult_i`` times)."""
    norms = np.diag(gram).copy()
    if mult is None:
        mult = np.ones(gram.shape[0])
    return _two_moment_parts(stat, norms, float(mult @ (gram**2) @ mult), expected, mult)


def _two_moment_parts(stat: float, norms: np.ndarray, s_all: float, expected: np.ndarray,
                      mult: np.ndarray) -> tuple[float, ...]:
    """:func:`_two_moment_row` from the rows' squared norms and ``s_all =
    sum_ij mult_i mult_j <psi_i, psi_j>^2`` (all pairs of rows)."""
    total = float(mult.sum())
    tau = float(mult @ norms) / total**2
    # pairs of distinct copies: all pairs of rows, less each copy with itself
    s_off = s_all - float(mult @ norms**2)
    var = (2.0 * s_off + float(mult @ (norms - expected) ** 2)) / total**4
    if tau <= 0 or var <= 0:
        return (stat, np.nan, np.nan, np.nan, np.nan)
    h = 2.0 * tau**2 / var
    g = tau / h
    return (stat, np.nan, float(stats.chi2.sf(stat / g, h)), h, g)


def rank_zero_row(stat: float, contrib: np.ndarray,
                  mult: np.ndarray | None = None) -> tuple[float, ...]:
    """``(stat, df, pvalue, eff_df, scale)`` of ``H0: rank_k = 0`` against the
    self-normalised reference (theory page "K blocks", section 4, "The
    rank-0 test's reference"): ``contrib`` (``m x n_k x D``) the rows' own
    contributions to the block's stacked pieces, whose mean is ``M_k``
    (:func:`~jdr_stats.inference.kblock_influence.row_contributions`), so that
    ``stat = |M_k|^2 = D + O`` exactly: ``D = sum_i |c_i|^2 / W^2`` the rows'
    own part, ``O`` the pairs of distinct rows (copies).  The reference is
    ``scale * chi2(eff_df)`` with mean ``D`` and the variance of ``O``,
    ``2 sum_{i != j} <c_i, c_j>^2 / W^4`` (the rows centred at their mean
    there: below the true rank the signal's mean stays out of it).  ``D`` is
    part of the statistic, so only the pairs' part is random around it: no
    whitening's, normaliser's or diagonal's term enters.  ``mult``: the case
    weights as each row's copies (``None``: one)."""
    m = contrib.shape[0]
    w = np.ones(m) if mult is None else np.asarray(mult, float)
    flat = contrib.reshape(m, -1)
    mean = float(w @ np.einsum("ij,ij->i", flat, flat)) / float(w.sum()) ** 2
    flat = flat - (w @ flat) / float(w.sum())
    if flat.shape[1] > m:  # the m x m Gram
        return rank_zero_from_gram(stat, flat @ flat.T, mean, w)
    norms = np.einsum("ij,ij->i", flat, flat)
    cov = (flat * w[:, None]).T @ flat  # sum_ij w_i w_j <c_i, c_j>^2 = |C^T W C|_F^2
    return _rank_zero_parts(stat, mean, norms, float(np.sum(cov * cov)), w)


def rank_zero_from_gram(stat: float, gram: np.ndarray, mean: float,
                        w: np.ndarray) -> tuple[float, ...]:
    """:func:`rank_zero_row` from the centred rows' ``m x m`` Gram (squared
    in place) and the reference's mean ``D``."""
    norms = np.diag(gram).copy()
    np.multiply(gram, gram, out=gram)
    return _rank_zero_parts(stat, mean, norms, float(w @ (gram @ w)), w)


def _rank_zero_parts(stat: float, mean: float, norms: np.ndarray, s_all: float,
                    w: np.ndarray) -> tuple[float, ...]:
    """:func:`rank_zero_row` from the reference's mean ``D``, the centred
    rows' squared norms and ``s_all = sum_ij w_i w_j <c_i, c_j>^2`` over the
    centred rows."""
    total = float(w.sum())
    s_off = s_all - float(w @ norms**2)  # pairs of distinct copies
    if not (mean > 0 and s_off > 0):
        return (stat, np.nan, np.nan, np.nan, np.nan)
    h = 2.0 * mean**2 / (2.0 * s_off / total**4)
    pvalue = float(stats.chi2.sf(stat * h / mean, h))
    return (stat, np.nan, pvalue, h, mean / h)


def block_rank_table_rows(psi: np.ndarray, mk: np.ndarray, k: int, fac: KBlockFactors,
                          rho: np.ndarray, max_rank: int | None = None,
                          mult: np.ndarray | None = None,
                          stop_alpha: float | None = None,
                          gram: np.ndarray | None = None,
                          rank0: tuple[float, ...] | None = None) -> pd.DataFrame:
    """The tests of ``H0: rank_k <= r`` from explicit per-row influences.

    ``psi`` (``m x n_k x D``): each row's influence on block ``k``'s stacked
    pieces ``mk`` (``n_k x D``, :func:`~jdr_stats.core.kestimate.stacked_pieces`),
    e.g. jackknife pseudo-values (the influence of one copy of the row);
    ``rho`` the rows' shares of the pieces' normalisers (:func:`piece_energies`,
    ``m x P``); ``mult`` the frequency
    weights (copies of each row; None: one).  Each influence is taken to the estimated complement
    ``U0^T psi_i``, off the estimated signal's row space, centred at the
    mean influence, and the statistic ``sum_{j > r} lambda_j(G_k)`` gets the
    robust two-moment reference of :func:`block_rank_table`.  ``gram``: the
    rows' ``m x m`` Gram ``<psi_i, psi_j>`` when it is already had
    (:func:`block_row_grams`).

    The rows are taken to the block's whole frame and centred once (both
    linear: the complement of every ``r`` is the frame's last columns).  The
    sum of squared inner products ``|F^T W F|_F^2 = mult^T (F F^T)^2 mult``
    comes from one Gram formed once: the ``m x m`` one when given or when
    ``p = n_k D > m``, updated from ``r`` to ``r + 1`` (less the frame's
    column ``r`` and the low-rank part along the signal's row space,
    :func:`_complement_gram`); else the ``p x p`` one, each ``r`` its rows
    and columns ``r..`` taken off the signal's row space
    (:func:`_complement_cov_square`).  ``rank0``: the row of ``r = 0`` when
    it is had from another reference (:func:`rank_zero_row`).
    """
    m, n_k, d_total = psi.shape
    top = n_k - 1 if max_rank is None else min(max_rank, n_k - 1)
    factors, values = fac.factors[k], fac.values[k]
    cuts = np.cumsum(_piece_columns(fac, k, d_total))[:-1]
    w = np.ones(m) if mult is None else np.asarray(mult, float)
    frame = np.matmul(factors.T, psi)  # (m, n_k, D): every row in the block's frame
    frame -= (w @ frame.reshape(m, -1)).reshape(n_k, d_total) / w.sum()
    base = cov = None  # the m x m Gram of the frame's columns r.. or their p x p one
    full = frame.reshape(m, -1)
    if gram is not None or n_k * d_total > m:
        base = _centred_gram(gram, w) if gram is not None else full @ full.T
    else:
        root = full if mult is None else full * np.sqrt(w)[:, None]  # one SYRK
        cov = (root.T @ root).reshape(n_k, d_total, n_k, d_total)
    rows = []
    for r in range(top + 1):
        if r == 0 and rank0 is not None:
            rows.append(rank0)
            if _stops(rows, stop_alpha):
                break
            continue
        stat = float(np.sum(values[r:]))
        proj, vs = frame[:, r:, :], None
        if r:
            lam = np.sqrt(np.clip(values[:r], 1e-300, None))
            vs = (mk.T @ factors[:, :r]) / lam  # the signal's row space, orthonormal
            proj = proj - (proj @ vs) @ vs.T
        sq = np.einsum("iad,iad->id", proj, proj)  # each column's square, summed over rows a
        parts = np.column_stack([c.sum(axis=1) for c in np.split(sq, cuts, axis=1)])
        if base is not None:
            if r:
                base -= frame[:, r - 1, :] @ frame[:, r - 1, :].T
            g = _complement_gram(base, frame[:, r:, :], vs)
            g = g * g if g is base else np.multiply(g, g, out=g)
            s_all = float(w @ (g @ w))
        else:
            assert cov is not None
            s_all = _complement_cov_square(cov[r:, :, r:, :], vs)
        rows.append(_two_moment_parts(stat, sq.sum(axis=1), s_all,
                                      _expected_norms(parts, rho, mult), w))
        if _stops(rows, stop_alpha):
            break
    return rank_frame(rows)


def _complement_cov_square(cov: np.ndarray, vs: np.ndarray | None) -> float:
    """``|P^T C P|_F^2`` summed over the ``D x D`` blocks of ``cov``
    (``n' x D x n' x D``, the rows' weighted second moments ``C = F^T W F``
    of the frame's columns ``r..``), ``P = I - V V^T`` (``vs``: ``V``, or
    None: ``P = I``): ``|F_r^T W F_r|_F^2`` of the rows ``F_r = X P``."""
    if vs is None:
        return float(np.sum(cov * cov))
    proj = np.eye(vs.shape[0]) - vs @ vs.T
    right = cov @ proj  # (n', D, n', D): the columns' D axis
    both = proj.T @ np.swapaxes(right, 1, 2)  # (n', n', D, D): the rows' D axis
    return float(np.sum(both * both))


def _centred_gram(gram: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The Gram of the rows less their ``w``-weighted mean, from theirs:
    ``G - g 1^T - 1 g^T + c``, ``g = G w / W``, ``c = w^T G w / W^2``."""
    g = gram @ w / w.sum()
    out = gram - g[:, None]
    out -= g[None, :]
    out += float(w @ g) / w.sum()
    return out


def _complement_gram(base: np.ndarray, x: np.ndarray, vs: np.ndarray | None) -> np.ndarray:
    """``<F_i, F_j>`` of the rows ``F_i = X_i (I - V V^T)`` from ``base`` =
    ``<X_i, X_j>`` (``x``: the rows ``X_i``, ``m x n' x D``; ``vs``: ``V``,
    ``D x r``, or None): ``<X_i, X_j> - 2 <Y_i, Y_j> + <Y_i V^T V, Y_j>``,
    ``Y_i = X_i V``, whatever the rounding of ``V``'s orthonormality."""
    if vs is None:
        return base
    m = x.shape[0]
    y = x @ vs  # (m, n', r)
    low = (y @ (vs.T @ vs) - 2.0 * y).reshape(m, -1) @ y.reshape(m, -1).T
    low += base  # one GEMM of the low-rank part, added in place
    return low


def block_row_grams(psis: Sequence[np.ndarray], fac: KBlockFactors
                    ) -> Iterator[np.ndarray | None]:
    """Each block's ``m x m`` Gram ``<psi_ik, psi_jk>`` of the rows'
    influences on its stacked pieces, in block order, one at a time (None:
    the block's tests read the ``p x p`` Gram instead): the Grams of
    :func:`block_influence_grams` over influences already held."""
    dims = [(int(p.shape[1]), int(p.shape[2])) for p in psis]
    m = int(psis[0].shape[0])
    for _, gram in block_influence_grams(psis.__getitem__, dims, fac, m):
        yield gram


def block_influence_grams(psi_of: Callable[[int], np.ndarray], dims: Sequence[tuple[int, int]],
                          fac: KBlockFactors, m: int
                          ) -> Iterator[tuple[np.ndarray, np.ndarray | None]]:
    """Each block's influences ``psi_of(k)`` (``m x n_k x D_k``, ``dims[k]
    = (n_k, D_k)``) with their ``m x m`` Gram ``<psi_ik, psi_jk>`` (None:
    the block's tests read the ``p x p`` Gram instead), in block order,
    asking ``psi_of`` once per block and holding at most two blocks'
    influences, on the tensor route with the Gram of the K-way piece formed
    once: each block's columns of it are the same per-row tensor unfolded
    along the block's mode (the same entries), scaled by ``sqrt(c_S) /
    s_S``, so the blocks' Grams of it differ by the ratio of the squared
    scales.

    A block takes the ``m x m`` Gram where it costs fewer products: its
    ``m^2`` times the K-way piece's entries over ``K``, its other pieces'
    ``n_k D`` and one update per rank (``D_k``), against the ``p x p``
    Gram's ``m p^2``, ``p = n_k D_k`` (the halves of SYRK alike)."""
    layout = _kway_layout(dims, fac, m)
    if layout is None:
        for k in range(len(dims)):
            yield psi_of(k), None
        return
    spans, wide, scale, ref = layout
    held: np.ndarray | None = psi_of(ref)
    assert held is not None
    part = held[:, :, spans[ref]].reshape(m, -1)
    shared = (part @ part.T) / scale[ref]
    del part
    for k in range(len(dims)):
        if k == ref:
            assert held is not None
            psi, held = held, None
        else:
            psi = psi_of(k)
        if not wide[k]:
            yield psi, None
            continue
        rest = np.delete(psi, np.arange(psi.shape[2])[spans[k]], axis=2).reshape(m, -1)
        out = rest @ rest.T
        del rest
        out += scale[k] * shared
        yield psi, out


def _kway_layout(dims: Sequence[tuple[int, int]], fac: KBlockFactors, m: int
                 ) -> tuple[list[slice], list[bool], list[float], int] | None:
    """Where the K-way piece's shared Gram serves: each block's columns of
    the K-way piece in its stacked pieces, whether its tests read the
    ``m x m`` Gram, its scale against the shared Gram and the block whose
    columns form it; None where no block reads it."""
    K = len(dims)
    full = tuple(range(K))
    if K < 3 or fac.tests is not None or full not in fac.scales:
        return None
    spans, wide = [], []
    for k, (n_k, d_k) in enumerate(dims):
        cuts = np.cumsum([0, *_piece_columns(fac, k, d_k)])
        at = _block_pieces(fac, k).index(full)
        spans.append(slice(int(cuts[at]), int(cuts[at + 1])))
        kway = n_k * (spans[k].stop - spans[k].start)
        wide.append(m * (kway / K + n_k * d_k - kway + d_k) < (n_k * d_k) ** 2)
    s2 = fac.scales[full]
    scale = [float(fac.weights[(full, k)]) / (s2 if s2 > 0 else 1.0) for k in range(K)]
    ref = int(np.argmax(scale))
    if scale[ref] <= 0 or not any(wide):
        return None
    return spans, wide, scale, ref


def _piece_columns(fac: KBlockFactors, k: int, d_total: int) -> list[int]:
    """The columns ``D_S`` of each piece containing block ``k`` in its
    stacked pieces (:func:`~jdr_stats.core.kestimate.stacked_pieces`) of
    ``d_total`` columns: ``q prod_{j in S, j != k} n_j``, or ``q s`` for a
    sketched K-way piece."""
    widths = [f.shape[0] for f in fac.factors]
    base = []
    for piece in _block_pieces(fac, k):
        if fac.tests is not None and len(piece) == len(widths) >= 3:
            base.append(fac.tests[0].shape[1])
        else:
            base.append(int(np.prod([widths[j] for j in piece if j != k])))
    q = d_total // sum(base)
    return [q * b for b in base]


def choose_block_rank(table: pd.DataFrame, alpha: float, n_k: int) -> int:
    """The first ``r`` whose test does not reject at ``alpha`` (``n_k`` when
    every test rejects)."""
    for r, p in zip(table.index, table["pvalue"], strict=True):
        if not p < alpha:
            return int(r)
    return n_k
