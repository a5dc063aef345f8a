"""The doors of a two-block fit to its inference: the rank tests, the
association and main-effects tests and the bootstrap, each under the
fit's own estimator and whitening.  :class:`ResultsInferenceMixin` is
mixed into :class:`jdr_stats.JDRResults`; the numerics are in
:mod:`jdr_stats.inference`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, cast

import numpy as np

from ..core._linalg import AnyWhitening
from ..core.moments import unit_response
from ..core.whitening import DesignWhitening
from ..estimation._estimate import (
    choose_whitening,
    moments_and_whitenings,
)
from ..estimation._joint import ScaledModelData, scaled_data
from ..fitting._orthogonal_fit import orthogonal_tests
from ..fitting._rank_zero import check_rank_positive
from ..inference.association import association_test as _association_test
from ..inference.bootstrap import BootstrapResults, Interval
from ..inference.bootstrap import Method as BootstrapMethod
from ..inference.bootstrap import bootstrap as _bootstrap
from ..inference.hypotheses import TestResult
from ..inference.main_effects import MainEffectsMethod, MainEffectsResults
from ..inference.main_effects import main_effects_test as _main_effects_test
from ..inference.rank_tests import RankMethod, RankTestResults
from ..inference.rank_tests import rank_tests as _rank_tests

__all__ = ["ResultsInferenceMixin"]


class ResultsInferenceMixin:
    """Rank, association and main-effects tests and the bootstrap of :class:`JDRResults`."""

    # the results class provides these
    _est: Any
    _fit_data: Any
    _model: Any
    _names_a: Any
    _names_b: Any
    _settings: Any
    _test_input: Any
    _whitening: Any
    diagnostics: Any
    nobs: Any
    rank: Any
    sparsity: Any
    standardize: Any
    whitening: Any

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
            return table.named(self._model.block_names)
        data, moments, sample = self._test_input
        table = _rank_tests(
            data, moments, sample,
            method=method, max_rank=max_rank, n_perm=n_perm, seed=seed,
            progress=progress, n_jobs=n_jobs,
        )
        self.diagnostics.warn("rank tests")  # before any p-value is shown
        return table.named(self._model.block_names)

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
            y, a, b, weights = data.rows("main_effects_test()", weights=True, unit=True)
        else:  # a row source: its rows read once (the same numbers as in memory)
            parts = list(source.iter_weighted_chunks())
            y, a, b = (np.concatenate([np.asarray(c[j], float) for c in parts])
                       for j in range(3))
            weights = (None if any(c[3] is None for c in parts)
                       else np.concatenate([np.asarray(c[3], float) for c in parts]))
            y = unit_response(y)
        adjustment = getattr(self._model.data, "adjustment", None)
        # invariant to the response's unit: extreme units brought near unit size
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
            interval=interval, alpha=alpha, progress=progress, n_jobs=n_jobs,
            fit=cast(Any, self),  # the results class this is mixed into
            # the joint estimator's rows carry their (regularised) partial covariances,
            # which every replicate re-estimates and whitens with (the angles' metric)
            whitening="sample" if self._fit_data is not self._model.data
            and not isinstance(self._fit_data, ScaledModelData) else self.whitening,
            whitening_maps=self._whitening,
        )

