"""The out-of-sample measure of :func:`jdr_stats.compare`: K-fold
cross-validation of every variant, refitted on each training fold.

The rows are split at random (seeded) into ``cv`` folds; a categorical
response is split within each class, so every fold holds about its share
of each class.  For each fold every variant is refitted on the other folds
(its directions from the training rows alone), each block's reduced
features ``f_k = (x_k - mean_k) U_k`` are formed with the training means,
and the regressors are those of the in-sample measure: an intercept, every
block's features and the products of every pair of blocks' features
(:func:`jdr_stats.fit_measures.pairwise_design`).

* Numeric response (or multivariate): least squares on the training rows
  predicts the held-out rows; the measure is the cross-validated R-squared
  ``1 - sum SSE / sum SST`` over the folds, each fold's ``SST`` around the
  training mean (summed over the columns of a multivariate response).
  Predicting the training mean scores 0; it is negative where the
  predictions are worse.
* Categorical response: a linear discriminant on the same regressors (the
  training classes' means, their pooled within-class covariance and the
  training class shares as priors) assigns each held-out row a class; the
  measure is the share of held-out rows assigned their own class.

Case weights weight the least squares, the discriminant and both measures.
A variant whose refit fails on a fold has no measure (NaN) and the reason.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..fit_measures import pairwise_design
from ..runtime._validation import check_int, normalize_seed
from ..support._cv import row_folds

__all__ = ["CV_COLUMNS", "check_cv", "cross_validate", "cv_note", "fold_model", "folds"]

#: The column of :attr:`Comparison.fit` holding the out-of-sample measure.
CV_COLUMNS = {"numeric": "cv rsquared", "categorical": "cv accuracy"}

#: A fold's refit: each variant's bases (one per block, in block order)
#: fitted on the training rows, or why it could not be fitted.
FoldFits = Callable[[np.ndarray], Mapping[str, Sequence[np.ndarray] | str]]


def check_cv(cv: object, nobs: int) -> int | None:
    """``cv``: None (no cross-validation) or the folds, at least 2 and at
    most half the rows (two held-out rows a fold)."""
    if cv is None:
        return None
    return check_int(cv, "cv", low=2, high=max(2, nobs // 2),
                     why=f" (at most half the {nobs} rows)", expected="an integer or None")


def folds(m: int, k: int, rng: np.random.Generator,
          codes: np.ndarray | None = None) -> list[np.ndarray]:
    """``k`` folds of the rows ``0 .. m-1`` (sorted indices): a random split,
    or with ``codes`` (each row's class) a split within each class, its rows
    dealt to the folds in turn from a random fold on."""
    if codes is None:
        return row_folds(m, k, rng)
    fold_of = np.empty(m, dtype=np.int64)
    start = 0
    for c in np.unique(codes):
        rows = rng.permutation(np.flatnonzero(codes == c))
        fold_of[rows] = (start + np.arange(rows.size)) % k
        start = (start + rows.size) % k
    return [np.flatnonzero(fold_of == f) for f in range(k)]


def fold_model(model: Any, rows: np.ndarray) -> Any:
    """A copy of ``model`` holding only ``rows`` of its data (in memory);
    the model is not changed.  With covariates the rows stay the model's
    adjusted rows (their residuals on the covariates of all rows)."""
    data = model._data
    adj = getattr(data, "adjustment", None)
    codes = getattr(data, "class_codes", None)
    out = copy.copy(model)
    out._data = replace(
        data, endog=data.endog[rows], blocks={k: x[rows] for k, x in data.blocks.items()},
        weights=None if data.weights is None else data.weights[rows],
        row_index=None, is_pandas=False,
        class_codes=None if codes is None else np.asarray(codes)[rows],
        **({} if adj is None or adj.design is None
           else {"adjustment": replace(adj, design=np.asarray(adj.design)[rows])}))
    return out


def _design(blocks: Sequence[np.ndarray], means: Sequence[np.ndarray],
            bases: Sequence[np.ndarray]) -> np.ndarray:
    """An intercept and :func:`pairwise_design` of the reduced features."""
    feats = [(x - mu) @ np.asarray(u, float) for x, mu, u in zip(blocks, means, bases,
                                                                  strict=True)]
    return np.column_stack([np.ones(blocks[0].shape[0]), pairwise_design(feats)])


def _discriminant(xtr: np.ndarray, ctr: np.ndarray, wtr: np.ndarray,
                  xte: np.ndarray) -> np.ndarray:
    """The classes a linear discriminant trained on ``(xtr, ctr)`` with
    weights ``wtr`` assigns to the rows ``xte`` (the intercept column is
    dropped: a discriminant has its own constants)."""
    xtr, xte = xtr[:, 1:], xte[:, 1:]
    classes = np.unique(ctr)
    shares = np.array([wtr[ctr == c].sum() for c in classes]) / wtr.sum()
    means = np.vstack([np.average(xtr[ctr == c], axis=0, weights=wtr[ctr == c])
                       for c in classes]) if xtr.shape[1] else np.zeros((classes.size, 0))
    if xtr.shape[1] == 0:  # no features: the largest class
        return np.full(xte.shape[0], classes[np.argmax(shares)])
    resid = xtr - means[np.searchsorted(classes, ctr)]
    dof = max(float(wtr.sum()) - classes.size, 1.0)
    within = (resid * wtr[:, None]).T @ resid / dof
    coef = np.linalg.pinv(within, hermitian=True) @ means.T  # p x C
    scores = xte @ coef - 0.5 * np.sum(means.T * coef, axis=0) + np.log(shares)
    return classes[np.argmax(scores, axis=1)]


def cross_validate(fits: FoldFits, y: np.ndarray, blocks: Sequence[np.ndarray], *,
                   weights: np.ndarray | None, codes: np.ndarray | None, k: int,
                   seed: int | np.random.Generator | None,
                   variants: Sequence[str]) -> tuple[pd.Series, dict[str, str]]:
    """Each variant's out-of-sample measure (the module docstring) and why
    a variant has none.

    ``fits(train)`` refits every variant on the training rows ``train``;
    ``y`` is the response as the estimator reads it (``m`` or ``m x q``),
    ``codes`` each row's class for a categorical response (the measure is
    then the accuracy), ``variants`` the rows of the result.
    """
    m = y.shape[0]
    y2 = np.asarray(y, float).reshape(m, -1)
    w = np.ones(m) if weights is None else np.asarray(weights, float)
    xs = [np.asarray(x, float) for x in blocks]
    num = dict.fromkeys(variants, 0.0)
    den = dict.fromkeys(variants, 0.0)
    why: dict[str, str] = {}
    for f, test in enumerate(folds(m, k, normalize_seed(seed), codes)):
        train = np.setdiff1d(np.arange(m), test)
        means = [np.average(x[train], axis=0, weights=w[train]) for x in xs]
        fitted = fits(train)
        for name in variants:
            bases = fitted.get(name, "not fitted")
            if isinstance(bases, str):
                why.setdefault(name, f"fold {f + 1} of {k}: {bases}")
                continue
            xtr = _design([x[train] for x in xs], means, bases)
            xte = _design([x[test] for x in xs], means, bases)
            if codes is not None:
                got = _discriminant(xtr, codes[train], w[train], xte)
                num[name] += float(w[test] @ (got == codes[test]))
                den[name] += float(w[test].sum())
                continue
            sw = np.sqrt(w[train])[:, None]
            beta = np.linalg.lstsq(xtr * sw, y2[train] * sw, rcond=None)[0]
            centre = np.average(y2[train], axis=0, weights=w[train])
            num[name] += float(w[test] @ np.sum((y2[test] - xte @ beta) ** 2, axis=1))
            den[name] += float(w[test] @ np.sum((y2[test] - centre) ** 2, axis=1))
    out = {}
    for name in variants:
        if name in why or den[name] <= 0:
            out[name] = np.nan
        else:
            out[name] = num[name] / den[name] if codes is not None else 1.0 - num[name] / den[name]
    return pd.Series(out, dtype=float), why


def cv_note(column: str, k: int, seed: object, why: Mapping[str, str]) -> str:
    """The comparison's clause on its out-of-sample column (and the variants
    without one, with the reason)."""
    seeded = f"seed {seed}" if isinstance(seed, (int, np.integer)) else "seed given"
    how = (f"each variant refitted on {k - 1} of {k} folds ({seeded}"
           + ("; folds within each class" if column == CV_COLUMNS["categorical"] else "")
           + ") and scored on the other")
    note = (f"{column}: the same regression out of sample, {how}"
            if column == CV_COLUMNS["numeric"] else
            f"{column}: a linear discriminant on the same regressors, out of sample, {how}")
    if why:
        note += "; none for " + "; ".join(f"{n} ({w})" for n, w in why.items())
    return note + "."
