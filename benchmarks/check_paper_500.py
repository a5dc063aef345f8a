"""Why fit("auto") stops at 4 on two of five samples of the paper's
BILINEAR experiment 2 at n1 = n2 = 500 (m = 1e4, r = 5; issue 19, item 4).

For three samples of ``benchmarks/check_paper_auto.py`` (seeds [2026, 500,
rep], reps 1 and 4 stopped at 4, rep 0 chose 5): the sample's
``m s_j^2 / s_y^2`` (j = 1..8) against the noise edge ``(2 sqrt n)^2``, and
at k = 4 and 5 the statistic, tau, the corrected mean's B, the reference's
standard deviation and the p-value of both references (per-row: the default
at this d/m; corrected: forced).  Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/check_paper_500.py
"""

from __future__ import annotations

import time
import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference._robust_core import robust_moments, robust_pvalue


def main() -> None:
    warnings.simplefilter("ignore")
    n = 500
    for rep in (1, 4, 0):
        t0 = time.time()
        sim = jdr.simulate.bilinear(10000, n, n, 5, seed=np.random.default_rng([2026, n, rep]))
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(5)
        w = _whiten(res.model.data, res.moments, rows="rotated")
        lam = w.m * w.s[:8] ** 2 / w.var_y
        print(f"rep {rep}: m s_j^2 / s_y^2 = {np.round(lam).astype(int)}, "
              f"noise edge (2 sqrt n)^2 = {4 * n}")
        w.robust(0)
        first = w.cache["rfirst"]
        for k in (4, 5):
            stat = w.statistic(k)
            for ref in ("per-row", "corrected"):
                mom = robust_moments(w.row_chunks(), first, k, reference=ref)
                print(f"  k={k} {ref:<9} Lambda={stat:.0f} tau={mom.tau:.0f} "
                      f"Lambda-tau={stat - mom.tau:.0f} B={mom.bias:.0f} "
                      f"sd={np.sqrt(mom.var):.0f} p={robust_pvalue(stat, mom)[0]:.3g}")
        print(f"  ({time.time() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
