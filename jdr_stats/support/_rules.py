"""Selection rules: Benjamini-Hochberg (or Benjamini-Yekutieli), the threshold rule of section 5.3,
and stability selection (complementary-pairs subsampling of the sparse fit)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

import numpy as np

from ..core._linalg import block_moments
from ..core._moments_engine import response_block_moments
from ..estimation._estimate import estimate
from ..inference.hypotheses import fdr_qvalues
from ..io._data import RowsData
from ..resampling._progress import ProgressArg, progress_bar, progress_forwarder, run_batches
from ._options import SelectionRule, Stability, Threshold, clip_counts, rule_q
from ._statistics import CoordinateTests, Prepared, threshold_scores

__all__ = ["select"]


def select(
    rule: SelectionRule,
    res_a: CoordinateTests,
    res_b: CoordinateTests,
    *,
    data: RowsData,
    prep: Callable[[], Prepared],
    rank: int | None,
    standardize: bool,
    rng: np.random.Generator,
    progress: ProgressArg = False,
    n_jobs: int | None = None,
) -> tuple[dict[str, tuple[Any, ...]], dict[str, Any]]:
    """Q-values, ``selected`` flags and extra columns of each block, and the
    rule's settings: ``({"a": (tests, q, selected, extra), "b": ...}, settings)``.

    The q-values are Benjamini-Hochberg (Benjamini-Yekutieli for
    ``FDR(procedure="by")``) whatever the rule; the FDR rule selects by them.
    """
    n1, n2 = len(res_a.pvalue), len(res_b.pvalue)
    extra_a: dict[str, np.ndarray] = {}
    extra_b: dict[str, np.ndarray] = {}
    q_level = rule_q(rule)
    fdr_rule: Literal["bh", "by"] = "by" if rule.name == "by" else "bh"
    q_a, q_b = fdr_qvalues(res_a.pvalue, fdr_rule), fdr_qvalues(res_b.pvalue, fdr_rule)
    sel_a, sel_b = q_a <= q_level, q_b <= q_level  # NaN q-values are never selected
    settings: dict[str, Any] = {}
    if isinstance(rule, Threshold):
        # (q, n1, n2) entries for a response of q columns: the unfoldings' rows
        t = np.abs(threshold_scores(prep())).reshape(-1, n1, n2)
        n_entries = t.size
        tau = float(np.sqrt(2 * np.log(n_entries))) if rule.value is None else float(rule.value)
        extra_a["max_abs_t"] = t.max(axis=(0, 2))
        extra_b["max_abs_t"] = t.max(axis=(0, 1))
        sel_a, sel_b = extra_a["max_abs_t"] > tau, extra_b["max_abs_t"] > tau
        settings["threshold"] = tau
    elif isinstance(rule, Stability):
        assert rank is not None  # checked by select_support
        sparsity = rule.sparsity
        if sparsity is None:
            sparsity = clip_counts((int(sel_a.sum()), int(sel_b.sum())), rank, (n1, n2))
        fa, fb = _stability(
            data, rank, sparsity, standardize=standardize,
            n_subsamples=rule.n_subsamples, rng=rng, progress=progress, n_jobs=n_jobs,
        )
        extra_a["frequency"], extra_b["frequency"] = fa, fb
        sel_a, sel_b = fa >= rule.threshold, fb >= rule.threshold
        settings.update(
            n_subsamples=rule.n_subsamples, stability_threshold=rule.threshold,
            sparsity=sparsity,
            pfer_bound=tuple(
                s**2 / ((2 * rule.threshold - 1) * n)
                for s, n in zip(sparsity, (n1, n2), strict=True)
            ),
        )
    return {"a": (res_a, q_a, sel_a, extra_a), "b": (res_b, q_b, sel_b, extra_b)}, settings


class _StabilityBatch:
    """``batch(rngs)``: the variables the sparse fit selects on each half of
    ``len(rngs)`` random complementary splits, split ``j`` drawn with
    ``rngs[j]`` (picklable, for joblib)."""

    def __init__(self, data: RowsData, rank: int, sparsity: tuple[int, int],
                 standardize: bool) -> None:
        # the selections are invariant to the response's unit
        self.y, self.a, self.b = data.rows("stability selection", unit=True)
        self.names_a, self.names_b = data.names["exog_a"], data.names["exog_b"]
        self.rank, self.sparsity, self.standardize = rank, sparsity, standardize

    def __call__(self, rngs: list[np.random.Generator]) -> tuple[np.ndarray, np.ndarray]:
        n_pairs = len(rngs)
        m = self.y.shape[0]
        half = m // 2
        sel_a = np.zeros((2 * n_pairs, self.a.shape[1]), dtype=bool)
        sel_b = np.zeros((2 * n_pairs, self.b.shape[1]), dtype=bool)
        for j, g in enumerate(rngs):
            perm = g.permutation(m)
            for h, part in enumerate((perm[:half], perm[half : 2 * half])):
                w = np.zeros(m)
                w[part] = 1.0
                mom = (block_moments(self.y, self.a, self.b, w) if self.y.ndim == 1
                       else response_block_moments(self.y, self.a, self.b, w))
                est = estimate(
                    mom, self.rank,
                    standardize=self.standardize, sparsity=self.sparsity,
                    names_a=self.names_a, names_b=self.names_b,
                )
                sel_a[2 * j + h, est.rows] = True
                sel_b[2 * j + h, est.cols] = True
        return sel_a, sel_b


#: Complementary pairs of half-samples per batch of stability selection.
_PAIRS_PER_BATCH = 5


def _stability(
    data: RowsData,
    rank: int,
    sparsity: tuple[int, int],
    *,
    standardize: bool,
    n_subsamples: int,
    rng: np.random.Generator,
    progress: ProgressArg = False,
    n_jobs: int | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """Selection frequencies of the sparse estimator over complementary halves.

    Each pair of halves is drawn from its own child of a ``SeedSequence``
    seeded from ``rng`` (batches of :data:`_PAIRS_PER_BATCH` pairs), so the
    frequencies depend neither on the batches nor on ``n_jobs``.
    """
    m = data.nobs
    n1, n2 = len(data.exog_names_a), len(data.exog_names_b)
    half = m // 2
    need = max(n1, n2) + 2 if standardize else 3
    if half < need:
        raise ValueError(
            f"stability selection fits on halves of the data: {half} rows, need at "
            f"least {need} to whiten the blocks (use rule='bh')"
        )
    n_pairs = (n_subsamples + 1) // 2
    with progress_bar(progress, n_subsamples, "stability selection") as update:
        # run_batches counts pairs of halves; the bar counts subsamples
        forward = progress_forwarder(update, scale=2, cap=n_subsamples)
        parts = run_batches(
            _StabilityBatch(data, rank, sparsity, standardize), n_pairs, seed=rng,
            batch_size=_PAIRS_PER_BATCH, n_jobs=n_jobs,
            progress=forward if progress else False,
        )
    sel_a = np.concatenate([p[0] for p in parts])[:n_subsamples]
    sel_b = np.concatenate([p[1] for p in parts])[:n_subsamples]
    return sel_a.mean(axis=0), sel_b.mean(axis=0)
