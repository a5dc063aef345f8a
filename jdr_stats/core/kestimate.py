"""K >= 3 blocks: from the cross-moment pieces to one basis per block.

Block ``k``'s subspace is read from every piece it belongs to (its ``K - 1``
pairs and the K-way tensor, :func:`~jdr_stats.core.tensor.pieces`).  Each
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
Numerics only: the caller whitens, centres and chooses the route.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from .tensor import (
    cross_tensor,
    hermite_corrected,
    hosvd_factors,
    mode_gram_tensor,
    piece_row_gram,
    pieces,
    unfold,
)

__all__ = ["KBlockFactors", "Weighting", "block_factors", "piece_scale", "piece_weight",
           "stacked_pieces"]

Weighting = Literal["unit", "sqrt", "columns"]
Route = Literal["tensor", "gram"]
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
    """

    factors: tuple[np.ndarray, ...]
    values: tuple[np.ndarray, ...]
    scales: dict[Piece, float]
    weights: dict[tuple[Piece, int], float]
    grams: dict[tuple[Piece, int], np.ndarray]


def piece_scale(y: np.ndarray, zs: Sequence[np.ndarray], piece: Piece,
                w: np.ndarray | None = None) -> float:
    """``s_S^2``: the mean per-entry variance of piece ``S`` under no
    association, ``mean_i(|Y_i|^2 prod_j |z_ij|^2) / (m N_S)`` (the mean
    weighted by the case weights ``w`` when given, ``m`` their sum)."""
    y2 = y[:, None] if y.ndim == 1 else y
    m = y2.shape[0]
    prod = np.sum(y2**2, axis=1)
    n_entries = float(y2.shape[1])
    for j in piece:
        prod = prod * np.sum(zs[j] ** 2, axis=1)
        n_entries *= zs[j].shape[1]
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
) -> KBlockFactors:
    """Every block's factor from the whitened, centred rows.

    Parameters
    ----------
    y : ndarray (m,) or (m, q)
        The centred (for ``q > 1`` whitened) response.
    zs : list of ndarray (m, n_k)
        The whitened, centred blocks.
    route : {"tensor", "gram"}
        Form each piece's tensor (``O(m q prod n_j)``) or only its mode
        Grams through ``m x m`` row Grams (``O(m^2 sum n_j)``).
    weighting : {"unit", "sqrt", "columns"}
        The pieces' weights ``c_S`` (module docstring).
    cross_cov : dict, optional
        The blocks' cross covariances ``S_ab`` when the whitening is joint:
        the K-way piece is then the Hermite-corrected moment
        (:func:`~jdr_stats.core.tensor.hermite_corrected`; tensor route only).
    w : ndarray (m,), optional
        Case weights: every moment a weighted mean (frequency weights are
        copies of rows).
    """
    K = len(zs)
    yraw = y[:, None] if y.ndim == 1 else y
    m, q = yraw.shape
    # weighted means: the response times m w_i / W in every piece
    y2 = yraw if w is None else yraw * (m * w / np.sum(w))[:, None]
    widths = [z.shape[1] for z in zs]
    if cross_cov is not None and route != "tensor" and K >= 3:
        raise ValueError("the Hermite-corrected K-way moment of a joint whitening needs "
                         "the tensor route")
    scales: dict[Piece, float] = {}
    weights: dict[tuple[Piece, int], float] = {}
    grams: dict[tuple[Piece, int], np.ndarray] = {}
    for piece in pieces(K):
        s2 = piece_scale(yraw, zs, piece, w)
        scales[piece] = s2
        sub = [zs[j] for j in piece]
        if route == "tensor":
            if cross_cov is not None and len(piece) >= 3:
                cc = {(a, b): cross_cov[(piece[a], piece[b])]
                      for a in range(len(piece)) for b in range(a + 1, len(piece))}
                t = hermite_corrected(y2, sub, cc)
            else:
                t = cross_tensor(y2, sub)
        for pos, k in enumerate(piece):
            columns = q * int(np.prod([widths[j] for j in piece if j != k]))
            weights[(piece, k)] = piece_weight(weighting, columns)
            if route == "tensor":
                g = mode_gram_tensor(t, pos + 1)
            else:
                rg = piece_row_gram(y2, [z for j, z in enumerate(sub) if j != pos])
                g = sub[pos].T @ (rg @ sub[pos]) / m**2
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
    route only (the per-row influences of the rank tests re-form it on
    subsamples); arguments as :func:`block_factors`."""
    K = len(zs)
    yraw = y[:, None] if y.ndim == 1 else y
    m = yraw.shape[0]
    y2 = yraw if w is None else yraw * (m * w / np.sum(w))[:, None]
    out: list[list[np.ndarray]] = [[] for _ in range(K)]
    for piece in pieces(K):
        sub = [zs[j] for j in piece]
        if cross_cov is not None and len(piece) >= 3:
            cc = {(a, b): cross_cov[(piece[a], piece[b])]
                  for a in range(len(piece)) for b in range(a + 1, len(piece))}
            t = hermite_corrected(y2, sub, cc)
        else:
            t = cross_tensor(y2, sub)
        s2 = fac.scales[piece]
        for pos, k in enumerate(piece):
            c = fac.weights[(piece, k)]
            out[k].append(unfold(t, pos + 1) * (np.sqrt(c / s2) if s2 > 0 else np.sqrt(c)))
    return [np.hstack(parts) for parts in out]
