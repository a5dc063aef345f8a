"""Tests of jdr_stats.support: coordinate tests and support selection.

The statistical checks are reduced, seeded versions of
``studies/study_support.py``; tolerances come from Monte Carlo standard
errors.
"""

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import linalg as sla

import jdr_stats as jdr
from jdr_stats.estimation._joint import joint_data
from jdr_stats.support import _statistics as sup
from jdr_stats.estimation._estimate import estimate
from jdr_stats.simulate import random_basis
from jdr_stats.support import FDR, Stability, SupportResults, Threshold, choose_sparsity, select_support
from jdr_stats.support._loo import loo_bases


def _ar_cov(n, rho):
    idx = np.arange(n)
    return rho ** np.abs(idx[:, None] - idx[None, :])


def _correlated_sparse(m, n, r, s, rho, seed, noise="normal"):
    """Sparse bilinear model with AR(1)-correlated variables within each block."""
    rng = np.random.default_rng(seed)
    U = random_basis(n, r, s, seed=rng)
    V = random_basis(n, r, s, seed=rng)
    low = np.linalg.cholesky(_ar_cov(n, rho))
    a = rng.standard_normal((m, n)) @ low.T
    b = rng.standard_normal((m, n)) @ low.T
    z = rng.standard_normal(m) if noise == "normal" else rng.standard_t(3, m)
    y = np.einsum("ij,ij->i", a @ U, b @ V) + z
    return y, a, b, U, V


@pytest.fixture(scope="module")
def sparse_model():
    sim = jdr.simulate.bilinear(3000, 15, 12, 2, s1=4, s2=3, seed=7)
    return sim, jdr.JointDimReduction(sim.y, sim.a, sim.b)


# --------------------------------------------------------------------------
# the statistic against an independent implementation
# --------------------------------------------------------------------------
def test_marginal_f_equals_reverse_regression_f_test():
    """The marginal statistic is the partial F test of W = (y - ybar) b' in the
    OLS regression of a_j on (1, a_{-j}, W): compare with statsmodels."""
    y, a, b, U, V = _correlated_sparse(400, 6, 2, 3, 0.5, seed=3)
    model = jdr.JointDimReduction(y, a, b)
    # the paper's per-block statistic (each block whitened alone): the
    # reference below whitens b by its own covariance
    res = select_support(model, method="chi2", independent_blocks=True)
    tab = res.table.xs("a", level="block")
    bc = b - b.mean(0)
    lb = np.linalg.cholesky(np.cov(bc.T, bias=True))
    w = (y - y.mean())[:, None] * sla.solve_triangular(lb, bc.T, lower=True).T
    n2 = b.shape[1]
    for j in range(a.shape[1]):
        design = sm.add_constant(np.column_stack([np.delete(a, j, axis=1), w]))
        fit = sm.OLS(a[:, j], design).fit()
        k = design.shape[1]
        contrast = np.zeros((n2, k))
        contrast[:, k - n2 :] = np.eye(n2)
        ft = fit.f_test(contrast)
        assert tab["statistic"].iloc[j] / n2 == pytest.approx(float(ft.fvalue), rel=1e-8)
        assert tab["pvalue"].iloc[j] == pytest.approx(float(ft.pvalue), rel=1e-6, abs=1e-12)
        assert tab["df"].iloc[j] == n2


def test_conditional_basis_is_the_fit_without_the_variable():
    """The leave-one-out basis equals the estimator refitted without variable j."""
    sim = jdr.simulate.bilinear(800, 7, 6, 2, seed=11)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    prep = sup.prepare(model.data, True)
    m = sim.y.shape[0]
    wy = prep.yc[:, None] * prep.w_b
    g = prep.z_a.T @ wy / m
    xhat = prep.w_a.T @ wy / m
    zeta = np.mean(prep.z_a**2, axis=0)
    bases = loo_bases(xhat.T @ xhat, g, 1.0 / zeta, 2)
    for j in range(sim.a.shape[1]):
        mom = jdr.JointDimReduction(sim.y, np.delete(sim.a, j, axis=1), sim.b).moments()
        est = estimate(mom, 2)
        angles = jdr.metrics.principal_angles(bases[j], est.v_std)
        assert np.max(angles) < 1e-8


# --------------------------------------------------------------------------
# size and FDR (reduced studies)
# --------------------------------------------------------------------------
def _null_rejections(configs, reps, seed0, alpha=0.1, **sim_kw):
    counts = {k: 0 for k in configs}
    total = 0
    for rep in range(reps):
        y, a, b, U, V = _correlated_sparse(seed=seed0 + rep, **sim_kw)
        model = jdr.JointDimReduction(y, a, b)
        null = np.concatenate([np.abs(U).sum(1) == 0, np.abs(V).sum(1) == 0])
        total += null.sum()
        for key, kw in configs.items():
            p = select_support(model, **kw).table["pvalue"].to_numpy()
            counts[key] += int(np.sum(p[null] <= alpha))
    return {k: c / total for k, c in counts.items()}, total


def test_size_correlated_blocks_chi2():
    """Null p-values are calibrated with correlated variables within a block
    (H0 is about U in the original coordinates), for the marginal and the
    conditional tests and both covariances."""
    configs = {
        "marginal": {"method": "chi2"},
        "conditional": {"rank": 2, "method": "chi2"},
        "conditional_sandwich": {"rank": 2, "covariance": "sandwich"},
        "conditional_wild": {"rank": 2, "seed": 0},
    }
    rates, total = _null_rejections(
        configs, reps=50, seed0=100, m=1500, n=16, r=2, s=4, rho=0.6
    )
    se = np.sqrt(0.1 * 0.9 / total)
    for key, rate in rates.items():
        assert abs(rate - 0.1) <= 3.5 * se, (key, rate, se)


def test_naive_statistic_is_anticonservative():
    """m ||row_j of X_lin||^2 / s_y^2 against chi2(n2), the statistic the issue
    warns about, rejects true nulls too often even with independent Gaussian
    blocks (its covariance ignores that y depends on b through V^T b); the
    coordinate test does not.  Few b-variables and r = 3 make it visible."""
    from scipy import stats

    rej_naive = rej = total = 0
    for rep in range(20):
        sim = jdr.simulate.bilinear(2000, 20, 4, 3, s1=4, seed=300 + rep)
        model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
        x = model.fit(3).coef_matrix
        p_naive = stats.chi2.sf(2000 * np.sum(x**2, axis=1) / np.var(sim.y), 4)
        null = np.abs(sim.U).sum(1) == 0
        p = select_support(model, method="chi2").table.xs("a", level="block")["pvalue"].to_numpy()
        rej_naive += np.sum(p_naive[null] <= 0.05)
        rej += np.sum(p[null] <= 0.05)
        total += null.sum()
    se = np.sqrt(0.05 * 0.95 / total)
    assert rej_naive / total > 0.05 + 3 * se
    assert rej / total <= 0.05 + 2 * se


@pytest.mark.parametrize(
    "design, kw",
    [("gaussian", {"method": "chi2"}), ("uniform", {"method": "wild", "n_resamples": 199})],
)
def test_fdr_and_power_sparse_bilinear(design, kw):
    """Reduced version of the study: BH on the conditional test (partial F,
    and the wild bootstrap with fewer resamples than the default) keeps the
    FDR at 0.1 (within 2 MC SE) and finds most true variables."""
    fdp, power = [], []
    for rep in range(60):
        sim = jdr.simulate.bilinear(2000, 40, 40, 2, s1=5, s2=5, design=design, seed=500 + rep)
        model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
        res = select_support(model, rank=2, fdr=0.1, seed=rep, **kw)
        for block, truth in (("a", np.abs(sim.U).sum(1) > 0), ("b", np.abs(sim.V).sum(1) > 0)):
            sel = res.table.xs(block, level="block")["selected"].to_numpy(bool)
            fdp.append((sel & ~truth).sum() / max(sel.sum(), 1))
            power.append((sel & truth).sum() / truth.sum())
    fdp = np.array(fdp)
    se = fdp.std(ddof=1) / np.sqrt(len(fdp))
    assert fdp.mean() <= 0.1 + 2 * se
    assert np.mean(power) > 0.8


def test_permutation_size_heavy_tails():
    """Permutation p-values are calibrated with t3 noise and correlated blocks."""
    configs = {"perm": {"rank": 2, "method": "permutation", "n_resamples": 99, "seed": 1}}
    rates, total = _null_rejections(
        configs, reps=30, seed0=700, m=600, n=10, r=2, s=3, rho=0.4, noise="t3"
    )
    se = np.sqrt(0.1 * 0.9 / total)
    assert abs(rates["perm"] - 0.1) <= 3.5 * se


# --------------------------------------------------------------------------
# behaviour and API
# --------------------------------------------------------------------------
def test_results_table_and_summary(sparse_model):
    sim, model = sparse_model
    res = model.select_support(rank=2, fdr=0.1)
    assert isinstance(res, SupportResults)
    assert res.test == "conditional" and res.rule == "bh" and res.rank == 2
    tab = res.table
    assert list(tab.index.names) == ["block", "variable"]
    assert {"statistic", "df", "pvalue", "qvalue", "selected"} <= set(tab.columns)
    assert (tab["df"] == 2).all()
    assert ((tab["pvalue"] >= 0) & (tab["pvalue"] <= 1)).all()
    assert (tab["qvalue"] >= tab["pvalue"] - 1e-15).all()
    assert np.array_equal(tab["selected"].to_numpy(), (tab["qvalue"] <= 0.1).to_numpy())
    truth_a = [f"a{j}" for j in np.flatnonzero(np.abs(sim.U).sum(1))]
    truth_b = [f"b{j}" for j in np.flatnonzero(np.abs(sim.V).sum(1))]
    assert set(truth_a) <= set(res.selected_a)
    assert set(truth_b) <= set(res.selected_b)
    assert res.counts == (len(res.selected_a), len(res.selected_b))
    text = str(res.summary())
    assert "H0" in text and "Benjamini-Hochberg" in text and "Assumptions" in text
    assert "<table" in res._repr_html_()
    marg = model.select_support()
    assert marg.test == "marginal" and (marg.table.xs("a", level="block")["df"] == 12).all()


def test_labelled_input_names(sparse_model):
    sim, _ = sparse_model
    model = jdr.JointDimReduction(
        pd.Series(sim.y, name="resp"), sim.exog_a_frame, sim.exog_b_frame
    )
    res = model.select_support(rank=2)
    assert list(res.table.xs("a", level="block").index) == list(sim.exog_a_frame.columns)


def test_choose_sparsity_and_fit_auto(sparse_model):
    sim, model = sparse_model
    (s1, s2), res = choose_sparsity(model.data, rank=2, fdr=0.1, seed=0)
    assert (s1, s2) == (max(2, res.counts[0]), max(2, res.counts[1]))
    fit = model.fit(2, sparsity="auto", fdr=0.1, seed=0)
    assert fit.sparsity == (s1, s2)
    assert "wild bootstrap" in res.method_label
    assert set(fit.support_a) == set(res.selected_a) or len(res.selected_a) < 2
    e = jdr.metrics.nsee(sim.U, fit.directions_a, sim.V, fit.directions_b)
    assert e < 0.2
    # at least the rank per block, even when nothing is selected
    y = np.random.default_rng(0).standard_normal(500)
    null_model = jdr.JointDimReduction(y, sim.a[:500], sim.b[:500])
    (n1, n2), res0 = choose_sparsity(null_model.data, rank=2, fdr=0.1, seed=0)
    assert n1 >= 2 and n2 >= 2


def test_threshold_rule(sparse_model):
    sim, model = sparse_model
    res = model.select_support(rank=2, rule="threshold")
    tab = res.table
    assert "max_abs_t" in tab.columns
    tau = res.settings["threshold"]
    assert tau == pytest.approx(np.sqrt(2 * np.log(15 * 12)))
    assert np.array_equal(tab["selected"].to_numpy(), (tab["max_abs_t"] > tau).to_numpy())
    truth_a = [f"a{j}" for j in np.flatnonzero(np.abs(sim.U).sum(1))]
    assert set(truth_a) <= set(res.selected_a)
    strict = model.select_support(rule=Threshold(1e6))
    assert strict.counts == (0, 0)
    assert "threshold rule" in str(strict.summary())


def test_stability_selection(sparse_model):
    sim, model = sparse_model
    kw = dict(rank=2, rule=Stability(n_subsamples=10), seed=5)
    res = model.select_support(**kw)
    freq = res.table["frequency"].to_numpy()
    assert ((freq >= 0) & (freq <= 1)).all()
    assert np.array_equal(res.table["selected"].to_numpy(), freq >= 0.6)
    truth_a = [f"a{j}" for j in np.flatnonzero(np.abs(sim.U).sum(1))]
    assert set(truth_a) <= set(res.selected_a)
    again = model.select_support(**kw)
    pd.testing.assert_frame_equal(res.table, again.table)
    # the base sparse fit selects exactly s1 (s2) variables per half-sample
    s1, s2 = res.settings["sparsity"]
    block_a = res.table.xs("a", level="block")["frequency"].sum()
    assert block_a == pytest.approx(s1)
    assert "Meinshausen" in str(res.summary())
    fixed = model.select_support(rank=2, rule=Stability(n_subsamples=4, sparsity=(5, 4)), seed=1)
    assert fixed.settings["sparsity"] == (5, 4)


def test_permutation_reproducible_and_agrees(sparse_model):
    _, model = sparse_model
    a = model.select_support(rank=2, method="permutation", n_resamples=49, seed=3)
    b = model.select_support(rank=2, method="permutation", n_resamples=49, seed=3)
    pd.testing.assert_frame_equal(a.table, b.table)
    assert a.table["pvalue"].min() == pytest.approx(1 / 50)
    chi = model.select_support(rank=2, method="chi2")
    # same statistic as the F version (chi-square scale)
    want = chi.table["statistic"]  # near-zero statistics: atol scaled by the largest
    np.testing.assert_allclose(a.table["statistic"], want, rtol=1e-10, atol=1e-10 * want.abs().max())
    assert "permutation" in a.method_label
    marg = model.select_support(method="permutation", n_resamples=19, seed=3)
    assert marg.table["pvalue"].between(1 / 20, 1).all()


def test_default_is_wild_for_the_conditional_test(sparse_model):
    """The conditional default is the wild bootstrap of the robust score test,
    seeded; so is the marginal default; covariance= selects the analytic test."""
    from jdr_stats.support import robust_coordinate_tests

    _, model = sparse_model
    one = model.select_support(rank=2, seed=4)
    two = model.select_support(rank=2, seed=4)
    pd.testing.assert_frame_equal(one.table, two.table)
    assert one.settings["n_boot"] == 999 and "wild bootstrap" in one.method_label
    assert one.table["pvalue"].min() >= 1 / 1000
    assert "Rademacher" in str(one.summary())
    # the default (joint) estimator tests the variables of the residual rows
    prep = sup.prepare(joint_data(model.data)[0], True)
    rng = np.random.default_rng(4)
    ref = robust_coordinate_tests(prep.yc, prep.z_a, prep.w_a, prep.w_b, rank=2,
                                  method="wild", n_resample=999, seed=rng)
    np.testing.assert_allclose(one.table.xs("a", level="block")["pvalue"], ref.pvalue)
    marg = model.select_support(seed=4)
    assert marg.method_label == "marginal robust score test, wild bootstrap, B=999"
    ref = robust_coordinate_tests(prep.yc, prep.z_a, prep.w_a, prep.w_b, rank=None,
                                  method="wild", n_resample=999,
                                  seed=np.random.default_rng(4))
    np.testing.assert_allclose(marg.table.xs("a", level="block")["pvalue"], ref.pvalue)
    assert model.select_support(covariance="factored").method_label.startswith("marginal partial F")


def test_hc3_and_studentized_permutation_options(sparse_model):
    from jdr_stats.support import robust_coordinate_tests

    _, model = sparse_model
    hc3 = model.select_support(rank=2, covariance="hc3")
    prep = sup.prepare(joint_data(model.data)[0], True)  # the default: the residual rows
    ref = robust_coordinate_tests(prep.yc, prep.z_b, prep.w_b, prep.w_a, rank=2, method="hc3")
    np.testing.assert_allclose(hc3.table.xs("b", level="block")["statistic"], ref.stat)
    assert "HC3" in hc3.method_label and "HC3" in str(hc3.summary())
    sp = model.select_support(rank=2, method="studentized-permutation", n_resamples=49, seed=1)
    assert sp.table["pvalue"].between(1 / 50, 1).all()
    assert sp.settings["n_perm"] == 49 and "studentized permutation" in sp.method_label


def test_rule_by(sparse_model):
    from statsmodels.stats.multitest import multipletests

    _, model = sparse_model
    bh = model.select_support(rank=2, seed=2)
    by = model.select_support(rank=2, seed=2, rule="by")
    for block in ("a", "b"):
        p = by.table.xs(block, level="block")["pvalue"].to_numpy()
        q = by.table.xs(block, level="block")["qvalue"].to_numpy()
        np.testing.assert_allclose(q, multipletests(p, method="fdr_by")[1])
        q_bh = bh.table.xs(block, level="block")["qvalue"].to_numpy()
        np.testing.assert_allclose(q_bh, multipletests(p, method="fdr_bh")[1])
    assert np.array_equal(by.table["selected"].to_numpy(), (by.table["qvalue"] <= 0.1).to_numpy())
    assert by.counts[0] <= bh.counts[0] and by.counts[1] <= bh.counts[1]
    assert by.rule == "by" and "Benjamini-Yekutieli" in str(by.summary())


def test_nan_pvalue_never_selected_and_does_not_spoil(sparse_model, monkeypatch):
    """An undefined test (NaN p-value) gets a NaN q-value, is not selected, and
    the other q-values are those of the defined tests alone."""
    from jdr_stats.support import fdr_qvalues

    _, model = sparse_model
    from jdr_stats.support import _select

    real = _select.run_tests

    def with_nan(*args, **kwargs):
        res = real(*args, **kwargs)
        p = res.pvalue.copy()
        p[[0, 3]] = np.nan
        return type(res)(stat=res.stat, df=res.df, pvalue=p, dist=res.dist)

    monkeypatch.setattr(_select, "run_tests", with_nan)
    for rule in ("bh", "by"):
        res = model.select_support(rank=2, seed=1, rule=rule)
        for block in ("a", "b"):
            tab = res.table.xs(block, level="block")
            q = tab["qvalue"].to_numpy()
            assert np.isnan(q[[0, 3]]).all()
            assert not tab["selected"].to_numpy()[[0, 3]].any()
            p = tab["pvalue"].to_numpy()
            keep = ~np.isnan(p)
            np.testing.assert_allclose(q[keep], fdr_qvalues(p[keep], rule))
            assert tab["selected"].to_numpy()[keep].sum() >= 2


def test_sandwich_chunked_equals_unchunked(sparse_model, monkeypatch):
    _, model = sparse_model
    full = model.select_support(covariance="sandwich")
    monkeypatch.setattr(jdr.config, "CHUNK_FLOATS", 50)
    chunked = model.select_support(covariance="sandwich")
    np.testing.assert_allclose(full.table["statistic"], chunked.table["statistic"], rtol=1e-10)


def test_unstandardized(sparse_model):
    sim, model = sparse_model
    res = model.select_support(rank=2, standardize=False)
    truth_a = [f"a{j}" for j in np.flatnonzero(np.abs(sim.U).sum(1))]
    assert set(truth_a) <= set(res.selected_a)
    assert "centred cross moment" in str(res.summary())


@pytest.mark.parametrize(
    "kwargs, exc, msg",
    [
        ({"method": "bootstrap"}, ValueError, "method must be one of"),
        ({"fdr": 1.5}, ValueError, "fdr must be strictly between"),
        ({"fdr": "0.1"}, TypeError, "fdr must be a number"),
        ({"test": "conditional"}, ValueError, "needs the rank"),
        ({"rule": "stability"}, ValueError, "needs rank"),
        ({"rule": "lasso"}, ValueError, "rule must be one of"),
        ({"rank": 99}, ValueError, "rank must be between"),
        ({"covariance": "hc4"}, ValueError, "covariance must be one of"),
        ({"rank": 2, "method": "wild", "covariance": "sandwich"}, ValueError,
         "covariance applies to method"),
        ({"rank": 2, "n_resamples": 0}, ValueError, "n_resamples must be at least 1"),
        ({"rank": 2, "n_resamples": 9.5}, TypeError, "n_resamples must be an integer"),
        ({"method": "studentized-permutation", "n_resamples": 0}, ValueError,
         "n_resamples must be at least 1"),
        ({"method": "permutation", "n_resamples": 0}, ValueError, "n_resamples must be at least 1"),
        ({"method": "chi2", "n_resamples": 99}, ValueError, "n_resamples applies to the resampling"),
        ({"rule": "threshold", "fdr": 0.2}, ValueError, "fdr applies to rule"),
        ({"rule": 3}, TypeError, "rule must be"),
        ({"rank": 2, "rule": FDR(0.1), "fdr": 0.2}, ValueError, "in the rule object"),
        ({"standardize": "yes"}, TypeError, "standardize must be True or False"),
        ({"seed": "x", "method": "permutation"}, TypeError, "seed must be"),
    ],
)
def test_bad_input(sparse_model, kwargs, exc, msg):
    _, model = sparse_model
    with pytest.raises(exc, match=msg):
        model.select_support(**kwargs)


def test_weights_and_small_samples_rejected(monkeypatch):
    # the checks of select_support itself, past the model's width guard
    monkeypatch.setattr(jdr.policy, "SUPPORT_TESTS_MAX_RATIO", 10.0)
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((60, 5)), rng.standard_normal((60, 56))
    y = rng.standard_normal(60)
    with pytest.raises(ValueError, match="case weights"):
        jdr.JointDimReduction(y, a, b, weights=np.ones(60)).select_support()
    with pytest.raises(ValueError, match="too few observations for the marginal test"):
        jdr.JointDimReduction(y, a, b).select_support(independent_blocks=True)
    # the joint estimator's tests need n1 + n2 + 2 = 63 rows: refused, never
    # the per-block tests in their place
    with pytest.raises(ValueError, match=r"n1 \+ n2 \+ 2 = 63 rows for select_support"):
        jdr.JointDimReduction(y, a, b).select_support()
    model = jdr.JointDimReduction(y[:50], a[:50], b[:50, :30])
    with pytest.raises(ValueError, match="halves of the data"):
        model.select_support(rank=2, rule=Stability(n_subsamples=2))



@pytest.mark.parametrize(
    "make, exc, msg",
    [
        (lambda: Threshold(-1.0), ValueError, "threshold must be a positive"),
        (lambda: Stability(threshold=0.4), ValueError, "Stability threshold must be"),
        (lambda: Stability(n_subsamples=1), ValueError, "n_subsamples must be at least 2"),
        (lambda: FDR(q=1.5), ValueError, "q must be strictly between"),
        (lambda: FDR(procedure="holm"), ValueError, "procedure must be one of"),
    ],
)
def test_rule_objects_check_their_settings(make, exc, msg):
    with pytest.raises(exc, match=msg):
        make()


def test_stability_sparsity_checked_against_the_rank(sparse_model):
    _, model = sparse_model
    with pytest.raises(ValueError, match="sparsity s1"):
        model.select_support(rank=2, rule=Stability(sparsity=(1, 3)))


@pytest.mark.parametrize(
    "flat",
    [{"n_boot": 49}, {"n_perm": 19}, {"threshold": 2.5}, {"n_subsamples": 4},
     {"stability_threshold": 0.7}, {"sparsity": (4, 3)}],
)
def test_flat_names_of_the_first_version_are_refused(sparse_model, flat):
    """The settings are n_resamples and the rule objects; the flat names of
    the unreleased first version are not keywords."""
    _, model = sparse_model
    with pytest.raises(TypeError, match="unexpected keyword"):
        select_support(model, rank=2, **flat)


def test_rule_names_are_the_rule_objects(sparse_model):
    _, model = sparse_model
    a = model.select_support(rank=2, rule="by", fdr=0.2, method="chi2")
    b = model.select_support(rank=2, rule=FDR(q=0.2, procedure="by"), method="chi2")
    pd.testing.assert_frame_equal(a.table, b.table)
    assert (a.method, a.rule, a.fdr, a.notes) == (b.method, b.rule, b.fdr, b.notes)


def test_one_door_same_signature_and_numbers(sparse_model):
    """The model's method is select_support itself: same options and
    defaults, same numbers."""
    import inspect

    _, model = sparse_model
    door = inspect.signature(jdr.JointDimReduction.select_support).parameters
    func = inspect.signature(select_support).parameters
    # the door declares the grouped options (explicit keywords, no **options),
    # in the function's order and with its defaults
    grouped = ["rank", "test", "method", "covariance", "n_resamples", "rule", "fdr",
               "standardize", "independent_blocks", "seed", "progress", "n_jobs"]
    assert list(door)[1:] == grouped
    assert [n for n in func if n in grouped] == grouped
    assert [n for n in func if n not in grouped] == ["data", "moments", "whitening"]
    assert all(door[n].default == func[n].default for n in grouped)
    assert not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in door.values())
    one = model.select_support(rank=2, seed=8, n_resamples=99)
    two = select_support(model, rank=2, seed=8, n_resamples=99)
    pd.testing.assert_frame_equal(one.table, two.table)
    with pytest.raises(TypeError, match="unexpected keyword"):
        model.select_support(n_permutations=9)
