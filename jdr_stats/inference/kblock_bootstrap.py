"""The bootstrap of a K-block fit: resamples, and the results.

The fit refits itself on every resample (the caller's callable); this
module draws the resamples and summarises the replicates.

Resamples
    ``method="pairs"``: ``m`` rows drawn with replacement per replicate, one
    index vector after another from the generator of ``seed``;
    ``method="poisson"``: each row repeated ``w_bi`` times, the weights
    (mean 1, variance 1) of the resampling engine's Poisson bootstrap
    (:func:`jdr_stats.resampling._engine.poisson_weights`, each block of
    ``policy.BLOCK_ROWS`` rows from its own stream).  Either is drawn in
    full before any refit, so ``n_jobs`` processes refit the same resamples
    and give the same numbers as one.
Results
    :class:`jdr_stats.BootstrapResults`, the two-block fit's type, by block
    name: the bound on the largest principal angle between the re-estimates
    and the estimate (the ``ceil((B + 1) level)``-th order statistic),
    percentile intervals of every principal angle, of the per-SD loadings,
    and the gap diagnostics of each block's combined Gram (its singular
    values: the square roots of its eigenvalues).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from .. import policy
from ..exceptions import WeakGapWarning
from ..resampling._engine import draw_entropy, poisson_weights
from ..runtime._validation import normalize_seed
from ._boot_results import GAP_RATIO_MIN, BootstrapResults

__all__ = ["KBLOCK_BOOT_METHODS", "Replicate", "draw_resamples", "kblock_results",
           "warn_weak_gap"]

#: One replicate of a K-block fit, by block: principal angles (radians),
#: combined-Gram eigenvalues, directions, and kept variables (None: dense).
Replicate = tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray],
                  list[np.ndarray] | None]

KBlockBootMethod = Literal["pairs", "poisson"]
KBLOCK_BOOT_METHODS: tuple[str, ...] = ("pairs", "poisson")


def draw_resamples(method: str, m: int, n_boot: int,
                   seed: int | np.random.Generator | None) -> list[np.ndarray]:
    """Each replicate's row indices (module docstring).

    Examples
    --------
    >>> a = draw_resamples("poisson", 50, 3, 1)
    >>> b = draw_resamples("poisson", 50, 3, 1)
    >>> all(bool(np.array_equal(x, y)) for x, y in zip(a, b)), len(a)
    (True, 3)
    """
    if method == "pairs":
        rng = np.random.default_rng(normalize_seed(seed))
        return [rng.integers(0, m, size=m) for _ in range(n_boot)]
    entropy = draw_entropy(seed, 4)
    rows = int(policy.BLOCK_ROWS)
    weights = np.empty((n_boot, m), dtype=np.int64)
    for block in range(-(-m // rows)):
        lo, hi = block * rows, min(m, (block + 1) * rows)
        weights[:, lo:hi] = poisson_weights(entropy, block, n_boot)[:, :hi - lo]
    base = np.arange(m)
    return [np.repeat(base, w) for w in weights]


def kblock_results(fit: Any, reps: Sequence[Replicate], bounded: Sequence[str], *,
                   method: str, alpha: float) -> BootstrapResults:
    """The :class:`BootstrapResults` of a K-block fit from its replicates
    (:func:`jdr_stats.fitting._kresults_infer._refit_batch`, in the order of
    ``fit.block_names``): the blocks ``bounded`` (positive rank), the
    replicates whose refit succeeded."""
    names = list(fit.block_names)
    pos = [names.index(n) for n in bounded]
    angles = {n: np.vstack([r[0][k] for r in reps]) for n, k in zip(bounded, pos, strict=True)}
    ok = ~np.any(np.isnan(np.hstack(list(angles.values()))), axis=1)
    if not ok.any():
        raise ValueError("bootstrap(): every replicate's refit failed (resamples with a "
                         "singular block); the blocks need more rows per column")
    reps = [r for r, good in zip(reps, ok, strict=True) if good]

    def root(x: np.ndarray) -> np.ndarray:  # the block's singular values
        return np.sqrt(np.clip(np.asarray(x, float), 0.0, None))

    spectra = {n: (root(fit._fac.values[k]), root(np.vstack([r[1][k] for r in reps])))
               for n, k in zip(bounded, pos, strict=True)}
    dirs = {n: np.stack([r[2][k] for r in reps]) for n, k in zip(bounded, pos, strict=True)}
    selected = {n: (None if reps[0][3] is None
                    else np.vstack([r[3][k] for r in reps])) for n, k in  # type: ignore[index]
                zip(bounded, pos, strict=True)}
    return BootstrapResults.from_blocks(
        fit, angles={n: a[ok] for n, a in angles.items()}, spectra=spectra,
        ranks={n: fit.ranks[n] for n in bounded}, directions=dirs, selected=selected,
        names={n: [str(v) for v in fit.directions[n].index] for n in bounded},
        n_failed=int(np.sum(~ok)), method=method, alpha=alpha)


def warn_weak_gap(boot: BootstrapResults) -> None:
    """The two-block fit's :class:`WeakGapWarning`, naming the blocks whose
    ``s_r / s_(r+1)`` is below ``GAP_RATIO_MIN`` (their bounds are close to
    90 degrees; see ``boot.gap_table``)."""
    table = boot.gap_table
    weak = [str(n) for n, ok in table["trusted"].items() if not ok]
    if weak:
        ratios = ", ".join(f"{n} {float(table['s_r / s_(r+1)'].loc[n]):.2f}" for n in weak)
        warnings.warn(
            f"weak gap: s_r / s_(r+1) < {GAP_RATIO_MIN} in block(s) {ratios}; their "
            "directions r and r + 1 are not separated, so their subspaces are poorly "
            "determined and their bounds on the largest angle are close to 90 degrees "
            "(see BootstrapResults.gap_table)", WeakGapWarning, stacklevel=3)
