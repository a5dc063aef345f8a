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


class TestBattery:
    @pytest.mark.parametrize("design", ["t5", "t6", "laplace"])
    def test_heavy_tailed_designs_standardised(self, design):
        a, b = jdr.simulate.draw_blocks(200_000, 2, 2, design, seed=3)
        np.testing.assert_allclose(a.var(0), 1, atol=0.05)
        excess = {"t5": 6.0, "t6": 3.0, "laplace": 3.0}[design]
        kurt = np.mean(b[:, 0] ** 4) / np.mean(b[:, 0] ** 2) ** 2 - 3
        assert kurt > 0.5 * excess

    def test_ar1_correlation(self):
        a, _ = jdr.simulate.draw_blocks(100_000, 4, 2, "laplace", ar1=0.8, seed=4)
        c = np.corrcoef(a.T)
        np.testing.assert_allclose([c[0, 1], c[0, 2], c[1, 3]], [0.8, 0.64, 0.64], atol=0.02)

    def test_strengths_zero_makes_y_independent(self):
        sim = jdr.simulate.bilinear(50, 3, 3, 2, strengths=[0, 0], noise=1.0, seed=1)
        ref = jdr.simulate.bilinear(50, 3, 3, 2, noise=0.0, seed=1)
        np.testing.assert_array_equal(sim.a, ref.a)
        # with zero strengths y is the noise alone
        assert not np.allclose(sim.y, ref.y)
        sim2 = jdr.simulate.bilinear(50, 3, 3, 2, strengths=[1, 0.3], noise=0.0, seed=1)
        p, q = sim2.a @ sim2.U, sim2.b @ sim2.V
        np.testing.assert_allclose(sim2.y, p[:, 0] * q[:, 0] + 0.3 * p[:, 1] * q[:, 1])

    def test_binary_response_prevalence(self):
        sim = jdr.simulate.bilinear(1000, 3, 3, 1, response="binary", prevalence=0.05, seed=2)
        assert sim.y.mean() == 0.05

    def test_hetero_nonsignal_uses_a_variable_outside_the_support(self):
        sim = jdr.simulate.bilinear(20_000, 5, 5, 1, s1=2, s2=2, noise=1.0, hetero="nonsignal",
                                    hetero_strength=4.0, seed=5)
        j = int(np.flatnonzero(np.abs(sim.U).sum(1) == 0)[0])
        resid = sim.y - ((sim.a @ sim.U) * (sim.b @ sim.V)).sum(1)
        big = np.abs(sim.a[:, j]) > 1.5
        assert resid[big].var() > 2 * resid[~big].var()

    @pytest.mark.parametrize("sc", jdr.simulate.BATTERY, ids=lambda s: s.name)
    def test_every_scenario_draws(self, sc):
        sim = jdr.simulate.scenario(sc.name, 300, 5, 4, 2, seed=0)
        assert sim.a.shape == (300, 5) and np.all(np.isfinite(sim.y))
        assert sim.settings["true_rank"] == 2
        assert np.ptp(sim.y) > 0

    def test_signal_zero_is_rank_zero(self):
        sim = jdr.simulate.scenario("t5", 300, 5, 4, 1, signal=0.0, seed=0)
        assert sim.settings["true_rank"] == 0

    def test_bad_scenario(self):
        with pytest.raises(ValueError, match="name must be one of"):
            jdr.simulate.scenario("nope", 10, 2, 2, 1)
        with pytest.raises(ValueError, match="strengths"):
            jdr.simulate.bilinear(10, 2, 2, 1, strengths=[1, 2])
        with pytest.raises(ValueError, match="ar1"):
            jdr.simulate.draw_blocks(10, 2, 2, ar1=1.0)
