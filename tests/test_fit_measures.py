"""R^2-type fit measures, group tests of variables and drop1."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.exceptions import RowsNotInMemoryError
from jdr_stats.support._statistics import block_tests, prepare

#: The guide page the summary's notes point to for their explanations.
GUIDE = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "summary.md").read_text()


@pytest.fixture(scope="module")
def sim():
    return jdr.simulate.bilinear(1500, 5, 4, 2, s1=3, s2=2, seed=11)


@pytest.fixture(scope="module")
def res(sim):
    return jdr.JointDimReduction(sim.frame["y"], sim.frame[[f"a{j}" for j in range(5)]],
                                 sim.frame[[f"b{j}" for j in range(4)]]).fit(2)


def _ols_fitted(y, x):
    x1 = np.column_stack([np.ones(len(y)), x])
    coef, *_ = np.linalg.lstsq(x1, y, rcond=None)
    fitted = x1 @ coef
    return 1 - np.sum((y - fitted) ** 2) / np.sum((y - y.mean()) ** 2), fitted


def test_rsquared_matches_an_explicit_regression(sim, res):
    fa, fb = sim.a @ res.directions_a.to_numpy(), sim.b @ res.directions_b.to_numpy()
    prods = np.column_stack([fa[:, j] * fb[:, k] for j in range(2) for k in range(2)])
    r2, fit_red = _ols_fitted(sim.y, np.column_stack([fa, fb, prods]))
    full = np.column_stack([sim.a, sim.b] + [sim.a[:, [j]] * sim.b[:, [k]]
                                             for j in range(5) for k in range(4)])
    r2_full, fit_full = _ols_fitted(sim.y, full)
    fm = res.fit_measures
    assert fm.rsquared == pytest.approx(r2, rel=1e-10) and res.rsquared == fm.rsquared
    assert fm.rsquared_full == pytest.approx(r2_full, rel=1e-10)
    # the ratio is the squared correlation of the two fitted values (nested regressions)
    assert fm.rsquared_ratio == pytest.approx(np.corrcoef(fit_red, fit_full)[0, 1] ** 2,
                                              rel=1e-9)
    assert fm.n_regressors == 8 and fm.n_regressors_full == 29
    n = len(sim.y)
    assert fm.rsquared_adj == pytest.approx(1 - (1 - r2) * (n - 1) / (n - 9), rel=1e-10)
    assert 0 < fm.rsquared <= fm.rsquared_full <= 1 and set(fm.to_dict()) >= {"rsquared"}


def test_rsquared_in_the_summary_and_after_remove_data(res):
    text = str(res.summary())
    assert f"R-squared:          {res.rsquared:.3f}" in text
    assert f"R-squared ratio:   {res.fit_measures.rsquared_ratio:.3f}" in text
    # the note keeps the ratio and what it is; the comparison with dr is in the guide
    assert (f"ratio {res.fit_measures.rsquared_ratio:.3f} (the share the reduction keeps)"
            in " ".join(text.split()))
    assert "R^2(OLS|dr)" in GUIDE
    small = res.remove_data()
    assert str(small.summary()) == text and small.rsquared == res.rsquared


def test_rsquared_invariant_to_units_and_column_order(sim, res):
    a = sim.frame[[f"a{j}" for j in range(5)]]
    b = sim.frame[[f"b{j}" for j in range(4)]]
    a2 = (a * [1, 10, 0.1, 3, 1e3] + 7)[["a3", "a0", "a4", "a1", "a2"]]
    res2 = jdr.JointDimReduction(sim.frame["y"], a2, b.iloc[:, ::-1] - 2).fit(2)
    assert res2.rsquared == pytest.approx(res.rsquared, rel=1e-8)
    assert res2.fit_measures.rsquared_full == pytest.approx(res.fit_measures.rsquared_full,
                                                            rel=1e-8)


def test_weights_count_rows(sim):
    w = np.where(np.arange(len(sim.y)) % 3 == 0, 2.0, 1.0)
    rep = np.repeat(np.arange(len(sim.y)), w.astype(int))
    fw = jdr.JointDimReduction(sim.y, sim.a, sim.b, weights=w).fit(2)
    dup = jdr.JointDimReduction(sim.y[rep], sim.a[rep], sim.b[rep]).fit(2)
    assert fw.rsquared == pytest.approx(dup.rsquared, rel=1e-9)
    assert fw.fit_measures.rsquared_adj == pytest.approx(dup.fit_measures.rsquared_adj,
                                                         rel=1e-9)


def test_streamed_source_gives_the_in_memory_rsquared(sim, res, tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "d.parquet"
    sim.frame.to_parquet(path, row_group_size=400)
    streamed = jdr.JointDimReduction.from_parquet(
        path, y="y", a=[f"a{j}" for j in range(5)], b=[f"b{j}" for j in range(4)],
        batch_rows=333).fit(2)
    assert streamed.rsquared == pytest.approx(res.rsquared, rel=1e-9)
    assert streamed.fit_measures.rsquared_ratio == pytest.approx(
        res.fit_measures.rsquared_ratio, rel=1e-9)


def test_bare_moments_say_not_available(sim):
    mom = jdr.Moments.from_arrays(sim.y, sim.a, sim.b)
    fit = jdr.JointDimReduction.from_moments(mom).fit(2)
    with pytest.raises(RowsNotInMemoryError):
        _ = fit.fit_measures
    assert "R-squared:          n/a (no rows)" in str(fit.summary())


def test_full_regression_skipped_when_too_wide():
    sim = jdr.simulate.bilinear(300, 8, 8, 1, seed=2)  # 80 regressors need 405 rows
    fm = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1).fit_measures
    assert fm.rsquared_full is None and fm.rsquared_ratio is None and fm.n_regressors_full == 80
    assert np.isfinite(fm.rsquared)


# -- group tests and drop1 ----------------------------------------------------------
@pytest.mark.parametrize("test", ["conditional", "marginal"])
def test_one_variable_is_the_sandwich_coordinate_test(res, test):
    from jdr_stats.estimation._joint import joint_data

    # the fit is the default (joint) estimator's: its variables are tested on
    # the residual rows
    assert res.settings.estimator.name == "joint"
    prep = prepare(joint_data(res.model.data)[0], True)
    rank = 2 if test == "conditional" else None
    expect = {}
    for block, z, wf, wo in (("a", prep.z_a, prep.w_a, prep.w_b),
                             ("b", prep.z_b, prep.w_b, prep.w_a)):
        ct = block_tests(prep.yc, z, wf, wo, rank=rank, conditional=test == "conditional",
                         standardize=True, covariance="sandwich", method="chi2",
                         n_perm=0, rng=None)
        expect[block] = ct
    table = res.drop1(test=test).table
    assert table.columns.tolist() == ["statistic", "df", "pvalue", "block"]
    np.testing.assert_allclose(table["statistic"].to_numpy(),
                               np.concatenate([expect["a"].stat, expect["b"].stat]), rtol=1e-10)
    np.testing.assert_allclose(table["pvalue"].to_numpy(),
                               np.concatenate([expect["a"].pvalue, expect["b"].pvalue]),
                               rtol=1e-8, atol=1e-300)
    assert set(table["df"]) == ({2.0} if test == "conditional" else {4.0, 5.0})
    # drop1 computes a block at once; test_variables one variable at a time
    for name in ("a0", "a3", "b1"):
        one = res.test_variables({name[0]: [name]}, test=test)
        assert one.statistic == pytest.approx(table.loc[name, "statistic"], rel=1e-9)


def test_group_test_df_names_and_power(sim, res):
    inactive_a = [f"a{j}" for j in range(5) if not sim.U[j].any()]
    inactive_b = [f"b{j}" for j in range(4) if not sim.V[j].any()]
    active_a = [f"a{j}" for j in range(5) if sim.U[j].any()]
    t0 = res.test_variables(inactive_a + inactive_b)
    assert t0.df == 2.0 * (len(inactive_a) + len(inactive_b))
    assert t0.distribution == f"chi2({int(t0.df)})" and "H0: the rows of U" in str(t0)
    assert res.test_variables(active_a).pvalue < 1e-6
    # a list and the mapping give the same test; the order of the names does not matter
    same = res.test_variables({"a": inactive_a[::-1], "b": inactive_b})
    assert same.statistic == pytest.approx(t0.statistic, rel=1e-10)


@pytest.mark.parametrize("variables,msg", [
    (["zz"], "no variable 'zz' in block a"),
    ({"c": ["a0"]}, 'variables keys must be "a" or "b"'),
    ({"a": ["b0"]}, "block a has no variable 'b0'"),
    (["a0", "a0"], "variables of block a are named twice"),
    ([], "at least one variable"),
])
def test_group_test_bad_names(res, variables, msg):
    with pytest.raises(ValueError, match=msg):
        res.test_variables(variables)


def test_group_test_needs_unweighted_rows(sim):
    fw = jdr.JointDimReduction(sim.y, sim.a, sim.b, weights=np.ones(len(sim.y))).fit(1)
    with pytest.raises(ValueError, match="case weights"):
        fw.drop1()
    with pytest.raises(ValueError, match='test must be "conditional" or "marginal"'):
        jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1).test_variables("a0", test="x")


def test_name_in_both_blocks_refused_and_the_mapping_names_a_block():
    """A name in both blocks is refused when the model is built;
    the mapping form of test_variables still names the block."""
    sim = jdr.simulate.bilinear(400, 3, 3, 1, seed=4)
    a = pd.DataFrame(sim.a, columns=["x", "p", "q"])
    b = pd.DataFrame(sim.b, columns=["x", "s", "t"])
    with pytest.raises(ValueError, match=r"\['x'\] are in both exog_a and exog_b"):
        jdr.JointDimReduction(sim.y, a, b)
    res = jdr.JointDimReduction(sim.y, a, b.rename(columns={"x": "r"})).fit(1)
    assert res.test_variables({"b": ["r"]}).df == 1.0


@pytest.mark.slow
def test_group_test_size_by_simulation():
    """Size of the conditional group test of every inactive variable at level
    0.05, Gaussian and t(5) blocks: within 3 Monte Carlo SE of 0.05 or below."""
    reps = 600
    rng = np.random.default_rng(20261126)
    se = np.sqrt(0.05 * 0.95 / reps)
    for design in ("gaussian", "t5"):
        rate = _group_rejection_rate(reps, rng, design, n1=6, n2=5, rank=1, active=2)
        assert 0.05 - 4 * se < rate < 0.05 + 3 * se, (design, rate)


def _group_rejection_rate(reps, rng, design, *, n1, n2, rank, active):
    """Share of samples (m = 1000, BILINEAR) whose conditional group test of
    every inactive variable rejects at 0.05."""
    rej = 0
    for _ in range(reps):
        sim = jdr.simulate.bilinear(1000, n1, n2, rank, s1=active, s2=active, design=design,
                                    seed=rng)
        fit = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(rank)
        group = {"a": [f"a{j}" for j in range(n1) if not sim.U[j].any()],
                 "b": [f"b{j}" for j in range(n2) if not sim.V[j].any()]}
        rej += fit.test_variables(group).pvalue < 0.05
    return rej / reps


def test_group_test_size_at_rank_two():
    """At r = 2 the conditional group test holds its level: before its
    leave-group-out basis was aligned with the full-data one (theory of
    support, 12.1) it rejected 9.6% (Gaussian) and 12.1% (t5) of 1000
    samples of this design (studies/results/study_group_test.txt)."""
    reps = 300
    rng = np.random.default_rng(20261127)
    se = np.sqrt(0.05 * 0.95 / reps)
    for design in ("gaussian", "t5"):
        rate = _group_rejection_rate(reps, rng, design, n1=8, n2=7, rank=2, active=3)
        assert rate <= 0.05 + 2.5 * se + 0.005, (design, rate)


def test_fit_measures_in_to_dict(sim, res):
    import json

    d = json.loads(res.to_json())
    assert d["fit_measures"]["rsquared"] == pytest.approx(res.rsquared, rel=1e-12)
    assert d["fit_measures"]["rsquared_ratio"] == pytest.approx(
        res.fit_measures.rsquared_ratio, rel=1e-12)
    bare = jdr.JointDimReduction.from_moments(jdr.Moments.from_arrays(sim.y, sim.a, sim.b)).fit(1)
    assert bare.to_dict()["fit_measures"] is None


@pytest.mark.parametrize("test", ["conditional", "marginal"])
def test_drop1_and_group_test_invariant_to_units_shifts_and_column_order(sim, res, test):
    """At r = 2 the sandwich statistics depend on the bases' spans only
    (theory of support, 12.1), so rescaling, shifting and reordering the
    columns of both blocks leaves every drop1 row and the group test as they
    were (before the alignment a reordering turned the bases and moved them)."""
    rng = np.random.default_rng(5)
    pa, pb = rng.permutation(5), rng.permutation(4)
    a = sim.a[:, pa] * rng.uniform(0.1, 10.0, 5) + 3.0
    b = sim.b[:, pb] * rng.uniform(0.1, 10.0, 4) - 2.0
    names_a, names_b = [f"a{j}" for j in pa], [f"b{j}" for j in pb]
    other = jdr.JointDimReduction(pd.Series(2.0 * sim.y + 1.0, name="y"),
                                  pd.DataFrame(a, columns=names_a),
                                  pd.DataFrame(b, columns=names_b)).fit(2)
    t1 = res.drop1(test=test).table
    t2 = other.drop1(test=test).table.loc[t1.index]
    np.testing.assert_allclose(t2["statistic"].to_numpy(), t1["statistic"].to_numpy(),
                               rtol=1e-7)
    group = {"a": ["a0", "a3"], "b": ["b1"]}
    assert other.test_variables(group, test=test).statistic == pytest.approx(
        res.test_variables(group, test=test).statistic, rel=1e-7)
