"""The bootstrap's replicate engine: resample, refit, measure.

:func:`replicates` draws the resampling through the resampling engine
(:mod:`jdr_stats.resampling._engine`: pairs counts or Poisson weights), forms the
moments of a batch of replicates (pairs: one product of the count matrix
with per-row features, :class:`~jdr_stats.core._reweighted.ReweightedMoments`;
Poisson: one pass over the rows, :mod:`.poisson_bootstrap`), refits them
(dense: all at once, :func:`._bounds.batched_dense_estimate`; sparse: one by
one) and measures the principal angles of each replicate's subspaces to the
full-sample ones.  It knows nothing of intervals: :mod:`.bootstrap` and
:mod:`._boot_results` turn the replicates into bounds.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from .. import config
from ..core._linalg import (
    BlockMoments,
    ReweightedMoments,
    batched_principal_angles,
    blas_single_thread,
    orthonormal_basis,
    unit_columns,
)
from ..estimation._estimate import Estimate, block_whitening_pair
from ..estimation._estimate import estimate as estimate_from_moments
from ..exceptions import SmallSampleWarning
from ..io._data import RowsData
from ..resampling._engine import draw_counts, inner_counts, worker_pool
from ..resampling._progress import ProgressArg, progress_bar
from ..runtime._frequency import observations
from ..streams._sources import ArraySource
from ..whitenings import WHITENING_METHODS
from ._bounds import batched_dense_estimate, pair_angles
from ._metric import covariance_factors, to_metric
from ._wide_replicates import DirectMoments
from .poisson_bootstrap import poisson_pass, poisson_plan

__all__ = ["Replicates", "replicates"]


def _pairs_batches(data: RowsData, n_boot: int, rng: np.random.Generator, inner: bool,
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
    y, a, b, w0 = data.rows("the bootstrap", weights=True)
    rw: ReweightedMoments | DirectMoments
    if w0 is None and a.shape[1] + b.shape[1] >= config.BOOT_DIRECT_WIDTH:
        rw = DirectMoments(y, a, b)  # wide blocks: no m x width features
    else:
        rw = ReweightedMoments(y, a, b, w0)
    rng_in = rng.spawn(1)[0] if inner else None
    count_bytes = config.COUNT_BYTES
    # the feature sums (batch x width) may take BOOT_SUMS_BYTES: wide blocks
    # then form their m x width features fewer times (once per batch)
    # doubles held per replicate of a batch: its feature sums, or its moments
    width = rw.width if isinstance(rw, ReweightedMoments) else rw.n1 * (rw.n1 + rw.n2) + rw.n2**2
    batch = max(1, min(n_boot, count_bytes // (8 * m),
                       max(count_bytes, config.BOOT_SUMS_BYTES) // (8 * width)))
    if inner:
        batch = max(1, batch // 2)
    done = 0
    while done < n_boot:
        nb = min(batch, n_boot - done)
        counts = draw_counts(rng, nb, m)
        if inner:
            assert rng_in is not None
            counts_in = inner_counts(rng_in, counts)
            moms = _replicate_moments(rw, np.vstack([counts, counts_in]), parallel)
            yield moms[:nb], moms[nb:]
        else:
            yield _replicate_moments(rw, counts, parallel), None
        done += nb


def _product(dev: np.ndarray, f: np.ndarray) -> np.ndarray:
    """``dev @ f`` in a worker process (``dev`` arrives as a copy; the
    product does not depend on the memory layout of its operands)."""
    with blas_single_thread():
        return dev @ f


def _replicate_moments(rw: ReweightedMoments | DirectMoments, counts: np.ndarray,
                       parallel: Any) -> list[BlockMoments]:
    if isinstance(rw, DirectMoments):
        return rw.moments(counts)
    return rw.moments(_sums(rw, counts, parallel))


def _sums(rw: ReweightedMoments, counts: np.ndarray, parallel: Any) -> np.ndarray:
    """``rw.sums(counts)``, with the products of the deviations in joblib workers
    (added back in chunk order: identical bit for bit to the serial sums)."""
    if parallel is None:
        return rw.sums(counts)
    from joblib import delayed

    return rw.sums(
        counts, lambda pairs: parallel(delayed(_product)(d, f) for d, f in pairs)
    )


def _poisson_batches(data: RowsData, n_boot: int, rng: np.random.Generator,
                     inner: bool, parallel: Any = None):
    """Moments of the Poisson bootstrap's replicates: one pass over the rows
    (of the arrays, or of the source a streamed model was built from)."""
    src = data.source
    if src is None:
        y, a, b, w = data.rows("the Poisson bootstrap", weights=True)
        src = ArraySource(y, a, b, weights=w)
    out = poisson_pass(poisson_plan(src, n_boot, rng, inner=inner), parallel)
    yield out if inner else (out, None)


def _joint_design(data: RowsData) -> Any:
    """The object that re-estimates the joint estimator's whitening in
    each Poisson replicate (``stacked_design``, ``replicate_moments``): the
    in-memory residual rows, or the residualising row source of a streamed
    model; None for every other estimator."""
    for obj in (data, getattr(data, "source", None)):
        if callable(getattr(obj, "stacked_design", None)):
            return obj
    return None


def _joint_poisson_batches(data: RowsData, n_boot: int, rng: np.random.Generator,
                           inner: bool, parallel: Any = None):
    """The Poisson bootstrap of the joint estimator, streamed: one pass over
    the model's own rows (in memory or a row source) with the design stacked
    (``x = (a, b)``), so every replicate holds its reweighted covariance of
    the whole design and y-weighted co-moment ``S`` (the within-block parts
    included) and re-residualises from them (the whitening across blocks
    re-estimated, as the pairs bootstrap does row by row).  The weights are
    drawn per block of rows, so rows in memory and every row source give
    the same replicates."""
    joint = _joint_design(data)
    out: Any = poisson_pass(poisson_plan(joint.stacked_design(), n_boot, rng, inner=inner),
                            parallel)

    def residual(moms: list[BlockMoments]) -> list[BlockMoments | _Failed]:
        res: list[BlockMoments | _Failed] = []
        for mom in moms:
            try:
                res.append(joint.replicate_moments(mom))
            except ValueError as exc:
                res.append(_Failed(str(exc)))
        return res

    if inner:
        outer, inner_moms = out
        yield residual(outer), residual(inner_moms)
    else:
        yield residual(out), None


def _q_batches(data: RowsData, n_boot: int, rng: np.random.Generator, inner: bool,
               method: str):
    """Replicate moments from ``data.moments`` of each replicate's counts
    (pairs) or Poisson(1) weights: for a ``q > 1`` response (the response
    whitening and any covariate adjustment held at their full-sample values)
    and for the joint estimator's rows (each replicate re-estimates the
    blocks' residuals on each other)."""
    m = data.nobs
    rng_in = rng.spawn(1)[0] if inner else None
    batch = max(1, min(n_boot, config.COUNT_BYTES // (8 * m)))
    done = 0
    while done < n_boot:
        nb = min(batch, n_boot - done)
        if method == "pairs":
            counts = draw_counts(rng, nb, m).astype(float)
        else:
            counts = rng.poisson(1.0, size=(nb, m)).astype(float)
        outer = [_moments_or_failure(data, c) for c in counts]
        inner_moms = None
        if rng_in is not None:
            counts_in = inner_counts(rng_in, counts)
            inner_moms = [_moments_or_failure(data, c) for c in counts_in]
        yield outer, inner_moms
        done += nb


@dataclass(frozen=True)
class _Failed:
    """A replicate whose moments could not be formed (the message says why:
    e.g. a column constant in the resample, which the joint estimator's
    residuals meet before the refit)."""

    message: str


def _moments_or_failure(data: RowsData, counts: np.ndarray) -> BlockMoments | _Failed:
    try:
        return data.moments(counts)
    except ValueError as exc:
        return _Failed(str(exc))


def _rebuilds_whitening(ctx: dict) -> bool:
    """Whether every replicate rebuilds the fit's whitening from its own
    moments (one the estimator does not build itself: the registry's
    ``built_by_estimator``)."""
    kind = ctx.get("whitening")
    return kind is not None and not WHITENING_METHODS[kind].built_by_estimator


def _refit(ctx: dict, mom: BlockMoments) -> Estimate:
    pair = None  # a regularised whitening is re-estimated from the replicate's moments
    if _rebuilds_whitening(ctx):
        pair = block_whitening_pair(ctx["whitening"], mom, ctx["names_a"], ctx["names_b"],
                                    count=ctx.get("count"))
    return estimate_from_moments(
        mom, ctx["rank"], standardize=ctx["standardize"], sparsity=ctx["sparsity"],
        names_a=ctx["names_a"], names_b=ctx["names_b"], whitening=pair,
    )


def _fit_batch(ctx: dict, moms: list[BlockMoments], errors: list[str]) -> list:
    """Refit a batch: ``(dir_a, dir_b, singular values, rows, cols)`` or None.

    Dense fits go through :func:`batched_dense_estimate` (the same spans
    and singular values as :func:`estimate`, all replicates at once); a
    replicate it cannot fit is refitted alone to get the error message.
    Sparse fits call :func:`estimate` per replicate.
    """
    scales = ctx.get("scales")
    if scales is not None:  # every replicate in the scaled columns' coordinates
        moms = [mom if isinstance(mom, _Failed) else replace(mom, scale_a=None, scale_b=None)
                for mom in moms]
    out: list = [None] * len(moms)
    good = [j for j, mom in enumerate(moms) if not isinstance(mom, _Failed)]
    errors.extend(mom.message for mom in moms if isinstance(mom, _Failed))
    todo: Any
    if (ctx["sparsity"] is None and good and moms[good[0]].cross_q is None
            and not _rebuilds_whitening(ctx)):
        da, db, s, ok = batched_dense_estimate([moms[j] for j in good], ctx["rank"],
                                               standardize=ctx["standardize"])
        for i, j in enumerate(good):
            if ok[i]:
                out[j] = (da[i], db[i], s[i], None, None)
        todo = [good[i] for i in np.flatnonzero(~ok)]
    else:
        todo = good
    for j in todo:
        try:
            e = _refit(ctx, moms[j])
        except ValueError as exc:  # e.g. a resample with collinear columns
            errors.append(str(exc))
            continue
        out[j] = (e.dir_a, e.dir_b, e.singular_values, e.rows, e.cols)
    if scales is not None:  # the directions in the user's units, as the estimate's
        out = [None if e is None else (unit_columns(e[0] * scales[0][:, None]),
                                       unit_columns(e[1] * scales[1][:, None]), *e[2:])
               for e in out]
    return out


def _column_scales(data: RowsData, moments: BlockMoments | None
                   ) -> tuple[np.ndarray, np.ndarray] | None:
    """The power-of-two column scales of a fit of extreme units (its
    moments', or its data's), each block's; None at unit scale."""
    if moments is not None and (moments.scale_a is not None or moments.scale_b is not None):
        n1, n2 = moments.mean_a.shape[0], moments.mean_b.shape[0]
        return (np.ones(n1) if moments.scale_a is None else moments.scale_a,
                np.ones(n2) if moments.scale_b is None else moments.scale_b)
    given = getattr(data, "scales", None)  # the per-block estimator's scaled rows
    if given:
        return given[0], given[1]
    jw = getattr(data, "whitening", None)  # the joint estimator's residual rows
    scale = getattr(jw, "scale", None)
    if scale is not None:
        n1 = len(data.names["exog_a"])
        return scale[:n1], scale[n1:]
    return None


@dataclass(frozen=True)
class Replicates:
    """What :func:`replicates` measured, for the replicates that could be fitted.

    Angles in radians, ascending per replicate, shape ``(n_ok, rank)``;
    ``singular_values`` ``(n_ok, k)``; ``selected_*`` boolean ``(n_ok, n)``
    (sparse fits, else None); ``inner_angles``: per block, the largest
    angle of each inner replicate to its outer one (NaN where the inner
    refit failed; None without inner replicates); ``directions``: per block,
    the replicates' directions ``(n_ok, n, rank)`` (original coordinates).
    """

    angles_a: np.ndarray
    angles_b: np.ndarray
    singular_values: np.ndarray
    selected_a: np.ndarray | None
    selected_b: np.ndarray | None
    n_ok: int
    inner_angles: dict[str, np.ndarray] | None
    directions: dict[str, np.ndarray] | None = None


def store_bytes(n_boot: int, n1: int, n2: int, rank: int, nsv: int, sparse: bool,
                inner: bool) -> int:
    """Bytes of the per-replicate arrays of :class:`_Store` (estimated before
    they are allocated: the bootstrap refuses a request the memory cannot
    hold).  The results' angles and bounds, derived from them, need a
    fraction more."""
    per = 8 * (n1 + n2) * rank * (2 if inner else 1) + 8 * nsv + 2
    per += (n1 + n2) if sparse else 0
    return n_boot * per


class _Store:
    """Per-replicate arrays, filled batch by batch (NaN / False where a refit failed)."""

    def __init__(self, n_boot: int, n1: int, n2: int, rank: int, nsv: int, sparse: bool,
                 inner: bool) -> None:
        self.dir = {"a": np.full((n_boot, n1, rank), np.nan),
                    "b": np.full((n_boot, n2, rank), np.nan)}
        self.dir_in = ({"a": np.full((n_boot, n1, rank), np.nan),
                        "b": np.full((n_boot, n2, rank), np.nan)} if inner else None)
        self.sv = np.full((n_boot, nsv), np.nan)
        self.sel = ({"a": np.zeros((n_boot, n1), dtype=bool),
                     "b": np.zeros((n_boot, n2), dtype=bool)} if sparse else None)
        self.ok = np.zeros(n_boot, dtype=bool)
        self.ok_in = np.zeros(n_boot, dtype=bool)
        self.errors: list[str] = []

    def put(self, start: int, fits: list, fits_in: list | None) -> None:
        """Store the refits of the batch starting at replicate ``start``."""
        nsv = self.sv.shape[1]
        for j, e in enumerate(fits):
            if e is None:
                continue
            b = start + j
            self.ok[b] = True
            self.dir["a"][b], self.dir["b"][b] = e[0], e[1]
            self.sv[b, : len(e[2])] = e[2][:nsv]
            if self.sel is not None:
                self.sel["a"][b, e[3]] = True
                self.sel["b"][b, e[4]] = True
            if fits_in is not None and fits_in[j] is not None and self.dir_in is not None:
                self.ok_in[b] = True
                self.dir_in["a"][b], self.dir_in["b"][b] = fits_in[j][0], fits_in[j][1]


def _fill(store: _Store, ctx: dict, batches: Iterator, update: Any) -> None:
    """Refit every batch of replicate moments into ``store``."""
    done = 0
    for outer, inner_moms in batches:
        fits = _fit_batch(ctx, outer, store.errors)
        fits_in = None if inner_moms is None else _fit_batch(ctx, inner_moms, [])
        store.put(done, fits, fits_in)
        done += len(outer)
        update(len(outer))


def _check_failures(store: _Store, n_boot: int) -> int:
    """The number of fitted replicates; an error if none, a warning if some failed."""
    n_ok = int(store.ok.sum())
    if n_ok == 0:
        raise ValueError(
            f"every bootstrap replicate failed to fit; the first error was: {store.errors[0]}"
        )
    if n_ok < n_boot:
        warnings.warn(
            f"{n_boot - n_ok} of {n_boot} bootstrap replicates could not be fitted "
            f"and were dropped (first error: {store.errors[0]}); the intervals use the "
            f"other {n_ok}",
            SmallSampleWarning,
            stacklevel=4,
        )
    return n_ok


def _inner_angles(store: _Store, upper: dict[str, Any]) -> dict[str, np.ndarray] | None:
    """Largest angle of each inner replicate to its outer replicate, per block
    (in the block's covariance metric, module ``_metric``)."""
    if store.dir_in is None:
        return None
    ok = store.ok
    both = ok & store.ok_in
    out = {}
    for block in ("a", "b"):
        t = np.full(ok.shape[0], np.nan)
        if both.any():
            up = upper[block]
            t[both] = pair_angles(to_metric(up, store.dir_in[block][both]),
                                  to_metric(up, store.dir[block][both]))[:, -1]
        out[block] = t[ok]
    return out


def replicates(
    data: RowsData,
    est0: Estimate,
    standardize: bool,
    sparsity: tuple[int, int] | None,
    n_boot: int,
    rng: np.random.Generator,
    method: str,
    inner: bool,
    progress: ProgressArg,
    n_jobs: int | None = None,
    moments: BlockMoments | None = None,
    whitening: str | None = None,
    maps: Any = None,
) -> Replicates:
    """Refit every replicate: angles to the estimate, singular values,
    selections, and (``inner``) the largest angle of each inner replicate to
    its outer replicate.  ``moments``: the fit's full-sample moments (their
    covariances give the angles' metric without another pass over the
    rows); ``maps``: the fit's block whitenings (a regularised one is the
    angles' metric, module ``_metric``).  Arguments checked by
    :func:`.bootstrap.bootstrap`."""
    # The angles' metric first: a bootstrap that cannot measure its angles
    # refuses before the first replicate.
    ua, ub = covariance_factors(data, moments, whitening, maps)
    names_a, names_b = data.names["exog_a"], data.names["exog_b"]
    ctx = {"rank": est0.rank, "standardize": standardize, "sparsity": sparsity,
           "names_a": names_a, "names_b": names_b, "whitening": whitening,
           "scales": _column_scales(data, moments),
           # the observations the model's case weights stand for (a shrinkage
           # refit counts them as the fit did)
           "count": observations(data)}
    store = _Store(n_boot, len(names_a), len(names_b), est0.rank, len(est0.singular_values),
                   sparsity is not None, inner)
    with worker_pool(n_jobs) as parallel, progress_bar(progress, n_boot, "bootstrap") as update:
        make: Any = _pairs_batches if method == "pairs" else _poisson_batches
        # q > 1 responses, and data that re-estimate more than the moments
        # under each replicate's weights (the joint estimator's residuals)
        if (method == "poisson" and est0.coef_tensor is None
                and _joint_design(data) is not None):
            batches = _joint_poisson_batches(data, n_boot, rng, inner, parallel)
        elif est0.coef_tensor is not None or getattr(data, "reweighted_refit", False):
            batches = _q_batches(data, n_boot, rng, inner, method)
        else:
            batches = make(data, n_boot, rng, inner, parallel)
        _fill(store, ctx, batches, update)
    n_ok = _check_failures(store, n_boot)
    ok = store.ok
    # Angles in each block's covariance metric (module _metric): unit-free.
    return Replicates(
        angles_a=batched_principal_angles(orthonormal_basis(ua(est0.dir_a)),
                                          to_metric(ua, store.dir["a"][ok])),
        angles_b=batched_principal_angles(orthonormal_basis(ub(est0.dir_b)),
                                          to_metric(ub, store.dir["b"][ok])),
        singular_values=store.sv[ok],
        selected_a=None if store.sel is None else store.sel["a"][ok],
        selected_b=None if store.sel is None else store.sel["b"][ok],
        n_ok=n_ok,
        inner_angles=_inner_angles(store, {"a": ua, "b": ub}),
        directions={"a": store.dir["a"][ok], "b": store.dir["b"][ok]},
    )
