"""The baselines' moments from passes over row chunks (jdr_stats/baselines/_moments.py)
against direct computations on centred copies, and their accuracy for a
design with a large mean."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from jdr_stats.baselines import PHD, SAVE, SIR, dr_slices
from jdr_stats import config
from jdr_stats.baselines import _moments


@pytest.fixture
def small_chunks(monkeypatch):
    # 256-row chunks: several chunks, and slices that straddle them
    monkeypatch.setattr(config, "CHUNK_BYTES", 8)
    monkeypatch.setattr(config, "MIN_CHUNK_ROWS", 256)


@pytest.fixture(scope="module")
def design():
    rng = np.random.default_rng(11)
    n, p = 1000, 4
    x = rng.standard_normal((n, p)) @ (np.eye(p) + 0.4 * rng.standard_normal((p, p))) + 3.0
    y = x[:, 0] - x[:, 1] ** 2 + rng.standard_normal(n)
    w = rng.uniform(0.5, 2.0, n)
    return x, y, w * n / w.sum()


def _direct(x, w):
    n = x.shape[0]
    w1 = np.ones(n) if w is None else w
    mean = w1 @ x / w1.sum()
    xc = x - mean
    return mean, (xc * w1[:, None]).T @ xc / w1.sum(), xc, w1


@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("second", [False, True])
@pytest.mark.parametrize("layout", ["C", "F"])
def test_slice_moments_match_direct(design, small_chunks, weighted, second, layout):
    # "F": column-major rows (a DataFrame's values) are gathered by column
    x, y, w = design
    x = np.asarray(x, order=layout)
    w = w if weighted else None
    slices = dr_slices(y, 7)
    mom, sm = _moments.slice_moments(x, w, slices, second=second)
    mean, cov, xc, w1 = _direct(x, w)
    assert_allclose(mom.mean, mean, rtol=1e-13)
    assert_allclose(mom.cov, cov, rtol=1e-12, atol=1e-13)
    for k in range(slices.n_slices):
        rows = slices.indicator == k
        wk = w1[rows]
        mk = wk @ xc[rows] / wk.sum()
        assert_allclose(sm.f[k], wk.sum() / w1.sum(), rtol=1e-13)
        assert_allclose(sm.means[k], mk, rtol=1e-11, atol=1e-13)
        if second:
            dk = xc[rows] - mk
            assert_allclose(sm.covs[k], (dk * wk[:, None]).T @ dk / wk.sum(),
                            rtol=1e-11, atol=1e-13)
        else:
            assert sm.covs is None


@pytest.mark.parametrize("weighted", [False, True])
def test_design_and_residual_moments_match_direct(design, small_chunks, weighted):
    x, y, w = design
    w = w if weighted else None
    mean, cov, xc, w1 = _direct(x, w)
    r = y - w1 @ y / w1.sum()
    mom, gq, cross = _moments.design_moments(x, w, q=w1 * r, r=w1 * r)
    assert_allclose(mom.cov, cov, rtol=1e-12, atol=1e-13)
    assert_allclose(gq, (xc * (w1 * r)[:, None]).T @ xc, rtol=1e-11, atol=1e-10)
    assert_allclose(cross, xc.T @ (w1 * r), rtol=1e-11, atol=1e-10)
    beta = np.linalg.solve(cov, cross / x.shape[0])
    g_res, res = _moments.residual_gram(x, mom.mean, r, beta, w)
    assert_allclose(res, r - xc @ beta, rtol=1e-11, atol=1e-12)
    assert_allclose(g_res, (xc * (w1 * res)[:, None]).T @ xc, rtol=1e-11, atol=1e-10)
    assert_allclose(_moments.centred_cross(x, mom.mean, y), xc.T @ y, rtol=1e-11)


@pytest.mark.parametrize(
    "fit",
    [
        lambda y, x: SIR(y, x).fit(n_slices=8),
        lambda y, x: SAVE(y, x).fit(n_slices=8),
        lambda y, x: PHD(y, x).fit(),
        lambda y, x: PHD(y, x).fit(residuals=True),
    ],
    ids=["sir", "save", "phdy", "phdres"],
)
def test_large_mean_keeps_accuracy(design, small_chunks, fit):
    # Shifting x by 1e6 rounds its entries to about 1e-10; the kernel may
    # change by that much, not by the eps * |xbar|^2 / var ~ 1e-4 of an
    # uncentred Gram matrix.
    x, y, _ = design
    base = fit(y, x)
    shifted = fit(y, x + 1e6)
    scale = np.abs(base.kernel).max()
    assert np.abs(shifted.kernel - base.kernel).max() < 1e-8 * scale
    assert_allclose(shifted.eigenvalues, base.eigenvalues, rtol=1e-7, atol=1e-8 * scale)
