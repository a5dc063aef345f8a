"""The dask row source: dask arrays or dask DataFrame columns as a row source.

Its moments are a tree reduction on the cluster (only n1 x n2 sized results
travel); its chunks are the partitions, computed one at a time.  Part of
:mod:`jdr_stats.streams._sources` (re-exported there and in :mod:`jdr_stats.sources`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..exceptions import SourceChangedError
from ..runtime._validation import check_int

__all__ = ["DaskSource", "is_dask_collection"]

#: One chunk of rows ``(y, a, b)`` (as in :mod:`jdr_stats.streams._sources`).
Chunk = tuple[np.ndarray, np.ndarray, np.ndarray]


def is_dask_collection(x: Any) -> bool:
    """Whether ``x`` is a dask array, Series or DataFrame (without importing dask)."""
    mod = type(x).__module__
    if not mod.startswith("dask"):
        return False
    try:
        import dask
    except ImportError:  # pragma: no cover
        return False
    return bool(dask.is_dask_collection(x))


def _is_dask_frame(x: Any) -> bool:
    import dask.dataframe as dd

    return isinstance(x, (dd.DataFrame, dd.Series))


def _partition_to_array(part: Any, two_d: bool) -> np.ndarray:
    arr = part.to_numpy(dtype=float) if hasattr(part, "to_numpy") else np.asarray(part, dtype=float)
    if two_d and arr.ndim == 1:
        arr = arr[:, None]
    if not two_d and arr.ndim == 2:
        arr = arr[:, 0]
    return arr


def _split_frame(part: Any, n1: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A pandas partition ``[y | a | b]`` as float64 ``(y, a, b)``."""
    arr = part.to_numpy(dtype=float)
    return arr[:, 0], arr[:, 1:1 + n1], arr[:, 1 + n1:]


def _apply_to_block(fn: Callable[..., Any], y: Any, a: Any, b: Any, block: int,
                    args: tuple[Any, ...]) -> Any:
    """``fn(y, a, b, *args)`` on one row block (float64 arrays)."""
    y = _partition_to_array(y, False)
    a = _partition_to_array(a, True)
    b = _partition_to_array(b, True)
    try:
        return fn(y, a, b, *args)
    except ValueError as exc:
        raise ValueError(f"dask block {block}: {exc}") from None


def _apply_to_partition(fn: Callable[..., Any], part: Any, n1: int, block: int,
                        args: tuple[Any, ...]) -> Any:
    """``fn(y, a, b, *args)`` on one partition ``[y | a | b]`` of a frame."""
    return _apply_to_block(fn, *_split_frame(part, n1), block, args)


class DaskSource:
    """Rows of dask arrays or dask DataFrame columns.

    The moments are a tree reduction on the cluster (:meth:`tree_reduce`): one
    task per row block computes that block's :class:`~jdr_stats.Moments`,
    and merges of ``split_every`` results at a time combine them, so only
    n1 x n2 sized objects travel.  :meth:`iter_chunks` computes the row
    blocks one at a time on the client (for procedures that stream).

    Parameters
    ----------
    y : dask array (m,) or dask Series / one-column DataFrame
    a, b : dask arrays (m, n) or dask DataFrames / Series
        Blocks; arrays are rechunked to the response's row blocks (and a
        single column block) when they differ.
    endog_name, names_a, names_b : optional
    split_every : int
        Fan-in of the merge tree.
    """

    def __init__(
        self,
        y: Any,
        a: Any,
        b: Any,
        *,
        endog_name: str | None = None,
        names_a: Sequence[str] | None = None,
        names_b: Sequence[str] | None = None,
        split_every: int = 8,
    ) -> None:
        for argname, x in (("endog", y), ("exog_a", a), ("exog_b", b)):
            if not is_dask_collection(x):
                raise TypeError(
                    f"{argname} must be a dask array or dask DataFrame/Series; "
                    f"got {type(x).__name__}"
                )
        frames = [_is_dask_frame(x) for x in (y, a, b)]
        # One frame, partition-wise (co-aligned columns of one DataFrame stay
        # so; projecting them separately may repartition them); otherwise
        # arrays (dask DataFrames become arrays with known chunk lengths).
        self._kind = "frame" if all(frames) else "array"
        if self._kind == "array":
            y, a, b = (x.to_dask_array(lengths=True) if f else x
                       for x, f in zip((y, a, b), frames, strict=True))
        self._orig = (y, a, b)
        self.endog_name, self.names_a, self.names_b = _dask_names(
            (y, a, b), frames, self._kind, endog_name, names_a, names_b
        )
        self._split_every = check_int(split_every, "split_every", low=2)
        if self._kind == "array":
            self._arrays = _row_aligned_arrays(y, a, b)
        else:
            self._frame = _one_frame(y, a, b)
        self._nobs: int | None = None

    @property
    def weighted(self) -> bool:
        return False

    def blocks(self) -> tuple[Any, Any]:
        """The two design blocks as given (lazy dask collections)."""
        if self._kind == "array":
            return self._arrays[1], self._arrays[2]
        return self._orig[1], self._orig[2]

    @property
    def kind(self) -> str:
        """``"array"`` or ``"frame"``: how the blocks are split into tasks."""
        return self._kind

    @property
    def nobs(self) -> int:
        """Number of rows (known chunk sizes, else counted on the cluster)."""
        if self._nobs is None:
            if self._kind == "array":
                y = self._arrays[0]
                n = y.shape[0]
                self._nobs = int(n) if not np.isnan(n) else int(y.map_blocks(
                    lambda x: np.array([x.shape[0]]), chunks=(1,), dtype=int).sum().compute())
            else:
                self._nobs = int(self._frame.map_partitions(len).compute().sum())
        return self._nobs

    def _delayed_blocks(self) -> list[Any]:
        """One delayed ``(y, a, b)`` triple per row block (arrays), or one
        delayed partition (a data frame)."""
        if self._kind == "array":
            y, a, b = self._arrays
            ys = y.to_delayed().ravel()
            as_ = a.to_delayed().ravel()
            bs = b.to_delayed().ravel()
            return list(zip(ys, as_, bs, strict=True))
        return list(self._frame.to_delayed())

    def tree_reduce(
        self,
        block_fn: Callable[..., Any],
        combine: Callable[[list[Any]], Any],
        args: tuple[Any, ...] = (),
    ) -> Any:
        """Reduce the row blocks on the cluster: a tree of ``combine`` calls.

        One task per row block computes ``block_fn(y, a, b, *args)`` (float64
        arrays); ``combine`` merges ``split_every`` results at a time until one
        is left, which is computed (with the active scheduler: a
        ``distributed.Client`` if one is active) and returned.  Only the
        results travel, never the rows.  :meth:`jdr_stats.Moments.from_source`
        uses it with the moments of a block and their merge.
        """
        import dask

        if self._kind == "array":
            level = [dask.delayed(_apply_to_block, pure=True)(block_fn, y, a, b, i, args)
                     for i, (y, a, b) in enumerate(self._delayed_blocks())]
        else:
            n1 = len(self.names_a)
            level = [dask.delayed(_apply_to_partition, pure=True)(block_fn, p, n1, i, args)
                     for i, p in enumerate(self._delayed_blocks())]
        if not level:
            raise ValueError("no chunks: the dask collections have no row blocks")
        k = self._split_every
        while len(level) > 1:
            level = [dask.delayed(combine, pure=True)(level[i:i + k])
                     for i in range(0, len(level), k)]
        return level[0].compute()

    def first_block(self, fn: Callable[..., Any]) -> Any:
        """``fn(y, a, b)`` of the first row block, one task on the cluster
        (only its result travels)."""
        import dask

        blocks = self._delayed_blocks()
        if not blocks:
            raise ValueError("no chunks: the dask collections have no row blocks")
        if self._kind == "array":
            task = dask.delayed(_apply_to_block, pure=True)(fn, *blocks[0], 0, ())
        else:
            task = dask.delayed(_apply_to_partition, pure=True)(fn, blocks[0],
                                                                len(self.names_a), 0, ())
        return task.compute()

    def iter_chunks(self, batch_rows: int | None = None) -> Iterator[Chunk]:
        """Yield the dask row blocks as float64 ``(y, a, b)``, computed one by one.

        ``batch_rows`` is ignored (the dask blocks are the chunks).  A pass
        whose rows differ from the known row count (the files behind a lazy
        collection changed) raises
        :class:`~jdr_stats.exceptions.SourceChangedError`.
        """
        import dask

        rows = 0
        for block in self._delayed_blocks():
            if self._kind == "frame":
                chunk = _split_frame(block.compute(), len(self.names_a))
            else:
                yc, ac, bc = dask.compute(*block)
                chunk = (_partition_to_array(yc, False), _partition_to_array(ac, True),
                         _partition_to_array(bc, True))
            rows += len(chunk[0])
            yield chunk
        if self._nobs is not None and rows != self._nobs:
            raise SourceChangedError(
                f"a pass over the dask collections yielded {rows} rows but they have "
                f"{self._nobs}; the data behind them changed: build the model again")

    def iter_weighted_chunks(self, batch_rows: int | None = None) -> Iterator[tuple[Any, ...]]:
        return ((*c, None) for c in self.iter_chunks(batch_rows))


def _dask_width(x: Any, kind: str) -> int:
    """Number of columns of a dask block (a Series or 1-D array: one)."""
    if kind == "frame":
        return len(x.columns) if hasattr(x, "columns") else 1
    return 1 if x.ndim == 1 else int(x.shape[1])


def _dask_names(
    yab: tuple[Any, Any, Any],
    frames: list[bool],
    kind: str,
    endog_name: str | None,
    names_a: Sequence[str] | None,
    names_b: Sequence[str] | None,
) -> tuple[str, list[str], list[str]]:
    """The response's and the blocks' names: given, else the frames' column
    names, else ``y`` and ``a0, a1, ...``, ``b0, b1, ...``."""

    def names(x: Any, prefix: str, is_frame: bool, given: Sequence[str] | None) -> list[str]:
        if given is not None:
            return [str(v) for v in given]
        if is_frame and hasattr(x, "columns"):
            return [str(c) for c in x.columns]
        if is_frame and getattr(x, "name", None) is not None:
            return [str(x.name)]
        return [f"{prefix}{j}" for j in range(_dask_width(x, kind))]

    y, a, b = yab
    if endog_name is not None:
        yname = str(endog_name)
    else:
        yname = names(y, "y", frames[0], None)[0] if frames[0] else "y"
    out_a, out_b = names(a, "a", frames[1], names_a), names(b, "b", frames[2], names_b)
    wa, wb = _dask_width(a, kind), _dask_width(b, kind)
    if len(out_a) != wa or len(out_b) != wb:
        raise ValueError(
            f"names_a/names_b must have {wa} and {wb} names; got {len(out_a)} and {len(out_b)}"
        )
    return yname, out_a, out_b


def _row_aligned_arrays(y: Any, a: Any, b: Any) -> tuple[Any, Any, Any]:
    """Dask arrays with one response vector and blocks in the response's row
    blocks (rechunked when the chunk sizes are known, else refused)."""
    if y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if y.ndim != 1:
        raise ValueError(f"endog must be one-dimensional; got shape {y.shape}")
    a = a[:, None] if a.ndim == 1 else a
    b = b[:, None] if b.ndim == 1 else b
    rows = y.chunks[0]
    known = not any(np.isnan(c) for c in rows)
    for argname, x in (("exog_a", a), ("exog_b", b)):
        if known and x.shape[0] != y.shape[0]:
            raise ValueError(
                f"{argname} has {x.shape[0]} rows but endog has {y.shape[0]}; every "
                "input must have one row per observation"
            )
    if known:
        a = a.rechunk((rows, -1)) if a.chunks != (rows, (a.shape[1],)) else a
        b = b.rechunk((rows, -1)) if b.chunks != (rows, (b.shape[1],)) else b
    elif (a.chunks[0] != rows or b.chunks[0] != rows
          or len(a.chunks[1]) != 1 or len(b.chunks[1]) != 1):
        raise ValueError(
            "dask arrays with unknown chunk sizes must share the response's row "
            "blocks and have one column block; call compute_chunk_sizes() first"
        )
    return y, a, b


def _one_frame(y: Any, a: Any, b: Any) -> Any:
    """The response and both blocks as one dask DataFrame (partition-wise)."""
    import dask.dataframe as dd

    parts = [x.to_frame() if isinstance(x, dd.Series) else x for x in (y, a, b)]
    if len(parts[0].columns) != 1:
        raise ValueError(f"endog must be a single column; got {len(parts[0].columns)} columns")
    return dd.concat(parts, axis=1)
