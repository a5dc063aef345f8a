"""K >= 3 blocks, joint estimator: size of the per-block rank-0 test with
the analytic influences (jdr_stats.inference.kblock_influence).

Before, the joint estimator's rank tests took each row's influence from
delete-one refits and the reference's mean sat above the statistic's
(conservative tests; studies/study_kblock_rank_size.py).  Cells: K = 3
blocks of 4 and K = 5 blocks of 3, m = 500 and 2000, correlated blocks
(every column loads 0.6 on one shared factor: Gaussian with y ~ N(0, 1)
independent of the blocks, or centred Gamma(2) with the shuffled response
of an interaction signal), ``fit("auto")`` under the default (joint)
estimator.  For each cell: the first block's rank-0 rejection rate at 0.05
with its MC SE, the statistic's mean over the reference's mean
(``scale * eff_df``) and its variance over the reference's
(``2 scale^2 eff_df``); band alpha +- (2.5 SE + 0.005).

Run: OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/study_kblock_joint_influence.py [reps]
Output: studies/results/study_kblock_joint_influence.txt
"""

import pathlib
import sys
import time
import warnings

import numpy as np

import jdr_stats as jdr

OUT = pathlib.Path(__file__).parent / "results" / "study_kblock_joint_influence.txt"
ALPHA = 0.05


def blocks(rng, m, K, n, design):
    """K correlated blocks of n columns: 0.6 times a shared standardised
    factor (Gaussian or centred Gamma(2)) plus 0.8 N(0, 1) noise."""
    f = rng.normal(size=m) if design == "gauss" else (rng.gamma(2.0, size=m) - 2.0) / np.sqrt(2)
    return [0.6 * f[:, None] + 0.8 * rng.normal(size=(m, n)) for _ in range(K)]


def response(rng, xs, design):
    """Gaussian design: y ~ N(0, 1) independent; Gamma: y = x1 x2 + x2 x3 +
    0.5 x1 + Exp(1) noise (first columns), its rows permuted."""
    m = xs[0].shape[0]
    if design == "gauss":
        return rng.normal(size=m)
    c = [x[:, 0] for x in xs]
    return rng.permutation(c[0] * c[1] + c[1] * c[2] + 0.5 * c[0] + rng.exponential(size=m))


def cell(seed, reps, K, n, m, design):
    rng = np.random.default_rng(seed)
    stat, mean, var, pv = [], [], [], []
    for _ in range(reps):
        xs = blocks(rng, m, K, n, design)
        y = response(rng, xs, design)
        model = jdr.JointDimReduction.from_blocks(y, {f"x{k + 1}": x for k, x in enumerate(xs)})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = model.fit("auto")
        assert res.settings["estimator"] == "joint"
        row = res._tables["x1"].loc[0]
        stat.append(row["statistic"])
        mean.append(row["scale"] * row["eff_df"])
        var.append(2 * row["scale"] ** 2 * row["eff_df"])
        pv.append(row["pvalue"])
    pv = np.asarray(pv)
    rate = float(np.mean(pv < ALPHA))
    return (rate, np.mean(stat) / np.mean(mean), np.var(stat, ddof=1) / np.mean(var),
            res.settings["influence"]["name"])


CELLS = [(K, n, m, d) for d in ("gauss", "gamma") for K, n in ((3, 4), (5, 3))
         for m in (500, 2000)]


def main(reps=200, out=OUT):
    lines = [f"joint estimator (default), fit('auto'), first block's rank-0 test; {reps} "
             f"replicates a cell; alpha = {ALPHA}; band alpha +- (2.5 SE + 0.005) with "
             "SE = sqrt(alpha (1 - alpha) / reps)",
             f"{'design':6s} {'K':>2s} {'n':>2s} {'m':>5s} {'influence':15s} {'reject':>7s} "
             f"{'MC SE':>6s} {'stat/ref':>8s} {'var ratio':>9s} {'in band':>7s}"]
    print("\n".join(lines), flush=True)
    t0 = time.time()
    for i, (K, n, m, design) in enumerate(CELLS):
        rate, mratio, vratio, infl = cell(2000 + i, reps, K, n, m, design)
        se = np.sqrt(rate * (1 - rate) / reps)
        band = "yes" if abs(rate - ALPHA) <= 2.5 * np.sqrt(ALPHA * (1 - ALPHA) / reps) \
            + 0.005 else "NO"
        lines.append(f"{design:6s} {K:2d} {n:2d} {m:5d} {infl:15s} {rate:7.3f} {se:6.3f} "
                     f"{mratio:8.3f} {vratio:9.3f} {band:>7s}")
        print(lines[-1], flush=True)
    lines.append(f"time {time.time() - t0:.0f} s")
    print(lines[-1])
    pathlib.Path(out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:]))
