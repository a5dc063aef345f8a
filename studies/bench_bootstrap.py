"""Speed of the bootstrap relative to single fits.

Two parts, each timed in one run:

1. ``pairs``: BILINEAR data with m = 10_000 rows, n1 = n2 = 50, r = 2; the
   time of 999 calls of ``model.fit(2)`` and of ``res.bootstrap(n_boot=999)``
   with the percentile bound (B refits) and with the default calibrated bound
   (B outer + B inner refits).
2. ``poisson`` (issue 12): m = 1_000_000, n1 = n2 = 10, r = 2, B = 999; the
   time of one fit is the mean of ``--n-fits`` fits (999 fits would take
   minutes; a fit is the same deterministic work every time), multiplied by
   999; the Poisson bootstrap is timed whole (``method="poisson"``, both
   bounds), and with ``--with-pairs`` the pairs bootstrap at the same size.
   Goal: at most 0.2 of the time of 999 refits.
3. ``jobs`` (issue 15, item 6): ``n_jobs=None`` against ``n_jobs=2`` for
   the pairs bootstrap (m = 10_000, n1 = n2 = 50, B = 999, percentile) and
   the Poisson bootstrap (m = ``--m-jobs``, n1 = n2 = 10, B = 999,
   percentile); the two runs alternate ``--repeats`` times, the ratio is
   of the best times, and the results are checked to be identical.  The
   load average is printed before and after (the machine is shared).
   Not in ``--part both``; run it with ``--part jobs``.

Run (single-threaded BLAS, so that other jobs do not disturb the timing)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python studies/bench_bootstrap.py
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python studies/bench_bootstrap.py --part jobs

Output recorded in ``studies/results/bench_bootstrap.txt``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time

import numpy as np

import jdr_stats as jdr


def _time(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def pairs(args) -> None:
    sim = jdr.simulate.bilinear(args.m, args.n, args.n, args.r, seed=1)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    res = model.fit(args.r)
    res.bootstrap(n_boot=5, seed=0)  # warm-up
    t_fit = _time(lambda: [model.fit(args.r) for _ in range(args.n_boot)])
    t_pct = _time(lambda: res.bootstrap(n_boot=args.n_boot, seed=0, interval="percentile"))
    t_cal = _time(lambda: res.bootstrap(n_boot=args.n_boot, seed=0))
    print(f"pairs: m={args.m}, n1=n2={args.n}, r={args.r}, n_boot={args.n_boot}")
    print(f"  {args.n_boot} single fits:                 {t_fit:7.2f} s")
    print(f"  bootstrap, percentile (B refits):  {t_pct:7.2f} s  ratio {t_pct / t_fit:.3f}")
    print(f"  bootstrap, calibrated (2B refits): {t_cal:7.2f} s  ratio {t_cal / t_fit:.3f}")


def poisson(args) -> None:
    m, n = args.m_large, args.n_large
    sim = jdr.simulate.bilinear(m, n, n, args.r, seed=2)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    res = model.fit(args.r)
    t_one = _time(lambda: [model.fit(args.r) for _ in range(args.n_fits)]) / args.n_fits
    t_fit = t_one * args.n_boot
    boots = {}

    def run(interval):
        boots[interval] = res.bootstrap(n_boot=args.n_boot, seed=0, method="poisson",
                                        interval=interval)

    t_pct = _time(lambda: run("percentile"))
    t_cal = _time(lambda: run("calibrated"))
    print(f"poisson: m={m}, n1=n2={n}, r={args.r}, n_boot={args.n_boot}")
    print(f"  one fit: {t_one:.4f} s (mean of {args.n_fits}); x {args.n_boot} = {t_fit:7.2f} s")
    print(f"  poisson bootstrap, percentile: {t_pct:7.2f} s  ratio {t_pct / t_fit:.3f} "
          "(goal <= 0.2)")
    print(f"  poisson bootstrap, calibrated: {t_cal:7.2f} s  ratio {t_cal / t_fit:.3f}")
    if args.with_pairs:
        t_pairs = _time(lambda: res.bootstrap(n_boot=args.n_boot, seed=0, interval="percentile"))
        print(f"  pairs bootstrap, percentile:   {t_pairs:7.2f} s  ratio {t_pairs / t_fit:.3f}")
    b = boots["calibrated"]
    print(f"  95% bounds (calibrated): a {b.max_angle_bound()['a']:.3f} deg, "
          f"b {b.max_angle_bound()['b']:.3f} deg")


def jobs(args) -> None:
    def setup(m, n, seed):
        sim = jdr.simulate.bilinear(m, n, n, args.r, seed=seed)
        return jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(args.r)

    cases = [("pairs", setup(args.m, args.n, 1), {}, f"m={args.m}, n1=n2={args.n}"),
             ("poisson", setup(args.m_jobs, args.n_large, 2), {"method": "poisson"},
              f"m={args.m_jobs}, n1=n2={args.n_large}")]
    print(f"n_jobs: None vs {args.n_jobs}, n_boot={args.n_boot}, percentile, "
          f"{os.cpu_count()} cpus, load average before {os.getloadavg()}")
    for name, res, kw, size in cases:
        res.bootstrap(n_boot=5, seed=0, n_jobs=args.n_jobs, **kw)  # warm-up (workers)
        times: dict = {None: [], args.n_jobs: []}
        out = {}
        for _ in range(args.repeats):
            for nj in (None, args.n_jobs):
                start = time.perf_counter()
                out[nj] = res.bootstrap(n_boot=args.n_boot, seed=0, interval="percentile",
                                        n_jobs=nj, **kw)
                times[nj].append(time.perf_counter() - start)
        same = all(np.array_equal(getattr(out[None], k), getattr(out[args.n_jobs], k))
                   for k in ("angles_a", "angles_b", "singular_values"))
        t1, tj = min(times[None]), min(times[args.n_jobs])
        print(f"{name}: {size}")
        print(f"  n_jobs=None: best {t1:7.2f} s  (runs {', '.join(f'{t:.2f}' for t in times[None])})")
        print(f"  n_jobs={args.n_jobs}:    best {tj:7.2f} s  (runs "
              f"{', '.join(f'{t:.2f}' for t in times[args.n_jobs])})  speed-up {t1 / tj:.2f}x")
        print(f"  identical results: {same}")
    print(f"load average after {os.getloadavg()}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["pairs", "poisson", "both", "jobs"], default="both")
    parser.add_argument("--n-jobs", type=int, default=2, help="processes of --part jobs")
    parser.add_argument("--m-jobs", type=int, default=200_000,
                        help="rows of the Poisson case of --part jobs")
    parser.add_argument("--repeats", type=int, default=2, help="alternating runs of --part jobs")
    parser.add_argument("--m", type=int, default=10_000)
    parser.add_argument("--n", type=int, default=50)
    parser.add_argument("--m-large", type=int, default=1_000_000)
    parser.add_argument("--n-large", type=int, default=10)
    parser.add_argument("--n-fits", type=int, default=20)
    parser.add_argument("--r", type=int, default=2)
    parser.add_argument("--n-boot", type=int, default=999)
    parser.add_argument("--with-pairs", action="store_true",
                        help="also time the pairs bootstrap at the large m (minutes)")
    args = parser.parse_args()
    print(f"numpy {np.__version__}, python {platform.python_version()}, "
          f"OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS', 'unset')}")
    if args.part in ("poisson", "both"):
        poisson(args)
    if args.part in ("pairs", "both"):
        pairs(args)
    if args.part == "jobs":
        jobs(args)


if __name__ == "__main__":
    main()
