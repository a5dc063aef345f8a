"""Issue 21: covariates with dask input (numeric and categorical).  Categorical
columns on Parquet/CSV streams: tests/test_stream_levels.py."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr

da = pytest.importorskip("dask.array")
dd = pytest.importorskip("dask.dataframe")


def _confounded(m=600, seed=0):
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=(m, 4)), rng.normal(size=(m, 3))
    z, g = rng.normal(size=m), rng.integers(0, 3, m)
    a += z[:, None]
    b += (g == 1)[:, None]
    y = a[:, 0] * b[:, 0] + z + rng.normal(size=m)
    cov = pd.DataFrame({"age": z, "site": pd.Categorical(np.array(list("xyz"))[g])})
    return y, a, b, cov


def _dask(x, rows=150):
    return da.from_array(x, chunks=(rows, *x.shape[1:]))


@pytest.mark.parametrize("kind", ["pandas", "dask frame", "dask array"])
def test_dask_covariates_match_memory(kind):
    y, a, b, cov = _confounded()
    mem = jdr.JointDimReduction(y, a, b, covariates=cov).fit(1)
    if kind == "pandas":
        z = cov
    elif kind == "dask frame":
        z = dd.from_pandas(cov, npartitions=4)
    else:  # numeric columns only: the indicators coded by hand
        z = _dask(pd.get_dummies(cov, drop_first=True, dtype=float).to_numpy())
    res = jdr.JointDimReduction(_dask(y), _dask(a), _dask(b), covariates=z).fit(1)
    np.testing.assert_allclose(res.singular_values, mem.singular_values, rtol=1e-10)
    assert np.max(jdr.metrics.principal_angles(res.directions_a, mem.directions_a)) < 1e-8
    assert res.model.data.adjustment.p == 3
    if kind != "dask array":
        assert res.model.data.adjustment.names == mem.model.data.adjustment.names
    got = res.rank_tests().table["pvalue"].to_numpy()
    want = mem.rank_tests().table["pvalue"].to_numpy()
    np.testing.assert_allclose(got, want, rtol=1e-8)
    assert "p_Z = 3" in str(res.summary())


def test_dask_covariates_multivariate_response():
    y, a, b, cov = _confounded()
    rng = np.random.default_rng(1)
    ymat = np.column_stack([y, a[:, 1] * b[:, 1] + rng.normal(size=len(y))])
    mem = jdr.JointDimReduction(ymat, a, b, covariates=cov).fit(2)
    res = jdr.JointDimReduction(_dask(ymat), _dask(a), _dask(b), covariates=cov).fit(2)
    np.testing.assert_allclose(res.singular_values, mem.singular_values, rtol=1e-10)


def test_dask_covariates_wrong_rows_refused():
    y, a, b, cov = _confounded()
    with pytest.raises(ValueError, match="covariates must have the 600 rows"):
        jdr.JointDimReduction(_dask(y), _dask(a), _dask(b), covariates=cov.iloc[:500])
