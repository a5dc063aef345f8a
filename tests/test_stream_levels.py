"""Issue 21 item 5: categorical responses and covariates on Parquet and CSV streams.

A first pass reads the levels of each categorical column; the streamed model
then equals the in-memory model with the same columns (fit and default rank
test), and the command line reads a categorical response streamed."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.cli import main
from jdr_stats.fitting._model_inputs import stream_model
from jdr_stats.sources import CSVSource

A, B = ["a0", "a1", "a2"], ["b0", "b1"]


def _frame(m=600, n_classes=3, seed=0):
    """Blocks shifted by a numeric and a categorical confounder; a class response."""
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(m, 3)), rng.normal(size=(m, 2))
    age, g = rng.normal(size=m), rng.integers(0, 3, m)
    a += age[:, None]
    b += (g == 1)[:, None]
    score = a[:, 0] * b[:, 0] + 0.5 * age + rng.normal(size=m)
    cuts = np.quantile(score, np.linspace(0, 1, n_classes + 1)[1:-1])
    df = pd.DataFrame(np.c_[a, b], columns=[*A, *B])
    df["cls"] = np.array(["lo", "mid", "hi", "top", "max", "x"])[np.searchsorted(cuts, score)]
    df["age"] = age
    df["site"] = np.array(["s1", "s2", "s3"])[g]
    df["flag"] = rng.random(m) < 0.4
    return df


def _stream(df, tmp_path, fmt, y, covariates=None, batch_rows=97):
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
        path = tmp_path / "d.parquet"
        df.to_parquet(path, row_group_size=150)
        return jdr.JointDimReduction.from_parquet(path, y=y, a=A, b=B, covariates=covariates,
                                                  batch_rows=batch_rows)
    path = tmp_path / "d.csv"
    df.to_csv(path, index=False, float_format="%.17g")
    return stream_model(jdr.JointDimReduction, CSVSource, path, y, A, B, covariates,
                        weights=None, batch_rows=batch_rows, origin="the CSV file")


def _assert_same(streamed, mem, rank):
    res, want = streamed.fit(rank), mem.fit(rank)
    np.testing.assert_allclose(res.singular_values, want.singular_values, rtol=1e-12, atol=1e-13)
    for got, ref in ((res.directions_a, want.directions_a), (res.directions_b, want.directions_b)):
        assert np.max(jdr.metrics.principal_angles(got, ref)) < 1e-9
    assert list(res.directions_a.index) == list(want.directions_a.index)
    assert streamed.data.response == mem.data.response
    assert streamed.data.adjustment.names == mem.data.adjustment.names
    # the default (robust) test streams for one response column; for q > 1
    # columns the streamed default falls back to chi2 (as for a numeric
    # multivariate response): the two chi2 tests are compared then
    q = mem.data.response.q
    kw = {} if q == 1 else {"method": "chi2"}
    got, ref = res.rank_tests(**kw), want.rank_tests(**kw)
    assert got.method == ref.method == ("robust" if q == 1 else "chi2")
    np.testing.assert_allclose(got.table["statistic"], ref.table["statistic"], rtol=1e-10)
    np.testing.assert_allclose(got.table["pvalue"], ref.table["pvalue"], rtol=1e-8,
                               atol=1e-14)
    return res


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
@pytest.mark.parametrize("n_classes", [2, 3])
def test_categorical_response_streamed_equals_memory(tmp_path, fmt, n_classes):
    df = _frame(n_classes=n_classes)
    mem = jdr.JointDimReduction(df["cls"], df[A], df[B])
    res = _assert_same(_stream(df, tmp_path, fmt, "cls"), mem, 1)
    assert f"categorical, {n_classes} classes" in str(res.summary())


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_categorical_covariates_streamed_equal_memory(tmp_path, fmt):
    # 2 classes: the default (robust) rank test streams one more pass
    df = _frame(n_classes=2)
    zs = ["age", "site", "flag"]
    mem = jdr.JointDimReduction(df["cls"], df[A], df[B], covariates=df[zs])
    streamed = _stream(df, tmp_path, fmt, "cls", covariates=zs)
    res = _assert_same(streamed, mem, 1)
    assert streamed.data.adjustment.names == ("age", "site[T.s2]", "site[T.s3]",
                                              "flag[T.True]")
    assert "p_Z = 4" in str(res.summary())


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_categorical_covariates_numeric_and_three_class_response(tmp_path, fmt):
    df = _frame(n_classes=3)
    y = df["age"] * 0 + df["a0"] * df["b1"] + np.random.default_rng(3).normal(size=len(df))
    df["y"] = y
    mem = jdr.JointDimReduction(df["y"], df[A], df[B], covariates=df[["site", "age"]])
    _assert_same(_stream(df, tmp_path, fmt, "y", covariates=["site", "age"]), mem, 1)
    mem = jdr.JointDimReduction(df["cls"], df[A], df[B], covariates=df[["site"]])
    _assert_same(_stream(df, tmp_path, fmt, "cls", covariates="site"), mem, 2)


def test_pandas_categorical_and_numeric_codes_declared(tmp_path):
    pytest.importorskip("pyarrow")
    df = _frame(n_classes=3)
    df["cls"] = pd.Categorical(df["cls"])  # a dictionary column in Parquet
    df["code"] = df["cls"].cat.codes.astype(int) + 1
    path = tmp_path / "d.parquet"
    df.to_parquet(path, row_group_size=100)
    mem = jdr.JointDimReduction(df["cls"], df[A], df[B])
    _assert_same(jdr.JointDimReduction.from_parquet(path, y="cls", a=A, b=B), mem, 1)
    mem = jdr.JointDimReduction(df["code"], df[A], df[B], response="categorical")
    streamed = jdr.JointDimReduction.from_parquet(path, y="code", a=A, b=B,
                                                  response="categorical")
    _assert_same(streamed, mem, 1)
    assert streamed.data.response.names == ("code[2]", "code[3]")


def test_refusals_name_the_column(tmp_path):
    pytest.importorskip("pyarrow")
    df = _frame()
    one = df.assign(cls="only")
    one.to_parquet(tmp_path / "one.parquet")
    with pytest.raises(ValueError, match="single class"):
        jdr.JointDimReduction.from_parquet(tmp_path / "one.parquet", y="cls", a=A, b=B)
    gap = df.assign(site=df["site"].where(df.index != 7))
    gap.to_parquet(tmp_path / "gap.parquet")
    with pytest.raises(ValueError, match=r"column 'site' .* has missing values"):
        jdr.JointDimReduction.from_parquet(tmp_path / "gap.parquet", y="age", a=A, b=B,
                                           covariates="site")
    df.assign(cls=df["age"].round(1).astype(str)).to_parquet(tmp_path / "text.parquet")
    with pytest.raises(TypeError, match=r"column 'cls' .* strings that look like numbers"):
        jdr.JointDimReduction.from_parquet(tmp_path / "text.parquet", y="cls", a=A, b=B)
    with pytest.raises(TypeError, match='not numeric but response="numeric"'):
        jdr.JointDimReduction.from_parquet(tmp_path / "one.parquet", y="cls", a=A, b=B,
                                           response="numeric")


def test_a_level_the_first_pass_missed_is_refused(tmp_path):
    # The first pass reads the whole column, so this needs the file to change
    # between the passes: simulated by a source given the levels of a subset.
    pytest.importorskip("pyarrow")
    from jdr_stats.io._stream_levels import LevelSource, _Spec

    df = _frame()
    path = tmp_path / "d.parquet"
    df.to_parquet(path, row_group_size=100)
    spec = _Spec(path, "parquet", {"site": ["s1", "s2"]}, where="the Parquet file")
    src = LevelSource(spec, y="age", a=A, b=[*B, ("site", "s2")], names={}, nobs=len(df))
    with pytest.raises(ValueError, match=r"column 'site' .* holds the value 's3', not among "
                                         r"the levels \['s1', 's2'\]"):
        list(src.iter_chunks())


def test_rows_order_and_level_order_in_file_leave_the_fit_unchanged(tmp_path):
    df = _frame(n_classes=3)
    zs = ["age", "site"]
    first = _stream(df, tmp_path, "csv", "cls", covariates=zs).fit(1)
    shuffled = df.sample(frac=1.0, random_state=1).reset_index(drop=True)
    (tmp_path / "s").mkdir()
    second = _stream(shuffled, tmp_path / "s", "csv", "cls", covariates=zs).fit(1)
    np.testing.assert_allclose(second.singular_values, first.singular_values, rtol=1e-10)
    assert np.max(jdr.metrics.principal_angles(second.directions_a, first.directions_a)) < 1e-8


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_cli_streams_a_categorical_response(tmp_path, capsys, fmt):
    df = _frame(n_classes=3)
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
        path = tmp_path / "d.parquet"
        df.to_parquet(path, row_group_size=150)
    else:
        path = tmp_path / "d.csv"
        df.to_csv(path, index=False, float_format="%.17g")
    args = ["fit", str(path), "--y", "cls", "--a", ",".join(A), "--b", ",".join(B),
            "--rank", "1", "--covariates", "age,site"]
    assert main([*args, "--stream"]) == 0
    out = capsys.readouterr().out
    assert "categorical, 3 classes" in out and "age, site[T.s2], site[T.s3]" in out
    assert main(args) == 0  # the small file read into memory: the same singular values
    in_memory = capsys.readouterr().out
    # (the first line differs by design: the main-effects tests need the rows)
    def singular_values(text: str) -> str:
        return text.split("singular value")[1].split("block a")[0]

    assert singular_values(in_memory) == singular_values(out)
    assert "a: main effect not tested (rows not in memory)" in " ".join(out.split())


@pytest.mark.parametrize("n_classes", [2, 3])
def test_weighted_categorical_response_streamed(tmp_path, n_classes):
    pytest.importorskip("pyarrow")
    df = _frame(n_classes=n_classes)
    df["w"] = np.random.default_rng(5).integers(1, 4, len(df)).astype(float)
    path = tmp_path / "d.parquet"
    df.to_parquet(path, row_group_size=100)
    want = jdr.JointDimReduction(df["cls"], df[A], df[B], weights=df["w"]).fit(1)
    model = jdr.JointDimReduction.from_parquet(path, y="cls", a=A, b=B, weights="w")
    res = model.fit(1)
    np.testing.assert_allclose(res.singular_values, want.singular_values, rtol=1e-12)
    assert model.data.weighted and model.data.response == want.model.data.response
