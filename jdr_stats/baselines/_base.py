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

The kernels are computed from moments of the design (slice means, slice
covariances, ``X_c^T diag(r) X_c``; :mod:`._moments`, in passes over row
chunks) and only then mapped to the z-scale, so a fit forms neither a centred
nor a whitened ``n x p`` copy of the design; the tests that need
per-observation quantities build them on demand.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..core._linalg import Whitening, cholesky_factor, sign_columns, unit_columns
from ..io._data import DataModel, MissingPolicy, ModelData, check_new_block
from ..persistence._export import ExportMixin, records
from ..runtime._validation import check_choice, check_int
from ..summary import SummaryMixin, build_summary, json_safe
from ._moments import DesignMoments, centred_cross
from ._slicing import SLICERS, SliceInfo
from ._tables import DimensionTests, weighted_chi2_pvalue

if TYPE_CHECKING:  # statsmodels on first use: fast ``import jdr_stats``
    from statsmodels.iolib.summary2 import Summary

__all__ = [
    "SDRModel",
    "SDRResults",
    "Standardized",
    "eigen_by_abs",
    "normalize_weights",
    "standardize",
    "wcov",
]


# ---------------------------------------------------------------------------
# standardization
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class Standardized(Whitening):
    """The whitening of the design (divisor: the total weight, weights of
    mean one) and access to its rows.

    ``cov = sum_i w_i (x_i - xbar)(x_i - xbar)^T / n`` and its lower Cholesky
    factor ``chol``; ``z_i = L^{-1}(x_i - xbar)``.  The fit keeps only a
    reference to the data ``x``: the centred rows :attr:`xc` and the whitened
    rows :attr:`z` are built on demand (by the tests that need per-row
    quantities).  When ``order`` is set they, and ``weights``, are in the row
    order of the data permuted by ``order`` (sorted by y for the sliced
    methods); :meth:`rows` applies the same permutation to any per-row
    vector.  The maps below use the explicit ``L^{-1}`` (:attr:`linv`): the
    kernels are small and applied often.
    """

    nobs: int = 0
    weights: np.ndarray | None = None
    x: np.ndarray | None = None
    order: np.ndarray | None = None

    def rows(self, v: np.ndarray) -> np.ndarray:
        """A per-row vector of the data in the row order of :attr:`xc`."""
        return v if self.order is None else v[self.order]

    def to_z(self, mat: np.ndarray) -> np.ndarray:
        """``L^{-1} mat L^{-T}`` for a symmetric x-scale matrix (or a stack of them)."""
        out = self.linv @ mat @ self.linv.T
        return (out + np.swapaxes(out, -1, -2)) / 2

    def vec_to_z(self, vec: np.ndarray) -> np.ndarray:
        """``L^{-1} v`` for x-scale vectors in columns."""
        return self.linv @ vec

    def to_x(self, vec: np.ndarray) -> np.ndarray:
        """``L^{-T} v``: z-scale directions to x-scale coefficients."""
        return self.linv.T @ vec

    def _data(self) -> np.ndarray:
        if self.x is None:
            raise ValueError("these statistics need the rows of the design, which were not kept")
        return self.x

    @property
    def xc(self) -> np.ndarray:
        """The centred rows ``x_i - xbar`` (n x p, a new array on each call)."""
        x = self._data()
        xc = x if self.order is None else x[self.order]
        return xc - self.mean

    @cached_property
    def z(self) -> np.ndarray:
        """The whitened rows ``z = xc L^{-T}`` (n x p), built on demand."""
        return self.xc @ self.linv.T

    def centred_cross(self, v: np.ndarray) -> np.ndarray:
        """``sum_i v_i (x_i - xbar)`` for a per-row vector in the order of
        :attr:`xc`, without a centred copy of the rows."""
        if self.order is not None:
            v_data = np.empty_like(v)
            v_data[self.order] = v
            v = v_data
        return centred_cross(self._data(), self.mean, v)


def standardize(
    x: np.ndarray,
    weights: np.ndarray | None,
    names: list[str],
    moments: DesignMoments,
    order: np.ndarray | None = None,
) -> Standardized:
    """Factor the covariance of ``moments`` (``ValueError`` naming collinear
    predictors); ``weights`` are the case weights in the data's row order."""
    chol = cholesky_factor(moments.cov, "exog", names)
    w = None if weights is None or order is None else weights[order]
    return Standardized(nobs=x.shape[0], weights=weights if w is None else w,
                        mean=moments.mean, cov=moments.cov, chol=chol, x=x, order=order)


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
# models
# ---------------------------------------------------------------------------
class SDRModel(DataModel):
    """Common constructor, formula interface and data access of the baselines."""

    _method: str = ""
    _block_args = ("exog",)
    #: Whether the method takes a categorical response (its classes as the
    #: slices: SIR and SAVE); pHd needs a numeric one.
    _categorical_ok: bool = True

    def __init__(
        self,
        endog: Any,
        exog: Any,
        *,
        missing: MissingPolicy = "none",
        weights: Any = None,
    ) -> None:
        data = ModelData.from_inputs(
            endog, {"exog": (exog, "x")}, missing=missing, weights=weights, response="auto"
        )
        kind = data.response.kind
        if kind == "multivariate":
            raise ValueError(
                f"{type(self).__name__} takes one response column; got {data.response.q} "
                f"numeric columns ({', '.join(data.response.names)}): fit one at a time, or "
                "use JointDimReduction, which takes a multivariate response"
            )
        binary = kind == "categorical" and all(
            isinstance(c, (bool, np.bool_)) for c in data.response.classes)
        if kind == "categorical" and not (binary and not self._categorical_ok):
            if not self._categorical_ok:
                raise TypeError(
                    f"{type(self).__name__} needs a numeric response (its kernel weights "
                    "the rows by the centred response); got a categorical endog with "
                    f"classes {list(data.response.classes)}: use SIR or SAVE, which slice "
                    "by the classes"
                )
        if kind == "categorical":
            # the classes are the slices: each row's class position as its value
            # (dr slices a response of at most n_slices distinct values by value);
            # a boolean response is its 0/1 coding, as before for pHd
            assert data.class_codes is not None
            data = replace(data, endog=data.class_codes.astype(float))
            if binary and not self._categorical_ok:
                data = replace(data, response=replace(data.response, kind="numeric"))
        self._data = data
        self._formula: str | None = None

    @property
    def classes(self) -> list[Any] | None:
        """The classes of a categorical response (its slices), else None
        (booleans included: for SIR and SAVE a boolean response has two
        classes)."""
        response = getattr(self._data, "response", None)
        if response is None or response.kind != "categorical":
            return None
        return list(response.classes)

    # -- the shared steps of fit -----------------------------------------
    def _options(self, rank: object, chi2approx: object) -> tuple[int, str]:
        """Validated ``rank`` (default 4, capped at p) and ``chi2approx``."""
        p = self.exog.shape[1]
        nd = min(check_int(4 if rank is None else rank, "rank", low=1), p)
        return nd, check_choice(chi2approx, "chi2approx", ("bx", "wood"))

    def _slice(self, n_slices: object, slice_method: object) -> tuple[int, SliceInfo]:
        """Requested number of slices (default ``max(8, p + 3)``, as ``dr``)
        and the slices of the response; a categorical response has one slice
        per class (``n_slices`` then None)."""
        p = self.exog.shape[1]
        method = check_choice(slice_method, "slice_method", tuple(SLICERS))
        classes = self.classes
        if classes is not None:
            k = len(classes)
            if n_slices is not None and check_int(n_slices, "n_slices", low=2) < k:
                raise ValueError(
                    f"a categorical response is sliced by its {k} classes ({classes}): "
                    f"n_slices must be None or at least {k} (fewer slices would merge "
                    f"classes); got n_slices={n_slices!r}"
                )
            return k, SLICERS[method](self.endog, k)
        h = max(8, p + 3) if n_slices is None else check_int(n_slices, "n_slices", low=2)
        return h, SLICERS[method](self.endog, h)

    # -- data access ------------------------------------------------------
    @property
    def exog(self) -> np.ndarray:
        return self._data.rows("the data of exog")[1]

    @property
    def exog_names(self) -> list[str]:
        return list(self._data.names["exog"])

    def _weights(self) -> np.ndarray | None:
        return normalize_weights(self._data.weights)


class SDRResults(ExportMixin, SummaryMixin):
    """Results shared by SIR, pHd and SAVE (read-only).

    The same shapes as the joint model's :class:`~jdr_stats.JDRResults`:
    ``rank`` (the number of directions shown and tested by default),
    directions with columns ``dir1..dirp``, :meth:`rank_tests`,
    :meth:`transform`, :meth:`summary`, :meth:`to_dict` / ``to_json`` /
    ``save``.  Subclasses supply the dimension tests and the method
    description.
    """

    _title = "Dimension reduction results"

    def __init__(
        self,
        model: SDRModel,
        std: Standardized,
        kernel: np.ndarray,
        *,
        rank: int,
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
        self._rank = rank
        self._settings = dict(settings)
        self._slices = slices
        self._extras = dict(extras or {})
        self._tests_cache: dict[int, DimensionTests] = {}

    def _cached(self, k: int, compute) -> DimensionTests:
        """Dimension tests are computed once per number of rows."""
        if k not in self._tests_cache:
            self._tests_cache[k] = compute(k)
        t = self._tests_cache[k]
        return DimensionTests(t.table.copy(), t.title, t.method, list(t.notes),
                              method_label=t.method_label, pvalue_columns=t.pvalue_columns)

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
    def rank(self) -> int:
        """Number of directions shown by ``summary``, used by
        :meth:`transform` and tested by :meth:`rank_tests` by default
        (``fit(rank=)``, R ``dr``'s ``numdir``)."""
        return self._rank

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
        by the variable names (columns ``dir1..dirp``) when the input had
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
    def _slice_info(self) -> SliceInfo:
        """The slices of a sliced method (SIR, SAVE)."""
        if self._slices is None:
            raise AttributeError(f"{type(self).__name__} has no slices")
        return self._slices

    @property
    def _labelled(self) -> bool:
        return self._model.data.is_pandas

    @staticmethod
    def _dir_labels(k: int) -> list[str]:
        return [f"dir{j + 1}" for j in range(k)]

    def _frame(self, arr: np.ndarray):
        if self._labelled:
            return pd.DataFrame(arr, index=self._model.exog_names,
                                columns=self._dir_labels(arr.shape[1]))
        return arr

    def _check_dims(self, k: Any, argname: str = "rank") -> int:
        p = self._dirs.shape[0]
        if k is None:
            return self._rank
        return check_int(k, argname, low=1, high=p)

    # -- reduced predictors ----------------------------------------------
    def transform(
        self, exog: Any = None, *, rank: int | None = None
    ) -> pd.DataFrame | np.ndarray:
        """The reduced predictors ``(x - xbar)^T beta_j`` of the first directions.

        Parameters
        ----------
        exog : array_like, optional
            New data with the fitted model's columns; default the fitted data.
        rank : int, optional
            Number of directions; default :attr:`rank`.

        Returns
        -------
        ndarray or DataFrame, shape (n, rank)
            Columns ``dir1..dirk``: a DataFrame when the model or ``exog``
            had pandas labels (as :meth:`JDRResults.transform`).
        """
        k = self._check_dims(rank, "rank")
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
        y = std.rows(self._model.data.rows("r2_ols()", unit=True)[0])  # free of y's unit
        n = std.nobs
        ybar = y.mean() if w is None else (w @ y) / n
        xty = std.centred_cross((y - ybar) if w is None else w * (y - ybar)) / n
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

    def _dimension_tests(self, k: int) -> DimensionTests:  # pragma: no cover
        raise NotImplementedError

    def dimension_tests(self, rank: int | None = None) -> DimensionTests:
        """The marginal dimension tests under R ``dr``'s name: rows
        ``0..rank-1`` (default :attr:`rank`), the table of
        :meth:`rank_tests`."""
        return self._dimension_table(rank)

    def _dimension_table(self, rank: Any) -> DimensionTests:
        return self._cached(self._check_dims(rank, "rank"), self._dimension_tests)

    def rank_tests(self, *, max_rank: int | None = None) -> DimensionTests:
        """Sequential tests of ``H0: d = k`` against ``d > k``, ``k = 0..max_rank``.

        The method's marginal dimension tests (see ``dimension_tests`` of
        the subclass for the statistics and their assumptions), as the joint
        model's :meth:`JDRResults.rank_tests`.

        Parameters
        ----------
        max_rank : int, optional
            Largest ``k`` tested, ``0 <= max_rank <= p - 1``; default
            :attr:`rank` ``- 1``.

        Returns
        -------
        DimensionTests
            One row per ``k``, the same table as :meth:`dimension_tests`.

        Examples
        --------
        >>> import numpy as np
        >>> from jdr_stats.baselines import SIR
        >>> rng = np.random.default_rng(0)
        >>> x = rng.standard_normal((500, 4))
        >>> res = SIR(x[:, 0] + 0.1 * rng.standard_normal(500), x).fit(rank=2)
        >>> len(res.rank_tests().table), len(res.rank_tests(max_rank=3).table)
        (2, 4)
        """
        p = self._dirs.shape[0]
        k = self._rank if max_rank is None else check_int(
            max_rank, "max_rank", low=0, high=p - 1) + 1
        return self._cached(k, self._dimension_tests)

    # -- export -----------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The fit as plain JSON types (``to_json`` writes it).

        Returns
        -------
        dict
            ``model`` (the class name), ``method``, ``settings``,
            ``endog``, ``nobs``, ``rank``, ``eigenvalues`` and ``r2_ols``
            (all p), ``slice_sizes`` (or None), ``directions`` (one record
            per variable: ``{"variable": name, "dir1": ..., "dirp": ...}``,
            original coordinates) and ``rank_tests`` (:meth:`rank_tests`,
            as its ``to_dict()``).  NaN are None; keys have no spaces.
        """
        m = self._model
        dirs = pd.DataFrame(self._dirs, columns=self._dir_labels(self._dirs.shape[1]),
                            index=pd.Index(m.exog_names, name="variable"))
        return {
            "model": type(m).__name__,
            "method": self.method,
            "settings": json_safe(self._settings),
            "endog": m.endog_name,
            "nobs": self.nobs,
            "rank": self.rank,
            "eigenvalues": json_safe(self._evals),
            "r2_ols": json_safe(self.r2_ols),
            "slice_sizes": None if self._slices is None else json_safe(self._slices.sizes),
            "directions": records(dirs),
            "rank_tests": self.rank_tests().to_dict(),
        }

    def summary(self) -> Summary:
        """What R's ``summary.dr`` shows: the method, slice sizes, the first
        ``rank`` directions, eigenvalues with ``R^2(OLS|dr)`` and the
        marginal dimension tests."""
        k = self._rank
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
        tests = self.rank_tests()
        tables = [
            ("Estimated basis vectors for central subspace", dirs),
            ("", ev, "eigenvalues and R^2(OLS|dr)"),
            ("Large-sample marginal dimension tests", tests.table),
        ]
        notes = [
            "Directions: unit-length columns in the original coordinates "
            "(Sigma-orthogonal); signs are arbitrary.",
            *tests.notes,
        ]
        return build_summary(self._title, info, tables, notes)
