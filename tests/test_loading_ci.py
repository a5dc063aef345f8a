"""Bootstrap intervals of the per-SD loadings."""

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.inference._loading_ci import align


@pytest.fixture(scope="module")
def fitted():
    sim = jdr.simulate.bilinear(1500, 4, 3, 2, strengths=[2.0, 1.0], seed=3)
    a = pd.DataFrame(sim.a * [1, 10, 0.1, 5], columns=["w", "x", "y0", "z"])
    b = pd.DataFrame(sim.b, columns=["p", "q", "s"])
    res = jdr.JointDimReduction(sim.y, a, b).fit(2)
    return sim, res, res.bootstrap(199, seed=4)


def test_procrustes_undoes_signs_and_rotations():
    rng = np.random.default_rng(0)
    target = rng.normal(size=(6, 2))
    q, _ = np.linalg.qr(rng.normal(size=(2, 2)))
    reps = np.stack([target @ q, -target, target @ np.diag([1, -1])])
    np.testing.assert_allclose(align(reps, target), np.broadcast_to(target, reps.shape),
                               atol=1e-12)


def test_table_matches_the_summary_loadings(fitted):
    _, res, boot = fitted
    ci = boot.conf_int(what="loadings")
    assert ci.columns.tolist() == ["estimate", "std_err", "lower", "upper"]
    assert ci.index.names == ["block", "variable", "direction"] and len(ci) == 2 * (4 + 3)
    est_a = ci.xs("a", level="block")["estimate"].unstack("direction")
    pd.testing.assert_frame_equal(est_a.loc[res.loadings_a.index], res.loadings_a,
                                  check_names=False, atol=1e-12)
    assert (ci["lower"] <= ci["estimate"] + 1e-12).all()
    assert (ci["estimate"] <= ci["upper"] + 1e-12).all() and (ci["std_err"] > 0).all()
    # conf_int(alpha) narrows with a larger alpha; the default is the subspace table
    wide, narrow = boot.loadings_conf_int(0.05), boot.loadings_conf_int(0.5)
    assert ((narrow["upper"] - narrow["lower"]) <= (wide["upper"] - wide["lower"]) + 1e-12).all()
    assert "largest angle" in boot.conf_int().index.get_level_values("parameter")
    with pytest.raises(ValueError, match='what must be "subspaces" or "loadings"'):
        boot.conf_int(what="params")


def test_intervals_do_not_depend_on_units(fitted):
    """Per-SD loadings are unit-free: rescaling a column leaves the table."""
    sim, _, boot = fitted
    a = pd.DataFrame(sim.a, columns=["w", "x", "y0", "z"])
    b = pd.DataFrame(sim.b, columns=["p", "q", "s"])
    boot2 = jdr.JointDimReduction(sim.y, a, b).fit(2).bootstrap(199, seed=4)
    pd.testing.assert_frame_equal(boot2.conf_int(what="loadings"),
                                  boot.conf_int(what="loadings"), atol=1e-8)


def test_poisson_bootstrap_gives_loading_intervals(fitted):
    _, res, _ = fitted
    ci = res.bootstrap(99, seed=5, method="poisson").conf_int(0.1, what="loadings")
    assert ci.notna().all().all()


@pytest.mark.slow
def test_loading_interval_coverage():
    """r = 1: 95% intervals cover the true per-SD loading (sample SDs) at a
    rate within 3 Monte Carlo SE of 0.95 (or above)."""
    reps, hits = 150, []
    rng = np.random.default_rng(2026)
    for _ in range(reps):
        sim = jdr.simulate.bilinear(800, 4, 3, 1, seed=rng)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
        ci = res.bootstrap(199, seed=rng).conf_int(what="loadings")
        for block, x, truth, est in (("a", sim.a, sim.U, res.directions_a),
                                     ("b", sim.b, sim.V, res.directions_b)):
            sd = x.std(axis=0)
            est_l = np.asarray(est)[:, 0] * sd
            top = np.max(np.abs(est_l))
            true_l = truth[:, 0] / np.linalg.norm(truth[:, 0]) * sd
            true_l *= np.sign(true_l @ est_l)
            tab = ci.xs(block, level="block")
            hits.extend((tab["lower"] * top <= true_l) & (true_l <= tab["upper"] * top))
    cov = np.mean(hits)
    se = np.sqrt(0.95 * 0.05 / len(hits))
    assert cov > 0.95 - 3 * se * 2.6, cov  # entries of one fit are correlated: design effect
