"""Row sources: one protocol for data in memory, in files and on a cluster.

A *row source* has ``nobs``, ``endog_name``, ``names_a``, ``names_b`` and
``iter_chunks(batch_rows=None)``, which yields float64 chunks
``(y, a, b)`` with shapes ``(k,)``, ``(k, n1)``, ``(k, n2)`` in a fixed row
order.  Each call starts a new pass, so a procedure that needs only sums over
rows (the moments, a Poisson bootstrap, influence-function covariances) is a
loop over ``iter_chunks()`` and runs on every source.  A source with case
weights has ``weighted = True`` and also yields them through
``iter_weighted_chunks`` (4-tuples).

* :class:`ArraySource` -- numpy arrays, memory maps, pandas objects.
* :class:`ParquetSource` -- a Parquet file (or a folder of them), read in
  record batches with only the needed columns.
* :class:`CSVSource` -- a CSV file read in chunks, each line checked.
* :class:`DaskSource` -- dask arrays or dask DataFrame columns; its moments
  are a tree reduction on the cluster (only n1 x n2 sized results travel).
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

import numpy as np
import pandas as pd

from .. import config
from ..runtime._validation import check_int, check_real, check_weights_shape
from ._csv_stream import csv_header, iter_numeric
from ._integrity import (
    PassGuard,
    check_parquet_types,
    guarded,
    parquet_metadata,
    parquet_schema,
)

__all__ = [
    "RowSource",
    "ArraySource",
    "ParquetSource",
    "CSVSource",
    "DaskSource",
    "is_dask_collection",
    "default_batch_rows",
]


def default_batch_rows(width: int) -> int:
    """Rows per in-memory chunk of ``width`` float64 columns: about
    ``config.CHUNK_BYTES`` (small enough that the centred copy of a chunk
    stays in cache)."""
    return config.chunk_rows(width)

Chunk = tuple[np.ndarray, np.ndarray, np.ndarray]
#: ``(y, a, b, w)``, ``w`` None when the source has no case weights.
WeightedChunk = tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]


@runtime_checkable
class RowSource(Protocol):
    """The row-source protocol (see the module docstring)."""

    nobs: int
    endog_name: str
    names_a: Sequence[str]
    names_b: Sequence[str]

    def iter_chunks(self, batch_rows: int | None = None) -> Iterator[Chunk]: ...


def _check_batch_rows(batch_rows: object, default: int) -> int:
    if batch_rows is None:
        return default
    return check_int(batch_rows, "batch_rows", low=1)


def _column_list(cols: object, argname: str) -> list[str]:
    if isinstance(cols, str):
        return [cols]
    if not isinstance(cols, Sequence) or not cols:
        raise TypeError(
            f"{argname} must be a column name or a non-empty list of names; got {cols!r}"
        )
    out = [str(c) for c in cols]
    if len(set(out)) != len(out):
        dup = sorted({c for c in out if out.count(c) > 1})
        raise ValueError(f"{argname} names a column twice: {dup}")
    return out


def _check_columns(available: Sequence[str], wanted: dict[str, list[str]], where: str) -> None:
    have = set(available)
    for argname, cols in wanted.items():
        missing = [c for c in cols if c not in have]
        if missing:
            raise ValueError(
                f"{argname}: column(s) {missing} not in {where}; available: {list(available)}"
            )


# -- in memory -------------------------------------------------------------
def _block_names(x: Any, n: int, prefix: str, given: Sequence[str] | None) -> list[str]:
    if given is not None:
        return [str(v) for v in given]
    if isinstance(x, pd.DataFrame):
        return [str(c) for c in x.columns]
    return [f"{prefix}{j}" for j in range(n)]


class ArraySource:
    """Rows of in-memory arrays (numpy, ``numpy.memmap`` or pandas).

    Chunks are slices converted to float64, so a memory map is read one
    chunk at a time and never copied whole.

    Parameters
    ----------
    y : array_like, shape (m,)
    a : array_like, shape (m, n1)
    b : array_like, shape (m, n2)
    weights : array_like, shape (m,), optional
        Nonnegative frequency weights.
    endog_name, names_a, names_b : optional
        Variable names (default: pandas names, else ``y``, ``a0, ...``, ``b0, ...``).
    batch_rows : int, optional
        Default rows per chunk (about 2 MB of rows, so that a chunk's
        centred copy stays in cache).

    Examples
    --------
    >>> import numpy as np
    >>> from jdr_stats.sources import ArraySource
    >>> src = ArraySource(np.arange(5.0), np.ones((5, 2)), np.zeros((5, 1)))
    >>> [c[0].tolist() for c in src.iter_chunks(2)]
    [[0.0, 1.0], [2.0, 3.0], [4.0]]
    """

    def __init__(
        self,
        y: Any,
        a: Any,
        b: Any,
        *,
        weights: Any = None,
        endog_name: str | None = None,
        names_a: Sequence[str] | None = None,
        names_b: Sequence[str] | None = None,
        batch_rows: int | None = None,
    ) -> None:
        def arr(x: Any, argname: str) -> Any:
            if x is None:
                raise TypeError(f"{argname} is required; got None")
            check_real(x, argname)
            if isinstance(x, (pd.DataFrame, pd.Series)):
                return x.to_numpy()
            if isinstance(x, np.ndarray):
                return x
            try:
                return np.asarray(x, dtype=float)
            except (TypeError, ValueError) as exc:
                raise TypeError(
                    f"{argname} must be a numeric array; got {type(x).__name__} ({exc})"
                ) from None

        self._y = arr(y, "endog")
        self._a = arr(a, "exog_a")
        self._b = arr(b, "exog_b")
        if self._y.ndim == 2 and self._y.shape[1] == 1:
            self._y = self._y[:, 0]
        if self._a.ndim == 1:
            self._a = self._a[:, None]
        if self._b.ndim == 1:
            self._b = self._b[:, None]
        if self._y.ndim != 1:
            raise ValueError(f"endog must be one-dimensional; got shape {self._y.shape}")
        for argname, x in (("exog_a", self._a), ("exog_b", self._b)):
            if x.ndim != 2:
                raise ValueError(f"{argname} must be 1- or 2-dimensional; got shape {x.shape}")
        m = self._y.shape[0]
        for argname, x in (("exog_a", self._a), ("exog_b", self._b)):
            if x.shape[0] != m:
                raise ValueError(
                    f"{argname} has {x.shape[0]} rows but endog has {m}; every input "
                    "must have one row per observation"
                )
        self._w = None
        if weights is not None:
            self._w = check_weights_shape(np.asarray(arr(weights, "weights")))
            if self._w.shape[0] != m:
                raise ValueError(f"weights has {self._w.shape[0]} values but endog has {m} rows")
        self.nobs = int(m)
        if endog_name is None:
            endog_name = str(y.name) if isinstance(y, pd.Series) and y.name is not None else "y"
        self.endog_name = str(endog_name)
        self.names_a = _block_names(a, self._a.shape[1], "a", names_a)
        self.names_b = _block_names(b, self._b.shape[1], "b", names_b)
        for argname, names, n in (("names_a", self.names_a, self._a.shape[1]),
                                  ("names_b", self.names_b, self._b.shape[1])):
            if len(names) != n:
                raise ValueError(f"{argname} must have {n} names; got {len(names)}")
        width = 1 + self._a.shape[1] + self._b.shape[1]
        self.batch_rows = _check_batch_rows(batch_rows, default_batch_rows(width))

    @property
    def weighted(self) -> bool:
        """Whether the source carries case weights."""
        return self._w is not None

    def _iter(self, batch_rows: int | None, weighted: bool) -> Iterator[WeightedChunk]:
        step = _check_batch_rows(batch_rows, self.batch_rows)
        for start in range(0, max(self.nobs, 1), step):
            stop = min(start + step, self.nobs)
            y, a, b = (np.asarray(x[start:stop], dtype=float)
                       for x in (self._y, self._a, self._b))
            w = None
            if weighted and self._w is not None:
                w = np.asarray(self._w[start:stop], dtype=float)
            yield y, a, b, w

    def iter_chunks(self, batch_rows: int | None = None) -> Iterator[Chunk]:
        """Yield ``(y, a, b)`` float64 chunks of ``batch_rows`` rows."""
        return ((y, a, b) for y, a, b, _ in self._iter(batch_rows, False))

    def iter_weighted_chunks(self, batch_rows: int | None = None) -> Iterator[WeightedChunk]:
        """Yield ``(y, a, b, w)`` chunks (``w`` None when unweighted)."""
        return self._iter(batch_rows, True)


# -- files -----------------------------------------------------------------
_T = TypeVar("_T")


def read_ahead(chunks: Iterator[_T], depth: int | None = None) -> Iterator[_T]:
    """``chunks`` read ``depth`` items ahead in a reader thread.

    The file is decoded (pyarrow releases the GIL) while the caller reduces
    the chunks already read, so a pass takes about the longer of the two,
    not their sum.  The items, their order and every exception (the
    integrity checks of the pass included, raised where the caller reads
    the item that failed) are those of ``chunks``; a caller that stops early
    stops the reader.  ``depth`` (default
    :data:`jdr_stats.config.READ_AHEAD_CHUNKS`) 0: ``chunks`` itself.
    """
    depth = config.READ_AHEAD_CHUNKS if depth is None else depth
    if depth <= 0:
        yield from chunks
        return
    box: queue.Queue[tuple[int, Any]] = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def put(item: tuple[int, Any]) -> bool:
        while not stop.is_set():
            try:
                box.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def work() -> None:
        try:
            for chunk in chunks:
                if not put((0, chunk)):
                    return
            put((1, None))
        except BaseException as exc:  # handed to the caller, raised there
            put((2, exc))
        finally:
            close = getattr(chunks, "close", None)
            if callable(close):
                close()

    reader = threading.Thread(target=work, name="jdr_stats-read-ahead", daemon=True)
    reader.start()
    try:
        while True:
            kind, item = box.get()
            if kind == 1:
                return
            if kind == 2:
                raise item
            yield item
    finally:
        stop.set()
        reader.join()


def _check_response_name(y: object) -> None:
    if not isinstance(y, str):
        raise TypeError(f"y must be the name of the response column; got {y!r}")


def _column_major(columns: Sequence[Any], rows: int) -> np.ndarray:
    """The float64 ``(rows, len(columns))`` block of ``columns`` (1-D arrays
    of ``rows`` values), column-major: each column one contiguous copy, the
    layout of a pandas block (whose sums the moments engine forms by
    column-major rank-k updates)."""
    out = np.empty((rows, len(columns)), order="F")
    for j, c in enumerate(columns):
        out[:, j] = c
    return out


class _FileSource:
    """Named columns of a file: the model's columns and the chunk iterators.

    A subclass sets its columns with :meth:`_set_columns` and yields
    ``(y, a, b, w)`` chunks from ``_iter``.
    """

    endog_name: str
    names_a: list[str]
    names_b: list[str]
    _wname: str | None
    _columns: list[str]

    def _set_columns(self, y: str, a: Sequence[str], b: Sequence[str],
                     weights: str | None) -> dict[str, list[str]]:
        """Record the model's columns; return them by argument, for ``_check_columns``."""
        self.endog_name = y
        self.names_a = _column_list(a, "a")
        self.names_b = _column_list(b, "b")
        self._wname = weights
        self._columns = [y, *self.names_a, *self.names_b] + ([weights] if weights else [])
        wanted = {"y": [y], "a": self.names_a, "b": self.names_b}
        if weights:
            wanted["weights"] = [weights]
        return wanted

    @property
    def weighted(self) -> bool:
        """Whether the source carries case weights."""
        return self._wname is not None

    def _iter(self, batch_rows: int | None) -> Iterator[WeightedChunk]:
        raise NotImplementedError

    def iter_chunks(self, batch_rows: int | None = None) -> Iterator[Chunk]:
        """Yield ``(y, a, b)`` float64 chunks of ``batch_rows`` rows (a record
        batch for Parquet)."""
        return ((y, a, b) for y, a, b, _ in self._iter(batch_rows))

    def iter_weighted_chunks(self, batch_rows: int | None = None) -> Iterator[WeightedChunk]:
        """Yield ``(y, a, b, w)`` chunks (``w`` None when unweighted)."""
        return self._iter(batch_rows)


class ParquetSource(_FileSource):
    """Rows of a Parquet file (or a folder of ``*.parquet`` files), streamed.

    Only the named columns are read, in pyarrow record batches of
    ``batch_rows`` rows; memory is about one row group of those columns
    (pyarrow decodes a row group at a time) plus the chunk being reduced and
    those read ahead (:func:`read_ahead`, up to
    :data:`~jdr_stats.config.READ_AHEAD_CHUNKS` + 1).  Nulls become NaN
    (and are then refused by the moments).

    The model's columns must be stored as numbers, with one type in every
    file of a folder; an unreadable file, a text, dictionary or timestamp
    column and a type that changes from file to file are refused with a
    ValueError naming the file and the column.  The files' fingerprints
    (size, modification time, footer) are recorded when the source is built
    and checked before and after every pass, with the rows the pass read
    (:mod:`jdr_stats.streams._integrity`): a file changed between two passes raises
    :class:`~jdr_stats.exceptions.SourceChangedError`.  Page checksums are
    verified where the writer stored them.

    Parameters
    ----------
    path : str or path-like
    y : str
        The response column.
    a, b : list of str
        The columns of the two blocks.
    weights : str, optional
        A column of frequency weights.
    batch_rows : int, optional
        Rows per record batch (default 65536).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        y: str,
        a: Sequence[str],
        b: Sequence[str],
        weights: str | None = None,
        batch_rows: int | None = None,
    ) -> None:
        try:
            import pyarrow.parquet  # noqa: F401
        except ImportError:  # pragma: no cover - exercised without the extra
            raise ImportError(
                "reading Parquet needs pyarrow: pip install 'jdr_stats[parquet]'"
            ) from None
        _check_response_name(y)
        p = Path(path)
        if p.is_dir():
            files = sorted(p.glob("*.parquet"))
            if not files:
                raise ValueError(f"path {str(path)!r} is a folder without *.parquet files")
        elif p.exists():
            files = [p]
        else:
            raise ValueError(f"path {str(path)!r} does not exist")
        self.path = p
        self._files = files
        wanted = self._set_columns(y, a, b, weights)
        groups: list[tuple[Path, tuple[int, ...]]] = []
        for f in files:
            meta = parquet_metadata(f)
            _check_columns(parquet_schema(f).names, wanted, f"the Parquet file {str(f)!r}")
            groups.append((f, tuple(int(meta.row_group(i).num_rows)
                                    for i in range(meta.num_row_groups))))
        check_parquet_types(files, list(dict.fromkeys(self._columns)))
        self._groups = groups
        self.nobs = int(sum(sum(g) for _, g in groups))
        self._guard = PassGuard(files, "parquet", rows=self.nobs)
        self.batch_rows = _check_batch_rows(batch_rows, config.DEFAULT_BATCH_ROWS)

    def locate(self, row0: int, k: int) -> str:
        """Where rows ``row0 .. row0 + k - 1`` of a pass are: the file and row group."""
        return self._guard.locate(row0, k)

    def _batches(self, step: int) -> Iterator[WeightedChunk]:
        import pyarrow as pa
        import pyarrow.compute as pc
        import pyarrow.parquet as pq

        start = 0
        for f, rows in self._groups:
            done = 0
            try:
                # pre_buffer=False: read column chunks as they are decoded, so
                # memory stays near one row group of the selected columns.
                pf = pq.ParquetFile(f, pre_buffer=False, buffer_size=1 << 20,
                                    page_checksum_verification=True)
                for batch in pf.iter_batches(batch_size=step, columns=self._columns):

                    def col(name: str, batch: Any = batch) -> np.ndarray:
                        arr = batch.column(name)
                        if arr.type != pa.float64():
                            arr = pc.cast(arr, pa.float64())
                        return arr.to_numpy(zero_copy_only=False)

                    y = np.array(col(self.endog_name), dtype=float)
                    a = _column_major([col(name) for name in self.names_a], len(y))
                    b = _column_major([col(name) for name in self.names_b], len(y))
                    w = np.array(col(self._wname), dtype=float) if self._wname else None
                    done += len(y)
                    yield y, a, b, w
            except (pa.ArrowException, OSError) as exc:
                raise ValueError(
                    f"cannot read {self.locate(start + done, 1).split(' (')[0]} (near row "
                    f"{done} of that file): {exc}") from None
            start += sum(rows)

    def _iter(self, batch_rows: int | None) -> Iterator[WeightedChunk]:
        step = _check_batch_rows(batch_rows, self.batch_rows)
        return read_ahead(guarded(self._guard, self._batches(step), lambda c: len(c[0])))


class CSVSource(_FileSource):
    """Rows of a CSV file read in chunks of ``batch_rows`` rows.

    The file is read as strictly as the in-memory read
    (:mod:`jdr_stats.streams._csv_stream`: pyarrow's streaming CSV reader when
    installed, else pandas): every line must have the header's fields and
    every value of the model's columns must be a number or missing; an error
    names the file, the line and the column.  The file's fingerprint (size,
    modification time, a hash of its first and last 64 KiB) is recorded when
    the source is built and checked before and after every pass, with the
    rows the pass read: a file changed between two passes raises
    :class:`~jdr_stats.exceptions.SourceChangedError`.

    Parameters
    ----------
    path : str or path-like
    y : str
    a, b : list of str
    weights : str, optional
    batch_rows : int, optional
        Rows per chunk (default 65536).
    sep : str
        Field separator.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        y: str,
        a: Sequence[str],
        b: Sequence[str],
        weights: str | None = None,
        batch_rows: int | None = None,
        sep: str = ",",
    ) -> None:
        _check_response_name(y)
        p = Path(path)
        if not p.is_file():
            raise ValueError(f"path {str(path)!r} is not a file")
        self.path = p
        self._sep = sep
        wanted = self._set_columns(y, a, b, weights)
        _check_columns(csv_header(p, sep), wanted, f"the CSV file {str(path)!r}")
        self.batch_rows = _check_batch_rows(batch_rows, config.DEFAULT_BATCH_ROWS)
        self._guard = PassGuard([p], "csv")

    @property
    def nobs(self) -> int:
        """Number of data rows (counted by one pass over the response column)."""
        if self._guard.rows is None:
            step = max(self.batch_rows, 1 << 18)
            chunks = iter_numeric(self.path, self._sep, [self.endog_name], step)
            for _ in guarded(self._guard, chunks, lambda c: len(c[0])):
                pass
        assert self._guard.rows is not None
        return self._guard.rows

    def locate(self, row0: int, k: int) -> str:
        """Where rows ``row0 .. row0 + k - 1`` of a pass are: the data rows."""
        return self._guard.locate(row0, k)

    def _chunks(self, step: int) -> Iterator[WeightedChunk]:
        read = list(dict.fromkeys(self._columns))
        at = {c: j for j, c in enumerate(read)}
        for cols in iter_numeric(self.path, self._sep, read, step):
            y = np.array(cols[at[self.endog_name]], dtype=float)
            # Column-major blocks, as pandas gives them (the same sums, bit for bit).
            a = _column_major([cols[at[c]] for c in self.names_a], len(y))
            b = _column_major([cols[at[c]] for c in self.names_b], len(y))
            w = np.array(cols[at[self._wname]], dtype=float) if self._wname else None
            yield y, a, b, w

    def _iter(self, batch_rows: int | None) -> Iterator[WeightedChunk]:
        step = _check_batch_rows(batch_rows, self.batch_rows)
        return read_ahead(guarded(self._guard, self._chunks(step), lambda c: len(c[0])))


# -- dask --------------------------------------------------------------------


# the dask source lives in its own module (re-exported here)
from ._dask_source import DaskSource, is_dask_collection  # noqa: E402
