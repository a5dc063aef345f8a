"""A CSV file read in chunks as strictly as the in-memory read.

Every line must have the header's number of fields (``pandas.read_csv`` with
``usecols`` silently drops an extra field, shifting the values of that row)
and every value of a numeric column must be a number; an error names the
file, the line and the column.

With pyarrow installed the chunks come from its streaming reader
(``pyarrow.csv.open_csv``) with the model's columns declared ``float64``:
it refuses a line with too many or too few fields and a value that is not a
number, and it parses decimal text to the same doubles as pandas (both
round correctly).  Without pyarrow, a first pass parses every column as
text (pandas' C parser then refuses a line with extra fields) and pandas
reads the model's columns, each converted with a check.  Either way the
chunks have exactly ``step`` rows (the last fewer), so the moments summed
chunk by chunk are the same.

Neither reader reports where a conversion failed, so on an error the file
is scanned again with :mod:`csv` from the failing chunk to find the line
and the column (:func:`locate_error`).
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["check_fields", "csv_header", "frame_column", "have_arrow_csv", "iter_frames",
           "iter_numeric", "locate_error"]

#: The text pandas reads as missing (its default ``na_values``), given to
#: pyarrow too so that both readers see the same missing values.
NA_VALUES = ["", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan",
             "1.#IND", "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a",
             "nan", "null"]
_NUMBER = re.compile(
    r"\s*[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)\s*", re.IGNORECASE)
_NA = set(NA_VALUES)


def have_arrow_csv() -> bool:
    """Whether ``pyarrow.csv`` can be imported."""
    try:
        import pyarrow.csv  # noqa: F401
    except ImportError:  # pragma: no cover - exercised without the extra
        return False
    return True


def csv_header(path: Path, sep: str) -> list[str]:
    """The column names of a CSV file (as pandas reads them)."""
    try:
        return [str(c) for c in pd.read_csv(path, sep=sep, nrows=0).columns]
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError,
            UnicodeDecodeError) as exc:
        raise ValueError(f"cannot read the header of the CSV file {str(path)!r}: {exc}") \
            from None


def locate_error(path: Path, sep: str, numeric: Sequence[str], start_row: int = 0
                 ) -> str | None:
    """The first problem at or after data row ``start_row`` (0-based), in words.

    A problem is a line whose number of fields is not the header's, or a
    value of a ``numeric`` column that is neither a number nor missing.
    Returns None when the scan finds none.
    """
    with open(path, newline="", encoding="utf-8-sig", errors="replace") as fh:
        reader = csv.reader(fh, delimiter=sep)
        header = next(reader, None)
        if header is None:
            return None
        where = [header.index(c) for c in numeric if c in header]
        row = -1
        for fields in reader:
            if not fields:  # a blank line: skipped by both readers
                continue
            row += 1
            if row < start_row:
                continue
            line = reader.line_num
            if len(fields) != len(header):
                return (f"line {line} has {len(fields)} fields but the header has "
                        f"{len(header)}")
            for j in where:
                v = fields[j]
                if v not in _NA and not _NUMBER.fullmatch(v):
                    return f"line {line}, column {header[j]!r}: {v[:40]!r} is not a number"
    return None


def _refuse(path: Path, sep: str, numeric: Sequence[str], start_row: int, exc: Exception
            ) -> ValueError:
    found = locate_error(path, sep, numeric, start_row)
    detail = found if found is not None else f"after data row {start_row}: {exc}"
    return ValueError(f"the CSV file {str(path)!r} cannot be read as the model's numeric "
                      f"columns: {detail}; the rows of a streamed CSV file must each have "
                      "the header's fields, with numbers in the model's columns")


def _named_as_pandas(path: Path, sep: str) -> Any:
    """pyarrow read options naming the columns as pandas does (an empty
    header field is ``Unnamed: 0``, a repeated name ``a.1``)."""
    import pyarrow.csv as pcsv

    return pcsv.ReadOptions(column_names=csv_header(path, sep), skip_rows=1)


def _arrow_batches(path: Path, sep: str, numeric: Sequence[str]) -> Iterator[list[np.ndarray]]:
    """The numeric columns of a CSV file in pyarrow's record batches (float64)."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    reader = pcsv.open_csv(
        path,
        read_options=_named_as_pandas(path, sep),
        parse_options=pcsv.ParseOptions(delimiter=sep),
        convert_options=pcsv.ConvertOptions(
            include_columns=list(numeric), column_types={c: pa.float64() for c in numeric},
            null_values=NA_VALUES, strings_can_be_null=True))
    for batch in reader:
        yield [batch.column(c).to_numpy(zero_copy_only=False) for c in numeric]


def _rechunk(batches: Iterator[list[np.ndarray]], step: int) -> Iterator[list[np.ndarray]]:
    """Batches of any sizes as chunks of exactly ``step`` rows (the last fewer)."""
    held: list[list[np.ndarray]] = []
    rows = 0
    for cols in batches:
        held.append(cols)
        rows += len(cols[0])
        while rows >= step:
            merged = [np.concatenate(c) if len(held) > 1 else c[0]
                      for c in zip(*held, strict=True)]
            yield [c[:step] for c in merged]
            rest = [c[step:] for c in merged]
            held, rows = ([rest] if len(rest[0]) else []), rows - step
    if rows:
        yield [np.concatenate(c) if len(held) > 1 else c[0] for c in zip(*held, strict=True)]


def _numeric(frame: pd.DataFrame, col: str, path: Path, sep: str, numeric: Sequence[str],
             row0: int) -> np.ndarray:
    try:
        return frame[col].to_numpy(dtype=float)
    except (TypeError, ValueError) as exc:
        raise _refuse(path, sep, numeric, row0, exc) from None


def check_fields(path: Path, sep: str) -> None:
    """Refuse a line whose number of fields is not the header's (one cheap pass:
    pyarrow's reader with one column, else pandas in small chunks of text)."""
    header = csv_header(path, sep)
    if have_arrow_csv():
        import pyarrow as pa
        import pyarrow.csv as pcsv

        first = header[:1]
        try:
            reader = pcsv.open_csv(path, read_options=_named_as_pandas(path, sep),
                                   parse_options=pcsv.ParseOptions(delimiter=sep),
                                   convert_options=pcsv.ConvertOptions(
                                       include_columns=first,
                                       column_types={c: pa.string() for c in first}))
            for _ in reader:
                pass
        except (pa.ArrowException, OSError) as exc:
            raise _refuse(path, sep, [], 0, exc) from None
        return
    try:  # every column parsed, as text: the C parser counts the fields
        for _ in pd.read_csv(path, sep=sep, chunksize=4096, dtype=str):
            pass
    except (pd.errors.ParserError, ValueError) as exc:
        raise _refuse(path, sep, [], 0, exc) from None


def iter_frames(path: Path, sep: str, columns: Sequence[str], step: int, *,
                text: Sequence[str] = (), strict: bool = False) -> Iterator[pd.DataFrame]:
    """pandas frames of ``columns``, ``step`` rows each (``pandas.read_csv``).

    ``text`` columns are read as strings; the others as pandas infers them
    (convert them with :func:`frame_column`).  ``strict``: first check every
    line's number of fields (:func:`check_fields`); pandas' ``usecols``
    alone would drop an extra field.
    """
    if strict:
        check_fields(path, sep)
    reader = pd.read_csv(path, sep=sep, usecols=list(columns), chunksize=step,
                         dtype={c: str for c in text})
    row0 = 0
    try:
        for frame in reader:
            yield frame
            row0 += len(frame)
    except (pd.errors.ParserError, ValueError) as exc:
        raise _refuse(path, sep, [c for c in columns if c not in text], row0, exc) from None


def frame_column(frame: pd.DataFrame, col: str, path: Path, sep: str,
                 numeric: Sequence[str]) -> np.ndarray:
    """A numeric column of a frame of :func:`iter_frames` as float64 (a
    ValueError naming the line and column when it holds text)."""
    row0 = int(frame.index[0]) if len(frame.index) else 0
    return _numeric(frame, col, path, sep, numeric, row0)


def iter_numeric(path: Path, sep: str, numeric: Sequence[str], step: int, *,
                 arrow: bool | None = None) -> Iterator[list[np.ndarray]]:
    """The ``numeric`` columns of a CSV file as float64 arrays, ``step`` rows per chunk.

    ``arrow``: use pyarrow's reader (default: when installed).
    """
    if arrow is None:
        arrow = have_arrow_csv()
    if not arrow:
        for frame in iter_frames(path, sep, numeric, step, strict=True):
            yield [frame_column(frame, c, path, sep, numeric) for c in numeric]
        return
    import pyarrow as pa

    row0 = 0
    batches = _arrow_batches(path, sep, numeric)
    try:
        for cols in _rechunk(batches, step):
            yield cols
            row0 += len(cols[0])
    except (pa.ArrowException, OSError) as exc:
        raise _refuse(path, sep, numeric, row0, exc) from None

