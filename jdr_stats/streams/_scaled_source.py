"""A row source whose columns of extreme units are scaled by powers of two.

A streamed fit sums products of columns: a column of values near ``1e300``
overflows its sum of squares and one near ``1e-300`` underflows it.  As in
memory (:func:`~jdr_stats.core.moments.column_scales`), each such column is
multiplied by a power of two chosen once, from the first chunk of the first
pass (no extra read), before any sum is formed.  Multiplying by a power of
two is exact (no digit changes), every later pass over the source (the rank
tests, the ladle, the bootstrap) reads the same scaled columns, and the
scales go with the sums onto the whitening maps, which map the directions
and means back to the user's units (docs/theory/whitening.md, "Moments
only").  The estimator is equivariant under column scalings, so its
whitened quantities (singular values, test statistics, p-values) are those
of the user's columns.

A column is scaled only when its values in that chunk are of one magnitude
far from unit size (the largest beyond ``2^+-100`` and within ``2^64`` of
the median magnitude): a column in extreme units.  A column of ordinary
values with a few huge ones (corrupt bytes in a data page) is left as it
is, so its sums overflow and are refused naming the column and the place.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np

from ..core.moments import column_scales, response_scale
from ..runtime._frequency import whole_numbers

__all__ = ["RESPONSE_LIMIT", "ScaledDaskSource", "ScaledSource", "check_stream_response",
           "stream_scales"]

#: at most this many binary orders between a scaled column's largest and
#: median magnitude in the chunk the scales come from
SPREAD_LIMIT = 64


#: a streamed response whose largest magnitude in the first chunk is beyond
#: ``2^+-RESPONSE_LIMIT`` is refused (:func:`check_stream_response`)
RESPONSE_LIMIT = 100


def check_stream_response(y: Any, where: str = "") -> None:
    """Refuse a streamed response of extreme units (``|y|`` beyond
    ``2^+-RESPONSE_LIMIT``, about ``1e+-30``, in the first chunk).

    The moments of a row source are summed in the response's own units (its
    singular values and means are reported in them), and the tests sum
    products of up to eight response values, which overflow or underflow float64
    there; in memory the tests bring such a response near unit size
    themselves (:func:`~jdr_stats.core.moments.unit_response`).  Rescaling
    the response changes no direction, test or p-value.
    """
    arr = np.asarray(y, float)
    if response_scale(arr, RESPONSE_LIMIT) == 1.0:
        return
    top = float(np.max(np.abs(arr[np.isfinite(arr)])))
    raise ValueError(
        f"endog: a streamed response of values as {'large' if top > 1 else 'small'} as "
        f"{top:.3g}{where} is beyond the range the streamed sums hold (about 1e-30 to "
        "1e30: its higher powers over- or underflow float64); rescale it (e.g. divide "
        f"by {10.0 ** np.floor(np.log10(top)):.0e}): no direction, test or p-value "
        "depends on the response's unit, and the singular values scale with it")


def stream_scales(blocks: list[np.ndarray]) -> np.ndarray | None:
    """Power-of-two scales of the stacked columns of one chunk
    (:func:`~jdr_stats.core.moments.column_scales`), kept only for columns
    of one magnitude (see the module); None when no column is scaled."""
    if not len(blocks[0]):
        return None
    xs = [np.asarray(x, float).reshape(len(x), -1) for x in blocks]
    with np.errstate(invalid="ignore", over="ignore"):
        scale = column_scales(xs, rows=max(len(xs[0]), 1))
    if scale is None:
        return None
    x = np.abs(np.hstack(xs))
    with np.errstate(invalid="ignore", divide="ignore"):
        top = np.frexp(x.max(axis=0))[1]
        mid = np.frexp(np.median(x, axis=0))[1]
        one = np.isfinite(x).all(axis=0) & (np.median(x, axis=0) > 0) \
            & (np.abs(top - mid) <= SPREAD_LIMIT)
    scale = np.where(one, scale, 1.0)
    return None if np.all(scale == 1.0) else scale


class ScaledSource:
    """``base`` with its columns of extreme units times powers of two in
    every chunk, the scales chosen from the first chunk of the first pass
    (:func:`stream_scales`); every other attribute (names, row count,
    fingerprints, ``locate``) is ``base``'s.  ``scale_a`` and ``scale_b``
    are None until a pass has started and when no column needs a scale."""

    def __init__(self, base: Any) -> None:
        self._base = base
        self._decided = False
        #: every case weight read so far is a whole number
        self.integer_weights = True
        self.scale_a: np.ndarray | None = None
        self.scale_b: np.ndarray | None = None

    @property
    def unscaled(self) -> Any:
        """The source of the user's columns (for maps that scale rows themselves)."""
        return self._base

    @property
    def found(self) -> bool:
        """Whether some column is scaled."""
        return self.scale_a is not None

    @property
    def scales(self) -> tuple[np.ndarray, np.ndarray] | None:
        """``(scale_a, scale_b)``, or None when no column is scaled."""
        if self.scale_a is None or self.scale_b is None:
            return None
        return self.scale_a, self.scale_b

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.__dict__["_base"], name)

    def _scaled(self, a: Any, b: Any, y: Any = None) -> tuple[Any, Any]:
        if not self._decided and len(a):  # from the first chunk with rows
            self._decided = True
            locate = getattr(self._base, "locate", None)
            check_stream_response(y, "" if locate is None else f" (in {locate(0, len(y))})")
            scale = stream_scales([a, b])
            if scale is not None:
                n1 = np.asarray(a).reshape(len(a), -1).shape[1]
                self.scale_a, self.scale_b = scale[:n1], scale[n1:]
        if self.scale_a is None or self.scale_b is None:
            return a, b
        return np.asarray(a, float) * self.scale_a, np.asarray(b, float) * self.scale_b

    def iter_chunks(self, batch_rows: int | None = None) -> Iterator[tuple[Any, ...]]:
        for y, a, b in self._base.iter_chunks(batch_rows):
            yield (y, *self._scaled(a, b, y))

    def iter_weighted_chunks(self, batch_rows: int | None = None) -> Iterator[tuple[Any, ...]]:
        for y, a, b, w in self._base.iter_weighted_chunks(batch_rows):
            if w is not None and self.integer_weights:
                wf = np.asarray(w, float)
                self.integer_weights = whole_numbers(wf)
            yield (y, *self._scaled(a, b, y), w)


def _block_scales(y: Any, a: Any, b: Any) -> np.ndarray | None:
    """:func:`stream_scales` of one row block (a task on the cluster), after
    :func:`check_stream_response` of its response."""
    check_stream_response(y)
    return stream_scales([a, b])


def _scaled_block(y: Any, a: Any, b: Any, block_fn: Any, scale_a: np.ndarray,
                  scale_b: np.ndarray, args: tuple[Any, ...]) -> Any:
    """``block_fn`` of one row block with its columns times the scales."""
    return block_fn(y, np.asarray(a, float) * scale_a, np.asarray(b, float) * scale_b, *args)


class ScaledDaskSource(ScaledSource):
    """:class:`ScaledSource` of a :class:`~jdr_stats.sources.DaskSource`:
    the scales are chosen from the first row block by one task on the
    cluster (only the scales travel), and :meth:`tree_reduce` scales every
    row block in its task before ``block_fn`` sees it; the client's passes
    (:meth:`iter_chunks`) read the same scaled columns."""

    def _decide(self) -> None:
        if self._decided:
            return
        self._decided = True
        scale = self._base.first_block(_block_scales)
        if scale is not None:
            n1 = len(self._base.names_a)
            self.scale_a, self.scale_b = scale[:n1], scale[n1:]

    def tree_reduce(self, block_fn: Any, combine: Any, args: tuple[Any, ...] = ()) -> Any:
        self._decide()
        if self.scale_a is None or self.scale_b is None:
            return self._base.tree_reduce(block_fn, combine, args)
        return self._base.tree_reduce(_scaled_block, combine,
                                      (block_fn, self.scale_a, self.scale_b, args))

    def iter_chunks(self, batch_rows: int | None = None) -> Iterator[tuple[Any, ...]]:
        self._decide()
        yield from super().iter_chunks(batch_rows)

    def iter_weighted_chunks(self, batch_rows: int | None = None) -> Iterator[tuple[Any, ...]]:
        self._decide()
        yield from super().iter_weighted_chunks(batch_rows)
