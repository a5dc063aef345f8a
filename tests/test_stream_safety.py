"""Faults of streamed files: changed between passes, corrupt, misaligned, drifted.

Each case was accepted (or raised a raw pyarrow error) before the files'
fingerprints, the strict CSV reader and the Parquet schema checks.
"""

import os
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.streams import _csv_stream
from jdr_stats.streams._integrity import PassGuard
from jdr_stats.cli import main
from jdr_stats.exceptions import SourceChangedError

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

A = ["a0", "a1", "a2"]
B = ["b0", "b1"]
BLOCKS = {"a": A, "b": B}
CLI = ["--y", "y", "--a", ",".join(A), "--b", ",".join(B), "--rank", "1"]


def _frame(m=3000, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((m, 3))
    b = rng.standard_normal((m, 2))
    y = a[:, 0] * b[:, 0] + a[:, 1] + 0.5 * rng.standard_normal(m)
    cols = {"y": y, **{n: a[:, j] for j, n in enumerate(A)},
            **{n: b[:, j] for j, n in enumerate(B)}}
    return pd.DataFrame(cols)


def _classes(df):
    out = df.copy()
    out["y"] = np.where(df["y"] > 0, "hi", "lo")
    return out


def _parquet(df, path, **kw):
    kw.setdefault("row_group_size", 1000)
    pq.write_table(pa.Table.from_pandas(df, preserve_index=False), path, **kw)
    return path


def _same_mtime(path, st):
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))


def _one_error_line(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert code != 0
    assert len(err) == 1 and err[0].startswith("jdr_stats: error:"), err
    return err[0]


# -- a file changed between two passes --------------------------------------------
def test_parquet_replaced_between_fit_and_rank_tests(tmp_path):
    path = _parquet(_frame(), tmp_path / "d.parquet")
    res = jdr.JointDimReduction.from_parquet(path, y="y", a=A, b=B).fit(rank=1)
    st = os.stat(path)
    noise = _frame()
    noise["y"] = np.random.default_rng(9).standard_normal(len(noise))
    _parquet(noise, path)
    _same_mtime(path, st)  # even with the old modification time
    assert os.stat(path).st_size == st.st_size  # and the same size: the footer differs
    with pytest.raises(SourceChangedError, match="d.parquet.*changed since it was first read"):
        res.rank_tests()


@pytest.mark.parametrize("kind", ["parquet", "csv"])
def test_half_the_rows_removed_between_passes(tmp_path, kind):
    df = _frame()
    if kind == "parquet":
        path = _parquet(df, tmp_path / "d.parquet")
        model = jdr.JointDimReduction.from_parquet(path, y="y", a=A, b=B)
    else:
        path = tmp_path / "d.csv"
        df.to_csv(path, index=False)
        model = jdr.JointDimReduction.from_csv(path, y="y", blocks=BLOCKS, batch_rows=500)
    res = model.fit(rank=1)
    st = os.stat(path)
    if kind == "parquet":
        _parquet(df.iloc[: len(df) // 2], path)
    else:
        df.iloc[: len(df) // 2].to_csv(path, index=False)
    _same_mtime(path, st)
    with pytest.raises(SourceChangedError, match="size went from"):
        res.rank_tests()
    with pytest.raises(SourceChangedError):
        res.bootstrap(20, method="poisson", seed=0)


def test_csv_rewritten_between_passes(tmp_path):
    path = tmp_path / "d.csv"
    _frame().to_csv(path, index=False)
    res = jdr.JointDimReduction.from_csv(path, y="y", blocks=BLOCKS, batch_rows=700).fit(rank=1)
    st = os.stat(path)
    noise = _frame()
    noise["y"] = np.random.default_rng(4).standard_normal(len(noise))
    noise.to_csv(path, index=False)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    with pytest.raises(SourceChangedError, match="d.csv"):
        res.rank_tests()


def test_a_pass_of_other_row_count_is_refused(tmp_path):
    path = tmp_path / "d.csv"
    _frame(50).to_csv(path, index=False)
    guard = PassGuard([path], "csv")
    guard.finish(50)
    guard.finish(50)
    with pytest.raises(SourceChangedError, match="read 49 rows but the first read 50"):
        guard.finish(49)


# -- corrupt pages ------------------------------------------------------------------
def _corrupt(tmp_path, frame=None):
    frame = _frame() if frame is None else frame
    path = _parquet(frame, tmp_path / "c.parquet", compression="none",
                    use_dictionary=False)
    meta = pq.ParquetFile(path).metadata
    col = meta.row_group(2).column(2)  # a1, in the third row group
    raw = bytearray(path.read_bytes())
    start = col.data_page_offset + 100
    raw[start:start + 800] = b"\x7f" * 800  # doubles near 1.4e306: an intact footer
    path.write_bytes(bytes(raw))
    return path


@pytest.mark.parametrize("design", ["two blocks", "categorical response"])
def test_corrupt_row_group_is_refused_naming_file_column_and_row_group(tmp_path, design):
    path = _corrupt(tmp_path, _classes(_frame()) if design != "two blocks" else None)
    with pytest.raises(ValueError, match=r"overflow float64 in column 'a1'.*row group 2 of "
                                         r"the Parquet file '.*c\.parquet'"):
        jdr.JointDimReduction.from_parquet(path, y="y", a=A, b=B)


def test_corrupt_row_group_is_refused_with_three_blocks(tmp_path):
    path = _corrupt(tmp_path)
    blocks = {"a": ["a0", "a1"], "b": ["a2", "b0"], "c": ["b1"]}
    with pytest.raises(ValueError, match=r"c\.parquet.*overflow float64 in column 'a1'"):
        jdr.JointDimReduction.from_parquet(path, y="y", blocks=blocks)


def test_cli_corrupt_row_group_exits_with_one_line(tmp_path, capsys):
    path = _corrupt(tmp_path)
    line = _one_error_line(capsys, ["fit", str(path), *CLI, "--stream"])
    assert "row group 2" in line and "'a1'" in line


def _corrupt_checksummed(tmp_path):
    """A file written with page checksums whose third row group's a1 page
    has a few bytes flipped (an intact footer)."""
    path = _parquet(_frame(), tmp_path / "k.parquet", compression="none",
                    use_dictionary=False, write_page_checksum=True)
    col = pq.ParquetFile(path).metadata.row_group(2).column(2)
    raw = bytearray(path.read_bytes())
    start = col.data_page_offset + 200
    raw[start:start + 6] = bytes(x ^ 0xFF for x in raw[start:start + 6])
    path.write_bytes(bytes(raw))
    return path


def test_cli_in_memory_read_verifies_page_checksums(tmp_path, capsys):
    """Read into memory (no --stream), a file with page checksums and a
    flipped data page is refused in one line naming the file; the intact
    file with checksums fits."""
    path = _corrupt_checksummed(tmp_path)
    line = _one_error_line(capsys, ["fit", str(path), *CLI])
    assert "k.parquet" in line and "checksum" in line
    good = _parquet(_frame(), tmp_path / "g.parquet", write_page_checksum=True)
    assert main(["fit", str(good), *CLI]) == 0


@pytest.mark.parametrize("blocks", [2, 3])
def test_cli_linear_algebra_failure_is_one_line_naming_the_file(tmp_path, capsys,
                                                                 monkeypatch, blocks):
    """A LinAlgError from the data (as corrupt values give) is one line naming
    the file, never LAPACK's "did not converge" nor a traceback."""
    path = _parquet(_frame(), tmp_path / "d.parquet")

    def failing(self, *args, **kwargs):
        raise np.linalg.LinAlgError("Eigenvalues did not converge")

    monkeypatch.setattr(jdr.JointDimReduction, "fit", failing)
    argv = (["fit", str(path), *CLI] if blocks == 2 else
            ["fit", str(path), "--y", "y", "--block", "p=a0,a1", "--block", "q=a2,b0",
             "--block", "r=b1", "--rank", "1"])
    line = _one_error_line(capsys, argv)
    assert "d.parquet" in line and "converge" not in line


def test_cli_fit_with_moments_that_are_not_finite_is_refused(tmp_path, capsys, monkeypatch):
    """A fit whose singular values are not finite (moments that overflowed)
    is one line naming the file, not a summary of infinities."""
    path = _parquet(_frame(), tmp_path / "n.parquet")
    real = jdr.JointDimReduction.fit

    def overflowed(self, *args, **kwargs):
        res = real(self, *args, **kwargs)
        res._est = replace(res._est, singular_values=np.full_like(res.singular_values, np.inf))
        return res

    monkeypatch.setattr(jdr.JointDimReduction, "fit", overflowed)
    line = _one_error_line(capsys, ["fit", str(path), *CLI])
    assert "n.parquet" in line and "not finite" in line


# -- CSV as strict as the in-memory read --------------------------------------------
def _csv_with_extra_field(tmp_path):
    df = _frame(2000)
    df["note"] = "x"  # a column outside the model: the reader selects columns
    path = tmp_path / "e.csv"
    df.to_csv(path, index=False)
    lines = path.read_text().splitlines()
    lines[1500] += ",7.5"  # data row 1500 (line 1501) has one field too many
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("arrow", [True, False])
def test_csv_row_with_an_extra_field_is_refused(tmp_path, monkeypatch, arrow):
    path = _csv_with_extra_field(tmp_path)
    if not arrow:
        monkeypatch.setattr(_csv_stream, "have_arrow_csv", lambda: False)
    with pytest.raises(ValueError, match=r"e\.csv.*line 1501 has 8 fields but the header has 7"):
        jdr.JointDimReduction.from_csv(path, y="y", blocks=BLOCKS, batch_rows=300)


def test_cli_csv_extra_field_exits_with_one_line(tmp_path, capsys):
    path = _csv_with_extra_field(tmp_path)
    line = _one_error_line(capsys, ["fit", str(path), *CLI, "--chunksize", "300"])
    assert "line 1501" in line


@pytest.mark.parametrize("arrow", [True, False])
def test_csv_text_in_a_late_chunk_names_line_and_column(tmp_path, monkeypatch, arrow):
    df = _frame(5000)
    df["b1"] = df["b1"].astype(object)
    df.loc[4321, "b1"] = "n/a?"
    path = tmp_path / "t.csv"
    df.to_csv(path, index=False)
    if not arrow:
        monkeypatch.setattr(_csv_stream, "have_arrow_csv", lambda: False)
    with pytest.raises(ValueError, match=r"t\.csv.*line 4323, column 'b1': 'n/a\?' is not a "
                                         r"number"):
        jdr.JointDimReduction.from_csv(path, y="y", blocks=BLOCKS, batch_rows=1000)


def test_csv_values_that_overflow_name_the_file_and_rows(tmp_path):
    df = _frame(800)
    df.loc[650, "a2"] = 1e300
    path = tmp_path / "o.csv"
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"column 'a2'.*data row 651 of the CSV file"):
        jdr.JointDimReduction.from_csv(path, y="y", blocks=BLOCKS, batch_rows=200)


# -- a Parquet dataset of several files ---------------------------------------------
def _dataset(tmp_path, change):
    folder = tmp_path / "ds"
    folder.mkdir()
    df = _frame(3000)
    for i in range(3):
        part = df.iloc[i * 1000:(i + 1) * 1000].reset_index(drop=True)
        table = pa.Table.from_pandas(part, preserve_index=False)
        if i == 2:
            table = change(table)
        pq.write_table(table, folder / f"part-{i}.parquet")
    return folder


def _set(table, name, arr):
    return table.set_column(table.schema.get_field_index(name), name, arr)


DRIFTS = {
    "int32": lambda t: _set(t, "a1", pa.array((t.column("a1").to_numpy() * 1000).astype(
        "int32"))),
    "text": lambda t: _set(t, "a1", pa.array([repr(v) for v in t.column("a1").to_pylist()])),
}


@pytest.mark.parametrize("drift", sorted(DRIFTS))
def test_dataset_with_a_drifted_column_is_refused(tmp_path, drift):
    folder = _dataset(tmp_path, DRIFTS[drift])
    with pytest.raises(ValueError, match=r"column 'a1'.*part-2\.parquet") as info:
        jdr.JointDimReduction.from_parquet(folder, y="y", a=A, b=B)
    assert not isinstance(info.value, pa.ArrowException)


def test_cli_dataset_drift_exits_with_one_line(tmp_path, capsys):
    folder = _dataset(tmp_path, DRIFTS["int32"])
    for extra in ([], ["--stream"]):  # in memory and streamed alike
        line = _one_error_line(capsys, ["fit", str(folder), *CLI, *extra])
        assert "'a1'" in line and "part-2.parquet" in line and "int32" in line


def _typed(tmp_path, kind):
    df = _frame(500)
    table = pa.Table.from_pandas(df, preserve_index=False)
    if kind == "dictionary":
        arr = pa.array([f"{v:.1f}" for v in df["b0"]]).dictionary_encode()
    else:
        arr = pa.array(pd.date_range("2020-01-01", periods=len(df), freq="h"))
    path = tmp_path / f"{kind}.parquet"
    pq.write_table(table.set_column(table.schema.get_field_index("b0"), "b0", arr), path)
    return path


@pytest.mark.parametrize("kind", ["dictionary", "timestamp"])
def test_dictionary_and_timestamp_columns_are_refused_by_name(tmp_path, kind):
    path = _typed(tmp_path, kind)
    assert kind[:4] in str(pq.read_schema(path).field("b0").type)
    with pytest.raises(ValueError, match=rf"column 'b0' of the Parquet file '.*{kind}\.parquet'"
                                         r" is stored as .*not as numbers") as info:
        jdr.JointDimReduction.from_parquet(path, y="y", a=A, b=B)
    assert not isinstance(info.value, pa.ArrowException)


def test_truncated_parquet_file_is_refused_by_name(tmp_path, capsys):
    path = _parquet(_frame(), tmp_path / "cut.parquet")
    raw = path.read_bytes()
    path.write_bytes(raw[: len(raw) // 2])
    with pytest.raises(ValueError, match=r"cut\.parquet.*truncated") as info:
        jdr.JointDimReduction.from_parquet(path, y="y", a=A, b=B)
    assert not isinstance(info.value, pa.ArrowException)
    line = _one_error_line(capsys, ["fit", str(path), *CLI, "--stream"])
    assert "cut.parquet" in line


# -- the same checks with a categorical response (the levels read first) -----------
def test_categorical_csv_stream_refuses_an_extra_field(tmp_path):
    path = tmp_path / "k.csv"
    _classes(_frame(2000)).to_csv(path, index=False)
    lines = path.read_text().splitlines()
    lines[1800] += ",1"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ValueError, match=r"k\.csv.*line 1801 has 7 fields but the header has 6"):
        jdr.JointDimReduction.from_csv(path, y="y", blocks=BLOCKS, batch_rows=400)


def test_categorical_parquet_stream_refuses_drift_and_change(tmp_path):
    folder = _dataset(tmp_path, DRIFTS["int32"])
    for f in folder.glob("*.parquet"):  # a text response in every file
        t = pq.read_table(f)
        pq.write_table(_set(t, "y", pa.array(np.where(t.column("y").to_numpy() > 0,
                                                        "hi", "lo"))), f)
    with pytest.raises(ValueError, match=r"column 'a1' is stored as int32 .*part-2\.parquet"):
        jdr.JointDimReduction.from_parquet(folder, y="y", a=A, b=B)
    path = _parquet(_classes(_frame()), tmp_path / "k.parquet")
    res = jdr.JointDimReduction.from_parquet(path, y="y", a=A, b=B).fit(rank=1)
    _parquet(_classes(_frame()).iloc[:2000], path)
    with pytest.raises(SourceChangedError, match="k.parquet"):
        res.rank_tests()


def test_file_replaced_during_a_pass_is_refused_at_its_end(tmp_path):
    path = _parquet(_frame(), tmp_path / "d.parquet")
    src = jdr.sources.ParquetSource(path, y="y", a=A, b=B, batch_rows=500)
    chunks = src.iter_chunks()
    next(chunks)
    other = tmp_path / "new.parquet"
    _parquet(_frame(seed=3), other)
    os.replace(other, path)  # the open file is read to its end; the name is the new file
    with pytest.raises(SourceChangedError, match="d.parquet"):
        for _ in chunks:
            pass


def test_both_csv_readers_give_the_same_chunks(tmp_path, monkeypatch):
    path = tmp_path / "r.csv"
    _frame(2500).to_csv(path, index=False)

    def chunks():
        src = jdr.sources.CSVSource(path, y="y", a=A, b=B, batch_rows=600)
        return [np.column_stack(c) for c in src.iter_chunks()]

    arrow = chunks()
    monkeypatch.setattr(_csv_stream, "have_arrow_csv", lambda: False)
    pandas = chunks()
    assert [len(c) for c in arrow] == [600, 600, 600, 600, 100]
    assert all(np.array_equal(x, z) for x, z in zip(arrow, pandas, strict=True))


def test_dask_pass_with_other_rows_is_refused():
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(2)
    y, a, b = rng.standard_normal(90), rng.standard_normal((90, 3)), rng.standard_normal((90, 2))
    # a collection that says 100 rows but yields 90 (its data changed under it)
    def lazy(x):
        return da.from_delayed(dask.delayed(lambda: x)(), shape=(100, *x.shape[1:]),
                               dtype=float)

    src = jdr.sources.DaskSource(lazy(y), lazy(a), lazy(b))
    assert src.nobs == 100
    with pytest.raises(SourceChangedError, match="yielded 90 rows but they have 100"):
        for _ in src.iter_chunks():
            pass


@pytest.mark.parametrize("y", ["y", "cls"])
def test_csv_with_an_index_column_and_a_repeated_name(tmp_path, y):
    df = _frame(900)
    df["cls"] = np.where(df["y"] > 0, "hi", "lo")
    df.insert(3, "a0 ", df["a0"])  # written with index=True: an empty first header field
    path = tmp_path / "i.csv"
    df.to_csv(path)
    text = path.read_text().replace("a0 ", "a0", 1)  # a repeated name: pandas reads a0.1
    path.write_text(text)
    res = jdr.JointDimReduction.from_csv(path, y=y, blocks={"a": ["a0.1", "a1", "a2"], "b": B},
                                         batch_rows=200).fit(rank=1)
    frame = pd.read_csv(path)
    want = jdr.JointDimReduction.from_csv(path, y=y, blocks=BLOCKS, batch_rows=200).fit(rank=1)
    assert "Unnamed: 0" in frame.columns
    np.testing.assert_array_equal(res.singular_values, want.singular_values)
