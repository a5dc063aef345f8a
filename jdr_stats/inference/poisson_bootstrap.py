"""The Poisson bootstrap: all replicates' moments in one pass over the rows.

The pairs bootstrap draws, for every replicate, multinomial counts of the
``m`` rows; the Poisson bootstrap gives each row an independent weight
``w_{bi} ~ Poisson(1)`` instead (Hanley and MacGibbon 2006; Chamandy et al.
2012).  The weights of different rows are independent, so they can be drawn
row block by row block, and the reweighted moments of all ``B`` replicates
are accumulated in a single pass: for every chunk of rows one product of the
``(B x k)`` weight matrix with the ``(k x p)`` per-row features.  Nothing of
size ``B x m`` is ever held, and the pass needs only
``iter_chunks()`` of a row source, so it runs on any source of the
row-source protocol (``jdr_stats.streams._sources``: in-memory arrays, Parquet,
CSV, dask).

The weights come from the resampling engine (:mod:`jdr_stats.resampling._engine`):
those of row block ``j`` (rows ``j * BLOCK_ROWS`` to ``(j + 1) * BLOCK_ROWS - 1``,
``BLOCK_ROWS`` of :mod:`jdr_stats.config`) from a generator seeded by
``SeedSequence(entropy, spawn_key=(j,))``, so they do not depend on how the
source splits its rows into chunks.  Nor do the sums: both passes regroup
the source's chunks into pieces on a fixed grid of rows (``PIECE_ROWS`` of
:mod:`jdr_stats.config`, cut at the weight blocks' edges) and sum piece by
piece in double precision, so rows in memory, a Parquet file, CSV chunks
and dask arrays give the same moments up to the rounding of the values
read (a CSV parser's last bit).  The derivation is in
``docs/theory/bootstrap.md``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from .. import config, policy
from ..core._linalg import BlockMoments, ReweightedMoments, blas_single_thread
from ..resampling._engine import draw_entropy, inner_weights, poisson_weights
from ..runtime._validation import check_bool, check_int
from ..streams._sources import ArraySource  # noqa: F401 (the Examples section uses it)

__all__ = ["poisson_weights", "inner_weights", "poisson_moments",
           "poisson_plan", "poisson_pass", "PoissonPlan", "weighted_moments"]


class _SourceMoments(ReweightedMoments):
    """:class:`~jdr_stats.core._reweighted.ReweightedMoments` over chunks of a source.

    Built from the full-sample means and column ranges (first pass); the
    per-row features of a chunk are computed by the parent's ``_features``
    on that chunk, and ``moments`` turns feature sums into BlockMoments.
    """

    def __init__(self, nobs, ybar, abar, bbar, range_a, range_b):
        n1, n2 = abar.shape[0], bbar.shape[0]
        dummy_a, dummy_b = np.zeros((1, n1)), np.zeros((1, n2))
        super().__init__(np.zeros(1), dummy_a, dummy_b, None)
        self.m = nobs
        self.ybar, self.abar, self.bbar = ybar, abar, bbar
        self._scale_a, self._scale_b = range_a**2, range_b**2

    def chunk_features_t(self, y, a, b, w0, out: np.ndarray) -> np.ndarray:
        """Features of a chunk, transposed: shape (width, k), rows contiguous.

        The same features as the parent's ``_features`` (same layout), built
        feature by feature so that every write is contiguous.
        """
        s = self._slices
        k = y.shape[0]
        f = out[:, :k]
        ac = (a - self.abar).T  # (n1, k)
        bc = (b - self.bbar).T
        yc = y - self.ybar
        f[s["one"]] = 1.0
        f[s["y"]] = yc
        f[s["a"]] = ac
        f[s["b"]] = bc
        f[s["yy"]] = yc * yc
        np.multiply(ac, yc, out=f[s["ay"]])
        np.multiply(bc, yc, out=f[s["by"]])
        np.multiply(ac, ac, out=f[s["aad"]])
        np.multiply(bc, bc, out=f[s["bbd"]])
        i1, j1 = self._iu1
        np.multiply(ac[i1], ac[j1], out=f[s["aao"]])
        i2, j2 = self._iu2
        np.multiply(bc[i2], bc[j2], out=f[s["bbo"]])
        ab = f[s["ab"]].reshape(self.n1, self.n2, k)
        np.multiply(ac[:, None, :], bc[None, :, :], out=ab)
        np.multiply(f[s["ab"]], yc, out=f[s["aby"]])
        if w0 is not None:
            f *= w0
        return f


def _chunks(source: Any, case_weights: np.ndarray | None):
    """``(y, a, b, w)`` chunks: the source's own case weights when it
    carries them (``iter_weighted_chunks``), else slices of ``case_weights``
    (or None)."""
    if getattr(source, "weighted", False) and hasattr(source, "iter_weighted_chunks"):
        yield from source.iter_weighted_chunks()
        return
    offset = 0
    for y, a, b in source.iter_chunks():
        k = y.shape[0]
        yield y, a, b, None if case_weights is None else case_weights[offset:offset + k]
        offset += k


def _join(parts: list[tuple[Any, ...]]) -> tuple[Any, ...]:
    if len(parts) == 1:
        return parts[0]
    cols = zip(*parts, strict=True)
    return tuple(None if col[0] is None else np.concatenate(col) for col in cols)


def _grid(source: Any, case_weights: np.ndarray | None
          ) -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray | None]]:
    """:func:`_chunks` regrouped on a fixed grid: piece ``j`` holds rows
    ``j * PIECE_ROWS`` to ``(j + 1) * PIECE_ROWS - 1`` (the last one fewer),
    however the source chunks them.  Sums taken piece by piece then add the
    same numbers in the same order for every source; a piece is a view of a
    chunk where it lies in one, else a copy of its parts."""
    step = config.PIECE_ROWS
    parts: list[tuple[Any, ...]] = []
    held = 0
    for chunk in _chunks(source, case_weights):
        k, pos = chunk[0].shape[0], 0
        while pos < k:
            take = min(k - pos, step - held)
            parts.append(tuple(None if x is None else x[pos:pos + take] for x in chunk))
            held += take
            pos += take
            if held == step:
                yield _join(parts)
                parts, held = [], 0
    if held:
        yield _join(parts)


def _first_pass(source: Any, case_weights: np.ndarray | None):
    """Full-sample (weighted) means and column ranges of a row source
    (summed on the grid of :func:`_grid`: the same numbers however the
    source chunks its rows)."""
    tot = 0.0
    sy = sa = sb = None
    lo_a = hi_a = lo_b = hi_b = None
    offset = 0
    for y, a, b, w in _grid(source, case_weights):
        k = y.shape[0]
        offset += k
        if sy is None:
            sy, sa, sb = 0.0, np.zeros(a.shape[1]), np.zeros(b.shape[1])
            lo_a, hi_a = np.full(a.shape[1], np.inf), np.full(a.shape[1], -np.inf)
            lo_b, hi_b = np.full(b.shape[1], np.inf), np.full(b.shape[1], -np.inf)
        if w is None:
            tot += k
            sy += float(y.sum())
            sa += a.sum(axis=0)
            sb += b.sum(axis=0)
        else:
            tot += float(w.sum())
            sy += float(w @ y)
            sa += w @ a
            sb += w @ b
        if k:
            assert lo_a is not None and hi_a is not None and lo_b is not None and hi_b is not None
            lo_a, hi_a = np.minimum(lo_a, a.min(axis=0)), np.maximum(hi_a, a.max(axis=0))
            lo_b, hi_b = np.minimum(lo_b, b.min(axis=0)), np.maximum(hi_b, b.max(axis=0))
    if sy is None or sa is None or sb is None or offset == 0:
        raise ValueError("the row source has no rows")
    assert lo_a is not None and hi_a is not None and lo_b is not None and hi_b is not None
    nobs = getattr(source, "nobs", None)
    if nobs is not None and offset != nobs:
        raise ValueError(f"the row source yielded {offset} rows; its nobs is {nobs}")
    return offset, sy / tot, sa / tot, sb / tot, hi_a - lo_a, hi_b - lo_b


class _Rows:
    """A re-iterable factory of ``(y, a, b)`` chunks seen as a row source."""

    def __init__(self, chunks: Callable[[], Iterable[tuple[np.ndarray, ...]]]) -> None:
        self.iter_chunks = chunks


def weighted_moments(
    chunks: Callable[[], Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]]],
    weights: Callable[[int], np.ndarray],
    n_boot: int,
) -> list[BlockMoments]:
    """Block moments of ``n_boot`` reweightings of the rows of ``chunks``.

    ``chunks()`` yields ``(y, a, b)`` row chunks (read twice: the means and
    column ranges, then the sums); ``weights(k)`` returns the
    ``(n_boot, k)`` weights of the next ``k`` rows, in row order.  The same
    per-row features as the Poisson bootstrap's pass (rows centred at the
    full-sample means), their weighted sums accumulated in double precision
    in pieces of at most ``config.CHUNK_FLOATS`` floats, and each
    replicate's means corrected for algebraically.  The ladle's bootstrap
    (:mod:`.rank_robust`) runs on it.
    """
    rw = _SourceMoments(*_first_pass(_Rows(chunks), None))
    step = max(1, config.CHUNK_FLOATS // max(rw.width, n_boot))
    buf = np.empty((rw.width, step))
    total = np.zeros((n_boot, rw.width))
    for y, a, b in chunks():
        for lo in range(0, y.shape[0], step):
            sl = slice(lo, lo + step)
            f = rw.chunk_features_t(y[sl], a[sl], b[sl], None, buf)
            total += weights(f.shape[1]) @ f.T
    return rw.moments(total)


def poisson_moments(
    source: Any,
    n_boot: int,
    seed: int | np.random.Generator | None = None,
    *,
    case_weights: np.ndarray | None = None,
    inner: bool = False,
) -> list[BlockMoments] | tuple[list[BlockMoments], list[BlockMoments]]:
    """Block moments of ``n_boot`` Poisson-bootstrap replicates of a row source.

    Parameters
    ----------
    source : row source
        Any object of the row-source protocol (``nobs`` and
        ``iter_chunks()`` yielding ``(y, a, b)`` in a fixed order); it is
        read twice (means, then the weighted sums).
    n_boot : int
        Number of replicates ``B``.
    seed : int, Generator or None
        Seed of the weights; the same seed gives the same weights and
        moments, however the source chunks its rows.
    case_weights : ndarray, optional
        Case weights in row order (for a source without its own); they
        multiply the Poisson weights.  A source that carries weights
        (``source.weighted``) supplies them through ``iter_weighted_chunks``.
    inner : bool
        Also accumulate one inner replicate per replicate (weights from
        :func:`inner_weights`, a Poisson bootstrap of the replicate), for
        the calibrated bound; same pass, twice the products.

    Returns
    -------
    list of BlockMoments, or a pair of lists when ``inner``
        Replicate ``b`` equals the moments of the rows weighted by
        ``w_{b,i}`` (times the case weights), divisor the total weight.

    Notes
    -----
    The features of a piece of rows (products of the rows centred at the
    full-sample means) are summed as ``F.sum(0)`` plus ``(W - 1) F``, both
    in double precision (the deviations ``W - 1`` are small integers), piece
    by piece on a fixed grid of rows (:func:`_grid`), so the sums do not
    depend on the source's chunks nor, beyond the last bits, on the BLAS
    kernel.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> src = ArraySource(rng.normal(size=500), rng.normal(size=(500, 3)),
    ...                   rng.normal(size=(500, 2)))
    >>> moms = poisson_moments(src, 4, seed=1)
    >>> len(moms), moms[0].cross.shape
    (4, (3, 2))
    """
    plan = poisson_plan(source, n_boot, seed, case_weights=case_weights, inner=inner)
    return poisson_pass(plan)


class PoissonPlan:
    """What the pass of one Poisson bootstrap needs (:func:`poisson_plan`).

    The source, the case weights, the root entropy of the weights and the
    first pass's means and column ranges.  The source is only read in the
    calling process, also when :func:`poisson_pass` hands the products of
    blocks of rows to joblib workers (they get the entropy, the block
    number and the block's features).
    """

    def __init__(self, source, case_weights, entropy, stats, n_boot, inner):
        self.source, self.case_weights = source, case_weights
        self.entropy, self.stats = entropy, stats
        self.n_boot, self.inner = n_boot, inner


def poisson_plan(
    source: Any,
    n_boot: int,
    seed: int | np.random.Generator | None = None,
    *,
    case_weights: np.ndarray | None = None,
    inner: bool = False,
) -> PoissonPlan:
    """Check the arguments of :func:`poisson_moments`, draw the root entropy
    from ``seed`` and make the first pass (means and column ranges)."""
    n_boot = check_int(n_boot, "n_boot", low=1)
    inner = check_bool(inner, "inner")
    for attr in ("nobs", "iter_chunks"):
        if not hasattr(source, attr):
            raise TypeError(
                f"source must be a row source (nobs, iter_chunks); got {type(source).__name__}"
            )
    if case_weights is not None:
        case_weights = np.asarray(case_weights, dtype=float)
        if case_weights.shape != (source.nobs,):
            raise ValueError(
                f"case_weights must have shape ({source.nobs},); got {case_weights.shape}"
            )
        if getattr(source, "weighted", False):
            raise ValueError("case_weights given for a source that carries its own weights")
    entropy = draw_entropy(seed, 4)
    stats = _first_pass(source, case_weights)
    return PoissonPlan(source, case_weights, entropy, stats, int(n_boot), bool(inner))


def _block_products(entropy: tuple[int, ...], block: int, n_boot: int, inner: bool,
                    pieces: list[tuple[int, np.ndarray]]) -> list:
    """The products of one weight block's pieces, as :func:`poisson_pass` forms them.

    ``pieces`` holds ``(col, f)``, ``f`` the features of ``take`` rows from
    column ``col`` of the block, shape ``(width, take)``; returns
    ``(P, P_in)`` per piece, ``P = (W - 1)[:, col:col + take] @ f.T``
    (``P_in`` None without ``inner``): the very products of a serial pass,
    computed in a worker process.
    """
    weights = _BlockWeights(entropy, n_boot, inner)
    out = []
    with blas_single_thread():
        for col, f in pieces:
            dev, dev_in = weights.deviations(block, col, f.shape[1])
            ft = f.T
            out.append((dev @ ft, None if dev_in is None else dev_in @ ft))
    return out


class _BlockWeights:
    """The weight deviations ``W - 1`` of a piece of rows, in double precision.

    The weights of a block (float32 integers, :func:`poisson_weights`) are
    drawn once per block; a piece's columns are converted into a reused
    ``(n_boot, PIECE_ROWS)`` buffer, so the pass holds the block's weights
    in single precision and one piece's in double.
    """

    def __init__(self, entropy: tuple[int, ...], n_boot: int, inner: bool) -> None:
        self.entropy, self.inner = entropy, inner
        self.block = -1
        self.w: np.ndarray | None = None
        self.w_in: np.ndarray | None = None
        self.buf = np.empty((n_boot, config.PIECE_ROWS))
        self.buf_in = np.empty((n_boot, config.PIECE_ROWS)) if inner else None

    def deviations(self, block: int, col: int, take: int
                   ) -> tuple[np.ndarray, np.ndarray | None]:
        if block != self.block:
            self.w = poisson_weights(self.entropy, block, self.buf.shape[0])
            if self.inner:
                self.w_in = inner_weights(self.entropy, block, self.w)
            self.block = block
        assert self.w is not None
        dev = self.buf[:, :take]
        np.subtract(self.w[:, col:col + take], 1.0, out=dev)
        if self.buf_in is None or self.w_in is None:
            return dev, None
        dev_in = self.buf_in[:, :take]
        np.subtract(self.w_in[:, col:col + take], 1.0, out=dev_in)
        return dev, dev_in


def poisson_pass(
    plan: PoissonPlan, parallel: Any = None
) -> list[BlockMoments] | tuple[list[BlockMoments], list[BlockMoments]]:
    """Moments of all replicates of ``plan``: one pass over the rows.

    ``parallel`` (a ``joblib.Parallel`` opened by the caller): this process
    reads the rows and forms their features; the weights of each block of
    ``BLOCK_ROWS`` rows and their products with the features are computed
    in the workers, one block per task, and added here in row order.  Every
    product is the same as in the serial pass and the sums are taken in the
    same order, so the moments are identical bit for bit.
    """
    if parallel is not None:
        return _parallel_pass(plan, parallel)
    inner, n_boot = plan.inner, plan.n_boot
    rw = _SourceMoments(*plan.stats)
    total = np.zeros((n_boot, rw.width))  # sums of (w - 1) f, double precision
    total_in = np.zeros((n_boot, rw.width)) if inner else None
    full = np.zeros(rw.width)
    weights = _BlockWeights(plan.entropy, n_boot, inner)
    # one BLAS thread: the products' rounding must not depend on threads
    with blas_single_thread():
        for block, col, f in _pieces(plan, rw, full):
            dev, dev_in = weights.deviations(block, col, f.shape[1])
            ft = f.T
            total += dev @ ft
            if total_in is not None and dev_in is not None:
                total_in += dev_in @ ft
    if inner:
        return rw.moments(total + full), rw.moments(total_in + full)
    return rw.moments(total + full)


def _pieces(plan: PoissonPlan, rw: _SourceMoments, full: np.ndarray
            ) -> Iterator[tuple[int, int, np.ndarray]]:
    """One pass over the rows in the pieces of :func:`_grid`, cut where a
    weight block ends: ``(block, col, features (width, take))``, the
    features in a reused buffer; their row sums are added to ``full`` in row
    order.  The pieces are the same for every chunking of the source."""
    block_rows, piece_rows = policy.BLOCK_ROWS, config.PIECE_ROWS
    buf = np.empty((rw.width, piece_rows))
    offset = 0
    for y, a, b, w in _grid(plan.source, plan.case_weights):
        k = y.shape[0]
        pos = 0
        while pos < k:
            block, col = divmod(offset + pos, block_rows)
            take = min(k - pos, block_rows - col, piece_rows)
            cw = None if w is None else w[pos:pos + take]
            f = rw.chunk_features_t(y[pos:pos + take], a[pos:pos + take],
                                    b[pos:pos + take], cw, buf)
            full += f.sum(axis=1)
            yield block, col, f
            pos += take
        offset += k


def _parallel_pass(plan: PoissonPlan, parallel: Any):
    """:func:`poisson_pass` with the weights and products in joblib workers."""
    from joblib import delayed

    inner, entropy, n_boot = plan.inner, plan.entropy, plan.n_boot
    rw = _SourceMoments(*plan.stats)
    total = np.zeros((n_boot, rw.width))
    total_in = np.zeros((n_boot, rw.width)) if inner else None
    full = np.zeros(rw.width)

    def tasks():
        # one task per weight block, built while the rows are read (lazily:
        # joblib holds only a few blocks' features at a time)
        cur_block, pieces = -1, []
        for block, col, f in _pieces(plan, rw, full):
            if block != cur_block and pieces:
                yield delayed(_block_products)(entropy, cur_block, n_boot, inner, pieces)
                pieces = []
            cur_block = block
            pieces.append((col, f.copy()))  # f is the pass's reused buffer
        if pieces:
            yield delayed(_block_products)(entropy, cur_block, n_boot, inner, pieces)

    for products in parallel(tasks()):
        for p, p_in in products:
            total += p
            if inner:
                total_in += p_in
    if inner:
        return rw.moments(total + full), rw.moments(total_in + full)
    return rw.moments(total + full)
