"""The robust rank test's two references on the 15-design battery (issue 19).

For each battery design and null rank r in {0, 1, 2} (configurations
(m, n1, n2) cycled as in study_rank_robust.py), draw samples with r
directions and compute, on the same data, the p-values of H0: r <= r (size)
and H0: r <= r - 1 (power) with the per-row reference (theory section 6) and
with the default (the corrected reference of section 6d wherever it applies:
here always, d/m <= 0.2).  Band: 0.05 +- (2.5 MC SE + 0.005).  Run::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice -n 5 \
        python studies/study_rank_reference.py 600
"""
# ruff: noqa: E701, E702, E731
import sys
import time
import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference.rank_methods.robust import robust_moments_at
from jdr_stats.inference._robust_core import robust_moments, robust_pvalue

warnings.simplefilter("ignore")
reps = int(sys.argv[1]); only = sys.argv[2:] or None
CONFIGS = ((1000, 15, 15), (2000, 10, 10), (3000, 8, 6), (5000, 12, 8), (1500, 5, 5))
se = np.sqrt(.05 * .95 / reps); lo, hi = .05 - 2.5 * se - .005, .05 + 2.5 * se + .005
print(f"# reps={reps} seed=[20261126, setting index]; band [{lo:.4f}, {hi:.4f}]; MC SE at 0.05: {se:.4f}", flush=True)
ci = 0
for sc in jdr.simulate.BATTERY:
    for r in (0, 1, 2):
        m, n1, n2 = CONFIGS[ci % len(CONFIGS)]; ci += 1
        if only and sc.name not in only: continue
        if sc.model == "binary" and r == 0: continue
        rng = np.random.default_rng([20261126, ci])
        res_p = []; t0 = time.time()
        for _ in range(reps):
            if r == 0:
                sim = jdr.simulate.scenario(sc.name, m, n1, n2, 1, seed=rng, signal=0.0)
            else:
                sim = jdr.simulate.scenario(sc.name, m, n1, n2, r, seed=rng)
            fit = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(max(r, 1))
            w = _whiten(fit.model.data, fit.moments, rows="rotated")
            row = []
            for k in ([r - 1, r] if r > 0 else [0]):
                mn = robust_moments_at(w, k); L = w.statistic(k)
                mo = robust_moments(w.row_chunks(), w.cache["rfirst"], k, reference="per-row")
                row += [robust_pvalue(L, mo)[0], robust_pvalue(L, mn)[0]]
            res_p.append(row)
        x = np.array(res_p)
        so, sn = np.mean(x[:, -2] <= .05), np.mean(x[:, -1] <= .05)
        f = lambda p: "*" if not lo <= p <= hi else " "
        pw = f"power per-row {np.mean(x[:, 0] <= .05):.3f} default {np.mean(x[:, 1] <= .05):.3f}" if r > 0 else ""
        print(f"{sc.name:<17} r={r} m={m} {n1}x{n2}: size per-row {so:.3f}{f(so)} default {sn:.3f}{f(sn)}  {pw}  ({time.time()-t0:.0f}s)", flush=True)
