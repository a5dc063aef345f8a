"""Shared fixtures of the test suite."""

import re

import numpy as np
import pytest

import jdr_stats as jdr


@pytest.fixture(scope="session")
def bilinear_small():
    """A small BILINEAR sample (r=2, n1=6, n2=5, m=3000)."""
    return jdr.simulate.bilinear(3000, 6, 5, 2, seed=12345)


@pytest.fixture
def rng():
    return np.random.default_rng(20261126)


# The equality tests: a computation done two ways (streamed against in memory,
# chunked against one pass, n_jobs > 1 against serial, merged pieces against
# the whole) must agree.  .ci/run runs them a second time with two BLAS
# threads (`-m equality`), where a blocked product may add in another order.
# A test is one when its name says so; `@pytest.mark.equality` marks others.
_EQUALITY = re.compile(
    r"parquet|n_jobs|chunk|stream|memmap|dask|equal|identical|same_numbers|merged|one_shot"
)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if _EQUALITY.search(item.name):
            item.add_marker(pytest.mark.equality)
