"""Checks of scalar options: choices, counts, levels, booleans, seeds.

The one place where an option of a public function is validated.  The rule
everywhere: a value of the wrong *type* raises ``TypeError``, a
value of the right type but out of range raises ``ValueError``; the message
names the argument and the value received.  This module is at the bottom of
the package's layers: it imports nothing from the package.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TypeVar

import numpy as np

__all__ = [
    "by_block",
    "check_choice",
    "check_int",
    "check_fraction",
    "check_positive",
    "check_bool",
    "normalize_seed",
    "child_seeds",
    "check_real",
    "check_weights_shape",
    "check_weights_values",
    "check_memory",
    "check_fit_rows",
    "check_rows_for_whitening",
    "check_block_names",
    "named_blocks",
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


def normalize_seed(
    seed: int | np.random.Generator | None, name: str = "seed"
) -> np.random.Generator:
    """The one place where a ``seed`` argument becomes a Generator.

    ``TypeError`` for anything but a nonnegative integer, a Generator or
    None, ``ValueError`` for a negative integer (numpy's seeding takes
    none); the messages name the argument ``name`` (a command-line flag
    such as ``"--seed"`` is told it takes an integer).

    Examples
    --------
    >>> normalize_seed(-1)
    Traceback (most recent call last):
    ValueError: seed must be a nonnegative integer, a numpy Generator or None; got seed=-1
    """
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, (bool, np.bool_)):
        value = int(seed)
        if value < 0:
            if name.startswith("--"):  # a command-line flag takes integers only
                raise ValueError(f"{name} must be a nonnegative integer; got {value}")
            raise ValueError(
                f"{name} must be a nonnegative integer, a numpy Generator or None; "
                f"got {name}={value}"
            )
        return np.random.default_rng(value)
    raise TypeError(
        f"{name} must be a nonnegative integer, a numpy Generator or None; got "
        f"{name}={seed!r} ({type(seed).__name__})"
    )


def _has_complex_dtype(x: object) -> bool:
    """Whether ``x`` (an array, a Series, a data frame, a dask collection or
    a nested sequence) holds complex numbers, from its dtype(s) alone where
    it has them."""
    dtypes = getattr(x, "dtypes", None) if hasattr(x, "columns") else None
    if dtypes is not None:  # a data frame (pandas or dask): one dtype per column
        if isinstance(dtypes, np.dtype):  # a series that answers to .columns (dask)
            return dtypes.kind == "c"
        return any(getattr(d, "kind", "") == "c" for d in dtypes)
    dtype = getattr(x, "dtype", None)
    if dtype is not None:
        return getattr(dtype, "kind", "") == "c"
    if isinstance(x, (list, tuple)):
        try:
            return np.asarray(x).dtype.kind == "c"
        except (TypeError, ValueError):  # ragged: the conversion names it
            return False
    return isinstance(x, complex)


def check_real(x: object, name: str) -> None:
    """``TypeError`` when ``x`` holds complex numbers.

    Converting them to float would silently drop their imaginary parts.

    Examples
    --------
    >>> check_real(np.array([1.0, 2.0]), "endog")
    >>> check_real(np.array([1 + 2j]), "exog_a")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    TypeError: exog_a holds complex numbers (dtype complex128); the model takes real ...
    """
    if _has_complex_dtype(x):
        dtypes = getattr(x, "dtypes", None) if hasattr(x, "columns") else None
        shown = (sorted({str(d) for d in dtypes if getattr(d, "kind", "") == "c"})
                 if dtypes is not None
                 else [str(getattr(x, "dtype", "complex"))])
        raise TypeError(
            f"{name} holds complex numbers (dtype {', '.join(shown)}); the model takes "
            "real numbers: pass the real part (x.real), the modulus (abs(x)) or both "
            "as columns"
        )


def check_weights_shape(w: np.ndarray, name: str = "weights") -> np.ndarray:
    """Case weights as a 1-D array: shape ``(m,)``, or ``(m, 1)`` (one column).

    Any other shape is a ``ValueError``: flattening a ``(m/2, 2)`` array
    would pair the weights with the wrong rows.

    Examples
    --------
    >>> check_weights_shape(np.ones((3, 1))).shape
    (3,)
    >>> check_weights_shape(np.ones((2, 2)))
    Traceback (most recent call last):
    ValueError: weights must be one-dimensional (one weight per row); got an array of shape (2, 2)
    """
    if w.ndim == 2 and w.shape[1] == 1:
        return w[:, 0]
    if w.ndim != 1:
        raise ValueError(
            f"{name} must be one-dimensional (one weight per row); got an array of shape "
            f"{w.shape}"
        )
    return w


def check_weights_values(w: np.ndarray, row0: int = 0, name: str = "weights") -> None:
    """Frequency weights must be positive: the one rule of every path.

    Applied to the weights in memory (``row0 = 0``) and to each chunk of a
    stream (``row0``: the chunk's first row), so the same data are accepted
    or refused alike.  A weight of zero is refused, not read as a dropped
    row: a row that does not count is removed from the data (the number of
    observations and the row checks count rows).  NaN are not checked here
    (the missing-value policy handles them).

    Examples
    --------
    >>> check_weights_values(np.array([1.0, 0.0, 2.0]), row0=10)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: weights must be positive (frequency weights; remove a row rather than ...
    """
    bad = w <= 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"{name} must be positive (frequency weights; remove a row rather than give it "
            f"weight 0); got {float(w[i])!r} in row {row0 + i}"
        )


def check_memory(nbytes: float, limit: float, name: str, value: object, what: str) -> None:
    """``ValueError`` naming ``name=value`` when ``what`` would hold more than
    ``limit`` bytes (``nbytes``, estimated before anything is allocated).

    Examples
    --------
    >>> what = "the bootstrap's replicates"
    >>> check_memory(45 * 2**30, 16 * 2**30, "n_boot", 10**9, what)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ValueError: n_boot=1000000000 needs about 45.0 GiB for the bootstrap's replicates, ...
    """
    if nbytes > limit:
        raise ValueError(
            f"{name}={value!r} needs about {nbytes / 2**30:.1f} GiB for {what}, more than "
            f"the {limit / 2**30:.1f} GiB of memory available "
            "(jdr_stats.config.MEMORY_LIMIT or the machine's); use fewer replicates"
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


def child_seeds(
    seed: int | np.random.SeedSequence | np.random.Generator | None, n: int
) -> list[np.random.Generator]:
    """``n`` independent generators spawned from one seed, one per procedure.

    An int, a ``SeedSequence`` or None becomes ``np.random.SeedSequence(seed)``
    and its ``n`` children (``spawn``); a Generator spawns ``n`` children of
    its own seed sequence (numpy >= 1.25; older versions seed a sequence from
    four draws of the Generator).  Child ``i`` never overlaps child ``j``,
    and the same ``seed`` gives the same children.

    Examples
    --------
    >>> from jdr_stats.model import child_seeds
    >>> a = [g.integers(100) for g in child_seeds(7, 2)]
    >>> b = [g.integers(100) for g in child_seeds(7, 2)]
    >>> a == b
    True
    """
    if isinstance(seed, np.random.Generator):
        if hasattr(seed, "spawn"):
            return list(seed.spawn(n))
        seq = np.random.SeedSequence(seed.integers(0, 2**63, size=4).tolist())
    elif isinstance(seed, np.random.SeedSequence):
        seq = seed
    else:
        normalize_seed(seed)  # TypeError for anything but an int or None
        seq = np.random.SeedSequence(None if seed is None else int(seed))
    return [np.random.default_rng(s) for s in seq.spawn(n)]


def check_block_names(names: Sequence[object], argname: str) -> tuple[str, ...]:
    """Block names as given: distinct identifiers (letters, digits, ``_``),
    so that they can name flags, columns and keys; a ``ValueError`` names
    ``argname`` and the names that are not."""
    bad = [n for n in names if not isinstance(n, str) or not n.isidentifier()]
    if bad:
        raise ValueError(f"{argname}: names must be identifiers (letters, digits, _); "
                         f"got {bad!r}")
    repeated = sorted({str(n) for n in names if list(names).count(n) > 1})
    if repeated:
        raise ValueError(f"{argname}: names must be distinct; {repeated} repeated")
    return tuple(str(n) for n in names)


def named_blocks(blocks: object) -> tuple[list[str], list[object]]:
    """The names (checked by :func:`check_block_names`) and the raw arrays of
    a ``blocks`` argument: a mapping of named blocks, or a list or tuple of
    blocks named ``block1, block2, ...``; a ``TypeError`` names ``blocks``
    and the type otherwise."""
    if isinstance(blocks, Mapping):
        return list(check_block_names(list(blocks), "blocks")), list(blocks.values())
    if isinstance(blocks, (list, tuple)):
        return [f"block{k + 1}" for k in range(len(blocks))], list(blocks)
    raise TypeError(f"blocks: a dict of named blocks or a list of blocks; got "
                    f"{type(blocks).__name__}")


def by_block(value: object, arg: str, noun: str, names: Sequence[str],
             type_error: str) -> dict[str, object]:
    """``value`` (an int for every block, or a dict with one entry per
    block name) as a dict by block, in ``names``' order; the entries are
    checked by the caller.  A dict naming other blocks or missing one is a
    ``ValueError`` (``"{arg}: a dict needs one {noun} per block ..."``),
    anything else a ``TypeError`` with ``type_error`` and the value."""
    if isinstance(value, Mapping):
        unknown = sorted(set(value) - set(names))
        missing = [n for n in names if n not in value]
        if unknown or missing:
            raise ValueError(f"{arg}: a dict needs one {noun} per block {list(names)}; "
                             f"unknown {unknown}, missing {missing}")
        return {n: value[n] for n in names}
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        return dict.fromkeys(names, int(value))
    raise TypeError(f"{type_error}; got {value!r}")
