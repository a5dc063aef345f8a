"""Exact, mergeable sufficient statistics of a joint fit.

The joint estimator needs only sums over rows: the means of ``y``, ``a`` and
``b``, the centred second moments of the blocks and the ``y``-weighted
centred cross moment ``S = sum_i w_i (a_i - abar)(y_i - ybar)(b_i - bbar)^T``.
:class:`Moments` holds them as *centred sums* (not averages) together with the
total weight, so two sets of moments computed on disjoint parts of the data
merge exactly: ``m1 + m2`` gives the moments of the union (Chan, Golub and
LeVeque 1979 for the second order, Pebay 2008 for the third-order cross term;
the update is derived on the theory page :doc:`/theory/large_data`).

Within a chunk the moments are computed in two passes (means, then centred
products), so data with a large common offset lose no precision; between
chunks only differences of means enter the update.  The computation is the
package's one moments engine (:mod:`jdr_stats.core._moments_engine`), which the
estimator's :func:`~jdr_stats.core._moments_engine.block_moments` runs on
in-memory arrays:
``Moments.from_arrays(y, a, b).to_block_moments()`` equals
``block_moments(y, a, b)`` bit for bit.

A response of ``q`` columns (several responses, or the indicators of
classes) has :class:`ResponseMoments`: one :class:`Moments` per column and
the co-moments of the columns, each merged exactly; the response is
whitened after the merge (the whitened cross moments are linear in the raw
ones; docs/theory/responses.md).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from .core import moments as core_moments
from .core._chunk_sums import (
    chunk_arrays,
    column_names,
    not_summed,
    overflow_error,
    overflowed,
    positive_chunks,
    stacked_chunk,
)
from .core._moments_engine import (
    BlockMoments,
    CentredSums,
    merge_pair,
    pair_view,
    sums_to_block_moments,
)
from .core.design_moments import DesignMoments
from .core.whitening import whitening_of_covariance
from .streams._scaled_source import ScaledSource, stream_scales
from .streams._sources import ArraySource

__all__ = ["Moments", "ResponseMoments", "whitening_of_covariance"]


def _scale_pair(scales: Sequence[np.ndarray | None] | None
                ) -> tuple[np.ndarray | None, np.ndarray | None]:
    """Read-only copies of ``(scale_a, scale_b)``, or ``(None, None)`` for
    unit scale (None, either None, or all ones)."""
    if scales is None or scales[0] is None or scales[1] is None or (
            np.all(scales[0] == 1.0) and np.all(scales[1] == 1.0)):
        return None, None
    sa, sb = np.array(scales[0], float), np.array(scales[1], float)
    sa.flags.writeable = sb.flags.writeable = False
    return sa, sb


class Moments:
    """Sufficient statistics of ``(y, a, b)``: weight, means and centred sums.

    Build them with :meth:`from_arrays` or :meth:`from_source`; merge the
    moments of disjoint parts of the data with ``+`` (exact, associative up
    to rounding, and ``sum(list_of_moments)`` works).

    Attributes
    ----------
    nobs : int
        Number of rows read (rows of weight zero included).
    weight : float
        Total weight ``W = sum_i w_i`` (``nobs`` without weights).
    mean_y : float
    mean_a, mean_b : ndarray, shapes (n1,), (n2,)
        Weighted means.
    m2_y : float
        ``sum_i w_i (y_i - ybar)^2``.
    m2_a, m2_b, m2_ab : ndarray, shapes (n1, n1), (n2, n2), (n1, n2)
        Centred co-moment sums, e.g. ``m2_ab = sum_i w_i (a_i - abar)(b_i - bbar)^T``.
    m2_ay, m2_by : ndarray, shapes (n1,), (n2,)
        ``sum_i w_i (a_i - abar)(y_i - ybar)`` and likewise for ``b``.
    m3_ayb : ndarray, shape (n1, n2)
        The y-weighted cross co-moment ``sum_i w_i (a_i - abar)(y_i - ybar)(b_i - bbar)^T``.
    m3_aya, m3_byb : ndarray, shapes (n1, n1), (n2, n2), or None
        The y-weighted within-block co-moments
        ``sum_i w_i (a_i - abar)(y_i - ybar)(a_i - abar)^T`` and likewise for
        ``b`` (what the joint estimator, ``fit(independent_blocks=False)``,
        needs from bare moments).  Computed by :meth:`from_arrays`,
        :meth:`from_chunks` and :meth:`from_source` with ``within=True``;
        None for moments built without them (the default), and then for any
        sum that includes such moments.
    endog_name : str
    names_a, names_b : tuple of str
    weighted : bool
        Whether case weights were given for any part.

    Notes
    -----
    Weights are frequency weights: the moments of data with weight ``k`` on a
    row equal those of the data with the row repeated ``k`` times.  The
    estimator uses the averages (divisor ``W``) through
    :meth:`to_block_moments`.

    References
    ----------
    Chan, T. F., Golub, G. H. and LeVeque, R. J. (1979). Updating formulae and
    a pairwise algorithm for computing sample variances. Stanford CS report
    STAN-CS-79-773.

    Pebay, P. (2008). Formulas for robust, one-pass parallel computation of
    covariances and arbitrary-order statistical moments. Sandia report
    SAND2008-6212.

    Examples
    --------
    >>> import numpy as np, jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(1000, 4, 3, 1, seed=0)
    >>> whole = jdr.Moments.from_arrays(sim.y, sim.a, sim.b)
    >>> parts = sum(jdr.Moments.from_arrays(sim.y[i:i + 300], sim.a[i:i + 300],
    ...                                     sim.b[i:i + 300]) for i in range(0, 1000, 300))
    >>> parts.nobs
    1000
    >>> bool(np.allclose(parts.m3_ayb, whole.m3_ayb, rtol=1e-12, atol=1e-12))
    True
    """

    __slots__ = (
        "_endog_name",
        "_m2_a",
        "_m2_ab",
        "_m2_ay",
        "_m2_b",
        "_m2_by",
        "_m2_y",
        "_m3_aya",
        "_m3_ayb",
        "_m3_byb",
        "_mean_a",
        "_mean_b",
        "_mean_y",
        "_names_a",
        "_names_b",
        "_nobs",
        "_scale_a",
        "_scale_b",
        "_weight",
        "_weighted",
    )

    def __init__(
        self,
        *,
        nobs: int,
        weight: float,
        mean_y: float,
        mean_a: np.ndarray,
        mean_b: np.ndarray,
        m2_y: float,
        m2_a: np.ndarray,
        m2_b: np.ndarray,
        m2_ab: np.ndarray,
        m2_ay: np.ndarray,
        m2_by: np.ndarray,
        m3_ayb: np.ndarray,
        m3_aya: np.ndarray | None = None,
        m3_byb: np.ndarray | None = None,
        endog_name: str = "y",
        names_a: Sequence[str] | None = None,
        names_b: Sequence[str] | None = None,
        weighted: bool = False,
    ) -> None:
        mean_a = np.asarray(mean_a, dtype=float)
        mean_b = np.asarray(mean_b, dtype=float)
        n1, n2 = mean_a.shape[0], mean_b.shape[0]
        shapes: dict[str, tuple[Any, tuple[int, ...]]] = {
            "m2_a": (m2_a, (n1, n1)), "m2_b": (m2_b, (n2, n2)), "m2_ab": (m2_ab, (n1, n2)),
            "m2_ay": (m2_ay, (n1,)), "m2_by": (m2_by, (n2,)), "m3_ayb": (m3_ayb, (n1, n2)),
        }
        if (m3_aya is None) != (m3_byb is None):
            raise ValueError("m3_aya and m3_byb must be given together (or neither)")
        if m3_aya is not None:
            shapes["m3_aya"] = (m3_aya, (n1, n1))
            shapes["m3_byb"] = (m3_byb, (n2, n2))
        for key, (val, shape) in shapes.items():
            if np.shape(val) != shape:
                raise ValueError(f"{key} must have shape {shape}; got {np.shape(val)}")
        self._nobs = int(nobs)
        self._weight = float(weight)
        self._mean_y = float(mean_y)
        self._mean_a = mean_a
        self._mean_b = mean_b
        self._m2_y = float(m2_y)
        self._m2_a = np.asarray(m2_a, dtype=float)
        self._m2_b = np.asarray(m2_b, dtype=float)
        self._m2_ab = np.asarray(m2_ab, dtype=float)
        self._m2_ay = np.asarray(m2_ay, dtype=float)
        self._m2_by = np.asarray(m2_by, dtype=float)
        self._m3_ayb = np.asarray(m3_ayb, dtype=float)
        self._m3_aya = None if m3_aya is None else np.asarray(m3_aya, dtype=float)
        self._m3_byb = None if m3_byb is None else np.asarray(m3_byb, dtype=float)
        self._endog_name = str(endog_name)
        self._names_a = column_names(names_a, n1, "a", "names_a")
        self._names_b = column_names(names_b, n2, "b", "names_b")
        self._weighted = bool(weighted)
        self._scale_a: np.ndarray | None = None
        self._scale_b: np.ndarray | None = None
        for arr in (self._mean_a, self._mean_b, self._m2_a, self._m2_b, self._m2_ab,
                    self._m2_ay, self._m2_by, self._m3_ayb, self._m3_aya, self._m3_byb):
            if arr is not None:
                arr.flags.writeable = False

    @classmethod
    def _raw(cls, nobs: int, weight: float, mean_y: float, mean_a: np.ndarray,
             mean_b: np.ndarray, m2_y: float, m2_a: np.ndarray, m2_b: np.ndarray,
             m2_ab: np.ndarray, m2_ay: np.ndarray, m2_by: np.ndarray, m3_ayb: np.ndarray,
             m3_aya: np.ndarray | None, m3_byb: np.ndarray | None,
             endog_name: str, names_a: tuple[str, ...], names_b: tuple[str, ...],
             weighted: bool, scales: Sequence[np.ndarray | None] | None = None) -> Moments:
        """Internal constructor without validation (shapes and names known good);
        ``scales``: the blocks' power-of-two column scales of the held sums
        (:attr:`scales`; None, or all ones: unit scale)."""
        out = cls.__new__(cls)
        out._nobs, out._weight, out._mean_y = nobs, weight, mean_y
        out._mean_a, out._mean_b, out._m2_y = mean_a, mean_b, m2_y
        out._m2_a, out._m2_b, out._m2_ab = m2_a, m2_b, m2_ab
        out._m2_ay, out._m2_by, out._m3_ayb = m2_ay, m2_by, m3_ayb
        out._m3_aya, out._m3_byb = m3_aya, m3_byb
        out._endog_name, out._names_a, out._names_b = endog_name, names_a, names_b
        out._weighted = weighted
        out._scale_a, out._scale_b = _scale_pair(scales)
        for arr in (mean_a, mean_b, m2_a, m2_b, m2_ab, m2_ay, m2_by, m3_ayb, m3_aya, m3_byb):
            if arr is not None:
                arr.flags.writeable = False
        return out

    def __setstate__(self, state: Any) -> None:
        """Unpickle (arrays read-only again; moments pickled before the
        within-block moments existed have them as None)."""
        slots = state[1] if isinstance(state, tuple) else state
        self._m3_aya = self._m3_byb = None
        self._scale_a = self._scale_b = None
        for key, val in (slots or {}).items():
            object.__setattr__(self, key, val)
        for key in self.__slots__:
            val = getattr(self, key, None)
            if isinstance(val, np.ndarray):
                val.flags.writeable = False

    # -- read-only attributes --------------------------------------------
    nobs = property(lambda self: self._nobs, doc="Number of rows read.")
    weight = property(lambda self: self._weight, doc="Total weight W.")
    mean_y = property(lambda self: self._mean_y, doc="Weighted mean of y.")
    mean_a = property(lambda self: self._user(self._mean_a, "a"),
                      doc="Weighted means of block a.")
    mean_b = property(lambda self: self._user(self._mean_b, "b"),
                      doc="Weighted means of block b.")
    m2_y = property(lambda self: self._m2_y, doc="Centred sum of squares of y.")
    m2_a = property(lambda self: self._user(self._m2_a, "a", "a"),
                    doc="Centred co-moment sum of a.")
    m2_b = property(lambda self: self._user(self._m2_b, "b", "b"),
                    doc="Centred co-moment sum of b.")
    m2_ab = property(lambda self: self._user(self._m2_ab, "a", "b"),
                     doc="Centred co-moment sum of a and b.")
    m2_ay = property(lambda self: self._user(self._m2_ay, "a"),
                     doc="Centred co-moment sum of a and y.")
    m2_by = property(lambda self: self._user(self._m2_by, "b"),
                     doc="Centred co-moment sum of b and y.")
    m3_ayb = property(lambda self: self._user(self._m3_ayb, "a", "b"),
                      doc="The y-weighted centred cross co-moment.")
    m3_aya = property(lambda self: self._user(self._m3_aya, "a", "a"),
                      doc="The y-weighted centred co-moment of block a with itself (or None).")
    m3_byb = property(lambda self: self._user(self._m3_byb, "b", "b"),
                      doc="The y-weighted centred co-moment of block b with itself (or None).")

    @property
    def scales(self) -> tuple[np.ndarray, np.ndarray] | None:
        """Each block's power-of-two column scales, or None (unit): the sums
        are held of the columns times them (columns of extreme units,
        :meth:`from_arrays`), so that they neither overflow nor vanish; the
        attributes above give them in the user's units (where float64 can
        hold them: a square beyond its range reads ``inf`` or 0)."""
        if self._scale_a is None or self._scale_b is None:
            return None
        return self._scale_a, self._scale_b

    def _user(self, arr: np.ndarray | None, left: str,
              right: str | None = None) -> np.ndarray | None:
        """A held sum in the user's units (the scales divided out)."""
        if arr is None or self._scale_a is None or self._scale_b is None:
            return arr
        sl = self._scale_a if left == "a" else self._scale_b
        with np.errstate(over="ignore", under="ignore"):
            if right is None:
                out = arr / sl
            else:
                out = arr / np.outer(sl, self._scale_a if right == "a" else self._scale_b)
        out.flags.writeable = False
        return out

    def _held(self) -> Moments:
        """The held sums as moments of the scaled columns (no scales)."""
        if self.scales is None:
            return self
        return Moments._from_sums(self._sums(), self._endog_name, self._names_a,
                                  self._names_b, self._weighted)

    def _stacked_scale(self) -> np.ndarray | None:
        """Both blocks' column scales side by side (None: unit scale)."""
        if self._scale_a is None or self._scale_b is None:
            return None
        return np.concatenate([self._scale_a, self._scale_b])

    def _scaled_to(self, scale_a: np.ndarray, scale_b: np.ndarray) -> Moments:
        """The same moments held at the column scales ``scale_a``, ``scale_b``
        (powers of two: exact up to under- or overflow of negligible parts)."""
        own = self._stacked_scale()
        scale = np.concatenate([scale_a, scale_b])
        return self._lifted(scale if own is None else scale / own, scale)

    def _lifted(self, f: np.ndarray, scale: np.ndarray) -> Moments:
        """The same moments held at the stacked column scales ``scale``, ``f``
        the factors from this one's (:func:`~jdr_stats.core.moments.merged_at_one_scale`)."""
        fa, fb = f[:self.n1], f[self.n1:]
        t = self._sums()
        with np.errstate(over="ignore", under="ignore"):
            out = CentredSums(
                t.nobs, t.weight, t.mean_y, t.mean_a * fa, t.mean_b * fb, t.m2_y,
                t.m2_a * np.outer(fa, fa), t.m2_b * np.outer(fb, fb), t.m2_ab * np.outer(fa, fb),
                t.m2_ay * fa, t.m2_by * fb, t.m3_ayb * np.outer(fa, fb),
                None if t.m3_aya is None else t.m3_aya * np.outer(fa, fa),
                None if t.m3_byb is None else t.m3_byb * np.outer(fb, fb))
        return Moments._from_sums(out, self._endog_name, self._names_a, self._names_b,
                                  self._weighted, (scale[:self.n1], scale[self.n1:]))

    def _held_as(self, scales: Sequence[np.ndarray | None] | None) -> Moments:
        """New moments of these held sums, declared those of the columns
        times ``scales`` (``(scale_a, scale_b)``; None: unit scale)."""
        return Moments._from_sums(self._sums(), self._endog_name, self._names_a,
                                  self._names_b, self._weighted, scales)

    @property
    def has_within(self) -> bool:
        """Whether the within-block moments ``m3_aya`` and ``m3_byb`` are held
        (what the joint estimator needs from bare moments)."""
        return self._m3_aya is not None and self._m3_byb is not None
    endog_name = property(lambda self: self._endog_name, doc="Name of the response.")
    names_a = property(lambda self: self._names_a, doc="Variable names of block a.")
    names_b = property(lambda self: self._names_b, doc="Variable names of block b.")
    weighted = property(lambda self: self._weighted,
                        doc="Whether any part was computed with case weights.")

    @property
    def n1(self) -> int:
        """Number of columns of block a."""
        return int(self._mean_a.shape[0])

    @property
    def n2(self) -> int:
        """Number of columns of block b."""
        return int(self._mean_b.shape[0])

    def __repr__(self) -> str:
        return (
            f"Moments(nobs={self._nobs}, weight={self._weight:g}, n1={self.n1}, "
            f"n2={self.n2}, endog_name={self._endog_name!r})"
        )

    # -- construction ------------------------------------------------------
    from_blocks = staticmethod(DesignMoments.from_blocks)  # three or more blocks

    @classmethod
    def empty(
        cls,
        n1: int,
        n2: int,
        *,
        endog_name: str = "y",
        names_a: Sequence[str] | None = None,
        names_b: Sequence[str] | None = None,
    ) -> Moments:
        """The moments of no rows (the identity of ``+``)."""
        return cls(
            nobs=0, weight=0.0, mean_y=0.0, mean_a=np.zeros(n1), mean_b=np.zeros(n2),
            m2_y=0.0, m2_a=np.zeros((n1, n1)), m2_b=np.zeros((n2, n2)),
            m2_ab=np.zeros((n1, n2)), m2_ay=np.zeros(n1), m2_by=np.zeros(n2),
            m3_ayb=np.zeros((n1, n2)), m3_aya=np.zeros((n1, n1)), m3_byb=np.zeros((n2, n2)),
            endog_name=endog_name, names_a=names_a,
            names_b=names_b,
        )

    def _sums(self) -> CentredSums:
        """The engine's state (:class:`jdr_stats.core._moments_engine.CentredSums`)."""
        return CentredSums(self._nobs, self._weight, self._mean_y, self._mean_a, self._mean_b,
                           self._m2_y, self._m2_a, self._m2_b, self._m2_ab, self._m2_ay,
                           self._m2_by, self._m3_ayb, self._m3_aya, self._m3_byb)

    @classmethod
    def _from_sums(cls, t: CentredSums, endog_name: str, names_a: Sequence[str],
                   names_b: Sequence[str], weighted: bool,
                   scales: Sequence[np.ndarray | None] | None = None) -> Moments:
        return cls._raw(*t, endog_name, tuple(names_a), tuple(names_b), weighted, scales)

    @classmethod
    def _merged_slices(cls, y: np.ndarray, a: np.ndarray, b: np.ndarray, w: np.ndarray | None,
                       endog_name: str, names_a: Sequence[str],
                       names_b: Sequence[str], within: bool | str = False) -> Moments | None:
        """Moments of a chunk from cache-sized slices (None if not finite):
        the K-block core, :func:`jdr_stats.core.moments.array_sums` (with the
        within-block moments when ``within``), or with ``within="stacked"``
        the stacked design's sums :func:`jdr_stats.core.moments.stacked_sums`
        (the same moments, within-block ones included, by symmetric rank-k
        updates: the streamed model's one pass)."""
        if within == "stacked":
            st = stacked_chunk(y, a, b, w)
            if st is None:
                return None
            return cls._from_sums(st, endog_name, names_a, names_b, w is not None)
        t = pair_view(core_moments.array_sums(y, (a, b), w, within=bool(within)))
        if t is None:
            return None
        return cls._from_sums(t, endog_name, names_a, names_b, w is not None)

    @classmethod
    def from_arrays(
        cls,
        y: Any,
        a: Any,
        b: Any,
        weights: Any = None,
        *,
        endog_name: str | None = None,
        names_a: Sequence[str] | None = None,
        names_b: Sequence[str] | None = None,
        batch_rows: int | None = None,
        within: bool = True,
    ) -> Moments:
        """Exact moments of in-memory (or memory-mapped) arrays, in chunks.

        Parameters
        ----------
        y : array_like, shape (m,)
        a : array_like, shape (m, n1)
        b : array_like, shape (m, n2)
        weights : array_like, shape (m,), optional
            Nonnegative frequency weights.
        endog_name, names_a, names_b : optional
            Variable names (taken from pandas objects when not given;
            default ``y``, ``a0, a1, ...``, ``b0, b1, ...``).
        batch_rows : int, optional
            Rows per chunk (default: about 2 MB of centred rows).  Memory
            beyond the input is O(batch_rows x (n1 + n2) + n1 n2).
        within : bool
            Also sum the within-block moments ``m3_aya`` and ``m3_byb``, which
            the joint estimator of bare sums needs
            (``JointDimReduction.from_moments(m).fit(r, independent_blocks=False)``);
            they add ``n1^2 + n2^2`` products per row, so they are off by
            default (their cost is measured by the study
            ``studies/study_moments_within.py``).

        Returns
        -------
        Moments

        Raises
        ------
        ValueError
            On mismatched lengths, NaN or infinite values, negative weights.
        """
        src = ScaledSource(ArraySource(y, a, b, weights=weights, endog_name=endog_name,
                                       names_a=names_a, names_b=names_b,
                                       batch_rows=batch_rows))
        out = cls.from_source(src, batch_rows=batch_rows, within=within)
        # columns of extreme units: held times powers of two (``scales``)
        return out._held_as((src.scale_a, src.scale_b))

    @classmethod
    def from_chunks(
        cls,
        chunks: Iterable[tuple[Any, ...]],
        *,
        endog_name: str = "y",
        names_a: Sequence[str] | None = None,
        names_b: Sequence[str] | None = None,
        within: bool = True,
    ) -> Moments:
        """Moments of an iterable of ``(y, a, b)`` or ``(y, a, b, w)`` chunks.

        Each chunk is validated (shapes, finiteness, nonnegative weights) and
        its moments merged into the running total, so memory does not grow
        with the number of rows.  ``within``: also the within-block moments
        (see :meth:`from_arrays`).  Columns of extreme units (values near
        ``1e300`` or ``1e-300``) are held times powers of two chosen chunk by
        chunk (:attr:`scales`; merged at the smaller scale of each column),
        as :meth:`from_arrays` holds them.
        """
        return cls._sum_chunks(chunks, endog_name, names_a, names_b, within, None,
                               scaled=True)

    @classmethod
    def _sum_chunks(cls, chunks: Iterable[tuple[Any, ...]], endog_name: str,
                    names_a: Sequence[str] | None, names_b: Sequence[str] | None,
                    within: bool | str, locate: Callable[[int, int], str] | None,
                    scaled: bool = False) -> Moments:
        """:meth:`from_chunks`; ``locate(row0, k)`` says where a chunk's rows
        are (a file source's row group or lines), for the errors; ``scaled``:
        each chunk's columns of extreme units times powers of two
        (:func:`~jdr_stats.streams._scaled_source.stream_scales`), its
        moments held with those scales."""
        total: Moments | None = None
        row0 = 0
        for chunk in chunks:
            y, a, b, w = chunk_arrays(chunk, row0, None if total is None
                                      else (total.n1, total.n2))
            k = y.shape[0]
            if total is None:
                na = column_names(names_a, a.shape[1], "a", "names_a")
                nb = column_names(names_b, b.shape[1], "b", "names_b")
            where = "" if locate is None or not k else f" in {locate(row0, k)}"
            scale = stream_scales([a, b]) if scaled else None
            if scale is not None:  # exact: powers of two
                a, b = a * scale[:a.shape[1]], b * scale[a.shape[1]:]
            with np.errstate(over="ignore", invalid="ignore"):  # refused below, by name
                part = cls._merged_slices(y, a, b, w, endog_name, na, nb, within)
            if part is None:
                raise not_summed(y, a, b, (endog_name, na, nb), row0, where)
            if scale is not None:
                part = part._held_as((scale[:a.shape[1]], scale[a.shape[1]:]))
            with np.errstate(over="ignore", invalid="ignore"):
                total = part if total is None else total + part
            bad = overflowed(part._sums(), endog_name, na, nb) or \
                overflowed(total._sums(), endog_name, na, nb)
            if bad is not None:
                raise overflow_error(bad, np.column_stack([y, a, b]), [endog_name, *na, *nb],
                                     row0, locate, where)
            row0 += k
        if total is None:
            raise ValueError("no chunks: the data source yielded no rows")
        return total

    @classmethod
    def from_source(cls, source: Any, *, batch_rows: int | None = None,
                    within: bool | str = True, positive_weights: bool = False) -> Moments:
        """Moments of a row source (:mod:`jdr_stats.sources`), one pass.

        A dask source is reduced on its cluster (a tree of merges); every
        other source is read chunk by chunk, ``batch_rows`` rows at a time
        (default: the source's own ``batch_rows``).  ``within``: also the
        within-block moments (see :meth:`from_arrays`); ``"stacked"``: them
        too, each chunk reduced as the stacked design ``(a, b)`` by
        symmetric rank-k updates (:func:`jdr_stats.core.moments.stacked_sums`,
        the rounding of the in-memory joint fit's pass; what a streamed
        model holds).  ``positive_weights``:
        refuse a case weight of zero, naming its row (the rule of a model's
        data, on every path: :class:`~jdr_stats.JointDimReduction` passes
        True); the sums themselves take nonnegative weights, a row of weight
        zero adding nothing but its count to :attr:`nobs`.
        """
        tree_reduce = getattr(source, "tree_reduce", None)
        if callable(tree_reduce):  # dask: reduced on the cluster
            names = (source.endog_name, list(source.names_a), list(source.names_b), within)
            return tree_reduce(_block_moments, _merge_list, names)
        rows = batch_rows  # None: the source's own default
        weighted = bool(getattr(source, "weighted", False))
        locate = getattr(source, "locate", None)
        chunks = source.iter_weighted_chunks(rows) if weighted else source.iter_chunks(rows)
        return cls._sum_chunks(
            positive_chunks(chunks) if weighted and positive_weights else chunks,
            source.endog_name, source.names_a, source.names_b, within,
            locate if callable(locate) else None,
        )

    # -- merging -----------------------------------------------------------
    def __add__(self, other: object) -> Moments:
        if isinstance(other, (int, float)) and other == 0:
            return self
        if not isinstance(other, Moments):
            return NotImplemented
        if (self.n1, self.n2) != (other.n1, other.n2):
            raise ValueError(
                f"cannot merge moments of blocks of widths ({self.n1}, {self.n2}) and "
                f"({other.n1}, {other.n2})"
            )
        if (self._names_a, self._names_b, self._endog_name) != (
            other._names_a, other._names_b, other._endog_name
        ):
            raise ValueError(
                "cannot merge moments of different variables: "
                f"{self._endog_name!r} {list(self._names_a)} {list(self._names_b)} vs "
                f"{other._endog_name!r} {list(other._names_a)} {list(other._names_b)}"
            )
        # one scale per column: the smaller (the larger values keep their digits)
        return core_moments.merged_at_one_scale(self, other, Moments._stacked_scale,
                                                self.n1 + self.n2, Moments._lifted, _merge)

    def __radd__(self, other: object) -> Moments:
        if isinstance(other, (int, float)) and other == 0:
            return self
        return NotImplemented

    # -- use ---------------------------------------------------------------
    def to_block_moments(self, *, center_y: bool = True) -> BlockMoments:
        """The averages the estimator takes (divisor: the total weight).

        ``center_y=False`` gives the cross moment with ``y`` uncentred,
        ``sum_i w_i (a_i - abar) y_i (b_i - bbar)^T / W
        = (m3_ayb + ybar m2_ab) / W``.
        """
        out = sums_to_block_moments(self._sums(), center_y=center_y)
        if self.scales is None:
            return out
        return replace(out, scale_a=self._scale_a, scale_b=self._scale_b)


def _merge(p: Moments, q: Moments) -> Moments:
    """Exact moments of the union of two disjoint samples (see the theory
    page), both held at ``p``'s column scales."""
    t = merge_pair(p._sums(), q._sums())
    return Moments._from_sums(t, p.endog_name, p.names_a, p.names_b, p.weighted or q.weighted,
                              p.scales)


def _block_moments(y: np.ndarray, a: np.ndarray, b: np.ndarray, endog_name: str,
                   names_a: list[str], names_b: list[str],
                   within: bool | str = False) -> Moments:
    """Moments of one row block (a task of a dask tree reduction)."""
    return Moments._sum_chunks([(y, a, b)], endog_name, names_a, names_b, within, None)


def _merge_list(parts: list[Moments]) -> Moments:
    """Merge a list of moments (a node of a dask tree reduction)."""
    total = parts[0]
    for p in parts[1:]:
        total = total + p
    return total


# ---------------------------------------------------------------------------
# A response of q columns
# ---------------------------------------------------------------------------
class ResponseMoments:
    """Mergeable sums of ``(Y, a, b)`` for a response of ``q`` columns.

    Build with :meth:`from_arrays` (a 2-D ``Y``, or class labels with
    ``classes=``) or :meth:`from_sources` (one row source per response
    column: Parquet, CSV chunks, dask); merge with ``+``; give to
    :meth:`jdr_stats.JointDimReduction.from_moments`.

    Examples
    --------
    >>> import numpy as np, jdr_stats as jdr
    >>> from jdr_stats.moments import ResponseMoments
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(size=(900, 4)), rng.normal(size=(900, 3))
    >>> Y = np.c_[a[:, 0] * b[:, 0], a[:, 1] * b[:, 1]] + rng.normal(size=(900, 2))
    >>> parts = sum(ResponseMoments.from_arrays(Y[i:i + 300], a[i:i + 300], b[i:i + 300])
    ...             for i in range(0, 900, 300))
    >>> whole = jdr.JointDimReduction(Y, a, b).fit(2)
    >>> streamed = jdr.JointDimReduction.from_moments(parts).fit(2)
    >>> bool(np.allclose(streamed.singular_values, whole.singular_values, rtol=1e-9))
    True
    """

    def __init__(self, parts: Sequence[Moments], yy: Moments, *, kind: str = "multivariate",
                 names: Sequence[str] | None = None, classes: Sequence[Any] = ()) -> None:
        self.parts = tuple(parts)
        self.yy = yy
        self.kind = kind
        self.names = tuple(names) if names is not None else tuple(p.endog_name for p in parts)
        self.classes = tuple(classes)

    @property
    def q(self) -> int:
        """Number of response columns summed (before collinear ones are dropped)."""
        return len(self.parts)

    @property
    def nobs(self) -> int:
        return self.parts[0].nobs

    @classmethod
    def from_arrays(cls, y: Any, a: Any, b: Any, weights: Any = None, *,
                    classes: Sequence[Any] | None = None, endog_names: Sequence[str] | None = None,
                    names_a: Sequence[str] | None = None,
                    names_b: Sequence[str] | None = None) -> ResponseMoments:
        """Sums of in-memory rows: ``y`` of shape (m, q), or class labels (m,)
        with ``classes`` (all the classes, the first the reference)."""
        kind = "multivariate"
        if classes is not None:
            labels = np.asarray(y, dtype=object).reshape(-1)
            classes = list(classes)
            unknown = set(labels.tolist()) - set(classes)
            if unknown:
                raise ValueError(f"y holds labels not in classes: {sorted(map(str, unknown))}")
            if len(classes) < 2:
                raise ValueError(f"classes must list at least two classes; got {classes}")
            y = np.column_stack([labels == c for c in classes[1:]]).astype(float)
            endog_names = [f"y[{c}]" for c in classes[1:]]
            kind = "categorical"
        arr = np.asarray(y, dtype=float)
        if arr.ndim != 2:
            raise ValueError(f"y must have shape (m, q) (or labels with classes=); "
                             f"got shape {arr.shape}")
        names = list(endog_names) if endog_names is not None else \
            [f"y{j}" for j in range(arr.shape[1])]
        parts = [Moments.from_arrays(arr[:, c], a, b, weights, endog_name=names[c],
                                     names_a=names_a, names_b=names_b)
                 for c in range(arr.shape[1])]
        yy = Moments.from_arrays(arr[:, 0], arr, arr, weights, endog_name="y",
                                 names_a=names, names_b=names, within=False)
        return cls(parts, yy, kind=kind, names=names, classes=classes or ())

    @classmethod
    def from_sources(cls, parts: Sequence[Any], yy: Any, *,
                     positive_weights: bool = False) -> ResponseMoments:
        """Sums streamed from row sources (:mod:`jdr_stats.sources`).

        ``parts``: one source per response column (that column as ``y``, the
        two blocks); ``yy``: a source whose two blocks are the response
        columns.  ``q + 1`` passes; flat memory; dask sources are reduced on
        their cluster.  ``positive_weights``: see :meth:`Moments.from_source`.
        """
        def summed(src: Any, within: bool) -> Moments:
            mom = Moments.from_source(src, within=within, positive_weights=positive_weights)
            scales = getattr(src, "scales", None)  # a source of columns times powers of two
            return mom if scales is None else mom._held_as(scales)

        moms = [summed(src, True) for src in parts]
        return cls(moms, summed(yy, False), names=[p.endog_name for p in moms])

    def __add__(self, other: object) -> ResponseMoments:
        if isinstance(other, (int, float)) and other == 0:
            return self
        if not isinstance(other, ResponseMoments):
            return NotImplemented
        if (self.names, self.kind, self.classes) != (other.names, other.kind, other.classes):
            raise ValueError(f"cannot merge the moments of responses {list(self.names)} and "
                             f"{list(other.names)}")
        parts = [p + o for p, o in zip(self.parts, other.parts, strict=True)]
        return ResponseMoments(parts, self.yy + other.yy, kind=self.kind, names=self.names,
                               classes=self.classes)

    def __radd__(self, other: object) -> ResponseMoments:
        if isinstance(other, (int, float)) and other == 0:
            return self
        return NotImplemented

    def _held_parts(self) -> tuple[list[Moments], tuple[np.ndarray, np.ndarray] | None]:
        """Every column's sums held at one scale per block column (the
        smaller of the parts', as ``+`` merges them: blocks of extreme
        units), without their scales, and that scale (None: unit scale)."""
        if all(p.scales is None for p in self.parts):
            return list(self.parts), None
        first = self.parts[0]
        sa = np.min([np.ones(first.n1) if p.scales is None else p.scales[0]
                     for p in self.parts], axis=0)
        sb = np.min([np.ones(first.n2) if p.scales is None else p.scales[1]
                     for p in self.parts], axis=0)
        return [p._scaled_to(sa, sb)._held() for p in self.parts], (sa, sb)

    def kept(self) -> tuple[np.ndarray, np.ndarray]:
        """Kept response columns and the inverse Cholesky factor of their covariance."""
        return whitening_of_covariance(self.yy.m2_a / self.yy.weight)

    def to_block_moments(self) -> BlockMoments:
        """Block moments of the first part with the ``q`` whitened cross moments.

        ``cross_q[c] = sum_d (L_Y^{-1})_{cd} m3_d / W`` over the kept
        columns; ``mean_y = 0``, ``var_y = 1`` (whitened response).
        """
        keep, linv = self.kept()
        held, scales = self._held_parts()  # blocks of extreme units: the held sums
        first = held[0].to_block_moments()
        raw = np.stack([held[j].m3_ayb / held[j].weight for j in keep])
        cross_q = np.einsum("dc,cij->dij", linv, raw)
        out = replace(first, mean_y=0.0, var_y=1.0, cross=cross_q[0],
                      cross_q=cross_q if cross_q.shape[0] > 1 else None)
        return out if scales is None else replace(out, scale_a=scales[0], scale_b=scales[1])
