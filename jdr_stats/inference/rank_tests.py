"""Tests of the dimension ``r`` of the joint estimator, and rank selection.

For ``k = 0, 1, ...`` the null hypothesis ``H0: r <= k`` (the population
matrix ``E[a' y b'^T]`` of the whitened blocks has rank at most ``k``) is
tested against ``r > k`` with the statistic

    Lambda_k = m * sum_{j > k} sigma_j(X_lin)^2 / s_y^2,

``X_lin`` the whitened cross moment (the paper's equation (5), centred ``y``)
and ``s_y^2`` the sample variance of ``y``, or by the self-normalised
statistic ``T_k`` of ``rank_robust``.  The methods:

* ``"robust"`` (default): ``Lambda_k`` against ``g chi2(h)`` whose mean and
  variance are the finite-sample moments of ``Lambda_k`` estimated from the
  influence functions of the complement block; no distributional
  assumption (its size on the robustness battery: study
  ``studies/study_rank_robust.py``);
* ``"wald"``: ``T_k = m vec(C)^T Omega^{-1} vec(C)``, ``C`` the
  complement block and ``Omega`` the second moment of its influence
  functions (Kleibergen-Paap type), referred to Hotelling's ``F(d, m - d)``;
* ``"chi2"``: chi-square with ``(n1 - k)(n2 - k)`` degrees of freedom
  (Gaussian blocks, independent of each other);
* ``"general"``: ``sum_j w_j chi2_1``, the weights the eigenvalues of the
  estimated covariance of the complement block (no distributional
  assumption), tail by Imhof's (1961) inversion formula;
* ``"permutation"``: the complement coordinates' rows are permuted (Cook and
  Yin 2001) and the statistic recomputed;
* ``"spectral"``: the (k+1)-th singular value against Rademacher sign flips
  of the rows of a bound that holds in every sample, with cross-fitted
  projections (for blocks much wider than the sample: theory 6e);
* ``"combined"``: ``min(1, 2 min(p_robust, p_spectral))``, the Bonferroni
  combination of the two (theory 6f): what the default ``"auto"`` runs when
  ``q n1 n2 / m >= policy.RANK_COMBINED_MIN_RATIO`` (:func:`jdr_stats.policy.rank_method`;
  the same choice and numbers whether the rows are in memory or streamed).

Each method is an entry of the registry
:data:`~jdr_stats.inference.rank_methods.RANK_METHODS` (its row computation,
columns, reference distribution, assumptions and what it needs from the
data); this module runs the sequence of rows and builds the table.

``fit(rank="auto", rank_method="ladle")`` chooses the rank by the ladle
estimator (Luo and Li 2016) instead of tests; its results are a
:class:`~jdr_stats.inference.ladle.LadleResults` (a criterion, no p-values).

The derivations are in ``docs/theory/rank_tests.md``.
"""

from __future__ import annotations

import time
import warnings
from contextlib import AbstractContextManager, nullcontext
from typing import Any, Literal

import numpy as np
import pandas as pd

from .. import config, policy
from ..core._linalg import BlockMoments, Whitening, blas_for_blocks
from ..core.whitening import DesignWhitening
from ..exceptions import LongRunWarning, RankSelectionWarning, RowsNotInMemoryError
from ..io._data import RowsData
from ..policy import Choice
from ..resampling._progress import (
    ProgressArg,
    check_n_jobs,
    check_progress,
    progress_bar,
    progress_forwarder,
)
from ..runtime._lazy import stats
from ..runtime._validation import check_choice, check_fraction, check_int, normalize_seed
from ..runtime._warn import warn_at_caller
from ._rank_results import RankTestResults
from ._rank_stats import WhitenedDesign, _whiten
from .hypotheses import TEST_COLUMNS
from .ladle import LADLE_AT_ZERO, LadleResults, ladle_results
from .rank_methods import (
    RANK_METHODS,
    RankTestMethod,
    RowOptions,
    default_replicates,
    tail_notes,
)

__all__ = [
    "RANK_SELECTORS",
    "RankMethod",
    "RankTestResults",
    "choose_rank",
    "rank_tests",
    "resolve_method",
]

#: The keys of ``rank_tests(method=...)``: "auto" and the registry's
#: (:data:`~jdr_stats.inference.rank_methods.RANK_METHODS`).  A literal for
#: mypy; ``tests/test_rank_registry.py`` checks it equals the registry's keys.
RankMethod = Literal["auto", "robust", "wald", "chi2", "general", "permutation", "spectral",
                     "combined"]
#: What rank_tests(method=...) accepts: "auto" (the default) and the methods.
_METHODS = ("auto", *RANK_METHODS)
#: What fit(rank="auto", rank_method=...) and the CLI's --rank-method accept:
#: the tests and the ladle.
RANK_SELECTORS = (*_METHODS, "ladle")
#: Replicates per row when ``n_perm`` is None (one sign flip costs a product
#: of the size of the fit; one permutation much less): from the registry.
_DEFAULT_REPLICATES = default_replicates()


# ---------------------------------------------------------------------------
# The table of tests
# ---------------------------------------------------------------------------
def _check_max_rank(max_rank: Any, n1: int, n2: int) -> int:
    top = min(n1, n2) - 1
    if max_rank is None:
        return top
    why = " (min(n1, n2) - 1: H0: r = min(n1, n2) leaves no complement to test)"
    return check_int(max_rank, "max_rank", low=0, high=top, why=why)


def _build(
    w: WhitenedDesign, method: RankTestMethod, rows: list[dict[str, float]], tails: set[str],
    *, choice: Choice | None = None,
) -> RankTestResults:
    table = pd.DataFrame(rows, index=pd.Index(np.arange(len(rows)), name="k"),
                         columns=[*TEST_COLUMNS, *method.columns])
    if w.q == 1:
        label, assumptions = method.label, method.assumptions
        hypothesis = (
            "Row k tests H0: r <= k (the whitened population cross moment E[a' y b'^T] "
            "has rank <= k) against H1: r > k. " + method.statistic_note
            + "s_j the singular values of the whitened X_lin (centred y).")
    else:
        label, assumptions = method.q_label, method.q_assumptions
        hypothesis = (
            f"Response of q = {w.q} whitened columns (Yw). Row k tests H0: r <= k (the q "
            "whitened cross moments E[a' Yw_c b'^T] have joint column and row spaces of "
            "dimension <= k). Statistic Lambda_k = m sum_c ||U_perp' X_c V_perp||_F^2, "
            "U_perp, V_perp the complements of the rank-k HOSVD estimates.")
    notes = [
        hypothesis,
        assumptions,
        (
            "Not rejecting k = 0 does not mean that y is unrelated to the blocks: "
            "additive or even links give a zero cross moment; correlated blocks can "
            "make its rank exceed the number of directions of the model."
        ),
        *method.notes,
    ]
    # why "auto" chose this method: also among the references, which a
    # fit's summary prints with its rank-test table
    refs = [*([choice.reason] if choice else []), *tail_notes(method, tails)]
    notes += refs
    notes.append("select_rank(alpha) = first k whose test is not rejected.")
    return RankTestResults(
        table=table,
        title="Rank tests for the joint estimator",
        method=method.name,
        notes=notes,
        method_label=label,
        nobs=w.m,
        n1=w.n1,
        n2=w.n2,
        full=len(rows) == min(w.n1, w.n2),
        references=tuple(refs),
        choice=choice,
    )


def _check_data(data: RowsData, method: RankTestMethod) -> None:
    """Refuse weighted models, and models without the rows or the row source
    the method needs (a model built from sums holds no rows: the chi2 test
    needs only the singular values; the robust, Wald and general tests stream
    sums over rows from the model's row source; the permutation test needs
    the rows)."""
    if method.needs == "rows":
        data.rows(f"the {method.name} rank test")
    elif method.needs == "source":
        data.require_source(f"the {method.name} rank test")
    n1, n2 = len(data.names["exog_a"]), len(data.names["exog_b"])
    if data.nobs < max(n1, n2) + 2:
        raise ValueError(
            f"rank tests need at least max(n1, n2) + 2 = {max(n1, n2) + 2} "
            f"observations to whiten the blocks; got {data.nobs}"
        )


def resolve_method(data: RowsData, mom: BlockMoments, method: str) -> tuple[str, Choice | None]:
    """The method ``"auto"`` stands for, and the :class:`~jdr_stats.policy.Choice`
    that says why (None when ``method`` was given).

    ``"auto"`` is :func:`jdr_stats.policy.rank_method` of the data's shape:
    the combined test (the robust and the spectral tests, Bonferroni-combined;
    theory 6f) when ``q n1 n2 / m`` (``q`` response columns) is at least
    ``policy.RANK_COMBINED_MIN_RATIO``, else the robust test.  Where the rows
    are stored plays no part: the spectral test streams its sign flips over a
    row source with the numbers it gives in memory, and a model built from
    sums alone (no rows, no row source) raises, naming ``rank_method``.
    Every other name is itself.
    """
    if method != "auto":
        return method, None
    n1, n2 = len(data.names["exog_a"]), len(data.names["exog_b"])
    q = mom.q if mom.cross_q is not None else 1
    choice = policy.rank_method(data.nobs, n1, n2, q)
    if choice.name == "combined":
        _require_rows_or_source(data, choice)
    return choice.name, choice


def _require_rows_or_source(data: RowsData, choice: Choice) -> None:
    """The combined test sums over rows: in memory or streamed from a row source.
    A model built from sums alone has neither: a clear error, never another test."""
    try:
        data.require_source("the combined rank test")
    except RowsNotInMemoryError as exc:
        raise RowsNotInMemoryError(
            f"rank_method='auto' is the combined rank test for this design ({choice.reason}); "
            "its spectral part sums over the rows, and this model has neither the rows nor "
            "a row source (built from sums only, or its data removed). Pass "
            "rank_method='robust' or 'chi2' explicitly, or build the model from the rows, "
            "a Parquet or CSV file, dask arrays or Moments with a row source, which stream "
            "them"
        ) from exc


def _run(
    data: RowsData,
    mom: BlockMoments,
    whitening: DesignWhitening[Whitening] | None,
    *,
    method: str,
    max_rank: int | None,
    n_perm: int | None,
    seed: Any,
    stop_alpha: float | None = None,
    progress: ProgressArg = False,
    n_jobs: int | None = None,
) -> RankTestResults:
    name, choice = resolve_method(data, mom,
                                  check_choice(method, "method", ("auto", *RANK_METHODS)))
    spec = RANK_METHODS[name]
    if spec.row is None:
        raise ValueError(f"method={method!r} ({spec.label}) tests each block's rank over K "
                         "blocks and has no test of one rank shared by two blocks; fit a "
                         "rank per block (rank={name: r, ...}) to run it")
    if n_perm is None:
        n_perm = _DEFAULT_REPLICATES.get(spec.name, 999)
    check_int(n_perm, "n_perm", low=1)
    check_progress(progress)
    n_jobs = check_n_jobs(n_jobs)
    n1, n2 = len(data.names["exog_a"]), len(data.names["exog_b"])
    top = _check_max_rank(max_rank, n1, n2)
    _check_columns(data, spec, mom.q if mom.cross_q is not None else 1)
    _check_data(data, spec)
    rng = normalize_seed(seed) if spec.random else None
    # the robust test's row pairs (wide designs): from `seed`, or (when the seed
    # drives the sign flips of the combined test, or is None) a fixed seed
    pair_rng = normalize_seed(policy.ROBUST_PAIR_SEED if seed is None or spec.random
                              else seed) if spec.rotated else None
    rows_arg: bool | Literal["rotated"] = "rotated" if spec.rotated else spec.needs_rows
    with _small_blas(data, n1, n2):
        w = _whiten(data, mom, whitening, rows=rows_arg)
        if spec.rows is not None and spec.plan is not None:
            passes = _run_passes(w, spec, top, n_perm, rng, n_jobs, progress, stop_alpha,
                                 pair_rng)
            return _build(w, spec, *passes, choice=choice)
        rows, tails = _run_rows(w, spec, top, n_perm, rng, n_jobs, progress, stop_alpha,
                                pair_rng)
        return _build(w, spec, rows, tails, choice=choice)


def _run_rows(w: WhitenedDesign, spec: RankTestMethod, top: int, n_perm: int,
              rng: np.random.Generator | None, n_jobs: int | None, progress: ProgressArg,
              stop_alpha: float | None, pair_rng: np.random.Generator | None,
              ) -> tuple[list[dict[str, float]], set[str]]:
    """The rows of a method that computes one rank at a time, up to ``top`` or
    the first non-rejection (``stop_alpha``)."""
    rows: list[dict[str, float]] = []
    tails: set[str] = set()
    # progress: permutations over all rows (permutation test), else rows
    per_row = n_perm if spec.random else 1
    start = time.perf_counter()
    with progress_bar(progress, per_row * (top + 1), f"{spec.name} tests") as update:
        for k in range(top + 1):
            opts = RowOptions(n_perm=n_perm, rng=rng, n_jobs=n_jobs,
                              progress=progress_forwarder(update) if spec.random else False,
                              pair_rng=pair_rng)
            assert spec.row is not None  # refused by _run
            row, used = spec.row(w, k, opts)
            rows.append(row)
            if not spec.random:
                update(1)
            tails.update(used)
            if stop_alpha is not None and not row["pvalue"] <= stop_alpha:
                break
            if k == 0 and top > 0:
                _warn_long(w, spec, time.perf_counter() - start, top, stop_alpha)
    return rows, tails


def _small_blas(data: RowsData, n1: int, n2: int) -> AbstractContextManager:
    """One BLAS thread for a design whose rows fit in one working buffer
    (``m (n1 + n2) <= config.CHUNK_FLOATS``) and whose blocks are at most
    ``config.ONE_THREAD_MAX_DIM`` wide: its products are small, and a
    multi-threaded BLAS's waiting threads slowed them (``studies/bench_auto.py``)."""
    if data.nobs * (n1 + n2) <= config.CHUNK_FLOATS:
        return blas_for_blocks(n1, n2)
    return nullcontext()


def _check_columns(data: RowsData, spec: RankTestMethod, q: int) -> None:
    """Refuse a test that cannot run on a response of ``q`` columns here (no
    other test is ever run in its place).  A test that does not take
    ``q > 1`` columns raises; one that sums over rows needs them in
    memory for ``q > 1`` (it streams them for one column only) and raises on
    a model without them, naming ``rank_method`` and what works: the same
    data give the same test, or an error, however they are stored."""
    if q == 1:
        return
    if not spec.takes_q:
        takes = ", ".join(repr(k) for k, m in RANK_METHODS.items() if m.takes_q)
        raise ValueError(
            f"the {spec.name} rank test needs a single response column; this model's "
            f"response has q = {q} columns. Use method='robust' (what the default "
            f"'auto' runs where it does not run 'combined') or another of {takes}"
        )
    if not spec.needs_rows or (data.source is None and data.sums is None):
        return
    raise RowsNotInMemoryError(
        f"the {spec.name} rank test of a response of q = {q} columns needs the rows in "
        "memory (it streams over a row source for one response column only); this "
        f"model's rows are not in memory. rank_method='auto' chooses the {spec.name} test "
        "from the shape alone (jdr_stats.policy.rank_method), so pass "
        "rank_method='chi2' (or method='chi2'), or build the model from arrays")


def _run_passes(w: WhitenedDesign, spec: RankTestMethod, top: int, n_perm: int,
                rng: np.random.Generator | None, n_jobs: int | None, progress: ProgressArg,
                stop_alpha: float | None, pair_rng: np.random.Generator | None,
                ) -> tuple[list[dict[str, float]], set[str]]:
    """The rows of a method that computes consecutive ranks at once (the
    spectral and combined tests), pass by pass (``spec.plan``); a rank
    selection stops at the first non-rejection, so its rows are the first
    rows of the full table with the same seed.  Warns, after the first chunk
    of the first pass's sign flips, when the run is expected to take over
    ``config.LONG_RUN_SECONDS``."""
    assert spec.rows is not None and spec.plan is not None
    plan = spec.plan(w, top)
    rows: list[dict[str, float]] = []
    tails: set[str] = set()
    # the bar counts each pass's robust rows (the combined test's, computed
    # before its flips: most of its time at many classes) and its n_perm
    # flips; flips not drawn (sequential stop, ranks that need none) are
    # counted when the pass ends
    robust_rows = spec.name == "combined"
    per_pass = [n_perm + (len(ks) if robust_rows else 0) for ks in plan]
    desc = f"{spec.name} tests" + (" (robust rows, sign flips)" if robust_rows else "")
    with progress_bar(progress, sum(per_pass), desc) as update:
        for i, ks in enumerate(plan):
            seen = [0]

            def step(n: int, seen: list[int] = seen) -> None:
                seen[0] += n
                update(n)

            timing = (lambda setup, per_rep: _warn_long_passes(
                spec.name, plan, n_perm, stop_alpha, setup, per_rep)) if i == 0 else None
            opts = RowOptions(n_perm=n_perm, rng=rng, n_jobs=n_jobs,
                              progress=progress_forwarder(step), pair_rng=pair_rng,
                              timing=timing,
                              row_done=(lambda: step(1)) if robust_rows else None,
                              stop_alpha=stop_alpha)
            for row, used in spec.rows(w, ks, opts):
                rows.append(row)
                tails.update(used)
                if stop_alpha is not None and not row["pvalue"] <= stop_alpha:
                    return rows, tails
            step(max(per_pass[i] - seen[0], 0))
    return rows, tails


def _warn_long_passes(name: str, plan: list[range], n_perm: int, stop_alpha: float | None,
                      setup: float, per_rep: float) -> None:
    """Warn when the passes are expected to take over ``config.LONG_RUN_SECONDS``,
    from the seconds of the first pass's setup and per replicate of its first
    chunk of sign flips (a replicate's cost grows with the ranks of its pass); a rank
    selection is expected to stop within the first pass (which runs one rank
    past the noise edge).  The combined test's robust rows are not counted (a
    few fits' time)."""
    passes = plan[:1] if stop_alpha is not None else plan
    expected = sum(setup + n_perm * per_rep * len(ks) / len(plan[0]) for ks in passes)
    if expected > config.LONG_RUN_SECONDS:
        warn_at_caller(
            f"the {name} rank tests are expected to take about {expected:.0f} s "
            f"({n_perm} sign flips of {len(passes)} pass(es) of ranks; one replicate of the "
            f"first took {per_rep:.2f} s); pass progress=True to follow them, or max_rank "
            "to stop earlier",
            LongRunWarning,
        )


def _warn_long(w: WhitenedDesign, spec: RankTestMethod, first: float, top: int,
               stop_alpha: float | None) -> None:
    """Warn when the rows still to run are expected to take over
    ``config.LONG_RUN_SECONDS``: row ``k`` costs about ``(n1-k)(n2-k) / (n1 n2)``
    of row 0 (measured); a rank selection (``stop_alpha``) is expected to
    stop after the rank the normal-theory tests choose, plus one row."""
    name = spec.name
    last = top
    if stop_alpha is not None:
        for k in range(top + 1):
            if stats.chi2.sf(w.statistic(k), w.q * (w.n1 - k) * (w.n2 - k)) > stop_alpha:
                last = min(k + 1, top)
                break
    ks = np.arange(1, last + 1)
    rest = first * float(np.sum((w.n1 - ks) * (w.n2 - ks))) / (w.n1 * w.n2)
    if first + rest > config.LONG_RUN_SECONDS:
        warnings.warn(
            f"the {name} rank tests are expected to take about {first + rest:.0f} s "
            f"(row k=0 took {first:.1f} s; {last} more rows to run); pass progress=True "
            "to follow them, or max_rank to stop earlier",
            LongRunWarning, stacklevel=4,
        )


# ---------------------------------------------------------------------------
# Public entry points
# ---------------------------------------------------------------------------
def rank_tests(
    data: RowsData,
    moments: BlockMoments,
    whitening: DesignWhitening[Whitening] | None = None,
    *,
    method: RankMethod = "auto",
    max_rank: int | None = None,
    n_perm: int | None = None,
    seed: int | np.random.Generator | None = None,
    progress: ProgressArg = False,
    n_jobs: int | None = None,
) -> RankTestResults:
    """Sequential tests of ``H0: r = k``, ``k = 0, 1, ..., max_rank``.

    The narrow entry point: ``JDRResults.rank_tests`` calls it with the
    fit's data and moments.

    Parameters
    ----------
    data : RowsData
        The validated data (unweighted).
    moments : BlockMoments
        Their sufficient statistics (with covariances; recomputed from
        ``data`` when they hold none).
    whitening : (Whitening, Whitening), optional
        The blocks' whitenings if already factored.
    method : {"auto", "robust", "wald", "chi2", "general", "permutation", "spectral"}
        ``"auto"`` (default): ``"combined"`` when ``q n1 n2 / m >=
        policy.RANK_COMBINED_MIN_RATIO`` (5), else ``"robust"``
        (:func:`jdr_stats.policy.rank_method`, from the data's shape only; a
        note of the table says which and why, and :attr:`RankTestResults.choice`
        holds the choice).
        ``"robust"``: ``Lambda_k`` against a scaled chi-square with
        its finite-sample mean and variance estimated from the rows, no
        distributional assumption (its size on the robustness battery: study
        ``studies/study_rank_robust.py``).
        ``"wald"``: the self-normalised ``T_k`` with Hotelling's F reference
        (conservative, less powerful).  ``"chi2"``: the normal-theory
        chi-square (Gaussian blocks, noise independent of them); ``"general"``:
        weighted chi-square with estimated weights; ``"permutation"``
        (normal-theory premise); ``"spectral"``: the (k+1)-th singular value
        against sign flips of a bound (conservative at ``k >= 1``; for
        blocks much wider than the sample, where it detects strong
        directions the Frobenius statistic misses: theory 6e);
        ``"combined"``: the robust and spectral p-values, Bonferroni-combined
        (theory 6f; columns ``pvalue_robust``, ``spectral_statistic``,
        ``pvalue_spectral`` besides the robust test's).
    max_rank : int, optional
        Largest ``k`` tested, ``0 <= max_rank <= min(n1, n2) - 1`` (default).
    n_perm : int, optional
        Replicates per row of the resampling tests: permutations (default
        999) or sign flips of the spectral test (default 199).
    seed : int, Generator or None
        Seed of the permutations or sign flips (those tests only).
    progress : bool or callable
        ``True`` shows a progress bar (tqdm, or lines on standard error); a
        callable is called as ``progress(done, total)``, counting rows of the
        table (permutations over all rows for the permutation test).  When
        the rows still to run after row 0 are expected (from its time) to
        take over ``config.LONG_RUN_SECONDS``, a
        :class:`~jdr_stats.exceptions.LongRunWarning` gives the expected time.
    n_jobs : int or None
        Processes for the batches of permutations (joblib; None or 1: this
        process).  The p-values do not depend on ``n_jobs``.

    Returns
    -------
    RankTestResults

    Notes
    -----
    ``Lambda_k = m sum_{j>k} sigma_j(X_lin)^2 / s_y^2``, ``X_lin`` the
    whitened cross moment with centred ``y`` (the paper's equation (5); its section 5.1 for
    the whitening).  Under ``H0: r = k``, ``sum_{j>k} sigma_j^2`` is, to
    first order, the squared norm of the complement block
    ``U_perp^T X_lin V_perp = (1/m) sum u_i y_i v_i^T`` (``u = U_perp^T a'``,
    ``v = V_perp^T b'``); estimating the means and covariances and centring
    ``y`` change it only by ``O_p(1/m)``.  Normal theory (Lemma
    ``independent``): covariance ``E[y^2] I / m``, so ``Lambda_k ->
    chi2((n1-k)(n2-k))``.  In general ``Lambda_k -> sum_j w_j chi2_1`` with
    ``w = eig(Omega) / sigma_y^2``, ``Omega`` the covariance of the influence
    function ``psi_i = u_i y_i v_i^T - u_i c_yv^T - c_uy v_i^T - y_i C_uv``.
    The tests always use the whitened ``X_lin`` (whatever the fit's
    ``standardize``; the rank does not depend on it) and the dense fit
    (whatever its ``sparsity``).  See ``docs/theory/rank_tests.md``.

    References
    ----------
    Li, K.-C. (1991, 1992), SIR and pHd tests; Cook, R. D. and Yin, X. (2001),
    Dimension reduction and visualization in discriminant analysis,
    Aust. N. Z. J. Stat. 43, 147-199; Bentler, P. M. and Xie, J. (2000);
    Imhof, J. P. (1961), Computing the distribution of quadratic forms in
    normal variables, Biometrika 48, 419-426.

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(2000, 6, 5, 2, seed=3)
    >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    >>> rt = res.rank_tests("permutation", max_rank=2, n_perm=199, seed=1)
    >>> rt.table["pvalue"].round(3).tolist()[:2]
    [0.005, 0.005]
    >>> rt.select_rank()
    2
    >>> from jdr_stats.inference.rank_tests import rank_tests
    >>> rank_tests(res.model.data, res.moments).select_rank()
    2
    """
    return _run(
        data,
        moments,
        whitening,
        method=method,
        max_rank=max_rank,
        n_perm=n_perm,
        seed=seed,
        progress=progress,
        n_jobs=n_jobs,
    )


def choose_rank(
    data: RowsData,
    moments: BlockMoments,
    whitening: DesignWhitening[Whitening] | None = None,
    *,
    method: RankMethod | Literal["ladle"] = "auto",
    alpha: float = 0.05,
    seed: int | np.random.Generator | None = None,
    n_perm: int | None = None,
    progress: ProgressArg = False,
) -> tuple[int, RankTestResults | LadleResults]:
    """Choose ``r`` as the first ``k`` whose test of ``H0: r = k`` is not rejected.

    Used by ``fit(rank="auto")``.  Tests (default: the robust test) run for
    ``k = 0, 1, ...`` and stop at the first non-rejection (the table holds
    the rows computed).  If ``H0: r = 0`` is not rejected (no evidence of
    any direction) rank 0 is the answer (the fit has no directions) and a
    :class:`~jdr_stats.exceptions.RankSelectionWarning` says so.  If every
    test rejects, ``r = min(n1, n2)``.

    ``method="ladle"`` uses the ladle estimator (Luo and Li 2016; 100
    Poisson-bootstrap replicates drawn from ``seed``) instead: a criterion,
    not a test, so ``alpha`` plays no part and the second value is a
    :class:`~jdr_stats.inference.ladle.LadleResults`.  When its criterion is
    smallest at ``k = 0`` the fit has rank 0, with the same warning.

    The tests always use the whitened cross moment (its rank equals that of
    the unwhitened one), whatever the fit's ``standardize``.

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(2000, 6, 5, 2, seed=3)
    >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto", rank_method="general")
    >>> res.rank, res.rank_method
    (2, 'general')
    """
    alpha = check_fraction(alpha, "alpha")
    check_choice(method, "rank_method", RANK_SELECTORS)
    out: RankTestResults | LadleResults
    if method == "ladle":
        if moments.cross_q is not None:
            raise ValueError("the ladle needs a single response column; this model's "
                             f"response has q = {moments.q} columns. Use rank tests")
        out = ladle_results(data, moments, whitening, seed=seed)
        chosen_ladle = out.select_rank()
        assert isinstance(chosen_ladle, int)  # a two-block ladle: one rank
        rank = chosen_ladle
        why = LADLE_AT_ZERO
    else:
        out = _run(
            data, moments, whitening, method=method, max_rank=None, n_perm=n_perm,
            seed=seed, stop_alpha=alpha, progress=progress,
        )
        chosen = out.select_rank(alpha)
        assert isinstance(chosen, int)  # a joint test: one rank
        rank = chosen
        why = (
            f"no rank test rejected H0: r = 0 ({out.method} tests, alpha={alpha}, "
            f"p = {out.table['pvalue'].iloc[0]:.3g}): the data show no evidence of any "
            "direction of the cross moment E[a' y b'^T] (y may still depend on the "
            "blocks through additive or even links)"
        )
    if rank == 0:
        warnings.warn(f"{why}; returning rank 0 (no directions)", RankSelectionWarning,
                      stacklevel=3)
    return rank, out
