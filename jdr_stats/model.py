"""The joint dimension reduction model (its results: :mod:`jdr_stats.results`).

Li and Bresler, "Joint Dimensionality Reduction for Two Feature Vectors":
``y`` depends on ``a`` and ``b`` only through ``U^T a`` and ``V^T b``.  The
estimator whitens each block, forms ``X_lin = (1/m) sum_i a'_i y_i b'_i^T``
(the paper's equation (5)) and takes its top singular vectors (its section 2), optionally after
a three-step sparse projection (section 3).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal, cast

import numpy as np

from . import policy
from .core._linalg import BlockMoments, Whitening
from .core.design_moments import DesignMoments
from .core.whitening import DesignWhitening
from .estimation._estimate import (
    WhiteningKind,
    check_rank,
    check_tests_feasible,
    choose_whitening,
    estimate,
    fold_standardize,
    moments_and_whitenings,
)
from .estimation._joint import joint_data, joint_fit_data, original_means, scaled_data
from .estimation._settings import FitSettings
from .fitting._kfit import check_main_effects, fit_kblocks
from .fitting._kmoments import model_from_moments
from .fitting._kstream import BlockSums, block_reader_dask, block_reader_file, fit_streamed_kblocks
from .fitting._orthogonal_fit import (
    check_interactions,
    check_regression_whitening,
    choose_orthogonal_rank,
    interactions_choice,
    orthogonal_data,
)
from .fitting._rank_zero import check_support_rank, rank_zero_support
from .inference.hypotheses import fdr_qvalues
from .inference.ladle import LadleResults
from .inference.rank_tests import RankMethod, RankTestResults, choose_rank
from .io._adjusted_source import adjust_source, dask_adjusted
from .io._data import DataModel, MissingPolicy, ModelData, RowsData, check_effective_rows
from .io._responses import ResponseKind
from .io._stream_levels import plan_stream
from .io._streamed import MomentsData
from .moments import Moments, ResponseMoments
from .resampling._progress import ProgressArg
from .results import JDRResults
from .runtime._frequency import observations, whitening_nobs
from .runtime._validation import (
    check_block_names,
    check_fit_rows,
    check_fraction,
    check_real,
    normalize_seed,
)
from .streams._scaled_source import ScaledDaskSource, ScaledSource
from .streams._sources import RowSource, is_dask_collection
from .support import Covariance as SupportCovariance
from .support import Method as SupportMethod
from .support import SupportResults, choose_support
from .support import Test as SupportTest
from .support import select_support as _select_support
from .support._cv import SparsityCV, cv_sparsity
from .support._kblock import KBlockSupportResults, kblock_support
from .support._options import RuleArg as SupportRuleArg
from .whitenings import WHITENING_METHODS

__all__ = ["JDRResults", "JointDimReduction", "child_seeds"]


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
        Positive case (frequency) weights, one per row (shape ``(m,)`` or
        ``(m, 1)``); a weight of zero is refused on every path (in memory,
        formulas, ``from_blocks``, streamed files), naming its row: remove
        the row instead.  Whole-number weights count as that many rows where
        a rule counts observations (the OAS shrinkage intensity, the
        ``whitening="auto"`` choice), so an integer weight ``k`` fits as
        ``k`` copies of the row; other weights are relative (any multiple
        gives the same fit) and those rules count the rows.
    response : {"auto", "numeric", "categorical"}
        How to read ``endog``.  ``"auto"``: a pandas ``Categorical``, a
        boolean or a text column is a categorical response (its ``C``
        classes become ``C - 1`` class indicators, the first class the
        reference), a 2-D ``endog`` (m x q array or DataFrame) a
        multivariate response, anything else one numeric response.
        ``"categorical"`` declares numeric codes categorical.  A text column
        whose values all look like numbers is refused (convert it).
    covariates : array_like or DataFrame, optional
        Covariates ``Z`` to adjust for (numeric columns; categorical,
        boolean or text columns enter as indicators).  The response and both
        blocks are replaced by their least squares residuals on ``[1, Z]``
        (weighted by ``weights``); collinear covariate columns are dropped
        with a :class:`~jdr_stats.exceptions.CovariateWarning`.  Pandas
        covariates are aligned on the row labels, like the blocks.

    Notes
    -----
    A response of ``q > 1`` columns (``C > 2`` classes, or several
    responses) is centred and whitened (``Yw``, collinear columns dropped);
    the estimator takes the top singular vectors of the unfoldings of the
    ``q`` whitened cross moments (HOSVD; guide page "Responses and
    covariates").  One numeric column, or two classes, give the estimator
    of the paper exactly.

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
    (the paper's equation (1)).  The model holds the validated data only; :meth:`fit`
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
    _block_names: tuple[str, ...] = ("a", "b")

    def __init__(
        self,
        endog: Any,
        exog_a: Any,
        exog_b: Any,
        *,
        missing: MissingPolicy = "none",
        weights: Any = None,
        response: ResponseKind = "auto",
        covariates: Any = None,
    ) -> None:
        self._setup(endog, exog_a, exog_b, missing=missing, weights=weights, response=response,
                    covariates=covariates)

    def _setup(self, endog: Any, exog_a: Any, exog_b: Any, *, missing: MissingPolicy,
               weights: Any, response: ResponseKind, covariates: Any,
               prefixes: tuple[str, str] = ("a", "b")) -> None:
        """Validate the inputs into ``self._data`` (``prefixes``: of the
        default variable names of unlabelled blocks)."""
        self._formula: str | None = None
        dask_in = [is_dask_collection(x) for x in (endog, exog_a, exog_b)]
        if any(dask_in):
            if response != "auto":
                raise ValueError("response= is not supported with dask input yet; compute "
                                 "the columns first (.compute())")
            self._data = _dask_data(endog, exog_a, exog_b, dask_in, missing, weights,
                                    covariates)
            return
        self._data = ModelData.from_inputs(
            endog,
            {"exog_a": (exog_a, prefixes[0]), "exog_b": (exog_b, prefixes[1])},
            missing=missing,
            weights=weights,
            min_rows=3,
            response=response,
            covariates=covariates,
            covariate_terms=getattr(covariates, "attrs", {}).get("jdr_terms"),
        )
        check_effective_rows(self._data)
        self._formula = None
        self._model_specs: tuple[Any, ...] | None = None

    # -- construction -----------------------------------------------------
    @classmethod
    def from_blocks(
        cls,
        endog: Any,
        blocks: Mapping[str, Any] | Sequence[Any],
        *,
        covariates: Any = None,
        weights: Any = None,
        missing: MissingPolicy = "none",
        response: ResponseKind = "auto",
    ) -> JointDimReduction:
        """A model of named design blocks.

        Parameters
        ----------
        endog : array_like
            The response, as for :class:`JointDimReduction`.
        blocks : dict of str to array_like, or a list of array_like
            The design blocks in order, each ``(m, n_k)``: a dict names them
            (``{"genes": G, "lipids": L}``), a list calls them ``block1``,
            ``block2``, ...  A block's unlabelled columns are called after
            it (``genes0, genes1, ...``).
        covariates, weights, missing, response
            As for :class:`JointDimReduction`.

        Returns
        -------
        JointDimReduction
            For two blocks the model of ``JointDimReduction(endog, first,
            second)``, the same fit to the last digit; its results give
            each block's directions by name (``res.directions["genes"]``).

        Notes
        -----
        Three or more blocks (rows in memory) fit the K-block estimator:
        each block's subspace from its pairwise cross moments with every
        other block and the K-way cross moment (theory page "K blocks"),
        ``fit(rank=r, {name: r_k} or "auto")`` returning a
        :class:`~jdr_stats.fitting._kfit.KBlockResults` (``res.rank`` a dict).
        Sparse fits and support selection take two blocks.

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(2000, 6, 5, 2, seed=0)
        >>> res = jdr.JointDimReduction.from_blocks(sim.y, {"genes": sim.a, "lipids": sim.b}).fit(2)
        >>> list(res.directions), res.directions["lipids"].shape
        (['genes', 'lipids'], (5, 2))
        >>> res.model.block_names, res.model.exog_names_a[:2]
        (('genes', 'lipids'), ['genes0', 'genes1'])
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> g, l, c = (rng.normal(size=(500, n)) for n in (4, 3, 3))
        >>> y = g[:, 0] * l[:, 0] + l[:, 0] * c[:, 1] + 0.5 * rng.normal(size=500)
        >>> res3 = jdr.JointDimReduction.from_blocks(y, {"genes": g, "lipids": l,
        ...                                              "clinical": c}).fit(1)
        >>> res3.rank, res3.transform().columns.tolist()
        ({'genes': 1, 'lipids': 1, 'clinical': 1}, ['genes_1', 'lipids_1', 'clinical_1'])
        """
        names, arrays = _named_blocks(blocks)
        if len(arrays) >= 3:
            if any(is_dask_collection(x) for x in (endog, *arrays)):
                return _dask_blocks_model(cls, endog, names, arrays, covariates=covariates,
                                          weights=weights, missing=missing, response=response)
            model = cls.__new__(cls)
            model._formula = None
            model._model_specs = None
            model._data = ModelData.from_inputs(
                endog, {n: (x, n) for n, x in zip(names, arrays, strict=True)},
                missing=missing, weights=weights, min_rows=3, response=response,
                covariates=covariates,
                covariate_terms=getattr(covariates, "attrs", {}).get("jdr_terms"))
            check_effective_rows(model._data)
            model._block_names = tuple(names)
            return model
        model = cls.__new__(cls)
        model._setup(endog, arrays[0], arrays[1], missing=missing, weights=weights,
                     response=response, covariates=covariates,
                     prefixes=(names[0], names[1]))
        model._block_names = (names[0], names[1])
        return model

    @classmethod
    def from_formula(
        cls,
        formula: str,
        data: Any,
        *,
        missing: MissingPolicy = "none",
        weights: Any = None,
        eval_env: int = 0,
        covariates: str | None = None,
    ) -> JointDimReduction:
        """Build the model from a formula: ``"y ~ a-terms | b-terms"``, or
        with two or more bars ``"y ~ g1 + g2 | l1 + l2 | c1 + c2"`` a model of
        three or more blocks (named ``block1, block2, ...``; see
        :meth:`from_blocks`).  The rest as
        :meth:`jdr_stats.io._data.DataModel.from_formula`.

        Examples
        --------
        >>> import numpy as np, pandas as pd, jdr_stats as jdr
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame(rng.normal(size=(300, 6)), columns=list("abcdef"))
        >>> df["y"] = df.a * df.c + df.c * df.e + rng.normal(size=300)
        >>> mod = jdr.JointDimReduction.from_formula("y ~ a + b | c + d | e + f", df)
        >>> mod.block_names
        ('block1', 'block2', 'block3')
        """
        from .io._formula import _split_top_level, covariates_from_formula, designs_from_formula

        rhs = formula.split("~", 1)[1] if "~" in formula else ""
        parts = _split_top_level(rhs, "|")
        if len(parts) < 3:
            return super().from_formula(formula, data, missing=missing, weights=weights,
                                        eval_env=eval_env + 1, covariates=covariates)
        args = [f"block{k + 1}" for k in range(len(parts))]
        y, blocks = designs_from_formula(formula, data, args, eval_env=eval_env)
        z = None if covariates is None else covariates_from_formula(
            covariates, data, eval_env=eval_env + 1)
        model = cls.from_blocks(y, list(blocks), covariates=z, weights=weights,
                                missing=missing)
        model._formula = formula
        return model

    @classmethod
    def from_moments(cls, moments: Moments | ResponseMoments | DesignMoments
                     ) -> JointDimReduction:
        """A model from sufficient statistics (no rows).

        Parameters
        ----------
        moments : Moments or ResponseMoments
            For example the merged moments of chunks of the data
            (``sum(jdr.Moments.from_arrays(...) for chunk in chunks)``); for a
            response of several columns (or classes) the mergeable
            :class:`~jdr_stats.moments.ResponseMoments`.

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
        if isinstance(moments, DesignMoments):  # three or more blocks
            return model_from_moments(cls, moments)
        return cls._from_sums(moments, source=None, origin="moments")

    @classmethod
    def from_parquet(
        cls,
        path: Any,
        *,
        y: str | list[str],
        a: list[str] | None = None,
        b: list[str] | None = None,
        blocks: Mapping[str, list[str]] | None = None,
        weights: str | None = None,
        batch_rows: int | None = None,
        covariates: str | list[str] | None = None,
        response: ResponseKind = "auto",
    ) -> JointDimReduction:
        """A model from a Parquet file (or folder of files), streamed.

        ``y`` may list several numeric columns: a multivariate response
        (or the indicators of classes), summed in ``q + 1`` passes into a
        mergeable :class:`~jdr_stats.moments.ResponseMoments`.

        One pass reads only the named columns in record batches of
        ``batch_rows`` rows and merges their exact moments
        (:class:`~jdr_stats.Moments`), so memory does not grow with the
        number of rows (about one row group plus the batch being summed and
        those a reader thread reads ahead, ``jdr_stats.config.READ_AHEAD_CHUNKS``).
        That pass gives both estimators' fits: each batch is reduced to the
        stacked design's sums, within-block y-weighted moments included.

        Parameters
        ----------
        path : str or path-like
            A ``.parquet`` file or a folder of them (read in name order).
        y : str or list of str
            The response column (several: a multivariate response).  A
            text, boolean or dictionary (pandas categorical) column is a
            categorical response: a first pass reads that column alone for
            its classes (sorted; the first is the reference), and the model
            uses their indicators, as in memory.
        a, b : list of str
            The columns of the two blocks.
        blocks : dict of str to list of str, optional
            Instead of ``a`` and ``b``: the columns of each named block
            (``{"genes": [...], "lipids": [...], "clinical": [...]}``).  Two
            blocks are the model of ``a`` and ``b`` with these names; three
            or more stream the K-block fit at given ranks in two passes
            (means and covariances, then the pieces: theory page "K blocks",
            section "Streamed rows"), equal to the fit of the rows in memory
            up to rounding.  Such a model takes one numeric response column
            and ``weights``, not ``covariates`` or ``response=``; the
            procedures that need the rows (``rank="auto"``, the rank tests,
            the bootstrap, support selection, sparse fits) raise a
            ``RowsNotInMemoryError``.
        weights : str, optional
            A column of positive frequency weights (a zero is refused, naming
            its row, as in memory).
        batch_rows : int, optional
            Rows per record batch (default 65536).
        covariates : str or list of str, optional
            Covariate columns to adjust for: one more pass computes the
            least squares coefficients, and every pass then reads the rows
            residualised on ``[1, Z]`` (as a model from arrays with
            ``covariates=``).  A text, boolean or dictionary column enters
            as the indicators of its levels but the first (sorted, read by
            one pass over that column; names ``site[T.level]``).  Not with
            ``weights``.
        response : {"auto", "numeric", "categorical"}
            ``"categorical"`` declares numeric class codes in ``y``
            categorical (as ``JointDimReduction(..., response=)``).

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
            row), a constant column; a missing value in a categorical
            column, or a value the first pass over it did not see.

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
        from .streams._sources import ParquetSource

        a, b = _stream_blocks_args(a, b, blocks)
        if blocks is not None and len(blocks) >= 3:
            return _file_blocks_model(cls, ParquetSource, path, y, blocks, covariates,
                                      weights=weights, batch_rows=batch_rows,
                                      response=response,
                                      origin=f"the Parquet source {str(path)!r}")
        model = stream_model(cls, ParquetSource, path, y, a, b, covariates,
                             weights=weights, batch_rows=batch_rows, response=response,
                             origin=f"the Parquet source {str(path)!r}")
        return model if blocks is None else model.with_block_names(list(blocks))

    @classmethod
    def from_csv(
        cls,
        path: Any,
        *,
        y: str | list[str],
        blocks: Mapping[str, list[str]],
        weights: str | None = None,
        batch_rows: int | None = None,
        sep: str = ",",
    ) -> JointDimReduction:
        """A model from a CSV file read in chunks of ``batch_rows`` rows
        (strictly: :class:`~jdr_stats.sources.CSVSource`), streamed as :meth:`from_parquet`
        with ``blocks=``.

        Parameters
        ----------
        path : str or path-like
        y : str
            The response column.
        blocks : dict of str to list of str
            The columns of each named block (two or more blocks).
        weights : str, optional
            A column of positive frequency weights (a zero is refused, naming
            its row, as in memory).
        batch_rows : int, optional
            Rows per chunk (default 65536).
        sep : str
            Field separator.

        Examples
        --------
        >>> import os, tempfile
        >>> import numpy as np, pandas as pd, jdr_stats as jdr
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame(rng.normal(size=(600, 6)), columns=list("abcdef"))
        >>> df["y"] = df.a * df.c + df.c * df.e + 0.5 * rng.normal(size=600)
        >>> path = os.path.join(tempfile.mkdtemp(), "d.csv")
        >>> df.to_csv(path, index=False)
        >>> blocks = {"g": ["a", "b"], "l": ["c", "d"], "c": ["e", "f"]}
        >>> res = jdr.JointDimReduction.from_csv(path, y="y", blocks=blocks,
        ...                                      batch_rows=128).fit(1)
        >>> full = jdr.JointDimReduction.from_blocks(
        ...     df.y, {n: df[c] for n, c in blocks.items()}).fit(1)
        >>> bool(np.allclose(res.eigenvalues["g"], full.eigenvalues["g"], rtol=1e-10))
        True
        """
        from .streams._sources import CSVSource

        if not isinstance(blocks, Mapping) or len(blocks) < 2:
            raise ValueError(f"blocks: a dict of two or more named blocks (lists of "
                             f"columns); got {blocks!r}")
        origin = f"the CSV file {str(path)!r}"
        if len(blocks) >= 3:
            return _file_blocks_model(cls, CSVSource, path, y, blocks, None, weights=weights,
                                      batch_rows=batch_rows, response="auto", origin=origin,
                                      sep=sep)
        a, b = _stream_blocks_args(None, None, blocks)
        model = stream_model(cls, CSVSource, path, y, a, b, None, weights=weights,
                             batch_rows=batch_rows, origin=origin, sep=sep)
        return model.with_block_names(list(blocks))

    @classmethod
    def from_source(cls, source: Any, *, origin: str | None = None) -> JointDimReduction:
        """A model from a row source (:mod:`jdr_stats.sources`), one streamed pass.

        Parameters
        ----------
        source : RowSource
            An :class:`~jdr_stats.sources.ArraySource`,
            :class:`~jdr_stats.sources.ParquetSource`,
            :class:`~jdr_stats.sources.CSVSource` or
            :class:`~jdr_stats.sources.DaskSource` (or any object with the
            :class:`~jdr_stats.sources.RowSource` protocol).
        origin : str, optional
            How error messages name the data (default: the source's class).

        Returns
        -------
        JointDimReduction
            Holds the moments and the source, as :meth:`from_parquet`.

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> from jdr_stats.sources import ArraySource
        >>> sim = jdr.simulate.bilinear(2000, 4, 3, 1, seed=0)
        >>> model = jdr.JointDimReduction.from_source(ArraySource(sim.y, sim.a, sim.b))
        >>> model.nobs
        2000
        """
        if not isinstance(source, RowSource):
            raise TypeError(f"source must be a row source (jdr_stats.sources); got "
                            f"{type(source).__name__}")
        origin = f"the {type(source).__name__}" if origin is None else origin
        # columns of extreme units: times powers of two from the first chunk on
        scaled = None if callable(getattr(source, "tree_reduce", None)) else ScaledSource(source)
        sums = Moments.from_source(source if scaled is None else scaled, within="stacked",
                                   positive_weights=True)
        model = cls._from_sums(sums, source=source if scaled is None or not scaled.found
                               else scaled, origin=origin)
        data = cast("MomentsData", model._data)
        if scaled is not None:
            data.scales = scaled.scales
            if sums.weighted and scaled.integer_weights and sums.weight >= 1:
                data.frequency_count = int(sums.weight)  # whole-number weights: copies
        return model


    @classmethod
    def _from_sums(cls, moments: Moments | ResponseMoments, *, source: Any,
                   origin: str) -> JointDimReduction:
        model = cls.__new__(cls)
        model._data = MomentsData(moments, source=source, origin=origin)
        model._formula = None
        return model

    # -- data access ------------------------------------------------------
    def with_block_names(self, names: Sequence[str]) -> JointDimReduction:
        """A copy of the model whose blocks are called ``names`` (its data
        shared, not copied): what :meth:`from_blocks` gives."""
        import copy

        names = check_block_names(names, "names")
        if len(names) != len(self.block_names):
            raise ValueError(f"names: the model has {len(self.block_names)} blocks; got "
                             f"{names!r}")
        if len(names) >= 3 and isinstance(self._data, BlockSums):
            out = copy.copy(self)
            out._data = copy.copy(self._data)
            out._data.names = dict(zip(names, self._data.names.values(), strict=True))
            out._block_names = names
            return out
        if len(names) >= 3:
            data = self._data
            assert isinstance(data, ModelData)
            out = copy.copy(self)
            out._data = replace(data, blocks=dict(zip(names, data.blocks.values(),
                                                      strict=True)),
                                names=dict(zip(names, data.names.values(), strict=True)))
            out._block_names = names
            return out
        out = copy.copy(self)
        out._block_names = names
        return out

    @property
    def block_names(self) -> tuple[str, ...]:
        """The design blocks' names, in order (``("a", "b")`` unless the model
        was built by :meth:`from_blocks`)."""
        return self._block_names

    @property
    def exog_a(self) -> np.ndarray:
        """Block a (float array, m x n1)."""
        return self._data.rows("the data of exog_a")[1]

    @property
    def exog_b(self) -> np.ndarray:
        """Block b (float array, m x n2)."""
        return self._data.rows("the data of exog_b")[2]

    @property
    def exog_names_a(self) -> list[str]:
        return self._data.exog_names_a

    @property
    def exog_names_b(self) -> list[str]:
        return self._data.exog_names_b

    # -- estimation -------------------------------------------------------
    def moments(
        self, weights: np.ndarray | None = None, *, covariances: bool = True
    ) -> BlockMoments:
        """Sufficient statistics of the data (optionally reweighted).

        ``weights`` multiplies the model's own case weights; a bootstrap
        passes resampling counts here.  ``covariances=False`` skips the block
        covariances (not needed without whitening).
        """
        return self._data.moments(weights, covariances=covariances)

    def fit(
        self,
        rank: int | Mapping[str, int] | Literal["auto"],
        *,
        whitening: WhiteningKind = "auto",
        independent_blocks: bool = False,
        standardize: bool | None = None,
        sparsity: tuple[int, int] | Literal["auto", "cv"] | None = None,
        rank_method: RankMethod | Literal["ladle"] = "auto",
        alpha: float = 0.05,
        fdr: float = 0.1,
        seed: int | np.random.Generator | None = None,
        progress: ProgressArg = False,
        main_effects: bool = False,
        interactions: Literal["stein", "orthogonal", "orthogonal_quadratic",
                              "regression"] = "stein",
    ) -> Any:
        """Estimate the two subspaces (or, for three or more blocks, one per block).

        Parameters
        ----------
        rank : int, dict or "auto"
            Dimension ``r`` of each subspace, ``0 <= r <= min(n1, n2)``.
            Three or more blocks: an int for every block or a dict
            ``{name: r_k}`` (``0 <= r_k <= n_k``), and ``"auto"`` chooses
            each block's rank by its robust per-block tests (returns a
            :class:`~jdr_stats.fitting._kfit.KBlockResults`; theory page "K blocks").
            For two blocks a dict with the same rank for both is that rank;
            a dict of different ranks (``{"a": 2, "b": 1}``) fits the
            K-block engine at K = 2 (block a's directions the cross moment's
            leading ``r_a`` left singular vectors, block b's its leading
            ``r_b`` right ones; a :class:`~jdr_stats.fitting._kfit.KBlockResults`,
            whose joint estimator whitens with the sample covariance of both
            blocks together, the only whitening it has there).
            ``"auto"`` chooses it by the sequence of rank tests of
            ``rank_method`` at level ``alpha`` (see :meth:`JDRResults.rank_tests`).
            Rank 0 is an answer: where the test of ``H0: r = 0`` is not
            rejected ``"auto"`` returns rank 0 for that block (every K; no
            directions, ``n x 0`` frames, no transform columns, R-squared 0,
            the intercept-only fit; ``bootstrap()`` and support selection
            say there is nothing to bound or select).  A given rank may be 0
            too (``fit(0)``, ``{name: 0}``), so that ``fit(res.rank)``
            repeats a fit.
        whitening : {"auto", "sample", "shrinkage", "diagonal", "none"}
            How each block is whitened before ``X_lin`` is formed: ``"auto"``
            or a key of the registry :data:`jdr_stats.whitenings.WHITENING_METHODS`
            (guide page "Wide blocks", theory page "Whitening").  ``"sample"``: the sample
            mean and covariance (section 5.1 of the paper; needs
            ``m >= n + 2``).  ``"shrinkage"``: the covariance ``D R_t D`` with
            the sample SDs ``D`` and the correlation matrix shrunk towards the
            identity, ``R_t = (1 - t) R + t I``, ``t`` the OAS intensity (unit
            free; any ``m``, computed through the m x m Gram matrix when
            ``n > m``).  ``"diagonal"``: the SDs only (``t = 1``).
            ``"none"``: centring only; the directions then depend on the
            variables' units.  ``"auto"`` (default) is ``"sample"`` while
            the covariance the estimator inverts has at most 0.05 columns
            per row (``(n1 + n2) / m`` for the default joint estimator,
            ``max(n1, n2) / m`` per block), ``"shrinkage"`` above (the study
            ``studies/study_wide.py``); the summary says which and why,
            ``results.whitening`` records it.  The sample whitening uses the
            lower Cholesky factor ``L`` of the covariance: any other square
            root ``C = L O`` (``O`` orthogonal) rotates ``X_lin`` to
            ``O^T X_lin`` and its left singular vectors to ``O^T U'``, so the
            mapped-back subspace ``span(C^{-T} O^T U') = span(L^{-T} U')`` is
            the same.
        independent_blocks : bool
            ``False`` (default): the joint estimator, valid when the blocks
            correlate: each block is replaced by its residual on the other
            block (least squares) and whitened by its partial covariance, so
            the cross moment estimates ``U E[d2f/du dv] V^T`` for Gaussian
            designs whatever the covariance between the blocks (theory page
            "Whitening", section "Correlated blocks").  Under correlated
            blocks it uses only what each block adds beyond the other, so at
            a fixed rank it is noisier than the per-block estimator would be
            with independent blocks (guide page "Premises", "Which estimator
            is the default and why").  ``whitening="auto"`` reads the width
            of both blocks together, ``(n1 + n2) / m``.  The estimator asked
            for is the estimator fitted, whatever the shape, the rank or a
            compute budget, and ``fit(r)``, ``fit("auto")``,
            :meth:`~JDRResults.rank_tests`, the bootstrap and
            :meth:`select_support` use it; where it cannot run a
            ``ValueError`` names ``independent_blocks`` and what would run
            (:func:`jdr_stats.policy.block_estimator`): with fewer than
            ``n1 + n2 + 2`` rows ``whitening="sample"`` and the tests
            (``rank="auto"``, ``sparsity="auto"``, the rank and coordinate
            tests), which whiten with the sample covariance of both blocks
            together, refuse, while a given rank fits with the shrunk joint
            covariance.  Three or more blocks
            (:func:`jdr_stats.policy.kblock_estimator`): the joint estimator
            whitens with the sample covariance of all blocks together (no
            regularised version), so it needs ``sum(n_k) + 2`` rows and
            ``whitening`` ``"auto"`` (there ``"sample"``) or ``"sample"``,
            else a ``ValueError``; a compute budget may refuse one of its
            steps (the K-way tensor, the rank tests' influences), naming
            the budget, never replace it.
            ``True``: the paper's estimator, each block whitened with its own
            covariance, which assumes the blocks independent of each other
            (correlated blocks then inflate the rank the tests choose and
            bias the directions).  The summary says which was used; the rank
            tests, the bootstrap (which re-estimates the residuals in every
            replicate), the variable tests and support selection run on it,
            from rows in memory, a row source or bare sums (the
            within-block moments of :class:`~jdr_stats.Moments`).
        standardize : bool, optional
            Deprecated (``FutureWarning``): ``True`` is ``whitening="sample"``,
            ``False`` is ``whitening="none"``.
        sparsity : (s1, s2), "auto" or None
            Select ``s1`` variables of block a and ``s2`` of block b by the
            three-step projection of section 3, ``rank <= s_k <= n_k``.
            ``"auto"`` keeps exactly the variables :meth:`select_support`
            selects at false discovery rate ``fdr`` (its default conditional
            test, the wild bootstrap of the robust score statistic, seeded by a
            child of ``seed``; see ``results.support_tests``).  A block where
            the tests select fewer than ``rank`` variables is kept dense, with a
            :class:`~jdr_stats.exceptions.SupportSelectionWarning` and a note
            in the summary.  The tests whiten with the sample covariance
            whatever ``whitening`` (so they need ``m >= max(n1, n2) + 2``).
            ``"cv"`` chooses ``(s1, s2)`` by K-fold cross-validation over rows
            (seeded by the support child of ``seed``) of the out-of-fold
            R-squared of ``y`` regressed on the reduced features, over a grid
            of candidates from the rank to each block's width, and keeps the
            sparsest pair within one standard error of the best (theory page
            "Support selection"; ``jdr_stats.policy.sparsity_cv``); any
            whitening and any width (``p >> n`` included; the study
            ``studies/study_sparse_wide.py``), rows in memory, no case weights.
            The curve is ``results.sparsity_cv``, the choice and its reason
            are in ``results.settings`` and the summary.
            Three or more blocks: an int ``s`` (every block) or a dict
            ``{name: s_k}`` (``rank_k <= s_k <= n_k``) keeps each block's
            variables by the two-step selection of the theory page "K
            blocks" (section "Sparse fits") and refits on them
            (``results.support[name]``); ``"cv"`` chooses one common count
            for every block by the same cross-validation; ``"auto"`` is
            refused (``select_support`` tests the variables).
        rank_method : str
            One of ``"auto"``, ``"robust"``, ``"wald"``, ``"chi2"``,
            ``"general"``, ``"permutation"``, ``"spectral"``, ``"combined"``,
            ``"ladle"``.
            How ``rank="auto"`` chooses the rank: the sequential tests of that
            method (default ``"auto"``: ``"robust"``, valid without
            distributional assumptions, or ``"combined"`` (the robust and
            the spectral tests, Bonferroni-combined) for blocks much wider
            than the sample, ``q n1 n2 / m >= 5`` (``q`` response columns;
            :func:`jdr_stats.policy.rank_method`: the data's shape alone
            chooses, wherever the rows are stored; the choice and its reason
            are in ``results.settings``);
            ``"chi2"`` is the normal-theory test), or the ladle
            estimator (``"ladle"``, Luo and Li 2016, bootstrap from a child of
            ``seed``).  The tests whiten with the sample covariance whatever
            ``whitening``.
        alpha : float
            Level of the rank tests when ``rank="auto"``.
        fdr : float
            False discovery rate when ``sparsity="auto"``.
        seed : int, Generator or None
            Seed of the random procedures the fit runs: the permutation or
            spectral rank test (the latter also as the default at width) or
            the ladle (``rank="auto"``) and support selection
            (``sparsity="auto"``).  Each procedure draws from its own child
            stream, spawned from ``seed`` (``jdr_stats.model.child_seeds``: child 0 for
            the rank choice, child 1 for support selection), so the two
            never share random numbers and the same seed gives the same fit.
        progress : bool or callable
            ``rank="auto"`` with a test: ``True`` shows the rank tests'
            progress (rows of the table; permutations for the permutation
            test), a callable is called as ``progress(done, total)``.  A
            selection expected to take over a minute warns first
            (:class:`~jdr_stats.exceptions.LongRunWarning`).
        main_effects : bool
            ``False`` (default): the cross moments only, which see the
            interactions between the blocks and are blind to main effects
            (a class shifting a block's mean).  ``True``: pool each block's
            first moment ``E[y z_k]`` (first-order Stein: in ``span(U_k)``)
            with its cross moments, scaled and weighted as the pieces of
            three or more blocks, so one reduction sees main effects and
            interactions (theory page "K blocks", section 6; the study
            ``studies/study_pooled.py``).  The fit is then no longer one
            SVD: for two blocks as for three or more it returns a
            :class:`~jdr_stats.fitting._kfit.KBlockResults` (``directions[name]``,
            ``rank`` a dict by block, each block its own rank;
            ``directions_a``/``directions_b`` do not exist on it), whose
            ``rank="auto"`` and ``rank_tests()`` are the robust per-block
            tests with the first moment included.  Both whitenings
            (``independent_blocks=False``: block ``k``'s main effect given
            the others); not with ``sparsity``.
        interactions : {"stein", "orthogonal", "orthogonal_quadratic", "regression"}
            Two blocks: which interaction estimand.  ``"stein"`` (default):
            the cross moment of ``y``, the cross block of
            ``Sigma^{-1} E[y x x^T] Sigma^{-1}`` (per block for
            ``independent_blocks=True``), which a linear main effect enters
            through the design's third moment when the blocks are skewed and
            correlated.  ``"orthogonal"``: the same cross moment of ``y``'s
            least squares residual on ``[1, a, b]``, zero under any pure
            linear main effect whatever the design (theory page
            "Whitening", section "Interactions orthogonal to the main
            effects"; the study ``studies/study_main_effect_leak.py``); its
            rank tests (``rank="auto"``, :meth:`~JDRResults.rank_tests`) carry
            the residual's estimation in their influence rows
            (:func:`jdr_stats.inference.orthogonal_rank.orthogonal_rank_tests`).
            Needs the rows in memory, a single numeric response, no weights
            or covariates, ``m > n1 + n2 + 1``; not with ``main_effects``,
            ``sparsity="auto"`` or three or more blocks; the bootstrap of
            such a fit is refused.  Within-block curvature of ``y`` is not
            removed: ``"orthogonal_quadratic"`` also residualises ``y`` (and,
            in the tests, the cross products) on every within-block product
            ``a_j a_l``, ``b_j b_l`` (``j <= l``), which needs ``m > 1 + n1 +
            n2 + n1 (n1 + 1)/2 + n2 (n2 + 1)/2``.  ``"regression"``: the least
            squares coefficients ``B`` of the cross products ``a_j b_l`` in the
            regression of ``y`` on ``[1, a, b]``, the within-block products
            and the cross products, in the whitened metric: exact for
            bilinear links (plus main effects and within-block quadratics)
            whatever the design's distribution (theory page "Whitening",
            section "Interactions by regression"; the study
            ``studies/study_regression_estimand.py``); its rank tests refer
            to the HC3 sandwich of ``B``
            (:func:`jdr_stats.inference.regression_rank.regression_rank_tests`);
            needs ``m`` above that regression's columns and the sample
            whitening.  Recorded in
            ``results.settings`` and the summary.

        Raises
        ------
        ValueError
            The estimator asked for (``independent_blocks``) cannot run
            here: the message names it and what would run (never another
            estimator in its place; see ``independent_blocks``).
        ValueError
            Fewer than ``2 (r + 1)^2`` rows for rank ``r`` (8 for ``r = 1``,
            18 for ``r = 2``; checked on the chosen rank with
            ``rank="auto"``).  The fit's R-squared regresses ``y`` on
            ``k = r^2 + 2r`` terms (the ``2r`` reduced features and their
            ``r^2`` products); for a response unrelated to the blocks its
            expected in-sample value is ``k / (m - 1)`` (Gaussian errors:
            ``R^2 ~ Beta(k/2, (m - k - 1)/2)``), at least 1/2 below that
            minimum, and the directions, chosen from all ``n1 + n2``
            variables, fit the rows still better: nothing the fit reports
            would be distinguishable from noise.  (5 rows with 6 + 5 columns
            gave R-squared 0.94 on noise.)

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

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(100, 150, 120, 1, seed=0)
        >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
        >>> res.whitening
        'shrinkage'
        """
        if isinstance(rank, str) and rank != "auto":
            raise ValueError(f'rank must be a non-negative integer or "auto"; got {rank!r}')
        main_effects = check_main_effects(main_effects, sparsity)
        # two blocks with a rank per block: the K-block engine at K = 2 (its
        # directions are the cross moment's leading singular vectors)
        per_block_ranks = isinstance(rank, Mapping) and len(self.block_names) == 2 \
            and len({str(v) for v in rank.values()}) > 1
        interactions = check_interactions(
            interactions, n_blocks=len(self.block_names), main_effects=main_effects,
            per_block_ranks=per_block_ranks, sparsity=sparsity, data=self._data)
        base = self._data if interactions in ("stein", "regression") \
            else orthogonal_data(self._data, interactions)
        if len(self.block_names) >= 3 or main_effects or per_block_ranks:
            if isinstance(self._data, BlockSums):
                if len(self.block_names) == 2:
                    what = "main_effects=True" if main_effects else f"rank={rank!r}"
                    raise ValueError(f"{what}: a streamed two-block model is not "
                                     "supported; load the rows (arrays or a DataFrame)")
                return fit_streamed_kblocks(
                    self, rank, whitening=str(fold_standardize(whitening, standardize)),
                    independent_blocks=independent_blocks, sparsity=sparsity,
                    rank_method=rank_method, alpha=alpha, seed=seed,
                    main_effects=main_effects)
            return fit_kblocks(self, rank, whitening=str(fold_standardize(whitening, standardize)),
                               independent_blocks=independent_blocks, sparsity=sparsity,
                               rank_method=rank_method, alpha=alpha, seed=seed,
                               main_effects=main_effects)
        if isinstance(rank, Mapping):
            rank = _two_block_rank(rank, self.block_names)
        if isinstance(sparsity, str) and sparsity not in ("auto", "cv"):
            raise ValueError(f'sparsity must be (s1, s2), "auto", "cv" or None; got '
                             f'{sparsity!r}')
        names_a, names_b = self.exog_names_a, self.exog_names_b
        if rank != "auto":
            check_fit_rows(self.nobs, check_rank(rank, len(names_a), len(names_b), low=0))
        if independent_blocks is not True and independent_blocks is not False:
            raise ValueError(
                f"independent_blocks must be True or False; got {independent_blocks!r}")
        requested = fold_standardize(whitening, standardize)
        joint = policy.block_estimator(independent_blocks, self.nobs, len(names_a),
                                       len(names_b), "auto").name == "joint"
        width = len(names_a) + len(names_b) if joint else max(len(names_a), len(names_b))
        count = whitening_nobs(self.nobs, observations(self._data), width)
        choice = choose_whitening(requested, count, len(names_a), len(names_b), joint)
        if interactions == "regression":
            check_regression_whitening(interactions, choice)
            base = orthogonal_data(self._data, interactions, joint=joint)
        estimator = policy.block_estimator(independent_blocks, self.nobs, len(names_a),
                                           len(names_b), choice.name)
        auto = rank == "auto" or sparsity == "auto"
        if auto:
            check_tests_feasible(self.nobs, len(names_a), len(names_b), rank, sparsity, joint)
        # the joint estimator is the paper's on each block's rows (Sigma_hat^{-1} x)
        # (the per-block one on columns of extreme units times powers of two)
        data, kind = joint_fit_data(base, choice.name) if joint \
            else (scaled_data(base), choice.name)
        # The moments are computed once, and each covariance factored once,
        # for the rank tests, the coordinate tests and the estimate.
        mom, whitening_pair = moments_and_whitenings(data, names_a, names_b, kind, auto)
        # the tests whiten with the sample covariance (see fit's docstring): of
        # both blocks together for the joint estimator
        test_data, test_mom = data, mom
        test_whitening = cast("DesignWhitening[Whitening] | None", None
                              if WHITENING_METHODS[choice.name].tests_need_sample
                              else whitening_pair)
        if auto and joint and choice.name != "sample":
            test_data = joint_data(base)[0]
            test_mom = test_data.moments()
        rank_table: RankTestResults | LadleResults | None = None
        rank_seed, support_seed = child_seeds(seed, 2)
        chosen_by: str | None = None
        if rank == "auto" and interactions != "stein":
            rank, orth_table = choose_orthogonal_rank(self._data, joint=joint, alpha=alpha,
                                                      interactions=interactions)
            rank_table = orth_table
            check_fit_rows(self.nobs, rank)
            chosen_by = "regression" if interactions == "regression" else "orthogonal"
        elif rank == "auto":
            rank, rank_table = choose_rank(
                test_data, test_mom, test_whitening, method=rank_method, alpha=alpha,
                seed=rank_seed, progress=progress,
            )
            check_fit_rows(self.nobs, rank)
            # the method that ran
            chosen_by = getattr(rank_table, "method", rank_method) \
                if rank_method != "ladle" else rank_method
        support_sets = None
        support_found, support_note = None, None
        if rank == 0 and sparsity is not None:  # no direction: no variable to select
            support_sets, sparsity, support_note = rank_zero_support()
        if sparsity == "auto":
            data.rows('sparsity="auto" (support selection)')
            found = choose_support(test_data, test_mom, test_whitening, rank=rank, fdr=fdr,
                                   seed=support_seed)
            support_found, support_note = found.tests, found.note()
            support_sets = (found.rows, found.cols)
            sparsity = (len(found.rows), len(found.cols))
        sparsity_cv = None
        if sparsity == "cv":
            sparsity_cv = _cv_sparsity(data, rank, choice.name, names_a, names_b, support_seed)
            sparsity = sparsity_cv.chosen
        est = estimate(
            mom,
            rank,
            standardize=choice.name != "none",
            sparsity=None if sparsity is None or support_sets is not None
            else tuple(sparsity),  # type: ignore[arg-type]  # checked by estimate
            names_a=names_a,
            names_b=names_b,
            whitening=whitening_pair,
            support=support_sets,
        )
        settings = FitSettings(
            whitening=choice, rank_method=chosen_by,
            rank_choice=getattr(rank_table, "choice", None),
            alpha=alpha if chosen_by is not None else None,
            sparsity=None if sparsity is None else (int(sparsity[0]), int(sparsity[1])),
            support=support_found, support_note=support_note, estimator=estimator,
            sparsity_choice=None if sparsity_cv is None else sparsity_cv.choice,
            sparsity_cv=None if sparsity_cv is None else sparsity_cv.table,
            interactions=interactions_choice(interactions),
        )
        res = JDRResults(self, est, mom, settings, rank_tests=rank_table,
                         whitening=whitening_pair,
                         fit_data=None if data is self._data else data,
                         means=original_means(data, mom))
        if rank_table is not None:  # p-values chose the rank: check their premises
            res.diagnostics.warn('fit(rank="auto")')
        return res

    def select_support(
        self,
        *,
        rank: int | None = None,
        test: SupportTest | None = None,
        method: SupportMethod | None = None,
        covariance: SupportCovariance | None = None,
        n_resamples: int | None = None,
        rule: SupportRuleArg = "bh",
        fdr: float | None = None,
        standardize: bool = True,
        independent_blocks: bool = False,
        seed: int | np.random.Generator | None = None,
        progress: ProgressArg = False,
        n_jobs: int | None = None,
    ) -> SupportResults | KBlockSupportResults:
        """Coordinate tests for every variable with false discovery control.

        The model's door to :func:`jdr_stats.support.select_support`, with
        its options grouped by shape and the same defaults: the test
        (``rank``, ``test``, ``method``, ``covariance``, ``n_resamples``),
        the selection rule (``rule``: a name, or an :class:`~jdr_stats.support.FDR`,
        :class:`~jdr_stats.support.Threshold` or :class:`~jdr_stats.support.Stability`
        object carrying its own settings; ``fdr`` the level of the FDR
        rules), then ``standardize``, ``seed``, ``progress`` and ``n_jobs``.
        See the function for each option and ``docs/guide/support.md``.
        ``independent_blocks=False`` (default) tests the variables of the
        joint estimator (each block's residual on the other block; see
        :meth:`fit`), ``True`` those of the paper's per-block estimator.

        Three or more blocks (rows in memory) test every variable of every
        block given each block's rank (``rank``: an int or a dict by block,
        required) by the robust conditional Wald test of the theory page
        "K blocks" (section "Support selection"), the per-block estimator's
        variables: they need ``independent_blocks=True`` (under the default
        a ``ValueError`` says the joint estimator has no such test), with
        ``rule`` ``"bh"`` or
        ``"by"`` at ``fdr`` over all blocks' variables together; the result
        is a :class:`~jdr_stats.support._kblock.KBlockSupportResults`.  The
        test, method, covariance, resampling and weighting options are the
        two-block tests' and are refused.  Its false discovery rate and
        power: ``studies/study_kblock_support.py``.
        """
        self._data.rows("select_support")
        check_support_rank(rank)
        if len(self.block_names) >= 3:
            return _kblock_select_support(
                self, rank, rule=rule, fdr=fdr, seed=seed,
                refused={"test": test, "method": method, "covariance": covariance,
                         "n_resamples": n_resamples, "n_jobs": n_jobs},
                standardize=standardize, independent_blocks=independent_blocks)
        # the per-block tests on columns of extreme units times powers of two
        data = scaled_data(self._data) if independent_blocks is True else self._data
        return _select_support(
            data, rank=rank, test=test, method=method, covariance=covariance,
            n_resamples=n_resamples, rule=rule, fdr=fdr, standardize=standardize,
            independent_blocks=independent_blocks, seed=seed,
            progress=progress, n_jobs=n_jobs,
        )


def stream_model(cls: type[JointDimReduction], source_cls: Any, path: Any,
                 y: str | list[str], a: list[str], b: list[str],
                 covariates: str | list[str] | None, *, weights: str | None,
                 batch_rows: int | None, origin: str, response: str = "auto",
                 sep: str = ",") -> JointDimReduction:
    """A model streamed from a file source with several response columns
    (:class:`~jdr_stats.moments.ResponseMoments`, ``q + 1`` passes), a
    categorical response or covariates (their levels first, one pass over
    each such column: :mod:`jdr_stats.io._stream_levels`) and/or covariates
    (:mod:`jdr_stats.io._adjusted_source`, one more pass per set of sums)."""
    ys = [y] if isinstance(y, str) else list(y)
    zs = [] if covariates is None else [covariates] if isinstance(covariates, str) \
        else list(covariates)
    if zs and weights is not None:
        raise ValueError("covariates with weights need the rows in memory; got weights="
                         f"{weights!r}")
    kind = "parquet" if "Parquet" in source_cls.__name__ else "csv"
    plan = plan_stream(source_cls, path, ys, zs, kind=kind, response=response,
                       weights=weights, batch_rows=batch_rows, sep=sep, where=origin)

    def make(ycol: Any, acols: list[Any], bcols: list[Any]) -> tuple[Any, Any]:
        base = plan.source(ycol, acols, [*bcols, *plan.z])
        return adjust_source(base, plan.znames) if plan.z else (base, None)

    if len(plan.y) > 1:
        parts = [make(c, a, b) for c in plan.y]
        rm = ResponseMoments.from_sources([src for src, _ in parts],
                                          make(plan.y[0], plan.y, plan.y)[0],
                                          positive_weights=True)
        if plan.response is not None:  # the indicators of classes
            rm = ResponseMoments(rm.parts, rm.yy, kind="categorical", names=rm.names,
                                 classes=plan.response.classes)
        model, adj = cls._from_sums(rm, source=None, origin=origin), parts[0][1]
    else:
        src, adj = make(plan.y[0], a, b)
        model = cls.from_source(src, origin=origin)
    data = model._data
    assert isinstance(data, MomentsData)
    if plan.response is not None:  # the classes and their counts, the name as in memory
        data.response = replace(data.response, kind="categorical",
                                classes=plan.response.classes, counts=plan.response.counts)
        data.endog_name = ys[0]
    if adj is not None:
        data.adjustment = adj
    return model


def _kblock_select_support(model: JointDimReduction, rank: Any, *, rule: Any, fdr: float | None,
                           seed: Any, refused: dict[str, Any], standardize: bool,
                           independent_blocks: bool) -> KBlockSupportResults:
    """``select_support`` of three or more blocks (the robust conditional
    test of every variable, BH over all blocks: :mod:`jdr_stats.support._kblock`)."""
    from .fitting._kfit import _check_ranks

    normalize_seed(seed)  # the tests are not random: the seed is checked, not used
    given = {k: v for k, v in refused.items() if v is not None}
    if given:
        raise ValueError(f"select_support of three or more blocks has one test (the robust "
                         f"conditional Wald test); got {given!r}")
    if standardize is not True:
        raise ValueError("select_support of three or more blocks whitens each block alone "
                         f"(standardize=True); got standardize={standardize!r}")
    if rank is None:
        raise ValueError("rank: select_support of three or more blocks tests each variable "
                         "given its block's rank; give rank= (an int or a dict by block)")
    data = model._data
    assert isinstance(data, ModelData)
    if data.weights is not None:
        raise ValueError("select_support of three or more blocks does not take case weights "
                         "yet; the model has weights")
    names = list(model.block_names)
    labels = [data.names[n] for n in names]
    ranks = _check_ranks(rank, names, [len(lab) for lab in labels])
    if not isinstance(rule, str):
        raise ValueError(f'rule: three or more blocks take "bh" or "by"; got {rule!r}')
    # the estimator asked for: its own tests
    estimator = policy.kblock_support_estimator(independent_blocks)
    if estimator.name == "joint":
        return _joint_kblock_support(model, ranks, fdr=0.1 if fdr is None else fdr,
                                     rule=rule, estimator=estimator)
    return kblock_support(np.asarray(data.endog, float),
                          [np.asarray(x, float) for x in data.blocks.values()], names, labels,
                          ranks, fdr=0.1 if fdr is None else fdr,
                          rule=rule, estimator=estimator)  # type: ignore[arg-type]


def _joint_kblock_support(model: JointDimReduction, ranks: dict[str, int], *, fdr: float,
                          rule: str, estimator: policy.Choice) -> KBlockSupportResults:
    """``select_support`` of K blocks under the joint estimator: the fit's
    own variable tests at the given ranks (``drop1()``: Wald, jackknife
    covariance of the rows' influences), then ``rule`` at ``fdr`` over all
    blocks' variables."""
    if rule not in ("bh", "by"):
        raise ValueError(f'rule: three or more blocks take "bh" or "by"; got {rule!r}')
    check_fraction(fdr, "fdr")
    res = model.fit(ranks)
    table = res.drop1().table
    pv = table["pvalue"].to_numpy(float)
    q = np.full(pv.shape, np.nan)
    finite = np.isfinite(pv)
    if finite.any():
        q[finite] = fdr_qvalues(pv[finite], "by" if rule == "by" else "bh")
    table["qvalue"] = q
    table["selected"] = np.nan_to_num(q, nan=1.0) <= fdr
    return KBlockSupportResults(table, fdr=float(fdr), rule=rule, ranks=dict(ranks),
                                estimator=estimator, test="jackknife Wald, chi2(r_k)")


def _stream_blocks_args(a: list[str] | None, b: list[str] | None,
                        blocks: Mapping[str, list[str]] | None) -> tuple[list[str], list[str]]:
    """The two blocks' columns of a streamed model from ``a``/``b`` or
    ``blocks`` (exactly one of the two ways)."""
    if blocks is None:
        if a is None or b is None:
            raise ValueError("give the blocks' columns: a= and b=, or blocks={name: columns}")
        return a, b
    if a is not None or b is not None:
        raise ValueError("give either a= and b= or blocks=, not both")
    if not isinstance(blocks, Mapping) or len(blocks) < 2:
        raise ValueError(f"blocks: a dict of two or more named blocks (lists of columns); "
                         f"got {blocks!r}")
    check_block_names(list(blocks), "blocks")
    cols = list(blocks.values())
    return cols[0], cols[1]


def _file_blocks_model(cls: type[JointDimReduction], source_cls: Any, path: Any,
                       y: str | list[str], blocks: Mapping[str, list[str]],
                       covariates: Any, *, weights: str | None, batch_rows: int | None,
                       response: str, origin: str, **kwargs: Any) -> JointDimReduction:
    """A streamed model of three or more blocks of a Parquet or CSV file."""
    names = list(check_block_names(list(blocks), "blocks"))
    if not isinstance(y, str):
        raise ValueError(f"y: a streamed model of three or more blocks takes one numeric "
                         f"response column; got {y!r}")
    if covariates is not None:
        raise ValueError(f"covariates: a streamed model of three or more blocks does not "
                         f"adjust for covariates yet; got covariates={covariates!r}. "
                         "Residualise the columns first, or load the rows")
    if response != "auto":
        raise ValueError(f"response: a streamed model of three or more blocks takes a "
                         f"numeric response; got response={response!r}")
    cols = {n: list(blocks[n]) for n in names}
    reader = block_reader_file(source_cls, path, y=y, blocks=cols, weights=weights,
                               batch_rows=batch_rows, origin=origin, **kwargs)
    model = cls.__new__(cls)
    model._data = BlockSums(reader, cols, y, origin)
    model._formula = None
    model._model_specs = None
    model._block_names = tuple(names)
    return model


def _dask_blocks_model(cls: type[JointDimReduction], endog: Any, names: Sequence[str],
                       arrays: Sequence[Any], *, covariates: Any, weights: Any,
                       missing: str, response: str) -> JointDimReduction:
    """A model of three or more dask blocks: the sums reduced on the cluster."""
    if not all(is_dask_collection(x) for x in (endog, *arrays)):
        kinds = ", ".join(f"{n} {'dask' if is_dask_collection(x) else 'in memory'}"
                          for n, x in zip(("endog", *names), (endog, *arrays), strict=True))
        raise TypeError(f"blocks: give endog and every block as dask collections or all in "
                        f"memory; got {kinds}")
    for arg, val, default in (("covariates", covariates, None), ("weights", weights, None),
                              ("missing", missing, "none"), ("response", response, "auto")):
        if val is not default and val != default:
            raise ValueError(f"{arg}: three or more dask blocks do not take {arg}= yet; got "
                             f"{arg}={val!r}")
    reader, labels, yname = block_reader_dask(endog, arrays, names)
    model = cls.__new__(cls)
    model._data = BlockSums(reader, dict(zip(names, labels, strict=True)), yname,
                            "dask collections")
    model._formula = None
    model._model_specs = None
    model._block_names = tuple(names)
    return model


def _cv_sparsity(data: RowsData, rank: int, kind: str, names_a: list[str],
                 names_b: list[str], rng: np.random.Generator) -> SparsityCV:
    """``fit(sparsity="cv")``: the cross-validation on the rows the estimator
    sees (:func:`jdr_stats.support._cv.cv_sparsity`)."""
    y, a, b, weights = data.rows('sparsity="cv"', weights=True)
    if weights is not None:
        raise ValueError('sparsity="cv" does not handle case weights yet; the model has '
                         "weights. Give sparsity=(s1, s2)")
    return cv_sparsity(np.asarray(y, float), np.asarray(a, float), np.asarray(b, float),
                       rank=rank, kind=kind, names_a=names_a, names_b=names_b, rng=rng)


def _two_block_rank(rank: Mapping[str, int], names: Sequence[str]) -> int:
    """A two-block fit's rank from a dict by block name giving both the same."""
    if sorted(rank) != sorted(names):
        raise ValueError(f"rank: a dict needs one rank per block {list(names)}; got "
                         f"{sorted(rank)}")
    values = {int(v) for v in rank.values()}  # one value: different ranks fit the K engine
    return values.pop()


def _named_blocks(blocks: object) -> tuple[list[str], list[Any]]:
    """The names and arrays of ``from_blocks``'s ``blocks`` (a dict of named
    blocks, or a list: ``block1, block2, ...``)."""
    if isinstance(blocks, Mapping):
        names = list(check_block_names(list(blocks), "blocks"))
        arrays = list(blocks.values())
    elif isinstance(blocks, (list, tuple)):
        arrays = list(blocks)
        names = [f"block{k + 1}" for k in range(len(arrays))]
    else:
        raise TypeError(f"blocks must be a dict of named blocks or a list of blocks; got "
                        f"{type(blocks).__name__}")
    if len(arrays) < 2:
        raise ValueError(f"blocks: a joint reduction needs at least two blocks; got "
                         f"{len(arrays)}")
    return names, arrays


def child_seeds(
    seed: int | np.random.SeedSequence | np.random.Generator | None, n: int
) -> list[np.random.Generator]:
    """``n`` independent generators spawned from one seed, one per procedure.

    An int, a ``SeedSequence`` or None becomes ``np.random.SeedSequence(seed)``
    and its ``n`` children (``spawn``); a Generator spawns ``n`` children of
    its own seed sequence (numpy >= 1.25; older versions seed a sequence from
    four draws of the Generator).  Child ``i`` never overlaps child ``j``,
    and the same ``seed`` gives the same children.

    Examples
    --------
    >>> from jdr_stats.model import child_seeds
    >>> a = [g.integers(100) for g in child_seeds(7, 2)]
    >>> b = [g.integers(100) for g in child_seeds(7, 2)]
    >>> a == b
    True
    """
    if isinstance(seed, np.random.Generator):
        if hasattr(seed, "spawn"):
            return list(seed.spawn(n))
        seq = np.random.SeedSequence(seed.integers(0, 2**63, size=4).tolist())
    elif isinstance(seed, np.random.SeedSequence):
        seq = seed
    else:
        normalize_seed(seed)  # TypeError for anything but an int or None
        seq = np.random.SeedSequence(None if seed is None else int(seed))
    return [np.random.default_rng(s) for s in seq.spawn(n)]


def _dask_data(
    endog: Any, exog_a: Any, exog_b: Any, dask_in: list[bool], missing: str, weights: Any,
    covariates: Any = None,
) -> MomentsData:
    """Moments of dask input, reduced on the cluster (the rows stay there);
    with covariates, of the rows residualised on ``[1, Z]`` in the tasks."""
    from .streams._sources import DaskSource

    if not all(dask_in):
        kinds = ", ".join(
            f"{n} {'dask' if d else 'in memory'}"
            for n, d in zip(("endog", "exog_a", "exog_b"), dask_in, strict=True)
        )
        raise TypeError(
            f"give endog, exog_a and exog_b all as dask collections or all in memory; got {kinds}"
        )
    for arg, x in (("endog", endog), ("exog_a", exog_a), ("exog_b", exog_b)):
        check_real(x, arg)  # from the collections' dtypes: nothing is computed
    if weights is not None:
        raise ValueError("weights are not supported with dask input; got weights")
    if missing == "drop":
        raise ValueError(
            'missing="drop" is not supported with dask input (NaN raise an error); '
            "drop the rows with dask first (ddf.dropna())"
        )
    if covariates is not None:
        sums, source, adj = dask_adjusted(endog, exog_a, exog_b, covariates)
        data = MomentsData(sums, source=source, origin="dask collections")
        data.adjustment = adj
        widest = max(len(data.names["exog_a"]), len(data.names["exog_b"]))
        if data.nobs - 1 - adj.p < widest + 1:
            raise ValueError(
                f"too few rows after the adjustment: {data.nobs} rows, {adj.p} covariate "
                f"column(s); need at least {widest + 2 + adj.p}")
        return data
    if getattr(endog, "ndim", 1) == 2 and endog.shape[1] > 1:  # q responses
        parts = [DaskSource(endog[:, c], exog_a, exog_b, endog_name=f"y{c}")
                 for c in range(endog.shape[1])]
        yy = DaskSource(endog[:, 0], endog, endog)
        return MomentsData(ResponseMoments.from_sources(parts, yy), origin="dask collections")
    src = DaskSource(endog, exog_a, exog_b)
    scaled = ScaledDaskSource(src)  # columns of extreme units: powers of two
    data = MomentsData(Moments.from_source(scaled, within="stacked"),
                       source=scaled if scaled.found else src, origin="dask collections")
    data.scales = scaled.scales
    return data
