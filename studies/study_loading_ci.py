"""Coverage of the bootstrap intervals of the per-SD loadings
(``BootstrapResults.conf_int(what="loadings")``; docs/theory/bootstrap.md,
"Intervals for the loadings"), by seeded simulation.

BILINEAR model with r = 1 (the sign is the only ambiguity) and r = 2 with
distinct strengths (2, 1) (rotation aligned by Procrustes).  The target of
entry (j, k) is the true direction's entry times the variable's sample SD
(the SDs are held fixed, as for standardized regression coefficients), the
true basis taken as the population version of the estimator's directions:
the true U, V with columns ordered by strength, signs (r = 1) or the
Procrustes rotation (r = 2) matched to the estimate.  Reported: the share of
the (block, variable, direction) entries whose 95% interval covers the
target, averaged over entries, with its Monte Carlo SE (binomial over
replications x entries, an underestimate as entries are correlated).

    python studies/study_loading_ci.py [--reps 200] [--n-boot 199] [--seed 7]

Output recorded in studies/results/study_loading_ci.txt.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import jdr_stats as jdr
from jdr_stats.inference._loading_ci import align

CASES = {
    "r=1 gaussian": dict(r=1, kw={}),
    "r=1 t5 blocks": dict(r=1, kw={"design": "t5"}),
    "r=2 gaussian, strengths (2, 1)": dict(r=2, kw={"strengths": [2.0, 1.0]}),
}


def one(case, m, n1, n2, n_boot, rng):
    r = case["r"]
    sim = jdr.simulate.bilinear(m, n1, n2, r, seed=rng, **case["kw"])
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(r)
    ci = res.bootstrap(n_boot, seed=rng).conf_int(what="loadings")
    hits = []
    for block, x, truth, est in (("a", sim.a, sim.U, res.directions_a),
                                 ("b", sim.b, sim.V, res.directions_b)):
        sd = x.std(axis=0)
        est_l = np.asarray(est) * sd[:, None]
        top = np.max(np.abs(est_l), axis=0)
        true_l = align((truth / np.linalg.norm(truth, axis=0) * sd[:, None])[None], est_l)[0]
        tab = ci.xs(block, level="block")
        lo = tab["lower"].to_numpy().reshape(-1, r) * top
        hi = tab["upper"].to_numpy().reshape(-1, r) * top
        hits.append(((lo <= true_l) & (true_l <= hi)).ravel())
    return np.concatenate(hits)


def study(reps, n_boot, seed, m=1000, n1=4, n2=3):
    print(f"m={m}, n1={n1}, n2={n2}, B={n_boot}, reps={reps}, seed={seed}, nominal 0.95")
    seeds = np.random.SeedSequence(seed).spawn(len(CASES))
    for (name, case), ss in zip(CASES.items(), seeds, strict=True):
        rng = np.random.default_rng(ss)
        hits = np.array([one(case, m, n1, n2, n_boot, rng) for _ in range(reps)])
        cov = hits.mean()
        se = np.sqrt(cov * (1 - cov) / hits.size)
        per_entry = hits.mean(axis=0)
        print(f"{name:34s} coverage {cov:.3f} (MC SE {se:.3f}); per entry "
              f"min {per_entry.min():.3f} max {per_entry.max():.3f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n-boot", type=int, default=199)
    ap.add_argument("--seed", type=int, default=7)
    args = ap.parse_args()
    t0 = time.perf_counter()
    study(args.reps, args.n_boot, args.seed)
    print(f"time {time.perf_counter() - t0:.0f} s")
