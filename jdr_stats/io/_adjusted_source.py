"""Covariates on streamed rows: a row source residualised on ``[1, Z]``, in two passes.

The in-memory model residualises the response and the blocks on the
covariates before anything else (:func:`jdr_stats.io._responses.residualize`).
A stream cannot hold the rows, but the least squares coefficients are
second-order sums: one pass of :class:`~jdr_stats.Moments` over a base
source whose block b carries the covariate columns last gives
``B_x = S_xz S_zz^{-1}`` for every variable ``x``; :class:`AdjustedSource`
then yields each chunk residualised, ``x - xbar - (z - zbar) B_x^T``, so
every later pass (the moments, the robust rank tests' sums) sees the same
rows as the in-memory model.  On file streams a categorical covariate
enters as the indicator columns of its levels, read by a first pass over
that column (:mod:`jdr_stats.io._stream_levels`); with dask input
(:func:`dask_adjusted`) a categorical column of a data frame becomes its
indicators, and the residualisation runs in the dask tasks.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import numpy as np

from ..exceptions import CovariateWarning
from ..moments import Moments, whitening_of_covariance
from ._responses import Adjustment

__all__ = ["AdjustedDaskSource", "AdjustedSource", "adjust_scaled", "adjust_source",
           "dask_adjusted"]


class AdjustedSource:
    """A row source yielding the chunks of ``base`` residualised on ``[1, Z]``.

    ``base`` yields ``(y, a, [b | z])`` with the ``p`` covariate columns last
    in block b; this source yields ``(y_r, a_r, b_r)``.
    """

    def __init__(self, base: Any, n2: int, means: tuple[np.ndarray, ...],
                 coefs: tuple[np.ndarray, ...], keep: np.ndarray) -> None:
        self.base = base
        self.n2 = n2
        self.means = means  # y, a, b, z
        self.coefs = coefs  # y (p,), a (n1, p), b (n2, p) on the kept z columns
        self.keep = keep
        #: each output column divided by these (the base's columns times
        #: power-of-two scales: :attr:`unscaled`'s residuals in the user's units)
        self.divisor: tuple[np.ndarray, np.ndarray] | None = None
        self.nobs = base.nobs
        self.endog_name = base.endog_name
        self.names_a = list(base.names_a)
        self.names_b = list(base.names_b)[:n2]
        self.batch_rows = getattr(base, "batch_rows", None)

    weighted = False  # covariates on a stream: no case weights (refused before)

    def iter_weighted_chunks(self, batch_rows: int | None = None
                             ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, None]]:
        for y, a, b in self.iter_chunks(batch_rows):
            yield y, a, b, None

    def locate(self, row0: int, k: int) -> str:
        """Where rows of a pass are, as the base source says (else the rows)."""
        base = getattr(self.base, "locate", None)
        return base(row0, k) if callable(base) else f"rows {row0} to {row0 + k - 1}"

    def params(self) -> tuple[Any, ...]:
        """What :func:`residualise` needs (picklable, for dask tasks)."""
        return self.n2, self.means, self.coefs, self.keep, self.divisor

    @property
    def unscaled(self) -> AdjustedSource:
        """The residuals in the user's units when the base's columns are
        scaled (:func:`adjust_scaled`; residualising is linear in each
        column, so the residuals of the scaled columns are the user's times
        the scales), else this source."""
        if self.scales is None:
            return self
        out = copy.copy(self)
        out.divisor = self.scales
        return out

    #: the scales of the residual columns ``(a, b)`` (:func:`adjust_scaled`)
    scales: tuple[np.ndarray, np.ndarray] | None = None

    def iter_chunks(self, batch_rows: int | None = None
                    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        params = self.params()
        for y, a, bz in self.base.iter_chunks(batch_rows):
            yield residualise(params, y, a, bz)


class AdjustedDaskSource(AdjustedSource):
    """:class:`AdjustedSource` over a dask source: the moments of the
    residualised rows are reduced on the cluster (each block residualised in
    its task; only the sums travel)."""

    def tree_reduce(self, block_fn: Callable[..., Any], combine: Callable[[list[Any]], Any],
                    args: tuple[Any, ...] = ()) -> Any:
        return self.base.tree_reduce(_adjusted_block, combine, (block_fn, self.params(), args))


def residualise(params: tuple[Any, ...], y: np.ndarray, a: np.ndarray, bz: np.ndarray,
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One chunk ``(y, a, [b | z])`` residualised on ``[1, Z]``: ``x - xbar - (z - zbar) B_x^T``."""
    n2, (my, ma, mb, mz), (cy, ca, cb), keep, divisor = params
    zc = np.asarray(bz[:, n2:], dtype=float)[:, keep] - mz
    ra, rb = a - ma - zc @ ca.T, np.asarray(bz[:, :n2], dtype=float) - mb - zc @ cb.T
    if divisor is not None:
        ra, rb = ra / divisor[0], rb / divisor[1]
    return y - my - zc @ cy, ra, rb


def _adjusted_block(y: np.ndarray, a: np.ndarray, bz: np.ndarray, block_fn: Callable[..., Any],
                    params: tuple[Any, ...], args: tuple[Any, ...]) -> Any:
    """``block_fn`` on a dask block after the residualisation (a dask task)."""
    return block_fn(*residualise(params, y, a, bz), *args)


def adjust_source(base: Any, znames: Sequence[str]) -> tuple[AdjustedSource, Adjustment]:
    """One pass over ``base`` for the coefficients; the adjusted source.

    Covariate columns collinear with the others (or constant) are dropped
    with a :class:`CovariateWarning`, as in memory.
    """
    p = len(znames)
    mom = Moments.from_source(base, within=False)
    n2 = mom.n2 - p
    w = mom.weight
    szz = mom.m2_b[n2:, n2:] / w
    sd = np.sqrt(np.clip(np.diag(szz), 0.0, None))
    live = np.flatnonzero(sd > 1e-12 * max(float(np.abs(mom.mean_b[n2:]).max()), 1e-300))
    keep = live[whitening_of_covariance(szz[np.ix_(live, live)])[0]] if live.size else live
    dropped = [znames[j] for j in range(p) if j not in set(keep.tolist())]
    if dropped:
        warnings.warn(f"covariates column(s) {dropped} are constant or collinear with the "
                      "other covariates and the intercept; dropped", CovariateWarning,
                      stacklevel=3)
    inv = np.linalg.inv(szz[np.ix_(keep, keep)])
    zk = n2 + keep
    coefs = (mom.m2_by[zk] / w @ inv, mom.m2_ab[:, zk] / w @ inv, mom.m2_b[:n2, zk] / w @ inv)
    means = (mom.mean_y, mom.mean_a, mom.mean_b[:n2], mom.mean_b[zk])
    cls = AdjustedDaskSource if callable(getattr(base, "tree_reduce", None)) else AdjustedSource
    src = cls(base, n2, means, coefs, keep)
    return src, Adjustment(names=tuple(znames[int(j)] for j in keep), dropped=tuple(dropped))


def adjust_scaled(base: Any, znames: Sequence[str]) -> tuple[AdjustedSource, Adjustment]:
    """:func:`adjust_source` of ``base`` with its columns of extreme units
    times powers of two (:class:`~jdr_stats.streams._scaled_source.ScaledSource`,
    chosen from the first chunk; every pass reads them scaled): the
    coefficients and the residuals are those of the scaled columns, whose
    scales the adjusted source's ``scales`` give (None: unit scale)."""
    from ..streams._scaled_source import ScaledDaskSource, ScaledSource

    dask = callable(getattr(base, "tree_reduce", None))
    scaled = ScaledDaskSource(base) if dask else ScaledSource(base)
    src, adj = adjust_source(scaled, znames)
    if scaled.scale_a is not None and scaled.scale_b is not None:
        sb = scaled.scale_b[:src.n2]
        if not (np.all(scaled.scale_a == 1.0) and np.all(sb == 1.0)):
            src.scales = (scaled.scale_a, sb)
    return src, adj


def _dask_covariates(covariates: Any, row_chunks: tuple[int, ...], m: int,
                     ) -> tuple[Any, list[str]]:
    """Covariates for dask input as a dask array ``(m, p)`` with the blocks' row
    chunks, and their names.  Numeric columns as they are; a categorical,
    text or boolean column of a (dask or pandas) data frame becomes the
    indicators of its levels but the first (``name[level]``)."""
    import dask.array as da
    import pandas as pd

    from ..streams._sources import is_dask_collection

    frame = covariates
    if is_dask_collection(frame) and hasattr(frame, "to_dask_array"):
        import dask.dataframe as dd

        if isinstance(frame, dd.Series):
            frame = frame.to_frame()
        text = [c for c in frame.columns if not pd.api.types.is_numeric_dtype(frame[c].dtype)
                or pd.api.types.is_bool_dtype(frame[c].dtype)]
        for c in text:  # known levels: a categorical keeps its order, others sorted
            col = frame[c]
            if isinstance(col.dtype, pd.CategoricalDtype):
                col = col.cat.as_known()
            else:
                col = col.astype(str).astype("category").cat.as_known()
                col = col.cat.set_categories(sorted(col.cat.categories))
            frame[c] = col
        if text:
            frame = dd.get_dummies(frame, columns=text, prefix_sep="[T.", drop_first=True,
                                   dtype=float)
            frame = frame.rename(columns={c: f"{c}]" for c in frame.columns
                                          if "[T." in str(c)})
        names = [str(c) for c in frame.columns]
        z = frame.to_dask_array(lengths=True).astype(float)
    elif is_dask_collection(frame):
        z = frame if frame.ndim == 2 else frame[:, None]
        if not np.issubdtype(z.dtype, np.number):
            raise TypeError(f"covariates must hold numbers; got a dask array of dtype {z.dtype}")
        names = [f"z{j}" for j in range(z.shape[1])]
    else:
        if isinstance(frame, pd.Series):
            frame = frame.to_frame()
        if isinstance(frame, pd.DataFrame):
            frame = pd.get_dummies(frame, prefix_sep="[T.", drop_first=True, dtype=float)
            frame.columns = [f"{c}]" if "[T." in str(c) else str(c) for c in frame.columns]
            names = list(frame.columns)
            arr = frame.to_numpy(dtype=float)
        else:
            arr = np.asarray(frame, dtype=float)
            arr = arr[:, None] if arr.ndim == 1 else arr
            names = [f"z{j}" for j in range(arr.shape[1])]
        if arr.shape[0] != m:
            raise ValueError(f"covariates must have the {m} rows of the blocks; got "
                             f"{arr.shape[0]}")
        z = da.from_array(arr, chunks=(row_chunks, -1))
    if z.shape[0] != m:
        raise ValueError(f"covariates must have the {m} rows of the blocks; got {z.shape[0]}")
    return z.rechunk({0: row_chunks, 1: -1}), names


def dask_adjusted(endog: Any, exog_a: Any, exog_b: Any, covariates: Any,
                  ) -> tuple[Any, Any, Adjustment]:
    """Sums of dask input adjusted for covariates: ``(sums, source, adjustment)``.

    The blocks (and the response columns) are residualised on ``[1, Z]`` as
    on any stream (:func:`adjust_source`), the residualisation done in the
    dask tasks: the moments are tree reductions on the cluster.  ``source``
    is None for a response of several columns
    (:class:`~jdr_stats.moments.ResponseMoments`).
    """
    import dask.array as da

    from ..moments import ResponseMoments
    from ..streams._dask_source import DaskSource

    first = endog[:, 0] if getattr(endog, "ndim", 1) == 2 and not hasattr(endog, "columns") \
        else endog
    plain = DaskSource(first, exog_a, exog_b)  # the names, as without covariates

    def arr(x: Any) -> Any:
        x = x.to_dask_array(lengths=True) if hasattr(x, "to_dask_array") else x
        return x.astype(float)

    y, a, b = arr(endog), arr(exog_a), arr(exog_b)
    a = a if a.ndim == 2 else a[:, None]
    b = (b if b.ndim == 2 else b[:, None]).rechunk({0: y.chunks[0], 1: -1})
    z, znames = _dask_covariates(covariates, y.chunks[0], y.shape[0])

    def make(yc: Any, ac: Any, bc: Any, yname: str, na: list[str], nb: list[str]) -> Any:
        base = DaskSource(yc, ac.rechunk({0: y.chunks[0]}), da.concatenate([bc, z], axis=1),
                          endog_name=yname, names_a=na, names_b=[*nb, *znames])
        return adjust_scaled(base, znames)

    if y.ndim == 2 and y.shape[1] > 1:
        q = y.shape[1]
        ynames = [f"y{c}" for c in range(q)]
        parts = [make(y[:, c], a, b, ynames[c], plain.names_a, plain.names_b)
                 for c in range(q)]
        yy, _ = make(y[:, 0], y, y.rechunk({0: y.chunks[0], 1: -1}), "y0", ynames, ynames)
        sums = ResponseMoments.from_sources([src for src, _ in parts], yy)
        return sums, None, parts[0][1]
    y1 = y[:, 0] if y.ndim == 2 else y
    src, adj = make(y1, a, b, plain.endog_name, plain.names_a, plain.names_b)
    return Moments.from_source(src, within="stacked"), src, adj
