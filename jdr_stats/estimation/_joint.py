"""The rows of the joint estimator: each block's residual on the other block.

The whitening across blocks (:func:`jdr_stats.core._linalg.joint_whitening`,
theory page "Whitening", section "Correlated blocks") maps a row
``x = (a, b)`` to each block's residual on the other block,
``r_a = a - mean_a - B_a (b - mean_b)`` with ``B_a = Sigma_ab Sigma_bb^{-1}``
(the least squares coefficients of the sample), and likewise ``r_b``; each
residual block is then whitened by its partial covariance, which is the
sample covariance of its residual rows.  So the joint estimator is the
paper's estimator on the residual rows, and every procedure written for
rows (the moments engine, the rank tests, the coordinate tests) runs on them
unchanged.  This module builds those rows:

- in memory, :class:`JointModelData` (a :class:`~jdr_stats.io._data.ModelData`
  whose blocks are the residuals; reweighting it, as the bootstrap does,
  re-estimates the coefficients under the weights);
- from sums, :class:`JointMomentsData`: the residual rows are linear in
  the centred rows, ``r = (x - mean) R``, so their moments are those of the
  sums mapped by ``R`` (the y-weighted ones need the within-block moments
  ``m3_aya``, ``m3_byb`` of the :class:`~jdr_stats.Moments`, which a
  streamed model's one pass sums);
- on a row source (Parquet, CSV chunks, dask), :class:`JointSource`, which
  yields each chunk residualised, for the procedures that read the rows
  again (the rank tests, the ladle, the Poisson bootstrap).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from .. import config
from ..core import moments as core_moments
from ..core._linalg import BlockMoments, Whitening, joint_whitening
from ..core.whitening import DesignWhitening
from ..exceptions import RowsNotInMemoryError
from ..io._data import ModelData, RowsData, map_rows
from ..io._streamed import MomentsData
from ..moments import Moments, ResponseMoments
from ..runtime._frequency import frequency_nobs, observations
from ..streams._sources import ArraySource
from ..whitenings import WHITENING_METHODS

__all__ = ["JointModelData", "JointMomentsData", "JointSource", "ScaledModelData",
           "joint_data", "joint_fit_data", "original_means", "scaled_data",
           "stacked_block_moments"]


def _joint_whitening(mean: np.ndarray, cov: np.ndarray, names_a: list[str],
                     names_b: list[str], kind: str = "sample",
                     nobs: int | None = None,
                     scales: tuple[np.ndarray, np.ndarray] | None = None
                     ) -> DesignWhitening[Whitening]:
    scale = None if scales is None else np.concatenate(scales)
    return joint_whitening(mean, cov, (len(names_a), len(names_b)), ("exog_a", "exog_b"),
                           (names_a, names_b), kind, nobs, scale)


def _residuals(jw: DesignWhitening[Whitening], a: Any, b: Any) -> tuple[np.ndarray, np.ndarray]:
    """Each block's residual on the other block (contiguous rows)."""
    ra, rb = jw.residuals([np.asarray(a, float), np.asarray(b, float)])
    return np.ascontiguousarray(ra), np.ascontiguousarray(rb)


def _stacked(mom: Moments) -> tuple[np.ndarray, np.ndarray]:
    """The stacked design's mean and ``(p, p)`` centred co-moment of two-block sums."""
    return (np.concatenate([mom.mean_a, mom.mean_b]),
            np.block([[mom.m2_a, mom.m2_ab], [mom.m2_ab.T, mom.m2_b]]))


def _stacked_of_rows(y: np.ndarray, a: np.ndarray, b: np.ndarray, w: np.ndarray | None,
                     scale: np.ndarray | None = None) -> core_moments.StackedSums:
    """The stacked design's sums of in-memory rows (one pass; every
    response column's y-weighted second moment; of the columns times
    ``scale`` when given)."""
    with np.errstate(over="ignore", invalid="ignore"):  # refused below, by name
        t = core_moments.stacked_sums(y, (a, b), w, scale=scale)
    if t is None:
        raise ValueError("the joint estimator needs finite data")
    if not (np.isfinite(t.s).all() and np.isfinite(t.m2_xy).all()):
        raise core_moments.response_overflow(y, "the joint estimator's moments")
    if t.weight <= 0:
        raise ValueError("the weights sum to zero: the moments hold no data")
    return t


def _whitening_of_stacked(t: core_moments.StackedSums, names_a: list[str], names_b: list[str],
                          kind: str = "sample", scale: np.ndarray | None = None,
                          weights: np.ndarray | None = None) -> DesignWhitening[Whitening]:
    # the shrinkage counts the observations the model's case weights stand for
    return joint_whitening(t.mean_x, t.m2_xx / t.weight, (len(names_a), len(names_b)),
                           ("exog_a", "exog_b"), (names_a, names_b), kind,
                           frequency_nobs(t.nobs, weights), scale)


def stacked_block_moments(t: core_moments.StackedSums, jw: DesignWhitening[Whitening], *,
                          covariances: bool = True) -> BlockMoments:
    """The joint estimator's block moments from the stacked sums, without
    the residual rows: they are ``r = (x - mean) R`` (``R`` the
    whitening's residual map), so their y-weighted cross moment is the
    ``(a, b)`` block of ``R^T S R / W`` (``S`` the stacked design's
    y-weighted co-moment, :class:`~jdr_stats.core.moments.StackedSums`),
    their means are zero and each block's covariance is the whitening's
    partial covariance ``Sigma_{k|-k}`` (for the sample whitening the
    residual rows' sample covariance).  A response of ``q`` columns gives
    ``cross_q`` (one such block per column; ``cross``, ``mean_y`` and
    ``var_y`` are the first column's), as
    :func:`~jdr_stats.core._moments_engine.response_block_moments` of the rows."""
    assert jw.residual_map is not None
    n1 = jw[0].dim
    ra, rb = jw.residual_map[:, :n1], jw.residual_map[:, n1:]
    wsum = t.weight
    crosses = np.stack([ra.T @ sc @ rb for sc in t.s]) / wsum
    cov_a, cov_b = jw[0].cov, jw[1].cov
    if not covariances:
        cov_a, cov_b = np.full_like(cov_a, np.nan), np.full_like(cov_b, np.nan)
    scale = jw.scale
    return BlockMoments(nobs=t.nobs, mean_y=float(t.mean_y[0]),
                        var_y=float(t.m2_yy[0, 0]) / wsum, mean_a=np.zeros(n1),
                        mean_b=np.zeros(jw[1].dim), cov_a=cov_a.copy(), cov_b=cov_b.copy(),
                        cross=crosses[0], has_covariances=covariances,
                        cross_q=crosses if t.s.shape[0] > 1 else None,
                        scale_a=None if scale is None else scale[:n1],
                        scale_b=None if scale is None else scale[n1:])


class _ResidualRows(dict[str, np.ndarray]):
    """The blocks of a :class:`JointModelData`: each block's residual rows,
    formed on first read (the estimate needs only the sums; the rank
    tests, the coordinate tests and the plots read the rows).  Pickled as
    its recipe (the whitening and the model's rows), not its rows."""

    def __init__(self, whitening: DesignWhitening[Whitening], a: np.ndarray,
                 b: np.ndarray) -> None:
        super().__init__()
        self._recipe = (whitening, a, b)
        self._formed = False

    @property
    def formed(self) -> bool:
        """Whether the residual rows are formed (read at least once)."""
        return self._formed

    @property
    def recipe(self) -> tuple[DesignWhitening[Whitening], np.ndarray, np.ndarray]:
        """The whitening and the model's rows the residual rows are formed from."""
        return self._recipe

    def _form(self) -> None:
        if not self._formed:
            ra, rb = _residuals(*self._recipe)
            super().update({"exog_a": ra, "exog_b": rb})
            self._formed = True

    def __getitem__(self, key: str) -> np.ndarray:
        self._form()
        return super().__getitem__(key)

    def __iter__(self) -> Iterator[str]:
        return iter(("exog_a", "exog_b"))

    def __len__(self) -> int:
        return 2

    def __contains__(self, key: object) -> bool:
        return key in ("exog_a", "exog_b")

    def keys(self) -> Any:
        self._form()
        return super().keys()

    def values(self) -> Any:
        self._form()
        return super().values()

    def items(self) -> Any:
        self._form()
        return super().items()

    def get(self, key: str, default: Any = None) -> Any:
        self._form()
        return super().get(key, default)

    def copy(self) -> dict[str, np.ndarray]:
        self._form()
        return dict(super().items())

    def __repr__(self) -> str:
        return f"_ResidualRows(formed={self._formed})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (_ResidualRows, self._recipe)

    def __getstate__(self) -> dict[str, Any]:
        """The recipe, unformed: what a results file stores (the rows are
        formed again on first read)."""
        return {"_recipe": self._recipe, "_formed": False}


@dataclass(frozen=True)
class JointModelData(ModelData):
    """The residual rows of an in-memory model (``blocks``, formed when
    first read), with the model's own rows (``original``), the whitening
    across blocks (``whitening``) and the stacked design's sums it came
    from (``stacked``), of which :meth:`moments` is linear algebra.

    :meth:`moments` with ``weights`` (a bootstrap's resampling counts)
    re-estimates the coefficients under the weights from the reweighted
    sums, so every replicate re-estimates the whole whitening.
    """

    original: dict[str, np.ndarray] = field(default_factory=dict)
    whitening: DesignWhitening[Whitening] | None = None
    #: the covariance of both blocks the whitening uses ("sample", "shrinkage")
    kind: str = "sample"
    #: the stacked design's sums (one pass over the model's rows)
    stacked: core_moments.StackedSums | None = None
    #: the bootstrap refits each replicate through :meth:`moments`
    reweighted_refit = True

    def moments(self, weights: np.ndarray | None = None, *,
                covariances: bool = True) -> BlockMoments:
        a, b = self.original["exog_a"], self.original["exog_b"]
        if weights is None and self.stacked is not None and self.whitening is not None:
            return stacked_block_moments(self.stacked, self.whitening, covariances=covariances)
        w = self.weights
        if weights is not None:
            w = weights if w is None else w * weights
        scale = None if self.whitening is None else self.whitening.scale
        t = _stacked_of_rows(self.endog, a, b, w, scale)
        jw = _whitening_of_stacked(t, self.exog_names_a, self.exog_names_b, self.kind, scale,
                                   self.weights)
        return stacked_block_moments(t, jw, covariances=covariances)

    def mapped_rows(self, what: str, maps: Sequence[tuple[np.ndarray, np.ndarray]]
                    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """:meth:`ModelData.mapped_rows` of the residual rows; while they are
        not formed, from the model's rows, a block of rows at a time (each
        block's residuals, then their map: no ``m x n`` residual copy)."""
        blocks = self.blocks
        if not isinstance(blocks, _ResidualRows) or blocks.formed or self.whitening is None:
            return super().mapped_rows(what, maps)
        jw, a, b = blocks.recipe
        m = int(self.endog.shape[0])
        out = [np.empty((m, rot.shape[1])) for _, rot in maps]
        # cache-sized blocks: the residuals and the centred rows of one block
        step = max(1, config.CHUNK_BYTES // (8 * sum(x.shape[1] for x in (a, b))))
        for lo in range(0, m, step):
            sl = slice(lo, min(lo + step, m))
            parts = _residuals(jw, np.asarray(a)[sl], np.asarray(b)[sl])
            for r, (mean, rot), o in zip(parts, maps, out, strict=True):
                map_rows(r, mean, rot, out=o[sl])
        return self.endog, out

    def stacked_design(self) -> StackedSource:
        """The model's own rows as a :class:`StackedSource` (the Poisson
        bootstrap's pass, :meth:`replicate_moments` of each replicate)."""
        a, b = self.original["exog_a"], self.original["exog_b"]
        return StackedSource(ArraySource(self.endog, a, b, weights=self.weights))

    def replicate_moments(self, stacked: BlockMoments) -> BlockMoments:
        """See :func:`residual_moments`."""
        return residual_moments(stacked, self.exog_names_a, self.exog_names_b, self.kind,
                                self.nobs)


class StackedSource:
    """The rows of a row source ``base`` as ``(y, x, x)``, ``x = (a, b)``
    stacked: the moments of these rows (the Poisson bootstrap's pass
    reweights them) hold the covariance of the whole design as ``cov_a``
    and its y-weighted co-moment ``S = sum w y x x^T`` (centred, the
    within-block parts included: what :class:`~jdr_stats.Moments` with
    ``within=True`` holds) as ``cross``, so each replicate re-estimates the
    whitening across blocks from its own reweighted sums
    (:func:`residual_moments`)."""

    def __init__(self, base: Any) -> None:
        self.base = base
        self.nobs = base.nobs
        self.weighted = bool(getattr(base, "weighted", False))

    def iter_chunks(self, batch_rows: int | None = None
                    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        for y, a, b in self.base.iter_chunks(batch_rows):
            x = np.hstack([a, b])
            yield y, x, x

    def iter_weighted_chunks(self, batch_rows: int | None = None
                             ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, Any]]:
        for y, a, b, w in self.base.iter_weighted_chunks(batch_rows):
            x = np.hstack([a, b])
            yield y, x, x, w


def residual_moments(stacked: BlockMoments, names_a: list[str], names_b: list[str],
                     kind: str, nobs: int, scale: np.ndarray | None = None) -> BlockMoments:
    """The joint estimator's block moments from the moments of the stacked
    design (:class:`StackedSource`; one bootstrap replicate's): the
    whitening across blocks of their mean and covariance, each block's
    covariance its partial covariance and the cross moment the ``(a, b)``
    block of ``R^T S R`` (``R`` the residual map), as
    :func:`_bare_joint_data` forms them from bare sums.  A ``ValueError``
    when the replicate's covariance is singular (a constant column).
    ``scale``: the stacked columns are the user's times these powers of two
    (kept on the whitening and the moments, which map directions back)."""
    n1, n2 = len(names_a), len(names_b)
    scales = None if scale is None else (scale[:n1], scale[n1:])
    jw = _joint_whitening(stacked.mean_a, (stacked.cov_a + stacked.cov_a.T) / 2, names_a,
                          names_b, kind, nobs, scales)
    r3 = jw.residual_moment(stacked.cross)
    return BlockMoments(nobs=stacked.nobs, mean_y=stacked.mean_y, var_y=stacked.var_y,
                        mean_a=np.zeros(n1), mean_b=np.zeros(n2), cov_a=jw[0].cov,
                        cov_b=jw[1].cov, cross=r3[:n1, n1:],
                        scale_a=None if scales is None else scales[0],
                        scale_b=None if scales is None else scales[1])


class JointSource:
    """A row source yielding the chunks of ``base`` with each block replaced
    by its residual on the other block (``whitening``: the whitening across
    blocks of the whole data)."""

    def __init__(self, base: Any, whitening: DesignWhitening[Whitening],
                 kind: str = "sample") -> None:
        self.base = base
        self.whitening = whitening
        self.kind = kind
        self.nobs = base.nobs
        self.endog_name = base.endog_name
        self.names_a = list(base.names_a)
        self.names_b = list(base.names_b)
        self.batch_rows = getattr(base, "batch_rows", None)
        self.weighted = bool(getattr(base, "weighted", False))
        #: the rows the Poisson bootstrap's stacked design reads (a source of
        #: the columns times the whitening's power-of-two scales, when set)
        self.stacked_base: Any = base

    def iter_chunks(self, batch_rows: int | None = None
                    ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        for y, a, b in self.base.iter_chunks(batch_rows):
            yield (y, *_residuals(self.whitening, a, b))

    def iter_weighted_chunks(self, batch_rows: int | None = None
                             ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, Any]]:
        for y, a, b, w in self.base.iter_weighted_chunks(batch_rows):
            yield (y, *_residuals(self.whitening, a, b), w)

    def stacked_design(self) -> StackedSource:
        """The base rows as a :class:`StackedSource` (the Poisson bootstrap
        re-estimates the whitening across blocks in every replicate)."""
        return StackedSource(self.stacked_base)

    def replicate_moments(self, stacked: BlockMoments) -> BlockMoments:
        """See :func:`residual_moments`."""
        scale = self.whitening.scale if self.stacked_base is not self.base else None
        return residual_moments(stacked, self.names_a, self.names_b, self.kind, self.nobs,
                                scale)


class JointDaskSource(JointSource):
    """:class:`JointSource` over a dask source: each dask block is
    residualised in its own task; only the sums travel."""

    def tree_reduce(self, block_fn: Callable[..., Any], combine: Callable[[list[Any]], Any],
                    args: tuple[Any, ...] = ()) -> Any:
        return self.base.tree_reduce(_joint_block, combine, (block_fn, self.whitening, args))

    def blocks(self) -> Any:
        return self.base.blocks()


def _joint_block(y: np.ndarray, a: np.ndarray, b: np.ndarray, block_fn: Callable[..., Any],
                 jw: DesignWhitening[Whitening], args: tuple[Any, ...]) -> Any:
    """``block_fn`` on a dask block after the residualisation (a dask task)."""
    return block_fn(y, *_residuals(jw, a, b), *args)


class JointMomentsData(MomentsData):
    """The residual rows' moments of a model of sums (no rows in memory):
    :attr:`sums` are the residual rows' :class:`~jdr_stats.Moments`
    (mapped from the model's sums by the whitening's residual map),
    :meth:`moments` the joint estimator's block moments (each block's
    covariance its partial covariance, the cross moment the residuals');
    ``whitening`` the whitening across blocks that made them; ``source``
    the model's row source residualised (:class:`JointSource`, for the
    procedures that read the rows again), None for bare sums."""

    def __init__(self, residual: Moments, block: BlockMoments,
                 whitening: DesignWhitening[Whitening], *, origin: str = "moments",
                 source: JointSource | None = None) -> None:
        super().__init__(residual, source=source, origin=origin)
        self.block = block
        self.whitening = whitening

    def moments(self, weights: np.ndarray | None = None, *,
                covariances: bool = True) -> BlockMoments:
        if weights is not None:
            self.rows("reweighting the rows (the bootstrap)")
        if covariances:
            return self.block
        return replace(self.block, cov_a=np.full_like(self.block.cov_a, np.nan),
                       cov_b=np.full_like(self.block.cov_b, np.nan), has_covariances=False)


def _bare_joint_data(data: MomentsData, kind: str = "sample"
                     ) -> tuple[JointMomentsData, DesignWhitening[Whitening]]:
    """The joint estimator's moments from sums with the within-block
    moments: ``r = (x - mean) R`` (``R`` the whitening's residual map), so
    the residuals' y-weighted moment is ``R^T S R`` with ``S`` the ``(p, p)``
    y-weighted co-moment of the stacked blocks, their co-moment
    ``R^T M2 R`` and their co-moment with ``y`` ``R^T m2_xy``.  A model
    with a row source (a streamed model: its one pass summed them) keeps it,
    residualised, for the procedures that read the rows again."""
    mom: Moments = data.sums
    assert mom.m3_aya is not None and mom.m3_byb is not None
    names_a, names_b = data.exog_names_a, data.exog_names_b
    n1, wsum = mom.n1, mom.weight
    mean, m2 = _stacked(mom)
    jw = _joint_whitening(mean, m2 / wsum, names_a, names_b, kind, observations(data),
                          getattr(data, "scales", None))
    s = np.block([[mom.m3_aya, mom.m3_ayb], [mom.m3_ayb.T, mom.m3_byb]]) / wsum
    r3 = jw.residual_moment(s)
    r2 = jw.residual_moment(m2)
    r2 = (r2 + r2.T) / 2
    assert jw.residual_map is not None
    r2y = jw.residual_map.T @ np.concatenate([mom.m2_ay, mom.m2_by])
    n2 = mom.n2
    cov_a, cov_b = jw[0].cov, jw[1].cov
    scales = getattr(data, "scales", None)  # a streamed source of extreme units
    block = BlockMoments(nobs=mom.nobs, mean_y=mom.mean_y, var_y=mom.m2_y / wsum,
                         mean_a=np.zeros(n1), mean_b=np.zeros(n2), cov_a=cov_a, cov_b=cov_b,
                         cross=r3[:n1, n1:], scale_a=None if scales is None else scales[0],
                         scale_b=None if scales is None else scales[1])
    residual = Moments(
        nobs=mom.nobs, weight=wsum, mean_y=mom.mean_y, mean_a=np.zeros(n1),
        mean_b=np.zeros(n2), m2_y=mom.m2_y, m2_a=cov_a * wsum, m2_b=cov_b * wsum,
        m2_ab=r2[:n1, n1:], m2_ay=r2y[:n1], m2_by=r2y[n1:], m3_ayb=r3[:n1, n1:] * wsum,
        m3_aya=r3[:n1, :n1] * wsum, m3_byb=r3[n1:, n1:] * wsum, endog_name=mom.endog_name,
        names_a=mom.names_a, names_b=mom.names_b, weighted=mom.weighted)
    rsums = getattr(data, "response_sums", None)
    if rsums is not None:  # q response columns: each column's residual cross moment
        block = replace(block, mean_y=0.0, var_y=1.0,
                        **_response_crosses(rsums, jw, n1))
    source = data.source
    joint_source = None
    if source is not None and rsums is None:
        cls = JointDaskSource if callable(getattr(source, "tree_reduce", None)) else JointSource
        # the whitening scales the rows itself: the residuals of the source's own columns
        joint_source = cls(getattr(source, "unscaled", source), jw, kind)
        joint_source.stacked_base = source  # the scaled columns, when scaled
    out = JointMomentsData(residual, block, jw, origin=getattr(data, "origin", "moments"),
                           source=joint_source)
    out.adjustment = getattr(data, "adjustment", out.adjustment)
    out.response = data.response
    out.frequency_count = getattr(data, "frequency_count", None)
    return out, jw


def _response_crosses(rsums: ResponseMoments, jw: DesignWhitening[Whitening],
                      n1: int) -> dict[str, Any]:
    """The whitened response's cross moments of the residual rows from the
    sums of a response of ``q`` columns: column ``j``'s residual cross
    moment is the ``(a, b)`` block of ``R^T S_j R`` (``S_j`` its y-weighted
    co-moment of the stacked blocks, within-block parts included), and the
    whitened response's are ``L_Y^{-1}`` times those of the kept columns,
    as :meth:`~jdr_stats.moments.ResponseMoments.to_block_moments` forms
    them for the per-block estimator."""
    keep, linv = rsums.kept()
    held = rsums._held_parts()[0]  # at the scales of the whitening (blocks of extreme units)
    raw = []
    for j in keep:
        part = held[j]
        if not part.has_within:
            raise RowsNotInMemoryError(
                "the joint estimator (the default, independent_blocks=False) from bare sums "
                f"needs the within-block moments m3_aya and m3_byb of every response column; "
                f"the sums of column {part.endog_name!r} lack them. Compute them with "
                "ResponseMoments.from_arrays or from_sources (they do by default), fit with "
                "independent_blocks=True (the paper's per-block estimator, which assumes "
                "independent blocks), or build the model from arrays")
        s = np.block([[part.m3_aya, part.m3_ayb], [part.m3_ayb.T, part.m3_byb]]) / part.weight
        raw.append(jw.residual_moment(s)[:n1, n1:])
    cross_q = np.einsum("dc,cij->dij", linv, np.stack(raw))
    return {"cross": cross_q[0], "cross_q": cross_q if cross_q.shape[0] > 1 else None}


@dataclass(frozen=True)
class ScaledModelData(ModelData):
    """The model's rows in memory with columns of extreme units multiplied
    by powers of two (:func:`~jdr_stats.core.moments.column_scales`): the
    rows the per-block estimator fits when a column's squares would over-
    or underflow float64.  Multiplying by a power of two is exact, and the
    estimator is equivariant under column scalings, so its whitened
    quantities (singular values, rank tests, support tests) are those of
    the user's columns; :meth:`moments` carries the scales, which the
    whitening maps fold back into the directions (the user's units)."""

    #: each block's power-of-two column scales (the rows are the model's times them)
    scales: tuple[np.ndarray, ...] = ()

    def moments(self, weights: np.ndarray | None = None, *,
                covariances: bool = True) -> BlockMoments:
        mom = super().moments(weights, covariances=covariances)
        return replace(mom, scale_a=self.scales[0], scale_b=self.scales[1])


def scaled_data(data: RowsData) -> RowsData:
    """``data`` itself, or, for a model's rows in memory with a column
    beyond ``2^+-100`` (:func:`~jdr_stats.core.moments.column_scales`),
    a :class:`ScaledModelData` of its rows times power-of-two scales (a
    copy of those blocks only)."""
    if type(data) is not ModelData or len(data.blocks) != 2:
        return data
    _, a, b = data.rows("the column scales")
    scale = core_moments.column_scales((a, b))
    if scale is None:
        return data
    n1 = a.shape[1]
    scales = (scale[:n1], scale[n1:])
    blocks = {k: x * s if np.any(s != 1.0) else x
              for (k, x), s in zip(data.blocks.items(), scales, strict=True)}
    given = {f.name: getattr(data, f.name) for f in fields(data)}
    given["blocks"] = blocks
    return ScaledModelData(**given, scales=scales)


def joint_data(data: RowsData, kind: str = "sample", *, like: RowsData | None = None
               ) -> tuple[RowsData, DesignWhitening[Whitening]]:
    """The residual rows of ``data`` for the joint estimator, and the
    whitening across blocks that made them (``kind``: the covariance of
    both blocks it uses, ``"sample"`` or ``"shrinkage"``; the rows' moments
    then carry its partial covariances as the blocks' covariances).

    Rows in memory give a :class:`JointModelData`; a model of sums whose
    :class:`~jdr_stats.Moments` hold the within-block moments (a streamed
    model's: its one pass over the rows summed them) gives a
    :class:`JointMomentsData` from those sums alone, with its row source
    residualised (:class:`JointSource`) for the procedures that read the
    rows again; a model of sums with a row source but without them gives a
    :class:`~jdr_stats.io._streamed.MomentsData` over a :class:`JointSource`
    (one more pass for the residuals' moments); a model of bare sums gives
    a :class:`JointMomentsData` when its
    :class:`~jdr_stats.Moments` hold the within-block moments ``m3_aya``,
    ``m3_byb`` (the residuals' moments are linear in the sums; for a
    response of several columns, every column's), and raises otherwise.
    ``like``: a :class:`JointModelData` of the same rows (another ``kind``)
    whose stacked sums are reused (no second pass over the rows).
    """
    names_a, names_b = data.exog_names_a, data.exog_names_b
    if isinstance(data, ModelData):
        y, a, b = data.rows("the joint estimator")
        scale = core_moments.column_scales((a, b))  # extreme units: powers of two
        t = None
        if isinstance(like, JointModelData) and like.endog is y and like.weights is data.weights \
                and like.original.get("exog_a") is a and like.original.get("exog_b") is b:
            t = like.stacked
        if t is None:
            t = _stacked_of_rows(y, a, b, data.weights, scale)
        jw = _whitening_of_stacked(t, names_a, names_b, kind, scale, data.weights)
        return JointModelData(
            endog=data.endog, blocks=_ResidualRows(jw, a, b), endog_name=data.endog_name,
            names=data.names, row_index=data.row_index, weights=data.weights,
            is_pandas=data.is_pandas, response=data.response, adjustment=data.adjustment,
            class_codes=data.class_codes, original={"exog_a": a, "exog_b": b}, whitening=jw,
            kind=kind, stacked=t,
        ), jw
    source, sums = data.source, data.sums
    why = ("the joint estimator (independent_blocks=False) forms each block's residual on "
           "the other block row by row")
    several = getattr(data, "response_sums", None) is not None  # q columns: from the sums
    # a streamed model's one pass summed the within-block moments: no more passes
    summed = sums is not None and source is not None and sums.has_within
    if (source is None or several or summed) and isinstance(data, MomentsData) \
            and sums is not None:
        if not sums.has_within:
            raise RowsNotInMemoryError(
                "the joint estimator (independent_blocks=False) from bare sums needs the "
                "within-block moments m3_aya and m3_byb, which these Moments lack (they are "
                "off by default). Compute them with Moments.from_arrays, from_chunks or "
                "from_source(..., within=True) (every part of a sum), fit with "
                "independent_blocks=True (the paper's per-block estimator, which assumes "
                "independent blocks), or build the model from arrays or a row source")
        return _bare_joint_data(data, kind)
    if source is None or sums is None:
        raise RowsNotInMemoryError(
            f"{why}, but this model holds only sums (no rows, no row source to read "
            "again). Fit with independent_blocks=True (the paper's per-block estimator, "
            "which assumes independent blocks), or build the model from arrays or a row "
            "source (from_parquet, dask collections)")
    mom: Moments = sums
    mean, m2 = _stacked(mom)
    jw = _joint_whitening(mean, m2 / mom.weight, names_a, names_b, kind, mom.nobs,
                          getattr(data, "scales", None))
    cls = JointDaskSource if callable(getattr(source, "tree_reduce", None)) else JointSource
    joint_source = cls(source, jw, kind)
    sums = Moments.from_source(joint_source, within=False)
    if kind != "sample":  # the blocks' covariances: the regularised partial ones
        sums = Moments._raw(
            sums.nobs, sums.weight, sums.mean_y, sums.mean_a, sums.mean_b, sums.m2_y,
            jw[0].cov * sums.weight, jw[1].cov * sums.weight, sums.m2_ab, sums.m2_ay,
            sums.m2_by, sums.m3_ayb, sums.m3_aya, sums.m3_byb, sums.endog_name,
            tuple(sums.names_a), tuple(sums.names_b), sums.weighted)
    out = MomentsData(sums, source=joint_source, origin=getattr(data, "origin", "moments"))
    out.adjustment = getattr(data, "adjustment", out.adjustment)
    return out, jw


def joint_fit_data(data: RowsData, whitening: str) -> tuple[RowsData, str]:
    """The rows the joint estimator fits with ``whitening`` (a registered
    kind) and the whitening the estimator then applies to them.

    By the registry entry's ``joint``: ``"full"`` (``"sample"``,
    ``"shrinkage"``): each block's rows
    ``Sigma_{k|-k} (Sigma_hat^{-1} x)_k`` (:func:`joint_data`), whose moments
    carry the partial covariances ``Sigma_{k|-k}`` of ``Sigma_hat`` as the
    blocks' covariances, whitened by them (the kind ``"sample"`` on those
    moments).  ``"block-diagonal"`` (``"diagonal"``, ``"none"``): the covariance of
    both blocks together is block diagonal (the SDs, or the identity), so
    the joint whitening is the per-block one: the model's rows, unchanged.
    """
    joint = WHITENING_METHODS[whitening].joint
    if joint == "full":
        return joint_data(data, whitening)[0], "sample"
    if joint is None:
        raise ValueError(
            f"whitening={whitening!r} has no version over both blocks together (its "
            "registry entry's joint is None), which the joint estimator needs; fit with "
            "independent_blocks=True (the per-block estimator) or another whitening")
    return data, whitening


def original_means(data: RowsData, mom: BlockMoments) -> tuple[np.ndarray, np.ndarray]:
    """The model's block means (the residuals' are zero): from the sums, or
    the joint coefficients' centring."""
    jw = data.whitening if isinstance(data, (JointModelData, JointMomentsData)) else getattr(
        getattr(data, "source", None), "whitening", None)
    if isinstance(data, ScaledModelData):  # the scaled columns' means, in the user's units
        return mom.mean_a / data.scales[0], mom.mean_b / data.scales[1]
    if isinstance(jw, DesignWhitening):
        if jw.scale is not None:  # the means of the scaled columns, in the user's units
            n1 = jw[0].dim
            return jw[0].mean / jw.scale[:n1], jw[1].mean / jw.scale[n1:]
        return jw[0].mean, jw[1].mean
    scales = getattr(data, "scales", None)  # a streamed source of extreme units
    if scales is not None:
        return mom.mean_a / scales[0], mom.mean_b / scales[1]
    return mom.mean_a, mom.mean_b
