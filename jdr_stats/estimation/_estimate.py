"""The joint estimator on sufficient statistics (no reference to raw rows).

:func:`estimate` turns :class:`~jdr_stats.core._linalg.BlockMoments` into the
estimated subspaces.  The model, the bootstrap (which recomputes moments with
resampling weights) and a future streaming fit all call it, so the estimator
lives in exactly one place.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from .. import policy
from ..core._hosvd import decompose_q
from ..core._linalg import (
    AnyWhitening,
    BlockMoments,
    blas_for_blocks,
    block_whitenings,
    svd_signed,
    unit_columns,
    whiten_cross,
)
from ..core._moments_engine import one_pass_block_moments
from ..core.whitening import DesignWhitening
from ..io._data import ModelData, RowsData
from ..policy import Choice
from ..runtime._frequency import frequency_nobs, observations
from ..runtime._validation import check_bool, check_choice, check_int
from ..sparse import (
    check_sparsity,
    check_support_sets,
    selection_matrix,
    three_step_projection,
)
from ..whitenings import (
    WHITENING_METHODS,
    WHITENINGS,
    WhiteningKind,
    per_block_whitening,
    whitening_names,
)
from ._joint import ScaledModelData

__all__ = [
    "Estimate",
    "WHITENINGS",
    "WhiteningKind",
    "block_whitening_pair",
    "inference_note",
    "check_rank",
    "check_support_width",
    "check_tests_feasible",
    "choose_whitening",
    "fold_standardize",
    "cross_moments",
    "estimate",
    "fit_moments",
    "moments_and_whitenings",
]


def choose_whitening(requested: object, nobs: int, n1: int, n2: int,
                     joint: bool = False) -> Choice:
    """Resolve ``fit(whitening=...)`` for a data set of ``nobs`` rows: a
    :class:`~jdr_stats.policy.Choice` whose ``name`` is the whitening used
    (never ``"auto"``).

    ``"auto"`` is :func:`jdr_stats.policy.whitening` (``"sample"`` when
    ``max(n1, n2) / nobs <= policy.AUTO_SAMPLE_MAX_RATIO``, else
    ``"shrinkage"``); a given whitening has the reason ``"given"`` and runs
    its registry entry's ``check`` (``"sample"`` needs ``nobs >= n + 2`` for
    each block, its covariance is singular otherwise: a ``ValueError`` names
    the regularised choices).
    """
    kind = check_choice(requested, "whitening", whitening_names())
    if kind == "auto":
        return policy.whitening(nobs, n1, n2, joint)
    check = WHITENING_METHODS[kind].check
    if check is not None:
        check(nobs, {"exog_a": n1, "exog_b": n2})
    return Choice(kind, "given", {"nobs": float(nobs), "n1": float(n1), "n2": float(n2)})


def cross_moments(
    y: np.ndarray, a: np.ndarray, b: np.ndarray, weights: np.ndarray | None = None
) -> BlockMoments:
    """Means, ``var_y`` and the centred cross moment only (no block covariances).

    For blocks wider than the rows whitened from the rows themselves (the
    dual route of :func:`shrunk_whitening`): memory ``O(m (n1 + n2) + n1 n2)``,
    where the moments engine forms the ``(n1 + n2 + 1)^2`` Gram matrix.
    ``cov_a`` and ``cov_b`` are read-only NaN views (no memory) and
    ``has_covariances`` is False, as ``block_moments(covariances=False)``;
    the same numbers as :func:`block_moments` up to rounding.
    """
    m, n1 = a.shape
    n2 = b.shape[1]
    wn = np.full(m, 1.0 / m) if weights is None else weights / np.sum(weights)
    mean_y, mean_a, mean_b = float(wn @ y), wn @ a, wn @ b
    yc = y - mean_y
    cross = ((a - mean_a) * (wn * yc)[:, None]).T @ (b - mean_b)
    return BlockMoments(
        nobs=m, mean_y=mean_y, var_y=float(wn @ yc**2), mean_a=mean_a, mean_b=mean_b,
        cov_a=np.broadcast_to(np.nan, (n1, n1)), cov_b=np.broadcast_to(np.nan, (n2, n2)),
        cross=cross, has_covariances=False,
    )


def inference_note(kind: str, reason: str | None, ratio: float = 0.0) -> str:
    """The summary's sentence on the whitening and the inference it allows
    (``ratio``: ``max(n1, n2) / m``; from ``policy.AUTO_SAMPLE_MAX_RATIO`` on, the
    bootstrap's caveat, from the study ``study_wide``)."""
    head = f"Whitening: {kind} ({reason or 'given'})." + WHITENING_METHODS[kind].note
    if ratio >= policy.AUTO_SAMPLE_MAX_RATIO:  # the details: guide page "Reading the summary"
        head = head[:-1] + "; its angle bound can under-cover at this width (study_wide)."
    return head


def fold_standardize(whitening: object, standardize: object) -> object:
    """The deprecated ``standardize=`` folded into ``whitening=``."""
    if standardize is None:
        return whitening
    standardize = check_bool(standardize, "standardize")
    if whitening != "auto":
        raise ValueError(f"give whitening or the deprecated standardize, not both; got "
                         f"whitening={whitening!r} and standardize={standardize!r}")
    new = "sample" if standardize else "none"
    warnings.warn(f'standardize={standardize} is deprecated: use whitening="{new}" (the '
                  'default whitening="auto" chooses from the data)', FutureWarning, stacklevel=3)
    return new


def check_support_width(nobs: int, n1: int, n2: int, what: str) -> None:
    """Refuse the support tests above ``policy.SUPPORT_TESTS_MAX_RATIO``
    columns per row (their false discovery rate was not controlled there),
    naming what works."""
    ratio, limit = max(n1, n2) / nobs, policy.SUPPORT_TESTS_MAX_RATIO
    if ratio <= limit:
        return
    raise ValueError(
        f"{what} runs the support tests, whose false discovery rate held only up to "
        f"max(n1, n2)/m = {limit} in study_wide; here max(n1, n2)/m = {ratio:.3g} > {limit}; "
        "give a fixed "
        "sparsity=(s1, s2) for the sparse estimate (any whitening), or use at least "
        f"{int(np.ceil(max(n1, n2) / limit))} "
        "rows (guide page 'Wide blocks'; the limit is jdr_stats.policy.SUPPORT_TESTS_MAX_RATIO)"
    )


def check_tests_feasible(
    nobs: int, n1: int, n2: int, rank: object, sparsity: object, joint: bool = False
) -> None:
    """``rank="auto"`` and ``sparsity="auto"`` run tests that whiten with the
    sample covariance: refuse, naming what works, when it is singular, and
    ``sparsity="auto"`` above the support tests' measured width."""
    what = 'fit(rank="auto")' if rank == "auto" else 'sparsity="auto"'
    if joint and max(n1, n2) + 2 <= nobs < n1 + n2 + 2:
        raise ValueError(
            f"{what} with the joint estimator (the default, independent_blocks=False) runs "
            "tests that whiten with the sample covariance of both blocks together, singular "
            f"with {nobs} rows for {n1} + {n2} columns (they need n1 + n2 + 2 = "
            f"{n1 + n2 + 2}); fit a given rank, or independent_blocks=True (the per-block "
            "estimator, which assumes independent blocks) where max(n1, n2) + 2 <= m")
    if nobs >= (n1 + n2 if joint else max(n1, n2)) + 2:
        if sparsity == "auto":
            check_support_width(nobs, n1, n2, 'sparsity="auto"')
        return
    raise ValueError(
        f"{what} runs tests that whiten with the sample covariance, singular with {nobs} "
        f"rows for {max(n1, n2)} columns (they need max(n1, n2) + 2 = {max(n1, n2) + 2}); "
        "fit a given rank, with sparsity=(s1, s2) for a sparse fit (any whitening fits "
        "then), or test on a subset of at most m - 2 variables per block (guide page "
        "'Wide blocks')"
    )


def block_whitening_pair(
    kind: str,
    mom: BlockMoments,
    names_a: Sequence[str],
    names_b: Sequence[str],
    *,
    rows: tuple[np.ndarray, np.ndarray] | None = None,
    weights: np.ndarray | None = None,
    count: int | None = None,
) -> DesignWhitening[AnyWhitening] | None:
    """The two blocks' whitenings of a resolved ``kind`` (None where the
    registry's entry has no factory: ``"none"``), each block's map built by
    the entry's factory (:mod:`jdr_stats.whitenings`).

    ``rows`` (the blocks in memory), when given, let a block wider than the
    number of rows take the dual route (its m x m Gram matrix) where the
    entry takes it (``needs="rows"``).  The moments' column scales
    (``mom.scale_a``, ``mom.scale_b``: a joint fit of extreme units) go on
    the maps, which map directions back to the original units.
    """
    method = WHITENING_METHODS[kind]
    covs: list[np.ndarray | None] = [mom.cov_a, mom.cov_b]
    duals: list[np.ndarray | None] = [None, None]
    for j in range(2):
        x = None if rows is None or method.needs != "rows" else rows[j]
        if x is not None and (x.shape[1] > x.shape[0] or not mom.has_covariances):
            covs[j], duals[j] = None, x  # the dual route (m x m Gram)
    return per_block_whitening(
        kind, [mom.mean_a, mom.mean_b], covs,
        frequency_nobs(mom.nobs, weights) if count is None else count,
        ["exog_a", "exog_b"], [names_a, names_b], rows=duals, weights=weights,
        scales=[mom.scale_a, mom.scale_b])


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

    @property
    def bases(self) -> tuple[np.ndarray, ...]:
        """Each block's basis in the original coordinates, in block order
        (``dir_a``, ``dir_b`` are the two-block view)."""
        return (self.dir_a, self.dir_b)

    @property
    def whitened_bases(self) -> tuple[np.ndarray, ...]:
        """Each block's orthonormal basis in whitened coordinates."""
        return (self.u_std, self.v_std)

    @property
    def supports(self) -> tuple[np.ndarray, ...]:
        """Each block's selected variables (all of them for a dense fit)."""
        return (self.rows, self.cols)


def check_rank(rank: object, n1: int, n2: int, low: int = 1) -> int:
    """Validate an integer rank ``low <= rank <= min(n1, n2)`` (``fit`` takes
    ``low = 0``: rank 0, no directions, is an answer)."""
    cap = min(n1, n2)
    smaller = "a" if n1 <= n2 else "b"
    why = f" (the smaller block, exog_{smaller}, has {cap} columns)"
    return check_int(rank, "rank", low=low, high=cap, why=why,
                     expected='a positive integer or "auto"')


def _decompose(
    cross: np.ndarray,
    wa: AnyWhitening | None,
    wb: AnyWhitening | None,
    rank: int,
    nobs: int | None = None,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Whiten (if both whitenings are given), SVD, keep ``rank``, map back.

    ``nobs`` bounds the rank of the cross moment (blocks wider than the rows:
    the SVD through its range, :func:`~jdr_stats.core._linalg.svd_signed`).
    A ``(q, n1, n2)`` stack of cross moments (a response of ``q > 1``
    columns) goes to :func:`~jdr_stats.core._hosvd.decompose_q` (HOSVD).  Blocks
    at most ``config.ONE_THREAD_MAX_DIM`` wide are decomposed on one BLAS
    thread (:func:`~jdr_stats.core._linalg.blas_for_blocks`)."""
    with blas_for_blocks(*cross.shape[-2:]):
        if cross.ndim == 3:  # (duck-typed whitenings: ShrunkWhitening too)
            return decompose_q(cross, wa, wb, rank)  # type: ignore[arg-type]
        xw = cross if wa is None or wb is None else whiten_cross(cross, wa, wb)
        u, s, v = svd_signed(xw, nobs if nobs is not None and rank <= nobs else None)
    u_std, v_std = u[:, :rank], v[:, :rank]
    if wa is None or wb is None:
        dir_a, dir_b = unit_columns(u_std.copy()), unit_columns(v_std.copy())
    else:
        dir_a, dir_b = wa.to_original(u_std), wb.to_original(v_std)
    return xw, s, u_std, v_std, dir_a, dir_b


def _selection_target(
    mom: BlockMoments, xw: np.ndarray, wa: AnyWhitening | None, wb: AnyWhitening | None
) -> np.ndarray:
    """The matrix the three-step projection selects from: the unit-free
    :func:`~jdr_stats.sparse.selection_matrix` (standardized fit), else ``S``."""
    if wa is None or wb is None:
        return mom.cross if mom.cross_q is None else mom.cross_q
    if xw.ndim == 3:  # q > 1: the (q, n1, n2) stack of each response column's matrix
        return np.stack([_selection_target(mom, x, wa, wb) for x in xw])
    # Sigma_a^{-1} S Sigma_b^{-1} = La^{-T} X_w Lb^{-1}; diag(Sigma^{-1}) = column norms of L^{-1}
    m_mat = wb.solve_t(wa.solve_t(xw).T).T
    return selection_matrix(m_mat, wa.precision_diag(), wb.precision_diag())


def _sparse_fit(
    mom: BlockMoments, rows: np.ndarray, cols: np.ndarray, wa: AnyWhitening | None,
    wb: AnyWhitening | None, rank: int, names_a: list[str], names_b: list[str],
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
    whitening: DesignWhitening[AnyWhitening] | None = None,
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
        The blocks' whitenings (``standardize=True`` only): the sample ones
        already factored, or regularised ones
        (:class:`~jdr_stats.core._linalg.ShrunkWhitening`, from
        :func:`block_whitening_pair`); the sample whitening of ``mom``
        otherwise.
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
    # rank 0 (no direction) is the answer of a rank="auto" fit whose tests
    # found no evidence; a rank a user gives is checked by the model
    rank = 0 if rank == 0 else check_rank(rank, n1, n2)
    wa = wb = None
    if standardize:
        wa, wb = whitening if whitening is not None else block_whitenings(mom, names_a, names_b)
    cross = mom.cross if mom.cross_q is None else mom.cross_q  # q > 1: HOSVD, _decompose
    xw, s, u_std, v_std, dir_a, dir_b = _decompose(cross, wa, wb, rank, mom.nobs)
    rows, cols = np.arange(n1), np.arange(n2)
    if sparsity is not None and support is not None:
        raise ValueError("give sparsity or support, not both")
    if support is not None:
        rows, cols = check_support_sets(support, n1, n2, rank=rank)
    elif sparsity is not None:
        s1, s2 = check_sparsity(sparsity, n1, n2, rank=rank)
        proj = three_step_projection(_selection_target(mom, xw, wa, wb), s1, s2)
        rows, cols = proj.rows, proj.cols
    if rank > 0 and (sparsity is not None or support is not None):
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


#: the ``moments`` methods that are :func:`block_moments` of the model's rows
#: (:func:`fit_moments` takes the one-pass route for them)
_ROW_MOMENTS = (ModelData.moments, ScaledModelData.moments)


def fit_moments(data: RowsData, *, covariances: bool = True) -> BlockMoments:
    """The block moments a fit takes from ``data``: for a model's own rows
    in memory and one response column (the per-block estimator's rows),
    :func:`~jdr_stats.core._moments_engine.one_pass_block_moments` (one
    pass, no co-moment between the blocks), with the rows' power-of-two
    column scales when they carry them; ``data.moments()`` otherwise (the
    joint estimator's residual rows, sums, row sources, several response
    columns)."""
    if type(data).moments not in _ROW_MOMENTS:
        return data.moments(covariances=covariances)
    y, a, b = data.rows("moments()")
    if y.ndim != 1:  # q response columns: the engine's q cross moments
        return data.moments(covariances=covariances)
    mom = one_pass_block_moments(y, a, b, data.weights, covariances=covariances)
    scales = getattr(data, "scales", ())
    if scales:  # columns of extreme units (ScaledModelData): held times these
        mom = replace(mom, scale_a=scales[0], scale_b=scales[1])
    return mom


def moments_and_whitenings(
    data: RowsData, names_a: list[str], names_b: list[str], kind: str, auto: bool
) -> tuple[BlockMoments, DesignWhitening[AnyWhitening] | None]:
    """The moments and the blocks' whitenings of a fit on ``data`` (the model's
    rows, or the joint estimator's residual rows); the per-block whitening
    the main-effects test of a joint fit uses is built here too, from the
    model's rows.

    A regularised whitening of a block wider than the rows, with the rows
    in memory, takes the dual (m x m) route; when no test needs the
    sample covariances (``auto`` False) and a block is wider than the
    rows, only the cross moment is formed
    (:func:`~jdr_stats.estimation._estimate.cross_moments`)."""
    n_max = max(len(names_a), len(names_b))
    needs = WHITENING_METHODS[kind].needs
    if (needs != "rows" or not isinstance(data, ModelData)
            or data.adjustment.active):  # covariates: the adjusted moments' covariances
        mom = fit_moments(data, covariances=needs != "centring" or auto)
        return mom, block_whitening_pair(kind, mom, names_a, names_b,
                                         count=observations(data))
    y, a, b = data.rows("the whitening")
    weights = data.weights
    lean = not auto and n_max > data.nobs and y.ndim == 1  # q > 1: the engine's q crosses
    mom = cross_moments(y, a, b, weights) if lean else fit_moments(data)
    return mom, block_whitening_pair(kind, mom, names_a, names_b, rows=(a, b), weights=weights)
