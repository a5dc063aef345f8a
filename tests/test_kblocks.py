"""Three or more blocks: the K-block fit through the public interfaces."""

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.core._linalg import principal_angles
from jdr_stats.exceptions import RankSelectionWarning


def _data(m=800, widths=(4, 3, 3), seed=0, link="mixed"):
    rng = np.random.default_rng(seed)
    xs = [rng.normal(size=(m, n)) for n in widths]
    us = [np.linalg.qr(rng.normal(size=(n, 1)))[0] for n in widths]
    u = [(x @ b)[:, 0] for x, b in zip(xs, us)]
    f = u[0] * u[1] + u[1] * u[2] if link == "pairwise" else \
        u[0] * u[1] * u[2] if link == "three-way" else u[0] * u[1] + u[0] * u[1] * u[2]
    return f + 0.5 * rng.normal(size=m), xs, us


def _model(y, xs):
    return jdr.JointDimReduction.from_blocks(y, dict(zip(("genes", "lipids", "clinical"), xs)))


@pytest.mark.parametrize("link", ["pairwise", "three-way", "mixed"])
def test_three_blocks_find_each_direction(link):
    y, xs, us = _data(link=link)
    res = _model(y, xs).fit(1, independent_blocks=True)
    assert res.ranks == {"genes": 1, "lipids": 1, "clinical": 1}
    for name, u in zip(("genes", "lipids", "clinical"), us):
        assert np.max(principal_angles(u, res.directions[name].to_numpy())) < 0.3


def test_four_blocks_and_list_names():
    y, xs, us = _data(widths=(3, 3, 2, 3), link="pairwise", seed=1)
    res = jdr.JointDimReduction.from_blocks(y, xs).fit(1, independent_blocks=True)
    assert list(res.directions) == ["block1", "block2", "block3", "block4"]
    assert res.directions["block4"].index.tolist() == ["block40", "block41", "block42"]
    # the pairwise link touches blocks 1-3; block 4 is noise, its direction arbitrary
    for k in range(3):
        assert np.max(principal_angles(us[k], res.directions[f"block{k + 1}"].to_numpy())) < 0.3


def test_two_blocks_by_from_blocks_equal_the_two_block_fit():
    sim = jdr.simulate.bilinear(500, 5, 4, 2, seed=3)
    a = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2, independent_blocks=True)
    b = jdr.JointDimReduction.from_blocks(sim.y, {"g": sim.a, "l": sim.b}).fit(
        {"g": 2, "l": 2}, independent_blocks=True)
    np.testing.assert_array_equal(np.asarray(a.directions_a), np.asarray(b.directions["g"]))
    np.testing.assert_array_equal(a.singular_values, b.singular_values)
    assert isinstance(b.rank, int)


@pytest.mark.parametrize("independent", [True, False])
def test_two_blocks_take_a_rank_per_block(independent):
    # different ranks fit the K-block engine at K = 2: block g's directions are
    # the cross moment's leading two left singular vectors, block l's its
    # leading right one, for either estimator
    sim = jdr.simulate.bilinear(500, 5, 4, 2, seed=3)
    model = jdr.JointDimReduction.from_blocks(sim.y, {"g": sim.a, "l": sim.b})
    two = model.fit(2, whitening="sample", independent_blocks=independent)
    res = model.fit({"g": 2, "l": 1}, whitening="sample", independent_blocks=independent)
    assert res.rank == {"g": 2, "l": 1}
    assert res.settings["estimator"] == two.settings.estimator.name
    assert np.degrees(np.max(principal_angles(np.asarray(two.directions_a),
                                              res.directions["g"].to_numpy()))) < 1e-8
    assert np.degrees(np.max(principal_angles(np.asarray(two.directions_b)[:, :1],
                                              res.directions["l"].to_numpy()))) < 1e-8
    assert "l: rank 1" in str(res.summary())


def test_rank_dict_transform_summary_and_export(tmp_path):
    y, xs, _ = _data()
    res = _model(y, xs).fit({"genes": 2, "lipids": 1, "clinical": 1}, independent_blocks=True)
    assert res.directions["genes"].shape == (4, 2)
    np.testing.assert_allclose(np.linalg.norm(res.directions["genes"], axis=0), 1.0)
    t = res.transform()
    assert t.columns.tolist() == ["genes_1", "genes_2", "lipids_1", "clinical_1"]
    np.testing.assert_allclose(t.mean().to_numpy(), 0.0, atol=1e-10)
    new = res.transform({"genes": xs[0][:5], "lipids": xs[1][:5], "clinical": xs[2][:5]})
    np.testing.assert_allclose(new.to_numpy(), t.to_numpy()[:5])
    text = str(res.summary())
    for name in ("genes", "lipids", "clinical"):  # the heading of its directions
        assert f"{name}: rank {res.ranks[name]}" in text
    d = json.loads(res.to_json(tmp_path / "fit.json"))
    assert d["rank"] == {"genes": 2, "lipids": 1, "clinical": 1}
    assert res.eigenvalues["lipids"].size == 3
    assert "<table" in res._repr_html_()


def test_same_numbers_however_stored():
    y, xs, _ = _data(seed=4)
    a = _model(y, xs).fit(1, independent_blocks=True)
    frames = [pd.DataFrame(x, columns=[f"{n}{j}" for j in range(x.shape[1])])
              for n, x in zip(("genes", "lipids", "clinical"), xs)]
    b = _model(pd.Series(y, name="y"), frames).fit(1, independent_blocks=True)
    for n in a.directions:
        np.testing.assert_allclose(a.directions[n].to_numpy(), b.directions[n].to_numpy(),
                                   rtol=1e-12)


def test_rescaling_a_block_leaves_its_subspace():
    y, xs, _ = _data(seed=5)
    a = _model(y, xs).fit(1, independent_blocks=True)
    scale = np.array([2.0, 0.5, 10.0])
    b = _model(y, [xs[0], xs[1] * scale, xs[2] + 3.0]).fit(1, independent_blocks=True)
    back = b.directions["lipids"].to_numpy() * scale[:, None]
    assert np.max(principal_angles(a.directions["lipids"].to_numpy(), back)) < 1e-8
    assert np.max(principal_angles(a.directions["clinical"].to_numpy(),
                                   b.directions["clinical"].to_numpy())) < 1e-8


def test_auto_chooses_each_blocks_rank():
    y, xs, _ = _data(m=1500, seed=6)
    res = _model(y, xs).fit("auto", independent_blocks=True)
    assert res.ranks == {"genes": 1, "lipids": 1, "clinical": 1}
    tab = res.rank_tests().tables["genes"]
    assert list(tab.columns[:3]) == ["statistic", "df", "pvalue"]
    assert tab.loc[0, "pvalue"] < 1e-6
    # the statistic is the tail of the combined Gram's eigenvalues
    np.testing.assert_allclose(tab.loc[1, "statistic"], res.eigenvalues["genes"].iloc[1:].sum())


def test_rank_tests_method_matches_auto_and_summary_is_short():
    """rank_tests() gives every rank's test; its sequential choice is fit("auto")'s
    ranks; a fixed-rank fit has the same tests; the auto fit's summary shows
    each block's tests only up to its chosen rank, and at most max(10, r + 3)
    eigenvalues."""
    y, xs, _ = _data(m=800, widths=(14, 6, 5), seed=9)
    model = _model(y, xs)
    auto = model.fit("auto", independent_blocks=True)
    tests = auto.rank_tests()
    assert {n: max(1, r) for n, r in tests.select_rank(0.05).items()} == auto.rank
    assert [len(t) for t in tests.tables.values()] == [14, 6, 5]
    assert tests.table.index.names == ["block", "rank"]
    fixed = model.fit(2, independent_blocks=True).rank_tests()
    for n in tests.tables:
        pd.testing.assert_frame_equal(tests.tables[n], fixed.tables[n])
    text = str(auto.summary())
    assert f"genes: rank <= {auto.ranks['genes'] + 1}" not in text
    assert "genes: rank <= 0" in text
    assert "Per-block rank tests" in str(tests.summary())
    records = tests.to_dict()["tests"]  # one record per (block, rank)
    assert {r["block"] for r in records} == {"genes", "lipids", "clinical"}
    assert [(r["block"], r["rank"]) for r in records] == list(tests.table.index)
    with pytest.raises(ValueError, match="alpha"):
        tests.select_rank(1.5)


def test_joint_whitening_three_blocks_correlated():
    # equicorrelated Gaussian blocks, y = x0 x3 x6: the joint estimator (with
    # the Hermite-corrected K-way moment) finds each block's first variable,
    # the per-block one is biased by the correlation
    rng = np.random.default_rng(7)
    m = 4000
    c = np.full((9, 9), 0.3) + 0.7 * np.eye(9)
    x = rng.normal(size=(m, 9)) @ np.linalg.cholesky(c).T
    xs = [x[:, :3], x[:, 3:6], x[:, 6:]]
    y = x[:, 0] * x[:, 3] * x[:, 6] + 0.3 * rng.normal(size=m)
    joint = _model(y, xs).fit(1, independent_blocks=False)
    per = _model(y, xs).fit(1, independent_blocks=True)
    assert joint.settings["estimator"] == "joint"
    e0 = np.eye(3)[:, :1]
    for name in ("genes", "lipids", "clinical"):
        a_joint = principal_angles(e0, joint.directions[name].to_numpy())[0]
        a_per = principal_angles(e0, per.directions[name].to_numpy())[0]
        assert a_joint < np.radians(12) < a_per


def test_formula_covariates_weights_categorical_and_multivariate():
    y, xs, us = _data(m=900, seed=8)
    cols = {f"g{j}": xs[0][:, j] for j in range(4)} | {f"l{j}": xs[1][:, j] for j in range(3)} \
        | {f"c{j}": xs[2][:, j] for j in range(3)}
    df = pd.DataFrame(cols)
    df["y"] = y
    df["age"] = np.random.default_rng(9).normal(size=900)
    df["klass"] = pd.cut(y, [-np.inf, -0.5, 0.5, np.inf], labels=["lo", "mid", "hi"])
    mod = jdr.JointDimReduction.from_formula(
        "y ~ g0 + g1 + g2 + g3 | l0 + l1 + l2 | c0 + c1 + c2", df, covariates="age")
    res = mod.fit(1, independent_blocks=True)
    assert np.max(principal_angles(us[0], res.directions["block1"].to_numpy())) < 0.3
    cat = jdr.JointDimReduction.from_blocks(df["klass"], xs).fit(1, independent_blocks=True)
    assert cat.model.data.response.q == 2
    multi = jdr.JointDimReduction.from_blocks(np.c_[y, y + np.random.default_rng(1).normal(
        size=900)], xs).fit(1, independent_blocks=True)
    assert np.max(principal_angles(us[1], multi.directions["block2"].to_numpy())) < 0.3
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=900)
    weighted = jdr.JointDimReduction.from_blocks(y, xs, weights=w).fit(
        1, independent_blocks=True)
    assert np.max(principal_angles(us[2], weighted.directions["block3"].to_numpy())) < 0.3
    # integer weights are copies of rows
    k = np.random.default_rng(3).integers(1, 3, size=900)
    rep = np.repeat(np.arange(900), k)
    a = jdr.JointDimReduction.from_blocks(y, xs, weights=k.astype(float)).fit(
        1, independent_blocks=True)
    b = jdr.JointDimReduction.from_blocks(y[rep], [x[rep] for x in xs]).fit(
        1, independent_blocks=True)
    np.testing.assert_allclose(a.directions["block1"].to_numpy(),
                               b.directions["block1"].to_numpy(), rtol=1e-8)


def test_bootstrap_bounds_per_block_are_seeded():
    y, xs, _ = _data(m=600, seed=10)
    res = _model(y, xs).fit(1, independent_blocks=True)
    boot = res.bootstrap(10, seed=3, alpha=0.2)
    a, b = boot.table, res.bootstrap(10, seed=3, alpha=0.2).table
    pd.testing.assert_frame_equal(a, b)
    assert isinstance(boot, jdr.BootstrapResults)
    assert "Bootstrap of the joint dimension reduction" in str(boot)
    assert boot.to_dict()["max_angle_bound_deg"]["genes"] == a.loc["genes", "upper"]
    assert list(a.index) == ["genes", "lipids", "clinical"]
    assert (a["upper"] >= a["median"]).all() and (a["upper"] < 45).all()


@pytest.mark.parametrize("kwargs, match", [
    ({"rank": 4}, "rank of block 'lipids' must be an integer between 0 and 3"),
    ({"rank": {"genes": 1}}, "missing"),
    ({"rank": 1.5}, "rank must be an int"),
    ({"rank": 1, "sparsity": (2, 2)}, "sparsity must be an int, a dict"),  # not one per block
    ({"rank": 1, "sparsity": {"genes": 2}}, "sparsity: a dict needs one count per block"),
    ({"rank": 1, "sparsity": 0}, "sparsity of block 'genes' must be an integer between"),
    ({"rank": 2, "sparsity": 1}, "sparsity of block 'genes' must be at least its rank 2"),
    ({"rank": 1, "sparsity": "best"}, 'sparsity: three or more blocks take an int'),
    ({"rank": 1, "rank_method": "chi2"}, "rank_method"),
    ({"rank": 1, "whitening": "none"}, "whitening='none'"),
    ({"rank": 1, "whitening": "none", "independent_blocks": True}, "whitening=\"none\""),
])
def test_bad_input_is_named(kwargs, match):
    y, xs, _ = _data(m=200)
    with pytest.raises((ValueError, TypeError), match=match):
        _model(y, xs).fit(**kwargs)


def test_sparsity_in_block_order_is_the_dict():
    """One count per block in block order (the pair of two blocks, for K)
    is the dict by name."""
    y, xs, _ = _data(m=300)
    model = _model(y, xs)
    by_name = model.fit(1, sparsity=dict(zip(model.block_names, (2, 3, 2), strict=True)))
    in_order = model.fit(1, sparsity=(2, 3, 2))
    assert in_order.sparsity == by_name.sparsity
    for name in model.block_names:
        pd.testing.assert_frame_equal(in_order.directions[name], by_name.directions[name])


def _correlated(m=500, widths=(4, 4, 4), rho=0.5, seed=0):
    rng = np.random.default_rng(seed)
    shared = rng.normal(size=(m, widths[0]))
    xs = [np.sqrt(1 - rho) * rng.normal(size=(m, n)) + np.sqrt(rho) * shared
          for n in widths]
    u = [x[:, 0] for x in xs]
    return u[0] * u[1] + u[0] * u[1] * u[2] + 0.5 * rng.normal(size=m), xs


def test_stacked_pieces_give_the_combined_grams():
    """M_k M_k^T is block k's combined Gram, for both whitenings."""
    from jdr_stats.fitting._kfit import _cross_cov, _whiten_arrays
    from jdr_stats.core.kestimate import block_factors, stacked_pieces

    y, xs = _correlated(m=300)
    yc = y - y.mean()
    wn = np.full(300, 1 / 300)
    for est in ("per-block", "joint"):
        zs, _ = _whiten_arrays(xs, None, ["a", "b", "c"], [["x"] * 4] * 3, "sample", est)
        cc = _cross_cov(zs, wn) if est == "joint" else None
        fac = block_factors(yc, zs, cross_cov=cc)
        for k, mk in enumerate(stacked_pieces(yc, zs, fac, cross_cov=cc)):
            g = sum(fac.weights[key] * gk for key, gk in fac.grams.items() if key[1] == k)
            np.testing.assert_allclose(mk @ mk.T, g, rtol=1e-10, atol=1e-12 * np.abs(g).max())


def test_jackknife_influences_agree_with_the_analytic_ones(monkeypatch):
    """Per-block whitening, no weights: the delete-one influences reproduce the
    analytic reference (same first-order terms; the jackknife's variance is a
    little larger), so the same scale and close p-values."""
    from jdr_stats import policy

    y, xs, _ = _data(m=500, widths=(4, 4, 4), seed=4)
    model = _model(y, xs)
    a = model.fit("auto", independent_blocks=True)
    assert a.settings["influence"]["name"] == "analytic"
    monkeypatch.setattr(policy, "kblock_influence",
                        lambda *args, **kw: policy.Choice("jackknife", "forced", {}))
    b = model.fit("auto", independent_blocks=True)
    tests_a, tests_b = a.rank_tests().tables, b.rank_tests().tables
    for name in tests_a:
        ta, tb = tests_a[name], tests_b[name]
        np.testing.assert_allclose(ta["statistic"], tb["statistic"], rtol=1e-12)
        # r >= 1 = the true rank: the null holds and both references estimate
        # the same variance (at r = 0 the signal's own variation differs)
        np.testing.assert_allclose(ta["scale"].iloc[1:], tb["scale"].iloc[1:], rtol=0.12)
        np.testing.assert_allclose(ta["pvalue"].iloc[1:], tb["pvalue"].iloc[1:], atol=0.1)


def test_auto_under_the_joint_whitening_and_with_weights():
    """Issue 35: fit("auto") runs under the joint whitening and with case
    weights (analytic influences through the joint whitening; the jackknife
    for the per-block whitening with weights), finds rank 1 in every block
    of a strong correlated design, and says how the influences were formed."""
    y, xs = _correlated(m=500, rho=0.5, seed=1)
    model = jdr.JointDimReduction.from_blocks(y, xs)
    res = model.fit("auto", independent_blocks=False)
    assert res.settings["influence"]["name"] == "analytic-joint"
    assert "joint whitening" in res.settings["influence"]["reason"]
    assert res.ranks == {"block1": 1, "block2": 1, "block3": 1}
    assert res.rank_tests().tables["block1"].loc[0, "pvalue"] < 1e-3  # pairwise and three-way
    assert "shared sums" in str(res.summary())
    w = np.random.default_rng(2).uniform(0.5, 2.0, size=500)
    wres = jdr.JointDimReduction.from_blocks(y, xs, weights=w).fit(
        "auto", independent_blocks=False)
    assert wres.settings["influence"]["name"] == "analytic-joint"
    assert "joint whitening and case weights" in wres.settings["influence"]["reason"]
    assert wres.ranks == {"block1": 1, "block2": 1, "block3": 1}
    yi, xi, _ = _data(m=500, widths=(4, 4, 4), seed=2)  # independent blocks
    wres = _model(yi, xi).__class__.from_blocks(yi, xi, weights=w).fit(
        "auto", independent_blocks=True)
    assert wres.settings["influence"]["reason"].startswith("case weights")
    assert wres.settings["influence"]["name"] == "jackknife"
    assert wres.ranks == {"block1": 1, "block2": 1, "block3": 1}
    # frequency weights are copies of rows: integer weights give the
    # statistics and the reference of the data with the rows repeated
    # (deleting one copy of a row = lowering its weight by one; the
    # per-block estimator counts each copy's analytic influence)
    from jdr_stats import policy

    y, xs = _correlated(m=120, rho=0.3, seed=3)
    w = np.random.default_rng(3).integers(1, 3, size=120).astype(float)
    rep = np.repeat(np.arange(120), w.astype(int))
    with warnings.catch_warnings():  # a block shows no evidence: RankSelectionWarning
        warnings.simplefilter("ignore", RankSelectionWarning)
        for est in (True, False):
            # whitening="sample": the joint estimator itself at this width
            a = jdr.JointDimReduction.from_blocks(y, xs, weights=w).fit(
                "auto", independent_blocks=est, whitening="sample")
            assert a.settings["estimator"] == ("per-block" if est else "joint")
            b = jdr.JointDimReduction.from_blocks(y[rep], [x[rep] for x in xs])
            method = a.settings["influence"]["name"]
            assert method == ("analytic" if est else "analytic-joint")
            with pytest.MonkeyPatch.context() as mp:  # the same influences, unweighted
                mp.setattr(policy, "kblock_influence",
                           lambda *args, **kw: policy.Choice(method, "forced", {}))
                b = b.fit("auto", independent_blocks=est, whitening="sample")
                tests_b = b.rank_tests().tables
            assert b.settings["estimator"] == a.settings["estimator"]
            tests_a = a.rank_tests().tables
            for name in tests_a:
                pd.testing.assert_frame_equal(tests_a[name], tests_b[name],
                                              rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize(("m", "widths", "rank", "why"), [
    (500, (5, 5, 5), 1, "sum(n_k)/m = 0.03 <= 0.05"),
    (500, (5, 5, 5), "auto", "sum(n_k)/m = 0.03 <= 0.05"),
    (300, (4, 4, 4, 4), 1, "sum(n_k)/m = 0.0533 > 0.05"),
    (100, (10, 10, 10), "auto", "sum(n_k)/m = 0.3 > 0.05"),
])
def test_the_default_fits_the_joint_estimator_at_every_shape(m, widths, rank, why):
    """independent_blocks=False (the default) fits the joint K-block estimator
    wherever it can run (m >= sum(n_k) + 2), with the sample covariance of all
    blocks together (its only whitening) and the reason in settings and
    summary; independent_blocks=True fits the per-block one."""
    from jdr_stats import policy

    rng = np.random.default_rng(7)
    xs = [rng.normal(size=(m, n)) for n in widths]
    y = xs[0][:, 0] * xs[1][:, 0] * xs[2][:, 0] + rng.normal(size=m)
    model = jdr.JointDimReduction.from_blocks(y, xs)
    with warnings.catch_warnings():  # the test is of the estimator, not of the evidence
        warnings.simplefilter("ignore", RankSelectionWarning)
        res = model.fit(rank)
        per = model.fit(rank, independent_blocks=True)
    want = policy.kblock_estimator(False, m, widths, "auto")
    assert res.settings["estimator"] == want.name == "joint"
    assert res.settings["whitening"] == "sample" and why in res.settings["whitening_reason"]
    assert "".join(want.reason.split()) in "".join(str(res.summary()).split())
    assert per.settings["estimator"] == "per-block"


def test_where_the_joint_estimator_cannot_run_an_error_names_what_would():
    rng = np.random.default_rng(7)
    xs = [rng.normal(size=(30, 10)) for _ in range(3)]
    y = xs[0][:, 0] * xs[1][:, 0] * xs[2][:, 0] + rng.normal(size=30)
    model = jdr.JointDimReduction.from_blocks(y, xs)
    for kwargs in ({}, {"independent_blocks": False}):
        with pytest.raises(ValueError, match=r"independent_blocks=False \(the joint estimator\) "
                           r"needs at least sum\(n_k\) \+ 2 = 32 rows .*got 30: pass "
                           r"independent_blocks=True for the per-block estimator"):
            model.fit(1, **kwargs)
    assert model.fit(1, independent_blocks=True).settings["estimator"] == "per-block"
    y2, xs2 = _correlated(m=500)
    with pytest.raises(ValueError, match="whitening='shrinkage': use whitening=\"auto\" or "
                       "\"sample\", or pass independent_blocks=True"):
        jdr.JointDimReduction.from_blocks(y2, xs2).fit(1, whitening="shrinkage")


def test_compute_budgets_never_choose_the_estimator(monkeypatch):
    from jdr_stats import policy

    # the estimator's policy sees no budget at all
    assert policy.kblock_estimator(False, 200_000, (76, 64, 47)).name == "joint"
    assert policy.kblock_estimator(False, 6000, (40, 40, 40)).name == "joint"
    # a K-way tensor over its budget chooses the sketch (an algorithm): the
    # estimator stays the one asked for, either of them
    monkeypatch.setattr(policy, "KBLOCK_TENSOR_MAX_ENTRIES", 50)
    y, xs = _correlated(m=300)
    model = jdr.JointDimReduction.from_blocks(y, xs)
    for independent, name in ((False, "joint"), (True, "per-block")):
        res = model.fit(1, independent_blocks=independent)
        assert res.settings["route"]["name"] == "sketch"
        assert res.settings["estimator"] == name
    monkeypatch.undo()
    # the jackknife's influences over their budget refuse rank="auto"; the
    # given rank fits the same (joint) estimator
    monkeypatch.setattr(policy, "KBLOCK_INFLUENCE_MAX_ENTRIES", 1000)
    with pytest.raises(ValueError, match="KBLOCK_INFLUENCE_MAX_ENTRIES"):
        model.fit("auto")
    assert model.fit(1).settings["estimator"] == "joint"
    with pytest.raises(ValueError, match="independent_blocks must be True or False; got 1"):
        policy.kblock_estimator(1, 500, (5, 5, 5))
