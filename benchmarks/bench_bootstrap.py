"""Speed of the bootstrap relative to single fits.

BILINEAR data with m = 10_000 rows, n1 = n2 = 50, r = 2.  In the same run:
the time of 999 calls of ``model.fit(2)`` on the same model (each fit
computes the moments and runs the estimator), and the time of
``res.bootstrap(n_boot=999, seed=0)``.  Prints both and their ratio (goal of
issue 4: at most 0.6).

Run (single-threaded BLAS, so that other jobs do not disturb the timing)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python benchmarks/bench_bootstrap.py

Output recorded in ``benchmarks/results/bench_bootstrap.txt``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

import jdr_stats as jdr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", type=int, default=10_000)
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--r", type=int, default=2)
    parser.add_argument("--n-boot", type=int, default=999)
    parser.add_argument("--repeat", type=int, default=3, help="timings repeated; the minimum is kept")
    args = parser.parse_args()
    sim = jdr.simulate.bilinear(args.m, args.n, args.n, args.r, seed=1)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    res = model.fit(args.r)
    res.bootstrap(n_boot=5, seed=0)  # warm-up
    fit_times, boot_times = [], []
    for _ in range(args.repeat):
        start = time.perf_counter()
        for _ in range(args.n_boot):
            model.fit(args.r)
        fit_times.append(time.perf_counter() - start)
        start = time.perf_counter()
        boot = res.bootstrap(n_boot=args.n_boot, seed=0)
        boot_times.append(time.perf_counter() - start)
    t_fit, t_boot = min(fit_times), min(boot_times)
    print(
        f"m={args.m}, n1=n2={args.n}, r={args.r}, n_boot={args.n_boot}; numpy "
        f"{np.__version__}, python {platform.python_version()}, "
        f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}"
    )
    print(f"  {args.n_boot} single fits:      {t_fit:7.2f} s (min of {args.repeat}: "
          + ", ".join(f"{t:.2f}" for t in fit_times) + ")")
    print(f"  bootstrap(n_boot={args.n_boot}): {t_boot:7.2f} s (min of {args.repeat}: "
          + ", ".join(f"{t:.2f}" for t in boot_times) + ")")
    print(f"  ratio bootstrap / fits: {t_boot / t_fit:.3f} (goal <= 0.6)")
    print(f"  95% bound on the largest angle: a {boot.max_angle_bound()['a']:.2f} deg, "
          f"b {boot.max_angle_bound()['b']:.2f} deg")


if __name__ == "__main__":
    main()
