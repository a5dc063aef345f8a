"""Three or more blocks streamed: Parquet, CSV chunks and dask arrays.

The K-block fit (:mod:`jdr_stats.fitting._kfit`, tensor or sketched route) needs
only sums over rows, in two passes:

1. the weighted means and the centred co-moment of the stacked design and
   the response (:class:`~jdr_stats.core.moments.DesignSums`, merged exactly
   chunk by chunk), from which each block's whitening (per block, or across
   blocks) is built exactly as from rows in memory, and the blocks'
   whitened cross covariances;
2. for each piece ``S`` (every pair of blocks and all ``K``), the sum over
   rows of ``w_i Y_i o z_is1 o ... o z_isJ`` (the K-way piece
   Hermite-corrected for a joint whitening: linear in the rows once the
   cross covariances of pass 1 are fixed) and of
   ``w_i |Y_i|^2 prod_{j in S} |z_ij|^2`` (the piece's noise scale), the
   response centred at its mean of pass 1
   (:func:`~jdr_stats.core.kestimate.piece_sums`); beyond
   ``policy.KBLOCK_TENSOR_MAX_ENTRIES`` the K-way piece's Khatri-Rao
   sketch with the same seeded test vectors as in memory.

Divided by the total weight they are the in-memory pieces and scales, so
the fit is the in-memory fit up to rounding (docs/theory/k_blocks.md,
section "Streamed rows").  The per-block estimator's rank tests without
case weights or with whole-number ones (``rank="auto"``, ``rank_tests()``)
take two more passes
(:mod:`jdr_stats.fitting._kstream_rank`); the joint estimator's rank tests,
the bootstrap and ``transform()`` of the training rows need the rows in
memory and are refused by name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from .. import policy
from ..core._linalg import joint_whitening
from ..core.design import BlockDesign
from ..core.kestimate import factors_from_pieces, piece_sums
from ..core.moments import DesignSums, chunk_sums, merge_sums
from ..core.tensor import pieces
from ..core.whitening import DesignWhitening
from ..exceptions import RowsNotInMemoryError
from ..inference._rank_results import RankTestResults
from ..runtime._frequency import observations, whole_numbers
from ..runtime._validation import check_weights_values
from ..streams._scaled_source import _block_scales, check_stream_response, stream_scales
from ..whitenings import kblock_refusal, per_block_whitening
from ._kfit import KBlockFit, _check_ranks, _route_tests, kblock_choices
from ._kstream_rank import streamed_rank_choice

__all__ = ["BlockSums", "block_reader_dask", "block_reader_file", "fit_streamed_kblocks"]

#: ``reduce(block_fn, combine)``: ``block_fn(y, blocks, w)`` on every chunk,
#: the results merged by ``combine(list)``.
Reducer = Callable[[Callable[..., Any], Callable[[list[Any]], Any]], Any]


class _FileReader:
    """The chunks of a two-block file source whose block ``a`` holds the
    columns of blocks ``1 .. K-1`` side by side and ``b`` block ``K``:
    split back into the K blocks."""

    def __init__(self, source: Any, widths: Sequence[int], origin: str) -> None:
        self._source = source
        self._cuts = np.cumsum(widths[:-1])[:-1].tolist()
        self._origin = origin
        # columns of extreme units: power-of-two scales from the first chunk
        # (the sums are of the columns times them; the whitening folds them back)
        self.scale: np.ndarray | None = None
        self._decided = False
        #: every case weight read is a whole number (copies of rows)
        self.integer_weights = True

    def __call__(self, block_fn: Callable[..., Any],
                 combine: Callable[[list[Any]], Any]) -> Any:
        out = None
        row0 = 0
        for i, (y, a, b, w) in enumerate(self._source.iter_weighted_chunks()):
            try:
                if w is not None:
                    wf = np.asarray(w, dtype=float)
                    check_weights_values(wf, row0)
                    self.integer_weights &= whole_numbers(wf)
                row0 += len(y)
                if not self._decided:
                    self._decided = True
                    check_stream_response(y)
                    self.scale = stream_scales([a, b])
                part = block_fn(y, [*np.split(a, self._cuts, axis=1), b], w)
            except ValueError as exc:
                raise ValueError(f"{self._origin}, chunk {i}: {exc}") from None
            out = part if out is None else combine([out, part])
        if out is None:
            raise ValueError(f"{self._origin} has no rows")
        return out


class _DaskReader:
    """A tree reduction on the cluster over the row blocks of a
    :class:`~jdr_stats.sources.DaskSource` built as in :class:`_FileReader`."""

    def __init__(self, source: Any, widths: Sequence[int]) -> None:
        self._source = source
        self._cuts = np.cumsum(widths[:-1])[:-1].tolist()
        # columns of extreme units: power-of-two scales from the first row
        # block (one task; the rule of the file readers)
        self.scale: np.ndarray | None = source.first_block(_block_scales)

    def __call__(self, block_fn: Callable[..., Any],
                 combine: Callable[[list[Any]], Any]) -> Any:
        return self._source.tree_reduce(_split_apply, combine, (block_fn, self._cuts))


def _split_apply(y: np.ndarray, a: np.ndarray, b: np.ndarray, block_fn: Callable[..., Any],
                 cuts: list[int]) -> Any:
    return block_fn(y, [*np.split(a, cuts, axis=1), b], None)


def _overflowed_column(sums: DesignSums, flat: Sequence[str], endog_name: str) -> str | None:
    """A column whose sums of squares or products are not finite, or None."""
    if not np.isfinite(sums.m2_yy).all():
        return endog_name
    for arr in (np.diag(sums.m2_xx), sums.m2_xy, sums.m2_xx):
        if not np.isfinite(arr).all():
            return flat[int(np.argwhere(~np.isfinite(arr))[0][0])]
    if not all(np.isfinite(v).all() for v in sums.m3.values()):
        return flat[0]
    return None


def block_reader_file(source_cls: Any, path: Any, *, y: str, blocks: Mapping[str, list[str]],
                      weights: str | None, batch_rows: int | None, origin: str,
                      **kwargs: Any) -> _FileReader:
    """A reader of a Parquet or CSV file's ``blocks`` (``source_cls`` the
    two-block :class:`~jdr_stats.sources.ParquetSource` or
    :class:`~jdr_stats.sources.CSVSource`)."""
    cols = list(blocks.values())
    head = [c for block in cols[:-1] for c in block]
    src = source_cls(path, y=y, a=head, b=cols[-1], weights=weights, batch_rows=batch_rows,
                     **kwargs)
    return _FileReader(src, [len(c) for c in cols], origin)


def block_reader_dask(endog: Any, blocks: Sequence[Any],
                      names: Sequence[str]) -> tuple[_DaskReader, list[list[str]], str]:
    """A reader of dask blocks (arrays, or DataFrames whose columns name the
    variables), the blocks' variable names and the response's name."""
    import dask.array as da
    import dask.dataframe as dd

    arrays, labels = [], []
    for name, x in zip(names, blocks, strict=True):
        if isinstance(x, (dd.DataFrame, dd.Series)):
            frame = x.to_frame() if isinstance(x, dd.Series) else x
            labels.append([str(c) for c in frame.columns])
            arr = frame.to_dask_array(lengths=True)
        else:
            arr = x[:, None] if x.ndim == 1 else x
            labels.append([f"{name}{j}" for j in range(arr.shape[1])])
        arrays.append(arr)
    from ..streams._sources import DaskSource

    if isinstance(endog, (dd.DataFrame, dd.Series)):
        yname = str(endog.name) if isinstance(endog, dd.Series) else str(endog.columns[0])
        endog = endog.to_dask_array(lengths=True)
    else:
        yname = "y"
    head = da.hstack(arrays[:-1]) if len(arrays) > 2 else arrays[0]
    src = DaskSource(endog, head, arrays[-1], endog_name=yname,
                     names_a=[c for lab in labels[:-1] for c in lab], names_b=labels[-1])
    return _DaskReader(src, [len(lab) for lab in labels]), labels, yname


def _merge_all(parts: list[DesignSums]) -> DesignSums:
    out = parts[0]
    for p in parts[1:]:
        out = merge_sums(out, p)
    return out


def _add_pieces(parts: list[Any]) -> Any:
    tensors = {s: sum(p[0][s] for p in parts) for s in parts[0][0]}
    norms = {s: sum(p[1][s] for p in parts) for s in parts[0][1]}
    return tensors, norms


class BlockSums:
    """The data of a streamed model of three or more blocks: the sums of
    pass 1 and the reader to stream again (no rows).

    Implements :class:`~jdr_stats.io._data.RowsData`.  Attributes:
    ``design_sums`` (:class:`~jdr_stats.core.moments.DesignSums`),
    ``names`` (each block's variables, by block name), ``endog_name``,
    ``nobs``, ``origin``, ``reader``; :meth:`rows` and :meth:`moments` (the
    two-block moments) raise
    :class:`~jdr_stats.exceptions.RowsNotInMemoryError`.
    """

    is_pandas = True
    row_index = None
    weights = None
    sums = None  # no two-block Moments

    def __init__(self, reader: Reducer, names: Mapping[str, list[str]], endog_name: str,
                 origin: str) -> None:
        widths = [len(c) for c in names.values()]
        design = BlockDesign.of(widths, q=1)
        spans = [design.span(k) for k in range(len(widths))]

        def block_fn(y: np.ndarray, blocks: list[np.ndarray],
                     w: np.ndarray | None) -> DesignSums:
            if y.ndim != 1:
                raise ValueError(f"the response must be one column; got shape {y.shape}")
            scale = getattr(reader, "scale", None)  # the first chunk's choice
            if scale is not None:  # exact: powers of two
                blocks = [np.asarray(x, float) * scale[s] for x, s in zip(blocks, spans,
                                                                          strict=True)]
            with np.errstate(over="ignore", invalid="ignore"):  # refused below, by name
                out = chunk_sums(y, blocks, w, design=design)
            if out is None:
                raise ValueError("NaN or infinite values in the model's columns")
            bad = _overflowed_column(out, [c for cols in names.values() for c in cols],
                                     endog_name)
            if bad is not None:
                raise ValueError(f"the sums of squares and products overflow float64 in "
                                 f"column {bad!r}: the values are too large to square and "
                                 "sum (corrupt data, or a column to rescale: multiply "
                                 "it by a power of ten, or fit from the rows in memory, "
                                 "which scale such columns exactly)")
            return out

        self.design_sums: DesignSums = reader(block_fn, _merge_all)
        self.scale: np.ndarray | None = getattr(reader, "scale", None)
        # read with the sums (a reloaded results file keeps it, not the reader)
        self._integer_weights = bool(getattr(reader, "integer_weights", False))
        self.reader = reader
        self.names = {n: list(c) for n, c in names.items()}
        self.endog_name = endog_name
        self.origin = origin
        sums = self.design_sums
        if sums.weight <= 0:
            raise ValueError(f"{origin}: the weights sum to zero")
        sd = np.sqrt(np.clip(np.diag(sums.m2_xx), 0.0, None) / sums.weight)
        scale = np.maximum(np.abs(sums.mean_x), 1.0)
        flat = [c for cols in self.names.values() for c in cols]
        const = [flat[j] for j in np.flatnonzero(sd <= 1e-12 * scale)]
        if const:
            raise ValueError(f"{origin}: constant column(s) {const}; drop them")

    @property
    def nobs(self) -> int:
        return int(self.design_sums.nobs)

    @property
    def weighted(self) -> bool:
        """Whether the sums carry case weights other than one per row."""
        return bool(self.design_sums.weight != self.design_sums.nobs)

    @property
    def frequency_count(self) -> int | None:
        """The observations whole-number case weights stand for (their sum),
        or None (no weights, or weights not all whole numbers: the rows
        count; :func:`~jdr_stats.runtime._frequency.observations`)."""
        total = float(self.design_sums.weight)
        if not self.weighted or not getattr(self, "_integer_weights", False) or total < 1:
            return None
        return round(total)

    @property
    def source(self) -> Any:
        return self.reader

    @property
    def exog_names_a(self) -> list[str]:
        return list(next(iter(self.names.values())))

    @property
    def exog_names_b(self) -> list[str]:
        return list(list(self.names.values())[1])

    def moments(self, weights: np.ndarray | None = None, *,
                covariances: bool = True) -> Any:
        """Raise :class:`RowsNotInMemoryError`: the two-block moments do not
        describe three or more blocks."""
        raise RowsNotInMemoryError(
            f"moments(): the two-block moments do not describe the {len(self.names)} blocks "
            f"streamed from {self.origin}; the K-block fit reads its own sums (fit())")

    @property
    def response_unit(self) -> float:
        """1.0: the rows are not here (a streamed response that far from 1 is
        refused when read)."""
        return 1.0

    def rows(self, what: str, *, weights: bool = False,
             unit: bool = False) -> tuple[Any, ...]:
        """Raise :class:`RowsNotInMemoryError` naming ``what``."""
        raise RowsNotInMemoryError(
            f"{what} needs the rows in memory, but this model of "
            f"{len(self.names)} blocks was streamed from {self.origin} and holds only "
            "sums. What works here: fit() with given ranks (an int or a dict by block), "
            "summary(), to_dict(), transform() of new data, and the per-block rank tests "
            "without case weights or with whole-number ones (fit('auto', "
            "independent_blocks=True), rank_tests()). "
            "The bootstrap, sparse fits and transform() of the training rows need a model "
            "built from arrays: JointDimReduction.from_blocks(y, blocks)")

    def require_source(self, what: str) -> None:
        """The reader can stream again: nothing to raise."""

    #: the sums come from a second pass over the reader, not from moments
    from_moments = False
    def streamed_rank_tests(self, res: KBlockFit) -> RankTestResults:
        """``res.rank_tests()``: every rank's test of every block, from two
        passes over the source, for the fitted estimator and whitening
        (:mod:`jdr_stats.fitting._kstream_rank`)."""
        if self.reader is None:  # reloaded by jdr.load
            raise RowsNotInMemoryError(
                f"rank_tests() streams the rows again from {self.origin}, which a results "
                "file does not keep; its fit's tests are res.rank_test_table. Rebuild "
                "the model from the source to test again")
        settings = res.settings
        full = fit_streamed_kblocks(
            res.model, "auto", whitening=settings["whitening"],
            independent_blocks=settings["estimator"] == "per-block", sparsity=None,
            rank_method="robust", alpha=settings["alpha"] or 0.05, seed=None,
            main_effects=bool(settings["main_effects"]), stop=False)
        assert full._tables is not None
        return res._rank_results(full._tables, "robust", full.settings["influence"])

    def check_estimator(self, estimator: str) -> None:
        """Every estimator can be fitted from a source: nothing to raise."""

    def piece_totals(self, white: DesignWhitening[Any], ybar: float, *, cross_cov: Any,
                     main_effects: bool, tests: Any,
                     piece_list: Sequence[tuple[int, ...]]) -> Any:
        """The pieces' sums and noise sums over the rows (a second pass; module
        docstring, step 2)."""
        def block_fn(y: np.ndarray, blocks: list[np.ndarray], w: np.ndarray | None) -> Any:
            return piece_sums(y - ybar, white.rows(blocks), cross_cov=cross_cov, w=w,
                              main_effects=main_effects, tests=tests)

        return self.reader(block_fn, _add_pieces)


def _whitening(sums: DesignSums, names: Sequence[str], labels: Sequence[Sequence[str]],
               kind: str, estimator: str, scale: np.ndarray | None = None,
               count: int | None = None) -> DesignWhitening[Any]:
    """The whitening of :func:`jdr_stats.fitting._kfit._whiten_arrays` from the sums
    (of the columns times ``scale``, when given: kept on the whitening and
    its maps, which scale the rows and map directions back; ``count``: the
    observations a shrinkage counts, the rows when None)."""
    W = sums.weight
    widths = [len(lab) for lab in labels]
    if estimator == "joint":
        return joint_whitening(sums.mean_x, sums.m2_xx / W, widths, list(names),
                               [list(lab) for lab in labels], scale=scale)
    made = per_block_whitening(
        kind, [sums.block_mean(k) for k in range(len(widths))],
        [sums.block_m2(k, k) / W for k in range(len(widths))],
        int(sums.nobs) if count is None else count, names, labels, scale=scale)
    if made is None:
        raise ValueError(kblock_refusal(kind))
    return made


def fit_streamed_kblocks(model: Any, rank: Any, *, whitening: str, independent_blocks: bool,
                         sparsity: Any, rank_method: str, alpha: float,
                         seed: Any, main_effects: bool = False,
                         stop: bool = True) -> KBlockFit:
    """The K-block fit of a streamed model (module docstring); ``rank="auto"``
    with ``stop=False``: every rank's test (``rank_tests()``)."""
    data: BlockSums = model._data
    # reloaded by jdr.load: the file keeps the sums, not the source
    if data.reader is None and not data.from_moments:
        raise RowsNotInMemoryError(
            f"fit() streams the rows again from {data.origin}, which a results file does "
            "not keep; rebuild the model from the source to refit")
    names = list(model.block_names)
    labels = [data.names[n] for n in names]
    widths = [len(lab) for lab in labels]
    if sparsity is not None:
        data.rows(f"sparsity={sparsity!r} (a sparse fit of three or more blocks)")
    if rank == "auto" and data.from_moments:
        data.rows('rank="auto" (the per-block rank tests)')
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
    if rank != "auto":
        ranks = _check_ranks(rank, names, widths)
    m = data.nobs
    # the same shape-based choices as in memory
    count = observations(data)  # whole-number weights: the copies of rows
    est_choice, wchoice, kind = kblock_choices(independent_blocks, m, widths, whitening, count)
    estimator = est_choice.name
    data.check_estimator(estimator)
    route = policy.kblock_route(m, tuple(widths), 1)
    tests = _route_tests(route, widths)  # the sketch's: linear in the rows too
    weighting = policy.kblock_weighting()
    sums = data.design_sums
    white = _whitening(sums, names, labels, kind, estimator, data.scale, count)
    cross_cov = None
    if estimator == "joint":
        assert white.residual_map is not None
        cov = white.residual_moment(sums.m2_xx / sums.weight)
        span = BlockDesign.of(widths).span
        cross_cov = {(a, b): white.cross(a, b, cov[span(a), span(b)])
                     for a in range(len(widths)) for b in range(a + 1, len(widths))}
    ybar = float(sums.mean_y[0])
    tsum, nsum = data.piece_totals(white, ybar, cross_cov=cross_cov, main_effects=main_effects,
                                   tests=tests, piece_list=pieces(len(widths), main_effects))
    W = sums.weight
    tensors = {s: t / W for s, t in tsum.items()}
    scales = {s: nsum[s] / W / (W * float(np.prod([widths[j] for j in s])))
              for s in pieces(len(widths), main_effects)}
    fac = factors_from_pieces(tensors, scales, widths, 1,
                              weighting=weighting.name,  # type: ignore[arg-type]
                              tests=tests)
    tables, influence = None, None
    if rank == "auto":
        tables, ranks, influence = streamed_rank_choice(
            data, fac, white, ybar, names, estimator=estimator, main_effects=main_effects,
            rank_method=rank_method, alpha=alpha, stop=stop)
    settings = {"whitening": kind, "whitening_reason": wchoice.reason if whitening == "auto"
                else "given", "estimator": estimator,
                "estimator_reason": est_choice.reason, "route": route.to_dict(),
                "weighting": weighting.to_dict(), "main_effects": main_effects,
                "rank_method": "robust per-block" if tables is not None else None,
                "influence": None if influence is None else influence.to_dict(),
                "alpha": alpha if tables is not None else None, "streamed": data.origin}
    means = [sums.block_mean(k)[None, :] for k in range(len(widths))]
    if data.scale is not None:  # the user's units
        means = [mu / data.scale[BlockDesign.of(widths).span(k)] for k, mu in enumerate(means)]
    return KBlockFit(model, fac, white, ranks, settings, tables, means)
