"""What a file row source read, checked on every pass over it.

A streamed model reads its file more than once: the moments on the first
pass, then the rank tests, the ladle and the Poisson bootstrap each read it
again.  A file replaced or rewritten in between would mix the sums of two
datasets without a word, so every file source records a
:class:`FileFingerprint` of each file when it is built and checks it before
and after every pass (:class:`PassGuard`), with the number of rows the pass
yielded.  A change is refused with a :class:`~jdr_stats.exceptions.SourceChangedError`
naming the file and what changed.

The fingerprint is cheap (no pass over the data): the file's size and
modification time (nanoseconds) and, for Parquet, a hash of the footer (the
row groups, their row counts and byte sizes, the schema and the column
statistics) with the row counts of the row groups; for CSV a hash of the
first and last 64 KiB.

:func:`parquet_schema` reads a Parquet file's footer and checks that the
model's columns are stored as numbers, with one type across the files of a
dataset; every pyarrow error becomes a ValueError naming the file.
"""

from __future__ import annotations

import hashlib
import os
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..exceptions import SourceChangedError

__all__ = ["FileFingerprint", "PassGuard", "fingerprint", "guarded", "parquet_schema",
           "check_parquet_types", "numeric_arrow_type"]

_SAMPLE = 1 << 16  # bytes hashed at each end of a CSV file
_T = TypeVar("_T")


@dataclass(frozen=True)
class FileFingerprint:
    """What identifies the content of one file without reading it whole.

    ``digest`` hashes the Parquet footer (or a CSV file's first and last
    64 KiB); ``row_groups`` holds a Parquet file's rows per row group.
    """

    path: Path
    size: int
    mtime_ns: int
    digest: str
    row_groups: tuple[int, ...] = ()

    def differences(self, other: FileFingerprint) -> list[str]:
        """What differs from ``other`` (the newer fingerprint), in words."""
        out = []
        if other.size != self.size:
            out.append(f"its size went from {self.size} to {other.size} bytes")
        if other.row_groups != self.row_groups:
            out.append(f"its row groups went from {len(self.row_groups)} "
                       f"({sum(self.row_groups)} rows) to {len(other.row_groups)} "
                       f"({sum(other.row_groups)} rows)")
        elif other.digest != self.digest:
            out.append("its footer (schema, column statistics) differs" if self.row_groups
                       else "its contents differ")
        if other.mtime_ns != self.mtime_ns:
            out.append("it was modified")
        return out


def _footer(fh: Any, path: Path, size: int) -> bytes:
    """The Thrift footer of a Parquet file (ValueError when it is not one)."""
    if size < 12:
        raise ValueError(f"the Parquet file {str(path)!r} is truncated or not a Parquet file "
                         f"({size} bytes)")
    fh.seek(size - 8)
    tail = fh.read(8)
    length = struct.unpack("<I", tail[:4])[0]
    if tail[4:] != b"PAR1" or length + 8 > size:
        raise ValueError(f"the Parquet file {str(path)!r} is truncated or not a Parquet file "
                         "(no footer at its end)")
    fh.seek(size - 8 - length)
    return bytes(fh.read(length))


def fingerprint(path: Path, kind: str) -> FileFingerprint:
    """The fingerprint of ``path``, a ``"parquet"`` or ``"csv"`` file."""
    try:
        st = os.stat(path)
        with open(path, "rb") as fh:
            if kind == "parquet":
                footer = _footer(fh, path, st.st_size)
                digest = hashlib.blake2b(footer, digest_size=16).hexdigest()
                rows = _row_groups(path)
            else:
                h = hashlib.blake2b(digest_size=16)
                h.update(fh.read(_SAMPLE))
                if st.st_size > 2 * _SAMPLE:
                    fh.seek(st.st_size - _SAMPLE)
                    h.update(fh.read(_SAMPLE))
                else:
                    h.update(fh.read())
                digest, rows = h.hexdigest(), ()
    except FileNotFoundError:
        raise SourceChangedError(f"the file {str(path)!r} no longer exists") from None
    except OSError as exc:
        raise ValueError(f"cannot read the file {str(path)!r}: {exc}") from None
    return FileFingerprint(Path(path), int(st.st_size), int(st.st_mtime_ns), digest, rows)


def _row_groups(path: Path) -> tuple[int, ...]:
    meta = parquet_metadata(path)
    return tuple(int(meta.row_group(i).num_rows) for i in range(meta.num_row_groups))


def _read_footer(path: Path, what: str) -> Any:
    """``pyarrow.parquet.read_metadata`` or ``read_schema`` (``what``) of a
    Parquet file, a ValueError naming the file when it is unreadable."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        return getattr(pq, what)(path)
    except (pa.ArrowException, OSError) as exc:
        raise ValueError(f"cannot read the Parquet file {str(path)!r} (truncated or not "
                         f"Parquet?): {exc}") from None


def parquet_metadata(path: Path) -> Any:
    """A Parquet file's footer metadata (a ValueError naming the file when unreadable)."""
    return _read_footer(path, "read_metadata")


class PassGuard:
    """The fingerprints of a source's files, checked around every pass.

    ``rows``: the rows a complete pass yields (known up front for Parquet,
    from the first complete pass for CSV).
    """

    def __init__(self, files: Sequence[Path], kind: str, rows: int | None = None) -> None:
        self.kind = kind
        self._prints = [fingerprint(Path(f), kind) for f in files]
        self.rows = rows

    def check(self) -> None:
        """Refuse a file whose fingerprint changed since the source was built."""
        for old in self._prints:
            new = fingerprint(old.path, self.kind)
            what = old.differences(new)
            if what:
                raise SourceChangedError(
                    f"the file {str(old.path)!r} changed since it was first read "
                    f"({'; '.join(what)}); the sums of the passes over it would mix two "
                    "datasets: build the model again from the file as it is now")

    def locate(self, row0: int, k: int) -> str:
        """Where rows ``row0 .. row0 + k - 1`` of a pass are, in words: the
        row group and file of Parquet data, the data rows of a CSV file."""
        rows_said = "row {}" if k == 1 else "rows {} to {}"
        if self.kind != "parquet":
            p = self._prints[0].path
            said = rows_said.format(row0 + 1, row0 + k)
            return f"data {said} of the CSV file {str(p)!r}"
        start = 0
        for fp in self._prints:
            n = sum(fp.row_groups)
            if row0 < start + n:
                at = row0 - start
                g = int(np.searchsorted(np.cumsum(fp.row_groups), at, side="right"))
                said = rows_said.format(at, at + k - 1)
                return f"row group {g} of the Parquet file {str(fp.path)!r} ({said} of that file)"
            start += n
        return f"rows {row0} to {row0 + k - 1} of the Parquet data"

    def finish(self, rows: int) -> None:
        """After a complete pass of ``rows`` rows: the files again, and the row count."""
        self.check()
        if self.rows is None:
            self.rows = int(rows)
        elif rows != self.rows:
            names = ", ".join(repr(str(p.path)) for p in self._prints[:3])
            raise SourceChangedError(
                f"a pass over {names} read {rows} rows but the first read {self.rows}; "
                "the file changed: build the model again from the file as it is now")


def guarded(guard: PassGuard, chunks: Iterator[_T], rows_of: Callable[[_T], int]
            ) -> Iterator[_T]:
    """``chunks`` as one checked pass: the files before the first chunk, the
    files and the row count after the last."""
    guard.check()
    rows = 0
    for chunk in chunks:
        rows += rows_of(chunk)
        yield chunk
    guard.finish(rows)


# -- the schema of a Parquet dataset ------------------------------------------------
def numeric_arrow_type(t: Any) -> bool:
    """Whether an Arrow type is a number (integer, float, decimal, boolean)."""
    import pyarrow as pa

    return bool(pa.types.is_integer(t) or pa.types.is_floating(t)
                or pa.types.is_decimal(t) or pa.types.is_boolean(t))


def _kind_of(t: Any) -> str:
    import pyarrow as pa

    if pa.types.is_dictionary(t):
        return f"a dictionary (categorical) of {t.value_type}"
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "text"
    if pa.types.is_temporal(t):
        return f"a date or time ({t})"
    return str(t)


def parquet_schema(path: Path) -> Any:
    """The Arrow schema of a Parquet file (a ValueError naming the file when unreadable)."""
    return _read_footer(path, "read_schema")


def check_parquet_types(files: Sequence[Path], numeric: Sequence[str],
                        other: Sequence[str] = ()) -> None:
    """One type per column across ``files``; the ``numeric`` columns stored as numbers.

    ``other`` columns (categorical ones, coded by their levels) may also
    change between plain text and a dictionary.  A ValueError names the
    file, the column and both types.
    """
    first: dict[str, tuple[Any, Path]] = {}
    for f in files:
        schema = parquet_schema(f)
        for col in [*numeric, *other]:
            if col not in schema.names:
                continue  # reported by the source's column check
            t = schema.field(col).type
            if col in numeric and not numeric_arrow_type(t):
                raise ValueError(
                    f"column {col!r} of the Parquet file {str(f)!r} is stored as "
                    f"{_kind_of(t)}, not as numbers; the model's numeric columns must be "
                    "stored as integers or floats (convert it, or code a categorical "
                    "variable as a response or covariate)")
            if col not in first:
                first[col] = (t, f)
                continue
            t0 = first[col][0]
            # a number keeps its type; text may come plain or as a dictionary
            # (a categorical column's levels are the same read from either)
            same = t.equals(t0) or (col not in numeric and not numeric_arrow_type(t)
                                    and not numeric_arrow_type(t0))
            if not same:
                t0, f0 = first[col]
                raise ValueError(
                    f"column {col!r} is stored as {_kind_of(t)} in the Parquet file "
                    f"{str(f)!r} but as {_kind_of(t0)} in {str(f0)!r}; the files of a "
                    "dataset must store each column with one type (a changed type often "
                    "means changed units): rewrite the files with one schema")
