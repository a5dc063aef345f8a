"""K >= 3 blocks: the variables a sparse fit keeps in each block.

The K-block analogue of the paper's three-step projection (section 3;
derivation and assumptions: docs/theory/k_blocks.md, section "Sparse
fits").  Every piece ``P_S`` (a cross-moment tensor of shape
``(q, n_s1, ..., n_sJ)``, the response first) is put in *unit-free
original coordinates* in every block mode, ``T_S = P_S x_j A_j`` with
``A_j = diag(Sigma_j^{-1})^{-1/2} C_j^{-T}`` (block ``j``'s whitening
``Sigma_j = C_j C_j^T``: entries of ``Sigma_j^{-1}(x_j - mean_j)`` in units
of the variable's partial standard deviation), scaled to unit null noise
``1 / s_S`` and weighted ``c_S`` in block ``k``'s scores, as in the dense
combined Gram.  Under the model the slices of ``T_S`` along an inactive
variable of any block are zero.  Then for every block ``k``:

1. (screen; the paper's steps 2.1-2.2 with ``k`` in the role of block b)
   in each piece containing ``k``, keep the ``s_j`` largest entries of
   every mode-``j`` fibre for each other block ``j`` of the piece (in the
   piece's order); block ``k``'s score of variable ``i`` is
   ``sum_S c_S ||slice i of the thresholded T_S||^2``; keep the ``s_k``
   largest;
2. (select; the paper's step 2.3 for every block) the same score on the
   *unthresholded* pieces restricted, in every other block's mode, to that
   block's variables kept by step 1; keep the ``s_k`` largest.

Numerics only: the caller forms the pieces, the scales and the weights.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

__all__ = ["mode_product", "sparse_supports", "unit_free_pieces"]

Piece = tuple[int, ...]


def mode_product(t: np.ndarray, mat: np.ndarray, axis: int) -> np.ndarray:
    """``t`` with ``mat`` applied along ``axis`` (``t x_axis mat``).

    Examples
    --------
    >>> t = np.arange(6.0).reshape(1, 2, 3)
    >>> mode_product(t, np.diag([1.0, 2.0]), 1)[0].tolist()
    [[0.0, 1.0, 2.0], [6.0, 8.0, 10.0]]
    """
    return np.moveaxis(np.tensordot(mat, t, axes=(1, axis)), 0, axis)


def unit_free_pieces(tensors: Mapping[Piece, np.ndarray], ops: Sequence[np.ndarray],
                     scales: Mapping[Piece, float]) -> dict[Piece, np.ndarray]:
    """``T_S = P_S x_j A_j / s_S`` for every piece (``ops[j] = A_j``, block
    ``j``'s map from whitened to unit-free original coordinates; the
    response's mode, axis 0, is left as it is)."""
    out = {}
    for piece, t in tensors.items():
        u = np.asarray(t, float)
        for pos, j in enumerate(piece):
            u = mode_product(u, ops[j], pos + 1)
        s2 = float(scales[piece])
        out[piece] = u / np.sqrt(s2) if s2 > 0 else u
    return out


def _top(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest values, ascending (ties: lower index)."""
    order = np.argsort(-values, kind="stable")
    return np.sort(order[:k])


def _threshold(t: np.ndarray, axis: int, keep: int) -> np.ndarray:
    """Keep the ``keep`` largest magnitudes of every fibre along ``axis``."""
    n = t.shape[axis]
    if keep >= n:
        return t
    idx = np.argpartition(-np.abs(t), keep - 1, axis=axis)
    idx = np.take(idx, np.arange(keep), axis=axis)
    mask = np.zeros(t.shape, dtype=bool)
    np.put_along_axis(mask, idx, True, axis=axis)
    return np.where(mask, t, 0.0)


def _slice_energy(t: np.ndarray, axis: int) -> np.ndarray:
    """``||slice i||^2`` along ``axis`` for every ``i``."""
    return np.sum(np.moveaxis(t, axis, 0).reshape(t.shape[axis], -1) ** 2, axis=1)


def _block_score(pieces: Mapping[Piece, np.ndarray],
                 weights: Mapping[tuple[Piece, int], float], k: int,
                 reduce: Callable[[np.ndarray, int, int], np.ndarray]) -> np.ndarray:
    """Block ``k``'s score: the weighted slice energies of every piece holding
    ``k``, each piece's other modes first reduced by ``reduce(u, axis, j)``."""
    score = None
    for piece, t in pieces.items():
        if k not in piece:
            continue
        u = t
        for pos, j in enumerate(piece):
            if j != k:
                u = reduce(u, pos + 1, j)
        e = weights[(piece, k)] * _slice_energy(u, piece.index(k) + 1)
        score = e if score is None else score + e
    assert score is not None
    return score


def sparse_supports(
    pieces: Mapping[Piece, np.ndarray],
    weights: Mapping[tuple[Piece, int], float],
    sparsity: Sequence[int],
) -> tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]:
    """Every block's kept variables by the two steps of the module docstring.

    Parameters
    ----------
    pieces : dict of piece to ndarray
        The unit-free, scaled pieces ``T_S`` (:func:`unit_free_pieces`),
        shape ``(q, n_s1, ...)``.
    weights : dict of (piece, k) to float
        ``c_S`` of piece ``S`` in block ``k``'s score (the dense fit's).
    sparsity : sequence of int
        ``s_k`` per block, ``1 <= s_k <= n_k``.

    Returns
    -------
    supports, screen_scores, scores : lists of ndarray
        Each block's kept variables (ascending indices), its step-1 and its
        step-2 scores.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> t = 0.01 * rng.normal(size=(1, 4, 5, 6)); t[0, 1, 2, 3] = 1.0
    >>> p = {(0, 1, 2): t}
    >>> w = {((0, 1, 2), k): 1.0 for k in range(3)}
    >>> [s.tolist() for s in sparse_supports(p, w, [1, 1, 1])[0]]
    [[1], [2], [3]]
    """
    K = len(sparsity)
    # step 1: each block scored with the other blocks' modes thresholded to
    # their s_j largest entries; step 2: restricted to their screened variables
    screen_scores = [_block_score(pieces, weights, k, lambda u, ax, j: _threshold(
        u, ax, int(sparsity[j]))) for k in range(K)]
    screen = [_top(score, int(sparsity[k])) for k, score in enumerate(screen_scores)]
    scores = [_block_score(pieces, weights, k, lambda u, ax, j: np.take(u, screen[j], axis=ax))
              for k in range(K)]
    supports = [_top(score, int(sparsity[k])) for k, score in enumerate(scores)]
    return supports, screen_scores, scores
