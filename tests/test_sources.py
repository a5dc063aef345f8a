"""Row sources (array, memmap, Parquet, CSV, dask) give the in-memory fit."""

import time

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.estimation._estimate import estimate
from jdr_stats.core._linalg import principal_angles
from jdr_stats.streams._sources import ArraySource, CSVSource, DaskSource, ParquetSource, RowSource


@pytest.fixture(scope="module")
def sim():
    return jdr.simulate.bilinear(4000, 5, 4, 2, seed=2026)


@pytest.fixture(scope="module")
def reference(sim):
    # estimate(mom.to_block_moments()) below is the per-block estimator of the
    # sums; the joint one (the default) is compared through from_moments
    return (jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2, independent_blocks=True),
            jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2))


def _assert_same_fit(mom, reference):
    reference, joint = reference
    if mom.has_within:  # the default (joint) estimator from the same sums
        got = jdr.JointDimReduction.from_moments(mom).fit(2)
        for block in ("a", "b"):
            angles = principal_angles(getattr(got, f"directions_{block}"),
                                      getattr(joint, f"directions_{block}"))
            assert angles.max() < 1e-10
        s = joint.singular_values
        np.testing.assert_allclose(got.singular_values, s, rtol=0, atol=1e-10 * s.max())
    est = estimate(mom.to_block_moments(), 2)
    assert principal_angles(est.dir_a, reference.directions_a).max() < 1e-10
    assert principal_angles(est.dir_b, reference.directions_b).max() < 1e-10
    s = reference.singular_values  # errors absolute (Weyl): scaled by the largest
    np.testing.assert_allclose(est.singular_values, s, rtol=0, atol=1e-10 * s.max())


def _names(sim):
    df = sim.frame
    return [c for c in df.columns if c.startswith("a")], [c for c in df.columns if c.startswith("b")]


def test_array_source_protocol_and_memmap(sim, reference, tmp_path):
    src = ArraySource(sim.y, sim.a, sim.b, batch_rows=999)
    assert isinstance(src, RowSource)
    chunks = list(src.iter_chunks())
    assert [c[0].shape[0] for c in chunks] == [999] * 4 + [4]
    assert all(c[1].dtype == np.float64 and c[1].shape[1] == 5 for c in chunks)
    assert len(list(src.iter_chunks())) == 5  # re-iterable: a new pass
    _assert_same_fit(jdr.Moments.from_source(src), reference)
    mm = np.lib.format.open_memmap(tmp_path / "a.npy", mode="w+", shape=sim.a.shape)
    mm[:] = sim.a
    mm.flush()
    mm = np.load(tmp_path / "a.npy", mmap_mode="r")
    _assert_same_fit(jdr.Moments.from_arrays(sim.y, mm, sim.b, batch_rows=500), reference)


def test_array_source_names_from_pandas(sim):
    df = sim.frame
    na, nb = _names(sim)
    src = ArraySource(df["y"], df[na], df[nb])
    assert (src.endog_name, src.names_a, src.names_b) == ("y", na, nb)
    mom = jdr.Moments.from_source(src)
    assert mom.names_a == tuple(na)


def test_parquet_source(sim, reference, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    df = sim.frame.assign(extra="text")
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, row_group_size=700)
    na, nb = _names(sim)
    src = ParquetSource(path, y="y", a=na, b=nb, batch_rows=300)
    assert src.nobs == 4000 and isinstance(src, RowSource)
    sizes = [c[0].shape[0] for c in src.iter_chunks()]
    assert sum(sizes) == 4000 and max(sizes) <= 300
    _assert_same_fit(jdr.Moments.from_source(src), reference)
    # A folder of files is read in name order, as one source.
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, lo in enumerate(range(0, 4000, 1500)):
        part = pa.Table.from_pandas(df.iloc[lo:lo + 1500], preserve_index=False)
        pq.write_table(part, folder / f"part{i}.parquet")
    src2 = ParquetSource(folder, y="y", a=na, b=nb)
    assert src2.nobs == 4000
    _assert_same_fit(jdr.Moments.from_source(src2), reference)


def test_parquet_errors_name_the_problem(sim, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    df = sim.frame.copy()
    df.loc[2500, "b1"] = np.nan
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, row_group_size=1000)
    na, nb = _names(sim)
    with pytest.raises(ValueError, match=r"exog_b contains NaN.*'b1', row 2500"):
        jdr.Moments.from_source(ParquetSource(path, y="y", a=na, b=nb, batch_rows=256))
    with pytest.raises(ValueError, match=r"a: column\(s\) \['zz'\] not in the Parquet file"):
        ParquetSource(path, y="y", a=["zz"], b=nb)
    with pytest.raises(ValueError, match="does not exist"):
        ParquetSource(tmp_path / "nope.parquet", y="y", a=na, b=nb)
    with pytest.raises(TypeError, match="y must be the name"):
        ParquetSource(path, y=["y"], a=na, b=nb)
    with pytest.raises(ValueError, match="names a column twice"):
        ParquetSource(path, y="y", a=["a0", "a0"], b=nb)


def test_weighted_parquet_equals_weighted_arrays(sim, tmp_path):
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    w = np.random.default_rng(1).poisson(1.0, size=4000).astype(float)
    df = sim.frame.assign(w=w)
    path = tmp_path / "w.parquet"
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path)
    na, nb = _names(sim)
    mom = jdr.Moments.from_source(ParquetSource(path, y="y", a=na, b=nb, weights="w", batch_rows=333))
    ref = jdr.Moments.from_arrays(sim.y, sim.a, sim.b, w)
    assert mom.weight == pytest.approx(w.sum())
    np.testing.assert_allclose(mom.m3_ayb, ref.m3_ayb, rtol=1e-10, atol=1e-12)


def test_csv_source(sim, reference, tmp_path):
    path = tmp_path / "d.csv"
    sim.frame.to_csv(path, index=False, float_format="%.17g")
    na, nb = _names(sim)
    src = CSVSource(path, y="y", a=na, b=nb, batch_rows=512)
    assert src.nobs == 4000
    assert [c[0].shape[0] for c in src.iter_chunks()][-1] == 4000 - 7 * 512
    _assert_same_fit(jdr.Moments.from_source(src), reference)
    with pytest.raises(ValueError, match=r"b: column\(s\) \['q'\] not in the CSV file"):
        CSVSource(path, y="y", a=na, b=["q"])


def test_dask_array_source_synchronous(sim, reference):
    da = pytest.importorskip("dask.array")
    import dask

    y = da.from_array(sim.y, chunks=700)
    a = da.from_array(sim.a, chunks=(900, 2))  # misaligned: rechunked to y's blocks
    b = da.from_array(sim.b, chunks=(700, 4))
    src = DaskSource(y, a, b)
    assert src.kind == "array" and src.nobs == 4000
    with dask.config.set(scheduler="synchronous"):
        mom = jdr.Moments.from_source(src)
        assert mom.nobs == 4000
        _assert_same_fit(mom, reference)
        streamed = jdr.Moments.from_chunks(src.iter_chunks())
        np.testing.assert_allclose(streamed.m3_ayb, mom.m3_ayb, rtol=1e-12, atol=1e-14)
    with pytest.raises(TypeError, match="exog_a must be a dask array"):
        DaskSource(y, sim.a, b)


def test_dask_dataframe_source_synchronous(sim, reference):
    dd = pytest.importorskip("dask.dataframe")
    import dask

    ddf = dd.from_pandas(sim.frame, npartitions=6)
    na, nb = _names(sim)
    src = DaskSource(ddf["y"], ddf[na], ddf[nb])
    assert src.kind == "frame" and src.names_a == na and src.endog_name == "y"
    with dask.config.set(scheduler="synchronous"):
        assert src.nobs == 4000
        _assert_same_fit(jdr.Moments.from_source(src), reference)
        bad = sim.frame.copy()
        bad.loc[3000, "a2"] = np.inf
        bddf = dd.from_pandas(bad, npartitions=6)
        with pytest.raises(ValueError, match=r"dask block \d: exog_a contains infinite.*'a2'"):
            jdr.Moments.from_source(DaskSource(bddf["y"], bddf[na], bddf[nb]))


@pytest.mark.slow
def test_dask_local_cluster_two_processes(sim, reference):
    """One fit on a real 2-process LocalCluster (about 10 s on 2 busy cores,
    so slow: CI runs it with the slow studies)."""
    da = pytest.importorskip("dask.array")
    distributed = pytest.importorskip("distributed")
    t0 = time.perf_counter()
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster):
        y = da.from_array(sim.y, chunks=500)
        a = da.from_array(sim.a, chunks=(500, 5))
        b = da.from_array(sim.b, chunks=(500, 4))
        mom = jdr.Moments.from_source(DaskSource(y, a, b))
    _assert_same_fit(mom, reference)
    assert time.perf_counter() - t0 < 60


def test_dask_read_parquet_columns_projected_separately(sim, reference, tmp_path):
    """ddf["y"] and ddf[a] of read_parquet may be partitioned differently when
    optimised apart (dask-expr packs narrow files together); the source keeps
    the rows aligned."""
    dd = pytest.importorskip("dask.dataframe")
    pytest.importorskip("pyarrow")
    import dask

    for i, lo in enumerate(range(0, 4000, 500)):
        sim.frame.iloc[lo:lo + 500].to_parquet(tmp_path / f"p{i}.parquet")
    ddf = dd.read_parquet(tmp_path)
    na, nb = _names(sim)
    with dask.config.set(scheduler="synchronous"):
        src = DaskSource(ddf["y"], ddf[na], ddf[nb])
        _assert_same_fit(jdr.Moments.from_source(src), reference)
        assert sum(c[0].shape[0] for c in src.iter_chunks()) == 4000 == src.nobs


def test_dask_arrays_with_unknown_chunk_sizes(sim, reference):
    dd = pytest.importorskip("dask.dataframe")
    import dask

    ddf = dd.from_pandas(sim.frame, npartitions=4)
    na, nb = _names(sim)
    y, a, b = ddf["y"].to_dask_array(), ddf[na].to_dask_array(), ddf[nb].to_dask_array()
    assert np.isnan(y.shape[0])
    with dask.config.set(scheduler="synchronous"):
        src = DaskSource(y, a, b)
        assert src.nobs == 4000
        _assert_same_fit(jdr.Moments.from_source(src), reference)
        other = dd.from_pandas(sim.frame, npartitions=3)[na].to_dask_array()
        with pytest.raises(ValueError, match="unknown chunk sizes must share"):
            DaskSource(y, other, b)


def test_poisson_replicate_is_one_streamed_pass(sim, tmp_path):
    """The pattern of the guide: weighted chunks give the weighted moments."""
    pytest.importorskip("pyarrow")
    path = tmp_path / "d.parquet"
    sim.frame.to_parquet(path, row_group_size=1000)
    na, nb = _names(sim)
    src = ParquetSource(path, y="y", a=na, b=nb, batch_rows=700)
    rng = np.random.default_rng(1)
    drawn = []

    def weighted_chunks():
        for y, a, b in src.iter_chunks():
            drawn.append(rng.poisson(1.0, len(y)))
            yield y, a, b, drawn[-1]

    rep = jdr.Moments.from_chunks(weighted_chunks())
    counts = np.concatenate(drawn)
    assert len(drawn) > 4 and counts.shape == (4000,)
    ref = jdr.Moments.from_arrays(sim.y, sim.a, sim.b, counts)
    assert rep.weighted and rep.weight == counts.sum()
    np.testing.assert_allclose(rep.m3_ayb, ref.m3_ayb, rtol=1e-10, atol=1e-12)


class _CountingSource(ArraySource):
    """An array source that counts its passes."""

    passes = 0

    def iter_chunks(self, batch_rows=None):
        self.passes += 1
        return super().iter_chunks(batch_rows)

    def iter_weighted_chunks(self, batch_rows=None):
        self.passes += 1
        return super().iter_weighted_chunks(batch_rows)


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("whitening", ["sample", "shrinkage"])
def test_streamed_default_fit_is_one_pass(sim, weighted, whitening):
    """The default (joint) fit of a streamed model reads the rows once (the
    model's pass: the stacked design's sums of every chunk, merged), and
    equals the fit of the rows in memory."""
    w = np.random.default_rng(3).integers(1, 4, size=4000).astype(float) if weighted else None
    src = _CountingSource(sim.y, sim.a, sim.b, weights=w, batch_rows=777)
    model = jdr.JointDimReduction.from_source(src)
    got = model.fit(2, whitening=whitening)
    per_block = model.fit(2, independent_blocks=True)
    assert src.passes == 1
    mem = jdr.JointDimReduction(sim.y, sim.a, sim.b, weights=w)
    for res, ref in ((got, mem.fit(2, whitening=whitening)),
                     (per_block, mem.fit(2, independent_blocks=True))):
        s = ref.singular_values
        np.testing.assert_allclose(res.singular_values, s, rtol=0, atol=1e-12 * s.max())
        for block in ("a", "b"):
            angles = principal_angles(getattr(res, f"directions_{block}"),
                                      getattr(ref, f"directions_{block}"))
            assert angles.max() < 1e-10
    # the procedures that read the rows again still do (one more pass each)
    if not weighted:  # (the rank tests take unweighted rows)
        table = got.rank_tests(max_rank=1)
        assert src.passes > 1 and table.pvalues.shape == (2,)


def test_read_ahead_keeps_order_errors_and_stops():
    import threading

    from jdr_stats.streams._sources import read_ahead

    assert list(read_ahead(iter(range(50)), depth=3)) == list(range(50))
    assert list(read_ahead(iter(range(5)), depth=0)) == list(range(5))

    def failing():
        yield 1
        yield 2
        raise ValueError("bad chunk near row 7")

    got = []
    with pytest.raises(ValueError, match="bad chunk near row 7"):
        for item in read_ahead(failing(), depth=2):
            got.append(item)
    assert got == [1, 2]
    closed = []

    def endless():
        try:
            i = 0
            while True:
                yield i
                i += 1
        finally:
            closed.append(True)

    it = read_ahead(endless(), depth=2)
    assert [next(it) for _ in range(3)] == [0, 1, 2]
    it.close()  # the caller stops early: the reader stops and closes its source
    assert closed == [True]
    assert not any(t.name == "jdr_stats-read-ahead" for t in threading.enumerate())


def test_parquet_pass_with_and_without_read_ahead(sim, tmp_path, monkeypatch):
    pytest.importorskip("pyarrow")
    path = tmp_path / "d.parquet"
    sim.frame.to_parquet(path, row_group_size=900)
    na, nb = _names(sim)
    src = ParquetSource(path, y="y", a=na, b=nb, batch_rows=500)
    monkeypatch.setattr(jdr.config, "READ_AHEAD_CHUNKS", 2)
    ahead = [c for c in src.iter_chunks()]
    monkeypatch.setattr(jdr.config, "READ_AHEAD_CHUNKS", 0)
    serial = [c for c in src.iter_chunks()]
    assert len(ahead) == len(serial) == 8
    for x, z in zip(ahead, serial, strict=True):
        for u, v in zip(x, z, strict=True):
            np.testing.assert_array_equal(u, v)
