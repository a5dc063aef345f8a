"""The premise checks of a K-block fit read every pair of blocks."""

import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.diagnostics import premises


def _model(rho: float, seed: int = 0):
    rng = np.random.default_rng(seed)
    f = rng.standard_normal((1500, 1))
    blocks = {n: rng.standard_normal((1500, w)) + rho * f for n, w in
              (("g", 4), ("l", 3), ("c", 3))}
    y = blocks["g"][:, 0] * blocks["l"][:, 0] + rng.standard_normal(1500)
    return jdr.JointDimReduction.from_blocks(y, blocks), blocks


def test_pairs_match_the_two_block_checks():
    model, blocks = _model(0.8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = model.fit(1, independent_blocks=True)
    prem = res.diagnostics
    assert set(prem.pairs) == {("g", "l"), ("g", "c"), ("l", "c")}
    x = np.concatenate([blocks["g"], blocks["c"]], axis=1)
    cov = np.cov(x, rowvar=False)
    two = premises(cov[:4, :4], cov[4:, 4:], cov[:4, 4:], nobs=1500)
    np.testing.assert_allclose(prem.pairs[("g", "c")].cross_correlations,
                               two.cross_correlations, rtol=1e-12)
    # correlated blocks fail the per-block estimator's premise, named by pair
    assert prem.correlated
    ok = prem.table.loc["largest canonical corr. g, c", "ok"]
    assert ok is not None and not ok
    assert any("blocks g and c are correlated" in m for m in prem.messages)


def test_joint_estimator_does_not_flag_correlation():
    model, _ = _model(0.8)
    res = model.fit(1)
    prem = res.diagnostics
    assert prem.joint
    assert prem.table.loc["largest canonical corr. g, l", "ok"] is None
    assert not any("correlated" in m for m in prem.messages)


def test_independent_blocks_pass():
    model, _ = _model(0.0)
    res = model.fit(1, independent_blocks=True)
    assert not res.diagnostics.correlated
    assert res.diagnostics.messages == []
