"""The issue's second weakness: ranks below the truth with skewed blocks.

Gamma(2) blocks (standardised), BILINEAR link with random orthonormal U, V
(``jdr.simulate.bilinear(..., design="gamma")``), r = 2, n1 = n2 = 10, m = 300 (the issue's m; its n was not stated), 500
replications, seed [20261126, 88].  For the robust test of H0: r <= 0 the
share of p-values above 0.05 (fit("auto") would then stop at rank 0), for
the per-row references (theory 6) and the default corrected one (6d), on
the same data.
Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_gamma_low_rank.py
"""

from __future__ import annotations

import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference._robust_core import robust_moments, robust_pvalue, rotated_first


def draw(rng, m=300, n=10, r=2):
    sim = jdr.simulate.bilinear(m, n, n, r, design="gamma", seed=rng)
    return sim.y, sim.a, sim.b


def main(reps: int = 500) -> None:
    """Per-row reference (section 6, centred and the first version's
    uncentred) against the default corrected reference (6d) on the same data:
    share of samples not rejecting H0: r <= 0 and r <= 1 (true r = 2), size
    at r <= 2, and the share in which the sequential tests choose r = 2."""
    warnings.simplefilter("ignore")
    rng = np.random.default_rng([20261126, 88])
    kinds = (("per-row, uncentred (first version)", dict(centre=False, reference="per-row")),
             ("per-row, centred", dict(reference="per-row")),
             ("corrected (default, 6d)", dict(reference="corrected")))
    out: dict[str, list] = {name: [] for name, _ in kinds}
    for _ in range(reps):
        y, a, b = draw(rng)
        res = jdr.JointDimReduction(y, a, b).fit(2)
        w = _whiten(res.model.data, res.moments, rows="rotated")
        first = rotated_first(w.row_chunks())
        for name, kw in kinds:
            row = []
            for k in (0, 1, 2):
                mom = robust_moments(w.row_chunks(), first, k, **kw)
                pv, df, _, _ = robust_pvalue(w.statistic(k), mom)
                row += [pv, df]
            out[name].append(row)
    print(f"# reps={reps} seed=[20261126, 88]; Gamma(2) blocks, r = 2, 10 x 10, m = 300; "
          f"MC SE of a share near 0.05: {np.sqrt(0.05 * 0.95 / reps):.3f}")
    for name, _ in kinds:
        x = np.array(out[name])
        p0, p1, p2 = x[:, 0], x[:, 2], x[:, 4]
        chosen = np.where(p0 > 0.05, 0, np.where(p1 > 0.05, 1, np.where(p2 > 0.05, 2, 3)))
        print(f"{name:<36} P(p_0 > 0.05) = {np.mean(p0 > 0.05):.3f}  P(p_1 > 0.05) = "
              f"{np.mean(p1 > 0.05):.3f}  size at r <= 2: {np.mean(p2 <= 0.05):.3f}  "
              f"P(choose 2) = {np.mean(chosen == 2):.3f}  median eff_df at k = 0: "
              f"{np.median(x[:, 1]):.1f}")


if __name__ == "__main__":
    main()
