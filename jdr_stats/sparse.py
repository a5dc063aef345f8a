"""The three-step sparse projection of the paper (section 3, steps 2.1-2.3).

Given an ``n1 x n2`` matrix ``X`` and sparsity levels ``(s1, s2)``:

2.1  keep the ``s1`` entries of largest magnitude in each column,
2.2  keep the ``s2`` columns of largest Euclidean norm,
2.3  keep the ``s1`` rows of largest Euclidean norm.

The kept rows and columns are the selected variables of block a and block b.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._validation import check_int

__all__ = ["SparseProjection", "three_step_projection", "check_sparsity"]


@dataclass(frozen=True)
class SparseProjection:
    """Result of the three-step projection.

    Attributes
    ----------
    rows : ndarray of int
        Selected row indices (block a), ascending.
    cols : ndarray of int
        Selected column indices (block b), ascending.
    projected : ndarray
        ``X_3 = P_3 P_2 P_1 X``, zero outside the kept entries.
    """

    rows: np.ndarray
    cols: np.ndarray
    projected: np.ndarray


def _top(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the ``k`` largest values (ties broken by lower index)."""
    order = np.argsort(-values, kind="stable")
    return np.sort(order[:k])


def three_step_projection(x: np.ndarray, s1: int, s2: int) -> SparseProjection:
    """Apply steps 2.1-2.3 of section 3 of the paper to ``x``.

    Parameters
    ----------
    x : ndarray, shape (n1, n2)
    s1, s2 : int
        Rows and columns to keep, ``1 <= s1 <= n1``, ``1 <= s2 <= n2``.

    Returns
    -------
    SparseProjection

    Examples
    --------
    >>> import numpy as np
    >>> x = np.zeros((4, 3)); x[1, 0] = 2.0; x[2, 2] = -1.0; x[3, 1] = 0.1
    >>> p = three_step_projection(x, 2, 2)
    >>> p.rows.tolist(), p.cols.tolist()
    ([1, 2], [0, 2])
    """
    n1, n2 = x.shape
    check_sparsity((s1, s2), n1, n2, rank=1)
    absx = np.abs(x)
    # 2.1: s1 largest entries per column (argpartition on -|x| per column).
    if s1 < n1:
        keep = np.argpartition(-absx, s1 - 1, axis=0)[:s1]
        mask = np.zeros_like(x, dtype=bool)
        mask[keep, np.arange(n2)[None, :]] = True
        x1 = np.where(mask, x, 0.0)
    else:
        x1 = x.copy()
    # 2.2: s2 columns of largest norm.
    cols = _top(np.linalg.norm(x1, axis=0), s2)
    x2 = np.zeros_like(x1)
    x2[:, cols] = x1[:, cols]
    # 2.3: s1 rows of largest norm.
    rows = _top(np.linalg.norm(x2, axis=1), s1)
    x3 = np.zeros_like(x2)
    x3[rows] = x2[rows]
    return SparseProjection(rows=rows, cols=cols, projected=x3)


def check_sparsity(sparsity: object, n1: int, n2: int, *, rank: int) -> tuple[int, int]:
    """Validate ``sparsity=(s1, s2)``: integers with ``rank <= s_k <= n_k``."""
    if not isinstance(sparsity, (tuple, list)) or len(sparsity) != 2:
        raise ValueError(
            f"sparsity must be a pair (s1, s2) of integers; got {sparsity!r}"
        )
    out = []
    for name, s, n in (("s1", sparsity[0], n1), ("s2", sparsity[1], n2)):
        s = check_int(s, f"sparsity {name}")
        if not rank <= s <= n:
            raise ValueError(
                f"sparsity {name} must be between the rank {rank} and the block's "
                f"{n} columns; got {int(s)}"
            )
        out.append(int(s))
    return out[0], out[1]
