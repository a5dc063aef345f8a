"""Time of ``drop1()`` (conditional and marginal) against a plain fit, at width.

Bilinear design, r = 2, m = 1e4, n1 = n2 = n for each n given.  Prints the
best of three fits, each drop1's time and its ratio to the fit.  Run from
the repository root (``PYTHONPATH`` chooses the library measured)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_drop1.py 50 100 300
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

import jdr_stats as jdr


def main() -> None:
    warnings.simplefilter("ignore")
    sizes = [int(x) for x in sys.argv[1:]] or [50, 100, 300]
    print(f"# bench_drop1: numpy {np.__version__}, library {jdr.__file__}")
    print(f"{'n':>5} {'m':>6} {'fit s':>8} {'drop1 cond s':>13} {'x fit':>7} "
          f"{'drop1 marg s':>13} {'x fit':>7}")
    for n in sizes:
        m = 10_000
        sim = jdr.simulate.bilinear(m, n, n, 2, seed=n)
        model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
        fit_s = min(_time(model.fit, 2) for _ in range(3))
        res = model.fit(2)
        cond = _time(res.drop1)
        marg = _time(res.drop1, test="marginal")
        print(f"{n:>5} {m:>6} {fit_s:>8.3f} {cond:>13.2f} {cond / fit_s:>7.1f} "
              f"{marg:>13.2f} {marg / fit_s:>7.1f}", flush=True)


def _time(f, *args, **kw) -> float:
    start = time.perf_counter()
    f(*args, **kw)
    return time.perf_counter() - start


if __name__ == "__main__":
    main()
