"""The exact first-order piece of the pooled fit,
``fit(r, main_effects=True, interactions="regression")``
(jdr_stats/inference/first_order.py; theory page "Main effects", section
"The exact first-order piece"; the study studies/study_first_order.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import jdr_stats as jdr
from jdr_stats.fitting._kwhiten import _whiten_arrays
from jdr_stats.inference.first_order import (
    first_order_regression,
    first_order_wald,
    metric_maps,
    n_first_order_columns,
    regression_pieces,
)
from jdr_stats.metrics import principal_angles

REG = {"interactions": "regression"}
WIDTHS = {2: (6, 6), 3: (5, 5, 5)}


def _gamma(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return (rng.gamma(2.0, 1.0, size=shape) - 2.0) / np.sqrt(2.0)


def _design(K: int, m: int, seed: int, *, main: float):
    """Blocks sharing a centred Gamma(2) factor; y bilinear between
    consecutive blocks' first columns, plus ``main`` times every block's
    second column."""
    rng = np.random.default_rng(seed)
    f = _gamma(rng, (m, 1))
    xs = [_gamma(rng, (m, n)) + f for n in WIDTHS[K]]
    y = sum(xs[k][:, 0] * xs[k + 1][:, 0] for k in range(K - 1))
    y = y + main * sum(x[:, 1] for x in xs) + rng.standard_normal(m)
    return np.asarray(y), xs


def _model(y, xs):
    return jdr.JointDimReduction.from_blocks(y, {f"x{k}": x for k, x in enumerate(xs)})


def _zs(xs):
    names = [f"x{k}" for k in range(len(xs))]
    labels = [[f"{n}{j}" for j in range(x.shape[1])] for n, x in zip(names, xs, strict=True)]
    return _whiten_arrays(xs, None, names, labels, "sample", "joint")[0]


def _first_moment_wald(y, z) -> float:
    """The robust Wald statistic of the old piece E[y z_k]."""
    u = z * (y - y.mean())[:, None]
    g = u.mean(axis=0)
    return float(g @ np.linalg.solve(np.cov(u, rowvar=False) / len(y), g))


@pytest.mark.parametrize("K", [2, 3])
def test_bilinear_only_new_piece_within_noise_old_piece_not(K):
    y, xs = _design(K, 4000, seed=K, main=0.0)
    reg = first_order_regression(y, xs)
    zs = _zs(xs)
    for k in range(K):
        crit = stats.chi2.ppf(0.999, WIDTHS[K][k])
        # the regression's piece G_k beta_k against its own sandwich
        assert first_order_wald(reg, k)[0] < crit
    # the third moment of the Gamma factor puts the old first moment far
    # outside its noise in every block
    assert min(_first_moment_wald(y, z) for z in zs) > stats.chi2.ppf(0.999, 6)
    # the fits' main-effects tests read the same
    model = _model(y, xs)
    new = model.fit(1, main_effects=True, **REG).main_effects_test().table["pvalue"]
    old = model.fit(1, main_effects=True).main_effects_test().table["pvalue"]
    assert new.min() > 0.001
    assert old.max() < 0.001


@pytest.mark.parametrize("K", [2, 3])
def test_main_effect_direction_within_15_degrees(K):
    # 15 degrees: about three times the direction's standard error here
    # (sandwich SE of beta_k about 0.02 per entry against |beta_k| = 0.5)
    y, xs = _design(K, 4000, seed=10 + K, main=0.5)
    zs = _zs(xs)
    pieces = regression_pieces(first_order_regression(y, xs), zs, xs)
    maps = metric_maps(zs, xs)
    for k in range(K):
        true = maps[k][:, 1]  # G_k beta_k for beta_k = 0.5 e_1
        new = pieces[(k,)][0]
        old = zs[k].T @ (y - y.mean()) / len(y)

        def deg(v, t=true):
            return float(np.degrees(np.arccos(abs(v @ t) / np.linalg.norm(v)
                                              / np.linalg.norm(t))))

        assert deg(new) < 15.0
        assert deg(old) > deg(new)


@pytest.mark.parametrize("K", [2, 3])
def test_pooled_directions_closer_to_the_truth(K):
    y, xs = _design(K, 4000, seed=20 + K, main=0.5)
    model = _model(y, xs)
    true = np.eye(WIDTHS[K][0])[:, :2]

    def worst(res):
        return max(float(np.degrees(principal_angles(res.directions[n].to_numpy(),
                                                     true[:x.shape[1]]).max()))
                   for n, x in zip(res.block_names, xs, strict=True))

    new = worst(model.fit(2, main_effects=True, **REG))
    old = worst(model.fit(2, main_effects=True))
    assert new < 10.0
    assert new < old


def test_gaussian_design_regression_piece_near_the_first_moment():
    # for a Gaussian design both pieces estimate E[d y / d x] in the metric
    rng = np.random.default_rng(3)
    m = 8000
    f = rng.standard_normal((m, 1))
    a, b = rng.standard_normal((m, 6)) + f, rng.standard_normal((m, 6)) + f
    y = a[:, 0] * b[:, 0] + 0.5 * a[:, 1] + rng.standard_normal(m)
    reg = first_order_regression(y, [a, b])
    zs = _zs([a, b])
    new = regression_pieces(reg, zs, [a, b])[(0,)][0]
    old = zs[0].T @ (y - y.mean()) / m
    # within a few of the old piece's standard errors (about 0.02 per entry)
    assert np.max(np.abs(new - old)) < 0.1


def test_refusals_name_the_argument():
    y, xs = _design(2, 600, seed=1, main=0.5)
    model = _model(y, xs)
    with pytest.raises(ValueError, match=r'rank="auto".*influence rows'):
        model.fit("auto", main_effects=True, **REG)
    res = model.fit(1, main_effects=True, **REG)
    with pytest.raises(ValueError, match=r"rank_tests\(\).*do not carry"):
        res.rank_tests()
    with pytest.raises(ValueError, match='method="poisson"'):
        res.bootstrap(5, method="poisson", seed=0)
    with pytest.raises(ValueError, match='interactions="regression" has none'):
        res.drop1()
    with pytest.raises(ValueError, match="no permutation version"):
        res.main_effects_test("permutation")
    with pytest.raises(ValueError, match="independent_blocks=True"):
        model.fit(1, main_effects=True, independent_blocks=True, **REG)
    need = n_first_order_columns((6, 6))
    small = _model(y[:need], [x[:need] for x in xs])
    with pytest.raises(ValueError, match=f'interactions="regression".*{need} columns'):
        small.fit(1, main_effects=True, **REG)
    k3 = _model(*_design(3, 600, seed=2, main=0.0))
    with pytest.raises(ValueError, match='"regression" with main_effects=True'):
        k3.fit(1, interactions="regression")


def test_repeated_column_across_blocks_is_refused():
    y, xs = _design(2, 600, seed=4, main=0.0)
    xs[1][:, 2] = xs[0][:, 2]
    with pytest.raises(ValueError, match="linearly dependent"):
        first_order_regression(y, xs)


def test_dummy_square_is_dropped():
    y, xs = _design(2, 800, seed=5, main=0.3)
    xs[0][:, 5] = (xs[0][:, 5] > 0).astype(float)
    reg = first_order_regression(y, xs)
    assert reg.n_cols == n_first_order_columns((6, 6)) - 1


def test_invariant_to_shifting_and_rescaling_columns():
    y, xs = _design(3, 1500, seed=6, main=0.5)
    res = _model(y, xs).fit(2, main_effects=True, **REG)
    scale = np.array([1.0, 10.0, 0.1, 3.0, 1e3])
    moved = [x * scale + 7.0 for x in xs]
    res2 = _model(y, moved).fit(2, main_effects=True, **REG)
    for n in res.block_names:
        # a direction u of the columns is u / scale of the rescaled ones
        back = res.directions[n].to_numpy() / scale[:, None]
        assert principal_angles(back, res2.directions[n].to_numpy()).max() < 1e-6


def test_summary_bootstrap_and_main_effects_table():
    y, xs = _design(3, 800, seed=7, main=0.5)
    res = _model(y, xs).fit(2, main_effects=True, **REG)
    text = str(res.summary())
    assert "Interactions:       regression" in text
    assert "no rank test carries the regression" in text
    me = res.main_effects_test()
    assert list(me.table["method"].unique()) == ["Wald (given the products)"]
    assert (me.table["pvalue"] < 1e-6).all()  # main = 0.5 in every block at m = 800
    assert "Wald" in str(me.summary())
    boot = res.bootstrap(4, seed=0, alpha=0.4)
    assert np.isfinite(boot.table["upper"]).all()
    assert res.settings["interactions"] == "regression"
