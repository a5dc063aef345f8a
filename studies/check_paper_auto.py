"""fit("auto") on the paper's BILINEAR experiments 2 and 1 (issue 19, item 4).

Experiment 2: m = 1e4, r = 5, n1 = n2 = n in {50, 200, 500} (the paper's
range is 50 to 500), 5 samples each, seeded by [2026, n, sample].
Experiment 1 (first argument ``exp1``): n1 = n2 = 100, r = 5, m in the
paper's range 1e3 to 1e4, seeded by [2027, m, sample].  Prints the chosen
ranks, the rank method the default chose, and the time per fit("auto").
Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_paper_auto.py 50,200,500 5
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_paper_auto.py exp1 1000,2000,5000 5
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_paper_auto.py exp1 1000,2000 10 robust,combined

With a fourth argument (rank methods, comma-separated), experiment 1 compares
``fit("auto", rank_method=...)`` for each method on the same samples
(``seed`` = the sample's index) instead of printing the statistics.
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.inference._rank_stats import _whiten


def exp1(ms: list[int], reps: int) -> None:
    """Also the statistics m s_j^2 / s_y^2, j = 1..6, against the edge (2 sqrt(100))^2."""
    for m in ms:
        ranks, methods, t0 = [], set(), time.time()
        for rep in range(reps):
            sim = jdr.simulate.bilinear(m, 100, 100, 5, seed=np.random.default_rng([2027, m, rep]))
            res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto")
            ranks.append(res.rank)
            methods.add(res.rank_method)
            w = _whiten(res.model.data, res.model.moments(), rows=False)  # the tests' whitening
            stats = np.round(w.m * w.s[:6] ** 2 / w.var_y).astype(int).tolist()
            print(f"  m = {m}, sample {rep}: m s_j^2 / s_y^2, j = 1..6: {stats} (edge 400)",
                  flush=True)
        print(f"n1 = n2 = 100, m = {m} (n1 n2 / m = {1e4 / m:g}): chosen ranks {ranks} (true 5) "
              f"by {sorted(methods)}; {(time.time() - t0) / reps:.1f} s per fit('auto')",
              flush=True)


def exp1_methods(ms: list[int], reps: int, methods: list[str]) -> None:
    """fit("auto") with each rank method on the same samples of experiment 1."""
    for m in ms:
        for method in methods:
            ranks, t0 = [], time.time()
            for rep in range(reps):
                sim = jdr.simulate.bilinear(m, 100, 100, 5,
                                            seed=np.random.default_rng([2027, m, rep]))
                res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(
                    "auto", rank_method=method, seed=rep)
                ranks.append(res.rank)
            hits = sum(r == 5 for r in ranks)
            print(f"n1 = n2 = 100, m = {m}: rank_method={method!r}: chosen ranks {ranks} "
                  f"(true 5 in {hits} of {reps}); {(time.time() - t0) / reps:.1f} s per "
                  "fit('auto')", flush=True)


def main() -> None:
    warnings.simplefilter("ignore")
    if len(sys.argv) > 1 and sys.argv[1] == "exp1":
        ms = [int(x) for x in (sys.argv[2] if len(sys.argv) > 2 else "1000,2000,5000").split(",")]
        reps = int(sys.argv[3]) if len(sys.argv) > 3 else 5
        if len(sys.argv) > 4:
            exp1_methods(ms, reps, sys.argv[4].split(","))
        else:
            exp1(ms, reps)
        return
    sizes = [int(x) for x in (sys.argv[1] if len(sys.argv) > 1 else "50,200,500").split(",")]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    for n in sizes:
        ranks, methods, t0 = [], set(), time.time()
        for rep in range(reps):
            sim = jdr.simulate.bilinear(10000, n, n, 5, seed=np.random.default_rng([2026, n, rep]))
            res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto")
            ranks.append(res.rank)
            methods.add(res.rank_method)
        print(f"n1 = n2 = {n}: chosen ranks {ranks} (true 5) by {sorted(methods)}; "
              f"{(time.time() - t0) / reps:.1f} s per fit('auto')", flush=True)


if __name__ == "__main__":
    main()
