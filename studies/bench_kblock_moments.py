"""Time of K-block moments and of the streamed per-block rank tests.

Design: a response on three blocks of widths (4, 3, 3) (m = 20000 and
1e5, standard normal blocks, two pairwise interactions, seed 0), written
to a Parquet file of row groups of 5000 rows.  Timed, one BLAS thread:
``jdr.Moments.from_blocks`` of the rows, ``from_moments(...).fit(2)``
(per-block estimator), the streamed ``fit(2)`` and the streamed
``fit("auto")`` (the per-block rank tests: two more passes over the file).

Command (from the repository root)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_kblock_moments.py
"""

from __future__ import annotations

import pathlib
import tempfile
import time

import numpy as np
import pandas as pd

import jdr_stats as jdr


def run(m: int, widths: tuple[int, ...], folder: pathlib.Path) -> str:
    rng = np.random.default_rng(0)
    xs = [rng.normal(size=(m, n)) for n in widths]
    y = xs[0][:, 0] * xs[1][:, 0] + xs[1][:, 1] * xs[2][:, 1] + 0.5 * rng.normal(size=m)
    cols = {f"b{k}": [f"b{k}_{j}" for j in range(n)] for k, n in enumerate(widths)}
    df = pd.DataFrame(np.hstack(xs), columns=[c for cs in cols.values() for c in cs])
    df["y"] = y
    path = folder / f"x{m}.parquet"
    df.to_parquet(path, row_group_size=5000)
    t = time.perf_counter()
    mom = jdr.Moments.from_blocks(y, xs)
    t_mom = time.perf_counter() - t
    t = time.perf_counter()
    jdr.JointDimReduction.from_moments(mom).fit(2, independent_blocks=True)
    t_fit_mom = time.perf_counter() - t
    model = jdr.JointDimReduction.from_parquet(path, y="y", blocks=cols)
    t = time.perf_counter()
    model.fit(2, independent_blocks=True)
    t_fit = time.perf_counter() - t
    t = time.perf_counter()
    res = model.fit("auto", independent_blocks=True)
    t_auto = time.perf_counter() - t
    return (f"m={m} widths={widths}: Moments.from_blocks {t_mom:.3f} s, fit from moments "
            f"{t_fit_mom:.3f} s, streamed fit(2) {t_fit:.3f} s, streamed fit('auto') "
            f"{t_auto:.3f} s (ranks {res.rank})")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        for m in (20_000, 100_000):
            print(run(m, (4, 3, 3), pathlib.Path(tmp)))
