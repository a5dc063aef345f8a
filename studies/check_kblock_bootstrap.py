"""Coverage of the K-block bootstrap's angle bound (JDRResults.bootstrap at K blocks).

Question: does the bound of ``BootstrapResults.max_angle_bound`` (the
``ceil((B + 1) level)``-th smallest of each block's largest principal angle
between the bootstrap re-estimates and the estimate, as for two blocks)
bound the angle between the estimate and the truth in about ``level`` of
samples?

Design: K = 3 blocks of 6 Gaussian columns, one direction each, link
u1 u2 + u2 u3 + 0.5 u1 u2 u3 + 0.5 N(0, 1) noise, m = 1000 and 4000; the
per-block estimator (independent blocks) and the joint one (blocks with a
shared factor, rho = 0.4); R samples, B replicates each.

Run: OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_kblock_bootstrap.py [R] [B]
Output: studies/results/check_kblock_bootstrap.txt
"""

from __future__ import annotations

import sys
import time

import numpy as np

import jdr_stats as jdr
from jdr_stats.metrics import principal_angles


def sample(rng: np.random.Generator, m: int, rho: float):
    shared = rng.normal(size=(m, 6))
    xs = [np.sqrt(1 - rho) * rng.normal(size=(m, 6)) + np.sqrt(rho) * shared
          for _ in range(3)]
    us = [np.linalg.qr(rng.normal(size=(6, 1)))[0] for _ in range(3)]
    # the direction of block k in its own coordinates: u_k = x_k U_k
    u = [(x @ b)[:, 0] for x, b in zip(xs, us, strict=True)]
    y = u[0] * u[1] + u[1] * u[2] + 0.5 * u[0] * u[1] * u[2] + 0.5 * rng.normal(size=m)
    return y, xs, us


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    n_boot = int(sys.argv[2]) if len(sys.argv) > 2 else 99
    lines = [f"# check_kblock_bootstrap: R = {reps}, B = {n_boot}, level 0.95; "
             "coverage = share of samples whose largest angle to the truth is at most the "
             "bootstrap's 95% bound (the ceil((B + 1) 0.95)-th smallest replicate angle; "
             "MC SE in brackets), pooled over the 3 blocks",
             "# command: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python "
             f"studies/check_kblock_bootstrap.py {reps} {n_boot}"]
    for independent, rho in ((True, 0.0), (False, 0.4)):
        for m in (1000, 4000):
            rng = np.random.default_rng([35, m, int(independent)])
            cover, bound, t0 = [], [], time.perf_counter()
            for _ in range(reps):
                y, xs, us = sample(rng, m, rho)
                res = jdr.JointDimReduction.from_blocks(y, xs).fit(
                    1, independent_blocks=independent, whitening="sample")
                boot = res.bootstrap(n_boot, seed=int(rng.integers(2**31))).table
                for k, name in enumerate(res.block_names):
                    true_angle = np.degrees(np.max(principal_angles(
                        us[k], res.directions[name].to_numpy())))
                    cover.append(true_angle <= boot.loc[name, "upper"])
                    bound.append(boot.loc[name, "upper"])
            c = float(np.mean(cover))
            se = float(np.sqrt(c * (1 - c) / len(cover)))
            est = res.settings["estimator"]
            lines.append(f"{est:9s} rho={rho} m={m:5d}: coverage {c:.3f} ({se:.3f}), "
                         f"mean bound {np.mean(bound):.1f} deg ({time.perf_counter() - t0:.0f} s)")
            print(lines[-1], flush=True)
    with open("studies/results/check_kblock_bootstrap.txt", "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
