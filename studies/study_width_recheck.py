"""Re-check of bootstrap coverage and support FDR at n1 = n2 = 100 (issue 19, item 3).

BILINEAR model (y = a'UV'b + N(0, 1), Gaussian blocks), r = 2,
n1 = n2 = 100, m = 3000 by default (select_support refuses when
max(n1, n2) / m exceeds 0.1, so m >= 1000).  Two parts, each seeded:

* ``coverage``: dense U, V.  In replication i the data are drawn with seed
  ``seed + 7919 i``, fitted with rank 2, and ``res.bootstrap(n_boot=B,
  seed=seed + 7919 i + 10**6)`` run with its defaults (pairs, percentile);
  the 95% upper bound ``max_angle_bound()`` on the largest principal angle
  covers when the true largest angle (degrees) is at most the bound.  The
  mean bound and the 95% quantile of the true largest angle are printed
  too (the bound's width against the width it needs).
* ``support``: sparse U, V (s1 = s2 = 10 true variables per block).
  ``select_support(model, fdr=0.1, seed=...)`` with the default test and
  rule (Benjamini-Hochberg); false discovery proportion and power per block.

Monte Carlo SE: coverage sqrt(p (1 - p) / R); FDR and power the standard
deviation of the per-replication proportions over sqrt(R).  The running
summary is printed after every replication, so an interrupted run still
records the replications it finished.

Run (single-threaded BLAS; on this shared 2-core machine about 1.3 s per
coverage replication at m = 3000, B = 199, 3.5 s per support replication,
5 s per coverage replication at m = 10000)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python studies/study_width_recheck.py --part coverage --reps 300 --n-boot 199
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python studies/study_width_recheck.py --part support --reps 150
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python studies/study_width_recheck.py --part coverage --reps 100 --n-boot 199 --m 10000

Output recorded in ``studies/results/study_width_recheck.txt``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import jdr_stats as jdr
from jdr_stats.metrics import principal_angles
from jdr_stats.support import select_support


def coverage_rep(m: int, n: int, r: int, n_boot: int, seed: int) -> list[float]:
    sim = jdr.simulate.bilinear(m, n, n, r, seed=seed)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(r)
    true_a = np.degrees(principal_angles(sim.U, res.estimate.dir_a).max())
    true_b = np.degrees(principal_angles(sim.V, res.estimate.dir_b).max())
    bound = res.bootstrap(n_boot=n_boot, seed=seed + 10**6).max_angle_bound()
    return [float(true_a <= bound["a"]), float(true_b <= bound["b"]),
            true_a, true_b, bound["a"], bound["b"]]


def support_rep(m: int, n: int, r: int, s: int, fdr: float, seed: int) -> list[float]:
    sim = jdr.simulate.bilinear(m, n, n, r, s1=s, s2=s, seed=seed)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    sel = select_support(model, fdr=fdr, seed=seed + 10**6)
    out = []
    for block, truth in (("a", np.abs(sim.U).sum(1) > 0), ("b", np.abs(sim.V).sum(1) > 0)):
        chosen = sel.table.xs(block, level="block")["selected"].to_numpy(bool)
        out += [int((chosen & ~truth).sum()) / max(int(chosen.sum()), 1),
                (chosen & truth).sum() / truth.sum()]
    return out


def _mean_se(x: np.ndarray) -> str:
    se = x.std(ddof=1) / np.sqrt(x.size) if x.size > 1 else float("nan")
    return f"{x.mean():.3f} (MC SE {se:.3f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=("coverage", "support"), required=True)
    parser.add_argument("--reps", type=int, default=8)
    parser.add_argument("--m", type=int, default=3000)
    parser.add_argument("--n", type=int, default=100)
    parser.add_argument("--r", type=int, default=2)
    parser.add_argument("--s", type=int, default=10)
    parser.add_argument("--n-boot", type=int, default=99)
    parser.add_argument("--fdr", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=20261126)
    args = parser.parse_args()
    rows = []
    start = time.perf_counter()
    for i in range(args.reps):
        seed = args.seed + 7919 * i
        if args.part == "coverage":
            rows.append(coverage_rep(args.m, args.n, args.r, args.n_boot, seed))
        else:
            rows.append(support_rep(args.m, args.n, args.r, args.s, args.fdr, seed))
        arr = np.asarray(rows, dtype=float)
        R = len(rows)
        head = (f"[{time.perf_counter() - start:.0f} s] {args.part} BILINEAR r={args.r} "
                f"n1=n2={args.n} m={args.m} seed={args.seed}: {R} replications")
        if args.part == "coverage":
            q95 = np.quantile(arr[:, 2:4], 0.95, axis=0)
            mb = arr[:, 4:6].mean(axis=0)
            p = arr[:, :2].mean(axis=0)
            se = np.sqrt(p * (1 - p) / R)
            pool = arr[:, :2].mean()
            print(f"{head}, B={args.n_boot}, 95% max_angle_bound(): coverage "
                  f"a {p[0]:.3f} (MC SE {se[0]:.3f}), b {p[1]:.3f} (MC SE {se[1]:.3f}), "
                  f"pooled {pool:.3f} (MC SE {np.sqrt(pool * (1 - pool) / (2 * R)):.3f}, blocks not "
                  f"independent); mean bound a {mb[0]:.2f}, b {mb[1]:.2f} deg; 95% quantile of "
                  f"the true largest angle a {q95[0]:.2f}, b {q95[1]:.2f} deg", flush=True)
        else:
            print(f"{head}, s1=s2={args.s}, fdr={args.fdr}: FDR a {_mean_se(arr[:, 0])}, "
                  f"b {_mean_se(arr[:, 2])}; power a {_mean_se(arr[:, 1])}, "
                  f"b {_mean_se(arr[:, 3])}", flush=True)


if __name__ == "__main__":
    main()
