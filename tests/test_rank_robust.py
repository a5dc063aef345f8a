"""Unit tests of the Wald rank statistic and the ladle (inference/rank_robust.py)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

import jdr_stats as jdr
from jdr_stats.inference.rank_robust import (
    complement_block,
    complement_moments,
    frobenius_from_moments,
    ladle_rank,
    wald_from_moments,
    wald_rank_test,
    whitened_chunks,
)


def _whiten(y, a, b):
    m = y.shape[0]
    yc = y - y.mean()
    ac, bc = a - a.mean(0), b - b.mean(0)
    la = np.linalg.cholesky(ac.T @ ac / m)
    lb = np.linalg.cholesky(bc.T @ bc / m)
    aw = np.linalg.solve(la, ac.T).T
    bw = np.linalg.solve(lb, bc.T).T
    u, s, vt = np.linalg.svd(aw.T @ (yc[:, None] * bw) / m)
    return yc, aw, bw, u, s, vt.T


def _wald(y, a, b, k, **kw):
    return wald_rank_test(*_whiten(y, a, b), k, **kw)


@pytest.fixture(scope="module")
def data():
    sim = jdr.simulate.bilinear(300, 5, 4, 2, design="t5", seed=11)
    return sim.y, sim.a, sim.b


@pytest.mark.parametrize("k", [0, 1, 2])
def test_invariant_to_scaling_and_rotation(data, k):
    y, a, b = data
    base = _wald(y, a, b, k)
    rng = np.random.default_rng(0)
    rot, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    for yy, aa, bb in (
        (3.5 * y - 2.0, a, b),
        (y, a * np.array([1.0, 10.0, 0.1, 2.0, 5.0]) + 4.0, b),
        (y, a @ rot, b),
        (y, a, b @ np.diag([2.0, 1.0, 3.0, 0.5])),
    ):
        other = _wald(yy, aa, bb, k)
        assert other.statistic == pytest.approx(base.statistic, rel=1e-8)
        assert other.pvalue == pytest.approx(base.pvalue, rel=1e-6, abs=1e-14)


def test_agrees_with_dense_computation(data):
    y, a, b = data
    yc, aw, bw, u, s, v = _whiten(y, a, b)
    m = y.shape[0]
    for k in (0, 1, 3):
        u0, v0 = u[:, k:], v[:, k:]
        uc, vc = aw @ u0, bw @ v0
        c_uy, c_yv, c_uv = uc.T @ yc / m, vc.T @ yc / m, uc.T @ vc / m
        psi = (
            np.einsum("ip,i,iq->ipq", uc, yc, vc)
            - np.einsum("ip,q->ipq", uc, c_yv)
            - np.einsum("p,iq->ipq", c_uy, vc)
            - np.einsum("i,pq->ipq", yc, c_uv)
        ).reshape(m, -1)
        c = (u0.T @ (aw.T @ (yc[:, None] * bw) / m) @ v0).reshape(-1)
        # the influence functions average to the complement block exactly
        np.testing.assert_allclose(psi.mean(0), c, atol=1e-12)
        d = c.size
        # centred Hotelling T^2 and its F transform, computed directly
        t2 = m * c @ np.linalg.solve(np.cov(psi.T, ddof=1), c)
        f = t2 * (m - d) / (d * (m - 1))
        res = wald_rank_test(yc, aw, bw, u, s, v, k)
        assert res.statistic == pytest.approx(m * c @ np.linalg.solve(psi.T @ psi / m, c))
        assert res.fstat == pytest.approx(f, rel=1e-8)
        assert res.pvalue == pytest.approx(stats.f.sf(f, d, m - d), rel=1e-7, abs=1e-12)
        assert (res.df1, res.df2) == (d, m - d)
        assert 0 <= res.statistic <= m


def _robust(y, a, b, k, batch_rows=None):
    yc, aw, bw, u, s, v = _whiten(y, a, b)
    m = yc.shape[0]
    step = batch_rows or m
    chunks = lambda: ((yc[i:i + step], aw[i:i + step], bw[i:i + step])  # noqa: E731
                      for i in range(0, m, step))
    return frobenius_from_moments(complement_moments(chunks, u[:, k:], v[:, k:], k), s)


def test_robust_agrees_with_dense_computation(data):
    y, a, b = data
    yc, aw, bw, u, s, v = _whiten(y, a, b)
    m = y.shape[0]
    for k in (0, 2):
        uc, vc = aw @ u[:, k:], bw @ v[:, k:]
        c_uy, c_yv, c_uv = uc.T @ yc / m, vc.T @ yc / m, uc.T @ vc / m
        psi = (np.einsum("ip,i,iq->ipq", uc, yc, vc) - np.einsum("ip,q->ipq", uc, c_yv)
               - np.einsum("p,iq->ipq", c_uy, vc) - np.einsum("i,pq->ipq", yc, c_uv))
        psi = psi.reshape(m, -1)
        s2 = yc @ yc / m
        lam = m * np.sum(s[k:] ** 2) / s2
        # Lambda_k is m ||mean psi||^2 / s_y^2 exactly
        assert lam == pytest.approx(m * np.sum(psi.mean(0) ** 2) / s2, rel=1e-10)
        n2 = np.sum(psi**2, axis=1)
        tau = n2.sum() / m / s2
        gram = psi @ psi.T
        off = np.sum(gram**2) - np.sum(np.diag(gram) ** 2)
        var = (np.sum((n2 - tau * yc**2) ** 2) + 2 * off) / (m * s2) ** 2
        res = _robust(y, a, b, k)
        assert res.statistic == pytest.approx(lam, rel=1e-10)
        assert res.mean == pytest.approx(tau, rel=1e-10)
        assert res.var == pytest.approx(var, rel=1e-8)
        h = 2 * tau**2 / var
        assert res.pvalue == pytest.approx(stats.chi2.sf(lam * h / tau, h), rel=1e-8, abs=1e-12)
        assert _robust(y, a, b, k, batch_rows=37).var == pytest.approx(var, rel=1e-8)


def test_robust_invariance_and_null(data):
    y, a, b = data
    base = _robust(y, a, b, 1)
    rng = np.random.default_rng(1)
    rot, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    for yy, aa, bb in ((-2.0 * y + 1.0, a, b), (y, a * 7.0 - 1.0, b @ rot)):
        # a p-value can be near zero: an absolute floor besides the relative tolerance
        assert _robust(yy, aa, bb, 1).pvalue == pytest.approx(base.pvalue, rel=1e-6, abs=1e-12)
    # Gaussian blocks, y independent and heavy-tailed: the variance is about 2 d
    # (given y, Lambda_0 is exactly chi2(d)), and the p-values are about uniform
    reps, m = 300, 400
    pv, ratio = np.empty(reps), np.empty(reps)
    for i in range(reps):
        aa, bb = rng.standard_normal((m, 3)), rng.standard_normal((m, 3))
        res = _robust(np.exp(1.0 * rng.standard_normal(m)), aa, bb, 0)
        pv[i], ratio[i] = res.pvalue, res.var / (2 * 9)
    assert abs(np.median(ratio) - 1) < 0.25
    assert abs(np.mean(pv <= 0.05) - 0.05) < 4 * np.sqrt(0.05 * 0.95 / reps)
    assert abs(np.mean(pv) - 0.5) < 4 * np.sqrt(1 / 12 / reps)


def test_chunked_equals_one_shot(data):
    y, a, b = data
    w = _whiten(y, a, b)
    for k in (0, 2):
        one = wald_rank_test(*w, k)
        for batch in (1, 7, 299):
            res = wald_rank_test(*w, k, batch_rows=batch)
            assert res.statistic == pytest.approx(one.statistic, rel=1e-10)


def test_row_source_chunks(data):
    """A stand-in row source, whitened chunk by chunk, gives the same moments."""
    y, a, b = data

    class Source:
        def iter_chunks(self, batch_rows=None):
            step = batch_rows or 50
            for i in range(0, y.shape[0], step):
                yield y[i:i + step], a[i:i + step], b[i:i + step]

    m = y.shape[0]
    ac, bc = a - a.mean(0), b - b.mean(0)
    la = np.linalg.cholesky(ac.T @ ac / m)
    lb = np.linalg.cholesky(bc.T @ bc / m)
    yc, aw, bw, u, s, v = _whiten(y, a, b)
    ch = whitened_chunks(Source(), y.mean(), a.mean(0), b.mean(0), la, lb, batch_rows=64)
    mom = complement_moments(ch, u[:, 1:], v[:, 1:], 1)
    res = wald_from_moments(mom, complement_block(s, 1, 5, 4).reshape(-1))
    assert res.statistic == pytest.approx(wald_rank_test(yc, aw, bw, u, s, v, 1).statistic)
    with pytest.raises(TypeError, match="source"):
        whitened_chunks([1, 2], 0.0, a.mean(0), b.mean(0), la, lb)


def test_bad_input(data):
    y, a, b = data
    yc, aw, bw, u, s, v = _whiten(y, a, b)
    with pytest.raises(TypeError, match="y"):
        wald_rank_test(list(yc), aw, bw, u, s, v, 0)
    with pytest.raises(ValueError, match="same number of rows"):
        wald_rank_test(yc[:-1], aw, bw, u, s, v, 0)
    with pytest.raises(ValueError, match=r"k must be between 0 and min\(n1, n2\) - 1 = 3; got 4"):
        wald_rank_test(yc, aw, bw, u, s, v, 4)
    with pytest.raises(TypeError, match="k must be an integer"):
        wald_rank_test(yc, aw, bw, u, s, v, 1.0)
    with pytest.raises(ValueError, match="full SVD"):
        wald_rank_test(yc, aw, bw, u[:, :3], s, v, 0)
    bad = aw.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="non-finite"):
        wald_rank_test(yc, bad, bw, u, s, v, 0)
    with pytest.raises(ValueError, match="batch_rows"):
        wald_rank_test(yc, aw, bw, u, s, v, 0, batch_rows=0)
    # more complement entries than rows: no F reference
    small = jdr.simulate.bilinear(15, 5, 4, 1, seed=0)
    with pytest.raises(ValueError, match="more rows than complement entries"):
        _wald(small.y, small.a, small.b, 0)
    with pytest.raises(ValueError, match="n_boot"):
        ladle_rank(yc, aw, bw, u, s, v, n_boot=1)
    with pytest.raises(ValueError, match="kmax"):
        ladle_rank(yc, aw, bw, u, s, v, kmax=4)


def test_f_reference_tail():
    """Under H0 (Gaussian, y independent) the F p-values are close to uniform,
    and the F reference tends to chi2(d) / d scaling as m grows."""
    rng = np.random.default_rng(5)
    reps, m = 300, 400
    pv = np.empty(reps)
    for i in range(reps):
        a, b, y = rng.standard_normal((m, 3)), rng.standard_normal((m, 3)), rng.standard_normal(m)
        pv[i] = _wald(y, a, b, 0).pvalue
    se = np.sqrt(0.05 * 0.95 / reps)
    assert abs(np.mean(pv <= 0.05) - 0.05) < 4 * se
    assert abs(np.mean(pv) - 0.5) < 4 * np.sqrt(1 / 12 / reps)
    # large m: F(d, m - d) p-value of the transformed T ~ chi2(d) p-value of T
    d, t = 9, 20.0
    for mm, tol in ((10_000, 2e-3), (1_000_000, 2e-5)):
        fstat = (mm - d) * t / (d * (mm - t))
        assert stats.f.sf(fstat, d, mm - d) == pytest.approx(stats.chi2.sf(t, d), abs=tol)


def test_ladle_strong_signal_and_seed():
    sim = jdr.simulate.bilinear(2000, 6, 5, 2, seed=3)
    w = _whiten(sim.y, sim.a, sim.b)
    res = ladle_rank(*w, n_boot=60, seed=1)
    assert res.rank == 2
    assert res.criterion.shape == (5,)
    assert res.boot_var[0] == 0.0
    again = ladle_rank(*w, n_boot=60, seed=1, batch_rows=333)
    np.testing.assert_allclose(again.criterion, res.criterion)
    null = jdr.simulate.bilinear(2000, 6, 5, 2, strengths=[0.0, 0.0], seed=4)
    assert ladle_rank(*_whiten(null.y, null.a, null.b), n_boot=60, seed=1).rank == 0


@pytest.mark.slow
def test_study_replay_t5_rank1():
    """Replays the study's setting "t5, H0 rank 1" (m=1500, n1=n2=5, 400
    replications, its seed): the robust (default) and Wald tests hold their
    size, chi2 does not; the recorded outputs hold the same numbers."""
    import importlib.util
    import pathlib

    root = pathlib.Path(__file__).parents[1]
    spec = importlib.util.spec_from_file_location(
        "study_rank_robust", root / "studies" / "study_rank_robust.py"
    )
    study = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(study)
    (j, sc, r, (m, n1, n2)), = [x for x in study.plan() if x[1].name == "t5" and x[2] == 1]
    reps = 400
    # the ladle (first 150 replications) draws from the same generator
    pv, _, _ = study.run_setting(sc.name, r, m, n1, n2, reps, ("chi2", "wald", "general-fs"),
                                 150, study.setting_rng(study.SEED, j, r))
    _, lo, hi = study.band(reps)
    size = {meth: np.mean(pv[meth][:, r] <= study.ALPHA) for meth in pv}
    assert lo <= size["general-fs"] <= hi and lo <= size["wald"] <= hi
    assert size["chi2"] > hi  # normal theory is liberal under a t(5) design
    head = f"== t5: H0 rank 1, m={m}, n1={n1}, n2={n2}"
    for name, meths in (("study_rank_robust.txt", ("chi2", "wald")),
                        ("study_rank_robust_fs.txt", ("chi2", "general-fs"))):
        text = (root / "studies" / "results" / name).read_text()
        block = text.split(head)[1].split("==")[0]
        rec = {ln.split()[0]: float(ln.split()[1]) for ln in block.splitlines()[2:]
               if ln.strip() and not ln.startswith("ladle")}
        for meth in meths:
            assert rec[meth] == pytest.approx(size[meth], abs=6e-4)
