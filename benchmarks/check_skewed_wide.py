"""Issue 19, second weakness: skewed response at d >> m (300 x 300, m = 2000).

For the robust test of H0: r <= 2 at the true r = 2 (battery design
``exp-response``, and ``gaussian`` for comparison) the empirical mean and
variance of Lambda_2 over replications against the averages of its
reference's mean tau and variance V = (diag + 2 off) / (m s2)^2, split into
the diagonal and off-diagonal parts, and the rejection rate.  Run from the
repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice -n 10 \\
        python benchmarks/check_skewed_wide.py --reps 100
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference._robust_core import robust_pvalue


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--m", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=20261126)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    n, m, r = args.n, args.m, 2
    print(f"# reps={args.reps} seed=[{args.seed}, design index] n1=n2={n} m={m} H0: r <= {r}")
    for idx, name in enumerate(("exp-response", "gaussian")):
        rng = np.random.default_rng([args.seed, idx])
        rows = []
        for _ in range(args.reps):
            sim = jdr.simulate.scenario(name, m, n, n, r, seed=rng)
            res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(r)
            w = _whiten(res.model.data, res.moments, rows="rotated")
            mom = w.robust(r)
            stat = w.statistic(r)
            pv, df, _, _ = robust_pvalue(stat, mom)
            den = (mom.nobs * mom.s2) ** 2
            rows.append((stat, mom.tau, mom.var, mom.diag / den, 2 * mom.off / den, df, pv))
        x = np.array(rows)
        reps = len(x)
        z = (x[:, 0] - x[:, 1]) / np.sqrt(x[:, 2])
        print(f"{name}: mean Lambda {x[:, 0].mean():.1f} (MC SE {x[:, 0].std(ddof=1) / np.sqrt(reps):.1f})"
              f"  mean tau {x[:, 1].mean():.1f}  d = {(n - r) ** 2}")
        print(f"  var(Lambda - tau) {np.var(x[:, 0] - x[:, 1], ddof=1):.1f}  mean V {x[:, 2].mean():.1f}"
              f"  (diag part {x[:, 3].mean():.1f}, off part {x[:, 4].mean():.1f})  var(Lambda) {np.var(x[:, 0], ddof=1):.1f}")
        print(f"  sd of z = (Lambda - tau)/sqrt(V) {z.std(ddof=1):.3f}  mean z {z.mean():.3f}"
              f"  median eff_df {np.median(x[:, 5]):.0f}  rejections {np.sum(x[:, 6] <= 0.05)}/{reps}"
              f"  sd of z with V = off part only {((x[:, 0] - x[:, 1]) / np.sqrt(x[:, 4])).std(ddof=1):.3f}",
              flush=True)


if __name__ == "__main__":
    main()
