"""compare(): the joint estimator and the baselines side by side; Figure 3."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose

import jdr_stats as jdr
from jdr_stats.compare import Comparison, compare, split_joint_subspace
from jdr_stats.metrics import principal_angles


@pytest.fixture(scope="module")
def sim():
    return jdr.simulate.bilinear(2000, 5, 4, 2, seed=8)


def test_compare_with_truth(sim):
    out = compare(sim.y, sim.a, sim.b, 2, truth=(sim.U, sim.V))
    assert isinstance(out, Comparison)
    tab = out.table
    assert tab.index.tolist() == [
        "jdr", "sir (blocks)", "sir ([a, b])", "phd (blocks)", "phd ([a, b])",
        "save (blocks)", "save ([a, b])",
    ]
    assert {"nsee", "error a", "error b", "angle a1", "angle b2"} <= set(tab.columns)
    assert_allclose(tab["nsee"], np.maximum(tab["error a"], tab["error b"]))
    # bilinear (odd) link: jdr and pHd on [a, b] recover, pHd per block cannot
    assert tab.loc["jdr", "nsee"] < 0.25
    assert tab.loc["phd ([a, b])", "nsee"] < 0.25
    assert tab.loc["phd (blocks)", "nsee"] > 0.5
    a_hat, b_hat = out.estimates["jdr"]
    assert a_hat.shape == (5, 2) and b_hat.shape == (4, 2)
    assert out.rank == 2
    text = str(out.summary())
    assert "phd ([a, b])" in text and "left singular" in text


def test_compare_without_truth_reports_angles_between_methods(sim):
    frame = sim.frame
    out = compare(frame["y"], sim.exog_a_frame, sim.exog_b_frame, 2,
                  methods=("jdr", "phd"))
    tab = out.table
    assert tab.index.tolist() == [
        "jdr vs phd (blocks)", "jdr vs phd ([a, b])", "phd (blocks) vs phd ([a, b])",
    ]
    assert (tab.to_numpy() >= 0).all() and (tab.to_numpy() <= 90 + 1e-9).all()
    assert tab.loc["jdr vs phd ([a, b])", "max angle a"] < 20
    assert "between the variants" in str(out.summary())


def test_compare_input_errors(sim):
    with pytest.raises(ValueError, match="methods"):
        compare(sim.y, sim.a, sim.b, 2, methods=("jdr", "pca"))
    with pytest.raises(ValueError, match="twice"):
        compare(sim.y, sim.a, sim.b, 2, methods=("sir", "sir"))
    with pytest.raises(ValueError, match="truth"):
        compare(sim.y, sim.a, sim.b, 2, truth=(sim.U, sim.U))
    with pytest.raises(ValueError, match="rank must be between 1 and 4"):
        compare(sim.y, sim.a, sim.b, 5)


def test_split_joint_subspace_is_basis_free_and_exact():
    rng = np.random.default_rng(0)
    u = np.linalg.qr(rng.standard_normal((6, 2)))[0]
    v = np.linalg.qr(rng.standard_normal((4, 2)))[0]
    joint = np.zeros((10, 4))
    joint[:6, :2], joint[6:, 2:] = u, v
    mixed = joint @ rng.standard_normal((4, 4))  # another basis, same span
    ua, vb = split_joint_subspace(mixed, 6, 2)
    assert principal_angles(ua, u).max() < 1e-10
    assert principal_angles(vb, v).max() < 1e-10
    noisy = joint + 0.05 * rng.standard_normal((10, 4))
    a1, _ = split_joint_subspace(noisy, 6, 2)
    a2, _ = split_joint_subspace(noisy @ rng.standard_normal((4, 4)), 6, 2)
    assert principal_angles(a1, a2).max() < 1e-8


def _figure3_errors(link, ms, trials, seed):
    rng = np.random.default_rng(seed)
    out = {}
    for m in ms:
        rows = []
        for _ in range(trials):
            s = jdr.simulate.bilinear(m, 10, 10, 3, noise=0.0, link=link, seed=rng)
            tab = compare(s.y, s.a, s.b, 3, methods=("jdr", "phd"), truth=(s.U, s.V)).table
            rows.append(tab["nsee"])
        out[m] = pd.DataFrame(rows).mean()
    return out


def test_paper_figure3_trends():
    """Figure 3 (n = 10, r = 3, no noise), reduced: 6 trials at m = 1000, 8000.

    Odd link: the joint estimator's NSEE falls like m^-1/2 (factor
    8^-1/2 = 0.35 expected) while pHd on each block stays near the level of
    a random subspace (sqrt(1 - r/n) = 0.84); pHd on [a, b] also falls.
    Even link: the reverse.  Full study: studies/study_paper_figure3.py,
    where the standard errors of these means are <= 0.02.
    """
    ms = (1000, 8000)
    odd = _figure3_errors("bilinear", ms, 6, seed=2024)
    even = _figure3_errors("even", ms, 6, seed=2025)
    lo, hi = ms
    # odd link
    assert odd[hi]["jdr"] / odd[lo]["jdr"] < 0.5
    assert odd[hi]["phd ([a, b])"] / odd[lo]["phd ([a, b])"] < 0.5
    assert odd[lo]["phd (blocks)"] > 0.65 and odd[hi]["phd (blocks)"] > 0.65
    assert odd[hi]["phd (blocks)"] > 0.8 * odd[lo]["phd (blocks)"]
    slope = np.log(odd[hi]["jdr"] / odd[lo]["jdr"]) / np.log(hi / lo)
    assert -0.75 < slope < -0.3
    # even link
    assert even[lo]["jdr"] > 0.6 and even[hi]["jdr"] > 0.6
    assert even[hi]["jdr"] > 0.85 * even[lo]["jdr"]
    assert even[hi]["phd (blocks)"] / even[lo]["phd (blocks)"] < 0.6
    assert even[hi]["phd (blocks)"] < 0.2


def test_compare_reports_a_fit_measure_and_which_method_explains_y_best(sim):
    """Issue 36: a fit measure per variant (the joint fit's R-squared, at
    2r features for every variant) and one sentence naming the best."""
    out = compare(sim.y, sim.a, sim.b, 2, truth=(sim.U, sim.V))
    fit = out.fit
    assert fit.index.tolist() == out.table.index.tolist()
    assert list(fit.columns) == ["rsquared", "rsquared adj"]
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    assert fit.loc["jdr", "rsquared"] == pytest.approx(res.fit_measures.rsquared, rel=1e-10)
    assert ((fit["rsquared"] > 0) & (fit["rsquared"] < 1)).all()
    # per block, the baselines miss the interaction: far below the joint fit
    assert fit.loc["sir (blocks)", "rsquared"] < fit.loc["jdr", "rsquared"] - 0.2
    assert out.best == fit["rsquared"].idxmax()
    notes = out.summary().extra_txt
    assert "equal numbers of features" in notes[-1] and "in-sample" in notes[-1]
    assert "explain y about equally well" in notes[-1]  # jdr, phd and save ([a, b]) tie
    assert "jdr" in notes[-1].split("rows).")[-1]
    assert "fit measures" in out.summary().named_frames
    one = compare(sim.y, sim.a, sim.b, 1, methods=("jdr", "sir"))
    assert one.conclusion().startswith("jdr explains y best (R-squared ")
    record = out.to_dict()
    assert record["best"] == out.best and record["fit"][0]["variant"] == "jdr"
    assert set(record["fit"][0]) == {"variant", "rsquared", "rsquared_adj"}
