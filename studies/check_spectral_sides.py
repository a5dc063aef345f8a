"""The spectral rank test's sign flips: one sign per row against two (theory 6e).

For each design of the width study (``study_width.draw``, r = 2) and size
n1 = n2 = n, m: the rejection rates at 5% of H0: r <= 2 (size) and of
H0: r <= 1 (power), on the same samples, of

* ``one sign``: each replicate flips row i's whole term on both sides with
  one sign (the first version): each side's flip law is exact under the
  premise, the minimum of the two sides an approximation;
* ``two signs``: row i's complement coordinates in block a get a sign
  ``sa_i`` and those in block b an independent ``sb_i`` (the library's
  test): a transformation of the data, so the joint law of the two sides,
  and of their minimum, is exact under the premise (given the projectors);
* ``max-p``: with two signs, the larger of the two one-sided p-values (a
  variant valid whenever each side is, for the price in power).

Each from ``--flips`` sign flips of one pass of ranks 1 and 2.  With
``--default``, also the robust test on the same samples and ``combined``,
``min(1, 2 min(p_robust, p_two_signs))``: the Bonferroni combination of the
two statistics, valid whenever both tests are (the default
``rank_method="auto"`` at ``n1 n2 / m >= 20``).  Run from the repository
root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice -n 5 \\
        python studies/check_spectral_sides.py --n 300 --m 4000 --reps 100
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
from jdr_stats.inference import _rank_spectral as sp
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference.hypotheses import perm_pvalue

ALPHA = 0.05


def pvalues(y, a, b, flips: int, rng: np.random.Generator, one_sign: bool = True) -> np.ndarray:
    """[[one sign, two signs, max-p] at k = 1, the same at k = 2] (one sign NaN
    when ``one_sign`` is False)."""
    model = jdr.JointDimReduction(y, a, b)
    w = _whiten(model.data, model.moments())
    seeds = rng.integers(2**32, size=2)
    nulls = [] if one_sign else [np.full((flips, 2, 2), np.nan)]
    for one in ((True, False) if one_sign else (False,)):
        sp._SpectralBatch.one_sign = one
        try:
            nulls.append(sp.spectral_null(w, range(1, 3), flips, np.random.default_rng(seeds)))
        finally:
            sp._SpectralBatch.one_sign = False
    out = np.empty((2, 3))
    for j, k in enumerate((1, 2)):
        t = sp.spectral_statistic(w, k) * (1 - 1e-10)
        out[j, 0] = perm_pvalue(t, nulls[0][:, j].min(axis=1)) if one_sign else np.nan
        out[j, 1] = perm_pvalue(t, nulls[1][:, j].min(axis=1))
        out[j, 2] = max(perm_pvalue(t, nulls[1][:, j, 0]), perm_pvalue(t, nulls[1][:, j, 1]))
    return out


def main() -> None:
    warnings.simplefilter("ignore")
    ap = argparse.ArgumentParser()
    ap.add_argument("--designs", nargs="+", default=list(sw.DESIGNS + sw.EXTRA[:2]))
    ap.add_argument("--n", type=int, default=300)
    ap.add_argument("--m", type=int, default=4000)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--flips", type=int, default=39)
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument("--default", action="store_true", help="also the default robust test")
    ap.add_argument("--skip-one-sign", action="store_true", help="leave out the first version")
    args = ap.parse_args()
    print(f"# check_spectral_sides: python {platform.python_version()}, numpy {np.__version__}; "
          f"n1 = n2 = {args.n}, m = {args.m} (d/m = {args.n ** 2 / args.m:.1f}), r = 2, "
          f"{args.flips} flips, seed [{args.seed}, design length]")
    se = np.sqrt(ALPHA * (1 - ALPHA) / args.reps)
    lo, hi = ALPHA - 2.5 * se - 0.005, ALPHA + 2.5 * se + 0.005
    print(f"# {args.reps} samples per design; MC SE at 0.05: {se:.3f}; band alpha +- "
          f"(2.5 SE + 0.005) = [{lo:.3f}, {hi:.3f}]")
    head = (f"{'design':<13} {'size: one sign':>14} {'two signs':>9} {'max-p':>6} | "
            f"{'power: one sign':>15} {'two signs':>9} {'max-p':>6}")
    if args.default:
        head += f" | {'robust size':>11} {'power':>6} | {'combined size':>13} {'power':>6}"
    print(head + f" {'s/rep':>6}")
    for design in args.designs:
        rng = np.random.default_rng([args.seed, len(design)])
        rows, start = [], time.perf_counter()
        for _ in range(args.reps):
            y, a, b = sw.draw(design, args.m, args.n, 2, rng)
            p = pvalues(y, a, b, args.flips, rng, not args.skip_one_sign).ravel()
            if args.default:
                p = np.append(p, [sw.robust_p(y, a, b, 2), sw.robust_p(y, a, b, 1)])
            rows.append(p)
        arr = np.asarray(rows)
        if args.default:  # combined: Bonferroni over the robust and the two-sign spectral tests
            # columns: k = 1 one, two, max-p; k = 2 the same; robust k = 2, k = 1
            size = np.minimum(1, 2 * np.minimum(arr[:, 6], arr[:, 4]))
            power = np.minimum(1, 2 * np.minimum(arr[:, 7], arr[:, 1]))
            arr = np.column_stack([arr, size, power])
        rej = np.mean(arr <= ALPHA, axis=0)
        rej[np.isnan(arr).all(axis=0)] = np.nan  # a version left out
        line = (f"{design:<13} {rej[3]:>14.3f} {rej[4]:>9.3f} {rej[5]:>6.3f} | "
                f"{rej[0]:>15.3f} {rej[1]:>9.3f} {rej[2]:>6.3f}")
        if args.default:
            line += (f" | {rej[6]:>11.3f} {rej[7]:>6.3f} | {rej[8]:>13.3f} {rej[9]:>6.3f}")
        print(line + f" {(time.perf_counter() - start) / args.reps:>6.2f}", flush=True)


if __name__ == "__main__":
    main()
