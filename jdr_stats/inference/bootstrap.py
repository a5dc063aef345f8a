"""Bootstrap uncertainty for the estimated subspaces.

:func:`bootstrap` refits the joint estimator on rows resampled with
replacement and measures, for every replicate, the principal angles between
the replicate's subspaces and the full-sample ones.  Their quantiles give an
upper confidence bound on the largest principal angle between the *true* and
the estimated subspace of each block, per-angle intervals and intervals for
the singular values; sparse fits also report how often each variable is
selected.  The derivations are in ``docs/theory/bootstrap.md``.

The replicates never copy rows: a resample is a vector of counts, and the
reweighted moments of a whole batch of replicates are one matrix product of
the count matrix with per-row products of the centred data (see
:class:`~jdr_stats._linalg.ReweightedMoments`); ``method="poisson"`` draws
independent row weights instead and accumulates all replicates in one pass
(:mod:`jdr_stats.inference.poisson_bootstrap`).  Dense replicates are
refitted in one batch (:func:`._bounds.batched_dense_estimate`), sparse
ones through :func:`jdr_stats._estimate.estimate`.  The bound on the largest
angle is the percentile bound or the calibrated one (fast double bootstrap,
:mod:`._bounds`); :attr:`BootstrapResults.gap` holds the gap diagnostics.
"""

from __future__ import annotations

import math
import warnings
from contextlib import contextmanager
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pandas as pd
from statsmodels.iolib.summary2 import Summary

from .._progress import ProgressArg, check_n_jobs, check_progress, progress_bar
from .._validation import check_bool, check_choice, check_fraction, check_int, normalize_seed
from .._data import ModelData
from .._estimate import Estimate
from .._estimate import estimate as estimate_from_moments
from .._linalg import (
    ReweightedMoments,
    batched_principal_angles,
    blas_single_thread,
    orthonormal_basis,
)
from .._linalg import BlockMoments
from ..diagnostics import gap_advice
from ..exceptions import SmallSampleWarning, WeakGapWarning
from ..summary import SummaryMixin, build_summary
from ._bounds import batched_dense_estimate, calibrated_level, gap_diagnostics, pair_angles
from .._sources import ArraySource
from .._streamed import MomentsData
from ._metric import covariance_factors, to_metric
from .poisson_bootstrap import poisson_pass, poisson_plan

__all__ = ["bootstrap", "BootstrapResults"]

Method = Literal["pairs", "poisson"]
Interval = Literal["percentile", "calibrated"]

_METHODS = ("pairs", "poisson")
_INTERVALS = ("percentile", "calibrated")
#: Gap rule (see docs/theory/bootstrap.md and the study
#: benchmarks/study_bootstrap_robust.py): the rank-r subspace is flagged as
#: not separated from the noise when the sample ratio s_r / s_(r+1) is below
#: GAP_RATIO_MIN (WeakGapWarning).
GAP_RATIO_MIN = 1.5


#: Bytes of the count matrix, and of the feature sums, of one batch of replicates.
_COUNT_BYTES = 1 << 27


# -- helpers ---------------------------------------------------------------
def _draw_counts(rng: np.random.Generator, nb: int, m: int) -> np.ndarray:
    """Resampling counts of ``nb`` replicates: m draws with replacement each.

    One draw of ``m`` indices per replicate, in order, so the replicates do
    not depend on how they are split into batches.
    """
    counts = np.empty((nb, m))
    for j in range(nb):
        counts[j] = np.bincount(rng.integers(0, m, size=m), minlength=m)
    return counts


def _order_index(n: int, level: float) -> int:
    """0-based index of the ``ceil((n + 1) level)``-th order statistic, clipped."""
    k = math.ceil((n + 1) * level - 1e-9)
    return int(min(max(k, 1), n)) - 1


def _pairs_batches(data: ModelData, n_boot: int, rng: np.random.Generator, inner: bool,
                   parallel: Any = None):
    """Moments of the pairs bootstrap's replicates, batch by batch.

    Yields ``(outer, inner)`` lists of BlockMoments; the inner replicate
    ``b`` resamples the rows of outer replicate ``b`` (counts
    ``Multinomial(m, c_b / m)``), drawn from a generator spawned from
    ``rng`` so that the outer replicates do not depend on ``inner``.  The
    counts are drawn here, in this order, whatever ``n_jobs``; with
    ``parallel`` only the products of :func:`_sums` run in the workers.
    """
    m = data.nobs
    rw = ReweightedMoments(data.endog, data.blocks["exog_a"], data.blocks["exog_b"],
                           data.weights)
    rng_in = rng.spawn(1)[0] if inner else None
    batch = max(1, min(n_boot, _COUNT_BYTES // (8 * m), _COUNT_BYTES // (8 * rw.width)))
    if inner:
        batch = max(1, batch // 2)
    done = 0
    while done < n_boot:
        nb = min(batch, n_boot - done)
        counts = _draw_counts(rng, nb, m)
        if inner:
            counts_in = rng_in.multinomial(m, counts / counts.sum(axis=1, keepdims=True))
            moms = rw.moments(_sums(rw, np.vstack([counts, counts_in.astype(float)]),
                                    parallel))
            yield moms[:nb], moms[nb:]
        else:
            yield rw.moments(_sums(rw, counts, parallel)), None
        done += nb


def _product(dev: np.ndarray, f32: np.ndarray) -> np.ndarray:
    """``dev @ f32`` in a worker process (``dev`` arrives as a copy; the
    product does not depend on the memory layout of its operands)."""
    with blas_single_thread():
        return dev @ f32


def _sums(rw: ReweightedMoments, counts: np.ndarray, parallel: Any) -> np.ndarray:
    """``rw.sums(counts)``, with the single-precision products in joblib workers
    (added back in chunk order: identical bit for bit to the serial sums)."""
    if parallel is None:
        return rw.sums(counts)
    from joblib import delayed

    return rw.sums(
        counts, lambda pairs: parallel(delayed(_product)(d, f32) for d, f32 in pairs)
    )


def _poisson_batches(data: ModelData | MomentsData, n_boot: int, rng: np.random.Generator,
                     inner: bool, parallel: Any = None):
    """Moments of the Poisson bootstrap's replicates: one pass over the rows
    (of the arrays, or of the source a streamed model was built from)."""
    if isinstance(data, MomentsData):
        src = data.source
    else:
        src = ArraySource(data.endog, data.blocks["exog_a"], data.blocks["exog_b"],
                          weights=data.weights)
    out = poisson_pass(poisson_plan(src, n_boot, rng, inner=inner), parallel)
    yield out if inner else (out, None)


def _workers(n_jobs: int | None) -> int:
    """Number of processes joblib will use for ``n_jobs`` (1: in this process)."""
    if n_jobs in (None, 1):
        return 1
    try:
        from joblib import effective_n_jobs
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            f"n_jobs={n_jobs} needs joblib: pip install 'jdr_stats[parallel]'"
        ) from exc
    return max(1, int(effective_n_jobs(n_jobs)))


@contextmanager
def _parallel(n_jobs: int | None):
    """A ``joblib.Parallel`` (results as a generator, in order) for ``n_jobs``
    processes, or None when the work runs in this process.  Large arrays
    passed to the workers are memory-mapped by joblib, not copied."""
    if _workers(n_jobs) == 1:
        yield None
        return
    from joblib import Parallel

    with Parallel(n_jobs=n_jobs, return_as="generator") as parallel:
        yield parallel


def _refit(ctx: dict, mom: BlockMoments) -> Estimate:
    return estimate_from_moments(
        mom, ctx["rank"], standardize=ctx["standardize"], sparsity=ctx["sparsity"],
        names_a=ctx["names_a"], names_b=ctx["names_b"],
    )


def _fit_batch(ctx: dict, moms: list[BlockMoments], errors: list[str]) -> list:
    """Refit a batch: ``(dir_a, dir_b, singular values, rows, cols)`` or None.

    Dense fits go through :func:`batched_dense_estimate` (the same spans
    and singular values as :func:`estimate`, all replicates at once); a
    replicate it cannot fit is refitted alone to get the error message.
    Sparse fits call :func:`estimate` per replicate.
    """
    out: list = [None] * len(moms)
    if ctx["sparsity"] is None:
        da, db, s, ok = batched_dense_estimate(moms, ctx["rank"],
                                               standardize=ctx["standardize"])
        for j in range(len(moms)):
            if ok[j]:
                out[j] = (da[j], db[j], s[j], None, None)
        todo = np.flatnonzero(~ok)
    else:
        todo = range(len(moms))
    for j in todo:
        try:
            e = _refit(ctx, moms[j])
        except ValueError as exc:  # e.g. a resample with collinear columns
            errors.append(str(exc))
            continue
        out[j] = (e.dir_a, e.dir_b, e.singular_values, e.rows, e.cols)
    return out


def _replicates(
    data: ModelData,
    est0: Estimate,
    standardize: bool,
    sparsity: tuple[int, int] | None,
    n_boot: int,
    rng: np.random.Generator,
    method: str,
    inner: bool,
    progress: ProgressArg,
    n_jobs: int | None = None,
):
    """Refit every replicate: angles to the estimate, singular values,
    selections, and (``inner``) the largest angle of each inner replicate to
    its outer replicate."""
    rank = est0.rank
    n1, n2 = len(data.names["exog_a"]), len(data.names["exog_b"])
    ctx = {"rank": rank, "standardize": standardize, "sparsity": sparsity,
           "names_a": data.names["exog_a"], "names_b": data.names["exog_b"]}
    nsv = len(est0.singular_values)
    dir_a = np.full((n_boot, n1, rank), np.nan)
    dir_b = np.full((n_boot, n2, rank), np.nan)
    in_a = np.full((n_boot, n1, rank), np.nan) if inner else None
    in_b = np.full((n_boot, n2, rank), np.nan) if inner else None
    sv = np.full((n_boot, nsv), np.nan)
    sel_a = np.zeros((n_boot, n1), dtype=bool) if sparsity is not None else None
    sel_b = np.zeros((n_boot, n2), dtype=bool) if sparsity is not None else None
    ok = np.zeros(n_boot, dtype=bool)
    ok_in = np.zeros(n_boot, dtype=bool)
    errors: list[str] = []
    done = 0
    with _parallel(n_jobs) as parallel, progress_bar(progress, n_boot, "bootstrap") as update:
        batches = (_pairs_batches if method == "pairs" else _poisson_batches)(
            data, n_boot, rng, inner, parallel
        )
        for outer, inner_moms in batches:
            fits = _fit_batch(ctx, outer, errors)
            fits_in = None if inner_moms is None else _fit_batch(ctx, inner_moms, [])
            for j, e in enumerate(fits):
                b = done + j
                if e is None:
                    continue
                ok[b] = True
                dir_a[b], dir_b[b], s_b = e[0], e[1], e[2]
                sv[b, : len(s_b)] = s_b[:nsv]
                if sel_a is not None:
                    sel_a[b, e[3]] = True
                    sel_b[b, e[4]] = True
                if fits_in is not None and fits_in[j] is not None:
                    ok_in[b] = True
                    in_a[b], in_b[b] = fits_in[j][0], fits_in[j][1]
            done += len(outer)
            update(len(outer))
    n_ok = int(ok.sum())
    if n_ok == 0:
        raise ValueError(
            f"every bootstrap replicate failed to fit; the first error was: {errors[0]}"
        )
    if n_ok < n_boot:
        warnings.warn(
            f"{n_boot - n_ok} of {n_boot} bootstrap replicates could not be fitted "
            f"and were dropped (first error: {errors[0]}); the intervals use the "
            f"other {n_ok}",
            SmallSampleWarning,
            stacklevel=3,
        )
    # Angles in each block's covariance metric (module _metric): unit-free.
    ua, ub = covariance_factors(data)
    ang_a = batched_principal_angles(orthonormal_basis(ua @ est0.dir_a), to_metric(ua, dir_a[ok]))
    ang_b = batched_principal_angles(orthonormal_basis(ub @ est0.dir_b), to_metric(ub, dir_b[ok]))
    inner_angles = None
    if inner:
        both = ok & ok_in
        inner_angles = {}
        for block, d_in, d_out, up in (("a", in_a, dir_a, ua), ("b", in_b, dir_b, ub)):
            t = np.full(n_boot, np.nan)
            if both.any():
                t[both] = pair_angles(to_metric(up, d_in[both]), to_metric(up, d_out[both]))[:, -1]
            inner_angles[block] = t[ok]
    return (
        ang_a, ang_b, sv[ok],
        None if sel_a is None else sel_a[ok],
        None if sel_b is None else sel_b[ok],
        n_ok,
        inner_angles,
    )


# -- the bootstrap -----------------------------------------------------------
def bootstrap(
    data: ModelData | MomentsData,
    estimate: Estimate,
    *,
    standardize: bool,
    sparsity: tuple[int, int] | None,
    n_boot: int = 999,
    seed: int | np.random.Generator | None = None,
    method: Method = "pairs",
    interval: Interval = "percentile",
    alpha: float = 0.05,
    progress: ProgressArg = False,
    n_jobs: int | None = None,
    fit: Any = None,
) -> BootstrapResults:
    """Bootstrap the joint fit: confidence bounds for the estimated subspaces.

    Parameters
    ----------
    data : ModelData or MomentsData
        The validated data of the fit.  A model built from a row source
        (Parquet, CSV, dask; it holds sums only) can be bootstrapped with
        ``method="poisson"``, which reads the source again.
    estimate : Estimate
        The full-sample estimate; every replicate is refitted with its rank.
    standardize : bool
        Whether the fit whitened the blocks.
    sparsity : (s1, s2) or None
        The fit's sparsity.
    n_boot : int
        Number of bootstrap replicates ``B``.
    seed : int, Generator or None
        Seed of the resampling; the same seed gives the same replicates.
    method : {"pairs", "poisson"}
        ``"pairs"``: resample whole rows ``(y_i, a_i, b_i)`` with
        replacement (multinomial counts).  ``"poisson"``: give every row an
        independent weight with mean 1 and variance 1 (Poisson(1) on a
        2**-16 grid), drawn per block of rows, and accumulate all
        replicates' moments in one pass over the rows (fast for large
        ``m``; see :mod:`jdr_stats.inference.poisson_bootstrap`).  The
        model's case weights, if any, multiply the resampling weights.
    interval : {"percentile", "calibrated"}
        How the replicate angles become the bound on the largest angle (see
        Notes); the default of :meth:`BootstrapResults.conf_int`.
        ``"calibrated"`` also draws one inner replicate per replicate
        (twice the refits); only then can ``conf_int`` switch between both.
        The robustness study chose ``"percentile"``: it kept the 95% level
        in every design of the battery (0.956-1.000); the calibrated bound
        is shorter but fell to 0.916-0.920 in three designs (see the theory
        page).
    alpha : float
        Default level of :meth:`BootstrapResults.conf_int` and
        :meth:`BootstrapResults.summary` (``1 - alpha`` confidence).
    progress : bool or callable
        ``True``: a progress bar on standard error (tqdm when installed,
        plain lines otherwise); a callable is called as
        ``progress(done, n_boot)`` after each batch of replicates.
    n_jobs : int or None
        Processes for the refits (joblib; ``None`` or 1: in this process,
        -1: all cores).  This process draws the resampling exactly as a
        serial run (pairs: the count matrices, in order) and reads the rows;
        the workers compute the single-precision products of the reweighted
        sums (nearly all of the work of the sums: a chunk of rows per task;
        Poisson: one block of rows per task, whose weights the worker draws
        from the block's own seed), which are added here in the serial
        order.  The results are therefore identical, bit for bit, for every
        ``n_jobs`` and to a serial run.  The refits stay in this process.
        Memory: one chunk or block of features per running task, no copy
        of the data per replicate.
    fit : JDRResults, optional
        The fit being bootstrapped, kept as :attr:`BootstrapResults.results`
        (``JDRResults.bootstrap`` passes itself).

    Returns
    -------
    BootstrapResults

    Warns
    -----
    WeakGapWarning
        The sample ratio ``s_r / s_(r+1)`` is below ``GAP_RATIO_MIN`` (1.5):
        the r-th direction is not separated from the noise.  In the study
        such samples had a true largest angle above 45 degrees 11-45% of
        the time and a bound of 74-85 degrees on average: still covering,
        but nearly vacuous.

    Notes
    -----
    For replicate ``b`` the rows are reweighted (counts ``c_b``), the
    moments recomputed and the subspaces re-estimated, giving principal
    angles ``theta*_{b,1} <= ... <= theta*_{b,r}`` between the replicate's
    span and the full-sample span of each block.  The bootstrap principle
    treats the law of ``theta*`` (estimate vs. replicate) as the law of
    ``theta`` (truth vs. estimate).  ``"percentile"``: the ``1 - alpha``
    upper bound on the largest angle is the ``ceil((B + 1)(1 - alpha))``-th
    smallest ``theta*_{b,r}``.  ``"calibrated"`` (prepivoting by the fast
    double bootstrap): each replicate is resampled once more, and the angle
    ``theta**_b`` between that inner replicate and replicate ``b`` tells how
    far the bootstrap world's percentile bound is from covering there; the
    bound is the percentile bound at the level ``lam = G**(Q*(1 - alpha))``
    (``G**`` the distribution of the ``theta**``, ``Q*`` the quantile
    function of the ``theta*``).  The coverage study
    (``benchmarks/study_bootstrap_robust.py``) is summarised in the theory
    page ``docs/theory/bootstrap.md``.

    A batch of replicates costs one matrix product of the ``(batch x m)``
    weight matrix with per-row products of the rows centred at the
    full-sample means; each replicate's own means are corrected for
    algebraically, so the moments equal ``model.moments(weights=c_b)``.

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(2000, 5, 4, 2, seed=0)
    >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    >>> boot = res.bootstrap(n_boot=199, seed=1)  # calls bootstrap(data, estimate, ...)
    >>> boot.angles_a.shape
    (199, 2)
    >>> ci = boot.conf_int()
    >>> bool(ci.loc[("a", "largest angle"), "upper"] < 30)
    True
    >>> bool(boot.gap["s_r / s_(r+1)"] > 1.5)
    True
    """
    n_boot = check_int(n_boot, "n_boot", low=1)
    method = check_choice(method, "method", _METHODS)
    interval = check_choice(interval, "interval", _INTERVALS)
    alpha = check_fraction(alpha, "alpha")
    check_progress(progress)
    n_jobs = check_n_jobs(n_jobs)
    if isinstance(data, MomentsData):
        # a model built from sums: only the Poisson bootstrap, which needs one
        # pass over the rows, can run, and only if the source is kept
        if method != "poisson" or data.source is None:
            data.require_rows(
                'the bootstrap (method="pairs" resamples rows; method="poisson" '
                "needs the row source)"
            )
    elif not isinstance(data, ModelData):
        raise TypeError(
            "data must be the ModelData of a fit (JDRResults.model.data; or call "
            f"JDRResults.bootstrap); got {type(data).__name__}"
        )
    if not isinstance(estimate, Estimate):
        raise TypeError(f"estimate must be an Estimate; got {type(estimate).__name__}")
    standardize = check_bool(standardize, "standardize")
    rng = normalize_seed(seed)
    inner = interval == "calibrated"
    ang_a, ang_b, sv, sel_a, sel_b, n_ok, inner_angles = _replicates(
        data, estimate, standardize, sparsity, n_boot, rng, method, inner, progress, n_jobs
    )
    boot = BootstrapResults(
        data,
        estimate,
        standardize=standardize,
        sparsity=sparsity,
        fit=fit,
        angles_a=ang_a,
        angles_b=ang_b,
        singular_values=sv,
        selected_a=sel_a,
        selected_b=sel_b,
        n_failed=n_boot - n_ok,
        method=method,
        interval=interval,
        alpha=alpha,
        inner_angles=inner_angles,
    )
    gap = boot.gap
    if not gap["trusted"]:
        warnings.warn(
            f"weak gap: s_r / s_(r+1) = {gap['s_r / s_(r+1)']:.2f} < {GAP_RATIO_MIN} "
            f"(r = {estimate.rank}); directions {estimate.rank} and {estimate.rank + 1} are "
            "not separated, so the rank-r subspace is poorly determined and the bound on "
            "the largest angle is close to 90 degrees (see BootstrapResults.gap); "
            + gap_advice(estimate.singular_values, estimate.rank, GAP_RATIO_MIN),
            WeakGapWarning,
            stacklevel=2,
        )
    return boot


class BootstrapResults(SummaryMixin):
    """Bootstrap replicates of a joint fit and the intervals built from them.

    Read-only; built by :func:`bootstrap` (``JDRResults.bootstrap``).  All
    angles are in degrees.  The replicate arrays hold only the replicates
    that could be fitted (``n_boot`` of them).
    """

    def __init__(
        self,
        data: ModelData,
        estimate: Estimate,
        *,
        standardize: bool,
        sparsity: tuple[int, int] | None,
        fit: Any,
        angles_a: np.ndarray,
        angles_b: np.ndarray,
        singular_values: np.ndarray,
        selected_a: np.ndarray | None,
        selected_b: np.ndarray | None,
        n_failed: int,
        method: str,
        interval: str,
        alpha: float,
        inner_angles: dict[str, np.ndarray] | None = None,
    ) -> None:
        self._data = data
        self._est = estimate
        self._standardize = standardize
        self._sparsity = sparsity
        self._results = fit
        self._angles = {"a": angles_a, "b": angles_b}
        self._sv = singular_values
        self._selected = {"a": selected_a, "b": selected_b}
        self._n_failed = int(n_failed)
        self._method = method
        self._interval = interval
        self._alpha = alpha
        self._inner = inner_angles

    # -- basic attributes -------------------------------------------------
    @property
    def results(self) -> Any:
        """The bootstrapped fit (``JDRResults``; None when :func:`bootstrap`
        was called without ``fit``)."""
        return self._results

    @property
    def n_boot(self) -> int:
        """Number of replicates used (fitted successfully)."""
        return int(self._sv.shape[0])

    @property
    def n_failed(self) -> int:
        """Replicates that could not be fitted (e.g. collinear resample)."""
        return self._n_failed

    @property
    def method(self) -> str:
        return self._method

    @property
    def interval(self) -> str:
        """Default interval type of :meth:`conf_int`."""
        return self._interval

    @property
    def alpha(self) -> float:
        """Default level of :meth:`conf_int` and :meth:`summary`."""
        return self._alpha

    @property
    def rank(self) -> int:
        return self._est.rank

    @property
    def angles_a(self) -> np.ndarray:
        """Principal angles (degrees, ascending), replicate vs. estimate, block a.

        Shape ``(n_boot, rank)``; the last column is the largest angle.
        """
        return np.degrees(self._angles["a"])

    @property
    def angles_b(self) -> np.ndarray:
        """Principal angles (degrees, ascending), replicate vs. estimate, block b."""
        return np.degrees(self._angles["b"])

    @property
    def singular_values(self) -> np.ndarray:
        """Singular values of every replicate, shape ``(n_boot, k)``, descending."""
        return self._sv.copy()

    @property
    def selected_a(self) -> np.ndarray | None:
        """Boolean ``(n_boot, n1)``: variables of block a each replicate selected
        (sparse fits; ``None`` for a dense fit)."""
        s = self._selected["a"]
        return None if s is None else s.copy()

    @property
    def selected_b(self) -> np.ndarray | None:
        """Boolean ``(n_boot, n2)``: variables of block b selected (sparse fits)."""
        s = self._selected["b"]
        return None if s is None else s.copy()

    def _frequency(self, block: str) -> pd.Series | None:
        s = self._selected[block]
        if s is None:
            return None
        names = self._data.names["exog_a" if block == "a" else "exog_b"]
        return pd.Series(s.mean(axis=0), index=pd.Index(names), name="selection frequency")

    @cached_property
    def selection_frequency_a(self) -> pd.Series | None:
        """Share of replicates selecting each variable of block a (sparse fits)."""
        return self._frequency("a")

    @cached_property
    def selection_frequency_b(self) -> pd.Series | None:
        """Share of replicates selecting each variable of block b (sparse fits)."""
        return self._frequency("b")

    @cached_property
    def gap(self) -> pd.Series:
        """Gap diagnostics of the rank-r subspace.

        ``s_r / s_(r+1)``: ratio of the sample's r-th and (r+1)-th singular
        values (``inf`` when r is the last); ``crossing share``: share of
        replicates whose r-th singular value is below the sample's
        (r+1)-th (how often the replicates swap the r-th direction with a
        noise direction); ``median largest angle a`` / ``b`` (degrees): the
        spread of the replicate subspaces; ``trusted``: the gap rule,
        ``s_r / s_(r+1) >= GAP_RATIO_MIN`` (see the theory page).
        """
        d = gap_diagnostics(self._est.singular_values, self._sv, self.rank)
        return pd.Series(
            {
                "s_r / s_(r+1)": d["ratio"],
                "crossing share": d["crossing"],
                "median largest angle a": float(np.degrees(np.median(self._angles["a"][:, -1]))),
                "median largest angle b": float(np.degrees(np.median(self._angles["b"][:, -1]))),
                "share above 45 deg a": float(np.mean(self._angles["a"][:, -1] > np.pi / 4)),
                "share above 45 deg b": float(np.mean(self._angles["b"][:, -1] > np.pi / 4)),
                "trusted": bool(d["ratio"] >= GAP_RATIO_MIN),
            },
            name="gap diagnostics",
            dtype=object,
        )

    # -- intervals --------------------------------------------------------
    def _levels(self, alpha: float | None, interval: str | None) -> tuple[float, str]:
        alpha = self._alpha if alpha is None else check_fraction(alpha, "alpha")
        interval = (self._interval if interval is None
                    else check_choice(interval, "interval", _INTERVALS))
        if (self.n_boot + 1) * alpha / 2 < 1:
            raise ValueError(
                f"alpha={alpha} needs at least {math.ceil(2 / alpha) - 1} replicates "
                f"for two-sided intervals; got n_boot={self.n_boot}"
            )
        if interval == "calibrated" and self._inner is None:
            raise ValueError(
                'interval="calibrated" needs the inner replicates; run bootstrap(..., '
                'interval="calibrated")'
            )
        return alpha, interval

    def _bound_level(self, block: str, alpha: float, interval: str) -> float:
        """Level of the order statistic that is the bound on the largest angle."""
        if interval == "percentile":
            return 1 - alpha
        inner = self._inner[block]
        ok = ~np.isnan(inner)
        return calibrated_level(self._angles[block][ok, -1], inner[ok], 1 - alpha)

    def calibrated_levels(self, alpha: float | None = None) -> pd.Series:
        """Levels ``lam`` at which the calibrated bound takes the percentile
        of the replicate angles (``1 - alpha`` would be the percentile bound)."""
        alpha, _ = self._levels(alpha, "calibrated")
        return pd.Series(
            {b: self._bound_level(b, alpha, "calibrated") for b in ("a", "b")},
            name="calibrated level",
        )

    def max_angle_bound(
        self, alpha: float | None = None, *, interval: Interval | None = None
    ) -> pd.Series:
        """Upper ``1 - alpha`` confidence bound (degrees) on the largest
        principal angle between the true and the estimated subspace, per block."""
        alpha, interval = self._levels(alpha, interval)
        out = {}
        for block in ("a", "b"):
            t = np.sort(self._angles[block][:, -1])
            level = self._bound_level(block, alpha, interval)
            out[block] = float(np.degrees(t[_order_index(t.size, level)]))
        return pd.Series(out, name="max angle bound (deg)")

    def conf_int(
        self, alpha: float | None = None, *, interval: Interval | None = None
    ) -> pd.DataFrame:
        """Confidence bounds for the subspaces and the singular values.

        Parameters
        ----------
        alpha : float, optional
            ``1 - alpha`` confidence; the bootstrap's ``alpha`` by default.
        interval : {"percentile", "calibrated"}, optional
            Type of the bound on the largest angle; the bootstrap's by
            default.

        Returns
        -------
        DataFrame
            Rows ``(block, parameter)``, columns ``lower``, ``upper``:

            - ``("a", "largest angle")``: one-sided bound: with confidence
              ``1 - alpha`` the largest principal angle between the true and
              the estimated a-subspace is below ``upper`` (degrees);
              ``lower`` is 0.
            - ``("a", "angle k")``: two-sided interval for the k-th smallest
              principal angle (degrees);
            - the same for block ``"b"``;
            - ``("singular value", "s_k")``, ``k <= rank``: two-sided
              basic bootstrap intervals for the population singular values.

        Notes
        -----
        With ``t_(1) <= ... <= t_(B)`` the sorted replicate values, the bound
        on the largest angle is ``t_(k)``, ``k = ceil((B + 1) lam)``, with
        ``lam = 1 - alpha`` (percentile) or the calibrated level;
        the two-sided angle intervals are ``[t_(l), t_(h)]`` with
        ``l = ceil((B + 1) alpha / 2)``, ``h = ceil((B + 1)(1 - alpha / 2))``.
        The singular value intervals are ``[2 s_hat - t_(h), 2 s_hat - t_(l)]``
        (basic bootstrap): the sample singular values are biased (upwards
        for the largest), and this interval removes the bootstrap estimate of
        that bias, where the percentile interval would double it.
        """
        alpha, interval = self._levels(alpha, interval)
        bound = self.max_angle_bound(alpha, interval=interval)
        idx, rows = [], []
        for block in ("a", "b"):
            ang = np.sort(np.degrees(self._angles[block]), axis=0)
            b = ang.shape[0]
            idx.append((block, "largest angle"))
            rows.append((0.0, bound[block]))
            lo, hi = _order_index(b, alpha / 2), _order_index(b, 1 - alpha / 2)
            for k in range(self.rank):
                idx.append((block, f"angle {k + 1}"))
                rows.append((ang[lo, k], ang[hi, k]))
        sv = np.sort(self._sv[:, : self.rank], axis=0)
        s_hat = self._est.singular_values[: self.rank]
        b = sv.shape[0]
        lo, hi = _order_index(b, alpha / 2), _order_index(b, 1 - alpha / 2)
        for k in range(self.rank):
            idx.append(("singular value", f"s{k + 1}"))
            # basic interval: the bootstrap estimate of the bias is removed
            rows.append((2 * s_hat[k] - sv[hi, k], 2 * s_hat[k] - sv[lo, k]))
        return pd.DataFrame(
            rows,
            index=pd.MultiIndex.from_tuples(idx, names=["block", "parameter"]),
            columns=["lower", "upper"],
        )

    def sentence(self, block: Literal["a", "b"], alpha: float | None = None) -> str:
        """The bound on the largest angle of ``block`` as a plain sentence."""
        check_choice(block, "block", ("a", "b"))
        alpha, _ = self._levels(alpha, None)
        bound = self.max_angle_bound(alpha)[block]
        text = (
            f"With {100 * (1 - alpha):g}% confidence the true {block}-subspace lies "
            f"within {bound:.1f} degrees of the estimate (largest principal angle)."
        )
        gap = self.gap
        if not gap["trusted"]:
            text += (
                f" Weak gap: s_r / s_(r+1) = {gap['s_r / s_(r+1)']:.2f} is below "
                f"{GAP_RATIO_MIN}, so directions {self.rank} and {self.rank + 1} are not "
                "separated and the subspace is poorly determined."
            )
        return text

    def summary(self) -> Summary:
        """A statsmodels ``Summary``: a table per block, the singular values,
        selection frequencies (sparse fits) and the bounds in words."""
        alpha = self._alpha
        ci = self.conf_int()
        level = f"{100 * (1 - alpha):g}%"
        info = {
            "Method:": f"{self._method} bootstrap",
            "Interval:": self._interval,
            "Gap s_r / s_(r+1):": f"{float(self.gap['s_r / s_(r+1)']):.3g}",
            "Gap crossing share:": f"{float(self.gap['crossing share']):.3f}",
            "Replicates:": self.n_boot,
            "Failed replicates:": self._n_failed,
            "Confidence level:": level,
            "Rank:": self.rank,
            "Standardize:": self._standardize,
            "Sparsity (s1, s2):": "none (dense)" if self._sparsity is None else self._sparsity,
        }
        tables = []
        for block in ("a", "b"):
            ang = self._angles[block]
            med = np.degrees(np.median(ang, axis=0))
            sub = ci.loc[block]
            table = pd.DataFrame(
                {
                    "median (deg)": [*med, med[-1]],
                    "lower (deg)": [*sub["lower"].iloc[1:], 0.0],
                    "upper (deg)": [*sub["upper"].iloc[1:], sub["upper"].iloc[0]],
                },
                index=[f"angle {k + 1}" for k in range(ang.shape[1])] + ["largest (one-sided)"],
            )
            tables.append((f"block {block}", table))
        s_hat = self._est.singular_values[: self.rank]
        sub = ci.loc["singular value"]
        tables.append(
            (
                "singular value",
                pd.DataFrame(
                    {
                        "estimate": s_hat,
                        "boot mean": self._sv[:, : self.rank].mean(axis=0),
                        "lower": sub["lower"].to_numpy(),
                        "upper": sub["upper"].to_numpy(),
                    },
                    index=sub.index,
                ),
            )
        )
        if self._selected["a"] is not None:
            for block, freq in (("a", self.selection_frequency_a), ("b", self.selection_frequency_b)):
                tables.append((f"selection {block}", freq.to_frame()))
        notes = [self.sentence("a"), self.sentence("b")]
        notes.append(
            "Angles: principal angles between the replicate's and the full-sample "
            "subspace in each block's covariance metric (their cosines are the "
            "canonical correlations between the two fits' reduced features, so they "
            "do not depend on the units or any invertible recoding of a block's "
            "variables); the bound on the largest one is the "
            f"{level} upper bound for the angle between the true and the estimated "
            "subspace. Lower/upper: two-sided intervals (percentile for the "
            "angles, basic bootstrap for the singular values)."
        )
        if self._interval == "calibrated":
            lam = self.calibrated_levels()
            notes.append(
                "Calibrated (fast double bootstrap): the bound is the replicate "
                f"quantile at level a={lam['a']:.3f}, b={lam['b']:.3f} instead of "
                f"{1 - alpha:g}."
            )
        if not self.gap["trusted"]:
            notes.append(
                f"WARNING (weak gap): s_r / s_(r+1) = {float(self.gap['s_r / s_(r+1)']):.2f} "
                f"< {GAP_RATIO_MIN}: directions {self.rank} and {self.rank + 1} are not separated; "
                "the rank-r subspace is poorly determined and its bound is close to 90 "
                "degrees; " + gap_advice(self._est.singular_values, self.rank, GAP_RATIO_MIN)
                + "."
            )
        return build_summary("Bootstrap of the joint dimension reduction", info, tables, notes)
