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

import numpy as np

__all__ = ["frequency_nobs"]


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
    if w.size != nobs or not np.isfinite(w).all() or not np.all(w == np.round(w)):
        return int(nobs)
    total = float(w.sum())
    return int(total) if total >= 1 else int(nobs)


def whitening_nobs(nobs: int, weights: np.ndarray | None, width: int) -> int:
    """The count ``whitening="auto"`` judges a covariance of ``width``
    columns by: :func:`frequency_nobs`, but the number of rows when the rows
    are too few for a nonsingular sample covariance (``nobs < width + 2``):
    copies of rows add no rank, so such a covariance is never well
    estimated however large the weights.

    Examples
    --------
    >>> import numpy as np
    >>> whitening_nobs(30, np.full(30, 10.0), 5), whitening_nobs(6, np.full(6, 10.0), 5)
    (300, 6)
    """
    return int(nobs) if nobs < width + 2 else frequency_nobs(nobs, weights)
