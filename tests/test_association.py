"""The permutation test of no association (results.association_test) and its
place in the summary at p >> n."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats import policy
from jdr_stats.exceptions import RowsNotInMemoryError
from jdr_stats.inference.hypotheses import TestResult
from jdr_stats.summary import format_pvalue

#: The guide page the summary's notes point to for their explanations.
GUIDE = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "summary.md").read_text()


def _wide(seed: int = 0):
    return jdr.simulate.bilinear(40, 120, 21, 1, seed=seed)


def test_statistic_is_the_fits_own():
    """T = sum_j s_j^2 of the fit's whitened cross moment / var(y), for every whitening."""
    d = jdr.simulate.bilinear(200, 8, 6, 1, seed=1)
    w = np.random.default_rng(0).uniform(0.5, 2.0, 200)
    fits = [jdr.JointDimReduction(d.y, d.a, d.b).fit(rank=1, whitening=k)
            for k in ("sample", "shrinkage", "none")]
    fits += [jdr.JointDimReduction(d.y, d.a, d.b).fit(rank=1, independent_blocks=False),
             jdr.JointDimReduction(d.y, d.a, d.b, weights=w).fit(rank=1)]
    for res in fits:
        t = res.association_test(9, seed=0, statistic="dense")
        want = np.sum(res.estimate.coef_matrix ** 2) / res.moments.var_y
        assert t.statistic == pytest.approx(want, rel=1e-10)


def test_combined_statistic_parts():
    """The combined statistic's parts: the cross moment's T (the dense
    statistic); each block's first moment with the standardised response,
    which under the per-block sample whitening is the R-squared of y on the
    block; the largest squared correlation of y with one variable of each
    block and with one product a_i b_j; the p-value is maxz_pvalue of the
    parts' logarithms (same permutations)."""
    import statsmodels.api as sm

    from jdr_stats.inference.association import (
        COMBINED_PARTS,
        association_stats,
        maxz_pvalue,
    )

    d = jdr.simulate.bilinear(200, 8, 6, 1, seed=1)
    res = jdr.JointDimReduction(d.y, d.a, d.b).fit(rank=1, whitening="sample",
                                                   independent_blocks=True)
    obs, null = association_stats(d.y, d.a, d.b, res._whitening, n_perm=19,
                                  rng=np.random.default_rng(4), statistic="combined")
    assert len(obs) == len(COMBINED_PARTS) == null.shape[1] == 6
    dense, _ = association_stats(d.y, d.a, d.b, res._whitening, statistic="dense")
    assert obs[0] == pytest.approx(dense, rel=1e-12)
    for k, x in ((1, d.a), (2, d.b)):
        r2 = sm.OLS(d.y, sm.add_constant(x)).fit().rsquared
        assert obs[k] == pytest.approx(r2, rel=1e-8)
    corr = np.corrcoef(np.column_stack([d.y, d.a, d.b]), rowvar=False)[0, 1:]
    assert obs[3] == pytest.approx(np.max(corr[:8] ** 2), rel=1e-10)
    assert obs[4] == pytest.approx(np.max(corr[8:] ** 2), rel=1e-10)
    ac, bc = d.a - d.a.mean(axis=0), d.b - d.b.mean(axis=0)  # products of centred columns
    prods = (ac[:, :, None] * bc[:, None, :]).reshape(200, -1)
    pcorr = np.corrcoef(np.column_stack([d.y, prods]), rowvar=False)[0, 1:]
    assert obs[5] == pytest.approx(np.max(pcorr**2), rel=1e-10)
    t = res.association_test(19, seed=4)
    assert t.pvalue == maxz_pvalue(obs, null, log=True)
    assert "largest standardised part" in t.distribution


def test_max_parts_are_exact_with_weights_and_constant_products():
    """Weighted correlations (each row's weight in the means, variances and
    covariances) and a product column constant under the weights (a binary
    column times a column that is zero where the first is one) give finite
    parts; a constant product contributes zero."""
    from jdr_stats.inference.association import association_stats

    rng = np.random.default_rng(3)
    m = 120
    a, b = rng.normal(size=(m, 4)), rng.normal(size=(m, 3))
    a[:, 0] = rng.integers(0, 2, m)
    b[:, 0] = np.where(a[:, 0] == 1, 0.0, 1.0)  # a0 * b0 is zero on every row
    y = rng.normal(size=m)
    w = rng.uniform(0.5, 2.0, m)
    res = jdr.JointDimReduction(y, a, b, weights=w).fit(1, independent_blocks=True)
    obs, _ = association_stats(y, a, b, res._whitening, weights=w, statistic="combined")
    assert np.all(np.isfinite(obs))
    wn = w / w.sum()

    def wcorr2(u, v):
        u, v = u - wn @ u, v - wn @ v
        return (wn @ (u * v)) ** 2 / ((wn @ u**2) * (wn @ v**2))

    assert obs[3] == pytest.approx(max(wcorr2(y, a[:, j]) for j in range(4)), rel=1e-10)
    sa = (a - wn @ a) / np.sqrt(wn @ (a - wn @ a) ** 2)
    sb = (b - wn @ b) / np.sqrt(wn @ (b - wn @ b) ** 2)
    want = max(wcorr2(y, sa[:, i] * sb[:, j]) for i in range(4) for j in range(3)
               if np.ptp(sa[:, i] * sb[:, j]) > 0)
    assert obs[5] == pytest.approx(want, rel=1e-10)


@pytest.mark.parametrize("signal", ["pair", "variable"])
def test_power_against_one_active_pair_or_variable_at_p_much_larger_than_n(signal):
    """m = 50, 100 + 100 columns, y = a_1 b_1 + e or y = 0.6 a_1 + e: the
    combined statistic sees what one product or one variable carries, where
    the cross moment and the dense first moments do not (study
    study_association, part sparse); these 20 draws reject at 0.05 in at
    least 10, the cross moment alone in at most 4."""
    hits = {"combined": 0, "dense": 0}
    for s in range(20):
        rng = np.random.default_rng([77, s])
        a, b = rng.normal(size=(50, 100)), rng.normal(size=(50, 100))
        y = (a[:, 0] * b[:, 0] if signal == "pair" else 0.6 * a[:, 0]) + rng.normal(size=50)
        res = jdr.JointDimReduction(y, a, b).fit(rank=1)
        for st in hits:
            hits[st] += res.association_test(99, seed=s, statistic=st).pvalue <= 0.05
    assert hits["combined"] >= 10 and hits["dense"] <= 4, hits


def test_maxz_pvalue_is_exact_and_untied():
    """Under exchangeability the rank of the observed maximum is uniform: with
    B = 19, P(p <= 0.05) = 1/20 and P(p <= 0.1) = 2/20 exactly (10000 draws of
    three skewed parts: within 3 MC SE); the minimum of rank p-values is tied
    and conservative there (never below 0.05 with three parts)."""
    from jdr_stats.inference.association import maxz_pvalue, minp_pvalue

    rng = np.random.default_rng(11)
    draws = [rng.chisquare([6, 100, 21], size=(20, 3)) for _ in range(10000)]
    p = np.array([maxz_pvalue(v[0], v[1:]) for v in draws])
    for level in (0.05, 0.10):
        assert abs(np.mean(p <= level) - level) <= 3 * np.sqrt(level * (1 - level) / 10000)
    assert all(minp_pvalue(v[0], v[1:]) > 0.05 for v in draws[:500])
    # a largest observed vector gets 1 / (B + 1), a smallest 1
    null = np.array([[1.0, 1.0], [2.0, 0.5], [0.5, 2.0]])
    assert maxz_pvalue(np.array([3.0, 3.0]), null) == 0.25
    assert maxz_pvalue(np.array([0.1, 0.1]), null) == 1.0


def test_combined_sees_main_effects_that_push_the_cross_moment_to_one():
    """Two classes shifting 10 + 5 columns' means (main effects only), m = 40,
    120 + 21 columns: the cross moment alone gives a large p-value (its
    permutations carry the shift into the cross moment), the combined
    statistic rejects (study_association, part main)."""
    rng = np.random.default_rng(7)
    m = 40
    a, b = rng.normal(size=(m, 120)), rng.normal(size=(m, 21))
    g = rng.permutation(np.repeat([0, 1], 20))
    a[:, :10] += 0.8 * g[:, None]
    b[:, :5] += 0.8 * g[:, None]
    res = jdr.JointDimReduction(pd.Categorical(g), a, b).fit(1)
    assert res.association_test(99, seed=0, statistic="dense").pvalue > 0.5
    assert res.association_test(99, seed=0).pvalue <= 0.01


def test_same_seed_same_pvalue_and_object():
    d = _wide()
    res = jdr.JointDimReduction(d.y, d.a, d.b).fit(rank=1)
    t1, t2 = res.association_test(99, seed=3), res.association_test(99, seed=3)
    assert isinstance(t1, TestResult) and t1.method == "association"
    assert t1.pvalue == t2.pvalue and t1.statistic == t2.statistic
    assert 1 / 100 <= t1.pvalue <= 1 and round(t1.pvalue * 100) == pytest.approx(t1.pvalue * 100)
    assert "H0: y independent of (a, b)" in str(t1.summary())
    assert t1.to_dict()["distribution"].startswith("permutation (99 permutations), largest")
    assert res.association_test(99, seed=3, statistic="dense").to_dict()[
        "distribution"] == "permutation (99 permutations)"


def _level(design: str, response: str, reps: int = 200, n_perm: int = 19) -> float:
    """Rejection rate at 0.1 under H0 (y drawn independently of the blocks)."""
    rng = np.random.default_rng(20261127)
    hits = 0
    for _ in range(reps):
        d = jdr.simulate.bilinear(30, 60, 12, 1, design=design,  # type: ignore[arg-type]
                                  seed=rng)
        if response == "binary":
            y: object = pd.Series(rng.permutation(np.repeat(["x", "z"], 15)), dtype="category")
        else:
            y = rng.standard_t(3, size=30)
        res = jdr.JointDimReduction(y, d.a, d.b).fit(rank=1)
        hits += res.association_test(n_perm, seed=rng).pvalue <= 0.1
    return hits / reps


@pytest.mark.parametrize(("design", "response"), [("gaussian", "t3"), ("t5", "binary")])
def test_level_exact_at_p_much_larger_than_n(design, response):
    """With B = 19 permutations P(p <= 0.1) = 2/20 exactly under H0; 200
    replicates: within 3 Monte Carlo SE (0.021) of 0.1."""
    rate = _level(design, response)
    assert abs(rate - 0.1) <= 3 * np.sqrt(0.1 * 0.9 / 200)


def test_power_on_a_strong_direction():
    """bilinear(100, 100, 20, 1), strength 3: these 20 draws reject at 0.05
    in 12 (the cross moment alone: 15; study_association, part power)."""
    hits = 0
    for s in range(20):
        d = jdr.simulate.bilinear(100, 100, 20, 1, strengths=[3.0], seed=s)
        res = jdr.JointDimReduction(d.y, d.a, d.b).fit(rank=1)
        hits += res.association_test(99, seed=s).pvalue <= 0.05
    assert hits >= 8


def test_categorical_and_multivariate_responses():
    rng = np.random.default_rng(7)
    m = 60
    a, b = rng.normal(size=(m, 80)), rng.normal(size=(m, 10))
    t = a[:, 0] * b[:, 0]
    cls = pd.Series(np.array(["lo", "mid", "hi"])[np.digitize(t, [-0.4, 0.4])], dtype="category")
    res = jdr.JointDimReduction(cls, a, b).fit(rank=1)
    assert res.association_test(99, seed=0).pvalue <= 0.05
    shuffled = pd.Series(cls.to_numpy()[rng.permutation(m)], dtype="category")
    p0 = jdr.JointDimReduction(shuffled, a, b).fit(rank=1).association_test(99, seed=0).pvalue
    assert 0 < p0 <= 1
    m = 120
    a, b = rng.normal(size=(m, 100)), rng.normal(size=(m, 20))
    ymv = pd.DataFrame({"y1": a[:, 0] * b[:, 0], "y2": a[:, 1] * b[:, 1]})
    res = jdr.JointDimReduction(ymv, a, b).fit(rank=1)
    tm = res.association_test(99, seed=0, statistic="dense")
    assert tm.statistic == pytest.approx(np.sum(res.estimate.coef_tensor ** 2), rel=1e-8)
    assert tm.pvalue <= 0.05
    assert res.association_test(99, seed=0).pvalue <= 0.05


def test_invariant_to_rescaling_columns():
    d = _wide(1)
    scale_a = np.exp(np.random.default_rng(0).normal(size=120))
    scale_b = np.exp(np.random.default_rng(1).normal(size=21))
    t0 = jdr.JointDimReduction(d.y, d.a, d.b).fit(rank=1).association_test(99, seed=5)
    t1 = jdr.JointDimReduction(d.y, d.a * scale_a + 3.0, d.b * scale_b).fit(
        rank=1).association_test(99, seed=5)
    assert t1.statistic == pytest.approx(t0.statistic, rel=1e-8)
    assert t1.pvalue == t0.pvalue


def test_refusals():
    small = jdr.simulate.bilinear(100, 5, 4, 1, seed=0)
    z = np.random.default_rng(0).normal(size=(100, 1))
    res = jdr.JointDimReduction(small.y, small.a, small.b, covariates=z).fit(rank=1)
    with pytest.raises(ValueError, match="covariates"):
        res.association_test(9)
    d = _wide()
    res = jdr.JointDimReduction(d.y, d.a, d.b).fit(rank=1)
    with pytest.raises(ValueError, match="n_perm"):
        res.association_test(0)
    with pytest.raises(RowsNotInMemoryError, match="association_test"):
        res.remove_data().association_test(9)


def test_summary_shows_it_at_p_much_larger_than_n():
    d = _wide()
    res = jdr.JointDimReduction(d.y, d.a, d.b).fit(rank=1)
    text = str(res.summary())
    want = res.association_test(policy.ASSOCIATION_PERMUTATIONS, seed=policy.ASSOCIATION_SEED)
    # the result line: the null, the test and its p-value (the statistic T and
    # the seed are explained on the guide page "Reading the summary")
    assert "No association p:" in text and (
        f"No association (H0: y independent of (a, b); exact permutation test of "
        f"interactions and main effects): p = {format_pvalue(want.pvalue)}") in " ".join(
            text.split())
    assert "T = sum_j s_j^2 / var(y)" in " ".join(GUIDE.split())
    assert "descriptive only" in text
    assert text == str(res.summary())  # deterministic
    small = jdr.simulate.bilinear(300, 5, 4, 1, seed=0)
    text = str(jdr.JointDimReduction(small.y, small.a, small.b).fit(rank=1).summary())
    assert "No association" not in text and "descriptive only" not in text


def test_summary_says_how_to_run_it_above_the_row_limit(monkeypatch):
    monkeypatch.setattr(policy, "ASSOCIATION_SUMMARY_MAX_ROWS", 10)
    d = _wide()
    text = str(jdr.JointDimReduction(d.y, d.a, d.b).fit(rank=1).summary())
    assert "results.association_test(n_perm=199" in text and "descriptive only" in text


def test_combined_main_parts_are_the_blocks_own_first_moments(monkeypatch):
    """Under the joint estimator the fit saw each block's residual on the
    other; the combined statistic's main-effect parts are the first moments of
    the blocks themselves in the per-block fit's coordinates, so they equal
    the per-block fit's parts (observed and permuted, same seed)."""
    from jdr_stats.inference import association

    seen: list[tuple[np.ndarray, np.ndarray]] = []
    inner = association._max_z

    def spy(observed, null, **kw):  # type: ignore[no-untyped-def]
        seen.append((observed, null))
        return inner(observed, null, **kw)

    monkeypatch.setattr(association, "_max_z", spy)
    rng = np.random.default_rng(9)
    m = 40
    g = rng.permutation(np.repeat([0, 1], 20))
    common = rng.normal(size=(m, 1))
    a = rng.normal(size=(m, 60)) + common + 1.2 * g[:, None] * (np.arange(60) < 8)
    b = rng.normal(size=(m, 12)) + common + 1.2 * g[:, None] * (np.arange(12) < 4)
    y = pd.Categorical(np.where(g == 1, "ko", "wt"))
    joint = jdr.JointDimReduction(y, a, b).fit(1)
    per_block = jdr.JointDimReduction(y, a, b).fit(1, independent_blocks=True)
    pj = joint.association_test(99, seed=2).pvalue
    pb = per_block.association_test(99, seed=2).pvalue
    (oj, nj), (ob, nb) = seen
    np.testing.assert_allclose(oj[1:], ob[1:], rtol=1e-10)
    np.testing.assert_allclose(nj[:, 1:], nb[:, 1:], rtol=1e-10)
    assert pj <= 0.05 and pb <= 0.05
    assert joint.association_test(99, seed=2, statistic="dense").pvalue > 0.2  # blind
