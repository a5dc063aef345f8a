"""Results of the joint dimension reduction model (:class:`JDRResults`).

What :meth:`jdr_stats.JointDimReduction.fit` returns: the estimated
subspaces of both blocks, labelled, with transform, summary and the doors to
inference (rank tests, bootstrap).
"""

from __future__ import annotations

import contextlib
import dataclasses
import warnings
from collections.abc import Callable, Mapping
from functools import cached_property
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import pandas as pd
from statsmodels.iolib.summary2 import Summary

from . import policy
from ._version import __version__
from .core._linalg import AnyWhitening, BlockMoments
from .core.whitening import DesignWhitening
from .diagnostics import Premises, block_stats
from .estimation._estimate import Estimate, choose_whitening, inference_note, moments_and_whitenings
from .estimation._joint import ScaledModelData, joint_data, scaled_data
from .estimation._settings import FitSettings
from .fitting._block_view import BlockViewMixin
from .fitting._kresults_extra import per_sd_loadings
from .fitting._orthogonal_fit import orthogonal_note, orthogonal_tests
from .fitting._rank_zero import check_rank_positive, no_evidence_headline
from .fitting._results_extra import FitMeasuresMixin
from .inference.association import association_test as _association_test
from .inference.bootstrap import BootstrapResults, Interval
from .inference.bootstrap import Method as BootstrapMethod
from .inference.bootstrap import bootstrap as _bootstrap
from .inference.hypotheses import TestResult
from .inference.ladle import LADLE_AT_ZERO, LADLE_CHOSEN_BY, LadleResults
from .inference.main_effects import MainEffectsMethod, MainEffectsResults
from .inference.main_effects import main_effects_test as _main_effects_test
from .inference.rank_methods import RANK_METHODS, tail_notes
from .inference.rank_tests import RankMethod, RankTestResults
from .inference.rank_tests import rank_tests as _rank_tests
from .io._data import (
    DataModel,
    RemovedData,
    RowsData,
    align_inputs,
    check_new_block,
    design_from_spec,
)
from .io._responses import summary_lines as _response_lines
from .io._responses import summary_notes as _response_notes
from .persistence._export import ExportMixin, records
from .runtime._validation import check_int, normalize_seed
from .streams._sources import DaskSource, is_dask_collection
from .summary import (
    LOADING_NOTES,
    SHORT_LOADING_NOTES,
    SIGNS_NOTE,
    SummaryMixin,
    build_summary,
    format_pvalue,
    json_safe,
)
from .support import SupportResults
from .support._cv import selection_frequencies
from .whitenings import WHITENING_METHODS

__all__ = ["FitSettings", "JDRResults"]


def _labels(prefix: str, r: int) -> list[str]:
    return [f"{prefix}{k + 1}" for k in range(r)]


def _rank_reference_note(rt: RankTestResults) -> str:
    """The fit summary's short word on how its rank tests' rows were
    referred (their own summary gives every reference in full)."""
    method = RANK_METHODS.get(rt.method)
    both = tail_notes(method, {"both"}) if method is not None else []
    head = (f"conservative where d/m > {policy.ROBUST_BOTH_MIN_RATIO:g}; "
            if both and both[0] in rt.references else "")
    return head + "references: results.rank_test_table.summary(notes='full')."



#: What the summary's main-effects line says once of a test that ran (the
#: reasons in ``main_effects_test().table`` give the numbers).
_MAIN_EFFECTS_METHOD_NOTES = {
    "Freedman-Lane": "Freedman-Lane: given the other block, residuals of y permuted, "
                     "asymptotically valid",
    "permutation (marginal)": "marginal: not given the other block (too wide to partial "
                              "out), exact",
    "Freedman-Lane (marginal)": "marginal: given the covariates, not the other block (too "
                                "wide to partial out), asymptotically valid",
}


def _method_label(method: str) -> str:
    """``"permutation (marginal)"`` as ``"marginal permutation"`` (no nested brackets)."""
    return ("marginal " + method.removesuffix(" (marginal)") if method.endswith("(marginal)")
            else method)

class JDRResults(BlockViewMixin, FitMeasuresMixin, ExportMixin, SummaryMixin):
    """Results of :meth:`JointDimReduction.fit` (read-only).

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

    def remove_data(self) -> JDRResults:
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
        out = JDRResults(model, self._est, self._moments, self._settings,
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
        y, a, b = self._fit_data.rows("selection_stability()")
        fa, fb = selection_frequencies(
            np.asarray(y, float), np.asarray(a, float), np.asarray(b, float),
            rank=self.rank, kind=self.whitening, sparsity=self.sparsity,
            names_a=self._names_a, names_b=self._names_b, n_sub=n_sub,
            rng=normalize_seed(seed))
        frames = []
        for block, names, freq, chosen in (("a", self._names_a, fa, self._est.rows),
                                           ("b", self._names_b, fb, self._est.cols)):
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
            when omitted.  Both or neither must be given.
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

    # -- inference (implemented in jdr_stats.inference) -------------------
    def rank_tests(
        self,
        method: RankMethod = "auto",
        *,
        max_rank: int | None = None,
        n_perm: int | None = None,
        seed: int | np.random.Generator | None = None,
        progress: bool | Callable[[int, int], Any] = False,
        n_jobs: int | None = None,
    ) -> RankTestResults:
        """Sequential tests of ``H0: r = k`` for ``k = 0, 1, ..., max_rank``.

        See :func:`jdr_stats.inference.rank_tests.rank_tests`, which this
        calls with the fit's data, moments and whitening.  The table is
        returned, not stored: pass it to :meth:`summary` as
        ``summary(rank_tests=table)`` to print it with the fit.
        """
        if self._settings.orthogonal:
            table = orthogonal_tests(self._model.data, self._settings.joint, method, max_rank,
                                     self._settings.interactions_name)
            self.diagnostics.warn("rank tests")
            return table
        data, moments, sample = self._test_input
        table = _rank_tests(
            data, moments, sample,
            method=method, max_rank=max_rank, n_perm=n_perm, seed=seed,
            progress=progress, n_jobs=n_jobs,
        )
        self.diagnostics.warn("rank tests")  # before any p-value is shown
        return table

    def association_test(
        self,
        n_perm: int = 199,
        *,
        seed: int | np.random.Generator | None = None,
        statistic: Literal["combined", "dense", "sparse"] = "combined",
    ) -> TestResult:
        """Permutation test of no association, ``H0: y`` independent of
        ``(a, b)`` (rank 0), with the fit's own whitening: valid at any width.

        Parameters
        ----------
        n_perm : int
            Permutations of the response's rows (default 199).
        seed : int, Generator or None
            Seed of the permutations (same seed, same p-value).
        statistic : {"combined", "dense", "sparse"}
            ``"combined"`` (default): the cross moment's ``T`` below,
            each block's first moment ``T_k = ||sum_i z_i x_ik||^2`` (its
            rows ``x_ik`` whitened as ``independent_blocks=True`` whitens
            them, under either estimator; the response standardised
            ``z_i``), and the largest squared correlation of the response
            with one variable of each block and with one product of centred
            columns of the two blocks; the parts' logarithms standardised by
            their mean and standard deviation over the permutations, the
            largest referred to its permutation distribution (exact too;
            theory of rank tests, 8c): it sees interactions and main
            effects, dense or carried by one variable or one pair.  ``"dense"``: ``T`` alone, over
            all variables; it sees interactions only, and where the
            response shifts a block's mean its permutations carry the shift
            into the cross moment, so its p-value is pushed towards 1
            (study ``studies/study_association.py``, part ``main``).
            ``"sparse"``: the sparse fit's ``sum_j s_j^2`` at each of a few
            sparsity levels fixed by the widths (one variable per block up
            to all of them, :func:`jdr_stats.inference.association.sparse_levels`),
            the three-step selection re-run in every permutation, combined
            by the minimum of the levels' permutation p-values, itself
            referred to its permutation distribution (exact too; theory of
            rank tests, "The sparse statistic").  More power when few
            variables carry the signal, a little less when many do (study
            ``studies/study_sparse_wide.py``); it costs a sparse fit per
            level and permutation.

        Returns
        -------
        TestResult
            ``statistic`` ``T = sum_j s_j^2`` of the whitened cross moment
            with the response standardised (whitened for ``q > 1`` columns),
            and ``pvalue = (1 + #{T* >= T}) / (n_perm + 1)`` (``"combined"``:
            the statistic is the observed largest standardised part;
            ``"sparse"``: the observed minimum p-value over the levels).

        Notes
        -----
        The blocks' whitening (any kind, across blocks too) does not depend on
        ``y``, so under ``H0`` with rows of ``y`` exchangeable given the
        blocks and the weights, permuting ``y``'s rows gives an exact test at
        any width (theory of rank tests, "The test of no association at any
        width").  A sparse fit is tested on all variables.  Not with
        covariates (residuals on them are not exchangeable); needs the rows.
        It tests rank 0 only; the rank tests test higher ranks where they run.

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> d = jdr.simulate.bilinear(40, 120, 21, 1, seed=0)
        >>> res = jdr.JointDimReduction(d.y, d.a, d.b).fit(rank=1)
        >>> t = res.association_test(99, seed=1)
        >>> t.pvalue == res.association_test(99, seed=1).pvalue, t.method
        (True, 'association')
        """
        main = None
        if statistic == "combined" and self._settings.joint:
            # the first moments of the blocks themselves (the fit saw their
            # residuals on each other), in the per-block fit's coordinates
            _, a, b = self._model.data.rows("association_test()")
            main = (self._per_block_whitening(), np.asarray(a, float), np.asarray(b, float))
        return _association_test(self._fit_data, self._whitening, n_perm=n_perm, seed=seed,
                                 whitening_name=self.whitening, statistic=statistic,
                                 main=main)

    def main_effects_test(
        self,
        method: MainEffectsMethod = "auto",
        *,
        n_perm: int = 199,
        seed: int | np.random.Generator | None = None,
    ) -> MainEffectsResults:
        """Per-block tests of main effects, ``H0: E[y z_k] = 0``: no linear
        (first-moment) association of the response with block ``k``.

        The estimator uses ``E[y a' b'^T]`` and cannot see a main effect (a
        class that shifts a block's mean, an additive or even link); this
        test sees it: for Gaussian blocks ``E[y z_k] = U_k E[df/du_k]``
        (first-order Stein), so it rejects exactly when the link has a part
        linear in the block's directions (theory page "Main effects").

        Parameters
        ----------
        method : {"auto", "robust", "permutation"}
            ``"robust"``: the score test of the regression of ``y`` on the
            block with the heteroscedasticity-robust (sandwich) variance and
            Hotelling's F reference, for ``q n_k`` up to a share of the rows
            (:func:`jdr_stats.policy.main_effects_method`).  ``"permutation"``:
            the squared studentised first moments, permuting ``y``'s rows
            (per block, without covariates: exact when ``y`` is independent
            of the block, at any width), or given the other block and/or
            the covariates the Freedman--Lane test (the residuals of ``y``
            on what is partialled out permuted; asymptotically valid, not
            exact), while the columns partialled out are at most half of
            ``m - 1``; beyond that, under the joint estimator, the test of
            the block's marginal association (method
            ``"permutation (marginal)"``).  ``"auto"`` (default): robust
            where it runs, else as ``"permutation"``, else the row says why
            not.
        n_perm : int
            Permutations of the permutation version (default 199).
        seed : int, Generator or None
            Seed of the permutations (same seed, same p-values).

        Returns
        -------
        MainEffectsResults
            One row per block: ``statistic``, ``df``, ``pvalue``,
            ``df_denom``, ``method``, ``reason``.

        Notes
        -----
        Per block (``independent_blocks=True``) a row tests the block's
        marginal first moment; under the joint estimator
        (``independent_blocks=False``) the first moment of the jointly
        whitened block ``(Sigma^{-1} x)_k``, i.e. block ``k``'s main effect
        given the other block (the Wald test of its coefficients in the
        regression of ``y`` on both blocks).  With covariates both blocks
        and ``y`` are their residuals.  The permutation statistic takes
        each block under the whitening ``fit(..., independent_blocks=True)``
        with the same ``whitening=`` uses, under either estimator: a
        ``"permutation (marginal)"`` row is the per-block fit's test (same
        statistic and, same seed, same p-value), and since that whitening
        depends on the blocks only, never on ``y``, it stays exact.  The
        Freedman--Lane and marginal
        versions are derived on the theory page (sections 5 and 6) and
        their size is studied in ``studies/study_main_effects.py --part
        conditional``.  Needs the rows: the sandwich needs
        ``sum (y_i - ybar)^2 z_i z_i^T``, which the sums do not hold (a row
        source is read once, into memory; bare sums refuse).  The
        size on the robustness battery is studied in
        ``studies/study_main_effects.py``.

        Examples
        --------
        >>> import numpy as np, jdr_stats as jdr
        >>> rng = np.random.default_rng(0)
        >>> a, b = rng.normal(size=(400, 5)), rng.normal(size=(400, 4))
        >>> y = a[:, 0] + a[:, 1] * b[:, 0] + rng.normal(size=400)
        >>> t = jdr.JointDimReduction(y, a, b).fit(1).main_effects_test()
        >>> t.table["method"].tolist(), bool(t.pvalues["a"] < 1e-6)
        (['robust', 'robust'], True)
        """
        data = self._model.data
        data.require_source("main_effects_test()")
        source = getattr(data, "source", None)
        if source is None:
            y, a, b, weights = data.rows("main_effects_test()", weights=True)
        else:  # a row source: its rows read once (the same numbers as in memory)
            parts = list(source.iter_weighted_chunks())
            y, a, b = (np.concatenate([np.asarray(c[j], float) for c in parts])
                       for j in range(3))
            weights = (None if any(c[3] is None for c in parts)
                       else np.concatenate([np.asarray(c[3], float) for c in parts]))
        adjustment = getattr(self._model.data, "adjustment", None)
        return _main_effects_test(
            y, [a, b], list(self._model.block_names), self._per_block_whitening,
            weights=weights,
            joint=self._settings.joint, n_adjusted=int(getattr(adjustment, "p", 0)),
            covariates=getattr(adjustment, "design", None),
            method=method, n_perm=n_perm, seed=seed)

    def _per_block_whitening(self) -> DesignWhitening[AnyWhitening] | None:
        """The blocks' whitening of ``fit(..., independent_blocks=True)`` with
        this fit's ``whitening=`` (``"auto"`` resolved per block,
        :func:`jdr_stats.policy.whitening` with ``joint=False``): the
        coordinates of the main-effects permutation test, so that its
        marginal rows are the per-block fit's test under either estimator.
        Built from the model's rows by the fit's own code; it depends on the
        blocks only, never on ``y``."""
        if not self._settings.joint:
            return self._whitening
        choice = self._settings.whitening
        names_a, names_b = list(self._names_a), list(self._names_b)
        kind = choose_whitening(choice.name if choice.reason == "given" else "auto",
                                self.nobs, len(names_a), len(names_b), joint=False).name
        auto = self._settings.rank_method is not None or self._settings.support is not None
        return moments_and_whitenings(scaled_data(self._model.data), names_a, names_b, kind,
                                      auto)[1]

    @cached_property
    def _summary_main_effects(self) -> MainEffectsResults | None:
        """The summary's main-effects tests (None without rows, or where a
        permutation version would be too long for a summary)."""
        data = self._model.data
        if self.data_removed or (data.sums is not None
                                 and getattr(data, "source", None) is None):
            return None
        if self.nobs > policy.MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS:
            method: MainEffectsMethod = "robust"
        else:
            method = "auto"
        return self.main_effects_test(method, n_perm=policy.MAIN_EFFECTS_PERMUTATIONS,
                                      seed=policy.MAIN_EFFECTS_SEED)

    def _main_effects_notes(self, info: dict[str, Any], full: bool = True) -> list[str]:
        """"What this reduction can see": one note, then one line with each
        block's main-effect p-value, or why its test did not run and what
        runs instead (``full``: with what a main effect is)."""
        table = self._summary_main_effects
        sees = ("What this reduction can see: interactions between the blocks, not main "
                "effects" + (" (a block's own link to y)" if full else ""))
        if table is None:
            return [sees + "."]
        parts: list[str] = []
        tails: list[str] = []  # what the refusals share is said once
        for block, row in table.table.iterrows():
            reason = str(row.get("reason", "") or "see results.main_effects_test()")
            head, _, tail = reason.partition("; ")
            # the summary gives the numbers that failed; the guide page says why
            head = head.removeprefix("robust test refused: ").split(": the sandwich")[0]
            head = "no rows left" if head.startswith("no rows left") else head
            ran = bool(np.isfinite(row["pvalue"]))
            if not ran and reason.startswith("robust test refused") \
                    and self.nobs > policy.MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS:
                tail = ("what runs: results.main_effects_test(), a permutation version (not "
                        f"in the summary above {policy.MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS} rows)")
            if ran:
                tail = _MAIN_EFFECTS_METHOD_NOTES.get(str(row["method"]), "")
            if tail and tail not in tails:
                tails.append(tail)
            parts.append(f"{block}, " + (
                f"p = {format_pvalue(row['pvalue'])} ({_method_label(str(row['method']))})"
                if ran else f"not run ({head})"))
        line = f"{sees}; their tests (results.main_effects_test()): " + "; ".join(parts)
        # a refusal's last clause says what runs instead
        line += "".join(("; instead " + t.split("what runs: ", 1)[1] if "what runs: " in t
                         else f"; {t}") for t in tails)
        notes = [line + "."]
        return notes

    @cached_property
    def _summary_association(self) -> TestResult | str | None:
        """The summary's association test (policy.ASSOCIATION_SUMMARY_*): the
        test, a line saying how to run it, or None where the rank tests run."""
        m, n1, n2 = self.nobs, len(self._names_a), len(self._names_b)
        if not policy.association_in_summary(m, n1, n2):
            return None
        if self._model.data.adjustment.p if hasattr(self._model.data, "adjustment") else 0:
            return None
        if m > policy.ASSOCIATION_SUMMARY_MAX_ROWS or self.data_removed \
                or self._fit_data.sums is not None:
            return ("Test of no association not run here (its cost, or rows not in memory): "
                    "results.association_test(n_perm=199, seed=0).")
        return self.association_test(policy.ASSOCIATION_PERMUTATIONS,
                                     seed=policy.ASSOCIATION_SEED)

    def bootstrap(
        self,
        n_boot: int = 999,
        *,
        seed: int | np.random.Generator | None = None,
        method: BootstrapMethod = "pairs",
        interval: Interval = "percentile",
        alpha: float = 0.05,
        progress: bool | Callable[[int, int], Any] = False,
        n_jobs: int | None = None,
    ) -> BootstrapResults:
        """Bootstrap the fit; see :func:`jdr_stats.inference.bootstrap.bootstrap`
        (called with the fit's data, estimate, ``standardize`` and ``sparsity``;
        ``n_jobs`` processes give the same numbers as one); every replicate
        re-estimates the fit's :attr:`whitening`.  A rank-0 fit has no subspace:
        a ``ValueError`` says there is nothing to bound."""
        check_rank_positive(self.rank, "bootstrap")
        if self._settings.orthogonal:
            raise ValueError(f'bootstrap: a fit with interactions='
                             f'"{self._settings.interactions_name}" has no bootstrap yet '
                             "(replicates would have to re-estimate the residual "
                             'regression); use interactions="stein" or the rank tests')
        return _bootstrap(
            self._fit_data, self._est, standardize=self.standardize,
            sparsity=self.sparsity, n_boot=n_boot, seed=seed, method=method,
            interval=interval, alpha=alpha, progress=progress, n_jobs=n_jobs, fit=self,
            # the joint estimator's rows carry their (regularised) partial covariances,
            # which every replicate re-estimates and whitens with (the angles' metric)
            whitening="sample" if self._fit_data is not self._model.data
            and not isinstance(self._fit_data, ScaledModelData) else self.whitening,
            whitening_maps=self._whitening,
        )

    # -- export -----------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The fit as plain JSON types (``to_json`` writes it, the command
        line's ``--format json`` prints it).

        Returns
        -------
        dict
            ``model``, ``version``, ``endog``, ``formula``, ``nobs``, ``n1``,
            ``n2``, ``rank``, ``rank_method``, ``alpha``, ``standardize``,
            ``whitening``, ``choices`` (each automatic choice of the fit as
            ``{"name", "reason", "inputs"}``: :attr:`settings`),
            ``sparsity`` (``[s1, s2]`` or None), ``weights`` (bool),
            ``response`` and ``adjusted_for`` (the summary's lines; with
            covariates also ``effective_obs``), ``singular_values``,
            ``directions`` (one record per variable:
            ``{"block": "a", "variable": name, "dir1": ..., "dirr": ...}``,
            original coordinates), ``support_a``, ``support_b``,
            ``rank_tests`` (the tests that chose the rank of a
            ``rank="auto"`` fit, as their ``to_dict()``, else None) and
            ``support_tests`` (likewise for ``sparsity="auto"``),
            ``loadings`` (the per-SD loadings, records like ``directions``)
            ``fit_measures`` (:attr:`fit_measures` as a dict, None without
            rows in memory), ``premises`` (:attr:`diagnostics`:
            its table as records, the cross-block canonical correlations, the
            messages and the remarks), and the tests the summary shows:
            ``main_effects_test`` (its ``to_dict()``: each block's p-value
            and method; None without rows) and ``association_test`` (at
            p >> n: the permutation test of no association as its
            ``to_dict()``, or ``{"not_run": why}``; None where the rank
            tests run instead).  NaN are None; keys have no spaces.

        Examples
        --------
        >>> import json, jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(500, 3, 2, 1, seed=0)
        >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
        >>> res.to_dict()["directions"][0].keys()
        dict_keys(['block', 'variable', 'dir1'])
        >>> json.loads(res.to_json())["rank"]
        1
        """
        m: Any = self._model
        cols = _labels("dir", self.rank)
        names = [("a", v) for v in m.data.exog_names_a] + [("b", v) for v in m.data.exog_names_b]
        dirs = pd.DataFrame(np.vstack([self._est.dir_a, self._est.dir_b]), columns=cols,
                            index=pd.MultiIndex.from_tuples(names, names=["block", "variable"]))
        return {
            "model": "JointDimReduction",
            "version": __version__,
            "endog": m.endog_name,
            "formula": m.formula,
            "nobs": self.nobs,
            "n1": len(m.data.exog_names_a),
            "n2": len(m.data.exog_names_b),
            "blocks": list(m.block_names),
            "rank": self.rank,
            "rank_method": self.rank_method,
            "alpha": json_safe(self._settings.alpha),
            "standardize": self.standardize,
            "whitening": self.whitening,
            # every automatic choice with its reason and inputs (policy.Choice)
            "choices": {what: json_safe(c.to_dict())
                        for what, c in self._settings.choices.items()},
            "sparsity": None if self.sparsity is None else list(self.sparsity),
            "weights": bool(m.data.weighted),
            **{k.rstrip(":").lower().replace(" ", "_").replace(".", ""): v
               for k, v in _response_lines(m.data).items()},
            "singular_values": json_safe(self.singular_values),
            "directions": records(dirs),
            "support_a": self.support_a,
            "support_b": self.support_b,
            "rank_tests": None if self._rank_tests is None else self._rank_tests.to_dict(),
            "support_tests": (None if self.support_tests is None
                              else self.support_tests.to_dict()),
            "loadings": records(pd.DataFrame(
                np.vstack([self._loadings(self._est.dir_a, self._block_stats[0]),
                           self._loadings(self._est.dir_b, self._block_stats[1])]),
                columns=cols, index=dirs.index)),
            "fit_measures": self._fit_measures_dict(),
            "premises": {
                "table": records(self.diagnostics.table),
                "cross_correlations": json_safe(self.diagnostics.cross_correlations),
                "messages": self.diagnostics.messages,
                "remarks": self.diagnostics.remarks,
            },
            **self._shown_tests_dict(),
        }

    def _shown_tests_dict(self) -> dict[str, Any]:
        """The tests the summary prints besides the rank tests and premises:
        the main-effects and association tests, as their ``to_dict()``."""
        me = self._summary_main_effects
        assoc = self._summary_association
        return {
            "main_effects_test": None if me is None else me.to_dict(),
            "association_test": (None if assoc is None
                                 else {"not_run": assoc} if isinstance(assoc, str)
                                 else assoc.to_dict()),
        }

    def _fit_measures_dict(self) -> dict[str, Any] | None:
        """:attr:`fit_measures` as plain types, None where the summary shows n/a."""
        from .exceptions import RowsNotInMemoryError

        try:
            fm = self.fit_measures
        except (RowsNotInMemoryError, ValueError):
            return None
        return {k: json_safe(v) for k, v in dataclasses.asdict(fm).items()}

    # -- summary ----------------------------------------------------------
    def _singular_value_table(self, max_rows: int = 10) -> pd.DataFrame:
        s = self._est.singular_values
        energy = s**2 / np.sum(s**2) if np.sum(s**2) > 0 else np.zeros_like(s)
        k = min(len(s), max(max_rows, self.rank))
        return pd.DataFrame(
            {
                "singular value": s[:k],
                "share": energy[:k],
                "cumulative": np.cumsum(energy)[:k],
            },
            index=pd.Index(np.arange(1, k + 1), name="k"),
        )

    def _loading_tables(self, loadings: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Loadings of the selected variables (all of them for a dense fit;
        the others are zero by construction): per-SD or raw directions."""
        if loadings == "sd":
            ma = self._loadings(self._est.dir_a, self._block_stats[0])
            mb = self._loadings(self._est.dir_b, self._block_stats[1])
        else:
            ma, mb = self._est.dir_a, self._est.dir_b
        cols = _labels("dir", self.rank)
        la = pd.DataFrame(ma, index=self._names_a, columns=cols).iloc[self._est.rows]
        lb = pd.DataFrame(mb, index=self._names_b, columns=cols).iloc[self._est.cols]
        return la, lb

    def _block_headings(self) -> tuple[str, str]:
        """``"block a"``, ``"block b"``, or the blocks' names (``from_blocks``)."""
        names = self._model.block_names
        if tuple(names) == ("a", "b"):
            return ("block a", "block b")
        return (f"block a: {names[0]}", f"block b: {names[1]}")

    def _association_notes(self, info: dict[str, Any]) -> list[str]:
        """At p >> n (policy.association_in_summary): the test of no
        association in ``info`` (or how to run it) and the caveat on R^2."""
        assoc = self._summary_association
        if assoc is None:
            return []
        notes = [assoc] if isinstance(assoc, str) else [
            f"No association (H0: y independent of (a, b); exact permutation test of "
            f"interactions and main effects): p = {format_pvalue(assoc.pvalue)} "
            "(results.association_test())."]
        if isinstance(assoc, TestResult):
            info["No association p:"] = f"{format_pvalue(assoc.pvalue)} (permutation)"
        return notes

    def _headline(self, rank_tests: RankTestResults | LadleResults | None) -> list[str]:
        """What was found, the summary's first line: the rank and the test
        that chose it with its p-values, the association test where shown."""
        rt = self._rank_tests
        if isinstance(rt, LadleResults):
            head = f"Found: rank {self.rank}, chosen by the ladle estimator"
            head += f" ({LADLE_AT_ZERO}; rank 0, no directions)" if rt.rank == 0 else ""
        elif rt is not None:
            pv = rt.table["pvalue"].iloc[:self.rank + 1]
            tests = ", ".join(f"k = {k}: p = {format_pvalue(p)}" for k, p in pv.items())
            if len(pv) > 4:  # the first test and the two that chose the rank
                tests = ", ..., ".join(", ".join(f"k = {k}: p = {format_pvalue(p)}"
                                                for k, p in part.items())
                                      for part in (pv.iloc[:1], pv.iloc[-2:]))
            alpha = self._settings.alpha
            if len(pv) and not pv.iloc[0] < alpha:  # the tests chose rank 0
                head = no_evidence_headline(rt.method, alpha or 0.05,
                                            format_pvalue(pv.iloc[0]), self.rank)
            else:
                head = (f"Found: rank {self.rank}, chosen by the {rt.method} rank tests of "
                        f"H0: rank <= k at alpha = {alpha:g} ({tests})")
        else:
            head = f"Fitted: rank {self.rank} (given; results.rank_tests() tests it)"
        if rank_tests is not None:
            pv = rank_tests.table["pvalue"].iloc[:self.rank + 1]
            head += (f"; {rank_tests.method} tests: " + ", ".join(
                f"k = {k}: p = {format_pvalue(p)}" for k, p in pv.items()))
        assoc = self._summary_association
        if isinstance(assoc, TestResult):
            head += f"; no association: p = {format_pvalue(assoc.pvalue)} (permutation)"
        return [head + "."]

    def summary(
        self,
        *,
        rank_tests: RankTestResults | None = None,
        loadings: Literal["sd", "raw"] = "sd",
        notes: Literal["short", "full"] = "short",
    ) -> Summary:
        """A statsmodels ``Summary``: what was found (the rank and the test
        that chose it), model information, singular values, loadings of each
        block (side by side), the premise checks (:attr:`diagnostics`), the
        rank tests of a ``rank="auto"`` fit, and the table ``rank_tests``
        when one is given (from :meth:`rank_tests`).

        ``loadings="sd"`` (default) shows :attr:`loadings_a` and
        :attr:`loadings_b` (per-SD, largest 1 per column); ``"raw"`` the
        unit-length directions in the variables' own units.

        ``notes="short"`` (default) keeps the notes to a screen: each
        automatic choice with its reason, the tests' p-values and the
        premises' verdict; ``"full"`` adds what each choice implies (the
        whitening's effect on the tests, the rank tests' references) and
        shows every singular value.  The guide page "Reading the summary"
        explains each line.

        The text depends only on the fit and the arguments: calling other
        methods first never changes it.
        """
        if notes not in ("short", "full"):
            raise ValueError(f'notes must be "short" or "full"; got {notes!r}')
        if loadings not in ("sd", "raw"):
            raise ValueError(f'loadings must be "sd" or "raw"; got {loadings!r}')
        if rank_tests is not None and not isinstance(rank_tests, RankTestResults):
            raise TypeError(
                f"rank_tests must be a RankTestResults; got {type(rank_tests).__name__}"
            )
        full = notes == "full"
        m = self._model
        info: dict[str, Any] = {
            "Model:": "Joint dimension reduction",
            "Dependent variable:": m.endog_name,
            "No. observations:": self.nobs,
            "n1 (block a):": len(m.data.exog_names_a),
            "n2 (block b):": len(m.data.exog_names_b),
            "Rank:": self.rank,
            "Rank chosen by:": (
                "given" if self.rank_method is None
                else LADLE_CHOSEN_BY if self.rank_method == "ladle"
                else f"{self.rank_method} tests, alpha={self._settings.alpha}"
            ),
            "Whitening:": self.whitening + (
                " (across blocks)" if self._settings.joint else ""),
            "Sparsity (s1, s2):": (
                "none (dense)" if self.sparsity is None
                else f"{self.sparsity}" + (" (auto)" if self.support_tests is not None
                                           else " (cv)" if self.sparsity_cv is not None
                                           else "")
            ),
            "Weights:": (
                "case weights" if m.data.weighted
                else "none"
            ),
            **_response_lines(m.data),
        }
        info, r2_notes = self._with_fit_measures(info)
        la, lb = self._loading_tables(loadings)
        what = "per-SD loadings" if loadings == "sd" else "directions"
        for tab in (la, lb):  # printed side by side where they fit
            tab.attrs["beside"] = what
        blocks = zip(self._block_headings(), (la, lb), strict=True) if self.rank else ()
        sv = self._singular_value_table(len(self._est.singular_values) if full
                                        else self.rank + 3)
        n_sv = len(self._est.singular_values)
        tables: list[tuple[Any, ...]] = [
            ("k" if len(sv) == n_sv else f"k (of {n_sv})", sv, "singular values"),
            *((head, tab, f"{what}, {head}") for head, tab in blocks),  # rank 0: none
            ("Premises", self.diagnostics.table, "premises"),
        ]
        if self._summary_association is not None:  # p >> n: R^2 is descriptive only
            caveat = ("descriptive only at this width, as the directions; the tests below "
                      "are the inference.")
            r2_notes = ([f"{r2_notes[0][:-1]}; {caveat}"] if r2_notes
                        else [caveat[:1].upper() + caveat[1:]])
        premises = list(self.diagnostics.notes)
        if not full:  # the guide page is named once, in the last note
            premises = [n.replace(" (guide page 'Checking the premises')", "") for n in premises]
        out = r2_notes + self._main_effects_notes(info, full) + self._association_notes(info) \
            + premises
        whitening = inference_note(self.whitening, self._settings.whitening.short,
                                   max(info["n1 (block a):"], info["n2 (block b):"]) / self.nobs)
        # in short: the choice and its reason (what it implies: notes="full")
        head, cut, _ = whitening.partition(").")
        out.append(whitening if full or not cut else head + ").")
        if self._settings.estimator is not None:
            est = self._settings.estimator
            out.append(f"Estimator: {'joint' if est.name == 'joint' else 'per block'} "
                       f"({est.short}).")
        if self._settings.orthogonal:
            out.append(orthogonal_note(self._settings.interactions_name))
        for rt in (self._rank_tests, rank_tests):
            if isinstance(rt, LadleResults):
                tables.append(("Ladle criterion", rt.table))
                if rt.rank == 0:
                    out.append(f"Rank: {LADLE_AT_ZERO}; rank 0 (no directions).")
            elif rt is not None:
                # the fit's choice of method is printed from its settings
                own = self._settings.rank_choice if rt is self._rank_tests else None
                tab, scaled = rt.table, ""
                if own is not None and not full and {"eff_df", "scale"} <= set(tab.columns) \
                        and tab["df"].isna().all():  # the note says why no df
                    tab, scaled = tab.drop(columns="df"), ", referred to scale * chi2(eff_df)"
                tables.append((f"Rank tests ({rt.method})", tab))
                if own is not None:  # the fit's own tests: their references in short
                    ref = _rank_reference_note(rt)
                    if not full:  # the references: notes="full" (the last note says so)
                        ref = ref.removesuffix("references: results.rank_test_table.summary("
                                               "notes='full').").removesuffix("; ")
                    out.append(f"Rank method: {own.name} ({own.short}){scaled}"
                               + (f"; {ref}" if ref else "") + ("" if ref.endswith(".") else "."))
                if own is None or full:
                    out += [f"Rank tests: {ref}" for ref in rt.references]
        if self.sparsity is not None:
            out.append(
                f"Selected variables: block a {self.support_a}; block b {self.support_b}; "
                + ("the loadings of the other variables are zero and not shown." if full
                   else "the others' loadings are zero.")
            )
        if self._settings.sparsity_choice is not None:
            out.append(f"Sparsity {self._settings.sparsity_choice.name} "
                       f"({self._settings.sparsity_choice.reason}); results.sparsity_cv.")
        if self.support_tests is not None:
            out.append(self._settings.support_note or (
                "Sparsity chosen by the coordinate tests of select_support "
                f"({self.support_tests.method_label}); see results.support_tests.summary()."
            ))
        elif self._settings.support_note:  # rank 0: nothing selected
            out.append(self._settings.support_note)
        # short: the effective sample size is in the information already
        out += [n if full else n.split(" (effective sample size")[0].rstrip(".") + "."
                for n in _response_notes(m.data)]
        out.append(f"{LOADING_NOTES[loadings]} {SIGNS_NOTE}" if full
                   else SHORT_LOADING_NOTES[loadings])
        return build_summary("Joint Dimension Reduction Results", info, tables, out,
                             headline=self._headline(rank_tests))


