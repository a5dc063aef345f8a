"""Issue 21: categorical and multivariate responses, and covariates.

Input rules, the estimator for q > 1 (HOSVD of the q cross moments), the
invariances (hypothesis), inference on each kind of response, and seeded
size checks of the rank tests with and without the adjustment.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import jdr_stats as jdr
from jdr_stats.exceptions import AssumptionWarning, CovariateWarning, RareClassWarning

from .strategies import column_recoding


def _design(m: int = 600, n1: int = 4, n2: int = 3, seed: int = 0):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(m, n1)), rng.normal(size=(m, n2))
    return rng, a, b


def _classes(a, b, rng, c: int = 3):
    """A categorical response driven by a0 * b0 (rank one)."""
    t = a[:, 0] * b[:, 0] + 0.5 * rng.normal(size=a.shape[0])
    cuts = np.quantile(t, np.linspace(0, 1, c + 1)[1:-1])
    return np.array(list("ABCDEFG"))[np.digitize(t, cuts)]


def _angle(x, y) -> float:
    return float(np.max(jdr.metrics.principal_angles(np.asarray(x), np.asarray(y))))


# ---------------------------------------------------------------------------
# Input rules
# ---------------------------------------------------------------------------
def test_categorical_kinds_agree():
    rng, a, b = _design()
    y = _classes(a, b, rng)
    fits = [
        jdr.JointDimReduction(y, a, b).fit(1),  # str array
        jdr.JointDimReduction(pd.Categorical(y), a, b).fit(1),
        jdr.JointDimReduction(pd.Series(y, dtype="category"), a, b).fit(1),
        jdr.JointDimReduction(pd.Series(y).map({"A": 0, "B": 1, "C": 2}), a, b,
                              response="categorical").fit(1),
    ]
    for res in fits:
        assert res.model.data.response.kind == "categorical"
        assert res.model.data.response.q == 2
        assert _angle(res.directions_a, fits[0].directions_a) < 1e-8
    assert "categorical, 3 classes" in str(fits[0].summary())


def test_two_classes_are_todays_binary_fit():
    """A boolean response = its 0/1 coding as a numeric response, bit for bit."""
    rng, a, b = _design()
    y = a[:, 0] * b[:, 0] + rng.normal(size=600) > 0
    cat = jdr.JointDimReduction(y, a, b).fit(1)
    num = jdr.JointDimReduction(y.astype(float), a, b, response="numeric").fit(1)
    assert cat.model.data.response.kind == "categorical"
    np.testing.assert_array_equal(cat.singular_values, num.singular_values)
    np.testing.assert_array_equal(cat.directions_a, num.directions_a)


def test_numeric_response_unchanged():
    sim = jdr.simulate.bilinear(500, 4, 3, 1, seed=2)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    assert res.model.data.response.kind == "numeric"
    assert res.model.endog.ndim == 1
    np.testing.assert_array_equal(res.model.endog, sim.y)
    assert "Adjusted for:" in str(res.summary())


def test_numeric_looking_strings_refused():
    _, a, b = _design()
    with pytest.raises(TypeError, match="endog must be numeric or categorical; it holds"):
        jdr.JointDimReduction(pd.Series(["1.5", "2", "3"] * 200), a, b)


def test_one_class_refused_and_rare_class_warned():
    rng, a, b = _design()
    with pytest.raises(ValueError, match="single class"):
        jdr.JointDimReduction(pd.Categorical(["u"] * 600), a, b)
    y = np.array(["u", "v"] * 300, dtype=object)
    y[:3] = "rare"
    with pytest.warns(RareClassWarning, match="rare"):
        jdr.JointDimReduction(y, a, b)


def test_multivariate_scaled_copy_changes_nothing():
    sim = jdr.simulate.bilinear(800, 4, 3, 1, seed=1)
    rng = np.random.default_rng(0)
    y2 = rng.normal(size=800) + sim.a[:, 1] * sim.b[:, 1]
    two = jdr.JointDimReduction(np.c_[sim.y, y2], sim.a, sim.b).fit(2)
    three = jdr.JointDimReduction(np.c_[sim.y, -3.0 * sim.y + 2.0, y2], sim.a, sim.b).fit(2)
    assert three.model.data.response.q == 2
    assert three.model.data.response.dropped == ("y1",)
    np.testing.assert_allclose(three.singular_values, two.singular_values, rtol=1e-9)
    assert _angle(three.directions_a, two.directions_a) < 1e-8


def test_multivariate_constant_column_refused():
    _, a, b = _design()
    with pytest.raises(ValueError, match="constant column"):
        jdr.JointDimReduction(np.c_[a[:, 0] * b[:, 0], np.ones(600)], a, b)


def test_missing_class_rows_dropped():
    rng, a, b = _design()
    y = pd.Series(_classes(a, b, rng), dtype="category")
    y.iloc[:5] = np.nan
    with pytest.warns(jdr.exceptions.MissingDataWarning):
        res = jdr.JointDimReduction(y, a, b, missing="drop").fit(1)
    assert res.nobs == 595


def test_formula_categorical_multivariate_and_covariates():
    rng, a, b = _design()
    df = pd.DataFrame(np.c_[a, b], columns=["a0", "a1", "a2", "a3", "b0", "b1", "b2"])
    df["g"] = _classes(a, b, rng)
    df["y1"] = a[:, 0] * b[:, 0] + rng.normal(size=600)
    df["y2"] = a[:, 1] * b[:, 1] + rng.normal(size=600)
    df["age"] = rng.normal(size=600)
    df["site"] = rng.choice(["s1", "s2", "s3"], 600)
    f = "a0 + a1 + a2 + a3 | b0 + b1 + b2"
    m1 = jdr.JointDimReduction.from_formula("C(g) ~ " + f, df)
    m2 = jdr.JointDimReduction.from_formula("g ~ " + f, df)
    assert m1.data.response.kind == m2.data.response.kind == "categorical"
    m3 = jdr.JointDimReduction.from_formula("y1 + y2 ~ " + f, df)
    assert m3.data.response.kind == "multivariate" and m3.data.response.q == 2
    m4 = jdr.JointDimReduction.from_formula("y1 ~ " + f, df, covariates="age + C(site)")
    direct = jdr.JointDimReduction(df["y1"], df[["a0", "a1", "a2", "a3"]],
                                   df[["b0", "b1", "b2"]], covariates=df[["age", "site"]])
    assert m4.data.adjustment.p == 3 and m4.data.nobs_eff == 600 - 4
    np.testing.assert_allclose(m4.fit(1).singular_values, direct.fit(1).singular_values,
                               rtol=1e-10)
    assert "age + C(site)" in str(m4.fit(1).summary())


def test_covariates_aligned_by_label_and_collinear_dropped():
    rng, a, b = _design()
    idx = pd.Index([f"r{i}" for i in range(600)])
    y = pd.Series(a[:, 0] * b[:, 0] + rng.normal(size=600), index=idx, name="y")
    z = pd.DataFrame({"age": rng.normal(size=600)}, index=idx)
    fit = jdr.JointDimReduction(y, pd.DataFrame(a, index=idx), pd.DataFrame(b, index=idx),
                                covariates=z).fit(1)
    shuffled = z.sample(frac=1.0, random_state=1)
    fit2 = jdr.JointDimReduction(y, pd.DataFrame(a, index=idx), pd.DataFrame(b, index=idx),
                                 covariates=shuffled).fit(1)
    np.testing.assert_allclose(fit.singular_values, fit2.singular_values, rtol=1e-12)
    z2 = z.assign(age2=2 * z["age"] + 1, const=1.0)
    with pytest.warns(CovariateWarning, match="dropped"):
        fit3 = jdr.JointDimReduction(y, pd.DataFrame(a, index=idx),
                                     pd.DataFrame(b, index=idx), covariates=z2).fit(1)
    assert fit3.model.data.adjustment.p == 1
    np.testing.assert_allclose(fit3.singular_values, fit.singular_values, rtol=1e-9)
    with pytest.raises(ValueError, match="row index of covariates differs"):
        jdr.JointDimReduction(y, pd.DataFrame(a, index=idx), pd.DataFrame(b, index=idx),
                              covariates=z.iloc[1:])


def test_covariates_residualise_blocks_and_response():
    rng, a, b = _design()
    z = rng.normal(size=(600, 2))
    y = a[:, 0] * b[:, 0] + rng.normal(size=600)
    data = jdr.JointDimReduction(y, a, b, covariates=z).data
    design = np.c_[np.ones(600), z]
    for arr in (data.endog, *data.blocks.values()):
        np.testing.assert_allclose(design.T @ arr, 0.0, atol=1e-9)


def test_too_few_rows_after_adjustment():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(12, 4)), rng.normal(size=(12, 3))
    with pytest.raises(ValueError, match="effective sample size"):
        jdr.JointDimReduction(rng.normal(size=12), a, b, covariates=rng.normal(size=(12, 8)))


def test_wald_refused_for_q_gt_1():
    """Sparse fits and support selection work for q > 1 (tests/test_support_q.py);
    the Wald rank test does not."""
    rng, a, b = _design()
    model = jdr.JointDimReduction(_classes(a, b, rng), a, b)
    with pytest.raises(ValueError, match="single response column"):
        model.fit(1).rank_tests("wald")


# ---------------------------------------------------------------------------
# The estimator for q > 1
# ---------------------------------------------------------------------------
def test_hosvd_recovers_partly_shared_subspaces():
    """q = 2 responses, each rank one, on different directions: rank 2 jointly."""
    rng, a, b = _design(m=4000, n1=5, n2=4, seed=3)
    y1 = a[:, 0] * b[:, 0] + 0.5 * rng.normal(size=4000)
    y2 = a[:, 1] * b[:, 1] + 0.5 * rng.normal(size=4000)
    res = jdr.JointDimReduction(np.c_[y1, y2], a, b).fit(2)
    truth_a, truth_b = np.eye(5)[:, :2], np.eye(4)[:, :2]
    assert np.degrees(_angle(res.directions_a, truth_a)) < 10
    assert np.degrees(_angle(res.directions_b, truth_b)) < 10
    assert res.directions_a.shape == (5, 2)
    assert res.transform(a[:3], b[:3]).shape == (3, 4)
    rt = res.rank_tests("chi2")
    assert rt.select_rank(0.05) == 2
    assert rt.table["df"].iloc[0] == 2 * 5 * 4


def test_q1_statistic_equals_todays():
    from jdr_stats.core._hosvd import complement_statistic, hosvd

    sim = jdr.simulate.bilinear(500, 4, 3, 1, seed=5)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    x = res.coef_matrix.to_numpy() if hasattr(res.coef_matrix, "to_numpy") else res.coef_matrix
    u, _, v, _ = hosvd(x[None])
    table = res.rank_tests("chi2").table
    for k in range(3):
        stat = complement_statistic(x[None], u, v, k, 500) / res.moments.var_y
        assert stat == pytest.approx(table["statistic"].iloc[k], rel=1e-10)


# ---------------------------------------------------------------------------
# Invariances (hypothesis)
# ---------------------------------------------------------------------------
_RNG, _A, _B = _design(m=400, seed=11)
_Y3 = _classes(_A, _B, _RNG, 3)
_YM = np.c_[_A[:, 0] * _B[:, 0] + _RNG.normal(size=400), _A[:, 1] + _RNG.normal(size=400),
            _RNG.normal(size=400)]
_Z = np.c_[_RNG.normal(size=400), _RNG.choice(3, 400)]


def _conclusions(res):
    return res.singular_values, res.directions_a, res.directions_b


@settings(max_examples=15, deadline=None)
@given(st.data())
def test_invariances_multivariate_and_covariates(data):
    base = jdr.JointDimReduction(_YM, _A, _B, covariates=pd.DataFrame(
        {"z": _Z[:, 0], "g": pd.Categorical(_Z[:, 1])})).fit(2)
    scale, shift, perm = column_recoding(data.draw, 3)
    rows = np.array(data.draw(st.permutations(range(400))))
    zscale = data.draw(st.floats(1e-3, 1e3))
    ym = (_YM * scale + shift)[:, perm]
    z = pd.DataFrame({"z": _Z[:, 0] * zscale, "g": pd.Categorical(_Z[:, 1] + 7)})
    other = jdr.JointDimReduction(ym[rows], _A[rows], _B[rows],
                                  covariates=z.iloc[rows].reset_index(drop=True)).fit(2)
    s0, a0, b0 = _conclusions(base)
    s1, a1, b1 = _conclusions(other)
    np.testing.assert_allclose(s1, s0, rtol=1e-7, atol=1e-9 * s0.max())
    assert _angle(a1, a0) < 1e-6 and _angle(b1, b0) < 1e-6


@settings(max_examples=15, deadline=None)
@given(st.permutations(["A", "B", "C"]), st.permutations(range(400)))
def test_invariance_class_relabelling(labels, rows):
    base = jdr.JointDimReduction(_Y3, _A, _B).fit(2)
    relabel = np.array([dict(zip("ABC", labels, strict=True))[v] for v in _Y3])
    rows = np.array(rows)
    other = jdr.JointDimReduction(relabel[rows], _A[rows], _B[rows]).fit(2)
    np.testing.assert_allclose(other.singular_values, base.singular_values, rtol=1e-8)
    assert _angle(other.directions_a, base.directions_a) < 1e-6
    t0 = base.rank_tests("chi2").table["pvalue"].to_numpy()
    t1 = other.rank_tests("chi2").table["pvalue"].to_numpy()
    np.testing.assert_allclose(t1, t0, rtol=1e-6, atol=1e-12)


@settings(max_examples=10, deadline=None)
@given(st.data())
def test_default_rank_test_invariant_for_q_gt_1(data):
    """The default (robust, corrected reference with the HOSVD terms) rank
    tests of a q > 1 response: the same p-values after recoding the response
    columns or relabelling the classes, recoding the columns of both blocks
    and reordering the rows."""
    categorical = data.draw(st.booleans())
    rows = np.array(data.draw(st.permutations(range(400))))
    sa, ha, pa = column_recoding(data.draw, _A.shape[1])
    sb, hb, pb = column_recoding(data.draw, _B.shape[1])
    if categorical:
        labels = data.draw(st.permutations(["A", "B", "C"]))
        y0, y1 = _Y3, np.array([dict(zip("ABC", labels, strict=True))[v] for v in _Y3])
    else:
        sy, hy, py = column_recoding(data.draw, _YM.shape[1])
        y0, y1 = _YM, (_YM * sy + hy)[:, py]
    base = jdr.JointDimReduction(y0, _A, _B).fit(1).rank_tests(max_rank=2)
    a1, b1 = (_A * sa + ha)[:, pa], (_B * sb + hb)[:, pb]
    other = jdr.JointDimReduction(y1[rows], a1[rows], b1[rows]).fit(1).rank_tests(max_rank=2)
    assert base.method == other.method == "robust"
    assert any(r.startswith("Reference at k = 0") for r in base.references)
    for col in ("statistic", "pvalue", "eff_df"):
        x0, x1 = base.table[col].to_numpy(), other.table[col].to_numpy()
        np.testing.assert_allclose(x1, x0, rtol=1e-6, atol=1e-12 * np.max(np.abs(x0)))


# ---------------------------------------------------------------------------
# Inference on each kind of response
# ---------------------------------------------------------------------------
def test_default_rank_test_is_the_robust_core_for_q_gt_1():
    """q > 1 with the rows in memory: the default is the robust test (its core
    takes the whitened response matrix); the permutation test agrees."""
    rng, a, b = _design()
    res = jdr.JointDimReduction(_classes(a, b, rng), a, b).fit(1)
    rt = res.rank_tests(seed=1)
    assert rt.method == "robust"
    assert list(rt.table.columns) == ["statistic", "df", "pvalue", "eff_df", "scale", "mc_se"]
    assert not any("not available yet" in n for n in rt.notes)
    assert rt.select_rank(0.05) == 1
    assert res.rank_tests("permutation", seed=1, n_perm=99).select_rank(0.05) == 1
    auto = jdr.JointDimReduction(_classes(a, b, rng), a, b).fit("auto", seed=2)
    assert auto.rank == 1 and auto.rank_method == "robust"


def test_bootstrap_and_auto_for_q_gt_1():
    rng, a, b = _design(m=800)
    res = jdr.JointDimReduction(_classes(a, b, rng, 4), a, b).fit(1)
    for method in ("pairs", "poisson"):
        boot = res.bootstrap(n_boot=40, seed=1, method=method)
        assert boot.angles_a.shape == (40, 1)
        assert boot.conf_int().loc[("a", "largest angle"), "upper"] < 30
    calibrated = res.bootstrap(n_boot=20, seed=1, interval="calibrated")
    assert calibrated.angles_b.shape == (20, 1)


def test_support_with_covariates_and_two_classes():
    rng, a, b = _design(m=800)
    z = rng.normal(size=800)
    y = (2 * a[:, 0] * b[:, 0] + 0.5 * z + 0.5 * rng.normal(size=800)) > 0
    model = jdr.JointDimReduction(y, a + z[:, None], b, covariates=z)
    sel = model.select_support(rank=1, seed=1, n_resamples=99)
    assert "a0" in sel.selected_a
    boot = model.fit(1).bootstrap(n_boot=30, seed=2)
    assert boot.angles_a.shape == (30, 1)


def _null_pvalues(kind: str, n_rep: int, adjust: bool, seed: int,
                 independent_blocks: bool = False) -> np.ndarray:
    """p-values of the chi2 test of r = 0 under a null (or a confounded null)."""
    rng = np.random.default_rng(seed)
    out = np.empty(n_rep)
    for i in range(n_rep):
        m = 300
        z = rng.normal(size=m)
        g = rng.integers(0, 3, m)
        shift = z + (g - 1.0)
        a = rng.normal(size=(m, 3)) + shift[:, None] * [1.0, 0.5, 0.0]
        b = rng.normal(size=(m, 3)) + shift[:, None] * [1.0, 0.0, 0.5]
        t = shift**2 + rng.normal(size=m)  # the response depends on the confounder only
        if kind == "categorical":
            y = np.digitize(t, np.quantile(t, [1 / 3, 2 / 3]))
            endog = pd.Categorical(y)
        else:
            endog = np.c_[t, rng.normal(size=m) + shift]
        cov = pd.DataFrame({"z": z, "g": pd.Categorical(g)}) if adjust else None
        res = jdr.JointDimReduction(endog, a, b, covariates=cov).fit(
            1, independent_blocks=independent_blocks)
        with warnings.catch_warnings():  # unadjusted, the premise check flags the blocks
            warnings.simplefilter("ignore", AssumptionWarning)
            out[i] = res.rank_tests("chi2", max_rank=0).table["pvalue"].iloc[0]
    return out


@pytest.mark.parametrize("kind", ["categorical", "multivariate"])
def test_confounded_null_size_with_and_without_adjustment(kind):
    """Seeded: a confounder shifting blocks and response makes the unadjusted
    test reject; adjusted, its size at 5% is within 3 Monte Carlo SEs."""
    n_rep = 200
    # the confounder also correlates the blocks: the per-block estimator
    # reads that correlation as signal and rejects almost always; the joint
    # (default) estimator removes the cross-block correlation, so less of
    # the confounding reaches it, but it still rejects far above the level
    unadj = _null_pvalues(kind, 40, adjust=False, seed=1, independent_blocks=True)
    assert np.mean(unadj < 0.05) > 0.8
    unadj_joint = _null_pvalues(kind, 40, adjust=False, seed=1)
    assert np.mean(unadj_joint < 0.05) > 0.05 + 3 * np.sqrt(0.05 * 0.95 / 40)
    adj = _null_pvalues(kind, n_rep, adjust=True, seed=2)
    size = float(np.mean(adj < 0.05))
    se = np.sqrt(0.05 * 0.95 / n_rep)
    assert abs(size - 0.05) < 3 * se + 1e-12, size


def test_no_jdr_warnings_on_ordinary_inputs():
    rng, a, b = _design()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        jdr.JointDimReduction(_classes(a, b, rng), a, b, covariates=rng.normal(size=600)).fit(1)


def test_cli_categorical_response_and_covariates(tmp_path, capsys):
    from jdr_stats.cli import main

    rng, a, b = _design(m=400)
    df = pd.DataFrame(np.c_[a, b], columns=["a0", "a1", "a2", "a3", "b0", "b1", "b2"])
    df["g"] = _classes(a, b, rng)
    df["code"] = df["g"].map({"A": 0, "B": 1, "C": 2})
    df["age"] = rng.normal(size=400)
    df["site"] = rng.choice(["x", "y"], 400)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False)
    blocks = ["--a", "a0,a1,a2,a3", "--b", "b0,b1,b2", "--rank", "1"]
    assert main(["fit", str(path), "--y", "g", *blocks, "--covariates", "age,site"]) == 0
    out = capsys.readouterr().out
    assert "categorical, 3 classes" in out and "age, site[T.y] (linear, p_Z = 2)" in out
    assert main(["fit", str(path), "--y", "code", "--response", "categorical", *blocks]) == 0
    assert "categorical, 3 classes" in capsys.readouterr().out
    assert main(["fit", str(path), "--formula", "C(code) ~ a0 + a1 + a2 + a3 | b0 + b1 + b2",
                 "--covariates", "age + C(site)", "--rank", "1"]) == 0
    assert "age + C(site) (linear, p_Z = 2)" in capsys.readouterr().out
    assert main(["fit", str(path), "--y", "code", *blocks, "--covariates", "age"]) == 0
    in_memory = capsys.readouterr().out
    assert main(["fit", str(path), "--y", "code", *blocks, "--chunksize", "100",
                 "--covariates", "age"]) == 0
    streamed = capsys.readouterr().out
    assert "age (linear, p_Z = 1)" in streamed
    assert in_memory.split("block a")[0].split("k ")[-1] == \
        streamed.split("block a")[0].split("k ")[-1]  # the same singular values
    assert main(["fit", str(path), "--y", "code", *blocks, "--chunksize", "100",
                 "--response", "categorical"]) == 0  # the classes read by a first pass
    assert "categorical, 3 classes" in capsys.readouterr().out
    df["y1"] = a[:, 0] * b[:, 0] + rng.normal(size=400)
    df["y2"] = a[:, 1] * b[:, 1] + rng.normal(size=400)
    df.to_csv(path, index=False)
    assert main(["fit", str(path), "--y", "y1,y2", *blocks]) == 0
    in_memory = capsys.readouterr().out
    assert "multivariate, q = 2 (y1, y2)" in in_memory
    assert main(["fit", str(path), "--y", "y1,y2", *blocks, "--chunksize", "64"]) == 0
    streamed = capsys.readouterr().out
    assert "multivariate, q = 2 (y1, y2)" in streamed
    assert in_memory.split("block a")[0].split("k ")[-1] == \
        streamed.split("block a")[0].split("k ")[-1]  # the same singular values


# ---------------------------------------------------------------------------
# Streams: mergeable moments of q responses (arrays, Parquet, CSV chunks, dask)
# ---------------------------------------------------------------------------
def _multi_data():
    rng, a, b = _design(m=900)
    y = np.c_[a[:, 0] * b[:, 0], a[:, 1] * b[:, 1], np.zeros(900)] + rng.normal(size=(900, 3))
    y[:, 2] = 2.0 * y[:, 0] - 1.0  # a collinear column: dropped on both paths
    return y, a, b


@pytest.mark.equality
def test_response_moments_merge_and_match_in_memory():
    from jdr_stats.moments import ResponseMoments

    y, a, b = _multi_data()
    whole = jdr.JointDimReduction(y, a, b).fit(2)
    parts = sum(ResponseMoments.from_arrays(y[i:i + 250], a[i:i + 250], b[i:i + 250])
                for i in range(0, 900, 250))
    streamed = jdr.JointDimReduction.from_moments(parts).fit(2)
    np.testing.assert_allclose(streamed.singular_values, whole.singular_values, rtol=1e-9)
    assert _angle(streamed.directions_a, whole.directions_a) < 1e-8
    assert streamed.model.data.response.q == 2
    with pytest.raises(jdr.exceptions.RowsNotInMemoryError, match="rank_method='chi2'"):
        streamed.rank_tests()  # no rows: the default robust test cannot run, never replaced
    rt = streamed.rank_tests("chi2")
    assert rt.method == "chi2"
    np.testing.assert_allclose(rt.table["statistic"],
                               whole.rank_tests("chi2").table["statistic"], rtol=1e-8)


@pytest.mark.equality
def test_response_moments_classes():
    from jdr_stats.moments import ResponseMoments

    rng, a, b = _design(m=900)
    lab = _classes(a, b, rng)
    parts = sum(ResponseMoments.from_arrays(lab[i:i + 300], a[i:i + 300], b[i:i + 300],
                                            classes=["A", "B", "C"]) for i in range(0, 900, 300))
    streamed = jdr.JointDimReduction.from_moments(parts).fit(1)
    whole = jdr.JointDimReduction(lab, a, b).fit(1)
    np.testing.assert_allclose(streamed.singular_values, whole.singular_values, rtol=1e-9)
    assert streamed.model.data.response.counts == whole.model.data.response.counts
    with pytest.raises(ValueError, match="not in classes"):
        ResponseMoments.from_arrays(lab, a, b, classes=["A", "B"])


@pytest.mark.equality
def test_parquet_csv_and_dask_multivariate(tmp_path):
    pytest.importorskip("pyarrow")
    from jdr_stats.moments import ResponseMoments
    from jdr_stats.sources import CSVSource

    y, a, b = _multi_data()
    cols_a, cols_b = [f"a{j}" for j in range(4)], [f"b{j}" for j in range(3)]
    df = pd.DataFrame(np.c_[y, a, b], columns=["y0", "y1", "y2", *cols_a, *cols_b])
    whole = jdr.JointDimReduction(df[["y0", "y1", "y2"]], df[cols_a], df[cols_b]).fit(2)
    path = tmp_path / "d.parquet"
    df.to_parquet(path, row_group_size=200)
    pq = jdr.JointDimReduction.from_parquet(path, y=["y0", "y1", "y2"], a=cols_a, b=cols_b,
                                            batch_rows=128).fit(2)
    np.testing.assert_allclose(pq.singular_values, whole.singular_values, rtol=1e-9)
    csv = tmp_path / "d.csv"
    df.to_csv(csv, index=False)
    parts = [CSVSource(csv, y=c, a=cols_a, b=cols_b, batch_rows=100) for c in ["y0", "y1", "y2"]]
    yy = CSVSource(csv, y="y0", a=["y0", "y1", "y2"], b=["y0", "y1", "y2"], batch_rows=100)
    chunked = jdr.JointDimReduction.from_moments(ResponseMoments.from_sources(parts, yy)).fit(2)
    np.testing.assert_allclose(chunked.singular_values, whole.singular_values, rtol=1e-9)
    da = pytest.importorskip("dask.array")
    dk = jdr.JointDimReduction(da.from_array(y, chunks=(300, 3)), da.from_array(a, chunks=(300, 4)),
                               da.from_array(b, chunks=(300, 3))).fit(2)
    np.testing.assert_allclose(dk.singular_values, whole.singular_values, rtol=1e-9)


def test_permutation_statistic_of_unpermuted_rows_is_the_statistic():
    from jdr_stats.core._hosvd import complement_statistic, hosvd
    from jdr_stats.inference._rank_permutation import _stats_of_rows

    rng, a, b = _design()
    res = jdr.JointDimReduction(_classes(a, b, rng), a, b).fit(1)
    y, a_raw, b_raw = res._fit_data.rows("test")  # the fit's (residual) rows
    xq = res.estimate.coef_tensor
    u, _, v, _ = hosvd(xq)
    for k in range(3):
        batch = _stats_of_rows(y, np.stack([a_raw] * 2), np.stack([b_raw] * 2), k)
        np.testing.assert_allclose(batch, complement_statistic(xq, u, v, k, 600), rtol=1e-9)


def test_frequency_weights_equal_repeated_rows_with_covariates_and_classes():
    rng, a, b = _design(m=300)
    y = _classes(a, b, rng)
    z = pd.DataFrame({"z": rng.normal(size=300), "g": rng.choice(["p", "q"], 300)})
    w = rng.integers(1, 4, 300).astype(float)
    rep = np.repeat(np.arange(300), w.astype(int))
    weighted = jdr.JointDimReduction(y, a, b, covariates=z, weights=w).fit(2)
    repeated = jdr.JointDimReduction(y[rep], a[rep], b[rep],
                                     covariates=z.iloc[rep].reset_index(drop=True)).fit(2)
    np.testing.assert_allclose(weighted.singular_values, repeated.singular_values, rtol=1e-9)
    assert _angle(weighted.directions_a, repeated.directions_a) < 1e-7


def test_default_size_under_adjusted_null():
    """Seeded: the default test (the robust core, q = 2) of r = 0 under a
    confounded null, adjusted: its size at 10% within 3 Monte Carlo SEs."""
    rng = np.random.default_rng(21)
    n_rep, pv = 120, []
    for _ in range(n_rep):
        m = 200
        z = rng.integers(0, 3, m).astype(float)
        a = rng.normal(size=(m, 3)) + z[:, None]
        b = rng.standard_t(4, size=(m, 3)) - z[:, None]
        y = pd.Categorical(np.digitize(z + rng.normal(size=m), [0.5, 1.5]))
        res = jdr.JointDimReduction(y, a, b, covariates=pd.Categorical(z)).fit(1)
        with warnings.catch_warnings():  # the premise check fires by chance at m = 200
            warnings.simplefilter("ignore", AssumptionWarning)
            rt = res.rank_tests(max_rank=0, n_perm=49, seed=rng)
        pv.append(rt.table["pvalue"].iloc[0])
    size = float(np.mean(np.array(pv) <= 0.1))
    assert abs(size - 0.1) < 3 * np.sqrt(0.1 * 0.9 / n_rep), size


@pytest.mark.equality
def test_parquet_with_covariates_equals_in_memory(tmp_path):
    pytest.importorskip("pyarrow")
    rng, a, b = _design(m=900)
    z = rng.normal(size=(900, 2))
    df = pd.DataFrame(np.c_[a + z[:, :1], b, z], columns=[*[f"a{j}" for j in range(4)],
                                                          "b0", "b1", "b2", "z0", "z1"])
    df["y"] = a[:, 0] * b[:, 0] + z[:, 0] + rng.normal(size=900)
    df["y2"] = a[:, 1] * b[:, 1] + rng.normal(size=900)
    df["z2"] = df["z0"] * 2.0 + 1.0  # collinear: dropped on both paths
    cols_a, cols_b, cols_z = [f"a{j}" for j in range(4)], ["b0", "b1", "b2"], ["z0", "z1", "z2"]
    path = tmp_path / "d.parquet"
    df.to_parquet(path, row_group_size=200)
    with pytest.warns(CovariateWarning):
        mem = jdr.JointDimReduction(df["y"], df[cols_a], df[cols_b], covariates=df[cols_z])
    with pytest.warns(CovariateWarning):
        st = jdr.JointDimReduction.from_parquet(path, y="y", a=cols_a, b=cols_b,
                                                covariates=cols_z, batch_rows=128)
    assert st.data.adjustment == mem.data.adjustment
    np.testing.assert_allclose(st.fit(1).singular_values, mem.fit(1).singular_values, rtol=1e-9)
    np.testing.assert_allclose(st.fit(1).rank_tests().table["pvalue"],
                               mem.fit(1).rank_tests().table["pvalue"], rtol=1e-7, atol=1e-300)
    mem2 = jdr.JointDimReduction(df[["y", "y2"]], df[cols_a], df[cols_b],
                                 covariates=df[["z0", "z1"]]).fit(2)
    st2 = jdr.JointDimReduction.from_parquet(path, y=["y", "y2"], a=cols_a, b=cols_b,
                                             covariates=["z0", "z1"], batch_rows=128).fit(2)
    np.testing.assert_allclose(st2.singular_values, mem2.singular_values, rtol=1e-9)
    assert "z0, z1 (linear, p_Z = 2)" in str(st2.summary())


def test_block_column_explained_by_covariates_refused():
    rng, a, b = _design()
    with pytest.raises(ValueError, match="linear functions of the covariates"):
        jdr.JointDimReduction(rng.normal(size=600), a, b, covariates=2 * a[:, 1] + 1)


def test_q_gt_1_summary_after_remove_data_and_fit_measures():
    rng, a, b = _design()
    res = jdr.JointDimReduction(_classes(a, b, rng), a, b).fit(1)
    r2 = f"{res.fit_measures.rsquared:.3f}"  # Pillai's trace / q (q = 2 indicators)
    assert r2 in str(res.summary())
    small = res.remove_data()
    text = str(small.summary())
    assert "categorical, 3 classes" in text and r2 in text  # kept from before


def test_wald_f_denominator_counts_the_covariates():
    """Rows that are residuals on p covariate columns have m - 1 - p residual
    degrees of freedom: the Wald test's F reference is F(d, m - p - d)."""
    rng, a, b = _design(m=400)
    z = rng.normal(size=(400, 3))
    y = a[:, 0] * b[:, 0] + z[:, 0] + rng.normal(size=400)
    plain = jdr.JointDimReduction(y, a, b).fit(1).rank_tests("wald", max_rank=1).table
    adj = jdr.JointDimReduction(y, a, b, covariates=z).fit(1)
    tab = adj.rank_tests("wald", max_rank=1).table
    d = tab["df"].to_numpy()
    np.testing.assert_array_equal(tab["df_denom"].to_numpy(), 400 - 3 - d)
    np.testing.assert_array_equal(plain["df_denom"].to_numpy(), 400 - d)
    from scipy import stats

    np.testing.assert_allclose(tab["pvalue"], stats.f.sf(tab["fstat"], d, 400 - 3 - d),
                               rtol=1e-12)


def test_fit_measures_for_q_gt_1_are_pillai_over_q():
    """R^2 for q > 1: Pillai's trace / q of the bilinear regression, the average
    R^2 of the whitened columns; unchanged by recoding the response columns."""
    rng, a, b = _design(m=1500, seed=5)
    y = np.column_stack([a[:, 0] * b[:, 0], a[:, 1] * b[:, 1]]) + rng.normal(size=(1500, 2))
    res = jdr.JointDimReduction(y, a, b).fit(2)
    fm = res.fit_measures
    feats = np.asarray(res.transform(), dtype=float)
    design = np.column_stack([np.ones(1500), feats,
                              (feats[:, :2, None] * feats[:, None, 2:]).reshape(1500, -1)])
    yw = res.model.endog  # the whitened response columns
    fitted = design @ np.linalg.lstsq(design, yw, rcond=None)[0]
    r2_cols = 1 - ((yw - fitted) ** 2).sum(0) / ((yw - yw.mean(0)) ** 2).sum(0)
    assert fm.rsquared == pytest.approx(r2_cols.mean(), rel=1e-9)
    recoded = jdr.JointDimReduction(y[:, ::-1] * np.array([2.0, -3.0]), a, b).fit(2)
    assert recoded.fit_measures.rsquared == pytest.approx(fm.rsquared, rel=1e-9)
    assert 0 < fm.rsquared <= fm.rsquared_full + 1e-12
    assert fm.rsquared_ratio == pytest.approx(fm.rsquared / fm.rsquared_full)
    text = str(res.summary())
    assert "Pillai" in text and "n/a (q > 1)" not in text


def test_plots_with_a_response_of_q_columns():
    mpl = pytest.importorskip("matplotlib")
    mpl.use("Agg")
    import matplotlib.pyplot as plt

    from jdr_stats import plotting

    rng, a, b = _design(m=500)
    for endog in (_classes(a, b, rng),
                  np.column_stack([a[:, 0] * b[:, 0], a[:, 1]]) + rng.normal(size=(500, 2))):
        res = jdr.JointDimReduction(endog, a, b).fit(1)
        for column in (1, 2):
            fig = plotting.plot_sufficient_summary(res, column=column)
            assert fig.axes[0].collections[0].get_offsets().shape == (500, 2)
            assert fig.axes[0].get_ylabel().startswith(f"Yw{column} (whitened ")
            plt.close(fig)
            fig = plotting.plot_response_surface(res, column=column, kind="contour")
            plt.close(fig)
        for fig in (plotting.plot_scree(res), plotting.plot_loadings(res)):
            plt.close(fig)
        with pytest.raises(ValueError, match="column must be between 1 and 2"):
            plotting.plot_sufficient_summary(res, column=3)
        sup = res.model.select_support(rank=1, method="chi2")
        plt.close(plotting.plot_support(sup))
