"""Sufficient statistics of a response of ``q`` columns: mergeable, streamable.

:class:`ResponseMoments` holds one :class:`~jdr_stats.Moments` per response
column (the same blocks, the column as ``y``) and the co-moments of the
response columns themselves (a :class:`~jdr_stats.Moments` whose two
"blocks" are the response columns).  Every part merges exactly with ``+``
(Chan-Golub-LeVeque, Pebay), so the moments of chunks, files or dask
partitions add up; :meth:`ResponseMoments.to_block_moments` whitens the
response from its co-moments and gives the ``q`` whitened cross moments the
HOSVD estimator takes (:mod:`jdr_stats._hosvd`).  The whitened cross moment
is linear in the raw ones, ``X_c = sum_d (L_Y^{-1})_{cd} S_d``, so whitening
after the merge is exact.  A categorical response is its class indicators
(classes declared up front, so that every part codes them alike).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from ._linalg import BlockMoments
from .moments import Moments

__all__ = ["ResponseMoments", "whitening_of_covariance"]


def whitening_of_covariance(cov: np.ndarray, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """Kept columns and ``L^{-1}`` of the covariance of the response columns.

    A pivoted Cholesky factorisation of the correlation matrix drops the
    columns whose residual variance, given the columns kept before them, is
    below ``tol`` (collinear columns); ``L`` is the Cholesky factor of the
    covariance of the kept columns (in their original order).
    """
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    if not (sd > 0).all():
        raise ValueError("a response column is constant; the response must vary")
    corr = cov / np.outer(sd, sd)
    q = corr.shape[0]
    resid = corr.copy()
    chosen: list[int] = []
    for _ in range(q):
        diag = np.diag(resid).copy()
        diag[chosen] = -np.inf
        j = int(np.argmax(diag))
        if diag[j] <= tol:
            break
        chosen.append(j)
        col = resid[:, j] / np.sqrt(resid[j, j])
        resid = resid - np.outer(col, col)
    keep = np.sort(np.array(chosen, dtype=int))
    chol = np.linalg.cholesky(cov[np.ix_(keep, keep)])
    return keep, np.linalg.inv(chol)


class ResponseMoments:
    """Mergeable sums of ``(Y, a, b)`` for a response of ``q`` columns.

    Build with :meth:`from_arrays` (a 2-D ``Y``, or class labels with
    ``classes=``) or :meth:`from_sources` (one row source per response
    column: Parquet, CSV chunks, dask); merge with ``+``; give to
    :meth:`jdr_stats.JointDimReduction.from_moments`.

    Examples
    --------
    >>> import numpy as np, jdr_stats as jdr
    >>> from jdr_stats._response_moments import ResponseMoments
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
                                 names_a=names, names_b=names)
        return cls(parts, yy, kind=kind, names=names, classes=classes or ())

    @classmethod
    def from_sources(cls, parts: Sequence[Any], yy: Any) -> ResponseMoments:
        """Sums streamed from row sources (:mod:`jdr_stats.sources`).

        ``parts``: one source per response column (that column as ``y``, the
        two blocks); ``yy``: a source whose two blocks are the response
        columns.  ``q + 1`` passes; flat memory; dask sources are reduced on
        their cluster.
        """
        moms = [Moments.from_source(src) for src in parts]
        return cls(moms, Moments.from_source(yy), names=[p.endog_name for p in moms])

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

    def kept(self) -> tuple[np.ndarray, np.ndarray]:
        """Kept response columns and the inverse Cholesky factor of their covariance."""
        return whitening_of_covariance(self.yy.m2_a / self.yy.weight)

    def to_block_moments(self) -> BlockMoments:
        """Block moments of the first part with the ``q`` whitened cross moments.

        ``cross_q[c] = sum_d (L_Y^{-1})_{cd} m3_d / W`` over the kept
        columns; ``mean_y = 0``, ``var_y = 1`` (whitened response).
        """
        keep, linv = self.kept()
        first = self.parts[0].to_block_moments()
        raw = np.stack([self.parts[j].m3_ayb / self.parts[j].weight for j in keep])
        cross_q = np.einsum("dc,cij->dij", linv, raw)
        return replace(first, mean_y=0.0, var_y=1.0, cross=cross_q[0],
                       cross_q=cross_q if cross_q.shape[0] > 1 else None)
