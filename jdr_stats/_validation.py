"""Checks of scalar options: choices, counts, levels, booleans, seeds.

The one place where an option of a public function is validated.  The rule
everywhere: a value of the wrong *type* raises ``TypeError``, a
value of the right type but out of range raises ``ValueError``; the message
names the argument and the value received.  This module is at the bottom of
the package's layers: it imports nothing from the package.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

import numpy as np

__all__ = [
    "check_choice",
    "check_int",
    "check_fraction",
    "check_positive",
    "check_bool",
    "normalize_seed",
    "check_fit_rows",
    "check_rows_for_whitening",
]

_S = TypeVar("_S", bound=str)


def check_choice(value: object, name: str, choices: Sequence[_S]) -> _S:
    """``value`` if it is one of ``choices`` (strings), else ``ValueError``.

    Examples
    --------
    >>> check_choice("chi2", "method", ("chi2", "permutation"))
    'chi2'
    """
    if not isinstance(value, str) or value not in choices:
        raise ValueError(f"{name} must be one of {tuple(choices)}; got {value!r}")
    return value  # type: ignore[return-value]


def _is_int(value: object) -> bool:
    return not isinstance(value, (bool, np.bool_)) and isinstance(value, (int, np.integer))


def check_int(
    value: object, name: str, *, low: int | None = None, high: int | None = None,
    why: str = "", expected: str = "an integer",
) -> int:
    """An integer in ``[low, high]`` (either bound optional).

    ``TypeError`` for a non-integer (``bool`` included), ``ValueError`` out
    of range; ``why`` is appended to the range message (e.g. the width of
    the block that sets the bound); ``expected`` words the type message
    when the option takes more than integers (``'a positive integer or
    "auto"'``).

    Examples
    --------
    >>> check_int(5, "n_perm", low=1)
    5
    >>> check_int(2.0, "rank", expected='a positive integer or "auto"')
    Traceback (most recent call last):
    TypeError: rank must be a positive integer or "auto"; got 2.0
    """
    if not _is_int(value):
        raise TypeError(f"{name} must be {expected}; got {value!r}")
    v = int(value)  # type: ignore[call-overload]
    if low is not None and high is not None and not low <= v <= high:
        raise ValueError(f"{name} must be between {low} and {high}{why}; got {v}")
    if low is not None and v < low:
        raise ValueError(f"{name} must be at least {low}{why}; got {v}")
    if high is not None and v > high:
        raise ValueError(f"{name} must be at most {high}{why}; got {v}")
    return v


def check_fraction(
    value: object, name: str, *, low: float = 0.0, high: float = 1.0
) -> float:
    """A level, rate or threshold strictly between ``low`` and ``high``.

    Examples
    --------
    >>> check_fraction(0.05, "alpha")
    0.05
    """
    numeric = isinstance(value, (int, float, np.integer, np.floating))
    if isinstance(value, (bool, np.bool_)) or not numeric:
        raise TypeError(
            f"{name} must be a number strictly between {low} and {high}; got {value!r}"
        )
    if not low < float(value) < high:  # type: ignore[arg-type]
        raise ValueError(f"{name} must be strictly between {low} and {high}; got {value!r}")
    return float(value)  # type: ignore[arg-type]


def check_positive(value: object, name: str) -> float:
    """A finite number greater than zero."""
    if isinstance(value, (bool, np.bool_)) or not isinstance(
        value, (int, float, np.integer, np.floating)
    ):
        raise TypeError(f"{name} must be a positive number; got {value!r}")
    number = float(value)
    if not (np.isfinite(number) and number > 0):
        raise ValueError(f"{name} must be a positive number; got {value!r}")
    return number


def check_bool(value: object, name: str) -> bool:
    """``True`` or ``False`` (numpy booleans accepted)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False; got {value!r}")
    return bool(value)


def normalize_seed(seed: int | np.random.Generator | None) -> np.random.Generator:
    """The one place where a ``seed`` argument becomes a Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or _is_int(seed):
        return np.random.default_rng(seed)
    raise TypeError(
        f"seed must be an int, a numpy Generator or None; got {type(seed).__name__}"
    )


def check_fit_rows(nobs: int, rank: int) -> None:
    """At least ``2 (rank + 1)^2`` rows for a fit of rank ``rank``.

    The fit's R-squared regresses ``y`` on ``k = r^2 + 2r`` terms; for a
    response unrelated to the blocks its expected value is ``k / (m - 1)``,
    below 1/2 only from ``m = 2k + 2 = 2 (r + 1)^2`` rows on
    (``JointDimReduction.fit``, Raises).
    """
    k = rank * rank + 2 * rank
    need = 2 * (rank + 1) ** 2
    if nobs < need:
        raise ValueError(
            f"too few rows for a rank-{rank} fit: got {nobs} observations, need at least "
            f"{need} = 2 (rank + 1)^2; the fit's R-squared regresses y on {k} terms "
            f"(the {2 * rank} reduced features and their products), and on {nobs} rows "
            f"noise alone gives it an expected value of {k / max(nobs - 1, 1):.2g}, so "
            "nothing the fit reports would be distinguishable from noise"
            + ("; fit a smaller rank or collect more rows" if rank > 1
               else "; collect more rows")
        )


def check_rows_for_whitening(nobs: int, widths: dict[str, int]) -> None:
    """Enough rows for every block's sample covariance to be nonsingular.

    ``widths`` maps the argument name of each block to its number of
    columns; a block of ``n`` columns needs ``n + 2`` rows.
    """
    for arg, n in widths.items():
        if nobs < n + 2:
            raise ValueError(
                f"too few rows to whiten {arg} with its sample covariance (the coordinate "
                f"tests do): got {nobs} observations for {n} columns, need at least "
                f"{n + 2}; test at most {max(nobs - 2, 0)} columns per block (for example "
                "the variables of a sparse fit, on a held-out half of the rows), or fit "
                "with sparsity=(s1, s2) without the tests"
            )
