"""The robust rank test's self-influence corrected reference (theory 6d), decomposed.

For H0: r <= k at the true rank (k = r), over seeded samples of a battery
design: the mean and variance of Lambda_k - tau, the corrected mean's
term B (its mean should match that of Lambda_k - tau), the variance of
Lambda_k - tau - B against the corrected variance's parts (off-diagonal,
linear term) and the per-row reference's diagonal part, and the rejection
rates at 5% of the per-row reference (section 6), of the off-diagonal
variance alone without B ("uncorrected"), and of the corrected reference
(the default; forced here whatever d/m is).  Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice -n 5 \\
        python studies/check_corrected_reference.py
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy import stats

import jdr_stats as jdr
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference.rank_methods.robust import robust_moments_at
from jdr_stats.inference._robust_core import robust_moments, robust_pvalue

SETTINGS = (  # design, m, n1 = n2, r, replications
    ("t5", 1000, 13, 1, 300),
    ("t5", 800, 8, 1, 1000),
    ("gaussian", 2000, 60, 2, 200),
    ("t5", 2000, 60, 2, 200),
    ("exp-response", 2000, 60, 2, 200),
    ("exp-response", 2000, 100, 2, 100),
)


def one(name: str, m: int, n: int, r: int, reps: int, seed: int) -> None:
    rng = np.random.default_rng([seed, m, n, r])
    rows = []
    t0 = time.time()
    for _ in range(reps):
        sim = jdr.simulate.scenario(name, m, n, n, r, seed=rng)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(r)
        w = _whiten(res.model.data, res.moments, rows="rotated")
        stat = w.statistic(r)
        robust_moments_at(w, 0)  # builds the first-order sums
        first = w.cache["rfirst"]
        new = robust_moments(w.row_chunks(), first, r, reference="corrected")
        old = robust_moments(w.row_chunks(), first, r, reference="per-row")
        den = (new.nobs * new.s2) ** 2
        tau, off2 = new.tau, 2 * new.off / den
        df = 2 * tau * tau / off2
        p_unc = float(stats.chi2.sf(stat * df / tau, df))
        rows.append((stat, tau, new.bias, off2, old.diag / den, new.lin / den,
                     robust_pvalue(stat, old)[0], p_unc, robust_pvalue(stat, new)[0], new.var_df))
    x = np.array(rows)
    lam, tau, b, off2, dg, lin, p_old, p_unc, p_new, nu = x.T
    z, zb = lam - tau, lam - tau - b
    se = lambda v: v.std(ddof=1) / np.sqrt(reps)  # noqa: E731
    mc = np.sqrt(0.05 * 0.95 / reps)
    print(f"{name} m={m} {n}x{n} r={r} d={(n - r) ** 2} reps={reps} ({time.time() - t0:.0f} s)")
    print(f"  mean(Lambda - tau) {z.mean():.1f} +- {se(z):.1f}   mean B {b.mean():.1f}"
          f"   mean(Lambda - tau - B) {zb.mean():.1f} +- {se(zb):.1f}")
    print(f"  var(Lambda - tau) {z.var(ddof=1):.0f}   var(Lambda - tau - B) {zb.var(ddof=1):.0f}"
          f"   corrected variance: off {off2.mean():.0f} + linear {lin.mean():.0f}"
          f"   (per-row diagonal part {dg.mean():.0f})   median var_df {np.median(nu):.0f}")
    print(f"  rejections at 5% (MC SE {mc:.3f}): per-row {np.mean(p_old <= 0.05):.3f}"
          f"   uncorrected {np.mean(p_unc <= 0.05):.3f}   corrected {np.mean(p_new <= 0.05):.3f}",
          flush=True)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies every replication count")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print(f"# seed [{args.seed}, m, n, r] per setting; reps scaled by {args.scale}")
    for name, m, n, r, reps in SETTINGS:
        one(name, m, n, r, max(20, int(reps * args.scale)), args.seed)


if __name__ == "__main__":
    main()
