"""Slicing of the response, as ``dr.slices`` and ``dr.slices.arc`` (the
slice moments are in :mod:`._moments`)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SliceInfo", "dr_slices", "arc_slices", "SLICERS"]


# ---------------------------------------------------------------------------
# slicing
# ---------------------------------------------------------------------------
@dataclass(frozen=True)
class SliceInfo:
    """The slices of the response.

    Attributes
    ----------
    n_slices : int
        Number of slices actually formed (can differ from the request).
    requested : int
        Number of slices asked for.
    sizes : ndarray of int
        Observations per slice, in increasing order of y.
    indicator : ndarray of int
        Slice of each observation, ``0 .. n_slices - 1`` (``dr`` numbers
        them from 1).
    order : ndarray of int
        A stable sort of the rows by y; slice ``k`` is
        ``order[starts[k]:starts[k] + sizes[k]]``.
    starts : ndarray of int
        First position of each slice in ``order``.
    """

    n_slices: int
    requested: int
    sizes: np.ndarray
    indicator: np.ndarray
    order: np.ndarray
    starts: np.ndarray


def _sorted_value_counts(y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A stable sort order of y and the cumulative counts of its sorted
    distinct values.

    Without ties every sort order is the stable one, so the (much faster)
    unstable sort is tried first and the stable sort runs only when y has ties.
    """
    n = y.shape[0]
    order = np.argsort(y)
    ys = y[order]
    new_value = np.r_[True, ys[1:] != ys[:-1]]
    if not new_value.all():
        order = np.argsort(y, kind="stable")
    return order, np.r_[np.flatnonzero(new_value)[1:], n]


def _first_count_at_least(cty: np.ndarray, end: int) -> int:
    """The first cumulative count ``>= end`` (the last one if none)."""
    j = min(int(np.searchsorted(cty, end, side="left")), cty.shape[0] - 1)
    return int(cty[j])


def _slice_info(order: np.ndarray, ends: np.ndarray, requested: int) -> SliceInfo:
    n = order.shape[0]
    starts = np.r_[0, ends[:-1]]
    sizes = ends - starts
    indicator = np.empty(n, dtype=int)
    indicator[order] = np.repeat(np.arange(ends.shape[0]), sizes)
    return SliceInfo(
        n_slices=int(ends.shape[0]),
        requested=int(requested),
        sizes=sizes.astype(int),
        indicator=indicator,
        order=order,
        starts=starts.astype(int),
    )


def _sort_response(
    y: np.ndarray, n_slices: int
) -> tuple[int, np.ndarray, np.ndarray, SliceInfo | None]:
    """``(n, order, cumulative counts of the distinct values, slices)``; the
    slices (one per value) only when ``y`` has at most ``n_slices`` values."""
    y = np.asarray(y, dtype=float)
    order, cty = _sorted_value_counts(y)
    per_value = _slice_info(order, cty, n_slices) if cty.shape[0] <= n_slices else None
    return y.shape[0], order, cty, per_value


def dr_slices(y: np.ndarray, n_slices: int) -> SliceInfo:
    """Slice a response exactly as ``dr.slices`` of R's ``dr`` package.

    Parameters
    ----------
    y : ndarray, shape (n,)
    n_slices : int
        Requested number of slices ``h``.

    Returns
    -------
    SliceInfo

    Notes
    -----
    If ``y`` has at most ``h`` distinct values, each value is a slice (so a
    categorical response works).  Otherwise, with ``m = floor(n / h)`` and the
    cumulative counts ``c_1 < c_2 < ...`` of the sorted distinct values,
    start from ``e = 0`` and, while ``e < n - 2``, set ``e`` to the first
    ``c_j >= e + m``; each ``e`` ends a slice and the last one is moved to
    ``n``.  Ties are never split, so the number of slices can exceed ``h``
    and the last slice can be small.

    Examples
    --------
    >>> info = dr_slices(np.arange(10.0), 3)
    >>> info.sizes.tolist()
    [3, 3, 4]
    >>> dr_slices(np.array([1.0, 2.0, 1.0, 2.0, 2.0]), 3).sizes.tolist()
    [2, 3]
    """
    n, order, cty, per_value = _sort_response(y, n_slices)
    if per_value is not None:
        return per_value
    m = n // n_slices
    end = 0
    ends: list[int] = []
    while end < n - 2:
        end = _first_count_at_least(cty, end + m)
        ends.append(end)
    ends[-1] = n
    return _slice_info(order, np.asarray(ends), n_slices)


def arc_slices(y: np.ndarray, n_slices: int) -> SliceInfo:
    """Slices of ``dr.slices.arc`` (the Arc program's rule).

    With ``m = floor(n / h)`` and ``q = n - m h``, the first ``q`` slices
    target ``m + 1`` observations and the others ``m``; each boundary is
    pushed past ties; at most ``h`` slices, the last ending at ``n`` and
    merged with its predecessor if it would hold fewer than 2 observations.
    A response with at most ``h`` values gets one slice per value.

    Examples
    --------
    >>> arc_slices(np.arange(10.0), 3).sizes.tolist()
    [4, 3, 3]
    """
    n, order, cty, per_value = _sort_response(y, n_slices)
    if per_value is not None:
        return per_value
    m = n // n_slices
    extra = n - m * n_slices
    end = 0
    ends: list[int] = []
    for k in range(n_slices - 1):
        end = _first_count_at_least(cty, end + m + (1 if k < extra else 0))
        if end >= n:
            break
        ends.append(end)
    ends.append(n)
    if len(ends) > 1 and ends[-1] - ends[-2] < 2:
        del ends[-2]
    return _slice_info(order, np.asarray(ends), n_slices)


SLICERS = {"dr": dr_slices, "arc": arc_slices}
