"""Cost of categorical columns on Parquet/CSV streams (issue 21 item 5).

One file of ``m`` rows (seed 1): blocks a (5 columns) and b (4 columns), a
numeric response ``y``, a 3-class text response ``cls``, a numeric
covariate ``age`` and a 4-level text covariate ``site``.  For Parquet
(row groups of 65536 rows) and CSV (chunks of 65536 rows) it times
``JointDimReduction.from_parquet`` / ``stream_model`` (the passes that build
the model's sums) and ``fit(1)`` for

* ``numeric``: ``y`` (one pass);
* ``categorical y``: ``cls`` (a pass over ``cls`` alone for its classes,
  then ``q + 1 = 3`` passes);
* ``numeric y, site``: ``y`` with ``covariates=["age", "site"]`` (a pass
  over ``site`` for its levels, one pass for the coefficients, one for the
  sums);

the fastest of ``--repeats`` runs, and the largest relative difference of the
singular values from the in-memory model with the same columns.  The
machine is shared (2 cores, several jobs): times are indicative.

Run::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python studies/bench_stream_levels.py \
        --rows 300000 --repeats 2

Output recorded in ``studies/results/bench_stream_levels.txt``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time

import numpy as np
import pandas as pd

import jdr_stats as jdr
from jdr_stats.fitting._model_inputs import stream_model
from jdr_stats.sources import CSVSource, ParquetSource

A = [f"a{j}" for j in range(5)]
B = [f"b{j}" for j in range(4)]


def frame(m: int, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(m, 5)), rng.normal(size=(m, 4))
    age, site = rng.normal(size=m), rng.integers(0, 4, m)
    a += age[:, None] * 0.5
    y = a[:, 0] * b[:, 0] + age + rng.normal(size=m)
    df = pd.DataFrame(np.c_[a, b], columns=[*A, *B])
    df["y"] = y
    df["cls"] = np.array(["lo", "mid", "hi"])[np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))]
    df["age"] = age
    df["site"] = np.array(["s1", "s2", "s3", "s4"])[site]
    return df


CASES = {"numeric": ("y", None), "categorical y": ("cls", None),
         "numeric y, site": ("y", ["age", "site"])}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=300_000)
    parser.add_argument("--repeats", type=int, default=2)
    args = parser.parse_args()
    df = frame(args.rows)
    tmp = tempfile.mkdtemp()
    pq, csv = os.path.join(tmp, "d.parquet"), os.path.join(tmp, "d.csv")
    df.to_parquet(pq, row_group_size=65536)
    df.to_csv(csv, index=False, float_format="%.17g")
    print(f"rows {args.rows}, n1 = 5, n2 = 4, repeats {args.repeats}, load average "
          f"{os.getloadavg()[0]:.2f}")
    print(f"{'format':8s} {'case':18s} {'build s':>8s} {'fit s':>7s} {'max rel diff':>13s}")
    for fmt, cls, path in (("parquet", ParquetSource, pq), ("csv", CSVSource, csv)):
        for case, (y, zs) in CASES.items():
            mem = jdr.JointDimReduction(df[y], df[A], df[B],
                                        covariates=None if zs is None else df[zs]).fit(1)
            best_build, best_fit = np.inf, np.inf
            for _ in range(args.repeats):
                t0 = time.perf_counter()
                model = stream_model(jdr.JointDimReduction, cls, path, y, A, B, zs,
                                     weights=None, batch_rows=65536, origin=fmt)
                t1 = time.perf_counter()
                res = model.fit(1)
                t2 = time.perf_counter()
                best_build, best_fit = min(best_build, t1 - t0), min(best_fit, t2 - t1)
            diff = np.max(np.abs(res.singular_values - mem.singular_values)
                          / np.abs(mem.singular_values))
            print(f"{fmt:8s} {case:18s} {best_build:8.2f} {best_fit:7.3f} {diff:13.1e}")


if __name__ == "__main__":
    main()
