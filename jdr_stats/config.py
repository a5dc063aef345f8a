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
    "BOOT_DIRECT_WIDTH",
    "LADLE_EDGE_DRAWS",
    "LADLE_EDGE_QUANTILE",
    "LADLE_STRONG_EDGE",
    "BOOT_SUMS_BYTES",
    "CHUNK_BYTES",
    "CHUNK_FLOATS",
    "CLI_IN_MEMORY_BYTES",
    "COUNT_BYTES",
    "DEFAULT_BATCH_ROWS",
    "FEATURE_BYTES",
    "LONG_RUN_SECONDS",
    "MAX_EXACT_DIM",
    "MEMORY_BUDGET",
    "PIECE_ROWS",
    "ROBUST_BLOCK_ROWS",
    "ROBUST_EXACT_FLOPS",
    "ROBUST_MAX_PAIRS",
    "ROBUST_MIN_BLOCKS",
    "ROBUST_PAIR_SEED",
    "RANK_TESTS_MAX_RATIO",
    "RANK_SPECTRAL_MIN_RATIO",
    "RANK_COMBINED_MIN_RATIO",
    "RANK_COMBINED_MAX_WORK",
    "COMBINED_SPECTRAL_MIN_EDGE",
    "SPECTRAL_SEQUENTIAL_CHUNK",
    "ROBUST_VAR_RTOL",
    "ROBUST_CROSSFIT_FOLDS",
    "ROBUST_CORRECTED_MAX_RATIO",
    "ROBUST_CROSSFIT_EDGE",
    "ROBUST_CROSSFIT_DIRS",
    "SUPPORT_RESAMPLE_BYTES",
    "SUPPORT_TESTS_MAX_RATIO",
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

#: The robust rank test computes ``sum_{i != j} <psi_i, psi_j>^2`` exactly
#: (the d x d covariance of the complement or the m x m Gram of the
#: influence functions in row blocks, whichever is cheaper) when that costs
#: at most this many floating-point operations (an entry of the Gram
#: counted as its dot products plus 40 elementwise passes); above it, by importance-
#: sampled row pairs (an unbiased incomplete U-statistic with its Monte
#: Carlo error carried to the p-value).
ROBUST_EXACT_FLOPS = 5e8

#: Target Monte Carlo relative standard error of the robust test's variance
#: estimate when its pairs are sampled (pairs are drawn until it is met).
ROBUST_VAR_RTOL = 0.005

#: Rows per block of the sampled route of the robust test (each block gives
#: ``s (s - 1)`` row pairs from one Gram product), and the most row pairs used.
ROBUST_BLOCK_ROWS = 256

#: Fewest independent blocks of the sampled route (their spread gives its
#: Monte Carlo standard error).
ROBUST_MIN_BLOCKS = 10
ROBUST_MAX_PAIRS = 50_000_000

#: The robust rank test's reference at rank ``k`` is the self-influence
#: corrected one (theory 6d: mean corrected for each row's influence on the
#: estimated directions, variance from the off-diagonal and linear terms)
#: while ``d / m`` is at most this, ``d = q (n1 - k)(n2 - k)`` (``q``
#: response columns: the HOSVD terms of 6d); above it the per-row reference
#: of theory 6, up to ``ROBUST_BOTH_MIN_RATIO``.
ROBUST_CORRECTED_MAX_RATIO = 0.2

#: Above this ``d / m`` the robust test reports the larger of the corrected
#: and per-row p-values (theory 6d, "Above the bound": neither reference is
#: derived there; the per-row one held its size up to d/m = 4.8 in the width
#: study and was liberal, 0.15-0.16, with a rare binary response at d/m = 44,
#: where the corrected one was liberal with a skewed response).
ROBUST_BOTH_MIN_RATIO = 5.0

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

#: Seed of the robust test's row pairs when ``rank_tests`` gets no ``seed``
#: (so that the default test is a deterministic function of the data).
ROBUST_PAIR_SEED = 20261126

#: The ladle's noise edge (theory section 9, ``inference/_ladle_criterion``):
#: the quantile, over ``LADLE_EDGE_DRAWS`` sign-flip draws of the complement
#: block's noise, of its squared top singular value; the criterion's
#: eigenvalue part counts only the excess of ``s_{k+1}^2`` over it.
LADLE_EDGE_QUANTILE = 0.9
#: Sign-flip draws of the complement block's noise behind the ladle's edge
#: (one pass over the rows; cost ``O(draws m n1 n2)``).
LADLE_EDGE_DRAWS = 20
#: Sample directions with ``s_j^2`` above this multiple of the
#: Marchenko-Pastur edge of the Poisson replicates' noise are projected off
#: before that edge is measured (their noise is not the complement's).
LADLE_STRONG_EDGE = 2.0

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

#: Widest ``max(n1, n2) / m`` at which the support tests run
#: (``fit(sparsity="auto")``, ``JointDimReduction.select_support``): at
#: ``n/m = 0.1`` their false discovery proportion was 0.09-0.12 at nominal
#: 0.1, at ``n/m = 0.2`` 0.43-0.47 (``benchmarks/results/study_wide_size.txt``,
#: m = 300), so above this they refuse.  NOT a memory knob: raising it runs
#: the tests where their error rate was not controlled.
SUPPORT_TESTS_MAX_RATIO = 0.1

#: Widest ``max(n1, n2) / m`` at which the default (robust) rank test held its
#: size (0.04-0.06 at nominal 0.05 for n/m = 0.05 and 0.1; at n/m = 0.2 and 0.5
#: it was conservative, 0.000-0.015, with little power:
#: ``benchmarks/results/study_wide_default_size.txt``; at n/m = 0.15 it was
#: liberal for a rare binary response, 0.16: ``study_width.txt``).  Above it the premise
#: checks' small-sample message (``m < n1 n2``) says so (the rank tests and ``fit(rank="auto")``
#: warn with it).  NOT a memory knob.
RANK_TESTS_MAX_RATIO = 0.1

#: At or above this ``q n1 n2 / m`` (``q`` response columns) the default rank
#: method (``"auto"``) is the combined test (theory 6f, 6g), when the rows are
#: in memory; below it, the robust test (or the combined one for cheap
#: designs, ``RANK_COMBINED_MIN_RATIO``).  At ``n1 n2 / m = 22.5`` and ``44``
#: the robust test's guard was valid but had little power (size 0.000) where
#: the spectral test kept its level and found strong directions
#: (``benchmarks/results/study_spectral.txt``); at 9 the two were in their
#: band and as powerful but for a rare binary response.  NOT a memory knob.
RANK_SPECTRAL_MIN_RATIO = 20.0

#: Below ``RANK_SPECTRAL_MIN_RATIO`` the default is also the combined test from
#: this ``q n1 n2 / m`` on, for designs whose sign flip is cheap
#: (``m q n1 n2 <= RANK_COMBINED_MAX_WORK``).  There the robust test's
#: references are in their conservative range and can miss a direction just
#: above the noise edge (the paper's experiment 1 at ``m = 2000``, ratio 5:
#: found in 8 of 20 samples by the robust test, 18 of 20 by the combined one;
#: ``benchmarks/results/check_paper_auto.txt``).  NOT a memory knob.
RANK_COMBINED_MIN_RATIO = 5.0

#: The largest ``m q n1 n2`` (multiply-adds of one sign flip's cross product,
#: about those of a fit) at which the default uses the combined test between
#: ``RANK_COMBINED_MIN_RATIO`` and ``RANK_SPECTRAL_MIN_RATIO``.  A rank where
#: the spectral test rejects and the robust one is not decisive needs all
#: ``n_perm`` flips, about 100 fits' time: 0.95 s at ``100 x 100``,
#: ``m = 2000`` (``2e7``), 20 s at ``300 x 300``, ``m = 1e4`` (``9e8``), where
#: the issue's target is 20 fits (``benchmarks/results/bench_width.txt``).
#: So above it the robust test alone runs, at a fit's cost.  NOT a memory knob.
RANK_COMBINED_MAX_WORK = 2e8

#: The combined rank test runs its spectral part only at the ranks whose
#: statistic ``m s_{k+1}^2 / var(y)`` is at least this share of the noise edge
#: ``(sqrt(n1-k) + sqrt(n2-k))^2``; below it the spectral p-value counts as 1
#: (the Bonferroni bound holds whatever the rule), which saves its sign flips
#: where it cannot reject (at 1000 x 1000, m = 1e4 the paper's directions sit
#: at about 0.4 of the edge).  NOT a memory knob.
COMBINED_SPECTRAL_MIN_EDGE = 0.5

#: Sign flips of the spectral test drawn between two looks at the counts of
#: its sequential p-values (``inference/_rank_spectral.spectral_pvalues``):
#: a pass that rejects nothing stops after a multiple of this.  Changes the
#: number of flips drawn, not the p-value of a given sequence of flips.
SPECTRAL_SEQUENTIAL_CHUNK = 16
