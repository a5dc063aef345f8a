"""One chunk of rows of two blocks on its way into :class:`jdr_stats.Moments`.

A stream of ``(y, a, b)`` or ``(y, a, b, w)`` chunks is summed one chunk at
a time (:meth:`jdr_stats.Moments.from_chunks`, ``from_source``).  Here is
what each chunk goes through before and after its sums are formed: its
arrays checked (shapes, widths, finite values, weights), the stacked
design's sums of it (the streamed model's one pass), and the errors that
name the column and the rows where values are not finite or where sums of
squares overflow float64.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from ..runtime._validation import check_weights_values
from ._moments_engine import CentredSums
from .moments import stacked_sums

__all__ = ["check_finite", "chunk_arrays", "column_names", "empty_within", "not_summed",
           "overflow_error", "overflowed", "positive_chunks", "stacked_chunk"]


def column_names(names: Sequence[str] | None, n: int, prefix: str,
                 argname: str) -> tuple[str, ...]:
    """``n`` variable names: ``names`` checked, or ``prefix0, prefix1, ...``."""
    if names is None:
        return tuple(f"{prefix}{j}" for j in range(n))
    out = tuple(str(x) for x in names)
    if len(out) != n:
        raise ValueError(f"{argname} must have {n} names (one per column); got {len(out)}")
    return out


def check_finite(arr: np.ndarray, argname: str, names: Sequence[str], row0: int) -> None:
    """ValueError naming the first non-finite value (variable and row)."""
    if np.isfinite(arr).all():
        return
    bad = ~np.isfinite(arr)
    if arr.ndim == 1:
        i, col = int(np.flatnonzero(bad)[0]), names[0]
    else:
        i, j = (int(v) for v in np.argwhere(bad)[0])
        col = names[j]
    what = "NaN" if np.isnan(arr[bad]).any() else "infinite values"
    raise ValueError(
        f"{argname} contains {what} ({int(bad.sum())} in this chunk; first in "
        f"column {col!r}, row {row0 + i}); streamed data must be complete and finite"
    )


def chunk_arrays(chunk: tuple[Any, ...], row0: int, widths: tuple[int, int] | None,
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]:
    """``(y, a, b, w)`` of a chunk as float arrays (a 1-D block as one
    column; ``w`` None without weights), checked: the shapes, the same rows
    in each, the blocks' ``widths`` of the chunks before (None: the first),
    finite nonnegative weights.  ``row0``: the chunk's first row."""
    if len(chunk) not in (3, 4):
        raise ValueError(
            f"each chunk must be (y, a, b) or (y, a, b, weights); got {len(chunk)} items")
    y, a, b = (np.asarray(x, dtype=float) for x in chunk[:3])
    w = None if len(chunk) == 3 or chunk[3] is None else np.asarray(chunk[3], dtype=float)
    a = a[:, None] if a.ndim == 1 else a
    b = b[:, None] if b.ndim == 1 else b
    if y.ndim != 1 or a.ndim != 2 or b.ndim != 2:
        raise ValueError(
            "a chunk must hold y of shape (k,), a of shape (k, n1) and b of "
            f"shape (k, n2); got {y.shape}, {a.shape}, {b.shape}")
    k = y.shape[0]
    if a.shape[0] != k or b.shape[0] != k or (w is not None and w.shape != (k,)):
        raise ValueError(
            f"the arrays of a chunk must have the same number of rows; got y {k}, "
            f"a {a.shape[0]}, b {b.shape[0]}" + ("" if w is None else f", weights {w.shape[0]}"))
    if widths is not None and (a.shape[1], b.shape[1]) != widths:
        raise ValueError(
            f"every chunk must have {widths[0]} columns in a and {widths[1]} in b; "
            f"got {a.shape[1]} and {b.shape[1]} at row {row0}")
    if w is not None:
        check_finite(w, "weights", ["weights"], row0)
        if k and w.min() < 0:
            raise ValueError(
                f"weights must be nonnegative; got {float(w.min())!r} near row {row0}")
    return y, a, b, w


def not_summed(y: np.ndarray, a: np.ndarray, b: np.ndarray,
               names: tuple[str, Sequence[str], Sequence[str]], row0: int,
               where: str) -> ValueError:
    """The error of a chunk whose sums are not finite: the first value that
    is not (``names``: the response's and the blocks'), or an overflow."""
    try:
        check_finite(y, "endog", [names[0]], row0)
        check_finite(a, "exog_a", names[1], row0)
        check_finite(b, "exog_b", names[2], row0)
    except ValueError as exc:
        return ValueError(f"{exc}{where}")
    return ValueError(f"the data overflow float64 in the chunk starting at row {row0}{where} "
                      "(values too large to sum); rescale the variables")


def overflowed(t: CentredSums, endog_name: str, names_a: Sequence[str],
               names_b: Sequence[str]) -> str | None:
    """The name of a column whose sums are not finite (they overflowed), or None.

    A column's own sum of squares first (the column that overflows), then
    the cross products (named by their first factor's column)."""
    if not np.isfinite(t.m2_y):
        return endog_name
    parts: list[tuple[Sequence[str], np.ndarray | None]] = [
        (names_a, np.diag(t.m2_a)), (names_b, np.diag(t.m2_b)),
        (names_a, t.m2_ay), (names_b, t.m2_by), (names_a, t.m2_ab),
        (names_a, t.m3_ayb), (names_a, t.m2_a), (names_b, t.m2_b),
        (names_a, t.m3_aya), (names_b, t.m3_byb)]
    for names, arr in parts:
        if arr is not None and not np.isfinite(arr).all():
            i = int(np.argwhere(~np.isfinite(arr))[0][0])
            return names[min(i, len(names) - 1)]
    return None


def overflow_error(bad: str, rows: np.ndarray, names: Sequence[str], row0: int,
                   locate: Callable[[int, int], str] | None, where: str) -> ValueError:
    """The error of sums of squares that overflow in column ``bad`` (``rows``
    the chunk's ``[y | a | b]``, ``names`` their columns'), placed at the
    rows of its most outlying value when ``locate`` says where rows are."""
    if locate is not None and len(rows):  # the row group of the largest value
        col = rows[:, list(names).index(bad)]
        i = int(np.argmax(np.abs(col - np.median(col))))
        where = f" in {locate(row0 + i, 1)}"
    return ValueError(
        f"the sums of squares and products overflow float64 in column {bad!r} "
        f"in the chunk starting at row {row0}{where}: the values are too large "
        "to square and sum (corrupt data, or a column to rescale: "
        "multiply it by a power of ten, or fit from the rows in memory, which "
        "scale such columns exactly)")


def stacked_chunk(y: np.ndarray, a: np.ndarray, b: np.ndarray,
                  w: np.ndarray | None) -> CentredSums | None:
    """The two-block sums of one chunk, within-block moments included, from
    the stacked design's sums (views of them; None when not finite)."""
    n1, k = a.shape[1], y.shape[0]
    if w is not None and k and not float(np.sum(w)) > 0:  # weight zero: its count only
        return empty_within(n1, b.shape[1], k)
    t = stacked_sums(y, (a, b), w)
    if t is None:
        return None
    sa, sb = slice(0, n1), slice(n1, None)
    s = t.s[0]
    return CentredSums(t.nobs, t.weight, float(t.mean_y[0]), t.mean_x[sa], t.mean_x[sb],
                       float(t.m2_yy[0, 0]), t.m2_xx[sa, sa], t.m2_xx[sb, sb],
                       t.m2_xx[sa, sb], t.m2_xy[sa, 0], t.m2_xy[sb, 0], s[sa, sb],
                       s[sa, sa], s[sb, sb])


def empty_within(n1: int, n2: int, nobs: int) -> CentredSums:
    """The sums of ``nobs`` rows of weight zero, within-block moments included."""
    return CentredSums(nobs, 0.0, 0.0, np.zeros(n1), np.zeros(n2), 0.0, np.zeros((n1, n1)),
                       np.zeros((n2, n2)), np.zeros((n1, n2)), np.zeros(n1), np.zeros(n2),
                       np.zeros((n1, n2)), np.zeros((n1, n1)), np.zeros((n2, n2)))


def positive_chunks(chunks: Iterable[tuple[Any, ...]]) -> Iterator[tuple[Any, ...]]:
    """``chunks`` with each chunk's weights checked positive, naming the row
    (:func:`~jdr_stats.runtime._validation.check_weights_values`, as in memory)."""
    row0 = 0
    for chunk in chunks:
        if len(chunk) == 4 and chunk[3] is not None:
            check_weights_values(np.asarray(chunk[3], dtype=float), row0)
        row0 += len(chunk[0])
        yield chunk
