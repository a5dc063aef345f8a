"""Time of a K-block fit against a two-block fit of the same rows and total width.

For K = 3 to 6 blocks of ``n`` columns each (n = 8, 30, 100) and m rows, the
K-block ``fit(1)`` (the K-way piece formed as a tensor up to
``policy.KBLOCK_TENSOR_MAX_ENTRIES`` entries, sketched above) is timed beside
a two-block ``fit(1)`` of the same rows with the ``K n`` columns split into
two halves (target: the K-block fit within 3x).  Both estimators:
``independent_blocks=True`` (per block) and the default (joint; the row
states the estimator the K-block fit ran).  Contenders alternate, the
minimum of ``--repeat`` runs; the models are built outside the timing.
Gaussian blocks, ``y = prod_k x_k1 + x_11 x_21 + noise`` (seed 0).

A second table, on shapes where the exact tensor route also runs, fits the
same data with the tensor budget raised (``policy.KBLOCK_TENSOR_MAX_ENTRIES``,
a public constant) and prints each route's time and its largest principal
angle (degrees, over the blocks) to the true first directions: what the
sketch costs in accuracy.

Grid: m = 5000 and 100000 for n = 8 and 30; n = 100 at m = 5000 only
(trimmed to keep the run near 4 minutes on the shared machine: with
n = 100 at m = 20000 as well the grid took 463 s; the time per row is
printed, and the sketch's cost is linear in m, so the rows at m = 5000
give the larger m).  The accuracy table includes n = 100 at m = 20000.
One BLAS thread.

Usage: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_kblocks.py
       [--repeat 2] [--quick]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import time

import numpy as np

import jdr_stats as jdr
from jdr_stats import policy


def data(m: int, K: int, n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    xs = {f"x{k}": rng.normal(size=(m, n)) for k in range(K)}
    first = [x[:, 0] for x in xs.values()]
    y = np.prod(first, axis=0) + first[0] * first[1] + rng.normal(size=m)
    return y, xs


def timed(fn, *args, **kwargs):
    t0 = time.perf_counter()
    out = fn(*args, **kwargs)
    return time.perf_counter() - t0, out


def worst_angle(res) -> float:
    out = 0.0
    for d in res.directions.values():
        u = d.to_numpy()[:, :1]
        u = u / np.linalg.norm(u)
        out = max(out, float(np.degrees(np.arccos(min(1.0, abs(u[0, 0]))))))
    return out


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--quick", action="store_true")
    args = p.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print("# bench_kblocks: K-block fit(1) against a two-block fit of the same rows and width")
    print("# command: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python "
          "studies/bench_kblocks.py" + (" --quick" if args.quick else ""))
    print(f"# commit {commit}, numpy {np.__version__}, {platform.machine()}, "
          f"{os.cpu_count()} cores, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}"
          f", minimum of {args.repeat} alternated runs")
    grid = []
    for n, ms in ((8, (5000, 100_000)), (30, (5000, 100_000)), (100, (5000,))):
        for m in ms:
            for K in (3, 4, 5, 6):
                grid.append((n, m, K))
    if args.quick:
        grid = [g for g in grid if g[1] <= 5000]
    print("# asked: independent_blocks=True (per-block) or the default (joint); ran: the "
          "estimator the K-block fit ran (always the one asked), the two-block fit runs "
          "the one asked")
    print(f"{'n':>4} {'m':>7} {'K':>2} {'asked':>9} {'ran':>9} {'route':>7} {'vectors':>7} "
          f"{'K-block s':>10} {'two-block s':>11} {'ratio':>6} {'us/row':>7}")
    start = time.perf_counter()
    for n, m, K in grid:
        y, xs = data(m, K, n)
        stacked = np.hstack(list(xs.values()))
        half = stacked.shape[1] // 2
        kmodel = jdr.JointDimReduction.from_blocks(y, xs)
        tmodel = jdr.JointDimReduction.from_blocks(y, {"a": stacked[:, :half],
                                                       "b": stacked[:, half:]})
        for independent in (True, False):
            tk, tt = np.inf, np.inf
            res = None
            for _ in range(args.repeat):
                dt, res = timed(kmodel.fit, 1, independent_blocks=independent)
                tk = min(tk, dt)
                dt, _ = timed(tmodel.fit, 1, independent_blocks=independent)
                tt = min(tt, dt)
            route = res.settings["route"]
            vec = int(route["inputs"].get("vectors", 0)) or "-"
            asked = "per-block" if independent else "joint"
            print(f"{n:>4} {m:>7} {K:>2} {asked:>9} {res.settings['estimator']:>9} "
                  f"{route['name']:>7} "
                  f"{vec!s:>7} {tk:>10.3f} {tt:>11.3f} {tk / tt:>6.2f} {1e6 * tk / m:>7.2f}",
                  flush=True)
    print(f"# timing grid: {time.perf_counter() - start:.0f} s")

    print()
    print("# sketch against the exact tensor route (tensor budget raised), per-block "
          "estimator, one run each: time and the worst block's angle to the truth (deg)")
    print(f"{'n':>4} {'m':>7} {'K':>2} {'sketch s':>9} {'tensor s':>9} "
          f"{'angle sketch':>12} {'angle tensor':>12}")
    budget = (policy.KBLOCK_TENSOR_MAX_ENTRIES, policy.KBLOCK_TENSOR_MAX_WORK)
    for n, m, K in ((30, 5000, 4), (30, 20_000, 4), (8, 20_000, 6), (100, 5000, 3),
                    (100, 20_000, 3)):
        y, xs = data(m, K, n, seed=1)
        model = jdr.JointDimReduction.from_blocks(y, xs)
        ts, rs = timed(model.fit, 1, independent_blocks=True)
        if rs.settings["route"]["name"] != "sketch":
            print(f"{n:>4} {m:>7} {K:>2}   (the default route is the exact tensor here)")
            continue
        try:  # both budgets raised: the exact tensor route
            policy.KBLOCK_TENSOR_MAX_ENTRIES, policy.KBLOCK_TENSOR_MAX_WORK = 10**9, 10**15
            te, re = timed(model.fit, 1, independent_blocks=True)
        finally:
            policy.KBLOCK_TENSOR_MAX_ENTRIES, policy.KBLOCK_TENSOR_MAX_WORK = budget
        assert re.settings["route"]["name"] == "tensor"
        print(f"{n:>4} {m:>7} {K:>2} {ts:>9.3f} {te:>9.3f} {worst_angle(rs):>12.1f} "
              f"{worst_angle(re):>12.1f}", flush=True)


if __name__ == "__main__":
    main()
