"""Tests of jdr_stats.support: robust coordinate tests and FDR q-values."""

import numpy as np
import pytest
import statsmodels.api as sm
from scipy import linalg as sla
from statsmodels.stats.multitest import multipletests

import jdr_stats as jdr
from jdr_stats.support import fdr_qvalues, robust_coordinate_tests
from jdr_stats.support._loo import loo_bases as _loo_bases


def _whiten(x):
    xc = x - x.mean(axis=0)
    low = np.linalg.cholesky(xc.T @ xc / x.shape[0])
    w = sla.solve_triangular(low, xc.T, lower=True)
    z = sla.solve_triangular(low.T, w, lower=False)
    return z.T, w.T


@pytest.fixture(scope="module")
def small():
    sim = jdr.simulate.bilinear(150, 6, 5, 2, s1=3, s2=3, design="t5", ar1=0.5, seed=3)
    za, wa = _whiten(sim.a)
    zb, wb = _whiten(sim.b)
    return sim, sim.y - sim.y.mean(), za, wa, zb, wb


def _sm_wald(endog, design, d, cov_type):
    fit = sm.OLS(endog, sm.add_constant(design)).fit(cov_type=cov_type)
    restr = np.zeros((d, design.shape[1] + 1))
    restr[:, -d:] = np.eye(d)
    return float(np.squeeze(fit.wald_test(restr, use_f=False, scalar=True).statistic))


# --------------------------------------------------------------------------
# the statistic against a direct per-variable regression (statsmodels)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("method,cov_type", [("hc3", "HC3"), ("hc2", "HC2"), ("hc0", "HC0")])
def test_marginal_robust_wald_equals_statsmodels(small, method, cov_type):
    """Marginal test: the robust Wald test of W = (y - ybar) b in the OLS
    regression of a_j on (1, a_{-j}, W), HC covariance from statsmodels."""
    sim, yc, za, wa, _, wb = small
    res = robust_coordinate_tests(yc, za, wa, wb, method=method)
    w = yc[:, None] * (sim.b - sim.b.mean(0))  # any invertible transform of b' gives the same test
    ref = [_sm_wald(sim.a[:, j], np.column_stack([np.delete(sim.a, j, 1), w]), 5, cov_type)
           for j in range(6)]
    np.testing.assert_allclose(res.stat, ref, rtol=1e-8)
    assert res.df == 5
    m = len(yc)
    from scipy import stats

    want = stats.f.sf(np.array(ref) / 5, 5, m - 7 - 5)  # p-values: atol scaled by the largest
    np.testing.assert_allclose(res.pvalue, want, rtol=1e-7, atol=1e-7 * want.max())


def test_conditional_hc3_equals_statsmodels(small):
    """Conditional test: W_j = (y - ybar) b' V_(-j), V_(-j) the b-basis fitted
    without variable j."""
    sim, yc, za, wa, _, wb = small
    m = len(yc)
    res = robust_coordinate_tests(yc, za, wa, wb, rank=2, method="hc3")
    xhat = wa.T @ (yc[:, None] * wb) / m
    g = za.T @ (yc[:, None] * wb) / m
    bases = _loo_bases(xhat.T @ xhat, g, 1.0 / np.mean(za**2, axis=0), 2)
    ref = [
        _sm_wald(sim.a[:, j], np.column_stack([np.delete(sim.a, j, 1), (yc[:, None] * wb) @ bases[j]]),
                 2, "HC3")
        for j in range(6)
    ]
    np.testing.assert_allclose(res.stat, ref, rtol=1e-8)


def test_unstandardized_hc3_equals_statsmodels(small):
    """standardize=False: the null model is the intercept alone."""
    sim, yc, *_ = small
    ac, bc = sim.a - sim.a.mean(0), sim.b - sim.b.mean(0)
    res = robust_coordinate_tests(yc, ac, ac, bc, standardize=False, method="hc3")
    ref = [_sm_wald(sim.a[:, j], yc[:, None] * bc, 5, "HC3") for j in range(6)]
    np.testing.assert_allclose(res.stat, ref, rtol=1e-8)


def test_score_statistic_of_resampling_methods(small):
    """The wild and permutation tests share the robust score statistic
    c^T (sum r^2 / (1 - h0) Wt Wt^T)^{-1} c with restricted residuals r and
    null-model leverages h0 (the LM form, HC2 scaling)."""
    sim, yc, za, wa, _, wb = small
    wild = robust_coordinate_tests(yc, za, wa, wb, method="wild", n_resample=19, seed=0)
    perm = robust_coordinate_tests(yc, za, wa, wb, method="studentized-permutation",
                                   n_resample=19, seed=0)
    np.testing.assert_allclose(wild.stat, perm.stat)
    w = yc[:, None] * (sim.b - sim.b.mean(0))
    for j in range(6):
        x = sm.add_constant(np.delete(sim.a, j, 1))
        fit = sm.OLS(sim.a[:, j], x).fit()
        r, h0 = fit.resid, fit.get_influence().hat_matrix_diag
        wt = w - x @ np.linalg.lstsq(x, w, rcond=None)[0]
        c = wt.T @ r
        omega = (wt * (r**2 / (1 - h0))[:, None]).T @ wt
        assert wild.stat[j] == pytest.approx(c @ np.linalg.solve(omega, c), rel=1e-8)
    raw = robust_coordinate_tests(yc, za, wa, wb, method="wild", n_resample=19, seed=0,
                                  scale_residuals=False)
    assert np.all(raw.stat > wild.stat)  # the unscaled studentizer is smaller


@pytest.mark.parametrize("method", ["hc3", "wild", "studentized-permutation"])
def test_invariant_to_rescaling(small, method):
    """Rescaling y and the variables (and whitening again) changes nothing."""
    sim, yc, za, wa, zb, wb = small
    base = robust_coordinate_tests(yc, za, wa, wb, rank=2, method=method, n_resample=49, seed=5)
    scale = np.array([3.0, 0.01, 1.0, 50.0, 2.0, 7.0])
    za2, wa2 = _whiten(sim.a * scale + 4.0)
    zb2, wb2 = _whiten(sim.b * 0.2)
    y2 = 10.0 * sim.y - 3.0
    again = robust_coordinate_tests(y2 - y2.mean(), za2, wa2, wb2, rank=2, method=method,
                                    n_resample=49, seed=5)
    np.testing.assert_allclose(again.stat, base.stat, rtol=1e-7)
    np.testing.assert_allclose(again.pvalue, base.pvalue, rtol=1e-7)


@pytest.mark.parametrize("method", ["wild", "studentized-permutation"])
def test_resampling_pvalues_seeded(small, method):
    _, yc, za, wa, zb, wb = small
    kw = dict(rank=2, method=method, n_resample=39)
    one = robust_coordinate_tests(yc, zb, wb, wa, seed=11, **kw)
    two = robust_coordinate_tests(yc, zb, wb, wa, seed=np.random.default_rng(11), **kw)
    np.testing.assert_array_equal(one.pvalue, two.pvalue)
    assert np.all((one.pvalue >= 1 / 40) & (one.pvalue <= 1))
    assert f"B={39}" in one.dist


def test_chunked_equals_unchunked(small, monkeypatch):
    from jdr_stats.support import _robust as support_robust

    _, yc, za, wa, _, wb = small
    full = robust_coordinate_tests(yc, za, wa, wb, method="hc3")
    wild = robust_coordinate_tests(yc, za, wa, wb, method="wild", n_resample=19, seed=2)
    monkeypatch.setattr(jdr.config, "CHUNK_FLOATS", 1000)  # one variable per chunk
    np.testing.assert_allclose(robust_coordinate_tests(yc, za, wa, wb, method="hc3").stat, full.stat)
    np.testing.assert_allclose(
        robust_coordinate_tests(yc, za, wa, wb, method="wild", n_resample=19, seed=2).pvalue,
        wild.pvalue)


@pytest.mark.parametrize("rank", [None, 2])
def test_single_precision_resample_sums(small, monkeypatch, rank):
    """The wild bootstrap's resample sums in single precision give the
    p-values of double precision (marginal and conditional tests)."""
    from jdr_stats.support import _robust as support_robust

    _, yc, za, wa, _, wb = small
    kw = dict(rank=rank, method="wild", n_resample=499, seed=5)
    assert support_robust._RESAMPLE_DTYPE == np.float32
    single = robust_coordinate_tests(yc, za, wa, wb, **kw)
    monkeypatch.setattr(support_robust, "_RESAMPLE_DTYPE", np.float64)
    double = robust_coordinate_tests(yc, za, wa, wb, **kw)
    np.testing.assert_array_equal(single.stat, double.stat)
    assert np.max(np.abs(single.pvalue - double.pvalue)) <= 1 / 500


def test_null_pvalues_roughly_uniform_heavy_tailed():
    """Independent t(5) blocks, y unrelated to a: the HC3 p-values of block a
    reject about 5% at 0.05 (pooled over variables and replications)."""
    rej = []
    for seed in range(20):
        sim = jdr.simulate.bilinear(300, 8, 6, 1, design="t5", ar1=0.5, seed=seed)
        za, wa = _whiten(sim.a)
        _, wb = _whiten(sim.b)
        y = np.random.default_rng(seed).standard_t(5, 300) + sim.b[:, 0] ** 2
        p = robust_coordinate_tests(y - y.mean(), za, wa, wb, method="hc3").pvalue
        rej.append(np.mean(p <= 0.05))
    rate = np.mean(rej)
    assert abs(rate - 0.05) < 4 * np.sqrt(0.05 * 0.95 / 160)


def test_bad_input(small):
    _, yc, za, wa, _, wb = small
    with pytest.raises(TypeError, match="yc"):
        robust_coordinate_tests(list(yc), za, wa, wb)
    with pytest.raises(ValueError, match="z must be 2-dimensional"):
        robust_coordinate_tests(yc, za[:, 0], wa, wb)
    bad = za.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="z must be finite"):
        robust_coordinate_tests(yc, bad, wa, wb)
    with pytest.raises(ValueError, match="same number of rows"):
        robust_coordinate_tests(yc[:-1], za, wa, wb)
    with pytest.raises(ValueError, match="rank must be between 1 and 5; got 7"):
        robust_coordinate_tests(yc, za, wa, wb, rank=7)
    with pytest.raises(TypeError, match="rank"):
        robust_coordinate_tests(yc, za, wa, wb, rank=1.5)
    with pytest.raises(ValueError, match="method must be one of"):
        robust_coordinate_tests(yc, za, wa, wb, method="hc4")
    with pytest.raises(ValueError, match="n_resample must be at least 1; got 0"):
        robust_coordinate_tests(yc, za, wa, wb, method="wild", n_resample=0)
    with pytest.raises(TypeError, match="standardize"):
        robust_coordinate_tests(yc, za, wa, wb, standardize="yes")
    with pytest.raises(ValueError, match="too few observations"):
        robust_coordinate_tests(yc[:10], za[:10], wa[:10], wb[:10])
    with pytest.raises(ValueError, match="constant variable"):
        zero = za.copy()
        zero[:, 1] = 0.0
        robust_coordinate_tests(yc, zero, wa, wb)


# --------------------------------------------------------------------------
# q-values
# --------------------------------------------------------------------------
def test_fdr_qvalues_match_statsmodels():
    p = np.random.default_rng(0).uniform(size=40) ** 3
    for rule, name in (("bh", "fdr_bh"), ("by", "fdr_by")):
        np.testing.assert_allclose(fdr_qvalues(p, rule), multipletests(p, method=name)[1])
    assert np.all(fdr_qvalues(p, "by") >= fdr_qvalues(p, "bh"))


@pytest.mark.parametrize("rule", ["bh", "by"])
def test_fdr_qvalues_nan_never_spoils(rule):
    p = np.array([0.001, np.nan, 0.02, 0.3, np.nan, 0.04])
    q = fdr_qvalues(p, rule)
    assert np.isnan(q[[1, 4]]).all()
    ok = ~np.isnan(p)
    np.testing.assert_allclose(q[ok], fdr_qvalues(p[ok], rule))
    assert not (q <= 1.0)[[1, 4]].any()  # a NaN is never selected
    assert np.isnan(fdr_qvalues(np.array([np.nan, np.nan]), rule)).all()


def test_fdr_qvalues_bad_input():
    with pytest.raises(ValueError, match="rule must be one of"):
        fdr_qvalues(np.array([0.1]), "holm")
    with pytest.raises(ValueError, match="pvalues must lie in"):
        fdr_qvalues(np.array([0.1, 1.5]))


# --------------------------------------------------------------------------
# the recorded study, one setting replayed (studies/study_support_robust.py)
# --------------------------------------------------------------------------
@pytest.mark.slow
def test_replay_study_t5_ar08_m500():
    """Setting ``t5-ar0.8-m500-n30-r2`` of the study with its seeds (133000..133199):
    t(5) blocks mixed by AR(1) 0.8, m = 500, n1 = n2 = 30, s = 5, r = 2; the
    default conditional test (wild bootstrap, B = 999) with BH at 0.1 keeps the
    FDR (mean over both blocks) within 0.1 + 2 MC SE, where the version-0.1
    default (factored F) does not.  About 30 s."""
    fdp, fdp_f, power = [], [], []
    for seed in range(133000, 133200):
        sim = jdr.simulate.bilinear(500, 30, 30, 2, s1=5, s2=5, design="t5", ar1=0.8, seed=seed)
        model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
        res = model.select_support(rank=2, fdr=0.1, seed=seed)
        old = model.select_support(rank=2, fdr=0.1, method="chi2")
        rows = []
        for block, truth in (("a", np.abs(sim.U).sum(1) > 0), ("b", np.abs(sim.V).sum(1) > 0)):
            sel = res.table.xs(block, level="block")["selected"].to_numpy(bool)
            sel_f = old.table.xs(block, level="block")["selected"].to_numpy(bool)
            rows.append(((sel & ~truth).sum() / max(sel.sum(), 1),
                         (sel_f & ~truth).sum() / max(sel_f.sum(), 1),
                         (sel & truth).sum() / truth.sum()))
        a, f, p = np.mean(rows, axis=0)
        fdp.append(a)
        fdp_f.append(f)
        power.append(p)
    se = np.std(fdp, ddof=1) / np.sqrt(len(fdp))
    assert np.mean(fdp) <= 0.1 + 2 * se
    se_f = np.std(fdp_f, ddof=1) / np.sqrt(len(fdp_f))
    assert np.mean(fdp_f) > 0.1 + 2 * se_f  # the old default fails here
    assert np.mean(power) > 0.1


@pytest.mark.slow
def test_replay_study_marginal_t5_ar08_m500():
    """Setting ``marginal-t5-ar0.8-m500-n30`` of the study (``--stage marginal``)
    with its seeds (141000..141199): the default marginal test (no rank; wild
    bootstrap, B = 999) with BH at 0.1 keeps the FDR within 0.1 + 2 MC SE,
    where the partial F test (``method="chi2"``) does not.  About 30 s."""
    fdp, fdp_f = [], []
    for seed in range(141000, 141200):
        sim = jdr.simulate.bilinear(500, 30, 30, 2, s1=5, s2=5, design="t5", ar1=0.8, seed=seed)
        model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
        res = model.select_support(fdr=0.1, seed=seed)
        old = model.select_support(fdr=0.1, method="chi2")
        assert res.test == "marginal" and "wild" in res.method_label
        rows = []
        for block, truth in (("a", np.abs(sim.U).sum(1) > 0), ("b", np.abs(sim.V).sum(1) > 0)):
            sel = res.table.xs(block, level="block")["selected"].to_numpy(bool)
            sel_f = old.table.xs(block, level="block")["selected"].to_numpy(bool)
            rows.append(((sel & ~truth).sum() / max(sel.sum(), 1),
                         (sel_f & ~truth).sum() / max(sel_f.sum(), 1)))
        a, f = np.mean(rows, axis=0)
        fdp.append(a)
        fdp_f.append(f)
    se = np.std(fdp, ddof=1) / np.sqrt(len(fdp))
    assert np.mean(fdp) <= 0.1 + 2 * se
    se_f = np.std(fdp_f, ddof=1) / np.sqrt(len(fdp_f))
    assert np.mean(fdp_f) > 0.1 + 2 * se_f  # the partial F test fails here


def test_bh_qvalues_delegates_to_statsmodels():
    from jdr_stats.inference.hypotheses import bh_qvalues

    p = np.array([0.2, 0.001, np.nan, 0.03, 0.9])
    np.testing.assert_allclose(bh_qvalues(p), fdr_qvalues(p, "bh"))
    assert bh_qvalues(np.array([])).shape == (0,)
