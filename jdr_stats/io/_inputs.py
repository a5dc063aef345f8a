"""Inputs to float arrays: conversion, row alignment and the checks of their values.

The steps of :meth:`jdr_stats.io._data.ModelData.from_inputs`, one function per
idea: pandas inputs aligned on their row labels (:func:`align_inputs`),
converted to float arrays with names (:func:`read_inputs`), infinite values
refused, rows with NaN dropped or refused (:func:`drop_missing`), and the
values checked (:func:`check_values`).  Errors name the argument and the
offending value.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from .. import config
from ..exceptions import MissingDataWarning
from ..runtime._validation import check_real, check_weights_shape, check_weights_values

__all__ = [
    "ColumnSums",
    "Raw",
    "align_inputs",
    "as_block",
    "as_float",
    "check_infinite",
    "check_not_text",
    "check_duplicates",
    "check_values",
    "column_sums",
    "drop_missing",
    "read_inputs",
]


def _names_of(x: Any, ncol: int, prefix: str) -> list[str]:
    if isinstance(x, pd.DataFrame):
        return [str(c) for c in x.columns]
    if isinstance(x, pd.Series) and x.name is not None:
        return [str(x.name)]
    if ncol == 1 and prefix == "y":
        return ["y"]
    return [f"{prefix}{j}" for j in range(ncol)]


def _has_text(values: Any) -> bool:
    return any(isinstance(v, (str, bytes)) for v in np.asarray(values, dtype=object).ravel())


def check_not_text(x: Any, argname: str) -> None:
    """Refuse string, categorical and text-holding object data with a TypeError.

    Numeric-looking strings (``"1.5"``) are refused too: a block of strings
    is a mistake in the input (a CSV column read as text), not data to
    convert silently.  Booleans are numeric (0/1).
    """
    if isinstance(x, (pd.DataFrame, pd.Series)):
        frame = x.to_frame() if isinstance(x, pd.Series) else x
        bad = []
        for col, dtype in frame.dtypes.items():
            if pd.api.types.is_bool_dtype(dtype) or (
                pd.api.types.is_numeric_dtype(dtype)
                and not isinstance(dtype, pd.CategoricalDtype)
            ):
                continue
            if dtype == np.dtype(object) and not _has_text(frame[col].to_numpy()):
                continue
            bad.append(f"{col} ({dtype})")
        if bad:
            raise TypeError(
                f"{argname} must be numeric; column(s) {', '.join(map(str, bad))} hold "
                "strings or categories (convert them with pd.to_numeric, or code a "
                "categorical variable in a formula, e.g. C(x))"
            )
        return
    if isinstance(x, np.ndarray):
        kind = x.dtype.kind
        if kind in "USa" or (kind == "O" and _has_text(x)):
            raise TypeError(
                f"{argname} must be numeric; got an array of strings (dtype {x.dtype}); "
                "convert it explicitly, e.g. with astype(float)"
            )
        return
    if isinstance(x, (list, tuple)) and _has_text(np.asarray(x, dtype=object)):
        raise TypeError(f"{argname} must be numeric; got a {type(x).__name__} holding strings")


def as_float(x: Any, argname: str) -> np.ndarray:
    check_not_text(x, argname)
    check_real(x, argname)
    if isinstance(x, (pd.DataFrame, pd.Series)):
        try:
            arr = x.to_numpy(dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"{argname} must be numeric; could not convert its columns to "
                f"float ({exc})"
            ) from None
        return arr
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{argname} must be a numeric array, Series or DataFrame; got "
            f"{type(x).__name__} ({exc})"
        ) from None
    return arr


def as_block(x: Any, argname: str, prefix: str) -> tuple[np.ndarray, list[str]]:
    """Convert one design block to a 2-D float array and its column names."""
    if x is None:
        raise TypeError(f"{argname} is required; got None")
    arr = as_float(x, argname)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(
            f"{argname} must be 1- or 2-dimensional; got an array of shape {arr.shape}"
        )
    if arr.shape[1] == 0:
        raise ValueError(f"{argname} has no columns; got shape {arr.shape}")
    names = _names_of(x, arr.shape[1], prefix)
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"{argname} has duplicate column names: {dup}")
    return arr, names


def _as_endog(y: Any) -> tuple[np.ndarray, str]:
    if y is None:
        raise TypeError("endog is required; got None")
    arr = as_float(y, "endog")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(
            f"endog must be one-dimensional (a single response); got shape {arr.shape}"
        )
    if isinstance(y, pd.Series) and y.name is not None:
        name = str(y.name)
    elif isinstance(y, pd.DataFrame):
        name = str(y.columns[0])
    else:
        name = "y"
    return arr, name


_PANDAS = (pd.Series, pd.DataFrame)


def _label_sample(labels: Any, k: int = 3) -> list[Any]:
    return list(labels)[:k]


def align_inputs(inputs: dict[str, Any]) -> dict[str, Any]:
    """Align the pandas inputs on the row labels; never combine them by position.

    ``inputs`` maps argument names (``endog``, the blocks, ``weights``) to the
    data given.  The first pandas input's index is the reference (endog's,
    when endog is a Series or DataFrame).  Another pandas input whose index
    holds the same labels in another order is reordered to the reference;
    one whose labels differ, or that cannot be aligned because of duplicated
    labels, raises a ``ValueError`` naming the arguments.  Arrays have no
    labels and are taken row by row, as given.
    """
    pandas = {k: v for k, v in inputs.items() if isinstance(v, _PANDAS)}
    if len(pandas) < 2:
        return inputs
    (ref_name, ref), *others = pandas.items()
    ref_index = ref.index
    out = dict(inputs)
    for name, x in others:
        if x.index.equals(ref_index):
            continue
        for arg, index in ((ref_name, ref_index), (name, x.index)):
            if index.has_duplicates:
                dup = _label_sample(index[index.duplicated()].unique())
                raise ValueError(
                    f"the row index of {name} differs from that of {ref_name}, and "
                    f"{arg}'s index has duplicated labels (e.g. {dup}), so the rows "
                    "cannot be aligned by label; give inputs with the same row index "
                    "(or arrays, e.g. .to_numpy(), to combine the rows by position)"
                )
        missing = ref_index.difference(x.index)
        extra = x.index.difference(ref_index)
        if len(missing) or len(extra):
            raise ValueError(
                f"the row index of {name} differs from that of {ref_name}: "
                f"{len(extra)} label(s) of {name} are not in {ref_name} "
                f"(e.g. {_label_sample(extra)}) and {len(missing)} label(s) of "
                f"{ref_name} are not in {name} (e.g. {_label_sample(missing)}); "
                "pandas inputs are matched by row label, never by position: give "
                "inputs with the same row labels (or arrays, e.g. .to_numpy(), to "
                "combine the rows by position)"
            )
        out[name] = x.loc[ref_index]  # the same labels in another order
    return out


def _row_index(*objs: Any) -> pd.Index | None:
    for obj in objs:
        if isinstance(obj, _PANDAS):
            return obj.index
    return None


@dataclass
class Raw:
    """Inputs converted to float arrays, before the checks of their values."""

    y: np.ndarray
    yname: str
    y_named: bool  # the name came from a pandas object
    arrays: dict[str, np.ndarray]
    names: dict[str, list[str]]
    w: np.ndarray | None
    index: pd.Index | None
    #: the response read by :func:`~jdr_stats.io._responses.parse_response`
    #: (``y`` holds class codes for a categorical one, q columns for a
    #: multivariate one)
    kind: str = "numeric"
    ynames: list[str] | None = None
    classes: list[Any] | None = None
    z: np.ndarray | None = None  # the covariates' design (numeric, indicators)
    znames: list[str] | None = None
    #: each block's :class:`ColumnSums` (formed once by :func:`block_sums`)
    sums: dict[str, ColumnSums] | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True)
class ColumnSums:
    """Reductions over the rows of one block that the checks of its values
    read instead of copying it: each column's first value ``x0``, and the
    sums of ``|x - x0|`` (``spread``: zero exactly for a constant column;
    not finite when the column holds NaN or an infinite value), of
    ``x`` (``total``) and of ``r_i x_i`` with fixed weights
    ``r_i`` in ``[-1/2, 1/2)``, periodic over a slice of rows (``mixed``: identical columns have
    equal sums, columns of the same values in another order almost never).
    """

    first: np.ndarray
    spread: np.ndarray
    total: np.ndarray
    mixed: np.ndarray

    @property
    def finite(self) -> bool:
        """All sums finite: the block holds no NaN and no infinite value."""
        return bool(np.isfinite(self.spread).all() and np.isfinite(self.total).all()
                    and np.isfinite(self.mixed).all())


def column_sums(arr: np.ndarray) -> ColumnSums:
    """The :class:`ColumnSums` of a 2-D block, in cache-sized slices of rows
    (no copy of the block, C or Fortran order).

    One read of the data: each slice's ``d = x - x0`` into one buffer, its
    product with two weight rows and then, in place, ``|d|`` and its sum,
    all on the buffer while it is in cache; ``sum x = sum d + m x0`` (and
    likewise for the mixed sum)."""
    m, n = arr.shape
    first = np.array(arr[0], dtype=float)
    spread, sums, wsum = np.zeros(n), np.zeros((2, n)), np.zeros(2)
    # a quarter of CHUNK_BYTES: the buffer and the slice it is read from stay
    # in a core's cache together
    step = min(m, max(256, config.CHUNK_BYTES // (32 * n)))
    buf = np.empty((step, n))
    # ones, and golden-ratio weights: a fixed, irregular sequence in [-1/2, 1/2)
    weights = np.vstack([np.ones(step), (np.arange(step) * 0.6180339887498949) % 1.0 - 0.5])
    with np.errstate(invalid="ignore", over="ignore"):
        for lo in range(0, m, step):
            hi = min(lo + step, m)
            d = buf[:hi - lo]
            np.subtract(arr[lo:hi], first, out=d)
            sums += weights[:, :hi - lo] @ d
            wsum += weights[:, :hi - lo].sum(axis=1)
            np.abs(d, out=d)
            spread += weights[0, :hi - lo] @ d
        total, mixed = sums + wsum[:, None] * first
    return ColumnSums(first, spread, total, mixed)


def block_sums(raw: Raw) -> dict[str, ColumnSums]:
    """Each block's :class:`ColumnSums`, formed once and kept on ``raw``."""
    if raw.sums is None:
        raw.sums = {arg: column_sums(arr) for arg, arr in raw.arrays.items()}
    return raw.sums


def read_inputs(given: dict[str, Any], prefixes: dict[str, str],
                response: str | None = None) -> Raw:
    """Float arrays and names of the (aligned) inputs, one row per observation.

    ``response`` (``"auto"``, ``"numeric"`` or ``"categorical"``) reads
    ``endog`` with :func:`~jdr_stats.io._responses.parse_response` (categorical
    and multivariate responses); None keeps the single numeric response of
    the one-block models.  ``given["covariates"]``, when present and not
    None, is read with :func:`~jdr_stats.io._responses.covariate_matrix`.
    """
    endog, weights = given["endog"], given["weights"]
    check_real(endog, "endog")
    if given.get("covariates") is not None:
        check_real(given["covariates"], "covariates")
    parsed = None
    if response is None:
        y, yname = _as_endog(endog)
    else:
        from ._responses import parse_response

        parsed = parse_response(endog, response)
        y, yname = parsed.values, parsed.names[0]
        if parsed.kind == "multivariate":
            yname = ", ".join(parsed.names)
    m = y.shape[0]
    arrays: dict[str, np.ndarray] = {}
    names: dict[str, list[str]] = {}
    for argname, prefix in prefixes.items():
        arr, nm = as_block(given[argname], argname, prefix)
        if arr.shape[0] != m:
            raise ValueError(
                f"{argname} has {arr.shape[0]} rows but endog has {m}; "
                "every input must have one row per observation"
            )
        arrays[argname] = arr
        names[argname] = nm
    w = None
    if weights is not None:
        w = check_weights_shape(as_float(weights, "weights"))
        if w.shape[0] != m:
            raise ValueError(f"weights has {w.shape[0]} values but endog has {m} rows")
    index = _row_index(endog, *(given[k] for k in prefixes), weights)
    named = isinstance(endog, pd.DataFrame) or (
        isinstance(endog, pd.Series) and endog.name is not None
    )
    z = znames = None
    if given.get("covariates") is not None:
        from ._responses import covariate_matrix

        z, znames = covariate_matrix(given["covariates"])
        if z.shape[0] != m:
            raise ValueError(f"covariates has {z.shape[0]} rows but endog has {m}; "
                             "every input must have one row per observation")
        index = index if index is not None else _row_index(given["covariates"])
    if parsed is None:
        return Raw(y, yname, named, arrays, names, w, index)
    return Raw(y, yname, named, arrays, names, w, index, kind=parsed.kind,
               ynames=parsed.names, classes=parsed.classes, z=z, znames=znames)


def _all_inputs(raw: Raw) -> list[tuple[str, np.ndarray]]:
    out = [("endog", raw.y), *raw.arrays.items()]
    out += [("covariates", raw.z)] if raw.z is not None else []
    return out + ([("weights", raw.w)] if raw.w is not None else [])


def _known_finite(raw: Raw, argname: str) -> bool:
    """Whether a block's sums show it holds no NaN and no infinite value."""
    return argname in raw.arrays and block_sums(raw)[argname].finite


def check_infinite(raw: Raw) -> None:
    """Infinite values are errors whatever the missing policy."""
    for argname, arr in _all_inputs(raw):
        if _known_finite(raw, argname) or np.isfinite(arr).all():  # the common case
            continue
        bad = np.isinf(arr)
        if bad.any():
            row = int(np.argwhere(bad)[0][0])
            raise ValueError(
                f"{argname} contains infinite values ({int(bad.sum())} of them, "
                f"first in row {row})"
            )


def drop_missing(raw: Raw, missing: str) -> Raw:
    """Rows with NaN: dropped with a warning (``"drop"``), else a ValueError."""
    nan_rows = np.zeros(raw.y.shape[0], dtype=bool)
    for argname, arr in _all_inputs(raw):
        if _known_finite(raw, argname):
            continue
        nan_rows |= np.isnan(arr) if arr.ndim == 1 else np.isnan(arr).any(axis=1)
    if not nan_rows.any():
        return raw
    m = raw.y.shape[0]
    if missing != "drop":
        raise ValueError(
            f"{_nan_columns(raw)} ({int(nan_rows.sum())} of {m} rows, missing={missing!r}); "
            'pass missing="drop" to drop those rows'
        )
    keep = ~nan_rows
    warnings.warn(
        f'dropped {int(nan_rows.sum())} of {m} rows with missing values (missing="drop")',
        MissingDataWarning,
        stacklevel=4,
    )
    return replace(
        raw, y=raw.y[keep], arrays={k: v[keep] for k, v in raw.arrays.items()},
        w=None if raw.w is None else raw.w[keep],
        index=None if raw.index is None else raw.index[keep],
        z=None if raw.z is None else raw.z[keep], sums=None,
    )


def _nan_columns(raw: Raw, shown: int = 10) -> str:
    """Where the NaN are: per input, its columns holding NaN and how many rows."""
    parts = []
    for argname, arr in _all_inputs(raw):
        if argname == "weights" and not np.isnan(arr).any():
            continue
        counts = np.isnan(arr).sum(axis=0)
        if not counts.any():
            continue
        if arr.ndim == 1 or argname == "endog":
            k = int(np.max(counts))
            parts.append(f"{argname}: NaN in {k} row{'s' if k > 1 else ''}")
            continue
        names = (raw.znames if argname == "covariates" else raw.names[argname]) or []
        cols = [f"{names[j]!r} ({int(counts[j])} row{'s' if counts[j] > 1 else ''})"
                for j in np.flatnonzero(counts)]
        more = f" and {len(cols) - shown} more" if len(cols) > shown else ""
        parts.append(f"{argname}: NaN in column{'s' if len(cols) > 1 else ''} "
                     f"{', '.join(cols[:shown])}{more}")
    return "; ".join(parts)


def _column_keys(arr: np.ndarray) -> dict[bytes, list[int]]:
    """Columns grouped by their exact values (bytes of each column; -0.0 as 0.0)."""
    groups: dict[bytes, list[int]] = {}
    cols = np.ascontiguousarray((arr + 0.0).T)
    for j in range(cols.shape[0]):
        groups.setdefault(cols[j].tobytes(), []).append(j)
    return groups


def _column_groups(raw: Raw) -> dict[str, dict[Any, list[int]]]:
    """Each block's columns grouped by exact equality, as
    ``{block: {key: [columns]}}`` with one key per set of identical
    columns (keys shared across blocks).  From the blocks' sums: only
    columns of equal first value and (to rounding) equal ``total`` and
    ``mixed`` sums are compared, exactly; a block whose sums are not
    finite (values near the largest float) is grouped by its bytes."""
    sums = block_sums(raw)
    if not all(t.finite for t in sums.values()):
        return {arg: _column_keys(arr) for arg, arr in raw.arrays.items()}
    cols = [(arg, j) for arg, arr in raw.arrays.items() for j in range(arr.shape[1])]
    first = np.concatenate([sums[arg].first for arg in raw.arrays]) + 0.0
    spread = np.concatenate([sums[arg].spread for arg in raw.arrays])
    total = np.concatenate([sums[arg].total for arg in raw.arrays])
    mixed = np.concatenate([sums[arg].mixed for arg in raw.arrays])
    nrows = raw.y.shape[0]
    tol = 1e-7  # far above the rounding of a sum (m eps), far below distinct columns' gaps
    root = list(range(len(cols)))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    # identical columns share their first value: compare within those groups,
    # in the order of the mixed sums, each column with its near neighbours only
    _, group = np.unique(first, return_inverse=True)
    for g in np.flatnonzero(np.bincount(group) > 1):
        members = np.flatnonzero(group == g)
        members = members[np.argsort(mixed[members], kind="stable")]
        base = 2 * nrows * abs(first[members[0]])
        widest = float(spread[members].max())
        for pos, i in enumerate(members):
            for k in members[pos + 1:]:
                if mixed[k] - mixed[i] > tol * (spread[i] + widest + base):
                    break
                scale = tol * (spread[i] + spread[k] + base)
                if mixed[k] - mixed[i] > scale or abs(total[i] - total[k]) > scale:
                    continue
                if find(int(i)) == find(int(k)):
                    continue
                (ai, ji), (ak, jk) = cols[int(i)], cols[int(k)]
                if np.array_equal(raw.arrays[ai][:, ji], raw.arrays[ak][:, jk]):
                    lo, hi = sorted((find(int(i)), find(int(k))))
                    root[hi] = lo
    out: dict[str, dict[Any, list[int]]] = {arg: {} for arg in raw.arrays}
    for c, (arg, j) in enumerate(cols):
        out[arg].setdefault(find(c), []).append(j)
    return out


def check_duplicates(raw: Raw) -> None:
    """No column twice: within a block (every copy named, whatever the
    whitening), nor in two blocks (by name, or by identical values)."""
    groups = _column_groups(raw)
    for arg, grp in groups.items():
        names = raw.names[arg]
        dups = [[names[j] for j in js] for js in grp.values() if len(js) > 1]
        if dups:
            said = "; ".join(" = ".join(repr(n) for n in d) for d in dups)
            raise ValueError(
                f"{arg} has {sum(len(d) - 1 for d in dups)} duplicated column(s), "
                f"identical in every row: {said}; keep one column of each group"
            )
    args = list(raw.arrays)
    for i, first in enumerate(args):
        for second in args[i + 1:]:
            # integer labels (pd.DataFrame(array): 0, 1, ...) are positions, not
            # names; identical values are caught below whatever the names
            same = sorted(n for n in set(raw.names[first]) & set(raw.names[second])
                          if not n.isdigit())
            if same:
                raise ValueError(
                    f"column(s) {same} are in both {first} and {second}; a variable "
                    "belongs to one block: remove it from one of them"
                )
            other = groups[second]
            pairs = [(raw.names[first][js[0]], raw.names[second][other[key][0]])
                     for key, js in groups[first].items() if key in other]
            if pairs:
                said = ", ".join(f"{p!r} = {q!r}" for p, q in pairs)
                raise ValueError(
                    f"the same column is in both {first} and {second} (identical in every "
                    f"row): {said}; a variable belongs to one block: remove it from one "
                    "of them"
                )


def check_values(raw: Raw, *, min_rows: int | None, check_response: bool) -> None:
    """Positive weights, enough rows, a varying response, no constant column,
    and no block holding the response."""
    y, m = raw.y, raw.y.shape[0]
    if raw.w is not None:
        check_weights_values(raw.w)
    widest = max(a.shape[1] for a in raw.arrays.values())
    need = widest + 2 if min_rows is None else min_rows
    if m < need:
        raise ValueError(
            f"too few rows: got {m} complete observations, need at least {need} "
            f"(the widest block has {widest} columns)"
        )
    if check_response and raw.kind == "numeric" and np.ptp(y) == 0:
        raise ValueError(
            f"endog has a single value ({y[0]!r}) in all {m} rows; the response must vary"
        )
    sums = block_sums(raw)
    for argname, arr in raw.arrays.items():
        t = sums[argname]
        # a column is constant when sum |x - x0| is zero (exactly, in finite values)
        const = t.spread == 0 if t.finite else np.ptp(arr, axis=0) == 0
        if const.any():
            cols = [raw.names[argname][j] for j in np.flatnonzero(const)]
            raise ValueError(
                f"{argname} has constant column(s) {cols}; the blocks are centred, "
                "so a constant column carries no information: remove it"
            )
        _check_response_not_in(raw, argname, arr)
    check_duplicates(raw)


def _check_response_not_in(raw: Raw, argname: str, arr: np.ndarray) -> None:
    """A block must not hold the response (by name or by value)."""
    names = raw.names[argname]
    ynames = raw.ynames if raw.ynames is not None else [raw.yname]
    for yname in ynames if raw.y_named else []:
        if yname in names:
            raise ValueError(
                f"{argname} holds the response: its column {yname!r} has the name of "
                "endog; remove the response from the block"
            )
    if raw.kind == "categorical":
        return  # class codes are labels, not values a block could hold
    ys = raw.y[:, None] if raw.y.ndim == 1 else raw.y
    for c in range(ys.shape[1]):
        # candidates by the first row, then the whole column (one pass each)
        for j in np.flatnonzero(arr[0] == ys[0, c]):
            if np.array_equal(arr[:, j], ys[:, c]):
                raise ValueError(
                    f"{argname} holds the response: its column {names[j]!r} equals "
                    f"endog ({ynames[min(c, len(ynames) - 1)]!r}) in every row; remove "
                    "the response from the block"
                )
