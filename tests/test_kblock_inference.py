"""The association test, the variables' tests and the bootstrap of K-block
fits (two blocks with per-block ranks, three and five blocks), under the
fit's estimator.  Size and power: studies/study_kblock_inference.py."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from scipy import stats

import jdr_stats as jdr
from jdr_stats.fitting._kfit import fit_kblocks
from jdr_stats.fitting._kwhiten import _whiten_arrays
from jdr_stats.core._linalg import principal_angles
from jdr_stats.inference.kblock_association import part_names
from jdr_stats.support._kblock import kblock_support
from jdr_stats.inference.kblock_coord import group_wald


def _blocks(m, widths, seed, rho=0.0):
    """Blocks of the given widths; ``rho``: each block's columns correlated
    with a common factor (so the blocks correlate too)."""
    rng = np.random.default_rng(seed)
    f = rng.normal(size=(m, 1))
    return [rng.normal(size=(m, n)) + rho * f for n in widths], rng


def _fit(y, xs, rank, **kw):
    names = [f"k{j}" for j in range(len(xs))]
    return jdr.JointDimReduction.from_blocks(y, dict(zip(names, xs, strict=True))).fit(rank, **kw)


CASES = [  # (widths, rank)
    ((3, 2), {"k0": 2, "k1": 1}),
    ((3, 3, 2), 1),
    ((2, 2, 2, 2, 2), 1),
]


@pytest.fixture(scope="module", params=[(c, ib) for c in range(3) for ib in (False, True)],
                ids=lambda p: f"K{len(CASES[p[0]][0])}-{'per-block' if p[1] else 'joint'}")
def fitted(request):
    c, ib = request.param
    widths, rank = CASES[c]
    xs, rng = _blocks(120, widths, 10 + c, rho=0.5)
    y = xs[0][:, 0] * xs[1][:, 0] + 0.5 * rng.normal(size=120)
    return _fit(y, xs, rank, independent_blocks=ib), y, xs, ib


# -- association -----------------------------------------------------------------
def test_association_shape_and_seed(fitted):
    res, _, xs, _ = fitted
    t = res.association_test(49, seed=3)
    assert t.df is None and t.method == "association"
    assert 1 / 50 <= t.pvalue <= 1 and np.isfinite(t.statistic)
    again = res.association_test(49, seed=3)
    assert (again.pvalue, again.statistic) == (t.pvalue, t.statistic)
    parts = res._association_statistic()(np.asarray(res.model._data.endog, float)[:, None])
    assert parts.size == len(part_names(list(res.block_names)))


def test_association_uses_the_fits_whitening(fitted):
    res, _, xs, ib = fitted
    stat = res._association_statistic()
    labels = [res._labels(k) for k in range(len(xs))]
    zs, _ = _whiten_arrays(xs, None, list(res.block_names), labels,
                           res.settings["whitening"], "per-block" if ib else "joint")
    for a, b in zip(stat.zs, zs, strict=True):
        np.testing.assert_allclose(a, b, atol=1e-10)
    assert (stat.cross_cov is not None) == (not ib and len(xs) >= 3)


def test_association_k2_equals_two_block_test():
    xs, rng = _blocks(100, (3, 2), 4, rho=0.4)
    y = xs[0][:, 0] * xs[1][:, 0] + rng.normal(size=100)
    for ib in (False, True):
        two = jdr.JointDimReduction(y, xs[0], xs[1]).fit(1, independent_blocks=ib)
        k = _fit(y, xs, {"k0": 2, "k1": 1}, independent_blocks=ib)
        assert type(k._impl).__name__ == "KBlockFit"
        t2, tk = two.association_test(99, seed=8), k.association_test(99, seed=8)
        assert tk.pvalue == t2.pvalue
        assert tk.statistic == pytest.approx(t2.statistic, rel=1e-9)


def test_association_estimators_differ_on_correlated_blocks():
    xs, rng = _blocks(150, (3, 3, 3), 5, rho=1.0)
    y = xs[0][:, 0] * xs[1][:, 0] * xs[2][:, 0] + rng.normal(size=150)
    joint = _fit(y, xs, 1)._association_statistic()(y[:, None])
    per = _fit(y, xs, 1, independent_blocks=True)._association_statistic()(y[:, None])
    k_way = part_names(["k0", "k1", "k2"]).index("cross moment k0*k1*k2")
    assert abs(joint[k_way] - per[k_way]) > 1e-3 * abs(per[k_way])
    # the parts that read the blocks alone are the same under both estimators
    np.testing.assert_allclose(joint[4:], per[4:], rtol=1e-10)


def test_association_power_on_a_strong_product():
    xs, rng = _blocks(200, (4, 4, 4), 6, rho=0.3)
    y = xs[0][:, 0] * xs[1][:, 0] + 0.5 * rng.normal(size=200)
    assert _fit(y, xs, 1).association_test(99, seed=1).pvalue <= 0.02


def test_association_refusals():
    xs, rng = _blocks(80, (2, 2, 2), 7)
    y = rng.normal(size=80)
    res = _fit(y, xs, 1)
    with pytest.raises(ValueError, match="n_perm"):
        res.association_test(0)
    cov = pd.DataFrame({"z": rng.normal(size=80)})
    names = {f"k{j}": x for j, x in enumerate(xs)}
    adj = jdr.JointDimReduction.from_blocks(y, names, covariates=cov).fit(1)
    with pytest.raises(ValueError, match="covariates"):
        adj.association_test(19)


def test_association_main_effects_fit():
    xs, rng = _blocks(100, (3, 2), 9)
    y = xs[0][:, 0] + rng.normal(size=100)
    res = _fit(y, xs, 1, main_effects=True)
    assert res.association_test(99, seed=2).pvalue <= 0.02


# -- variables ----------------------------------------------------------------------
def test_drop1_table(fitted):
    res, _, xs, _ = fitted
    tab = res.drop1().table
    assert tab.columns.tolist() == ["statistic", "df", "pvalue", "qvalue", "pvalue_conditional",
                                    "statistic_marginal", "df_marginal", "pvalue_marginal"]
    # the default combines the conditional and marginal tests (Bonferroni)
    cond, marg = res.drop1(test="conditional").table, res.drop1(test="marginal").table
    assert cond.columns.tolist() == ["statistic", "df", "pvalue", "qvalue"]
    np.testing.assert_allclose(tab["pvalue_conditional"], cond["pvalue"], rtol=1e-12)
    used = np.isfinite(tab["pvalue_marginal"].to_numpy())
    assert used.any()
    np.testing.assert_allclose(tab["pvalue_marginal"][used], marg["pvalue"][used], rtol=1e-12)
    both = np.minimum(1, 2 * np.minimum(cond["pvalue"], marg["pvalue"]))
    np.testing.assert_allclose(tab["pvalue"][used], both[used], rtol=1e-12)
    np.testing.assert_allclose(tab["pvalue"][~used], cond["pvalue"][~used], rtol=1e-12)
    assert tab.index.names == ["block", "variable"] and len(tab) == sum(x.shape[1] for x in xs)
    ranks = res.rank if isinstance(res.rank, dict) else dict.fromkeys(res.block_names, res.rank)
    for (b, _), df in tab["df"].items():
        assert df == ranks[b]
    assert ((tab["pvalue"] > 0) & (tab["pvalue"] <= 1)).all()
    assert (tab["qvalue"] >= tab["pvalue"] - 1e-15).all()
    # one variable alone in test_variables is its drop1 row
    b, v = tab.index[0]
    one = res.test_variables({b: [v]})
    assert one.statistic == pytest.approx(tab["statistic"].iloc[0], rel=1e-10)
    assert one.pvalue == pytest.approx(tab["pvalue"].iloc[0], rel=1e-10)


def test_marginal_variable_test_reads_hotelling_f():
    """The whole-row test has df a sizeable share of m: its Wald statistic
    is referred to Hotelling's F(df, m - df), not chi2(df) (which rejected
    a quarter of the null variables at 0.05 in
    studies/study_kblock_support_joint.py)."""
    xs, rng = _blocks(300, (4, 4, 4), 5)
    y = xs[0][:, 0] * xs[1][:, 0] + rng.normal(size=300)
    tab = _fit(y, xs, 1).drop1(test="marginal").table
    stat, df = tab["statistic"].to_numpy(), tab["df"].to_numpy()
    m = 300
    expect = stats.f.sf(stat * (m - df) / (df * m), df, m - df)
    np.testing.assert_allclose(tab["pvalue"], expect, rtol=1e-10)
    assert (tab["pvalue"].to_numpy() > stats.chi2.sf(stat, df)).all()


def test_default_variable_test_finds_a_blocks_sole_driver():
    """Where one variable carries all of its block's signal, the block's
    basis without it is noise and the conditional test misses it; the
    default (combined) test finds it, as the marginal part does."""
    xs, rng = _blocks(600, (6, 6, 6), 0)
    y = xs[0][:, 0] * xs[1][:, 1] + xs[0][:, 0] * xs[2][:, 2] + 0.5 * rng.normal(size=600)
    model = jdr.JointDimReduction.from_blocks(y, {f"k{j}": x for j, x in enumerate(xs)})
    res = model.fit(1)
    names = res.block_names
    drivers = [(names[0], res._labels(0)[0]), (names[1], res._labels(1)[1]),
               (names[2], res._labels(2)[2])]
    cond = res.drop1(test="conditional").table
    assert cond.loc[drivers[0], "pvalue"] > 0.01  # the basis without a0 is noise
    tab = res.drop1().table
    assert (tab.loc[drivers, "pvalue"] < 1e-8).all()
    sel = model.select_support(rank=1).table
    assert set(sel.index[sel["selected"].to_numpy()]) == set(drivers)


def test_coordinate_pieces_are_the_fits(fitted):
    res, _, _, _ = fitted
    mks, _, _ = res._coordinate_input()
    for k, n in enumerate(res.block_names):
        r = res.whitened_bases[n].shape[1]
        top = np.linalg.eigh(mks[k] @ mks[k].T)[1][:, ::-1][:, :r]
        assert np.max(principal_angles(top, res.whitened_bases[n])) < 1e-6


def test_jackknife_tests_match_the_analytic_per_block_tests():
    xs, rng = _blocks(600, (3, 3, 3), 11)
    y = xs[0][:, 0] * xs[1][:, 0] * xs[2][:, 0] + rng.normal(size=600)
    res = _fit(y, xs, 1, independent_blocks=True, whitening="sample")
    # the delete-one route itself (drop1() takes the analytic influences)
    inp = res._coordinate_input(jackknife=True)
    jack = np.array([group_wald(*inp, {k: [j]}, [1, 1, 1], conditional=True)[0]
                     for k in range(3) for j in range(3)])
    labels = [res._labels(k) for k in range(3)]
    ana = kblock_support(y, xs, list(res.block_names), labels,
                         dict.fromkeys(res.block_names, 1)).table["statistic"].to_numpy()
    np.testing.assert_allclose(jack, ana, rtol=0.15, atol=0.2)


@pytest.mark.parametrize("independent", [True, False])
def test_analytic_variable_influences_are_the_jackknife_to_first_order(independent):
    """The variable tests' analytic influences (the whitening, per block or
    joint, its Hermite correction and the map back differentiated) differ
    from the delete-one ones by O(1/m) relative: 4x the rows, about a
    quarter of the gap; the Wald statistics' gap shrinks too."""
    gaps, stat_gaps = [], []
    for m in (400, 1600):
        xs, rng = _blocks(m, (3, 3, 3), 21, rho=0.5)
        y = xs[0][:, 0] * xs[1][:, 0] * xs[2][:, 0] + xs[0][:, 1] * xs[1][:, 1] + \
            rng.normal(size=m)
        res = _fit(y, xs, 1, independent_blocks=independent, whitening="sample")
        a, b = res._coordinate_input(), res._coordinate_input(jackknife=True)
        gaps.append(max(np.linalg.norm(p - q) / np.linalg.norm(q)
                        for p, q in zip(a[2], b[2], strict=True)))
        sa = [group_wald(*a, {k: [j]}, [1, 1, 1], conditional=True)[0]
              for k in range(3) for j in range(3)]
        sb = [group_wald(*b, {k: [j]}, [1, 1, 1], conditional=True)[0]
              for k in range(3) for j in range(3)]
        stat_gaps.append(float(np.mean(np.abs(np.log(np.array(sa) / np.array(sb))))))
    assert gaps[1] < 0.4 * gaps[0], gaps
    assert stat_gaps[1] < 0.5 * stat_gaps[0] and stat_gaps[1] < 0.1, stat_gaps


def test_variables_group_and_errors():
    xs, rng = _blocks(150, (3, 3, 3), 12)
    y = xs[0][:, 0] * xs[1][:, 0] + rng.normal(size=150)
    res = jdr.JointDimReduction.from_blocks(
        y, {"g": pd.DataFrame(xs[0], columns=["g1", "g2", "g3"]),
            "l": pd.DataFrame(xs[1], columns=["l1", "l2", "l3"]),
            "c": pd.DataFrame(xs[2], columns=["c1", "c2", "c3"])}).fit(1)
    t = res.test_variables(["g1", "l1", "c1"])
    assert t.df == 3.0 and t.pvalue < 0.05
    m = res.test_variables({"c": ["c1", "c2"]}, test="marginal")
    assert m.df == 2 * (3 + 3 + 9)  # two rows of c: its pairs with g and l, the K-way piece
    assert res.test_variables("g1").df == 1.0
    with pytest.raises(ValueError, match="not a variable"):
        res.test_variables(["zz"])
    with pytest.raises(ValueError, match="unknown block"):
        res.test_variables({"q": ["g1"]})
    with pytest.raises(ValueError, match="test must be"):
        res.drop1(test="exact")  # type: ignore[arg-type]


def test_variables_refusals():
    xs, rng = _blocks(120, (4, 4, 4), 13)
    y = xs[0][:, 0] * xs[1][:, 0] + rng.normal(size=120)
    sparse = _fit(y, xs, 1, sparsity=2, independent_blocks=True)
    with pytest.raises(ValueError, match="sparse"):
        sparse.drop1()
    names = {f"k{j}": x for j, x in enumerate(xs)}
    weighted = jdr.JointDimReduction.from_blocks(y, names, weights=rng.uniform(0.5, 2, 120))
    with pytest.raises(ValueError, match="weights"):
        weighted.fit(1).drop1()


# -- bootstrap ----------------------------------------------------------------------
def _old_pairs_bootstrap(res, n_boot, seed, level):
    """The pairs bootstrap written out: one index vector per replicate from
    the seed's generator, the fit repeated, each block's largest angle in
    its covariance metric (both bases times the Cholesky factor's
    transpose); the bound is the ``ceil((B + 1) level)``-th smallest
    largest angle, as for two blocks."""
    from dataclasses import replace

    data = res.model._data
    rng = np.random.default_rng(seed)
    m = data.nobs
    out = np.zeros((n_boot, len(res.block_names)))
    for b in range(n_boot):
        idx = rng.integers(0, m, size=m)
        model = __import__("copy").copy(res.model)
        model._data = replace(data, endog=data.endog[idx],
                              blocks={k: x[idx] for k, x in data.blocks.items()},
                              weights=None, row_index=None, is_pandas=False)
        rep = fit_kblocks(model, res._ranks, whitening=res.settings["whitening"],
                          independent_blocks=res.settings["estimator"] == "per-block",
                          sparsity=None, rank_method="auto", alpha=0.05, seed=None,
                          main_effects=res.main_effects)
        for k, n in enumerate(res.block_names):
            chol = np.linalg.cholesky(np.atleast_2d(np.cov(data.blocks[list(data.blocks)[k]],
                                                           rowvar=False)))
            out[b, k] = np.degrees(np.max(principal_angles(
                chol.T @ res.directions[n].to_numpy(), chol.T @ rep.directions[n].to_numpy())))
    k = int(np.ceil((n_boot + 1) * level))
    return np.median(out, axis=0), np.sort(out, axis=0)[k - 1]


# blocks outside the link (y = x_0 x_1 + e) have weak gaps: their warning is
# checked in test_bootstrap_warns_weak_gap_by_block
@pytest.mark.filterwarnings("ignore::jdr_stats.exceptions.WeakGapWarning")
def test_bootstrap_pairs_written_out(fitted):
    res, _, _, _ = fitted
    boot = res.bootstrap(6, seed=4, alpha=0.3)
    med, up = _old_pairs_bootstrap(res, 6, 4, 0.7)
    np.testing.assert_allclose(boot.table["median"].to_numpy(), med, rtol=1e-10)
    np.testing.assert_allclose(boot.table["upper"].to_numpy(), up, rtol=1e-10)


@pytest.mark.filterwarnings("ignore::jdr_stats.exceptions.WeakGapWarning")
@pytest.mark.parametrize("method", ["pairs", "poisson"])
def test_bootstrap_seed_and_jobs(method):
    xs, rng = _blocks(100, (3, 3, 2), 14, rho=0.5)
    y = xs[0][:, 0] * xs[1][:, 0] + 0.5 * rng.normal(size=100)
    res = _fit(y, xs, 1)
    a = res.bootstrap(8, seed=5, method=method)
    b = res.bootstrap(8, seed=5, method=method)
    c = res.bootstrap(8, seed=5, method=method, n_jobs=2)
    for n in res.block_names:
        np.testing.assert_array_equal(a.angles[n], b.angles[n])
        np.testing.assert_array_equal(a.angles[n], c.angles[n])
    assert a.method == method and a.n_boot == 8
    seen: list[tuple[int, int]] = []  # progress: every replicate counted, the same numbers
    d = res.bootstrap(8, seed=5, method=method, progress=lambda done, total: seen.append(
        (done, total)))
    assert seen and seen[-1] == (8, 8) and [s for s, _ in seen] == sorted(s for s, _ in seen)
    np.testing.assert_array_equal(a.angles["k0"], d.angles["k0"])
    other = res.bootstrap(8, seed=6, method=method)
    assert not np.array_equal(a.angles["k0"], other.angles["k0"])


@pytest.mark.filterwarnings("ignore::jdr_stats.exceptions.WeakGapWarning")
def test_bootstrap_methods_differ_and_results(fitted):
    res, _, xs, _ = fitted
    p = res.bootstrap(9, seed=1, method="poisson", alpha=0.2)
    q = res.bootstrap(9, seed=1, method="pairs", alpha=0.2)
    assert not np.array_equal(p.angles["k0"], q.angles["k0"])
    iv = p.intervals
    ranks = res.rank if isinstance(res.rank, dict) else dict.fromkeys(res.block_names, res.rank)
    assert len(iv) == sum(1 + r for r in ranks.values())
    assert (iv["lower"] <= iv["upper"]).all()
    for n in res.block_names:
        assert p.angles[n].shape == (9, ranks[n])
        assert iv.loc[(n, "largest angle"), "upper"] == p.table.loc[n, "upper"]
    gap = p.gap_table
    assert gap.columns.tolist() == ["s_r / s_(r+1)", "crossing share", "median largest angle",
                                    "share above 45 deg", "trusted"]
    assert ((gap["crossing share"] >= 0) & (gap["crossing share"] <= 1)).all()
    json.dumps(p.to_dict())
    assert "poisson bootstrap" in str(p.summary())


def test_bootstrap_warns_weak_gap_by_block():
    """As for two blocks, a weak gap warns (WeakGapWarning), naming the
    blocks below GAP_RATIO_MIN: here the one outside the link."""
    rng = np.random.default_rng(21)
    xs = [rng.normal(size=(400, 3)), rng.normal(size=(400, 3)), rng.normal(size=(400, 6))]
    y = xs[0][:, 0] * xs[1][:, 0] + 0.3 * rng.normal(size=400)
    res = _fit(y, xs, 1, independent_blocks=True)
    with pytest.warns(jdr.exceptions.WeakGapWarning, match=r"in block\(s\) k2 ") as rec:
        boot = res.bootstrap(39, seed=1)
    assert len(rec) == 1 and "k0" not in str(rec[0].message)
    table = boot.gap_table
    assert not table.loc["k2", "trusted"] and table.loc[["k0", "k1"], "trusted"].all()
    assert table.loc["k2", "s_r / s_(r+1)"] < 1.5 <= table.loc["k0", "s_r / s_(r+1)"]
    assert boot.gap["trusted"] is False
    assert "WARNING (weak gap), block k2" in str(boot.summary())
    assert "Weak gap" in boot.sentence("k2") and "Weak gap" not in boot.sentence("k0")


def test_bootstrap_refusals():
    xs, rng = _blocks(60, (2, 2, 2), 15)
    res = _fit(rng.normal(size=60), xs, 1)
    with pytest.raises(ValueError, match="method"):
        res.bootstrap(5, method="wild")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="n_jobs"):
        res.bootstrap(5, n_jobs=0)
    with pytest.raises(ValueError, match="n_boot"):
        res.bootstrap(1)
    with pytest.raises(ValueError, match="alpha"):
        res.bootstrap(5, alpha=-0.5)
    with pytest.raises(ValueError, match='interval must be "percentile" at K blocks'):
        res.bootstrap(5, interval="calibrated")
    with pytest.raises(TypeError, match="progress"):
        res.bootstrap(5, progress="yes")  # type: ignore[arg-type]


def test_sketched_route_uses_the_fits_sketch(monkeypatch):
    import jdr_stats.policy as policy

    monkeypatch.setattr(policy, "KBLOCK_TENSOR_MAX_ENTRIES", 10)
    xs, rng = _blocks(120, (3, 3, 3), 16, rho=0.5)
    y = xs[0][:, 0] * xs[1][:, 0] * xs[2][:, 0] + rng.normal(size=120)
    res = _fit(y, xs, 1)
    assert res.settings["route"]["name"] == "sketch"
    stat = res._association_statistic()
    assert stat.tests is not None
    t = res.association_test(49, seed=2)
    assert t.pvalue == res.association_test(49, seed=2).pvalue
    mks, _, _ = res._coordinate_input()
    for k, n in enumerate(res.block_names):
        top = np.linalg.eigh(mks[k] @ mks[k].T)[1][:, ::-1][:, :1]
        assert np.max(principal_angles(top, res.whitened_bases[n])) < 1e-6
    assert len(res.drop1().table) == 9


def test_bootstrap_angles_are_free_of_the_columns_units():
    """The K-block bootstrap measures angles in each block's covariance
    metric: rescaling and shifting a column changes no replicate's angles
    (the raw coefficient angles would change)."""
    rng = np.random.default_rng(11)
    blocks = {n: rng.standard_normal((400, 3)) for n in ("g", "l", "c")}
    y = blocks["g"][:, 0] * blocks["l"][:, 0] * blocks["c"][:, 0] + rng.standard_normal(400)
    res = jdr.JointDimReduction.from_blocks(y, blocks).fit(1)
    moved = dict(blocks)
    moved["g"] = blocks["g"] * np.array([1e3, 1.0, 1e-2]) + 5.0
    res2 = jdr.JointDimReduction.from_blocks(y, moved).fit(1)
    b1 = res.bootstrap(n_boot=10, seed=4)
    b2 = res2.bootstrap(n_boot=10, seed=4)
    for n in blocks:
        np.testing.assert_allclose(b1.angles[n], b2.angles[n], atol=1e-6)
