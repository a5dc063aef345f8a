"""The per-block test of main effects (results.main_effects_test) and the
summary's part "What this reduction can see"."""

from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import statsmodels.api as sm
from scipy import stats

import jdr_stats as jdr
from jdr_stats import policy
from jdr_stats.exceptions import RowsNotInMemoryError
from jdr_stats.inference.main_effects import MainEffectsResults
from jdr_stats.summary import format_pvalue

#: The guide page the summary's notes point to for their explanations.
GUIDE = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "summary.md").read_text()


def _shifted_classes(m: int = 600, classes: int = 3, delta: float = 0.5, seed: int = 0):
    """Classes that shift block a's mean along a_0: a main effect only."""
    rng = np.random.default_rng(seed)
    cls = rng.integers(0, classes, m)
    a, b = rng.normal(size=(m, 6)), rng.normal(size=(m, 5))
    a[:, 0] += delta * cls
    return pd.Categorical(cls), a, b


def test_finds_class_mean_shifts_that_the_rank_test_cannot_see():
    y, a, b = _shifted_classes()
    res = jdr.JointDimReduction(y, a, b).fit(1, independent_blocks=False)
    t = res.main_effects_test()
    assert isinstance(t, MainEffectsResults) and t.joint
    assert list(t.table.columns[:3]) == ["statistic", "df", "pvalue"]
    assert t.table["method"].tolist() == ["robust", "robust"]
    assert t.pvalues["a"] < 1e-8  # the shift is found
    assert t.table.loc["a", "df"] == 6 * 2  # n_k q, q = 2 class indicators
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rank0 = res.rank_tests(max_rank=0).pvalues.iloc[0]
    # the joint estimator's rank test sees nothing of it (third moments only)
    assert rank0 > 0.01


def _lm_by_auxiliary_regression(y, x, other):
    """Robust LM statistic m - SSR of the regression of 1 on u_i = z_i e_i
    (z, e: residuals of the block and y on (1, other)), by statsmodels OLS."""
    m = len(y)
    design = np.ones((m, 1)) if other is None else sm.add_constant(other)
    e = sm.OLS(y, design).fit().resid
    z = np.column_stack([sm.OLS(x[:, j], design).fit().resid for j in range(x.shape[1])])
    aux = sm.OLS(np.ones(m), z * e[:, None]).fit()
    return m - aux.ssr


@pytest.mark.parametrize("joint", [False, True])
def test_statistic_matches_the_auxiliary_regression(joint):
    """F = (nu - P) d / P with T_LM = m d / (1 + d) the robust LM statistic,
    computed independently by an auxiliary regression (statsmodels)."""
    rng = np.random.default_rng(3)
    m = 300
    a, b = rng.normal(size=(m, 4)), rng.normal(size=(m, 3))
    b[:, 0] += 0.5 * a[:, 0]
    y = 0.2 * a[:, 1] + a[:, 2] * b[:, 1] + (1 + np.abs(b[:, 2])) * rng.standard_t(5, m)
    t = jdr.JointDimReduction(y, a, b).fit(1, independent_blocks=not joint).main_effects_test()
    for k, (x, other) in enumerate(((a, b), (b, a))):
        lm = _lm_by_auxiliary_regression(y, x, other if joint else None)
        d = lm / (m - lm)
        p = x.shape[1]
        nu = m - 1 - (other.shape[1] if joint else 0)
        row = t.table.iloc[k]
        assert row["statistic"] == pytest.approx((nu - p) * d / p, rel=1e-8)
        assert (row["df"], row["df_denom"]) == (p, nu - p)
        assert row["pvalue"] == pytest.approx(stats.f.sf(row["statistic"], p, nu - p),
                                              rel=1e-10)


def test_invariant_to_affine_maps_of_blocks_and_response_and_row_order():
    rng = np.random.default_rng(5)
    m = 250
    a, b = rng.normal(size=(m, 4)), rng.normal(size=(m, 3))
    y = 0.3 * a[:, 0] + a[:, 1] * b[:, 0] + rng.normal(size=m)
    base = jdr.JointDimReduction(y, a, b).fit(1).main_effects_test().table
    mix = rng.normal(size=(4, 4)) + 3 * np.eye(4)
    perm = rng.permutation(m)
    other = jdr.JointDimReduction(5 - 3 * y[perm], (a @ mix + 7)[perm], 100 * b[perm]).fit(1)
    got = other.main_effects_test().table
    np.testing.assert_allclose(got["statistic"], base["statistic"], rtol=1e-8)
    np.testing.assert_allclose(got["pvalue"], base["pvalue"], rtol=1e-7)


def test_integer_weights_equal_duplicated_rows():
    """Frequency weights: the statistic's d equals that of the rows repeated
    (F differs only through nu, the number of rows)."""
    rng = np.random.default_rng(7)
    m = 200
    a, b = rng.normal(size=(m, 3)), rng.normal(size=(m, 3))
    y = 0.2 * a[:, 0] + rng.normal(size=m)
    w = rng.integers(1, 4, m)
    idx = np.repeat(np.arange(m), w)
    for joint in (False, True):
        tw = jdr.JointDimReduction(y, a, b, weights=w.astype(float)).fit(
            1, independent_blocks=not joint).main_effects_test().table
        td = jdr.JointDimReduction(y[idx], a[idx], b[idx]).fit(
            1, independent_blocks=not joint).main_effects_test().table
        dw = tw["statistic"] * tw["df"] / tw["df_denom"]
        dd = td["statistic"] * td["df"] / td["df_denom"]
        np.testing.assert_allclose(dw, dd, rtol=1e-8)


def test_size_on_a_heavy_tailed_heteroscedastic_null():
    """y = u v + heteroscedastic t(5) noise: an interaction and no main
    effect.  Rejection rate at 0.05 within 3 Monte Carlo SEs (from above)."""
    rng = np.random.default_rng(20260402)
    reps, m, n = 300, 200, 10
    rej = 0
    for _ in range(reps):
        a, b = rng.standard_t(5, (m, n)), rng.standard_t(5, (m, n))
        y = a[:, 0] * b[:, 0] + (1 + 2 * np.abs(a[:, 1])) * rng.standard_t(5, m)
        rej += int(jdr.JointDimReduction(y, a, b).fit(1).main_effects_test().pvalues["a"] <= 0.05)
    rate = rej / reps
    assert rate <= 0.05 + 3 * np.sqrt(0.05 * 0.95 / reps)
    assert rate >= 0.005  # not a test that never rejects


def test_permutation_version_is_exact_at_p_much_larger_than_n():
    """At 120 + 21 columns and 40 rows the robust test cannot run; the
    permutation version's rejection rate under independence is at most
    alpha (exact: (1 + #{T* >= T}) / (B + 1) is super-uniform)."""
    rng = np.random.default_rng(11)
    reps, rej = 200, 0
    for _ in range(reps):
        a, b = rng.normal(size=(40, 120)), rng.normal(size=(40, 21))
        y = rng.integers(0, 2, 40).astype(float)
        # the permutation version is the per-block (marginal) test's; under the
        # joint default it is refused (test_refusals_name_the_reason)
        t = jdr.JointDimReduction(y, a, b).fit(1, independent_blocks=True).main_effects_test(
            n_perm=39, seed=rng)
        assert t.table["method"].tolist() == ["permutation", "permutation"]
        rej += int(t.pvalues["a"] <= 0.1)
    rate = rej / reps
    assert rate <= 0.1 + 3 * np.sqrt(0.1 * 0.9 / reps)


def test_permutation_version_has_power_at_width():
    rng = np.random.default_rng(12)
    cls = rng.integers(0, 2, 40)
    a, b = rng.normal(size=(40, 120)), rng.normal(size=(40, 21))
    a[:, :10] += 1.5 * cls[:, None]
    t = jdr.JointDimReduction(pd.Categorical(cls), a, b).fit(
        1, independent_blocks=True).main_effects_test(seed=0)  # the per-block permutation test
    assert t.pvalues["a"] == pytest.approx(1 / 200)
    assert t.pvalues["b"] > 0.01


def test_same_seed_same_table():
    d = jdr.simulate.bilinear(40, 120, 21, 1, seed=0)
    res = jdr.JointDimReduction(d.y, d.a, d.b).fit(1)
    t1, t2 = res.main_effects_test(seed=4), res.main_effects_test(seed=4)
    pd.testing.assert_frame_equal(t1.table, t2.table)


def test_refusals_name_the_reason():
    rng = np.random.default_rng(1)
    m = 120
    a, b = rng.normal(size=(m, 40)), rng.normal(size=(m, 30))
    y = rng.normal(size=m)
    joint = jdr.JointDimReduction(y, a, b).fit(1, independent_blocks=False,
                                               whitening="sample")
    t = joint.main_effects_test()
    assert t.table["method"].tolist() == ["refused", "refused"]
    assert np.isnan(t.pvalues).all()
    assert "independent_blocks=True" in t.table.loc["a", "reason"]
    assert not t.result("a").applicable
    forced = jdr.JointDimReduction(y, a, b).fit(1).main_effects_test("robust")
    assert forced.table.loc["a", "method"] == "refused"
    assert "robust test refused" in forced.table.loc["a", "reason"]
    z = rng.normal(size=(m, 2))
    adj = jdr.JointDimReduction(y, a[:, :5], b[:, :5], covariates=z).fit(
        1, independent_blocks=True)  # per block, covariates are what refuses it
    t_adj = adj.main_effects_test("permutation")
    assert "covariates" in t_adj.table.loc["a", "reason"]
    assert adj.main_effects_test().table["method"].tolist() == ["robust", "robust"]


def test_bad_arguments():
    d = jdr.simulate.bilinear(300, 4, 3, 1, seed=0)
    res = jdr.JointDimReduction(d.y, d.a, d.b).fit(1)
    with pytest.raises(ValueError, match="method must be"):
        res.main_effects_test("wald")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_perm must be a positive integer; got 0"):
        res.main_effects_test(n_perm=0)
    with pytest.raises(RowsNotInMemoryError, match="main_effects_test"):
        res.remove_data().main_effects_test()


def test_summary_says_what_the_reduction_can_see():
    y, a, b = _shifted_classes(seed=2)
    for joint in (False, True):
        res = jdr.JointDimReduction(y, a, b).fit(1, independent_blocks=not joint)
        text = str(res.summary())
        flat = " ".join(text.split())
        assert "What this reduction can see: interactions between the blocks" in flat
        me = res.main_effects_test(n_perm=policy.MAIN_EFFECTS_PERMUTATIONS,
                                   seed=policy.MAIN_EFFECTS_SEED).pvalues
        assert (f"their tests (results.main_effects_test()): a, p = {format_pvalue(me['a'])} "
                f"(robust); b, p = {format_pvalue(me['b'])} (robust).") in flat
        assert "H0: E[y z] = 0" in GUIDE
        assert str(res.remove_data().summary()) == text
        summ = str(res.main_effects_test().summary())
        assert "Tests of main effects" in summ and "H0" in summ
    note = [n for n in text.split("\n\n")[-1:]]
    assert note  # the summary renders
    wide = jdr.simulate.bilinear(40, 120, 21, 1, seed=0)
    wres = jdr.JointDimReduction(wide.y, wide.a, wide.b).fit(1)
    assert "(permutation)" in str(wres.summary())
    assert policy.main_effects_method(39, 120, joint=False, adjusted=False).name == "permutation"


def test_command_line_prints_what_the_fit_can_see(tmp_path, capsys):
    from jdr_stats.cli import main

    y, a, b = _shifted_classes(m=300, seed=4)
    frame = pd.DataFrame(np.column_stack([a, b]), columns=[f"a{j}" for j in range(6)]
                         + [f"b{j}" for j in range(5)])
    frame["y"] = np.asarray(y.codes, float)
    path = tmp_path / "d.csv"
    frame.to_csv(path, index=False)
    assert main(["fit", str(path), "--y", "y", "--a", ",".join(f"a{j}" for j in range(6)),
                 "--b", ",".join(f"b{j}" for j in range(5)), "--rank", "1"]) == 0
    out = capsys.readouterr().out
    assert "What this reduction can see" in out and "their tests (results.main_effects_test()): a, p =" in " ".join(out.split())
