"""Size and power of the group test ``res.test_variables`` and of ``drop1``
(docs/theory/support.md, section 10), by seeded simulation.

Under H0 the group is every inactive variable of both blocks (zero rows of
the true U and V: ``simulate.bilinear(..., s1=, s2=)``); the rejection rate
at level 0.05 is compared with 0.05 with its Monte Carlo standard error
sqrt(p (1 - p) / reps).  Power: the group of the active variables of block
a.  Designs: Gaussian blocks and normal noise (the derivation's premise),
t(5) blocks, Laplace blocks with t(3) noise, heteroscedastic noise.

    python studies/study_group_test.py [--reps 400] [--seed 20261126]
        [--rank 1 --n1 6 --n2 5 --s 2]

Output recorded in studies/results/study_group_test.txt.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import jdr_stats as jdr

DESIGNS = {
    "gaussian": {},
    "t5 blocks": {"design": "t5"},
    "laplace blocks, t3 noise": {"design": "laplace", "noise_dist": "t3"},
    "heteroscedastic (signal)": {"hetero": "signal"},
}


def one(m, n1, n2, r, s, kw, rng):
    sim = jdr.simulate.bilinear(m, n1, n2, r, s1=s, s2=s, seed=rng, **kw)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(r)
    inact_a = [f"a{j}" for j in range(n1) if not np.any(sim.U[j])]
    inact_b = [f"b{j}" for j in range(n2) if not np.any(sim.V[j])]
    act_a = [f"a{j}" for j in range(n1) if np.any(sim.U[j])]
    p_null = res.test_variables({"a": inact_a, "b": inact_b}).pvalue
    try:  # the marginal test estimates a 38 x 38 covariance: it can be singular
        p_marg = res.test_variables({"a": inact_a, "b": inact_b}, test="marginal").pvalue
    except ValueError:
        p_marg = np.nan
    p_alt = res.test_variables({"a": act_a}).pvalue
    d1 = res.drop1().table
    p_d1 = d1.loc[inact_a[0], "pvalue"]
    return p_null, p_marg, p_alt, p_d1


def study(reps, seed, m=1000, n1=6, n2=5, r=1, s=2):
    print(f"m={m}, n1={n1}, n2={n2}, r={r}, s1=s2={s}, reps={reps}, seed={seed}, level 0.05")
    print(f"{'design':28s} {'size (cond.)':>14s} {'size (marg.)':>14s} {'size drop1':>12s}"
          f" {'power':>8s}  MC SE")
    seeds = np.random.SeedSequence(seed).spawn(len(DESIGNS))
    for (name, kw), ss in zip(DESIGNS.items(), seeds, strict=True):
        rng = np.random.default_rng(ss)
        out = np.array([one(m, n1, n2, r, s, kw, rng) for _ in range(reps)])
        rej = np.nanmean(np.where(np.isnan(out), np.nan, out < 0.05), axis=0)
        se = np.sqrt(0.05 * 0.95 / reps)
        print(f"{name:28s} {rej[0]:14.3f} {rej[1]:14.3f} {rej[3]:12.3f} {rej[2]:8.3f}  {se:.3f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--rank", type=int, default=1)
    ap.add_argument("--n1", type=int, default=6)
    ap.add_argument("--n2", type=int, default=5)
    ap.add_argument("--s", type=int, default=2, help="active variables per block")
    args = ap.parse_args()
    t0 = time.perf_counter()
    study(args.reps, args.seed, n1=args.n1, n2=args.n2, r=args.rank, s=args.s)
    print(f"time {time.perf_counter() - t0:.0f} s")
