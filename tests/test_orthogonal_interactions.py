"""fit(..., interactions="orthogonal"): the interaction estimand free of linear
main effects, its influence rows and its rank test."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats.exceptions import RankSelectionWarning
from jdr_stats.inference.orthogonal_rank import (
    influence_rows,
    orthogonal_design,
    orthogonal_rank_tests,
    orthogonal_residual,
)


def _design(kind: str, m: int, rng: np.random.Generator, n: int = 6):
    """Two blocks sharing one factor (cross correlations 1/2)."""
    if kind == "gaussian":
        draw = rng.standard_normal
    else:  # standardised centred Gamma(2): skewed

        def draw(size):
            return (rng.gamma(2.0, 1.0, size=size) - 2.0) / np.sqrt(2.0)
    f = draw((m, 1))
    return draw((m, n)) + f, draw((m, n)) + f


def _main_effect(a, b, rng):
    return a[:, 0] + 0.5 * b[:, 1] + rng.standard_normal(a.shape[0])


def test_residual_is_orthogonal_to_the_design():
    rng = np.random.default_rng(0)
    a, b = _design("gamma", 300, rng)
    e = orthogonal_residual(_main_effect(a, b, rng), a, b)
    scale = np.abs(np.hstack([a, b])).max() * np.abs(e).max() * 300
    assert abs(e.sum()) < 1e-10 * scale
    assert np.abs(np.hstack([a, b]).T @ e).max() < 1e-10 * scale


@pytest.mark.parametrize("independent", [False, True])
def test_point_estimate_is_the_fit_of_the_residual(independent):
    rng = np.random.default_rng(1)
    a, b = _design("gamma", 800, rng)
    y = _main_effect(a, b, rng) + (a[:, 2] * b[:, 3])
    res = jdr.JointDimReduction(y, a, b).fit(2, interactions="orthogonal",
                                            independent_blocks=independent)
    des = orthogonal_design(y, a, b, joint=not independent)
    ref = jdr.JointDimReduction(des.e, a, b).fit(2, independent_blocks=independent)
    sv = np.asarray(res.singular_values)
    np.testing.assert_allclose(sv, np.asarray(ref.singular_values), rtol=1e-10, atol=1e-14)
    # the test's own coordinates give the fit's X_lin (its singular values)
    np.testing.assert_allclose(des.s, sv, rtol=1e-8, atol=1e-12 * sv.max())


@pytest.mark.parametrize("independent", [False, True])
def test_linear_main_effects_leave_the_estimate_unchanged(independent):
    """Adding any linear function of the blocks to y changes nothing (the
    default's estimate moves on this skewed correlated design)."""
    rng = np.random.default_rng(2)
    a, b = _design("gamma", 1000, rng)
    y = a[:, 1] * b[:, 2] + rng.standard_normal(1000)
    shift = 3.0 * a[:, 0] - 2.0 * b[:, 4] + 0.7 * a[:, 5] + 5.0
    fit = {est: [jdr.JointDimReduction(yy, a, b).fit(1, interactions=est,
                                                    independent_blocks=independent)
                 for yy in (y, y + shift)] for est in ("stein", "orthogonal")}
    s0, s1 = (np.asarray(r.coef_matrix) for r in fit["orthogonal"])
    np.testing.assert_allclose(s1, s0, atol=1e-9 * np.abs(s0).max())
    d0, d1 = (np.asarray(r.coef_matrix) for r in fit["stein"])
    assert np.abs(d1 - d0).max() > 10 * np.abs(s1 - s0).max() + 1e-3


def test_influence_rows_mean_zero_and_sandwich_matches_monte_carlo():
    """Under a pure main effect on the Gamma design, the covariance of the
    rows' mean matches the Monte Carlo covariance of the estimate; rows
    without the main effects' term (cross products not residualised on
    [1, a, b]) add ``sigma^2 Gamma Gamma^T`` (homoscedastic noise), so their
    trace is larger in every sample."""
    rng = np.random.default_rng(3)
    m, reps = 1500, 250
    ests, sand, naive = [], [], []
    for _ in range(reps):
        a, b = _design("gamma", m, rng)
        des = orthogonal_design(_main_effect(a, b, rng), a, b)
        fixed = dataclasses.replace(des, g_a=np.eye(6), g_b=np.eye(6), u=np.eye(6),
                                    v=np.eye(6))
        psi, c = influence_rows(fixed, 0)
        # the rows' sample mean is zero up to the constant +c (see influence_rows)
        np.testing.assert_allclose(psi.mean(0), -c, atol=1e-10 * np.abs(psi).max())
        psi = psi - psi.mean(0)
        ests.append(c)
        sand.append(np.trace(psi.T @ psi) / m)
        w = des.w
        q = (w[:, :6, None] * w[:, None, 6:]).reshape(m, -1) * des.e[:, None]
        q = q - q.mean(0)
        naive.append(np.trace(q.T @ q) / m)
    ests = np.asarray(ests)
    mc = m * np.trace(np.cov(ests.T))
    ratio = mc / np.mean(sand)
    # relative SE of a variance from 250 heavy-tailed draws: about 0.1
    assert 0.75 < ratio < 1.3, ratio
    assert np.all(np.asarray(naive) > np.asarray(sand))


def test_rank_test_under_a_main_effect_on_a_skewed_design():
    """m = 4000, Gamma design, y = a0 + 0.5 b1 + noise: the default rejects
    rank 0 in every sample, the orthogonal test's p-values are not all tiny."""
    rng = np.random.default_rng(4)
    orth, stein = [], []
    for _ in range(6):
        a, b = _design("gamma", 4000, rng)
        y = _main_effect(a, b, rng)
        orth.append(orthogonal_rank_tests(y, a, b, max_rank=0).pvalues[0])
        stein.append(jdr.JointDimReduction(y, a, b).fit(1).rank_tests(max_rank=0).pvalues[0])
    assert max(stein) < 1e-3
    assert np.median(orth) > 0.05
    assert min(orth) > 1e-3


def test_gaussian_directions_close_to_the_default():
    rng = np.random.default_rng(5)
    a, b = _design("gaussian", 4000, rng)
    y = a[:, 0] * b[:, 1] + 0.6 * a[:, 2] * b[:, 3] + rng.standard_normal(4000)
    model = jdr.JointDimReduction(y, a, b)
    r0, r1 = model.fit(2), model.fit(2, interactions="orthogonal")
    for x0, x1 in ((r0.directions_a, r1.directions_a), (r0.directions_b, r1.directions_b)):
        ang = np.degrees(jdr.metrics.principal_angles(np.asarray(x0), np.asarray(x1)))
        assert ang.max() < 5.0


def test_fit_auto_settings_and_summary():
    rng = np.random.default_rng(6)
    a, b = _design("gamma", 3000, rng)
    y = 0.5 * (a[:, 0] * b[:, 1] + a[:, 2] * b[:, 3]) + _main_effect(a, b, rng)
    res = jdr.JointDimReduction(y, a, b).fit("auto", interactions="orthogonal")
    assert res.rank == 2
    assert res.rank_method == "orthogonal"
    assert res.settings.interactions.name == "orthogonal"
    assert "interactions" in res.to_dict()["choices"]
    text = str(res.summary())
    assert "Interactions: orthogonal" in text
    tab = res.rank_tests()
    assert tab.method == "orthogonal"
    assert list(tab.table.columns[:3]) == ["statistic", "df", "pvalue"]
    # the default is today's: named "stein", and its numbers are unchanged
    d0 = jdr.JointDimReduction(y, a, b).fit(2)
    d1 = jdr.JointDimReduction(y, a, b).fit(2, interactions="stein")
    np.testing.assert_array_equal(np.asarray(d0.singular_values),
                                  np.asarray(d1.singular_values))
    assert d0.settings.interactions.name == "stein"
    assert "Interactions" not in str(d0.summary())


def test_auto_under_a_main_effect_warns_rank_zero():
    """No interaction: rank 0 is not rejected (at alpha = 0.001, so that a
    false rejection has that probability), rank 0 is returned with a warning."""
    rng = np.random.default_rng(7)
    a, b = _design("gamma", 3000, rng)
    with pytest.warns(RankSelectionWarning, match="orthogonal rank test"):
        res = jdr.JointDimReduction(_main_effect(a, b, rng), a, b).fit(
            "auto", interactions="orthogonal", alpha=0.001)
    assert res.rank == 0


def test_save_and_load_keep_the_estimand(tmp_path):
    rng = np.random.default_rng(8)
    a, b = _design("gaussian", 400, rng)
    res = jdr.JointDimReduction(_main_effect(a, b, rng), a, b).fit(
        1, interactions="orthogonal")
    path = tmp_path / "fit.jdr"
    res.save(path)
    back = jdr.load(path)
    assert back.settings.interactions.name == "orthogonal"
    np.testing.assert_allclose(np.asarray(back.singular_values),
                               np.asarray(res.singular_values))


def test_bad_input():
    rng = np.random.default_rng(9)
    a, b = _design("gaussian", 200, rng)
    y = _main_effect(a, b, rng)
    model = jdr.JointDimReduction(y, a, b)
    with pytest.raises(ValueError, match="interactions must be"):
        model.fit(1, interactions="pairs")
    with pytest.raises(ValueError, match="main_effects=True"):
        model.fit(1, interactions="orthogonal", main_effects=True)
    with pytest.raises(ValueError, match='sparsity="auto"'):
        model.fit(1, interactions="orthogonal", sparsity="auto")
    res = model.fit(1, interactions="orthogonal")
    with pytest.raises(ValueError, match="method='robust'|method=\"orthogonal\""):
        res.rank_tests("robust")
    with pytest.raises(ValueError, match="bootstrap"):
        res.bootstrap(9, seed=0)
    small = jdr.JointDimReduction(y[:13], a[:13], b[:13])
    with pytest.raises(ValueError, match=r"interactions=\"orthogonal\".*m = 13"):
        small.fit(1, interactions="orthogonal")
    # enough rows for the residual, too few for the rank test at k = 0 (d = 36)
    mid = jdr.JointDimReduction(y[:40], a[:40], b[:40])
    with pytest.raises(ValueError, match=r"k=0.*36.*m = 40"):
        mid.fit("auto", interactions="orthogonal")
    three = jdr.JointDimReduction.from_blocks(y, [a, b, a[:, :2] + b[:, :2]])
    with pytest.raises(ValueError, match="two blocks"):
        three.fit(1, interactions="orthogonal_quadratic")
    with pytest.raises(ValueError, match="linearly dependent"):
        orthogonal_residual(y, np.column_stack([a, a[:, 0]]), b)


@pytest.mark.parametrize("independent", [False, True])
def test_quadratic_main_effects_leave_the_quadratic_estimate_unchanged(independent):
    """``orthogonal_quadratic``: adding within-block quadratic functions (and
    linear ones) to y changes nothing; ``orthogonal`` moves."""
    rng = np.random.default_rng(10)
    a, b = _design("gamma", 1200, rng)
    y = a[:, 1] * b[:, 2] + rng.standard_normal(1200)
    shift = a[:, 0] ** 2 - 0.5 * a[:, 2] * a[:, 3] + b[:, 1] ** 2 + a[:, 4]
    coef = {}
    for est in ("orthogonal", "orthogonal_quadratic"):
        coef[est] = [np.asarray(jdr.JointDimReduction(yy, a, b).fit(
            1, interactions=est, independent_blocks=independent).coef_matrix)
            for yy in (y, y + shift)]
    q0, q1 = coef["orthogonal_quadratic"]
    np.testing.assert_allclose(q1, q0, atol=1e-9 * np.abs(q0).max())
    o0, o1 = coef["orthogonal"]
    assert np.abs(o1 - o0).max() > 10 * np.abs(q1 - q0).max() + 1e-3


def test_quadratic_rank_test_under_a_quadratic_main_effect():
    """y = a0^2 + b1^2 + noise on the Gamma design at m = 2000: with the
    per-block whitening the orthogonal test's p-values are tiny (the leak it
    does not remove), the quadratic one's are not, with either whitening."""
    rng = np.random.default_rng(11)
    lin, quad = [], []
    for _ in range(5):
        a, b = _design("gamma", 2000, rng)
        y = a[:, 0] ** 2 + b[:, 1] ** 2 + rng.standard_normal(2000)
        lin.append(orthogonal_rank_tests(y, a, b, joint=False, max_rank=0).pvalues[0])
        for joint in (True, False):
            quad.append(orthogonal_rank_tests(y, a, b, joint=joint, max_rank=0,
                                              quadratic=True).pvalues[0])
    assert np.median(lin) < 1e-3
    assert np.median(quad) > 0.05 and min(quad) > 1e-3


def test_quadratic_with_a_dummy_column_and_too_few_rows():
    rng = np.random.default_rng(12)
    a, b = _design("gamma", 600, rng)
    a[:, 0] = (a[:, 0] > 0.5).astype(float)  # its square is itself: dropped as collinear
    y = a[:, 0] + b[:, 1] ** 2 + a[:, 2] * b[:, 3] + rng.standard_normal(600)
    res = jdr.JointDimReduction(y, a, b).fit(1, interactions="orthogonal_quadratic")
    assert res.settings.interactions.name == "orthogonal_quadratic"
    assert "Interactions: orthogonal_quadratic" in str(res.summary())
    assert res.rank_tests(max_rank=0).pvalues[0] < 1e-6
    small = jdr.JointDimReduction(y[:50], a[:50], b[:50])
    with pytest.raises(ValueError, match=r"orthogonal_quadratic.*55 columns.*m = 50"):
        small.fit(1, interactions="orthogonal_quadratic")


@pytest.mark.parametrize("quadratic", [False, True])
@pytest.mark.parametrize("joint", [True, False])
def test_rank_test_invariant_to_units_shifts_and_row_order(joint, quadratic):
    rng = np.random.default_rng(13)
    a, b = _design("gamma", 700, rng)
    y = 0.4 * a[:, 0] * b[:, 1] + _main_effect(a, b, rng)
    ref = orthogonal_rank_tests(y, a, b, joint=joint, quadratic=quadratic).table
    a2 = a * np.array([1e3, 1.0, 0.01, 1.0, 7.0, 1.0]) + 50.0
    b2 = b[:, ::-1] - 3.0
    perm = rng.permutation(700)
    got = orthogonal_rank_tests(10.0 * y[perm] + 1.0, a2[perm], b2[perm], joint=joint,
                                quadratic=quadratic).table
    np.testing.assert_allclose(got["pvalue"], ref["pvalue"], rtol=1e-6, atol=1e-10)
    np.testing.assert_allclose(got["statistic"] / 100.0, ref["statistic"], rtol=1e-6)
