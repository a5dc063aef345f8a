"""The resampling engine: seeds, resampling weights and worker processes.

Every resampling procedure of the package (the pairs and Poisson bootstraps
of the subspaces, the ladle's bootstrap, the permutation tests and the
stability selection through :func:`jdr_stats.resampling._progress.run_batches`) draws
its randomness here.  The engine knows nothing of the estimand: it turns a
``seed`` into generators and generators into resampling counts or weights,
and it opens the joblib workers; the caller forms the statistics.

Seeds
    :func:`draw_entropy` normalises ``seed`` once and draws the root entropy
    of a run; :func:`child_generator` gives the generator of
    ``SeedSequence(entropy, spawn_key=key)``, so a replicate or a block of
    rows always draws from the same stream, however the work is batched or
    split between processes.
Weights
    :func:`draw_counts` (pairs bootstrap: multinomial counts, one draw of
    ``m`` indices per replicate) and :func:`inner_counts`;
    :func:`poisson_weights` and :func:`inner_weights` (Poisson bootstrap:
    weights with mean 1 and variance 1 per block of :data:`policy.BLOCK_ROWS`
    rows, seeded by the block number); :func:`poisson_row_weights` (exact
    Poisson(1) weights drawn row after row from a running generator: the
    ladle's).
Row-wise bits
    :func:`row_bits` and :func:`row_signs`: fair bits and Rademacher signs
    of the rows ``start..stop-1``, each block of :data:`policy.BLOCK_ROWS`
    rows from its own generator (the spectral rank test's halves and sign
    flips), so in-memory and streamed passes draw the same signs.
Workers
    :func:`n_workers` and :func:`worker_pool` (joblib).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import numpy as np

from .. import policy
from ..runtime._validation import normalize_seed

__all__ = [
    "child_generator",
    "child_generators",
    "draw_counts",
    "draw_entropy",
    "inner_counts",
    "inner_weights",
    "n_workers",
    "poisson_row_weights",
    "poisson_weights",
    "row_bits",
    "row_signs",
    "worker_pool",
]

Seed = int | np.random.Generator | None

#: Counts (out of 2**16) of the values 0, 1, ..., 8 of the Poisson
#: bootstrap's weight law: Poisson(1) probabilities rounded to multiples of
#: 2**-16 and adjusted so that the mean and the variance are exactly 1 (third
#: moment 5.0006 against Poisson's 5; total variation distance 3.6e-5).
TABLE_COUNTS = (24109, 24109, 12056, 4018, 1005, 200, 33, 5, 1)
_TABLE = np.repeat(np.arange(len(TABLE_COUNTS), dtype=np.float32), TABLE_COUNTS)


def _inner_tables() -> np.ndarray:
    """Quantile tables of the inner weights given the outer weight ``w``.

    Row ``w`` (0..8) is the ``w``-fold convolution of the outer weight law
    (a sum of ``w`` independent outer weights: each of the ``w`` copies of
    the row in the outer replicate gets its own weight, as Poisson(w) is a
    sum of ``w`` Poisson(1)), rounded to multiples of 2**-16 by largest
    remainders.  Flattened to ``(9 * 2**16,)``; index ``w * 2**16 + u``.
    """
    base = np.array(TABLE_COUNTS, dtype=float) / (1 << 16)
    rows = []
    law = np.array([1.0])
    for _w in range(len(TABLE_COUNTS)):
        exact = law * (1 << 16)
        counts = np.floor(exact).astype(np.int64)
        short = (1 << 16) - int(counts.sum())
        counts[np.argsort(exact - counts)[::-1][:short]] += 1
        rows.append(np.repeat(np.arange(law.size, dtype=np.float32), counts))
        law = np.convolve(law, base)
    return np.concatenate(rows)


_INNER_TABLE = _inner_tables()


# -- seeds -------------------------------------------------------------------
def draw_entropy(seed: Seed, words: int | None = None) -> Any:
    """Root entropy of a run, drawn once from the normalised ``seed``.

    ``words=None``: one integer in ``[0, 2**63 - 1)`` (the replicate
    generators of :func:`jdr_stats.resampling._progress.run_batches`); ``words=k``: a
    tuple of ``k`` integers in ``[0, 2**63)`` (the Poisson bootstrap's
    weights, four words).  Either is the ``entropy`` of
    :func:`child_generator`.

    Examples
    --------
    >>> draw_entropy(1) == draw_entropy(1), len(draw_entropy(1, 4))
    (True, 4)
    """
    rng = normalize_seed(seed)
    if words is None:
        return int(rng.integers(0, 2**63 - 1))
    return tuple(int(x) for x in rng.integers(0, 2**63, size=words, dtype=np.int64))


def child_generator(entropy: Any, key: tuple[int, ...]) -> np.random.Generator:
    """The generator of ``SeedSequence(entropy, spawn_key=key)`` (PCG64)."""
    ss = np.random.SeedSequence(entropy, spawn_key=tuple(int(k) for k in key))
    return np.random.Generator(np.random.PCG64(ss))


def child_generators(entropy: Any, start: int, stop: int) -> list[np.random.Generator]:
    """Generators of replicates ``start..stop-1``: keys ``(i,)``."""
    return [child_generator(entropy, (i,)) for i in range(start, stop)]


# -- pairs bootstrap ---------------------------------------------------------
def draw_counts(rng: np.random.Generator, n_boot: int, m: int) -> np.ndarray:
    """Resampling counts of ``n_boot`` replicates: m draws with replacement each.

    One draw of ``m`` indices per replicate, in order, so the replicates do
    not depend on how they are split into batches.  Shape ``(n_boot, m)``.

    Examples
    --------
    >>> c = draw_counts(np.random.default_rng(0), 3, 5)
    >>> c.shape, c.sum(axis=1).tolist()
    ((3, 5), [5.0, 5.0, 5.0])
    """
    counts = np.empty((n_boot, m))
    for j in range(n_boot):
        counts[j] = np.bincount(rng.integers(0, m, size=m), minlength=m)
    return counts


def inner_counts(rng: np.random.Generator, counts: np.ndarray) -> np.ndarray:
    """One inner (second-level) resample per replicate: counts
    ``Multinomial(m, c_b / m)`` of the rows of replicate ``b``."""
    m = counts.shape[1]
    return rng.multinomial(m, counts / counts.sum(axis=1, keepdims=True)).astype(float)


# -- Poisson bootstrap ---------------------------------------------------------
def poisson_weights(entropy: tuple[int, ...], block: int, n_boot: int) -> np.ndarray:
    """Weights of row block ``block`` for ``n_boot`` replicates.

    Shape ``(n_boot, BLOCK_ROWS)``, float32 integers with mean 1 and
    variance 1 (the table :data:`TABLE_COUNTS`), from
    ``child_generator(entropy, (block,))``.  Row ``j * BLOCK_ROWS + i`` gets
    column ``i`` of block ``j``, however the rows are chunked.
    """
    rng = child_generator(entropy, (block,))
    u = rng.integers(0, 1 << 16, size=(n_boot, policy.BLOCK_ROWS), dtype=np.uint16)
    return _TABLE[u]


def inner_weights(entropy: tuple[int, ...], block: int, outer: np.ndarray) -> np.ndarray:
    """Weights of one inner (second-level) replicate per outer replicate.

    ``outer`` is the block's outer weight matrix (integers 0..8); entry
    ``(b, i)`` of the result is a sum of ``outer[b, i]`` independent outer
    weights (so its conditional mean and variance are both ``outer[b, i]``,
    like Poisson(``outer[b, i]``)): a Poisson bootstrap of the outer
    replicate.  Drawn from ``child_generator(entropy, (block, 1))``.
    """
    rng = child_generator(entropy, (block, 1))
    u = rng.integers(0, 1 << 16, size=outer.shape, dtype=np.uint16).astype(np.int32)
    u += outer.astype(np.int32) << 16
    return _INNER_TABLE[u]


def poisson_row_weights(rng: np.random.Generator, rows: int, n_boot: int) -> np.ndarray:
    """Exact Poisson(1) weights of the next ``rows`` rows, shape ``(n_boot, rows)``.

    Drawn row after row (the ``n_boot`` weights of a row together) from the
    running generator ``rng``, so the weights of a row do not depend on how
    the rows are chunked, only on the rows before it.  The ladle's
    bootstrap uses them.

    Examples
    --------
    >>> g, h = np.random.default_rng(0), np.random.default_rng(0)
    >>> whole = poisson_row_weights(g, 5, 3)
    >>> parts = np.hstack([poisson_row_weights(h, 2, 3), poisson_row_weights(h, 3, 3)])
    >>> bool((whole == parts).all())
    True
    """
    return rng.poisson(1.0, size=(rows, n_boot)).T.astype(float)


# -- row-wise bits -------------------------------------------------------------
@lru_cache(maxsize=256)
def _block_bits(entropy: int, block: int, planes: int, block_rows: int) -> np.ndarray:
    """``planes x block_rows`` fair bits of one block of rows (read-only, cached:
    the chunks of a pass often cut a block in several pieces)."""
    raw = child_generator(entropy, (block,)).bytes(planes * block_rows // 8)
    bits = np.unpackbits(np.frombuffer(raw, dtype=np.uint8)).reshape(planes, block_rows)
    bits.flags.writeable = False
    return bits


def row_bits(entropy: int, start: int, stop: int, planes: int = 1) -> np.ndarray:
    """Fair bits of the rows ``start..stop-1``: shape ``(planes, stop - start)``, uint8.

    Block ``j`` (rows ``j * BLOCK_ROWS`` to ``(j + 1) * BLOCK_ROWS - 1``,
    :data:`jdr_stats.policy.BLOCK_ROWS`) draws its ``planes x BLOCK_ROWS`` bits
    from ``child_generator(entropy, (j,))``, so a row's bits depend on its
    index only, never on how the rows are chunked or stored.

    Examples
    --------
    >>> whole = row_bits(5, 0, 40_000, 2)
    >>> parts = np.hstack([row_bits(5, 0, 123, 2), row_bits(5, 123, 40_000, 2)])
    >>> bool((whole == parts).all()), whole.shape
    (True, (2, 40000))
    """
    block_rows = int(policy.BLOCK_ROWS)
    if block_rows % 8:
        raise ValueError(f"policy.BLOCK_ROWS must be a multiple of 8; got {block_rows}")
    out = np.empty((planes, stop - start), dtype=np.uint8)
    if stop <= start:
        return out
    for block in range(start // block_rows, (stop - 1) // block_rows + 1):
        lo, hi = max(start, block * block_rows), min(stop, (block + 1) * block_rows)
        bits = _block_bits(int(entropy), block, planes, block_rows)
        out[:, lo - start: hi - start] = bits[:, lo - block * block_rows: hi - block * block_rows]
    return out


def row_signs(entropy: int, start: int, stop: int, planes: int = 1) -> np.ndarray:
    """Rademacher signs (+-1.0) of the rows ``start..stop-1``, shape
    ``(planes, stop - start)``: :func:`row_bits` mapped to ``2 bit - 1``."""
    return 2.0 * row_bits(entropy, start, stop, planes) - 1.0


# -- workers -----------------------------------------------------------------
def n_workers(n_jobs: int | None) -> int:
    """Number of processes joblib will use for ``n_jobs`` (1: in this process)."""
    if n_jobs in (None, 1):
        return 1
    try:
        from joblib import effective_n_jobs
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            f"n_jobs={n_jobs} needs joblib: pip install 'jdr_stats[parallel]'"
        ) from exc
    return max(1, int(effective_n_jobs(n_jobs)))


@contextmanager
def worker_pool(n_jobs: int | None) -> Iterator[Any]:
    """A ``joblib.Parallel`` (results as a generator, in order) for ``n_jobs``
    processes, or None when the work runs in this process.  Large arrays
    passed to the workers are memory-mapped by joblib, not copied."""
    if n_workers(n_jobs) == 1:
        yield None
        return
    from joblib import Parallel

    with Parallel(n_jobs=n_jobs, return_as="generator") as parallel:
        yield parallel
