"""Simulation study of the rank tests: size, power, robustness and selection.

Settings (issue 3): n1 = n2 = 10, m = 2000, alpha = 0.05.

* BILINEAR r = 2, Gaussian design, N(0,1) noise: size of H0: r = 2, power
  against H0: r = 1, selection of r = 2;
* BINARY r = 1: size of H0: r = 1, selection of r = 1;
* BILINEAR r = 2 with a uniform design, and with t(3) noise: size, power,
  selection (robustness).

Every replication runs the three methods on the same data set (rows
k = 0..r).  A size is "held" when it lies within 5% +- 2 Monte Carlo standard
errors, sqrt(0.05 * 0.95 / reps).

Run (from the repository root, about 8 minutes on one core)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python studies/study_rank_tests.py

Options: ``--reps`` (default 500), ``--n-perm`` (default 199), ``--seed``.
The recorded output is ``studies/results/study_rank_tests.txt``.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time

import numpy as np

import jdr_stats as jdr
from jdr_stats.inference.rank_tests import rank_tests

ALPHA = 0.05
M, N1, N2 = 2000, 10, 10
METHODS = ("chi2", "general", "permutation")

SETTINGS = [
    ("BILINEAR r=2 gaussian design, normal noise", "bilinear", 2, {}),
    ("BINARY r=1 gaussian design", "binary", 1, {}),
    ("BILINEAR r=2 uniform design, normal noise", "bilinear", 2, {"design": "uniform"}),
    ("BILINEAR r=2 gaussian design, t(3) noise", "bilinear", 2, {"noise_dist": "t3"}),
]


def one_setting(model: str, r: int, opts: dict, reps: int, n_perm: int, rng) -> dict:
    pv = {meth: np.empty((reps, r + 1)) for meth in METHODS}
    for i in range(reps):
        if model == "bilinear":
            sim = jdr.simulate.bilinear(M, N1, N2, r, seed=rng, **opts)
        else:
            sim = jdr.simulate.binary(M, N1, N2, r, seed=rng, **opts)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(r)
        for meth in METHODS:
            rt = rank_tests(res.model.data, res.moments, method=meth, max_rank=r, n_perm=n_perm, seed=rng)
            pv[meth][i] = rt.table["pvalue"].to_numpy()
    return pv


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--n-perm", type=int, default=199)
    ap.add_argument("--seed", type=int, default=20261126)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    reps = args.reps
    se = np.sqrt(ALPHA * (1 - ALPHA) / reps)
    lo, hi = ALPHA - 2 * se, ALPHA + 2 * se
    print(f"Rank-test study: m={M}, n1={N1}, n2={N2}, alpha={ALPHA}, reps={reps}, "
          f"n_perm={args.n_perm}, seed={args.seed}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, jdr_stats "
          f"{getattr(jdr, '__version__', '?')}")
    print(f"size band 5% +- 2 MC SE = [{lo:.4f}, {hi:.4f}] (MC SE {se:.4f})")
    t_all = time.time()
    for title, model, r, opts in SETTINGS:
        t0 = time.time()
        pv = one_setting(model, r, opts, reps, args.n_perm, rng)
        print()
        print(f"== {title} ({time.time() - t0:.0f} s)")
        print(f"{'method':<12} {'size H0:r=' + str(r):>12} {'held':>5} "
              f"{'power H0:r=' + str(r - 1):>13} {'select=' + str(r):>9} "
              f"{'select<' + str(r):>9} {'select>' + str(r):>9}")
        for meth in METHODS:
            p = pv[meth]
            rej = p <= ALPHA
            size = rej[:, r].mean()
            power = rej[:, r - 1].mean()
            # first k not rejected among 0..r; r + 1 means "all rejected"
            first = np.where((~rej).any(axis=1), np.argmax(~rej, axis=1), r + 1)
            held = "yes" if lo <= size <= hi else ("cons" if size < lo else "NO")
            print(f"{meth:<12} {size:>12.4f} {held:>5} {power:>13.4f} "
                  f"{np.mean(first == r):>9.4f} {np.mean(first < r):>9.4f} "
                  f"{np.mean(first > r):>9.4f}")
    print()
    print(f"total {time.time() - t_all:.0f} s")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
