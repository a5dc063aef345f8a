"""Speed and memory of one dense fit (issue 2 benchmark).

Prints, measured in one run on the same data (m=200_000, n1=n2=200, r=3):
- the time of ``fit(standardize=True)`` divided by the time of one bare
  ``A.T @ (y[:, None] * B)`` (goal: at most 3), best of ``--repeat`` runs each;
- the same ratio including the model's construction (input validation);
- the peak memory allocated during the fit (tracemalloc; numpy reports its
  buffers to it) divided by the bytes of the input (goal: at most 1.5).

Usage: python studies/bench_fit.py [--m 200000] [--n 200] [--repeat 3]
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

import jdr_stats as jdr


def best_time(fn, repeat):
    best = np.inf
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--m", type=int, default=200_000)
    p.add_argument("--n", type=int, default=200)
    p.add_argument("--r", type=int, default=3)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args()
    rng = np.random.default_rng(0)
    sim = jdr.simulate.bilinear(args.m, args.n, args.n, args.r, seed=rng)
    y, a, b = sim.y, sim.a, sim.b
    model = jdr.JointDimReduction(y, a, b)

    t_bare = best_time(lambda: a.T @ (y[:, None] * b), args.repeat)
    t_fit = best_time(lambda: model.fit(args.r), args.repeat)
    t_all = best_time(lambda: jdr.JointDimReduction(y, a, b).fit(args.r), args.repeat)

    input_bytes = y.nbytes + a.nbytes + b.nbytes
    tracemalloc.start()
    res = model.fit(args.r)
    _, peak_fit = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    tracemalloc.start()
    jdr.JointDimReduction(y, a, b).fit(args.r)
    _, peak_all = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    import os

    print(f"m={args.m} n1=n2={args.n} r={args.r}  numpy {np.__version__}, {os.cpu_count()} cores")
    print(f"bare A.T @ (y*B):          {t_bare:8.3f} s")
    print(f"fit(standardize=True):     {t_fit:8.3f} s   ratio {t_fit / t_bare:5.2f}  (goal <= 3)")
    print(f"construct + fit:           {t_all:8.3f} s   ratio {t_all / t_bare:5.2f}")
    print(f"input bytes:               {input_bytes / 2**20:8.1f} MiB")
    print(f"peak extra memory, fit:    {peak_fit / 2**20:8.1f} MiB   ratio {peak_fit / input_bytes:5.3f}  (goal <= 1.5)")
    print(f"peak extra, construct+fit: {peak_all / 2**20:8.1f} MiB   ratio {peak_all / input_bytes:5.3f}")
    print(f"nsee of this fit:          {jdr.metrics.nsee(sim.U, res.directions_a, sim.V, res.directions_b):.4f}")


if __name__ == "__main__":
    main()
