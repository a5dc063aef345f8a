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
    a_hat, b_hat = out.estimates["jdr"]["a"], out.estimates["jdr"]["b"]
    assert list(out.estimates["jdr"]) == ["a", "b"]
    assert a_hat.shape == (5, 2) and b_hat.shape == (4, 2)
    assert out.rank == 2 and out.blocks == {"a": 5, "b": 4} and out.nobs == 2000
    text = " ".join(str(out.summary()).split())
    assert "phd ([a, b])" in text and "left singular" not in text  # behind notes="full"
    full = " ".join(str(out.summary(notes="full")).split())
    assert "left singular" in full and "y on a, y on b" in full
    with pytest.raises(ValueError, match="notes must be 'short' or 'full'"):
        out.summary(notes="long")


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
    assert list(fit.columns) == ["rsquared", "rsquared adj", "cv rsquared"]
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    assert fit.loc["jdr", "rsquared"] == pytest.approx(res.fit_measures.rsquared, rel=1e-10)
    assert ((fit["rsquared"] > 0) & (fit["rsquared"] < 1)).all()
    # per block, the baselines miss the interaction: far below the joint fit
    assert fit.loc["sir (blocks)", "rsquared"] < fit.loc["jdr", "rsquared"] - 0.2
    assert out.best == fit["rsquared"].idxmax()
    notes = out.summary().extra_txt
    assert "equal numbers of features" in notes[-1] and "in-sample" in notes[-1]
    assert "explain y about equally well" in notes[-1]  # jdr, phd and save ([a, b]) tie
    assert "jdr" in notes[-1].split("other.")[-1] and "Out of sample: " in notes[-1]
    assert ("cv rsquared: the same regression out of sample, each variant refitted on 4 of 5 "
            "folds (seed 0) and scored on the other.") in notes[-1]
    assert "fit measures" in out.summary().named_frames
    one = compare(sim.y, sim.a, sim.b, 1, methods=("jdr", "sir"))
    assert one.conclusion().startswith("jdr explains y best (R-squared ")
    assert "Out of sample: jdr explains y best (cv R-squared " in one.conclusion()
    record = out.to_dict()
    assert record["best"] == out.best and record["fit"][0]["variant"] == "jdr"
    assert set(record["fit"][0]) == {"variant", "rsquared", "rsquared_adj", "cv_rsquared"}
    assert record["out_of_sample"] == "cv rsquared"
    assert list(compare(sim.y, sim.a, sim.b, 2, cv=None).fit.columns) == ["rsquared",
                                                                         "rsquared adj"]


# -- categorical and multivariate responses, designs too wide for the baselines ------
def _classes(y, labels):
    """y cut at its quantiles into len(labels) classes of (about) equal size."""
    return pd.Categorical(pd.qcut(y, len(labels), labels=labels))


@pytest.fixture(scope="module")
def sim3():
    sim = jdr.simulate.bilinear(1200, 5, 4, 1, seed=11)
    return sim, _classes(sim.y, ["lo", "mid", "hi"])


def test_compare_categorical_response_matches_the_joint_fit_and_sir(sim3):
    sim, y = sim3
    out = compare(y, sim.a, sim.b, 1)
    assert out.fit.index.tolist() == ["jdr", "sir (blocks)", "sir ([a, b])",
                                      "save (blocks)", "save ([a, b])"]
    assert out.to_dict()["methods"] == ["jdr", "sir", "save"]
    # the fit measure is the joint fit's own (Pillai's trace / q, q = 2)
    res = jdr.JointDimReduction(y, sim.a, sim.b).fit(1)
    assert out.fit.loc["jdr", "rsquared"] == pytest.approx(res.rsquared, rel=1e-10)
    # SIR with the classes as slices: as SIR fitted directly on the class codes
    codes = np.asarray(y.codes, float)
    direct_a = np.asarray(jdr.SIR(codes, sim.a).fit(n_slices=3).directions)[:, :1]
    assert principal_angles(out.estimates["sir (blocks)"]["a"], direct_a).max() < 1e-8
    joint = np.asarray(jdr.SIR(codes, np.hstack([sim.a, sim.b])).fit(n_slices=3).directions)
    ua, vb = split_joint_subspace(joint[:, :2], 5, 1)
    assert principal_angles(out.estimates["sir ([a, b])"]["a"], ua).max() < 1e-8
    assert principal_angles(out.estimates["sir ([a, b])"]["b"], vb).max() < 1e-8
    text = " ".join(out.summary().extra_txt)
    assert "Left out of the default methods: phd" in text and "3 classes" in text
    assert "q = 2 class-indicator columns" in text and "Response:" in str(out.summary())
    assert out.best == out.fit["rsquared"].idxmax() and out.best in out.conclusion()


def test_compare_categorical_is_invariant_to_class_labels_and_order(sim3):
    sim, y = sim3
    base = compare(y, sim.a, sim.b, 1).fit["rsquared"]
    rng = np.random.default_rng(0)
    for _ in range(3):
        names = {"lo": "c", "mid": "a", "hi": "b"}
        relabelled = pd.Categorical(
            [names[v] for v in y], categories=list(rng.permutation(["a", "b", "c"])))
        other = compare(relabelled, sim.a, sim.b, 1).fit["rsquared"]
        assert_allclose(other, base, rtol=0, atol=1e-9)


def test_compare_two_classes_fits_phd_on_the_indicator():
    sim = jdr.simulate.bilinear(1000, 4, 3, 1, seed=12)
    y = _classes(sim.y, ["low", "high"])
    out = compare(y, sim.a, sim.b, 1)
    assert "phd (blocks)" in out.fit.index
    # two classes: one SIR direction, so SIR on [a, b] (2r = 2) is not fitted
    assert out.fit["rsquared"].isna().tolist() == [False, False, True] + [False] * 4
    ind = (np.asarray(y) == "high").astype(float)
    direct = np.asarray(jdr.PHD(ind, sim.b).fit().directions)[:, :1]
    assert principal_angles(out.estimates["phd (blocks)"]["b"], direct).max() < 1e-8
    flipped = pd.Categorical(np.asarray(y), categories=["high", "low"])
    assert_allclose(compare(flipped, sim.a, sim.b, 1).fit["rsquared"], out.fit["rsquared"],
                    rtol=0, atol=1e-9)
    assert "0/1 indicator" in " ".join(out.summary().extra_txt)


def test_compare_refuses_phd_for_three_classes_and_n_slices(sim3):
    sim, y = sim3
    with pytest.raises(ValueError, match=r"methods: 'phd'.*3 classes.*got methods="):
        compare(y, sim.a, sim.b, 1, methods=("jdr", "phd"))
    with pytest.raises(ValueError, match=r"n_slices.*3 classes are the slices\); got n_slices=5"):
        compare(y, sim.a, sim.b, 1, n_slices=5)


def test_compare_sir_needing_more_directions_than_classes_give_is_not_fitted(sim3):
    sim, y = sim3  # 3 classes: SIR finds at most 2 directions; [a, b] at rank 2 needs 4
    out = compare(y, sim.a, sim.b, 2, methods=("jdr", "sir"))
    assert out.unfitted == {
        "sir ([a, b])": "SIR finds at most C - 1 = 2 direction(s) from 3 classes; 4 needed"}
    assert out.fit["rsquared"].notna().tolist() == [True, True, False]
    text = " ".join(out.summary().extra_txt)
    assert "Not fitted (NaN rows): sir ([a, b]): SIR finds" in text
    assert "sample covariance" not in text  # no design too wide here


def test_compare_multivariate_response_fits_the_joint_estimator_only(sim):
    y2 = np.column_stack([sim.y, sim.a[:, 0] + np.random.default_rng(1).normal(size=2000)])
    out = compare(y2, sim.a, sim.b, 2)
    assert out.fit.index.tolist() == ["jdr"]
    res = jdr.JointDimReduction(y2, sim.a, sim.b).fit(2)
    assert out.fit.loc["jdr", "rsquared"] == pytest.approx(res.rsquared, rel=1e-10)
    assert "the baselines take one response column" in " ".join(out.summary().extra_txt)
    with pytest.raises(ValueError, match=r"methods: 'sir'.*one response column"):
        compare(y2, sim.a, sim.b, 2, methods=("sir",))


def test_compare_wider_than_the_rows_reports_each_variant_not_fitted():
    """Shaped as nutrimouse (p >> n): no baseline can whiten; jdr fits."""
    wide = jdr.simulate.bilinear(40, 60, 10, 1, seed=3)
    y = _classes(wide.y, ["ppar", "wt"])
    out = compare(y, wide.a, wide.b, 1)
    assert out.unfitted == {
        f"{m} ({v})": why for m in ("sir", "phd", "save")
        for v, why in (("blocks", "a has 60 columns for 40 rows"),
                       ("[a, b]", "70 columns for 40 rows"))}
    fit = out.fit
    assert fit["rsquared"].notna().tolist() == [True] + [False] * 6
    assert out.best == "jdr"
    assert out.conclusion().startswith("jdr is the only variant fitted (R-squared ")
    assert "no baseline could be fitted" in out.conclusion()
    text = str(out.summary())
    assert "Not fitted (NaN rows): sir (blocks): a has 60 columns for 40 rows" in " ".join(
        out.summary().extra_txt)
    assert "max angle a" not in text  # no pair of fitted variants
    assert out.to_dict()["unfitted"]["sir ([a, b])"] == "70 columns for 40 rows"
    with pytest.raises(ValueError, match=r"no variant could be fitted: sir \(blocks\)"):
        compare(y, wide.a, wide.b, 1, methods=("sir",))
    truth = compare(y, wide.a, wide.b, 1, truth=(wide.U, wide.V))
    assert truth.table["nsee"].notna().tolist() == [True] + [False] * 6


def test_compare_partly_too_wide_compares_what_it_can_fit():
    sim = jdr.simulate.bilinear(40, 30, 9, 1, seed=4)  # blocks fit, [a, b] (39) does not
    out = compare(sim.y, sim.a, sim.b, 1, methods=("jdr", "sir"))
    assert out.unfitted == {"sir ([a, b])": "39 columns for 40 rows"}
    assert " of the 2 variants fitted" in out.conclusion()
    assert out.table.index.tolist() == ["jdr vs sir (blocks)"]


def test_compare_only_one_baseline_variant_fitted_says_so():
    sim = jdr.simulate.bilinear(40, 30, 9, 1, seed=4)
    out = compare(sim.y, sim.a, sim.b, 1, methods=("sir",))
    assert out.conclusion().startswith("sir (blocks) is the only variant fitted")
    assert "the others could not be fitted (1 variant, see the note)" in out.conclusion()


def _class_shifts(seed: int = 0):
    """Three classes that shift each block's mean (main effects, no interaction)."""
    rng = np.random.default_rng(seed)
    m = 600
    cls = rng.integers(0, 3, m)
    a, b = rng.standard_normal((m, 6)), rng.standard_normal((m, 5))
    a[:, 0] += cls - 1.0
    b[:, 1] += 0.8 * (cls == 2)
    u, v = np.eye(6)[:, [0]], np.eye(5)[:, [1]]
    return pd.Categorical(cls), a, b, (u, v)


def test_compare_main_effects_variant_sees_the_class_shifts():
    """main_effects=True adds the pooled joint estimator after "jdr"; where the
    classes shift the blocks' means it finds the shifted directions and
    explains y as the per-block SIR does, while jdr (interactions only) sees
    almost nothing."""
    y, a, b, truth = _class_shifts()
    out = compare(y, a, b, 1, main_effects=True, truth=truth)
    assert out.table.index.tolist()[:2] == ["jdr", "jdr (main effects)"]
    table, fit = out.table, out.fit
    assert table.loc["jdr (main effects)", "error a"] < 0.1  # the strong shift
    assert table.loc["jdr (main effects)", "nsee"] < 0.6 < 0.9 < table.loc["jdr", "nsee"]
    assert fit.loc["jdr (main effects)", "rsquared"] > 0.2 > fit.loc["jdr", "rsquared"]
    assert abs(fit.loc["jdr (main effects)", "rsquared"]
               - fit.loc["sir (blocks)", "rsquared"]) < 0.02
    assert any("jdr (main effects): the joint estimator with main_effects=True" in n
               for n in out.summary().extra_txt)
    plain = compare(y, a, b, 1, truth=truth)
    assert "jdr (main effects)" not in plain.table.index


def test_compare_main_effects_needs_jdr_and_a_bool():
    y, a, b, _ = _class_shifts()
    with pytest.raises(ValueError, match=r"main_effects=True .* methods must include 'jdr'"):
        compare(y, a, b, 1, methods=("sir",), main_effects=True)
    with pytest.raises(TypeError, match="main_effects must be True or False"):
        compare(y, a, b, 1, main_effects="yes")


@pytest.mark.parametrize("k", [2, 3])
def test_whole_number_weights_compare_as_repeated_rows(k):
    """Integer case weights are copies of rows: the comparison of a weighted
    model counts the total weight as its observations, as the fit's rules
    do, and its joint and pHd rows equal those of the repeated rows (SIR and
    SAVE slice rows, so theirs do not)."""
    sim = jdr.simulate.bilinear(300, 4, 3, 1, seed=1)
    w = np.random.default_rng(0).integers(1, 4, 300).astype(float)
    rep = np.repeat(np.arange(300), w.astype(int))
    blocks = dict(list({"a": sim.a, "b": sim.b,
                        "c": np.random.default_rng(2).standard_normal((300, 3))}.items())[:k])
    truth = dict(list({"a": sim.U, "b": sim.V, "c": np.eye(3)[:, :1]}.items())[:k])
    weighted = jdr.JointDimReduction.from_blocks(sim.y, blocks, weights=w)
    repeated = jdr.JointDimReduction.from_blocks(
        sim.y[rep], {n: x[rep] for n, x in blocks.items()})
    cw = compare(weighted, 1, cv=None, truth=truth)
    cr = compare(repeated, 1, cv=None, truth=truth)
    assert cw.nobs == cr.nobs == int(w.sum()) == rep.size != 300
    assert cw.to_dict()["nobs"] == rep.size
    assert f"No. observations:   {rep.size} (300 rows, whole-number" in str(cw.summary())
    assert f"No. observations:   {rep.size} " in str(cr.summary())
    rows = ["jdr", "phd (blocks)", f"phd ({'[a, b]' if k == 2 else '[blocks]'})"]
    assert_allclose(cw.fit.loc[rows].to_numpy(), cr.fit.loc[rows].to_numpy(),
                    rtol=0, atol=1e-10)
    errors = ["nsee", *(f"error {n}" for n in blocks)]
    assert_allclose(cw.table.loc[rows, errors].to_numpy(),
                    cr.table.loc[rows, errors].to_numpy(), rtol=0, atol=1e-7)
    # without weights the count is the rows
    assert compare(jdr.JointDimReduction.from_blocks(sim.y, blocks), 1, cv=None).nobs == 300


def test_a_comparison_saved_by_an_earlier_version_loads(sim, tmp_path):
    """A two-block comparison saved before one Comparison served every K
    (``n1, n2`` and one rank in its information, each variant's bases a
    pair) loads with the members of every K."""
    import pickle

    out = compare(sim.y, sim.a, sim.b, 2, methods=["jdr", "sir"], cv=None)
    old = {"_table": out.table, "_cv_note": "", "_fit": out.fit, "_unfitted": {},
           "_notes": [], "_estimates": {v: (b["a"], b["b"])
                                        for v, b in out.estimates.items()},
           "_info": {"Dependent variable:": "y", "Response:": "numeric",
                     "No. observations:": 2000, "n1, n2:": "5, 4", "Rank:": 2,
                     "Methods:": "jdr, sir", "Truth:": "none", "_measure": ""}}
    back = Comparison.__new__(Comparison)
    back.__setstate__(old)
    assert back.to_dict() == out.to_dict()
    assert str(back.summary()) == str(out.summary())
    assert back.blocks == {"a": 5, "b": 4} and back.rank == 2
    again = pickle.loads(pickle.dumps(back))
    assert again.to_dict() == out.to_dict()
    out.save(tmp_path / "c.jdr")
    assert jdr.load(tmp_path / "c.jdr").to_dict() == out.to_dict()
