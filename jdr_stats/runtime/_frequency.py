"""How many observations case weights stand for.

The model's ``weights`` are frequency weights: a row of weight ``k`` is
``k`` copies of the row.  Wherever a rule counts observations to judge how
well a covariance is estimated (the OAS shrinkage intensity, the
``whitening="auto"`` ratio of columns per observation), the count is the
total weight when every weight is a whole number, so integer weights and
repeated rows give the same fit.  Weights that are not all whole numbers
have no scale of their own (weights summing to one and the same weights
times a thousand describe the same fit), so there the count stays the
number of rows.  Without weights the count is the number of rows.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["frequency_nobs", "observations", "whitening_nobs", "whole_numbers"]


def whole_numbers(weights: np.ndarray) -> bool:
    """Whether every case weight is a whole number (the weights count
    copies of rows)."""
    w = np.asarray(weights, dtype=float)
    return bool(np.all(w == np.round(w)))


def frequency_nobs(nobs: int, weights: np.ndarray | None) -> int:
    """The number of observations ``nobs`` rows of case ``weights`` stand
    for: their sum when every weight is a whole number, else ``nobs``.

    Examples
    --------
    >>> import numpy as np
    >>> frequency_nobs(3, None), frequency_nobs(3, np.array([1.0, 2.0, 4.0]))
    (3, 7)
    >>> frequency_nobs(3, np.array([0.5, 2.0, 4.0]))
    3
    """
    if weights is None:
        return int(nobs)
    w = np.asarray(weights, dtype=float)
    if w.size != nobs or not np.isfinite(w).all() or not whole_numbers(w):
        return int(nobs)
    total = float(w.sum())
    return int(total) if total >= 1 else int(nobs)


def observations(data: Any) -> int:
    """The number of observations a model's data stand for: its rows, or
    :func:`frequency_nobs` of its case weights (in memory), or the count a
    streamed pass recorded (``frequency_count``: the total weight when every
    weight it read was a whole number)."""
    w = getattr(data, "weights", None)
    if w is not None:
        return frequency_nobs(int(data.nobs), w)
    count = getattr(data, "frequency_count", None)
    return int(data.nobs) if count is None else int(count)


def whitening_nobs(nobs: int, count: int, width: int) -> int:
    """The count ``whitening="auto"`` judges a covariance of ``width``
    columns by: ``count`` (:func:`observations`), but the number of rows
    ``nobs`` when they are too few for a nonsingular sample covariance
    (``nobs < width + 2``): copies of rows add no rank, so such a covariance
    is never well estimated however large the weights.

    Examples
    --------
    >>> whitening_nobs(30, 300, 5), whitening_nobs(6, 60, 5)
    (300, 6)
    """
    return int(nobs) if nobs < width + 2 else int(count)
