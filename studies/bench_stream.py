"""A streamed fit against a bare read of the same Parquet columns.

Question: how far is ``JointDimReduction.from_parquet(...)`` + ``fit(2)``
(the default joint estimator, and the per-block estimator) from reading the
same columns with pyarrow alone, on one BLAS thread?

Design: one Parquet file of ``--rows`` rows (default 4e6) of a response and
two blocks of ``--width`` float64 columns (default 20 + 20), row groups of
250000 rows, written once (seed 0; not timed).  The contenders, alternated
``--repeat`` times in one process, the best time of each kept:

- ``bare read``: ``pyarrow.parquet.ParquetFile(path).iter_batches`` of the
  model's columns, ``--batch-rows`` rows a batch (the models' batch size),
  with the reader options the library uses (``pre_buffer=False``, 1 MiB
  buffer: faster here than pyarrow's defaults), each column of each batch
  to numpy (``Array.to_numpy``) and summed, so that every value is touched;
  in the calling thread;
- ``default``: ``from_parquet(path, y=..., a=..., b=..., batch_rows=...)``
  then ``fit(2)`` (the joint estimator);
- ``per-block``: the same with ``fit(2, independent_blocks=True)``;
- ``default, no read-ahead``: ``default`` with
  ``jdr.config.READ_AHEAD_CHUNKS = 0`` (the file decoded in the calling
  thread, between the chunks' reductions, as before the read-ahead).

The ratio of each model to the bare read is reported, wall time and CPU
time (user + system, all threads of the process): the read-ahead decodes the
file in a second thread while the chunks already read are reduced, so the
wall time can drop below the CPU time.  BLAS on one thread.  The machine is
shared (2 cores, other jobs running): absolute times move with the load,
the ratios are measured within one run.

Command (recorded in studies/results/bench_stream.txt):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_stream.py

Options: ``--rows``, ``--width``, ``--repeat``, ``--batch-rows``, ``--tmp``
(the folder of the file; it is kept there and reused when its size matches).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import subprocess
import tempfile
import time
from pathlib import Path

import numpy as np

import jdr_stats as jdr


def write(path: Path, rows: int, width: int, seed: int = 0, group: int = 250_000) -> None:
    """A response and two blocks of ``width`` columns (a rank-2 bilinear
    link), written row group by row group."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    names = ["y", *[f"a{j}" for j in range(width)], *[f"b{j}" for j in range(width)]]
    schema = pa.schema([(n, pa.float64()) for n in names])
    with pq.ParquetWriter(path, schema) as writer:
        for lo in range(0, rows, group):
            k = min(group, rows - lo)
            a, b = rng.normal(size=(k, width)), rng.normal(size=(k, width))
            y = a[:, 0] * b[:, 0] + 0.5 * a[:, 1] * b[:, 1] + rng.normal(size=k)
            cols = [y, *a.T, *b.T]
            writer.write_table(pa.table(dict(zip(names, cols, strict=True)), schema=schema))


def bare_read(path: Path, columns: list[str], batch_rows: int) -> float:
    import pyarrow.parquet as pq

    total = 0.0
    pf = pq.ParquetFile(path, pre_buffer=False, buffer_size=1 << 20)  # as the library reads
    for batch in pf.iter_batches(batch_size=batch_rows, columns=columns):
        for j in range(batch.num_columns):
            total += float(batch.column(j).to_numpy().sum())
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=4_000_000)
    parser.add_argument("--width", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--batch-rows", type=int, default=65536)
    parser.add_argument("--tmp", default=None)
    args = parser.parse_args()
    folder = Path(args.tmp or tempfile.gettempdir())
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"jdr_bench_stream_{args.rows}_{args.width}.parquet"
    if not path.exists():
        t0 = time.perf_counter()
        write(path, args.rows, args.width)
        print(f"written in {time.perf_counter() - t0:.1f} s (not timed)")
    a = [f"a{j}" for j in range(args.width)]
    b = [f"b{j}" for j in range(args.width)]
    columns = ["y", *a, *b]
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip() or "?"
    print(f"jdr_stats {jdr.__version__} at {commit}, {args.rows} rows x (1 + {args.width} + "
          f"{args.width}) float64, {path.stat().st_size / 2**30:.2f} GiB on disk, batch_rows "
          f"{args.batch_rows}, best of {args.repeat} (alternated), OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}, load average {os.getloadavg()[0]:.2f}")

    def model() -> jdr.JointDimReduction:
        return jdr.JointDimReduction.from_parquet(path, y="y", a=a, b=b,
                                                  batch_rows=args.batch_rows)

    def serial() -> jdr.JointDimReductionResults:
        ahead = getattr(jdr.config, "READ_AHEAD_CHUNKS", 0)  # (older versions: none)
        jdr.config.READ_AHEAD_CHUNKS = 0
        try:
            return model().fit(2)
        finally:
            jdr.config.READ_AHEAD_CHUNKS = ahead

    contenders = {
        "bare read": lambda: bare_read(path, columns, args.batch_rows),
        "default": lambda: model().fit(2),
        "per-block": lambda: model().fit(2, independent_blocks=True),
        "default, no read-ahead": serial,
    }
    best = dict.fromkeys(contenders, np.inf)
    cpu = dict.fromkeys(contenders, np.inf)
    results = {}
    for _ in range(args.repeat):
        for name, fn in contenders.items():
            c0, t0 = os.times(), time.perf_counter()
            results[name] = fn()
            t, c1 = time.perf_counter() - t0, os.times()
            best[name] = min(best[name], t)
            cpu[name] = min(cpu[name], c1.user - c0.user + c1.system - c0.system)
    print(f"{'contender':24s} {'wall s':>7s} {'ratio':>6s} {'CPU s':>7s} {'ratio':>6s}")
    for name, t in best.items():
        print(f"{name:24s} {t:7.2f} {t / best['bare read']:6.2f} {cpu[name]:7.2f} "
              f"{cpu[name] / cpu['bare read']:6.2f}")
    d, p = results["default"], results["per-block"]
    print(f"singular values: default {np.array2string(d.singular_values, precision=4)}, "
          f"per-block {np.array2string(p.singular_values, precision=4)}")
    print(f"load average at the end {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
