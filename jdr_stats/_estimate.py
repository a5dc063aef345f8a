"""The joint estimator on sufficient statistics (no reference to raw rows).

:func:`estimate` turns :class:`~jdr_stats._linalg.BlockMoments` into the
estimated subspaces.  The model, the bootstrap (which recomputes moments with
resampling weights) and a future streaming fit all call it, so the estimator
lives in exactly one place.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ._hosvd import decompose_q
from ._linalg import (
    BlockMoments,
    Whitening,
    block_whitenings,
    svd_signed,
    unit_columns,
    whiten_cross,
)
from ._validation import check_int
from .sparse import (
    check_sparsity,
    check_support_sets,
    selection_matrix,
    three_step_projection,
)

__all__ = ["Estimate", "check_rank", "estimate"]


@dataclass(frozen=True)
class Estimate:
    """Output of :func:`estimate` (plain arrays, unlabelled).

    Attributes
    ----------
    rank : int
    coef_matrix : ndarray (n1, n2)
        ``X_lin`` in whitened coordinates (centred only when
        ``standardize=False``), always for all variables.
    singular_values : ndarray
        All singular values of the matrix that was decomposed: ``X_lin`` for a
        dense fit, its restriction to the selected variables (re-whitened) for
        a sparse fit.
    u_std, v_std : ndarray (n1, r), (n2, r)
        Orthonormal directions in whitened coordinates (of the selected
        variables for a sparse fit; zero rows elsewhere).
    dir_a, dir_b : ndarray (n1, r), (n2, r)
        Directions in the original coordinates, unit-length columns.
    rows, cols : ndarray of int
        Selected variables of each block (all of them for a dense fit).
    """

    rank: int
    coef_matrix: np.ndarray
    singular_values: np.ndarray
    u_std: np.ndarray
    v_std: np.ndarray
    dir_a: np.ndarray
    dir_b: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    #: ``(q, n1, n2)`` whitened cross moments of a ``q > 1`` response
    #: (``coef_matrix`` is then the first); None for one response
    coef_tensor: np.ndarray | None = None


def check_rank(rank: object, n1: int, n2: int) -> int:
    """Validate an integer rank ``1 <= rank <= min(n1, n2)``."""
    cap = min(n1, n2)
    smaller = "a" if n1 <= n2 else "b"
    why = f" (the smaller block, exog_{smaller}, has {cap} columns)"
    return check_int(rank, "rank", low=1, high=cap, why=why,
                     expected='a positive integer or "auto"')


def _decompose(
    cross: np.ndarray,
    wa: Whitening | None,
    wb: Whitening | None,
    rank: int,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Whiten (if both whitenings are given), SVD, keep ``rank``, map back.

    A ``(q, n1, n2)`` stack of cross moments (a response of ``q > 1``
    columns) goes to :func:`~jdr_stats._hosvd.decompose_q` (HOSVD)."""
    if cross.ndim == 3:
        return decompose_q(cross, wa, wb, rank)
    xw = cross if wa is None or wb is None else whiten_cross(cross, wa, wb)
    u, s, v = svd_signed(xw)
    u_std, v_std = u[:, :rank], v[:, :rank]
    if wa is None or wb is None:
        dir_a, dir_b = unit_columns(u_std.copy()), unit_columns(v_std.copy())
    else:
        dir_a, dir_b = wa.to_original(u_std), wb.to_original(v_std)
    return xw, s, u_std, v_std, dir_a, dir_b


def _selection_target(
    mom: BlockMoments, xw: np.ndarray, wa: Whitening | None, wb: Whitening | None
) -> np.ndarray:
    """The matrix the three-step projection selects from: the unit-free
    :func:`~jdr_stats.sparse.selection_matrix` (standardized fit), else ``S``."""
    if wa is None or wb is None:
        return mom.cross if mom.cross_q is None else mom.cross_q
    if xw.ndim == 3:  # q > 1: the (q, n1, n2) stack of each response column's matrix
        return np.stack([_selection_target(mom, x, wa, wb) for x in xw])
    # Sigma_a^{-1} S Sigma_b^{-1} = La^{-T} X_w Lb^{-1}; diag(Sigma^{-1}) = column norms of L^{-1}
    m_mat = wb.solve_t(wa.solve_t(xw).T).T
    return selection_matrix(m_mat, (wa.linv**2).sum(axis=0), (wb.linv**2).sum(axis=0))


def _sparse_fit(
    mom: BlockMoments, rows: np.ndarray, cols: np.ndarray, wa: Whitening | None,
    wb: Whitening | None, rank: int, names_a: list[str], names_b: list[str],
) -> tuple[np.ndarray, ...]:
    """The estimator on the variables ``rows``, ``cols`` alone (each block
    whitened with its own sub-covariance); directions padded with zeros."""
    n1, n2 = mom.cross.shape
    # q > 1: the (q, s1, s2) sub-stack, HOSVD in _decompose
    sub = (mom.cross[np.ix_(rows, cols)] if mom.cross_q is None
           else mom.cross_q[:, rows][:, :, cols])
    wa_s = wb_s = None
    if wa is not None and wb is not None:
        wa_s = wa.subset(rows, "exog_a", names_a)
        wb_s = wb.subset(cols, "exog_b", names_b)
    _, s, us, vs, da, db = _decompose(sub, wa_s, wb_s, rank)
    u_std, v_std = np.zeros((n1, rank)), np.zeros((n2, rank))
    dir_a, dir_b = np.zeros((n1, rank)), np.zeros((n2, rank))
    u_std[rows], v_std[cols], dir_a[rows], dir_b[cols] = us, vs, da, db
    return s, u_std, v_std, dir_a, dir_b


def estimate(
    mom: BlockMoments,
    rank: int,
    *,
    standardize: bool = True,
    sparsity: tuple[int, int] | None = None,
    names_a: Sequence[str] | None = None,
    names_b: Sequence[str] | None = None,
    whitening: tuple[Whitening, Whitening] | None = None,
    support: tuple[np.ndarray, np.ndarray] | None = None,
) -> Estimate:
    """The paper's estimator from the block moments.

    Parameters
    ----------
    mom : BlockMoments
    rank : int
    standardize : bool
        Whiten each block with its sample covariance (section 5.1).
    sparsity : (s1, s2) or None
        Run the three-step projection (section 3) first.
    names_a, names_b : sequence of str, optional
        Variable names, used in error messages only.
    whitening : (Whitening, Whitening), optional
        The blocks' whitenings when the caller has factored the covariances
        already (``standardize=True`` only); computed from ``mom`` otherwise.
    support : (rows, cols), optional
        Given variable sets (index arrays, at least ``rank`` of each block):
        the sparse fit on exactly these variables, without the projection
        (``fit(sparsity="auto")`` passes the variables its tests selected).
        Not with ``sparsity``.

    Notes
    -----
    Dense fit: ``X_lin = La^{-1} S Lb^{-T}`` (``S`` the centred cross moment,
    ``Sigma = L L^T`` Cholesky), the top-``rank`` singular vectors ``U', V'``,
    mapped back as ``La^{-T} U'`` and ``Lb^{-T} V'``.

    Sparse fit with ``standardize=True``: the projections act on
    ``Sigma_a^{-1} S Sigma_b^{-1} = La^{-T} X_lin Lb^{-1}``, whose rows and
    columns vanish exactly for inactive variables (Gaussian blocks:
    ``S = Sigma_a U Q V^T Sigma_b``), with each row and column in units of the
    variable's partial standard deviation
    (:func:`~jdr_stats.sparse.selection_matrix`: the kept set does not depend
    on the units); the subspaces are then estimated from the selected
    variables alone, whitened with their own covariance.
    """
    n1, n2 = mom.cov_a.shape[0], mom.cov_b.shape[0]
    names_a = list(names_a) if names_a is not None else [f"a{j}" for j in range(n1)]
    names_b = list(names_b) if names_b is not None else [f"b{j}" for j in range(n2)]
    rank = check_rank(rank, n1, n2)
    wa = wb = None
    if standardize:
        wa, wb = whitening if whitening is not None else block_whitenings(mom, names_a, names_b)
    cross = mom.cross if mom.cross_q is None else mom.cross_q  # q > 1: HOSVD, _decompose
    xw, s, u_std, v_std, dir_a, dir_b = _decompose(cross, wa, wb, rank)
    rows, cols = np.arange(n1), np.arange(n2)
    if sparsity is not None and support is not None:
        raise ValueError("give sparsity or support, not both")
    if support is not None:
        rows, cols = check_support_sets(support, n1, n2, rank=rank)
    elif sparsity is not None:
        s1, s2 = check_sparsity(sparsity, n1, n2, rank=rank)
        proj = three_step_projection(_selection_target(mom, xw, wa, wb), s1, s2)
        rows, cols = proj.rows, proj.cols
    if sparsity is not None or support is not None:
        s, u_std, v_std, dir_a, dir_b = _sparse_fit(
            mom, rows, cols, wa, wb, rank, names_a, names_b
        )
    return Estimate(
        rank=rank,
        coef_matrix=xw if xw.ndim == 2 else xw[0], coef_tensor=None if xw.ndim == 2 else xw,
        singular_values=s,
        u_std=u_std,
        v_std=v_std,
        dir_a=dir_a,
        dir_b=dir_b,
        rows=rows,
        cols=cols,
    )

