"""The default two-block fit against its floor: time and memory in one run.

Question: how far are the model's construction and ``fit`` (the joint
estimator, the default, and the per-block estimator) from the arithmetic
they cannot avoid, measured side by side in the same process on one BLAS
thread?

Design: ``jdr.simulate.bilinear(m, n1, n2, 3, seed=0)`` for each shape
(default ``(200_000, 200 + 200)`` and ``(200_000, 50 + 50)``); every
contender timed ``--repeat`` times, alternated, best time kept.  The
references, on the same arrays:

- ``floor``: one symmetric product of the stacked blocks ``X^T X`` (numpy's
  SYRK of ``X = [A | B]``, stacked before the clock starts) plus the
  y-weighted cross product ``A^T diag(y) B``;
- ``moment floor``: the flops of what the joint estimate must reduce,
  ``X^T X`` plus the y-weighted second moment of the stacked blocks
  ``X^T diag(y) X`` at the flops of one SYRK (the rows split by the sign of
  ``y``): timed as two SYRKs of ``X``, no data movement;
- ``per-block floor``: ``A^T A``, ``B^T B`` and ``A^T diag(y) B``.

Peak memory: tracemalloc (numpy reports its buffers to it) during
``fit(3)`` on a built model and during the construction, as a multiple of
the input's bytes, beyond the input.  When cca_zoo is installed, construct +
fit against cca_zoo's ``CCA(n_components=3)`` ``fit`` on the two blocks
(each library's full call on the same arrays) at ``(1e5, 50 + 50)`` and
``(2e4, 200 + 200)``.

Command (recorded in studies/results/bench_floor.txt):

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_floor.py

Options: ``--m``, ``--repeat``, ``--skip-zoo``.
"""

from __future__ import annotations

import os

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import argparse  # noqa: E402
import platform  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402
from collections.abc import Callable  # noqa: E402

import numpy as np  # noqa: E402

import jdr_stats as jdr  # noqa: E402


def alternated(contenders: dict[str, Callable[[], object]], repeat: int) -> dict[str, float]:
    """Best time of each contender, the contenders alternated in each round."""
    best = dict.fromkeys(contenders, np.inf)
    for _ in range(repeat):
        for name, fn in contenders.items():
            t0 = time.perf_counter()
            fn()
            best[name] = min(best[name], time.perf_counter() - t0)
    return best


def peak_beyond(fn: Callable[[], object]) -> int:
    """Peak bytes allocated while ``fn`` runs (tracemalloc)."""
    tracemalloc.start()
    fn()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def moment_floor(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The flops of ``X^T X`` and ``X^T diag(y) X`` at SYRK cost: two
    symmetric products of ``X`` (the rows split by the sign of ``y`` cost
    the same flops as one)."""
    return x.T @ x, x.T @ x


def shape_row(m: int, n: int, repeat: int) -> list[str]:
    sim = jdr.simulate.bilinear(m, n, n, 3, seed=0)
    y, a, b = sim.y, sim.a, sim.b
    x = np.hstack([a, b])
    model = jdr.JointDimReduction(y, a, b)
    t = alternated({
        "floor": lambda: (x.T @ x, a.T @ (b * y[:, None])),
        "moment floor": lambda: moment_floor(x),
        "per-block floor": lambda: (a.T @ a, b.T @ b, a.T @ (b * y[:, None])),
        "construction": lambda: jdr.JointDimReduction(y, a, b),
        "fit(3) joint": lambda: model.fit(3),
        "fit(3) per-block": lambda: model.fit(3, independent_blocks=True),
    }, repeat)
    nbytes = y.nbytes + a.nbytes + b.nbytes
    mem_fit = peak_beyond(lambda: model.fit(3)) / nbytes
    mem_pb = peak_beyond(lambda: model.fit(3, independent_blocks=True)) / nbytes
    mem_con = peak_beyond(lambda: jdr.JointDimReduction(y, a, b)) / nbytes
    f = t["floor"]
    lines = [f"## m = {m}, n1 + n2 = {n} + {n} (input {nbytes / 2**20:.0f} MiB)", ""]
    lines.append("| work | seconds | / floor | / moment floor | / per-block floor |")
    lines.append("|---|---|---|---|---|")
    for name, sec in t.items():
        lines.append(f"| {name} | {sec:.3f} | {sec / f:.2f} | {sec / t['moment floor']:.2f} | "
                     f"{sec / t['per-block floor']:.2f} |")
    lines += ["", "peak memory beyond the input, as a multiple of the input: "
              f"fit(3) joint {mem_fit:.3f}, fit(3) per-block {mem_pb:.3f}, "
              f"construction {mem_con:.3f}", ""]
    return lines


def zoo_rows(repeat: int) -> list[str]:
    try:
        from cca_zoo.linear import CCA
    except ImportError:
        return ["cca_zoo not installed: comparison skipped", ""]
    import cca_zoo

    lines = [f"## construct + fit against cca_zoo {cca_zoo.__version__} CCA", "",
             "| shape | jdr_stats default | jdr_stats per-block | cca_zoo CCA | "
             "default / cca_zoo |", "|---|---|---|---|---|"]
    for m, n in ((100_000, 50), (20_000, 200)):
        sim = jdr.simulate.bilinear(m, n, n, 3, seed=0)
        y, a, b = sim.y, sim.a, sim.b
        t = alternated({
            "default": lambda: jdr.JointDimReduction(y, a, b).fit(3),
            "per-block": lambda: jdr.JointDimReduction(y, a, b).fit(
                3, independent_blocks=True),
            "zoo": lambda: CCA(n_components=3).fit([a, b]),
        }, repeat)
        lines.append(f"| ({m}, {n} + {n}) | {t['default']:.3f} | {t['per-block']:.3f} | "
                     f"{t['zoo']:.3f} | {t['default'] / t['zoo']:.2f} |")
    return [*lines, ""]


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--m", type=int, default=200_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--skip-zoo", action="store_true")
    args = p.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print("# bench_floor: the default fit against its floor")
    print()
    print("command: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python "
          f"studies/bench_floor.py --m {args.m} --repeat {args.repeat}")
    print(f"commit {commit}; numpy {np.__version__}; {platform.machine()}, "
          f"{os.cpu_count()} cores (shared); OPENBLAS_NUM_THREADS="
          f"{os.environ.get('OPENBLAS_NUM_THREADS')}; best of {args.repeat}, alternated")
    print()
    for n in (200, 50):
        print("\n".join(shape_row(args.m, n, args.repeat)))
    if not args.skip_zoo:
        print("\n".join(zoo_rows(args.repeat)))


if __name__ == "__main__":
    main()
