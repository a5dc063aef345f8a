"""Time and peak memory of the default procedures at width (issue 19).

For BILINEAR data (``r = 5``, Gaussian design, seed 1) at each ``(n, m)``
with ``n1 = n2 = n``, one run times, in one process:

* ``fit``: ``model.fit(5)``, the fastest of three (the unit: every other
  time is also given as a ratio to it);
* ``auto``: ``model.fit("auto")`` (robust rank tests k = 0, 1, ... until the
  first non-rejection);
* ``rank_tests``: ``res.rank_tests(max_rank=K)`` (``K = --max-rank``, 10 by
  default: a full table has min(n1, n2) rows, each about one fit);
* ``bootstrap``: ``res.bootstrap(199, seed=1)`` (pairs, percentile);
* ``support``: ``model.select_support(rank=5, seed=1)`` (the default test);
* ``ladle`` (with ``--only ladle``): ``model.fit("auto", rank_method="ladle", seed=1)``.

Peak memory is the peak of Python allocations during the call
(``tracemalloc``; numpy's buffers are counted, BLAS workspace is not), in MB.
``--skip`` leaves procedures out (at n = 1000 the bootstrap and the support
selection are run only with ``--full``).  The growth exponents in ``n`` and
``m`` are fitted by least squares on the log times of the recorded runs
(``--exponents FILE`` reads the table a previous run printed).

Run (one thread, the machine is shared: the load average is printed)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python benchmarks/bench_width.py \
        --sizes 20:10000 50:10000 100:10000 300:10000 20:100000 50:100000 100:100000

Output recorded in ``benchmarks/results/bench_width.txt``.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
import tracemalloc
import warnings

import numpy as np

import jdr_stats as jdr

PROCS = ("fit", "auto", "rank_tests", "bootstrap", "support", "ladle")


def _measure(fn):
    tracemalloc.start()
    start = time.perf_counter()
    out = fn()
    elapsed = time.perf_counter() - start
    peak = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()
    return out, elapsed, peak


class _Printer(dict):
    """Prints each procedure's line as soon as it is measured."""

    def __init__(self, n: int, m: int) -> None:
        super().__init__()
        self.n, self.m = n, m

    def __setitem__(self, proc: str, val: tuple[float, float, str]) -> None:
        super().__setitem__(proc, val)
        t, p, note = val
        tfit = self["fit"][0]
        print(f"{self.n:>5} {self.m:>7} {proc:<11} {t:>9.2f} {t / tfit:>7.1f} {p:>8.0f}  {note}",
              flush=True)


def run(n: int, m: int, args) -> dict[str, tuple[float, float, str]]:
    sim = jdr.simulate.bilinear(m, n, n, 5, seed=1)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    out = _Printer(n, m)
    # the unit: the fastest of three fits (the machine is shared)
    fits = [_measure(lambda: model.fit(5)) for _ in range(3)]
    res, t, p = min(fits, key=lambda f: f[1])
    out["fit"] = (t, p, "best of 3")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if "auto" not in args.skip:
            auto, t, p = _measure(lambda: model.fit("auto"))
            out["auto"] = (t, p, f"r={auto.rank}")
        if "rank_tests" not in args.skip:
            kk = min(args.max_rank, n - 1)
            tab, t, p = _measure(lambda: res.rank_tests(max_rank=kk))
            out["rank_tests"] = (t, p, f"k<={kk}, r_hat={tab.select_rank()}")
        big = n >= 1000 and not args.full
        if "bootstrap" not in args.skip and not big:
            _, t, p = _measure(lambda: res.bootstrap(199, seed=1))
            out["bootstrap"] = (t, p, "B=199")
        if "support" not in args.skip and not big:
            sup, t, p = _measure(lambda: model.select_support(rank=5, seed=1))
            out["support"] = (t, p, f"{int(sup.table['selected'].sum())} selected")
        if "ladle" in args.only:
            lad, t, p = _measure(lambda: model.fit("auto", rank_method="ladle", seed=1))
            out["ladle"] = (t, p, f"r={lad.rank}, B=100")
    return out


def exponents(rows: list[tuple[int, int, str, float]]) -> None:
    print("\nGrowth exponents (least squares on log time; log t = c + e_n log n + e_m log m):")
    for proc in PROCS:
        pts = [(n, m, t) for n, m, pr, t in rows if pr == proc and t > 0]
        ns = {n for n, _, _ in pts}
        ms = {m for _, m, _ in pts}
        if len(pts) < 3 or len(ns) < 2:
            continue
        x = np.array([[1.0, np.log(n), np.log(m)] for n, m, _ in pts])
        y = np.log([t for _, _, t in pts])
        if len(ms) < 2:
            x = x[:, :2]
        coef = np.linalg.lstsq(x, y, rcond=None)[0]
        em = f"{coef[2]:.2f}" if len(ms) >= 2 else "n/a"
        print(f"  {proc:<11} e_n = {coef[1]:.2f}   e_m = {em}   ({len(pts)} runs)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["20:10000", "100:10000"],
                    help="n:m pairs (n1 = n2 = n)")
    ap.add_argument("--skip", nargs="*", default=[], choices=PROCS[1:])
    ap.add_argument("--only", nargs="*", default=[], choices=["ladle"],
                    help="procedures run only when named (the ladle: not a default)")
    ap.add_argument("--max-rank", type=int, default=10)
    ap.add_argument("--full", action="store_true", help="bootstrap and support at n >= 1000 too")
    args = ap.parse_args()
    print(f"# bench_width: python {platform.python_version()}, numpy {np.__version__}, "
          f"jdr_stats {jdr.__version__}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    print(f"# load average before: {os.getloadavg()}")
    print(f"{'n':>5} {'m':>7} {'procedure':<11} {'seconds':>9} {'x fit':>7} {'peak MB':>8}  note")
    rows = []
    for spec in args.sizes:
        n, m = (int(x) for x in spec.split(":"))
        out = run(n, m, args)
        rows += [(n, m, proc, t) for proc, (t, _, _) in out.items()]
    print(f"# load average after: {os.getloadavg()}")
    exponents(rows)


if __name__ == "__main__":
    main()
