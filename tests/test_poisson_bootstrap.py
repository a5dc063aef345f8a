"""Tests of the Poisson bootstrap pass and the batched refits / bounds."""

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats import config, policy
from jdr_stats.resampling import _engine as _resampling
from jdr_stats.estimation._estimate import estimate
from jdr_stats.core._linalg import principal_angles
from jdr_stats.streams._sources import ArraySource
from jdr_stats.inference import _bounds as bd
from jdr_stats.inference import poisson_bootstrap as pmod


def draw_entropy4(seed):
    """The Poisson bootstrap's root entropy (four words) for ``seed``."""
    return _resampling.draw_entropy(seed, 4)


@pytest.fixture(scope="module")
def data():
    sim = jdr.simulate.bilinear(2500, 4, 3, 2, seed=4)
    # shifted data: the algebraic mean correction must not lose precision
    return sim.y + 20.0, sim.a * 2 + 5.0, sim.b - 3.0


def _rel_err(got, want, full):
    """Error relative to the resampling fluctuation of the moment."""
    got, want, full = np.asarray(got), np.asarray(want), np.asarray(full)
    return np.abs(got - want).max() / np.abs(want - full).max()


def test_weight_table_has_mean_and_variance_one():
    t = _resampling._TABLE.astype(float)
    assert t.size == 1 << 16
    assert t.mean() == 1.0 and t.var() == 1.0
    for w in range(9):  # inner weights: conditional mean w (variance about w)
        row = _resampling._INNER_TABLE[w << 16:(w + 1) << 16].astype(float)
        assert row.mean() == pytest.approx(w, rel=1e-4, abs=1e-12)
        assert row.var() == pytest.approx(w, rel=1e-3, abs=1e-12)


def test_weights_same_seed_same_numbers_and_blocks_differ():
    ent = draw_entropy4(7)
    assert ent == draw_entropy4(7) and ent != draw_entropy4(8)
    w0 = pmod.poisson_weights(ent, 0, 5)
    np.testing.assert_array_equal(w0, pmod.poisson_weights(ent, 0, 5))
    assert w0.shape == (5, policy.BLOCK_ROWS) and w0.dtype == np.float32
    assert not np.array_equal(w0, pmod.poisson_weights(ent, 1, 5))
    big = pmod.poisson_weights(ent, 3, 400)
    assert abs(big.mean() - 1) < 0.01 and abs(big.var() - 1) < 0.01
    inner = pmod.inner_weights(ent, 3, big)
    assert np.all(inner[big == 0] == 0)
    assert abs(inner.mean() - 1) < 0.01 and abs(inner.var() - 2) < 0.03


def test_pass_equals_directly_weighted_moments(data):
    y, a, b = data
    m = y.size
    cw = np.random.default_rng(0).uniform(0.5, 2.0, m)
    model = jdr.JointDimReduction(y, a, b, weights=cw)
    src = ArraySource(y, a, b, batch_rows=700)
    outer, inner = pmod.poisson_moments(src, 3, seed=11, case_weights=cw, inner=True)
    ent = draw_entropy4(11)
    w = pmod.poisson_weights(ent, 0, 3)[:, :m]
    w_in = pmod.inner_weights(ent, 0, pmod.poisson_weights(ent, 0, 3))[:, :m]
    full = model.moments()
    for k in range(3):
        for got, weights in ((outer[k], w[k]), (inner[k], w_in[k])):
            ref = model.moments(weights=weights.astype(float))
            for field in ("mean_y", "mean_a", "mean_b", "var_y", "cov_a", "cov_b", "cross"):
                assert _rel_err(getattr(got, field), getattr(ref, field),
                                getattr(full, field)) < 1e-4


def test_pass_does_not_depend_on_chunking(data):
    y, a, b = data
    # several weight blocks: shrink the block size for the test
    one = pmod.poisson_moments(ArraySource(y, a, b, batch_rows=2500), 4, seed=3)
    two = pmod.poisson_moments(ArraySource(y, a, b, batch_rows=333), 4, seed=3)
    three = pmod.poisson_moments(ArraySource(y, a, b, batch_rows=1), 4, seed=3)
    full = jdr.JointDimReduction(y, a, b).moments()
    # the same weights and the same sums (test_bootstrap_storage: bit for bit)
    for x, z, v in zip(one, two, three):
        for field in ("mean_a", "cov_a", "cov_b", "cross"):
            f = getattr(full, field)
            assert _rel_err(getattr(z, field), getattr(x, field), f) < 1e-5
            assert _rel_err(getattr(v, field), getattr(x, field), f) < 1e-5
    other = pmod.poisson_moments(ArraySource(y, a, b), 4, seed=4)
    assert not np.allclose(one[0].cross, other[0].cross)


def test_weighted_source_equals_case_weights(data):
    y, a, b = data
    cw = np.random.default_rng(3).uniform(0.5, 2.0, y.size)
    one = pmod.poisson_moments(ArraySource(y, a, b, weights=cw, batch_rows=400), 3, seed=9)
    two = pmod.poisson_moments(ArraySource(y, a, b), 3, seed=9, case_weights=cw)
    full = jdr.JointDimReduction(y, a, b, weights=cw).moments()
    for x, z in zip(one, two):
        for field in ("mean_a", "cov_a", "cov_b", "cross"):
            assert _rel_err(getattr(x, field), getattr(z, field), getattr(full, field)) < 1e-5


def test_poisson_bootstrap_of_a_parquet_model(data, tmp_path):
    pytest.importorskip("pyarrow")
    import pandas as pd

    y, a, b = data
    frame = pd.DataFrame({"y": y, **{f"a{j}": a[:, j] for j in range(4)},
                          **{f"b{j}": b[:, j] for j in range(3)}})
    path = tmp_path / "rows.parquet"
    frame.to_parquet(path, row_group_size=700)
    streamed = jdr.JointDimReduction.from_parquet(
        path, y="y", a=[f"a{j}" for j in range(4)], b=[f"b{j}" for j in range(3)],
        batch_rows=512,
    ).fit(2)
    in_memory = jdr.JointDimReduction(y, a, b).fit(2)
    got = streamed.bootstrap(n_boot=20, seed=4, method="poisson")
    want = in_memory.bootstrap(n_boot=20, seed=4, method="poisson")
    # the same weights, rows chunked differently: equal up to the rounding
    np.testing.assert_allclose(got.angles_a, want.angles_a, rtol=1e-4, atol=1e-6)
    # singular values near zero carry the absolute rounding of the largest
    # one: an atol scaled by the largest, not an rtol alone (the tight
    # comparison across storages is tests/test_bootstrap_storage.py)
    top = np.max(np.abs(want.singular_values))
    np.testing.assert_allclose(got.singular_values, want.singular_values, rtol=1e-6,
                               atol=1e-6 * top)
    # n_jobs: the source is read in this process only; the same numbers
    par = streamed.bootstrap(n_boot=20, seed=4, method="poisson", n_jobs=2)
    np.testing.assert_array_equal(par.angles_a, got.angles_a)
    np.testing.assert_array_equal(par.singular_values, got.singular_values)
    # the pairs bootstrap needs the rows
    with pytest.raises(Exception, match="needs the rows"):
        streamed.bootstrap(n_boot=20, seed=4)


def test_pass_crosses_weight_blocks(data, monkeypatch):
    y, a, b = data
    monkeypatch.setattr(policy, "BLOCK_ROWS", 256)
    monkeypatch.setattr(config, "PIECE_ROWS", 100)
    got = pmod.poisson_moments(ArraySource(y, a, b, batch_rows=999), 2, seed=1)
    ent = draw_entropy4(1)
    nblocks = -(-y.size // 256)
    w = np.hstack([pmod.poisson_weights(ent, j, 2) for j in range(nblocks)])[:, : y.size]
    model = jdr.JointDimReduction(*data)
    full = model.moments()
    for k in range(2):
        ref = model.moments(weights=w[k].astype(float))
        assert _rel_err(got[k].cross, ref.cross, full.cross) < 1e-4


def test_pass_bad_input(data):
    y, a, b = data
    src = ArraySource(y, a, b)
    with pytest.raises(ValueError, match="n_boot"):
        pmod.poisson_moments(src, 0)
    with pytest.raises(TypeError, match="n_boot"):
        pmod.poisson_moments(src, 2.5)
    with pytest.raises(TypeError, match="source"):
        pmod.poisson_moments(np.zeros(3), 2)
    with pytest.raises(ValueError, match="case_weights"):
        pmod.poisson_moments(src, 2, case_weights=np.ones(3))
    with pytest.raises(TypeError, match="inner"):
        pmod.poisson_moments(src, 2, inner="yes")
    with pytest.raises(TypeError, match="seed"):
        pmod.poisson_moments(src, 2, seed="x")
    with pytest.raises(ValueError, match="case_weights.*own weights"):
        pmod.poisson_moments(ArraySource(y, a, b, weights=np.ones(y.size)), 2,
                             case_weights=np.ones(y.size))


def test_batched_dense_estimate_equals_estimate(data):
    y, a, b = data
    moms = pmod.poisson_moments(ArraySource(y, a, b), 6, seed=2)
    da, db, s, ok = bd.batched_dense_estimate(moms, 2)
    assert ok.all()
    for k, mom in enumerate(moms):
        e = estimate(mom, 2)
        assert principal_angles(da[k], e.dir_a).max() < 1e-10
        assert principal_angles(db[k], e.dir_b).max() < 1e-10
        s_e = e.singular_values
        np.testing.assert_allclose(s[k], s_e, rtol=0, atol=1e-12 * s_e.max())
    # a constant column makes the replicate unusable
    bad = moms[0].__class__(**{**moms[0].__dict__, "cov_a": np.zeros((4, 4))})
    _, _, s2, ok2 = bd.batched_dense_estimate([bad, moms[1]], 2)
    assert ok2.tolist() == [False, True] and np.isnan(s2[0]).all()


def test_bounds():
    rng = np.random.default_rng(0)
    theta = rng.uniform(0, 1, 199)
    t = np.sort(theta)
    assert bd.percentile_bound(theta, 0.95) == t[189]
    # inner angles inflated like the outer ones are inflated relative to the
    # truth (theta* = 2 theta, theta** = 4 theta): the calibration undoes it
    base = rng.exponential(size=(2, 4000))
    outer, inner = 2 * base[0], 4 * base[1]
    cal = bd.calibrated_bound(outer, inner, 0.95)
    assert cal == pytest.approx(np.quantile(base[0], 0.95), rel=0.1)
    # inner as spread as outer: no change
    lam = bd.calibrated_level(outer, 2 * base[1], 0.95)
    assert lam == pytest.approx(0.95, abs=0.01)
    assert bd.subsample_bound(np.full(9, np.pi / 6), 250, 1000, 0.5) == pytest.approx(
        np.arcsin(0.25))
    d = bd.gap_diagnostics(np.array([2.0, 1.0, 0.5]), np.array([[2.0, 0.4], [2, 1.0]]), 2)
    assert d == {"ratio": 2.0, "crossing": 0.5}
    assert bd.gap_diagnostics(np.array([2.0, 1.0]), np.ones((3, 2)), 2)["ratio"] == np.inf


@pytest.mark.parametrize("kind", ["sample", "shrinkage"])
def test_joint_replicate_re_residualises_from_its_reweighted_sums(kind):
    """The streamed pass of the joint estimator (the stacked design's
    reweighted covariance and y-weighted co-moment) gives each replicate the
    moments of the rows re-residualised under its weights, row by row."""
    from jdr_stats.estimation._joint import joint_data

    rng = np.random.default_rng(1)
    m = 700
    a = rng.normal(size=(m, 4))
    b = rng.normal(size=(m, 3)) + 0.5 * a[:, :3]
    y = a[:, 0] * b[:, 0] + rng.normal(size=m)
    jd, _ = joint_data(jdr.JointDimReduction(y, a, b).data, kind)
    plan = pmod.poisson_plan(jd.stacked_design(), 3, 5)
    moms = pmod.poisson_pass(plan)
    weights = _resampling.poisson_weights(plan.entropy, 0, 3)[:, :m].astype(float)
    for b_, mom in enumerate(moms):
        got, direct = jd.replicate_moments(mom), jd.moments(weights[b_])
        for name in ("cross", "cov_a", "cov_b"):
            want = getattr(direct, name)
            np.testing.assert_allclose(getattr(got, name), want,
                                       atol=1e-10 * np.abs(want).max(), err_msg=name)
