"""Large data: streaming Parquet, chunked moments and dask (issue 14 benchmark).

Prints, measured in one run:

(a) throughput and memory of a streamed fit
    1. in memory, on the same arrays (m_mem rows, n1 = n2 = 20): the rate
       (rows/s) of the chunked exact moments ``Moments.from_arrays`` divided
       by the rate of one bare product ``A.T @ (y[:, None] * B)`` (goal
       >= 0.5); the two are timed alternately, ``--repeat`` times each, and
       the best times are compared;
    2. a Parquet file of ``--rows`` rows x (1 + 20 + 20) float64 columns
       (2e7 rows: 6.6 GB uncompressed), written to ``--tmp`` in row groups of
       250 000 rows, then streamed by ``ParquetSource`` in a fresh
       subprocess: the peak resident memory (``VmHWM`` of
       ``/proc/self/status``) above the interpreter's baseline after its
       imports (goal <= 0.5 GB), the rows per second, and the largest
       principal angle between the fitted and the true subspaces;
(b) dask against memory, on ``--rows-dask`` rows (4e6) written as a folder of
    Parquet files: the in-memory fit (``JointDimReduction(y, a, b).fit``), the
    streamed fit (``ParquetSource``) and the dask fit on a
    ``LocalCluster(n_workers=2, threads_per_worker=1, processes=True)`` reading
    the files on the workers: largest principal angle to the in-memory fit and
    the time ratios.  The streamed fit's peak memory is measured in a
    subprocess too, to compare with (a2): it does not grow with the rows.

The files are deleted at the end.  ``--small`` runs everything at 1/20 size.

Usage: python studies/bench_scale.py [--small] [--tmp /tmp] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

N1 = N2 = 20
RANK = 2
ROW_GROUP = 250_000


def _status_kib(key: str) -> int:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"{key} not in /proc/self/status")


def true_subspaces() -> tuple[np.ndarray, np.ndarray]:
    u = np.zeros((N1, RANK))
    v = np.zeros((N2, RANK))
    u[0, 0] = u[1, 0] = 1.0
    u[2, 1] = 1.0
    v[0, 0] = 1.0
    v[1, 1] = v[3, 1] = 1.0
    return u, v


def generate(rng: np.random.Generator, k: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """k rows of a rank-2 bilinear model: y = sum_j (u_j'a)(v_j'b) + noise."""
    u, v = true_subspaces()
    a = rng.standard_normal((k, N1))
    b = rng.standard_normal((k, N2))
    y = np.einsum("ij,ij->i", a @ u, b @ v) + 0.5 * rng.standard_normal(k)
    return y, a, b


def columns() -> tuple[list[str], list[str]]:
    return [f"a{j}" for j in range(N1)], [f"b{j}" for j in range(N2)]


def write_parquet(path: Path, rows: int, seed: int, *, files: int = 1) -> float:
    """Write ``rows`` rows (in ``files`` files) with row groups of ROW_GROUP rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names_a, names_b = columns()
    rng = np.random.default_rng(seed)
    t0 = time.perf_counter()
    per_file = -(-rows // files)
    targets = [path] if files == 1 else [path / f"part{i:03d}.parquet" for i in range(files)]
    if files > 1:
        path.mkdir(parents=True, exist_ok=True)
    done = 0
    for target in targets:
        n_file = min(per_file, rows - done)
        writer = None
        for lo in range(0, n_file, ROW_GROUP):
            k = min(ROW_GROUP, n_file - lo)
            y, a, b = generate(rng, k)
            arrays = [pa.array(y)] + [pa.array(a[:, j]) for j in range(N1)] + [
                pa.array(b[:, j]) for j in range(N2)]
            table = pa.Table.from_arrays(arrays, names=["y", *names_a, *names_b])
            if writer is None:
                writer = pq.ParquetWriter(target, table.schema, compression="none", use_dictionary=False,
                                          write_statistics=False)
            writer.write_table(table, row_group_size=ROW_GROUP)
        writer.close()
        done += n_file
    return time.perf_counter() - t0


def child_stream(path: str, batch_rows: int) -> None:
    """Run in a fresh interpreter: stream the file, print JSON to stdout."""
    import jdr_stats as jdr
    from jdr_stats.estimation._estimate import estimate
    from jdr_stats.streams._sources import ParquetSource

    names_a, names_b = columns()
    src = ParquetSource(path, y="y", a=names_a, b=names_b, batch_rows=batch_rows)
    base_hwm = _status_kib("VmHWM")
    base_rss = _status_kib("VmRSS")
    t0 = time.perf_counter()
    mom = jdr.Moments.from_source(src)
    est = estimate(mom.to_block_moments(), RANK)
    elapsed = time.perf_counter() - t0
    peak = _status_kib("VmHWM")
    print(json.dumps({
        "nobs": mom.nobs, "seconds": elapsed, "base_hwm_kib": base_hwm,
        "base_rss_kib": base_rss, "peak_hwm_kib": peak,
        "dir_a": est.dir_a.tolist(), "dir_b": est.dir_b.tolist(),
    }))


def run_child(path: Path, batch_rows: int) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1]) + os.pathsep + env.get("PYTHONPATH", "")
    out = subprocess.run(
        [sys.executable, __file__, "--child-stream", str(path), "--batch-rows", str(batch_rows)],
        check=True, capture_output=True, text=True, env=env,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def max_angle(x: np.ndarray, y: np.ndarray) -> float:
    from jdr_stats.core._linalg import principal_angles

    return float(principal_angles(np.asarray(x), np.asarray(y)).max())


def part_a1(m: int, repeat: int) -> None:
    import jdr_stats as jdr

    y, a, b = generate(np.random.default_rng(1), m)
    t_bare, t_mom = np.inf, np.inf
    for _ in range(repeat):  # alternate, so both see the same machine load
        t0 = time.perf_counter()
        a.T @ (y[:, None] * b)
        t_bare = min(t_bare, time.perf_counter() - t0)
        t0 = time.perf_counter()
        jdr.Moments.from_arrays(y, a, b)
        t_mom = min(t_mom, time.perf_counter() - t0)
    print(f"(a1) in memory, m={m} rows, n1=n2={N1}, best of {repeat} (alternated)")
    print(f"  bare A.T @ (y*B):            {t_bare:8.3f} s  {m / t_bare:12.4g} rows/s")
    print(f"  Moments.from_arrays:         {t_mom:8.3f} s  {m / t_mom:12.4g} rows/s")
    print(f"  throughput ratio moments/bare: {t_bare / t_mom:.3f}  (goal >= 0.5)")


def part_a2(tmp: Path, rows: int, batch_rows: int) -> None:
    path = tmp / "jdr_bench_scale.parquet"
    try:
        t_write = write_parquet(path, rows, seed=2)
        size = path.stat().st_size
        res = run_child(path, batch_rows)
    finally:
        path.unlink(missing_ok=True)
    u, v = true_subspaces()
    extra = (res["peak_hwm_kib"] - res["base_hwm_kib"]) / 1024**2
    print(f"(a2) Parquet stream: {rows} rows x (1 + {N1} + {N2}) float64, "
          f"{size / 1e9:.2f} GB uncompressed, row groups of {ROW_GROUP}, batch_rows={batch_rows}")
    print(f"  written in {t_write:.1f} s (not part of the fit)")
    print(f"  baseline after imports (VmHWM): {res['base_hwm_kib'] / 1024:8.1f} MiB")
    print(f"  peak during the fit (VmHWM):    {res['peak_hwm_kib'] / 1024:8.1f} MiB")
    print(f"  peak above baseline:            {extra:8.3f} GiB  (goal <= 0.5)")
    print(f"  streamed fit: {res['seconds']:.1f} s, {res['nobs'] / res['seconds']:.4g} rows/s")
    print(f"  max principal angle to the true subspaces: "
          f"a {max_angle(res['dir_a'], u):.4f} rad, b {max_angle(res['dir_b'], v):.4f} rad")


def part_b(tmp: Path, rows: int, batch_rows: int) -> None:
    import dask
    import dask.dataframe as dd
    import distributed
    import pandas as pd

    import jdr_stats as jdr
    from jdr_stats.estimation._estimate import estimate
    from jdr_stats.streams._sources import DaskSource, ParquetSource

    names_a, names_b = columns()
    folder = tmp / "jdr_bench_scale_dask"
    shutil.rmtree(folder, ignore_errors=True)
    try:
        write_parquet(folder, rows, seed=3, files=8)
        # Streamed from the files, fresh interpreter (memory).
        child = run_child(folder, batch_rows)
        # In memory.
        t0 = time.perf_counter()
        df = pd.read_parquet(folder)
        t_load = time.perf_counter() - t0
        t0 = time.perf_counter()
        res = jdr.JointDimReduction(df["y"], df[names_a], df[names_b]).fit(RANK)
        t_mem = time.perf_counter() - t0
        del df
        # Streamed in this process (time).
        t0 = time.perf_counter()
        src = ParquetSource(folder, y="y", a=names_a, b=names_b, batch_rows=batch_rows)
        est_s = estimate(jdr.Moments.from_source(src).to_block_moments(), RANK)
        t_stream = time.perf_counter() - t0
        # dask on a 2-process LocalCluster, reading the files on the workers.
        with dask.config.set({"distributed.worker.daemon": False}), \
                distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                         dashboard_address=None) as cluster, \
                distributed.Client(cluster) as client:
            # Warm-up (not timed): the workers import jdr_stats and pandas.
            client.run(lambda: __import__("jdr_stats.moments") and None)
            t0 = time.perf_counter()
            ddf = dd.read_parquet(folder, columns=["y", *names_a, *names_b])
            mom = jdr.Moments.from_source(DaskSource(ddf["y"], ddf[names_a], ddf[names_b]))
            est_d = estimate(mom.to_block_moments(), RANK)
            t_dask = time.perf_counter() - t0
            nparts = ddf.npartitions
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    da_, db_ = res.directions_a.to_numpy(), res.directions_b.to_numpy()
    print(f"(b) {rows} rows x (1 + {N1} + {N2}), 8 Parquet files, rank {RANK}")
    print(f"  in memory: read {t_load:.2f} s, JointDimReduction(...).fit {t_mem:.2f} s")
    print(f"  streamed ParquetSource: {t_stream:.2f} s (ratio to in-memory fit "
          f"{t_stream / t_mem:.2f}); max angle to in-memory: a "
          f"{max_angle(est_s.dir_a, da_):.2e}, b {max_angle(est_s.dir_b, db_):.2e} rad")
    print(f"    its peak memory above baseline (subprocess): "
          f"{(child['peak_hwm_kib'] - child['base_hwm_kib']) / 1024**2:.3f} GiB")
    print(f"  dask, LocalCluster(2 workers x 1 thread, processes), {nparts} partitions, "
          f"read on the workers (after warm-up): {t_dask:.2f} s (ratio to in-memory fit {t_dask / t_mem:.2f}, "
          f"to read + fit {t_dask / (t_load + t_mem):.2f})")
    print(f"    max angle to in-memory: a {max_angle(est_d.dir_a, da_):.2e}, "
          f"b {max_angle(est_d.dir_b, db_):.2e} rad")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--small", action="store_true", help="1/20 of the sizes")
    p.add_argument("--rows", type=int, default=20_000_000)
    p.add_argument("--rows-dask", type=int, default=4_000_000)
    p.add_argument("--rows-mem", type=int, default=2_000_000)
    p.add_argument("--batch-rows", type=int, default=65_536)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--tmp", default=tempfile.gettempdir())
    p.add_argument("--parts", default="a1,a2,b")
    p.add_argument("--child-stream", default=None, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child_stream:
        child_stream(args.child_stream, args.batch_rows)
        return
    if args.small:
        args.rows //= 20
        args.rows_dask //= 20
        args.rows_mem //= 20
    import dask
    import pyarrow

    import jdr_stats as jdr

    print(f"jdr_stats {jdr.__version__}, numpy {np.__version__}, pyarrow "
          f"{pyarrow.__version__}, dask {dask.__version__}, {os.cpu_count()} cores, "
          f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS')}")
    tmp = Path(args.tmp)
    parts = args.parts.split(",")
    t0 = time.perf_counter()
    if "a1" in parts:
        part_a1(args.rows_mem, args.repeat)
    if "a2" in parts:
        part_a2(tmp, args.rows, args.batch_rows)
    if "b" in parts:
        part_b(tmp, args.rows_dask, args.batch_rows)
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
