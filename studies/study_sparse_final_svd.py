"""The sparse estimator's last step: SVD of the selected J x K block or of X_3.

The paper (section 3) takes the rank-r SVD of X_3 = P3 P2 P1 X_lin, in which
step 2.1 has also zeroed entries inside the selected rows and columns;
jdr_stats decomposes the whole J x K block of X_lin (same support).  This
script measures both on the same data (known moments, ``standardize=False``
as in the paper's Figure 1) and prints log(mean NSEE) of each.

Usage: python studies/study_sparse_final_svd.py [--trials 5]
"""

from __future__ import annotations

import argparse

import numpy as np

import jdr_stats as jdr
from jdr_stats.core._linalg import block_moments
from jdr_stats.sparse import three_step_projection

SETTINGS = [("binary", 200_000, 200, 2, 20), ("bilinear", 20_000, 400, 5, 40), ("bilinear", 20_000, 200, 5, 10)]


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--trials", type=int, default=5)
    p.add_argument("--seed", type=int, default=5)
    args = p.parse_args()
    rng = np.random.default_rng(args.seed)
    print(f"{'model':9s} {'m':>7s} {'n':>4s} {'r':>2s} {'s':>3s}  {'J x K block':>11s}  {'X_3 (paper)':>11s}")
    for model, m, n, r, s in SETTINGS:
        ours, lit = [], []
        for _ in range(args.trials):
            sim = getattr(jdr.simulate, model)(m, n, n, r, s1=s, s2=s, seed=rng)
            mom = block_moments(sim.y, sim.a, sim.b, covariances=False)
            x3 = three_step_projection(mom.cross, s, s).projected
            u, _, vt = np.linalg.svd(x3)
            lit.append(jdr.metrics.nsee(sim.U, u[:, :r], sim.V, vt[:r].T))
            res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(r, standardize=False, sparsity=(s, s))
            ours.append(jdr.metrics.nsee(sim.U, res.directions_a, sim.V, res.directions_b))
        print(f"{model:9s} {m:7d} {n:4d} {r:2d} {s:3d}  {np.log(np.mean(ours)):11.3f}  {np.log(np.mean(lit)):11.3f}")


if __name__ == "__main__":
    main()
