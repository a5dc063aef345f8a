"""Simulation of the paper's models, and the subspace metrics."""

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats.metrics import nsee, principal_angles, subspace_error


class TestSimulate:
    def test_same_seed_same_numbers(self):
        s1 = jdr.simulate.bilinear(50, 4, 3, 2, seed=9)
        s2 = jdr.simulate.bilinear(50, 4, 3, 2, seed=9)
        s3 = jdr.simulate.bilinear(50, 4, 3, 2, seed=10)
        np.testing.assert_array_equal(s1.y, s2.y)
        np.testing.assert_array_equal(s1.U, s2.U)
        assert not np.array_equal(s1.y, s3.y)

    def test_bilinear_model_exact_without_noise(self):
        sim = jdr.simulate.bilinear(100, 5, 4, 2, noise=0.0, seed=1)
        np.testing.assert_allclose(sim.y, np.einsum("ij,ij->i", sim.a @ sim.U, sim.b @ sim.V))
        np.testing.assert_allclose(sim.U.T @ sim.U, np.eye(2), atol=1e-12)

    def test_even_link_and_callable(self):
        sim = jdr.simulate.bilinear(100, 5, 4, 2, noise=0.0, link="even", seed=1)
        np.testing.assert_allclose(sim.y, ((sim.a @ sim.U) ** 2 * (sim.b @ sim.V) ** 2).sum(1))
        sim = jdr.simulate.bilinear(100, 5, 4, 1, noise=0.0, link=lambda p, q: np.tanh(p * q), seed=1)
        np.testing.assert_allclose(sim.y, np.tanh((sim.a @ sim.U) * (sim.b @ sim.V)).ravel())

    def test_sparse_rows(self):
        sim = jdr.simulate.bilinear(10, 30, 20, 2, s1=5, s2=3, seed=2)
        assert (np.abs(sim.U).sum(1) > 0).sum() == 5
        assert (np.abs(sim.V).sum(1) > 0).sum() == 3

    @pytest.mark.parametrize("design", ["gaussian", "uniform", "poisson", "correlated"])
    def test_designs_standardised(self, design):
        sim = jdr.simulate.bilinear(200_000, 3, 3, 1, design=design, seed=4)
        np.testing.assert_allclose(sim.a.mean(0), 0, atol=0.02)
        np.testing.assert_allclose(sim.a.var(0), 1, atol=0.03)
        cross = np.mean(sim.a[:, 0] * sim.b[:, 0])
        assert abs(cross - (0.2 if design == "correlated" else 0.0)) < 0.01
        if design == "uniform":
            assert np.abs(sim.a).max() <= np.sqrt(3)
        if design == "poisson":
            assert np.allclose((sim.a * 2) % 1, 0)

    def test_binary(self):
        sim = jdr.simulate.binary(20_000, 4, 4, 2, seed=5)
        d = sim.a @ sim.U - sim.b @ sim.V
        mu = np.exp(-(d**2).sum(1))
        assert set(np.unique(sim.y)) == {0.0, 1.0}
        assert abs(sim.y.mean() - mu.mean()) < 4 * np.sqrt(mu.mean() / 20_000)

    def test_t3_noise(self):
        sim = jdr.simulate.bilinear(20_000, 2, 2, 1, noise=1.0, noise_dist="t3", seed=6)
        z = sim.y - np.einsum("ij,ij->i", sim.a @ sim.U, sim.b @ sim.V)
        assert np.abs(z).max() > 10  # heavy tails

    def test_frame(self):
        sim = jdr.simulate.bilinear(20, 3, 2, 1, seed=1)
        df = sim.frame
        assert list(df.columns) == ["y", "a0", "a1", "a2", "b0", "b1"]
        np.testing.assert_array_equal(sim.exog_b_frame.to_numpy(), sim.b)


class TestMetrics:
    def test_principal_angles_known(self):
        e = np.eye(3)
        t = 0.3
        b = np.array([[np.cos(t)], [np.sin(t)], [0.0]])
        np.testing.assert_allclose(principal_angles(e[:, :1], b), [t])
        np.testing.assert_allclose(principal_angles(e[:, :2], e[:, 1:]), [0.0, np.pi / 2], atol=1e-15)

    def test_scaling_and_basis_invariance(self, rng):
        a = rng.standard_normal((8, 3))
        b = rng.standard_normal((8, 3))
        g = rng.standard_normal((3, 3))
        np.testing.assert_allclose(principal_angles(a, b), principal_angles(a @ g * 7, b), atol=1e-12)

    def test_small_angles_accurate(self):
        t = 1e-9
        a = np.array([[1.0], [0.0]])
        b = np.array([[np.cos(t)], [np.sin(t)]])
        np.testing.assert_allclose(principal_angles(a, b), [t], rtol=1e-6)

    def test_nsee_matches_angles(self, rng):
        u = jdr.simulate.random_basis(10, 3, seed=rng)
        uh = u + 0.1 * rng.standard_normal((10, 3))
        th = principal_angles(u, uh)
        np.testing.assert_allclose(subspace_error(u, uh), np.sqrt(np.sum(np.sin(th) ** 2) / 3))
        v = jdr.simulate.random_basis(6, 3, seed=rng)
        assert nsee(u, uh, v, v) == pytest.approx(subspace_error(u, uh))
        orth = np.linalg.qr(np.column_stack([u, rng.standard_normal((10, 3))]))[0][:, 3:]
        assert subspace_error(u, orth) == pytest.approx(1.0)

    def test_metric_errors(self):
        with pytest.raises(ValueError, match="same number of rows"):
            principal_angles(np.eye(3), np.eye(4))
        with pytest.raises(ValueError, match="linearly independent"):
            subspace_error(np.eye(3)[:, :2], np.ones((3, 2)))
        with pytest.raises(ValueError, match="NaN"):
            principal_angles(np.full((3, 1), np.nan), np.eye(3))
