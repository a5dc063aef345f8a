"""The three-step sparse projection of the paper (section 3, steps 2.1-2.3).

Given an ``n1 x n2`` matrix ``X`` and sparsity levels ``(s1, s2)``:

2.1  keep the ``s1`` entries of largest magnitude in each column,
2.2  keep the ``s2`` columns of largest Euclidean norm,
2.3  keep the ``s1`` rows of largest Euclidean norm.

The kept rows and columns are the selected variables of block a and block b.

The standardized fit applies the steps to :func:`selection_matrix`, the
original-coordinate matrix ``M = Sigma_a^{-1} S Sigma_b^{-1}`` with each row
and column in units of the variable's partial standard deviation, so the
kept set does not depend on the units of the variables
(``docs/theory/support.md``).  :func:`check_support_sets` validates given
row and column sets (``fit(sparsity="auto")`` keeps the variables its tests
selected).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .core.moments import response_scale
from .runtime._validation import check_int

__all__ = [
    "SparseProjection",
    "check_sparsity",
    "check_support_sets",
    "selection_matrix",
    "three_step_projection",
]


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
    x : ndarray, shape (n1, n2) or (q, n1, n2)
        A stack of ``q`` matrices (a response of ``q`` columns) is projected
        through its unfoldings (:func:`_three_step_q`).
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
    if x.ndim == 3:
        return _three_step_q(x, s1, s2)
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
    unit = response_scale(x, limit=0)  # norms compared at unit size: no overflow
    cols = _top(np.linalg.norm(x1 * unit, axis=0), s2)
    x2 = np.zeros_like(x1)
    x2[:, cols] = x1[:, cols]
    # 2.3: s1 rows of largest norm.
    rows = _top(np.linalg.norm(x2 * unit, axis=1), s1)
    x3 = np.zeros_like(x2)
    x3[rows] = x2[rows]
    return SparseProjection(rows=rows, cols=cols, projected=x3)


def _three_step_q(x: np.ndarray, s1: int, s2: int) -> SparseProjection:
    """Steps 2.1-2.3 for a ``(q, n1, n2)`` stack ``X_1 .. X_q``, on its unfoldings.

    2.1 keeps the ``s1`` largest entries of each column of the mode-1
    unfolding ``[X_1 ... X_q]`` (each column ``k`` of each ``X_c``); 2.2
    keeps the ``s2`` variables of block b whose rows of the mode-2 unfolding
    ``[X_1^T ... X_q^T]`` have the largest norm; 2.3 the ``s1`` variables of
    block a whose rows of the mode-1 unfolding have the largest norm.  For
    ``q = 1`` these are the steps of :func:`three_step_projection`.
    """
    _, n1, n2 = x.shape
    check_sparsity((s1, s2), n1, n2, rank=1)
    x1 = x.copy()
    if s1 < n1:  # 2.1 on every column of every X_c (the mode-1 unfolding's columns)
        keep = np.argpartition(-np.abs(x), s1 - 1, axis=1)[:, :s1]
        mask = np.zeros_like(x, dtype=bool)
        np.put_along_axis(mask, keep, True, axis=1)
        x1 = np.where(mask, x, 0.0)
    unit = response_scale(x, limit=0)  # norms compared at unit size: no overflow
    cols = _top(np.sum((x1 * unit) ** 2, axis=(0, 1)), s2)
    x2 = np.zeros_like(x1)
    x2[:, :, cols] = x1[:, :, cols]
    rows = _top(np.sum((x2 * unit) ** 2, axis=(0, 2)), s1)
    x3 = np.zeros_like(x2)
    x3[:, rows] = x2[:, rows]
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


def selection_matrix(m_mat: np.ndarray, prec_a: np.ndarray, prec_b: np.ndarray) -> np.ndarray:
    """The unit-free matrix the standardized sparse fit selects from.

    ``T_jk = M_jk / sqrt((Sigma_a^{-1})_jj (Sigma_b^{-1})_kk)`` with
    ``M = Sigma_a^{-1} S Sigma_b^{-1}``: the entries of ``M`` with variable
    ``j`` of block a (``k`` of block b) measured in units of its partial
    standard deviation ``1 / sqrt((Sigma^{-1})_jj)``, the standard deviation
    of its residual on the rest of its block.

    Parameters
    ----------
    m_mat : ndarray (n1, n2)
        ``Sigma_a^{-1} S Sigma_b^{-1}``.
    prec_a, prec_b : ndarray (n1,), (n2,)
        The diagonals of ``Sigma_a^{-1}`` and ``Sigma_b^{-1}``.

    Notes
    -----
    Rescaling variable ``j`` of block a by ``c`` (``a -> D a``,
    ``D = diag(1, .., c, .., 1)``) maps ``Sigma_a`` to ``D Sigma_a D`` and
    ``S`` to ``D S``, so row ``j`` of ``M`` is divided by ``c`` and
    ``(Sigma_a^{-1})_jj`` by ``c^2``: ``T`` is unchanged.  A shift does not
    change ``S`` or ``Sigma``, and permuting the variables permutes the rows
    of ``T``.  For whitened blocks (``Sigma = I``, the setting of section 3
    of the paper) ``T = M = X_lin``: the three steps are the paper's.  The
    rows of inactive variables of ``M`` are zero under the model, so they
    are zero in ``T`` too.

    Examples
    --------
    >>> import numpy as np
    >>> m = np.array([[2.0, 0.0], [0.0, 1.0]])
    >>> selection_matrix(m, np.array([4.0, 1.0]), np.array([1.0, 1.0]))
    array([[1., 0.],
           [0., 1.]])
    """
    return m_mat / np.sqrt(prec_a)[:, None] / np.sqrt(prec_b)[None, :]


def check_support_sets(
    support: object, n1: int, n2: int, *, rank: int
) -> tuple[np.ndarray, np.ndarray]:
    """Validate given variable sets ``(rows, cols)``: distinct in-range indices,
    at least ``rank`` of each block; returned sorted."""
    if not isinstance(support, (tuple, list)) or len(support) != 2:
        raise ValueError(f"support must be a pair (rows, cols) of index arrays; got {support!r}")
    out = []
    for name, idx, n in (("rows", support[0], n1), ("cols", support[1], n2)):
        arr = np.asarray(idx)
        if arr.ndim != 1 or not (arr.size == 0 or np.issubdtype(arr.dtype, np.integer)):
            raise TypeError(f"support {name} must be a 1-D array of integers; got {idx!r}")
        arr = np.sort(arr.astype(int))
        if arr.size and (arr[0] < 0 or arr[-1] >= n or np.any(np.diff(arr) == 0)):
            raise ValueError(
                f"support {name} must hold distinct indices between 0 and {n - 1}; got {idx!r}"
            )
        if arr.size < rank:
            raise ValueError(
                f"support {name} must hold at least the rank {rank} variables; got {arr.size}"
            )
        out.append(arr)
    return out[0], out[1]
