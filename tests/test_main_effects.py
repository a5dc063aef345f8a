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
from jdr_stats.inference.main_effects import MainEffectsResults, main_effects_test
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
    forced = jdr.JointDimReduction(y, a, b).fit(1).main_effects_test("robust")
    assert forced.table.loc["a", "method"] == "refused"
    assert "robust test refused" in forced.table.loc["a", "reason"]
    assert np.isnan(forced.pvalues).all() and not forced.result("a").applicable
    z = rng.normal(size=(m, 70))  # 70 covariate columns > half of m - 1
    wide_z = jdr.JointDimReduction(y, a[:, :5], b[:, :5], covariates=z).fit(
        1, independent_blocks=True).main_effects_test("permutation")
    assert wide_z.table["method"].tolist() == ["refused", "refused"]
    assert "the covariates cannot be partialled out" in wide_z.table.loc["a", "reason"]


def test_conditional_test_runs_where_the_robust_one_cannot():
    """Joint estimator, q n_k > 0.25 nu: Freedman-Lane given the other block
    (asymptotically valid, said in the reason); with covariates the same,
    given them too."""
    rng = np.random.default_rng(1)
    m = 120
    a, b = rng.normal(size=(m, 40)), rng.normal(size=(m, 30))
    y = b[:, :10].sum(axis=1) / 2 + rng.normal(size=m)
    t = jdr.JointDimReduction(y, a, b).fit(1, independent_blocks=False,
                                           whitening="sample").main_effects_test(seed=0)
    assert t.table["method"].tolist() == ["Freedman-Lane", "Freedman-Lane"]
    assert "asymptotically valid, not exact" in t.table.loc["a", "reason"]
    assert t.pvalues["b"] < 0.01 and np.isfinite(t.pvalues).all()
    z = rng.normal(size=(m, 2))
    adj = jdr.JointDimReduction(y, a[:, :5], b[:, :5], covariates=z).fit(
        1, independent_blocks=True)
    assert adj.main_effects_test().table["method"].tolist() == ["robust", "robust"]
    perm = adj.main_effects_test("permutation", seed=0)
    assert perm.table["method"].tolist() == ["Freedman-Lane", "Freedman-Lane"]
    assert "residuals of y on the covariates" in perm.table.loc["a", "reason"]
    # removed rows take the covariates' rows with them
    assert adj.remove_data()._model.data.adjustment.design is None


def _freedman_lane_by_hand(y, x, other, perms):
    """Freedman-Lane with statsmodels OLS for every fit: the residuals of y
    on (1, other) permuted, refitted, the studentised statistic."""
    design = sm.add_constant(other)
    e = sm.OLS(y, design).fit().resid
    z = np.column_stack([sm.OLS(x[:, j], design).fit().resid for j in range(x.shape[1])])

    def stat(r):
        return float(np.sum((z.T @ r) ** 2 / ((z**2).T @ r**2)))

    obs = stat(e)
    null = np.array([stat(sm.OLS(e[p], design).fit().resid) for p in perms])
    return obs, (1 + np.sum(null >= obs * (1 - 1e-10))) / (len(perms) + 1)


def test_freedman_lane_matches_an_independent_implementation():
    rng = np.random.default_rng(8)
    m = 80
    a, b = rng.normal(size=(m, 20)), rng.normal(size=(m, 25))
    y = b[:, 0] + 0.3 * a[:, 0] + rng.standard_t(5, m)
    t = jdr.JointDimReduction(y, a, b).fit(1).main_effects_test("permutation", n_perm=49,
                                                                seed=3)
    draw = np.random.default_rng(3)
    perms = [draw.permutation(m) for _ in range(49)]
    obs, pv = _freedman_lane_by_hand(y, a, b, perms)
    assert t.table.loc["a", "statistic"] == pytest.approx(obs, rel=1e-8)
    assert t.pvalues["a"] == pytest.approx(pv)


def test_conditional_test_invariances_and_seed():
    """Shifting, rescaling and reordering the columns of either block (and
    affine maps of y) leave the statistic and, with the same seed, the
    p-value unchanged; reordering the rows leaves the statistic unchanged
    (the p-value is a Monte Carlo estimate over other permutations: equal
    within its binomial error)."""
    rng = np.random.default_rng(9)
    m = 150
    a, b = rng.normal(size=(m, 30)), rng.normal(size=(m, 25))
    a[:, :25] += 0.6 * b
    y = b[:, 0] + 0.15 * a[:, 1] + rng.normal(size=m)

    def run(yy, aa, bb, seed=5, n_perm=199):
        return jdr.JointDimReduction(yy, aa, bb).fit(1).main_effects_test(
            "permutation", n_perm=n_perm, seed=seed).table

    base = run(y, a, b)
    assert base["method"].tolist() == ["Freedman-Lane", "Freedman-Lane"]
    ca, cb = rng.permutation(30), rng.permutation(25)
    sa, sb = rng.uniform(0.1, 10, 30), rng.uniform(0.1, 10, 25)
    moved = run(2 - 4 * y, (a * sa + 3)[:, ca], (b * sb - 1)[:, cb])
    np.testing.assert_allclose(moved["statistic"], base["statistic"], rtol=1e-8)
    np.testing.assert_array_equal(moved["pvalue"], base["pvalue"])
    pd.testing.assert_frame_equal(run(y, a, b), base)  # same seed, same numbers
    rows = rng.permutation(m)
    shuffled = run(y[rows], a[rows], b[rows], n_perm=999)
    np.testing.assert_allclose(shuffled["statistic"], base["statistic"], rtol=1e-8)
    long = run(y, a, b, seed=6, n_perm=999)
    se = np.sqrt(np.maximum(long["pvalue"] * (1 - long["pvalue"]), 0.01) / 999)
    assert (np.abs(shuffled["pvalue"] - long["pvalue"]) <= 5 * np.sqrt(2) * se).all()


def test_marginal_test_where_the_other_block_cannot_be_partialled_out():
    """nutrimouse's shape (40 rows, 120 + 21 columns): the default joint
    estimator runs the exact marginal permutation test, labelled so."""
    d = jdr.simulate.bilinear(40, 120, 21, 1, seed=0)
    res = jdr.JointDimReduction(d.y, d.a, d.b).fit(1)
    t = res.main_effects_test(seed=1)
    assert t.joint and t.table["method"].tolist() == ["permutation (marginal)"] * 2
    assert "MARGINAL association" in t.table.loc["a", "reason"]
    assert np.isfinite(t.pvalues).all()
    assert "Rows marked (marginal)" in " ".join(str(t.summary()).split())
    flat = " ".join(str(res.summary()).split())
    assert "main-effects tests (results.main_effects_test()): marginal permutation;" in flat
    assert ", marginal)" in res.summary().headline[0]  # each block's p-value says so
    assert "marginal: not given the other block (too wide to partial out), exact." in flat
    # with covariates: the marginal test given the covariates (Freedman-Lane);
    # the rows as the model passes them, residuals on (1, Z)
    rng = np.random.default_rng(2)
    a, b, z = rng.normal(size=(60, 50)), rng.normal(size=(60, 30)), rng.normal(size=(60, 3))
    y = b[:, 0] + rng.normal(size=60)
    zc = sm.add_constant(z)
    ya, aa, ba = (v - zc @ np.linalg.lstsq(zc, v, rcond=None)[0] for v in (y, a, b))
    adj = main_effects_test(ya, [aa, ba], ["a", "b"], None, joint=True, n_adjusted=3,
                            covariates=z, seed=0)
    assert adj.table["method"].tolist() == ["Freedman-Lane (marginal)"] * 2
    assert "given the covariates only" in adj.table.loc["a", "reason"]


@pytest.mark.parametrize(("m", "df", "kw", "expected"), [
    (200, 20, {"n_other": None}, "robust"),
    (40, 120, {"n_other": None}, "permutation"),
    (2000, 684, {"n_other": 64}, "Freedman-Lane"),  # the UCI digits' shape
    (100, 45, {"n_other": 45}, "Freedman-Lane"),
    (100, 45, {"n_other": 55}, "permutation (marginal)"),
    (40, 120, {"n_other": 21}, "permutation (marginal)"),  # nutrimouse's shape
    (40, 120, {"n_other": 21, "n_adjusted": 2}, "Freedman-Lane (marginal)"),
    (300, 100, {"n_other": None, "n_adjusted": 3}, "Freedman-Lane"),
    (300, 100, {"n_other": None, "n_adjusted": 3, "covariates_kept": False},
     "refused"),
    (300, 60, {"n_other": 200}, "permutation (marginal)"),
])
def test_choice_of_the_main_effects_method(m, df, kw, expected):
    choice = policy.main_effects_method(m, df, **kw)
    assert choice.name == expected
    assert choice.reason and set(choice.inputs) >= {"m", "df", "nu", "partialled"}
    # a request for the robust version never falls back to another test
    assert policy.main_effects_method(m, df, **kw, requested="robust").name in (
        "robust", "refused")
    # a request for a permutation version runs one even where "robust" would
    assert policy.main_effects_method(m, df, **kw, requested="permutation").name != "robust"


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
        assert "the first line's main-effects tests (results.main_effects_test()): robust." \
            in flat
        head = res.summary().headline[0]  # each block's verdict with its p-value
        for n in ("a", "b"):
            verdict = "a" if me[n] < 0.05 else "no"
            assert f"{n}: {verdict} main effect (p = {format_pvalue(me[n])})" in head
        assert "H0: E[y z] = 0" in GUIDE
        assert str(res.remove_data().summary()) == text
        summ = str(res.main_effects_test().summary())
        assert "Tests of main effects" in summ and "H0" in summ
    note = [n for n in text.split("\n\n")[-1:]]
    assert note  # the summary renders
    wide = jdr.simulate.bilinear(40, 120, 21, 1, seed=0)
    wres = jdr.JointDimReduction(wide.y, wide.a, wide.b).fit(1)
    assert "(permutation)" in str(wres.summary())
    assert policy.main_effects_method(40, 120, n_other=None).name == "permutation"


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
    flat = " ".join(out.split())
    assert "What this reduction can see" in out and "a: a main effect (p = " in flat
    assert "main-effects tests (results.main_effects_test())" in flat


@pytest.mark.slow
def test_conditional_test_holds_its_level_given_the_other_block():
    """Correlated blocks (a = 0.6 b + 0.8 e), y from b only: no main effect
    of a given b, a strong marginal one.  The Freedman-Lane rejection rate of
    block a at 0.05 within 3 Monte Carlo SEs of 0.05 (one cell of
    studies/study_main_effects.py --part conditional)."""
    rng = np.random.default_rng(20260602)
    reps, m, n = 300, 300, 30
    rej = 0
    for _ in range(reps):
        b, e = rng.normal(size=(m, n)), rng.normal(size=(m, n))
        a = 0.6 * b + 0.8 * e
        y = b[:, 0] + (1 + np.abs(e[:, 1])) * rng.normal(size=m)
        t = jdr.JointDimReduction(y, a, b).fit(1).main_effects_test(
            "permutation", n_perm=99, seed=rng)
        assert t.table.loc["a", "method"] == "Freedman-Lane"
        rej += int(t.pvalues["a"] <= 0.05)
    assert abs(rej / reps - 0.05) <= 3 * np.sqrt(0.05 * 0.95 / reps)


def test_summary_above_its_permutation_rows_names_what_runs_instead():
    """Above policy.MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS the summary runs only the
    robust test; where that is refused the line says what runs instead."""
    rng = np.random.default_rng(3)
    m = policy.MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS + 1
    a, b = rng.normal(size=(m, 60)), rng.normal(size=(m, 8))
    y = pd.Categorical(rng.integers(0, 10, size=m))
    res = jdr.JointDimReduction(y, a, b).fit(1)
    flat = " ".join(" ".join(res.summary().shown()[1]).split())
    assert "a, not run (q n_k = 540 > 0.25 of the" in flat
    assert ("instead results.main_effects_test(), a permutation version (not in the "
            f"summary above {policy.MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS} rows)") in flat
    assert res.main_effects_test(seed=0).table.loc["a", "method"] == "Freedman-Lane"


def test_summary_gives_each_reason_as_a_note_not_a_column():
    """A reason is a sentence: the summary's table leaves it out (its text
    stays within the summary's width) and each row's reason is a note; the
    table and to_dict keep it."""
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(40, 60)), rng.normal(size=(40, 12))
    y = pd.Categorical(np.repeat(["p", "q"], 20))
    t = jdr.JointDimReduction(y, a, b).fit(1).main_effects_test(seed=0)
    s = t.summary()
    assert all("reason" not in f.columns for f in s.frames.values())
    text = str(s)
    assert max(len(line) for line in text.splitlines()) <= 100
    flat = " ".join(text.split())
    for block in ("a", "b"):
        reason = t.table.loc[block, "reason"]
        assert reason and f"Why {t.table.loc[block, 'method']}, block {block}: {reason}." in flat
    assert [r["reason"] for r in t.to_dict()["tests"]] == list(t.table["reason"])


@pytest.mark.parametrize("whitening", ["auto", "shrinkage", "diagonal", "none"])
def test_marginal_rows_are_the_per_block_test(whitening):
    """p >> n (40 rows, 60 + 24 columns, 4 classes): the joint estimator's
    marginal permutation rows are the per-block fit's test, the block under
    its per-block whitening: the same statistic and, same seed, p-value."""
    rng = np.random.default_rng(3)
    m = 40
    cls = rng.permutation(np.repeat(np.arange(4), 10))
    # correlated columns of unequal scales: the whitening matters (OAS
    # shrinks the correlation matrix, here not all the way to the identity)
    a = rng.normal(size=(m, 4)) @ rng.normal(size=(4, 60)) + 0.5 * rng.normal(size=(m, 60))
    a[:, :5] *= 4.0
    a[:, 7] += 0.8 * cls
    b = 0.5 * a[:, :24] + rng.normal(size=(m, 24))
    y = pd.Categorical(cls)
    mod = jdr.JointDimReduction(y, a, b)
    joint = mod.fit(1, whitening=whitening).main_effects_test(seed=4)
    per_fit = mod.fit(1, whitening=whitening, independent_blocks=True)
    per = per_fit.main_effects_test(seed=4)
    assert joint.joint and not per.joint
    assert joint.table["method"].tolist() == ["permutation (marginal)"] * 2
    assert per.table["method"].tolist() == ["permutation"] * 2
    np.testing.assert_allclose(joint.table["statistic"], per.table["statistic"], rtol=1e-10)
    np.testing.assert_array_equal(joint.pvalues, per.pvalues)
    if whitening == "auto":  # OAS per block, not the centred block of before
        assert per_fit.whitening == "shrinkage"
        assert 0 < per_fit._whitening[0].shrinkage < 1


def test_marginal_row_under_sample_whitening_is_the_per_block_test():
    """whitening="sample" given (block a narrow, block b too wide to partial
    out): block a's marginal permutation row is the per-block fit's."""
    rng = np.random.default_rng(5)
    m = 100
    a = rng.normal(size=(m, 10)) * rng.uniform(0.2, 5, 10)
    b = np.hstack([a @ rng.normal(size=(10, 60)) * 0.1, np.zeros((m, 0))]) \
        + rng.normal(size=(m, 60))
    y = a[:, 0] + rng.normal(size=m)
    mod = jdr.JointDimReduction(y, a, b)
    joint = mod.fit(1, whitening="sample").main_effects_test("permutation", seed=2)
    per = mod.fit(1, whitening="sample", independent_blocks=True).main_effects_test(
        "permutation", seed=2)
    assert joint.joint and joint.table.loc["a", "method"] == "permutation (marginal)"
    assert per.table.loc["a", "method"] == "permutation"
    np.testing.assert_allclose(joint.table.loc["a", "statistic"],
                               per.table.loc["a", "statistic"], rtol=1e-10)
    assert joint.pvalues["a"] == per.pvalues["a"]


def test_kblock_marginal_rows_are_the_per_block_test():
    """Three blocks, whitening="sample" (the joint K-block estimator's): the
    blocks too wide to partial out run the per-block fit's permutation test."""
    rng = np.random.default_rng(7)
    m = 60
    a = rng.normal(size=(m, 3)) * [0.3, 1.0, 6.0]
    b = rng.normal(size=(m, 20)) * rng.uniform(0.2, 5, 20)
    c = 0.3 * np.repeat(b[:, :10], 3, axis=1) + rng.normal(size=(m, 30))
    y = a[:, 0] + b[:, 1] + rng.normal(size=m)
    mod = jdr.JointDimReduction.from_blocks(y, {"a": a, "b": b, "c": c})
    joint = mod.fit(1, whitening="sample").main_effects_test("permutation", seed=3)
    per = mod.fit(1, whitening="sample", independent_blocks=True).main_effects_test(
        "permutation", seed=3)
    assert joint.joint and joint.table["method"].tolist()[:2] == ["permutation (marginal)"] * 2
    np.testing.assert_allclose(joint.table["statistic"][:2], per.table["statistic"][:2],
                               rtol=1e-10)
    np.testing.assert_array_equal(joint.pvalues[:2], per.pvalues[:2])
