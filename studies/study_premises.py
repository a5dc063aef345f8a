"""What breaks the default rank inference: cross-block correlation and small
samples (issue 18, item 5; thresholds of :mod:`jdr_stats.diagnostics`).

The method assumes the two blocks independent (the paper's Figure 2).  Two
seeded experiments, each replication fitting ``fit("auto")`` (default robust
rank tests, alpha = 0.05) to fresh data:

1. **cross-block correlation**: the ``"correlated"`` design of
   :func:`jdr_stats.simulate.bilinear` (Gaussian blocks, ``corr(a_j, b_j) =
   rho`` for every ``j < min(n1, n2)``, so every population cross-block
   canonical correlation is ``rho``), m = 1000, n1 = n2 = 6, true rank
   r = 0 (``strengths=[0]``: y is noise), 1 and 2; rho from 0 to 0.9.
2. **small samples**: independent Gaussian (and t(5)) blocks, true r = 1,
   n1 = n2 = 6 (n1 n2 = 36) and n1 = n2 = 10 (100), m from 1/2 to 28 times
   n1 n2.
3. **near-collinear blocks**: the estimator and the rank tests are
   invariant to ``a -> G a`` in exact arithmetic; block a (m = 1000,
   n1 = n2 = 6, r = 1) is recoded by ``G = Q diag(g) Q^T`` with
   ``cond(G G^T)`` from 1e2 to 1e14 and the largest change of the rank tests'
   p-values and of the singular values (relative to the largest) against
   the unrecoded fit is reported (deterministic; the worst of 20 data sets).

For each cell: the rejection rate of ``H0: r = r_true`` by the default test
(its size; nominal 0.05), the share of fits whose ``"auto"`` rank equals the
true one, the share choosing a larger rank, each with its Monte Carlo SE
sqrt(p (1 - p) / R), and the mean largest *sample* cross-block canonical
correlation (what the diagnostics report).  Replication j of cell i uses the
seed ``seed + 10007 i + j``.

Run::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python studies/study_premises.py --reps 400

Output recorded in ``studies/results/study_premises.txt``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.diagnostics import cross_canonical_correlations
from jdr_stats.exceptions import JDRWarning

RHOS = [0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]


def one(m, n, r, rho, seed, design="gaussian"):
    """(rejects H0: r = r_true, auto rank, largest sample canonical correlation)."""
    design = "correlated" if rho > 0 else design
    strengths = [0.0] if r == 0 else None
    sim = jdr.simulate.bilinear(m, n, n, max(r, 1), design=design, rho=rho,
                                strengths=strengths, seed=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JDRWarning)
        model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
        res = model.fit("auto")
        table = res.rank_tests(max_rank=min(r, n - 1)).table
    rejects = bool(table["pvalue"].iloc[r] < 0.05)
    cc = cross_canonical_correlations(sim.a, sim.b)[0]
    auto = res.rank if not (r == 0 and table["pvalue"].iloc[0] >= 0.05) else 0
    return rejects, auto, cc


def cell(label, m, n, r, rho, seed, reps, design="gaussian"):
    t0 = time.perf_counter()
    rows = [one(m, n, r, rho, seed + j, design) for j in range(reps)]
    rej = np.array([x[0] for x in rows], dtype=float)
    auto = np.array([x[1] for x in rows])
    cc = np.mean([x[2] for x in rows])

    def f(p):
        return f"{p:.3f}+-{np.sqrt(p * (1 - p) / reps):.3f}"

    print(f"{label:34s} size {f(rej.mean())} | auto=r {f(np.mean(auto == r))} | "
          f"auto>r {f(np.mean(auto > r))} | mean sample cc1 {cc:.2f} "
          f"({time.perf_counter() - t0:.0f} s)", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--seed", type=int, default=20261126)
    args = ap.parse_args()
    print(f"# reps={args.reps}, seed={args.seed}; default robust rank tests, alpha=0.05; "
          "cells: rate+-MC SE", flush=True)
    i = 0
    print("## 1. cross-block correlation rho (m=1000, n1=n2=6)", flush=True)
    for r in (0, 1, 2):
        for rho in RHOS:
            cell(f"r={r} rho={rho:.1f}", 1000, 6, r, rho, args.seed + 10007 * i, args.reps)
            i += 1
    print("## 2. small samples (independent blocks, r=1)", flush=True)
    for design, ns in (("gaussian", (6, 10)), ("t5", (6,))):
        for n in ns:
            for k in (0.5, 1, 2, 3, 5, 8, 14, 28):
                m = int(k * n * n)
                cell(f"{design} n1=n2={n} m={m} (m/(n1 n2)={k:g})", m, n, 1, 0.0,
                     args.seed + 10007 * i, args.reps, design)
                i += 1
    print("## 3. near-collinear block a (m=1000, n1=n2=6, r=1; worst of 20 data sets)",
          flush=True)
    for cond in (1e2, 1e4, 1e6, 1e8, 1e10, 1e12, 1e14):
        dp = ds = 0.0
        fails = 0
        for j in range(20):
            sim = jdr.simulate.bilinear(1000, 6, 6, 1, seed=args.seed + 10007 * i + j)
            rng = np.random.default_rng(j)
            q, _ = np.linalg.qr(rng.standard_normal((6, 6)))
            g = (q * np.logspace(0.0, 0.5 * np.log10(cond), 6)) @ q.T
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", JDRWarning)
                base = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
                p0 = base.rank_tests(max_rank=3).table["pvalue"].to_numpy()
                try:
                    rec = jdr.JointDimReduction(sim.y, sim.a @ g.T, sim.b).fit(1)
                    p1 = rec.rank_tests(max_rank=3).table["pvalue"].to_numpy()
                except ValueError:
                    fails += 1
                    continue
            dp = max(dp, float(np.max(np.abs(p1 - p0))))
            s0 = base.singular_values
            ds = max(ds, float(np.max(np.abs(rec.singular_values - s0)) / s0[0]))
        print(f"cond(Sigma_a)={cond:.0e}: max |p-value change| {dp:.1e}, max singular value "
              f"change / s_1 {ds:.1e}, refused (collinear) {fails} of 20", flush=True)
        i += 1


if __name__ == "__main__":
    main()
