"""Speed of jdr_stats' SIR, pHd and SAVE against statsmodels' dimred.

Usage (single-threaded BLAS, as recorded in results/bench_baselines.txt)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python studies/bench_baselines.py

For m = 100_000 rows and p = 50 predictors it times model construction plus
``fit`` of each method (best of ``REPEATS`` runs, the two libraries' runs
interleaved, in the same process and on the same data) and prints the time
ratio jdr_stats / statsmodels (goal: <= 0.1, issue 10; the floor is one
Gram matrix of the design plus sorting y), then the principal angles between
the two libraries' leading directions:

* SIR: identical kernel; with 10 equal slices of 10_000 (no ties, so
  ``dr.slices`` and ``np.array_split`` form the same slices) the subspaces
  should agree to rounding.
* pHd: same directions (statsmodels' eigenvalues are (n-1)/n times ours).
* SAVE: statsmodels divides slice covariances by n_k - 1 (dr: n_k) and
  weights slices by 1/H (dr: n_k/n); with equal slices only the divisor
  differs, so the angles are small but not zero.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import statsmodels
from statsmodels.regression import dimred

import jdr_stats
from jdr_stats.baselines import PHD, SAVE, SIR
from jdr_stats.metrics import principal_angles

M, P, H, REPEATS, SEED = 100_000, 50, 10, 5, 20261126


def best_times(*fns):
    """Best of ``REPEATS`` timings of each function, the runs interleaved (so
    that on a shared machine every function sees the same stretch of load)."""
    outs = [None] * len(fns)
    best = [np.inf] * len(fns)
    for _ in range(REPEATS):
        for j, fn in enumerate(fns):
            t0 = time.perf_counter()
            outs[j] = fn()
            best[j] = min(best[j], time.perf_counter() - t0)
    return best, outs


def main() -> None:
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((M, P))
    b1 = np.zeros(P)
    b1[:2] = [1.0, 1.0]
    b2 = np.zeros(P)
    b2[2:4] = [1.0, -1.0]
    y = x @ b1 / np.sqrt(2) + 0.5 * (x @ b2) ** 2 + 0.5 * rng.standard_normal(M)

    cases = [
        ("SIR", lambda: SIR(y, x).fit(n_slices=H),
         lambda: dimred.SlicedInverseReg(y, x).fit(slice_n=M // H)),
        ("pHd", lambda: PHD(y, x).fit(residuals=False),
         lambda: dimred.PrincipalHessianDirections(y, x).fit()),
        ("SAVE", lambda: SAVE(y, x).fit(n_slices=H),
         lambda: dimred.SlicedAverageVarianceEstimation(y, x).fit(slice_n=M // H)),
    ]
    print(f"jdr_stats {jdr_stats.__version__}, statsmodels {statsmodels.__version__}, "
          f"numpy {np.__version__}")
    print(f"m = {M}, p = {P}, H = {H} slices, best of {REPEATS}; "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    print()
    print(f"{'method':6s} {'jdr_stats s':>12s} {'statsmodels s':>14s} {'ratio':>7s}   "
          "angles dir1, dir2 (deg)   top-2 subspace max angle (deg)")
    for name, ours, theirs in cases:
        (t_ours, t_sm), (r_ours, r_sm) = best_times(ours, theirs)
        d_ours = np.asarray(r_ours.directions)
        d_sm = np.real(np.asarray(r_sm.params))
        per_dir = [np.degrees(principal_angles(d_ours[:, j], d_sm[:, j])[0]) for j in range(2)]
        sub = np.degrees(principal_angles(d_ours[:, :2], d_sm[:, :2]).max())
        print(f"{name:6s} {t_ours:12.4f} {t_sm:14.4f} {t_ours / t_sm:7.3f}   "
              f"{per_dir[0]:.2e}, {per_dir[1]:.2e}           {sub:.2e}")


if __name__ == "__main__":
    main()
