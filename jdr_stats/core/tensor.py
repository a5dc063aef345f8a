"""Cross-moment tensors of K whitened blocks: unfoldings, mode Grams, HOSVD.

Rows are the whitened, centred blocks ``z_1 .. z_K`` (``(m, n_k)`` each)
and the centred response ``Y`` (``(m, q)``).  For a set ``S`` of blocks
(a *piece*) the cross moment is the tensor

``P_S = (1/m) sum_i Y_i o z_i,s1 o ... o z_i,sJ``   (shape ``(q, n_s1, ..., n_sJ)``),

the response first, as the two-block ``(q, n1, n2)`` stack.  Its mode
unfolding over block ``k`` has ``n_k`` rows and ``D = q prod_{j in S, j != k}
n_j`` columns, and its Gram matrix needs no tensor:

``P_(k) P_(k)^T = (1/m^2) Z_k^T G Z_k``,
``G = (Y Y^T) * prod_{j in S, j != k} (Z_j Z_j^T)``  (entrywise products, m x m),

so the HOSVD factor of block ``k`` costs ``O(m^2 sum n_j)`` by the Gram
(:func:`mode_gram_rows`) or ``O(m q prod n_j)`` by the tensor
(:func:`cross_tensor`); the two give the same matrix to rounding.  Theory:
docs/theory/k_blocks.md.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from itertools import combinations

import numpy as np

__all__ = [
    "cross_tensor",
    "hermite_corrected",
    "hosvd_factors",
    "mode_gram_rows",
    "mode_gram_tensor",
    "unfold",
]


def _as_2d(y: np.ndarray) -> np.ndarray:
    return y[:, None] if y.ndim == 1 else y


def cross_tensor(y: np.ndarray, zs: Sequence[np.ndarray]) -> np.ndarray:
    """``(1/m) sum_i Y_i o z_i1 o ... o z_iJ``, shape ``(q, n_1, ..., n_J)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y, zs = rng.normal(size=50), [rng.normal(size=(50, n)) for n in (2, 3)]
    >>> t = cross_tensor(y, zs)
    >>> bool(np.allclose(t[0], zs[0].T @ (y[:, None] * zs[1]) / 50))
    True
    """
    y2 = _as_2d(np.asarray(y, float))
    m = y2.shape[0]
    out = y2  # (m, q)
    for z in zs:  # grow the row-wise Khatri-Rao product one mode at a time
        out = (out[:, :, None] * z[:, None, :]).reshape(m, -1)
    shape = (y2.shape[1], *(z.shape[1] for z in zs))
    return (out.sum(axis=0) / m).reshape(shape)


def unfold(t: np.ndarray, mode: int) -> np.ndarray:
    """Mode-``mode`` unfolding: ``t.shape[mode]`` rows, the other modes'
    entries (in their order) as columns.

    Examples
    --------
    >>> unfold(np.arange(24.0).reshape(2, 3, 4), 1).shape
    (3, 8)
    """
    return np.moveaxis(t, mode, 0).reshape(t.shape[mode], -1)


def mode_gram_tensor(t: np.ndarray, mode: int) -> np.ndarray:
    """``T_(mode) T_(mode)^T`` from the tensor itself."""
    u = unfold(t, mode)
    return u @ u.T


def mode_gram_rows(y: np.ndarray, zs: Sequence[np.ndarray], k: int,
                   row_gram: np.ndarray | None = None) -> np.ndarray:
    """``P_(k) P_(k)^T`` of the piece of the blocks ``zs`` over block ``k``
    (index in ``zs``), by the ``m x m`` Gram (no tensor formed).

    ``row_gram``, when given, is ``G`` itself (the entrywise product of the
    response's and the other blocks' row Gram matrices).
    """
    m = zs[k].shape[0]
    g = piece_row_gram(y, [z for j, z in enumerate(zs) if j != k]) if row_gram is None \
        else row_gram
    zk = zs[k]
    return zk.T @ (g @ zk) / m**2


def piece_row_gram(y: np.ndarray, zs: Sequence[np.ndarray]) -> np.ndarray:
    """``(Y Y^T) * prod_j (Z_j Z_j^T)``: the inner products of the rows'
    ``Y_i o z_i1 o ... o z_iJ`` (``m x m``)."""
    y2 = _as_2d(np.asarray(y, float))
    g = y2 @ y2.T
    for z in zs:
        g *= z @ z.T
    return g


def hosvd_factors(gram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All left singular vectors (columns, by decreasing singular value) and
    the squared singular values of a matrix whose Gram is ``gram``.

    Signs: each column's entry of largest magnitude positive (the package's
    convention), so the factor is a function of ``gram`` alone.
    """
    evals, vecs = np.linalg.eigh((gram + gram.T) / 2)
    order = np.argsort(evals)[::-1]
    evals, vecs = np.clip(evals[order], 0.0, None), vecs[:, order]
    big = np.argmax(np.abs(vecs), axis=0)
    signs = np.sign(vecs[big, np.arange(vecs.shape[1])])
    signs[signs == 0] = 1.0
    return vecs * signs, evals


def hermite_corrected(y: np.ndarray, zs: Sequence[np.ndarray],
                      cross_cov: dict[tuple[int, int], np.ndarray]) -> np.ndarray:
    """The K-way cross moment with the Hermite corrections of correlated
    blocks: ``E[Y He(z_1, ..., z_K)]``.

    ``cross_cov[(a, b)]`` (``a < b``) is the covariance ``S_ab`` of blocks
    ``a`` and ``b`` (whitened: each block's own covariance the identity).
    For a Gaussian design the multivariate Hermite tensor with one index per
    block is ``sum over partial matchings pi of the blocks of
    (-1)^{|pi|} (o_{(a,b) in pi} S_ab) o (o_{c unmatched} z_c)``, so its
    y-moment subtracts ``S_ab o E[Y o z_c ...]`` for every matched pair
    (the response centred, so complete matchings add ``E[Y] = 0``).
    docs/theory/k_blocks.md, section "Correlated blocks".
    """
    y2 = _as_2d(np.asarray(y, float))
    K = len(zs)
    letters = string.ascii_letters
    if K + 1 > len(letters):
        raise ValueError(f"too many blocks for the Hermite correction: {K}")
    out = cross_tensor(y2, zs)
    target = "Q" + "".join(letters[j] for j in range(K))
    for pi in _partial_matchings(list(range(K))):
        if not pi:
            continue
        free = sorted(set(range(K)) - {a for p in pi for a in p})
        if not free:
            continue  # E[Y] = 0: the response is centred
        lower = cross_tensor(y2, [zs[c] for c in free])
        operands = [lower] + [cross_cov[p] for p in pi]
        subs = ["Q" + "".join(letters[c] for c in free)] + \
            [letters[a] + letters[b] for a, b in pi]
        out = out + (-1) ** len(pi) * np.einsum(",".join(subs) + "->" + target, *operands)
    return out


def _partial_matchings(items: list[int]) -> list[list[tuple[int, int]]]:
    """Every set of disjoint pairs of ``items`` (the empty one included)."""
    if len(items) < 2:
        return [[]]
    first, rest = items[0], items[1:]
    out = list(_partial_matchings(rest))  # first unmatched
    for j, other in enumerate(rest):
        remaining = rest[:j] + rest[j + 1:]
        out += [[(first, other), *pi] for pi in _partial_matchings(remaining)]
    return out


def pieces(K: int) -> tuple[tuple[int, ...], ...]:
    """The pieces of a K-block design: every pair of blocks, then all K
    together when ``K >= 3`` (for ``K = 2`` the pair is the K-way piece)."""
    pairs = tuple(combinations(range(K), 2))
    return pairs if K == 2 else (*pairs, tuple(range(K)))
