"""Selection rules: Benjamini-Hochberg (or Benjamini-Yekutieli), the threshold rule of section 5.3,
and stability selection (complementary-pairs subsampling of the sparse fit)."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._data import ModelData
from .._estimate import estimate
from .._linalg import block_moments
from ._robust import fdr_qvalues
from ._statistics import BlockStats, Prepared, threshold_scores

__all__ = ["select"]


def select(
    rule: str,
    res_a: BlockStats,
    res_b: BlockStats,
    *,
    data: ModelData,
    prep: Prepared,
    fdr: float,
    rank: int | None,
    standardize: bool,
    threshold: float | None,
    n_subsamples: int,
    stability_threshold: float,
    sparsity: tuple[int, int] | None,
    rng: np.random.Generator,
) -> tuple[dict[str, tuple[Any, ...]], dict[str, Any]]:
    """Q-values, ``selected`` flags and extra columns of each block, and the
    rule's settings: ``({"a": (tests, q, selected, extra), "b": ...}, settings)``."""
    n1, n2 = prep.z_a.shape[1], prep.z_b.shape[1]
    extra_a: dict[str, np.ndarray] = {}
    extra_b: dict[str, np.ndarray] = {}
    fdr_rule = "by" if rule == "by" else "bh"
    q_a, q_b = fdr_qvalues(res_a.pvalue, fdr_rule), fdr_qvalues(res_b.pvalue, fdr_rule)
    sel_a, sel_b = q_a <= fdr, q_b <= fdr  # NaN q-values are never selected
    settings: dict[str, Any] = {}
    if rule == "threshold":
        tau = float(np.sqrt(2 * np.log(n1 * n2))) if threshold is None else float(threshold)
        t = np.abs(threshold_scores(prep))
        extra_a["max_abs_t"] = t.max(axis=1)
        extra_b["max_abs_t"] = t.max(axis=0)
        sel_a, sel_b = extra_a["max_abs_t"] > tau, extra_b["max_abs_t"] > tau
        settings["threshold"] = tau
    elif rule == "stability":
        if sparsity is None:
            sparsity = (
                int(np.clip(sel_a.sum(), rank, n1)), int(np.clip(sel_b.sum(), rank, n2))
            )
        fa, fb = _stability(
            data, rank, sparsity, standardize=standardize,
            n_subsamples=n_subsamples, rng=rng,
        )
        extra_a["frequency"], extra_b["frequency"] = fa, fb
        sel_a, sel_b = fa >= stability_threshold, fb >= stability_threshold
        settings.update(
            n_subsamples=n_subsamples, stability_threshold=stability_threshold,
            sparsity=sparsity,
            pfer_bound=tuple(
                s**2 / ((2 * stability_threshold - 1) * n)
                for s, n in zip(sparsity, (n1, n2))
            ),
        )
    return {"a": (res_a, q_a, sel_a, extra_a), "b": (res_b, q_b, sel_b, extra_b)}, settings


def _stability(
    data: ModelData,
    rank: int,
    sparsity: tuple[int, int],
    *,
    standardize: bool,
    n_subsamples: int,
    rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """Selection frequencies of the sparse estimator over complementary halves."""
    y, a, b = data.endog, data.blocks["exog_a"], data.blocks["exog_b"]
    m = data.nobs
    n1, n2 = a.shape[1], b.shape[1]
    half = m // 2
    need = max(n1, n2) + 2 if standardize else 3
    if half < need:
        raise ValueError(
            f"stability selection fits on halves of the data: {half} rows, need at "
            f"least {need} to whiten the blocks (use rule='bh')"
        )
    freq_a = np.zeros(n1)
    freq_b = np.zeros(n2)
    n_pairs = (n_subsamples + 1) // 2
    done = 0
    for _ in range(n_pairs):
        perm = rng.permutation(m)
        for part in (perm[:half], perm[half : 2 * half]):
            if done == n_subsamples:
                break
            w = np.zeros(m)
            w[part] = 1.0
            est = estimate(
                block_moments(y, a, b, w), rank, standardize=standardize,
                sparsity=sparsity, names_a=data.names["exog_a"],
                names_b=data.names["exog_b"],
            )
            freq_a[est.rows] += 1
            freq_b[est.cols] += 1
            done += 1
    return freq_a / n_subsamples, freq_b / n_subsamples
