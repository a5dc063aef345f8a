"""Shared machinery of the single-block baselines (SIR, pHd, SAVE).

Every baseline goes through the same pipeline::

    validate (ModelData) -> standardize (mean, covariance, Cholesky factor)
    -> kernel matrix M (z-scale, p x p) -> eigen-decomposition -> results

and each method supplies only its kernel and its tests.  The conventions are
those of R's ``dr`` package (Weisberg 2002, version 3.0.11):

* ``z_i = L^{-1}(x_i - xbar)`` with ``Sigma_hat = L L^T`` the covariance with
  divisor ``n``.  ``dr`` uses ``sqrt(n) Q`` of the QR decomposition of the
  centred design, which equals this ``z`` up to the signs of its columns;
  eigenvalues and the back-transformed directions do not depend on the signs.
* Eigenvalues ordered by decreasing absolute value (they keep their sign);
  directions ``L^{-T} v`` scaled to unit Euclidean length.
* Slices as ``dr.slices`` (:func:`dr_slices`).

The kernels are computed from moments of the centred design (slice means,
slice covariances, ``X_c^T diag(r) X_c``) and only then mapped to the z-scale,
so a fit never forms the whitened ``n x p`` matrix; the tests that need
per-observation quantities compute it on demand.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats
from statsmodels.iolib.summary2 import Summary

from .._validation import check_int
from .._data import DataModel, MissingPolicy, ModelData, check_new_block
from .._linalg import Whitening, cholesky_factor, sign_columns, unit_columns
from ..inference.chi2mix import bentler_xie_pvalue, wood_pvalue
from ..inference.hypotheses import TestTable
from ..summary import SummaryMixin, build_summary

__all__ = [
    "SliceInfo",
    "dr_slices",
    "bentler_xie_pvalue",
    "wood_pvalue",
    "arc_slices",
    "chi2_sf",
    "Standardized",
    "SDRModel",
    "SDRResults",
    "DimensionTests",
    "CoordinateTest",
]


# ---------------------------------------------------------------------------
# slicing
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class SliceInfo:
    """The slices of the response.

    Attributes
    ----------
    n_slices : int
        Number of slices actually formed (can differ from the request).
    requested : int
        Number of slices asked for.
    sizes : ndarray of int
        Observations per slice, in increasing order of y.
    indicator : ndarray of int
        Slice of each observation, ``0 .. n_slices - 1`` (``dr`` numbers
        them from 1).
    order : ndarray of int
        A stable sort of the rows by y; slice ``k`` is
        ``order[starts[k]:starts[k] + sizes[k]]``.
    starts : ndarray of int
        First position of each slice in ``order``.
    """

    n_slices: int
    requested: int
    sizes: np.ndarray
    indicator: np.ndarray
    order: np.ndarray
    starts: np.ndarray


def _sorted_value_counts(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A stable sort order of y and the cumulative counts of its sorted
    distinct values."""
    n = y.shape[0]
    order = np.argsort(y, kind="stable")
    ys = y[order]
    new_value = np.r_[True, ys[1:] != ys[:-1]]
    return order, np.r_[np.flatnonzero(new_value)[1:], n]


def _first_count_at_least(cty: np.ndarray, end: int) -> int:
    """The first cumulative count ``>= end`` (the last one if none)."""
    j = min(int(np.searchsorted(cty, end, side="left")), cty.shape[0] - 1)
    return int(cty[j])


def _slice_info(order: np.ndarray, ends: np.ndarray, requested: int) -> SliceInfo:
    n = order.shape[0]
    starts = np.r_[0, ends[:-1]]
    sizes = ends - starts
    indicator = np.empty(n, dtype=int)
    indicator[order] = np.repeat(np.arange(ends.shape[0]), sizes)
    return SliceInfo(
        n_slices=int(ends.shape[0]),
        requested=int(requested),
        sizes=sizes.astype(int),
        indicator=indicator,
        order=order,
        starts=starts.astype(int),
    )


def dr_slices(y: np.ndarray, n_slices: int) -> SliceInfo:
    """Slice a response exactly as ``dr.slices`` of R's ``dr`` package.

    Parameters
    ----------
    y : ndarray, shape (n,)
    n_slices : int
        Requested number of slices ``h``.

    Returns
    -------
    SliceInfo

    Notes
    -----
    If ``y`` has at most ``h`` distinct values, each value is a slice (so a
    categorical response works).  Otherwise, with ``m = floor(n / h)`` and the
    cumulative counts ``c_1 < c_2 < ...`` of the sorted distinct values,
    start from ``e = 0`` and, while ``e < n - 2``, set ``e`` to the first
    ``c_j >= e + m``; each ``e`` ends a slice and the last one is moved to
    ``n``.  Ties are never split, so the number of slices can exceed ``h``
    and the last slice can be small.

    Examples
    --------
    >>> info = dr_slices(np.arange(10.0), 3)
    >>> info.sizes.tolist()
    [3, 3, 4]
    >>> dr_slices(np.array([1.0, 2.0, 1.0, 2.0, 2.0]), 3).sizes.tolist()
    [2, 3]
    """
    y = np.asarray(y, dtype=float)
    n = y.shape[0]
    order, cty = _sorted_value_counts(y)
    if cty.shape[0] <= n_slices:
        return _slice_info(order, cty, n_slices)
    m = n // n_slices
    end = 0
    ends: list[int] = []
    while end < n - 2:
        end = _first_count_at_least(cty, end + m)
        ends.append(end)
    ends[-1] = n
    return _slice_info(order, np.asarray(ends), n_slices)


def arc_slices(y: np.ndarray, n_slices: int) -> SliceInfo:
    """Slices of ``dr.slices.arc`` (the Arc program's rule).

    With ``m = floor(n / h)`` and ``q = n - m h``, the first ``q`` slices
    target ``m + 1`` observations and the others ``m``; each boundary is
    pushed past ties; at most ``h`` slices, the last ending at ``n`` and
    merged with its predecessor if it would hold fewer than 2 observations.
    A response with at most ``h`` values gets one slice per value.

    Examples
    --------
    >>> arc_slices(np.arange(10.0), 3).sizes.tolist()
    [4, 3, 3]
    """
    y = np.asarray(y, dtype=float)
    n = y.shape[0]
    order, cty = _sorted_value_counts(y)
    if cty.shape[0] <= n_slices:
        return _slice_info(order, cty, n_slices)
    m = n // n_slices
    extra = n - m * n_slices
    end = 0
    ends: list[int] = []
    for k in range(n_slices - 1):
        end = _first_count_at_least(cty, end + m + (1 if k < extra else 0))
        if end >= n:
            break
        ends.append(end)
    ends.append(n)
    if len(ends) > 1 and ends[-1] - ends[-2] < 2:
        del ends[-2]
    return _slice_info(order, np.asarray(ends), n_slices)


SLICERS = {"dr": dr_slices, "arc": arc_slices}


# ---------------------------------------------------------------------------
# reference distributions
# ---------------------------------------------------------------------------
def chi2_sf(stat: np.ndarray, df: np.ndarray) -> np.ndarray:
    """Chi-square upper tail; NaN where ``df <= 0`` (no test exists)."""
    stat = np.asarray(stat, dtype=float)
    df = np.asarray(df, dtype=float)
    out = np.full(np.broadcast(stat, df).shape, np.nan)
    ok = df > 0
    out[ok] = stats.chi2.sf(np.broadcast_to(stat, out.shape)[ok], df[ok])
    return out


def weighted_chi2_pvalue(coef: np.ndarray, stat: float, method: str) -> float:
    """``P(sum c_j chi2_1 > stat)`` by ``"bx"`` or ``"wood"``."""
    if method == "wood":
        return wood_pvalue(coef, stat)
    return bentler_xie_pvalue(coef, stat)


# ---------------------------------------------------------------------------
# standardization
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Standardized(Whitening):
    """The centred design and its :class:`~jdr_stats._linalg.Whitening`
    (divisor n; weights of mean one).

    ``xc = X - xbar`` (weighted mean), ``cov = sum_i w_i xc_i xc_i^T / n`` and
    its lower Cholesky factor ``chol``; ``z = xc L^{-T}``.  When ``order`` is
    set, the rows of ``xc`` (and ``weights``) are those of the data permuted
    by ``order`` (sorted by y for the sliced methods); :meth:`rows` applies the
    same permutation to any per-row vector.  The maps below use the explicit
    ``L^{-1}`` (:attr:`linv`): the kernels are small and applied often.
    """

    nobs: int = 0
    weights: np.ndarray | None = None
    xc: np.ndarray | None = None
    order: np.ndarray | None = None

    def rows(self, v: np.ndarray) -> np.ndarray:
        """A per-row vector of the data in the row order of ``xc``."""
        return v if self.order is None else v[self.order]

    def to_z(self, mat: np.ndarray) -> np.ndarray:
        """``L^{-1} mat L^{-T}`` for a symmetric x-scale matrix."""
        out = self.linv @ mat @ self.linv.T
        return (out + out.T) / 2

    def vec_to_z(self, vec: np.ndarray) -> np.ndarray:
        """``L^{-1} v`` for x-scale vectors in columns."""
        return self.linv @ vec

    def to_x(self, vec: np.ndarray) -> np.ndarray:
        """``L^{-T} v``: z-scale directions to x-scale coefficients."""
        return self.linv.T @ vec

    @cached_property
    def z(self) -> np.ndarray:
        """The whitened design ``z = xc L^{-T}`` (n x p), built on demand."""
        return self.xc @ self.linv.T


def center_rows(
    x: np.ndarray, weights: np.ndarray | None, order: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """``(mean, xc, weights)``: the (weighted) mean and a centred copy of ``x``.

    With ``order`` the copy holds the rows permuted by ``order`` (one copy
    serves both centring and sorting), and the weights are permuted alike.
    """
    n = x.shape[0]
    mean = x.mean(axis=0) if weights is None else (weights @ x) / n
    if order is None:
        xc = x - mean
    else:
        xc = x[order]
        xc -= mean
        if weights is not None:
            weights = weights[order]
    return mean, xc, weights


def standardize(
    x: np.ndarray,
    weights: np.ndarray | None,
    names: list[str],
    order: np.ndarray | None = None,
    *,
    centred: tuple[np.ndarray, np.ndarray, np.ndarray | None] | None = None,
    cov: np.ndarray | None = None,
) -> Standardized:
    """Centre ``x`` and factor its covariance (divisor n, dr's convention).

    ``centred`` (the output of :func:`center_rows`) and ``cov`` may be given
    when the caller has computed them already (SAVE gets the covariance from
    its slice covariances without another pass over the rows).
    """
    n = x.shape[0]
    mean, xc, w = center_rows(x, weights, order) if centred is None else centred
    if cov is None:
        if w is None:
            cov = xc.T @ xc / n
        else:
            cov = (xc * w[:, None]).T @ xc / n
    cov = (cov + cov.T) / 2
    chol = cholesky_factor(cov, "exog", names)
    return Standardized(nobs=n, weights=w, mean=mean, xc=xc, cov=cov, chol=chol,
                        order=order)


@dataclass(frozen=True)
class SliceMoments:
    """Per-slice moments of the centred design (x-scale).

    ``f`` = slice weight / total weight; ``means`` (H x p) slice means of
    ``xc``; ``covs`` (H x p x p) slice covariances with divisor the slice
    weight (``dr``'s ``wvar``), or None.
    """

    f: np.ndarray
    means: np.ndarray
    covs: np.ndarray | None


def slice_moments(
    xc: np.ndarray, w: np.ndarray | None, slices: SliceInfo, *, second: bool
) -> SliceMoments:
    """Slice means (and covariances) from rows already sorted by y."""
    n = xc.shape[0]
    starts = slices.starts
    if w is None:
        wk = slices.sizes.astype(float)
        sums = np.add.reduceat(xc, starts, axis=0)
    else:
        wk = np.add.reduceat(w, starts)
        sums = np.add.reduceat(xc * w[:, None], starts, axis=0)
    means = sums / wk[:, None]
    covs = None
    if second:
        p = xc.shape[1]
        covs = np.empty((starts.shape[0], p, p))
        for k, (s, size) in enumerate(zip(starts, slices.sizes)):
            blk = xc[s : s + size] - means[k]
            if w is None:
                c = blk.T @ blk
            else:
                c = (blk * w[s : s + size, None]).T @ blk
            covs[k] = (c + c.T) / (2 * wk[k])
    return SliceMoments(f=wk / (n if w is None else w.sum()), means=means, covs=covs)


def cov_of_products(
    u: np.ndarray,
    v: np.ndarray,
    w: np.ndarray | None,
    *,
    ddof: int,
    mult: np.ndarray | None = None,
    pairs: tuple[np.ndarray, np.ndarray] | None = None,
    shift: np.ndarray | None = None,
    scale: np.ndarray | None = None,
    chunk: int = 4096,
) -> np.ndarray:
    """Covariance of the per-row vectors ``g_i = mult_i vec(u_i v_i^T)``.

    With ``pairs = (ia, ib)`` only the entries ``u_i[ia] * v_i[ib]`` are used;
    ``shift`` is subtracted from and ``scale`` multiplies each entry before
    ``mult``.  Accumulated in row chunks so the n x q matrix of products is
    never held.
    """
    n = u.shape[0]
    if pairs is None:
        ia = np.repeat(np.arange(u.shape[1]), v.shape[1])
        ib = np.tile(np.arange(v.shape[1]), u.shape[1])
    else:
        ia, ib = pairs
    q = ia.shape[0]
    total = float(n) if w is None else float(w.sum())

    def block(start: int, stop: int) -> np.ndarray:
        g = u[start:stop, ia] * v[start:stop, ib]
        if shift is not None:
            g -= shift
        if scale is not None:
            g *= scale
        if mult is not None:
            g *= mult[start:stop, None]
        return g

    s1 = np.zeros(q)
    for start in range(0, n, chunk):
        stop = min(start + chunk, n)
        g = block(start, stop)
        s1 += g.sum(axis=0) if w is None else w[start:stop] @ g
    mean = s1 / total
    s2 = np.zeros((q, q))
    for start in range(0, n, chunk):  # second pass: centred products
        stop = min(start + chunk, n)
        g = block(start, stop) - mean
        s2 += g.T @ g if w is None else (g * w[start:stop, None]).T @ g
    cov = s2 / (total - ddof)
    return (cov + cov.T) / 2


def eigen_by_abs(mat: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Symmetric eigen-decomposition ordered by decreasing |eigenvalue|."""
    vals, vecs = np.linalg.eigh((mat + mat.T) / 2)
    idx = np.argsort(-np.abs(vals), kind="stable")
    return vals[idx], vecs[:, idx]


def wcov(mat: np.ndarray, w: np.ndarray | None, ddof: int) -> np.ndarray:
    """Covariance of the rows of ``mat`` (weights of mean one), divisor n - ddof."""
    n = mat.shape[0]
    if w is None:
        c = mat - mat.mean(axis=0)
        return c.T @ c / (n - ddof)
    c = mat - (w @ mat) / n
    return (c * w[:, None]).T @ c / (n - ddof)


def normalize_weights(w: np.ndarray | None) -> np.ndarray | None:
    """Case weights rescaled to mean one, or None."""
    if w is None:
        return None
    return w * (w.shape[0] / w.sum())


# ---------------------------------------------------------------------------
# test tables
# ---------------------------------------------------------------------------
class DimensionTests(TestTable):
    """Marginal dimension tests: the table of ``dr.test``, plus a summary.

    ``table`` has one row per null hypothesis ``"kD vs >= (k+1)D"`` and the
    columns of ``dr.test`` for the method.
    """

    __test__ = False


class CoordinateTest(TestTable):
    """A coordinate test (Cook 2004) as a one-row table, plus ``stat`` and
    ``pvalue`` of the default reference distribution."""

    __test__ = False

    @property
    def stat(self) -> float:
        return float(self.table.iloc[0, 0])

    @property
    def pvalue(self) -> float:
        col = self.table.attrs.get("pvalue_column", self.table.columns[-1])
        return float(self.table[col].iloc[0])


def dim_row_labels(k: int) -> list[str]:
    return [f"{m}D vs >= {m + 1}D" for m in range(k)]


# ---------------------------------------------------------------------------
# models
# ---------------------------------------------------------------------------
class SDRModel(DataModel):
    """Common constructor, formula interface and data access of the baselines."""

    _method: str = ""
    _block_args = ("exog",)

    def __init__(
        self,
        endog: Any,
        exog: Any,
        *,
        missing: MissingPolicy = "none",
        weights: Any = None,
    ) -> None:
        self._data = ModelData.from_inputs(
            endog, {"exog": (exog, "x")}, missing=missing, weights=weights
        )
        self._formula: str | None = None

    # -- data access ------------------------------------------------------
    @property
    def exog(self) -> np.ndarray:
        return self._data.blocks["exog"]

    @property
    def exog_names(self) -> list[str]:
        return list(self._data.names["exog"])

    def _weights(self) -> np.ndarray | None:
        return normalize_weights(self._data.weights)


class SDRResults(SummaryMixin):
    """Results shared by SIR, pHd and SAVE (read-only).

    Subclasses supply ``dimension_tests`` and the method description.
    """

    _title = "Dimension reduction results"

    def __init__(
        self,
        model: SDRModel,
        std: Standardized,
        kernel: np.ndarray,
        *,
        numdir: int,
        settings: dict[str, Any],
        slices: SliceInfo | None = None,
        extras: dict[str, Any] | None = None,
    ) -> None:
        self._model = model
        self._std = std
        self._kernel = kernel
        vals, vecs = eigen_by_abs(kernel)
        dirs = unit_columns(std.to_x(vecs))
        dirs, vecs = sign_columns(dirs, vecs)
        self._evals = vals
        self._raw = vecs
        self._dirs = dirs
        self._numdir = numdir
        self._settings = dict(settings)
        self._slices = slices
        self._extras = dict(extras or {})
        self._tests_cache: dict[int, DimensionTests] = {}

    def _cached(self, k: int, compute) -> DimensionTests:
        """Dimension tests are computed once per number of rows."""
        if k not in self._tests_cache:
            self._tests_cache[k] = compute(k)
        t = self._tests_cache[k]
        return DimensionTests(t.table.copy(), t.title, t.method, list(t.notes))

    # -- basic attributes -------------------------------------------------
    @property
    def model(self) -> SDRModel:
        return self._model

    @property
    def nobs(self) -> int:
        return self._std.nobs

    @property
    def method(self) -> str:
        return self._settings["method"]

    @property
    def chi2approx(self) -> str:
        """Approximation of weighted chi-square p-values: "bx" or "wood"."""
        return self._settings.get("chi2approx", "bx")

    def _wchi2(self, coef: np.ndarray, stat: float) -> float:
        return weighted_chi2_pvalue(coef, stat, self.chi2approx)

    @property
    def numdir(self) -> int:
        """Number of directions shown by ``summary`` and tested by default."""
        return self._numdir

    @property
    def kernel(self) -> np.ndarray:
        """The kernel matrix ``M`` (z-scale, p x p)."""
        return self._kernel.copy()

    @property
    def eigenvalues(self) -> pd.Series | np.ndarray:
        """Eigenvalues of the kernel, ordered by decreasing absolute value."""
        if self._labelled:
            return pd.Series(self._evals.copy(), index=self._dir_labels(len(self._evals)),
                             name="eigenvalue")
        return self._evals.copy()

    @property
    def directions(self) -> pd.DataFrame | np.ndarray:
        """All p directions in the original coordinates, unit-length columns.

        Columns are ``Sigma_hat``-orthogonal (not Euclidean-orthogonal);
        signs make each column's largest entry positive.  A DataFrame indexed
        by the variable names (columns ``Dir1..Dirp``) when the input had
        pandas labels.
        """
        return self._frame(self._dirs.copy())

    @property
    def directions_std(self) -> np.ndarray:
        """Orthonormal eigenvectors of the kernel (z-scale), ``dr``'s
        ``raw.evectors`` up to signs."""
        return self._raw.copy()

    @property
    def slices(self) -> SliceInfo | None:
        """The slices (SIR, SAVE); None for pHd."""
        return self._slices

    @property
    def _labelled(self) -> bool:
        return self._model.data.is_pandas

    @staticmethod
    def _dir_labels(k: int) -> list[str]:
        return [f"Dir{j + 1}" for j in range(k)]

    def _frame(self, arr: np.ndarray):
        if self._labelled:
            return pd.DataFrame(arr, index=self._model.exog_names,
                                columns=self._dir_labels(arr.shape[1]))
        return arr

    def _check_dims(self, k: Any, argname: str = "n_dirs") -> int:
        p = self._dirs.shape[0]
        if k is None:
            return self._numdir
        return check_int(k, argname, low=1, high=p)

    # -- reduced predictors ----------------------------------------------
    def transform(self, exog: Any = None, *, n_dirs: int | None = None) -> pd.DataFrame | np.ndarray:
        """The reduced predictors ``(x - xbar)^T beta_j`` of the first directions.

        Parameters
        ----------
        exog : array_like, optional
            New data with the fitted model's columns; default the fitted data.
        n_dirs : int, optional
            Number of directions; default :attr:`numdir`.

        Returns
        -------
        ndarray or DataFrame, shape (n, n_dirs)
        """
        k = self._check_dims(n_dirs)
        if exog is None:
            x = self._model.exog
            index = self._model.data.row_index
        else:
            x = check_new_block(exog, "exog", self._model.exog_names,
                                labelled=self._labelled)
            index = exog.index if isinstance(exog, (pd.DataFrame, pd.Series)) else None
        out = (x - self._std.mean) @ self._dirs[:, :k]
        if self._labelled or index is not None:
            return pd.DataFrame(out, index=index, columns=self._dir_labels(k))
        return out

    @cached_property
    def r2_ols(self) -> np.ndarray:
        """``R^2(OLS|dr)`` for 1..p directions (as ``summary.dr``).

        The squared multiple correlation between the OLS linear predictor
        (y on x) and the first k reduced predictors.
        """
        std = self._std
        w = std.weights
        y = std.rows(self._model.endog)
        n = std.nobs
        ybar = y.mean() if w is None else (w @ y) / n
        xty = std.xc.T @ ((y - ybar) if w is None else w * (y - ybar)) / n
        beta = std.to_x(std.vec_to_z(xty))
        # fitted OLS predictor; its projections on the directions use only
        # moments: Cov(x beta, x B) = beta^T Sigma B
        cov = std.cov
        total = float(beta @ cov @ beta)
        out = np.empty(self._dirs.shape[1])
        for k in range(1, self._dirs.shape[1] + 1):
            b = self._dirs[:, :k]
            g = b.T @ cov @ b
            c = b.T @ cov @ beta
            out[k - 1] = float(c @ np.linalg.solve(g, c)) / total
        return out

    # -- summary ----------------------------------------------------------
    def _method_line(self) -> str:
        return f"{self.method}, n = {self.nobs}."

    def dimension_tests(self, numdir: int | None = None) -> DimensionTests:  # pragma: no cover
        raise NotImplementedError

    def summary(self) -> Summary:
        """What R's ``summary.dr`` shows: the method, slice sizes, the first
        ``numdir`` directions, eigenvalues with ``R^2(OLS|dr)`` and the
        marginal dimension tests."""
        k = self._numdir
        m = self._model
        info = {
            "Method:": self._method_line(),
            "Dependent variable:": m.endog_name,
            "No. observations:": self.nobs,
            "Predictors:": self._dirs.shape[0],
            "Weights:": "none" if m.weights is None else "case weights",
        }
        if self._slices is not None:
            info["Slice sizes:"] = " ".join(str(s) for s in self._slices.sizes)
        dirs = pd.DataFrame(self._dirs[:, :k], index=m.exog_names,
                            columns=self._dir_labels(k))
        ev = pd.DataFrame(
            [self._evals[:k], self.r2_ols[:k]],
            index=["Eigenvalues", "R^2(OLS|dr)"],
            columns=self._dir_labels(k),
        )
        tests = self.dimension_tests(k)
        tables = [
            ("Estimated basis vectors for central subspace", dirs),
            ("", ev),
            ("Large-sample marginal dimension tests", tests.table),
        ]
        notes = [
            "Directions: unit-length columns in the original coordinates "
            "(Sigma-orthogonal); signs are arbitrary.",
            *tests.notes,
        ]
        return build_summary(self._title, info, tables, notes)


# ---------------------------------------------------------------------------
# coordinate hypotheses (Cook 2004)
# ---------------------------------------------------------------------------
def coordinate_bases(
    std: Standardized, names: list[str], drop: Any
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """z-scale bases of the hypothesis ``span(beta) in span(gamma)``.

    ``gamma`` holds the columns of the identity for the kept predictors.  In
    z-coordinates (``beta = L^{-T} v``) the hypothesis is
    ``span(v) in span(L^T gamma)``; returns an orthonormal basis ``QH`` of
    ``span(L^T gamma)``, one ``H`` of its orthogonal complement (p x r,
    r = number dropped) and the dropped names.
    """
    p = len(names)
    if isinstance(drop, (str, int, np.integer)):
        drop = [drop]
    try:
        items = list(drop)
    except TypeError:
        raise TypeError(
            f"drop must be a list of predictor names or column indices; got {drop!r}"
        ) from None
    idx: list[int] = []
    for it in items:
        if isinstance(it, str):
            if it not in names:
                raise ValueError(f"drop: {it!r} is not a predictor; predictors are {names}")
            idx.append(names.index(it))
        elif isinstance(it, (int, np.integer)) and not isinstance(it, bool):
            if not 0 <= it < p:
                raise ValueError(f"drop: column index {it} out of range 0..{p - 1}")
            idx.append(int(it))
        else:
            raise TypeError(f"drop entries must be names or integer indices; got {it!r}")
    if not idx:
        raise ValueError("drop must name at least one predictor; got an empty list")
    if len(set(idx)) != len(idx):
        raise ValueError(f"drop lists a predictor twice: {items}")
    if len(idx) >= p:
        raise ValueError(f"drop must leave at least one predictor; got all {p}")
    keep = [j for j in range(p) if j not in idx]
    basis = std.chol.T[:, keep]  # L^T gamma
    q, _ = np.linalg.qr(basis, mode="complete")
    k = len(keep)
    return q[:, :k], q[:, k:], [names[j] for j in idx]
