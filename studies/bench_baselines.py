"""Speed of jdr_stats' SIR, pHd and SAVE against statsmodels' dimred and their floors.

Question: how far are the baselines (model construction plus ``fit``) from
statsmodels' ``SlicedInverseReg``, ``PrincipalHessianDirections`` and
``SlicedAverageVarianceEstimation`` on the same data (goal: at most 0.1 of
their time), and from the arithmetic they cannot avoid (goal: at most 1.5
times that floor), with one BLAS thread and with the default threads?

Design: m = 100_000 rows, p = 50 standard normal predictors, a response
with one linear and one quadratic direction, H = 10 slices (equal slices of
10_000: no ties, so ``dr.slices`` and ``np.array_split`` form the same
slices).  Every contender is timed ``--repeat`` times, the contenders
alternated in each round (so that on a shared machine each sees the same
stretch of load), best time kept; all in one process on the same arrays,
first under ``threadpool_limits(1)``, then under the default number of BLAS
threads (one per core).  The contenders of each method:

- ``jdr_stats``: ``SIR(y, x).fit(n_slices=10)`` (``PHD(y, x).fit()``,
  ``SAVE(y, x).fit(n_slices=10)``): construction, with its validation of
  the values, and fit;
- ``fit``: ``fit`` alone on a built model;
- ``statsmodels``: construction and ``fit(slice_n=10_000)`` (pHd: ``fit()``);
- ``floor``, numpy on the same arrays: one symmetric product of the design
  ``x^T x`` (numpy's SYRK) and
  * SIR and SAVE: the sort of the response (``np.argsort``) and the
    per-slice sums ``E^T x`` with ``E`` the m x H indicator matrix of the
    slices (built before the clock starts).  SAVE's slice covariances take
    the flops of one SYRK of the design in all, the same as ``x^T x``, but
    need the rows grouped by slice: the floor does not pay for that;
  * pHd: the y-weighted second moment at the flops of one SYRK: the rows
    scaled by ``sqrt|y - ybar|`` and their SYRK (the signs of ``y - ybar``
    split the rows into two products of the same total cost).

Columns: the seconds, ``jdr_stats / statsmodels``, ``jdr_stats / floor`` and
``fit / floor``; on one thread both the wall times and the CPU times of the
process (the latter less sensitive to the other jobs of a shared machine;
with several BLAS threads CPU time adds the threads, so only wall times are
shown).  Then the principal angles between the two libraries'
leading directions (one BLAS thread):

* SIR: identical kernel; the subspaces should agree to rounding.
* pHd: same directions (statsmodels' eigenvalues are (n-1)/n times ours).
* SAVE: statsmodels divides slice covariances by n_k - 1 (dr: n_k) and
  weights slices by 1/H (dr: n_k/n); with equal slices only the divisor
  differs, so the angles are small but not zero.

Command (recorded in studies/results/bench_baselines.txt)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_baselines.py

Options: ``--repeat`` (default 7), ``--threads`` (the default-threads run's
count; default: the number of cores).
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import statsmodels
from statsmodels.regression import dimred
from threadpoolctl import threadpool_limits

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jdr_stats
from jdr_stats.baselines import PHD, SAVE, SIR
from jdr_stats.metrics import principal_angles

M, P, H, SEED = 100_000, 50, 10, 20261126


def alternated(contenders: dict[str, Callable[[], object]], repeat: int
               ) -> tuple[dict[str, float], dict[str, float], dict[str, object]]:
    """Best wall and CPU time and last output of each contender, alternated
    in each round."""
    best = dict.fromkeys(contenders, np.inf)
    cpu = dict.fromkeys(contenders, np.inf)
    outs: dict[str, object] = {}
    for _ in range(repeat):
        for name, fn in contenders.items():
            t0, c0 = time.perf_counter(), time.process_time()
            outs[name] = fn()
            best[name] = min(best[name], time.perf_counter() - t0)
            cpu[name] = min(cpu[name], time.process_time() - c0)
    return best, cpu, outs


def data() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(SEED)
    x = rng.standard_normal((M, P))
    b1 = np.zeros(P)
    b1[:2] = [1.0, 1.0]
    b2 = np.zeros(P)
    b2[2:4] = [1.0, -1.0]
    y = x @ b1 / np.sqrt(2) + 0.5 * (x @ b2) ** 2 + 0.5 * rng.standard_normal(M)
    return y, x


def floors(y: np.ndarray, x: np.ndarray) -> dict[str, Callable[[], object]]:
    """The floor of each method (see the module docstring)."""
    order = np.argsort(y)
    onehot = np.zeros((M, H))
    for k, rows in enumerate(np.array_split(order, H)):
        onehot[rows, k] = 1.0
    root = np.sqrt(np.abs(y - y.mean()))

    def sliced() -> object:
        np.argsort(y)
        return x.T @ x, onehot.T @ x

    def phd() -> object:
        v = x * root[:, None]
        return x.T @ x, v.T @ v

    return {"SIR": sliced, "pHd": phd, "SAVE": sliced}


def cases(y: np.ndarray, x: np.ndarray) -> list[tuple[str, Callable, Callable, Callable]]:
    """(name, jdr_stats build + fit, jdr_stats fit on a built model, statsmodels)."""
    sir, phd, save = SIR(y, x), PHD(y, x), SAVE(y, x)
    return [
        ("SIR", lambda: SIR(y, x).fit(n_slices=H), lambda: sir.fit(n_slices=H),
         lambda: dimred.SlicedInverseReg(y, x).fit(slice_n=M // H)),
        ("pHd", lambda: PHD(y, x).fit(), lambda: phd.fit(),
         lambda: dimred.PrincipalHessianDirections(y, x).fit()),
        ("SAVE", lambda: SAVE(y, x).fit(n_slices=H), lambda: save.fit(n_slices=H),
         lambda: dimred.SlicedAverageVarianceEstimation(y, x).fit(slice_n=M // H)),
    ]


HEAD = ("| method | jdr_stats s | fit s | statsmodels s | floor s | / statsmodels "
        "| / floor | fit / floor |\n|---|---|---|---|---|---|---|---|")


def row(name: str, t: dict[str, float]) -> str:
    return (f"| {name} | {t['ours']:.4f} | {t['fit']:.4f} | {t['sm']:.4f} | "
            f"{t['floor']:.4f} | {t['ours'] / t['sm']:.3f} | {t['ours'] / t['floor']:.2f} "
            f"| {t['fit'] / t['floor']:.2f} |")


def table(y: np.ndarray, x: np.ndarray, repeat: int, with_cpu: bool
          ) -> dict[str, tuple[object, object]]:
    """Print the table of wall times and ratios (and, on one thread, of CPU
    times: less sensitive to the other jobs of a shared machine); return
    each method's two fits."""
    floor = floors(y, x)
    fits, walls, cpus = {}, [], []
    for name, ours, fit, theirs in cases(y, x):
        wall, cpu, out = alternated(
            {"ours": ours, "fit": fit, "sm": theirs, "floor": floor[name]}, repeat)
        walls.append(row(name, wall))
        cpus.append(row(name, cpu))
        fits[name] = (out["ours"], out["sm"])
    print("Wall seconds:")
    print()
    print(HEAD)
    print("\n".join(walls))
    if with_cpu:
        print()
        print("CPU seconds (the process):")
        print()
        print(HEAD)
        print("\n".join(cpus))
    return fits


def angles(fits: dict[str, tuple[object, object]]) -> None:
    print("| method | angle dir1 (deg) | angle dir2 (deg) | top-2 subspace max angle (deg) |")
    print("|---|---|---|---|")
    for name, (r_ours, r_sm) in fits.items():
        d_ours = np.asarray(r_ours.directions)  # type: ignore[attr-defined]
        d_sm = np.real(np.asarray(r_sm.params))  # type: ignore[attr-defined]
        per_dir = [np.degrees(principal_angles(d_ours[:, j], d_sm[:, j])[0]) for j in range(2)]
        sub = np.degrees(principal_angles(d_ours[:, :2], d_sm[:, :2]).max())
        print(f"| {name} | {per_dir[0]:.2e} | {per_dir[1]:.2e} | {sub:.2e} |")


def commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    y, x = data()
    print("# bench_baselines: SIR, pHd and SAVE against statsmodels' dimred and their floors")
    print()
    print("command: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. "
          "python studies/bench_baselines.py" + ("" if args.repeat == 7 else
                                                 f" --repeat {args.repeat}"))
    print(f"commit {commit()}; jdr_stats {jdr_stats.__version__}, statsmodels "
          f"{statsmodels.__version__}, numpy {np.__version__}; {platform.machine()}, "
          f"{os.cpu_count()} cores (shared); best of {args.repeat}, alternated")
    print(f"m = {M}, p = {P}, H = {H} slices")
    print()
    print("## one BLAS thread")
    print()
    with threadpool_limits(1):
        fits = table(y, x, args.repeat, with_cpu=True)
    print()
    print(f"## default threads ({args.threads} BLAS threads)")
    print()
    with threadpool_limits(args.threads):
        table(y, x, args.repeat, with_cpu=False)
    print()
    print("## agreement with statsmodels (one BLAS thread)")
    print()
    angles(fits)


if __name__ == "__main__":
    main()
