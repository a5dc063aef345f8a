"""The issue's second weakness: ranks below the truth with skewed blocks.

Gamma(2) blocks (standardised), BILINEAR link with random orthonormal U, V,
r = 2, n1 = n2 = 10, m = 300 (the issue's m; its n was not stated), 500
replications, seed [20261126, 88].  For the robust test of H0: r <= 0 the
share of p-values above 0.05 (fit("auto") would then stop at rank 0), the
median effective df (d = 100) and the median Lambda_0 / d, for the centred
variance (default) and the first version's uncentred one, on the same data.
Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/check_gamma_low_rank.py
"""

from __future__ import annotations

import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference._robust_core import robust_moments, robust_pvalue, rotated_first


def draw(rng, m=300, n=10, r=2):
    def block():
        return (rng.gamma(2.0, 1.0, (m, n)) - 2.0) / np.sqrt(2.0)

    a, b = block(), block()
    u = np.linalg.qr(rng.standard_normal((n, r)))[0]
    v = np.linalg.qr(rng.standard_normal((n, r)))[0]
    return np.sum((a @ u) * (b @ v), axis=1) + rng.standard_normal(m), a, b


def main(reps: int = 500) -> None:
    warnings.simplefilter("ignore")
    rng = np.random.default_rng([20261126, 88])
    out = {True: [], False: []}
    for _ in range(reps):
        y, a, b = draw(rng)
        res = jdr.JointDimReduction(y, a, b).fit(2)
        w = _whiten(res.model.data, res.moments, rows="rotated")
        first = rotated_first(w.row_chunks())
        stat = w.statistic(0)
        for centre in (True, False):
            mom = robust_moments(w.row_chunks(), first, 0, centre=centre)
            pv, df, _, _ = robust_pvalue(stat, mom)
            out[centre].append((pv, df, stat / 100))
    for centre, name in ((True, "centred (default)"), (False, "uncentred (first version)")):
        x = np.array(out[centre])
        print(f"{name:<26} P(p_0 > 0.05) = {np.mean(x[:, 0] > 0.05):.4f}  "
              f"median eff_df = {np.median(x[:, 1]):.1f}  median Lambda_0 / d = {np.median(x[:, 2]):.2f}")


if __name__ == "__main__":
    main()
