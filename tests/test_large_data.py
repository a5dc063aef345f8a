"""Models that hold sums only: from_moments, from_parquet and dask input."""

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.core._linalg import principal_angles
from jdr_stats.exceptions import RowsNotInMemoryError

NA = [f"a{j}" for j in range(5)]
NB = [f"b{j}" for j in range(4)]


@pytest.fixture(scope="module")
def sim():
    return jdr.simulate.bilinear(3000, 5, 4, 2, seed=77)


@pytest.fixture(scope="module")
def ref(sim):
    return jdr.JointDimReduction(sim.frame["y"], sim.frame[NA], sim.frame[NB])


def _same(res, full):
    assert principal_angles(res.directions_a, full.directions_a).max() < 1e-10
    assert principal_angles(res.directions_b, full.directions_b).max() < 1e-10
    # singular values move by at most the perturbation's norm (Weyl): an
    # absolute tolerance scaled by the largest one
    s = full.singular_values
    np.testing.assert_allclose(res.singular_values, s, rtol=0, atol=1e-10 * s.max())


def _chunked_moments(sim, step=700):
    df = sim.frame
    return sum(
        jdr.Moments.from_arrays(df["y"][i:i + step], df[NA][i:i + step], df[NB][i:i + step])
        for i in range(0, len(df), step)
    )


def test_from_moments_dense_sparse_summary_and_chi2(sim, ref):
    model = jdr.JointDimReduction.from_moments(_chunked_moments(sim))
    assert model.nobs == 3000 and model.exog_names_a == NA and model.endog_name == "y"
    _same(model.fit(2), ref.fit(2))
    sparse, sparse_ref = model.fit(2, sparsity=(3, 3)), ref.fit(2, sparsity=(3, 3))
    assert sparse.support_a == sparse_ref.support_a and sparse.support_b == sparse_ref.support_b
    _same(sparse, sparse_ref)
    res = model.fit(2)
    rt, rt_ref = res.rank_tests("chi2"), ref.fit(2).rank_tests("chi2")
    pd.testing.assert_frame_equal(rt.table, rt_ref.table, rtol=1e-8)
    # the default (robust) rank test needs a row source; chi2 runs on the sums
    auto = model.fit("auto", rank_method="chi2")
    assert auto.rank == ref.fit("auto", rank_method="chi2").rank
    text = str(res.summary(rank_tests=rt))
    assert "No. observations:   3000" in text and "Rank tests (chi2)" in text
    # transform of new data works from the moments
    new_a, new_b = sim.frame[NA].iloc[:10], sim.frame[NB].iloc[:10]
    pd.testing.assert_frame_equal(res.transform(new_a, new_b), ref.fit(2).transform(new_a, new_b),
                                  rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize(
    "call, what",
    [
        (lambda m, r: r.bootstrap(9, seed=0), "the bootstrap"),
        (lambda m, r: r.rank_tests("permutation", n_perm=9), "the permutation rank test"),
        (lambda m, r: m.select_support(), "select_support"),
        (lambda m, r: m.fit(2, sparsity="auto"), 'sparsity="auto"'),
        (lambda m, r: m.fit("auto", rank_method="permutation"), "the permutation rank test"),
        (lambda m, r: r.transform(), "transform() of the training data"),
        (lambda m, r: m.exog_a, "the data of exog_a"),
        (lambda m, r: m.endog, "the data of endog"),
        (lambda m, r: m.moments(np.ones(3000)), "reweighting the rows"),
    ],
)
def test_procedures_needing_rows_are_refused_clearly(sim, call, what):
    model = jdr.JointDimReduction.from_moments(_chunked_moments(sim))
    res = model.fit(2)
    with pytest.raises(RowsNotInMemoryError, match="needs the rows of the data in memory") as err:
        call(model, res)
    assert str(err.value).startswith(what)
    assert isinstance(err.value, ValueError)


@pytest.mark.parametrize(
    "call, what",
    [
        (lambda m, r: r.rank_tests("general"), "the general rank test"),
        (lambda m, r: r.rank_tests("wald"), "the wald rank test"),
        (lambda m, r: m.fit("auto"), "the robust rank test"),
        (lambda m, r: m.fit("auto", rank_method="ladle"), "the ladle"),
        (lambda m, r: r.rank_tests(), "the robust rank test"),
    ],
)
def test_streamed_procedures_need_a_row_source(sim, call, what):
    # bare Moments: no source to read again for the sums beyond the moments
    model = jdr.JointDimReduction.from_moments(_chunked_moments(sim))
    res = model.fit(2)
    with pytest.raises(RowsNotInMemoryError, match="sums over the rows beyond the moments") as err:
        call(model, res)
    assert str(err.value).startswith(what)
    assert "without a row source" in str(err.value) and "chi2" in str(err.value)


def _same_tables(streamed, memory):
    """Rank-test tables equal to 1e-10 (relative; p-values absolute)."""
    assert list(streamed.columns) == list(memory.columns)
    for col in streamed.columns:
        x, y = streamed[col].to_numpy(), memory[col].to_numpy()
        if col == "pvalue":
            np.testing.assert_allclose(x, y, rtol=0, atol=1e-10)
        else:
            np.testing.assert_allclose(x, y, rtol=1e-10, atol=0, equal_nan=True)


@pytest.fixture(scope="module")
def heavy():
    # heavy-tailed noise, so that the robust and general references differ from chi2
    sim = jdr.simulate.bilinear(2000, 5, 4, 2, seed=5)
    y = sim.y + np.random.default_rng(1).standard_t(4, 2000)
    frame = sim.frame.assign(y=y)
    return frame, jdr.JointDimReduction(frame["y"], frame[NA], frame[NB])


@pytest.mark.parametrize("method", ["robust", "wald", "general"])
def test_rank_tests_stream_from_an_array_source(heavy, method):
    from jdr_stats.streams._sources import ArraySource

    frame, mem = heavy
    src = ArraySource(frame["y"].to_numpy(), frame[NA].to_numpy(), frame[NB].to_numpy(),
                      names_a=NA, names_b=NB)
    model = jdr.JointDimReduction.from_source(src, origin="an array source")
    streamed, memory = model.fit(2).rank_tests(method), mem.fit(2).rank_tests(method)
    _same_tables(streamed.table, memory.table)
    assert streamed.method == method and streamed.nobs == 2000
    assert streamed.select_rank() == memory.select_rank() == 2


def test_rank_selection_streams_from_parquet(heavy, tmp_path):
    pytest.importorskip("pyarrow")
    frame, mem = heavy
    path = tmp_path / "heavy.parquet"
    frame.to_parquet(path, row_group_size=300)
    model = jdr.JointDimReduction.from_parquet(path, y="y", a=NA, b=NB, batch_rows=128)
    auto, auto_mem = model.fit("auto"), mem.fit("auto")  # the default: robust tests
    assert auto.rank_method == "robust" and auto.rank == auto_mem.rank == 2
    _same_tables(auto.rank_test_table.table, auto_mem.rank_test_table.table)
    _same(auto, auto_mem)
    # the ladle streams too: the Poisson weights are drawn row by row
    lad, lad_mem = model.fit("auto", rank_method="ladle", seed=4), mem.fit(
        "auto", rank_method="ladle", seed=4)
    assert lad.rank == lad_mem.rank == 2
    np.testing.assert_allclose(lad.rank_test_table.table.to_numpy(),
                               lad_mem.rank_test_table.table.to_numpy(), rtol=1e-10, atol=1e-12)
    # the permutation test needs the rows
    err = pytest.raises(RowsNotInMemoryError, auto.rank_tests, "permutation", n_perm=9)
    assert "Parquet source" in str(err.value)


def test_rank_tests_stream_from_dask(heavy):
    da = pytest.importorskip("dask.array")
    import dask

    frame, mem = heavy
    y = da.from_array(frame["y"].to_numpy(), chunks=450)
    a = da.from_array(frame[NA].to_numpy(), chunks=(450, 5))
    b = da.from_array(frame[NB].to_numpy(), chunks=(700, 4))
    with dask.config.set(scheduler="synchronous"):
        res = jdr.JointDimReduction(y, a, b).fit(2)
        for method in ("robust", "wald"):
            _same_tables(res.rank_tests(method).table, mem.fit(2).rank_tests(method).table)


def test_general_test_with_large_complement_refuses_on_a_source():
    from jdr_stats.streams._sources import ArraySource

    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((150, 50)), rng.standard_normal((150, 45))
    y = a[:, 0] * b[:, 0] + rng.standard_normal(150)
    model = jdr.JointDimReduction.from_source(ArraySource(y, a, b), origin="an array source")
    with pytest.raises(RowsNotInMemoryError, match=r"\(n1-k\)\(n2-k\) = 2250 complement"):
        model.fit(1).rank_tests("general", max_rank=0)


def test_from_moments_validates_like_the_rows(sim):
    df = sim.frame
    with pytest.raises(TypeError, match="jdr_stats.Moments"):
        jdr.JointDimReduction.from_moments({"nobs": 3})
    const = df[NA].assign(a3=0.1)
    with pytest.raises(ValueError, match=r"exog_a has constant column\(s\) \['a3'\]"):
        jdr.JointDimReduction.from_moments(jdr.Moments.from_arrays(df["y"], const, df[NB]))
    with pytest.raises(ValueError, match="endog has a single value"):
        jdr.JointDimReduction.from_moments(
            jdr.Moments.from_arrays(np.full(3000, 2.5), df[NA], df[NB], batch_rows=100))
    with pytest.raises(ValueError, match="too few rows"):
        jdr.JointDimReduction.from_moments(
            jdr.Moments.from_arrays(df["y"][:2], df[NA][:2], df[NB][:2]))
    w = np.random.default_rng(0).integers(1, 3, size=3000)
    weighted = jdr.JointDimReduction.from_moments(jdr.Moments.from_arrays(df["y"], df[NA], df[NB], w))
    res = weighted.fit(2)
    _same(res, jdr.JointDimReduction(df["y"], df[NA], df[NB], weights=w).fit(2))
    assert "case weights" in str(res.summary())
    with pytest.raises(ValueError, match="unweighted model"):
        res.rank_tests("chi2")


def test_from_parquet_matches_memory_and_validates(sim, ref, tmp_path):
    pytest.importorskip("pyarrow")
    path = tmp_path / "d.parquet"
    sim.frame.to_parquet(path, row_group_size=500)
    model = jdr.JointDimReduction.from_parquet(path, y="y", a=NA, b=NB, batch_rows=256)
    _same(model.fit(2), ref.fit(2))
    assert isinstance(model.data.source, jdr.streams._sources.ParquetSource)
    assert "Parquet source" in str(pytest.raises(RowsNotInMemoryError, model.fit(2).bootstrap).value)
    bad = sim.frame.copy()
    bad.loc[1234, "a4"] = np.nan
    bad.to_parquet(tmp_path / "nan.parquet")
    with pytest.raises(ValueError, match=r"exog_a contains NaN.*'a4', row 1234"):
        jdr.JointDimReduction.from_parquet(tmp_path / "nan.parquet", y="y", a=NA, b=NB,
                                           batch_rows=1000)
    sim.frame.assign(b2=3.0).to_parquet(tmp_path / "const.parquet")
    with pytest.raises(ValueError, match=r"exog_b has constant column\(s\) \['b2'\]"):
        jdr.JointDimReduction.from_parquet(tmp_path / "const.parquet", y="y", a=NA, b=NB)


def test_dask_arrays_fit_and_lazy_transform(sim, ref):
    da = pytest.importorskip("dask.array")
    import dask

    y = da.from_array(sim.y, chunks=600)
    a = da.from_array(sim.a, chunks=(600, 5))
    b = da.from_array(sim.b, chunks=(1000, 4))
    with dask.config.set(scheduler="synchronous"):
        model = jdr.JointDimReduction(y, a, b)
        res = model.fit(2)
        _same(res, ref.fit(2))
        feats = res.transform()
        assert isinstance(feats, da.Array) and feats.shape == (3000, 4)
        want = ref.fit(2).transform().to_numpy()
        np.testing.assert_allclose(feats.compute(), want, rtol=1e-9,
                                   atol=1e-9 * np.abs(want).max())
        new = res.transform(a[:50], b[:50])
        assert isinstance(new, da.Array)
        np.testing.assert_allclose(new.compute(), feats[:50].compute(), atol=1e-12)
    with pytest.raises(TypeError, match="all as dask collections or all in memory"):
        jdr.JointDimReduction(y, sim.a, sim.b)
    with pytest.raises(ValueError, match="weights are not supported with dask"):
        jdr.JointDimReduction(y, a, b, weights=np.ones(3000))
    with pytest.raises(ValueError, match='missing="drop" is not supported'):
        jdr.JointDimReduction(y, a, b, missing="drop")
    with pytest.raises(TypeError, match="exog_b must be a dask collection"):
        res.transform(a[:5], sim.b[:5])


def test_dask_dataframe_columns(sim, ref):
    dd = pytest.importorskip("dask.dataframe")
    import dask

    ddf = dd.from_pandas(sim.frame, npartitions=5)
    with dask.config.set(scheduler="synchronous"):
        res = jdr.JointDimReduction(ddf["y"], ddf[NA], ddf[NB]).fit(2)
        _same(res, ref.fit(2))
        assert list(res.directions_a.index) == NA
        feats = res.transform()
        assert isinstance(feats, dd.DataFrame)
        pd.testing.assert_frame_equal(feats.compute(), ref.fit(2).transform(), rtol=1e-9,
                                      atol=1e-12)
        bad = dd.from_pandas(sim.frame.assign(a1=np.where(np.arange(3000) == 2999, np.nan, 1.0)),
                             npartitions=5)
        with pytest.raises(ValueError, match=r"exog_a contains NaN.*'a1'"):
            jdr.JointDimReduction(bad["y"], bad[NA], bad[NB])
