"""The permutation test of no association (``H0: y`` independent of the
blocks, rank 0) with the fit's own whitening: valid at any width.

The rank tests whiten with the sample covariance and refuse where a block is
about as wide as the rows; this test keeps the fit's whitening (shrinkage,
sample, none, across blocks) and permutes the response's rows.  The
whitening of the blocks does not depend on ``y``, so under ``H0`` (rows of
``y`` exchangeable given the blocks and the weights) the statistic of the
permuted data has the same distribution as the observed one: the p-value
``(1 + #{T* >= T}) / (B + 1)`` is exact at any width (theory of rank tests,
section "The test of no association at any width").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core._linalg import AnyWhitening
from ..core.whitening import DesignWhitening
from ..runtime._validation import normalize_seed
from ..sparse import three_step_projection
from .hypotheses import TestResult, perm_pvalue

__all__ = ["ASSOCIATION_NULL", "ASSOCIATION_STATISTICS", "COMBINED_PARTS", "SPARSE_LEVELS",
           "association_stats", "association_test", "maxz_pvalue", "sparse_levels"]

#: The null hypothesis, as the test object and the summary print it.
ASSOCIATION_NULL = "y independent of (a, b) (rank 0: no association)"

#: Largest number of rows for which the m x m kernel of the statistic is formed
#: (above it each permutation forms the whitened cross moment directly).
_KERNEL_MAX_ROWS = 4000


def _whitened_rows(x: np.ndarray, wmap: AnyWhitening | None, mean: np.ndarray) -> np.ndarray:
    return np.asarray(x, float) - mean if wmap is None else wmap.to_white(np.asarray(x, float))


def _standardized_response(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The response's rows centred and whitened under the normalised weights
    ``w`` (``m x q``; a pseudo-inverse for a rank-deficient response)."""
    yc = y - w @ y
    cov = (yc * w[:, None]).T @ yc
    vals, vecs = np.linalg.eigh(cov)
    keep = vals > max(vals.max(), 0.0) * 1e-12
    if not np.any(keep):
        return np.zeros((y.shape[0], 1))
    return yc @ (vecs[:, keep] / np.sqrt(vals[keep]))


class _Statistic:
    """``T(y) = sum_j s_j^2`` of the whitened cross moment of the response
    ``y`` standardised under the weights (a stack over its whitened columns
    for ``q > 1``), the blocks' whitened rows held fixed."""

    def __init__(self, aw: np.ndarray, bw: np.ndarray, w: np.ndarray) -> None:
        self.w = w
        self.aw, self.bw = aw, bw
        m = aw.shape[0]
        # ||sum_i w_i z_i a_i b_i^T||_F^2 = (w z)^T (Ga o Gb) (w z)
        self.kernel = (aw @ aw.T) * (bw @ bw.T) if m <= _KERNEL_MAX_ROWS else None

    def __call__(self, y: np.ndarray) -> float:
        wz = _standardized_response(y, self.w) * self.w[:, None]
        if self.kernel is not None:
            return float(np.sum(wz * (self.kernel @ wz)))
        total = 0.0
        for c in range(wz.shape[1]):
            total += float(np.sum((self.aw.T @ (self.bw * wz[:, c:c + 1])) ** 2))
        return total


def _standardized_columns(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The columns of ``x`` centred and scaled to unit SD under the weights
    ``w`` (a column constant under them is left at zero), and a mask of the
    columns that are not constant."""
    xc = x - w @ x
    sd = np.sqrt(w @ xc**2)
    live = sd > 1e-12 * np.maximum(np.abs(x).max(axis=0), 1e-300)
    return xc / np.where(live, sd, 1.0) * live, live


class _MaxCorrelations:
    """The max-type parts ``M_k = max_j r(y, x_kj)^2`` of each block and
    ``M_kl = max_{i,j} r(y, x_ki x_lj)^2`` of each pair of blocks: the largest
    squared correlation of the standardised response with one variable and
    with one product of two variables of different blocks (summed over the
    response's whitened columns for ``q > 1``), every row held fixed.

    With the columns standardised under the weights, ``s``, the product
    ``s_ki s_lj`` has weighted SD
    ``sqrt(sum_i w_i s_ki^2 s_lj^2 - (sum_i w_i s_ki s_lj)^2)``, a function of
    the blocks only, formed once; each draw costs one product
    ``S_k^T diag(w z) S_l`` per pair."""

    def __init__(self, blocks: list[np.ndarray], w: np.ndarray) -> None:
        self.s = [_standardized_columns(np.asarray(x, float), w)[0] for x in blocks]
        self.pairs = [(k, j) for k in range(len(blocks)) for j in range(k + 1, len(blocks))]
        self.inv_sd = []
        for k, j in self.pairs:
            sk, sj = self.s[k], self.s[j]
            mean = (sk * w[:, None]).T @ sj
            var = (sk**2 * w[:, None]).T @ sj**2 - mean**2
            scale = np.maximum((sk**2 * w[:, None]).T @ sj**2, 1e-300)
            live = var > 1e-12 * scale
            self.inv_sd.append(np.where(live, 1.0 / np.sqrt(np.where(live, var, 1.0)), 0.0))

    def __call__(self, wz: np.ndarray) -> list[float]:
        """The parts for ``wz`` = the standardised response times the weights."""
        out = [float(np.max(np.sum((s.T @ wz) ** 2, axis=1))) for s in self.s]
        for (k, j), inv in zip(self.pairs, self.inv_sd, strict=True):
            total = np.zeros_like(inv)
            for c in range(wz.shape[1]):
                total += (self.s[k].T @ (self.s[j] * wz[:, c:c + 1]) * inv) ** 2
            out.append(float(total.max()))
        return out


class _CombinedStatistic(_Statistic):
    """``(T, T_a, T_b, M_a, M_b, M_ab)``: the cross moment's ``T``
    (:class:`_Statistic`, the fit's whitened rows ``aw``, ``bw``), each
    block's first moment with the standardised response,
    ``T_k = ||sum_i w_i z_i x_ik^T||_F^2`` of the rows ``x_ik`` whitened per
    block (``ma``, ``mb``: dense main effects), and the max-type parts of
    :class:`_MaxCorrelations` over the blocks' own columns ``a``, ``b``
    (one active variable, one active pair), all the rows held fixed."""

    def __init__(self, aw: np.ndarray, bw: np.ndarray, w: np.ndarray,
                 ma: np.ndarray, mb: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        super().__init__(aw, bw, w)
        self.ma, self.mb = ma, mb
        self.maxcorr = _MaxCorrelations([a, b], w)

    def __call__(self, y: np.ndarray) -> np.ndarray:  # type: ignore[override]
        wz = _standardized_response(y, self.w) * self.w[:, None]
        cross = super().__call__(y)
        return np.array([cross, float(np.sum((self.ma.T @ wz) ** 2)),
                         float(np.sum((self.mb.T @ wz) ** 2)), *self.maxcorr(wz)])


#: Names of the combined statistic's parts, in the order of its vector.
COMBINED_PARTS = ("cross moment", "first moment a", "first moment b", "max corr a",
                  "max corr b", "max corr a*b")


#: The statistics ``association_test`` offers.
ASSOCIATION_STATISTICS = ("combined", "dense", "sparse")

#: Sparsity levels of the sparse statistic: ``(s1, s2) = (round(n1^t),
#: round(n2^t))`` for ``t = 0, 1/(L-1), ..., 1`` (the last is the dense fit).
SPARSE_LEVELS = 5


def sparse_levels(n1: int, n2: int, levels: int = SPARSE_LEVELS) -> list[tuple[int, int]]:
    """The ``(s1, s2)`` of the sparse statistic: from one variable per block
    to all of them, geometrically (a function of the widths only).

    Examples
    --------
    >>> sparse_levels(120, 21)
    [(1, 1), (3, 2), (11, 5), (36, 10), (120, 21)]
    """
    t = np.linspace(0.0, 1.0, levels)
    out = []
    for tj in t:
        pair = (max(1, round(float(n1**tj))), max(1, round(float(n2**tj))))
        if pair not in out:
            out.append(pair)
    return out


class _SparseStatistic:
    """``T_l(y)``, one per level ``(s1, s2)`` of :func:`sparse_levels`: the
    sum of squared singular values of the sparse fit at that level (the
    three-step projection of the unit-free selection matrix, then the
    selected variables' cross moment whitened with their own block of the
    fit's covariance), the blocks held fixed."""

    def __init__(self, a: np.ndarray, b: np.ndarray, wa: AnyWhitening | None,
                 wb: AnyWhitening | None, w: np.ndarray) -> None:
        self.w = w
        self.ac, self.bc = a - w @ a, b - w @ b
        n1, n2 = a.shape[1], b.shape[1]
        self.levels = sparse_levels(n1, n2)
        self.wa, self.wb = wa, wb
        if wa is None or wb is None:  # centring only: select from S itself
            self.ta, self.tb = self.ac, self.bc
        else:  # rows Sigma^{-1}(x - mean) in units of the partial SDs (selection_matrix)
            self.ta = wa.to_scores(a) / np.sqrt(wa.precision_diag())
            self.tb = wb.to_scores(b) / np.sqrt(wb.precision_diag())
        self._sub: dict[tuple[int, bytes], Any] = {}

    def _chol(self, which: int, idx: np.ndarray) -> np.ndarray | None:
        wmap = self.wa if which == 0 else self.wb
        if wmap is None:
            return None
        key = (which, idx.tobytes())
        if key not in self._sub:
            self._sub[key] = wmap.subset(idx, ("exog_a", "exog_b")[which],
                                         [str(j) for j in range(wmap.dim)]).chol
        return self._sub[key]

    def __call__(self, y: np.ndarray) -> np.ndarray:
        wz = (_standardized_response(y, self.w) * self.w[:, None])
        target = np.stack([self.ta.T @ (self.tb * wz[:, c:c + 1]) for c in range(wz.shape[1])])
        out = np.empty(len(self.levels))
        for j, (s1, s2) in enumerate(self.levels):
            proj = three_step_projection(target if target.shape[0] > 1 else target[0], s1, s2)
            rows, cols = proj.rows, proj.cols
            la, lb = self._chol(0, rows), self._chol(1, cols)
            total = 0.0
            for c in range(wz.shape[1]):
                sub = self.ac[:, rows].T @ (self.bc[:, cols] * wz[:, c:c + 1])
                if la is not None and lb is not None:
                    sub = np.linalg.solve(lb, np.linalg.solve(la, sub).T).T
                total += float(np.sum(sub**2))
            out[j] = total
        return out


def minp_pvalue(observed: np.ndarray, null: np.ndarray) -> float:
    """The exact permutation p-value of ``min_l p_l``: each statistic's
    p-value ranked among the ``B + 1`` values of its level (the observed
    counts as one), then the observed minimum ranked among the permuted
    minima.  Every step is a symmetric function of the ``B + 1`` vectors,
    so under exchangeability the p-value is exact (``(1 + #) / (B + 1)``)."""
    allv = np.vstack([observed[None, :], null])  # (B + 1, L)
    # p_l(i) = #{k: T_l(k) >= T_l(i)} / (B + 1), with a relative rounding margin
    tol = 1e-10 * np.maximum(np.abs(allv).max(axis=0), 1e-300)
    pv = (allv[None, :, :] >= allv[:, None, :] - tol).sum(axis=1) / allv.shape[0]
    minp = pv.min(axis=1)
    return float((1 + np.sum(minp[1:] <= minp[0] * (1 + 1e-12))) / allv.shape[0])


def _max_z(observed: np.ndarray, null: np.ndarray, *, log: bool = False) -> np.ndarray:
    """The ``B + 1`` maxima ``max_l z_l`` (the observed first): each part
    standardised by its mean and standard deviation over the ``B + 1``
    vectors (the observed counts as one); ``log=True``: the parts' logarithms
    standardised (for positive parts of unequal skewness, such as sums of
    squares beside maxima of squares), each part floored at ``1e-12`` of its
    largest value first."""
    allv = np.vstack([observed[None, :], null])  # (B + 1, L)
    if log:
        top = np.abs(allv).max(axis=0)
        allv = np.log(np.maximum(allv, 1e-12 * np.where(top > 0, top, 1.0)))
    sd = allv.std(axis=0)
    return ((allv - allv.mean(axis=0)) / np.where(sd > 0, sd, 1.0)).max(axis=1)


def _rank_of_first(zmax: np.ndarray) -> float:
    """``(1 + #{b: Z*_b >= Z}) / (B + 1)`` of the maxima of :func:`_max_z`."""
    # rounding: a permuted maximum equal to the observed up to 1e-10 counts as >=
    tol = 1e-10 * max(float(np.abs(zmax).max()), 1e-300)
    return float((1 + np.sum(zmax[1:] >= zmax[0] - tol)) / zmax.shape[0])


def maxz_pvalue(observed: np.ndarray, null: np.ndarray, *, log: bool = False) -> float:
    """The exact permutation p-value of ``max_l z_l``: each part standardised
    by its mean and standard deviation over the ``B + 1`` vectors (the
    observed counts as one), then the observed maximum ranked among the
    permuted maxima.  Every step is a symmetric function of the ``B + 1``
    vectors, so under exchangeability the p-value is exact; unlike the
    minimum of ranks (:func:`minp_pvalue`) the maxima are continuous, so the
    test is not made conservative by ties.  ``log``: see :func:`_max_z`
    (a fixed monotone map of each part: exact too)."""
    return _rank_of_first(_max_z(observed, null, log=log))


def _combined(aw: np.ndarray, bw: np.ndarray, w: np.ndarray,
              main: DesignWhitening[AnyWhitening] | None, a: Any, b: Any) -> _CombinedStatistic:
    ma_map, mb_map = (None, None) if main is None else tuple(main)
    a, b = np.asarray(a, float), np.asarray(b, float)
    ma = _whitened_rows(a, ma_map, w @ a)
    mb = _whitened_rows(b, mb_map, w @ b)
    return _CombinedStatistic(aw, bw, w, ma, mb, a, b)


def association_stats(
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    whitening: DesignWhitening[AnyWhitening] | None,
    *,
    weights: np.ndarray | None = None,
    n_perm: int = 0,
    rng: np.random.Generator | None = None,
    statistic: str = "dense",
    main: tuple[DesignWhitening[AnyWhitening] | None, np.ndarray, np.ndarray] | None = None,
) -> tuple[Any, np.ndarray]:
    """The observed statistic and ``n_perm`` statistics of permuted responses.

    ``y`` (``m`` or ``m x q``), ``a``, ``b``: the rows the estimator saw;
    ``whitening``: the fit's block whitenings (None: the blocks centred only).
    ``statistic="sparse"``: a vector per draw, one per level of
    :func:`sparse_levels` (the null is then ``n_perm x L``);
    ``"combined"``: the vector ``(T, T_a, T_b, M_a, M_b, M_ab)`` of the
    cross moment, each block's first moment and the max-type parts
    (:data:`COMBINED_PARTS`), the last five from ``main = (whitening, a, b)``
    (the per-block whitening and the model's rows, where the fit saw other
    rows: the joint estimator's residuals; default: ``whitening``, ``a``,
    ``b``).
    """
    y2 = np.asarray(y, float).reshape(len(y), -1)
    m = y2.shape[0]
    w = np.full(m, 1.0 / m) if weights is None else np.asarray(weights, float) / np.sum(weights)
    wa, wb = (None, None) if whitening is None else tuple(whitening)
    aw = _whitened_rows(a, wa, w @ np.asarray(a, float))
    bw = _whitened_rows(b, wb, w @ np.asarray(b, float))
    stat: Any = (_Statistic(aw, bw, w) if statistic == "dense" else
                 _combined(aw, bw, w, *((whitening, a, b) if main is None else main))
                 if statistic == "combined" else
                 _SparseStatistic(np.asarray(a, float), np.asarray(b, float), wa, wb, w))
    observed = stat(y2)
    if n_perm == 0:
        return observed, np.empty(0)
    rng = np.random.default_rng(rng)
    null = np.empty((n_perm, *np.shape(observed)))
    for j in range(n_perm):
        null[j] = stat(y2[rng.permutation(m)])
    return observed, null


def association_test(
    data: Any,
    whitening: DesignWhitening[AnyWhitening] | None,
    *,
    n_perm: int = 199,
    seed: int | np.random.Generator | None = None,
    whitening_name: str = "",
    statistic: str = "combined",
    main: tuple[DesignWhitening[AnyWhitening] | None, np.ndarray, np.ndarray] | None = None,
) -> TestResult:
    """The permutation test of no association; see
    :meth:`jdr_stats.results.JDRResults.association_test`."""
    if isinstance(n_perm, bool) or not isinstance(n_perm, (int, np.integer)) or n_perm < 1:
        raise ValueError(f"n_perm must be a positive integer; got {n_perm!r}")
    if getattr(getattr(data, "adjustment", None), "p", 0):
        raise ValueError(
            "association_test() does not run with covariates: permuting the response's "
            "residuals on the covariates is not exact (the residuals are not exchangeable); "
            "fit without covariates to test the association of y with the blocks, or use "
            "rank_tests() (at n >= m, whose permutation test permutes residuals, an "
            "approximation)")
    if statistic not in ASSOCIATION_STATISTICS:
        raise ValueError('statistic must be "combined", "dense" or "sparse"; '
                         f"got {statistic!r}")
    # invariant to the response's unit: extreme units brought near unit size
    y, a, b, weights = data.rows("association_test()", weights=True, unit=True)
    obs, null = association_stats(y, a, b, whitening, weights=weights,
                                  n_perm=int(n_perm), rng=normalize_seed(seed),
                                  statistic=statistic, main=main)
    if statistic == "sparse":
        pv = minp_pvalue(np.asarray(obs), null)
        # the reported statistic: the observed min p over the levels
        allv = np.vstack([np.asarray(obs)[None, :], null])
        tol = 1e-10 * np.maximum(np.abs(allv).max(axis=0), 1e-300)
        obs = float(((allv >= allv[0] - tol).sum(axis=0) / allv.shape[0]).min())
        levels = sparse_levels(np.shape(a)[1], np.shape(b)[1])
        dist = f"permutation ({int(n_perm)} permutations), min p over sparsity levels {levels}"
    elif statistic == "combined":
        # the reported statistic: the observed largest standardised part
        zmax = _max_z(np.asarray(obs), null, log=True)
        pv, obs = _rank_of_first(zmax), float(zmax[0])
        dist = (f"permutation ({int(n_perm)} permutations), largest standardised part of "
                "the cross moment and the largest correlation with one product (interactions), "
                "each block's first moment and largest correlation with one variable (main "
                "effects)")
    else:
        # rounding: a permuted statistic equal to T up to 1e-10 counts as >= T
        pv = float(perm_pvalue(obs * (1 - 1e-10), null))
        dist = f"permutation ({int(n_perm)} permutations)"
    return TestResult(
        statistic=obs, df=None, pvalue=pv, null=ASSOCIATION_NULL,
        distribution=dist, method="association",
        name="Test of no association" + (f" ({whitening_name} whitening)"
                                          if whitening_name else ""),
    )
