"""Tests of the spectral rank test (``method="spectral"``; theory 6e).

The replicates are checked against an explicit computation (every row's
projected vector formed one by one), the p-values against seeded
simulations (tolerances from the Monte Carlo standard error), and the
table against rescaling, shifting and reordering the columns.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.inference import _rank_spectral as sp
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference.rank_methods import RANK_METHODS, RowOptions

ALPHA = 0.05


def _band_hi(reps: int, level: float = ALPHA, k: float = 2.5) -> float:
    return level + k * np.sqrt(level * (1 - level) / reps) + 0.005


@pytest.fixture(scope="module")
def fit_r2():
    sim = jdr.simulate.bilinear(800, 7, 6, 2, seed=11)
    return jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)


def test_bound_holds_in_every_sample():
    """s_{k+1}(X) <= ||(I - P) X|| for any rank-k projector P: the premise of the test."""
    rng = np.random.default_rng(0)
    for _ in range(50):
        x = rng.standard_normal((9, 7))
        k = int(rng.integers(1, 5))
        q = np.linalg.qr(rng.standard_normal((9, k)))[0]
        s = np.linalg.svd(x, compute_uv=False)
        bound = np.linalg.norm(x - q @ (q.T @ x), 2)
        assert s[k] <= bound * (1 + 1e-12)


@pytest.mark.parametrize("ks", [range(0, 3), range(1, 2), range(2, 4)])
def test_replicates_match_explicit_projection(fit_r2, ks):
    """Each replicate of a pass equals, at every rank k of the pass, the pair
    (||sum y_i (I - P_i) a~_i b~_i'||^2, ||sum y_i a~_i ((I - Q_i) b~_i)'||^2)
    / (m s_y^2) of the data transformed row by row, a~_i = P_i a_i + sa_i
    (I - P_i) a_i and b~_i likewise with sb_i (P_i, Q_i: the top k
    directions of the other half; the pass shares the halves and the signs)."""
    w = _whiten(fit_r2._fit_data, fit_r2.moments)
    y, a, b = w.in_memory()
    work = sp._SpectralBatch(w, ks, np.random.default_rng(3))
    gens = [np.random.default_rng(100 + j) for j in range(3)]
    got = work(gens)
    assert got.shape == (3, len(ks), 2)
    m = w.m
    # explicit: the halves drawn by the same generator, directions from the other half
    # the halves: one bit per row, by blocks of rows, from a word of the generator
    half = sp.row_halves(int(np.random.default_rng(3).integers(2**63 - 1)), 0, m).astype(int)
    dirs = []
    for h in (0, 1):
        rows = half != h
        x = sum(a[i][:, None] * y[i] * b[i][None, :] for i in np.flatnonzero(rows))
        u, _, vt = np.linalg.svd(x / rows.sum())
        dirs.append((u, vt.T))
    for col, k in enumerate(ks):
        pa = [u[:, :k] @ u[:, :k].T for u, _ in dirs]
        qb = [v[:, :k] @ v[:, :k].T for _, v in dirs]
        for j in range(3):
            # the signs: bits of the rows' blocks, from a word of the replicate's generator
            sa, sb = sp.flip_signs(int(np.random.default_rng(100 + j).integers(2**63 - 1)), 0, m)
            left, right = np.zeros((w.n1, w.n2)), np.zeros((w.n1, w.n2))
            for i in range(m):
                p, q = pa[half[i]], qb[half[i]]
                # the data transformed: complement coordinates flipped, each block its sign
                at = p @ a[i] + sa[i] * (a[i] - p @ a[i])
                bt = q @ b[i] + sb[i] * (b[i] - q @ b[i])
                left += y[i] * np.outer(at - p @ at, bt)
                right += y[i] * np.outer(at, bt - q @ bt)
            want = [np.linalg.norm(side, 2) ** 2 / (m * w.var_y) for side in (left, right)]
            assert got[j, col] == pytest.approx(want, rel=1e-9), (k, j)


def test_lanczos_largest_eigenvalue_matches_dense():
    """Above the dense solver's size the largest squared singular value comes
    from Lanczos iterations: equal to the dense one to rounding."""
    rng = np.random.default_rng(0)
    for shape in [(300, 280), (260, 400)]:
        x = rng.standard_normal(shape)
        x[:, 0] *= 1.001  # close leading values, as at a noise edge
        want = np.linalg.norm(x, 2) ** 2
        assert sp._top_eig(x) == pytest.approx(want, rel=1e-12)


def test_selection_rows_are_the_first_rows_of_the_table(fit_r2):
    """fit("auto") stops at the first non-rejection of the same passes: its
    rows equal the first rows of rank_tests with the same seed."""
    from jdr_stats.inference.rank_tests import choose_rank, rank_tests

    data, mom = fit_r2._fit_data, fit_r2.moments
    full = rank_tests(data, mom, method="spectral", seed=4).table
    rank, sel = choose_rank(data, mom, method="spectral", seed=4)
    assert rank == 2
    sel = sel.table
    pd.testing.assert_frame_equal(sel, full.iloc[: len(sel)])
    assert len(full) == 6 and len(sel) == 3


def test_pass_plan_runs_one_rank_past_the_noise_edge(fit_r2):
    w = _whiten(fit_r2._fit_data, fit_r2.moments, rows=False)
    plan = sp.pass_plan(w, 5)
    edge = (np.sqrt(w.n1) + np.sqrt(w.n2)) ** 2
    above = int(np.sum(w.m * w.s ** 2 / w.var_y > edge))
    assert above == 2
    assert plan[0] == range(0, 4)
    assert [k for ks in plan for k in ks] == list(range(6))


def test_long_run_warning_before_the_flips(fit_r2, monkeypatch):
    from jdr_stats import config

    monkeypatch.setattr(config, "LONG_RUN_SECONDS", 1e-4)
    with pytest.warns(jdr.exceptions.LongRunWarning, match="spectral rank tests are expected"):
        fit_r2.rank_tests("spectral", max_rank=2, n_perm=9, seed=1)


def test_statistic_is_the_next_singular_value(fit_r2):
    w = _whiten(fit_r2._fit_data, fit_r2.moments, rows=False)
    t = fit_r2.rank_tests("spectral", max_rank=2, n_perm=19, seed=1).table
    np.testing.assert_allclose(t["statistic"], w.m * w.s[:3] ** 2 / w.var_y, rtol=1e-12)


def test_reproducible_same_numbers_any_batches(fit_r2, monkeypatch):
    a = fit_r2.rank_tests("spectral", max_rank=2, n_perm=39, seed=5).table
    b = fit_r2.rank_tests("spectral", max_rank=2, n_perm=39, seed=5).table
    pd.testing.assert_frame_equal(a, b)
    assert (a["n_flips"] == 39).all()
    from jdr_stats import config

    monkeypatch.setattr(config, "CHUNK_FLOATS", 1)  # one replicate per batch, one row per chunk
    c = fit_r2.rank_tests("spectral", max_rank=2, n_perm=39, seed=5).table
    pd.testing.assert_frame_equal(a, c)
    # the default number of sign flips is 199
    d = fit_r2.rank_tests("spectral", max_rank=0, seed=5).table
    assert d["n_flips"].iloc[0] == 199


def test_invariant_to_units_shifts_and_column_order(fit_r2):
    model = fit_r2.model
    rng = np.random.default_rng(4)
    ya, yb = model.exog_a, model.exog_b
    pa, pb = rng.permutation(ya.shape[1]), rng.permutation(yb.shape[1])
    other = jdr.JointDimReduction(
        -2.0 * model.endog + 5.0,
        ya[:, pa] * rng.uniform(0.1, 10.0, ya.shape[1]) + 3.0,
        yb[:, pb] * rng.uniform(0.1, 10.0, yb.shape[1]) - 1.0,
    ).fit(2)
    t1 = fit_r2.rank_tests("spectral", max_rank=3, n_perm=39, seed=8).table
    t2 = other.rank_tests("spectral", max_rank=3, n_perm=39, seed=8).table
    np.testing.assert_allclose(t1["statistic"], t2["statistic"], rtol=1e-7)
    np.testing.assert_array_equal(t1["pvalue"], t2["pvalue"])


def test_power_at_ranks_below_the_truth(fit_r2):
    t = fit_r2.rank_tests("spectral", max_rank=2, n_perm=39, seed=2).table
    assert (t["pvalue"].iloc[:2] == 1 / 40).all()
    assert t["pvalue"].iloc[2] > ALPHA
    assert fit_r2.model.fit("auto", rank_method="spectral", seed=2).rank == 2


def _pvalues(design: str, k: int, reps: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(reps):
        if k == 0:  # y independent of heavy-tailed blocks, skewed
            a = rng.standard_t(5, (300, 6))
            b = rng.standard_t(5, (300, 5))
            y = rng.exponential(1.0, 300)
        else:
            sim = jdr.simulate.bilinear(300, 6, 5, k, design=design, seed=rng)
            y, a, b = sim.y, sim.a, sim.b
        w = _whiten(jdr.JointDimReduction(y, a, b).data, jdr.JointDimReduction(y, a, b).moments())
        row, _ = RANK_METHODS["spectral"].row(w, k, RowOptions(n_perm=39, rng=rng))
        out.append(row["pvalue"])
    return np.asarray(out)


def test_size_at_rank_zero_is_exact():
    """At k = 0 the sign flips give the exact conditional null for symmetric
    blocks, whatever the response: size alpha within the Monte Carlo band."""
    reps = 300
    pv = _pvalues("t5", 0, reps, 20261126)
    se = np.sqrt(ALPHA * (1 - ALPHA) / reps)
    assert abs(np.mean(pv <= ALPHA) - ALPHA) <= 2.5 * se + 0.005


@pytest.mark.parametrize("design", ["gaussian", "t5"])
def test_size_at_the_true_rank_is_at_most_alpha(design):
    """At k = r >= 1 the test refers a lower bound to the law of the bound:
    its size may be below alpha, never above (within the Monte Carlo band)."""
    reps = 150
    pv = _pvalues(design, 1, reps, 7)
    assert np.mean(pv <= ALPHA) <= _band_hi(reps)


def test_refusals():
    sim = jdr.simulate.bilinear(300, 4, 3, 1, seed=1)
    res1 = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    with pytest.raises(ValueError, match="n_perm"):
        res1.rank_tests("spectral", n_perm=0)


@pytest.mark.slow
def test_paper_bilinear_experiment_2_n500_spectral_finds_r5():
    """The paper's experiment 2 at n1 = n2 = 500 (m = 1e4, r = 5, d/m = 25 at
    k = 4), the sample where the default's guard above d/m = 5 stops at 4
    (theory 10.3): the spectral test rejects r <= 4 and not r <= 5."""
    sim = jdr.simulate.bilinear(10_000, 500, 500, 5, seed=np.random.default_rng([2026, 500, 1]))
    with pytest.warns(jdr.exceptions.AssumptionWarning, match="small sample"):
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(5)
        rt = res.rank_tests("spectral", max_rank=5, n_perm=39, seed=1)
    assert rt.select_rank(0.05) == 5, rt.table


def _wide(m: int = 120, n: int = 50, r: int = 1, seed: int = 0):
    """A design with n1 n2 / m = 20.8 (n = 50, m = 120; its direction is below
    the noise edge 4 n, as any is at m < 4 n)."""
    sim = jdr.simulate.bilinear(m, n, n, r, seed=seed)
    return sim.y + 0.0, sim.a, sim.b


def test_auto_is_the_combined_test_from_the_width_limit(monkeypatch):
    """method='auto' (the default) runs the combined test at n1 n2 / m >= 5
    (policy.rank_method), says so in a note, and is the robust test below;
    fit('auto') reports the method it ran and the choice in its settings.  The
    combined p-value is min(1, 2 min(p_robust, p_spectral)), its columns
    those of the two tests run alone (the robust test with its default pairs
    seed, the spectral test with the seed)."""
    from jdr_stats import policy
    from jdr_stats.inference.rank_tests import resolve_method

    y, a, b = _wide()
    model = jdr.JointDimReduction(y, a, b)
    assert 50 * 50 / 120 >= policy.RANK_COMBINED_MIN_RATIO
    with pytest.warns(jdr.exceptions.AssumptionWarning, match="small sample"):
        res = model.fit(1)
        rt = res.rank_tests(max_rank=3, seed=3)
        spectral = res.rank_tests("spectral", max_rank=3, seed=3).table
        robust = res.rank_tests("robust", max_rank=3).table
    t = rt.table
    assert rt.method == "combined"
    assert any("method='auto': n1 n2 / m = 20.8 >= 5" in n for n in rt.notes)
    np.testing.assert_allclose(t["pvalue_spectral"], spectral["pvalue"], rtol=0, atol=0)
    np.testing.assert_allclose(t["spectral_statistic"], spectral["statistic"], rtol=1e-10)
    np.testing.assert_allclose(t["pvalue_robust"], robust["pvalue"], rtol=1e-10)
    np.testing.assert_allclose(t["statistic"], robust["statistic"], rtol=1e-10)
    want = np.minimum(1, 2 * np.minimum(robust["pvalue"], spectral["pvalue"]))
    np.testing.assert_allclose(t["pvalue"], want, rtol=1e-10)
    with warnings.catch_warnings():  # small sample; no direction above the noise edge
        warnings.simplefilter("ignore", jdr.exceptions.JDRWarning)
        auto = model.fit("auto", seed=3)
    assert auto.rank_method == "combined"
    assert auto.settings.rank_choice.name == "combined"
    assert "Rank method: combined (method='auto'" in str(auto.summary())
    # the rule is the ratio alone: no compute budget, no storage
    name, choice = resolve_method(model.data, res.moments, "auto")
    assert name == "combined" and choice == policy.rank_method(120, 50, 50)
    assert choice.reason.startswith("method='auto': n1 n2 / m = 20.8 >= 5, so the combined test")
    assert choice.inputs == {"nobs": 120.0, "n1": 50.0, "n2": 50.0, "q": 1.0,
                             "ratio": 50 * 50 / 120}
    monkeypatch.setattr(policy, "RANK_COMBINED_MIN_RATIO", 20.9)
    name, choice = resolve_method(model.data, res.moments, "auto")
    assert name == "robust" and "20.8 < 20.9, so the robust test" in choice.reason
    # every other name is itself
    assert resolve_method(model.data, res.moments, "chi2") == ("chi2", None)


def test_auto_streams_the_combined_test_from_a_source():
    """Without the rows in memory the default is still the combined test: its
    sign flips stream over the row source and give the in-memory numbers; a
    model of sums without a source raises, naming rank_method."""
    from jdr_stats.inference.rank_tests import resolve_method

    y, a, b = _wide()
    src = jdr.sources.ArraySource(y, a, b, batch_rows=7)
    streamed = jdr.JointDimReduction.from_source(src)
    name, choice = resolve_method(streamed.data, streamed.moments(), "auto")
    assert name == "combined" and choice is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jdr.exceptions.JDRWarning)
        got = streamed.fit(1).rank_tests(max_rank=2, n_perm=19, seed=3).table
        want = jdr.JointDimReduction(y, a, b).fit(1).rank_tests(max_rank=2, n_perm=19,
                                                                 seed=3).table
    np.testing.assert_allclose(got.to_numpy(float), want.to_numpy(float), rtol=1e-10)
    bare = jdr.JointDimReduction.from_moments(jdr.Moments.from_arrays(y, a, b))
    with pytest.raises(jdr.exceptions.RowsNotInMemoryError, match="rank_method="):
        bare.fit(1).rank_tests(max_rank=1)


def test_combined_size_at_rank_zero_at_most_alpha():
    """The combined test (the default at n1 n2 / m >= 20) rejects H0: r = 0
    at most at alpha when y is independent of heavy-tailed blocks (t5
    blocks, skewed y; 60 x 60, m = 180, n1 n2 / m = 20): Bonferroni over two
    valid tests."""
    rng = np.random.default_rng(20261127)
    reps, rej = 200, 0
    for _ in range(reps):
        a, b = rng.standard_t(5, (180, 60)), rng.standard_t(5, (180, 60))
        y = rng.exponential(1.0, 180)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", jdr.exceptions.AssumptionWarning)
            res = jdr.JointDimReduction(y, a, b).fit(1)
            t = res.rank_tests(max_rank=0, n_perm=39, seed=rng).table
        assert 16 <= t["n_flips"].iloc[0] <= 39  # sequential: stops early when not rejected
        rej += t["pvalue"].iloc[0] <= ALPHA
    assert rej / reps <= _band_hi(reps)


@pytest.mark.slow
def test_paper_bilinear_experiment_2_n500_default_auto_finds_r5():
    """The same sample with the default fit("auto"): n1 n2 / m = 25 >= 20, so
    the default is the combined test, which chooses r = 5 where the robust
    test alone chose 4."""
    sim = jdr.simulate.bilinear(10_000, 500, 500, 5, seed=np.random.default_rng([2026, 500, 1]))
    with pytest.warns(jdr.exceptions.AssumptionWarning, match="small sample"), \
            warnings.catch_warnings():
        # the run-time estimate depends on the machine's load, not on the data
        warnings.simplefilter("ignore", jdr.exceptions.LongRunWarning)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto", seed=0)
    assert res.rank_method == "combined"
    assert res.rank == 5, res.rank_test_table.table


def test_combined_skips_the_flips_below_half_the_noise_edge():
    """Ranks whose spectral statistic is below COMBINED_SPECTRAL_MIN_EDGE of the
    noise edge run no sign flips (pvalue_spectral NaN, n_flips 0; a note says
    so) and their combined p-value is min(1, 2 p_robust)."""
    from jdr_stats import policy

    sim = jdr.simulate.bilinear(400, 10, 9, 1, seed=5)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    rt = res.rank_tests("combined", n_perm=19, seed=1)
    t = rt.table
    k = t.index.to_numpy()
    edge = (np.sqrt(10 - k) + np.sqrt(9 - k)) ** 2
    low = t["spectral_statistic"].to_numpy() < policy.COMBINED_SPECTRAL_MIN_EDGE * edge
    assert low.any() and not low.all()
    assert t.loc[low, "pvalue_spectral"].isna().all() and (t.loc[low, "n_flips"] == 0).all()
    # (above the edge, flips are drawn unless the robust p-value is below
    # the smallest the flips can give: the next test)
    needed = ~low & (t["pvalue_robust"] > 1 / 20).to_numpy()
    assert needed.any() and t.loc[needed, "pvalue_spectral"].notna().all()
    np.testing.assert_allclose(t.loc[low, "pvalue"],
                               np.minimum(1, 2 * t.loc[low, "pvalue_robust"]), rtol=1e-12)
    assert any("is not run where" in n for n in rt.notes)


def test_sequential_pvalues_are_besag_clifford(fit_r2, monkeypatch):
    """A pass stops once every rank has h replicates at or above its statistic;
    such a rank's p-value is h / L, L the replicate of its h-th exceedance
    (recomputed here from the same replicates drawn all at once), any other
    rank's (1 + count) / (B + 1); a rejected rank needs all B flips."""
    # the algorithm runs on one whitened object; the early stop below (60
    # flips) is this sample's under the per-block whitening (its rank-2
    # p-value sets where the pass stops: h / p flips; the joint estimator's
    # smaller p-value of this sample needs about 75)
    sim = jdr.simulate.bilinear(800, 7, 6, 2, seed=11)
    per = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2, independent_blocks=True)
    w = _whiten(per._fit_data, per.moments)
    from jdr_stats import config

    monkeypatch.setattr(config, "SPECTRAL_SEQUENTIAL_CHUNK", 5)
    ks, b = range(1, 5), 199
    pv, used = sp.spectral_pvalues(w, ks, b, np.random.default_rng(9))
    rng = np.random.default_rng(9)
    work = sp._SpectralBatch(w, ks, rng)
    entropy = int(rng.integers(2**62))
    from jdr_stats.resampling._progress import run_batches

    null = np.concatenate(run_batches(work, b, seed=entropy)).min(axis=2)
    h = sp.SEQUENTIAL_EXCEEDANCES
    for j, k in enumerate(ks):
        hits = np.cumsum(null[:, j] >= sp.spectral_statistic(w, k) * (1 - 1e-10))
        if hits[-1] >= h:
            assert pv[j] == h / (np.flatnonzero(hits >= h)[0] + 1)
        else:
            assert pv[j] == (1 + hits[-1]) / (b + 1)
    assert pv[0] == 1 / (b + 1) and used == b  # k = 1 < r = 2: rejected, all flips
    # ranks 2..4 alone (not rejected): the pass stops early
    pv2, used2 = sp.spectral_pvalues(w, range(2, 5), b, np.random.default_rng(9))
    assert used2 < 60 and (pv2 > 0.1).all()


def _all_flips(ks, stats_k, edge, p_robust, n_perm):
    """The rule before the robust p-value was consulted: every rank whose
    statistic reaches the skip fraction of the noise edge."""
    from jdr_stats import policy

    run = int(np.sum(stats_k >= policy.COMBINED_SPECTRAL_MIN_EDGE * edge))
    return (range(ks[0], ks[0] + run) if run else None,
            [None if j < run else "not-run" for j in range(len(ks))])


def test_combined_draws_no_flips_where_the_robust_test_decides(fit_r2, monkeypatch):
    """Where pvalue_robust <= 1 / (n_perm + 1), the smallest p-value the flips
    can give, the combined p-value is 2 pvalue_robust whatever they give:
    they are not drawn (n_flips 0, a note says why), and every combined
    p-value, and every spectral p-value that is drawn, equals the one with
    flips at every rank (the halves and signs are the whole pass's)."""
    from jdr_stats.inference.rank_methods import combined

    new = fit_r2.rank_tests("combined", max_rank=4, n_perm=199, seed=3)
    monkeypatch.setattr(combined, "flips_needed", _all_flips)
    old = fit_r2.rank_tests("combined", max_rank=4, n_perm=199, seed=3).table
    tab = new.table
    skipped = tab["pvalue_robust"] <= 1 / 200
    assert skipped.iloc[:2].all() and not skipped.iloc[2:].any(), tab
    assert (tab.loc[skipped, "n_flips"] == 0).all() and tab.loc[skipped, "pvalue_spectral"].isna().all()
    assert (old["n_flips"] > 0).all()
    np.testing.assert_array_equal(tab["pvalue"], old["pvalue"])
    np.testing.assert_array_equal(tab.loc[~skipped, "pvalue_spectral"],
                                  old.loc[~skipped, "pvalue_spectral"])
    assert any("smallest p-value the sign flips can give" in note for note in new.notes)


def test_default_finds_the_fifth_direction_of_experiment_1_at_m_2000():
    """The paper's BILINEAR experiment 1 at m = 2000 (100 x 100, r = 5; n1 n2 / m
    = 5): the default is the combined test and chooses 5 in the first sample of
    ``studies/check_paper_auto.py exp1``, where the robust test alone stops
    at 4 (18 and 8 of 20 samples: ``check_paper_auto.txt``)."""
    sim = jdr.simulate.bilinear(2000, 100, 100, 5, seed=np.random.default_rng([2027, 2000, 0]))
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jdr.exceptions.JDRWarning)
        auto = model.fit("auto", seed=0)
        robust = model.fit("auto", rank_method="robust", seed=0)
    assert auto.rank_method == "combined" and auto.rank == 5
    assert robust.rank_method == "robust" and robust.rank == 4
    notes = " ".join(auto.rank_test_table.notes)
    assert "n1 n2 / m = 5 >= 5, so the combined test" in notes


@pytest.mark.equality
def test_replicates_without_the_halves_copies_are_the_same(monkeypatch):
    """Rows beyond the chunk budget are summed without copies of the halves
    (all the rows, in blocks): the same replicates, to rounding, as the
    copies of the halves give (joint estimator: rows rotated from the model's
    rows without the residual copy)."""
    from jdr_stats import config

    sim = jdr.simulate.bilinear(900, 20, 15, 2, design="t5", seed=4)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    w = _whiten(res._fit_data, res.moments, rows="rotated")
    ks = range(0, 4)
    ref = sp.spectral_null(w, ks, 12, np.random.default_rng(3))
    copies = sp._SpectralBatch(w, ks, np.random.default_rng(3))
    assert copies._copy_halves
    monkeypatch.setattr(config, "CHUNK_FLOATS", 900 * 35 - 1)  # just below the rows: 2 chunks
    w2 = _whiten(res._fit_data, res.moments, rows="rotated")
    assert not sp._SpectralBatch(w2, ks, np.random.default_rng(3))._copy_halves
    got = sp.spectral_null(w2, ks, 12, np.random.default_rng(3))
    np.testing.assert_allclose(got, ref, rtol=1e-10)
