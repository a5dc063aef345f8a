"""Shared fixtures of the test suite."""

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
