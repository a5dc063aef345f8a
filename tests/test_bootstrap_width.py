"""Pairs-bootstrap replicates of wide blocks from the rows (inference/_wide_replicates.py)."""

from __future__ import annotations

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats import config
from jdr_stats.core._linalg import ReweightedMoments
from jdr_stats.resampling._engine import draw_counts
from jdr_stats.inference._wide_replicates import DirectMoments


def test_direct_moments_equal_the_feature_product():
    rng = np.random.default_rng(0)
    m, n1, n2 = 2000, 12, 9
    a = rng.standard_normal((m, n1)) * 3 + 1
    b = rng.exponential(1.0, (m, n2))
    y = a[:, 0] * b[:, 0] + rng.standard_normal(m) + 5
    counts = draw_counts(np.random.default_rng(1), 4, m)
    rw = ReweightedMoments(y, a, b, None)
    for one, two in zip(rw.moments(rw.sums(counts)), DirectMoments(y, a, b).moments(counts),
                        strict=True):
        assert two.mean_y == pytest.approx(one.mean_y, rel=1e-13)
        assert two.var_y == pytest.approx(one.var_y, rel=1e-12)
        for f in ("mean_a", "mean_b"):
            np.testing.assert_allclose(getattr(two, f), getattr(one, f), rtol=1e-12, atol=1e-14)
        for f in ("cov_a", "cov_b", "cross"):  # single-precision resampling deviations
            x, z = getattr(one, f), getattr(two, f)
            np.testing.assert_allclose(z, x, rtol=0, atol=2e-6 * np.abs(x).max())


def test_wide_bootstrap_uses_the_rows_and_agrees(monkeypatch):
    sim = jdr.simulate.bilinear(1500, 60, 50, 2, seed=3)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    direct = res.bootstrap(20, seed=4)
    monkeypatch.setattr(config, "BOOT_DIRECT_WIDTH", 10**9)
    features = res.bootstrap(20, seed=4)
    np.testing.assert_allclose(direct.angles_a, features.angles_a, atol=1e-5)
    np.testing.assert_allclose(direct.angles_b, features.angles_b, atol=1e-5)
    np.testing.assert_allclose(direct.singular_values, features.singular_values, rtol=1e-5)


def test_wide_ladle_uses_the_rows_and_agrees(monkeypatch):
    """The ladle's Poisson replicates of wide blocks come from the rows: the same
    weights, the criterion to single-precision rounding."""
    sim = jdr.simulate.bilinear(4000, 60, 50, 2, seed=5)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    direct = model.fit("auto", rank_method="ladle", seed=2).rank_test_table.table
    monkeypatch.setattr(config, "BOOT_DIRECT_WIDTH", 10**9)
    features = model.fit("auto", rank_method="ladle", seed=2).rank_test_table.table
    np.testing.assert_allclose(direct.to_numpy(), features.to_numpy(), rtol=0, atol=1e-6)
