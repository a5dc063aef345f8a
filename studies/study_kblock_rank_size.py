"""K >= 3 blocks: size and power of the per-block rank tests.

Size of the rank-0 test (and of the rank-1 test under a rank-1 truth) on
the first block, over a small battery: K = 3 and K = 5, Gaussian
independent blocks, correlated blocks sharing a centred Gamma(2) or t(5)
factor, a block with a binary column, m = 500 and 2000, y independent of
the blocks (Gaussian, skewed) or the shuffled response of an interaction
signal; both estimators (per-block: analytic influences; joint: jackknife
influences, m = 500 only, fewer replicates: each fit is m refits).  Power
of the rank-0 test on y = x1 x2 (+ x3 x4 x5) designs.  For each cell: the
rejection rate at 0.05 with its Monte Carlo SE, the mean of the statistic
over the mean of the reference ``scale * chi2(eff_df)``, and the ratio of
the statistic's variance to the reference's mean variance.  The band of a
size is alpha +- (2.5 SE + 0.005).

Run: OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/study_kblock_rank_size.py [reps] [joint_reps]
Output: studies/results/study_kblock_rank_size.txt (the run from the
worktree root; a run against another checkout, e.g. the code before the
fix, prints the same table with ``--out PATH``).
"""

import pathlib
import sys
import time
import warnings

import numpy as np

import jdr_stats as jdr

OUT = pathlib.Path(__file__).parent / "results" / "study_kblock_rank_size.txt"
ALPHA = 0.05


def _factor(rng, m, kind):
    """A standardised shared factor: centred Gamma(2) or t(5)."""
    if kind == "gamma":
        return (rng.gamma(2.0, size=m) - 2.0) / np.sqrt(2.0)
    return rng.standard_t(5, size=m) / np.sqrt(5 / 3)


def blocks(rng, m, K, n, design):
    """K blocks of n columns.  ``gauss``: independent N(0, 1); ``gamma`` /
    ``t5``: every column loads 0.6 on one shared factor of that law (the
    blocks correlate); ``binary``: the t(5) design with block 1's first
    column a Bernoulli(0.3) dummy."""
    if design == "gauss":
        return [rng.normal(size=(m, n)) for _ in range(K)]
    f = _factor(rng, m, "gamma" if design == "gamma" else "t5")
    xs = [0.6 * f[:, None] + 0.8 * rng.normal(size=(m, n)) for _ in range(K)]
    if design == "binary":
        xs[0][:, 0] = (rng.random(m) < 0.3).astype(float)
    return xs


def response(rng, xs, kind, scale=1.0):
    """``null``: N(0, 1) independent of the blocks; ``skew``: centred
    Exp(1), independent; ``shuffle``: y = x1 x2 + x2 x3 + 0.5 x1 + Exp noise
    (first columns), its rows permuted; ``rank1``: y = scale (x1 x2 + x2 x3
    + x1 x3) + N(0, 1) (every block of rank 1); ``pair``: y = scale x1 x2 +
    N(0, 1); ``k5``: y = x1 x2 + x3 x4 x5 + N(0, 1)."""
    m = xs[0].shape[0]
    c = [x[:, 0] for x in xs]
    if kind == "null":
        return rng.normal(size=m)
    if kind == "skew":
        return rng.exponential(size=m) - 1.0
    if kind == "shuffle":
        y = c[0] * c[1] + c[1] * c[2] + 0.5 * c[0] + rng.exponential(size=m)
        return rng.permutation(y)
    if kind == "rank1":
        return scale * (c[0] * c[1] + c[1] * c[2] + c[0] * c[2]) + rng.normal(size=m)
    if kind == "pair":
        return scale * c[0] * c[1] + rng.normal(size=m)
    if kind == "k5":
        return c[0] * c[1] + c[2] * c[3] * c[4] + rng.normal(size=m)
    raise ValueError(kind)


def cell(seed, reps, K, n, m, design, resp, independent, test_rank=0, scale=1.0,
         block=0):
    """Rejection rate, MC SE, stat mean / reference mean, stat variance /
    reference variance of block ``block``'s test of rank ``test_rank``."""
    rng = np.random.default_rng(seed)
    stat, mean, var, pv = [], [], [], []
    for _ in range(reps):
        xs = blocks(rng, m, K, n, design)
        y = response(rng, xs, resp, scale)
        model = jdr.JointDimReduction.from_blocks(y, {f"x{k + 1}": x for k, x in enumerate(xs)})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # fit("auto") runs each block's tests up to its first rank not
            # rejected (the table the choice read; rank_tests() would run
            # every rank): rank 0 always, rank 1 once rank 0 is rejected
            res = model.fit("auto", independent_blocks=independent)
        tab = res._tables[f"x{block + 1}"]
        if test_rank not in tab.index:  # rank 0 not rejected: rank 1 untested
            continue
        row = tab.loc[test_rank]
        stat.append(row["statistic"])
        mean.append(row["scale"] * row["eff_df"])
        var.append(2 * row["scale"] ** 2 * row["eff_df"])
        pv.append(row["pvalue"])
    pv = np.asarray(pv)
    rate = float(np.mean(pv < ALPHA))
    se = np.sqrt(rate * (1 - rate) / len(pv))
    return (rate, se, np.mean(stat) / np.mean(mean), np.var(stat, ddof=1) / np.mean(var),
            len(pv))


CELLS = [
    # (label, K, n, m, design, response, independent_blocks, rank, scale, kind)
    ("K3 gauss y~N", 3, 4, 500, "gauss", "null", True, 0, 1.0, "size"),
    ("K3 gauss y~N", 3, 4, 2000, "gauss", "null", True, 0, 1.0, "size"),
    ("K3 gamma shuffled", 3, 4, 500, "gamma", "shuffle", True, 0, 1.0, "size"),
    ("K3 t5+binary y~Exp", 3, 4, 500, "binary", "skew", True, 0, 1.0, "size"),
    ("K5 gauss y~N", 5, 3, 500, "gauss", "null", True, 0, 1.0, "size"),
    ("K5 gamma shuffled", 5, 3, 500, "gamma", "shuffle", True, 0, 1.0, "size"),
    ("K5 t5 shuffled", 5, 3, 2000, "t5", "shuffle", True, 0, 1.0, "size"),
    ("K3 gauss rank-1 truth", 3, 4, 500, "gauss", "rank1", True, 1, 0.5, "size"),
    ("K3 gauss y~N", 3, 3, 500, "gauss", "null", False, 0, 1.0, "size"),
    ("K3 gamma shuffled", 3, 3, 500, "gamma", "shuffle", False, 0, 1.0, "size"),
    ("K3 y=0.2 x1x2", 3, 4, 500, "gauss", "pair", True, 0, 0.2, "power"),
    ("K5 y=x1x2+x3x4x5 (corr.)", 5, 6, 600, "t5", "k5", True, 0, 1.0, "power"),
    ("K3 y=0.2 x1x2", 3, 3, 500, "gauss", "pair", False, 0, 0.2, "power"),
]


def main(reps=250, joint_reps=100, out=OUT):
    lines = [f"per-block estimator: {reps} replicates a cell; joint: {joint_reps} "
             f"(jackknife influences, m refits a fit); alpha = {ALPHA}; first block's test",
             "size band alpha +- (2.5 SE + 0.005); stat/ref: mean of the statistic over the "
             "reference's mean; var ratio: its variance over the reference's",
             f"{'cell':27s} {'K':>2s} {'n':>2s} {'m':>5s} {'estimator':9s} {'rank':>4s} "
             f"{'kind':5s} {'reps':>4s} {'reject':>7s} {'MC SE':>6s} {'stat/ref':>8s} {'var ratio':>9s} "
             f"{'in band':>7s}"]
    print("\n".join(lines), flush=True)
    t0 = time.time()
    for i, (label, K, n, m, design, resp, indep, rank, scale, kind) in enumerate(CELLS):
        r = reps if indep else joint_reps
        if m >= 2000 or (K == 5 and kind == "power"):
            r = max(20, reps // 4)  # the costly cells
        rate, se, mratio, vratio, r = cell(1000 + i, r, K, n, m, design, resp, indep, rank, scale)
        band = ""
        if kind == "size":
            band = "yes" if abs(rate - ALPHA) <= 2.5 * np.sqrt(ALPHA * (1 - ALPHA) / r) \
                + 0.005 else "NO"
        line = (f"{label:27s} {K:2d} {n:2d} {m:5d} {'per-block' if indep else 'joint':9s} "
                f"{rank:4d} {kind:5s} {r:4d} {rate:7.3f} {se:6.3f} {mratio:8.3f} {vratio:9.3f} "
                f"{band:>7s}")
        lines.append(line)
        print(line, flush=True)
    lines.append(f"time {time.time() - t0:.0f} s")
    print(lines[-1])
    pathlib.Path(out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    args = sys.argv[1:]
    dest = OUT
    if "--out" in args:
        j = args.index("--out")
        dest = pathlib.Path(args[j + 1])
        del args[j:j + 2]
    main(*(int(a) for a in args), out=dest)
