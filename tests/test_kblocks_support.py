"""Support selection of three or more blocks: per-variable robust tests, BH
over all blocks' variables."""

import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr

NAMES = ("g", "l", "c")


def _sim(m=1000, widths=(8, 10, 8), seed=0, dist="gauss", equal=False):
    rng = np.random.default_rng(seed)
    xs = [rng.standard_t(5, size=(m, n)) / np.sqrt(5 / 3) if dist == "t5"
          else rng.normal(size=(m, n)) for n in widths]
    betas = []
    for n in widths:
        b = np.zeros(n)
        b[:3] = 1.0 if equal else rng.normal(size=3)
        betas.append(b / np.linalg.norm(b))
    u = [x @ b for x, b in zip(xs, betas)]
    y = u[0] * u[1] + u[1] * u[2] + u[0] * u[1] * u[2] + 0.5 * rng.normal(size=m)
    return y, xs


def test_selects_the_active_variables_and_reports():
    y, xs = _sim(equal=True)
    res = jdr.JointDimReduction.from_blocks(y, dict(zip(NAMES, xs))).select_support(
        rank=1, fdr=0.1, independent_blocks=True)
    tab = res.table
    assert list(tab.columns) == ["statistic", "df", "pvalue", "qvalue", "selected"]
    assert tab.index.names == ["block", "variable"]
    assert len(tab) == 26 and (tab["df"] == 1).all()
    for name in NAMES:
        assert {f"{name}{j}" for j in range(3)} <= set(res.support[name])
    assert res.fdr == 0.1 and res.rule == "bh" and res.ranks == {"g": 1, "l": 1, "c": 1}
    text = str(res.summary())
    assert "Benjamini-Hochberg at 0.1" in text and "g: g0" in text
    assert res.to_dict()["support"] == res.support


def test_invariant_to_rescaling_and_shifting_a_block():
    y, xs = _sim(m=600, seed=2)
    base = jdr.JointDimReduction.from_blocks(y, dict(zip(NAMES, xs))).select_support(
        rank=1, independent_blocks=True)
    xs2 = [xs[0] * np.arange(1, 9) + 50.0, xs[1], xs[2]]
    other = jdr.JointDimReduction.from_blocks(y, dict(zip(NAMES, xs2))).select_support(
        rank=1, independent_blocks=True)
    np.testing.assert_allclose(other.table["statistic"], base.table["statistic"], rtol=1e-7)


def test_null_pvalues_are_not_far_from_uniform():
    # one design, the inactive variables' p-values pooled over 20 seeds: 5 x 20 x 3 = 300
    ps = []
    for seed in range(20):
        y, xs = _sim(m=800, seed=100 + seed)
        tab = jdr.JointDimReduction.from_blocks(y, dict(zip(NAMES, xs))).select_support(
            rank=1, independent_blocks=True).table
        ps.extend(tab["pvalue"][[not v.endswith(("0", "1", "2")) or len(v) > 2
                                 for _, v in tab.index]])
    ps = np.asarray(ps)
    rate = np.mean(ps <= 0.05)
    se = np.sqrt(0.05 * 0.95 / ps.size)
    assert abs(rate - 0.05) < 4 * se


def test_arguments_are_checked():
    y, xs = _sim(m=300)
    model = jdr.JointDimReduction.from_blocks(y, dict(zip(NAMES, xs)))
    with pytest.raises(ValueError, match="give rank="):
        model.select_support()
    with pytest.raises(ValueError, match="one test"):
        model.select_support(rank=1, test="marginal")
    with pytest.raises(ValueError, match="rank of block 'g'"):
        model.select_support(rank={"g": 9, "l": 1, "c": 1})
    with pytest.raises(ValueError, match="fdr must be in"):
        model.select_support(rank=1, fdr=1.5, independent_blocks=True)
    with pytest.raises(ValueError, match='"bh" or "by"'):
        model.select_support(rank=1, rule="threshold", independent_blocks=True)
    # each estimator's own tests: the default (the joint estimator) selects
    # with the fit's variable tests, never the per-block estimator's
    for kwargs in ({}, {"independent_blocks": False}):
        joint = model.select_support(rank=1, **kwargs)
        assert joint.to_dict()["settings"]["estimator"] == joint.settings["estimator"] == "joint"
        tests = model.fit(1).drop1().table
        np.testing.assert_array_equal(joint.table["pvalue"].to_numpy(),
                                      tests["pvalue"].to_numpy())
        assert (joint.table["selected"] == (joint.table["qvalue"] <= 0.1)).all()
    with pytest.raises(ValueError, match="fdr must be"):
        model.select_support(rank=1, fdr=1.5)
    with pytest.raises(ValueError, match='"bh" or "by"'):
        model.select_support(rank=1, rule="threshold")
    res = model.select_support(rank=1, independent_blocks=True)
    assert res.to_dict()["settings"]["estimator"] == res.settings["estimator"] == "per-block"
    with pytest.raises(ValueError, match="independent_blocks must be True or False"):
        model.select_support(rank=1, independent_blocks="yes")


@pytest.mark.slow
@pytest.mark.parametrize("dist", ["gauss", "t5"])
def test_fdr_and_power_by_simulation(dist):
    """FDR of BH at 0.1 over all blocks' variables, 3 active of (12, 15, 12):
    the mean FDP within 3 Monte Carlo SEs of 0.1 or below, the power high
    (study_kblock_support has the full table)."""
    rng = np.random.default_rng(535)
    widths = (12, 15, 12)
    active = np.concatenate([np.arange(n) < 3 for n in widths])
    fdp, power = [], []
    for _ in range(200):
        y, xs = _sim(m=1000, widths=widths, seed=int(rng.integers(2**31)), dist=dist)
        sel = jdr.JointDimReduction.from_blocks(y, dict(zip(NAMES, xs))).select_support(
            rank=1, fdr=0.1, independent_blocks=True).table["selected"].to_numpy()
        fdp.append((sel & ~active).sum() / max(sel.sum(), 1))
        power.append((sel & active).sum() / active.sum())
    fdp = np.asarray(fdp)
    assert fdp.mean() <= 0.1 + 3 * fdp.std(ddof=1) / np.sqrt(fdp.size)
    assert np.mean(power) > 0.4


@pytest.mark.parametrize("independent", [True, False])
def test_sparsity_auto_keeps_exactly_the_tested_support(independent):
    """fit(r, sparsity="auto") keeps the variables select_support selects
    (the fitted estimator's tests, BH at fdr) and refits on them; a block
    with fewer selected than its rank stays dense, with a warning."""
    y, xs = _sim(m=1500, equal=True, seed=3)
    model = jdr.JointDimReduction.from_blocks(y, dict(zip(NAMES, xs)))
    tested = model.select_support(rank=1, fdr=0.1, independent_blocks=independent).support
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = model.fit(1, sparsity="auto", fdr=0.1, independent_blocks=independent)
    dense = [n for n in NAMES if len(tested[n]) < 1]
    for name, x in zip(NAMES, xs):
        want = [f"{name}{j}" for j in range(x.shape[1])] if name in dense else tested[name]
        assert res.support[name] == want
        assert res.settings["sparsity"][name] == len(want)
        assert np.asarray(res.directions[name]).shape == (x.shape[1], 1)
    warned = [w for w in caught if issubclass(w.category, jdr.exceptions.SupportSelectionWarning)]
    assert bool(warned) == bool(dense)
    # the refit on the kept variables is the fit of those columns alone
    kept = {n: pd.DataFrame(x, columns=[f"{n}{j}" for j in range(x.shape[1])])[res.support[n]]
            for n, x in zip(NAMES, xs)}
    alone = jdr.JointDimReduction.from_blocks(y, kept).fit(1, independent_blocks=independent)
    for name in NAMES:
        d = np.asarray(res.directions[name])
        rows = [int(v[len(name):]) for v in res.support[name]]
        assert np.allclose(np.abs(d[rows, 0]), np.abs(np.asarray(alone.directions[name])[:, 0]),
                           atol=1e-8)
        assert np.all(np.delete(d[:, 0], rows) == 0)


def test_sparsity_auto_keeps_a_block_without_selection_dense():
    rng = np.random.default_rng(4)
    m = 1200
    xs = [rng.normal(size=(m, 6)) for _ in NAMES]
    y = xs[0][:, 0] * xs[1][:, 0] + 0.5 * rng.normal(size=m)  # block c inactive
    model = jdr.JointDimReduction.from_blocks(y, dict(zip(NAMES, xs)))
    with pytest.warns(jdr.exceptions.SupportSelectionWarning, match="kept dense"):
        res = model.fit(1, sparsity="auto", independent_blocks=True)
    assert res.support["c"] == [f"c{j}" for j in range(6)]
    assert res.support["g"] == ["g0"]
