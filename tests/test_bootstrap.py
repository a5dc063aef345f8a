"""Tests of jdr_stats.inference.bootstrap."""

import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats import config, policy
from jdr_stats.resampling import _engine as _resampling
from jdr_stats.core._linalg import ReweightedMoments, batched_principal_angles, principal_angles
from jdr_stats.streams._sources import ArraySource
from jdr_stats.estimation._estimate import estimate
from jdr_stats.exceptions import SmallSampleWarning, WeakGapWarning
from jdr_stats.inference import bootstrap as bmod
from jdr_stats.inference import _replicates as rmod
from jdr_stats.inference._bounds import order_index
from jdr_stats.inference import poisson_bootstrap as pmod
from jdr_stats.inference.bootstrap import BootstrapResults, bootstrap


@pytest.fixture(scope="module")
def dense_fit():
    sim = jdr.simulate.bilinear(1500, 6, 5, 2, seed=11)
    return sim, jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)


@pytest.fixture(scope="module")
def dense_boot(dense_fit):
    return dense_fit[1].bootstrap(n_boot=199, seed=3, interval="calibrated")


# -- the batched moments ------------------------------------------------------
@pytest.mark.parametrize("weighted", [False, True])
def test_reweighted_moments_equal_model_moments(weighted):
    sim = jdr.simulate.bilinear(800, 4, 3, 2, seed=5)
    rng = np.random.default_rng(1)
    w0 = rng.uniform(0.5, 2.0, 800) if weighted else None
    # shifted data: the algebraic mean correction must not lose precision
    model = jdr.JointDimReduction(sim.y + 50.0, sim.a * 3 + 10.0, sim.b - 7.0, weights=w0)
    rw = ReweightedMoments(model.endog, model.exog_a, model.exog_b, model.weights)
    counts = _resampling.draw_counts(rng, 5, 800)
    full = model.moments()
    for k, mom in enumerate(rw.moments(rw.sums(counts))):
        ref = model.moments(weights=counts[k])
        for field in ("mean_y", "var_y", "mean_a", "mean_b"):
            got, want = np.asarray(getattr(mom, field)), np.asarray(getattr(ref, field))
            np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10 * np.abs(want).max())
        for field in ("cov_a", "cov_b"):  # variances: double precision
            got, want = np.diag(getattr(mom, field)), np.diag(getattr(ref, field))
            np.testing.assert_allclose(got, want, rtol=1e-10)
        # the products of two different columns: full-sample sum plus the
        # resampling fluctuation, in double precision (measured: 1.5e-14 of
        # the fluctuation; single precision, as an earlier version used, gave 3e-7)
        for field in ("cov_a", "cov_b", "cross"):
            got, want = getattr(mom, field), getattr(ref, field)
            fluct = np.abs(want - getattr(full, field)).max()
            assert np.abs(got - want).max() <= 1e-10 * fluct


def test_counts_are_resamples():
    c = _resampling.draw_counts(np.random.default_rng(0), 7, 50)
    assert c.shape == (7, 50)
    assert np.all(c.sum(axis=1) == 50)
    assert np.all(c >= 0) and np.all(c == np.round(c))


def test_batched_angles_match_linalg():
    rng = np.random.default_rng(2)
    q0 = np.linalg.qr(rng.standard_normal((7, 3)))[0]
    bases = rng.standard_normal((6, 7, 3))
    bases[0] = q0 @ rng.standard_normal((3, 3))  # same subspace
    bases[1] = q0 + 1e-9 * rng.standard_normal((7, 3))  # tiny angles
    got = batched_principal_angles(q0, bases)
    want = np.array([principal_angles(q0, x) for x in bases])
    np.testing.assert_allclose(got, want, atol=1e-12)


# -- the replicates are refits -------------------------------------------------
@pytest.mark.parametrize("sparsity", [None, (3, 3)])
def test_replicates_are_refits_on_resampled_rows(sparsity):
    # bootstrap() of the model's own rows with each block's covariance metric:
    # the per-block estimator's replicates, compared with its refits
    sim = jdr.simulate.bilinear(600, 6, 5, 2, s1=3, s2=3, seed=8)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2, sparsity=sparsity,
                                                         independent_blocks=True)
    boot = bootstrap(
        res.model.data, res.estimate, standardize=True, sparsity=sparsity, n_boot=3, seed=42
    )
    rng = np.random.default_rng(42)
    # angles in each block's covariance metric: between L^T U* and L^T U_hat,
    # Sigma = L L^T the full-sample covariance (divisor m)
    la = np.linalg.cholesky(np.cov(sim.a, rowvar=False, bias=True)).T
    lb = np.linalg.cholesky(np.cov(sim.b, rowvar=False, bias=True)).T
    for b in range(3):
        idx = rng.integers(0, 600, size=600)
        ref = jdr.JointDimReduction(sim.y[idx], sim.a[idx], sim.b[idx]).fit(
            2, sparsity=sparsity, independent_blocks=True)
        want_a = np.degrees(principal_angles(la @ ref.estimate.dir_a, la @ res.estimate.dir_a))
        want_b = np.degrees(principal_angles(lb @ ref.estimate.dir_b, lb @ res.estimate.dir_b))
        # rounding of the sums perturbs X_lin by a few units in the last place
        # of its norm: an absolute error on every angle and singular value
        # (Weyl), so the tolerance is scaled by the largest value, not
        # relative (measured: 7e-15 of it)
        for got, want in ((boot.angles_a[b], want_a), (boot.angles_b[b], want_b)):
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-10 * max(want.max(), 1.0))
        s_ref = ref.singular_values
        np.testing.assert_allclose(boot.singular_values[b], s_ref, rtol=0, atol=1e-10 * s_ref.max())
        if sparsity is not None:
            assert np.flatnonzero(boot.selected_a[b]).tolist() == ref.estimate.rows.tolist()
            assert np.flatnonzero(boot.selected_b[b]).tolist() == ref.estimate.cols.tolist()


def test_same_seed_same_output_and_batches_do_not_matter(dense_fit, monkeypatch):
    res = dense_fit[1]
    one = res.bootstrap(n_boot=30, seed=7)
    two = res.bootstrap(n_boot=30, seed=np.random.default_rng(7))
    monkeypatch.setattr(config, "COUNT_BYTES", 8 * 1500 * 4)  # batches of 4
    three = res.bootstrap(n_boot=30, seed=7)
    np.testing.assert_array_equal(one.angles_a, two.angles_a)
    np.testing.assert_array_equal(one.angles_b, two.angles_b)
    np.testing.assert_array_equal(one.singular_values, two.singular_values)
    # other batches: the same replicates, up to the rounding of the
    # products, which depends on the blocking
    # (an absolute error on each angle: scaled by the largest angle)
    np.testing.assert_allclose(one.angles_a, three.angles_a, rtol=0, atol=1e-10 * one.angles_a.max())
    np.testing.assert_allclose(one.angles_b, three.angles_b, rtol=0, atol=1e-10 * one.angles_b.max())
    np.testing.assert_allclose(one.singular_values, three.singular_values, atol=1e-10)
    assert not np.array_equal(one.angles_a, res.bootstrap(n_boot=30, seed=8).angles_a)


# -- results object ------------------------------------------------------------
def test_results_attributes(dense_fit, dense_boot):
    res = dense_fit[1]
    boot = dense_boot
    assert isinstance(boot, BootstrapResults)
    assert boot.results is res and boot.n_boot == 199 and boot.n_failed == 0
    assert boot.method == "pairs" and boot.interval == "calibrated" and boot.alpha == 0.05
    assert boot.rank == 2
    assert boot.angles_a.shape == (199, 2) and boot.angles_b.shape == (199, 2)
    assert np.all(np.diff(boot.angles_a, axis=1) >= 0)
    assert np.all((boot.angles_a >= 0) & (boot.angles_a <= 90))
    assert boot.singular_values.shape == (199, 5)
    assert boot.selected_a is None and boot.selection_frequency_a is None
    assert boot.selection_frequency_b is None
    gap = boot.gap
    s = res.estimate.singular_values
    assert gap["s_r / s_(r+1)"] == pytest.approx(s[1] / s[2])
    assert gap["crossing share"] == np.mean(boot.singular_values[:, 1] < s[2])
    assert gap["trusted"] is True
    lam = boot.calibrated_levels()
    assert set(lam.index) == {"a", "b"} and np.all((lam > 0.5) & (lam <= 1))
    with pytest.raises(AttributeError):
        boot.angles_a = None
    # replicate arrays are copies
    boot.angles_a[0, 0] = -1.0
    assert boot.angles_a[0, 0] >= 0


def test_conf_int(dense_boot):
    boot = dense_boot
    ci = boot.conf_int(interval="percentile")
    assert list(ci.columns) == ["lower", "upper"]
    assert ci.loc[("a", "largest angle"), "lower"] == 0.0
    assert (ci["lower"] <= ci["upper"]).all()
    # the bound is the ceil(0.95 * 200) = 190th smallest replicate largest angle
    t = np.sort(boot.angles_a[:, -1])
    assert ci.loc[("a", "largest angle"), "upper"] == pytest.approx(t[189])
    assert boot.max_angle_bound(interval="percentile")["a"] == pytest.approx(t[189])
    # this bootstrap's default (calibrated): the order statistic at the level G**(t_(190)),
    # G** the empirical distribution of the inner replicates' angles
    inner = np.degrees(boot._inner["a"])
    lam = np.mean(inner <= t[189])
    assert boot.calibrated_levels()["a"] == pytest.approx(lam)
    want = t[order_index(199, lam)]
    assert boot.max_angle_bound()["a"] == pytest.approx(want)
    assert boot.conf_int().loc[("a", "largest angle"), "upper"] == pytest.approx(want)
    # higher confidence -> a larger bound
    assert boot.max_angle_bound(0.01)["a"] >= boot.max_angle_bound(0.1)["a"]
    s = ci.loc["singular value"]
    assert list(s.index) == ["s1", "s2"]
    # basic interval: reflected replicate quantiles around the estimate
    s_hat = boot.results.estimate.singular_values[0]
    q = np.sort(boot.singular_values[:, 0])
    assert s.loc["s1", "lower"] == pytest.approx(2 * s_hat - q[194])
    assert s.loc["s1", "upper"] == pytest.approx(2 * s_hat - q[4])
    # the two-sided angle intervals do not depend on the bound's type
    pd.testing.assert_frame_equal(ci.drop(index="largest angle", level=1),
                                  boot.conf_int().drop(index="largest angle", level=1))


def test_summary_and_sentence(dense_boot):
    text = str(dense_boot.summary())
    bound = dense_boot.max_angle_bound()["a"]
    assert f"within {bound:.1f} degrees" in text
    assert "true a-subspace" in dense_boot.sentence("a")
    assert "true b-subspace" in text
    assert "block a" in text and "singular value" in text
    assert "<table" in dense_boot._repr_html_()


def test_sparse_selection_frequencies():
    sim = jdr.simulate.bilinear(3000, 10, 8, 2, s1=3, s2=3, seed=21)
    frame_a = pd.DataFrame(sim.a, columns=[f"x{j}" for j in range(10)])
    frame_b = pd.DataFrame(sim.b, columns=[f"z{j}" for j in range(8)])
    res = jdr.JointDimReduction(pd.Series(sim.y, name="y"), frame_a, frame_b).fit(
        2, sparsity=(3, 3)
    )
    boot = res.bootstrap(n_boot=60, seed=1)
    fa = boot.selection_frequency_a
    assert list(fa.index) == list(frame_a.columns)
    assert boot.selected_a.shape == (60, 10)
    assert np.allclose(boot.selected_a.sum(axis=1), 3)
    true_a = np.flatnonzero(np.abs(sim.U).sum(axis=1) > 0)
    true_b = np.flatnonzero(np.abs(sim.V).sum(axis=1) > 0)
    assert fa.iloc[true_a].min() >= 0.9
    assert boot.selection_frequency_b.iloc[true_b].min() >= 0.9
    assert "selection a" in str(boot.summary())


def test_failed_replicates_warn():
    rng = np.random.default_rng(4)
    m = 40
    a = rng.standard_normal((m, 3))
    a[:, 2] = 0.0
    a[0, 2] = 1.0  # one nonzero entry: many resamples make the column constant
    b = rng.standard_normal((m, 2))
    y = a[:, 0] * b[:, 0] + rng.standard_normal(m)
    res = jdr.JointDimReduction(y, a, b).fit(1, whitening="sample")
    with pytest.warns(SmallSampleWarning, match="could not be fitted"):
        boot = res.bootstrap(n_boot=50, seed=0)
    assert boot.n_failed > 0 and boot.n_boot + boot.n_failed == 50
    # the failures are the resamples without row 0 (column a2 constant)
    assert boot.n_failed == pytest.approx(50 * (1 - 1 / m) ** m, abs=12)


def test_progress_prints_to_stderr(dense_fit, capsys):
    dense_fit[1].bootstrap(n_boot=20, seed=0, progress=True)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "bootstrap" in captured.err and "20/20" in captured.err


def test_case_weights_are_used():
    sim = jdr.simulate.bilinear(500, 4, 4, 1, seed=3)
    w = np.random.default_rng(0).uniform(0.2, 3.0, 500)
    res_w = jdr.JointDimReduction(sim.y, sim.a, sim.b, weights=w).fit(1)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    bw = res_w.bootstrap(n_boot=10, seed=0)
    bu = res.bootstrap(n_boot=10, seed=0)
    assert not np.allclose(bw.singular_values, bu.singular_values)


# -- bad input -------------------------------------------------------------------
def test_bad_input(dense_fit, dense_boot):
    res = dense_fit[1]
    with pytest.raises(ValueError, match="n_boot"):
        res.bootstrap(n_boot=0)
    with pytest.raises(TypeError, match="n_boot"):
        res.bootstrap(n_boot=9.5)
    with pytest.raises(ValueError, match="method.*'wild'"):
        res.bootstrap(n_boot=5, method="wild")
    with pytest.raises(ValueError, match="interval.*'bca'"):
        res.bootstrap(n_boot=5, interval="bca")
    with pytest.raises(ValueError, match="alpha.*1.5"):
        res.bootstrap(n_boot=5, alpha=1.5)
    with pytest.raises(TypeError, match="progress"):
        res.bootstrap(n_boot=5, progress="yes")
    with pytest.raises(TypeError, match="seed"):
        res.bootstrap(n_boot=5, seed="x")
    with pytest.raises(TypeError, match="ModelData"):
        bootstrap(object(), res.estimate, standardize=True, sparsity=None, n_boot=5)
    with pytest.raises(TypeError):
        res.bootstrap(5, "pairs")  # options are keyword-only
    with pytest.raises(ValueError, match="at least 399 replicates"):
        dense_boot.conf_int(alpha=0.005)
    with pytest.raises(ValueError, match="block"):
        dense_boot.sentence("c")


def test_percentile_only_bootstrap_has_no_calibrated_bound(dense_fit):
    boot = dense_fit[1].bootstrap(n_boot=39, seed=2)  # default: percentile
    assert boot.interval == "percentile" and boot._inner is None
    with pytest.raises(ValueError, match="calibrated.*inner replicates"):
        boot.max_angle_bound(interval="calibrated")
    # the outer replicates do not depend on whether inner ones are drawn (up
    # to the rounding of the products, which depends on the batch size)
    cal = dense_fit[1].bootstrap(n_boot=39, seed=2, interval="calibrated")
    np.testing.assert_allclose(boot.angles_a, cal.angles_a, rtol=0, atol=1e-10 * boot.angles_a.max())


def test_weak_gap_warns_and_is_reported():
    # the second direction has strength 0.05: s_2 / s_3 is about 1
    sim = jdr.simulate.bilinear(400, 6, 6, 2, strengths=[1.0, 0.05], seed=3)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    s = res.estimate.singular_values
    assert s[1] / s[2] < bmod.GAP_RATIO_MIN
    with pytest.warns(WeakGapWarning, match="weak gap.*not separated"):
        boot = res.bootstrap(n_boot=39, seed=0)
    assert boot.gap["trusted"] is False
    assert "Weak gap" in boot.sentence("a")
    assert boot.gap["share above 45 deg a"] > 0.2
    assert "WARNING (weak gap): s_r / s_(r+1)" in " ".join(str(boot.summary()).split())
    # rank 1 of the same data has a clear gap: no warning
    boot1 = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1).bootstrap(n_boot=39, seed=0)
    assert boot1.gap["trusted"] is True and "Weak gap" not in boot1.sentence("a")


@pytest.mark.parametrize("sparsity", [None, (3, 3)])
def test_poisson_method_refits_poisson_moments(sparsity):
    sim = jdr.simulate.bilinear(700, 6, 5, 2, s1=3, s2=3, seed=8)
    w0 = np.random.default_rng(1).uniform(0.5, 2.0, 700)
    # the reference reweights the model's own rows (res.model.moments): the
    # per-block estimator's replicates
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b, weights=w0).fit(
        2, sparsity=sparsity, independent_blocks=True)
    boot = res.bootstrap(n_boot=4, seed=5, method="poisson", interval="percentile")
    assert boot.method == "poisson"
    ent = _resampling.draw_entropy(np.random.default_rng(5), 4)
    w = pmod.poisson_weights(ent, 0, 4)[:, :700].astype(float)
    la = np.linalg.cholesky(res.moments.cov_a).T  # the covariance metric (weighted)
    for b in range(4):
        ref = res.model.moments(weights=w[b])
        e = estimate(ref, 2, sparsity=sparsity)
        want = np.degrees(principal_angles(la @ e.dir_a, la @ res.estimate.dir_a))
        np.testing.assert_allclose(boot.angles_a[b], want, rtol=1e-4, atol=1e-5)
    again = res.bootstrap(n_boot=4, seed=5, method="poisson", interval="percentile")
    np.testing.assert_array_equal(boot.angles_b, again.angles_b)


# -- coverage (reduced; the full study is studies/study_bootstrap_robust.py) --
def _coverage(m, n, reps, n_boot, seed, interval=None):
    hits = []
    for i in range(reps):
        sim = jdr.simulate.bilinear(m, n, n, 2, seed=seed + i)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        boot = res.bootstrap(n_boot=n_boot, seed=seed + 1000 + i)
        bound = boot.max_angle_bound(interval=interval)
        hits.append(np.degrees(principal_angles(sim.U, res.estimate.dir_a).max()) <= bound["a"])
        hits.append(np.degrees(principal_angles(sim.V, res.estimate.dir_b).max()) <= bound["b"])
    return np.mean(hits)


def test_coverage_reduced():
    # 30 replications x 2 blocks at the default interval; nominal 0.95.
    # Fails if coverage < 0.95 - 3 MC SE (blocks counted as 80 draws; they are
    # positively dependent, so the SE is if anything understated -> looser).
    reps = 30
    cov = _coverage(1500, 6, reps, 199, seed=900)
    assert cov >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / (2 * reps))


@pytest.mark.slow
@pytest.mark.parametrize("m", [5000, 1000])
def test_coverage_full(m):
    # BILINEAR, n1 = n2 = 20, r = 2, percentile bound (studies/study_bootstrap_robust.py
    # is the current coverage study)
    reps = 200
    cov = _coverage(m, 20, reps, 499, seed=50_000, interval="percentile")
    assert cov >= 0.92


@pytest.mark.slow
def test_coverage_weak_direction_replay():
    # Replays the setting "weak g=0.3 r=2" of studies/study_bootstrap_robust.py
    # (same data seeds: seed0 + 7919 j) through the shipped default
    # (res.bootstrap, percentile bound, B=199), first 60 replications.
    # Recorded: 0.992 (a) and 1.000 (b) over 250 replications (the old
    # default, "deflated", covered 0.912 and 0.900).  Fails if the coverage
    # of both blocks pooled is below 0.95 - 3 MC SE.
    seed0 = 20261126 + 100_003 * 1
    reps, hits = 60, []
    for j in range(reps):
        sim = jdr.simulate.scenario("weak", 1000, 10, 10, 2, weak_strength=0.3,
                                    seed=seed0 + 7919 * j)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        with warnings.catch_warnings():
            # about a third of these samples have s_2 / s_3 < 1.5 (the gap rule)
            warnings.simplefilter("ignore", WeakGapWarning)
            bound = res.bootstrap(n_boot=199, seed=seed0 + 7919 * j + 10**6).max_angle_bound()
        hits.append(np.degrees(principal_angles(sim.U, res.estimate.dir_a).max()) <= bound["a"])
        hits.append(np.degrees(principal_angles(sim.V, res.estimate.dir_b).max()) <= bound["b"])
    assert np.mean(hits) >= 0.95 - 3 * np.sqrt(0.95 * 0.05 / (2 * reps))


# -- n_jobs: the same numbers in every process count --------------------------
def _same(x, y):
    np.testing.assert_array_equal(x.angles_a, y.angles_a)
    np.testing.assert_array_equal(x.angles_b, y.angles_b)
    np.testing.assert_array_equal(x.singular_values, y.singular_values)
    if x.interval == "calibrated":
        np.testing.assert_array_equal(x.calibrated_levels(), y.calibrated_levels())
        np.testing.assert_array_equal(x.max_angle_bound(), y.max_angle_bound())
    if x.selected_a is not None:
        np.testing.assert_array_equal(x.selected_a, y.selected_a)
        np.testing.assert_array_equal(x.selected_b, y.selected_b)


@pytest.mark.parametrize("interval, sparsity", [("calibrated", None), ("percentile", (3, 3))])
def test_pairs_n_jobs_gives_identical_numbers(monkeypatch, interval, sparsity):
    import jdr_stats.core._linalg as lin

    sim = jdr.simulate.bilinear(1200, 6, 5, 2, s1=3, s2=3, seed=21)
    w0 = np.random.default_rng(2).uniform(0.5, 2.0, 1200)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b, weights=w0).fit(2, sparsity=sparsity)
    # several batches of counts and several chunks of rows per batch
    monkeypatch.setattr(config, "COUNT_BYTES", 8 * 1200 * 16)
    monkeypatch.setattr(config, "FEATURE_BYTES", 8 * 121 * 300)
    runs = {}
    for n_jobs in (None, 1, 2):
        seen = []
        runs[n_jobs] = res.bootstrap(n_boot=40, seed=9, interval=interval, n_jobs=n_jobs,
                                     progress=lambda d, t: seen.append((d, t)))
        assert seen[-1] == (40, 40) and len(seen) > 1  # progress reports every batch
    _same(runs[None], runs[1])
    _same(runs[None], runs[2])


@pytest.mark.parametrize("interval", ["percentile", "calibrated"])
def test_poisson_n_jobs_gives_identical_numbers(interval):
    # 40000 rows: three blocks of Poisson weights (BLOCK_ROWS = 16384), the
    # last one short, each cut into pieces
    assert 2 * policy.BLOCK_ROWS < 40_000 < 3 * policy.BLOCK_ROWS
    sim = jdr.simulate.bilinear(40_000, 3, 3, 2, seed=22)
    w0 = np.random.default_rng(3).uniform(0.5, 2.0, 40_000)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b, weights=w0).fit(2)
    runs = {}
    for n_jobs in (None, 1, 2):
        seen = []
        runs[n_jobs] = res.bootstrap(n_boot=40, seed=4, method="poisson", interval=interval,
                                     n_jobs=n_jobs, progress=lambda d, t: seen.append((d, t)))
        assert seen[-1] == (40, 40)
    _same(runs[None], runs[1])
    _same(runs[None], runs[2])


def test_n_jobs_bad_input(dense_fit):
    with pytest.raises(ValueError, match="n_jobs"):
        dense_fit[1].bootstrap(n_boot=20, seed=0, n_jobs=0)
    with pytest.raises(TypeError, match=r"n_jobs must be an integer; got 1\.5"):
        dense_fit[1].bootstrap(n_boot=20, seed=0, n_jobs=1.5)


def test_parallel_sums_and_pass_equal_serial_ones(dense_fit, monkeypatch):
    # the parallel code paths themselves, against the serial ones
    from joblib import Parallel

    import jdr_stats.core._linalg as lin

    monkeypatch.setattr(config, "FEATURE_BYTES", 8 * 121 * 400)  # 4 chunks of rows
    data = dense_fit[1].model.data
    counts = _resampling.draw_counts(np.random.default_rng(0), 7, data.nobs)

    def rw():
        return ReweightedMoments(data.endog, data.blocks["exog_a"], data.blocks["exog_b"],
                                 data.weights)

    with Parallel(n_jobs=2, return_as="generator") as par:
        np.testing.assert_array_equal(rmod._sums(rw(), counts, par), rw().sums(counts))
        plan = pmod.poisson_plan(ArraySource(data.endog, data.blocks["exog_a"],
                                             data.blocks["exog_b"], batch_rows=500),
                                 5, seed=3, inner=True)
        got, want = pmod.poisson_pass(plan, par), pmod.poisson_pass(plan)
    for g, w in zip(got[0] + got[1], want[0] + want[1]):
        np.testing.assert_array_equal(g.cross, w.cross)
        np.testing.assert_array_equal(g.cov_a, w.cov_a)


def test_singular_value_intervals_below_their_estimate_are_explained():
    """Issue 36: a basic interval that excludes its own estimate (upward
    biased replicates) is explained in the summary's note, naming the rows."""
    sim = jdr.simulate.bilinear(200, 10, 8, 1, seed=0)
    y = np.random.default_rng(0).normal(size=200)  # unrelated: strongly biased s
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jdr.exceptions.JDRWarning)
        res = jdr.JointDimReduction(y, sim.a, sim.b).fit(2)
        boot = res.bootstrap(199, seed=0)
    ci = boot.conf_int().loc["singular value"]
    below = ci["upper"].to_numpy() < res.singular_values[:2]
    assert below.any()  # the case the note is for
    notes = " ".join(boot.summary().extra_txt)
    assert "basic bootstrap intervals [2 s - t_high, 2 s - t_low]" in notes
    assert "subtract the replicates' bias" in notes and "exclude its own estimate" in notes
    named = ", ".join(f"s{k + 1}" for k in np.flatnonzero(below))
    assert f"(here: {named} wholly below (replicates above the estimate" in notes
    # the other direction (replicates below the estimate) is named as such
    # (the replicates reflected about the estimate: the basic interval becomes
    # the old percentile one, wholly above where the old one was wholly below)
    sv = boot._sv
    boot._sv = 2 * res.singular_values[None, :sv.shape[1]] - sv
    ci = boot.conf_int().loc["singular value"]
    above = ci["lower"].to_numpy() > res.singular_values[:2]
    assert np.array_equal(above, below)
    notes = " ".join(boot.summary().extra_txt)
    assert f"(here: {named} wholly above (replicates below the estimate))" in notes
