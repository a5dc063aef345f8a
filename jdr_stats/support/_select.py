"""Orchestration of the coordinate tests: validate the options, compute the
statistics of each block, apply the selection rule, build the results."""

from __future__ import annotations

from typing import Any, Literal

import numpy as np

from .._data import RowsData
from .._estimate import check_rank
from .._linalg import BlockMoments, Whitening
from .._progress import ProgressArg, check_n_jobs, check_progress
from .._validation import (
    check_bool,
    check_choice,
    check_fraction,
    check_int,
    check_positive,
    check_rows_for_whitening,
    normalize_seed,
)
from ..sparse import check_sparsity
from ._results import SupportResults, method_label, notes_of, support_table
from ._robust import robust_coordinate_tests
from ._rules import select
from ._statistics import block_tests, prepare

__all__ = ["select_support", "choose_sparsity", "Method", "Test", "Covariance", "Rule"]

Method = Literal["wild", "chi2", "permutation", "studentized-permutation"]
Test = Literal["conditional", "marginal"]
Covariance = Literal["factored", "sandwich", "hc3"]
Rule = Literal["bh", "by", "threshold", "stability"]


def select_support(
    data: RowsData | Any,
    moments: BlockMoments | None = None,
    whitening: tuple[Whitening, Whitening] | None = None,
    *,
    rank: int | None = None,
    method: Method | None = None,
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
    progress: ProgressArg = False,
    n_jobs: int | None = None,
) -> SupportResults:
    """Coordinate tests for every variable of both blocks, and the support.

    Parameters
    ----------
    data : ModelData or JointDimReduction
        The validated data (a model is read through its ``data``).
    moments : BlockMoments, optional
        Their sufficient statistics, if already computed.
    whitening : (Whitening, Whitening), optional
        The blocks' whitenings, if already factored.
    rank : int, optional
        Rank ``r`` of the fit.  When given, the conditional test (``r``
        degrees of freedom) is the default.
    method : {"wild", "chi2", "permutation", "studentized-permutation"}, optional
        ``"wild"``: wild (Rademacher) bootstrap of the heteroscedasticity-
        robust score statistic of the reverse regression, ``n_boot``
        resamples: valid for heavy-tailed blocks with correlated variables
        and heteroscedastic noise (measured FDR on the theory page).
        ``"chi2"``: analytic reference (exact F for Gaussian blocks with the
        factored covariance; see ``covariance``).  ``"permutation"``:
        permutation of the variable's partial residual with the F
        statistic (exchangeable residuals).  ``"studentized-permutation"``:
        permutation studentized by the robust covariance (DiCiccio and
        Romano 2017), ``n_perm`` permutations.  Default: ``"wild"`` for
        both tests (the marginal test's resamples cost ``O(B m n1 n2)``,
        about 2 s of CPU at ``m = 5000``, ``n1 = n2 = 60``, ``B = 999``);
        ``"chi2"`` when ``covariance`` is given.
    fdr : float
        Target false discovery rate of the Benjamini-Hochberg (or
        Benjamini-Yekutieli) rule, applied within each block.
    seed : int, Generator or None
        For the resampling tests and stability selection.
    test : {"conditional", "marginal"}, optional
        Default: ``"conditional"`` when ``rank`` is given, else ``"marginal"``.
    covariance : {"factored", "sandwich", "hc3"}, optional
        Covariance of the row's influence function for ``method="chi2"``
        (default ``"factored"``).  ``"factored"``
        (``mean(z_j^2) * mean(h h^T)``) is exact when the variable's partial
        residual is independent of the rest (Gaussian blocks, or independent
        variables); ``"sandwich"`` (``mean(z_j^2 h h^T)``, chi-square) and
        ``"hc3"`` (robust Wald test of the reverse regression with the HC3
        leverage correction, F reference) are robust to dependence between
        them asymptotically, but anti-conservative in the far tail for
        heavy-tailed blocks at small ``m`` (see the theory page).
    standardize : bool
        Test rows of ``Sigma_a^{-1} S Sigma_b^{-1}`` (``True``, the support of
        ``U`` in the original coordinates) or of ``S`` itself (``False``, as
        the unstandardized fit's sparse step).
    n_perm : int
        Permutations for ``method="permutation"`` and
        ``"studentized-permutation"``.
    n_boot : int
        Wild bootstrap resamples for ``method="wild"``.
    rule : {"bh", "by", "threshold", "stability"}
        How the ``selected`` flag is set: Benjamini-Hochberg q-values at most
        ``fdr`` (``statsmodels`` ``multipletests``, ``"fdr_bh"``);
        Benjamini-Yekutieli q-values (``"fdr_by"``, valid under any
        dependence between the tests, more conservative); the threshold rule of section 5.3 (some entry of the row of
        ``M`` exceeds ``threshold`` standard errors); or stability selection
        (selection frequency of the sparse estimator over ``n_subsamples``
        complementary half-samples at least ``stability_threshold``).
    threshold : float, optional
        Threshold of the ``"threshold"`` rule on the entrywise t statistics;
        default the universal threshold ``sqrt(2 log(n1 n2))``.
    n_subsamples : int
        Half-samples for stability selection (drawn as complementary pairs).
    stability_threshold : float
        Selection frequency needed by stability selection, in (0.5, 1).
    sparsity : (s1, s2), optional
        Sparsity of the base sparse fit of stability selection; default the
        Benjamini-Hochberg counts (at least ``rank``).
    progress : bool or callable
        Stability selection only: ``True`` shows a progress bar (tqdm, or
        lines on standard error); a callable is called as
        ``progress(done, n_subsamples)``.
    n_jobs : int or None
        Processes for the batches of half-samples of stability selection
        (joblib; None or 1: this process).  The frequencies do not depend on
        ``n_jobs``.

    Returns
    -------
    SupportResults

    Notes
    -----
    Let ``z_i = Sigma_a^{-1}(a_i - abar)`` (partial residuals, scaled),
    ``b'_i = L_b^{-1}(b_i - bbar)`` and ``g_j = (1/m) sum_i z_ij (y_i - ybar) b'_i``,
    row ``j`` of ``Sigma_a^{-1} S L_b^{-T}``: zero under ``H0_j`` (the rows
    of the whitened ``X_lin`` are not, when the variables are correlated).
    Under ``H0_j`` its influence function is ``z_ij h_i`` with
    ``h_i = (y_i - ybar) b'_i - X^T a'_i - E[y b']`` (``X^T a'_i``: the effect
    of estimating ``Sigma_a``).  With ``covariance="factored"`` the statistic
    is the partial F test of ``W`` in the reverse regression of ``a_j`` on
    ``(1, a_{-j}, W)``, ``W = (y - ybar) b'`` (marginal, ``d = n2``) or
    ``(y - ybar) b' Vhat_{(-j)}`` (conditional, ``d = r``; ``Vhat_{(-j)}``:
    the b-basis of the fit without variable j), exact ``F(d, m - n1 - d)``
    for Gaussian blocks; ``stat`` is ``d F`` (chi-square scale).  With
    ``covariance="sandwich"``, ``stat = m t_j^T Omega_j^{-1} t_j`` against
    ``chi2(d)``, ``Omega_j = mean_i z_ij^2 h_i h_i^T``.  The robust methods (``"wild"``,
    ``"studentized-permutation"``, ``covariance="hc3"``) use
    :func:`jdr_stats.support.robust_coordinate_tests`.  A NaN p-value (an
    undefined test) gets a NaN q-value and is never selected; the other
    q-values are adjusted among the defined tests.  Block b is treated
    symmetrically.  Derivations: ``docs/theory/support.md``.

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(3000, 12, 10, 2, s1=3, s2=3, seed=1)
    >>> model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    >>> sup = model.select_support(rank=2, fdr=0.1, seed=0)
    >>> sup.test, sup.counts[0] >= 2, sup.method
    ('conditional', True, 'wild')
    >>> sup.method_label
    'conditional robust score test, wild bootstrap, B=999'
    >>> truth = [f"a{j}" for j in range(12) if abs(sim.U[j]).sum() > 0]
    >>> set(truth) <= set(sup.selected_a)
    True
    """
    data = _model_data(data)
    n1, n2 = len(data.exog_names_a), len(data.exog_names_b)
    if covariance is not None:
        covariance = check_choice(covariance, "covariance", ("factored", "sandwich", "hc3"))
    rule = check_choice(rule, "rule", ("bh", "by", "threshold", "stability"))
    fdr = check_fraction(fdr, "fdr")
    standardize = check_bool(standardize, "standardize")
    if rank is not None:
        rank = check_rank(rank, n1, n2)
    if test is None:
        test = "marginal" if rank is None else "conditional"
    test = check_choice(test, "test", ("conditional", "marginal"))
    if test == "conditional" and rank is None:
        raise ValueError('test="conditional" needs the rank of the fit; got rank=None')
    if method is None:
        method = "wild" if covariance is None else "chi2"
    method = check_choice(
        method, "method", ("wild", "chi2", "permutation", "studentized-permutation")
    )
    if covariance is None:
        covariance = "factored"
    elif method != "chi2":
        raise ValueError(f'covariance applies to method="chi2" only; got method={method!r}')
    if rule == "stability" and rank is None:
        raise ValueError('rule="stability" fits the sparse estimator and needs rank; got rank=None')
    if method in ("permutation", "studentized-permutation"):
        n_perm = check_int(n_perm, "n_perm", low=1)
    if method == "wild":
        n_boot = check_int(n_boot, "n_boot", low=1)
    if rule == "threshold" and threshold is not None:
        threshold = check_positive(threshold, "threshold")
    check_progress(progress)
    n_jobs = check_n_jobs(n_jobs)
    if rule == "stability":
        n_subsamples = check_int(n_subsamples, "n_subsamples", low=2)
        stability_threshold = check_fraction(stability_threshold, "stability_threshold", low=0.5)
        if sparsity is not None:
            sparsity = check_sparsity(sparsity, n1, n2, rank=rank)
    if data.weights is not None:
        raise ValueError(
            "select_support does not handle case weights yet; the model has weights"
        )
    if standardize:
        check_rows_for_whitening(data.nobs, {"exog_a": n1, "exog_b": n2})
    rng = normalize_seed(seed)

    prep = prepare(data, standardize, moments, whitening)
    common = dict(
        rank=rank, conditional=test == "conditional", standardize=standardize,
        covariance=covariance, method=method, n_perm=n_perm, rng=rng,
    )
    if method in ("wild", "studentized-permutation") or covariance == "hc3":
        kw = dict(
            rank=rank if test == "conditional" else None, standardize=standardize,
            method="hc3" if method == "chi2" else method,
            n_resample=n_boot if method == "wild" else n_perm, seed=rng,
        )
        res_a = robust_coordinate_tests(prep.yc, prep.z_a, prep.w_a, prep.w_b, **kw)
        res_b = robust_coordinate_tests(prep.yc, prep.z_b, prep.w_b, prep.w_a, **kw)
    else:
        res_a = block_tests(prep.yc, prep.z_a, prep.w_a, prep.w_b, **common)
        res_b = block_tests(prep.yc, prep.z_b, prep.w_b, prep.w_a, **common)

    blocks, rule_settings = select(
        rule, res_a, res_b, data=data, prep=prep, fdr=fdr, rank=rank,
        standardize=standardize, threshold=threshold, n_subsamples=n_subsamples,
        stability_threshold=stability_threshold, sparsity=sparsity, rng=rng,
        progress=progress, n_jobs=n_jobs,
    )
    settings: dict[str, Any] = {"covariance": covariance, "standardize": standardize}
    if method in ("permutation", "studentized-permutation"):
        settings["n_perm"] = n_perm
    if method == "wild":
        settings["n_boot"] = n_boot
    settings.update(rule_settings)
    table = support_table({"a": data.names["exog_a"], "b": data.names["exog_b"]}, blocks)
    return SupportResults(
        table=table,
        title="Support selection: coordinate tests",
        method=method,
        method_label=method_label(method, test, covariance, n_perm, n_boot),
        notes=notes_of(test, method, covariance, rule, standardize, fdr, rank, settings),
        test=test,
        rule=rule,
        fdr=fdr,
        rank=rank,
        settings=settings,
    )


def _model_data(data: Any) -> RowsData:
    """The data of ``data`` (itself, or a model's ``data``), rows in memory."""
    out = data if isinstance(data, RowsData) else getattr(data, "data", None)
    if not isinstance(out, RowsData) or set(out.names) != {"exog_a", "exog_b"}:
        raise TypeError(
            "data must be the ModelData of a JointDimReduction (or the model "
            f"itself); got {type(data).__name__}"
        )
    out.rows("select_support")
    return out


def choose_sparsity(
    data: RowsData,
    moments: BlockMoments | None = None,
    whitening: tuple[Whitening, Whitening] | None = None,
    *,
    rank: int,
    fdr: float = 0.1,
    seed: int | np.random.Generator | None = None,
) -> tuple[tuple[int, int], SupportResults]:
    """Sparsity levels ``(s1, s2)`` for ``fit(sparsity="auto")``.

    The counts of variables selected by the conditional coordinate tests
    (the default of :func:`select_support`: the wild bootstrap of the robust
    score statistic, seeded by ``seed``) at false discovery rate ``fdr``
    (Benjamini-Hochberg within each block), raised to at least ``rank`` (and
    at most the block's width).

    Returns
    -------
    (s1, s2), SupportResults
    """
    res = select_support(data, moments, whitening, rank=rank, fdr=fdr, seed=seed)
    n1, n2 = len(data.exog_names_a), len(data.exog_names_b)
    s1, s2 = res.counts
    return (int(np.clip(s1, rank, n1)), int(np.clip(s2, rank, n2))), res
