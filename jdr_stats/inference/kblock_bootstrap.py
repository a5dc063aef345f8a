"""The bootstrap of a K-block fit: resamples, and the results.

The fit refits itself on every resample (the caller's callable); this
module draws the resamples and summarises the replicates.

Resamples
    ``method="pairs"``: ``m`` rows drawn with replacement per replicate, one
    index vector after another from the generator of ``seed``;
    ``method="poisson"``: each row repeated ``w_bi`` times, the weights
    (mean 1, variance 1) of the resampling engine's Poisson bootstrap
    (:func:`jdr_stats.resampling._engine.poisson_weights`, each block of
    ``policy.BLOCK_ROWS`` rows from its own stream).  Either is drawn in
    full before any refit, so ``n_jobs`` processes refit the same resamples
    and give the same numbers as one.
Results
    By block, the median and the ``level`` percentile of the largest
    principal angle between the re-estimates and the estimate, percentile
    intervals of every principal angle at ``level``, and the gap
    diagnostics of each block's combined Gram.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd

from .. import policy
from ..persistence._export import ExportMixin
from ..resampling._engine import draw_entropy, poisson_weights
from ..runtime._validation import normalize_seed
from ..summary import JDRSummary, build_summary
from ._boot_results import GAP_RATIO_MIN

__all__ = ["KBLOCK_BOOT_METHODS", "KBlockBootstrapResults", "draw_resamples"]

KBlockBootMethod = Literal["pairs", "poisson"]
KBLOCK_BOOT_METHODS: tuple[str, ...] = ("pairs", "poisson")


def draw_resamples(method: str, m: int, n_boot: int,
                   seed: int | np.random.Generator | None) -> list[np.ndarray]:
    """Each replicate's row indices (module docstring).

    Examples
    --------
    >>> a = draw_resamples("poisson", 50, 3, 1)
    >>> b = draw_resamples("poisson", 50, 3, 1)
    >>> all(bool(np.array_equal(x, y)) for x, y in zip(a, b)), len(a)
    (True, 3)
    """
    if method == "pairs":
        rng = np.random.default_rng(normalize_seed(seed))
        return [rng.integers(0, m, size=m) for _ in range(n_boot)]
    entropy = draw_entropy(seed, 4)
    rows = int(policy.BLOCK_ROWS)
    weights = np.empty((n_boot, m), dtype=np.int64)
    for block in range(-(-m // rows)):
        lo, hi = block * rows, min(m, (block + 1) * rows)
        weights[:, lo:hi] = poisson_weights(entropy, block, n_boot)[:, :hi - lo]
    base = np.arange(m)
    return [np.repeat(base, w) for w in weights]


class KBlockBootstrapResults(ExportMixin):
    """The bootstrap of a K-block fit (``KBlockResults.bootstrap``).

    ``table``: by block, the ``median`` and the ``upper`` (``level``)
    percentile of the largest principal angle, in degrees, between the
    re-estimates and the estimate; ``intervals``: by ``(block, parameter)``
    the bound ``[0, upper]`` on the largest angle and the two-sided
    percentile interval (``lower``, ``upper``) of each principal angle at
    ``level``; ``angles``: each block's replicate angles (degrees,
    ``n_boot x r_k``, NaN for a failed replicate); ``gap``: the gap
    diagnostics by block.  Coverage is measured, not derived (theory page
    "K blocks", section 5; ``studies/check_kblock_bootstrap.py``).
    """

    def __init__(self, table: pd.DataFrame, *, n_boot: int, level: float,
                 method: str = "pairs", angles: Mapping[str, np.ndarray] | None = None,
                 eigenvalues: Mapping[str, np.ndarray] | None = None,
                 fit_eigenvalues: Mapping[str, np.ndarray] | None = None,
                 ranks: Mapping[str, int] | None = None, n_failed: int = 0) -> None:
        self._table = table
        self._n_boot = n_boot
        self._level = level
        self._method = method
        self._angles = {n: np.asarray(a, float) for n, a in (angles or {}).items()}
        self._eig = {n: np.asarray(a, float) for n, a in (eigenvalues or {}).items()}
        self._fit_eig = {n: np.asarray(a, float) for n, a in (fit_eigenvalues or {}).items()}
        self._ranks = dict(ranks or {})
        self._n_failed = int(n_failed)

    @classmethod
    def from_replicates(cls, angles: Mapping[str, np.ndarray],
                        eigenvalues: Mapping[str, np.ndarray],
                        fit_eigenvalues: Mapping[str, np.ndarray], ranks: Mapping[str, int],
                        *, level: float, method: str) -> KBlockBootstrapResults:
        """The results from each block's replicate angles (degrees, NaN rows
        failed) and combined-Gram eigenvalues."""
        names = list(angles)
        ok = ~np.any(np.isnan(np.hstack([angles[n] for n in names])), axis=1)
        largest = np.column_stack([angles[n][ok].max(axis=1) for n in names])
        table = pd.DataFrame({"median": np.median(largest, axis=0),
                              "upper": np.quantile(largest, level, axis=0)},
                             index=pd.Index(names, name="block"))
        return cls(table, n_boot=int(ok.size), level=float(level), method=method,
                   angles=angles, eigenvalues=eigenvalues, fit_eigenvalues=fit_eigenvalues,
                   ranks=ranks, n_failed=int(np.sum(~ok)))

    @property
    def table(self) -> pd.DataFrame:
        return self._table.copy()

    @property
    def n_boot(self) -> int:
        return self._n_boot

    @property
    def n_failed(self) -> int:
        """Replicates whose refit failed (their angles NaN, left out)."""
        return self._n_failed

    @property
    def level(self) -> float:
        return self._level

    @property
    def method(self) -> str:
        return self._method

    @property
    def angles(self) -> dict[str, np.ndarray]:
        """Each block's replicate principal angles (degrees, ascending)."""
        return {n: a.copy() for n, a in self._angles.items()}

    def _ok(self) -> np.ndarray:
        return ~np.any(np.isnan(np.hstack(list(self._angles.values()))), axis=1)

    @property
    def intervals(self) -> pd.DataFrame:
        """Rows ``(block, "largest angle")``: ``[0, upper]`` (the table's
        bound), and ``(block, "angle k")``: the ``(1 - level) / 2`` and
        ``(1 + level) / 2`` percentiles of the ``k``-th principal angle,
        degrees; columns ``lower``, ``upper``."""
        if not self._angles:
            raise ValueError("intervals: these results hold no replicate angles")
        ok = self._ok()
        lo_q, hi_q = (1 - self._level) / 2, (1 + self._level) / 2
        idx, rows = [], []
        for n, ang in self._angles.items():
            idx.append((n, "largest angle"))
            rows.append((0.0, float(self._table["upper"].to_numpy()[list(self._table.index)
                                                                   .index(n)])))
            for k in range(ang.shape[1]):
                idx.append((n, f"angle {k + 1}"))
                rows.append((float(np.quantile(ang[ok, k], lo_q)),
                             float(np.quantile(ang[ok, k], hi_q))))
        return pd.DataFrame(rows, columns=["lower", "upper"],
                            index=pd.MultiIndex.from_tuples(idx, names=["block", "parameter"]))

    @property
    def gap(self) -> pd.DataFrame:
        """By block: ``gap ratio`` ``sqrt(l_r / l_(r+1))`` of the fit's
        combined-Gram eigenvalues (the two-block ``s_r / s_(r+1)``; inf when
        ``r`` is the block's width), ``crossing share`` (the replicates whose
        ``r``-th eigenvalue is below the fit's ``(r+1)``-th), the median
        largest angle, the share of replicates above 45 degrees and
        ``trusted`` (gap ratio at least ``GAP_RATIO_MIN``, the two-block rule)."""
        if not self._angles:
            raise ValueError("gap: these results hold no replicate eigenvalues")
        ok = self._ok()
        out = {}
        for n, ang in self._angles.items():
            r, lam, boot = self._ranks[n], self._fit_eig[n], self._eig[n][ok]
            if r >= lam.size or lam[r] <= 0:
                ratio, cross = float("inf"), 0.0
            else:
                ratio = float(np.sqrt(max(lam[r - 1], 0.0) / lam[r]))
                cross = float(np.mean(boot[:, r - 1] < lam[r]))
            big = ang[ok].max(axis=1)
            out[n] = {"gap ratio": ratio, "crossing share": cross,
                      "median largest angle": float(np.median(big)),
                      "share above 45 deg": float(np.mean(big > 45.0)),
                      "trusted": bool(ratio >= GAP_RATIO_MIN)}
        return pd.DataFrame.from_dict(out, orient="index").rename_axis("block")

    def summary(self) -> JDRSummary:
        tab = self._table.rename(columns={"median": "median angle (deg)",
                                          "upper": f"{self._level:.0%} bound (deg)"})
        tables: list[tuple[str, pd.DataFrame, str]] = [("block", tab, "largest principal angle")]
        rows = "resampled" if self._method == "pairs" else "given Poisson weights"
        notes = [("Largest principal angle between each block's re-estimated and estimated "
                  f"subspace, rows {rows}"
                  " and the fit repeated with the same ranks and settings; percentile bounds, "
                  "their coverage measured in studies/check_kblock_bootstrap.py, not derived.")]
        if self._angles:
            gap = self.gap
            tables.append(("block", gap.drop(columns="trusted").astype(float),
                           "gap diagnostics"))
            weak = [str(n) for n, t in gap["trusted"].items() if not t]
            if weak:
                notes.append(f"WARNING (weak gap): block(s) {', '.join(weak)} have a gap ratio "
                             f"below {GAP_RATIO_MIN}: the bounds of their subspaces are not "
                             "trusted.")
        return build_summary(
            "Bootstrap of the K-block fit",
            {"Replicates:": str(self._n_boot), "Level:": f"{self._level:g}",
             "Resampling:": "pairs (rows)" if self._method == "pairs" else "Poisson weights",
             "Failed:": str(self._n_failed)},
            tables, notes, float_format="%.2f")

    def __str__(self) -> str:
        return str(self.summary())

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "n_boot": self._n_boot, "level": self._level, "method": self._method,
            "n_failed": self._n_failed,
            "blocks": {n: {"median": float(r["median"]), "upper": float(r["upper"])}
                       for n, r in self._table.iterrows()}}
        if self._angles:
            iv = self.intervals
            out["intervals"] = {f"{b}: {p}": [float(lo), float(hi)] for (b, p), lo, hi
                                in zip(iv.index, iv["lower"], iv["upper"], strict=True)}
            out["gap"] = {str(n): {k: (bool(v) if k == "trusted" else float(v))
                                   for k, v in row.items()}
                          for n, row in self.gap.iterrows()}
        return out
