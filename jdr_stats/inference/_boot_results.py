"""The results of the subspace bootstrap: bounds, intervals, gap diagnostics.

:class:`BootstrapResults` holds the replicates measured by
:mod:`._replicates` and turns them into the confidence bound on the largest
principal angle (percentile or calibrated), per-angle intervals, basic
intervals for the singular values, selection frequencies and the gap
diagnostics.  Built by :func:`jdr_stats.inference.bootstrap.bootstrap`.
"""

from __future__ import annotations

import math
from functools import cached_property
from typing import Any, Literal, Protocol

import numpy as np
import pandas as pd
from statsmodels.iolib.summary2 import Summary

from ..diagnostics import gap_advice
from ..estimation._estimate import Estimate
from ..io._data import RowsData
from ..persistence._export import ExportMixin, json_key, records
from ..runtime._validation import check_choice, check_fraction
from ..summary import SummaryMixin, build_summary, json_safe
from ._bounds import calibrated_level, gap_diagnostics, order_index

__all__ = ["GAP_RATIO_MIN", "BootstrapResults", "BootstrappedFit"]

Interval = Literal["percentile", "calibrated"]

INTERVALS: tuple[Interval, ...] = ("percentile", "calibrated")
#: Gap rule (see docs/theory/bootstrap.md and the study
#: studies/study_bootstrap_robust.py): the rank-r subspace is flagged as
#: not separated from the noise when the sample ratio s_r / s_(r+1) is below
#: GAP_RATIO_MIN (WeakGapWarning).
GAP_RATIO_MIN = 1.5


class BootstrappedFit(Protocol):
    """What the bootstrap reads from the fit it resamples (``JDRResults``):
    public, read-only properties only."""

    @property
    def moments(self) -> Any: ...

    @property
    def block_sds(self) -> tuple[np.ndarray, np.ndarray]: ...


class BootstrapResults(ExportMixin, SummaryMixin):
    """Bootstrap replicates of a joint fit and the intervals built from them.

    Read-only; built by :func:`bootstrap` (``JDRResults.bootstrap``).  All
    angles are in degrees.  The replicate arrays hold only the replicates
    that could be fitted (``n_boot`` of them).
    """

    def __init__(
        self,
        data: RowsData,
        estimate: Estimate,
        *,
        standardize: bool,
        sparsity: tuple[int, int] | None,
        fit: BootstrappedFit | None,
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
        directions: dict[str, np.ndarray] | None = None,
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
        self._dirs = directions

    # -- basic attributes -------------------------------------------------
    @property
    def results(self) -> BootstrappedFit | None:
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
                    else check_choice(interval, "interval", INTERVALS))
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
        if interval == "percentile" or self._inner is None:
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
        alpha, kind = self._levels(alpha, interval)
        out = {}
        for block in ("a", "b"):
            t = np.sort(self._angles[block][:, -1])
            level = self._bound_level(block, alpha, kind)
            out[block] = float(np.degrees(t[order_index(t.size, level)]))
        return pd.Series(out, name="max angle bound (deg)")

    def conf_int(
        self, alpha: float | None = None, *, interval: Interval | None = None,
        what: Literal["subspaces", "loadings"] = "subspaces",
    ) -> pd.DataFrame:
        """Confidence bounds for the subspaces and the singular values, or
        (``what="loadings"``) for every per-SD loading (:meth:`loadings_conf_int`).

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
        if what == "loadings":
            return self.loadings_conf_int(alpha)
        if what != "subspaces":
            raise ValueError(f'what must be "subspaces" or "loadings"; got {what!r}')
        alpha, kind = self._levels(alpha, interval)
        bound = self.max_angle_bound(alpha, interval=kind)  # type: ignore[arg-type]
        idx, rows = [], []
        for block in ("a", "b"):
            ang = np.sort(np.degrees(self._angles[block]), axis=0)
            b = ang.shape[0]
            idx.append((block, "largest angle"))
            rows.append((0.0, bound[block]))
            lo, hi = order_index(b, alpha / 2), order_index(b, 1 - alpha / 2)
            for k in range(self.rank):
                idx.append((block, f"angle {k + 1}"))
                rows.append((ang[lo, k], ang[hi, k]))
        sv = np.sort(self._sv[:, : self.rank], axis=0)
        s_hat = self._est.singular_values[: self.rank]
        b = sv.shape[0]
        lo, hi = order_index(b, alpha / 2), order_index(b, 1 - alpha / 2)
        for k in range(self.rank):
            idx.append(("singular value", f"s{k + 1}"))
            # basic interval: the bootstrap estimate of the bias is removed
            rows.append((2 * s_hat[k] - sv[hi, k], 2 * s_hat[k] - sv[lo, k]))
        return pd.DataFrame(
            rows,
            index=pd.MultiIndex.from_tuples(idx, names=["block", "parameter"]),
            columns=["lower", "upper"],
        )

    def loadings_conf_int(self, alpha: float | None = None) -> pd.DataFrame:
        """Bootstrap standard errors and percentile intervals of the per-SD
        loadings (the summary's ``block a``/``block b`` tables), by variable.

        Each replicate's basis is aligned with the estimate's by orthogonal
        Procrustes on the per-SD loadings (the sign for ``r = 1``), since
        signs and rotations within a subspace are arbitrary; see
        ``docs/theory/bootstrap.md``, "Intervals for the loadings".

        Returns
        -------
        DataFrame
            Rows ``(block, variable, direction)``; columns ``estimate`` (the
            summary's loading), ``std_err``, ``lower``, ``upper`` (``1 -
            alpha`` percentile interval), on the summary's scale (each
            column divided by the estimate's largest absolute entry).

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(2000, 3, 2, 1, seed=0)
        >>> boot = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1).bootstrap(199, seed=1)
        >>> ci = boot.conf_int(what="loadings")
        >>> ci.columns.tolist(), ci.shape
        (['estimate', 'std_err', 'lower', 'upper'], (5, 4))
        """
        from ..diagnostics import block_stats
        from ._loading_ci import loading_table

        alpha, _ = self._levels(alpha, None)
        if self._dirs is None:
            raise ValueError("these bootstrap results hold no replicate directions")
        fit = self._results
        sd_a, sd_b = fit.block_sds if fit is not None else block_stats(self._data, 1)[:2]
        sds = {"a": sd_a, "b": sd_b}
        dirs = {"a": self._est.dir_a, "b": self._est.dir_b}
        names = {"a": self._data.names["exog_a"], "b": self._data.names["exog_b"]}
        return loading_table(self._dirs, dirs, sds, names, alpha)

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

    def to_dict(self) -> dict[str, Any]:
        """The bootstrap's intervals and diagnostics as plain JSON types.

        Keys: ``method``, ``interval``, ``alpha``, ``n_boot``, ``n_failed``,
        ``rank``, ``standardize``, ``sparsity``, ``max_angle_bound_deg``
        (``{"a": ..., "b": ...}``), ``conf_int`` (records ``block``,
        ``parameter``, ``lower``, ``upper``, as :meth:`conf_int`), ``gap``
        (:attr:`gap`, keys without spaces; ``s_r / s_(r+1)`` as ``ratio``),
        ``sentences`` (``{"a": ..., "b": ...}``) and ``selection_frequency`` (records ``block``,
        ``variable``, ``frequency``; None for a dense fit).  The replicates
        themselves are not included (``save`` keeps them).
        """
        freq = None
        fa, fb = self.selection_frequency_a, self.selection_frequency_b
        if fa is not None and fb is not None:
            both = pd.concat({"a": fa.rename("frequency"), "b": fb.rename("frequency")},
                             names=["block", "variable"])
            freq = records(both.to_frame())
        return {
            "method": self._method, "interval": self._interval, "alpha": self._alpha,
            "n_boot": self.n_boot, "n_failed": self._n_failed, "rank": self.rank,
            "standardize": self._standardize,
            "sparsity": None if self._sparsity is None else list(self._sparsity),
            "max_angle_bound_deg": json_safe(self.max_angle_bound()),
            "conf_int": records(self.conf_int()),
            "gap": {"ratio" if k == "s_r / s_(r+1)" else json_key(k): json_safe(v)
                    for k, v in self.gap.items()},
            "sentences": {b: self.sentence(b) for b in ("a", "b")},
            "selection_frequency": freq,
        }

    def _summary_tables(self, ci: pd.DataFrame) -> list[tuple[Any, ...]]:
        """The summary's tables: the principal angles of each block, the singular
        values with their intervals, the selection frequencies (sparse fits)."""
        tables: list[tuple[Any, ...]] = []
        # the blocks' names where the fit is known (a two-block fit's a and b)
        names = getattr(getattr(self._results, "model", None), "block_names", None)
        label = dict(zip(("a", "b"), names or (), strict=False))
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
            named = label.get(block, block)
            shown = f"block {block}" + (f": {named}" if named != block else "")
            tables.append((shown, table, f"principal angles, {shown}"))
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
                "singular values, intervals",
            )
        )
        if self._selected["a"] is not None:
            for block in ("a", "b"):
                freq = self._frequency(block)
                assert freq is not None
                tables.append((f"selection {block}", freq.to_frame(),
                               f"selection frequency, block {block}"))
        return tables

    def _singular_value_note(self, ci: pd.DataFrame) -> str:
        """What the singular values' basic intervals are, and which of them
        exclude their own estimate."""
        s_hat = self._est.singular_values[: self.rank]
        sub = ci.loc["singular value"]
        below = [str(k) for k, hi, est in zip(sub.index, sub["upper"], s_hat, strict=True)
                 if hi < est]
        above = [str(k) for k, lo, est in zip(sub.index, sub["lower"], s_hat, strict=True)
                 if lo > est]
        excluded = []
        if below:
            excluded.append(f"{', '.join(below)} wholly below (replicates above the estimate, "
                            "as upward-biased sample singular values give)")
        if above:
            excluded.append(f"{', '.join(above)} wholly above (replicates below the estimate)")
        return (
            "Singular values: basic bootstrap intervals [2 s - t_high, 2 s - t_low] "
            "(t: replicate quantiles), which subtract the replicates' bias (boot mean - "
            "estimate), so an interval can exclude its own estimate"
            + (f" (here: {'; '.join(excluded)})" if excluded else "")
            + " (theory page 'Bootstrap')."
        )

    def summary(self, *, notes: Literal["short", "full"] = "short") -> Summary:
        """A statsmodels ``Summary``: a table per block, the singular values,
        selection frequencies (sparse fits) and the bounds in words;
        ``notes="full"`` adds what the angles and the intervals are (the
        guide pages "Reading the summary" and "Bootstrap" say it too)."""
        if notes not in ("short", "full"):
            raise ValueError(f'notes must be "short" or "full"; got {notes!r}')
        full = notes == "full"
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
        tables = self._summary_tables(ci)
        out = [self.sentence("a"), self.sentence("b")]
        out.append(
            "Angles: principal angles between the replicate's and the full-sample "
            "subspace in each block's covariance metric (free of the units; guide page "
            "'Reading the summary'); the bound on the largest one is the "
            f"{level} upper bound for the angle between the true and the estimated "
            "subspace. Lower/upper: two-sided percentile intervals for the angles."
        )
        out.append(self._singular_value_note(ci))
        if self._interval == "calibrated":
            lam = self.calibrated_levels()
            out.append(
                "Calibrated (fast double bootstrap): the bound is the replicate "
                f"quantile at level a={lam['a']:.3f}, b={lam['b']:.3f} instead of "
                f"{1 - alpha:g}."
            )
        if not self.gap["trusted"]:
            out.append(
                f"WARNING (weak gap): s_r / s_(r+1) = {float(self.gap['s_r / s_(r+1)']):.2f} "
                f"< {GAP_RATIO_MIN}: directions {self.rank} and {self.rank + 1} are not "
                "separated; the rank-r subspace is poorly determined and its bound is "
                "close to 90 degrees; "
                + gap_advice(self._est.singular_values, self.rank, GAP_RATIO_MIN) + "."
            )
        if not full:  # what the angles and the intervals are: notes="full"
            out = [n for n in out if not n.startswith("Angles: ")
                   and not (n.startswith("Singular values: ") and "(here: " not in n)]
            out.append("Angles: principal angles in each block's covariance metric (free of "
                       "the units; guide page 'Reading the summary'); what the angles and "
                       "intervals are: summary(notes='full').")
        return build_summary("Bootstrap of the joint dimension reduction", info, tables, out)
