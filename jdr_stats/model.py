"""The joint dimension reduction model and its results.

Li and Bresler, "Joint Dimensionality Reduction for Two Feature Vectors":
``y`` depends on ``a`` and ``b`` only through ``U^T a`` and ``V^T b``.  The
estimator whitens each block, forms ``X_lin = (1/m) sum_i a'_i y_i b'_i^T``
(eq. ``lin``) and takes its top singular vectors (section 2), optionally after
a three-step sparse projection (section 3).
"""

from __future__ import annotations

from functools import cached_property
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pandas as pd
from statsmodels.iolib.summary2 import Summary

from ._data import DataModel, MissingPolicy, ModelData, check_new_block, design_from_spec
from ._estimate import Estimate, estimate
from ._linalg import BlockMoments, Whitening, block_moments, block_whitenings
from ._sources import is_dask_collection
from ._streamed import MomentsData
from ._validation import check_bool, check_rows_for_whitening
from .inference.bootstrap import BootstrapResults, Interval
from .moments import Moments
from .inference.bootstrap import Method as BootstrapMethod
from .inference.bootstrap import bootstrap as _bootstrap
from .inference.rank_tests import RankMethod, RankTestResults, choose_rank
from .inference.rank_tests import rank_tests as _rank_tests
from .support import Covariance, Rule, SupportResults, Test, choose_sparsity
from .support import Method as SupportMethod
from .support import select_support as _select_support
from .summary import SummaryMixin, build_summary

__all__ = ["JointDimReduction", "JDRResults"]


class JointDimReduction(DataModel):
    """Joint dimension reduction of two feature blocks.

    Parameters
    ----------
    endog : array_like, shape (m,)
        The response ``y``.
    exog_a : array_like, shape (m, n1)
        First feature block ``a``; a DataFrame's columns name the variables
        (default names ``a0, a1, ...``).
    exog_b : array_like, shape (m, n2)
        Second feature block ``b`` (default names ``b0, b1, ...``).
    missing : {"none", "drop", "raise"}
        Rows with NaN: ``"drop"`` removes them with a ``MissingDataWarning``;
        ``"none"`` and ``"raise"`` raise a ``ValueError`` (NaN never reaches
        the estimator).
    weights : array_like, optional
        Positive case (frequency) weights.

    Notes
    -----
    Dask input (dask arrays, or columns of a dask DataFrame, for all three
    of ``endog``, ``exog_a`` and ``exog_b``) is not loaded: the moments are a
    tree reduction on the cluster (only n1 x n2 sized results come back), and
    :meth:`JDRResults.transform` of dask input stays lazy.  Such a model, like
    one from :meth:`from_moments` or :meth:`from_parquet`, holds only sums;
    the robust (default), Wald and general rank tests and the ladle stream
    one more pass over the source (not possible from bare moments);
    procedures that need the rows (permutation tests, the bootstrap, support
    selection) raise a ``RowsNotInMemoryError`` (a ``ValueError``) naming
    what they need.  See the guide page "Large data".

    The model assumes the Markov chain ``(a, b) -> (U^T a, V^T b) -> y``
    (eq. ``markov``).  The model holds the validated data only; :meth:`fit`
    returns a new :class:`JDRResults` and leaves the model unchanged.

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(2000, 6, 5, 2, seed=0)
    >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    >>> res.directions_a.shape
    (6, 2)
    >>> bool(jdr.metrics.nsee(sim.U, res.directions_a, sim.V, res.directions_b) < 0.3)
    True
    """

    _block_args = ("exog_a", "exog_b")

    def __init__(
        self,
        endog: Any,
        exog_a: Any,
        exog_b: Any,
        *,
        missing: MissingPolicy = "none",
        weights: Any = None,
    ) -> None:
        self._formula: str | None = None
        dask_in = [is_dask_collection(x) for x in (endog, exog_a, exog_b)]
        if any(dask_in):
            self._data = _dask_data(endog, exog_a, exog_b, dask_in, missing, weights)
            return
        self._data = ModelData.from_inputs(
            endog,
            {"exog_a": (exog_a, "a"), "exog_b": (exog_b, "b")},
            missing=missing,
            weights=weights,
            min_rows=3,
        )
        self._formula: str | None = None
        self._model_specs: tuple[Any, ...] | None = None

    # -- construction -----------------------------------------------------
    @classmethod
    def from_moments(cls, moments: Moments) -> JointDimReduction:
        """A model from sufficient statistics (no rows).

        Parameters
        ----------
        moments : Moments
            For example the merged moments of chunks of the data
            (``sum(jdr.Moments.from_arrays(...) for chunk in chunks)``).

        Returns
        -------
        JointDimReduction
            ``fit`` (dense or sparse), ``summary()`` and the chi-square rank
            test work; procedures that need the rows, or a source to read
            again (the robust, Wald and general rank tests, the ladle, so
            ``fit("auto")`` needs ``rank_method="chi2"``), raise a
            ``RowsNotInMemoryError`` naming what they need.

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(3000, 5, 4, 2, seed=0)
        >>> mom = sum(jdr.Moments.from_arrays(sim.y[i:i + 1000], sim.a[i:i + 1000],
        ...                                   sim.b[i:i + 1000]) for i in range(0, 3000, 1000))
        >>> res = jdr.JointDimReduction.from_moments(mom).fit(2)
        >>> full = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        >>> angles = jdr.metrics.principal_angles(res.directions_a, full.directions_a)
        >>> bool(angles.max() < 1e-10)
        True
        """
        return cls._from_sums(moments, source=None, origin="moments")

    @classmethod
    def from_parquet(
        cls,
        path: Any,
        *,
        y: str,
        a: list[str],
        b: list[str],
        weights: str | None = None,
        batch_rows: int | None = None,
    ) -> JointDimReduction:
        """A model from a Parquet file (or folder of files), streamed.

        One pass reads only the named columns in record batches of
        ``batch_rows`` rows and merges their exact moments
        (:class:`~jdr_stats.Moments`), so memory does not grow with the
        number of rows (about one row group plus one batch).

        Parameters
        ----------
        path : str or path-like
            A ``.parquet`` file or a folder of them (read in name order).
        y : str
            The response column.
        a, b : list of str
            The columns of the two blocks.
        weights : str, optional
            A column of nonnegative frequency weights.
        batch_rows : int, optional
            Rows per record batch (default 65536).

        Returns
        -------
        JointDimReduction
            Holds the moments and the source; ``fit``, ``summary()`` and the
            chi-square rank test need no further pass; the robust (default),
            Wald and general rank tests (so ``fit("auto")``) and the ladle
            stream one more pass over the file; procedures that need the
            rows in memory (permutation tests, the bootstrap, support
            selection) raise a ``RowsNotInMemoryError``.

        Raises
        ------
        ValueError
            A missing column, NaN or infinite values (naming the column and
            row), a constant column.

        Examples
        --------
        >>> import os, tempfile
        >>> import jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(2000, 4, 3, 1, seed=0)
        >>> path = os.path.join(tempfile.mkdtemp(), "sim.parquet")
        >>> sim.frame.to_parquet(path, row_group_size=500)
        >>> model = jdr.JointDimReduction.from_parquet(
        ...     path, y="y", a=["a0", "a1", "a2", "a3"], b=["b0", "b1", "b2"], batch_rows=256)
        >>> res = model.fit(1)
        >>> full = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
        >>> bool(jdr.metrics.principal_angles(res.directions_a, full.directions_a).max() < 1e-10)
        True
        """
        from ._sources import ParquetSource

        src = ParquetSource(path, y=y, a=a, b=b, weights=weights, batch_rows=batch_rows)
        return cls._from_source(src, origin=f"the Parquet source {str(path)!r}")

    @classmethod
    def _from_source(cls, source: Any, *, origin: str) -> JointDimReduction:
        """A model from a row source (jdr_stats._sources), one streamed pass."""
        return cls._from_sums(Moments.from_source(source), source=source, origin=origin)

    @classmethod
    def _from_sums(cls, moments: Moments, *, source: Any, origin: str) -> JointDimReduction:
        model = cls.__new__(cls)
        model._data = MomentsData(moments, source=source, origin=origin)
        model._formula = None
        return model

    def _require_rows(self, what: str) -> None:
        """Raise a clear error if this model holds sums only (no rows)."""
        if isinstance(self._data, MomentsData):
            self._data.require_rows(what)

    # -- data access ------------------------------------------------------
    @property
    def exog_a(self) -> np.ndarray:
        """Block a (float array, m x n1)."""
        return self._data.blocks["exog_a"]

    @property
    def exog_b(self) -> np.ndarray:
        """Block b (float array, m x n2)."""
        return self._data.blocks["exog_b"]

    @property
    def exog_names_a(self) -> list[str]:
        return list(self._data.names["exog_a"])

    @property
    def exog_names_b(self) -> list[str]:
        return list(self._data.names["exog_b"])

    # -- estimation -------------------------------------------------------
    def moments(
        self, weights: np.ndarray | None = None, *, covariances: bool = True
    ) -> BlockMoments:
        """Sufficient statistics of the data (optionally reweighted).

        ``weights`` multiplies the model's own case weights; a bootstrap
        passes resampling counts here.  ``covariances=False`` skips the block
        covariances (not needed without whitening).
        """
        if isinstance(self._data, MomentsData):
            if weights is not None:
                self._data.require_rows("reweighting the rows (the bootstrap)")
            return self._data.moments.to_block_moments()
        w = self._data.weights
        if weights is not None:
            w = weights if w is None else w * weights
        return block_moments(self.endog, self.exog_a, self.exog_b, w, covariances=covariances)

    def fit(
        self,
        rank: int | Literal["auto"],
        *,
        standardize: bool = True,
        sparsity: tuple[int, int] | Literal["auto"] | None = None,
        rank_method: RankMethod | Literal["ladle"] = "robust",
        alpha: float = 0.05,
        fdr: float = 0.1,
        seed: int | np.random.Generator | None = None,
    ) -> JDRResults:
        """Estimate the two subspaces.

        Parameters
        ----------
        rank : int or "auto"
            Dimension ``r`` of each subspace, ``1 <= r <= min(n1, n2)``.
            ``"auto"`` chooses it by the sequence of rank tests of
            ``rank_method`` at level ``alpha`` (see :meth:`JDRResults.rank_tests`).
        standardize : bool
            ``True`` whitens each block with its sample mean and covariance
            (section 5.1 of the paper); ``False`` only centres it.  The
            whitening uses the lower Cholesky factor ``L`` of the covariance
            (``Sigma = L L^T``, ``a' = L^{-1}(a - mean)``): it is the cheapest
            square root and needs only triangular solves.  Any other square
            root ``C = L O`` (``O`` orthogonal) rotates ``X_lin`` to
            ``O^T X_lin`` and its left singular vectors to ``O^T U'``, so the
            mapped-back subspace ``span(C^{-T} O^T U') = span(L^{-T} U')`` is
            the same: the estimate does not depend on the choice.
        sparsity : (s1, s2), "auto" or None
            Select ``s1`` variables of block a and ``s2`` of block b by the
            three-step projection of section 3, ``rank <= s_k <= n_k``.
            ``"auto"`` takes the counts from :meth:`select_support` at
            false discovery rate ``fdr`` (its default conditional test, the
            wild bootstrap of the robust score statistic, seeded by ``seed``).
        rank_method : {"robust", "wald", "chi2", "general", "permutation", "ladle"}
            How ``rank="auto"`` chooses the rank: the sequential tests of that
            method (default ``"robust"``, valid without distributional
            assumptions; ``"chi2"`` is the normal-theory test), or the ladle
            estimator (``"ladle"``, Luo and Li 2016, bootstrap from ``seed``).
        alpha : float
            Level of the rank tests when ``rank="auto"``.
        fdr : float
            False discovery rate when ``sparsity="auto"``.
        seed : int, Generator or None
            Seed for the permutation rank test, the ladle or support selection.

        Returns
        -------
        JDRResults

        Notes
        -----
        ``X_lin = A'^T diag(y - ybar) B' / m`` is one product of the whitened
        blocks.  Centring ``y`` does not change its expectation under the
        model (``E[a'] = 0`` and ``a'``, ``b'`` uncorrelated, so
        ``E[a' ybar b'^T] = ybar E[a'] E[b'^T] = 0``) but removes the term
        ``ybar (1/m) sum a'_i b'_i^T``, pure noise of variance
        ``ybar^2 n1 n2 / m``, so the estimate is less variable and invariant
        to a shift of ``y``.
        """
        standardize = check_bool(standardize, "standardize")
        if isinstance(rank, str) and rank != "auto":
            raise ValueError(f'rank must be a positive integer or "auto"; got {rank!r}')
        if isinstance(sparsity, str) and sparsity != "auto":
            raise ValueError(f'sparsity must be (s1, s2), "auto" or None; got {sparsity!r}')
        names_a, names_b = self.exog_names_a, self.exog_names_b
        if standardize:
            check_rows_for_whitening(
                self.nobs, {"exog_a": len(names_a), "exog_b": len(names_b)}
            )
        # The moments are computed once, and each covariance factored once,
        # for the rank tests, the coordinate tests and the estimate.
        auto = rank == "auto" or sparsity == "auto"
        mom = self.moments(covariances=standardize or auto)
        whitening = block_whitenings(mom, names_a, names_b) if standardize else None
        settings: dict[str, Any] = {
            "standardize": standardize,
            "rank_method": None,
            "alpha": None,
            "support": None,
        }
        rank_table = None
        if rank == "auto":
            rank, rank_table = choose_rank(
                self._data, mom, whitening, method=rank_method, alpha=alpha, seed=seed,
            )
            settings["rank_method"] = rank_method
            settings["alpha"] = alpha
        if sparsity == "auto":
            self._require_rows('sparsity="auto" (support selection)')
            sparsity, support = choose_sparsity(
                self._data, mom, whitening, rank=rank, fdr=fdr, seed=seed
            )
            settings["support"] = support
        est = estimate(
            mom,
            rank,
            standardize=standardize,
            sparsity=None if sparsity is None else tuple(sparsity),
            names_a=names_a,
            names_b=names_b,
            whitening=whitening,
        )
        settings["sparsity"] = None if sparsity is None else (int(sparsity[0]), int(sparsity[1]))
        return JDRResults(self, est, mom, settings, rank_tests=rank_table, whitening=whitening)

    def select_support(
        self,
        *,
        rank: int | None = None,
        method: SupportMethod | None = None,
        fdr: float = 0.1,
        seed: int | np.random.Generator | None = None,
        test: Test | None = None,
        covariance: Covariance | None = None,
        standardize: bool = True,
        n_perm: int = 999,
        n_boot: int = 999,
        rule: Rule = "bh",
        threshold: float | None = None,
        n_subsamples: int = 100,
        stability_threshold: float = 0.6,
        sparsity: tuple[int, int] | None = None,
        progress: bool | Callable[[int, int], Any] = False,
        n_jobs: int | None = None,
    ) -> SupportResults:
        """Coordinate tests for every variable with false discovery control.

        The parameters are those of :func:`jdr_stats.support.select_support`,
        which this calls with the model's validated data.
        """
        self._require_rows("select_support")
        return _select_support(
            self._data, rank=rank, method=method, fdr=fdr, seed=seed, test=test,
            covariance=covariance, standardize=standardize, n_perm=n_perm, n_boot=n_boot,
            rule=rule, threshold=threshold, n_subsamples=n_subsamples,
            stability_threshold=stability_threshold, sparsity=sparsity,
            progress=progress, n_jobs=n_jobs,
        )


def _labels(prefix: str, r: int) -> list[str]:
    return [f"{prefix}{k + 1}" for k in range(r)]


class JDRResults(SummaryMixin):
    """Results of :meth:`JointDimReduction.fit` (read-only).

    Directions are labelled DataFrames (index: variable names, columns
    ``dir1..dirr``) when the input had pandas labels, plain arrays otherwise.
    """

    def __init__(
        self,
        model: JointDimReduction,
        est: Estimate,
        moments: BlockMoments,
        settings: dict[str, Any],
        *,
        rank_tests: RankTestResults | None = None,
        whitening: tuple[Whitening, Whitening] | None = None,
    ) -> None:
        self._model = model
        self._est = est
        self._moments = moments
        self._settings = dict(settings)
        self._whitening = whitening
        # The rank tests that chose the rank of a rank="auto" fit (fixed at
        # construction: a results object never changes).
        self._rank_tests = rank_tests

    # -- basic attributes -------------------------------------------------
    @property
    def model(self) -> JointDimReduction:
        return self._model

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
        return getattr(self._model, "_data_removed", False)

    def _require_data(self, what: str) -> None:
        if self.data_removed:
            raise ValueError(
                f"{what} needs the model's data, which remove_data() dropped; "
                "refit the model to use it"
            )

    def remove_data(self) -> JDRResults:
        """A copy of the results without the model's rows (for pickling many fits).

        The copy keeps everything computed from the sufficient statistics:
        directions, singular values, ``coef_matrix``, the moments (means and
        covariances of the blocks), variable names, the formula and its
        codings, the rank tests of a ``rank="auto"`` fit, :meth:`summary` and
        ``transform`` of new data.  What needs the rows no longer works and
        raises a ``ValueError`` saying so: ``transform()`` of the training
        data, :meth:`rank_tests`, :meth:`bootstrap` and the plots that draw
        the data (``plot_sufficient_summary``, ``plot_response_surface``).
        The original results are unchanged.

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

        d = self._model.data
        model = copy.copy(self._model)
        model._data = ModelData(
            endog=np.empty(0),
            blocks={k: np.empty((0, v.shape[1])) for k, v in d.blocks.items()},
            endog_name=d.endog_name,
            names={k: list(v) for k, v in d.names.items()},
            row_index=None,
            weights=None if d.weights is None else np.empty(0),
            is_pandas=d.is_pandas,
        )
        model._data_removed = True
        return JDRResults(model, self._est, self._moments, self._settings,
                          rank_tests=self._rank_tests, whitening=self._whitening)

    @property
    def rank(self) -> int:
        return self._est.rank

    @property
    def standardize(self) -> bool:
        return self._settings["standardize"]

    @property
    def sparsity(self) -> tuple[int, int] | None:
        return self._settings["sparsity"]

    @property
    def support_tests(self) -> SupportResults | None:
        """The :class:`~jdr_stats.support.SupportResults` that chose the
        sparsity of a ``sparsity="auto"`` fit (None otherwise)."""
        return self._settings["support"]

    @property
    def rank_test_table(self) -> RankTestResults | None:
        """The rank tests that chose the rank of a ``rank="auto"`` fit (None
        when the rank was given)."""
        return self._rank_tests

    @property
    def rank_method(self) -> str | None:
        """How the rank was chosen: the test method, or None if given."""
        return self._settings["rank_method"]

    @property
    def _labelled(self) -> bool:
        return self._model.data.is_pandas

    def _frame(self, arr: np.ndarray, index: list[str], columns: list[str]):
        if self._labelled:
            return pd.DataFrame(arr, index=index, columns=columns)
        return arr.copy()

    # -- estimates --------------------------------------------------------
    @cached_property
    def directions_a(self) -> pd.DataFrame | np.ndarray:
        """Basis of the a-subspace, original coordinates, unit-length columns."""
        return self._frame(self._est.dir_a, self._model.exog_names_a, _labels("dir", self.rank))

    @cached_property
    def directions_b(self) -> pd.DataFrame | np.ndarray:
        """Basis of the b-subspace, original coordinates, unit-length columns."""
        return self._frame(self._est.dir_b, self._model.exog_names_b, _labels("dir", self.rank))

    @cached_property
    def directions_a_std(self) -> pd.DataFrame | np.ndarray:
        """Orthonormal basis of the a-subspace in whitened coordinates."""
        return self._frame(self._est.u_std, self._model.exog_names_a, _labels("dir", self.rank))

    @cached_property
    def directions_b_std(self) -> pd.DataFrame | np.ndarray:
        """Orthonormal basis of the b-subspace in whitened coordinates."""
        return self._frame(self._est.v_std, self._model.exog_names_b, _labels("dir", self.rank))

    @property
    def singular_values(self) -> np.ndarray:
        """All singular values of the decomposed (whitened) matrix, descending."""
        return self._est.singular_values.copy()

    @cached_property
    def coef_matrix(self) -> pd.DataFrame | np.ndarray:
        """``X_lin`` in whitened coordinates (n1 x n2)."""
        return self._frame(self._est.coef_matrix, self._model.exog_names_a, self._model.exog_names_b)

    @property
    def support_a(self) -> list[str]:
        """Names of the selected variables of block a (all for a dense fit)."""
        names = self._model.exog_names_a
        return [names[j] for j in self._est.rows]

    @property
    def support_b(self) -> list[str]:
        """Names of the selected variables of block b (all for a dense fit)."""
        names = self._model.exog_names_b
        return [names[j] for j in self._est.cols]

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
        >>> res = jdr.JointDimReduction.from_formula("y ~ a0 + a1 + a2 | b0 + np.exp(b1)", df).fit(1)
        >>> res.transform(data=df.iloc[:3]).shape
        (3, 2)
        """
        if data is not None:
            if exog_a is not None or exog_b is not None:
                raise ValueError("give data (formula models) or exog_a and exog_b, not both")
            specs = getattr(self._model, "_model_specs", None)
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
        source = getattr(m.data, "source", None)
        if exog_a is None and getattr(source, "kind", None) is not None:
            exog_a, exog_b = source.blocks()  # the dask training data (lazy)
        if exog_a is not None and (is_dask_collection(exog_a) or is_dask_collection(exog_b)):
            return self._transform_dask(exog_a, exog_b)
        if exog_a is None:
            self._require_data("transform() of the training data")
            m._require_rows("transform() of the training data (pass exog_a and exog_b)")
            a, b, index = m.exog_a, m.exog_b, m.data.row_index
        else:
            a = check_new_block(exog_a, "exog_a", m.exog_names_a, labelled=self._labelled)
            b = check_new_block(exog_b, "exog_b", m.exog_names_b, labelled=self._labelled)
            if a.shape[0] != b.shape[0]:
                raise ValueError(
                    f"exog_a has {a.shape[0]} rows but exog_b has {b.shape[0]}"
                )
            index = exog_a.index if isinstance(exog_a, pd.DataFrame) else None
        feats = np.hstack(
            [(a - self._moments.mean_a) @ self._est.dir_a, (b - self._moments.mean_b) @ self._est.dir_b]
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
        n1, n2 = len(m.exog_names_a), len(m.exog_names_b)
        cols = _labels("a_dir", self.rank) + _labels("b_dir", self.rank)
        mean_a, mean_b = self._moments.mean_a, self._moments.mean_b
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
        method: RankMethod = "robust",
        *,
        max_rank: int | None = None,
        n_perm: int = 999,
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
        self._require_data("rank_tests()")
        return _rank_tests(
            self._model.data, self._moments, self._whitening,
            method=method, max_rank=max_rank, n_perm=n_perm, seed=seed,
            progress=progress, n_jobs=n_jobs,
        )

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
        ``n_jobs`` processes give the same numbers as one)."""
        self._require_data("bootstrap()")
        if method != "poisson":
            self._model._require_rows("the bootstrap (it resamples rows)")
        return _bootstrap(
            self._model.data, self._est, standardize=self.standardize,
            sparsity=self.sparsity, n_boot=n_boot, seed=seed, method=method,
            interval=interval, alpha=alpha, progress=progress, n_jobs=n_jobs, fit=self,
        )

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

    def summary(self, *, rank_tests: RankTestResults | None = None) -> Summary:
        """A statsmodels ``Summary``: model information, singular values,
        loadings of each block, the rank tests of a ``rank="auto"`` fit, and
        the table ``rank_tests`` when one is given (from :meth:`rank_tests`).

        The text depends only on the fit and the arguments: calling other
        methods first never changes it.
        """
        m = self._model
        info = {
            "Model:": "Joint dimension reduction",
            "Dependent variable:": m.endog_name,
            "No. observations:": self.nobs,
            "n1 (block a):": len(m.exog_names_a),
            "n2 (block b):": len(m.exog_names_b),
            "Rank:": self.rank,
            "Rank chosen by:": (
                "given" if self.rank_method is None
                else f"{self.rank_method} tests, alpha={self._settings['alpha']}"
            ),
            "Standardize:": self.standardize,
            "Sparsity (s1, s2):": (
                "none (dense)" if self.sparsity is None
                else f"{self.sparsity}" + (" (auto)" if self.support_tests is not None else "")
            ),
            "Weights:": (
                "case weights" if m.weights is not None or getattr(m.data, "weighted", False)
                else "none"
            ),
        }
        # Loadings of the selected variables (all of them for a dense fit):
        # the others are zero by construction.
        la = pd.DataFrame(self._est.dir_a, index=m.exog_names_a,
                          columns=_labels("dir", self.rank)).iloc[self._est.rows]
        lb = pd.DataFrame(self._est.dir_b, index=m.exog_names_b,
                          columns=_labels("dir", self.rank)).iloc[self._est.cols]
        tables = [
            ("k", self._singular_value_table()),
            ("block a", la),
            ("block b", lb),
        ]
        notes = [
            "k: singular values of X_lin (whitened cross moment); share = s_k^2 / "
            "sum_j s_j^2. Directions: unit-length columns in the original "
            "coordinates of each block."
        ]
        shown = [rt for rt in (self._rank_tests, rank_tests) if rt is not None]
        for rt in shown:
            if not isinstance(rt, RankTestResults):
                raise TypeError(
                    f"rank_tests must be a RankTestResults; got {type(rt).__name__}"
                )
            tables.append((f"Rank tests ({rt.method})", rt.table))
        if self.sparsity is not None:
            notes.append(
                f"Selected variables: block a {self.support_a}; block b {self.support_b}; "
                "the loadings of the other variables are zero and not shown."
            )
        if self.support_tests is not None:
            notes.append(
                "Sparsity chosen by the coordinate tests of select_support "
                f"({self.support_tests.method}); see results.support_tests.summary()."
            )
        notes.append(
            "Directions span the estimated subspaces; signs and rotations within a "
            "subspace are arbitrary."
        )
        return build_summary("Joint Dimension Reduction Results", info, tables, notes)


def _dask_data(
    endog: Any, exog_a: Any, exog_b: Any, dask_in: list[bool], missing: str, weights: Any
) -> MomentsData:
    """Moments of dask input, reduced on the cluster (the rows stay there)."""
    from ._sources import DaskSource

    if not all(dask_in):
        kinds = ", ".join(
            f"{n} {'dask' if d else 'in memory'}"
            for n, d in zip(("endog", "exog_a", "exog_b"), dask_in)
        )
        raise TypeError(
            f"give endog, exog_a and exog_b all as dask collections or all in memory; got {kinds}"
        )
    if weights is not None:
        raise ValueError("weights are not supported with dask input; got weights")
    if missing == "drop":
        raise ValueError(
            'missing="drop" is not supported with dask input (NaN raise an error); '
            "drop the rows with dask first (ddf.dropna())"
        )
    src = DaskSource(endog, exog_a, exog_b)
    return MomentsData(Moments.from_source(src), source=src, origin="dask collections")
