"""K >= 3 blocks: from the cross-moment pieces to one basis per block.

Block ``k``'s subspace is read from every piece it belongs to (its ``K - 1``
pairs and the K-way tensor, :func:`~jdr_stats.core.tensor.pieces`; with
``main_effects``, also its first moment ``E[Y o z_k]``, a piece of one
block, ``K = 2`` included).  Each
piece ``S`` is first scaled to unit per-entry noise under the null of no
association, ``s_S^2 = mean_i(|Y_i|^2 prod_{j in S} |z_ij|^2) / (m N_S)``
(``N_S = q prod_{j in S} n_j`` entries), then its mode-k Gram enters block
``k``'s combined Gram with the weight ``c_S`` of the weighting rule:

- ``"unit"``: ``c_S = 1`` (the HOSVD of all pieces side by side);
- ``"sqrt"``: ``c_S = D_S^{-1/2}``, ``D_S = N_S / n_k`` the columns of the
  unfolding: each piece's noise *fluctuation* (of order ``sqrt(n_k D_S)``)
  is the same, so a piece with many columns (the K-way tensor) does not
  drown a pairwise direction, nor the reverse;
- ``"columns"``: ``c_S = 1 / D_S`` (each piece's noise mean the same).

Block ``k``'s basis is the leading eigenvectors of
``G_k = sum_{S containing k} c_S / s_S^2 * P_S(k) P_S(k)^T``.  The rule
and its study: docs/theory/k_blocks.md and ``studies/study_k_blocks.py``.
Numerics only: the caller whitens, centres and chooses the route: the
pieces as tensors, their mode Grams from ``m x m`` row Grams, or (route
``"sketch"``) the pairs as tensors and the K-way piece through its
Khatri-Rao sketch (:func:`~jdr_stats.core.tensor.mode_sketches`), whose
``Y_k Y_k^T / s`` stands for the mode Gram (unbiased over the test vectors;
exact for a complete set of them).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np

from .tensor import (
    cross_tensor,
    hermite_corrected,
    hosvd_factors,
    mode_gram_tensor,
    mode_sketches,
    piece_row_gram,
    pieces,
    unfold,
)

__all__ = ["KBlockFactors", "Weighting", "block_factors", "factors_from_pieces", "piece_scale",
           "piece_sums", "piece_weight", "stacked_pieces"]

Weighting = Literal["unit", "sqrt", "columns"]
Route = Literal["tensor", "gram", "sketch"]
Piece = tuple[int, ...]


@dataclass(frozen=True)
class KBlockFactors:
    """Every block's factor from the combined pieces.

    Attributes
    ----------
    factors : tuple of ndarray
        Block ``k``'s ``n_k x n_k`` orthogonal factor, columns by decreasing
        eigenvalue of its combined Gram (the first ``r_k`` span the estimate,
        the rest its complement).
    values : tuple of ndarray
        The eigenvalues of each block's combined Gram (unit-noise units:
        about ``sum_S c_S D_S`` per direction under no association).
    scales : dict of piece to float
        ``s_S^2``, the per-entry null noise variance of each piece.
    weights : dict of (piece, k) to float
        ``c_S`` of piece ``S`` in block ``k``'s Gram.
    grams : dict of (piece, k) to ndarray
        Each piece's mode-k Gram, scaled to unit noise (``/ s_S^2``).
    tests : tuple of ndarray or None
        The sketched route's test matrices (block ``j``'s ``n_j x s``), held
        so that every recomputation (the rank tests' influences) sketches
        the K-way piece with the same vectors; None on the exact routes.
    """

    factors: tuple[np.ndarray, ...]
    values: tuple[np.ndarray, ...]
    scales: dict[Piece, float]
    weights: dict[tuple[Piece, int], float]
    grams: dict[tuple[Piece, int], np.ndarray]
    tests: tuple[np.ndarray, ...] | None = None


def piece_scale(y: np.ndarray, zs: Sequence[np.ndarray], piece: Piece,
                w: np.ndarray | None = None) -> float:
    """``s_S^2``: the mean per-entry variance of piece ``S`` under no
    association, ``mean_i(|Y_i|^2 prod_j |z_ij|^2) / (m N_S)`` (the mean
    weighted by the case weights ``w`` when given, ``m`` their sum)."""
    y2 = y[:, None] if y.ndim == 1 else y
    return _scale_of(np.sum(y2**2, axis=1), {j: np.sum(zs[j] ** 2, axis=1) for j in piece},
                     [z.shape[1] for z in zs], y2.shape[1], piece, w)


def _scale_of(energy: np.ndarray, norms: Mapping[int, np.ndarray], widths: Sequence[int],
              q: int, piece: Piece, w: np.ndarray | None) -> float:
    """:func:`piece_scale` from the rows' ``|Y_i|^2`` (``energy``) and each
    block's ``|z_ij|^2`` (``norms[j]``), computed once for every piece."""
    m = energy.shape[0]
    prod = energy
    n_entries = float(q)
    for j in piece:
        prod = prod * norms[j]
        n_entries *= widths[j]
    if w is None:
        return float(prod.mean() / (m * n_entries))
    wsum = float(np.sum(w))
    return float((w @ prod) / wsum / (wsum * n_entries))


def piece_weight(weighting: Weighting, columns: int) -> float:
    """``c_S`` of a piece whose unfolding has ``columns`` columns."""
    if weighting == "unit":
        return 1.0
    if weighting == "sqrt":
        return 1.0 / np.sqrt(columns)
    if weighting == "columns":
        return 1.0 / columns
    raise ValueError(f'weighting must be "unit", "sqrt" or "columns"; got {weighting!r}')


def block_factors(
    y: np.ndarray,
    zs: Sequence[np.ndarray],
    *,
    route: Route = "tensor",
    weighting: Weighting = "sqrt",
    cross_cov: dict[tuple[int, int], np.ndarray] | None = None,
    w: np.ndarray | None = None,
    main_effects: bool = False,
    tests: Sequence[np.ndarray] | None = None,
) -> KBlockFactors:
    """Every block's factor from the whitened, centred rows.

    Parameters
    ----------
    y : ndarray (m,) or (m, q)
        The centred (for ``q > 1`` whitened) response.
    zs : list of ndarray (m, n_k)
        The whitened, centred blocks.
    route : {"tensor", "gram", "sketch"}
        Form each piece's tensor (``O(m q prod n_j)``), or only its mode
        Grams through ``m x m`` row Grams (``O(m^2 sum n_j)``), or the
        pairs' tensors and the K-way piece's Khatri-Rao sketch with
        ``tests`` (``O(m s sum n_j)``, memory independent of ``m``).
    weighting : {"unit", "sqrt", "columns"}
        The pieces' weights ``c_S`` (module docstring).
    cross_cov : dict, optional
        The blocks' cross covariances ``S_ab`` when the whitening is joint:
        the K-way piece is then the Hermite-corrected moment
        (:func:`~jdr_stats.core.tensor.hermite_corrected`; tensor or sketched route).
    w : ndarray (m,), optional
        Case weights: every moment a weighted mean (frequency weights are
        copies of rows).
    main_effects : bool
        Add each block's first moment ``E[Y o z_k]`` (``n_k x q``) as one
        more piece of its Gram (docs/theory/k_blocks.md, section "Main
        effects pooled").
    tests : list of ndarray (n_k, s), optional
        The sketch's test matrices (:func:`~jdr_stats.core.tensor.sketch_tests`);
        needed by, and only by, ``route="sketch"``.
    """
    K = len(zs)
    yraw = y[:, None] if y.ndim == 1 else y
    m, q = yraw.shape
    # weighted means: the response times m w_i / W in every piece
    y2 = yraw if w is None else yraw * (m * w / np.sum(w))[:, None]
    widths = [z.shape[1] for z in zs]
    if cross_cov is not None and route == "gram" and K >= 3:
        raise ValueError("the Hermite-corrected K-way moment of a joint whitening needs "
                         "the tensor or the sketched route")
    if route == "sketch" and tests is None:
        raise ValueError('route="sketch" needs the test matrices (tests=...)')
    if route == "sketch" and K < 3:
        route = "tensor"  # no K-way piece beyond the pairs: nothing to sketch
    scales: dict[Piece, float] = {}
    tensors: dict[Piece, np.ndarray] = {}
    row_grams: dict[tuple[Piece, int], np.ndarray] = {}
    sketched: dict[tuple[Piece, int], np.ndarray] = {}
    energy = np.sum(yraw**2, axis=1)
    norms = {j: np.sum(z**2, axis=1) for j, z in enumerate(zs)}
    for piece in pieces(K, main_effects):
        scales[piece] = _scale_of(energy, norms, widths, q, piece, w)
        sub = [zs[j] for j in piece]
        if route == "sketch" and len(piece) == K:
            assert tests is not None
            for k, sk in enumerate(_sketch(y2, zs, tests, cross_cov)):
                sketched[(piece, k)] = sk @ sk.T
            continue
        if route in ("tensor", "sketch"):
            if cross_cov is not None and len(piece) >= 3:
                tensors[piece] = hermite_corrected(y2, sub, _piece_cov(cross_cov, piece))
            else:
                tensors[piece] = cross_tensor(y2, sub)
            continue
        for pos, k in enumerate(piece):
            rg = piece_row_gram(y2, [z for j, z in enumerate(sub) if j != pos])
            row_grams[(piece, k)] = sub[pos].T @ (rg @ sub[pos]) / m**2
    if route == "tensor":
        return factors_from_pieces(tensors, scales, widths, q, weighting=weighting)
    if route == "sketch":
        assert tests is not None
        grams = {(piece, k): mode_gram_tensor(t, pos + 1)
                 for piece, t in tensors.items() for pos, k in enumerate(piece)}
        return replace(_combine({**grams, **sketched}, scales, widths, q, weighting),
                       tests=tuple(np.asarray(t, float) for t in tests))
    return _combine(row_grams, scales, widths, q, weighting)


def _sketch(y2: np.ndarray, zs: Sequence[np.ndarray], tests: Sequence[np.ndarray],
            cross_cov: dict[tuple[int, int], np.ndarray] | None) -> list[np.ndarray]:
    """The K-way piece's mode sketches scaled to stand for its unfoldings:
    ``Y_k / sqrt(s)`` as ``n_k x q s`` (``Y_k Y_k^T / s`` its mode Gram's
    estimate; module docstring)."""
    size = tests[0].shape[1]
    return [sk.reshape(sk.shape[0], -1) / np.sqrt(size)
            for sk in mode_sketches(y2, zs, tests, cross_cov=cross_cov)]


def _piece_cov(cross_cov: dict[tuple[int, int], np.ndarray],
               piece: Piece) -> dict[tuple[int, int], np.ndarray]:
    """The cross covariances of a piece's blocks, by position in the piece."""
    return {(a, b): cross_cov[(piece[a], piece[b])]
            for a in range(len(piece)) for b in range(a + 1, len(piece))}


def factors_from_pieces(tensors: dict[Piece, np.ndarray], scales: dict[Piece, float],
                        widths: Sequence[int], q: int, *,
                        weighting: Weighting = "sqrt",
                        tests: Sequence[np.ndarray] | None = None) -> KBlockFactors:
    """Every block's factor from the pieces themselves: ``tensors[S]`` the
    (Hermite-corrected) cross moment ``P_S`` of shape ``(q, n_s1, ...)``,
    ``scales[S]`` its ``s_S^2``.  The tensor route of :func:`block_factors`,
    and the streamed fit's (its pieces are sums over rows).  With ``tests``
    the K-way piece's entry is its mode sketches instead, flattened and
    concatenated in block order (:func:`piece_sums` with the same tests)."""
    K = len(widths)
    grams: dict[tuple[Piece, int], np.ndarray] = {}
    for piece, t in tensors.items():
        if tests is not None and len(piece) == K >= 3:
            size = tests[0].shape[1]
            parts = np.split(t, np.cumsum([n * q * size for n in widths])[:-1])
            for k, part in enumerate(parts):
                sk = part.reshape(widths[k], -1) / np.sqrt(size)
                grams[(piece, k)] = sk @ sk.T
            continue
        for pos, k in enumerate(piece):
            grams[(piece, k)] = mode_gram_tensor(t, pos + 1)
    fac = _combine(grams, scales, widths, q, weighting)
    if tests is None or K < 3:
        return fac
    return replace(fac, tests=tuple(np.asarray(w, float) for w in tests))


def _combine(raw: dict[tuple[Piece, int], np.ndarray], scales: dict[Piece, float],
             widths: Sequence[int], q: int, weighting: Weighting) -> KBlockFactors:
    """Scale each piece's mode Gram to unit noise, weight it and add the
    Grams of each block; its factor the eigenvectors of the sum.  The
    pieces are the keys of ``scales``."""
    K = len(widths)
    weights: dict[tuple[Piece, int], float] = {}
    grams: dict[tuple[Piece, int], np.ndarray] = {}
    for piece in scales:
        s2 = scales[piece]
        for k in piece:
            columns = q * int(np.prod([widths[j] for j in piece if j != k]))
            weights[(piece, k)] = piece_weight(weighting, columns)
            g = raw[(piece, k)]
            grams[(piece, k)] = g / s2 if s2 > 0 else g
    factors, values = [], []
    for k in range(K):
        total = np.zeros((widths[k], widths[k]))
        for (piece, j), g in grams.items():
            if j == k:
                total += weights[(piece, k)] * g
        f, v = hosvd_factors(total)
        factors.append(f)
        values.append(v)
    return KBlockFactors(tuple(factors), tuple(values), scales, weights, grams)


def stacked_pieces(
    y: np.ndarray,
    zs: Sequence[np.ndarray],
    fac: KBlockFactors,
    *,
    cross_cov: dict[tuple[int, int], np.ndarray] | None = None,
    w: np.ndarray | None = None,
) -> list[np.ndarray]:
    """Each block's pieces side by side, ``M_k = [sqrt(c_S) / s_S P_S(k)]_S``
    (``n_k x sum_S D_S``; ``M_k M_k^T`` is block ``k``'s combined Gram), with
    the scales ``s_S`` and weights ``c_S`` of ``fac`` held fixed.  Tensor
    or sketched route (the per-row influences of the rank tests re-form it on
    subsamples); arguments as :func:`block_factors`.  A sketched fit
    (``fac.tests``) holds its K-way piece as the sketch ``Y_k / sqrt(s)``
    with the same test vectors."""
    K = len(zs)
    yraw = y[:, None] if y.ndim == 1 else y
    m = yraw.shape[0]
    y2 = yraw if w is None else yraw * (m * w / np.sum(w))[:, None]
    out: list[list[np.ndarray]] = [[] for _ in range(K)]
    for piece in fac.scales:  # the fit's pieces, in its order
        sub = [zs[j] for j in piece]
        if fac.tests is not None and len(piece) == K >= 3:
            s2 = fac.scales[piece]
            for k, sk in enumerate(_sketch(y2, zs, fac.tests, cross_cov)):
                c = fac.weights[(piece, k)]
                out[k].append(sk * (np.sqrt(c / s2) if s2 > 0 else np.sqrt(c)))
            continue
        if cross_cov is not None and len(piece) >= 3:
            t = hermite_corrected(y2, sub, _piece_cov(cross_cov, piece))
        else:
            t = cross_tensor(y2, sub)
        s2 = fac.scales[piece]
        for pos, k in enumerate(piece):
            c = fac.weights[(piece, k)]
            out[k].append(unfold(t, pos + 1) * (np.sqrt(c / s2) if s2 > 0 else np.sqrt(c)))
    return [np.hstack(parts) for parts in out]


def piece_sums(
    y: np.ndarray,
    zs: Sequence[np.ndarray],
    *,
    cross_cov: dict[tuple[int, int], np.ndarray] | None = None,
    w: np.ndarray | None = None,
    main_effects: bool = False,
    tests: Sequence[np.ndarray] | None = None,
) -> tuple[dict[Piece, np.ndarray], dict[Piece, float]]:
    """Sums over one chunk of rows of what the pieces are means of.

    ``y`` the response centred at the mean of *all* rows, ``zs`` the
    chunk's whitened rows (the whitening of all rows), ``w`` its case
    weights.  Returns, for each piece ``S``, ``sum_i w_i Y_i o z_is1 o ...``
    (Hermite-corrected with the blocks' ``cross_cov`` when given, which is
    linear in the rows once ``cross_cov`` is fixed) and
    ``sum_i w_i |Y_i|^2 prod_{j in S} |z_ij|^2``.  Added over disjoint
    chunks and divided by the total weight ``W`` they are the pieces of
    :func:`block_factors`' tensor route and ``W N_S s_S^2``
    (:func:`factors_from_pieces`).  With ``tests`` (the sketched route) the
    K-way piece's sum is that of its mode sketches
    (:func:`~jdr_stats.core.tensor.mode_sketches`), flattened and
    concatenated in block order: linear in the rows as well.
    """
    yraw = y[:, None] if y.ndim == 1 else y
    k = yraw.shape[0]
    y2 = yraw if w is None else yraw * w[:, None]
    energy = np.sum(yraw**2, axis=1)
    tensors: dict[Piece, np.ndarray] = {}
    norms: dict[Piece, float] = {}
    for piece in pieces(len(zs), main_effects):
        sub = [zs[j] for j in piece]
        if k == 0 and tests is not None and len(piece) == len(zs) >= 3:
            tensors[piece] = np.zeros(yraw.shape[1] * tests[0].shape[1]
                                      * sum(z.shape[1] for z in zs))
            norms[piece] = 0.0
            continue
        if k == 0:
            tensors[piece] = np.zeros((yraw.shape[1], *(z.shape[1] for z in sub)))
            norms[piece] = 0.0
            continue
        if tests is not None and len(piece) == len(zs) >= 3:
            tensors[piece] = np.concatenate([
                sk.ravel() for sk in mode_sketches(y2, zs, tests, cross_cov=cross_cov)]) * k
        elif cross_cov is not None and len(piece) >= 3:
            tensors[piece] = hermite_corrected(y2, sub, _piece_cov(cross_cov, piece)) * k
        else:
            tensors[piece] = cross_tensor(y2, sub) * k
        prod = energy.copy()
        for z in sub:
            prod *= np.sum(z**2, axis=1)
        norms[piece] = float(prod.sum() if w is None else w @ prod)
    return tensors, norms
