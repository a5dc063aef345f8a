"""The cost of the within-block moments of :class:`jdr_stats.Moments`.

Question: ``Moments.from_arrays`` (and ``from_chunks``, ``from_source``)
sums the y-weighted within-block moments ``m3_aya``, ``m3_byb`` by default
(``within=True``), which the default (joint) estimator needs to fit from bare
sums with the same numbers as from the rows.  How much longer does building
the moments take than with ``within=False``?

Design: Gaussian y, a, b with m = 20000 rows and n1 = n2 = 50 columns (and
m = 20000, 10 + 10); each timing is the median of ``--reps`` runs of
``Moments.from_arrays`` with the default chunking, alternating the two
settings; one BLAS thread.  The ratio is median(within=True) /
median(within=False).

Run::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/study_moments_within.py --reps 7

Output recorded in ``studies/results/study_moments_within.txt``.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import jdr_stats as jdr


def timed(y: np.ndarray, a: np.ndarray, b: np.ndarray, within: bool) -> float:
    t0 = time.perf_counter()
    jdr.Moments.from_arrays(y, a, b, within=within)
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"# reps={args.reps}; seconds: median over reps", flush=True)
    for m, n in ((20000, 50), (20000, 10)):
        y = rng.standard_normal(m)
        a, b = rng.standard_normal((m, n)), rng.standard_normal((m, n))
        times: dict[bool, list[float]] = {True: [], False: []}
        timed(y, a, b, True)  # warm-up
        for _ in range(args.reps):
            for within in (False, True):
                times[within].append(timed(y, a, b, within))
        t_off, t_on = np.median(times[False]), np.median(times[True])
        print(f"m={m} n1=n2={n}: within=False {t_off:.4f} s, within=True {t_on:.4f} s, "
              f"ratio {t_on / t_off:.2f}", flush=True)


if __name__ == "__main__":
    main()
