"""fit(sparsity="cv"): the cross-validated choice of (s1, s2) (support/_cv.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats import policy


def _model(m=40, n1=120, n2=21, seed=0, **kw):
    sim = jdr.simulate.bilinear(m, n1, n2, 1, s1=5, s2=5, seed=seed, **kw)
    return sim, jdr.JointDimReduction(sim.y, sim.a, sim.b)


def test_cv_runs_at_the_nutrimouse_shape_and_reports_its_curve():
    _, model = _model()
    res = model.fit(1, sparsity="cv", seed=3, independent_blocks=True)
    cv = res.sparsity_cv
    assert isinstance(cv, pd.DataFrame)
    assert list(cv.columns) == ["s1", "s2", "cv_rsquared", "se", "best", "chosen"]
    grid_a, grid_b = policy.sparsity_grid(120, 1), policy.sparsity_grid(21, 1)
    assert len(cv) == len(grid_a) * len(grid_b)
    assert cv["chosen"].sum() == 1 and cv["best"].sum() == 1
    chosen = cv.loc[cv["chosen"]].iloc[0]
    best = cv.loc[cv["best"]].iloc[0]
    assert res.sparsity == (int(chosen.s1), int(chosen.s2))
    assert len(res.support_a) == res.sparsity[0] and len(res.support_b) == res.sparsity[1]
    # the one-standard-error rule: within one SE of the best, and no sparser pair is
    assert chosen.cv_rsquared >= best.cv_rsquared - best.se
    near = cv[cv.cv_rsquared >= best.cv_rsquared - best.se]
    assert (near.s1 + near.s2).min() == chosen.s1 + chosen.s2
    choice = res.settings.sparsity_choice
    assert choice.name == str(res.sparsity).replace(" ", " ") and "one SE" in choice.reason
    assert res.settings.choices["sparsity"] is choice
    text = " ".join(str(res.summary()).split())
    assert f"{res.sparsity} (cv)" in text and "out-of-fold R-squared" in text
    # read-only: the property hands out a copy
    cv.loc[0, "s1"] = -1
    assert res.sparsity_cv.loc[0, "s1"] != -1


def test_cv_runs_at_500_plus_500_with_100_rows():
    _, model = _model(100, 500, 500)
    res = model.fit(1, sparsity="cv", seed=0, independent_blocks=True)
    assert res.whitening == "shrinkage" and res.sparsity_cv is not None


def test_cv_finds_a_strong_sparse_signal():
    """With a strong signal (m = 200, 30 + 20 columns, 3 active per block)
    the chosen variables are active ones, including each block's largest
    loading, and the curve is positive: this would fail for a criterion
    blind to the signal."""
    sim = jdr.simulate.bilinear(200, 30, 20, 1, s1=3, s2=3, strengths=[3.0], seed=4)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(
        1, sparsity="cv", seed=1, independent_blocks=True)
    true_a = {f"a{j}" for j in np.flatnonzero(sim.U[:, 0])}
    true_b = {f"b{j}" for j in np.flatnonzero(sim.V[:, 0])}
    sel_a, sel_b = set(res.support_a), set(res.support_b)
    assert sel_a <= true_a and sel_b <= true_b
    assert f"a{np.argmax(np.abs(sim.U[:, 0]))}" in sel_a
    assert f"b{np.argmax(np.abs(sim.V[:, 0]))}" in sel_b
    assert res.sparsity_cv["cv_rsquared"].max() > 0.3


def test_same_seed_same_numbers_and_the_seed_matters():
    _, model = _model(60, 40, 15, seed=2, strengths=[2.0])
    one = model.fit(1, sparsity="cv", seed=11, independent_blocks=True)
    two = model.fit(1, sparsity="cv", seed=11, independent_blocks=True)
    pd.testing.assert_frame_equal(one.sparsity_cv, two.sparsity_cv)
    assert one.sparsity == two.sparsity
    other = model.fit(1, sparsity="cv", seed=12, independent_blocks=True)
    assert not np.allclose(one.sparsity_cv.cv_rsquared, other.sparsity_cv.cv_rsquared)


def test_rescaling_and_reordering_columns_changes_no_selection():
    sim, model = _model(60, 40, 15, seed=5, strengths=[2.0])
    ref = model.fit(1, sparsity="cv", seed=2, independent_blocks=True)
    rng = np.random.default_rng(0)
    names_a = [f"a{j}" for j in range(40)]
    names_b = [f"b{j}" for j in range(15)]
    pa, pb = rng.permutation(40), rng.permutation(15)
    a = pd.DataFrame(sim.a * rng.uniform(0.01, 100, 40) + rng.normal(0, 50, 40),
                     columns=names_a).iloc[:, pa]
    b = pd.DataFrame(sim.b * rng.uniform(0.01, 100, 15), columns=names_b).iloc[:, pb]
    res = jdr.JointDimReduction(sim.y, a, b).fit(1, sparsity="cv", seed=2,
                                                 independent_blocks=True)
    assert res.sparsity == ref.sparsity
    assert sorted(res.support_a) == sorted(ref.support_a)
    assert sorted(res.support_b) == sorted(ref.support_b)
    np.testing.assert_allclose(res.sparsity_cv.cv_rsquared, ref.sparsity_cv.cv_rsquared,
                               atol=1e-8)


def test_categorical_response():
    sim = jdr.simulate.bilinear(60, 30, 12, 1, s1=3, s2=3, strengths=[3.0], seed=1)
    y = pd.Categorical(np.digitize(sim.y, np.quantile(sim.y, [1 / 3, 2 / 3])))
    res = jdr.JointDimReduction(y, sim.a, sim.b).fit(1, sparsity="cv", seed=0,
                                                     independent_blocks=True)
    assert res.sparsity_cv is not None and np.isfinite(res.sparsity_cv.cv_rsquared).all()


def test_bad_input_names_the_argument_and_value():
    _, model = _model(40, 12, 6)
    with pytest.raises(ValueError, match=r"sparsity must be .*\"cv\".*got 'cross'"):
        model.fit(1, sparsity="cross")
    sim = jdr.simulate.bilinear(9, 4, 3, 1, seed=0)
    with pytest.raises(ValueError, match=r'sparsity="cv" needs .* got 9 rows'):
        jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1, sparsity="cv", seed=0)
    sim = jdr.simulate.bilinear(30, 25, 4, 1, seed=0)
    with pytest.raises(ValueError, match=r'sparsity="cv" whitens .*whitening="sample"'):
        jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1, sparsity="cv", whitening="sample",
                                                       independent_blocks=True, seed=0)
    with pytest.raises(ValueError, match=r'independent_blocks=False .*whitening="sample" '
                       r'needs at least n1 \+ n2 \+ 2 = 31 rows'):
        jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1, sparsity="cv", whitening="sample",
                                                       seed=0)
    sim = jdr.simulate.bilinear(40, 12, 6, 1, seed=0)
    weighted = jdr.JointDimReduction(sim.y, sim.a, sim.b, weights=np.ones(40))
    with pytest.raises(ValueError, match=r'sparsity="cv" does not handle case weights'):
        weighted.fit(1, sparsity="cv", seed=0)


def test_policy_grid_and_choice():
    assert policy.sparsity_grid(500, 1)[0] == 1 and policy.sparsity_grid(500, 1)[-1] == 500
    assert policy.sparsity_grid(2, 2) == [2]
    c = policy.sparsity_cv((3, 3), (1, 1), -0.1, 0.05, 49, 5)
    assert "not supported by the data" in c.reason


def test_selection_stability_frequencies():
    sim, model = _model(60, 40, 15, seed=5, strengths=[3.0])
    res = model.fit(1, sparsity=(4, 3), independent_blocks=True)
    st = res.selection_stability(10, seed=1)
    assert list(st.columns) == ["selected", "frequency"]
    assert len(st) == 55 and st["selected"].sum() == 7
    # every subsample selects exactly s1 + s2 variables
    assert np.isclose(st.loc["a", "frequency"].sum(), 4)
    assert np.isclose(st.loc["b", "frequency"].sum(), 3)
    assert ((st.frequency >= 0) & (st.frequency <= 1)).all()
    assert st.loc["a"].iloc[:4]["selected"].all()  # the support first
    pd.testing.assert_frame_equal(st, res.selection_stability(10, seed=1))
    # units and column order change nothing
    a = pd.DataFrame(sim.a * np.arange(1, 41), columns=[f"a{j}" for j in range(40)])
    rescaled = jdr.JointDimReduction(sim.y, a.iloc[:, ::-1], sim.b).fit(
        1, sparsity=(4, 3), independent_blocks=True)
    other = rescaled.selection_stability(10, seed=1)
    pd.testing.assert_series_equal(other.frequency.sort_index(), st.frequency.sort_index(),
                                   atol=1e-12)
    with pytest.raises(ValueError, match=r"needs a sparse fit; got sparsity=None"):
        model.fit(1).selection_stability(10)
    with pytest.raises(ValueError, match=r"n_sub must be at least 2.*got 1"):
        res.selection_stability(1)


def test_sparse_association_statistic():
    from jdr_stats.inference.association import minp_pvalue, sparse_levels

    assert sparse_levels(500, 500)[0] == (1, 1) and sparse_levels(500, 500)[-1] == (500, 500)
    # minP: the observed vector ranked among the B + 1 (a largest vector gets 1/(B+1))
    null = np.array([[1.0, 1.0], [2.0, 0.5], [0.5, 2.0]])
    assert minp_pvalue(np.array([3.0, 3.0]), null) == 0.25
    assert minp_pvalue(np.array([0.1, 0.1]), null) == 1.0
    sim = jdr.simulate.bilinear(200, 40, 15, 1, s1=2, s2=2, strengths=[4.0], seed=1)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1, independent_blocks=True)
    t = res.association_test(49, seed=3, statistic="sparse")
    assert t.pvalue == 1 / 50 and "min p over sparsity levels" in t.distribution
    assert t.pvalue == res.association_test(49, seed=3, statistic="sparse").pvalue
    noise = jdr.simulate.bilinear(60, 40, 15, 1, strengths=[0.0], seed=1)
    null_res = jdr.JointDimReduction(noise.y, noise.a, noise.b).fit(1, independent_blocks=True)
    assert null_res.association_test(49, seed=3, statistic="sparse").pvalue > 0.05
    with pytest.raises(ValueError, match=r'statistic must be "combined", "dense" or "sparse"; got \'max\''):
        res.association_test(9, statistic="max")  # type: ignore[arg-type]
