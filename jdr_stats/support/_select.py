"""Orchestration of the coordinate tests: validate the options, compute the
statistics of each block, apply the selection rule, build the results."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from .. import policy
from ..core._linalg import BlockMoments, Whitening
from ..core.whitening import DesignWhitening
from ..estimation._estimate import check_rank, check_support_width
from ..estimation._joint import JointModelData, joint_data
from ..exceptions import SupportSelectionWarning
from ..io._data import RowsData
from ..resampling._progress import ProgressArg, check_n_jobs, check_progress
from ..runtime._validation import check_bool, check_rows_for_whitening, normalize_seed
from ..runtime._warn import warn_at_caller
from ..sparse import check_sparsity
from ._options import (
    Covariance,
    Method,
    Rule,
    RuleArg,
    SelectionRule,
    Stability,
    Test,
    TestPlan,
    clip_counts,
    plan_test,
    resolve_rule,
    rule_q,
)
from ._results import SupportResults, method_label, notes_of, support_table
from ._robust import RobustMethod, run_tests
from ._robust_rows import setup_from_rows
from ._rules import select
from ._statistics import CoordinateTests, Inputs, block_tests, inputs, prepare_from

__all__ = [
    "Covariance",
    "Method",
    "Rule",
    "SupportChoice",
    "Test",
    "choose_sparsity",
    "choose_support",
    "select_support",
]


def select_support(
    data: RowsData | Any,
    moments: BlockMoments | None = None,
    whitening: DesignWhitening[Whitening] | None = None,
    *,
    rank: int | None = None,
    test: Test | None = None,
    method: Method | None = None,
    covariance: Covariance | None = None,
    n_resamples: int | None = None,
    rule: RuleArg = "bh",
    fdr: float | None = None,
    standardize: bool = True,
    independent_blocks: bool = False,
    seed: int | np.random.Generator | None = None,
    progress: ProgressArg = False,
    n_jobs: int | None = None,
) -> SupportResults:
    """Coordinate tests for every variable of both blocks, and the support.

    The options come in two groups: the test (``test``, ``method``,
    ``covariance``, ``n_resamples``) and the selection rule (``rule``, a
    name or an :class:`FDR`, :class:`Threshold` or :class:`Stability`
    object with its own settings).  An option that does not apply to the
    chosen method or rule raises a ``ValueError`` naming it.
    :meth:`JointDimReduction.select_support
    <jdr_stats.JointDimReduction.select_support>` is this function with the
    model's data (same options, same defaults).

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
    test : {"conditional", "marginal"}, optional
        Default: ``"conditional"`` when ``rank`` is given, else ``"marginal"``.
    method : {"wild", "chi2", "permutation", "studentized-permutation"}, optional
        ``"wild"``: wild (Rademacher) bootstrap of the heteroscedasticity-
        robust score statistic of the reverse regression: valid for
        heavy-tailed blocks with correlated variables and heteroscedastic
        noise (measured FDR on the theory page).  ``"chi2"``: analytic
        reference (exact F for Gaussian blocks with the factored covariance;
        see ``covariance``).  ``"permutation"``: permutation of the
        variable's partial residual with the F statistic (exchangeable
        residuals).  ``"studentized-permutation"``: permutation studentized
        by the robust covariance (DiCiccio and Romano 2017).  Default:
        ``"wild"`` for both tests (the marginal test's resamples cost
        ``O(B m n1 n2)``); ``"chi2"`` when ``covariance`` is given.
    covariance : {"factored", "sandwich", "hc3"}, optional
        ``method="chi2"`` only (default ``"factored"``): covariance of the
        row's influence function.  ``"factored"``
        (``mean(z_j^2) * mean(h h^T)``) is exact when the variable's partial
        residual is independent of the rest (Gaussian blocks, or independent
        variables); ``"sandwich"`` (``mean(z_j^2 h h^T)``, chi-square) and
        ``"hc3"`` (robust Wald test of the reverse regression with the HC3
        leverage correction, F reference) are robust to dependence between
        them asymptotically, but anti-conservative in the far tail for
        heavy-tailed blocks at small ``m`` (see the theory page).
    n_resamples : int, optional
        Resamples ``B`` of every resampling method (``"wild"``,
        ``"permutation"``, ``"studentized-permutation"``); default 999.
        Not for ``method="chi2"``.
    rule : {"bh", "by", "threshold", "stability"} or FDR, Threshold, Stability
        How the ``selected`` flag is set.  ``"bh"`` (``FDR(q)``):
        Benjamini-Hochberg q-values at most ``q``; ``"by"``
        (``FDR(q, procedure="by")``): Benjamini-Yekutieli, valid under any
        dependence, more conservative; ``"threshold"`` (``Threshold(value)``):
        the threshold rule of section 5.3 (some entry of the row of ``M``
        exceeds ``value`` standard errors, default ``sqrt(2 log(n1 n2))``);
        ``"stability"`` (``Stability(n_subsamples, threshold, sparsity)``):
        the selection frequency of the sparse estimator over complementary
        half-samples at least ``threshold``.  A name takes the object's
        defaults.  The q-values are reported whatever the rule.
    fdr : float, optional
        Shorthand for the ``q`` of a rule given by name (``"bh"``, ``"by"``,
        ``"stability"``); default 0.1.  Not with a rule object (give ``q``
        to it) nor with ``"threshold"``.
    standardize : bool
        Test rows of ``Sigma_a^{-1} S Sigma_b^{-1}`` (``True``, the support of
        ``U`` in the original coordinates) or of ``S`` itself (``False``, as
        the unstandardized fit's sparse step).
    independent_blocks : bool
        ``False`` (default): test the variables of the joint estimator, each
        block replaced by its least squares residual on the other block
        (valid when the blocks correlate; see
        :meth:`jdr_stats.JointDimReduction.fit`); ``True``: the paper's
        per-block estimator, which assumes independent blocks.  With
        ``moments`` or ``whitening`` given (a fit's own), those define the
        estimator and this keyword is not read.  The joint estimator's
        tests whiten with the sample covariance of both blocks together:
        with fewer than ``n1 + n2 + 2`` rows a ``ValueError`` says so
        (never the per-block tests instead;
        :func:`jdr_stats.policy.block_estimator`).
    seed : int, Generator or None
        For the resampling tests and stability selection.
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
    >>> from jdr_stats.support import FDR, Threshold
    >>> by = model.select_support(rank=2, rule=FDR(q=0.05, procedure="by"), seed=0)
    >>> by.rule, by.fdr
    ('by', 0.05)
    >>> model.select_support(rank=2, method="chi2", rule=Threshold(4.0)).settings["threshold"]
    4.0
    """
    data = _model_data(data)
    if independent_blocks is not True and independent_blocks is not False:
        raise ValueError(f"independent_blocks must be True or False; got "
                         f"{independent_blocks!r}")
    n1, n2 = len(data.exog_names_a), len(data.exog_names_b)
    sel_rule = resolve_rule(rule, fdr=fdr)
    standardize = check_bool(standardize, "standardize")
    if rank is not None:
        rank = check_rank(rank, n1, n2)
    plan = plan_test(rank=rank, test=test, method=method, covariance=covariance,
                     n_resamples=n_resamples)
    if isinstance(sel_rule, Stability):
        if rank is None:
            raise ValueError(
                'rule="stability" fits the sparse estimator and needs rank; got rank=None'
            )
        if sel_rule.sparsity is not None:
            check_sparsity(sel_rule.sparsity, n1, n2, rank=rank)
    check_progress(progress)
    n_jobs = check_n_jobs(n_jobs)
    if data.weights is not None:
        raise ValueError(
            "select_support does not handle case weights yet; the model has weights"
        )
    if standardize:
        check_rows_for_whitening(data.nobs, {"exog_a": n1, "exog_b": n2})
    check_support_width(data.nobs, n1, n2, "select_support")
    if moments is None and whitening is None:  # else the fit's own define the estimator
        if not independent_blocks and data.nobs < n1 + n2 + 2:  # never the per-block tests
            raise policy.joint_rows_error(data.nobs, (n1, n2),
                                          "select_support's tests, which whiten with it")
        if policy.block_estimator(independent_blocks, data.nobs, n1, n2,
                                  "sample").name == "joint":
            data = joint_data(data)[0]
    rng = normalize_seed(seed)
    inp = inputs(data, standardize, moments, whitening)
    res_a, res_b = _coordinate_tests(inp, plan, rank, standardize, rng)
    blocks, rule_settings = select(
        sel_rule, res_a, res_b, data=data, prep=lambda: prepare_from(inp), rank=rank,
        standardize=standardize, rng=rng, progress=progress, n_jobs=n_jobs,
    )
    return _results(data, plan, sel_rule, rank, standardize, blocks, rule_settings)


def _coordinate_tests(
    inp: Inputs, plan: TestPlan, rank: int | None, standardize: bool,
    rng: np.random.Generator,
) -> tuple[CoordinateTests, CoordinateTests]:
    """The tests of block a and of block b, as ``plan`` says.

    The robust tests are formed block by block from the rows
    (:func:`setup_from_rows`: ``m (n1 + n2)`` floats besides the rows); the
    others from the four prepared arrays of :func:`prepare`.
    """
    if plan.robust:
        meth = cast(RobustMethod, "hc3" if plan.method == "chi2" else plan.method)
        out = []
        for focal, other, means, wh in (
            (inp.a, inp.b, inp.means, inp.whitening),
            (inp.b, inp.a, inp.means[::-1], None if inp.whitening is None
             else inp.whitening.reordered((1, 0))),
        ):
            s = setup_from_rows(inp.yc, focal, other, means, wh,
                                rank if plan.conditional else None)
            out.append(run_tests(s, method=meth, n_resample=plan.n_resamples, seed=rng,
                                 n_lost=inp.n_lost))
            del s
        return out[0], out[1]
    prep = prepare_from(inp)
    kw: dict[str, Any] = {
        "rank": rank, "conditional": plan.conditional, "standardize": standardize,
        "covariance": plan.covariance, "method": plan.method, "n_perm": plan.n_resamples,
        "rng": rng, "n_lost": prep.n_lost,
    }
    return (block_tests(prep.yc, prep.z_a, prep.w_a, prep.w_b, **kw),
            block_tests(prep.yc, prep.z_b, prep.w_b, prep.w_a, **kw))


def _results(
    data: RowsData, plan: TestPlan, rule: SelectionRule, rank: int | None,
    standardize: bool, blocks: dict[str, tuple[Any, ...]], rule_settings: dict[str, Any],
) -> SupportResults:
    """The :class:`SupportResults` of the tests and the rule."""
    settings: dict[str, Any] = {
        "covariance": plan.covariance, "standardize": standardize,
        "estimator": "joint" if isinstance(data, JointModelData) else "per-block"}
    if plan.method in ("permutation", "studentized-permutation"):
        settings["n_perm"] = plan.n_resamples
    if plan.method == "wild":
        settings["n_boot"] = plan.n_resamples
    if plan.method != "chi2":
        settings["n_resamples"] = plan.n_resamples
    settings.update(rule_settings)
    table = support_table({"a": data.names["exog_a"], "b": data.names["exog_b"]}, blocks)
    q = rule_q(rule)
    n = plan.n_resamples
    return SupportResults(
        table=table,
        title="Support selection: coordinate tests",
        method=plan.method,
        method_label=method_label(plan.method, plan.test, plan.covariance, n, n),
        notes=notes_of(plan.test, plan.method, plan.covariance, rule.name, standardize, q,
                       rank, settings),
        test=plan.test,
        rule=rule.name,
        fdr=q,
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


@dataclass(frozen=True)
class SupportChoice:
    """The variables ``fit(sparsity="auto")`` keeps, and why.

    Attributes
    ----------
    rows, cols : ndarray of int
        Kept variables of block a and block b (ascending).
    tests : SupportResults
        The coordinate tests that selected them.
    dense : tuple of str
        The blocks (``"a"``, ``"b"``) kept dense because the tests selected
        fewer variables than the rank there.
    """

    rows: np.ndarray
    cols: np.ndarray
    tests: SupportResults
    dense: tuple[str, ...]

    def note(self) -> str:
        """One sentence for the fit's summary."""
        label = self.tests.method_label or self.tests.method
        how = (f"the coordinate tests of select_support ({label}, "
               f"{self.tests.rule} at q = {self.tests.fdr:g}; see "
               "results.support_tests.summary())")
        chosen = [blk for blk in ("a", "b") if blk not in self.dense]
        if not self.dense:
            return f"Variables kept: exactly those selected by {how}."
        text = (f"Variables kept in block {chosen[0]}: exactly those selected by {how}."
                if chosen else f"Coordinate tests: {how}.")
        for block in self.dense:
            k = self.tests.counts[0 if block == "a" else 1]
            text += (f" Block {block}: the tests selected {k} variable(s), fewer than "
                     f"the rank {self.tests.rank}, so the block was kept dense (all its "
                     "variables, not chosen by the tests).")
        return text


def choose_support(
    data: RowsData,
    moments: BlockMoments | None = None,
    whitening: DesignWhitening[Whitening] | None = None,
    *,
    rank: int,
    fdr: float = 0.1,
    seed: int | np.random.Generator | None = None,
) -> SupportChoice:
    """The variables of ``fit(sparsity="auto")``: those the tests selected.

    The conditional coordinate tests of :func:`select_support` (its default:
    the wild bootstrap of the robust score statistic, seeded by ``seed``)
    with Benjamini-Hochberg at false discovery rate ``fdr`` within each
    block.  A block where they select fewer than ``rank`` variables cannot
    carry a rank-``rank`` fit on its selection: it is kept dense (all its
    variables), with a :class:`~jdr_stats.exceptions.SupportSelectionWarning`.

    Returns
    -------
    SupportChoice

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> from jdr_stats.support import choose_support
    >>> sim = jdr.simulate.bilinear(3000, 12, 10, 2, s1=3, s2=3, seed=1)
    >>> model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    >>> choice = choose_support(model.data, rank=2, seed=0)
    >>> [model.exog_names_a[j] for j in choice.rows] == choice.tests.selected_a
    True
    """
    tests = select_support(data, moments, whitening, rank=rank, fdr=fdr, seed=seed,
                           independent_blocks=True)  # data: the estimator's own rows
    sets, dense = [], []
    for block, sel in (("a", tests.selected_a), ("b", tests.selected_b)):
        names = data.names[f"exog_{block}"]
        if len(sel) >= rank:
            chosen = set(sel)
            sets.append(np.array([j for j, nm in enumerate(names) if nm in chosen], dtype=int))
        else:
            sets.append(np.arange(len(names)))
            dense.append(block)
    if dense:
        warn_at_caller(
            f"sparsity=\"auto\": the coordinate tests selected fewer variables than the "
            f"rank {rank} in block(s) {', '.join(dense)} (counts {tests.counts}); "
            "those blocks are kept dense (all their variables)",
            SupportSelectionWarning,
        )
    return SupportChoice(rows=sets[0], cols=sets[1], tests=tests, dense=tuple(dense))


def choose_sparsity(
    data: RowsData,
    moments: BlockMoments | None = None,
    whitening: DesignWhitening[Whitening] | None = None,
    *,
    rank: int,
    fdr: float = 0.1,
    seed: int | np.random.Generator | None = None,
) -> tuple[tuple[int, int], SupportResults]:
    """The counts of variables the conditional coordinate tests select.

    ``fit(sparsity="auto")`` no longer uses the counts (it keeps the
    selected variables themselves, :func:`choose_support`); this gives the
    counts of :func:`select_support`'s default conditional test at false
    discovery rate ``fdr``, raised to at least ``rank`` (and at most the
    block's width), for a fit with ``sparsity=(s1, s2)``.

    Returns
    -------
    (s1, s2), SupportResults
    """
    res = select_support(data, moments, whitening, rank=rank, fdr=fdr, seed=seed,
                         independent_blocks=True)  # data: the estimator's own rows
    n1, n2 = len(data.exog_names_a), len(data.exog_names_b)
    s1, s2 = res.counts  # two blocks
    return clip_counts((s1, s2), rank, (n1, n2)), res
