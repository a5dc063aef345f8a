"""Wide blocks: fit(whitening=...), the regularised whitening and
its dual (m x m) route, and what inference does after it."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jdr_stats as jdr
from jdr_stats.core._linalg import block_moments, oas_shrinkage, shrunk_whitening
from jdr_stats.core._moments_engine import one_pass_block_moments
from jdr_stats.diagnostics import block_stats
from jdr_stats.estimation._estimate import (
    block_whitening_pair,
    choose_whitening,
    estimate,
)
from jdr_stats.metrics import principal_angles

from .strategies import column_recoding

#: The guide page the summary's notes point to for their explanations.
GUIDE = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "summary.md").read_text()


def ar1_rows(rng, m, n, rho=0.5):
    e = rng.standard_normal((m, n))
    x = np.empty_like(e)
    x[:, 0] = e[:, 0]
    for j in range(1, n):
        x[:, j] = rho * x[:, j - 1] + np.sqrt(1 - rho**2) * e[:, j]
    return x


def sparse_data(seed, m, n, s=3, rho=0.5, c=3.0):
    rng = np.random.default_rng(seed)
    a, b = ar1_rows(rng, m, n, rho), ar1_rows(rng, m, n, rho)
    u, v = np.zeros(n), np.zeros(n)
    u[rng.choice(n, s, replace=False)] = rng.standard_normal(s)
    v[rng.choice(n, s, replace=False)] = rng.standard_normal(s)
    y = c * (a @ u) * (b @ v) / np.sqrt((a @ u).var() * (b @ v).var()) + rng.standard_normal(m)
    return y, a, b, u, v


def max_angle(x, y):
    return float(np.max(principal_angles(np.asarray(x), np.asarray(y))))


@pytest.fixture(scope="module")
def wide():
    """n1 = 90, n2 = 70 columns for m = 60 rows."""
    rng = np.random.default_rng(3)
    a = ar1_rows(rng, 60, 90) * rng.uniform(0.1, 10, 90)
    b = ar1_rows(rng, 60, 70)
    y = a[:, 0] * b[:, 0] + 0.5 * rng.standard_normal(60)
    return y, a, b


# -- the whitening kinds ----------------------------------------------------------
def test_sample_and_none_are_the_old_standardize_bit_for_bit():
    sim = jdr.simulate.bilinear(500, 6, 5, 2, seed=0)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    # the per-block fit's moments of rows in memory (estimation._estimate.fit_moments)
    mom = one_pass_block_moments(sim.y, sim.a, sim.b)
    for kind, std in (("sample", True), ("none", False)):
        # the old standardize bit was the paper's per-block estimator's
        new = model.fit(2, whitening=kind, independent_blocks=True)
        with pytest.warns(FutureWarning, match=f'use whitening="{kind}"'):
            old = model.fit(2, standardize=std, independent_blocks=True)
        ref = estimate(mom, 2, standardize=std)
        for res in (new, old):
            assert res.whitening == kind and res.standardize is std
            np.testing.assert_array_equal(res.estimate.dir_a, ref.dir_a)
            np.testing.assert_array_equal(res.estimate.dir_b, ref.dir_b)
            np.testing.assert_array_equal(res.singular_values, ref.singular_values)
    # narrow data: the default is the sample whitening, same numbers
    default = model.fit(2)
    assert default.whitening == "sample"
    np.testing.assert_array_equal(default.estimate.dir_a, model.fit(2, whitening="sample")
                                  .estimate.dir_a)


def test_bad_whitening_arguments(wide):
    y, a, b = wide
    model = jdr.JointDimReduction(y, a, b)
    with pytest.raises(ValueError, match=r"whitening must be one of .*got 'oas'"):
        model.fit(1, whitening="oas")
    with pytest.raises(ValueError, match="give whitening or the deprecated standardize"):
        model.fit(1, whitening="diagonal", standardize=True)
    with pytest.raises(ValueError, match=r'whitening="sample" needs at least 92 rows for '
                                         r'exog_a \(90 columns.*got 60'):
        model.fit(1, whitening="sample")


def test_auto_rule_threshold():
    m = 1000
    n_edge = int(jdr.policy.AUTO_SAMPLE_MAX_RATIO * m)
    assert choose_whitening("auto", m, n_edge, 3).name == "sample"
    above = choose_whitening("auto", m, 3, n_edge + 1)
    assert above.name == "shrinkage" and "> 0.05" in above.reason
    assert above.inputs["ratio"] == (n_edge + 1) / m
    assert choose_whitening("diagonal", m, 5, 5).reason == "given"


# -- the regularised whitening ----------------------------------------------------
@pytest.mark.parametrize("m,n", [(40, 100), (200, 30)])
def test_shrunk_whitening_dual_route_matches_covariance_route(m, n):
    rng = np.random.default_rng(m + n)
    x = ar1_rows(rng, m, n, 0.6) * rng.uniform(0.01, 100, n) + rng.normal(size=n)
    w = rng.uniform(0.5, 2.0, m)
    mom = block_moments(rng.normal(size=m), x, x[:, :2], w)
    names = [f"x{j}" for j in range(n)]
    by_cov = shrunk_whitening(mom.mean_a, mom.cov_a, m, "shrinkage", "exog_a", names)
    by_rows = shrunk_whitening(mom.mean_a, None, m, "shrinkage", "exog_a", names,
                               rows=x, weights=w)
    assert 0 < by_cov.shrinkage < 1
    assert by_rows.shrinkage == pytest.approx(by_cov.shrinkage, rel=1e-10)
    scale = np.abs(by_cov.cov).max()
    np.testing.assert_allclose(by_rows.cov, by_cov.cov, atol=1e-10 * scale)
    # C^{-1} Sigma C^{-T} = I, and diag(Sigma^{-1}) without forming the inverse
    for wh in (by_cov, by_rows):
        white = wh.solve(wh.solve(wh.cov).T)
        np.testing.assert_allclose(white, np.eye(n), atol=1e-8)
        np.testing.assert_allclose(wh.precision_diag(), np.diag(np.linalg.inv(wh.cov)),
                                   rtol=1e-8)
        np.testing.assert_allclose(wh.solve_t(np.eye(n)), wh.solve(np.eye(n)).T, atol=1e-12)


def test_oas_intensity_matches_scikit_learn_on_the_standardised_block():
    from sklearn.covariance import oas

    rng = np.random.default_rng(5)
    for m, n in ((30, 80), (300, 40)):
        x = ar1_rows(rng, m, n, 0.4)
        z = (x - x.mean(0)) / x.std(0)
        corr = z.T @ z / m
        assert oas_shrinkage(float(np.sum(corr**2)), n, m) == pytest.approx(oas(z)[1],
                                                                            rel=1e-10)
    assert oas_shrinkage(3.0, 3, 10) == 1.0  # R = I: nothing to estimate


def test_diagonal_whitening_is_the_standard_deviations(wide):
    y, a, b = wide
    res = jdr.JointDimReduction(y, a, b).fit(1, whitening="diagonal")
    z_a, z_b = a / a.std(0), b / b.std(0)
    ref = jdr.JointDimReduction(y, z_a, z_b).fit(1, whitening="none")
    back = res.estimate.dir_a * a.std(0)[:, None]
    assert max_angle(back, ref.estimate.dir_a) < 1e-8


# -- n > m ------------------------------------------------------------------------
def test_wide_fit_runs_and_reports(wide):
    y, a, b = wide
    res = jdr.JointDimReduction(y, a, b).fit(1)
    assert res.whitening == "shrinkage" and res.directions_a.shape == (90, 1)
    assert np.isfinite(res.singular_values).all()
    text = " ".join(str(res.summary()).split())
    assert "Whitening:" in text and "shrinkage" in text and "OAS" in text
    # what the whitening implies for the tests: the long notes
    full = " ".join(str(res.summary(notes="full")).split())
    assert "Rank and support tests use the sample covariance" in full
    assert res.to_dict()["whitening"] == "shrinkage"
    sparse = jdr.JointDimReduction(y, a, b).fit(1, sparsity=(4, 4))
    assert len(sparse.support_a) == 4 and len(sparse.support_b) == 4
    for kind in ("diagonal", "none"):
        assert jdr.JointDimReduction(y, a, b).fit(1, whitening=kind).whitening == kind


def test_wide_fit_from_moments_equals_rows(wide):
    """The streamed path (covariances, eigen decomposition) and the rows in
    memory (m x m Gram matrix) give the same subspaces."""
    y, a, b = wide
    rows = jdr.JointDimReduction(y, a, b).fit(2)
    mom = jdr.Moments.from_arrays(y[:30], a[:30], b[:30]) + jdr.Moments.from_arrays(
        y[30:], a[30:], b[30:])
    sums = jdr.JointDimReduction.from_moments(mom).fit(2)
    assert sums.whitening == "shrinkage"
    assert max_angle(rows.directions_a, sums.directions_a) < 1e-7
    assert max_angle(rows.directions_b, sums.directions_b) < 1e-7


def test_tests_refuse_at_n_above_m_naming_what_works(wide):
    y, a, b = wide
    model = jdr.JointDimReduction(y, a, b)
    with pytest.raises(ValueError, match=r'fit\(rank="auto"\) runs tests that whiten with the '
                                         r"sample covariance, singular with 60 rows for 90 "
                                         r"columns.*= 92\); fit a given rank"):
        model.fit("auto")
    with pytest.raises(ValueError, match=r'sparsity="auto" runs tests.*sparsity=\(s1, s2\)'):
        model.fit(1, sparsity="auto")


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_regularised_fits_are_unit_free_and_order_free(data):
    y, a, b, _, _ = sparse_data(11, 50, 40)
    scale, shift, perm = column_recoding(data.draw, 40)
    rows = data.draw(st.permutations(range(50)))
    kind = data.draw(st.sampled_from(["shrinkage", "diagonal"]))
    sparsity = data.draw(st.sampled_from([None, (3, 3)]))
    ref = jdr.JointDimReduction(y, a, b).fit(1, whitening=kind, sparsity=sparsity)
    a2 = (a * scale + shift)[:, perm]
    res = jdr.JointDimReduction(y[rows], a2[rows], b[rows]).fit(
        1, whitening=kind, sparsity=sparsity)
    back = np.empty_like(res.estimate.dir_a)
    back[perm] = res.estimate.dir_a * scale[perm][:, None]
    assert max_angle(back, ref.estimate.dir_a) < 1e-6
    assert max_angle(res.estimate.dir_b, ref.estimate.dir_b) < 1e-6
    if sparsity is not None:
        assert sorted(np.array(perm)[res.estimate.rows]) == sorted(ref.estimate.rows)


# -- inference after a regularised whitening --------------------------------------
def test_rank_tests_use_the_sample_whitening():
    y, a, b, _, _ = sparse_data(2, 150, 10)
    model = jdr.JointDimReduction(y, a, b)
    shrunk = model.fit(1)
    assert shrunk.whitening == "shrinkage"
    sample = model.fit(1, whitening="sample")
    t1, t2 = shrunk.rank_tests("chi2").table, sample.rank_tests("chi2").table
    np.testing.assert_array_equal(t1["pvalue"], t2["pvalue"])


def test_bootstrap_re_estimates_the_shrinkage_per_replicate(monkeypatch):
    import jdr_stats.inference._replicates as rep

    y, a, b, _, _ = sparse_data(4, 200, 20)
    # the per-block shrinkage (spied below); the joint estimator re-estimates
    # its joint whitening per replicate from the reweighted rows instead
    # (test_joint.py::test_bootstrap_refits_the_residuals_in_every_replicate)
    res = jdr.JointDimReduction(y, a, b).fit(1, independent_blocks=True)
    assert res.whitening == "shrinkage"
    seen = []
    real = rep.block_whitening_pair

    def spy(kind, mom, *args, **kw):
        out = real(kind, mom, *args, **kw)
        seen.append(out[0].shrinkage)
        return out

    monkeypatch.setattr(rep, "block_whitening_pair", spy)
    boot = res.bootstrap(n_boot=40, seed=0)
    assert boot.n_boot == 40 and len(seen) == 40
    assert len(set(seen)) > 30  # the intensity varies with the replicate
    upper = boot.conf_int().loc[("a", "largest angle"), "upper"]
    assert 0 < upper < 90


def test_shrinkage_beats_the_sample_whitening_at_half_width():
    """Seeded check of the study's finding at n/m = 0.5, AR(1) 0.5, sparse
    s = 3: the mean largest angle with shrinkage is below the sample
    whitening's by more than three Monte Carlo SE of the paired difference."""
    diffs = []
    for seed in range(12):
        y, a, b, u, _ = sparse_data(100 + seed, 160, 80)
        model = jdr.JointDimReduction(y, a, b)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # the per-block estimator (the study's): its sample whitening
            # runs at n/m = 0.5, the joint one's needs n1 + n2 + 2 rows
            ang = [max_angle(model.fit(1, whitening=k, sparsity=(3, 3),
                                       independent_blocks=True).directions_a, u)
                   for k in ("sample", "shrinkage")]
        diffs.append(ang[0] - ang[1])
    diffs = np.degrees(diffs)
    se = diffs.std(ddof=1) / np.sqrt(len(diffs))
    assert diffs.mean() > 3 * se


def test_block_whitening_pair_none_and_sample():
    sim = jdr.simulate.bilinear(300, 4, 3, 1, seed=1)
    mom = block_moments(sim.y, sim.a, sim.b)
    assert block_whitening_pair("none", mom, list("abcd"), list("xyz")) is None
    wa, _ = block_whitening_pair("sample", mom, list("abcd"), list("xyz"))
    assert wa.cov is mom.cov_a


def test_cross_moments_equal_the_engine():
    from jdr_stats.estimation._estimate import cross_moments

    rng = np.random.default_rng(8)
    y, a, b = rng.normal(size=30), rng.normal(size=(30, 50)) + 3, rng.normal(size=(30, 40))
    for w in (None, rng.uniform(0.2, 3, 30)):
        lean, full = cross_moments(y, a, b, w), block_moments(y, a, b, w)
        assert not lean.has_covariances and np.isnan(lean.cov_a).all()
        for name in ("mean_y", "var_y", "mean_a", "mean_b", "cross"):
            ref = np.asarray(getattr(full, name))
            np.testing.assert_allclose(getattr(lean, name), ref,
                                       atol=1e-12 * max(1.0, np.abs(ref).max()))


def test_wide_fit_without_block_covariances_still_reports(wide, tmp_path):
    """At n > m the fit forms only the cross moment; the results' other
    attributes (loadings, premises, transform, remove_data, save/load) work."""
    y, a, b = wide
    # the per-block wide fit skips the block covariances; the joint one needs
    # the regularised joint covariance and carries its partial covariances
    assert jdr.JointDimReduction(y, a, b).fit(1, sparsity=(3, 3)).moments.has_covariances
    res = jdr.JointDimReduction(y, a, b).fit(1, sparsity=(3, 3), independent_blocks=True)
    assert not res.moments.has_covariances
    assert res.loadings_a.shape == (90, 1) and np.isfinite(res.loadings_a).all()
    assert res.transform(a[:4], b[:4]).shape == (4, 2)
    small = res.remove_data()
    np.testing.assert_array_equal(small.transform(a[:4], b[:4]), res.transform(a[:4], b[:4]))
    res.save(tmp_path / "fit.pickle")
    back = jdr.load(tmp_path / "fit.pickle")
    assert back.whitening == "shrinkage" and back.support_a == res.support_a


def test_support_tests_refuse_above_the_measured_width_naming_what_works(monkeypatch):
    """The support tests' FDR was not controlled at n/m = 0.2 (study_wide), so
    fit(sparsity="auto") and select_support refuse above
    policy.SUPPORT_TESTS_MAX_RATIO = 0.1; a fixed sparsity still fits."""
    from jdr_stats import config, policy

    y, a, b, _, _ = sparse_data(6, 200, 30, c=5.0)
    model = jdr.JointDimReduction(y, a, b)
    pattern = (r"max\(n1, n2\)/m = 0.15 > 0.1; .*sparsity=\(s1, s2\).*at least 300 rows"
               r".*SUPPORT_TESTS_MAX_RATIO")
    with pytest.raises(ValueError, match=r'sparsity="auto" runs the support tests.*' + pattern):
        model.fit(1, sparsity="auto", seed=0)
    with pytest.raises(ValueError, match=r"select_support runs the support tests.*" + pattern):
        model.select_support(rank=1, seed=0)
    assert model.fit(1, sparsity=(3, 3)).support_a is not None
    monkeypatch.setattr(policy, "SUPPORT_TESTS_MAX_RATIO", 0.2)  # read when used
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert model.fit(1, sparsity="auto", seed=0).support_tests is not None


@pytest.mark.slow
def test_default_within_ten_percent_of_the_best_fixed_choice_study_replay():
    """One setting of studies/study_wide.py replayed (n/m = 0.5, AR(1) 0.5,
    sparse s = 3, signal 3, m = 300, 30 replications): the default's mean
    largest angle is within 10 % of the best fixed whitening's, allowing two
    Monte Carlo SE."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "studies" / "study_wide.py"
    spec = importlib.util.spec_from_file_location("study_wide", path)
    assert spec is not None and spec.loader is not None
    study_wide = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study_wide)

    rng = np.random.default_rng(np.random.SeedSequence(2020))
    reps = [study_wide.one_rep(rng, 300, 150, 0.5, 1, 3, 3.0) for _ in range(30)]
    means = {k: np.mean([r[k] for r in reps]) for k in study_wide.KINDS}
    default = np.array([r["default"] for r in reps])
    se = default.std(ddof=1) / np.sqrt(default.size)
    assert default.mean() <= 1.10 * min(means.values()) + 2 * se
    assert means["shrinkage"] < means["sample"] - 10  # the sample whitening fails there


def test_wide_two_column_response_runs_with_shrinkage():
    rng = np.random.default_rng(12)
    a, b = rng.standard_normal((80, 120)), rng.standard_normal((80, 100))
    y = np.column_stack([a[:, 0] * b[:, 1], a[:, 0] * b[:, 1] ** 2]) + rng.standard_normal((80, 2))
    res = jdr.JointDimReduction(y, a, b).fit(1)
    assert res.whitening == "shrinkage" and np.isfinite(res.estimate.dir_a).all()


def test_summary_of_a_wide_fit_never_forms_the_blocks_covariances(monkeypatch):
    """n1 + n2 >= m: per-SD loadings from the rows, condition numbers from the
    m x n standardised rows (n/a at n >= m), canonical correlations and
    Bartlett n/a; the same SDs and condition number as the covariance route."""
    from jdr_stats import diagnostics

    rng = np.random.default_rng(3)
    m, n1, n2 = 60, 90, 40
    y, a, b = rng.standard_normal(m), rng.standard_normal((m, n1)), rng.standard_normal((m, n2))
    a[:, 1] *= 1000.0
    b = b @ np.triu(np.ones((n2, n2))) * 0.1  # correlated block b, n2 < m
    ca, cb, _ = diagnostics.block_covariances(jdr.JointDimReduction(y, a, b).data)

    def refuse(data):
        raise AssertionError("block_covariances called for a wide fit")

    monkeypatch.setattr(diagnostics, "block_covariances", refuse)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = jdr.JointDimReduction(y, a, b).fit(1)
        text = str(res.summary())
    sd_a, sd_b, prem = res._block_stats
    np.testing.assert_allclose(sd_a, np.sqrt(np.diag(ca)), rtol=1e-12)
    np.testing.assert_allclose(sd_b, np.sqrt(np.diag(cb)), rtol=1e-12)
    assert np.isnan(prem.condition_a)
    np.testing.assert_allclose(prem.condition_b, diagnostics.condition_number(cb), rtol=1e-6)
    table = prem.table
    assert table.loc["largest cross-block canonical corr.", "value"] == "n/a (n1 + n2 >= m)"
    assert table.loc["Bartlett test of independence, p", "value"] == "n/a (n1 + n2 >= m)"
    assert table.loc["log10 condition number a (corr.)", "value"] == "n/a (n1 >= m)"
    assert table.loc["log10 condition number a (corr.)", "ok"] is None
    assert not any("collinear" in msg for msg in prem.messages)
    assert ("Not checked (undefined at n1 + n2 >= m): the blocks' independence, block a's "
            "conditioning") in " ".join(text.split())
    assert "n1 + n2 = 130 >= m = 60" in prem.remarks[0]  # the numbers in res.diagnostics
    load = np.asarray(res.loadings_a)[:, 0]
    raw = np.asarray(res.directions_a)[:, 0] * np.sqrt(np.diag(ca))
    np.testing.assert_allclose(load, raw / np.max(np.abs(raw)), rtol=1e-10, atol=1e-12)
    assert res.remove_data().summary() is not None


def test_rank_tests_and_bootstrap_say_where_they_were_measured_off():
    """Above policy.RANK_TESTS_MAX_RATIO the small-sample premise (m < n1 n2,
    as in every measured cell) says the default rank test's references are not
    derived there and what it does beyond d/m = 5 (study_width_both.txt), and
    from n/m = 0.05 the summary gives the bootstrap's caveat (study_wide);
    a narrow fit says neither."""
    from jdr_stats.exceptions import AssumptionWarning

    rng = np.random.default_rng(4)
    m = 200
    y, a, b = rng.standard_normal(m), rng.standard_normal((m, 30)), rng.standard_normal((m, 20))
    res = jdr.JointDimReduction(y, a, b).fit(1)  # m < n1 n2: the small-sample message
    msgs = " ".join(res.diagnostics.messages)
    assert "references are not derived at this width" in msgs
    assert "larger of two p-values" in msgs
    with pytest.warns(AssumptionWarning, match=r"max\(n1, n2\)/m = 0.15 > 0.1: the robust test"):
        res.rank_tests(max_rank=1)
    text = " ".join(str(res.summary(notes="full")).split()).replace("under- ", "under-")
    assert "its angle bound can under-cover at this width (study_wide)" in text
    assert "under-cover with few rows and correlated blocks" in " ".join(GUIDE.split())
    narrow = jdr.JointDimReduction(y, a[:, :5], b[:, :5]).fit(1)
    assert "under-cover" not in str(narrow.summary())
    assert not any("conservative" in msg for msg in narrow.diagnostics.messages)


@settings(max_examples=10, deadline=None)
@given(st.data())
def test_wide_premises_and_loadings_are_unit_free_and_order_free(data):
    """n1 + n2 >= m: rescaling or shifting columns and reordering rows leave
    the per-SD loadings and the condition numbers unchanged."""
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    m, n1, n2 = 40, 30, 25
    y, a, b = rng.standard_normal(m), rng.standard_normal((m, n1)), rng.standard_normal((m, n2))
    scale = np.exp(rng.uniform(-3, 3, n2))
    perm = rng.permutation(m)
    fits = []
    for yy, aa, bb in ((y, a, b), (y[perm], a[perm] + 5.0, b[perm] * scale)):
        sd_a, sd_b, prem = block_stats(jdr.JointDimReduction(yy, aa, bb).data, rank=1)
        fits.append((sd_a, sd_b, prem))
    (sa0, sd0, p0), (sa1, sd1, p1) = fits
    np.testing.assert_allclose(sa1, sa0, rtol=1e-10)
    np.testing.assert_allclose(sd1, sd0 * scale, rtol=1e-10)
    np.testing.assert_allclose(p1.condition_b, p0.condition_b, rtol=1e-8)
    assert p0.wide and p1.wide and np.isnan(p0.condition_a) == np.isnan(p1.condition_a)


def test_module_level_select_support_refuses_at_width_too():
    # The guard lives in select_support itself, so the function reached
    # without the model (jdr.select_support) refuses like the model's method.
    rng = np.random.default_rng(5)
    m, n = 200, 30  # max(n1, n2) / m = 0.15 > SUPPORT_TESTS_MAX_RATIO
    a, b = rng.standard_normal((m, n)), rng.standard_normal((m, n))
    y = a[:, 0] * b[:, 0] + rng.standard_normal(m)
    model = jdr.JointDimReduction(y, a, b)
    with pytest.raises(ValueError, match="SUPPORT_TESTS_MAX_RATIO"):
        jdr.select_support(model.data, rank=1, seed=0)


def test_bootstrap_runs_at_n_above_m_in_the_fits_regularised_metric():
    """Issue 36, item 1: 120 + 21 columns on 40 rows (shrinkage) bootstraps;
    its angles are measured in the fit's regularised covariance, which equals
    the dense Cholesky metric of that covariance."""
    from scipy.linalg import subspace_angles

    from jdr_stats.inference._metric import covariance_factors

    sim = jdr.simulate.bilinear(40, 120, 21, 1, seed=0)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    assert res.whitening == "shrinkage"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jdr.exceptions.JDRWarning)
        boot = res.bootstrap(n_boot=19, seed=1)
    assert boot.angles_a.shape == (19, 1) and np.isfinite(boot.angles_a).all()
    ua, _ = covariance_factors(res.model.data, res.moments, "shrinkage", res._whitening)
    wa = res._whitening.maps[0]
    rng = np.random.default_rng(0)
    u1, u2 = rng.standard_normal((2, 120, 2))
    chol = np.linalg.cholesky(wa.cov)
    np.testing.assert_allclose(subspace_angles(ua(u1), ua(u2)),
                               subspace_angles(chol.T @ u1, chol.T @ u2), atol=1e-10)


def test_bootstrap_refuses_before_any_replicate_without_a_metric(monkeypatch):
    """whitening="none" at n >= m: no nonsingular covariance to measure the
    angles in; refused before the first replicate, naming what works."""
    import jdr_stats.inference._replicates as reps

    sim = jdr.simulate.bilinear(30, 40, 5, 1, seed=0)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1, whitening="none")

    def no_replicates(*args, **kwargs):  # pragma: no cover - must not be reached
        raise AssertionError("a replicate ran before the refusal")

    monkeypatch.setattr(reps, "_fill", no_replicates)
    with pytest.raises(ValueError, match=r"exog_a has 40 columns and only 30 rows.*"
                                         r"whitening='shrinkage' or 'diagonal'"):
        res.bootstrap(n_boot=9, seed=1)
