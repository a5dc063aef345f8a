"""Sparse fits, sparsity="cv" and the main-effects test for three or more blocks."""

import json

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.core._linalg import principal_angles
from jdr_stats.core.ksparse import mode_product, sparse_supports

NAMES = ("genes", "lipids", "clinical")
ACTIVE = (1, 4, 6)


def _sparse_data(m=600, widths=(12, 15, 14), seed=0, noise=0.5, main=0.0):
    """A mixed link (two pairs and the three-way product) of one direction
    per block on the variables ``ACTIVE`` of each block; blocks correlated
    within (AR(1), 0.4)."""
    rng = np.random.default_rng(seed)
    xs = []
    for n in widths:
        z = rng.normal(size=(m, n))
        for j in range(1, n):
            z[:, j] = 0.4 * z[:, j - 1] + np.sqrt(1 - 0.16) * z[:, j]
        xs.append(z)
    us = []
    for n in widths:
        u = np.zeros((n, 1))
        u[list(ACTIVE), 0] = rng.choice([-1.0, 1.0], size=len(ACTIVE)) / np.sqrt(len(ACTIVE))
        us.append(u)
    f = [(x @ u)[:, 0] for x, u in zip(xs, us, strict=True)]
    y = f[0] * f[1] + f[1] * f[2] + f[0] * f[1] * f[2] + main * f[0] \
        + noise * rng.normal(size=m)
    return y, xs, us


def _model(y, xs, **kw):
    return jdr.JointDimReduction.from_blocks(y, dict(zip(NAMES, xs, strict=True)), **kw)


@pytest.mark.parametrize("independent", [True, False])
def test_sparse_fit_recovers_a_strong_sparse_signal(independent):
    y, xs, us = _sparse_data(m=1200)
    res = _model(y, xs).fit(1, sparsity=3, independent_blocks=independent)
    assert res.sparsity == {n: 3 for n in NAMES}
    for k, n in enumerate(NAMES):
        assert res.support[n] == [f"{n}{j}" for j in ACTIVE]
        d = res.directions[n].to_numpy()
        outside = np.setdiff1d(np.arange(d.shape[0]), ACTIVE)
        assert np.all(d[outside] == 0.0)
        assert np.max(principal_angles(us[k], d)) < 0.15
        assert res.whitened_bases[n].shape == (d.shape[0], 1)
    dense = _model(y, xs).fit(1, independent_blocks=independent)
    assert dense.sparsity is None and dense.support["genes"] == [f"genes{j}" for j in range(12)]
    for k, n in enumerate(NAMES):  # the sparse fit is the closer to the truth
        assert np.max(principal_angles(us[k], res.directions[n].to_numpy())) < \
            np.max(principal_angles(us[k], dense.directions[n].to_numpy()))


def test_sparse_fit_reports_its_supports():
    y, xs, _ = _sparse_data()
    res = _model(y, xs).fit({"genes": 1, "lipids": 1, "clinical": 1},
                            sparsity={"genes": 3, "lipids": 4, "clinical": 3},
                            independent_blocks=True)
    assert len(res.support["lipids"]) == 4
    text = " ".join(str(res.summary()).split())
    assert "Sparsity:" in text and "lipids=4" in text
    for n in NAMES:
        assert f"Selected, block {n}: {', '.join(res.support[n])}." in text
    out = json.loads(res.to_json())
    assert out["support"] == res.support
    assert out["sparsity"] == {"genes": 3, "lipids": 4, "clinical": 3}
    assert out["sparsity_cv"] is None
    assert res.transform().shape == (600, 3)
    boot = res.bootstrap(4, seed=1, alpha=0.5)
    assert list(boot.table.index) == list(NAMES) and (boot.table["upper"] <= 90).all()
    freq = boot.selection_frequency  # the replicates' kept variables, by block
    assert freq is not None and list(freq) == list(NAMES)
    for n in NAMES:
        assert list(freq[n].index) == list(res.directions[n].index)
        # each replicate keeps the fit's count of variables
        assert np.isclose(freq[n].sum(), res.sparsity[n])


def test_sparse_fit_is_invariant_to_units_shifts_and_column_order():
    y, xs, _ = _sparse_data(seed=2)
    frames = [pd.DataFrame(x, columns=[f"{n}{j}" for j in range(x.shape[1])])
              for n, x in zip(NAMES, xs, strict=True)]
    base = _model(y, frames).fit(1, sparsity=4, independent_blocks=True)
    rng = np.random.default_rng(5)
    moved = []
    for f in frames:
        g = f * rng.uniform(0.1, 10.0, size=f.shape[1]) + rng.normal(size=f.shape[1])
        moved.append(g[list(rng.permutation(f.columns))])
    res = _model(y, moved).fit(1, sparsity=4, independent_blocks=True)
    for n in NAMES:
        assert sorted(res.support[n]) == sorted(base.support[n])
        # the reduced features are the same up to sign
        a = base.transform()[f"{n}_1"].to_numpy()
        b = res.transform()[f"{n}_1"].to_numpy()
        assert abs(abs(np.corrcoef(a, b)[0, 1]) - 1) < 1e-8


def test_integer_weights_are_copies_of_rows():
    y, xs, _ = _sparse_data(m=300, seed=3)
    w = np.random.default_rng(1).integers(1, 3, size=300).astype(float)
    rep = np.repeat(np.arange(300), w.astype(int))
    a = _model(y, xs, weights=w).fit(1, sparsity=3, independent_blocks=True)
    b = _model(y[rep], [x[rep] for x in xs]).fit(1, sparsity=3, independent_blocks=True)
    for n in NAMES:
        assert a.support[n] == b.support[n]
        np.testing.assert_allclose(a.directions[n], b.directions[n], atol=1e-10)


def test_cv_chooses_the_true_count_and_is_seeded():
    y, xs, _ = _sparse_data(m=500, seed=4)
    model = _model(y, xs)
    res = model.fit(1, sparsity="cv", independent_blocks=True, seed=7)
    assert res.sparsity == {n: 3 for n in NAMES}
    table = res.sparsity_cv
    assert list(table.columns[:4]) == ["s", *NAMES] and table["chosen"].sum() == 1
    assert "common counts" in res.settings["sparsity_choice"]["reason"]
    assert "counts chosen by cv" in " ".join(str(res.summary()).split())
    again = model.fit(1, sparsity="cv", independent_blocks=True, seed=7)
    pd.testing.assert_frame_equal(table, again.sparsity_cv)
    assert json.loads(res.to_json())["sparsity_cv"]["chosen"] == table["chosen"].tolist()


def test_cv_refuses_what_it_cannot_do():
    y, xs, _ = _sparse_data(m=300)
    w = np.ones(300)
    with pytest.raises(ValueError, match="case weights"):
        _model(y, xs, weights=w).fit(1, sparsity="cv", independent_blocks=True)
    with pytest.raises(ValueError, match="training rows"):
        _model(y[:12], [x[:12] for x in xs]).fit(1, sparsity="cv", independent_blocks=True,
                                                 whitening="shrinkage")


def test_the_selection_on_a_planted_tensor():
    rng = np.random.default_rng(0)
    t = 0.05 * rng.normal(size=(1, 6, 7, 8))
    t[0, 2, 3, 4] = t[0, 5, 3, 4] = 1.0
    pair = 0.05 * rng.normal(size=(1, 6, 7))
    pair[0, 2, 6] = 1.0
    pieces = {(0, 1, 2): t, (0, 1): pair}
    w = {(p, k): 1.0 for p in pieces for k in p}
    sup, _, score = sparse_supports(pieces, w, [2, 2, 1])
    assert [s.tolist() for s in sup] == [[2, 5], [3, 6], [4]]
    assert all(len(s) == n for s, n in zip(score, (6, 7, 8), strict=True))
    np.testing.assert_allclose(mode_product(t, np.eye(7), 2), t)


def test_main_effects_per_block_and_given_the_others():
    y, xs, _ = _sparse_data(m=500, seed=6, main=1.0)
    for independent in (True, False):
        # whitening="sample": at this width (sum(n_k)/m > 0.05) "auto" would
        # give the per-block estimator under independent_blocks=False too
        res = _model(y, xs).fit(1, independent_blocks=independent, whitening="sample")
        assert res.settings["estimator"] == ("per-block" if independent else "joint")
        t = res.main_effects_test()
        assert t.table.index.tolist() == list(NAMES)
        assert t.pvalues["genes"] < 1e-6
        assert t.joint is (not independent)
        assert ("given the other blocks" in " ".join(str(t).split())) is (not independent)
    perm = _model(y, xs).fit(1, independent_blocks=True)
    a = perm.main_effects_test("permutation", n_perm=49, seed=3)
    b = perm.main_effects_test("permutation", n_perm=49, seed=3)
    pd.testing.assert_frame_equal(a.table, b.table)
    assert a.pvalues["genes"] == 1 / 50
    with pytest.raises(ValueError, match="method must be"):
        perm.main_effects_test("wald")
    with pytest.raises(TypeError, match="seed must be"):
        perm.main_effects_test(seed="x")


def test_main_effects_hold_their_level_under_no_main_effect():
    """Under H0 (an interaction-only link, Gaussian blocks) the three blocks'
    robust p-values over 60 seeded data sets: the rejection rate at 0.05 of
    the 180 tests within 3 MC SEs of 0.05."""
    rej = []
    for seed in range(60):
        y, xs, _ = _sparse_data(m=300, widths=(7, 8, 7), seed=100 + seed)
        t = _model(y, xs).fit(1, independent_blocks=True).main_effects_test("robust")
        rej.extend((t.pvalues < 0.05).tolist())
    rate = np.mean(rej)
    assert abs(rate - 0.05) < 3 * np.sqrt(0.05 * 0.95 / len(rej))
