"""The per-block fit's moments: the one-pass route against the merged slices.

Question: how far is ``fit(3, independent_blocks=True)`` on a built model
from its floor (``A^T A``, ``B^T B`` and ``A^T diag(y) B``) when its moments
come from one pass over the rows without the co-moment between the blocks
(``one_pass_block_moments``, the fit's route for rows in memory), and how
far with the moments engine's merged slices (``block_moments``, the route
before), measured side by side in one process on one BLAS thread?  And
where does construct + fit (the default, joint estimator, and the per-block
one) stand against cca_zoo's ``CCA``?

Design: ``jdr.simulate.bilinear(m, n, n, 3, seed=0)`` at ``(2e5, 200 + 200)``
and ``(2e5, 50 + 50)`` (the floor rows of ``bench_issue_table.py``); the
contenders alternated round by round, the minimum of ``--repeat`` rounds
kept.  The route before is the same fit with the one-pass route switched off
(``jdr_stats.estimation._estimate._ROW_MOMENTS`` emptied for its call), so
both routes run on the same arrays and the same build.  Peak memory
(tracemalloc) of each per-block fit beyond the input, as a multiple of the
input.  cca_zoo rows at ``(1e5, 50 + 50)`` and ``(2e4, 200 + 200)``, as in
``bench_issue_table.py``.

Command (recorded in studies/results/bench_perblock.txt)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_perblock.py
"""

# The timed lambdas are called within the iteration that defines them.
# ruff: noqa: B023
from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse
import platform
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_floor
import numpy as np

import jdr_stats as jdr
from jdr_stats.estimation import _estimate


def engine_route(fn):  # type: ignore[no-untyped-def]
    """``fn`` with the per-block fit's moments from ``block_moments``."""
    def run() -> object:
        keep = _estimate._ROW_MOMENTS
        _estimate._ROW_MOMENTS = ()
        try:
            return fn()
        finally:
            _estimate._ROW_MOMENTS = keep
    return run


def floor_rows(m: int, repeat: int) -> None:
    print("| shape | per-block floor (s) | fit, merged slices (s) | fit, one pass (s) | "
          "before / floor | now / floor | peak memory before, now (x input) | "
          "largest angle between the routes' directions_a (rad) |")
    print("|---|---|---|---|---|---|---|---|")
    for n in (200, 50):
        sim = jdr.simulate.bilinear(m, n, n, 3, seed=0)
        y, a, b = sim.y, np.asarray(sim.a), np.asarray(sim.b)
        model = jdr.JointDimReduction(y, a, b)
        def fit() -> object:
            return model.fit(3, independent_blocks=True)

        before = engine_route(fit)
        # the two routes give the same fit to rounding
        d_now, d_before = np.asarray(fit().directions_a), np.asarray(before().directions_a)
        angle = float(np.max(jdr.metrics.principal_angles(d_now, d_before)))
        t = bench_floor.alternated({
            "floor": lambda: (a.T @ a, b.T @ b, a.T @ (b * y[:, None])),
            "before": before,
            "now": fit,
        }, repeat)
        nbytes = y.nbytes + a.nbytes + b.nbytes
        mem_b = bench_floor.peak_beyond(before) / nbytes
        mem_n = bench_floor.peak_beyond(fit) / nbytes
        print(f"| m={m:g}, {n}+{n} | {t['floor']:.4f} | {t['before']:.4f} | {t['now']:.4f} | "
              f"{t['before'] / t['floor']:.3f} | {t['now'] / t['floor']:.3f} | "
              f"{mem_b:.3f}, {mem_n:.3f} | {angle:.1e} |")


def zoo_rows(repeat: int) -> None:
    from cca_zoo.linear import CCA

    print()
    print("| shape | default (s) | per-block before (s) | per-block now (s) | cca_zoo (s) | "
          "default / cca_zoo | per-block now / cca_zoo |")
    print("|---|---|---|---|---|---|---|")
    for m, n in ((100_000, 50), (20_000, 200)):
        sim = jdr.simulate.bilinear(m, n, n, 3, seed=0)
        y, a, b = sim.y, np.asarray(sim.a), np.asarray(sim.b)
        def pb() -> object:
            return jdr.JointDimReduction(y, a, b).fit(3, independent_blocks=True)

        t = bench_floor.alternated({
            "default": lambda: jdr.JointDimReduction(y, a, b).fit(3),
            "pb before": engine_route(pb),
            "pb now": pb,
            "zoo": lambda: CCA(n_components=3).fit([a, b]),
        }, repeat)
        print(f"| m={m:g}, {n}+{n} | {t['default']:.4f} | {t['pb before']:.4f} | "
              f"{t['pb now']:.4f} | {t['zoo']:.4f} | {t['default'] / t['zoo']:.3f} | "
              f"{t['pb now'] / t['zoo']:.3f} |")


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--m", type=int, default=200_000)
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--skip-zoo", action="store_true")
    args = p.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print("# bench_perblock: the per-block fit's moments, one pass against merged slices")
    print("command: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python "
          f"studies/bench_perblock.py --m {args.m} --repeat {args.repeat}")
    print(f"commit {commit}; numpy {np.__version__}; {platform.machine()}, "
          f"{os.cpu_count()} cores (shared); OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}; minimum of {args.repeat} alternated rounds")
    print()
    floor_rows(args.m, args.repeat)
    if not args.skip_zoo:
        zoo_rows(args.repeat)


if __name__ == "__main__":
    main()
