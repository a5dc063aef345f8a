"""Same data, the default (sampled) route of the robust test against the exact d x d route.

t(5) blocks, n1 = n2 = 30, m = 20000, r = 2, H0: r <= 2, replications for 420 s
(seed [20261126, 55]).  Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice -n 10 python \
        studies/check_robust_routes.py > studies/results/check_robust_routes.txt
"""
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, "studies")
warnings.simplefilter("ignore")
import study_width as sw  # noqa: E402

import jdr_stats as jdr  # noqa: E402
from jdr_stats.inference._rank_stats import _whiten  # noqa: E402
from jdr_stats.inference._robust_core import robust_moments, robust_pvalue, rotated_first  # noqa: E402

rng = np.random.default_rng([20261126, 55])
rows = []
t0 = time.time()
while time.time() - t0 < 420:
    y, a, b = sw.draw("t5", 20000, 30, 2, rng)
    res = jdr.JointDimReduction(y, a, b).fit(2)
    w = _whiten(res.model.data, res.moments, rows="rotated")
    first = rotated_first(w.row_chunks())
    st = w.statistic(2)
    ms = robust_moments(w.row_chunks(), first, 2, rng=np.random.default_rng(1))
    me = robust_moments(w.row_chunks(), first, 2, route="dxd")
    rows.append((robust_pvalue(st, ms)[0], robust_pvalue(st, me)[0], ms.var / me.var, st / me.tau))
r = np.array(rows)
print(f"{len(r)} reps; size sampled {np.mean(r[:, 0] <= .05):.3f}, exact {np.mean(r[:, 1] <= .05):.3f}; "
      f"max |p diff| {np.max(np.abs(r[:, 0] - r[:, 1])):.2e}; var ratio sampled/exact mean {r[:, 2].mean():.4f} "
      f"sd {r[:, 2].std():.4f}; mean stat/tau {r[:, 3].mean():.4f}; sd of stat/tau {r[:,3].std():.4f}")
