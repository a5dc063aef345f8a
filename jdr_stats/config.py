"""Resources of the package: memory, chunk sizes, workers, time (layer 0).

The reductions over rows (moments, bootstrap sums, rank-test and support
statistics) hold at most one working buffer of about :data:`MEMORY_BUDGET`
bytes at a time, whatever the number of rows; the knobs below are derived
from it where they bound the same thing, and stand alone where they fix
something else (a cache-sized slice, a compute budget).

The modules of the package read these values when they run (``from .. import
config`` then ``config.NAME`` inside a function; never a default argument or
a module-level copy), so a test or a user may change one with
``monkeypatch.setattr(jdr_stats.config, "NAME", value)``.  The derived knobs
are computed once, at import: change them directly, not through
:data:`MEMORY_BUDGET`.  None of them changes which test or estimator runs,
nor a result beyond rounding: a compute budget (:data:`ROBUST_EXACT_FLOPS`)
may choose how a number is computed (exact sums, or sampled row pairs whose
Monte Carlo error is carried to the p-value).  Every result-determining
threshold and every automatic choice is in :mod:`jdr_stats.policy`.  (The
opt-in ``ROBUST_CROSSFIT_*`` settings of an experimental variance estimate
are off by default.)
"""

from __future__ import annotations

__all__ = [
    "BOOT_DIRECT_WIDTH",
    "BOOT_SUMS_BYTES",
    "CHUNK_BYTES",
    "READ_AHEAD_CHUNKS",
    "CHUNK_FLOATS",
    "CLI_IN_MEMORY_BYTES",
    "COUNT_BYTES",
    "DEFAULT_BATCH_ROWS",
    "FEATURE_BYTES",
    "LONG_RUN_SECONDS",
    "MEMORY_BUDGET",
    "MEMORY_LIMIT",
    "ONE_THREAD_MAX_DIM",
    "PIECE_ROWS",
    "ROBUST_BLOCK_ROWS",
    "ROBUST_GRAM_BLOCK",
    "ROBUST_EXACT_FLOPS",
    "ROBUST_MAX_PAIRS",
    "ROBUST_MIN_BLOCKS",
    "SKETCH_MIN_CHUNK_ROWS",
    "SPECTRAL_SEQUENTIAL_CHUNK",
    "ROBUST_VAR_RTOL",
    "ROBUST_CROSSFIT_FOLDS",
    "ROBUST_CROSSFIT_EDGE",
    "ROBUST_CROSSFIT_DIRS",
    "SUPPORT_RESAMPLE_BYTES",
    "chunk_rows",
    "memory_limit",
]

#: Bytes of the largest working buffer of one reduction over rows (32 MiB).
#: The knobs in floats or bytes of intermediate products derive from it.
MEMORY_BUDGET = 1 << 25

#: Bytes of one in-memory chunk of rows: the chunks of an ``ArraySource`` and
#: the cache-sized slices in which the moments engine centres a larger chunk
#: (2 MiB: small enough that the centred copy stays in cache); the reused
#: buffer of shifted rows of the baselines' design moments is half of it and
#: the slices of the input checks' column sums a quarter (each with the rows
#: it is read from in a core's cache).
CHUNK_BYTES = 1 << 21

#: Fewest rows of an in-memory chunk (:func:`chunk_rows`): for wide blocks
#: ``CHUNK_BYTES`` holds few rows, and the Gram products of the moments engine
#: need a couple of thousand rows per slice to run at BLAS speed (a chunk is
#: then ``MIN_CHUNK_ROWS x width`` floats, still independent of the rows).
MIN_CHUNK_ROWS = 2048

#: Fewest rows of a chunk of the K-way piece's sketch
#: (:func:`~jdr_stats.core.tensor.mode_sketches`, whose chunk's products are
#: held within ``CHUNK_BYTES``, a core's cache, where its elementwise products
#: run faster than from memory): enough rows that the per-chunk Python work
#: stays small beside the products.
SKETCH_MIN_CHUNK_ROWS = 64

#: Rows per chunk read from a file source (Parquet, CSV) given no ``batch_rows``.
DEFAULT_BATCH_ROWS = 65536

#: Chunks a file source (Parquet, CSV) reads ahead of the one being summed,
#: in a reader thread (decoding releases the GIL, so the file is decoded
#: while the previous chunks are reduced); 0 reads in the caller's thread.
#: Memory: up to this many chunks more, and the one the thread is decoding.
#: The moments' rank-k updates release the GIL too
#: (:func:`jdr_stats.core._blas.syrk_upper`), so where a second core is free
#: a streamed pass takes about the longer of reading and reducing, not their
#: sum (``studies/bench_stream.py``); the numbers are the same either way.
READ_AHEAD_CHUNKS = 2

#: Floats (8 bytes each) of one chunk of intermediate products in the rank
#: tests (whitened rows, permutation batches, complement moments), the
#: ladle's bootstrap sums and the support statistics: the memory budget.
CHUNK_FLOATS = MEMORY_BUDGET // 8

#: Bytes of one chunk of per-row features in the bootstrap's reweighted
#: moments (``_reweighted.ReweightedMoments``): twice the budget, as the
#: features are formed once and then reused by every replicate of a batch.
FEATURE_BYTES = 2 * MEMORY_BUDGET

#: Bytes of the count matrix (and of the feature sums) of one batch of
#: pairs-bootstrap replicates.
COUNT_BYTES = 4 * MEMORY_BUDGET

#: Bytes of the feature sums of one batch of pairs-bootstrap replicates
#: (batch x width doubles, width ~ (n1 + n2)^2 / 2 + 2 n1 n2): with wide
#: blocks a larger batch forms the m x width per-row features fewer times
#: (at n1 = n2 = 300, 2 batches of 199 replicates instead of 4).  The
#: replicates do not depend on the batches.
BOOT_SUMS_BYTES = 8 * MEMORY_BUDGET

#: Unweighted pairs bootstraps with ``n1 + n2`` at least this compute each
#: replicate's moments from the rows (``inference/_wide_replicates.py``:
#: rank updates over the rows whose count is not 1) instead of the product
#: of the count matrix with ``m x width`` features; the same moments up to
#: single-precision rounding of the resampling deviations.
BOOT_DIRECT_WIDTH = 100


#: Rows whose features the Poisson-bootstrap pass forms at once (its buffer
#: holds ``PIECE_ROWS x width`` floats).
PIECE_ROWS = 1 << 13


#: Largest Parquet input (a file or a folder of them) that the command line
#: reads into memory rather than streaming, in bytes of its selected columns
#: as float64 (rows x columns x 8, from the files' metadata; 256 MiB, e.g.
#: 3.3 million rows of 10 columns).  In memory every procedure works (the
#: pairs bootstrap, ``--support``, ``--features-out``, the permutation rank
#: test); a larger file is streamed.  A CSV file is read into memory unless
#: ``--chunksize`` or ``--stream`` is given.
CLI_IN_MEMORY_BYTES = 1 << 28


#: Largest memory, in bytes, that a result held in memory (the per-replicate
#: arrays of a bootstrap) may need; a request above it is refused before
#: anything is allocated, with the estimate.  None: the machine's physical
#: memory (or the control group's limit, if lower); see :func:`memory_limit`.
MEMORY_LIMIT: int | None = None


def memory_limit() -> float:
    """Bytes a result may hold: :data:`MEMORY_LIMIT`, else the machine's
    physical memory (the control group's limit where one is set and lower;
    infinite where neither can be read)."""
    if MEMORY_LIMIT is not None:
        return float(MEMORY_LIMIT)
    import os

    limit = float("inf")
    try:
        limit = float(os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"))
    except (AttributeError, ValueError, OSError):  # not POSIX
        pass
    try:
        with open("/sys/fs/cgroup/memory.max") as fh:
            text = fh.read().strip()
        if text.isdigit():
            limit = min(limit, float(text))
    except OSError:
        pass
    return limit


def chunk_rows(width: int) -> int:
    """Rows of one in-memory chunk of ``width`` float64 columns: about
    :data:`CHUNK_BYTES`, at least :data:`MIN_CHUNK_ROWS`."""
    return max(MIN_CHUNK_ROWS, CHUNK_BYTES // (8 * max(width, 1)))

#: The robust rank test computes ``sum_{i != j} <psi_i, psi_j>^2`` exactly
#: (the d x d covariance of the complement or the m x m Gram of the
#: influence functions in row blocks, whichever is cheaper) when that costs
#: at most this many floating-point operations (an entry of the Gram counted
#: as the products the ranks of one sweep share, spread over them, plus its
#: own short product and 50 elementwise passes); above it, by importance-
#: sampled row pairs (an unbiased incomplete U-statistic with its Monte
#: Carlo error carried to the p-value), until the blocks still expected
#: before its target is met would cost more than the exact route, which is
#: then used (docs: theory of rank tests, 6a).
ROBUST_EXACT_FLOPS = 5e8

#: Target Monte Carlo relative standard error of the robust test's variance
#: estimate when its pairs are sampled (pairs are drawn until it is met).
ROBUST_VAR_RTOL = 0.005

#: Rows per block of the sampled route of the robust test (each block gives
#: ``s (s - 1)`` row pairs from one Gram product), and the most row pairs used.
ROBUST_BLOCK_ROWS = 256

#: Rows per block of the robust test's exact ``m x m`` Gram (its sweep holds
#: five buffers of this many rows squared: 2.5 MiB at 256, about one core's
#: cache, where its elementwise passes run fastest; bench_auto).
ROBUST_GRAM_BLOCK = 256

#: Fewest independent blocks of the sampled route (their spread gives its
#: Monte Carlo standard error).
ROBUST_MIN_BLOCKS = 10
ROBUST_MAX_PAIRS = 50_000_000


#: Opt-in (0 = off, the default): the robust test's variance (not its mean)
#: estimated from the response with a cross-fitted, shrunk fit on the top
#: ``ROBUST_CROSSFIT_DIRS`` complement directions removed, over this many
#: folds (theory 6c), so that at ranks below the truth the signal's own
#: variance does not collapse the effective df.  Experimental: not yet
#: checked on the whole battery.
ROBUST_CROSSFIT_FOLDS = 0
#: Shrinkage of that fit: a direction is kept with weight
#: ``max(0, 1 - edge * noise / lambda_j)``, ``noise`` the squared edge of a
#: pure-noise complement block in ``Lambda`` units.
ROBUST_CROSSFIT_EDGE = 0.5
ROBUST_CROSSFIT_DIRS = 3


#: Expected run time (seconds) above which ``fit("auto")`` and
#: ``rank_tests()`` warn before they start (:class:`~jdr_stats.exceptions.LongRunWarning`).
LONG_RUN_SECONDS = 60.0

#: Bytes of the single-precision rows ``rs_ij Wt_ij`` (m x variables x r) of
#: the support tests' wild bootstrap held at once (128 MiB): every batch of
#: sign rows is multiplied with all of them in one product, so the larger
#: this is, the fewer passes over the signs and the closer the product runs
#: to the processor's peak (the O(B m n r) part of ``select_support``).  At
#: ``m = 1e5`` it holds 64 variables of rank 5 (320 columns), enough for the
#: product to run near peak.
SUPPORT_RESAMPLE_BYTES = 4 * MEMORY_BUDGET


#: Blocks at most this wide are decomposed (the SVD or HOSVD of the whitened
#: cross moments, ``_estimate._decompose``) on one BLAS thread: a
#: multi-threaded BLAS gains nothing on matrices this small and its threads,
#: waiting between the many small calls of an SVD, made a plain fit of the
#: UCI digits (10 classes, 76 + 64 columns) up to five times slower with the
#: default two threads (``studies/bench_auto.py``).  Wider blocks use the
#: BLAS's threads.
ONE_THREAD_MAX_DIM = 256


#: Sign flips of the spectral test drawn between two looks at the counts of
#: its sequential p-values (``inference/_rank_spectral.spectral_pvalues``):
#: a pass that rejects nothing stops after a multiple of this.  Changes the
#: number of flips drawn, not the p-value of a given sequence of flips.
SPECTRAL_SEQUENTIAL_CHUNK = 16
