"""The robust rank test at any width (inference/_robust_core.py)."""

from __future__ import annotations

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats import config
from jdr_stats.exceptions import AssumptionWarning
from jdr_stats.inference._robust_core import (
    first_from_sums,
    robust_moments,
    robust_moments_ranks,
    robust_pvalue,
    rotated_first,
)
from jdr_stats.inference.rank_robust import complement_moments, frobenius_from_moments

NA = [f"a{i}" for i in range(6)]
NB = [f"b{i}" for i in range(5)]


def _whiten(y, a, b):
    m = y.shape[0]
    yc = y - y.mean()
    ac, bc = a - a.mean(0), b - b.mean(0)
    aw = np.linalg.solve(np.linalg.cholesky(ac.T @ ac / m), ac.T).T
    bw = np.linalg.solve(np.linalg.cholesky(bc.T @ bc / m), bc.T).T
    u, s, vt = np.linalg.svd(aw.T @ (yc[:, None] * bw) / m)
    return yc, aw, bw, u, s, vt.T


def _rot_chunks(y, ua, vb, step):
    def gen():
        for i in range(0, y.shape[0], step):
            yield y[i:i + step], ua[i:i + step], vb[i:i + step]
    return gen


@pytest.fixture(scope="module")
def heavy():
    sim = jdr.simulate.bilinear(700, 6, 5, 2, design="t5", seed=3)
    yc, aw, bw, u, s, v = _whiten(sim.y, sim.a, sim.b)
    return yc, aw, bw, u, s, v, _rot_chunks(yc, aw @ u, bw @ v, 97)


@pytest.mark.parametrize("route", ["dxd", "gram"])
def test_exact_routes_reproduce_the_first_version(heavy, route):
    """Uncentred, with the per-row reference, the structured computation is the
    old d x d one to rounding."""
    yc, aw, bw, u, s, v, rch = heavy
    first = rotated_first(rch)
    for k in range(4):
        old = frobenius_from_moments(
            complement_moments(lambda: [(yc, aw, bw)], u[:, k:], v[:, k:], k), s)
        mom = robust_moments(rch, first, k, centre=False, route=route, reference="per-row")
        pv, df, _scale, mc = robust_pvalue(old.statistic, mom)
        assert mom.var == pytest.approx(old.var, rel=1e-10)
        assert mom.tau == pytest.approx(old.mean, rel=1e-12)
        assert pv == pytest.approx(old.pvalue, rel=1e-8, abs=1e-14)
        assert df == pytest.approx(old.df, rel=1e-10) and mc == 0.0


def test_first_sums_from_moments_equal_the_pass(heavy):
    yc, aw, bw, u, s, v, rch = heavy
    m = yc.shape[0]
    one = rotated_first(rch)
    two = first_from_sums(m, aw.T @ yc / m, bw.T @ yc / m, aw.T @ bw / m, yc @ yc / m, u, s, v)
    for x, z in ((one.c_uy, two.c_uy), (one.c_vy, two.c_vy), (one.c_uv, two.c_uv),
                 (one.psibar, two.psibar)):
        np.testing.assert_allclose(x, z, atol=1e-12)


def test_sampled_route_is_unbiased_within_its_stated_error(heavy):
    """The importance-sampled off-diagonal sum: mean over seeds equals the exact
    value within its Monte Carlo SE, and the stated SE is the observed spread."""
    _yc, _aw, _bw, _u, _s, _v, rch = heavy
    first = rotated_first(rch)
    exact = robust_moments(rch, first, 2, route="gram")
    runs = [robust_moments(rch, first, 2, route="pairs", rng=np.random.default_rng(i))
            for i in range(30)]
    offs = np.array([r.off for r in runs])
    ses = np.array([r.off_se for r in runs])
    assert abs(offs.mean() - exact.off) < 4 * offs.std(ddof=1) / np.sqrt(offs.size)
    assert 0.6 < ses.mean() / offs.std(ddof=1) < 1.6
    assert np.all(ses <= config.ROBUST_VAR_RTOL * (exact.diag + 2 * exact.off))
    again = robust_moments(rch, first, 2, route="pairs", rng=np.random.default_rng(0))
    assert again.off == runs[0].off  # same seed, same numbers


@pytest.mark.parametrize("reference", ["corrected", "per-row"])
def test_sampled_route_gives_way_to_the_exact_one_when_dearer(heavy, monkeypatch, reference):
    """Above the exact budget the pairs are sampled; when the blocks still
    needed to meet the target would cost more than the exact sum, that sum is
    computed instead (the exact route's numbers, mc_se 0); when the target is
    met first, the draws and numbers are the sampled route's."""
    _yc, _aw, _bw, _u, _s, _v, rch = heavy
    first = rotated_first(rch)
    monkeypatch.setattr(config, "ROBUST_EXACT_FLOPS", 0.0)
    # a target no affordable number of blocks meets: the exact route
    monkeypatch.setattr(config, "ROBUST_VAR_RTOL", 1e-6)
    exact = robust_moments(rch, first, 2, route="dxd", reference=reference)
    auto = robust_moments(rch, first, 2, rng=np.random.default_rng(0), reference=reference)
    assert auto.route == "dxd" and auto.off_se == 0.0 and auto.n_pairs == 0
    assert auto == exact
    # a target met by the fewest blocks: the sampled route, draw for draw
    monkeypatch.setattr(config, "ROBUST_VAR_RTOL", 1.0)
    forced = robust_moments(rch, first, 2, route="pairs", rng=np.random.default_rng(0),
                            reference=reference)
    auto = robust_moments(rch, first, 2, rng=np.random.default_rng(0), reference=reference)
    assert auto.route == "pairs" and auto.n_pairs > 0 and auto == forced


def test_response_matrix_with_one_column_equals_the_vector(heavy):
    yc, aw, bw, u, _s, v, rch = heavy
    ua, vb = aw @ u, bw @ v
    col = _rot_chunks(yc[:, None], ua, vb, 97)
    for k in (0, 2):
        a1 = robust_moments(rch, rotated_first(rch), k)
        a2 = robust_moments(col, rotated_first(col), k)
        assert a2.var == pytest.approx(a1.var, rel=1e-12)
        assert a2.tau == pytest.approx(a1.tau, rel=1e-12)


def test_response_matrix_against_brute_force():
    """Q = 2 whitened responses: tau, diag and off from explicit influence tensors."""
    rng = np.random.default_rng(5)
    m, n1, n2 = 300, 4, 3
    a, b = rng.standard_normal((m, n1)), rng.standard_normal((m, n2))
    ymat = np.column_stack([a[:, 0] * b[:, 0], a[:, 1] ** 2]) + rng.standard_normal((m, 2))
    ymat = ymat - ymat.mean(0)
    ymat = np.linalg.solve(np.linalg.cholesky(ymat.T @ ymat / m), ymat.T).T
    _, aw, bw, u, _s, v = _whiten(ymat[:, 0], a, b)
    ua, vb = aw @ u, bw @ v
    ch = _rot_chunks(ymat, ua, vb, 64)
    first = rotated_first(ch)
    k = 1
    uc, vc = ua[:, k:], vb[:, k:]
    psi = []
    for c in range(2):
        yy = ymat[:, c]
        e, cc, cm = uc.T @ yy / m, vc.T @ yy / m, uc.T @ vc / m
        psi.append(np.einsum("ip,i,iq->ipq", uc, yy, vc) - np.einsum("ip,q->ipq", uc, cc)
                   - np.einsum("p,iq->ipq", e, vc) - np.einsum("i,pq->ipq", yy, cm))
    big = np.stack(psi, axis=1).reshape(m, -1)
    big = big - big.mean(0)
    norms = np.sum(big**2, axis=1)
    gram = big @ big.T
    off = float(np.sum(gram**2) - np.sum(norms**2))
    tau = norms.sum() / m  # s2 = 1 for whitened responses
    diag = float(np.sum((norms - tau * np.sum(ymat**2, axis=1) / 2) ** 2))
    for route in ("dxd", "gram"):
        got = robust_moments(ch, first, k, route=route)
        assert got.s2 == pytest.approx(1.0)
        assert got.tau == pytest.approx(tau, rel=1e-10)
        assert got.diag == pytest.approx(diag, rel=1e-9)
        assert got.off == pytest.approx(off, rel=1e-9)


@pytest.mark.parametrize("reference", ["corrected", "per-row"])
def test_ranks_in_one_sweep_equal_the_dxd_route(monkeypatch, reference):
    """The exact Gram's sweep over several ranks (complement products downdated
    rank by rank, theory 6a) gives each rank's moments of the d x d route."""
    rng = np.random.default_rng(7)
    m, n1, n2 = 300, 5, 4
    a, b = rng.standard_normal((m, n1)), rng.standard_normal((m, n2))
    ymat = np.column_stack([a[:, 0] * b[:, 0], a[:, 1] * b[:, 1], a[:, 2]])
    ymat = ymat + rng.standard_normal((m, 3))
    ymat = ymat - ymat.mean(0)
    ymat = np.linalg.solve(np.linalg.cholesky(ymat.T @ ymat / m), ymat.T).T
    _, aw, bw, u, _s, v = _whiten(ymat[:, 0], a, b)
    ch = _rot_chunks(ymat, aw @ u, bw @ v, 64)
    first = rotated_first(ch)
    monkeypatch.setattr(config, "ROBUST_GRAM_BLOCK", 70)  # several blocks, a ragged last one
    ks = [0, 1, 3]
    swept = robust_moments_ranks(ch, first, ks, route="gram", reference=reference)
    for k, mom in zip(ks, swept, strict=True):
        one = robust_moments(ch, first, k, route="dxd", reference=reference)
        assert mom.route == "gram" and mom.k == k and mom.reference == one.reference
        assert (mom.tau, mom.diag, mom.bias, mom.lin) == (one.tau, one.diag, one.bias, one.lin)
        assert mom.off == pytest.approx(one.off, rel=1e-10)
        assert mom.off_var == pytest.approx(one.off_var, rel=1e-8, abs=1e-12 * one.off ** 2)
    with pytest.raises(ValueError, match="ascending"):
        robust_moments_ranks(ch, first, [2, 1], route="gram")


def test_wide_model_runs_and_streams_like_memory(monkeypatch):
    """No refusal above n1 n2 = 2048; the sampled route streams from a row
    source with the same draws (same row order), so the tables agree."""
    from jdr_stats.streams._sources import ArraySource

    monkeypatch.setattr(config, "ROBUST_EXACT_FLOPS", 0.0)  # force the sampled route
    sim = jdr.simulate.bilinear(1500, 50, 45, 1, seed=2)
    mem = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    src = ArraySource(sim.y, sim.a, sim.b, batch_rows=400)
    streamed = jdr.JointDimReduction.from_source(src, origin="an array source")
    with pytest.warns(AssumptionWarning):
        t_mem = mem.fit(1).rank_tests(max_rank=2).table
    with pytest.warns(AssumptionWarning):
        t_src = streamed.fit(1).rank_tests(max_rank=2).table
    np.testing.assert_allclose(t_src.to_numpy(), t_mem.to_numpy(), rtol=1e-7, atol=1e-12)
    assert t_mem["pvalue"].iloc[0] < 1e-6 and t_mem["pvalue"].iloc[1] > 0.01
    assert (t_mem["mc_se"] < 0.01).all()


def test_robust_p_value_invariant_to_row_order_and_units():
    sim = jdr.simulate.bilinear(600, 6, 5, 1, design="t5", seed=8)
    base = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1).rank_tests().table
    perm = np.random.default_rng(0).permutation(600)
    other = jdr.JointDimReduction(3 * sim.y[perm] + 1, sim.a[perm] * 7.0 - 2,
                                  sim.b[perm][:, ::-1]).fit(1).rank_tests().table
    np.testing.assert_allclose(other["pvalue"], base["pvalue"], rtol=1e-7, atol=1e-12)


def test_seeded_size_at_a_small_width():
    """Size of the default test at H0: r = 1 (true r = 1) on a heavy-tailed design,
    n1 = n2 = 8, m = 800, 300 replications: within alpha +- (2.5 MC SE + 0.005)."""
    reps, alpha = 300, 0.05
    rng = np.random.default_rng(20261126)
    rejections = 0
    for _ in range(reps):
        sim = jdr.simulate.scenario("t5", 800, 8, 8, 1, seed=rng)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
        rejections += res.rank_tests(max_rank=1).table["pvalue"].iloc[1] <= alpha
    size = rejections / reps
    band = 2.5 * np.sqrt(alpha * (1 - alpha) / reps) + 0.005
    assert abs(size - alpha) <= band, size


def test_progress_and_long_run_warning(monkeypatch):
    from jdr_stats.exceptions import LongRunWarning

    sim = jdr.simulate.bilinear(800, 6, 5, 2, seed=4)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    calls = []
    # rank 2 is this sample's per-block choice (H0: r <= 2, p = 0.084); the
    # joint estimator's p = 0.044 on it chooses 3 (a 5% event at the level)
    res = model.fit("auto", independent_blocks=True,
                    progress=lambda done, total: calls.append((done, total)))
    assert res.rank == 2 and calls[-1] == (3, 5)  # rows k = 0, 1, 2 of at most 5
    seen = []
    res.rank_tests(progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (5, 5)
    monkeypatch.setattr(config, "LONG_RUN_SECONDS", 0.0)
    with pytest.warns(LongRunWarning, match=r"expected to take about .* more rows"):
        model.fit("auto")
    with pytest.warns(LongRunWarning, match="4 more rows"):
        res.rank_tests()


@pytest.mark.slow
def test_paper_bilinear_experiment_1_auto_chooses_r5():
    """The paper's BILINEAR experiment 1 (n1 = n2 = 100, r = 5, m = 1e4, the top
    of its range): fit("auto") with the default robust tests chooses r = 5
    (the first version refused above n1 n2 = 2048)."""
    for seed in range(3):
        sim = jdr.simulate.bilinear(10_000, 100, 100, 5, seed=seed)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto")
        assert res.rank == 5, (seed, res.rank_test_table.table)


@pytest.mark.slow
def test_paper_bilinear_experiment_2_auto_chooses_r5():
    """The paper's BILINEAR experiment 2 (m = 1e4, r = 5, n1 = n2 from 50 to
    500): at n = 200, fit("auto") chooses r = 5 (5 of 5 samples in the width
    check, studies/results/check_paper_auto.txt; at n = 500, n1 n2 / m = 25,
    the robust test's guard chose 5 in 1 of 5, 4 in the others, and the
    default there, the combined test, finds the fifth direction:
    tests/test_rank_spectral.py)."""
    sim = jdr.simulate.bilinear(10_000, 200, 200, 5, seed=np.random.default_rng([2026, 200, 0]))
    with pytest.warns(AssumptionWarning, match="small sample"):  # m < n1 n2: said, not hidden
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto")
    assert res.rank == 5, res.rank_test_table.table
