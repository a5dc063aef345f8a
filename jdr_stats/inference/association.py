"""The permutation test of no association (``H0: y`` independent of the
blocks, rank 0) with the fit's own whitening: valid at any width.

The rank tests whiten with the sample covariance and refuse where a block is
about as wide as the rows; this test keeps the fit's whitening (shrinkage,
sample, none, across blocks) and permutes the response's rows.  The
whitening of the blocks does not depend on ``y``, so under ``H0`` (rows of
``y`` exchangeable given the blocks and the weights) the statistic of the
permuted data has the same distribution as the observed one: the p-value
``(1 + #{T* >= T}) / (B + 1)`` is exact at any width (theory of rank tests,
section "The test of no association at any width").
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._linalg import AnyWhitening
from ..core.whitening import DesignWhitening
from .hypotheses import TestResult, perm_pvalue

__all__ = ["ASSOCIATION_NULL", "association_stats", "association_test"]

#: The null hypothesis, as the test object and the summary print it.
ASSOCIATION_NULL = "y independent of (a, b) (rank 0: no association)"

#: Largest number of rows for which the m x m kernel of the statistic is formed
#: (above it each permutation forms the whitened cross moment directly).
_KERNEL_MAX_ROWS = 4000


def _whitened_rows(x: np.ndarray, wmap: AnyWhitening | None, mean: np.ndarray) -> np.ndarray:
    return np.asarray(x, float) - mean if wmap is None else wmap.to_white(np.asarray(x, float))


def _standardized_response(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The response's rows centred and whitened under the normalised weights
    ``w`` (``m x q``; a pseudo-inverse for a rank-deficient response)."""
    yc = y - w @ y
    cov = (yc * w[:, None]).T @ yc
    vals, vecs = np.linalg.eigh(cov)
    keep = vals > max(vals.max(), 0.0) * 1e-12
    if not np.any(keep):
        return np.zeros((y.shape[0], 1))
    return yc @ (vecs[:, keep] / np.sqrt(vals[keep]))


class _Statistic:
    """``T(y) = sum_j s_j^2`` of the whitened cross moment of the response
    ``y`` standardised under the weights (a stack over its whitened columns
    for ``q > 1``), the blocks' whitened rows held fixed."""

    def __init__(self, aw: np.ndarray, bw: np.ndarray, w: np.ndarray) -> None:
        self.w = w
        self.aw, self.bw = aw, bw
        m = aw.shape[0]
        # ||sum_i w_i z_i a_i b_i^T||_F^2 = (w z)^T (Ga o Gb) (w z)
        self.kernel = (aw @ aw.T) * (bw @ bw.T) if m <= _KERNEL_MAX_ROWS else None

    def __call__(self, y: np.ndarray) -> float:
        wz = _standardized_response(y, self.w) * self.w[:, None]
        if self.kernel is not None:
            return float(np.sum(wz * (self.kernel @ wz)))
        total = 0.0
        for c in range(wz.shape[1]):
            total += float(np.sum((self.aw.T @ (self.bw * wz[:, c:c + 1])) ** 2))
        return total


def association_stats(
    y: np.ndarray,
    a: np.ndarray,
    b: np.ndarray,
    whitening: DesignWhitening[AnyWhitening] | None,
    *,
    weights: np.ndarray | None = None,
    n_perm: int = 0,
    rng: np.random.Generator | None = None,
) -> tuple[float, np.ndarray]:
    """The observed statistic and ``n_perm`` statistics of permuted responses.

    ``y`` (``m`` or ``m x q``), ``a``, ``b``: the rows the estimator saw;
    ``whitening``: the fit's block whitenings (None: the blocks centred only).
    """
    y2 = np.asarray(y, float).reshape(len(y), -1)
    m = y2.shape[0]
    w = np.full(m, 1.0 / m) if weights is None else np.asarray(weights, float) / np.sum(weights)
    wa, wb = (None, None) if whitening is None else tuple(whitening)
    aw = _whitened_rows(a, wa, w @ np.asarray(a, float))
    bw = _whitened_rows(b, wb, w @ np.asarray(b, float))
    stat = _Statistic(aw, bw, w)
    observed = stat(y2)
    if n_perm == 0:
        return observed, np.empty(0)
    rng = np.random.default_rng(rng)
    null = np.empty(n_perm)
    for j in range(n_perm):
        null[j] = stat(y2[rng.permutation(m)])
    return observed, null


def association_test(
    data: Any,
    whitening: DesignWhitening[AnyWhitening] | None,
    *,
    n_perm: int = 199,
    seed: int | np.random.Generator | None = None,
    whitening_name: str = "",
) -> TestResult:
    """The permutation test of no association; see
    :meth:`jdr_stats.results.JDRResults.association_test`."""
    if isinstance(n_perm, bool) or not isinstance(n_perm, (int, np.integer)) or n_perm < 1:
        raise ValueError(f"n_perm must be a positive integer; got {n_perm!r}")
    if getattr(getattr(data, "adjustment", None), "p", 0):
        raise ValueError(
            "association_test() does not run with covariates: permuting the response's "
            "residuals on the covariates is not exact (the residuals are not exchangeable); "
            "fit without covariates to test the association of y with the blocks, or use "
            "rank_tests() (at n >= m, whose permutation test permutes residuals, an "
            "approximation)")
    y, a, b, weights = data.rows("association_test()", weights=True)
    obs, null = association_stats(y, a, b, whitening, weights=weights, n_perm=int(n_perm),
                                  rng=np.random.default_rng(seed))
    # rounding: a permuted statistic equal to T up to 1e-10 counts as >= T
    pv = float(perm_pvalue(obs * (1 - 1e-10), null))
    return TestResult(
        statistic=obs, df=None, pvalue=pv, null=ASSOCIATION_NULL,
        distribution=f"permutation ({int(n_perm)} permutations)", method="association",
        name="Test of no association" + (f" ({whitening_name} whitening)"
                                          if whitening_name else ""),
    )
