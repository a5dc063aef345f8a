"""The joint estimator (``fit(independent_blocks=False)``): each block's
residual on the other block, whitened by its partial covariance."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.exceptions import AssumptionWarning, JDRWarning, RowsNotInMemoryError
from jdr_stats.metrics import principal_angles


def _deg(a, b) -> float:
    return float(np.degrees(principal_angles(np.asarray(a), np.asarray(b)).max()))


@pytest.fixture(scope="module")
def correlated():
    """Gaussian blocks with corr(a_j, b_j) = 0.6, y = a'U V'b + noise (r = 1):
    the per-block whitening's cross moment has rank 2 here, the joint one 1."""
    return jdr.simulate.bilinear(4000, 6, 6, 1, design="correlated", rho=0.6, seed=1)


def residual(x, z):
    """Least squares residuals of the columns of ``x`` on ``[1, z]``."""
    design = np.column_stack([np.ones(len(z)), z])
    return x - design @ np.linalg.lstsq(design, x, rcond=None)[0]


def _quiet_fit(model, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JDRWarning)
        return model.fit(*args, **kw)


def test_correlated_blocks_rank_and_directions(correlated):
    sim = correlated
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    per_block = _quiet_fit(model, "auto", seed=1, independent_blocks=True)
    joint = model.fit("auto", seed=1)  # the default; no premise warning
    assert per_block.rank == 2  # the paper's estimator, premise broken
    assert joint.rank == 1
    assert joint.settings.estimator.name == "joint"
    assert per_block.settings.estimator.name == "per-block"
    assert _deg(joint.directions_a, sim.U) < 10 and _deg(joint.directions_b, sim.V) < 10
    assert not joint.diagnostics.messages
    ok = joint.diagnostics.table["ok"]
    assert ok.iloc[0] is None and ok.iloc[1] is None  # information, not a premise
    with pytest.warns(AssumptionWarning, match="independent_blocks=False"):
        model.fit("auto", seed=1, independent_blocks=True)


def test_joint_is_the_paper_estimator_on_least_squares_residuals(correlated):
    sim = correlated
    joint = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2, independent_blocks=False)

    ra, rb = residual(sim.a, sim.b), residual(sim.b, sim.a)
    # the paper's (per-block) estimator on the residual rows
    ref = jdr.JointDimReduction(sim.y, ra, rb).fit(2, independent_blocks=True)
    np.testing.assert_allclose(joint.singular_values, ref.singular_values, rtol=1e-9)
    np.testing.assert_allclose(joint.directions_a, ref.directions_a, atol=1e-9)
    np.testing.assert_allclose(joint.directions_b, ref.directions_b, atol=1e-9)
    # the reduced features use the model's own rows and means
    feats = joint.transform()
    want = np.hstack([(sim.a - sim.a.mean(0)) @ joint.directions_a,
                      (sim.b - sim.b.mean(0)) @ joint.directions_b])
    np.testing.assert_allclose(feats, want, atol=1e-10 * np.abs(want).max())
    np.testing.assert_allclose(joint.transform(sim.a[:5], sim.b[:5]), want[:5], atol=1e-10)


def test_rank_tests_and_support_run_on_the_residual_rows(correlated):
    sim = correlated
    joint = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1, independent_blocks=False)

    ref = jdr.JointDimReduction(sim.y, residual(sim.a, sim.b), residual(sim.b, sim.a)).fit(
        1, independent_blocks=True)  # the paper's estimator on the residual rows
    for method in ("chi2", "robust"):
        with warnings.catch_warnings():  # the residuals correlate: ref's premise check warns
            warnings.simplefilter("ignore", AssumptionWarning)
            want = ref.rank_tests(method).table
        got = joint.rank_tests(method).table
        np.testing.assert_allclose(got["statistic"], want["statistic"], rtol=1e-8)
        np.testing.assert_allclose(got["pvalue"], want["pvalue"], rtol=1e-6, atol=1e-12)
    drop = joint.drop1().table
    assert list(drop.index[:6]) == [f"a{j}" for j in range(6)]


def test_bootstrap_refits_the_residuals_in_every_replicate(correlated):
    """A replicate of the joint bootstrap equals the joint fit of the
    resampled rows (the residual coefficients re-estimated), not a refit of
    fixed residuals."""
    sim = correlated
    model = jdr.JointDimReduction(sim.y[:800], sim.a[:800], sim.b[:800])
    res = model.fit(1, independent_blocks=False)
    boot = res.bootstrap(n_boot=3, seed=5)
    from jdr_stats.resampling._engine import draw_counts

    rng = np.random.default_rng(5)
    counts = draw_counts(rng, 3, 800)
    idx = np.repeat(np.arange(800), counts[0].astype(int))
    refit = jdr.JointDimReduction(sim.y[:800][idx], sim.a[:800][idx], sim.b[:800][idx]).fit(
        1, independent_blocks=False)
    s_ref = refit.singular_values
    np.testing.assert_allclose(boot.singular_values[0], s_ref, rtol=0, atol=1e-9 * s_ref.max())
    # residuals held fixed would give other replicates
    fixed = jdr.JointDimReduction(res.model.data.endog, *res._fit_data.blocks.values()).fit(1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JDRWarning)
        held = fixed.bootstrap(n_boot=3, seed=5)
    assert np.abs(held.singular_values[0] - s_ref).max() > 1e-4 * s_ref.max()


@pytest.mark.equality
def test_same_numbers_from_parquet_and_dask(correlated, tmp_path):
    sim = correlated
    frame = pd.DataFrame(np.column_stack([sim.y, sim.a, sim.b]),
                         columns=["y", *[f"a{j}" for j in range(6)], *[f"b{j}" for j in range(6)]])
    path = tmp_path / "d.parquet"
    frame.to_parquet(path)
    mem = jdr.JointDimReduction(frame["y"], frame.iloc[:, 1:7], frame.iloc[:, 7:]).fit(
        "auto", independent_blocks=False, seed=2)
    pq = jdr.JointDimReduction.from_parquet(path, y="y", a=list(frame.columns[1:7]),
                                            b=list(frame.columns[7:]), batch_rows=700)
    got = pq.fit("auto", independent_blocks=False, seed=2)
    assert got.rank == mem.rank
    np.testing.assert_allclose(got.singular_values, mem.singular_values, rtol=1e-10)
    np.testing.assert_allclose(got.directions_a, mem.directions_a, atol=1e-10)
    np.testing.assert_allclose(got.rank_test_table.table["pvalue"],
                               mem.rank_test_table.table["pvalue"], rtol=1e-8, atol=1e-14)
    dd = pytest.importorskip("dask.array")
    ys, as_, bs = (dd.from_array(x, chunks=900) for x in (sim.y, sim.a, sim.b))
    dk = jdr.JointDimReduction(ys, as_, bs).fit(2, independent_blocks=False)
    np.testing.assert_allclose(dk.singular_values, mem.model.fit(
        2, independent_blocks=False).singular_values, rtol=1e-10)
    # the Poisson bootstrap streams: every replicate re-residualises from its
    # reweighted sums, the same replicates as the rows in memory
    bp = got.bootstrap(n_boot=9, method="poisson", seed=1)
    bm = mem.bootstrap(n_boot=9, method="poisson", seed=1)
    np.testing.assert_allclose(bp.angles_a, bm.angles_a, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose(bp.singular_values, bm.singular_values, rtol=1e-6,
                               atol=1e-6 * np.abs(bm.singular_values).max())
    with pytest.raises(RowsNotInMemoryError, match='method="pairs"'):
        got.bootstrap(n_boot=9, seed=1)


@pytest.mark.equality
def test_same_numbers_from_bare_moments(correlated, tmp_path):
    """from_moments of chunked Moments (with the within-block moments) gives
    the joint fit of the rows in memory, and its chi2 rank test."""
    sim = correlated
    mom = sum(jdr.Moments.from_arrays(sim.y[i:i + 700], sim.a[i:i + 700], sim.b[i:i + 700],
                                      within=True)
              for i in range(0, 4000, 700))
    assert mom.has_within and mom.m3_aya.shape == (6, 6) and mom.m3_byb.shape == (6, 6)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    bare = jdr.JointDimReduction.from_moments(mom)
    mem, got = (m.fit(2, independent_blocks=False) for m in (model, bare))
    assert got.settings.estimator.name == "joint"
    np.testing.assert_allclose(got.singular_values, mem.singular_values, rtol=1e-9)
    np.testing.assert_allclose(got.directions_a, mem.directions_a, atol=1e-9)
    np.testing.assert_allclose(got.directions_b, mem.directions_b, atol=1e-9)
    for g, m in zip(got.block_means, mem.block_means, strict=True):  # the model's means
        np.testing.assert_allclose(g, m, atol=1e-12)
        assert np.abs(g).max() > 1e-3 or np.abs(m).max() < 1e-3
    new_a, new_b = sim.a[:5] + 1.0, sim.b[:5] - 2.0
    np.testing.assert_allclose(got.transform(new_a, new_b), mem.transform(new_a, new_b),
                               atol=1e-9)
    auto_mem, auto_got = (m.fit("auto", independent_blocks=False, rank_method="chi2", seed=1)
                          for m in (model, bare))
    assert auto_got.rank == auto_mem.rank == 1
    np.testing.assert_allclose(auto_got.rank_test_table.table["statistic"],
                               auto_mem.rank_test_table.table["statistic"], rtol=1e-9)
    np.testing.assert_allclose(auto_got.rank_test_table.table["pvalue"],
                               auto_mem.rank_test_table.table["pvalue"], rtol=1e-8, atol=1e-14)
    with pytest.raises(RowsNotInMemoryError, match="needs the rows"):
        got.bootstrap(n_boot=9, seed=1)
    path = tmp_path / "fit.pickle"
    got.save(path)
    np.testing.assert_array_equal(jdr.load(path).singular_values, got.singular_values)


def test_what_the_joint_estimator_refuses(correlated):
    sim = correlated
    full = jdr.Moments.from_arrays(sim.y, sim.a, sim.b)
    # moments built by the constructor without the within-block moments
    keys = ("nobs weight mean_y mean_a mean_b m2_y m2_a m2_b m2_ab m2_ay m2_by m3_ayb "
            "endog_name names_a names_b").split()
    mom = jdr.Moments(**{k: getattr(full, k) for k in keys})
    assert mom.m3_aya is None and not mom.has_within and not (mom + full).has_within
    with pytest.raises(RowsNotInMemoryError, match=r"m3_aya and m3_byb.*independent_blocks=True"):
        jdr.JointDimReduction.from_moments(mom).fit(1, independent_blocks=False)
    # several response columns from bare sums (with the within-block
    # moments, as from_arrays computes them): the in-memory joint fit
    yq = np.c_[sim.y, sim.a[:, 0] + sim.y]
    rm = jdr.moments.ResponseMoments.from_arrays(yq, sim.a, sim.b)
    np.testing.assert_allclose(jdr.JointDimReduction.from_moments(rm).fit(1).singular_values,
                               jdr.JointDimReduction(yq, sim.a, sim.b).fit(1).singular_values,
                               rtol=1e-8)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    with pytest.raises(ValueError, match="independent_blocks must be True or False; got 'yes'"):
        model.fit(1, independent_blocks="yes")
    small = jdr.JointDimReduction(sim.y[:12], sim.a[:12], sim.b[:12])
    # max(n1, n2) + 2 <= m < n1 + n2 + 2: the joint estimator asked for, or an
    # error naming what would run, never the per-block one by shape
    with pytest.raises(ValueError, match=r"independent_blocks=False \(the joint estimator\) "
                       r"with whitening=\"sample\" needs at least n1 \+ n2 \+ 2 = 14 rows.*"
                       r"got 12.*independent_blocks=True for the per-block estimator"):
        small.fit(1, independent_blocks=False, whitening="sample")
    shrunk = small.fit(1, independent_blocks=False)
    assert shrunk.settings.estimator.name == "joint" and shrunk.whitening == "shrinkage"
    # its tests whiten with the sample covariance of both blocks together: refused
    with pytest.raises(ValueError, match=r"n1 \+ n2 \+ 2 = 14 rows for the tests of this fit"):
        shrunk.rank_tests()
    with pytest.raises(ValueError, match=r"independent_blocks=False.*n1 \+ n2 \+ 2 = 14"):
        small.fit("auto")
    assert small.fit(1, independent_blocks=True).settings.estimator.name == "per-block"
    # a column of one block repeated in the other: refused with the data, named
    b = sim.b.copy()
    b[:, 2] = sim.a[:, 4]
    with pytest.raises(ValueError, match="both exog_a and exog_b.*'a4' = 'b2'"):
        jdr.JointDimReduction(sim.y, sim.a, b)
    # collinear across blocks (not a copy): named by the joint estimator
    b[:, 2] = sim.a[:, 4] + sim.a[:, 3]
    with pytest.raises(ValueError, match="exog_b:b2"):
        jdr.JointDimReduction(sim.y, sim.a, b).fit(1, independent_blocks=False)


def test_conclusions_do_not_depend_on_units_or_order(correlated):
    sim = correlated
    base = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1, independent_blocks=False)
    rng = np.random.default_rng(0)
    scale, shift = rng.uniform(0.1, 10, size=6), rng.normal(size=6) * 100
    perm = rng.permutation(6)
    a2 = (sim.a * scale + shift)[:, perm]
    other = jdr.JointDimReduction(3 * sim.y - 1, a2, sim.b[:, ::-1]).fit(
        1, independent_blocks=False)
    np.testing.assert_allclose(other.singular_values / other.singular_values[0],
                               base.singular_values / base.singular_values[0], rtol=1e-8)
    # the same subspace in the original coordinates of a
    back = np.asarray(other.directions_a)[np.argsort(perm)] * scale[:, None]
    assert _deg(back, base.directions_a) < 1e-6
    t1, t2 = base.rank_tests("robust").table, other.rank_tests("robust").table
    np.testing.assert_allclose(t1["pvalue"], t2["pvalue"], rtol=1e-6, atol=1e-12)


def test_options_pass_through(correlated):
    sim = correlated
    w = np.random.default_rng(0).uniform(0.5, 2, size=sim.y.size)
    z = np.random.default_rng(1).normal(size=sim.y.size)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b, weights=w, covariates=z).fit(
        1, independent_blocks=False)
    assert _deg(res.directions_a, sim.U) < 15
    classes = np.digitize(sim.y, [-1.0, 1.0])
    cat = jdr.JointDimReduction(classes, sim.a, sim.b, response="categorical").fit(
        1, independent_blocks=False)
    assert cat.settings.joint and _deg(cat.directions_b, sim.V) < 20
    sparse = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1, independent_blocks=False,
                                                           sparsity=(3, 3))
    assert len(sparse.support_a) == 3
    text = str(res.summary())
    assert ("Estimator: joint (default: each block's residual on the other, valid when the "
            "blocks correlate; independent_blocks=True: the paper's)") in " ".join(text.split())
    assert res.to_dict()["choices"]["estimator"]["reason"].startswith(
        "default: the joint estimator (each block's residual on the other block, whitened "
        "with the sample covariance of both blocks together)")
    assert "sample (across blocks)" in text
    doc = res.to_dict()
    assert doc["choices"]["estimator"]["name"] == "joint"
    small = res.remove_data()
    assert small.settings.joint and small.transform(sim.a[:2], sim.b[:2]).shape == (2, 2)


def test_sklearn_blocks_and_joint(correlated):
    pytest.importorskip("sklearn")
    from jdr_stats.sklearn import JointDimReductionTransformer

    sim = correlated
    X = np.hstack([sim.a, sim.b])
    tr = JointDimReductionTransformer(rank=1, blocks=[list(range(6)), list(range(6, 12))],
                                      independent_blocks=False).fit(X, sim.y)
    want = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1, independent_blocks=False)
    np.testing.assert_allclose(tr.transform(X[:7]), want.transform(sim.a[:7], sim.b[:7]),
                               atol=1e-10)
    # three blocks fit the K-block estimator; a rank above a
    # block's width is named
    three = JointDimReductionTransformer(rank=1, blocks=[[0, 1], [2, 3], [6, 7]])
    assert three.fit(X, sim.y).transform(X[:4]).shape == (4, 3)
    with pytest.raises(ValueError, match="rank of block 'block1' must be an integer"):
        JointDimReductionTransformer(rank=2, blocks=[[0], [1], [2]]).fit(X, sim.y)
    with pytest.raises(ValueError, match="not both"):
        JointDimReductionTransformer(blocks=[[0], [1]], block_a=[0]).fit(X, sim.y)


def test_support_notes_say_which_estimator(correlated):
    sim = correlated
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    joint = model.select_support(rank=1, independent_blocks=False, seed=1, n_resamples=99)
    assert joint.settings["estimator"] == "joint"
    assert any("residual on the other block" in n for n in joint.notes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JDRWarning)
        per_block = model.select_support(rank=1, seed=1, n_resamples=99,
                                         independent_blocks=True)
    assert per_block.settings["estimator"] == "per-block"
    assert any("Assumptions: independent blocks" in n for n in per_block.notes)


@pytest.mark.equality
def test_rotated_rows_without_the_residual_copy(correlated):
    """A joint model's rank tests rotate its rows block by block through the
    residual map (ModelData.mapped_rows, no residual rows formed): the rows
    of the residuals rotated, to rounding; and the test data built like the
    fit's reuse its stacked sums (the same moments)."""
    from jdr_stats.estimation._joint import JointModelData, joint_data

    sim = correlated
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    data, _ = joint_data(model.data, "shrinkage")
    assert isinstance(data, JointModelData)
    rng = np.random.default_rng(0)
    maps = [(rng.normal(size=6), rng.normal(size=(6, 4))), (rng.normal(size=6),
                                                            rng.normal(size=(6, 6)))]
    _, (ra, rb) = data.mapped_rows("a test", maps)
    assert not data.blocks.formed  # no residual rows formed
    _, a_res, b_res = data.rows("a test")
    assert data.blocks.formed
    np.testing.assert_allclose(ra, (a_res - maps[0][0]) @ maps[0][1], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(rb, (b_res - maps[1][0]) @ maps[1][1], rtol=1e-12, atol=1e-12)
    _, (ra2, _) = data.mapped_rows("a test", maps)  # formed: from the residual rows
    np.testing.assert_allclose(ra2, ra, rtol=1e-12, atol=1e-12)
    shared, _ = joint_data(model.data, like=data)
    alone, _ = joint_data(model.data)
    assert shared.stacked is data.stacked and alone.stacked is not data.stacked
    m1, m2 = shared.moments(), alone.moments()
    for key in ("cross", "cov_a", "cov_b"):
        np.testing.assert_allclose(getattr(m1, key), getattr(m2, key), rtol=1e-12,
                                   atol=1e-14)
