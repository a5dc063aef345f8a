"""Fit time and peak memory for wide blocks (issue 20).

For each size ``(m, n)`` (``n1 = n2 = n``), on Gaussian AR(1) 0.5 blocks
with a rank-one bilinear response (seed 0): the time of
``JointDimReduction(y, a, b).fit(1)`` (the default, ``whitening="auto"``,
which is ``"shrinkage"`` at these sizes) split into the model's construction
and the fit, and the peak memory the fit allocates (tracemalloc; numpy
reports its buffers to it) next to the input's bytes and to ``8 n1 n2`` (one
n1 x n2 matrix); then the time and peak memory of ``res.summary()`` (its
premises and per-SD loadings: O(m n + n1 n2) when ``n1 + n2 >= m``).

Usage::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python studies/bench_wide.py \\
        --sizes 500:1000 500:10000 10000:2000

The recorded output is ``studies/results/bench_wide.txt``.
"""

from __future__ import annotations

import argparse
import time
import tracemalloc

import numpy as np

import jdr_stats as jdr


def ar1(rng: np.random.Generator, m: int, n: int, rho: float = 0.5) -> np.ndarray:
    x = rng.standard_normal((m, n))
    c = np.sqrt(1 - rho**2)
    for j in range(1, n):
        x[:, j] *= c
        x[:, j] += rho * x[:, j - 1]
    return x


def run(m: int, n: int) -> str:
    rng = np.random.default_rng(0)
    a, b = ar1(rng, m, n), ar1(rng, m, n)
    y = a[:, 0] * b[:, 0] + rng.standard_normal(m)
    t0 = time.perf_counter()
    model = jdr.JointDimReduction(y, a, b)
    t1 = time.perf_counter()
    tracemalloc.start()
    res = model.fit(1)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    t2 = time.perf_counter()
    tracemalloc.start()
    text = str(res.summary())
    _, peak_s = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    t3 = time.perf_counter()
    gb = 1024.0**3
    return (f"m={m:6d} n1=n2={n:6d}  whitening={res.whitening:9s} "
            f"construct {t1 - t0:7.2f} s  fit {t2 - t1:7.2f} s  "
            f"peak {peak / gb:6.2f} GiB  input {(a.nbytes + b.nbytes) / gb:5.2f} GiB  "
            f"8 n1 n2 = {8 * n * n / gb:5.2f} GiB  peak/(8 n1 n2) {peak / (8 * n * n):5.1f}  "
            f"summary() {t3 - t2:6.2f} s  peak {peak_s / gb:5.2f} GiB "
            f"({len(text.splitlines())} lines)")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--sizes", nargs="*", default=["500:1000", "500:10000", "10000:2000"])
    args = p.parse_args()
    for size in args.sizes:
        m, n = (int(v) for v in size.split(":"))
        print(run(m, n), flush=True)


if __name__ == "__main__":
    main()
