"""Figure 1 of the paper at full size: log(mean NSEE) against log m, n, s.

Settings from ``shared/paper/NOTES.md`` (n1 = n2 = n, s1 = s2 = s, U and V
redrawn every trial, known zero means and identity covariances, so the fit
uses ``standardize=False``: blocks and y are centred at their sample means,
the paper's estimator does not centre; the difference is O(m^-1/2) and below
the Monte Carlo error here).  For every curve the script prints the paper's
value (read from the tikz tables of the LaTeX source), ours, and the fitted
log-log slopes.

Usage:
    python studies/study_paper_figure1.py [--trials 100] [--trials-large 10]
        [--only bilinear-exp1 ...]

The sparse experiments exp3 and exp4 draw up to 2e6 x 400 and 1e6 x 1000
Gaussian entries per trial, hence fewer trials by default.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import jdr_stats as jdr
from jdr_stats.datasets import load_paper_figures

# name -> (varied quantity, grid, fixed settings, paper's log(mean NSEE))
EXPERIMENTS = {
    name: (e["vary"], e["grid"], e["fixed"], e["log_nsee"])
    for name, e in load_paper_figures()["figure1"].items()
}


def one_trial(model, m, n, r, s, rng):
    sim = getattr(jdr.simulate, model)(m, n, n, r, s1=s, s2=s, seed=rng)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(
        r, standardize=False, sparsity=None if s is None else (s, s)
    )
    return jdr.metrics.nsee(sim.U, res.directions_a, sim.V, res.directions_b)


def run(name, trials, seed):
    model = name.split("-")[0]
    var, grid, fixed, paper = EXPERIMENTS[name]
    rng = np.random.default_rng(seed)
    rows = []
    t0 = time.perf_counter()
    for x, ref in zip(grid, paper):
        setting = dict(fixed)
        setting[var] = x
        m, n, r, s = setting["m"], setting["n"], setting["r"], setting.get("s")
        errs = np.array([one_trial(model, m, n, r, s, rng) for _ in range(trials)])
        mean = errs.mean()
        se_log = errs.std(ddof=1) / np.sqrt(trials) / mean
        rows.append((x, np.log(mean), se_log, ref))
    xs = np.log([row[0] for row in rows])
    ours = np.array([row[1] for row in rows])
    paper_arr = np.array([row[3] for row in rows])
    print(f"\n{name}: vary {var}, fixed {fixed}, {trials} trials per point "
          f"({time.perf_counter() - t0:.0f} s)")
    print(f"  {var:>8} {'log ' + var:>8} {'ours':>8} {'(se)':>7} {'paper':>8} {'diff':>7}")
    for (x, lo, se, ref) in rows:
        print(f"  {x:>8} {np.log(x):8.3f} {lo:8.3f} {se:7.3f} {ref:8.3f} {lo - ref:7.3f}")
    print(f"  slope ours {np.polyfit(xs, ours, 1)[0]:.3f}   paper {np.polyfit(xs, paper_arr, 1)[0]:.3f}"
          f"   max |diff| {np.max(np.abs(ours - paper_arr)):.3f}")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--trials", type=int, default=100, help="trials per point, exp1 and exp2")
    p.add_argument("--trials-large", type=int, default=10,
                   help="trials per point for the large sparse experiments exp3 and exp4")
    p.add_argument("--seed", type=int, default=2026)
    p.add_argument("--only", nargs="*", default=list(EXPERIMENTS), choices=list(EXPERIMENTS))
    args = p.parse_args()
    for name in args.only:
        large = name.endswith(("exp3", "exp4"))
        run(name, args.trials_large if large else args.trials, args.seed)


if __name__ == "__main__":
    main()
