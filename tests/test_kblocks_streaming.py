"""Three or more blocks streamed (Parquet, CSV chunks, dask): the fit equals
the fit of the same rows in memory."""

import functools
import operator

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats import policy
from jdr_stats.core._linalg import principal_angles
from jdr_stats.exceptions import RowsNotInMemoryError

NAMES = ("genes", "lipids", "clinical")
RANKS = {"genes": 2, "lipids": 2, "clinical": 1}


def _frame(m=700, widths=(4, 3, 3), seed=0):
    """Correlated blocks with a large offset, a mixed link and integer weights."""
    rng = np.random.default_rng(seed)
    xs = [rng.normal(size=(m, n)) for n in widths]
    xs[1][:, 0] += 0.6 * xs[0][:, 0]
    xs[2][:, 2] += 0.4 * xs[1][:, 1]
    y = (xs[0][:, 0] * xs[1][:, 0] + xs[1][:, 0] * xs[2][:, 1]
         + xs[0][:, 1] * xs[1][:, 1] * xs[2][:, 0] + 0.5 * rng.normal(size=m) + 5.0)
    cols = {n: [f"{n}{j}" for j in range(x.shape[1])] for n, x in zip(NAMES, xs)}
    df = pd.DataFrame(np.hstack(xs) * 3.0 + 100.0, columns=functools.reduce(operator.iadd, cols.values(), []))
    df["y"] = y
    df["w"] = rng.integers(1, 4, size=m).astype(float)
    return df, cols


def _same_fit(mem, st):
    for n in NAMES:
        np.testing.assert_allclose(st.eigenvalues[n].to_numpy(), mem.eigenvalues[n].to_numpy(),
                                   rtol=1e-10, atol=0)
        assert np.max(principal_angles(mem.directions[n].to_numpy(),
                                       st.directions[n].to_numpy())) < 1e-8
    assert st.rank == mem.rank


def _memory(df, cols, weights, independent):
    return jdr.JointDimReduction.from_blocks(
        df.y, {n: df[c] for n, c in cols.items()},
        weights=None if weights is None else df[weights]).fit(
        RANKS, independent_blocks=independent)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    df, cols = _frame()
    d = tmp_path_factory.mktemp("kstream")
    df.to_parquet(d / "x.parquet", row_group_size=150)
    df.to_csv(d / "x.csv", index=False)
    return df, cols, d


@pytest.mark.parametrize("independent", [True, False])
@pytest.mark.parametrize("weights", [None, "w"])
def test_parquet_equals_memory(files, independent, weights):
    df, cols, d = files
    model = jdr.JointDimReduction.from_parquet(d / "x.parquet", y="y", blocks=cols,
                                               weights=weights, batch_rows=97)
    assert model.block_names == NAMES and model.nobs == len(df)
    st = model.fit(RANKS, independent_blocks=independent)
    _same_fit(_memory(df, cols, weights, independent), st)
    assert st.settings["estimator"] == ("per-block" if independent else "joint")
    assert "streamed from the Parquet source" in str(st.summary())


@pytest.mark.parametrize("independent", [True, False])
@pytest.mark.parametrize("weights", [None, "w"])
def test_csv_chunks_equal_memory(files, independent, weights):
    df, cols, d = files
    st = jdr.JointDimReduction.from_csv(d / "x.csv", y="y", blocks=cols, weights=weights,
                                        batch_rows=64).fit(RANKS, independent_blocks=independent)
    _same_fit(_memory(df, cols, weights, independent), st)


@pytest.mark.parametrize("independent", [True, False])
def test_dask_arrays_and_frames_equal_memory(files, independent):
    da = pytest.importorskip("dask.array")
    dd = pytest.importorskip("dask.dataframe")
    df, cols, _ = files
    mem = _memory(df, cols, None, independent)
    y = da.from_array(df.y.to_numpy(), chunks=160)
    blocks = {n: da.from_array(df[c].to_numpy(), chunks=(230, -1)) for n, c in cols.items()}
    st = jdr.JointDimReduction.from_blocks(y, blocks).fit(RANKS, independent_blocks=independent)
    _same_fit(mem, st)
    assert st.directions["genes"].index.tolist() == [f"genes{j}" for j in range(4)]
    ddf = dd.from_pandas(df, npartitions=3)
    st2 = jdr.JointDimReduction.from_blocks(ddf["y"], {n: ddf[c] for n, c in cols.items()}).fit(
        RANKS, independent_blocks=independent)
    _same_fit(mem, st2)
    assert st2.directions["lipids"].index.tolist() == cols["lipids"]
    assert st2.model.endog_name == "y"


def test_streamed_transform_of_new_rows_and_refusals(files):
    df, cols, d = files
    st = jdr.JointDimReduction.from_parquet(d / "x.parquet", y="y", blocks=cols).fit(
        RANKS, independent_blocks=True)
    mem = _memory(df, cols, None, True)
    new = {n: df[c].iloc[:50] for n, c in cols.items()}
    a, b = st.transform(new).to_numpy(), mem.transform(new).to_numpy()
    # directions equal up to sign: compare the absolute values of the features
    np.testing.assert_allclose(np.abs(a), np.abs(b), rtol=1e-8, atol=1e-8 * np.abs(b).max())
    # the per-block estimator's rank tests stream (tests/test_kblock_stream_rank.py)
    assert set(st.rank_tests().tables) == set(NAMES)
    for call, what in ((st.transform, "transform"),
                       (lambda: st.bootstrap(5, seed=0), "bootstrap")):
        with pytest.raises(RowsNotInMemoryError, match=what):
            call()
    model = st.model
    # rank="auto" streams for the per-block estimator (tests/test_kblock_stream_rank.py);
    # the joint estimator's influences are delete-one refits, which need the rows
    with pytest.raises(RowsNotInMemoryError, match=r'rank="auto".*independent_blocks'):
        model.fit("auto", independent_blocks=False)
    with pytest.raises(RowsNotInMemoryError, match="sparsity"):
        model.fit(1, sparsity={"genes": 2, "lipids": 2, "clinical": 2},
                  independent_blocks=True)
    d2 = st.to_dict()
    assert d2["settings"]["streamed"].startswith("the Parquet source")


@pytest.mark.parametrize("independent", [True, False])
@pytest.mark.parametrize("weights", [None, "w"])
def test_streamed_sketch_equals_the_sketch_in_memory(files, monkeypatch, independent, weights):
    """Beyond the tensor budget the K-way piece is sketched, streamed as in
    memory: the same seeded test vectors, sums over the chunks (the Hermite
    terms of the joint whitening included)."""
    _df, cols, d = files
    real = policy.kblock_route

    def sketched(nobs, widths, q=1):
        c = real(nobs, widths, q)
        return policy.Choice("sketch", "forced", {**c.inputs, "vectors": 7.0, "seed": 3.0})

    monkeypatch.setattr(policy, "kblock_route", sketched)
    st = jdr.JointDimReduction.from_parquet(d / "x.parquet", y="y", blocks=cols,
                                            weights=weights, batch_rows=97).fit(
        RANKS, independent_blocks=independent)
    mem = _memory(_df, cols, weights, independent)
    assert st.settings["route"]["name"] == mem.settings["route"]["name"] == "sketch"
    _same_fit(mem, st)


def test_streamed_arguments_are_checked(files, tmp_path):
    df, cols, d = files
    with pytest.raises(ValueError, match="either a= and b= or blocks="):
        jdr.JointDimReduction.from_parquet(d / "x.parquet", y="y", a=["genes0"],
                                           blocks=cols)
    with pytest.raises(ValueError, match="covariates"):
        jdr.JointDimReduction.from_parquet(d / "x.parquet", y="y", blocks=cols,
                                           covariates="w")
    with pytest.raises(ValueError, match="one numeric response"):
        jdr.JointDimReduction.from_parquet(d / "x.parquet", y=["y", "w"], blocks=cols)
    with pytest.raises(ValueError, match="not in the Parquet file"):
        jdr.JointDimReduction.from_parquet(d / "x.parquet", y="y",
                                           blocks={**cols, "extra": ["nope"]})
    bad = df.copy()
    bad.loc[300, "lipids1"] = np.nan
    bad.to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match="chunk 3: NaN"):
        jdr.JointDimReduction.from_csv(tmp_path / "bad.csv", y="y", blocks=cols,
                                       batch_rows=100)
    const = df.copy()
    const["clinical2"] = 1.0
    const.to_parquet(tmp_path / "c.parquet")
    with pytest.raises(ValueError, match=r"constant column.*clinical2"):
        jdr.JointDimReduction.from_parquet(tmp_path / "c.parquet", y="y", blocks=cols)
    model = jdr.JointDimReduction.from_parquet(d / "x.parquet", y="y", blocks=cols)
    with pytest.raises(ValueError, match="rank of block 'clinical'"):
        model.fit({"genes": 1, "lipids": 1, "clinical": 4}, independent_blocks=True)


def test_two_named_blocks_stream_as_the_two_block_model(files):
    _df, cols, d = files
    two = {"genes": cols["genes"], "lipids": cols["lipids"]}
    st = jdr.JointDimReduction.from_parquet(d / "x.parquet", y="y", blocks=two).fit(
        1, independent_blocks=True)
    ref = jdr.JointDimReduction.from_parquet(d / "x.parquet", y="y", a=two["genes"],
                                             b=two["lipids"]).fit(1, independent_blocks=True)
    np.testing.assert_array_equal(st.singular_values, ref.singular_values)
    assert list(st.directions) == ["genes", "lipids"]
    csv = jdr.JointDimReduction.from_csv(d / "x.csv", y="y", blocks=two).fit(
        1, independent_blocks=True)
    np.testing.assert_allclose(csv.singular_values, ref.singular_values, rtol=1e-10)


def test_renamed_streamed_model(files):
    _df, cols, d = files
    model = jdr.JointDimReduction.from_parquet(d / "x.parquet", y="y", blocks=cols)
    res = model.with_block_names(["g", "l", "c"]).fit(1, independent_blocks=True)
    assert list(res.directions) == ["g", "l", "c"]
    assert model.block_names == NAMES
