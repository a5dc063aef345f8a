"""fit("auto") on the paper's BILINEAR experiment 2 (issue 19, item 4).

m = 1e4, r = 5, n1 = n2 = n in {50, 200, 500} (the paper's range is 50 to
500), 5 samples each, seeded by [2026, n, sample]; prints the chosen ranks
and the time per fit("auto").  Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/check_paper_auto.py 50,200,500 5
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

import jdr_stats as jdr


def main() -> None:
    warnings.simplefilter("ignore")
    sizes = [int(x) for x in (sys.argv[1] if len(sys.argv) > 1 else "50,200,500").split(",")]
    reps = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    for n in sizes:
        ranks, t0 = [], time.time()
        for rep in range(reps):
            sim = jdr.simulate.bilinear(10000, n, n, 5, seed=np.random.default_rng([2026, n, rep]))
            ranks.append(jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto").rank)
        print(f"n1 = n2 = {n}: chosen ranks {ranks} (true 5); "
              f"{(time.time() - t0) / reps:.1f} s per fit('auto')", flush=True)


if __name__ == "__main__":
    main()
