"""The two-block engine's fit (:class:`TwoBlockFit`).

What :class:`jdr_stats.JDRResults` holds for two blocks of one rank without
main effects: the estimated subspaces of both blocks (one cross moment's
SVD), labelled, with transform, summary and the doors to inference (rank
tests, bootstrap).
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings
from collections.abc import Mapping
from functools import cached_property
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from .. import policy
from ..core._linalg import AnyWhitening, BlockMoments
from ..core.whitening import DesignWhitening
from ..diagnostics import Premises, block_stats
from ..estimation._estimate import Estimate
from ..estimation._joint import joint_data
from ..estimation._settings import FitSettings
from ..inference.ladle import LadleResults
from ..inference.rank_tests import RankTestResults
from ..io._data import (
    DataModel,
    RemovedData,
    RowsData,
    align_inputs,
    check_new_block,
    design_from_spec,
)
from ..persistence._export import ExportMixin
from ..runtime._validation import check_int, normalize_seed
from ..streams._sources import DaskSource, is_dask_collection
from ..summary import (
    SummaryMixin,
)
from ..support import SupportResults
from ..support._cv import selection_frequencies
from ..whitenings import WHITENING_METHODS
from ._block_view import BlockViewMixin
from ._kresults_extra import per_sd_loadings
from ._results_extra import FitMeasuresMixin
from ._results_infer import ResultsInferenceMixin
from ._results_report import ResultsReportMixin, _labels

__all__ = ["FitSettings", "TwoBlockFit"]


class TwoBlockFit(ResultsInferenceMixin, ResultsReportMixin, BlockViewMixin, FitMeasuresMixin,
                 ExportMixin, SummaryMixin):
    """The two-block engine's fit, held by :class:`jdr_stats.JDRResults` (read-only).

    Directions are labelled DataFrames (index: variable names, columns
    ``dir1..dirr``) when the input had pandas labels, plain arrays otherwise.
    """

    def __init__(
        self,
        model: DataModel,
        est: Estimate,
        moments: BlockMoments,
        settings: FitSettings,
        *,
        rank_tests: RankTestResults | LadleResults | None = None,
        whitening: DesignWhitening[AnyWhitening] | None = None,
        stats: tuple[np.ndarray, np.ndarray, Premises] | None = None,
        fit_data: RowsData | None = None,
        means: tuple[np.ndarray, np.ndarray] | None = None,
    ) -> None:
        self._model = model
        self._est = est
        self._moments = moments
        self._settings = settings
        self._whitening = whitening
        # The rows the estimator saw, for the inference on it: the model's,
        # or each block's residual on the other (the joint estimator).
        self._fit_data_given = fit_data
        # The blocks' means that centre the reduced features (the model's:
        # the joint estimator's moments are those of residuals, mean zero).
        self._means = (moments.mean_a, moments.mean_b) if means is None else means
        # The rank tests that chose the rank of a rank="auto" fit (fixed at
        # construction: a results object never changes).
        self._rank_tests = rank_tests
        if stats is not None:  # kept by remove_data(): they need the rows
            self.__dict__["_block_stats"] = stats

    def __getstate__(self) -> dict[str, Any]:
        """The attributes to pickle: all but the cached :attr:`directions`
        mapping (a read-only view, rebuilt when next read)."""
        state = self.__dict__.copy()
        state.pop("directions", None)
        return state

    # -- basic attributes -------------------------------------------------
    @cached_property
    def _test_input(self) -> tuple[RowsData, BlockMoments, Any]:
        """The rows, moments and whitening the tests of this fit use: they
        whiten with the sample covariance (theory page "Whitening"), of both
        blocks together for the joint estimator (whose rows are then
        re-formed with it when the fit regularised it)."""
        if self._settings.joint and self.whitening != "sample":
            n1, n2 = len(self._names_a), len(self._names_b)
            if self.nobs < n1 + n2 + 2:  # the joint estimator's tests or none
                raise policy.joint_rows_error(self.nobs, (n1, n2),
                                              "the tests of this fit, which whiten with it")
            data = joint_data(self._model.data)[0]
            return data, data.moments(), None
        sample = None if WHITENING_METHODS[self.whitening].tests_need_sample else self._whitening
        return self._fit_data, self._moments, sample

    @property
    def _fit_data(self) -> RowsData:
        """The rows the estimator saw (:attr:`model`'s data, or the joint
        estimator's residual rows)."""
        given = self.__dict__.get("_fit_data_given")
        return self._model.data if given is None else given

    @property
    def block_means(self) -> tuple[np.ndarray, np.ndarray]:
        """The blocks' means that centre the reduced features of
        :meth:`transform` (the model's blocks, whichever estimator)."""
        return self._means[0].copy(), self._means[1].copy()

    @property
    def model(self) -> Any:
        """The :class:`~jdr_stats.JointDimReduction` that was fitted."""
        return self._model

    @property
    def _names_a(self) -> list[str]:
        return self._model.data.exog_names_a

    @property
    def _names_b(self) -> list[str]:
        return self._model.data.exog_names_b

    @property
    def moments(self) -> BlockMoments:
        """The sufficient statistics the fit was computed from."""
        return self._moments

    @property
    def estimate(self) -> Estimate:
        """The unlabelled estimate (plain arrays)."""
        return self._est

    @property
    def nobs(self) -> int:
        return int(self._moments.nobs)

    @property
    def data_removed(self) -> bool:
        """Whether :meth:`remove_data` dropped the model's rows."""
        return isinstance(self._model.data, RemovedData)

    def remove_data(self) -> TwoBlockFit:
        """A copy of the results without the model's rows (small files for many fits).

        The copy keeps everything computed from the sufficient statistics:
        directions, singular values, ``coef_matrix``, the moments (means and
        covariances of the blocks), variable names, the formula and its
        codings, the rank tests of a ``rank="auto"`` fit, :attr:`fit_measures`
        (computed before the rows go), :meth:`summary` and
        ``transform`` of new data, and ``rank_tests("chi2")`` (it needs only
        the singular values).  What needs the rows no longer works and raises
        a :class:`~jdr_stats.exceptions.RowsNotInMemoryError` (a
        ``ValueError``) naming the procedure and ``remove_data()``:
        ``transform()`` of the training data, the other rank tests,
        :meth:`bootstrap`, ``model.exog_a`` and the plots that draw the data
        (``plot_sufficient_summary``, ``plot_response_surface``).  The
        original results are unchanged.

        Returns
        -------
        JDRResults

        Examples
        --------
        >>> import pickle, jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(20000, 6, 5, 2, seed=0)
        >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        >>> small = res.remove_data()
        >>> len(pickle.dumps(small)) < len(pickle.dumps(res)) / 50
        True
        >>> small.nobs, small.transform(sim.a[:3], sim.b[:3]).shape
        (20000, (3, 4))
        """
        import copy

        model = copy.copy(self._model)
        model._data = RemovedData(self._model.data)
        out = TwoBlockFit(model, self._est, self._moments, self._settings,
                         rank_tests=self._rank_tests, whitening=self._whitening,
                         stats=self._block_stats,
                         fit_data=None if self._fit_data_given is None
                         else RemovedData(self._fit_data_given), means=self._means)
        if not self.data_removed:  # the R^2 of the summary, computed while the rows are here
            # no rows (RowsNotInMemoryError): no R^2
            with contextlib.suppress(ValueError):
                out.__dict__["fit_measures"] = self.fit_measures
            # likewise the summary's main-effects tests
            with contextlib.suppress(ValueError):
                out.__dict__["_summary_main_effects"] = self._summary_main_effects
        return out

    @property
    def rank(self) -> int:
        return self._est.rank

    @property
    def ranks(self) -> dict[str, int]:
        """Each block's rank by name (both blocks share :attr:`rank`)."""
        return dict.fromkeys(self.block_names, int(self._est.rank))

    @property
    def standardize(self) -> bool:
        return self._settings.standardize

    @property
    def whitening(self) -> str:
        """The whitening the fit used: a key of
        :data:`jdr_stats.whitenings.WHITENING_METHODS` ("sample", "shrinkage", ...)."""
        return self._settings.whitening.name

    @property
    def sparsity(self) -> tuple[int, int] | None:
        return self._settings.sparsity

    @property
    def sparsity_cv(self) -> pd.DataFrame | None:
        """The cross-validation curve of a ``sparsity="cv"`` fit (None
        otherwise): one row per candidate ``(s1, s2)`` with ``cv_rsquared``
        (mean out-of-fold R-squared of y on the reduced features over the
        folds), its standard error ``se``, and the ``best`` and ``chosen``
        (one-standard-error rule) flags; the reason is
        ``results.settings.sparsity_choice``."""
        table = self._settings.sparsity_cv
        return None if table is None else table.copy()

    @property
    def support_tests(self) -> SupportResults | None:
        """The :class:`~jdr_stats.support.SupportResults` that chose the
        sparsity of a ``sparsity="auto"`` fit (None otherwise)."""
        return self._settings.support

    @property
    def rank_test_table(self) -> RankTestResults | LadleResults | None:
        """The rank tests that chose the rank of a ``rank="auto"`` fit (None
        when the rank was given)."""
        return self._rank_tests

    @property
    def rank_method(self) -> str | None:
        """How the rank was chosen: the test method, or None if given."""
        return self._settings.rank_method

    @property
    def settings(self) -> FitSettings:
        """What the fit used and why: every automatic choice (whitening, rank
        method) as a :class:`~jdr_stats.policy.Choice` with its reason and
        inputs (:class:`~jdr_stats.results.FitSettings`)."""
        return self._settings

    @property
    def block_sds(self) -> tuple[np.ndarray, np.ndarray]:
        """Column standard deviations of both blocks (divisor ``m``; kept by
        :meth:`remove_data`)."""
        sd_a, sd_b, _ = self._block_stats
        return sd_a, sd_b

    @property
    def _labelled(self) -> bool:
        return self._model.data.is_pandas

    def _frame(self, arr: np.ndarray, index: list[str], columns: list[str]):
        if self._labelled:
            return pd.DataFrame(arr, index=index, columns=columns)
        return arr.copy()

    # -- estimates --------------------------------------------------------
    @cached_property
    def directions(self) -> Mapping[str, pd.DataFrame | np.ndarray]:
        """Each block's basis by block name (read-only mapping, in block
        order): original coordinates, unit-length columns.  For two blocks
        ``directions_a`` and ``directions_b`` are its two entries."""
        frames = (self.directions_a, self.directions_b)  # the labelled est.bases
        return MappingProxyType(dict(zip(self._model.block_names, frames, strict=True)))

    @cached_property
    def directions_a(self) -> pd.DataFrame | np.ndarray:
        """Basis of the a-subspace, original coordinates, unit-length columns."""
        return self._frame(self._est.dir_a, self._names_a, _labels("dir", self.rank))

    @cached_property
    def directions_b(self) -> pd.DataFrame | np.ndarray:
        """Basis of the b-subspace, original coordinates, unit-length columns."""
        return self._frame(self._est.dir_b, self._names_b, _labels("dir", self.rank))

    @cached_property
    def directions_a_whitened(self) -> pd.DataFrame | np.ndarray:
        """Orthonormal basis of the a-subspace in whitened coordinates.

        Rows are the whitened coordinates ``w1..wn1`` of ``a' = L^{-1}(a - mean)``
        (``L`` the lower Cholesky factor of the covariance), not variables:
        ``w_j`` mixes the first ``j`` variables.  For a sparse fit the rows at
        the selected variables' positions hold the whitened coordinates of
        the selected variables alone (their own factor), the others are zero.
        Read :attr:`loadings_a` to compare variables.
        """
        return self._frame(self._est.u_std, _labels("w", len(self._names_a)),
                           _labels("dir", self.rank))

    @cached_property
    def directions_b_whitened(self) -> pd.DataFrame | np.ndarray:
        """Orthonormal basis of the b-subspace in whitened coordinates
        (rows ``w1..wn2``; see :attr:`directions_a_whitened`)."""
        return self._frame(self._est.v_std, _labels("w", len(self._names_b)),
                           _labels("dir", self.rank))

    @property
    def directions_a_std(self) -> pd.DataFrame | np.ndarray:
        """Deprecated alias of :attr:`directions_a_whitened` (its rows are
        whitened coordinates, not the variables it used to be labelled with)."""
        warnings.warn("directions_a_std is deprecated: use directions_a_whitened (rows "
                      "w1..wn: whitened coordinates) or loadings_a (per-SD loadings of "
                      "the variables)", FutureWarning, stacklevel=2)
        return self.directions_a_whitened

    @property
    def directions_b_std(self) -> pd.DataFrame | np.ndarray:
        """Deprecated alias of :attr:`directions_b_whitened`."""
        warnings.warn("directions_b_std is deprecated: use directions_b_whitened (rows "
                      "w1..wn: whitened coordinates) or loadings_b (per-SD loadings of "
                      "the variables)", FutureWarning, stacklevel=2)
        return self.directions_b_whitened

    @cached_property
    def _block_stats(self) -> tuple[np.ndarray, np.ndarray, Premises]:
        """Column SDs of both blocks and the premises (O(m n) when n1 + n2 >= m)."""
        # results saved by an earlier version keep the covariances instead
        sd_a, sd_b, prem = block_stats(self._model.data, self.rank,
                                       self.__dict__.get("_covariances"))
        return sd_a, sd_b, dataclasses.replace(prem, joint=self._settings.joint)

    def _loadings(self, dirs: np.ndarray, sd: np.ndarray) -> np.ndarray:
        return per_sd_loadings(dirs, sd)

    @property
    def loadings(self) -> Mapping[str, pd.DataFrame | np.ndarray]:
        """Per-SD loadings by block name (read-only mapping, in block order):
        :attr:`loadings_a` and :attr:`loadings_b`, beside :attr:`directions`."""
        frames = (self.loadings_a, self.loadings_b)
        return MappingProxyType(dict(zip(self._model.block_names, frames, strict=True)))

    @cached_property
    def loadings_a(self) -> pd.DataFrame | np.ndarray:
        """Per-standard-deviation loadings of block a's variables.

        Each direction's entry times the variable's standard deviation: the
        change of the reduced feature ``a^T u_k`` when the variable moves by
        one SD (the others fixed), so variables in different units compare.
        Each column is scaled so that its largest absolute entry is 1 (signs
        kept).  With correlated variables a loading is a partial effect, not
        an importance that adds up.

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(2000, 3, 2, 1, seed=0)
        >>> res = jdr.JointDimReduction(sim.y, sim.a * [1, 100, 0.01], sim.b).fit(1)
        >>> bool(abs(res.loadings_a).max() == 1.0)
        True
        """
        return self._frame(self._loadings(self._est.dir_a, self._block_stats[0]),
                           self._names_a, _labels("dir", self.rank))

    @cached_property
    def loadings_b(self) -> pd.DataFrame | np.ndarray:
        """Per-standard-deviation loadings of block b's variables (see
        :attr:`loadings_a`)."""
        return self._frame(self._loadings(self._est.dir_b, self._block_stats[1]),
                           self._names_b, _labels("dir", self.rank))

    @cached_property
    def diagnostics(self) -> Premises:
        """Checks of the method's premises (:class:`jdr_stats.diagnostics.Premises`):
        cross-block canonical correlations, the blocks' condition numbers, rows
        per entry of the cross moment; ``.table`` and ``.messages``."""
        return self._block_stats[2]

    @property
    def singular_values(self) -> np.ndarray:
        """All singular values of the decomposed (whitened) matrix, descending."""
        return self._est.singular_values.copy()

    @cached_property
    def coef_matrix(self) -> pd.DataFrame | np.ndarray:
        """``X_lin`` in whitened coordinates (n1 x n2)."""
        return self._frame(self._est.coef_matrix, self._names_a, self._names_b)

    @property
    def support_a(self) -> list[str]:
        """Names of the selected variables of block a (all for a dense fit)."""
        names = self._names_a
        return [names[j] for j in self._est.rows]

    @property
    def support_b(self) -> list[str]:
        """Names of the selected variables of block b (all for a dense fit)."""
        names = self._names_b
        return [names[j] for j in self._est.cols]

    def selection_stability(
        self,
        n_sub: int = 100,
        *,
        seed: int | np.random.Generator | None = None,
    ) -> pd.DataFrame:
        """How often each variable is selected on subsamples of half the rows.

        The sparse fit at the fit's ``(s1, s2)`` (the three-step projection,
        the fit's whitening re-estimated on each subsample) on ``n_sub``
        subsamples of ``m // 2`` rows, drawn as complementary pairs (the two
        halves of a random split), as stability selection does (theory page
        "Support selection", "Selection stability").

        Parameters
        ----------
        n_sub : int
            Subsamples (at least 2).
        seed : int, Generator or None
            Seed of the splits (same seed, same frequencies).

        Returns
        -------
        DataFrame
            Indexed by ``(block, variable)`` for every variable, columns
            ``selected`` (in this fit's support) and ``frequency`` (share
            of subsamples that selected it), the selected variables first,
            then by decreasing frequency.

        Notes
        -----
        A variable the fit selected with a low frequency is one the data
        barely single out; at ``p >> n`` expect most frequencies well below
        one (study ``studies/study_sparse_wide.py``).  Needs a sparse fit and
        the rows in memory, no case weights or covariates.

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> d = jdr.simulate.bilinear(40, 30, 10, 1, s1=3, s2=3, seed=0)
        >>> res = jdr.JointDimReduction(d.y, d.a, d.b).fit(1, sparsity=(3, 3))
        >>> st = res.selection_stability(20, seed=0)
        >>> list(st.columns), int(st["selected"].sum())
        (['selected', 'frequency'], 6)
        """
        n_sub = check_int(n_sub, "n_sub", low=2)
        if self.sparsity is None:
            raise ValueError("selection_stability() needs a sparse fit; got sparsity=None "
                             '(fit with sparsity=(s1, s2) or sparsity="cv")')
        if self._model.data.weighted:
            raise ValueError("selection_stability() does not handle case weights yet; the "
                             "model has weights")
        y, a, b = self._fit_data.rows("selection_stability()", unit=True)
        fa, fb = selection_frequencies(  # invariant to the response's unit
            y, np.asarray(a, float), np.asarray(b, float),
            rank=self.rank, kind=self.whitening, sparsity=self.sparsity,
            names_a=self._names_a, names_b=self._names_b, n_sub=n_sub,
            rng=normalize_seed(seed))
        frames = []
        name_a, name_b = self._model.block_names  # "a", "b" unless named
        for block, names, freq, chosen in ((name_a, self._names_a, fa, self._est.rows),
                                           (name_b, self._names_b, fb, self._est.cols)):
            sel = np.zeros(len(names), dtype=bool)
            sel[chosen] = True
            frame = pd.DataFrame({"selected": sel, "frequency": freq},
                                 index=pd.MultiIndex.from_product([[block], list(names)],
                                                                  names=["block", "variable"]))
            frames.append(frame.sort_values(["selected", "frequency"], ascending=False,
                                            kind="stable"))
        return pd.concat(frames)

    def transform(
        self, exog_a: Any = None, exog_b: Any = None, *, data: Any = None
    ) -> pd.DataFrame | np.ndarray:
        """The ``2r`` reduced features ``(a - mean_a)^T U_hat, (b - mean_b)^T V_hat``.

        Parameters
        ----------
        exog_a, exog_b : array_like, optional
            New data (same columns as the fitted blocks); the training data
            when omitted.  Both or neither must be given, or ``exog_a`` a
            dict of both blocks by name (``transform(blocks)``, as at any K).
        data : DataFrame or mapping, optional
            New data for a model built by :meth:`JointDimReduction.from_formula`:
            both blocks are rebuilt from the formula with the training
            transformations (``center(x)`` uses the training mean) and
            categorical codings (the training levels).

        Returns
        -------
        DataFrame or ndarray, shape (rows, 2r)
            Columns ``a_dir1..a_dirr, b_dir1..b_dirr``: the centred data times
            :attr:`directions_a` and :attr:`directions_b` (centred at the
            training means).

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> df = jdr.simulate.bilinear(500, 3, 2, 1, seed=1).frame
        >>> model = jdr.JointDimReduction.from_formula("y ~ a0 + a1 + a2 | b0 + np.exp(b1)", df)
        >>> res = model.fit(1)
        >>> res.transform(data=df.iloc[:3]).shape
        (3, 2)
        """
        if isinstance(exog_a, Mapping) and exog_b is None and data is None:
            names = list(self._model.block_names)
            if sorted(map(str, exog_a)) != sorted(names):
                raise ValueError(f"blocks: a dict of the blocks {names} by name; got "
                                 f"{list(exog_a)}")
            exog_a, exog_b = exog_a[names[0]], exog_a[names[1]]
        if data is not None:
            if exog_a is not None or exog_b is not None:
                raise ValueError("give data (formula models) or exog_a and exog_b, not both")
            specs = getattr(self._model, "_model_specs", None)
            if specs is None and self._model.formula is not None:
                raise ValueError(
                    "data= needs the formula's codings, which a results file does not keep "
                    "(results.save, jdr_stats.load); give exog_a and exog_b (the design "
                    "columns)"
                )
            if specs is None:
                raise ValueError(
                    "data= needs a model built by JointDimReduction.from_formula; "
                    "give exog_a and exog_b"
                )
            exog_a = design_from_spec(specs[0], data, "exog_a")
            exog_b = design_from_spec(specs[1], data, "exog_b")
        if (exog_a is None) != (exog_b is None):
            raise ValueError("give both exog_a and exog_b, or neither (training data)")
        m = self._model
        source = m.data.source
        if exog_a is None and isinstance(source, DaskSource):
            exog_a, exog_b = source.blocks()  # the dask training data (lazy)
        if exog_a is not None and (is_dask_collection(exog_a) or is_dask_collection(exog_b)):
            return self._transform_dask(exog_a, exog_b)
        if exog_a is None:
            _, a, b = m.data.rows("transform() of the training data (pass exog_a and exog_b)")
            index = m.data.row_index
        else:  # new data: pandas blocks matched by row label, never by position
            exog_a, exog_b = align_inputs({"exog_a": exog_a, "exog_b": exog_b}).values()
            a = check_new_block(exog_a, "exog_a", m.data.exog_names_a, labelled=self._labelled)
            b = check_new_block(exog_b, "exog_b", m.data.exog_names_b, labelled=self._labelled)
            if a.shape[0] != b.shape[0]:
                raise ValueError(
                    f"exog_a has {a.shape[0]} rows but exog_b has {b.shape[0]}"
                )
            index = exog_a.index if isinstance(exog_a, pd.DataFrame) else None
        feats = np.hstack(
            [(a - self._means[0]) @ self._est.dir_a,
             (b - self._means[1]) @ self._est.dir_b]
        )
        if self._labelled or isinstance(exog_a, pd.DataFrame):
            cols = _labels("a_dir", self.rank) + _labels("b_dir", self.rank)
            return pd.DataFrame(feats, index=index, columns=cols)
        return feats

    def _transform_dask(self, exog_a: Any, exog_b: Any):
        """Lazy reduced features of dask blocks.

        Dask arrays give a dask array (2r columns); dask DataFrames give a
        dask DataFrame with the columns ``a_dir1.., b_dir1..`` (computed
        partition-wise from the two blocks side by side, so their rows stay
        aligned).
        """
        import dask.array as da
        import dask.dataframe as dd

        m = self._model
        for arg, x in (("exog_a", exog_a), ("exog_b", exog_b)):
            if not is_dask_collection(x):
                raise TypeError(f"{arg} must be a dask collection like the other block; got "
                                f"{type(x).__name__}")
        n1, n2 = len(m.data.exog_names_a), len(m.data.exog_names_b)
        cols = _labels("a_dir", self.rank) + _labels("b_dir", self.rank)
        mean_a, mean_b = self._means
        dir_a, dir_b = self._est.dir_a, self._est.dir_b
        frames = [isinstance(x, (dd.DataFrame, dd.Series)) for x in (exog_a, exog_b)]
        if all(frames):
            parts = [x.to_frame() if isinstance(x, dd.Series) else x for x in (exog_a, exog_b)]
            for arg, x, n in (("exog_a", parts[0], n1), ("exog_b", parts[1], n2)):
                if len(x.columns) != n:
                    raise ValueError(f"{arg} must have {n} columns (as in the fitted model); "
                                     f"got {len(x.columns)}")
            both = dd.concat(parts, axis=1)

            def features(part: pd.DataFrame) -> pd.DataFrame:
                arr = part.to_numpy(dtype=float)
                out = np.hstack([(arr[:, :n1] - mean_a) @ dir_a, (arr[:, n1:] - mean_b) @ dir_b])
                return pd.DataFrame(out, index=part.index, columns=cols)

            meta = pd.DataFrame({c: pd.Series(dtype=float) for c in cols})
            return both.map_partitions(features, meta=meta)
        blocks = []
        for arg, x, mean, dirs, n in (("exog_a", exog_a, mean_a, dir_a, n1),
                                      ("exog_b", exog_b, mean_b, dir_b, n2)):
            arr = x if isinstance(x, da.Array) else x.to_dask_array(lengths=True)
            arr = arr[:, None] if arr.ndim == 1 else arr
            if arr.shape[1] != n:
                raise ValueError(f"{arg} must have {n} columns (as in the fitted "
                                 f"model); got {arr.shape[1]}")
            blocks.append((arr.astype(float) - mean) @ dirs)
        if blocks[0].shape[0] != blocks[1].shape[0]:
            raise ValueError(f"exog_a has {blocks[0].shape[0]} rows but exog_b has "
                             f"{blocks[1].shape[0]}")
        if blocks[0].chunks[0] != blocks[1].chunks[0]:
            blocks[1] = blocks[1].rechunk((blocks[0].chunks[0], -1))
        return da.concatenate(blocks, axis=1)
