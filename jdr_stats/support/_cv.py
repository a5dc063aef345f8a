"""Cross-validated choice of the sparsity ``(s1, s2)`` of the sparse fit
(``fit(sparsity="cv")``; theory page "Support selection", section
"Choosing the sparsity by cross-validation").

The rows are split at random (seeded) into ``K`` folds.  For each fold the
whole estimator runs on the other ``K - 1`` folds: the fit's whitening
(re-estimated on the training rows), the three-step projection at every
candidate ``(s1, s2)`` and the sparse fit of the selected variables.  On
the training rows ``y`` is regressed on the bilinear design of the reduced
features (the regression of the fit's R-squared:
:func:`jdr_stats.fit_measures.bilinear_design`); the regression predicts
the held-out rows from their reduced features.  The criterion is the
out-of-fold R-squared ``1 - SSE / SST`` of the held-out rows (``SST``
around the training mean; summed over the response's columns for ``q > 1``),
averaged over the folds, with the standard error of that mean.  The chosen
pair is the sparsest (fewest ``s1 + s2``) within one standard error of the
best (the one-standard-error rule).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .. import policy
from ..core._linalg import AnyWhitening, BlockMoments, whiten_cross
from ..core._moments_engine import block_moments, response_block_moments
from ..estimation._estimate import (
    _selection_target,
    _sparse_fit,
    block_whitening_pair,
    cross_moments,
)
from ..fit_measures import bilinear_design
from ..policy import Choice
from ..sparse import three_step_projection
from ..whitenings import WHITENING_METHODS

__all__ = ["FoldFit", "SparsityCV", "complementary_halves", "cv_sparsity", "fold_fit", "row_folds",
           "selection_frequencies"]


@dataclass(frozen=True)
class FoldFit:
    """The estimator's pieces on one set of rows that do not depend on the
    sparsity: moments, whitenings and the matrix the projection selects from."""

    mom: BlockMoments
    wa: AnyWhitening | None
    wb: AnyWhitening | None
    target: np.ndarray
    names_a: list[str]
    names_b: list[str]

    def support(self, s1: int, s2: int) -> tuple[np.ndarray, np.ndarray]:
        """The variables the three-step projection keeps at ``(s1, s2)``."""
        proj = three_step_projection(self.target, s1, s2)
        return proj.rows, proj.cols

    def directions(self, rows: np.ndarray, cols: np.ndarray,
                   rank: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Singular values and the directions (original coordinates, zero
        outside ``rows``, ``cols``) of the sparse fit on these variables."""
        s, _, _, dir_a, dir_b = _sparse_fit(self.mom, rows, cols, self.wa, self.wb, rank,
                                            self.names_a, self.names_b)
        return s, dir_a, dir_b


def fold_fit(y: np.ndarray, a: np.ndarray, b: np.ndarray, kind: str,
             names_a: Sequence[str], names_b: Sequence[str]) -> FoldFit:
    """The sparsity-free part of the fit with whitening ``kind`` on the rows
    ``(y, a, b)`` (as :meth:`JointDimReduction.fit` forms it)."""
    names_a, names_b = list(names_a), list(names_b)
    m = y.shape[0]
    needs = WHITENING_METHODS[kind].needs
    lean = needs == "rows" and max(a.shape[1], b.shape[1]) > m and y.ndim == 1
    cov = needs != "centring"
    if lean:
        mom = cross_moments(y, a, b)
    elif y.ndim == 1:
        mom = block_moments(y, a, b, covariances=cov)
    else:
        mom = response_block_moments(y, a, b, covariances=cov)
    pair = block_whitening_pair(kind, mom, names_a, names_b, rows=(a, b))
    wa, wb = (None, None) if pair is None else tuple(pair)
    cross = mom.cross if mom.cross_q is None else mom.cross_q
    if wa is None or wb is None:
        xw = cross
    elif cross.ndim == 3:
        xw = np.stack([whiten_cross(c, wa, wb) for c in cross])
    else:
        xw = whiten_cross(cross, wa, wb)
    target = _selection_target(mom, xw, wa, wb)
    return FoldFit(mom, wa, wb, target, names_a, names_b)


def _features(x: np.ndarray, mean: np.ndarray, d: np.ndarray) -> np.ndarray:
    return (x - mean) @ d


@dataclass(frozen=True)
class SparsityCV:
    """The cross-validation of ``fit(sparsity="cv")``.

    Attributes
    ----------
    table : DataFrame
        One row per candidate: ``s1``, ``s2``, ``cv_rsquared`` (mean
        out-of-fold R-squared over the folds), ``se`` (its standard error),
        ``best`` and ``chosen`` flags.
    chosen : (int, int)
    choice : Choice
        The record for the fit's settings and summary
        (:func:`jdr_stats.policy.sparsity_cv`).
    """

    table: pd.DataFrame
    chosen: tuple[int, int]
    choice: Choice


def row_folds(m: int, k: int, rng: np.random.Generator) -> list[np.ndarray]:
    """``k`` folds of the rows ``0 .. m-1`` (sorted indices) from one random
    permutation, split into parts of sizes differing by at most one."""
    return [np.sort(f) for f in np.array_split(rng.permutation(m), k)]


def cv_sparsity(
    y: np.ndarray, a: np.ndarray, b: np.ndarray, *, rank: int, kind: str,
    names_a: Sequence[str], names_b: Sequence[str], rng: np.random.Generator,
) -> SparsityCV:
    """K-fold cross-validation of the sparsity over the policy's grid
    (:func:`jdr_stats.policy.sparsity_grid`, ``policy.SPARSITY_CV_FOLDS``);
    see the module docstring."""
    m, n1 = a.shape
    n2 = b.shape[1]
    k = policy.SPARSITY_CV_FOLDS
    n_reg = 1 + rank * rank + 2 * rank
    m_train = m - int(np.ceil(m / k))
    if m < 2 * k or m_train < n_reg + 2:
        raise ValueError(
            f'sparsity="cv" needs at least 2 held-out rows in each of {k} folds and '
            f"{n_reg + 2} training rows for the regression on the {n_reg - 1} reduced "
            f"features of rank {rank}; got {m} rows. Give sparsity=(s1, s2)")
    if WHITENING_METHODS[kind].needs == "covariance" and m_train < max(n1, n2) + 2:
        raise ValueError(
            f'sparsity="cv" whitens each training fold ({m_train} rows) with the sample '
            f"covariance, singular for {max(n1, n2)} columns; got whitening=\"{kind}\". Use "
            'whitening="auto" or "shrinkage"')
    grid_a, grid_b = policy.sparsity_grid(n1, rank), policy.sparsity_grid(n2, rank)
    pairs = [(s1, s2) for s1 in grid_a for s2 in grid_b]
    y2 = y.reshape(m, -1)
    scores = np.empty((k, len(pairs)))
    for f, test in enumerate(row_folds(m, k, rng)):
        train = np.setdiff1d(np.arange(m), test)
        ff = fold_fit(y[train], a[train], b[train], kind, names_a, names_b)
        mean_a, mean_b = ff.mom.mean_a, ff.mom.mean_b
        ytr, yte = y2[train], y2[test]
        sst = float(np.sum((yte - ytr.mean(axis=0)) ** 2))
        for j, (s1, s2) in enumerate(pairs):
            rows, cols = ff.support(s1, s2)
            _, da, db = ff.directions(rows, cols, rank)
            xtr = bilinear_design(_features(a[train], mean_a, da),
                                  _features(b[train], mean_b, db))
            xte = bilinear_design(_features(a[test], mean_a, da),
                                  _features(b[test], mean_b, db))
            xtr = np.column_stack([np.ones(len(train)), xtr])
            xte = np.column_stack([np.ones(len(test)), xte])
            beta = np.linalg.lstsq(xtr, ytr, rcond=None)[0]
            sse = float(np.sum((yte - xte @ beta) ** 2))
            scores[f, j] = 1.0 - sse / sst if sst > 0 else np.nan
    mean = np.nanmean(scores, axis=0)
    se = np.nanstd(scores, axis=0, ddof=1) / np.sqrt(np.sum(np.isfinite(scores), axis=0))
    best = int(np.nanargmax(mean))
    near = np.flatnonzero(mean >= mean[best] - se[best])
    sizes = np.array([pairs[j][0] + pairs[j][1] for j in near])
    # the sparsest within one SE; among equally sparse, the higher score
    pick = int(near[np.lexsort((-mean[near], sizes))[0]])
    table = pd.DataFrame({
        "s1": [p[0] for p in pairs], "s2": [p[1] for p in pairs],
        "cv_rsquared": mean, "se": se,
        "best": np.arange(len(pairs)) == best, "chosen": np.arange(len(pairs)) == pick,
    })
    choice = policy.sparsity_cv(pairs[best], pairs[pick], float(mean[best]),
                                float(se[best]), len(pairs), k)
    return SparsityCV(table=table, chosen=pairs[pick], choice=choice)


def selection_frequencies(
    y: np.ndarray, a: np.ndarray, b: np.ndarray, *, rank: int, kind: str,
    sparsity: tuple[int, int], names_a: Sequence[str], names_b: Sequence[str],
    n_sub: int, rng: np.random.Generator,
) -> tuple[np.ndarray, np.ndarray]:
    """How often each variable is selected by the sparse fit at ``sparsity``
    on ``n_sub`` subsamples of ``m // 2`` rows (complementary pairs: the two
    halves of one random split, as stability selection draws them), the
    whitening ``kind`` re-estimated on each half."""
    m = y.shape[0]
    half = m // 2
    if WHITENING_METHODS[kind].needs == "covariance" and half < max(a.shape[1], b.shape[1]) + 2:
        raise ValueError(
            f"selection_stability() whitens each half ({half} rows) with the sample "
            f"covariance, singular for {max(a.shape[1], b.shape[1])} columns; fit with "
            'whitening="auto" or "shrinkage"')
    if half < 3:
        raise ValueError(f"selection_stability() needs at least 6 rows; got {m}")
    freq_a, freq_b = np.zeros(a.shape[1]), np.zeros(b.shape[1])
    for part in complementary_halves(m, n_sub, rng):
        rows, cols = fold_fit(y[part], a[part], b[part], kind, names_a,
                              names_b).support(*sparsity)
        freq_a[rows] += 1
        freq_b[cols] += 1
    return freq_a / n_sub, freq_b / n_sub


def complementary_halves(m: int, n_sub: int, rng: np.random.Generator) -> Iterator[np.ndarray]:
    """``n_sub`` subsamples of ``m // 2`` of ``m`` rows, sorted, drawn as
    complementary pairs: the two halves of one random permutation, then of
    the next (stability selection's subsamples)."""
    half, done = m // 2, 0
    while done < n_sub:
        perm = rng.permutation(m)
        for part in (perm[:half], perm[half:2 * half]):
            if done == n_sub:
                return
            yield np.sort(part)
            done += 1
