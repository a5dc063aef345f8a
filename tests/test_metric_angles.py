"""Principal angles in a block's covariance metric, for any number of blocks."""

import numpy as np
import pytest

from jdr_stats.core._linalg import Whitening, principal_angles, shrunk_whitening
from jdr_stats.inference._metric import covariance_metric_angles


def _block(seed=0, m=400, n=4):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(m, n)) @ rng.normal(size=(n, n))
    base = rng.normal(size=(n, 2))
    est = base + 0.3 * rng.normal(size=(5, n, 2))  # five "replicates"
    return x, base, est


def _cov(x):
    xc = x - x.mean(axis=0)
    return xc.T @ xc / x.shape[0]


@pytest.mark.parametrize("factor", [1e-300, 1e-150, 1e-3, 7.0, 1e150, 1e300])
def test_rescaling_a_column_leaves_the_angles_unchanged(factor):
    x, base, est = _block()
    ref = covariance_metric_angles(base, est, _cov(x))
    d = np.ones(x.shape[1])
    d[1] = factor
    # the column in other units: x_j -> c x_j, directions u_j -> u_j / c
    cov = _cov(x) * np.outer(d, d) if abs(np.log10(factor)) < 150 else None
    if cov is None:  # the covariance itself would overflow: give it scaled by powers of two
        scale = np.ones_like(d)
        scale[1] = np.ldexp(1.0, -int(np.frexp(factor)[1]))
        cov = _cov(x * d * scale)
        got = covariance_metric_angles(base / d[:, None], est / d[:, None], cov, scale=scale)
    else:
        got = covariance_metric_angles(base / d[:, None], est / d[:, None], cov)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)
    # angles in raw coordinates are not unit-free (what the metric fixes)
    raw = np.stack([principal_angles(base, e) for e in est])
    raw_scaled = np.stack([principal_angles(base / d[:, None], e / d[:, None]) for e in est])
    if factor != 7.0:
        assert np.max(np.abs(raw - raw_scaled)) > 1e-3


def test_invariant_to_any_invertible_map_of_the_columns():
    x, base, est = _block(seed=1)
    g = np.random.default_rng(9).normal(size=(4, 4))
    ref = covariance_metric_angles(base, est, _cov(x))
    # a -> g a: cov -> g cov g^T, directions -> g^{-T} u (the same features)
    ginv_t = np.linalg.inv(g).T
    got = covariance_metric_angles(ginv_t @ base, np.matmul(ginv_t, est), g @ _cov(x) @ g.T)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-12)


def test_cosines_are_the_canonical_correlations_of_the_features():
    x, base, est = _block(seed=2, n=3)
    angles = covariance_metric_angles(base, est[0], _cov(x))
    f1, f2 = x @ base, x @ est[0]
    q1 = np.linalg.qr(f1 - f1.mean(axis=0))[0]
    q2 = np.linalg.qr(f2 - f2.mean(axis=0))[0]
    canon = np.linalg.svd(q1.T @ q2, compute_uv=False)
    np.testing.assert_allclose(np.cos(angles), canon, rtol=1e-10)


def test_whitening_maps_stacks_and_widths():
    x, base, est = _block(seed=3)
    cov = _cov(x)
    ref = covariance_metric_angles(base, est, cov)
    assert ref.shape == (5, 2)
    np.testing.assert_allclose(covariance_metric_angles(base, est[2], cov), ref[2])
    white = Whitening.from_moments(x.mean(axis=0), cov, "block", list("abcd"))
    np.testing.assert_allclose(covariance_metric_angles(base, est, white), ref, rtol=1e-10)
    # a column in units of 1e-280 and the power-of-two scale a fit keeps on its map
    d = np.array([1e-280, 1.0, 1.0, 1.0])
    scale = np.ldexp(1.0, -np.frexp(d)[1])
    xs = x * d * scale
    scaled = Whitening.from_moments(xs.mean(axis=0), _cov(xs), "block", list("abcd"), scale)
    np.testing.assert_allclose(covariance_metric_angles(base / d[:, None], est / d[:, None],
                                                        scaled), ref, rtol=1e-9)
    # the regularised covariance of a shrinkage map is its metric: D R_t D
    shrunk = shrunk_whitening(x.mean(axis=0), cov, 10, "shrinkage", "block", list("abcd"))
    d = shrunk.sd
    r_t = (1 - shrunk.shrinkage) * cov / np.outer(d, d) + shrunk.shrinkage * np.eye(4)
    np.testing.assert_allclose(covariance_metric_angles(base, est, shrunk),
                               covariance_metric_angles(base, est, d[:, None] * r_t * d),
                               rtol=1e-9)
    # one direction against a two-dimensional estimate and the reverse
    wide = covariance_metric_angles(base[:, :1], est, cov)
    assert wide.shape == (5, 1)
    np.testing.assert_allclose(covariance_metric_angles(est[0], base[:, :1], cov), wide[0])


def test_bad_input_is_named():
    x, base, est = _block()
    with pytest.raises(ValueError, match="estimate must have 4 rows"):
        covariance_metric_angles(base, est[:, :3], _cov(x))
    with pytest.raises(ValueError, match="cov must be"):
        covariance_metric_angles(base, est, np.eye(3))
    sing = _cov(np.column_stack([x[:, :3], x[:, 0] + x[:, 1]]))
    with pytest.raises(ValueError, match="genes has collinear columns"):
        covariance_metric_angles(base, est, sing, block="genes")
