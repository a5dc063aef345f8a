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
:class:`~jdr_stats.core._reweighted.ReweightedMoments`); ``method="poisson"`` draws
independent row weights instead and accumulates all replicates in one pass
(:mod:`jdr_stats.inference.poisson_bootstrap`).  Dense replicates are
refitted in one batch (:func:`._bounds.batched_dense_estimate`), sparse
ones through :func:`jdr_stats.estimation._estimate.estimate`.  The bound on the largest
angle is the percentile bound or the calibrated one (fast double bootstrap,
:mod:`._bounds`); :attr:`BootstrapResults.gap` holds the gap diagnostics.

This module checks the arguments; the replicate engine is
:mod:`._replicates` (its resampling drawn by :mod:`jdr_stats.resampling._engine`)
and the results class :mod:`._boot_results`.
"""

from __future__ import annotations

import warnings
from typing import Literal

import numpy as np

from .. import config
from ..diagnostics import gap_advice
from ..estimation._estimate import Estimate
from ..exceptions import RowsNotInMemoryError, WeakGapWarning
from ..io._data import RowsData
from ..resampling._progress import ProgressArg, check_n_jobs, check_progress
from ..runtime._validation import (
    check_bool,
    check_choice,
    check_fraction,
    check_int,
    check_memory,
    normalize_seed,
)
from ..whitenings import WHITENING_METHODS
from ._boot_results import (
    GAP_RATIO_MIN,
    INTERVALS,
    BootstrappedFit,
    BootstrapResults,
    Interval,
)
from ._replicates import replicates, store_bytes

__all__ = ["GAP_RATIO_MIN", "BootstrapResults", "bootstrap"]

Method = Literal["pairs", "poisson"]

_METHODS: tuple[Method, ...] = ("pairs", "poisson")


def _require_data(data: RowsData, method: str, multi: bool) -> None:
    """Return when ``method`` can run on ``data``, else raise
    :class:`RowsNotInMemoryError` naming the method and what works there.

    The method is the caller's (``"pairs"`` unless asked otherwise, however
    the rows are stored) and is never switched: the Poisson bootstrap runs on
    rows in memory and on a row source, with the same replicates for the same
    seed; the pairs bootstrap (and any bootstrap of a ``q > 1`` response)
    needs the rows in memory.
    """
    if method == "poisson" and not multi:  # one pass over the rows, wherever they are
        data.require_source('the bootstrap (method="poisson")')
        return
    what = (f'the bootstrap of a response with several columns (method="{method}": '
            "it reweights the rows in memory)" if multi else
            'the bootstrap (method="pairs": it resamples whole rows)')
    try:
        data.rows(what)
    except RowsNotInMemoryError as exc:
        origin = getattr(data, "origin", None)
        held = (f"this model was built from {origin} and holds only its sums" if origin
                else "this model's rows were removed (remove_data())")
        if getattr(data, "source", None) is not None and not multi:
            works = ('bootstrap(method="poisson") reads that source again and gives the '
                     "same replicates and bounds as the rows in memory for the same seed")
        else:
            works = "no bootstrap runs on it"
        raise RowsNotInMemoryError(
            f"{what} needs the rows of the data in memory, but {held}; {works}. For the "
            f'{method} bootstrap build the model from the rows: '
            "jdr.JointDimReduction(y, a, b) (the method is never switched for you: "
            "the pairs and Poisson bootstraps give different numbers)"
        ) from exc


# -- the bootstrap -----------------------------------------------------------
def bootstrap(
    data: RowsData,
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
    fit: BootstrappedFit | None = None,
    whitening: str | None = None,
    whitening_maps: object | None = None,
) -> BootstrapResults:
    """Bootstrap the joint fit: confidence bounds for the estimated subspaces.

    Parameters
    ----------
    data : ModelData or another RowsData
        The validated data of the fit.  A model built from a row source
        (Parquet, CSV, dask; it holds sums only) can be bootstrapped with
        ``method="poisson"``, which reads the source again: the same seed
        gives the same replicates and bounds as the rows in memory (up to
        rounding).  ``method="pairs"`` there raises
        :class:`~jdr_stats.exceptions.RowsNotInMemoryError`; the method is
        never switched.
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
        ``"pairs"`` (the default wherever the rows are stored): resample
        whole rows ``(y_i, a_i, b_i)`` with replacement (multinomial
        counts); needs the rows in memory.  ``"poisson"``: give every row an
        independent weight with mean 1 and variance 1 (Poisson(1) on a
        2**-16 grid), drawn per block of ``policy.BLOCK_ROWS`` rows from
        the row's index, and accumulate all replicates' moments in one pass
        over the rows in double precision (fast for large ``m``; runs on
        rows in memory and on a row source with the same numbers; see
        :mod:`jdr_stats.inference.poisson_bootstrap`).  The model's case
        weights, if any, multiply the resampling weights.  A response with
        several columns is bootstrapped in memory only (either method).
    interval : {"percentile", "calibrated"}
        How the replicate angles become the bound on the largest angle (see
        Notes); the default of :meth:`BootstrapResults.conf_int`.
        ``"calibrated"`` also draws one inner replicate per replicate
        (twice the refits); only then can ``conf_int`` switch between both.
        ``"percentile"`` is the default because it kept its level on every
        design of the robustness battery, where the shorter calibrated
        bound did not (study: ``studies/study_bootstrap_robust.py``).
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
        the workers compute the products of the reweighted sums (nearly all
        of the work of the sums: pairs, a chunk of rows per task, in single
        precision; Poisson: one block of rows per task, whose weights the
        worker draws from the block's own seed, in double precision), which
        are added here in the serial order.  The results are therefore
        identical, bit for bit, for every ``n_jobs`` and to a serial run.
        The refits stay in this process.  Memory: one chunk or block of
        features per running task, no copy of the data per replicate.
    fit : JDRResults, optional
        The fit being bootstrapped, kept as :attr:`BootstrapResults.results`
        (``JDRResults.bootstrap`` passes itself).
    whitening : str, optional
        The fit's whitening, a key of
        :data:`jdr_stats.whitenings.WHITENING_METHODS` (default: ``"sample"``
        if ``standardize`` else ``"none"``); every replicate re-estimates it
        from its own moments (the OAS intensity included), so the replicates
        vary as the fit does.
    whitening_maps : DesignWhitening, optional
        The fit's block whitenings (``JDRResults.bootstrap`` passes them).
        After a ``"shrinkage"`` or ``"diagonal"`` whitening the angles are
        measured in the fit's regularised covariance, which stays positive
        definite when a block has as many columns as rows or more; otherwise
        in the sample covariance, and a singular one (``whitening="none"``
        at ``n >= m``) raises a ``ValueError`` before the first replicate.

    Returns
    -------
    BootstrapResults

    Warns
    -----
    WeakGapWarning
        The sample ratio ``s_r / s_(r+1)`` is below ``GAP_RATIO_MIN`` (1.5):
        the r-th direction is not separated from the noise: the bound still
        covers but is nearly vacuous (study:
        ``studies/study_bootstrap_robust.py``).

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
    function of the ``theta*``).  Derivation: ``docs/theory/bootstrap.md``;
    coverage study: ``studies/study_bootstrap_robust.py``.

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
    interval = check_choice(interval, "interval", INTERVALS)
    alpha = check_fraction(alpha, "alpha")
    check_progress(progress)
    n_jobs = check_n_jobs(n_jobs)
    if not isinstance(data, RowsData):
        raise TypeError(
            "data must be the ModelData of a fit (JDRResults.model.data; or call "
            f"JDRResults.bootstrap); got {type(data).__name__}"
        )
    if not isinstance(estimate, Estimate):
        raise TypeError(f"estimate must be an Estimate; got {type(estimate).__name__}")
    _require_data(data, method, estimate.coef_tensor is not None)
    standardize = check_bool(standardize, "standardize")
    if whitening is not None:  # the fit's whitening, re-estimated in every replicate
        whitening = check_choice(whitening, "whitening", tuple(WHITENING_METHODS))
    rng = normalize_seed(seed)
    inner = interval == "calibrated"
    n1, n2 = len(data.names["exog_a"]), len(data.names["exog_b"])
    check_memory(
        store_bytes(n_boot, n1, n2, estimate.rank, len(estimate.singular_values),
                    sparsity is not None, inner),
        config.memory_limit(), "n_boot", n_boot, "the bootstrap's replicates",
    )
    reps = replicates(
        data, estimate, standardize, sparsity, n_boot, rng, method, inner, progress, n_jobs,
        whitening=whitening, maps=whitening_maps,
        moments=None if fit is None else fit.moments,
    )
    boot = BootstrapResults(
        data,
        estimate,
        standardize=standardize,
        sparsity=sparsity,
        fit=fit,
        angles_a=reps.angles_a,
        angles_b=reps.angles_b,
        singular_values=reps.singular_values,
        selected_a=reps.selected_a,
        selected_b=reps.selected_b,
        n_failed=n_boot - reps.n_ok,
        method=method,
        interval=interval,
        alpha=alpha,
        inner_angles=reps.inner_angles,
        directions=reps.directions,
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
