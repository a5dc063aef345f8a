"""The same data give the same fit, the same rank choice and the same rank
tests wherever the rows are stored: in memory, from a
Parquet file, from CSV chunks and through dask arrays.

Every automatic choice is a function of the data's shape and values
(:mod:`jdr_stats.policy`); the procedures that sum over rows stream them,
and the random draws of a row (the spectral test's halves and sign flips)
depend on its index only.  So only the order of the floating-point
additions differs between storages: the numbers agree to a relative
``RTOL = 1e-10`` (sums of a few hundred terms differ by about 1e-14
relative; a p-value computed from them by a smooth map keeps that order),
with an absolute floor of ``1e-12`` of a column's largest value for the
entries that are near zero; ranks, methods, sign-flip counts and the choices
are exactly equal.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.sources import CSVSource

pytestmark = pytest.mark.equality

RTOL = 1e-10
ATOL_OF_MAX = 1e-12


def _frame(m: int, n1: int, n2: int, r: int, seed: int) -> pd.DataFrame:
    sim = jdr.simulate.bilinear(m, n1, n2, r, seed=seed)
    # six decimals: a CSV file holds the same numbers (up to the parser's last bit)
    data = np.round(np.column_stack([sim.y, sim.a, sim.b]), 6)
    cols = ["y", *(f"a{i}" for i in range(n1)), *(f"b{i}" for i in range(n2))]
    return pd.DataFrame(data, columns=cols)


def _models(df: pd.DataFrame, tmp_path) -> dict[str, jdr.JointDimReduction]:
    import dask.array as da

    a_cols = [c for c in df.columns if c.startswith("a")]
    b_cols = [c for c in df.columns if c.startswith("b")]
    y, a, b = df["y"].to_numpy(), df[a_cols].to_numpy(), df[b_cols].to_numpy()
    parquet, csv = tmp_path / "d.parquet", tmp_path / "d.csv"
    df.to_parquet(parquet, row_group_size=97)
    df.to_csv(csv, index=False)
    return {
        "memory": jdr.JointDimReduction(y, a, b),
        "parquet": jdr.JointDimReduction.from_parquet(parquet, y="y", a=a_cols, b=b_cols,
                                                      batch_rows=61),
        "csv chunks": jdr.JointDimReduction.from_source(
            CSVSource(csv, y="y", a=a_cols, b=b_cols, batch_rows=53)),
        "dask": jdr.JointDimReduction(da.from_array(y, chunks=89),
                                      da.from_array(a, chunks=(89, len(a_cols))),
                                      da.from_array(b, chunks=(89, len(b_cols)))),
    }


def _run(model: jdr.JointDimReduction) -> dict[str, object]:
    with warnings.catch_warnings():  # the premises of a small sample: the same everywhere
        warnings.simplefilter("ignore", jdr.exceptions.JDRWarning)
        fit = model.fit(2)
        auto = model.fit("auto", seed=1)
        tests = fit.rank_tests(max_rank=3, n_perm=39, seed=3)
    return {"fit": fit, "auto": auto, "tests": tests}


def _same_table(got: pd.DataFrame, want: pd.DataFrame, what: str) -> None:
    assert list(got.columns) == list(want.columns), what
    assert list(got.index) == list(want.index), what
    for col in want.columns:
        g, w = got[col].to_numpy(float), want[col].to_numpy(float)
        np.testing.assert_array_equal(np.isnan(g), np.isnan(w), err_msg=f"{what}: {col}")
        ok = ~np.isnan(w)
        atol = ATOL_OF_MAX * float(np.max(np.abs(w[ok]), initial=0.0))
        np.testing.assert_allclose(g[ok], w[ok], rtol=RTOL, atol=atol,
                                   err_msg=f"{what}: {col}")


def _check_same(got: dict, want: dict, where: str) -> None:
    fit, ref = got["fit"], want["fit"]
    np.testing.assert_allclose(fit.singular_values, ref.singular_values, rtol=RTOL,
                               err_msg=where)
    for side in ("directions_a", "directions_b"):
        g, w = np.asarray(getattr(fit, side)), np.asarray(getattr(ref, side))
        np.testing.assert_allclose(g, w, rtol=0, atol=ATOL_OF_MAX * 100, err_msg=where)
    assert fit.settings.whitening == ref.settings.whitening, where
    auto, aref = got["auto"], want["auto"]
    assert (auto.rank, auto.rank_method) == (aref.rank, aref.rank_method), where
    assert auto.settings == aref.settings, where
    _same_table(auto.rank_test_table.table, aref.rank_test_table.table, f"{where}: fit('auto')")
    t, tref = got["tests"], want["tests"]
    assert (t.method, t.choice) == (tref.method, tref.choice), where
    _same_table(t.table, tref.table, f"{where}: rank_tests()")
    assert t.notes == tref.notes, where


@pytest.mark.parametrize(("m", "n1", "n2", "method"), [
    (300, 40, 40, "combined"),  # n1 n2 / m = 5.33 >= 5: the combined test
    (300, 12, 10, "robust"),    # n1 n2 / m = 0.4 < 5: the robust test
])
def test_same_numbers_in_memory_parquet_csv_chunks_and_dask(m, n1, n2, method, tmp_path):
    import dask

    df = _frame(m, n1, n2, 2, seed=7)
    with dask.config.set(scheduler="synchronous"):
        runs = {where: _run(model) for where, model in _models(df, tmp_path).items()}
    want = runs.pop("memory")
    assert want["tests"].method == method and want["tests"].choice.name == method
    assert want["auto"].settings.rank_choice == jdr.policy.rank_method(m, n1, n2)
    for where, got in runs.items():
        _check_same(got, want, where)
