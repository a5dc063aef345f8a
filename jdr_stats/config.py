"""Every chunk-size and memory knob of the package, in one place (layer 0).

The reductions over rows (moments, bootstrap sums, rank-test and support
statistics) hold at most one working buffer of about :data:`MEMORY_BUDGET`
bytes at a time, whatever the number of rows; the knobs below are derived
from it where they bound the same thing, and stand alone where they fix
something else (the Poisson weights' seeding, a cache-sized slice, a
dimension threshold).

The modules of the package read these values when they run (``from .. import
config`` then ``config.NAME``), so a test or a user may change one with
``monkeypatch.setattr(jdr_stats.config, "NAME", value)``.  The derived knobs
are computed once, at import: change them directly, not through
:data:`MEMORY_BUDGET`.  None of them changes a result beyond rounding,
except :data:`BLOCK_ROWS` (see there).
"""

from __future__ import annotations

__all__ = [
    "BLOCK_ROWS",
    "CHUNK_BYTES",
    "CHUNK_FLOATS",
    "CLI_IN_MEMORY_BYTES",
    "COUNT_BYTES",
    "DEFAULT_BATCH_ROWS",
    "FEATURE_BYTES",
    "MAX_EXACT_DIM",
    "MEMORY_BUDGET",
    "PIECE_ROWS",
    "chunk_rows",
]

#: Bytes of the largest working buffer of one reduction over rows (32 MiB).
#: The knobs in floats or bytes of intermediate products derive from it.
MEMORY_BUDGET = 1 << 25

#: Bytes of one in-memory chunk of rows: the chunks of an ``ArraySource``,
#: the cache-sized slices in which the moments engine centres a larger chunk,
#: and the reused buffer of shifted rows of the baselines' design moments
#: (2 MiB: small enough that the centred copy stays in cache).
CHUNK_BYTES = 1 << 21

#: Fewest rows of an in-memory chunk (:func:`chunk_rows`): for wide blocks
#: ``CHUNK_BYTES`` holds few rows, and the Gram products of the moments engine
#: need a couple of thousand rows per slice to run at BLAS speed (a chunk is
#: then ``MIN_CHUNK_ROWS x width`` floats, still independent of the rows).
MIN_CHUNK_ROWS = 2048

#: Rows per chunk read from a file source (Parquet, CSV) given no ``batch_rows``.
DEFAULT_BATCH_ROWS = 65536

#: Floats (8 bytes each) of one chunk of intermediate products in the rank
#: tests (whitened rows, permutation batches, complement moments), the
#: ladle's bootstrap sums and the support statistics: the memory budget.
CHUNK_FLOATS = MEMORY_BUDGET // 8

#: Bytes of one chunk of per-row features in the bootstrap's reweighted
#: moments (``_linalg.ReweightedMoments``): twice the budget, as the
#: features are formed once and then reused by every replicate of a batch.
FEATURE_BYTES = 2 * MEMORY_BUDGET

#: Bytes of the count matrix (and of the feature sums) of one batch of
#: pairs-bootstrap replicates.
COUNT_BYTES = 4 * MEMORY_BUDGET

#: Rows per block of Poisson-bootstrap weights: one spawned ``SeedSequence``
#: per block.  NOT a memory knob: it fixes which generator draws the weight
#: of each row, so changing it changes every Poisson-bootstrap replicate.
BLOCK_ROWS = 1 << 14

#: Rows whose features the Poisson-bootstrap pass forms at once (its buffer
#: holds ``PIECE_ROWS x width`` floats).
PIECE_ROWS = 1 << 13

#: Largest number of complement entries ``d = (n1 - k)(n2 - k)`` for which
#: the rank tests form the (d x d) covariance of the complement (memory
#: O(d^2)); above it the general test uses its moment-matched tail and the
#: robust and Wald tests refuse the row.
MAX_EXACT_DIM = 2048

#: Largest Parquet input (a file or a folder of them) that the command line
#: reads into memory rather than streaming, in bytes of its selected columns
#: as float64 (rows x columns x 8, from the files' metadata; 256 MiB, e.g.
#: 3.3 million rows of 10 columns).  In memory every procedure works (the
#: pairs bootstrap, ``--support``, ``--features-out``, the permutation rank
#: test); a larger file is streamed.  A CSV file is read into memory unless
#: ``--chunksize`` or ``--stream`` is given.
CLI_IN_MEMORY_BYTES = 1 << 28


def chunk_rows(width: int) -> int:
    """Rows of one in-memory chunk of ``width`` float64 columns: about
    :data:`CHUNK_BYTES`, at least :data:`MIN_CHUNK_ROWS`."""
    return max(MIN_CHUNK_ROWS, CHUNK_BYTES // (8 * max(width, 1)))
