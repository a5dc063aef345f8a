"""Issue 19, first weakness: the robust test's variance at ranks below the truth.

Compares, on the same data, the default robust reference with variants that
try to keep the signal's own variance out of it (docs/theory/rank_tests.md
section 6c):

* ``default``: today's test (mean and variance from the rows);
* ``off-only``: the variance without its diagonal (row-norm) part;
* ``select-1``: variance from ``y`` with its fit on the top complement
  direction removed, fitted on the same rows;
* ``drop-1``: variance from the complement at ``k + 1``, rescaled to ``d``;
* ``crossfit``: variance from ``y`` with the cross-fitted, shrunk fit removed
  (``config.ROBUST_CROSSFIT_FOLDS = 5``, edge 0.5, 3 directions): the opt-in.

Size: rejection rate of ``H0: r <= k`` at the true rank on battery designs
(MC SE ``sqrt(p (1 - p) / reps)``).  Power: share of samples in which
``H0: r <= k`` is *not* rejected at ``k = 0, 1`` below the truth (Gamma(2)
blocks, ``r = 2``, ``n1 = n2 = 10``, ``m = 300``, the issue's design), and at
30 x 30.  Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice -n 10 \\
        python benchmarks/check_lowrank_variance.py --reps 300
"""

from __future__ import annotations

import argparse
import time
import warnings
from dataclasses import replace

import numpy as np

# the Gamma(2) design, one generator for both checks (same draws)
from check_gamma_low_rank import draw as gamma_draw

import jdr_stats as jdr
from jdr_stats import config
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference._robust_core import robust_moments, robust_pvalue, rotated_first

VARIANTS = ("default", "off-only", "select-1", "drop-1", "crossfit")
SIZE_DESIGNS = (("gaussian", 1000, 15, 1), ("t5", 800, 8, 1), ("t5", 1000, 13, 1),
                ("t5-hetero", 500, 15, 1), ("lognormal-noise", 800, 8, 1),
                ("exp-response", 2000, 10, 2), ("binary-rare", 2000, 10, 2),
                ("t6-ar1", 2000, 30, 2), ("gaussian", 2000, 30, 2))


def _select_one(w, k):
    y, ua, vb = w.y, w.a, w.b
    z = ua[:, k] * vb[:, k]
    z = z - z.mean()
    y2 = y - z * (z @ y) / (z @ z)

    def chunks():
        return iter([(y2, ua, vb)])

    return chunks


def pvalues(y, a, b, k, fit_rank):
    """p-values of H0: r <= k for every variant, on one data set."""
    res = jdr.JointDimReduction(y, a, b).fit(fit_rank)
    w = _whiten(res.model.data, res.moments, rows="rotated")
    ch = w.row_chunks()
    first = rotated_first(ch)
    stat = w.statistic(k)
    base = robust_moments(ch, first, k)
    out = {"default": robust_pvalue(stat, base)[0],
           "off-only": robust_pvalue(stat, replace(base, diag=0.0))[0]}
    sel = _select_one(w, k)
    mm = robust_moments(sel, rotated_first(sel), k)
    out["select-1"] = robust_pvalue(stat, replace(mm, tau=base.tau, s2=base.s2))[0]
    nx = robust_moments(ch, first, k + 1)
    ratio = (w.n1 - k) * (w.n2 - k) / ((w.n1 - k - 1) * (w.n2 - k - 1))
    out["drop-1"] = robust_pvalue(stat, replace(base, diag=nx.diag * ratio ** 2,
                                                off=nx.off * ratio))[0]
    old = config.ROBUST_CROSSFIT_FOLDS
    config.ROBUST_CROSSFIT_FOLDS = 5
    try:
        w2 = _whiten(res.model.data, res.moments, rows="rotated")
        out["crossfit"] = robust_pvalue(stat, w2.robust(k))[0]
    finally:
        config.ROBUST_CROSSFIT_FOLDS = old
    return out


def _line(label, rates, reps):
    cells = "  ".join(f"{rates[v]:.3f}+-{np.sqrt(rates[v] * (1 - rates[v]) / reps):.3f}"
                      for v in VARIANTS)
    return f"{label:<36} {cells}"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--seed", type=int, default=20261126)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    reps = args.reps
    print(f"# reps={reps} seed=[{args.seed}, design index]; alpha = 0.05; "
          f"size band 0.05 +- {2.5 * np.sqrt(0.05 * 0.95 / reps) + 0.005:.4f}")
    print(f"{'':<36} " + "  ".join(f"{v:>11}" for v in VARIANTS))
    print("size: P(reject H0: r <= r_true)")
    for idx, (name, m, n, r) in enumerate(SIZE_DESIGNS):
        t0 = time.time()
        rng = np.random.default_rng([args.seed, idx])
        rej = {v: 0 for v in VARIANTS}
        for _ in range(reps):
            sim = jdr.simulate.scenario(name, m, n, n, r, seed=rng)
            for v, p in pvalues(sim.y, sim.a, sim.b, r, r).items():
                rej[v] += p <= 0.05
        print(_line(f"{name} m={m} {n}x{n} r={r}", {v: rej[v] / reps for v in VARIANTS}, reps)
              + f"  ({time.time() - t0:.0f} s)", flush=True)
    print("power loss: P(not reject H0: r <= k), true r = 2")
    for k in (0, 1):
        rng = np.random.default_rng([args.seed, 100 + k])
        acc = {v: 0 for v in VARIANTS}
        for _ in range(reps):
            for v, p in pvalues(*gamma_draw(rng), k, 2).items():
                acc[v] += p > 0.05
        print(_line(f"Gamma(2) m=300 10x10 k={k}", {v: acc[v] / reps for v in VARIANTS}, reps),
              flush=True)


if __name__ == "__main__":
    main()
