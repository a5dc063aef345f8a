"""Size of the per-block rank tests of three blocks at the true rank, and the
share of fit("auto") choosing no block's rank above the truth (and, per
block, the two blocks of the pairwise link found), on a small
battery: Gaussian and t(5) blocks under the per-block whitening, correlated
Gaussian blocks under the joint whitening.  Seeded; tolerances from the
Monte Carlo standard error.  Full figures: studies/study_k_blocks.py.

Under the per-block whitening the size is checked on both sides of alpha.
Under the joint whitening (analytic influences, the rows' own shares of
the whitening's moments left out) the reference's mean can exceed the
statistic's at small m by O((sum n_k)^2 / m) (theory page "K blocks",
section 4; studies/study_kblock_joint_influence.py), so only the upper
bound is checked there."""

import numpy as np
import pytest

import jdr_stats as jdr

ALPHA = 0.05


def _design(rng, m, dist, rho):
    draw = rng.normal if dist == "gauss" else (
        lambda size: rng.standard_t(5, size=size) / np.sqrt(5 / 3))
    xs = [draw(size=(m, 4)) for _ in range(3)]
    if rho > 0:
        shared = draw(size=(m, 4))
        xs = [np.sqrt(1 - rho) * x + np.sqrt(rho) * shared for x in xs]
    u = [x[:, 0] for x in xs]
    y = u[0] * u[1] + u[0] * u[1] * u[2] + 0.5 * rng.normal(size=m)
    return y, xs


@pytest.mark.slow
# a replication whose rank-0 test does not reject warns (RankSelectionWarning):
# those are counted by the share below, not errors of the study
@pytest.mark.filterwarnings("ignore::jdr_stats.exceptions.RankSelectionWarning")
@pytest.mark.parametrize("estimator, dist, rho, reps", [
    ("per-block", "gauss", 0.0, 300),
    ("per-block", "t5", 0.0, 300),
    ("joint", "gauss", 0.6, 120),
])
def test_per_block_rank_test_size_and_auto(estimator, dist, rho, reps):
    rng = np.random.default_rng({"gauss": 11, "t5": 12}[dist] + int(10 * rho))
    rej, right, over = [], [], []
    for _ in range(reps):
        y, xs = _design(rng, 600, dist, rho)
        res = jdr.JointDimReduction.from_blocks(y, xs).fit(
            "auto", independent_blocks=estimator == "per-block")
        tables = res.rank_tests().tables.values()
        rej.append(np.mean([t.loc[1, "pvalue"] < ALPHA for t in tables]))
        # no block above its true rank (rank 0 is an answer: a block whose
        # link the tests do not detect gets no direction, which is a miss of
        # power, not a wrong rank); the pairwise blocks found
        ranks = list(res.ranks.values())
        over.append(all(r <= 1 for r in ranks))
        right.append(ranks[0] == 1 and ranks[1] == 1)
    size = float(np.mean(rej))
    # the rep's block average has variance at most alpha (1 - alpha) (blocks
    # perfectly dependent): a conservative MC SE
    se = np.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert size <= ALPHA + 2.5 * se + 0.005, (size, se)
    if estimator == "per-block":
        assert size >= ALPHA - 2.5 * se - 0.005, (size, se)
    kept = float(np.mean(over))
    se_kept = np.sqrt(max(kept * (1 - kept), 0.01) / reps)
    assert kept + 2.5 * se_kept >= 0.85, (kept, se_kept)
    if estimator == "per-block":  # the joint estimator's power here: the note
        share = float(np.mean(right))
        se_share = np.sqrt(max(share * (1 - share), 0.01) / reps)
        assert share + 2.5 * se_share >= 0.85, (share, se_share)
