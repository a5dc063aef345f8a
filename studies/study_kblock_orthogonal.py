"""Main effects leaking into the K-block interaction pieces: the default
(``interactions="stein"``) against ``fit(..., interactions="orthogonal")``
at K = 3.

Questions: does a response depending on the blocks only through linear main
effects make each block's rank-0 test reject on skewed, correlated blocks,
and does the orthogonal estimand (every piece formed from ``y``'s least
squares residual on ``[1, every block]``, the residual's estimation in the
rows' influences) hold its size there?  Under a bilinear link between two
of the blocks, what are its power at rank 0 and its size at the true rank?

Design: three blocks of 5 columns, ``x_k = g_k + f 1^T``, ``f`` (m x 1) and
``g_k`` (m x 5) i.i.d. standardised centred Gamma(2) (skewness 1.41), so
every cross-block correlation is 1/2.  The default joint estimator
(``independent_blocks=False``), ``fit("auto")`` at alpha = 0.05, the robust
per-block tests.

* Part a (leak): ``y = a1 + 0.5 b2 + N(0, 1)`` (``a1`` block a's first
  column, ``b2`` block b's second): each block's rejection rate of
  ``H0: rank_k <= 0``, default against orthogonal.
* Part b (bilinear): ``y = a1 b1 + N(0, 1)``: true ranks (1, 1, 0); each
  block's rejection rate at rank 0 (power for a and b, size for c) and at
  rank 1 for a and b (size at the true rank).  ``fit("auto")`` tests rank
  1 only after rejecting rank 0; a block whose rank 0 was not rejected
  counts as not rejected at rank 1 (the sequential selection's error, equal
  to the test's size when the power at rank 0 is one).

* Part c (what the tests of part b estimate): one draw per m = 1000, 4000,
  50000 of the bilinear design, ``fit(1)`` (no tests) under both
  estimands: each block's three largest combined-Gram eigenvalues.  The
  pieces are scaled to unit null noise, so an eigenvalue growing like m is
  a population direction: block c's growing one is the non-Gaussian bias
  of the pieces (not a main effect), which the orthogonal estimand does not
  remove.

m = 1000 and 4000 in parts a and b; each cell draws from its own seed (``SEED`` + cell);
rates +- MC SE ``sqrt(p (1 - p) / R)``.

Command (about ten minutes of one core; ``--part c`` alone, a minute)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. \\
        python studies/study_kblock_orthogonal.py > studies/results/study_kblock_orthogonal.txt
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
import warnings

import numpy as np
import scipy

import jdr_stats as jdr

SEED = 20261243
N = 5
NAMES = ("a", "b", "c")


def _gamma(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return (rng.gamma(2.0, 1.0, size=shape) - 2.0) / np.sqrt(2.0)


def design(m: int, rng: np.random.Generator) -> list[np.ndarray]:
    f = _gamma(rng, (m, 1))
    return [_gamma(rng, (m, N)) + f for _ in NAMES]


def rate(x: list[bool]) -> str:
    p = float(np.mean(x))
    return f"{p:.3f}+-{np.sqrt(p * (1 - p) / len(x)):.3f}"


def _pvalues(y: np.ndarray, xs: list[np.ndarray], interactions: str) -> dict[str, list[float]]:
    """Each block's p-values of the sequential tests ``fit("auto")`` ran."""
    model = jdr.JointDimReduction.from_blocks(y, dict(zip(NAMES, xs, strict=True)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = model.fit("auto", interactions=interactions)  # type: ignore[arg-type]
    tables = res.rank_test_table.tables
    return {n: list(tables[n]["pvalue"].to_numpy()) for n in NAMES}


def _rejected(p: list[float], k: int) -> bool:
    return len(p) > k and p[k] < 0.05


def part_a(reps: int) -> None:
    print("## a. rank-0 rejection rate per block (alpha = 0.05), y = a1 + 0.5 b2 + N(0, 1)")
    print(f"{'m':>5s} {'R':>4s} {'estimand':10s} | " + " ".join(f"{n:>12s}" for n in NAMES))
    for cell, m in enumerate((1000, 4000), start=1):
        rng = np.random.default_rng(SEED + cell)
        out = {e: {n: [] for n in NAMES} for e in ("stein", "orthogonal")}
        t0 = time.time()
        for _ in range(reps):
            xs = design(m, rng)
            y = xs[0][:, 0] + 0.5 * xs[1][:, 1] + rng.standard_normal(m)
            for est, rec in out.items():
                pv = _pvalues(y, xs, est)
                for n in NAMES:
                    rec[n].append(_rejected(pv[n], 0))
        for est, rec in out.items():
            print(f"{m:5d} {reps:4d} {est:10s} | "
                  + " ".join(f"{rate(rec[n]):>12s}" for n in NAMES), flush=True)
        print(f"# ({time.time() - t0:.0f} s)", flush=True)


def part_b(reps: int) -> None:
    print("\n## b. y = a1 b1 + N(0, 1), true ranks (1, 1, 0): rejection rates (alpha = 0.05)"
          " at rank 0 (power a, b; size c) and rank 1 (size a, b)")
    print(f"{'m':>5s} {'R':>4s} {'estimand':10s} | {'a: k=0':>12s} {'b: k=0':>12s} "
          f"{'c: k=0':>12s} | {'a: k=1':>12s} {'b: k=1':>12s}")
    for cell, m in enumerate((1000, 4000), start=101):
        rng = np.random.default_rng(SEED + cell)
        out = {e: {key: [] for key in ("a0", "b0", "c0", "a1", "b1")}
               for e in ("stein", "orthogonal")}
        t0 = time.time()
        for _ in range(reps):
            xs = design(m, rng)
            y = xs[0][:, 0] * xs[1][:, 0] + rng.standard_normal(m)
            for est, rec in out.items():
                pv = _pvalues(y, xs, est)
                for key in rec:
                    rec[key].append(_rejected(pv[key[0]], int(key[1])))
        for est, rec in out.items():
            print(f"{m:5d} {reps:4d} {est:10s} | {rate(rec['a0']):>12s} {rate(rec['b0']):>12s} "
                  f"{rate(rec['c0']):>12s} | {rate(rec['a1']):>12s} {rate(rec['b1']):>12s}",
                  flush=True)
        print(f"# ({time.time() - t0:.0f} s)", flush=True)


def part_c() -> None:
    print("\n## c. y = a1 b1 + N(0, 1), one draw per m: each block's three largest "
          "combined-Gram eigenvalues of fit(1)")
    for cell, m in enumerate((1000, 4000, 50000), start=201):
        rng = np.random.default_rng(SEED + cell)
        xs = design(m, rng)
        y = xs[0][:, 0] * xs[1][:, 0] + rng.standard_normal(m)
        model = jdr.JointDimReduction.from_blocks(y, dict(zip(NAMES, xs, strict=True)))
        for est in ("stein", "orthogonal"):
            res = model.fit(1, interactions=est)  # type: ignore[arg-type]
            vals = "  ".join(f"{n}: " + ", ".join(f"{v:7.1f}" for v in
                                                  res.eigenvalues[n].to_numpy()[:3])
                             for n in NAMES)
            print(f"{m:6d} {est:10s} | {vals}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--reps", type=int, default=100)
    parser.add_argument("--part", choices=("a", "b", "c"), default=None)
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    print("# Recorded output of studies/study_kblock_orthogonal.py; command: "
          "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python "
          + " ".join(["studies/study_kblock_orthogonal.py", *sys.argv[1:]]))
    print(f"# python {platform.python_version()}, numpy {np.__version__}, scipy "
          f"{scipy.__version__}; one BLAS thread; library at commit {commit}")
    print(f"# reps={args.reps}, seed={SEED}; rates +- MC SE; 2 shared cores: wall-clock "
          "seconds are not timings")
    t0 = time.time()
    if args.part in (None, "a"):
        part_a(args.reps)
    if args.part in (None, "b"):
        part_b(args.reps)
    if args.part in (None, "c"):
        part_c()
    print(f"# wall {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
