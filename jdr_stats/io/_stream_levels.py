"""Categorical columns on Parquet/CSV streams: the levels first, then indicators.

A categorical response or covariate cannot be coded chunk by chunk (a chunk
may miss a level), so a first, cheap pass reads only that column (Parquet
reads one column; CSV chunks with ``usecols``) and records its distinct
values, sorted for determinism, with their counts.  :class:`LevelSource` then
yields the model's chunks with each categorical column replaced by the
indicators of its levels, exactly as the in-memory model codes them
(:mod:`jdr_stats.io._responses`): the response ``y`` with classes
``c_1 < ... < c_C`` enters as ``y[c_2], ..., y[c_C]``, a covariate ``site``
as ``site[T.l_2], ...`` (first level dropped).  A value the first pass did
not see (the file changed in between) is refused with a ValueError.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .. import config
from ..exceptions import RareClassWarning
from ..runtime._validation import check_choice
from ..streams._csv_stream import check_fields, csv_header, frame_column, iter_frames
from ..streams._integrity import PassGuard, check_parquet_types, guarded, parquet_schema
from ..streams._sources import _check_batch_rows, _check_columns
from ._responses import ResponseInfo, _looks_numeric, rare_class_message, rare_classes

__all__ = ["Column", "LevelSource", "StreamPlan", "column_is_categorical", "plan_stream",
           "stream_levels"]

#: A column of a row source: a numeric column's name, or ``(column, level)``
#: for the indicator of one level of a categorical column.
Column = str | tuple[str, Any]

_HEAD_ROWS = 1000


def _files(path: Any) -> list[Path]:
    p = Path(path)
    return sorted(p.glob("*.parquet")) if p.is_dir() else [p]


def column_is_categorical(path: Any, column: str, kind: str, sep: str = ",") -> bool:
    """Whether a file's column is categorical (text, boolean, dictionary).

    Parquet: from the schema.  CSV: from its first rows (a column numeric
    there is read as numbers; a later text value is then refused by the
    source).  A path or column the check cannot read is left to the source.
    """
    try:
        if kind == "parquet":
            import pyarrow as pa
            import pyarrow.parquet as pq

            schema = pq.read_schema(_files(path)[0])
            if column not in schema.names:
                return False
            t = schema.field(column).type
            return not (pa.types.is_integer(t) or pa.types.is_floating(t)
                        or pa.types.is_decimal(t))
        head = pd.read_csv(path, sep=sep, usecols=[column], nrows=_HEAD_ROWS)[column]
    except Exception:  # not readable here: the source reports its own error
        return False
    return not pd.api.types.is_numeric_dtype(head.dtype) or pd.api.types.is_bool_dtype(head.dtype)


def _plain_text(path: Any, column: str) -> bool:
    """Whether a Parquet column holds plain strings (not a dictionary/categorical)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    t = pq.read_schema(_files(path)[0]).field(column).type
    return bool(pa.types.is_string(t) or pa.types.is_large_string(t))


def _chunks_of(path: Any, kind: str, columns: list[str], step: int, sep: str,
               text: Sequence[str] = ()) -> Iterator[pd.DataFrame]:
    """Frames of ``columns`` of a Parquet file/folder or a CSV file, ``step`` rows each.

    CSV columns in ``text`` are read as strings (so that every chunk codes
    them alike); Parquet text and dictionary columns come as they are stored.
    """
    if kind == "parquet":
        import pyarrow as pa
        import pyarrow.parquet as pq

        for f in _files(path):
            try:
                pf = pq.ParquetFile(f, pre_buffer=False, buffer_size=1 << 20,
                                    page_checksum_verification=True)
                for batch in pf.iter_batches(batch_size=step, columns=columns):
                    yield batch.to_pandas()
            except (pa.ArrowException, OSError) as exc:
                raise ValueError(f"cannot read the Parquet file {str(f)!r}: {exc}") from None
    else:  # the fields of every line are counted once, by plan_stream
        yield from iter_frames(Path(path), sep, columns, step, text=text)


def _check_no_missing(values: pd.Series, column: str, where: str) -> None:
    if values.isna().any():
        raise ValueError(f"column {column!r} of {where} has missing values; a categorical "
                         "column on a stream must be complete (drop those rows first)")


def stream_levels(path: Any, column: str, kind: str, *, text: bool = True, sep: str = ",",
                  batch_rows: int | None = None, where: str = "the file",
                  guard: PassGuard | None = None) -> tuple[list[Any], list[int]]:
    """Distinct values of one column, sorted, and their counts: one pass over that column only.

    ``text``: a CSV column read as strings (else as pandas infers it, for
    numeric codes declared categorical).  Missing values are refused (a
    ValueError naming the column).  ``guard``: the files' fingerprints,
    checked around the pass (:mod:`jdr_stats.streams._integrity`).
    """
    step = max(_check_batch_rows(batch_rows, config.DEFAULT_BATCH_ROWS), 1 << 16)
    counts: dict[Any, int] = {}
    frames = _chunks_of(path, kind, [column], step, sep, text=[column] if text else [])
    if guard is not None:
        frames = guarded(guard, frames, len)
    for frame in frames:
        values = frame[column]
        _check_no_missing(values, column, where)
        if isinstance(values.dtype, pd.CategoricalDtype):
            values = values.astype(values.cat.categories.dtype)
        for level, n in values.value_counts(sort=False).items():
            counts[level] = counts.get(level, 0) + int(n)
    try:
        levels = sorted(counts)
    except TypeError:  # mixed types: sort by their text
        levels = sorted(counts, key=str)
    return levels, [counts[v] for v in levels]


@dataclass
class _Spec:
    """What :class:`LevelSource` reads: the raw columns and, for each
    categorical one, its levels (from :func:`stream_levels`)."""

    path: Any
    kind: str
    levels: dict[str, list[Any]]
    text: tuple[str, ...] = ()  # CSV columns read as strings
    sep: str = ","
    where: str = "the file"
    weights: str | None = None
    guard: PassGuard | None = None  # the files' fingerprints, from the first pass


class LevelSource:
    """A row source over a Parquet/CSV file whose columns may be level indicators.

    ``y`` is one :data:`Column`, ``a`` and ``b`` lists of them; an indicator
    ``(column, level)`` is ``1.0`` where the column equals ``level``.  Every
    value of a categorical column must be one of the levels of the first
    pass (``levels``); otherwise a ValueError names the column and the value.
    """

    def __init__(self, spec: _Spec, *, y: Column, a: Sequence[Column], b: Sequence[Column],
                 names: dict[Column, str], nobs: int, batch_rows: int | None = None) -> None:
        self._spec = spec
        self._y, self._a, self._b = y, list(a), list(b)
        raw = [c if isinstance(c, str) else c[0] for c in [y, *self._a, *self._b]]
        raw += [spec.weights] if spec.weights else []
        self._columns = list(dict.fromkeys(raw))
        self._check_columns()
        self.endog_name = names.get(y, str(y))
        self.names_a = [names.get(c, str(c)) for c in self._a]
        self.names_b = [names.get(c, str(c)) for c in self._b]
        self.nobs = int(nobs)
        self.batch_rows = _check_batch_rows(batch_rows, config.DEFAULT_BATCH_ROWS)

    @property
    def weighted(self) -> bool:
        """Whether the source carries case weights."""
        return self._spec.weights is not None

    def locate(self, row0: int, k: int) -> str:
        """Where rows ``row0 .. row0 + k - 1`` of a pass are (file, row group or rows)."""
        if self._spec.guard is None:
            return f"rows {row0} to {row0 + k - 1} of {self._spec.where}"
        return self._spec.guard.locate(row0, k)

    def _check_columns(self) -> None:
        spec = self._spec
        if spec.kind == "parquet":
            files = _files(spec.path)
            for f in files:
                _check_columns(parquet_schema(f).names, {"columns": self._columns},
                               f"the Parquet file {str(f)!r}")
            check_parquet_types(files, [c for c in self._columns if c not in spec.levels],
                                list(spec.levels))
        else:
            _check_columns(csv_header(Path(spec.path), spec.sep), {"columns": self._columns},
                           spec.where)

    def _values(self, frame: pd.DataFrame, col: Column) -> np.ndarray:
        spec = self._spec
        if isinstance(col, str) and spec.kind == "csv":  # a ValueError naming the line
            numeric = [c for c in self._columns if c not in spec.levels]
            return frame_column(frame, col, Path(spec.path), spec.sep, numeric)
        if isinstance(col, str):
            try:
                return frame[col].to_numpy(dtype=float)
            except (TypeError, ValueError) as exc:
                raise ValueError(f"{spec.where} has non-numeric values in column {col!r} "
                                 f"({exc})") from None
        name, level = col
        return (frame[name] == level).to_numpy(dtype=float)

    def _check_levels(self, frame: pd.DataFrame) -> None:
        for name, levels in self._spec.levels.items():
            if name not in frame.columns:
                continue
            values = frame[name]
            _check_no_missing(values, name, self._spec.where)
            new = values[~values.isin(levels)]
            if len(new):
                raise ValueError(
                    f"column {name!r} of {self._spec.where} holds the value {new.iloc[0]!r}, "
                    f"not among the levels {levels} found by the first pass over that "
                    "column (did the file change?)")

    def _frames(self, batch_rows: int | None) -> Iterator[pd.DataFrame]:
        spec = self._spec
        step = _check_batch_rows(batch_rows, self.batch_rows)
        frames = _chunks_of(spec.path, spec.kind, self._columns, step, spec.sep, spec.text)
        if spec.guard is not None:
            frames = guarded(spec.guard, frames, len)
        for frame in frames:
            self._check_levels(frame)
            yield frame

    def iter_weighted_chunks(self, batch_rows: int | None = None) -> Iterator[
            tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]]:
        """Yield ``(y, a, b, w)`` float64 chunks, categorical columns as
        indicators (``w`` None when unweighted)."""
        wname = self._spec.weights
        for frame in self._frames(batch_rows):
            y = self._values(frame, self._y)
            a = np.column_stack([self._values(frame, c) for c in self._a])
            b = np.column_stack([self._values(frame, c) for c in self._b])
            yield y, a, b, (self._values(frame, wname) if wname else None)

    def iter_chunks(self, batch_rows: int | None = None
                    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        """Yield ``(y, a, b)`` float64 chunks, categorical columns as indicators."""
        return ((y, a, b) for y, a, b, _ in self.iter_weighted_chunks(batch_rows))


# -- planning a stream -----------------------------------------------------------
@dataclass
class StreamPlan:
    """The columns of a streamed model once its categorical columns are known.

    ``y``: the response columns (a categorical one as the indicators of its
    classes but the first); ``z``, ``znames``: the covariate columns and
    their names; ``response``: the classes and their counts (categorical);
    :meth:`source` builds a row source over ``(y, a, b)`` columns.
    """

    y: list[Column]
    z: list[Column]
    znames: list[str]
    response: ResponseInfo | None
    make: Callable[[Column, list[Column], list[Column]], Any]

    def source(self, y: Column, a: Sequence[Column], b: Sequence[Column]) -> Any:
        return self.make(y, list(a), list(b))


def _class_info(name: str, classes: list[Any], counts: list[int]) -> ResponseInfo:
    """The classes of a streamed categorical response, checked as in memory."""
    if len(classes) < 2:
        only = classes[0] if classes else None
        raise ValueError(f"endog has a single class ({only!r}) in all {sum(counts)} rows; a "
                         "categorical response needs at least two classes")
    rare = rare_classes(classes, counts)
    if rare:
        warnings.warn(rare_class_message(rare, counts), RareClassWarning, stacklevel=4)
    return ResponseInfo(kind="categorical", names=tuple(f"{name}[{c}]" for c in classes[1:]),
                        q=len(classes) - 1, classes=tuple(classes), counts=tuple(counts))


def plan_stream(source_cls: Any, path: Any, ys: list[str], zs: list[str], *, kind: str,
                response: str = "auto", weights: str | None = None,
                batch_rows: int | None = None, sep: str = ",",
                where: str = "the file") -> StreamPlan:
    """Find the categorical response and covariates of a file stream and read their levels.

    A text, boolean or dictionary column (or ``y`` with
    ``response="categorical"``) costs one pass over that column alone; with
    no categorical column the plan builds ``source_cls`` sources as before.
    """
    check_choice(response, "response", ("auto", "numeric", "categorical"))
    if response == "categorical" and len(ys) > 1:
        raise ValueError(f'response="categorical" needs a single y column; got {ys}')
    text = {c for c in dict.fromkeys([*ys, *zs]) if column_is_categorical(path, c, kind, sep)}
    if response == "numeric" and ys[0] in text:
        raise TypeError(f'y column {ys[0]!r} is not numeric but response="numeric"')
    levels: dict[str, list[Any]] = {}
    names: dict[Column, str] = {}
    nobs = 0
    guard: PassGuard | None = None

    def read(col: str) -> tuple[list[Any], list[int]]:
        nonlocal nobs, guard
        if guard is None:  # the fingerprints of the files, before their first pass
            guard = PassGuard(_files(path), kind)
            if kind == "csv":  # every line's fields, once (the guard keeps the file so)
                check_fields(Path(path), sep)
        lv, counts = stream_levels(path, col, kind, text=col in text, sep=sep,
                                   batch_rows=batch_rows, where=where, guard=guard)
        if col in text and kind == "parquet" and _plain_text(path, col) and _looks_numeric(
                pd.Series(lv, dtype=object)):
            raise TypeError(
                f"column {col!r} of {where} holds strings that look like numbers (e.g. "
                f"{lv[0]!r}); store it as numbers (and pass response=\"categorical\" for "
                "class codes) or as a pandas categorical")
        levels[col], nobs = lv, sum(counts)
        return lv, counts

    y: list[Column] = list(ys)
    info = None
    if len(ys) == 1 and (ys[0] in text or response == "categorical"):
        info = _class_info(ys[0], *read(ys[0]))
        y = [(ys[0], c) for c in info.classes[1:]]
        names.update({c: f"{ys[0]}[{c[1]}]" for c in y})
    z: list[Column] = []
    for col in zs:
        if col not in text:
            z.append(col)
            continue
        lv = levels[col] if col in levels else read(col)[0]
        z.extend((col, v) for v in lv[1:])
        names.update({(col, v): f"{col}[T.{v}]" for v in lv[1:]})
    znames = [names.get(c, str(c)) for c in z]
    if not levels:
        extra = {"sep": sep} if kind == "csv" else {}

        def make(yc: Column, a: list[Column], b: list[Column]) -> Any:
            return source_cls(path, y=yc, a=a, b=b, weights=weights, batch_rows=batch_rows,
                              **extra)
    else:
        spec = _Spec(path, kind, levels, tuple(text) if kind == "csv" else (), sep, where,
                     weights, guard)

        def make(yc: Column, a: list[Column], b: list[Column]) -> Any:
            return LevelSource(spec, y=yc, a=a, b=b, names=names, nobs=nobs,
                               batch_rows=batch_rows)
    return StreamPlan(y, z, znames, info, make)
