"""Null calibration of the K-block per-block rank test at rank 0: the
statistic's variance against its reference's, and the p-values' law, on
five independent Gaussian blocks with a response independent of them.
Seeded; tolerances from the Monte Carlo error.  Full battery (sizes and
power): studies/study_kblock_rank_size.py.

Each piece's unit-noise scale divides out the rows' norms in the diagonal
part of the statistic; a reference that counts their fluctuation as
variance has several times the statistic's variance at K = 5 (and
p-values piled near one), which this test would catch."""

import numpy as np

import jdr_stats as jdr
from jdr_stats.runtime._lazy import stats


def _rank0_tests(reps, m, seed):
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(reps):
        xs = [rng.normal(size=(m, 3)) for _ in range(5)]
        y = rng.normal(size=m)
        res = jdr.JointDimReduction.from_blocks(y, xs).fit(1, independent_blocks=True)
        rows.append(res.rank_tests().tables["block1"].loc[0])
    return rows


def test_rank0_reference_matches_null_moments():
    reps = 80
    rows = _rank0_tests(reps, 300, seed=2024)
    stat = np.array([r["statistic"] for r in rows])
    ref_mean = np.array([r["scale"] * r["eff_df"] for r in rows])
    ref_var = np.array([2 * r["scale"] ** 2 * r["eff_df"] for r in rows])
    pvals = np.array([r["pvalue"] for r in rows])
    # the mean: the statistic's sample mean against the reference's, within
    # 3 MC SEs of the former
    se_mean = stat.std(ddof=1) / np.sqrt(reps)
    assert abs(stat.mean() - ref_mean.mean()) <= 3 * se_mean, (stat.mean(), ref_mean.mean())
    # the variance: a sample variance of `reps` near-normal draws has
    # relative SE sqrt(2 / (reps - 1)), about 0.16 here; 3 of them
    ratio = stat.var(ddof=1) / ref_var.mean()
    assert abs(ratio - 1) <= 3 * np.sqrt(2 / (reps - 1)), ratio
    # the p-values are uniform
    assert stats.kstest(pvals, "uniform").pvalue > 0.001
