"""``fit(..., interactions="regression")``: the cross-product coefficients of
the regression on main effects, within-block products and cross products."""

from __future__ import annotations

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats.inference.regression_rank import (
    n_regression_columns,
    regression_design,
    regression_rank_tests,
)


def _gamma(rng, shape):
    return (rng.gamma(2.0, 1.0, size=shape) - 2.0) / np.sqrt(2.0)


def _design(m, rng, n=5, kind="gamma"):
    draw = _gamma if kind == "gamma" else (lambda r, s: r.standard_normal(s))
    f = draw(rng, (m, 1))
    return draw(rng, (m, n)) + f, draw(rng, (m, n)) + f


def _bases(n=5, seed=3):
    rng = np.random.default_rng(seed)
    return (np.linalg.qr(rng.standard_normal((n, 2)))[0],
            np.linalg.qr(rng.standard_normal((n, 2)))[0])


def _link(a, b, u, v):
    ua, vb = a @ u, b @ v
    return (ua[:, 0] * vb[:, 0] + 0.6 * ua[:, 1] * vb[:, 1] + a[:, 0] + 0.5 * b[:, 1]
            + 0.7 * a[:, 1] ** 2 - 0.4 * b[:, 2] * b[:, 3])


@pytest.mark.parametrize("joint", [True, False])
def test_exact_on_a_skewed_noiseless_bilinear_design(joint):
    """Gamma-factor correlated blocks, y bilinear of rank 2 plus linear and
    within-block quadratic main effects, no noise: B = U C V^T to rounding
    and the third singular value is zero; the default's estimand keeps a
    third singular value of the size of its fourth-cumulant bias."""
    rng = np.random.default_rng(0)
    u, v = _bases()
    a, b = _design(20000, rng)
    y = _link(a, b, u, v)
    des = regression_design(y, a, b, joint=joint)
    truth = u @ np.diag([1.0, 0.6]) @ v.T
    np.testing.assert_allclose(des.b_raw, truth, atol=1e-8)
    assert des.s[2] < 1e-8 * des.s[0]
    res = jdr.JointDimReduction(y, a, b).fit(2, interactions="regression",
                                             independent_blocks=not joint)
    np.testing.assert_allclose(np.asarray(res.singular_values), des.s, rtol=1e-8,
                               atol=1e-10 * des.s[0])
    assert np.degrees(jdr.metrics.principal_angles(np.asarray(res.directions_a), u)).max() < 1e-4
    assert np.degrees(jdr.metrics.principal_angles(np.asarray(res.directions_b), v)).max() < 1e-4
    stein = np.asarray(jdr.JointDimReduction(y, a, b).fit(
        2, independent_blocks=not joint).singular_values)
    assert stein[2] > 0.01 * stein[0]


def test_noisy_rank_r_plus_one_value_shrinks_like_one_over_root_m():
    """With noise the third singular value of the whitened B is O(1/sqrt(m)):
    sqrt(m) s_3 stays bounded from m = 2000 to m = 32000 (average of 4)."""
    rng = np.random.default_rng(1)
    u, v = _bases()
    scaled = []
    for m in (2000, 32000):
        vals = []
        for _ in range(4):
            a, b = _design(m, rng)
            y = _link(a, b, u, v) + rng.standard_normal(m)
            vals.append(np.sqrt(m) * regression_design(y, a, b).s[2])
        scaled.append(np.mean(vals))
    assert scaled[1] < 2.0 * scaled[0]
    assert scaled[1] < 3.0


def test_invariant_to_rescaling_shifting_reordering_columns():
    rng = np.random.default_rng(2)
    u, v = _bases()
    a, b = _design(3000, rng)
    y = _link(a, b, u, v) + rng.standard_normal(3000)
    pa, pb = rng.permutation(5), rng.permutation(5)
    sa, sb = rng.uniform(0.1, 10, 5), rng.uniform(0.1, 10, 5)
    a2 = (a * sa + rng.normal(0, 5, 5))[:, pa]
    b2 = (b * sb - 3.0)[:, pb]
    for joint in (True, False):
        r1 = jdr.JointDimReduction(y, a, b).fit(2, interactions="regression",
                                                independent_blocks=not joint)
        r2 = jdr.JointDimReduction(y, a2, b2).fit(2, interactions="regression",
                                                  independent_blocks=not joint)
        np.testing.assert_allclose(np.asarray(r2.singular_values),
                                   np.asarray(r1.singular_values), rtol=1e-8)
        # directions in a2's coordinates map to a's: a2 = a D P (+ shift)
        da = np.asarray(r2.directions_a)
        back_a = np.zeros_like(da)
        back_a[pa] = da
        back_a = back_a * sa[:, None]
        assert jdr.metrics.principal_angles(back_a, np.asarray(r1.directions_a)).max() < 1e-6
        t1 = regression_rank_tests(y, a, b, joint=joint).table
        t2 = regression_rank_tests(y, a2, b2, joint=joint).table
        np.testing.assert_allclose(t2.to_numpy(), t1.to_numpy(), rtol=1e-6)


def test_gaussian_design_agrees_with_the_default():
    """Gaussian blocks: both estimands target U E[d2f/da db] V^T, so the two
    fits' directions are close at m = 20000 and both near the truth."""
    rng = np.random.default_rng(4)
    u, v = _bases()
    a, b = _design(20000, rng, kind="gaussian")
    y = _link(a, b, u, v) + rng.standard_normal(20000)
    model = jdr.JointDimReduction(y, a, b)
    reg, st = model.fit(2, interactions="regression"), model.fit(2)
    s_reg, s_st = np.asarray(reg.singular_values), np.asarray(st.singular_values)
    np.testing.assert_allclose(s_reg[:2], s_st[:2], rtol=0.1)
    ang = jdr.metrics.principal_angles(np.asarray(reg.directions_a), np.asarray(st.directions_a))
    assert np.degrees(ang).max() < 5


def test_auto_and_rank_tests_use_the_regression_test():
    rng = np.random.default_rng(5)
    u, v = _bases()
    a, b = _design(4000, rng)
    y = _link(a, b, u, v) + rng.standard_normal(4000)
    res = jdr.JointDimReduction(y, a, b).fit("auto", interactions="regression")
    assert res.rank == 2
    tab = res.rank_tests()
    assert tab.method == "regression"
    np.testing.assert_allclose(tab.table.to_numpy(),
                               regression_rank_tests(y, a, b).table.to_numpy())
    assert "regression" in str(res.summary())
    with pytest.raises(ValueError, match='method="regression"'):
        res.rank_tests("robust")
    with pytest.raises(ValueError, match="bootstrap"):
        res.bootstrap(9, seed=0)


def test_pure_main_effects_leave_b_unchanged():
    """Adding linear and within-block quadratic functions to y changes B not
    at all (to rounding), on a skewed design."""
    rng = np.random.default_rng(6)
    a, b = _design(1500, rng)
    y = a[:, 1] * b[:, 2] + rng.standard_normal(1500)
    shift = a[:, 0] ** 2 - 0.5 * a[:, 2] * a[:, 3] + b[:, 1] ** 2 + a[:, 4] + 3 * b[:, 0]
    x0 = regression_design(y, a, b).x_mat
    x1 = regression_design(y + shift, a, b).x_mat
    np.testing.assert_allclose(x1, x0, atol=1e-9 * np.abs(x0).max())


def test_errors():
    rng = np.random.default_rng(7)
    a, b = _design(600, rng)
    y = a[:, 0] * b[:, 0] + rng.standard_normal(600)
    need = n_regression_columns(5, 5)
    assert need == 1 + 10 + 30 + 25
    small = jdr.JointDimReduction(y[:need], a[:need], b[:need])
    with pytest.raises(ValueError, match=rf'interactions="regression".*{need} columns.*'
                                         rf"m = {need}"):
        small.fit(1, interactions="regression", whitening="sample")
    # enough rows for the regression, too few for the test's covariance at k = 0
    mid = jdr.JointDimReduction(y[:need + 20], a[:need + 20], b[:need + 20])
    with pytest.raises(ValueError, match=r"k=0.*25.*regressors"):
        mid.fit("auto", interactions="regression", whitening="sample")
    # the auto whitening picks shrinkage for few rows: refused, with the reason
    with pytest.raises(ValueError, match=r'sample-whitened.*"shrinkage"'):
        jdr.JointDimReduction(y[:150], a[:150], b[:150]).fit(1, interactions="regression")
    three = jdr.JointDimReduction.from_blocks(y, [a, b, a[:, :2] + b[:, :2]])
    with pytest.raises(ValueError, match="two blocks"):
        three.fit(1, interactions="regression")
    mom = jdr.JointDimReduction.from_moments(jdr.Moments.from_arrays(y, a, b))
    with pytest.raises(ValueError, match="rows in memory"):
        mom.fit(1, interactions="regression")
    with pytest.raises(ValueError, match=r'interactions="regression".*linearly dependent'):
        regression_design(y, a, np.column_stack([b, a[:, 0]]))
    # dummies that never are 1 together: their product is the constant 0
    a3, b3 = a.copy(), b.copy()
    a3[:, 0] = (a[:, 1] > 0.5).astype(float)
    b3[:, 0] = (a[:, 1] < -0.5).astype(float)
    with pytest.raises(ValueError, match=r"cross products a_j b_l are linearly dependent"):
        regression_design(y, a3, b3)
    with pytest.raises(ValueError, match="regression"):
        jdr.JointDimReduction(y, a, b).fit(1, interactions="regress")
    with pytest.raises(ValueError, match="max_rank"):
        regression_rank_tests(y, a, b, max_rank=5)


def test_sandwich_matches_the_monte_carlo_covariance():
    """Gamma design, heteroscedastic noise: the mean sandwich covariance of
    vec(B') (influence rows / m) matches the Monte Carlo covariance of the
    estimate over 150 samples (trace within 15 %, MC relative SE ~ 5 %)."""
    rng = np.random.default_rng(8)
    u, v = _bases()
    est, sand = [], []
    for _ in range(150):
        a, b = _design(1500, rng)
        y = _link(a, b, u, v) + (1 + 0.5 * np.abs(a[:, 2])) * rng.standard_normal(1500)
        des = regression_design(y, a, b)
        # the fixed metric's coefficients: B in raw coordinates
        est.append(des.b_raw.reshape(-1))
        lin = np.linalg.inv(np.linalg.cholesky(np.cov(a.T, bias=True))).T
        lin_b = np.linalg.inv(np.linalg.cholesky(np.cov(b.T, bias=True))).T
        tmap = np.kron(lin, lin_b)  # vec(L_a^{-T} B' L_b^{-1}) = tmap vec(B')
        sand.append(tmap @ (des.psi.T @ des.psi) @ tmap.T / 1500**2)
    mc = np.cov(np.asarray(est).T)
    ratio = np.trace(np.mean(sand, axis=0)) / np.trace(mc)
    assert 0.85 < ratio < 1.15, ratio
