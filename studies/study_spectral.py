"""The spectral rank test (``method="spectral"``, theory 6e) at width.

Part 1: for each design (``study_width.draw``: the width study's designs,
r = 2) and size n1 = n2 = n, m: the rejection rate at 5% of H0: r <= 2
(size) and of H0: r <= 1 (power) for the spectral test (``--flips`` sign
flips) and for the default robust test on the same samples.  Part 2:
``fit("auto", rank_method="spectral")`` on the paper's BILINEAR experiment
2 (m = 1e4, r = 5; seeds [2026, n, sample] as in ``check_paper_auto.py``).
Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice -n 5 \\
        python studies/study_spectral.py --n 300 --m 2000 --reps 100 --designs gaussian t5
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import study_width as sw

import jdr_stats as jdr
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference.rank_methods import RANK_METHODS, RowOptions

ALPHA = 0.05


def spectral_p(y, a, b, ks, flips: int, rng: np.random.Generator) -> list[float]:
    model = jdr.JointDimReduction(y, a, b)
    w = _whiten(model.data, model.moments())
    return [RANK_METHODS["spectral"].row(w, k, RowOptions(n_perm=flips, rng=rng))[0]["pvalue"]
            for k in ks]


def size_part(args) -> None:
    print("\nPart 1: rejections at 5% of H0: r <= 2 (size; the truth is r = 2) and of "
          f"H0: r <= 1 (power); spectral test with {args.flips} sign flips, and the default "
          "robust test on the same samples")
    print(f"{'design':<13} {'n':>4} {'m':>6} {'reps':>5} {'size':>6} {'MC SE':>6} "
          f"{'band':>15} {'in band':>8} {'power':>6} | {'default size':>12} {'power':>6} "
          f"{'s/rep':>6}")
    for design in args.designs:
        for n in args.n:
            for m in args.m:
                rng = np.random.default_rng([args.seed, len(design), n, m])
                out, start = [], time.perf_counter()
                for i in range(args.reps):
                    y, a, b = sw.draw(design, m, n, 2, rng)
                    row = spectral_p(y, a, b, (2, 1), args.flips, rng)
                    if not args.skip_default:
                        row += [sw.robust_p(y, a, b, 2), sw.robust_p(y, a, b, 1)]
                    out.append(row)
                    spent = time.perf_counter() - start
                    if i >= 9 and spent * (i + 2) / (i + 1) > args.budget:
                        break
                x = np.array(out) <= ALPHA
                reps = len(out)
                size = float(x[:, 0].mean())
                se = np.sqrt(ALPHA * (1 - ALPHA) / reps)
                half = 2.5 * se + 0.005
                ok = ("yes" if abs(size - ALPHA) <= half else
                      "low" if size < ALPHA else "HIGH")
                dflt = (f"{x[:, 2].mean():>12.3f} {x[:, 3].mean():>6.3f}"
                        if not args.skip_default else f"{'-':>12} {'-':>6}")
                print(f"{design:<13} {n:>4} {m:>6} {reps:>5} {size:>6.3f} "
                      f"{np.sqrt(size * (1 - size) / reps):>6.3f} "
                      f"[{ALPHA - half:.3f}, {ALPHA + half:.3f}] {ok:>8} {x[:, 1].mean():>6.3f} | "
                      f"{dflt} {(time.perf_counter() - start) / reps:>6.1f}", flush=True)


def paper_part(args) -> None:
    print(f"\nPart 2: fit('auto', rank_method='spectral', seed=rep) on the paper's experiment 2 "
          f"(m = 1e4, r = 5), {args.paper_reps} samples per n")
    for n in args.paper:
        ranks, t0 = [], time.time()
        for rep in range(args.paper_reps):
            sim = jdr.simulate.bilinear(10000, n, n, 5, seed=np.random.default_rng([2026, n, rep]))
            res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(
                "auto", rank_method="spectral", seed=rep)
            ranks.append(res.rank)
        print(f"n1 = n2 = {n}: chosen ranks {ranks} (true 5); "
              f"{(time.time() - t0) / args.paper_reps:.1f} s per fit('auto')", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--designs", nargs="+", default=list(sw.DESIGNS + sw.EXTRA[:2]),
                    choices=sw.DESIGNS + sw.EXTRA)
    ap.add_argument("--n", nargs="+", type=int, default=[300])
    ap.add_argument("--m", nargs="+", type=int, default=[2000])
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--budget", type=float, default=1800.0, help="seconds per setting at most")
    ap.add_argument("--flips", type=int, default=39)
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--skip-default", action="store_true")
    ap.add_argument("--paper", nargs="*", type=int, default=[])
    ap.add_argument("--paper-reps", type=int, default=5)
    args = ap.parse_args()
    print(f"# study_spectral: python {platform.python_version()}, numpy {np.__version__}, "
          f"jdr_stats {jdr.__version__}; seed {args.seed}")
    warnings.simplefilter("ignore")  # the premises warnings of wide fits
    if args.designs and args.n and args.m and args.reps:
        size_part(args)
    if args.paper:
        paper_part(args)


if __name__ == "__main__":
    main()
