"""Size of the baselines' tests under their nulls, by seeded simulation.

Usage (output recorded in results/study_baselines_size.txt)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python studies/study_baselines_size.py

Normal predictors, p = 5, true dimension d = 1, n in N_VALUES, REPS
replicates per cell, level 0.05.  Rejection rates with their Monte Carlo
standard errors sqrt(0.05 * 0.95 / REPS) for

* the marginal dimension test of H0: d = 1 (row "1D vs >= 2D"),
* the coordinate test of H0: x5 does not enter (SIR, SAVE); for SIR also
  with dr 3.0.11's truncated chi-square weights (``dr_weights=True``: 5 of
  the H - 1 = 7 terms here, since p = 5 < H - 1).

Models: SIR  y = x1 + 0.5 e;  pHd and SAVE  y = x1^2 + 0.5 e  (e normal).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from jdr_stats.baselines import PHD, SAVE, SIR

P = 5
N_VALUES = (500, 2000)
REPS = 1000
ALPHA = 0.05
SEED = 20261126


def one(n, rng):
    x = rng.standard_normal((n, P))
    e = rng.standard_normal(n)
    y_lin = x[:, 0] + 0.5 * e
    y_sq = x[:, 0] ** 2 + 0.5 * e
    out = {}
    sir = SIR(y_lin, x).fit(n_slices=8)
    out["SIR Li chi2"] = sir.dimension_tests(2).table["pvalue"].iloc[1]
    ct = sir.coordinate_test([P - 1]).table
    out["SIR coord general"] = ct["pvalue_general"].iloc[0]
    out["SIR coord restricted"] = ct["pvalue_restricted"].iloc[0]
    ct = sir.coordinate_test([P - 1], dr_weights=True).table
    out["SIR coord gen. dr wts"] = ct["pvalue_general"].iloc[0]
    out["SIR coord res. dr wts"] = ct["pvalue_restricted"].iloc[0]
    sv = SAVE(y_sq, x).fit(n_slices=8)
    tab = sv.dimension_tests(2).table
    out["SAVE normal"] = tab["pvalue"].iloc[1]
    out["SAVE general"] = tab["pvalue_general"].iloc[1]
    ct = sv.coordinate_test([P - 1]).table
    out["SAVE coord normal"] = ct["pvalue_normal"].iloc[0]
    out["SAVE coord general"] = ct["pvalue"].iloc[0]
    ph = PHD(y_sq, x).fit(residuals=False)
    out["pHd (y) Li chi2"] = ph.dimension_tests(2).table["pvalue"].iloc[1]
    pr = PHD(y_sq, x).fit(residuals=True).dimension_tests(2).table
    out["pHd (res) normal"] = pr["pvalue"].iloc[1]
    out["pHd (res) general"] = pr["pvalue_general"].iloc[1]
    return out


def main() -> None:
    rng = np.random.default_rng(SEED)
    t0 = time.perf_counter()
    se = np.sqrt(ALPHA * (1 - ALPHA) / REPS)
    print(f"Size at level {ALPHA}, p = {P}, d = 1, {REPS} replicates, MC s.e. {se:.4f}, "
          f"seed {SEED}")
    for n in N_VALUES:
        rows = [one(n, rng) for _ in range(REPS)]
        print()
        print(f"n = {n}")
        for key in rows[0]:
            p = np.array([r[key] for r in rows])
            rate = float(np.mean(p <= ALPHA))
            print(f"  {key:22s} {rate:.4f}  ({(rate - ALPHA) / se:+.1f} s.e.)")
    print()
    print(f"elapsed {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
