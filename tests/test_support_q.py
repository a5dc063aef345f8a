"""Support selection and sparse fits for a response of q > 1 columns.

The coordinate statistics with the stacked products ``W = (Yw_1 b', ...,
Yw_q b')`` checked against statsmodels regressions, their invariance to the
coding of the response, the three-step projection on the unfoldings, and a
seeded FDR check (slow).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import linalg as sla
from scipy import stats

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jdr_stats as jdr
from jdr_stats.sparse import three_step_projection
from jdr_stats.support import robust_coordinate_tests, select_support
from jdr_stats.support._statistics import prepare, products

from .strategies import column_recoding


def _blocks(m=600, n1=6, n2=5, seed=0):
    rng = np.random.default_rng(seed)
    return rng, rng.normal(size=(m, n1)), rng.normal(size=(m, n2))


def _latent(a, b):
    """Rank 2 on a0..a2 and b0..b2: (a0 + a1)(b0 + b1) and (a1 + a2)(b1 + b2).

    No active variable is the only carrier of a direction, so the fit without
    any one of them still has rank 2 (the conditional test's basis)."""
    return np.column_stack([(a[:, 0] + a[:, 1]) * (b[:, 0] + b[:, 1]),
                            (a[:, 1] + a[:, 2]) * (b[:, 1] + b[:, 2])]) / 2


def _three_classes(rng, a, b):
    """Three classes driven by the two latent products (q = 2 indicators)."""
    score = np.column_stack([_latent(a, b), np.zeros(len(a))])
    return np.array(list("ABC"))[np.argmax(score + rng.normal(size=score.shape), axis=1)]


def _two_responses(rng, a, b):
    return _latent(a, b) + rng.normal(size=(len(a), 2))


def _whitened(x):
    xc = x - x.mean(axis=0)
    low = np.linalg.cholesky(xc.T @ xc / len(x))
    return sla.solve_triangular(low, xc.T, lower=True).T


def test_products_order_is_the_unfolding():
    rng = np.random.default_rng(1)
    yc, w = rng.normal(size=(7, 3)), rng.normal(size=(7, 4))
    wy = products(yc, w)
    assert wy.shape == (7, 12)
    np.testing.assert_array_equal(wy[:, 4:8], yc[:, 1:2] * w)  # column block c = X_c
    np.testing.assert_array_equal(products(yc[:, 0], w), yc[:, :1] * w)


def test_marginal_q_f_equals_reverse_regression_f_test():
    """q = 2 classes: the marginal statistic is the partial F test of
    W = (Yw_1 b', Yw_2 b') in the OLS regression of a_j on (1, a_{-j}, W)."""
    rng, a, b = _blocks()
    model = jdr.JointDimReduction(_three_classes(rng, a, b), a, b)
    # the paper's per-block statistic: W below is built from b itself
    tab = select_support(model, method="chi2",
                         independent_blocks=True).table.xs("a", level="block")
    yw = model.data.rows("test")[0]
    w = products(yw - yw.mean(0), b - b.mean(0))  # any invertible transform of b' gives the same
    d = w.shape[1]
    for j in range(a.shape[1]):
        design = sm.add_constant(np.column_stack([np.delete(a, j, axis=1), w]))
        fit = sm.OLS(a[:, j], design).fit()
        contrast = np.zeros((d, design.shape[1]))
        contrast[:, -d:] = np.eye(d)
        ft = fit.f_test(contrast)
        assert tab["statistic"].iloc[j] / d == pytest.approx(float(ft.fvalue), rel=1e-8)
        assert tab["pvalue"].iloc[j] == pytest.approx(float(ft.pvalue), rel=1e-6, abs=1e-12)
        assert tab["df"].iloc[j] == 2 * b.shape[1]


def test_marginal_q_hc3_equals_statsmodels():
    """The robust Wald statistic (HC3) with q = 2 responses, against statsmodels."""
    rng, a, b = _blocks(m=300)
    y = _two_responses(rng, a, b)
    yc = y - y.mean(0)
    za = _whitened(a) @ np.linalg.inv(np.linalg.cholesky(np.cov(a.T, bias=True)))
    res = robust_coordinate_tests(yc, za, _whitened(a), _whitened(b), method="hc3")
    w = products(yc, b - b.mean(0))
    for j in range(a.shape[1]):
        fit = sm.OLS(a[:, j], sm.add_constant(np.column_stack([np.delete(a, j, 1), w])))
        fit = fit.fit(cov_type="HC3")
        restr = np.zeros((w.shape[1], fit.params.size))
        restr[:, -w.shape[1]:] = np.eye(w.shape[1])
        ref = float(np.squeeze(fit.wald_test(restr, use_f=False, scalar=True).statistic))
        assert res.stat[j] == pytest.approx(ref, rel=1e-8)
    assert res.df == 2 * b.shape[1]


@pytest.mark.parametrize("test", ["marginal", "conditional"])
def test_q_statistics_do_not_depend_on_the_response_coding(test):
    """Reordering and rescaling the response columns, relabelling the classes
    (another reference class) or reordering rows leaves every p-value unchanged."""
    rng, a, b = _blocks()
    rank = 2 if test == "conditional" else None
    y = _two_responses(rng, a, b)
    kw = {"rank": rank, "method": "chi2"}
    base = select_support(jdr.JointDimReduction(y, a, b), **kw).table["pvalue"]
    swapped = y[:, ::-1] * np.array([3.0, -0.2]) + 5.0
    other = select_support(jdr.JointDimReduction(swapped, a, b), **kw).table["pvalue"]
    np.testing.assert_allclose(other, base, rtol=1e-7, atol=1e-12)
    perm = rng.permutation(len(y))
    rows = select_support(jdr.JointDimReduction(y[perm], a[perm], b[perm]), **kw)
    np.testing.assert_allclose(rows.table["pvalue"], base, rtol=1e-7, atol=1e-12)
    cls = _three_classes(rng, a, b)
    p1 = select_support(jdr.JointDimReduction(cls, a, b), **kw).table["pvalue"]
    relabel = pd.Categorical(cls, categories=["C", "A", "B"])
    p2 = select_support(jdr.JointDimReduction(relabel, a, b), **kw).table["pvalue"]
    np.testing.assert_allclose(p2, p1, rtol=1e-7, atol=1e-12)


def test_q_support_finds_the_active_variables():
    rng, a, b = _blocks(m=1500, n1=8, n2=7, seed=3)
    model = jdr.JointDimReduction(_three_classes(rng, a, b), a, b)
    for kw in ({"rank": 2}, {}, {"rank": 2, "method": "permutation", "n_resamples": 99},
               {"method": "chi2", "covariance": "sandwich"}):
        sup = model.select_support(seed=0, **kw)
        assert {"a0", "a1", "a2"} <= set(sup.selected_a), (kw, sup.selected_a)
        assert {"b0", "b1", "b2"} <= set(sup.selected_b), (kw, sup.selected_b)
    thr = model.select_support(rank=2, rule="threshold", method="chi2")
    assert thr.settings["threshold"] == pytest.approx(np.sqrt(2 * np.log(2 * 8 * 7)))
    assert {"a0", "a1", "a2"} <= set(thr.selected_a)
    stab = model.select_support(rank=2, rule=jdr.support.Stability(n_subsamples=10), seed=0)
    assert set(stab.table.columns) >= {"frequency"}
    res = model.fit(2)
    assert res.test_variables(["a0"]).pvalue < 1e-6
    assert res.drop1().table.loc["a0", "df"] == 2  # conditional: |G| r


def test_three_step_projection_on_the_unfoldings():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(7, 5))
    flat, stacked = three_step_projection(x, 3, 2), three_step_projection(x[None], 3, 2)
    np.testing.assert_array_equal(flat.rows, stacked.rows)
    np.testing.assert_array_equal(flat.cols, stacked.cols)
    np.testing.assert_array_equal(flat.projected, stacked.projected[0])
    xq = 0.01 * rng.normal(size=(2, 7, 5))
    xq[0, 1, 3], xq[1, 4, 0], xq[1, 5, 3] = 1.0, -2.0, 0.5  # rows 1, 4, 5; cols 0, 3
    proj = three_step_projection(xq, 3, 2)
    assert proj.rows.tolist() == [1, 4, 5] and proj.cols.tolist() == [0, 3]
    assert proj.projected.shape == xq.shape


def test_q_sparse_fits():
    rng, a, b = _blocks(m=1500, n1=8, n2=7, seed=4)
    y = _two_responses(rng, a, b)
    model = jdr.JointDimReduction(y, a, b)
    # per block, the sparse fit is the dense fit of the kept variables; the
    # joint estimator's is not (its rows are each block's residual on the
    # whole other block, not on the other block's kept variables)
    res = model.fit(2, sparsity=(3, 3), independent_blocks=True)
    assert res.support_a == ["a0", "a1", "a2"] and res.support_b == ["b0", "b1", "b2"]
    assert model.fit(2, sparsity=(3, 3)).support_a == ["a0", "a1", "a2"]
    dense_sub = jdr.JointDimReduction(y, a[:, :3], b[:, :3]).fit(2, independent_blocks=True)
    angle = jdr.metrics.principal_angles(np.asarray(res.directions_a)[:3],
                                         np.asarray(dense_sub.directions_a))
    assert np.max(angle) < 1e-8  # the sparse fit is the HOSVD on the kept variables
    auto = model.fit(2, sparsity="auto", seed=0)
    assert auto.support_a == ["a0", "a1", "a2"]
    assert auto.support_tests is not None
    assert "q = 2" in str(auto.summary())


def test_three_dimensional_response_refused_clearly():
    _, a, b = _blocks(m=50)
    with pytest.raises(ValueError, match="yc must be 1 or 2-dimensional"):
        robust_coordinate_tests(np.zeros((50, 2, 1)), a, a, b)


@pytest.mark.slow
def test_q_fdr_seeded():
    """BH at 0.1 with the default test (conditional, wild bootstrap) holds
    its FDR for 3 classes and q = 2 responses: 60 replications each, FDR
    below 0.1 + 2.5 MC SE + 0.01 (full study: studies/study_support_q.py)."""
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parents[1] / "studies" / "study_support_q.py"
    spec = importlib.util.spec_from_file_location("study_support_q", path)
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    for name, seed in (("cat3", 1), ("q2", 2)):
        rng = np.random.default_rng(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            fdp = np.array([study.one(name, rng, 99)["cond_fdp"] for _ in range(60)])
        se = max(fdp.std(ddof=1), 0.05) / np.sqrt(fdp.size)
        assert fdp.mean() <= 0.1 + 2.5 * se + 0.01, (name, fdp.mean(), se)


def test_prepare_centres_each_response_column():
    rng, a, b = _blocks()
    prep = prepare(jdr.JointDimReduction(_two_responses(rng, a, b), a, b).data, True)
    assert prep.yc.shape == (600, 2)
    np.testing.assert_allclose(prep.yc.mean(axis=0), 0.0, atol=1e-12)
    np.testing.assert_allclose(prep.yc.T @ prep.yc / 600, np.eye(2), atol=1e-10)
    assert stats.pearsonr(prep.yc[:, 0], prep.yc[:, 1])[0] == pytest.approx(0, abs=1e-10)


def test_covariates_take_residual_degrees_of_freedom():
    """With covariates (rows residualised on p columns) the F references of the
    coordinate tests have m - p0 - d - p denominator degrees of freedom."""
    rng, a, b = _blocks(m=300, seed=6)
    z = rng.normal(size=(300, 3))
    y = a[:, 0] * b[:, 0] + z[:, 0] + rng.normal(size=300)
    model = jdr.JointDimReduction(y, a, b, covariates=z)
    prep = prepare(model.data, True)
    assert prep.n_lost == 3
    from jdr_stats.support._statistics import block_tests

    kw = {"rank": None, "conditional": False, "standardize": True, "covariance": "factored",
          "method": "chi2", "n_perm": 1, "rng": None}
    plain = block_tests(prep.yc, prep.z_a, prep.w_a, prep.w_b, **kw)
    lost = block_tests(prep.yc, prep.z_a, prep.w_a, prep.w_b, n_lost=3, **kw)
    df2 = 300 - 6 - 5
    np.testing.assert_allclose(lost.stat, plain.stat * (df2 - 3) / df2, rtol=1e-12)
    assert lost.dist == f"F(5, {df2 - 3})"
    hc3 = robust_coordinate_tests(prep.yc, prep.z_a, prep.w_a, prep.w_b, n_lost=3)
    np.testing.assert_allclose(hc3.pvalue, stats.f.sf(hc3.stat / 5, 5, 300 - 7 - 5 - 3),
                               rtol=1e-12)
    # prep whitens each block alone: the per-block estimator's tests
    tab = select_support(model, method="chi2",
                         independent_blocks=True).table.xs("a", level="block")
    np.testing.assert_allclose(tab["pvalue"], lost.pvalue, rtol=1e-12)


def _mixed_units():
    rng, a, b = _blocks(m=500, n1=6, n2=5, seed=9)
    y = _three_classes(rng, a, b)
    a = a @ (np.eye(6) + 0.4 * rng.standard_normal((6, 6)) / np.sqrt(6))  # correlated
    a = pd.DataFrame(a * np.geomspace(1e-2, 1e2, 6), columns=[f"a{j}" for j in range(6)])
    return pd.Series(y, name="y"), a, pd.DataFrame(b, columns=[f"b{j}" for j in range(5)])


_Y3, _A3, _B3 = _mixed_units()
_BASE3 = jdr.JointDimReduction(_Y3, _A3, _B3)


@settings(max_examples=10, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_q_selections_do_not_depend_on_units_order_or_rows(data):
    """3 classes: rescaling, shifting and reordering each block's columns, and
    reordering the rows, leave the p-values and the sparse fit's support unchanged."""
    (sa, ha, oa), (sb, hb, ob) = column_recoding(data.draw, 6), column_recoding(data.draw, 5)
    rows = np.array(data.draw(st.permutations(range(500))))
    a = (_A3 * sa + ha).iloc[rows, oa].reset_index(drop=True)
    b = (_B3 * sb + hb).iloc[rows, ob].reset_index(drop=True)
    model = jdr.JointDimReduction(_Y3.iloc[rows].reset_index(drop=True), a, b)
    for kw in ({"rank": 2, "method": "chi2"}, {"method": "chi2", "covariance": "hc3"}):
        ref, res = _BASE3.select_support(**kw), model.select_support(**kw)
        p_ref = ref.table["pvalue"].sort_index()
        np.testing.assert_allclose(res.table["pvalue"].sort_index(), p_ref, rtol=1e-6,
                                   atol=1e-6 * p_ref.max())
    ref, res = _BASE3.fit(2, sparsity=(3, 3)), model.fit(2, sparsity=(3, 3))
    assert set(res.support_a) == set(ref.support_a)
    assert set(res.support_b) == set(ref.support_b)
