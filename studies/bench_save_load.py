"""Size and time of ``save`` / ``jdr.load`` (the results file) against a pickle.

Bilinear design, r = 2, n1 = 6, n2 = 5, seed 0, for each m given: the fit
with its rows, and after ``remove_data()``.  Prints the results file's
size, the size of a pickle of the same object, and the best of three saves
and loads.  Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_save_load.py 2000 20000 200000
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

import numpy as np

import jdr_stats as jdr


def best(call, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        call()
        times.append(time.perf_counter() - t)
    return min(times)


def main() -> None:
    sizes = [int(x) for x in sys.argv[1:]] or [2000, 20000, 200000]
    print(f"# bench_save_load: numpy {np.__version__}, library {jdr.__file__}")
    print(f"{'m':>7} {'object':>12} {'file bytes':>11} {'pickle bytes':>13} "
          f"{'save s':>7} {'load s':>7}")
    folder = tempfile.mkdtemp()
    for m in sizes:
        sim = jdr.simulate.bilinear(m, 6, 5, 2, seed=0)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        for label, obj in (("with rows", res), ("remove_data", res.remove_data())):
            path = os.path.join(folder, "fit.jdr")
            pkl = os.path.join(folder, "fit.pickle")
            t_save = best(lambda obj=obj, path=path: obj.save(path))
            t_load = best(lambda path=path: jdr.load(path))
            obj.save(pkl, format="pickle")
            print(f"{m:>7} {label:>12} {os.path.getsize(path):>11} "
                  f"{os.path.getsize(pkl):>13} {t_save:>7.3f} {t_load:>7.3f}")


if __name__ == "__main__":
    main()
