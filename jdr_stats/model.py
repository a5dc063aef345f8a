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
from typing import Any, Literal

import numpy as np

from .core._linalg import BlockMoments
from .estimation._estimate import (
    WhiteningKind,
)
from .estimation._joint import original_means, scaled_data
from .fitting._kfit import check_main_effects
from .fitting._kstream import BlockSums
from .fitting._model_inputs import (
    StreamedConstructorsMixin,
    _dask_blocks_model,
    _dask_data,
    _named_blocks,
    check_block_names,
)
from .fitting._model_support import _kblock_select_support
from .fitting._orthogonal_fit import (
    check_interactions,
    orthogonal_data,
)
from .fitting._rank_zero import check_support_rank
from .fitting._two_block_fit import fit_kblock_engine, fit_two_blocks
from .fitting._two_block_results import TwoBlockFit
from .inference.rank_tests import RankMethod
from .io._data import DataModel, MissingPolicy, ModelData, check_effective_rows
from .io._responses import ResponseKind
from .resampling._progress import ProgressArg
from .results import JDRResults
from .runtime._validation import (
    child_seeds,
)
from .streams._sources import is_dask_collection
from .support import Covariance as SupportCovariance
from .support import Method as SupportMethod
from .support import SupportResults
from .support import Test as SupportTest
from .support import select_support as _select_support
from .support._options import RuleArg as SupportRuleArg

__all__ = ["JDRResults", "JointDimReduction", "child_seeds"]


class JointDimReduction(StreamedConstructorsMixin, DataModel):
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
        :class:`JDRResults` of the K-block engine (``res.rank`` an int
        when every block has the same rank, else a dict; ``res.ranks`` always
        the dict).
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
        >>> res3.ranks, res3.transform().columns.tolist()
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
            each block's rank by its robust per-block tests (theory page
            "K blocks").
            For two blocks a dict with the same rank for both is that rank;
            a dict of different ranks (``{"a": 2, "b": 1}``) fits the
            K-block engine at K = 2 (block a's directions the cross moment's
            leading ``r_a`` left singular vectors, block b's its leading
            ``r_b`` right ones; the K-block engine's fit, whose joint
            estimator whitens with the sample covariance of both blocks
            together, the only whitening it has there).
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
            for every block by the same cross-validation; ``"auto"`` keeps
            exactly the variables :meth:`select_support` selects given the
            ranks (the fitted estimator's robust conditional tests,
            Benjamini-Hochberg at ``fdr`` over all blocks' variables), a
            block with fewer selected than its rank kept dense with a
            :class:`~jdr_stats.exceptions.SupportSelectionWarning`.
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
            ``whitening``.  Three or more blocks (and the K-block engine at
            two): ``"auto"``/``"robust"`` (the robust per-block tests) or
            ``"ladle"``, each block's ladle over its stacked pieces with
            Poisson refits of the whole fit (``rank_test_table`` is then a
            :class:`~jdr_stats.LadleResults` by block; theory page "K
            blocks", section "The ladle").
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
            SVD: for two blocks as for three or more it returns the K-block
            engine's fit (``directions[name]``, ``rank`` a dict by block,
            each block its own rank; at two blocks ``directions_a`` is its
            view of ``directions["a"]``), whose
            ``rank="auto"`` and ``rank_tests()`` are the robust per-block
            tests with the first moment included.  Both whitenings
            (``independent_blocks=False``: block ``k``'s main effect given
            the others); not with ``sparsity``.
        interactions : {"stein", "orthogonal", "orthogonal_quadratic", "regression"}
            Which interaction estimand.  ``"stein"`` (default):
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
            or covariates, ``m > n1 + n2 + 1``; not with ``main_effects`` or
            ``sparsity="auto"``; the bootstrap of a two-block fit is
            refused.  Three or more blocks (and two with a rank per block)
            take ``"orthogonal"`` on the K-block engine: every piece formed
            from ``y``'s residual on ``[1, every block]``, the per-block rank
            tests with the residual's term in their rows' influences, the
            bootstrap re-estimating it (theory page "K blocks", section 4d;
            the study ``studies/study_kblock_orthogonal.py``); not with
            ``sparsity``.  Within-block curvature of ``y`` is not
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
            whitening.  With ``main_effects=True`` (two or more blocks, the
            K-block engine) ``"regression"`` gives the pooled fit's exact
            first-order piece: every piece is a coefficient of one least
            squares regression of ``y`` on ``[1, every block, within-block
            products, cross products of every pair]`` in the joint whitened
            metric (block ``k``'s linear coefficients, the average
            derivative, for its first-order piece; the cross products'
            coefficients for the pairs; the residual's K-way moment), zero
            under a purely bilinear ``y`` and in the true span under a main
            effect whatever the design (theory page "Main effects", section
            9; the study ``studies/study_first_order.py``).  It needs ``m``
            above that regression's columns, the joint estimator and given
            ranks: ``rank="auto"`` and ``rank_tests()`` are refused (the
            K-block rank tests do not carry the regression);
            ``main_effects_test()`` is its Wald test of the linear
            coefficients given the products; ``bootstrap()`` (pairs)
            re-estimates it.  Recorded in
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
        if len(self.block_names) >= 3 or main_effects or per_block_ranks:
            return JDRResults(fit_kblock_engine(
                self, rank, whitening=whitening, standardize=standardize,
                independent_blocks=independent_blocks, sparsity=sparsity,
                rank_method=rank_method, alpha=alpha, seed=seed, main_effects=main_effects,
                interactions=interactions, fdr=fdr))
        base = self._data if interactions in ("stein", "regression") \
            else orthogonal_data(self._data, interactions)
        fitted = fit_two_blocks(
            self, rank, base, interactions, whitening=whitening, standardize=standardize,
            independent_blocks=independent_blocks, sparsity=sparsity,
            rank_method=rank_method, alpha=alpha, fdr=fdr,
            seeds=lambda: child_seeds(seed, 2), progress=progress)
        data, mom = fitted.data, fitted.mom
        res = TwoBlockFit(self, fitted.est, mom, fitted.settings, rank_tests=fitted.rank_table,
                          whitening=fitted.whitening,
                          fit_data=None if data is self._data else data,
                          means=original_means(data, mom))
        if fitted.rank_table is not None:  # p-values chose the rank: check their premises
            res.diagnostics.warn('fit(rank="auto")')
        return JDRResults(res)

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
    ) -> SupportResults:
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

        Three or more blocks, or two with a rank per block (rows in memory),
        test every variable of every block given each block's rank
        (``rank``: an int or a dict by block, required) by the robust
        conditional Wald test of the theory page "K blocks" (section
        "Support selection"), under the fitted estimator, with
        ``rule`` ``"bh"`` or
        ``"by"`` at ``fdr`` over all blocks' variables together; the result
        is a :class:`~jdr_stats.support.SupportResults` as for two blocks
        (its table indexed by block name and variable at every K).  The
        test, method, covariance, resampling and weighting options are the
        two-block tests' and are refused.  Its false discovery rate and
        power: ``studies/study_kblock_support.py``.
        """
        self._data.rows("select_support")
        check_support_rank(rank)
        if isinstance(rank, Mapping) and len(self.block_names) == 2 \
                and len({v for v in rank.values() if not isinstance(v, bool)}) == 1 \
                and sorted(rank) == sorted(self.block_names):
            rank = next(iter(rank.values()))  # one rank for both: the two-block tests
        if len(self.block_names) >= 3 or isinstance(rank, Mapping):
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
        ).named(self.block_names)
