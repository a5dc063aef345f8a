"""The results of the subspace bootstrap: bounds, intervals, gap diagnostics.

:class:`BootstrapResults` holds the replicates measured by
:mod:`._replicates` and turns them into the confidence bound on the largest
principal angle (percentile or calibrated), per-angle intervals, basic
intervals for the singular values, selection frequencies and the gap
diagnostics.  Built by :func:`jdr_stats.inference.bootstrap.bootstrap` for a
two-block fit and by :meth:`BootstrapResults.from_blocks` for a K-block fit
(``KBlockFit.bootstrap``): one class whatever K, every table keyed by
block (``"a"``/``"b"`` for the two-block fit, the block names for K blocks).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Protocol

import numpy as np
import pandas as pd

from ..diagnostics import gap_advice
from ..estimation._estimate import Estimate
from ..io._data import RowsData
from ..persistence._export import ExportMixin, json_key, records
from ..runtime._validation import check_choice, check_fraction
from ..summary import SummaryMixin, build_summary, json_safe
from ._bounds import calibrated_level, gap_diagnostics, order_index

if TYPE_CHECKING:  # statsmodels on first use: fast ``import jdr_stats``
    from statsmodels.iolib.summary2 import Summary

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

    Read-only; built by :func:`bootstrap` (``JDRResults.bootstrap``) or
    :meth:`from_blocks` (``KBlockFit.bootstrap``).  All angles are in
    degrees.  The replicate arrays hold only the replicates that could be
    fitted (``n_boot`` of them).  Every table is keyed by block
    (:attr:`block_names`: ``"a"``, ``"b"`` for a two-block fit, the block
    names of a K-block fit, its rank-0 blocks left out: nothing to bound).
    """

    # the two-block fit's defaults (a K-block bootstrap sets its own; files
    # written before these existed read as two-block results)
    _keys: tuple[str, ...] = ("a", "b")
    _ranks: dict[str, int] | None = None
    _spectra: dict[str, tuple[np.ndarray, np.ndarray]] | None = None
    _names: dict[str, list[str]] | None = None
    _whitening: str | None = None

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
        self._data: RowsData | None = data
        self._est: Estimate | None = estimate
        self._standardize = standardize
        self._sparsity: Any = sparsity
        self._results: Any = fit
        self._angles = {"a": angles_a, "b": angles_b}
        self._sv: np.ndarray | None = singular_values
        self._selected: dict[str, np.ndarray | None] = {"a": selected_a, "b": selected_b}
        self._n_failed = int(n_failed)
        self._method = method
        self._interval = interval
        self._alpha = alpha
        self._inner: dict[str, np.ndarray] | None = inner_angles
        self._dirs: dict[str, np.ndarray] | None = directions

    @classmethod
    def from_blocks(
        cls,
        fit: Any,
        *,
        angles: Mapping[str, np.ndarray],
        spectra: Mapping[str, tuple[np.ndarray, np.ndarray]],
        ranks: Mapping[str, int],
        directions: Mapping[str, np.ndarray],
        selected: Mapping[str, np.ndarray | None],
        names: Mapping[str, list[str]],
        n_failed: int,
        method: str,
        alpha: float,
    ) -> BootstrapResults:
        """The bootstrap of a K-block fit (``KBlockFit.bootstrap``), by
        block name: the blocks with a positive rank, in the fit's order.

        ``angles[name]``: the fitted replicates' principal angles (radians,
        ascending, ``(n_boot, r_k)``) in the block's covariance metric;
        ``spectra[name]``: the square roots of the fit's and of every
        replicate's combined-Gram eigenvalues (the block's singular values:
        the two-block ``s`` at K = 2); ``directions[name]``: the replicates'
        directions ``(n_boot, n_k, r_k)``, original coordinates;
        ``selected[name]``: which variables each replicate kept (sparse
        fits, else None); ``names[name]``: the block's variables.  No inner
        replicates: the bound is the percentile one.
        """
        out = cls.__new__(cls)
        out._data, out._est, out._sv, out._inner = None, None, None, None
        out._results = fit
        out._keys = tuple(angles)
        out._angles = {n: np.asarray(angles[n], float) for n in out._keys}
        out._spectra = {n: (np.asarray(spectra[n][0], float), np.asarray(spectra[n][1], float))
                        for n in out._keys}
        out._ranks = {n: int(ranks[n]) for n in out._keys}
        out._dirs = {n: np.asarray(directions[n], float) for n in out._keys}
        out._selected = {n: selected[n] for n in out._keys}
        out._names = {n: [str(v) for v in names[n]] for n in out._keys}
        out._whitening = str(fit.whitening)
        out._standardize = out._whitening != "none"
        out._sparsity = fit.sparsity
        out._n_failed = int(n_failed)
        out._method = method
        out._interval = "percentile"
        out._alpha = float(alpha)
        return out

    # -- basic attributes -------------------------------------------------
    @property
    def results(self) -> Any:
        """The bootstrapped fit (``JDRResults`` or ``KBlockFit``; None
        when :func:`bootstrap` was called without ``fit``)."""
        return self._results

    @property
    def block_names(self) -> tuple[str, ...]:
        """The keys of every table by block: ``("a", "b")`` for a two-block
        fit, the block names (with a positive rank) of a K-block fit."""
        return self._keys

    @property
    def n_boot(self) -> int:
        """Number of replicates used (fitted successfully)."""
        first = self._sv if self._sv is not None else self._angles[self._keys[0]]
        return int(first.shape[0])

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
    def level(self) -> float:
        """The default confidence, ``1 - alpha``."""
        return 1.0 - self._alpha

    def _estimate(self, what: str) -> Estimate:
        """The two-block estimate, or an error naming why ``what`` needs it."""
        if self._est is None:
            raise ValueError(
                f"{what} is for the bootstrap of a two-block fit: a K-block fit has no "
                "single coefficient matrix; its blocks' spectra are in gap_table and "
                "its bounds by block name")
        return self._est

    def _rank_of(self, block: str) -> int:
        return self._estimate("rank").rank if self._ranks is None else self._ranks[block]

    @property
    def rank(self) -> int | dict[str, int]:
        """The fit's rank: an int when every block has the same, else a dict
        by block name (as ``KBlockFit.rank``)."""
        if self._ranks is None:
            return self._estimate("rank").rank
        ranks = set(self._ranks.values())
        return ranks.pop() if len(ranks) == 1 else dict(self._ranks)

    @property
    def angles(self) -> dict[str, np.ndarray]:
        """Each block's replicate principal angles (degrees, ascending),
        ``(n_boot, rank)``, by :attr:`block_names`."""
        return {n: np.degrees(self._angles[n]) for n in self._keys}

    def _pair(self, index: int) -> str:
        """The key of block ``a`` (0) or ``b`` (1): the K = 2 view."""
        if len(self._keys) != 2:
            raise ValueError(
                f"angles_a, angles_b, selected_a/_b are the two-block view; this bootstrap "
                f"bounds {len(self._keys)} blocks ({', '.join(self._keys)}): use "
                "angles[name] and selection_frequency[name]")
        return self._keys[index]

    @property
    def angles_a(self) -> np.ndarray:
        """Principal angles (degrees, ascending), replicate vs. estimate, block a.

        Shape ``(n_boot, rank)``; the last column is the largest angle.
        """
        return np.degrees(self._angles[self._pair(0)])

    @property
    def angles_b(self) -> np.ndarray:
        """Principal angles (degrees, ascending), replicate vs. estimate, block b."""
        return np.degrees(self._angles[self._pair(1)])

    @property
    def singular_values(self) -> np.ndarray:
        """Singular values of every replicate, shape ``(n_boot, k)``, descending
        (two-block fits)."""
        self._estimate("singular_values")
        assert self._sv is not None
        return self._sv.copy()

    @property
    def selected_a(self) -> np.ndarray | None:
        """Boolean ``(n_boot, n1)``: variables of block a each replicate selected
        (sparse fits; ``None`` for a dense fit)."""
        s = self._selected[self._pair(0)]
        return None if s is None else s.copy()

    @property
    def selected_b(self) -> np.ndarray | None:
        """Boolean ``(n_boot, n2)``: variables of block b selected (sparse fits)."""
        s = self._selected[self._pair(1)]
        return None if s is None else s.copy()

    def _variables(self, block: str) -> list[str]:
        if self._names is not None:
            return self._names[block]
        assert self._data is not None
        return list(self._data.names["exog_a" if block == "a" else "exog_b"])

    def _frequency(self, block: str) -> pd.Series | None:
        s = self._selected[block]
        if s is None:
            return None
        return pd.Series(s.mean(axis=0), index=pd.Index(self._variables(block)),
                         name="selection frequency")

    @cached_property
    def selection_frequency(self) -> dict[str, pd.Series] | None:
        """Share of replicates selecting each variable, by block (sparse
        fits; None for a dense fit)."""
        if any(self._selected[b] is None for b in self._keys):
            return None
        return {b: self._frequency(b) for b in self._keys}  # type: ignore[misc]

    @cached_property
    def selection_frequency_a(self) -> pd.Series | None:
        """Share of replicates selecting each variable of block a (sparse fits)."""
        return self._frequency(self._pair(0))

    @cached_property
    def selection_frequency_b(self) -> pd.Series | None:
        """Share of replicates selecting each variable of block b (sparse fits)."""
        return self._frequency(self._pair(1))

    def _spectrum(self, block: str) -> tuple[np.ndarray, np.ndarray]:
        """The fit's and the replicates' singular values behind ``block``."""
        if self._spectra is not None:
            return self._spectra[block]
        assert self._sv is not None
        return self._estimate("the spectrum").singular_values, self._sv

    @cached_property
    def gap_table(self) -> pd.DataFrame:
        """The gap diagnostics by block (rows :attr:`block_names`).

        Columns ``s_r / s_(r+1)`` (the block's sample singular values at its
        rank ``r``; ``inf`` when ``r`` is the last; a two-block fit's two
        rows share the one spectrum), ``crossing share``, ``median largest
        angle`` (degrees), ``share above 45 deg`` and ``trusted``, as
        :attr:`gap`.  A K-block fit's singular values are the square roots
        of the block's combined-Gram eigenvalues (the two-block ``s`` at
        K = 2).
        """
        rows = {}
        for block in self._keys:
            s_hat, s_boot = self._spectrum(block)
            d = gap_diagnostics(s_hat, s_boot, self._rank_of(block))
            big = self._angles[block][:, -1]
            rows[block] = {"s_r / s_(r+1)": d["ratio"], "crossing share": d["crossing"],
                           "median largest angle": float(np.degrees(np.median(big))),
                           "share above 45 deg": float(np.mean(big > np.pi / 4)),
                           "trusted": bool(d["ratio"] >= GAP_RATIO_MIN)}
        return pd.DataFrame.from_dict(rows, orient="index").rename_axis("block")

    @cached_property
    def gap(self) -> pd.Series:
        """Gap diagnostics of the rank-r subspace.

        ``s_r / s_(r+1)``: ratio of the sample's r-th and (r+1)-th singular
        values (``inf`` when r is the last); ``crossing share``: share of
        replicates whose r-th singular value is below the sample's
        (r+1)-th (how often the replicates swap the r-th direction with a
        noise direction); ``median largest angle a`` / ``b`` (degrees): the
        spread of the replicate subspaces; ``trusted``: the gap rule,
        ``s_r / s_(r+1) >= GAP_RATIO_MIN`` (see the theory page).  With a
        spectrum per block (a K-block fit) the ratio is the smallest and the
        crossing share the largest over the blocks, ``trusted`` holds when
        every block passes, and the per-block entries are named by block;
        :attr:`gap_table` has every block's row.
        """
        t = self.gap_table
        out: dict[str, Any] = {"s_r / s_(r+1)": float(t["s_r / s_(r+1)"].min()),
                               "crossing share": float(t["crossing share"].max())}
        for col in ("median largest angle", "share above 45 deg"):
            out.update({f"{col} {b}": float(t[col].loc[b]) for b in self._keys})
        out["trusted"] = bool(t["trusted"].all())
        return pd.Series(out, name="gap diagnostics", dtype=object)

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
                'interval="calibrated" needs the inner replicates, which the bootstrap of '
                "a K-block fit does not draw (its bound is the percentile one)"
                if self._ranks is not None else
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
            {b: self._bound_level(b, alpha, "calibrated") for b in self._keys},
            name="calibrated level",
        )

    def max_angle_bound(
        self, alpha: float | None = None, *, interval: Interval | None = None
    ) -> pd.Series:
        """Upper ``1 - alpha`` confidence bound (degrees) on the largest
        principal angle between the true and the estimated subspace, per block."""
        alpha, kind = self._levels(alpha, interval)
        out = {}
        for block in self._keys:
            t = np.sort(self._angles[block][:, -1])
            level = self._bound_level(block, alpha, kind)
            out[block] = float(np.degrees(t[order_index(t.size, level)]))
        return pd.Series(out, name="max angle bound (deg)")

    @property
    def table(self) -> pd.DataFrame:
        """By block: ``median`` and ``upper`` (:meth:`max_angle_bound` at the
        default level and interval) of the largest principal angle, degrees."""
        bound = self.max_angle_bound()
        return pd.DataFrame(
            {"median": [float(np.degrees(np.median(self._angles[b][:, -1])))
                        for b in self._keys],
             "upper": [float(bound[b]) for b in self._keys]},
            index=pd.Index(self._keys, name="block"))

    def _angle_rows(self, alpha: float, kind: str) -> tuple[list[Any], list[Any]]:
        """:meth:`conf_int`'s rows of the blocks' angles."""
        bound = self.max_angle_bound(alpha, interval=kind)  # type: ignore[arg-type]
        idx: list[Any] = []
        rows: list[Any] = []
        for block in self._keys:
            ang = np.sort(np.degrees(self._angles[block]), axis=0)
            b = ang.shape[0]
            idx.append((block, "largest angle"))
            rows.append((0.0, bound[block]))
            lo, hi = order_index(b, alpha / 2), order_index(b, 1 - alpha / 2)
            for k in range(self._rank_of(block)):
                idx.append((block, f"angle {k + 1}"))
                rows.append((ang[lo, k], ang[hi, k]))
        return idx, rows

    @property
    def intervals(self) -> pd.DataFrame:
        """The blocks' rows of :meth:`conf_int` (default level and interval):
        ``(block, "largest angle")`` and ``(block, "angle k")``."""
        alpha, kind = self._levels(None, None)
        idx, rows = self._angle_rows(alpha, kind)
        return pd.DataFrame(rows, columns=["lower", "upper"],
                            index=pd.MultiIndex.from_tuples(idx, names=["block", "parameter"]))

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
            - the same for block ``"b"`` (for a K-block fit: for every
              block, by name);
            - ``("singular value", "s_k")``, ``k <= rank``: two-sided
              basic bootstrap intervals for the population singular values
              (two-block fits; a K-block fit has no single coefficient
              matrix).

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
        idx, rows = self._angle_rows(alpha, kind)
        if self._est is not None and self._sv is not None:
            sv = np.sort(self._sv[:, : self._est.rank], axis=0)
            s_hat = self._est.singular_values[: self._est.rank]
            b = sv.shape[0]
            lo, hi = order_index(b, alpha / 2), order_index(b, 1 - alpha / 2)
            for k in range(self._est.rank):
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
        ``docs/theory/bootstrap.md``, "Intervals for the loadings".  A
        K-block fit's rows are by block name.

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
        names = {b: self._variables(b) for b in self._keys}
        if self._est is None:  # a K-block fit: its directions and SDs by name
            sds = {b: fit.block_sds[b] for b in self._keys}
            dirs = {b: fit.directions[b].to_numpy() for b in self._keys}
            return loading_table(self._dirs, dirs, sds, names, alpha)
        assert self._data is not None
        sd_a, sd_b = fit.block_sds if fit is not None else block_stats(self._data, 1)[:2]
        return loading_table(self._dirs, {"a": self._est.dir_a, "b": self._est.dir_b},
                             {"a": sd_a, "b": sd_b}, names, alpha)

    def sentence(self, block: str, alpha: float | None = None) -> str:
        """The bound on the largest angle of ``block`` (a key of
        :attr:`block_names`) as a plain sentence."""
        check_choice(block, "block", self._keys)
        alpha, _ = self._levels(alpha, None)
        bound = self.max_angle_bound(alpha)[block]
        text = (
            f"With {100 * (1 - alpha):g}% confidence the true {block}-subspace lies "
            f"within {bound:.1f} degrees of the estimate (largest principal angle)."
        )
        gap = self.gap_table.loc[block]
        if not gap["trusted"]:
            r = self._rank_of(block)
            text += (
                f" Weak gap: s_r / s_(r+1) = {gap['s_r / s_(r+1)']:.2f} is below "
                f"{GAP_RATIO_MIN}, so directions {r} and {r + 1} are not "
                "separated and the subspace is poorly determined."
            )
        return text

    def to_dict(self) -> dict[str, Any]:
        """The bootstrap's intervals and diagnostics as plain JSON types.

        Keys: ``method``, ``interval``, ``alpha``, ``n_boot``, ``n_failed``,
        ``rank``, ``standardize``, ``sparsity``, ``max_angle_bound_deg``
        (by block: ``{"a": ..., "b": ...}`` or the block names), ``conf_int``
        (records ``block``, ``parameter``, ``lower``, ``upper``, as
        :meth:`conf_int`), ``gap`` (:attr:`gap`, keys without spaces;
        ``s_r / s_(r+1)`` as ``ratio``), ``sentences`` (by block) and
        ``selection_frequency`` (records ``block``, ``variable``,
        ``frequency``; None for a dense fit).  The replicates themselves are
        not included (``save`` keeps them).
        """
        freq = None
        by_block = self.selection_frequency
        if by_block is not None:
            both = pd.concat({b: f.rename("frequency") for b, f in by_block.items()},
                             names=["block", "variable"])
            freq = records(both.to_frame())
        sparsity = self._sparsity
        return {
            "method": self._method, "interval": self._interval, "alpha": self._alpha,
            "n_boot": self.n_boot, "n_failed": self._n_failed, "rank": self.rank,
            "standardize": self._standardize,
            "sparsity": (sparsity if sparsity is None or isinstance(sparsity, dict)
                         else list(sparsity)),
            "max_angle_bound_deg": json_safe(self.max_angle_bound()),
            "conf_int": records(self.conf_int()),
            "gap": {"ratio" if k == "s_r / s_(r+1)" else json_key(k): json_safe(v)
                    for k, v in self.gap.items()},
            "sentences": {b: self.sentence(b) for b in self._keys},
            "selection_frequency": freq,
        }

    def _summary_tables(self, ci: pd.DataFrame) -> list[tuple[Any, ...]]:
        """The summary's tables: the principal angles of each block, the singular
        values with their intervals (two blocks) or the gap by block (K blocks),
        the selection frequencies (sparse fits)."""
        tables: list[tuple[Any, ...]] = []
        # the blocks' names where the fit is known (a two-block fit's a and b)
        names = getattr(getattr(self._results, "model", None), "block_names", None)
        label = (dict(zip(("a", "b"), names or (), strict=False)) if self._ranks is None
                 else {})
        for block in self._keys:
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
        if self._est is not None and self._sv is not None:
            rank = self._est.rank
            sub = ci.loc["singular value"]
            tables.append((
                "singular value",
                pd.DataFrame(
                    {
                        "estimate": self._est.singular_values[:rank],
                        "boot mean": self._sv[:, :rank].mean(axis=0),
                        "lower": sub["lower"].to_numpy(),
                        "upper": sub["upper"].to_numpy(),
                    },
                    index=sub.index,
                ),
                "singular values, intervals",
            ))
        else:
            gap = self.gap_table.drop(columns="trusted").astype(float)
            tables.append(("block", gap, "gap diagnostics by block"))
        if self.selection_frequency is not None:
            for block, freq in self.selection_frequency.items():
                tables.append((f"selection {block}", freq.to_frame(),
                               f"selection frequency, block {block}"))
        return tables

    def _singular_value_note(self, ci: pd.DataFrame) -> str:
        """What the singular values' basic intervals are, and which of them
        exclude their own estimate."""
        est = self._estimate("the singular values' note")
        s_hat = est.singular_values[: est.rank]
        sub = ci.loc["singular value"]
        below = [str(k) for k, hi, s in zip(sub.index, sub["upper"], s_hat, strict=True)
                 if hi < s]
        above = [str(k) for k, lo, s in zip(sub.index, sub["lower"], s_hat, strict=True)
                 if lo > s]
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

    def _summary_info(self) -> dict[str, Any]:
        gap = self.gap
        info: dict[str, Any] = {
            "Method:": f"{self._method} bootstrap",
            "Interval:": self._interval,
            "Gap s_r / s_(r+1):": f"{float(gap['s_r / s_(r+1)']):.3g}",
            "Gap crossing share:": f"{float(gap['crossing share']):.3f}",
            "Replicates:": self.n_boot,
            "Failed replicates:": self._n_failed,
            "Confidence level:": f"{100 * (1 - self._alpha):g}%",
        }
        if self._ranks is None:
            info.update({"Rank:": self.rank, "Standardize:": self._standardize,
                         "Sparsity (s1, s2):": ("none (dense)" if self._sparsity is None
                                                else self._sparsity)})
            return info
        rank = self.rank
        info.update({
            "Rank:": rank if isinstance(rank, int)
            else ", ".join(f"{n} {r}" for n, r in rank.items()),
            "Whitening:": self._whitening,
            "Sparsity:": "none (dense)" if self._sparsity is None
            else ", ".join(f"{n} {s}" for n, s in self._sparsity.items()),
        })
        return info

    def _weak_gap_notes(self) -> list[str]:
        """The weak-gap warnings: the fit's (two blocks) or each block's."""
        if self._ranks is None:
            if self.gap["trusted"]:
                return []
            est = self._estimate("the gap")
            return [
                f"WARNING (weak gap): s_r / s_(r+1) = {float(self.gap['s_r / s_(r+1)']):.2f} "
                f"< {GAP_RATIO_MIN}: directions {est.rank} and {est.rank + 1} are not "
                "separated; the rank-r subspace is poorly determined and its bound is "
                "close to 90 degrees; "
                + gap_advice(est.singular_values, est.rank, GAP_RATIO_MIN) + "."]
        out = []
        for block, row in self.gap_table.iterrows():
            if row["trusted"]:
                continue
            r = self._rank_of(str(block))
            out.append(
                f"WARNING (weak gap), block {block}: s_r / s_(r+1) = "
                f"{float(row['s_r / s_(r+1)']):.2f} < {GAP_RATIO_MIN}: its directions {r} and "
                f"{r + 1} are not separated; its subspace is poorly determined and its bound "
                "is close to 90 degrees; "
                + gap_advice(self._spectrum(str(block))[0], r, GAP_RATIO_MIN) + ".")
        return out

    def summary(self, *, notes: Literal["short", "full"] = "short") -> Summary:
        """A statsmodels ``Summary``: a table per block, the singular values
        (two blocks) or the gap by block (K blocks), selection frequencies
        (sparse fits) and the bounds in words; ``notes="full"`` adds what the
        angles and the intervals are (the guide pages "Reading the summary"
        and "Bootstrap" say it too)."""
        if notes not in ("short", "full"):
            raise ValueError(f'notes must be "short" or "full"; got {notes!r}')
        full = notes == "full"
        alpha = self._alpha
        ci = self.conf_int()
        level = f"{100 * (1 - alpha):g}%"
        tables = self._summary_tables(ci)
        out = [self.sentence(b) for b in self._keys]
        out.append(
            "Angles: principal angles between the replicate's and the full-sample "
            "subspace in each block's covariance metric (free of the units; guide page "
            "'Reading the summary'); the bound on the largest one is the "
            f"{level} upper bound for the angle between the true and the estimated "
            "subspace. Lower/upper: two-sided percentile intervals for the angles."
        )
        if self._est is not None:
            out.append(self._singular_value_note(ci))
        else:
            out.append("K blocks: each block's singular values are the square roots of its "
                       "combined-Gram eigenvalues; the bounds' coverage is measured, not "
                       "derived (theory page 'K blocks', section 5).")
        if self._interval == "calibrated":
            lam = self.calibrated_levels()
            out.append(
                "Calibrated (fast double bootstrap): the bound is the replicate "
                f"quantile at level a={lam['a']:.3f}, b={lam['b']:.3f} instead of "
                f"{1 - alpha:g}."
            )
        out.extend(self._weak_gap_notes())
        if not full:  # what the angles and the intervals are: notes="full"
            out = [n for n in out if not n.startswith("Angles: ")
                   and not (n.startswith("Singular values: ") and "(here: " not in n)]
            out.append("Angles: principal angles in each block's covariance metric (free of "
                       "the units; guide page 'Reading the summary'); what the angles and "
                       "intervals are: summary(notes='full').")
        return build_summary("Bootstrap of the joint dimension reduction", self._summary_info(),
                             tables, out)
