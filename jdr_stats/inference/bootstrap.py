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
:class:`~jdr_stats._linalg.ReweightedMoments`); each replicate then goes through
:func:`jdr_stats._estimate.estimate`, the package's one estimator.
"""

from __future__ import annotations

import math
import sys
import time
import warnings
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pandas as pd
from statsmodels.iolib.summary2 import Summary

from .._validation import check_bool, check_choice, check_fraction, check_int, normalize_seed
from .._data import ModelData
from .._estimate import Estimate
from .._estimate import estimate as estimate_from_moments
from .._linalg import ReweightedMoments, batched_principal_angles, orthonormal_basis
from .._warnings import SmallSampleWarning
from ..summary import SummaryMixin, build_summary

__all__ = ["bootstrap", "BootstrapResults"]

Method = Literal["pairs"]
Interval = Literal["percentile", "deflated"]

_METHODS = ("pairs",)
_INTERVALS = ("percentile", "deflated")
#: Smallest factor by which the "deflated" interval may shrink sin(angle).
_MIN_DEFLATION = 0.5

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


def _deflation(s: np.ndarray, rank: int, dim: int) -> float:
    """First-order ratio of true-world to bootstrap-world angle scale.

    With singular values ``s`` of the decomposed matrix (``dim`` variables
    in the block), a perturbation ``E`` moves the left singular vector ``j``
    towards ``k`` by ``(s_j e_kj + s_k e_jk) / (s_j^2 - s_k^2)``; for
    isotropic noise its variance is proportional to
    ``(s_j^2 + s_k^2) / (s_j^2 - s_k^2)^2``.  In the population the trailing
    singular values are 0 (variance ``1 / s_j^2``); in the bootstrap world
    they are the sample's noise singular values.  The factor is the square
    root of the ratio of the two sums over ``j <= r < k``, clipped to
    ``[0.5, 1]``.
    """
    sj = s[:rank]
    sk = np.zeros(max(dim - rank, 0))
    tail = s[rank:dim]
    sk[: len(tail)] = tail
    if sk.size == 0 or np.any(sj <= 0):
        return 1.0
    gap = sj[:, None] ** 2 - sk[None, :] ** 2
    if np.any(gap <= 0):
        return _MIN_DEFLATION
    num = sk.size * np.sum(1.0 / sj**2)
    den = np.sum((sj[:, None] ** 2 + sk[None, :] ** 2) / gap**2)
    return float(np.clip(np.sqrt(num / den), _MIN_DEFLATION, 1.0))


def _order_index(n: int, level: float) -> int:
    """0-based index of the ``ceil((n + 1) level)``-th order statistic, clipped."""
    k = math.ceil((n + 1) * level - 1e-9)
    return int(min(max(k, 1), n)) - 1


def _progress(done: int, total: int, start: float) -> None:
    print(
        f"bootstrap: {done}/{total} replicates ({time.perf_counter() - start:.1f} s)",
        file=sys.stderr,
        flush=True,
    )


def _pairs(
    data: ModelData,
    est0: Estimate,
    standardize: bool,
    sparsity: tuple[int, int] | None,
    n_boot: int,
    rng: np.random.Generator,
    progress: bool,
):
    """Replicates of the pairs bootstrap: refits on reweighted moments."""
    rank = est0.rank
    a, b = data.blocks["exog_a"], data.blocks["exog_b"]
    names_a, names_b = data.names["exog_a"], data.names["exog_b"]
    m = data.nobs
    n1, n2 = a.shape[1], b.shape[1]
    rw = ReweightedMoments(data.endog, a, b, data.weights)
    batch = max(1, min(n_boot, _COUNT_BYTES // (8 * m), _COUNT_BYTES // (8 * rw.width)))
    nsv = len(est0.singular_values)
    dir_a = np.full((n_boot, n1, rank), np.nan)
    dir_b = np.full((n_boot, n2, rank), np.nan)
    sv = np.full((n_boot, nsv), np.nan)
    sel_a = np.zeros((n_boot, n1), dtype=bool) if sparsity is not None else None
    sel_b = np.zeros((n_boot, n2), dtype=bool) if sparsity is not None else None
    ok = np.zeros(n_boot, dtype=bool)
    errors: list[str] = []
    start = time.perf_counter()
    report_every = max(1, n_boot // 10)
    done = 0
    while done < n_boot:
        nb = min(batch, n_boot - done)
        counts = _draw_counts(rng, nb, m)
        moments = rw.moments(rw.sums(counts))
        del counts
        for j, mom in enumerate(moments):
            b = done + j
            try:
                e = estimate_from_moments(
                    mom, rank, standardize=standardize, sparsity=sparsity,
                    names_a=names_a, names_b=names_b,
                )
            except ValueError as exc:  # e.g. a resample with collinear columns
                errors.append(str(exc))
                continue
            ok[b] = True
            dir_a[b], dir_b[b] = e.dir_a, e.dir_b
            sv[b, : len(e.singular_values)] = e.singular_values[:nsv]
            if sel_a is not None:
                sel_a[b, e.rows] = True
                sel_b[b, e.cols] = True
            if progress and (b + 1) % report_every == 0 and b + 1 < n_boot:
                _progress(b + 1, n_boot, start)
        done += nb
    if progress:
        _progress(n_boot, n_boot, start)
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
    ang_a = batched_principal_angles(orthonormal_basis(est0.dir_a), dir_a[ok])
    ang_b = batched_principal_angles(orthonormal_basis(est0.dir_b), dir_b[ok])
    return (
        ang_a, ang_b, sv[ok],
        None if sel_a is None else sel_a[ok],
        None if sel_b is None else sel_b[ok],
        n_ok,
    )


# -- the bootstrap -----------------------------------------------------------
def bootstrap(
    data: ModelData,
    estimate: Estimate,
    *,
    standardize: bool,
    sparsity: tuple[int, int] | None,
    n_boot: int = 999,
    seed: int | np.random.Generator | None = None,
    method: Method = "pairs",
    interval: Interval = "deflated",
    alpha: float = 0.05,
    progress: bool = False,
    fit: Any = None,
) -> BootstrapResults:
    """Bootstrap the joint fit: confidence bounds for the estimated subspaces.

    Parameters
    ----------
    data : ModelData
        The validated data of the fit.
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
    method : {"pairs"}
        ``"pairs"``: resample whole rows ``(y_i, a_i, b_i)`` with
        replacement (the model's case weights, if any, multiply the counts).
    interval : {"deflated", "percentile"}
        How the replicate angles become bounds (see Notes); the default of
        :meth:`BootstrapResults.conf_int`, which can switch it.  The coverage
        study chose ``"deflated"``: both kept 95% nominal coverage, the
        deflated bound was closer to it and shorter.
    alpha : float
        Default level of :meth:`BootstrapResults.conf_int` and
        :meth:`BootstrapResults.summary` (``1 - alpha`` confidence).
    progress : bool
        Print the number of finished replicates to standard error.
    fit : JDRResults, optional
        The fit being bootstrapped, kept as :attr:`BootstrapResults.results`
        (``JDRResults.bootstrap`` passes itself).

    Returns
    -------
    BootstrapResults

    Notes
    -----
    For replicate ``b`` the rows are drawn with replacement (counts
    ``c_b``), the moments are recomputed with weights ``c_b`` and the
    subspaces re-estimated, giving principal angles
    ``theta*_{b,1} <= ... <= theta*_{b,r}`` between the replicate's span and
    the full-sample span of each block.  The bootstrap principle treats the
    law of ``theta*`` (estimate vs. replicate) as the law of ``theta``
    (truth vs. estimate).  ``"percentile"``: the ``1 - alpha`` upper bound on
    the largest angle is the ``ceil((B + 1)(1 - alpha))``-th smallest
    ``theta*_{b,r}``.  ``"deflated"`` multiplies ``sin theta*`` by the
    first-order factor of the block (``deflation_factors``), which removes
    the extra spread the bootstrap world gets from the sample's nonzero noise
    singular values (the population ones are zero).  In the coverage study
    (``benchmarks/study_bootstrap_coverage.py``: BILINEAR, r=2, n1=n2=20,
    200 replications) the 95% bounds covered the true subspace in 97.5-100%
    (percentile) and 95.0-97.5% (deflated) of the samples at m=1000 and
    m=5000.

    A batch of replicates costs one matrix product of the ``(batch x m)``
    count matrix with per-row products of the rows centred at the
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
    """
    n_boot = check_int(n_boot, "n_boot", low=1)
    method = check_choice(method, "method", _METHODS)
    interval = check_choice(interval, "interval", _INTERVALS)
    alpha = check_fraction(alpha, "alpha")
    progress = check_bool(progress, "progress")
    if not isinstance(data, ModelData):
        raise TypeError(
            "data must be the ModelData of a fit (JDRResults.model.data; or call "
            f"JDRResults.bootstrap); got {type(data).__name__}"
        )
    if not isinstance(estimate, Estimate):
        raise TypeError(f"estimate must be an Estimate; got {type(estimate).__name__}")
    standardize = check_bool(standardize, "standardize")
    rng = normalize_seed(seed)
    ang_a, ang_b, sv, sel_a, sel_b, n_ok = _pairs(
        data, estimate, standardize, sparsity, n_boot, rng, progress
    )
    factors = (
        _deflation(estimate.singular_values, estimate.rank, len(estimate.rows)),
        _deflation(estimate.singular_values, estimate.rank, len(estimate.cols)),
    )
    return BootstrapResults(
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
        deflation=factors,
    )


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
        deflation: tuple[float, float],
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
        self._deflation = {"a": deflation[0], "b": deflation[1]}

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

    @property
    def deflation_factors(self) -> pd.Series:
        """Factors applied to ``sin(angle*)`` by ``interval="deflated"``."""
        return pd.Series(self._deflation, name="deflation factor")

    # -- intervals --------------------------------------------------------
    def _levels(self, alpha: float | None, interval: str | None) -> tuple[float, str]:
        alpha = self._alpha if alpha is None else check_fraction(alpha, "alpha")
        interval = self._interval if interval is None else check_choice(interval, "interval", _INTERVALS)
        if (self.n_boot + 1) * alpha / 2 < 1:
            raise ValueError(
                f"alpha={alpha} needs at least {math.ceil(2 / alpha) - 1} replicates "
                f"for two-sided intervals; got n_boot={self.n_boot}"
            )
        return alpha, interval

    def _adjusted(self, block: str, interval: str) -> np.ndarray:
        ang = self._angles[block]
        if interval == "deflated":
            return np.arcsin(np.clip(self._deflation[block] * np.sin(ang), 0.0, 1.0))
        return ang

    def max_angle_bound(
        self, alpha: float | None = None, *, interval: Interval | None = None
    ) -> pd.Series:
        """Upper ``1 - alpha`` confidence bound (degrees) on the largest
        principal angle between the true and the estimated subspace, per block."""
        alpha, interval = self._levels(alpha, interval)
        out = {}
        for block in ("a", "b"):
            t = np.sort(self._adjusted(block, interval)[:, -1])
            out[block] = float(np.degrees(t[_order_index(t.size, 1 - alpha)]))
        return pd.Series(out, name="max angle bound (deg)")

    def conf_int(
        self, alpha: float | None = None, *, interval: Interval | None = None
    ) -> pd.DataFrame:
        """Confidence bounds for the subspaces and the singular values.

        Parameters
        ----------
        alpha : float, optional
            ``1 - alpha`` confidence; the bootstrap's ``alpha`` by default.
        interval : {"percentile", "deflated"}, optional
            Interval type for the angles; the bootstrap's by default.

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
        on the largest angle is ``t_(k)``, ``k = ceil((B + 1)(1 - alpha))``;
        the two-sided angle intervals are ``[t_(l), t_(h)]`` with
        ``l = ceil((B + 1) alpha / 2)``, ``h = ceil((B + 1)(1 - alpha / 2))``.
        The singular value intervals are ``[2 s_hat - t_(h), 2 s_hat - t_(l)]``
        (basic bootstrap): the sample singular values are biased (upwards
        for the largest), and this interval removes the bootstrap estimate of
        that bias, where the percentile interval would double it.
        """
        alpha, interval = self._levels(alpha, interval)
        idx, rows = [], []
        for block in ("a", "b"):
            ang = np.sort(np.degrees(self._adjusted(block, interval)), axis=0)
            b = ang.shape[0]
            idx.append((block, "largest angle"))
            rows.append((0.0, ang[_order_index(b, 1 - alpha), -1]))
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
        return (
            f"With {100 * (1 - alpha):g}% confidence the true {block}-subspace lies "
            f"within {bound:.1f} degrees of the estimate (largest principal angle)."
        )

    def summary(self) -> Summary:
        """A statsmodels ``Summary``: a table per block, the singular values,
        selection frequencies (sparse fits) and the bounds in words."""
        alpha = self._alpha
        ci = self.conf_int()
        level = f"{100 * (1 - alpha):g}%"
        info = {
            "Method:": f"{self._method} bootstrap",
            "Interval:": self._interval,
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
            med = np.degrees(np.median(self._adjusted(block, self._interval), axis=0))
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
            "subspace (original coordinates); the bound on the largest one is the "
            f"{level} upper bound for the angle between the true and the estimated "
            "subspace. Lower/upper: two-sided intervals (percentile for the "
            "angles, basic bootstrap for the singular values)."
        )
        if self._interval == "deflated":
            notes.append(
                "Deflated: sin(angle*) multiplied by the first-order factors "
                f"a={self._deflation['a']:.3f}, b={self._deflation['b']:.3f}."
            )
        return build_summary("Bootstrap of the joint dimension reduction", info, tables, notes)
