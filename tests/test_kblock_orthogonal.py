"""fit(..., interactions="orthogonal") of K blocks: every piece formed from
y's least squares residual on [1, every block], the residual's estimation
in the rank tests' influence rows."""

from __future__ import annotations

import re

import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.core.kestimate import block_factors, stacked_pieces
from jdr_stats.fitting._kfit import _jackknife_influences
from jdr_stats.fitting._kwhiten import _aligned, _cross_cov, _whiten_arrays
from jdr_stats.inference.kblock_influence import joint_influences
from jdr_stats.inference.kblock_orthogonal import kblock_residual, residual_influences
from jdr_stats.inference.kblock_rank import block_rank_table_rows, piece_energies

NAMES = ("a", "b", "c")


def _gamma(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return (rng.gamma(2.0, 1.0, size=shape) - 2.0) / np.sqrt(2.0)


def _blocks(m: int, rng: np.random.Generator, n: int = 5, k: int = 3) -> list[np.ndarray]:
    """Skewed blocks sharing one factor (cross correlations 1/2)."""
    f = _gamma(rng, (m, 1))
    return [_gamma(rng, (m, n)) + f for _ in range(k)]


def _model(y, xs):  # type: ignore[no-untyped-def]
    return jdr.JointDimReduction.from_blocks(y, dict(zip(NAMES, xs, strict=False)))


def test_residual_is_orthogonal_to_every_block():
    rng = np.random.default_rng(0)
    xs = _blocks(300, rng)
    y = xs[0][:, 0] * xs[1][:, 0] + xs[2][:, 1] + rng.standard_normal(300)
    e = kblock_residual(y, xs)
    scale = np.abs(y).max() * 300
    assert abs(e.sum()) < 1e-10 * scale
    for x in xs:
        np.testing.assert_allclose(x.T @ e, 0.0, atol=1e-9 * scale)
    # a linear main effect added to y leaves the residual, so the fit, unchanged
    e2 = kblock_residual(y + 3.0 * xs[0][:, 2] - 2.0 * xs[2][:, 0] + 5.0, xs)
    np.testing.assert_allclose(e2, e, atol=1e-9 * np.abs(e).max())


def test_pure_main_effect_gives_rank_zero_where_the_default_rejects():
    """One seeded draw of the study's design (study_kblock_orthogonal) at
    m = 4000: the default rejects rank 0 in the blocks of the main effect,
    orthogonal in none."""
    rng = np.random.default_rng(1)
    xs = _blocks(4000, rng)
    y = xs[0][:, 0] + 0.5 * xs[1][:, 1] + rng.standard_normal(4000)
    model = _model(y, xs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        default = model.fit("auto")
        orth = model.fit("auto", interactions="orthogonal")
    p_default = [default.rank_test_table.tables[n]["pvalue"].iloc[0] for n in NAMES]
    p_orth = [orth.rank_test_table.tables[n]["pvalue"].iloc[0] for n in NAMES]
    assert max(p_default[:2]) < 0.01, p_default  # the blocks of the main effect
    assert min(default.ranks[n] for n in NAMES[:2]) >= 1
    assert min(p_orth) > 0.05, p_orth
    assert orth.ranks == dict.fromkeys(NAMES, 0)
    assert orth.settings["interactions"] == "orthogonal"
    assert orth.settings["influence"]["name"] == "analytic-joint"
    assert "residual" in orth.settings["influence"]["reason"]
    text = str(orth.summary())
    assert re.search(r"Interactions:\s+orthogonal", text), text
    assert "residual on [1, every block]" in text


def test_interaction_found_and_rank_tests_repeat_the_fit():
    rng = np.random.default_rng(2)
    xs = _blocks(1500, rng, n=4)
    y = xs[0][:, 0] * xs[1][:, 0] + xs[0][:, 2] + rng.standard_normal(1500)
    model = _model(y, xs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = model.fit("auto", interactions="orthogonal", independent_blocks=True)
    assert res.ranks["a"] >= 1 and res.ranks["b"] >= 1
    assert res.settings["influence"]["name"] == "analytic-rows"
    full = res.rank_tests()
    for n in NAMES:  # the full table's rows are the fit's sequential ones
        got = full.tables[n]["pvalue"].to_numpy()[:len(res.rank_test_table.tables[n])]
        np.testing.assert_allclose(got, res.rank_test_table.tables[n]["pvalue"], rtol=1e-9)
    boot = res.bootstrap(5, seed=0, alpha=0.4)  # replicates re-estimate the residual
    assert list(boot.table.index) == [n for n in NAMES if res.ranks[n] > 0]


@pytest.mark.parametrize("independent", [False, True])
def test_two_blocks_through_the_k_engine_match_the_two_block_fit(independent):
    """K = 2 with a rank per block runs the K engine on the residual: its
    directions are those of the two-block orthogonal fit (leading singular
    vectors of the same cross moment)."""
    rng = np.random.default_rng(3)
    a, b = _blocks(1200, rng, n=4, k=2)
    y = a[:, 0] * b[:, 0] + 0.5 * a[:, 1] * b[:, 1] + a[:, 2] + rng.standard_normal(1200)
    model = jdr.JointDimReduction.from_blocks(y, {"a": a, "b": b})
    two = model.fit(2, interactions="orthogonal", independent_blocks=independent)
    kfit = model.fit({"a": 2, "b": 1}, interactions="orthogonal",
                     independent_blocks=independent)
    assert isinstance(kfit._impl, jdr.fitting._kfit.KBlockFit)
    angles_a = jdr.metrics.principal_angles(np.asarray(two.directions_a),
                                            np.asarray(kfit.directions["a"]))
    angles_b = jdr.metrics.principal_angles(np.asarray(two.directions_b)[:, :1],
                                            np.asarray(kfit.directions["b"]))
    assert np.max(angles_a) < 1e-6 and np.max(angles_b) < 1e-6
    # the stein fit of a rank per block differs: the residual is what is fitted
    stein = model.fit({"a": 2, "b": 1}, independent_blocks=independent)
    assert np.max(jdr.metrics.principal_angles(np.asarray(stein.directions["a"]),
                                               np.asarray(kfit.directions["a"]))) > 1e-3


def _influences(m: int, estimator: str, seed: int = 3):  # type: ignore[no-untyped-def]
    """Analytic (with and without the residual's term) and jackknife
    influences of a small orthogonal K-block fit."""
    rng = np.random.default_rng(seed)
    xs = _blocks(m, rng, n=2)
    y = xs[0][:, 0] + 0.5 * xs[1][:, 1] + xs[0][:, 1] * xs[1][:, 0] + rng.standard_normal(m)
    labels = [[f"{n}{j}" for j in range(2)] for n in NAMES]
    zs, _ = _whiten_arrays(xs, None, list(NAMES), labels, "sample", estimator)
    e = kblock_residual(y, xs)
    cc = _cross_cov(zs, np.full(m, 1.0 / m)) if estimator == "joint" else None
    fac = block_factors(e, zs, w=None, route="tensor", weighting="sqrt", cross_cov=cc,
                        main_effects=False, tests=None)
    stacked = stacked_pieces(e, zs, fac, cross_cov=cc)
    jack = _jackknife_influences(xs, y, None, list(NAMES), labels, "sample", estimator, fac,
                                 stacked, orthogonal=True)
    plain = joint_influences(e, zs, fac, cross_cov=cc, joint=estimator == "joint")
    extra = residual_influences(e, zs, fac, cross_cov=cc)
    return e, zs, fac, stacked, jack, plain, extra


def _rel(x: np.ndarray, ref: np.ndarray) -> float:
    return float(np.sqrt(np.mean((x - ref) ** 2) / np.mean(ref ** 2)))


@pytest.mark.parametrize("estimator", ["joint", "per-block"])
def test_analytic_influences_match_the_jackknife(estimator):
    """The analytic rows with the residual's term against the delete-one
    refits (which re-estimate the residual and the whitening): equal to
    first order (a few per cent apart at m = 200, the rank tests' p-values
    close); without the term they are off by several times more."""
    e, zs, fac, stacked, jack, plain, extra = _influences(200, estimator)
    for k in range(3):
        with_term = _rel(plain[k] + extra[k], jack[k])
        without = _rel(plain[k], jack[k])
        assert with_term < 0.1, (k, with_term)
        assert without > 3.0 * with_term, (k, without, with_term)
        rho = piece_energies(e, zs, k, fac)
        p_an = block_rank_table_rows(plain[k] + extra[k], stacked[k], k, fac, rho)["pvalue"]
        p_jk = block_rank_table_rows(jack[k], stacked[k], k, fac, rho)["pvalue"]
        np.testing.assert_allclose(p_an, p_jk, atol=0.08)


def _weighted_pieces(y, xs, w, estimator, fac=None):  # type: ignore[no-untyped-def]
    """The orthogonal pieces with rows weighted by ``w`` (the residual by
    weighted least squares, the whitening by the weighted moments, turned
    to the unweighted fit's)."""
    labels = [[f"{n}{j}" for j in range(x.shape[1])] for n, x in zip(NAMES, xs, strict=True)]
    _, white = _whiten_arrays(xs, None, list(NAMES), labels, "sample", estimator)
    ref = [white.maps[k].solve_t(np.eye(x.shape[1])) for k, x in enumerate(xs)]
    zs, _ = _aligned(*_whiten_arrays(xs, w, list(NAMES), labels, "sample", estimator), ref)
    wn = w / w.sum()
    design = np.column_stack([np.ones(len(y)), *xs]) * np.sqrt(wn)[:, None]
    coef = np.linalg.lstsq(design, y * np.sqrt(wn), rcond=None)[0]
    e = y - np.column_stack([np.ones(len(y)), *xs]) @ coef
    cc = _cross_cov(zs, wn) if estimator == "joint" else None
    if fac is None:
        fac = block_factors(e, zs, w=None, route="tensor", weighting="sqrt", cross_cov=cc,
                            main_effects=False, tests=None)
    return fac, zs, e, cc, stacked_pieces(e, zs, fac, cross_cov=cc, w=w)


@pytest.mark.parametrize("estimator", ["joint", "per-block"])
def test_analytic_influences_are_the_derivative_of_the_pieces(estimator):
    """With the rows' own shares kept, the analytic rows (whitening, centring,
    Hermite correction and the residual's coefficients) are the exact
    derivative of the pieces in a row's weight: a finite difference."""
    m = 150
    rng = np.random.default_rng(5)
    xs = _blocks(m, rng, n=2)
    y = xs[0][:, 0] + xs[0][:, 1] * xs[1][:, 0] + rng.standard_normal(m)
    ones = np.ones(m)
    fac, zs, e, cc, base = _weighted_pieces(y, xs, ones, estimator)
    rows = joint_influences(e, zs, fac, cross_cov=cc, joint=estimator == "joint",
                            share_left_out=0.0)
    extra = residual_influences(e, zs, fac, cross_cov=cc)
    step = 1e-6
    for i in (0, 31, 77):
        w = ones.copy()
        w[i] += step
        moved = _weighted_pieces(y, xs, w, estimator, fac)[4]
        for k in range(3):
            numeric = (moved[k] - base[k]) / step * m
            scale = np.abs(numeric).max()
            np.testing.assert_allclose(rows[k][i] + extra[k][i], numeric, atol=1e-4 * scale)
            assert np.abs(rows[k][i] - numeric).max() > 1e-2 * scale  # the term matters


def test_refusals_name_the_argument():
    rng = np.random.default_rng(4)
    xs = _blocks(200, rng, n=3)
    y = xs[0][:, 0] * xs[1][:, 0] + rng.standard_normal(200)
    model = _model(y, xs)
    for value in ("regression", "orthogonal_quadratic"):
        with pytest.raises(ValueError, match=rf'interactions="{value}" is available for two '
                                             "blocks; this model has 3"):
            model.fit(1, interactions=value)
    with pytest.raises(ValueError, match="main_effects=True"):
        model.fit(1, interactions="orthogonal", main_effects=True)
    with pytest.raises(ValueError, match="sparsity=2"):
        model.fit(1, interactions="orthogonal", sparsity=2)
    weighted = jdr.JointDimReduction.from_blocks(
        y, dict(zip(NAMES, xs, strict=True)), weights=rng.uniform(0.5, 2.0, 200))
    with pytest.raises(ValueError, match='interactions="orthogonal" does not take case '
                                         "weights"):
        weighted.fit(1, interactions="orthogonal")
    adjusted = jdr.JointDimReduction.from_blocks(
        y, dict(zip(NAMES, xs, strict=True)),
        covariates=pd.DataFrame({"age": rng.standard_normal(200)}))
    with pytest.raises(ValueError, match='interactions="orthogonal" does not take '
                                         "covariates"):
        adjusted.fit(1, interactions="orthogonal")
    labels = np.where(y > 0, "yes", "no")
    categorical = jdr.JointDimReduction.from_blocks(labels, dict(zip(NAMES, xs, strict=True)))
    with pytest.raises(ValueError, match="needs a single numeric response"):
        categorical.fit(1, interactions="orthogonal")
    streamed = jdr.JointDimReduction.from_moments(jdr.Moments.from_blocks(y, xs))
    with pytest.raises(ValueError, match="needs the rows in memory"):
        streamed.fit(1, interactions="orthogonal")
    res = model.fit(1, interactions="orthogonal")
    with pytest.raises(ValueError, match=r"drop1\(\) and test_variables\(\).*orthogonal"):
        res.drop1()
    with pytest.raises(ValueError, match="linearly dependent"):
        kblock_residual(y, [xs[0], xs[1], xs[0][:, :1]])
    with pytest.raises(ValueError, match=r"needs more rows.*m = 9"):
        kblock_residual(y[:9], [x[:9] for x in xs])


@pytest.mark.parametrize("independent", [False, True])
def test_refit_route_re_estimates_the_residual(monkeypatch, independent):
    """Where the rank tests read delete-one refits (forced here), each refit
    re-estimates the residual: its tables are the analytic route's to first
    order (the refits' leverage makes them a little more conservative at
    small m: compared at m = 600), and the settings say the residual is
    refitted."""
    from jdr_stats import policy

    rng = np.random.default_rng(6)
    xs = _blocks(600, rng, n=2)
    y = xs[0][:, 0] * xs[1][:, 0] + xs[2][:, 1] + rng.standard_normal(600)
    model = _model(y, xs)
    analytic = model.fit(1, interactions="orthogonal", independent_blocks=independent)
    exact = analytic.rank_tests().tables
    real = policy.kblock_influence
    monkeypatch.setattr(policy, "kblock_influence",
                        lambda *args, **kw: policy.Choice("jackknife", "forced", {}))
    refit = model.fit(1, interactions="orthogonal", independent_blocks=independent)
    tests = refit.rank_tests()
    monkeypatch.setattr(policy, "kblock_influence", real)
    assert "re-estimating y's residual" in tests.to_dict()["influence"]
    for n in NAMES:
        np.testing.assert_allclose(tests.tables[n]["pvalue"], exact[n]["pvalue"], atol=0.05)
