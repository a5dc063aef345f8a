"""The bootstrap gives the same numbers wherever the rows are stored: in memory, from a Parquet file, from CSV chunks and through dask.

The method is the caller's and never depends on the storage.  The Poisson
bootstrap runs on every storage: a row's weights come from its index
(blocks of ``policy.BLOCK_ROWS`` rows, each from its own seed) and the pass
sums the rows in pieces on a fixed grid, in double precision, so only the
rounding of the fit's own moments (summed in the source's chunks) differs.
Measured on this design the replicate angles, singular values and both
kinds of intervals agree to 2.5e-15 of their largest value; when the pass
summed the resampling deviations in single precision, in the source's
chunks, they differed by up to 2.5e-7.  So ``RTOL = 1e-9`` with an absolute
floor of ``1e-9`` times a quantity's largest value (lower angle bounds can
be near zero) leaves a margin of 1e5 over rounding and catches a
single-precision or chunk-dependent sum, or a switched method.  The pairs
bootstrap needs the rows in memory: on a source it raises an error naming
the method and what works there.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats import config, policy
from jdr_stats.streams._sources import ArraySource
from jdr_stats.exceptions import RowsNotInMemoryError
from jdr_stats.inference import poisson_bootstrap as pmod

from .test_storage_invariance import _frame, _models

pytestmark = pytest.mark.equality

RTOL = 1e-9
ATOL_OF_MAX = 1e-9


def _close(got, want, what: str) -> None:
    got, want = np.asarray(got, dtype=float), np.asarray(want, dtype=float)
    assert got.shape == want.shape, what
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=what)
    ok = ~np.isnan(want)
    atol = ATOL_OF_MAX * float(np.max(np.abs(want[ok]), initial=0.0))
    np.testing.assert_allclose(got[ok], want[ok], rtol=RTOL, atol=atol, err_msg=what)


@pytest.fixture(scope="module")
def fits(tmp_path_factory):
    import dask

    df = _frame(600, 8, 6, 2, seed=5)
    with dask.config.set(scheduler="synchronous"):
        models = _models(df, tmp_path_factory.mktemp("bootstore"))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", jdr.exceptions.JDRWarning)
            yield {where: model.fit(2) for where, model in models.items()}


def test_poisson_bootstrap_same_numbers_in_every_storage(fits):
    import dask

    with dask.config.set(scheduler="synchronous"):
        boots = {where: fit.bootstrap(n_boot=49, seed=11, method="poisson",
                                      interval="calibrated")
                 for where, fit in fits.items()}
    want = boots.pop("memory")
    assert want.n_failed == 0
    for where, got in boots.items():
        assert (got.method, got.n_failed) == ("poisson", want.n_failed), where
        for name in ("angles_a", "angles_b", "singular_values"):
            _close(getattr(got, name), getattr(want, name), f"{where}: {name}")
        for interval in ("percentile", "calibrated"):
            g, w = got.conf_int(interval=interval), want.conf_int(interval=interval)
            assert list(g.index) == list(w.index), where
            _close(g[["lower", "upper"]], w[["lower", "upper"]], f"{where}: {interval}")
            _close(pd.Series(got.max_angle_bound(interval=interval)),
                   pd.Series(want.max_angle_bound(interval=interval)),
                   f"{where}: {interval} bound")


def test_pairs_bootstrap_on_a_source_raises_naming_the_method(fits):
    fits["memory"].bootstrap(n_boot=9, seed=1)  # the default, pairs: rows in memory
    for where in ("parquet", "csv chunks", "dask"):
        for kwargs in ({}, {"method": "pairs"}):  # the default is pairs here too
            with pytest.raises(RowsNotInMemoryError,
                               match=r'method="pairs".*method="poisson"'):
                fits[where].bootstrap(n_boot=9, seed=1, **kwargs)


def test_no_bootstrap_without_rows_or_source():
    sim = jdr.simulate.bilinear(300, 4, 3, 1, seed=1)
    bare = jdr.JointDimReduction.from_moments(jdr.Moments.from_arrays(sim.y, sim.a, sim.b))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jdr.exceptions.JDRWarning)
        fit = bare.fit(1)
    for method in ("pairs", "poisson"):
        with pytest.raises(RowsNotInMemoryError, match=method):
            fit.bootstrap(n_boot=9, seed=1, method=method)


def test_poisson_pass_is_bitwise_chunk_independent(monkeypatch):
    # several weight blocks and pieces: a grid that the chunks cut everywhere
    monkeypatch.setattr(policy, "BLOCK_ROWS", 256)
    monkeypatch.setattr(config, "PIECE_ROWS", 96)
    sim = jdr.simulate.bilinear(1000, 4, 3, 1, seed=2)
    cw = np.random.default_rng(0).uniform(0.5, 2.0, 1000)
    runs = [pmod.poisson_moments(ArraySource(sim.y, sim.a, sim.b, batch_rows=rows), 5,
                                 seed=3, case_weights=cw, inner=True)
            for rows in (1000, 333, 97, 1)]
    want = runs.pop(0)
    for got in runs:
        for outer_or_inner in (0, 1):
            for g, w in zip(got[outer_or_inner], want[outer_or_inner]):
                for field in ("mean_y", "mean_a", "var_y", "cov_a", "cov_b", "cross"):
                    np.testing.assert_array_equal(getattr(g, field), getattr(w, field))
