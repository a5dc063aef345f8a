"""Streamed K-block ``fit("auto")``: the per-block rank tests from passes over
the source equal the tests of the same rows in memory."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats import policy
from jdr_stats.exceptions import RowsNotInMemoryError, SourceChangedError


def _frame(m: int, widths: tuple[int, ...], seed: int) -> tuple[pd.DataFrame, dict]:
    rng = np.random.default_rng(seed)
    xs = [rng.normal(size=(m, n)) for n in widths]
    y = (xs[0][:, 0] * xs[1][:, 0] + xs[1][:, 1] * xs[2][:, 1]
         + xs[0][:, 1] * xs[1][:, 1] * xs[-1][:, 0] + 0.5 * rng.normal(size=m) + 5.0)
    for k in range(2, len(widths) - 1):  # every block in a pair
        y = y + xs[k][:, 0] * xs[k + 1][:, -1]
    names = [f"b{k}" for k in range(len(widths))]
    cols = {n: [f"{n}_{j}" for j in range(x.shape[1])] for n, x in zip(names, xs, strict=True)}
    df = pd.DataFrame(np.hstack(xs) * 3.0 + 100.0,
                      columns=[c for cs in cols.values() for c in cs])
    df["y"] = y
    df["w"] = rng.integers(1, 4, size=m).astype(float)
    return df, cols


def _memory(df, cols, **kw):
    return jdr.JointDimReduction.from_blocks(df.y, {n: df[c] for n, c in cols.items()}).fit(
        "auto", independent_blocks=True, **kw)


def _same_tests(st, mem):
    assert st.rank == mem.rank
    full_st, full_mem = st.rank_tests(), mem.rank_tests()  # every rank: two passes more
    for name in mem.directions:
        for a, b in ((st.rank_test_table.tables[name], mem.rank_test_table.tables[name]),
                     (full_st.tables[name], full_mem.tables[name])):
            _same_table(a, b)
        ang = jdr.metrics.principal_angles(st.directions[name], mem.directions[name])
        assert float(np.max(ang)) < 1e-8
    assert st.settings["influence"]["name"] == mem.settings["influence"]["name"] == "analytic"


def _same_table(a, b):
    assert a.shape == b.shape
    np.testing.assert_allclose(a["statistic"], b["statistic"], rtol=1e-10)
    np.testing.assert_allclose(a["pvalue"], b["pvalue"], rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(a[["eff_df", "scale"]], b[["eff_df", "scale"]], rtol=1e-8)


@pytest.mark.parametrize("widths", [(4, 3, 3), (2, 3, 2, 2, 2)])
def test_streamed_auto_equals_memory(tmp_path, widths):
    df, cols = _frame(500, widths, seed=len(widths))
    path = tmp_path / "x.parquet"
    df.to_parquet(path, row_group_size=120)
    st = jdr.JointDimReduction.from_parquet(path, y="y", blocks=cols, batch_rows=77).fit(
        "auto", independent_blocks=True)
    _same_tests(st, _memory(df, cols))
    assert st.settings["rank_method"] == "robust per-block"
    csv = tmp_path / "x.csv"
    df.to_csv(csv, index=False)
    st2 = jdr.JointDimReduction.from_csv(csv, y="y", blocks=cols, batch_rows=64).fit(
        "auto", independent_blocks=True)
    _same_tests(st2, _memory(df, cols))


def test_streamed_auto_main_effects_and_sketch(tmp_path, monkeypatch):
    df, cols = _frame(400, (3, 3, 2), seed=7)
    path = tmp_path / "x.parquet"
    df.to_parquet(path, row_group_size=100)
    st = jdr.JointDimReduction.from_parquet(path, y="y", blocks=cols).fit(
        "auto", independent_blocks=True, main_effects=True)
    _same_tests(st, _memory(df, cols, main_effects=True))
    real = policy.kblock_route

    def sketched(nobs, widths, q=1):
        c = real(nobs, widths, q)
        return policy.Choice("sketch", "forced", {**c.inputs, "vectors": 9.0, "seed": 3.0})

    monkeypatch.setattr(policy, "kblock_route", sketched)
    st = jdr.JointDimReduction.from_parquet(path, y="y", blocks=cols).fit(
        "auto", independent_blocks=True)
    mem = _memory(df, cols)
    assert st.settings["route"]["name"] == mem.settings["route"]["name"] == "sketch"
    _same_tests(st, mem)


def test_streamed_auto_refusals_name_the_reason(tmp_path):
    df, cols = _frame(300, (3, 2, 2), seed=8)
    path = tmp_path / "x.parquet"
    df.to_parquet(path)
    model = jdr.JointDimReduction.from_parquet(path, y="y", blocks=cols)
    res = model.fit("auto", independent_blocks=True)
    res.save(tmp_path / "r.json")
    back = jdr.load(tmp_path / "r.json")  # the tables are kept, the source is not
    assert back.rank == res.rank
    pd.testing.assert_frame_equal(back.rank_test_table.tables["b0"],
                                  res.rank_test_table.tables["b0"])
    with pytest.raises(RowsNotInMemoryError, match="rank_tests"):
        back.rank_tests()
    with pytest.raises(RowsNotInMemoryError, match="independent_blocks=False"):
        model.fit("auto")
    # whole-number weights stream (tests/test_kblock_frequency_weights.py);
    # other weights' influences are delete-one refits
    df.assign(w=df.w + 0.5).to_parquet(tmp_path / "w.parquet")
    weighted = jdr.JointDimReduction.from_parquet(tmp_path / "w.parquet", y="y", blocks=cols,
                                                  weights="w")
    with pytest.raises(RowsNotInMemoryError, match="case weights"):
        weighted.fit("auto", independent_blocks=True)
    with pytest.raises(ValueError, match="rank_method"):
        model.fit("auto", independent_blocks=True, rank_method="chi2")


class _RewriteBefore:
    """A reader that rewrites the file before its ``call``-th pass."""

    def __init__(self, inner, path, df, call):
        self.inner, self.path, self.df, self.call, self.calls = inner, path, df, call, 0

    def __call__(self, fn, combine):
        self.calls += 1
        if self.calls == self.call:
            st = os.stat(self.path)
            noise = self.df.copy()
            noise["y"] = np.random.default_rng(9).standard_normal(len(noise))
            noise.to_parquet(self.path, row_group_size=100)
            os.utime(self.path, ns=(st.st_atime_ns, st.st_mtime_ns))
        return self.inner(fn, combine)


@pytest.mark.parametrize("call", [2, 3])
def test_source_changed_between_the_rank_passes_is_refused(tmp_path, call):
    df, cols = _frame(300, (3, 2, 2), seed=9)
    path = tmp_path / "x.parquet"
    df.to_parquet(path, row_group_size=100)
    model = jdr.JointDimReduction.from_parquet(path, y="y", blocks=cols)
    # pass 1 (the design sums) ran when the model was built; in fit("auto"):
    # call 1 the pieces, calls 2 and 3 the rank tests' passes
    model._data.reader = _RewriteBefore(model._data.reader, path, df, call)
    with pytest.raises(SourceChangedError):
        model.fit("auto", independent_blocks=True)


def test_dask_blocks_auto_equals_memory():
    da = pytest.importorskip("dask.array")
    df, cols = _frame(400, (3, 2, 2), seed=10)
    y = da.from_array(df.y.to_numpy(), chunks=130)
    blocks = {n: da.from_array(df[c].to_numpy(), chunks=(170, -1)) for n, c in cols.items()}
    st = jdr.JointDimReduction.from_blocks(y, blocks).fit("auto", independent_blocks=True)
    mem = jdr.JointDimReduction.from_blocks(
        df.y.to_numpy(), {n: df[c].to_numpy() for n, c in cols.items()}).fit(
        "auto", independent_blocks=True)
    assert st.rank == mem.rank
    for name in mem.directions:
        _same_table(st.rank_test_table.tables[name], mem.rank_test_table.tables[name])
