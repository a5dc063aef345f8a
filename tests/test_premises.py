"""Per-SD loadings, premise diagnostics and the weak-gap advice."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats import diagnostics as dg
from jdr_stats.exceptions import AssumptionWarning, WeakGapWarning

A_DIAB = ["age", "sex", "bmi", "bp"]
B_DIAB = ["s1", "s2", "s3", "s4", "s5", "s6"]


@pytest.fixture(scope="module")
def diabetes():
    datasets = pytest.importorskip("sklearn.datasets")
    return datasets.load_diabetes(scaled=False, as_frame=True).frame


@pytest.fixture(scope="module")
def fair():
    sm = pytest.importorskip("statsmodels.api")
    return sm.datasets.fair.load_pandas().data


# -- loadings (item 4) ----------------------------------------------------------
def test_per_sd_loadings_compare_variables_on_diabetes(diabetes):
    # the premise checks of the paper's per-block estimator (independent_blocks=True)
    d = diabetes
    res = jdr.JointDimReduction(d.target, d[A_DIAB], d[B_DIAB]).fit(1, independent_blocks=True)
    raw, load = res.directions_a["dir1"], res.loadings_a["dir1"]
    # raw units: sex (coded 1/2) dominates; per SD: bmi leads
    assert raw.abs().idxmax() == "sex"
    assert load.abs().idxmax() == "bmi" and load["bmi"] == 1.0
    sd = d[A_DIAB].std(ddof=0)
    want = raw * sd / (raw * sd).abs().max()
    np.testing.assert_allclose(load.to_numpy(), want.to_numpy(), rtol=1e-12)
    text = str(res.summary())
    assert "per-SD loadings" in text and "summary(loadings='raw')" in text
    raw_text = str(res.summary(loadings="raw"))
    assert "raw directions" in raw_text
    with pytest.raises(ValueError, match="loadings must be \"sd\" or \"raw\"; got 'z'"):
        res.summary(loadings="z")


def test_loadings_do_not_depend_on_units(diabetes):
    d = diabetes
    res = jdr.JointDimReduction(d.target, d[A_DIAB], d[B_DIAB]).fit(2)
    scaled = d[A_DIAB] * [1000.0, 1.0, 0.01, 3.0]
    res2 = jdr.JointDimReduction(d.target, scaled, d[B_DIAB]).fit(2)
    tol = 1e-8
    np.testing.assert_allclose(res2.loadings_a, res.loadings_a, atol=tol)
    np.testing.assert_allclose(res2.loadings_b, res.loadings_b, atol=tol)
    assert not np.allclose(res2.directions_a, res.directions_a, atol=1e-3)


def test_whitened_directions_are_named_for_what_they_are():
    sim = jdr.simulate.bilinear(800, 4, 3, 1, seed=2)
    res = jdr.JointDimReduction(sim.y, sim.frame[["a0", "a1", "a2", "a3"]],
                                sim.frame[["b0", "b1", "b2"]]).fit(1)
    assert list(res.directions_a_whitened.index) == ["w1", "w2", "w3", "w4"]
    assert list(res.directions_b_whitened.index) == ["w1", "w2", "w3"]
    with pytest.warns(FutureWarning, match="directions_b_std is deprecated"):
        old = res.directions_b_std
    pd.testing.assert_frame_equal(old, res.directions_b_whitened)
    plain = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    assert isinstance(plain.loadings_a, np.ndarray) and plain.loadings_a.shape == (4, 1)


# -- diagnostics (item 5) -------------------------------------------------------
def test_canonical_correlations_and_condition_numbers():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((20000, 3))
    b = np.column_stack([0.6 * a[:, 0] + 0.8 * rng.standard_normal(20000),
                         rng.standard_normal(20000)])
    cc = dg.cross_canonical_correlations(a, b)
    assert abs(cc[0] - 0.6) < 0.02 and cc[1] < 0.03
    # invariant to an invertible recoding of a block
    g = rng.standard_normal((3, 3)) + 3 * np.eye(3)
    np.testing.assert_allclose(dg.cross_canonical_correlations(a @ g.T + 5, b * 7), cc,
                               atol=1e-10)
    assert dg.condition_number(np.diag([1.0, 1e6])) == 1.0  # scale-free: correlations
    assert dg.condition_number([[1.0, 1.0], [1.0, 1.0]]) == np.inf
    with pytest.raises(ValueError, match=r"cov_ab must be.*got \(3, 3\), \(2, 2\) and \(2, 3\)"):
        dg.premises(np.eye(3), np.eye(2), np.ones((2, 3)), nobs=10)


def test_independent_blocks_pass_and_correlated_blocks_warn():
    # the premise checks of the paper's per-block estimator (independent_blocks=True)
    sim = jdr.simulate.bilinear(1000, 6, 6, 1, seed=4)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto", independent_blocks=True)  # no warning
    assert res.diagnostics.ok and res.diagnostics.table["ok"].all()
    cor = jdr.simulate.bilinear(1000, 6, 6, 1, design="correlated", rho=0.6, seed=4)
    model = jdr.JointDimReduction(cor.y, cor.a, cor.b)
    with pytest.warns(AssumptionWarning, match=r"fit\(rank=\"auto\"\): the blocks are correlated"):
        res = model.fit("auto", independent_blocks=True)
    assert not res.diagnostics.ok and res.diagnostics.correlated
    assert abs(res.diagnostics.cross_correlations[0] - 0.6) < 0.08
    fixed = model.fit(1, independent_blocks=True)  # no p-value: no warning, but the summary says it
    text = " ".join(str(fixed.summary()).split())
    assert "Premises" in text and "CHECK: the blocks are correlated" in text
    with pytest.warns(AssumptionWarning, match="rank tests: the blocks are correlated"):
        fixed.rank_tests()


def test_small_sample_and_collinear_block_are_flagged():
    sim = jdr.simulate.bilinear(30, 6, 6, 1, seed=1)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    assert res.diagnostics.small_sample and not res.diagnostics.correlated
    # in a small sample the largest-root test replaces Bartlett's (independent
    # blocks: the largest canonical correlation, 0.72, is ordinary at this size)
    assert res.diagnostics.independence_test == "largest-root"
    assert res.diagnostics.independence_pvalue > 0.1
    assert "largest-root test of independence, p" in res.diagnostics.table.index
    with pytest.warns(AssumptionWarning, match=r"small sample: m = 30 rows for n1 n2 = 36"):
        res.rank_tests("chi2")
    big = jdr.simulate.bilinear(2000, 4, 3, 1, seed=1)
    a = big.a.copy()
    a[:, 3] = a[:, 2] + 1e-4 * a[:, 3]  # condition number about 4e8
    res = jdr.JointDimReduction(big.y, a, big.b).fit(1)
    assert res.diagnostics.condition_a > dg.MAX_CONDITION
    assert any("block a is nearly collinear" in m for m in res.diagnostics.messages)


def test_diagnostics_from_moments_and_after_remove_data():
    sim = jdr.simulate.bilinear(3000, 5, 4, 1, design="correlated", rho=0.5, seed=2)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    mom = jdr.Moments.from_arrays(sim.y, sim.a, sim.b)
    from_mom = jdr.JointDimReduction.from_moments(mom).fit(1)
    np.testing.assert_allclose(from_mom.diagnostics.cross_correlations,
                               res.diagnostics.cross_correlations, atol=1e-10)
    small = res.remove_data()
    np.testing.assert_allclose(small.loadings_a, res.loadings_a, atol=0)
    assert small.diagnostics.table.equals(res.diagnostics.table)


def test_before_after_on_real_data(diabetes, fair):
    # the premise checks of the paper's per-block estimator (independent_blocks=True)
    d = diabetes
    res = jdr.JointDimReduction(d.target, d[A_DIAB], d[B_DIAB]).fit(1, independent_blocks=True)
    assert res.diagnostics.cross_correlations[0] == pytest.approx(0.638, abs=1e-3)
    f = fair
    model = jdr.JointDimReduction(
        f.affairs, f[["age", "educ", "occupation", "religious"]],
        f[["rate_marriage", "yrs_married", "children", "occupation_husb"]])
    with pytest.warns(AssumptionWarning, match="canonical correlation 0.90"):
        model.fit("auto", independent_blocks=True)


# -- weak-gap advice (item 7b) --------------------------------------------------
def test_gap_advice_depends_on_the_case():
    assert "consider rank 2 if the rank tests support it" in dg.gap_advice([5, 4.8, 1, 0.9], 1, 1.5)
    assert "consider rank 1" in dg.gap_advice([5, 1, 0.9, 0.8], 2, 1.5)
    assert "no rank up to 3 is separated" in dg.gap_advice([1, 0.9, 0.85, 0.8], 1, 1.5)
    # below and above: the nearest smaller separated rank wins
    assert "consider rank 1" in dg.gap_advice([9, 3, 2.9, 1, 0.9], 3, 1.5)


def test_weak_gap_at_rank_one_never_advises_a_smaller_rank():
    # two directions of equal strength: s_1 / s_2 is about 1, s_2 / s_3 large
    sim = jdr.simulate.bilinear(2000, 6, 6, 2, strengths=[1.0, 1.0], seed=3)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        boot = res.bootstrap(n_boot=39, seed=0)
    msgs = [str(w.message) for w in rec if issubclass(w.category, WeakGapWarning)]
    assert len(msgs) == 1
    assert "smaller rank" not in msgs[0]
    assert "separate rank 2" in msgs[0] and "directions 1 and 2 are not separated" in msgs[0]
    text = " ".join(str(boot.summary()).split())
    assert "consider rank 2" in text and "smaller rank" not in text


def test_bootstrap_summary_states_the_metric():
    sim = jdr.simulate.bilinear(600, 4, 3, 1, seed=6)
    boot = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1).bootstrap(n_boot=39, seed=1)
    text = " ".join(str(boot.summary()).split())
    assert "in each block's covariance metric" in text
    # why the angles are free of the units: on the guide page the note points to
    assert "free of the units; guide page 'Reading the summary'" in text
    guide = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "summary.md").read_text()
    assert "canonical correlations between the two fits' reduced features" in " ".join(
        guide.split())


def test_to_dict_holds_loadings_and_premises():
    # the premise checks of the paper's per-block estimator (independent_blocks=True)
    import json

    sim = jdr.simulate.bilinear(800, 3, 2, 1, design="correlated", rho=0.6, seed=8)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1, independent_blocks=True)
    doc = json.loads(json.dumps(res.to_dict(), allow_nan=False))
    assert [r["variable"] for r in doc["loadings"]] == ["a0", "a1", "a2", "b0", "b1"]
    assert max(abs(r["dir1"]) for r in doc["loadings"] if r["block"] == "a") == 1.0
    prem = doc["premises"]
    assert prem["table"][0]["premise"] == "largest cross-block canonical corr."
    assert prem["table"][0]["ok"] is False
    assert prem["messages"][0].startswith("the blocks are correlated")

def test_detected_weak_dependence_is_remarked_not_called_all_hold():
    # the premise checks of the paper's per-block estimator (independent_blocks=True)
    # A large sample with a weak cross-block correlation: Bartlett rejects (its
    # row is not ok) while the correlation stays below the threshold, so no
    # warning; the summary must not say "All hold." next to a "no".
    rng = np.random.default_rng(3)
    m = 20000
    z = rng.standard_normal(m)
    a = rng.standard_normal((m, 3))
    b = rng.standard_normal((m, 3))
    a[:, 0] += 0.5 * z  # cross-block correlation 0.25 / 1.25 = 0.2
    b[:, 0] += 0.5 * z
    y = a[:, 1] * b[:, 1] + rng.standard_normal(m)
    res = jdr.JointDimReduction(y, a, b).fit(1, independent_blocks=True)
    d = res.diagnostics
    assert not d.messages
    assert not d.table.loc["Bartlett test of independence, p", "ok"]
    assert len(d.remarks) == 1 and "Bartlett" in d.remarks[0]
    text = " ".join(str(res.summary()).split())
    assert "All hold." not in text
    assert "Bartlett's test detects a dependence" in text


def test_largest_root_test_holds_its_level_and_flags_dependent_blocks():
    """In a small sample (m < n1 n2) the test of independent blocks is the
    largest-root test with Johnstone's Tracy-Widom approximation: its
    rejection rate at 5% over 400 independent Gaussian samples (m = 60,
    12 + 15 variables) lies in the two-sided band alpha +- (2.5 SE + 0.005);
    blocks sharing one latent factor (canonical correlation about 0.8) are
    flagged, in the table and the messages."""
    rng = np.random.default_rng(20261127)
    m, n1, n2, reps = 60, 12, 15, 400
    pvals = []
    for _ in range(reps):
        a, b = rng.standard_normal((m, n1)), rng.standard_normal((m, n2))
        cc = np.linalg.svd(np.linalg.qr(a - a.mean(0))[0].T @ np.linalg.qr(b - b.mean(0))[0],
                           compute_uv=False)
        pvals.append(dg._independence_pvalue(cc, m, n1, n2))
    rate = np.mean(np.array(pvals) <= 0.05)
    half = 2.5 * np.sqrt(0.05 * 0.95 / reps) + 0.005
    assert abs(rate - 0.05) <= half, rate
    # dependent blocks in a small sample: flagged, where Bartlett's test was not computed
    z = rng.standard_normal(m)
    a = rng.standard_normal((m, n1))
    b = rng.standard_normal((m, n2))
    a[:, 0] += 2 * z
    b[:, 0] += 2 * z
    y = a[:, 1] * b[:, 1] + rng.standard_normal(m)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AssumptionWarning)
        res = jdr.JointDimReduction(y, a, b).fit(1, independent_blocks=True)
    d = res.diagnostics
    assert d.small_sample and d.independence_test == "largest-root"
    assert d.cross_correlations[0] > 0.7 and d.independence_pvalue < 0.01
    assert d.correlated
    assert not d.table.loc["largest cross-block canonical corr.", "ok"]
    assert any("the blocks are correlated" in msg for msg in d.messages)
    # the edges: a shared column (correlation 1) rejects, no correlation does not
    assert dg._largest_root(1.0, m, n1, n2) == 0.0
    assert dg._largest_root(0.0, m, n1, n2) == 1.0
    assert np.isnan(dg._largest_root(0.5, 27, n1, n2))  # n1 + n2 >= m: undefined


def test_independence_test_counts_the_covariates_degrees_of_freedom():
    """With covariates partialled out of the blocks the canonical correlations
    are partial ones: the test of independence uses m - p_Z rows' degrees of
    freedom (Bartlett's and, in a small sample, the largest-root test)."""
    rng = np.random.default_rng(5)
    # m >= n1 n2; a small sample; m >= n1 n2 > m - p_Z (Bartlett's test, as the
    # table's label and small_sample say, with m - p_Z rows)
    for m, n in ((400, 4), (60, 10), (102, 10)):
        z = rng.standard_normal((m, 3))
        a = rng.standard_normal((m, n)) + z[:, :1]
        b = rng.standard_normal((m, n)) + z[:, 1:2]
        y = a[:, 0] * b[:, 0] + rng.standard_normal(m)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", AssumptionWarning)
            res = jdr.JointDimReduction(y, a, b, covariates=z).fit(1)
        d = res.diagnostics
        assert d.independence_test == ("Bartlett" if m >= n * n else "largest-root")
        want = dg._independence_pvalue(d.cross_correlations, m, n, n, n_covariates=3)
        if m >= n * n:
            assert want == dg._bartlett(d.cross_correlations, m - 3, n, n)
        assert d.independence_pvalue == pytest.approx(want, rel=1e-12)
        assert d.independence_pvalue != pytest.approx(
            dg._independence_pvalue(d.cross_correlations, m, n, n), rel=1e-6)
