"""Tests of the rank tests (jdr_stats.inference.rank_tests).

Statistical checks are reduced, seeded versions of
``studies/study_rank_tests.py``; tolerances are 3 Monte Carlo standard
errors of the simulated rejection rate.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import jdr_stats as jdr
from jdr_stats.exceptions import AssumptionWarning, RankSelectionWarning
from jdr_stats.inference import _rank_permutation as rp_mod
from jdr_stats.inference import _rank_stats as rs_mod
from jdr_stats.inference.chi2mix import weighted_chi2_sf
from jdr_stats.inference.rank_methods import RANK_METHODS, RowOptions
from jdr_stats.inference.rank_methods.general import general_weights
from jdr_stats.inference.rank_tests import RankTestResults, rank_tests

ALPHA = 0.05


def _band(reps: int, level: float = ALPHA, k: float = 3.0) -> tuple[float, float]:
    se = np.sqrt(level * (1 - level) / reps)
    return level - k * se, level + k * se


@pytest.fixture(scope="module")
def fit_r2():
    sim = jdr.simulate.bilinear(1500, 6, 5, 2, seed=7)
    return jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)


# -- the weighted chi-square tail ---------------------------------------------
@pytest.mark.parametrize("d", [1, 2, 5, 64])
def test_weighted_chi2_equal_weights_is_chi2(d):
    xs = np.array([0.3 * d, d, 2.0 * d + 6])
    for x in xs:
        p = weighted_chi2_sf(x, np.full(d, 2.5))  # scale 2.5: chi2 of x / 2.5
        assert abs(p - stats.chi2.sf(x / 2.5, d)) < 1e-8
        pb = weighted_chi2_sf(x, np.full(d, 2.5), method="bentler-xie")
        assert abs(pb - stats.chi2.sf(x / 2.5, d)) < 1e-12


def test_weighted_chi2_unequal_weights_monte_carlo():
    w = np.array([5.0, 1.0, 1.0, 0.5, 0.2, 0.1])
    rng = np.random.default_rng(11)
    n = 200_000
    z = (rng.standard_normal((n, w.size)) ** 2) @ w
    for x in (5.0, 20.0, 40.0):
        p_mc = np.mean(z > x)
        se = np.sqrt(p_mc * (1 - p_mc) / n)
        assert abs(weighted_chi2_sf(x, w) - p_mc) < 4 * se
    # the two-moment approximation is visibly off in the far tail here
    assert abs(weighted_chi2_sf(40.0, w, method="bentler-xie") - np.mean(z > 40.0)) > 0.001


def test_weighted_chi2_bad_input():
    with pytest.raises(ValueError, match="weights"):
        weighted_chi2_sf(1.0, np.array([-1.0, 2.0]))
    with pytest.raises(ValueError, match="weights"):
        weighted_chi2_sf(1.0, np.zeros(3))
    with pytest.raises(ValueError, match="method"):
        weighted_chi2_sf(1.0, np.ones(3), method="wood")
    assert weighted_chi2_sf(0.0, np.ones(3)) == 1.0
    assert weighted_chi2_sf(np.array([1.0, 2.0]), np.ones(3)).shape == (2,)


# -- the statistic and its pieces ---------------------------------------------
def test_statistic_is_tail_energy(fit_r2):
    out = fit_r2.rank_tests("chi2")
    s = fit_r2.singular_values
    m, var_y = fit_r2.nobs, fit_r2.moments.var_y
    expected = [m * np.sum(s[k:] ** 2) / var_y for k in range(5)]
    # Lambda_k is a tail sum: its error is a fraction of the total (k = 0)
    np.testing.assert_allclose(out.table["statistic"], expected, rtol=1e-10,
                               atol=1e-10 * max(expected))
    np.testing.assert_array_equal(out.table["df"], [(6 - k) * (5 - k) for k in range(5)])
    want_p = stats.chi2.sf(expected, out.table["df"])
    np.testing.assert_allclose(out.table["pvalue"], want_p, rtol=1e-12, atol=1e-12 * want_p.max())
    assert out.full and out.max_rank == 4
    assert out.select_rank(0.05) == 2
    assert isinstance(out.pvalues, pd.Series) and isinstance(out.statistics, pd.Series)


class _FixedPermutation:
    """Stands in for a Generator: returns one given permutation per row."""

    def __init__(self, perm):
        self.perm = perm

    def permuted(self, x, axis):
        return np.broadcast_to(self.perm, x.shape).copy()

    def permutation(self, m):
        assert m == len(self.perm)
        return self.perm.copy()


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_permutation_statistic_equals_refit(fit_r2, k):
    """The vectorised permuted statistic is the estimator refitted on the permuted data.

    ``_whiten(model.data, moments)`` whitens the model's own rows block by
    block: the per-block estimator's (``independent_blocks=True``), which the
    refit below must use too."""
    model = fit_r2.model
    fit_r2 = model.fit(2, independent_blocks=True)
    w = rs_mod._whiten(model.data, fit_r2.moments)
    m = model.nobs
    # identity permutation gives back the observed statistic
    work = rp_mod._PermutationBatch(w, k)  # one generator per permutation
    same = work([_FixedPermutation(np.arange(m))] * 2)
    np.testing.assert_allclose(same, w.statistic(k), rtol=1e-9)
    perm = np.random.default_rng(k).permutation(m)
    got = work([_FixedPermutation(perm)])[0]
    # brute force: rotate to (signal, complement) coordinates, move the
    # complement rows (row perm[i] goes to row i of the permuted data set... as
    # in the implementation: (y, signal) are permuted by perm), refit
    rot_a = w.a @ w.u
    rot_b = w.b @ w.v
    y = model.endog
    a_new = np.hstack([rot_a[perm, :k], rot_a[:, k:]])
    b_new = np.hstack([rot_b[perm, :k], rot_b[:, k:]])
    refit = jdr.JointDimReduction(y[perm], a_new, b_new).fit(1, independent_blocks=True)
    s = refit.singular_values
    np.testing.assert_allclose(got, m * np.sum(s[k:] ** 2) / refit.moments.var_y, rtol=1e-9)


def test_general_weights_near_one_under_normal_theory(fit_r2):
    w = rs_mod._whiten(fit_r2.model.data, fit_r2.moments)
    lam, tr1, tr2 = general_weights(w, 2)
    d = (6 - 2) * (5 - 2)
    assert lam.shape == (d,)
    # normal theory: Omega = E[y^2] I, so the weights are close to 1
    assert abs(tr1 / d - 1) < 0.15
    assert abs(lam.mean() - 1) < 0.15 and lam.std() < 0.3
    np.testing.assert_allclose(np.sum(lam), tr1, rtol=1e-10)


def test_general_trace_route_matches_exact_route(fit_r2, monkeypatch):
    w = rs_mod._whiten(fit_r2.model.data, fit_r2.moments)
    lam, tr1, tr2 = general_weights(w, 1)
    monkeypatch.setattr(jdr.policy, "MAX_EXACT_DIM", 0)
    monkeypatch.setattr(jdr.config, "CHUNK_FLOATS", 200_000)  # several row chunks
    none, tr1_b, tr2_b = general_weights(w, 1)
    assert none is None
    np.testing.assert_allclose([tr1_b, tr2_b], [tr1, tr2], rtol=1e-9)
    np.testing.assert_allclose(np.sum(lam**2), tr2, rtol=1e-9)
    out = fit_r2.rank_tests("general")
    assert any("Bentler-Xie" in n for n in out.notes)


def test_affine_invariance(fit_r2):
    """Tests depend on the data only through the whitened coordinates."""
    model = fit_r2.model
    rng = np.random.default_rng(3)
    ma = rng.standard_normal((6, 6)) + 3 * np.eye(6)
    mb = rng.standard_normal((5, 5)) + 3 * np.eye(5)
    other = jdr.JointDimReduction(
        3 * model.endog + 1, model.exog_a @ ma + 2.0, model.exog_b @ mb - 1.0
    ).fit(2)
    for method in ("chi2", "general"):
        t1 = fit_r2.rank_tests(method).table
        t2 = other.rank_tests(method).table
        np.testing.assert_allclose(t1["statistic"], t2["statistic"], rtol=1e-7,
                                   atol=1e-7 * t2["statistic"].abs().max())
        np.testing.assert_allclose(t1["pvalue"], t2["pvalue"], rtol=1e-6, atol=1e-12)
    p1 = fit_r2.rank_tests("permutation", max_rank=2, n_perm=49, seed=5).table
    p2 = other.rank_tests("permutation", max_rank=2, n_perm=49, seed=5).table
    np.testing.assert_allclose(p1["pvalue"], p2["pvalue"])


def test_permutation_reproducible(fit_r2):
    a = fit_r2.rank_tests("permutation", max_rank=2, n_perm=99, seed=1).table
    b = fit_r2.rank_tests("permutation", max_rank=2, n_perm=99, seed=1).table
    pd.testing.assert_frame_equal(a, b)
    assert a["pvalue"].iloc[0] == pytest.approx(1 / 100)
    assert (a["n_perm"] == 99).all()
    g = fit_r2.rank_tests("permutation", max_rank=2, n_perm=99, seed=np.random.default_rng(1))
    pd.testing.assert_frame_equal(a, g.table)


# -- reduced simulation studies -----------------------------------------------
def _null_pvalues(reps, seed, *, n_perm=0, design="gaussian", k=1, general=True):
    """p-values of H0: r = k for BILINEAR data with r = k (m = 600, n1 = 6, n2 = 5)."""
    rng = np.random.default_rng(seed)
    out = {"chi2": [], "general": [], "permutation": []}
    for _ in range(reps):
        sim = jdr.simulate.bilinear(600, 6, 5, k, design=design, seed=rng)
        model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
        w = rs_mod._whiten(model.data, model.moments())
        out["chi2"].append(RANK_METHODS["chi2"].row(w, k, RowOptions())[0]["pvalue"])
        if general:
            out["general"].append(RANK_METHODS["general"].row(w, k, RowOptions())[0]["pvalue"])
        if n_perm:
            opts = RowOptions(n_perm=n_perm, rng=rng)
            out["permutation"].append(RANK_METHODS["permutation"].row(w, k, opts)[0]["pvalue"])
    return {key: np.asarray(v) for key, v in out.items()}


def test_size_chi2_and_general_reduced():
    reps = 250
    pv = _null_pvalues(reps, 101)
    lo, hi = _band(reps)
    for method in ("chi2", "general"):
        size = np.mean(pv[method] <= ALPHA)
        assert lo <= size <= hi, (method, size)
    # the p-values are roughly uniform, not only at 5%
    assert stats.kstest(pv["chi2"], "uniform").pvalue > 0.001


def test_size_permutation_reduced():
    reps = 150
    pv = _null_pvalues(reps, 202, n_perm=39, general=False)
    lo, hi = _band(reps)
    size = np.mean(pv["permutation"] <= ALPHA)
    assert lo <= size <= hi, size


def test_general_holds_size_uniform_design_reduced():
    reps = 250
    pv = _null_pvalues(reps, 303, design="uniform")
    lo, hi = _band(reps)
    size = np.mean(pv["general"] <= ALPHA)
    assert lo <= size <= hi, size
    # normal theory is conservative there (never anti-conservative)
    assert np.mean(pv["chi2"] <= ALPHA) <= hi


def test_power_and_selection_reduced():
    rng = np.random.default_rng(404)
    reps = 40
    chosen, rej1 = [], []
    for _ in range(reps):
        sim = jdr.simulate.bilinear(1000, 6, 6, 2, seed=rng)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        out = rank_tests(res.model.data, res.moments, method="chi2", max_rank=3)
        rej1.append(out.table["pvalue"].iloc[1] <= ALPHA)
        chosen.append(out.select_rank(ALPHA))
    assert np.mean(rej1) >= 0.95
    # correct selection has probability about 1 - alpha = 0.95; 0.85 is 3 SE below
    assert np.mean(np.asarray(chosen) == 2) >= 0.85


# -- fit(rank="auto") and summaries ---------------------------------------------
def test_fit_auto_chooses_rank_and_reports_it(bilinear_small):
    sim = bilinear_small
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto")
    # the default is the robust test (it held its size on the battery)
    assert res.rank == 2 and res.rank_method == "robust"
    text = str(res.summary())
    assert "robust tests, alpha=0.05" in text
    assert "Rank tests (robust)" in text and "eff_df" in text
    res_w = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto", rank_method="wald")
    assert res_w.rank == 2 and "df_denom" in str(res_w.summary())
    res_c = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto", rank_method="chi2")
    assert res_c.rank == 2 and "Rank tests (chi2)" in str(res_c.summary())
    res_l = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto", rank_method="ladle", seed=0)
    assert res_l.rank == 2 and res_l.rank_method == "ladle"
    text_l = str(res_l.summary())
    assert "Ladle criterion" in text_l and "alpha" not in text_l
    assert re.search(r"Rank chosen by:\s+ladle \(bootstrap eigenvector variability, "
                     r"no test level\)", text_l)
    with pytest.raises(ValueError, match="rank_method must be one of"):
        jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto", rank_method="bogus")
    res_p = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(
        "auto", rank_method="permutation", alpha=0.01, seed=2
    )
    assert res_p.rank == 2
    assert "permutation tests, alpha=0.01" in str(res_p.summary())
    # the sequence stops at the first non-rejection
    auto = res_p.rank_test_table
    assert auto.max_rank == 2 and not auto.full


def test_rank_tests_shown_in_fit_summary_only_when_passed(fit_r2):
    before = str(fit_r2.summary())
    rt = fit_r2.rank_tests("general")
    # the results object never changes: computing tests does not alter summary()
    assert str(fit_r2.summary()) == before and "Rank tests" not in before
    text = str(fit_r2.summary(rank_tests=rt))
    assert "Rank tests (general)" in text and "eff_df" in text
    with pytest.raises(TypeError, match="RankTestResults"):
        fit_r2.summary(rank_tests=rt.table)


def test_results_summary_states_null_and_assumptions(fit_r2):
    for method, words in (
        ("robust", "finite-sample mean and variance"),
        ("wald", "Kleibergen-Paap"),
        ("chi2", "Normal theory"),
        ("general", "General theory"),
        ("permutation", "Cook and Yin"),
    ):
        out = fit_r2.rank_tests(method, max_rank=2, n_perm=19, seed=0)
        assert isinstance(out, RankTestResults) and out.method == method
        # notes are wrapped to the table width (a hyphenated word may be split)
        text = " ".join(str(out.summary()).split()).replace("- ", "-")
        assert "H0: r <= k" in text and words in text
        assert "additive or even links" in text
        assert out._repr_html_().startswith("<")


def test_rank_zero_is_returned_with_warning():
    rng = np.random.default_rng(6)  # a seed where H0: r = 0 has p = 0.78
    a, b = rng.standard_normal((400, 4)), rng.standard_normal((400, 3))
    y = rng.standard_normal(400)  # independent of both blocks
    model = jdr.JointDimReduction(y, a, b)
    with pytest.warns(RankSelectionWarning, match="no evidence"):
        res = model.fit("auto")
    assert res.rank == 0
    assert res.rank_test_table.select_rank(0.05) == 0


def test_select_rank_when_all_rejected(fit_r2):
    out = fit_r2.rank_tests("chi2", max_rank=1)
    assert out.select_rank(0.05) == 2  # at least max_rank + 1
    with pytest.raises(ValueError, match="alpha"):
        out.select_rank(1.5)
    with pytest.raises(TypeError, match="alpha"):
        out.select_rank("0.05")


# -- bad input ------------------------------------------------------------------
def test_bad_arguments(fit_r2):
    with pytest.raises(ValueError, match="method must be one of"):
        fit_r2.rank_tests("ladle")  # a rank choice, not a test: fit(rank_method="ladle")
    with pytest.raises(ValueError, match="max_rank must be between 0 and 4"):
        fit_r2.rank_tests("chi2", max_rank=5)
    with pytest.raises(TypeError, match="max_rank"):
        fit_r2.rank_tests("chi2", max_rank=1.5)
    with pytest.raises(ValueError, match="n_perm"):
        fit_r2.rank_tests("permutation", n_perm=0)
    with pytest.raises(TypeError, match="seed"):
        fit_r2.rank_tests("permutation", seed="abc")
    with pytest.raises(ValueError, match="alpha must be strictly between"):
        fit_r2.model.fit("auto", alpha=0.0)


def test_wald_needs_more_rows_than_complement_entries():
    sim = jdr.simulate.bilinear(60, 8, 8, 1, seed=2)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    with pytest.raises(ValueError, match=r"Wald rank test at k=0 needs more than"):
        res.rank_tests("wald")
    with pytest.warns(AssumptionWarning, match="small sample: m = 60 rows for n1 n2 = 64"):
        out = res.rank_tests("chi2")
    assert len(out.table) == 8


def test_wald_refuses_huge_complements_robust_does_not():
    rng = np.random.default_rng(3)
    a, b, y = rng.standard_normal((60, 50)), rng.standard_normal((60, 50)), rng.standard_normal(60)
    # 60 rows for 50 + 50 columns: the per-block estimator's tests run, the
    # joint one's (n1 + n2 + 2 = 102 rows) are refused
    with pytest.raises(ValueError, match=r"n1 \+ n2 \+ 2 = 102 rows for the tests"):
        jdr.JointDimReduction(y, a, b).fit(1).rank_tests("robust", max_rank=0)
    res = jdr.JointDimReduction(y, a, b).fit(1, independent_blocks=True)
    with pytest.raises(ValueError, match="more than 2048"):
        res.rank_tests("wald", max_rank=0)
    with pytest.warns(AssumptionWarning, match="small sample"):
        out = res.rank_tests("robust", max_rank=0)
    assert 0 <= out.table["pvalue"].iloc[0] <= 1


def test_weighted_model_rejected():
    sim = jdr.simulate.bilinear(300, 4, 4, 1, seed=2)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b, weights=np.ones(300) * 2).fit(1)
    with pytest.raises(ValueError, match="unweighted"):
        res.rank_tests("chi2")


def test_labelled_and_sparse_fits_use_dense_whitened_matrix(bilinear_small):
    sim = bilinear_small
    dense = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    sparse = jdr.JointDimReduction(sim.y, sim.exog_a_frame, sim.exog_b_frame).fit(
        2, sparsity=(4, 4), whitening="none"
    )
    pd.testing.assert_frame_equal(dense.rank_tests("chi2").table, sparse.rank_tests("chi2").table)


@pytest.mark.slow
def test_study_gaussian_size_power_selection():
    """The study's first setting at full size (500 replications, its seed)."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parents[1] / "studies" / "study_rank_tests.py"
    spec = importlib.util.spec_from_file_location("study_rank_tests", path)
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    reps = 500
    pv = study.one_setting("bilinear", 2, {}, reps, 199, np.random.default_rng(20261126))
    lo, hi = _band(reps, k=2.0)
    for method, p in pv.items():
        rej = p <= ALPHA
        assert lo <= rej[:, 2].mean() <= hi, method
        assert rej[:, 1].mean() >= 0.95, method
        first = np.where((~rej).any(axis=1), np.argmax(~rej, axis=1), 3)
        assert np.mean(first == 2) >= 0.90, method


def test_theory_exact_mean_at_rank_zero():
    """docs/theory/rank_tests.md, section 4: E[Lambda_0 | y] = n1 n2 m (m-2) / (m-1)^2
    for Gaussian blocks independent of y, with sample means and covariances.

    A theory check (vectorised numpy, Cholesky whitening as in the estimator),
    at m = 8 where the factor 48/49 is visible; one case is compared with the
    library's statistic.
    """
    m, n1, n2, reps = 8, 2, 2, 100_000
    rng = np.random.default_rng(99)
    y = rng.standard_normal(m)
    yc = y - y.mean()
    s2 = np.mean(yc**2)

    def whiten(x):
        xc = x - x.mean(axis=1, keepdims=True)
        cov = xc.transpose(0, 2, 1) @ xc / m
        chol = np.linalg.cholesky(cov)
        return np.linalg.solve(chol, xc.transpose(0, 2, 1)).transpose(0, 2, 1)

    a = whiten(rng.standard_normal((reps, m, n1)))
    b = whiten(rng.standard_normal((reps, m, n2)))
    x = a.transpose(0, 2, 1) @ (yc[:, None] * b) / m
    lam0 = m * np.sum(x**2, axis=(1, 2)) / s2
    expected = n1 * n2 * m * (m - 2) / (m - 1) ** 2
    se = lam0.std() / np.sqrt(reps)
    assert abs(lam0.mean() - expected) < 3 * se
    assert abs(lam0.mean() - n1 * n2) > 5 * se  # the finite-m factor is real
    # the whitening above is each block's own: the per-block estimator's statistic
    res = jdr.JointDimReduction(y, a[0], b[0]).fit(1, independent_blocks=True)
    assert res.rank_tests("chi2").table["statistic"].iloc[0] == pytest.approx(lam0[0], rel=1e-10)


def test_rank_tests_after_unstandardized_fit():
    # a fit with standardize=False does not compute the block covariances;
    # the rank tests (always on the whitened matrix) must still work
    sim = jdr.simulate.bilinear(1500, 5, 4, 2, seed=11)
    mod = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    t_raw = mod.fit(2, whitening="none").rank_tests("chi2").table
    t_std = mod.fit(2).rank_tests("chi2").table
    pd.testing.assert_frame_equal(t_raw, t_std)
    assert mod.fit("auto", whitening="none").rank == 2
