"""The regularised joint whitening: the joint estimator
(``independent_blocks=False``) with ``whitening="shrinkage"`` (the OAS-shrunk
covariance of both blocks together), ``"diagonal"`` and ``"none"`` (the
per-block maps), and the ``"auto"`` rule on the joint width."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats import policy
from jdr_stats.core._linalg import oas_shrinkage
from jdr_stats.exceptions import JDRWarning
from jdr_stats.metrics import principal_angles


@pytest.fixture(scope="module")
def wide():
    return jdr.simulate.bilinear(200, 50, 50, 2, design="correlated", rho=0.6, seed=3)


def _fit(model, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JDRWarning)
        return model.fit(*args, **kw)


def _hand_shrinkage_joint(y, a, b, r):
    """The directions of the cross block ``K = (P S P)_ab`` (``P`` the inverse
    of the OAS-shrunk joint covariance) whitened by the partial covariances,
    in the original coordinates: written from the theory page, not the
    library's path."""
    x = np.hstack([a, b])
    xc = x - x.mean(0)
    m, p = xc.shape
    cov = xc.T @ xc / m
    sd = np.sqrt(np.diag(cov))
    corr = cov / np.outer(sd, sd)
    t = oas_shrinkage(float(np.sum(corr**2)), p, m)
    sigma = np.outer(sd, sd) * ((1 - t) * corr + t * np.eye(p))
    z = np.linalg.solve(sigma, xc.T).T          # rows (Sigma_hat^{-1} x)
    yc = y - y.mean()
    n1 = a.shape[1]
    cross = (z[:, :n1] * yc[:, None]).T @ z[:, n1:] / m
    # whitened by the partial covariances G_k = (P_kk)^{-1} = C_k C_k^T:
    # X = C_a^T (P S P)_ab C_b, directions C_k^{-T} (singular vectors)
    prec = np.linalg.inv(sigma)
    ca = np.linalg.cholesky(np.linalg.inv(prec[:n1, :n1]))
    cb = np.linalg.cholesky(np.linalg.inv(prec[n1:, n1:]))
    u, _, vt = np.linalg.svd(ca.T @ cross @ cb)
    return np.linalg.solve(ca.T, u[:, :r]), np.linalg.solve(cb.T, vt[:r].T)


def test_shrinkage_joint_runs_where_the_sample_one_cannot(wide):
    model = jdr.JointDimReduction(wide.y, wide.a, wide.b)
    res = _fit(model, 2, independent_blocks=False)          # auto: (50 + 50)/200 > 0.05
    assert res.whitening == "shrinkage"
    est = res.settings.estimator
    assert est.name == "joint" and "OAS-shrunk covariance of both blocks" in est.reason
    assert "(n1 + n2)/m" in res.settings.whitening.reason
    small = jdr.JointDimReduction(wide.y[:90], wide.a[:90], wide.b[:90])
    assert _fit(small, 2, whitening="sample", independent_blocks=True).whitening == "sample"
    # 52 <= m < n1 + n2 + 2 = 102: the joint estimator with the sample
    # covariance cannot run; an error names what would, never the per-block
    # estimator in its place (policy.block_estimator)
    with pytest.raises(ValueError, match=r"n1 \+ n2 \+ 2 = 102 rows.*got 90.*"
                       r"independent_blocks=True for the per-block estimator"):
        _fit(small, 2, independent_blocks=False, whitening="sample")
    est = _fit(small, 2, independent_blocks=False).settings.estimator
    assert est.name == "joint" and "OAS-shrunk covariance of both blocks" in est.reason


def test_shrinkage_joint_is_the_cross_block_of_the_shrunk_precision(wide):
    """The estimate's subspaces are those of ``(P S P)_ab`` with ``P`` the
    inverse of the shrunk joint covariance (the theory page's definition)."""
    res = _fit(jdr.JointDimReduction(wide.y, wide.a, wide.b), 2, independent_blocks=False,
               whitening="shrinkage")
    ua, vb = _hand_shrinkage_joint(wide.y, wide.a, wide.b, 2)
    assert principal_angles(np.asarray(res.directions_a), ua).max() < 1e-7
    assert principal_angles(np.asarray(res.directions_b), vb).max() < 1e-7


def test_shrinkage_joint_with_more_columns_than_rows():
    # below max(n1, n2) + 2 rows (neither estimator's tests run) and from
    # there to n1 + n2 + 2 rows the default is the joint estimator with the
    # shrunk joint covariance (policy.block_estimator)
    band = jdr.simulate.bilinear(60, 40, 40, 1, seed=1)
    assert _fit(jdr.JointDimReduction(band.y, band.a, band.b), 1).settings.estimator.name \
        == "joint"
    sim = jdr.simulate.bilinear(60, 70, 70, 1, seed=1)
    res = _fit(jdr.JointDimReduction(sim.y, sim.a, sim.b), 1, independent_blocks=False)
    assert res.whitening == "shrinkage"
    ua, vb = _hand_shrinkage_joint(sim.y, sim.a, sim.b, 1)
    assert principal_angles(np.asarray(res.directions_a), ua).max() < 1e-7
    assert principal_angles(np.asarray(res.directions_b), vb).max() < 1e-7
    # the bootstrap's metric: the regularised partial covariances (positive
    # definite although the sample covariance of 80 columns from 60 rows is not)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JDRWarning)
        boot = res.bootstrap(39, seed=0)
    assert boot.n_failed == 0
    assert np.isfinite(boot.conf_int().to_numpy(dtype=float)).all()


def test_diagonal_and_none_joint_are_the_per_block_maps(wide):
    model = jdr.JointDimReduction(wide.y, wide.a, wide.b)
    for kind in ("diagonal", "none"):
        joint = _fit(model, 2, independent_blocks=False, whitening=kind)
        per = _fit(model, 2, independent_blocks=True, whitening=kind)
        assert joint.settings.estimator.name == "joint"
        assert "the joint whitening is then the per-block one" in joint.settings.estimator.reason
        np.testing.assert_array_equal(np.asarray(joint.directions_a), np.asarray(per.directions_a))
        np.testing.assert_array_equal(joint.singular_values, per.singular_values)


def test_auto_rule_reads_the_joint_width():
    assert policy.whitening(500, 10, 20).name == "sample"
    assert policy.whitening(500, 10, 20, joint=True).name == "shrinkage"
    assert policy.whitening(600, 10, 20, joint=True).name == "sample"


def test_rank_tests_of_a_shrunk_joint_fit_whiten_with_the_sample_joint_covariance():
    sim = jdr.simulate.bilinear(400, 10, 15, 1, design="correlated", rho=0.4, seed=2)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    shrunk = _fit(model, "auto", independent_blocks=False, seed=0)   # 25/400 > 0.05
    sample = _fit(model, "auto", independent_blocks=False, whitening="sample", seed=0)
    assert shrunk.whitening == "shrinkage" and sample.whitening == "sample"
    assert shrunk.rank == sample.rank
    t1 = shrunk.rank_tests(max_rank=2).table
    t2 = sample.rank_tests(max_rank=2).table
    np.testing.assert_allclose(t1["statistic"], t2["statistic"], rtol=1e-10)
    np.testing.assert_allclose(t1["pvalue"], t2["pvalue"], rtol=1e-10)


def test_shrinkage_joint_is_unit_free_and_order_free(wide):
    rng = np.random.default_rng(0)
    scale = rng.uniform(0.1, 10, size=50)
    shift = rng.normal(size=50) * 100
    perm = rng.permutation(50)
    base = _fit(jdr.JointDimReduction(wide.y, wide.a, wide.b), 2, independent_blocks=False)
    a2 = (wide.a * scale + shift)[:, perm]
    other = _fit(jdr.JointDimReduction(3 * wide.y - 1, a2, wide.b[:, ::-1]), 2,
                 independent_blocks=False)
    # a^T u = a2^T u2 with u2 = (u / scale)[perm]
    back = (np.asarray(base.directions_a) / scale[:, None])[perm]
    assert principal_angles(np.asarray(other.directions_a), back).max() < 1e-7
    assert principal_angles(np.asarray(other.directions_b)[::-1],
                            np.asarray(base.directions_b)).max() < 1e-7
    rows = rng.permutation(200)
    shuffled = _fit(jdr.JointDimReduction(wide.y[rows], wide.a[rows], wide.b[rows]), 2,
                    independent_blocks=False)
    np.testing.assert_allclose(shuffled.singular_values, base.singular_values, rtol=1e-9)
