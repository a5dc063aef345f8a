"""Saving and loading results safely: the results file round-trips every
results object exactly, ``jdr.load`` runs no code from a file and refuses
foreign, tampered and truncated files naming the path, and every writer of
files is atomic (a failed write leaves the old file byte for byte)."""

from __future__ import annotations

import errno
import importlib
import io
import json
import os
import pickle
import pkgutil
import warnings
import zipfile

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.persistence._export import ExportMixin
from jdr_stats.baselines import PHD, SAVE, SIR
from jdr_stats.exceptions import RankSelectionWarning, RowsNotInMemoryError

M = 300


# ---------------------------------------------------------------------------
# fixtures: one small design of two and of three blocks
# ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def two():
    sim = jdr.simulate.bilinear(M, 4, 3, 1, seed=21)
    frame = sim.frame
    a_cols, b_cols = [f"a{j}" for j in range(4)], [f"b{j}" for j in range(3)]
    model = jdr.JointDimReduction(frame["y"], frame[a_cols], frame[b_cols])
    return model, frame, a_cols, b_cols


@pytest.fixture(scope="module")
def three():
    sim = jdr.simulate.bilinear(M, 4, 3, 1, seed=22)
    c = np.random.default_rng(23).standard_normal((M, 3))
    blocks = {"g": sim.a, "l": sim.b, "c": c + sim.y[:, None] * 0.2}
    return jdr.JointDimReduction.from_blocks(sim.y, blocks), blocks


def _save_load(res, path):
    res.save(path)
    _check_results_file(path)
    back = jdr.load(path)
    assert type(back) is type(res)
    # exact: the reloaded object saves to the same bytes (every attribute,
    # array, dtype and table as it was)
    again = path.with_name(path.name + ".again")
    back.save(again)
    assert again.read_bytes() == path.read_bytes()
    again.unlink()
    return back


def _check_results_file(path):
    """The file is the documented format: a zip of a JSON manifest and an
    npz whose arrays read without pickle."""
    with zipfile.ZipFile(path) as zf:
        assert sorted(zf.namelist()) == ["arrays.npz", "manifest.json"]
        manifest = json.loads(zf.read("manifest.json"))
        arrays = zf.read("arrays.npz")
    assert manifest["format"] == "jdr_stats.results" and manifest["format_version"] == 2
    assert manifest["jdr_stats_version"] == jdr.__version__
    with np.load(io.BytesIO(arrays), allow_pickle=False) as npz:
        for key in npz.files:
            assert npz[key].dtype.kind != "O"


def _json(res):
    """to_dict as text, NaN included (NaN != NaN in a dict comparison)."""
    return json.dumps(res.to_dict(), default=float, sort_keys=True)


def _same(back, res):
    assert _json(back) == _json(res)
    assert str(back.summary()) == str(res.summary())


def _same_frames(a, b):
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b, check_exact=True)
    else:
        np.testing.assert_array_equal(a, b)


# ---------------------------------------------------------------------------
# round trips: every results type, K = 2 and K = 3
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("opts", [
    {"rank": 1},
    {"rank": "auto", "seed": 3},
    {"rank": 1, "sparsity": (2, 2)},
    {"rank": 1, "independent_blocks": True, "whitening": "shrinkage"},
])
def test_two_block_results_round_trip_with_equal_numbers(two, tmp_path, opts):
    model, frame, a_cols, b_cols = two
    res = model.fit(**opts)
    back = _save_load(res, tmp_path / "fit.jdr")
    _same(back, res)
    for name in res.directions:
        _same_frames(back.directions[name], res.directions[name])
    np.testing.assert_array_equal(back.singular_values, res.singular_values)
    np.testing.assert_array_equal(back.coef_matrix, res.coef_matrix)
    new_a, new_b = frame[a_cols].iloc[:7] * 1.5, frame[b_cols].iloc[:7] - 0.5
    _same_frames(back.transform(new_a, new_b), res.transform(new_a, new_b))
    _same_frames(back.transform(), res.transform())  # the rows are in the file
    pd.testing.assert_frame_equal(back.rank_tests("chi2").table, res.rank_tests("chi2").table)
    pd.testing.assert_frame_equal(back.rank_tests().table, res.rank_tests().table)
    assert back.settings == res.settings


def test_save_after_reading_directions(two, tmp_path):
    """Reading res.directions cached a mappingproxy that pickle refused."""
    model, *_ = two
    res = model.fit(1)
    before = res.directions
    back = _save_load(res, tmp_path / "fit.jdr")
    for name in before:
        _same_frames(back.directions[name], before[name])
    res.save(tmp_path / "fit.pickle", format="pickle")  # the opt-in pickle too
    again = jdr.load(tmp_path / "fit.pickle", allow_pickle=True)
    _same_frames(again.directions["a"], before["a"])


def test_removed_data_round_trip_keeps_what_needs_no_rows(two, tmp_path):
    model, frame, a_cols, b_cols = two
    res = model.fit(1)
    small = res.remove_data()
    back = _save_load(small, tmp_path / "small.jdr")
    _same(back, small)
    assert back.data_removed
    _same_frames(back.transform(frame[a_cols].iloc[:5], frame[b_cols].iloc[:5]),
                 res.transform(frame[a_cols].iloc[:5], frame[b_cols].iloc[:5]))
    with pytest.raises(RowsNotInMemoryError, match="remove_data"):
        back.bootstrap(49, seed=0)
    # the file holds no array of the rows (the full fit's file does), and is smaller
    assert not any(M in arr.shape for arr in _stored_arrays(tmp_path / "small.jdr"))
    res.save(tmp_path / "big.jdr")
    assert any(M in arr.shape for arr in _stored_arrays(tmp_path / "big.jdr"))
    assert os.path.getsize(tmp_path / "small.jdr") < os.path.getsize(tmp_path / "big.jdr")


def _stored_arrays(path):
    import io
    import zipfile

    with zipfile.ZipFile(path) as zf:
        data = zf.read("arrays.npz")
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        return [npz[k] for k in npz.files]


def _size(res, tmp_path):
    res.save(tmp_path / "big.jdr")
    return os.path.getsize(tmp_path / "big.jdr")


def test_formula_results_round_trip(two, tmp_path):
    _, frame, _, _ = two
    model = jdr.JointDimReduction.from_formula("y ~ a0 + a1 + np.exp(a2) + a3 | b0 + b1 + b2",
                                               frame)
    res = model.fit(1)
    back = _save_load(res, tmp_path / "formula.jdr")
    _same(back, res)
    assert back.model.formula == res.model.formula
    with pytest.raises(ValueError, match=r"formula's codings.*exog_a and exog_b"):
        back.transform(data=frame.iloc[:3])
    new_a = res.model.exog_a[:3]
    _same_frames(back.transform(new_a, res.model.exog_b[:3]),
                 res.transform(new_a, res.model.exog_b[:3]))


def test_categorical_response_round_trip(two, tmp_path):
    _, frame, a_cols, b_cols = two
    y = pd.Series(np.where(frame["y"] > frame["y"].median(), "high", "low"), name="level")
    res = jdr.JointDimReduction(y, frame[a_cols], frame[b_cols]).fit(1)
    back = _save_load(res, tmp_path / "cat.jdr")
    _same(back, res)
    assert back.model.data.response.classes == res.model.data.response.classes


@pytest.mark.parametrize("opts", [
    {"rank": 1},
    {"rank": "auto"},
    {"rank": 1, "independent_blocks": True},
    {"rank": 1, "main_effects": True},
    {"rank": 1, "sparsity": 2},
])
def test_k_block_results_round_trip_with_equal_numbers(three, tmp_path, opts):
    model, blocks = three
    with warnings.catch_warnings():
        # block "c" carries a main effect only: its rank-0 test may not reject
        warnings.simplefilter("ignore", RankSelectionWarning)
        res = model.fit(**opts)
    back = _save_load(res, tmp_path / "k3.jdr")
    _same(back, res)
    for name in res.directions:
        _same_frames(back.directions[name], res.directions[name])
    new = {n: x[:6] + 0.25 for n, x in blocks.items()}
    _same_frames(back.transform(new), res.transform(new))
    assert back.rank == res.rank and back.support == res.support


def test_two_blocks_with_main_effects_round_trip(two, tmp_path):
    model, *_ = two
    res = model.fit(1, main_effects=True)
    assert type(res._impl).__name__ == "KBlockFit"
    back = _save_load(res, tmp_path / "me.jdr")
    assert type(back) is jdr.JDRResults and type(back._impl).__name__ == "KBlockFit"
    _same(back, res)
    _same_frames(back.directions["a"], res.directions["a"])
    pd.testing.assert_frame_equal(back.rank_tests().table, res.rank_tests().table)


def test_k_block_procedures_round_trip(three, tmp_path):
    model, _ = three
    res = model.fit(1)
    for i, out in enumerate([res.rank_tests(), res.bootstrap(9, seed=1, alpha=0.2),
                             model.select_support(rank=1, independent_blocks=True), res.main_effects_test()]):
        back = _save_load(out, tmp_path / f"k{i}.jdr")
        _same(back, out)
        assert back.to_json() == out.to_json()  # the mixin's to_json (NaN as null)
        json.loads(out.to_json())


@pytest.mark.parametrize("method", ["pairs", "poisson"])
def test_bootstrap_results_round_trip(two, tmp_path, method):
    model, *_ = two
    boot = model.fit(1).bootstrap(49, seed=4, method=method)
    back = _save_load(boot, tmp_path / "boot.jdr")
    _same(back, boot)


def test_rank_tests_support_and_tests_round_trip(two, tmp_path):
    model, *_ = two
    res = model.fit(1)
    outs = [res.rank_tests(), res.rank_tests("chi2"), res.rank_tests("permutation", seed=2),
            model.select_support(rank=1), res.main_effects_test(),
            model.fit("auto", rank_method="ladle", seed=1).rank_test_table]
    for i, out in enumerate(outs):
        back = _save_load(out, tmp_path / f"t{i}.jdr")
        _same(back, out)
        pd.testing.assert_frame_equal(back.table, out.table, check_exact=True)


@pytest.mark.parametrize("cls, opts", [(SIR, {"n_slices": 5}), (PHD, {}), (SAVE, {})])
def test_baseline_results_round_trip(two, tmp_path, cls, opts):
    _, frame, a_cols, b_cols = two
    x = frame[a_cols + b_cols]
    res = cls(frame["y"], x).fit(rank=2, **opts)
    back = _save_load(res, tmp_path / "sdr.jdr")
    _same(back, res)
    _same_frames(back.directions, res.directions)
    _same_frames(back.transform(x.iloc[:4]), res.transform(x.iloc[:4]))
    pd.testing.assert_frame_equal(back.dimension_tests().table, res.dimension_tests().table)


def test_compare_round_trip(two, tmp_path):
    _, frame, a_cols, b_cols = two
    out = jdr.compare(frame["y"], frame[a_cols], frame[b_cols], 1)
    back = _save_load(out, tmp_path / "cmp.jdr")
    _same(back, out)


def test_streamed_results_round_trip_without_their_source(two, tmp_path):
    pytest.importorskip("pyarrow")
    _, frame, a_cols, b_cols = two
    frame.to_parquet(tmp_path / "rows.parquet")
    res = jdr.JointDimReduction.from_parquet(tmp_path / "rows.parquet", y="y", a=a_cols,
                                             b=b_cols).fit(1)
    back = _save_load(res, tmp_path / "streamed.jdr")
    _same(back, res)  # the summary's R-squared and tests were computed before saving
    with pytest.raises(ValueError):
        back.rank_tests()  # the source is not in the file


def test_every_class_with_save_is_in_the_table():
    """A results class added later must be added to the format's table."""
    from jdr_stats.persistence import _persist

    for mod in pkgutil.walk_packages(jdr.__path__, "jdr_stats."):
        importlib.import_module(mod.name)
    todo, found = [ExportMixin], set()
    while todo:
        for sub in todo.pop().__subclasses__():
            found.add(sub)
            todo.append(sub)
    by_class, _ = _persist._tables()
    # the engines' fits are written inside the JDRResults that holds them
    inner = {"TwoBlockFit", "KBlockFit"}
    missing = [c.__qualname__ for c in found if c.__module__.startswith("jdr_stats")
               and (c not in by_class or not (_persist.CLASSES[by_class[c]].root
                                              or by_class[c] in inner))]
    assert not missing
    for name, spec in _persist.CLASSES.items():
        cls = _persist._resolve(spec.path)
        assert cls.__qualname__ == name
        for key in spec.keep:  # cached values written: they exist
            assert key in _persist._cached_names(cls), (name, key)


# ---------------------------------------------------------------------------
# load refuses, naming the path and what is wrong
# ---------------------------------------------------------------------------
def test_crafted_pickle_runs_nothing(tmp_path):
    marker = tmp_path / "marker"
    # a protocol-0 pickle that calls open(marker, "w") when unpickled
    crafted = f"c__builtin__\nopen\n(V{marker}\nVw\ntR.".encode()
    path = tmp_path / "fit.jdr"
    path.write_bytes(crafted)
    with pytest.raises(ValueError, match=r"fit\.jdr'.*a pickle.*allow_pickle=True"):
        jdr.load(path)
    assert not marker.exists()


def test_foreign_pickle_refused_even_with_the_opt_in(tmp_path):
    path = tmp_path / "other.pickle"
    path.write_bytes(pickle.dumps({"rank": 2}))
    with pytest.raises(ValueError, match=r"other\.pickle'.*a pickle"):
        jdr.load(path)
    with pytest.raises(ValueError, match=r"other\.pickle'.*builtins\.dict, not a jdr_stats"):
        jdr.load(path, allow_pickle=True)


def test_pickle_only_on_request(two, tmp_path):
    model, *_ = two
    res = model.fit(1)
    res.save(tmp_path / "fit.pkl", format="pickle")
    with pytest.raises(ValueError, match=r"fit\.pkl'.*unpickling can run any code"):
        jdr.load(tmp_path / "fit.pkl")
    back = jdr.load(tmp_path / "fit.pkl", allow_pickle=True)
    _same(back, res)
    with pytest.raises(ValueError, match=r'format must be "jdr".*got .json.'):
        res.save(tmp_path / "fit.x", format="json")


def test_json_export_refused(two, tmp_path):
    model, *_ = two
    path = tmp_path / "fit.json"
    model.fit(1).to_json(path)
    with pytest.raises(ValueError, match=r"fit\.json'.*JSON text.*results\.save\(path\)"):
        jdr.load(path)


def _rewrite(path, manifest=None, arrays=None, members=None):
    """Rewrite a results file with a changed manifest, arrays or members."""
    with zipfile.ZipFile(path) as zf:
        parts = {n: zf.read(n) for n in zf.namelist()}
    if manifest is not None:
        parts["manifest.json"] = manifest(json.loads(parts["manifest.json"]))
    if arrays is not None:
        parts["arrays.npz"] = arrays(parts["arrays.npz"])
    if members is not None:
        parts = members(parts)
    with zipfile.ZipFile(path, "w") as zf:
        for n, data in parts.items():
            zf.writestr(n, data if isinstance(data, bytes) else json.dumps(data))


def _first(node, tag):
    """The first node of ``tag`` in a manifest tree."""
    if isinstance(node, dict):
        if node.get("$") == tag:
            return node
        node = list(node.values())
    if isinstance(node, list):
        for x in node:
            got = _first(x, tag)
            if got is not None:
                return got
    return None


def _set_class(name):
    def change(doc):
        inner = _first(doc["root"]["state"], "object")
        inner["class"] = name
        return doc
    return change


@pytest.mark.parametrize("change, match", [
    (_set_class("Popen"), r"unknown class 'Popen'"),
    (_set_class("posix.system"), r"unknown class 'posix.system'"),
    (lambda d: {**d, "class": "dict"}, r"class 'dict' is not a jdr_stats results class"),
    (lambda d: {**d, "class": "Estimate"}, r"class 'Estimate' is not a jdr_stats results"),
    (lambda d: {**d, "class": "SIRResults"}, r"names a SIRResults but holds a JDRResults"),
    (lambda d: {**d, "format_version": 99}, r"format version 99.*reads versions up to 2"),
    (lambda d: {**d, "format_version": "1"}, r"format_version '1' is not a version"),
    (lambda d: {**d, "format": "other"}, r"format 'other', not 'jdr_stats.results'"),
    (lambda d: {**d, "arrays_sha256": "0" * 64}, r"does not match the checksum"),
    (lambda d: {**d, "root": {"$": "eval", "v": "1"}}, r"unknown node type 'eval'"),
    (lambda d: {**d, "root": {"$": "ref", "id": 5}}, r"reference to object 5"),
    (lambda d: {**d, "root": [1, 2]}, r"holds a list"),
    (lambda d: json.dumps(d).encode()[:-3], r"manifest\.json is not valid JSON"),
])
def test_tampered_manifest_refused(two, tmp_path, change, match):
    model, *_ = two
    path = tmp_path / "fit.jdr"
    model.fit(1).save(path)
    jdr.load(path)  # intact: it loads
    _rewrite(path, manifest=change)
    with pytest.raises(ValueError, match=r"cannot load '.*fit\.jdr': .*" + match):
        jdr.load(path)


def test_tampered_arrays_refused(two, tmp_path):
    model, *_ = two
    path = tmp_path / "fit.jdr"
    model.fit(1).save(path)
    jdr.load(path)

    def object_array(_):  # an object array (a pickle inside the npz), checksum updated
        buf = io.BytesIO()
        np.savez(buf, a0=np.array([{"x": 1}], dtype=object))
        return buf.getvalue()

    def fix_sum(doc):
        import hashlib

        with zipfile.ZipFile(path) as zf:
            doc["arrays_sha256"] = hashlib.sha256(zf.read("arrays.npz")).hexdigest()
        return doc

    _rewrite(path, arrays=object_array)
    _rewrite(path, manifest=fix_sum)
    with pytest.raises(ValueError, match=r"fit\.jdr'.*damaged or altered.*allow_pickle"):
        jdr.load(path)


def test_foreign_zip_refused(two, tmp_path):
    model, *_ = two
    path = tmp_path / "fit.jdr"
    model.fit(1).save(path)
    _rewrite(path, members=lambda p: {**p, "extra.py": b"print(1)"})
    with pytest.raises(ValueError, match=r"fit\.jdr'.*zip archive of \[.*extra\.py"):
        jdr.load(path)
    other = tmp_path / "data.npz"
    np.savez(other, x=np.arange(3))
    with pytest.raises(ValueError, match=r"data\.npz'.*not a jdr_stats results file"):
        jdr.load(other)
    text = tmp_path / "notes.txt"
    text.write_text("hello\n")
    with pytest.raises(ValueError, match=r"notes\.txt'.*not a jdr_stats results file"):
        jdr.load(text)


@pytest.mark.parametrize("keep", [0.5, 0.9, 0.99])
def test_truncated_file_refused(two, tmp_path, keep):
    model, *_ = two
    path = tmp_path / "fit.jdr"
    model.fit(1).save(path)
    data = path.read_bytes()
    path.write_bytes(data[:int(len(data) * keep)])
    with pytest.raises(ValueError, match=r"fit\.jdr'.*damaged or truncated"):
        jdr.load(path)


def test_flipped_byte_refused(two, tmp_path):
    model, *_ = two
    path = tmp_path / "fit.jdr"
    model.fit(1).save(path)
    data = bytearray(path.read_bytes())
    data[len(data) // 3] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"fit\.jdr'"):
        jdr.load(path)


# ---------------------------------------------------------------------------
# atomic writes: a failed write leaves the old file as it was
# ---------------------------------------------------------------------------
def test_failed_save_leaves_the_old_file(two, tmp_path, monkeypatch):
    model, *_ = two
    path = tmp_path / "fit.jdr"
    model.fit(1).save(path)
    before = path.read_bytes()
    real = zipfile.ZipFile.writestr
    calls = []

    def full_disk(self, name, data, *args, **kwargs):  # the first member written, then
        calls.append(name)
        if len(calls) > 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(self, name, data, *args, **kwargs)

    monkeypatch.setattr(zipfile.ZipFile, "writestr", full_disk)
    with pytest.raises(OSError, match="No space left"):
        model.fit(2).save(path)
    assert len(calls) == 2  # it failed midway
    assert path.read_bytes() == before
    assert os.listdir(tmp_path) == ["fit.jdr"]  # no temporary file left behind


@pytest.mark.parametrize("write", [
    lambda res, p: res.to_json(p),
    lambda res, p: res.save(p),
    lambda res, p: res.save(p, format="pickle"),
    lambda res, p: res.summary().to_html(p),
    lambda res, p: res.summary().to_latex(p),
    lambda res, p: res.summary().to_csv(p),
])
def test_failed_write_leaves_the_old_file(two, three, tmp_path, monkeypatch, write):
    for i, res in enumerate([two[0].fit(1), three[0].fit(1)]):
        path = tmp_path / f"out{i}"
        path.write_bytes(b"the previous good file\n")
        os.chmod(path, 0o640)

        def no_sync(fd):
            raise OSError(errno.EIO, "Input/output error")

        with monkeypatch.context() as mp:
            mp.setattr(os, "fsync", no_sync)
            with pytest.raises(OSError, match="Input/output"):
                write(res, path)
        assert path.read_bytes() == b"the previous good file\n"
        assert sorted(os.listdir(tmp_path)) == [f"out{j}" for j in range(i + 1)]
        write(res, path)  # and without the fault it is written, permissions kept
        assert path.read_bytes() != b"the previous good file\n"
        assert oct(os.stat(path).st_mode & 0o777) == oct(0o640)


def test_values_round_trip_exactly():
    """The tree encodes every value type results hold, bit for bit."""
    from jdr_stats.persistence import _persist

    fortran = np.asfortranarray(np.arange(6.0).reshape(2, 3))
    frozen = np.linspace(0, 1, 4)
    frozen.flags.writeable = False
    frame = pd.DataFrame({
        "x": [1.5, np.nan, -0.0], "n": pd.array([1, None, 3], dtype="Int64"),
        "s": pd.array(["a", None, "c"], dtype="str"), "o": [None, (1, "b"), 2.5],
        "c": pd.Categorical(["lo", "hi", "lo"], categories=["lo", "hi"], ordered=True),
        "b": [True, False, True], "f": np.array([1, 2, 3], dtype=np.float32),
        "t": pd.to_datetime(["2020-01-01", "NaT", "2021-06-30"]),
    }, index=pd.MultiIndex.from_tuples([("a", 1), ("a", 2), ("b", 1)], names=["blk", "k"]))
    value = {
        "frame": frame, "series": pd.Series([1, 2], index=["p", "q"], name=("s", 1)),
        "floats": [float("nan"), float("inf"), -float("inf"), -0.0, 1e-310],
        "numpy": (np.float64(0.1), np.int64(-3), np.bool_(True), np.complex128(1 - 2j),
                  np.float32(0.1), np.uint8(255)),
        (1, "k"): {3, 4}, 7: slice(1, None, 2), "frozen": frozenset({"u", "v"}),
        "arrays": [fortran, frozen, frozen, np.array(["x", "yz"]), np.zeros((0, 3))],
        "complex": 1 + 2j, "big": 2 ** 80, "text": "é\n\"", "cols": pd.RangeIndex(2, 9, 3),
    }
    writer = _persist._Writer()
    tree = json.loads(json.dumps(writer.enc(value, "value"), allow_nan=False))
    npz = np.load(io.BytesIO(_persist._arrays_bytes(writer.arrays)), allow_pickle=False)
    back = _persist._Reader(npz).dec(tree, "value")
    pd.testing.assert_frame_equal(back["frame"], frame, check_exact=True)
    pd.testing.assert_series_equal(back["series"], value["series"], check_exact=True)
    assert np.isnan(back["floats"][0]) and back["floats"][1:] == value["floats"][1:]
    assert str(back["floats"][3]) == "-0.0"
    for got, want in zip(back["numpy"], value["numpy"], strict=True):
        assert type(got) is type(want) and got == want
    assert back[(1, "k")] == {3, 4} and back[7] == slice(1, None, 2)
    assert back["frozen"] == frozenset({"u", "v"}) and type(back["frozen"]) is frozenset
    f2, r1, r2, text, empty = back["arrays"]
    assert f2.flags.f_contiguous and np.array_equal(f2, fortran)
    assert r1 is r2 and not r1.flags.writeable and np.array_equal(r1, frozen)
    assert text.dtype == np.dtype("<U2") and empty.shape == (0, 3)
    assert back["complex"] == 1 + 2j and back["big"] == 2 ** 80 and back["text"] == "é\n\""
    pd.testing.assert_index_equal(back["cols"], value["cols"], exact=True)
    with pytest.raises(TypeError, match=r"cannot save value\[0\]: a builtins\.builtin_function"):
        _persist._Writer().enc([len], "value")


def _format1_design():  # type: ignore[no-untyped-def]
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).parent / "results" / "format1" / "make_format1.py"
    spec = importlib.util.spec_from_file_location("make_format1", path)
    mod = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(mod)  # type: ignore[union-attr]
    return path.parent, mod.design()


@pytest.mark.parametrize("name, k", [("two_block", 2), ("three_block", 3)])
def test_format1_files_load_as_results(name, k):  # type: ignore[no-untyped-def]
    """Files of format version 1 (written before one results type: the
    two-block fit's attributes as ``JDRResults``, a K-block fit as
    ``KBlockResults``) load as ``JDRResults`` with the numbers of a refit."""
    folder, (y, blocks) = _format1_design()
    back = jdr.load(folder / f"{name}.jdr")
    assert type(back) is jdr.JDRResults
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = jdr.JointDimReduction.from_blocks(y, dict(list(blocks.items())[:k])).fit(1)
    assert type(back._impl) is type(res._impl)
    for block in res.directions:
        np.testing.assert_array_equal(np.asarray(back.directions[block]),
                                      np.asarray(res.directions[block]))
    assert str(back.summary()) == str(res.summary())
