"""Figure 3 of Li and Bresler: the joint estimator against pHd.

Usage (output recorded in results/study_paper_figure3.txt)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python studies/study_paper_figure3.py

Setting (shared/paper/NOTES.md): n1 = n2 = n = 10, r = 3 and 4, no added
noise, Gaussian blocks, U and V redrawn every trial, m from 1e3 to 1e4.

* odd link   y = sum_j abar_j bbar_j      (``simulate.bilinear(..., noise=0)``)
* even link  y = sum_j abar_j^2 bbar_j^2  (``link="even"``)

with ``abar = U^T a``, ``bbar = V^T b``.  Methods (via ``jdr_stats.compare``):
the joint estimator (jdr), pHd on each block alone (the paper's pHd curve)
and pHd on the concatenated [a, b] (2r directions split into an a- and a
b-part).  Printed: mean NSEE over TRIALS trials with its Monte Carlo
standard error, and the least-squares slope of log(mean NSEE) on log(m).

Expected (section 5.2 and 5.4 of the paper): on the odd link
E[y a a^T] = 0, so per-block pHd sees nothing and stays at the level of a
random subspace (NSEE about sqrt(1 - r/n)), while jdr falls like m^-1/2;
on the even link E[y a b^T] = 0 and the roles swap.  pHd on [a, b] works for
both: the odd link's signal sits in the off-diagonal block of E[y x x^T].
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import jdr_stats as jdr
from jdr_stats.compare import compare

N = 10
RANKS = (3, 4)
MS = (1000, 1778, 3162, 5623, 10000)
TRIALS = 40
SEED = 20261126
METHODS = ("jdr", "phd (blocks)", "phd ([a, b])")


def main() -> None:
    rng = np.random.default_rng(SEED)
    t0 = time.perf_counter()
    print(f"Figure 3 study: n = {N}, no noise, {TRIALS} trials per cell, seed {SEED}")
    for link, label in (("bilinear", "odd link sum abar_j bbar_j"),
                        ("even", "even link sum abar_j^2 bbar_j^2")):
        for r in RANKS:
            print()
            print(f"{label}, r = {r}   (random-subspace NSEE ~ {np.sqrt(1 - r / N):.3f})")
            print(f"{'m':>6s} " + " ".join(f"{name:>22s}" for name in METHODS))
            means = {name: [] for name in METHODS}
            for m in MS:
                vals = np.empty((TRIALS, len(METHODS)))
                for t in range(TRIALS):
                    s = jdr.simulate.bilinear(m, N, N, r, noise=0.0, link=link, seed=rng)
                    tab = compare(s.y, s.a, s.b, r, methods=("jdr", "phd"),
                                  truth=(s.U, s.V)).table
                    vals[t] = tab.loc[list(METHODS), "nsee"].to_numpy()
                mu = vals.mean(axis=0)
                se = vals.std(axis=0, ddof=1) / np.sqrt(TRIALS)
                for name, v in zip(METHODS, mu):
                    means[name].append(v)
                print(f"{m:6d} " + " ".join(f"{a:13.4f} ({b:.4f})" for a, b in zip(mu, se)))
            slopes = [np.polyfit(np.log(MS), np.log(means[name]), 1)[0] for name in METHODS]
            print(f"{'slope':>6s} " + " ".join(f"{s:22.3f}" for s in slopes))
    print()
    print(f"elapsed {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
