"""Time and peak memory of the default procedures at width (issue 19).

For BILINEAR data (``r = 5``, Gaussian design, seed 1) at each ``(n, m)``
with ``n1 = n2 = n``, every measurement runs in its own child process (a
fresh interpreter that simulates the data, builds the model and, for the
procedures on a fit, fits ``rank=5`` before the clock starts):

* ``fit``: ``model.fit(5)``, the fastest of three children (the unit: every
  other time is also given as a ratio to it, measured in the same run);
* ``auto``: ``model.fit("auto", seed=1)`` (the default rank tests k = 0, 1,
  ... until the first non-rejection: robust, or from n1 n2 / m = 20 the
  combined test, whose sign flips the seed drives);
* ``rank_tests``: ``res.rank_tests(max_rank=K, seed=1)`` (``K = --max-rank``, 10 by
  default: a full table has min(n1, n2) rows, each about one fit);
* ``bootstrap``: ``res.bootstrap(N, seed=1)`` (pairs, percentile; ``N =
  --n-boot``, 199 by default);
* ``support``: ``model.select_support(rank=5, seed=1)`` (the default test:
  conditional, wild bootstrap with B = 999, BH at 0.1);
* ``ladle`` (with ``--only ladle``): ``model.fit("auto", rank_method="ladle", seed=1)``;
* ``sparse_auto`` (with ``--only sparse_auto``): ``model.fit(5, sparsity="auto", seed=1)``
  (the default coordinate tests, then the sparse fit on the selected variables).

Peak memory is the resident set's high-water mark of the child
(``VmHWM`` of ``/proc/self/status``, everything numpy and BLAS hold),
reset with ``/proc/self/clear_refs`` just before the call: ``peak MB`` is the
whole process at its peak during the call (the data included), ``extra MB``
that peak minus the resident size just before the call (what the procedure
itself added).  ``--skip`` leaves procedures out.  The growth exponents are
fitted by least squares on the log times: the slope in ``log n`` at each
fixed ``m``, the slope in ``log m`` at each fixed ``n``, and a joint fit
``log t = c + e_n log n + e_m log m`` (``--exponents FILE ...`` reads the
tables that previous runs printed, instead of running).

Run (one thread, the machine is shared: the load average is printed)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python studies/bench_width.py \\
        --sizes 20:10000 50:10000 100:10000 300:10000 20:100000 50:100000 100:100000

Output recorded in ``studies/results/bench_width.txt``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
import warnings

import numpy as np

import jdr_stats as jdr

PROCS = ("fit", "auto", "rank_tests", "bootstrap", "support", "ladle", "sparse_auto")
OPTIONAL = ("ladle", "sparse_auto")


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{key} not in /proc/self/status")


def child(n: int, m: int, proc: str, max_rank: int, n_boot: int) -> None:
    """One measurement in this (fresh) process; prints one JSON line."""
    warnings.simplefilter("ignore")
    sim = jdr.simulate.bilinear(m, n, n, 5, seed=1)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    del sim
    res = model.fit(5) if proc in ("rank_tests", "bootstrap") else None
    kk = min(max_rank, n - 1)
    calls = {
        "fit": lambda: model.fit(5),
        "auto": lambda: model.fit("auto", seed=1),
        "rank_tests": lambda: res.rank_tests(max_rank=kk, seed=1),
        "bootstrap": lambda: res.bootstrap(n_boot, seed=1),
        "support": lambda: model.select_support(rank=5, seed=1),
        "ladle": lambda: model.fit("auto", rank_method="ladle", seed=1),
        "sparse_auto": lambda: model.fit(5, sparsity="auto", seed=1),
    }
    with open("/proc/self/clear_refs", "w") as fh:
        fh.write("5")  # reset the high-water mark to the current resident size
    base = _status_kb("VmRSS")
    start = time.perf_counter()
    out = calls[proc]()
    elapsed = time.perf_counter() - start
    peak = _status_kb("VmHWM")
    note = {
        "fit": "best of 3",
        "auto": lambda: f"r={out.rank} ({out.rank_method})",
        "rank_tests": lambda: f"k<={kk}, r_hat={out.select_rank()} ({out.method})",
        "bootstrap": f"B={n_boot}",
        "support": lambda: f"{int(out.table['selected'].sum())} selected",
        "ladle": lambda: f"r={out.rank}, B=100",
        "sparse_auto": lambda: f"kept {len(out.support_a)} + {len(out.support_b)}",
    }[proc]
    note = note() if callable(note) else note
    print(json.dumps({"seconds": elapsed, "peak_mb": peak / 1024,
                      "extra_mb": (peak - base) / 1024, "note": note}), flush=True)


def _measure(n: int, m: int, proc: str, args) -> dict:
    cmd = [sys.executable, os.path.abspath(__file__), "--child", str(n), str(m), proc,
           "--max-rank", str(args.max_rank), "--n-boot", str(args.n_boot)]
    if args.spectral_min_ratio is not None:
        cmd += ["--spectral-min-ratio", str(args.spectral_min_ratio)]
    done = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"child {proc} at n={n}, m={m} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _line(n: int, m: int, proc: str, rec: dict, tfit: float) -> str:
    return (f"{n:>5} {m:>7} {proc:<11} {rec['seconds']:>9.4g} {rec['seconds'] / tfit:>7.1f} "
            f"{rec['peak_mb']:>8.0f} {rec['extra_mb']:>8.0f}  {rec['note']}")


def run(n: int, m: int, args) -> list[tuple[int, int, str, float]]:
    fits = [_measure(n, m, "fit", args) for _ in range(3)]
    best = min(fits, key=lambda f: f["seconds"])
    tfit = best["seconds"]
    print(_line(n, m, "fit", best, tfit), flush=True)
    rows = [(n, m, "fit", tfit)]
    for proc in PROCS[1:]:
        if proc in args.skip or (proc in OPTIONAL and proc not in args.only):
            continue
        rec = _measure(n, m, proc, args)
        print(_line(n, m, proc, rec, tfit), flush=True)
        rows.append((n, m, proc, rec["seconds"]))
    return rows


def _slope(x: list[float], y: list[float]) -> float:
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


def exponents(rows: list[tuple[int, int, str, float]]) -> None:
    """The growth exponents of each procedure's time in n and in m."""
    print("\nGrowth exponents of the time (least squares on log seconds):")
    for proc in PROCS:
        pts = [(n, m, t) for n, m, pr, t in rows if pr == proc and t > 0]
        if len(pts) < 2:
            continue
        parts = []
        for m in sorted({m for _, m, _ in pts}):
            sub = sorted((n, t) for n, mm, t in pts if mm == m)
            if len(sub) >= 2:
                parts.append(f"in n at m={m}: {_slope(*zip(*sub, strict=True)):.2f} "
                             f"(n {sub[0][0]}-{sub[-1][0]})")
            if len(sub) >= 3:  # the local exponent between the two widest
                parts[-1] += (f"; {_slope(*zip(*sub[-2:], strict=True)):.2f} "
                              f"(n {sub[-2][0]}-{sub[-1][0]})")
        for n in sorted({n for n, _, _ in pts}):
            sub = sorted((m, t) for nn, m, t in pts if nn == n)
            if len(sub) >= 2:
                parts.append(f"in m at n={n}: {_slope(*zip(*sub, strict=True)):.2f}")
        ns, ms = {n for n, _, _ in pts}, {m for _, m, _ in pts}
        if len(pts) >= 3 and len(ns) >= 2 and len(ms) >= 2:
            x = np.array([[1.0, np.log(n), np.log(m)] for n, m, _ in pts])
            coef = np.linalg.lstsq(x, np.log([t for _, _, t in pts]), rcond=None)[0]
            parts.append(f"joint: e_n = {coef[1]:.2f}, e_m = {coef[2]:.2f} ({len(pts)} runs)")
        print(f"  {proc:<11} " + "\n              ".join(parts))


def read_tables(paths: list[str]) -> list[tuple[int, int, str, float]]:
    """The (n, m, procedure, seconds) rows of tables printed by this script."""
    rows = []
    for path in paths:
        with open(path) as fh:
            for line in fh:
                parts = line.split()
                if len(parts) >= 4 and parts[0].isdigit() and parts[2] in PROCS:
                    rows.append((int(parts[0]), int(parts[1]), parts[2], float(parts[3])))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", nargs="+", default=["20:10000", "100:10000"],
                    help="n:m pairs (n1 = n2 = n)")
    ap.add_argument("--skip", nargs="*", default=[], choices=PROCS[1:])
    ap.add_argument("--only", nargs="*", default=[], choices=list(OPTIONAL),
                    help="procedures run only when named (the ladle: not a default; "
                         "sparse_auto: fit(5, sparsity='auto'))")
    ap.add_argument("--max-rank", type=int, default=10)
    ap.add_argument("--n-boot", type=int, default=199)
    ap.add_argument("--exponents", nargs="+", metavar="FILE",
                    help="fit the exponents to the tables in FILE(s) instead of running")
    ap.add_argument("--child", nargs=3, metavar=("N", "M", "PROC"), help=argparse.SUPPRESS)
    ap.add_argument("--spectral-min-ratio", type=float, default=None,
                    help="policy.RANK_COMBINED_MIN_RATIO for the run (where the default rank "
                         "test becomes the combined test)")
    args = ap.parse_args()
    if args.spectral_min_ratio is not None:
        from jdr_stats import policy

        policy.RANK_COMBINED_MIN_RATIO = args.spectral_min_ratio
    if args.child:
        n, m, proc = args.child
        child(int(n), int(m), proc, args.max_rank, args.n_boot)
        return
    if args.exponents:
        exponents(read_tables(args.exponents))
        return
    print(f"# bench_width: python {platform.python_version()}, numpy {np.__version__}, "
          f"jdr_stats {jdr.__version__}, OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    print(f"# load average before: {os.getloadavg()}")
    print(f"{'n':>5} {'m':>7} {'procedure':<11} {'seconds':>9} {'x fit':>7} {'peak MB':>8} "
          f"{'extra MB':>8}  note", flush=True)
    rows = []
    for spec in args.sizes:
        n, m = (int(x) for x in spec.split(":"))
        rows += run(n, m, args)
    print(f"# load average after: {os.getloadavg()}")
    exponents(rows)


if __name__ == "__main__":
    main()
