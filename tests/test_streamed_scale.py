"""Streamed fits of columns of extreme units: the conclusions of unit scale.

The in-memory fit scales such columns by powers of two before the moments
are formed; a streamed fit chooses each column's power of two from the
first chunk, sums the scaled columns on every pass and folds the scales
back through the whitening maps.  It used to refuse these columns (sums of
squares that overflow, or that vanish as if the column were constant).
"""

import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.core._linalg import principal_angles

pytest.importorskip("pyarrow")

FACTORS = [1e300, 1e-300, 1e-160, 1e200]


def _angle(d_user, units, d_ref):
    """Largest principal angle between directions given in the extreme units
    (a column times ``units``) mapped back to unit scale, and the reference."""
    return np.max(principal_angles(np.asarray(d_user) * units[:, None], np.asarray(d_ref)))


def _same_loadings(got, ref):
    """Per-SD loadings are unit-free: equal to unit scale's (each column's
    sign as the reference's)."""
    g, r = np.asarray(got, float), np.asarray(ref, float)
    sign = np.sign(np.sum(g * r, axis=0))
    np.testing.assert_allclose(g * sign, r, rtol=1e-9, atol=1e-12)


def _write(tmp_path, frame, ext):
    path = tmp_path / f"data.{ext}"
    if ext == "parquet":
        frame.to_parquet(path, row_group_size=200)  # several row groups
    else:
        frame.to_csv(path, index=False, float_format="%.17g")  # exact round trip
    return path


def _two_block_data(m=500, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(m, 3))
    b = rng.normal(size=(m, 3)) + 0.15 * a  # mildly correlated blocks
    y = a[:, 0] * b[:, 0] + a[:, 1] * b[:, 2] + 0.5 * rng.normal(size=m)
    return y, a, b


@pytest.mark.parametrize("ext", ["parquet", "csv"])
@pytest.mark.parametrize("factor", FACTORS)
@pytest.mark.parametrize("independent", [True, False])
def test_two_blocks_streamed_at_any_scale(tmp_path, ext, factor, independent):
    y, a, b = _two_block_data()
    ua, ub = np.array([1.0, factor, 1.0]), np.array([1.0 / factor, 1.0, 1.0])
    frame = pd.DataFrame(np.column_stack([y, a * ua, b * ub]),
                         columns=["y", "a0", "a1", "a2", "b0", "b1", "b2"])
    path = _write(tmp_path, frame, ext)
    cols = {"a": ["a0", "a1", "a2"], "b": ["b0", "b1", "b2"]}
    model = (jdr.JointDimReduction.from_parquet(path, y="y", **cols) if ext == "parquet"
             else jdr.JointDimReduction.from_csv(path, y="y", blocks=cols))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow on any pass
        res = model.fit(2, independent_blocks=independent)
        table = res.rank_tests().table
    ref = jdr.JointDimReduction(y, a, b).fit(2, independent_blocks=independent)
    ref_table = ref.rank_tests().table
    np.testing.assert_allclose(res.singular_values, ref.singular_values, rtol=1e-10)
    assert _angle(res.directions_a, ua, ref.directions_a) < 1e-10
    assert _angle(res.directions_b, ub, ref.directions_b) < 1e-10
    np.testing.assert_allclose(table["statistic"], ref_table["statistic"], rtol=1e-9)
    np.testing.assert_allclose(table["pvalue"], ref_table["pvalue"], rtol=1e-8, atol=1e-14)
    # new rows in the same extreme units: the features of the in-memory fit of them
    mem = jdr.JointDimReduction(y, a * ua, b * ub).fit(2, independent_blocks=independent)
    new = np.asarray(res.transform(a[:7] * ua, b[:7] * ub))
    want = np.asarray(mem.transform(a[:7] * ua, b[:7] * ub))
    top = np.abs(want).max(axis=0)  # each feature in its own units
    np.testing.assert_allclose(new / top, want / top, rtol=0, atol=1e-9)


@pytest.mark.parametrize("ext", ["parquet", "csv"])
@pytest.mark.parametrize("factor", [1e300, 1e-300])
@pytest.mark.parametrize("independent", [True, False])
def test_three_blocks_streamed_at_any_scale(tmp_path, ext, factor, independent):
    rng = np.random.default_rng(1)
    m, widths = 600, (3, 3, 2)
    xs = [rng.normal(size=(m, k)) for k in widths]
    xs[1] = xs[1] + 0.3 * xs[0]
    y = xs[0][:, 0] * xs[1][:, 0] + xs[1][:, 1] * xs[2][:, 0] + 0.5 * rng.normal(size=m)
    names = {"g": ["g0", "g1", "g2"], "l": ["l0", "l1", "l2"], "c": ["c0", "c1"]}
    units = {"g": np.array([1.0, factor, 1.0]), "l": np.ones(3),
             "c": np.array([1.0 / factor, 1.0])}
    frame = pd.DataFrame(np.column_stack([y, *(x * units[k] for x, k in zip(xs, names))]),
                         columns=["y", *(c for cols in names.values() for c in cols)])
    path = _write(tmp_path, frame, ext)
    reader = jdr.JointDimReduction.from_parquet if ext == "parquet" else \
        jdr.JointDimReduction.from_csv
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = reader(path, y="y", blocks=names).fit(1, independent_blocks=independent)
    ref = jdr.JointDimReduction.from_blocks(
        y, {k: pd.DataFrame(x, columns=names[k]) for x, k in zip(xs, names)}).fit(
        1, independent_blocks=independent)
    for k in names:
        assert _angle(res.directions[k], units[k], ref.directions[k]) < 1e-10
        _same_loadings(res.loadings[k], ref.loadings[k])
    np.testing.assert_allclose(np.concatenate([res.eigenvalues[k] for k in names]),
                               np.concatenate([ref.eigenvalues[k] for k in names]),
                               rtol=1e-9)


def test_unit_scale_streams_unchanged(tmp_path):
    """Columns within 2^+-100 of unit size are summed as they are (no scales)."""
    y, a, b = _two_block_data(seed=3)
    frame = pd.DataFrame(np.column_stack([y, a * 1e20, b]),
                         columns=["y", "a0", "a1", "a2", "b0", "b1", "b2"])
    path = _write(tmp_path, frame, "parquet")
    model = jdr.JointDimReduction.from_parquet(path, y="y", a=["a0", "a1", "a2"],
                                               b=["b0", "b1", "b2"])
    assert model.data.scales is None


@pytest.mark.parametrize("factor", [1e300, 1e-300])
@pytest.mark.parametrize("independent", [True, False])
def test_poisson_bootstrap_streamed_at_any_scale(tmp_path, factor, independent):
    """The Poisson bootstrap reads the scaled columns again: its angles (in
    each block's covariance metric) are those of the unit-scale file."""
    y, a, b = _two_block_data(seed=4)
    cols = {"a": ["a0", "a1", "a2"], "b": ["b0", "b1", "b2"]}
    boots = []
    for ua, ub in ((np.ones(3), np.ones(3)),
                   (np.array([1.0, factor, 1.0]), np.array([1.0 / factor, 1.0, 1.0]))):
        frame = pd.DataFrame(np.column_stack([y, a * ua, b * ub]),
                             columns=["y", *cols["a"], *cols["b"]])
        path = _write(tmp_path, frame, "parquet")
        res = jdr.JointDimReduction.from_parquet(path, y="y", **cols).fit(
            2, independent_blocks=independent)
        boots.append(res.bootstrap(n_boot=19, method="poisson", seed=1))
    assert boots[1].n_failed == 0
    np.testing.assert_allclose(boots[1].angles_a, boots[0].angles_a, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(boots[1].angles_b, boots[0].angles_b, rtol=1e-7, atol=1e-7)


@pytest.mark.parametrize("factor", [1e300, 1e-300])
@pytest.mark.parametrize("independent", [True, False])
def test_two_blocks_dask_at_any_scale(factor, independent):
    """Dask input: the scales come from the first row block (one task) and
    every task scales its block; the conclusions are those of unit scale."""
    da = pytest.importorskip("dask.array")
    y, a, b = _two_block_data()
    ua, ub = np.array([1.0, factor, 1.0]), np.array([1.0 / factor, 1.0, 1.0])
    model = jdr.JointDimReduction(da.from_array(y, chunks=100),
                                  da.from_array(a * ua, chunks=(100, 3)),
                                  da.from_array(b * ub, chunks=(100, 3)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = model.fit(2, independent_blocks=independent)
        table = res.rank_tests().table
    ref = jdr.JointDimReduction(y, a, b).fit(2, independent_blocks=independent)
    ref_table = ref.rank_tests().table
    np.testing.assert_allclose(res.singular_values, ref.singular_values, rtol=1e-12)
    assert _angle(res.directions_a, ua, ref.directions_a) < 1e-10
    assert _angle(res.directions_b, ub, ref.directions_b) < 1e-10
    np.testing.assert_allclose(table["pvalue"], ref_table["pvalue"], rtol=1e-8, atol=1e-14)


@pytest.mark.parametrize("factor", [1e300, 1e-300])
@pytest.mark.parametrize("independent", [True, False])
def test_three_blocks_dask_at_any_scale(factor, independent):
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(1)
    m, widths = 600, (3, 3, 2)
    xs = [rng.normal(size=(m, k)) for k in widths]
    xs[1] = xs[1] + 0.3 * xs[0]
    y = xs[0][:, 0] * xs[1][:, 0] + xs[1][:, 1] * xs[2][:, 0] + 0.5 * rng.normal(size=m)
    names = ["g", "l", "c"]
    units = [np.array([1.0, factor, 1.0]), np.ones(3), np.array([1.0 / factor, 1.0])]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = jdr.JointDimReduction.from_blocks(
            da.from_array(y, chunks=150),
            {n: da.from_array(x * u, chunks=(150, -1)) for n, x, u in zip(names, xs, units)}
        ).fit(1, independent_blocks=independent)
    ref = jdr.JointDimReduction.from_blocks(y, dict(zip(names, xs))).fit(
        1, independent_blocks=independent)
    for n, u in zip(names, units):
        assert _angle(res.directions[n], u, ref.directions[n]) < 1e-10
        np.testing.assert_allclose(res.eigenvalues[n], ref.eigenvalues[n], rtol=1e-12)
        _same_loadings(res.loadings[n], ref.loadings[n])
    if independent:  # the streamed per-block rank tests
        np.testing.assert_allclose(res.rank_tests().table["pvalue"],
                                   ref.rank_tests().table["pvalue"], rtol=1e-8, atol=1e-14)


@pytest.mark.parametrize("factor", [1e300, 1e-300])
@pytest.mark.parametrize("independent", [True, False])
def test_bare_moments_at_any_scale(factor, independent):
    """``Moments.from_arrays`` holds columns of extreme units times powers
    of two (``scales``); merged parts and ``from_moments`` fits give the
    conclusions of unit scale."""
    y, a, b = _two_block_data(seed=5)
    ua, ub = np.array([1.0, factor, 1.0]), np.array([1.0 / factor, 1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        whole = jdr.Moments.from_arrays(y, a * ua, b * ub)
        parts = sum(jdr.Moments.from_arrays(y[i:i + 125], a[i:i + 125] * ua,
                                            b[i:i + 125] * ub) for i in range(0, 500, 125))
        assert whole.scales is not None and parts.scales is not None
        fits = [jdr.JointDimReduction.from_moments(mom).fit(2, independent_blocks=independent)
                for mom in (whole, parts)]
    ref = jdr.JointDimReduction(y, a, b).fit(2, independent_blocks=independent)
    ref_p = ref.rank_tests("chi2").table["pvalue"]
    for res in fits:
        np.testing.assert_allclose(res.singular_values, ref.singular_values, rtol=1e-12)
        assert _angle(res.directions_a, ua, ref.directions_a) < 1e-10
        assert _angle(res.directions_b, ub, ref.directions_b) < 1e-10
        np.testing.assert_allclose(res.rank_tests("chi2").table["pvalue"], ref_p,
                                   rtol=1e-8, atol=1e-14)
    # the user's units where float64 holds them
    np.testing.assert_allclose(whole.mean_a, (a * ua).mean(axis=0), rtol=1e-12)


def test_bare_moments_constant_column_still_refused():
    """A column constant at working precision is refused, not scaled away."""
    y, a, b = _two_block_data(seed=6)
    a = a.copy()
    a[:, 1] = 1e-300
    with pytest.raises(ValueError, match="constant"):
        jdr.JointDimReduction.from_moments(jdr.Moments.from_arrays(y, a, b))


@pytest.mark.parametrize("factor", [1e300, 1e-300])
def test_three_block_moments_at_any_scale(factor):
    """``Moments.from_blocks`` of columns of extreme units (merged parts
    included): the per-block fit of unit scale."""
    rng = np.random.default_rng(2)
    m = 600
    xs = {k: rng.normal(size=(m, n)) for k, n in (("g", 3), ("l", 3), ("c", 2))}
    y = xs["g"][:, 0] * xs["l"][:, 0] + xs["l"][:, 1] * xs["c"][:, 0] + 0.5 * rng.normal(size=m)
    units = {"g": np.array([1.0, factor, 1.0]), "l": np.ones(3),
             "c": np.array([1.0 / factor, 1.0])}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        whole = jdr.Moments.from_blocks(y, {k: x * units[k] for k, x in xs.items()})
        parts = sum(jdr.Moments.from_blocks(y[i:i + 200], {k: x[i:i + 200] * units[k]
                                                          for k, x in xs.items()})
                    for i in range(0, m, 200))
        fits = [jdr.JointDimReduction.from_moments(mom).fit(1, independent_blocks=True)
                for mom in (whole, parts)]
    ref = jdr.JointDimReduction.from_blocks(y, xs).fit(1, independent_blocks=True)
    for res in fits:
        for k in xs:
            assert _angle(res.directions[k], units[k], ref.directions[k]) < 1e-10
            np.testing.assert_allclose(res.eigenvalues[k], ref.eigenvalues[k], rtol=1e-12)
            _same_loadings(res.loadings[k], ref.loadings[k])


@pytest.mark.parametrize("factor", [1e300, 1e-300])
@pytest.mark.parametrize("independent", [True, False])
def test_moments_from_chunks_at_any_scale(factor, independent):
    """``Moments.from_chunks``: each chunk's columns of extreme units held
    times powers of two, the chunks merged at one scale per column; the
    conclusions of unit scale (chunks of other magnitudes included)."""
    y, a, b = _two_block_data(seed=7)
    ua, ub = np.array([1.0, factor, 1.0]), np.array([1.0 / factor, 1.0, 1.0])
    # the second half in units a thousand times larger: another power of two
    k = np.where(np.arange(500) < 250, 1.0, 1024.0)[:, None]
    chunks = [(y[i:i + 100], (a * ua * k)[i:i + 100], (b * ub)[i:i + 100])
              for i in range(0, 500, 100)]
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        mom = jdr.Moments.from_chunks(chunks)
        assert mom.scales is not None
        res = jdr.JointDimReduction.from_moments(mom).fit(2, independent_blocks=independent)
        p = res.rank_tests("chi2").table["pvalue"]
    ref = jdr.JointDimReduction(y, a * k, b).fit(2, independent_blocks=independent)
    np.testing.assert_allclose(res.singular_values, ref.singular_values, rtol=1e-12)
    assert _angle(res.directions_a, ua, ref.directions_a) < 1e-10
    assert _angle(res.directions_b, ub, ref.directions_b) < 1e-10
    np.testing.assert_allclose(p, ref.rank_tests("chi2").table["pvalue"], rtol=1e-8,
                               atol=1e-14)
    unit = jdr.Moments.from_chunks([(y, a, b)])  # unit scale: no scales
    assert unit.scales is None


@pytest.mark.parametrize("factor", [1e300, 1e-300])
@pytest.mark.parametrize("independent", [True, False])
def test_dask_with_covariates_at_any_scale(factor, independent):
    """Dask blocks of extreme units adjusted for covariates (one of them in
    extreme units too): the conclusions of unit scale."""
    da = pytest.importorskip("dask.array")
    y, a, b = _two_block_data(seed=8)
    z = np.random.default_rng(8).normal(size=(500, 2))
    y = y + z[:, 0]
    ua, ub = np.array([1.0, factor, 1.0]), np.array([1.0 / factor, 1.0, 1.0])
    uz = np.array([factor, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = jdr.JointDimReduction(
            da.from_array(y, chunks=100), da.from_array(a * ua, chunks=(100, 3)),
            da.from_array(b * ub, chunks=(100, 3)),
            covariates=da.from_array(z * uz, chunks=(100, 2))).fit(
            2, independent_blocks=independent)
        table = res.rank_tests().table
    ref = jdr.JointDimReduction(y, a, b, covariates=z).fit(2, independent_blocks=independent)
    np.testing.assert_allclose(res.singular_values, ref.singular_values, rtol=1e-10)
    assert _angle(res.directions_a, ua, ref.directions_a) < 1e-9
    assert _angle(res.directions_b, ub, ref.directions_b) < 1e-9
    np.testing.assert_allclose(table["pvalue"], ref.rank_tests().table["pvalue"], rtol=1e-7,
                               atol=1e-12)


@pytest.mark.parametrize("factor", [1e300, 1e-300])
@pytest.mark.parametrize("independent", [True, False])
def test_dask_multicolumn_response_at_any_scale(factor, independent):
    """A dask response of two columns with blocks of extreme units: the
    conclusions of unit scale (each response column's part and the merged
    parts held at one scale per block column)."""
    da = pytest.importorskip("dask.array")
    y, a, b = _two_block_data(seed=9)
    Y = np.column_stack([y, a[:, 2] * b[:, 1] + 0.5 * np.random.default_rng(9).normal(size=500)])
    ua, ub = np.array([1.0, factor, 1.0]), np.array([1.0 / factor, 1.0, 1.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = jdr.JointDimReduction(
            da.from_array(Y, chunks=(100, 2)), da.from_array(a * ua, chunks=(100, 3)),
            da.from_array(b * ub, chunks=(100, 3))).fit(2, independent_blocks=independent)
    ref = jdr.JointDimReduction(Y, a, b).fit(2, independent_blocks=independent)
    np.testing.assert_allclose(res.singular_values, ref.singular_values, rtol=1e-10)
    assert _angle(res.directions_a, ua, ref.directions_a) < 1e-9
    assert _angle(res.directions_b, ub, ref.directions_b) < 1e-9
    # bare sums of the same rows, merged parts: the same fit
    from jdr_stats.moments import ResponseMoments

    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        parts = sum(ResponseMoments.from_arrays(Y[i:i + 250], (a * ua)[i:i + 250],
                                                (b * ub)[i:i + 250]) for i in (0, 250))
        bare = jdr.JointDimReduction.from_moments(parts).fit(2, independent_blocks=independent)
    np.testing.assert_allclose(bare.singular_values, ref.singular_values, rtol=1e-10)
    assert _angle(bare.directions_a, ua, ref.directions_a) < 1e-9


@pytest.mark.parametrize("factor", [1e300, 1e-300])
@pytest.mark.parametrize("independent", [True, False])
def test_parquet_with_covariates_at_any_scale(tmp_path, factor, independent):
    """A Parquet file streamed with covariates (one in extreme units): the
    adjustment of the scaled columns, the conclusions of unit scale."""
    y, a, b = _two_block_data(seed=10)
    z = np.random.default_rng(10).normal(size=(500, 2))
    y = y + z[:, 0]
    ua, ub = np.array([1.0, factor, 1.0]), np.array([1.0 / factor, 1.0, 1.0])
    frame = pd.DataFrame(np.column_stack([y, a * ua, b * ub, z * np.array([factor, 1.0])]),
                         columns=["y", "a0", "a1", "a2", "b0", "b1", "b2", "z0", "z1"])
    path = _write(tmp_path, frame, "parquet")
    cols = {"a": ["a0", "a1", "a2"], "b": ["b0", "b1", "b2"]}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = jdr.JointDimReduction.from_parquet(path, y="y", **cols,
                                                 covariates=["z0", "z1"]).fit(
            2, independent_blocks=independent)
        table = res.rank_tests().table
    ref = jdr.JointDimReduction(y, a, b, covariates=z).fit(2, independent_blocks=independent)
    np.testing.assert_allclose(res.singular_values, ref.singular_values, rtol=1e-10)
    assert _angle(res.directions_a, ua, ref.directions_a) < 1e-9
    assert _angle(res.directions_b, ub, ref.directions_b) < 1e-9
    np.testing.assert_allclose(table["pvalue"], ref.rank_tests().table["pvalue"], rtol=1e-7,
                               atol=1e-12)
