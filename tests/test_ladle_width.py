"""The ladle at width: its eigenvalue part counts only the excess
of ``s_{k+1}^2`` over the noise edge of the complement block, estimated by
sign-flip draws of that block's noise (inference/_ladle_criterion.py; theory:
docs/theory/rank_tests.md, section 9)."""

from __future__ import annotations

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats import config, policy
from jdr_stats.inference._ladle_criterion import excess_part, ladle_kmax, noise_edge
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference.rank_robust import ladle_from_chunks


def _white(y, a, b):
    """Centred y, sample-whitened blocks and the full SVD of X_lin."""
    yc = y - y.mean()
    aw = np.linalg.solve(np.linalg.cholesky(np.cov(a.T, bias=True)), (a - a.mean(0)).T).T
    bw = np.linalg.solve(np.linalg.cholesky(np.cov(b.T, bias=True)), (b - b.mean(0)).T).T
    u, s, vt = np.linalg.svd(aw.T @ (yc[:, None] * bw) / y.size)
    return yc, aw, bw, u, s, vt.T


def _chunks(yc, aw, bw, rows):
    return lambda: ((yc[i:i + rows], aw[i:i + rows], bw[i:i + rows]) for i in range(0, yc.size, rows))


@pytest.mark.parametrize("design", ["gaussian", "t5"])
def test_noise_edge_covers_the_top_noise_eigenvalue(design):
    """With no signal (symmetric blocks), the sample's X_lin and the T
    sign-flip draws are exchangeable draws of the same noise (heavy tails
    included), so the largest squared singular value of X_lin lies below the
    edge e_0, the draws' quantile q at position q (T - 1), in a share
    between (floor(q (T - 1)) + 1) / (T + 1) and one more draw's worth
    (0.857 to 0.905 for q = 0.9, T = 20).  (The Poisson bootstrap's
    deviations over-state this edge at width: their weights have fourth
    moment 4.)"""
    rng = np.random.default_rng([2026, len(design)])
    m, n1, n2, reps = 600, 14, 10, 150
    below = 0
    for _ in range(reps):
        sim = jdr.simulate.bilinear(m, n1, n2, 1, design=design, strengths=[0.0], seed=rng)
        yc, aw, bw, u, s, v = _white(sim.y, sim.a, sim.b)
        var_y = float(yc @ yc) / m
        edge = noise_edge(_chunks(yc, aw, bw, m), u, s, v, 0, var_y, 3, rng)
        below += s[0] ** 2 / var_y <= edge[0]
        # the edge shrinks with the complement like the Marchenko-Pastur edge
        assert np.all(np.diff(edge) < 0)
    pos, draws = policy.LADLE_EDGE_QUANTILE * (policy.LADLE_EDGE_DRAWS - 1), policy.LADLE_EDGE_DRAWS
    lo, hi = (np.floor(pos) + 1) / (draws + 1), (np.floor(pos) + 2) / (draws + 1)
    se = np.sqrt(lo * (1 - lo) / reps)
    assert lo - 3 * se <= below / reps <= hi + 3 * se


def test_noise_edge_does_not_depend_on_the_chunks():
    sim = jdr.simulate.bilinear(900, 8, 6, 2, seed=1)
    yc, aw, bw, u, s, v = _white(sim.y, sim.a, sim.b)
    var_y = float(yc @ yc) / yc.size
    one = noise_edge(_chunks(yc, aw, bw, 900), u, s, v, 2, var_y, 4, np.random.default_rng(5))
    many = noise_edge(_chunks(yc, aw, bw, 250), u, s, v, 2, var_y, 4, np.random.default_rng(5))
    np.testing.assert_allclose(many, one, rtol=1e-12)


def test_excess_part():
    lam = np.array([0.5, 0.3, 0.1, 0.09])
    edge = np.array([0.12, 0.11, 0.10, 0.09])
    phi = excess_part(lam, edge)
    excess = np.array([0.38, 0.19, 0.0, 0.0])
    np.testing.assert_allclose(phi, excess / (1 + excess.sum()))
    # no edge: Luo and Li's phi
    np.testing.assert_allclose(excess_part(lam, np.zeros(4)), lam / (1 + lam.sum()))


def test_narrow_edge_is_small_and_the_choice_is_luo_li():
    """On a narrow design the edge is O((n1 + n2) / m), far below the signal,
    and the ladle chooses what Luo and Li's criterion chooses."""
    sim = jdr.simulate.bilinear(3000, 6, 5, 2, seed=8)
    yc, aw, bw, u, s, v = _white(sim.y, sim.a, sim.b)
    var_y = float(yc @ yc) / yc.size
    lad = ladle_from_chunks(_chunks(yc, aw, bw, 3000), var_y, u, s, v, n_boot=60,
                            rng=np.random.default_rng(0))
    lam = s[: lad.boot_var.size] ** 2 / var_y
    assert lad.rank == int(np.argmin(lad.boot_var + lam / (1 + lam.sum()))) == 2
    assert 3000 * lad.edge[0] < 2 * (np.sqrt(6) + np.sqrt(5)) ** 2
    assert lad.edge[2] < 0.1 * lam[1]


@pytest.mark.slow
def test_ladle_at_300_by_300():
    """The design where Luo and Li's criterion chose its largest candidate
    (52) instead of r = 5 (Gaussian, m = 1e4, studies/check_ladle_width.py
    design 6, its seed): the ladle chooses 5 in each of 3 samples; Luo and
    Li's criterion, recomputed from the same replicates, chooses 52."""
    rng = np.random.default_rng([20261126, 6])
    for _ in range(3):
        sim = jdr.simulate.scenario("gaussian", 10_000, 300, 300, 5, seed=rng)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(5)
        w = _whiten(res.model.data, res.moments, rows=True)
        lad = ladle_from_chunks(w.chunks, w.var_y, w.u, w.s, w.v, n_boot=100, rng=rng)
        lam = w.s[: lad.boot_var.size] ** 2 / w.var_y
        assert lad.rank == 5
        assert int(np.argmin(lad.boot_var + lam / (1 + lam.sum()))) == ladle_kmax(300, 300) == 52
