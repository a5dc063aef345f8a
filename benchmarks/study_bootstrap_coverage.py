"""Coverage of the bootstrap bound on the largest principal angle.

BILINEAR model (y = a'UV'b + N(0, 1), Gaussian blocks), r = 2,
n1 = n2 = 20, at m = 5000 and m = 1000.  In each seeded replication the
data are drawn, the joint estimator fitted with rank 2, and
``res.bootstrap(n_boot=B, seed=...)`` run once; the 95% upper bounds on the
largest principal angle of each block are computed with both interval types
("percentile", "calibrated") from the same replicates.  (The recorded output
is version 0.1's, which compared "percentile" with the since removed
"deflated" bound; see benchmarks/study_bootstrap_robust.py for the current
comparison.)  A bound covers when the
largest principal angle between the true U (V) and the estimate is at most
the bound.  The same replicates give 95% intervals for the two population
singular values (both 1 in this model): percentile and basic
(2 s_hat - upper quantile, 2 s_hat - lower quantile).

Coverage is reported with its Monte Carlo standard error
sqrt(p (1 - p) / R).

Run (single-threaded BLAS, about 4 minutes per m on this machine)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/study_bootstrap_coverage.py --m 5000
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/study_bootstrap_coverage.py --m 1000

Output recorded in ``benchmarks/results/study_bootstrap_coverage.txt``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

import jdr_stats as jdr
from jdr_stats.metrics import principal_angles


def one_replication(m: int, n: int, r: int, n_boot: int, seed: int, alpha: float) -> dict:
    sim = jdr.simulate.bilinear(m, n, n, r, seed=seed)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(r)
    true_a = np.degrees(principal_angles(sim.U, res.estimate.dir_a).max())
    true_b = np.degrees(principal_angles(sim.V, res.estimate.dir_b).max())
    boot = res.bootstrap(n_boot=n_boot, seed=seed + 10**6, alpha=alpha)
    out = {"true_a": true_a, "true_b": true_b}
    for interval in ("percentile", "calibrated"):
        bound = boot.max_angle_bound(interval=interval)
        out[f"{interval}_a"] = bound["a"]
        out[f"{interval}_b"] = bound["b"]
    # replicate quantiles t_(l), t_(h) of the singular values (as in conf_int)
    sv = np.sort(boot.singular_values[:, :r], axis=0)
    B = sv.shape[0]
    lo = sv[math.ceil((B + 1) * alpha / 2 - 1e-9) - 1]
    hi = sv[math.ceil((B + 1) * (1 - alpha / 2) - 1e-9) - 1]
    s_hat = res.estimate.singular_values[:r]
    out["sv_pct"] = (lo <= 1.0) & (1.0 <= hi)
    out["sv_basic"] = (2 * s_hat - hi <= 1.0) & (1.0 <= 2 * s_hat - lo)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, nargs="+", default=[5000, 1000])
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n-boot", type=int, default=499)
    parser.add_argument("--n", type=int, default=20)
    parser.add_argument("--r", type=int, default=2)
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=20261126)
    args = parser.parse_args()
    for m in args.m:
        start = time.perf_counter()
        reps = [
            one_replication(m, args.n, args.r, args.n_boot, args.seed + 7919 * i, args.alpha)
            for i in range(args.reps)
        ]
        elapsed = time.perf_counter() - start
        R = len(reps)
        print(
            f"BILINEAR r={args.r} n1=n2={args.n} m={m}: {R} replications, "
            f"n_boot={args.n_boot}, nominal {100 * (1 - args.alpha):g}%, "
            f"seed={args.seed} ({elapsed:.0f} s)"
        )
        q_true = {b: np.quantile([x[f"true_{b}"] for x in reps], 1 - args.alpha) for b in "ab"}
        for interval in ("percentile", "calibrated"):
            for b in "ab":
                cover = np.array([x[f"true_{b}"] <= x[f"{interval}_{b}"] for x in reps])
                p = cover.mean()
                se = np.sqrt(p * (1 - p) / R)
                mean_bound = np.mean([x[f"{interval}_{b}"] for x in reps])
                print(
                    f"  {interval:10s} block {b}: coverage {p:.3f} (MC SE {se:.3f}); "
                    f"mean bound {mean_bound:.2f} deg; {100 * (1 - args.alpha):g}% "
                    f"quantile of the true largest angle {q_true[b]:.2f} deg"
                )
        for kind in ("sv_pct", "sv_basic"):
            cov = np.mean([x[kind] for x in reps], axis=0)
            ses = np.sqrt(cov * (1 - cov) / R)
            txt = ", ".join(f"s{k + 1} {c:.3f} (MC SE {s:.3f})" for k, (c, s) in enumerate(zip(cov, ses)))
            name = "percentile" if kind == "sv_pct" else "basic"
            print(f"  singular values, {name:10s}: {txt}")
        print(flush=True)


if __name__ == "__main__":
    main()
