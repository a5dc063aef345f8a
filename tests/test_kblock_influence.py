"""Analytic influences of a K-block fit's pieces under the joint whitening
(jdr_stats.inference.kblock_influence): the same rows as the delete-one
refits to first order, exact against a numerical derivative, and the rank
tests that read them."""

import warnings

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats.core.kestimate import block_factors, stacked_pieces
from jdr_stats import policy
from jdr_stats.core.tensor import hermite_corrected, pieces
from jdr_stats.fitting._kfit import _jackknife_influences
from jdr_stats.fitting._kwhiten import _aligned, _cross_cov, _whiten_arrays
from jdr_stats.inference.kblock_influence import joint_influences


def _design(m, K=3, n=3, seed=0, factor="gamma"):
    """Blocks sharing a common factor (centred Gamma(2): skewed; or
    Gaussian), so correlated; y a bilinear link plus a main effect."""
    rng = np.random.default_rng(seed)
    f = rng.gamma(2.0, size=(m, 1)) - 2.0 if factor == "gamma" else rng.normal(size=(m, 1))
    blocks = [rng.normal(size=(m, n)) + 0.7 * f for _ in range(K)]
    y = blocks[0][:, 0] * blocks[1][:, 0] + 0.5 * blocks[2][:, 1] + rng.normal(size=m)
    return y, blocks


def _rows(y, blocks, w=None, main_effects=False):
    K, n = len(blocks), blocks[0].shape[1]
    names = [f"b{k}" for k in range(K)]
    labels = [[f"v{j}" for j in range(n)] for _ in range(K)]
    zs, _ = _whiten_arrays(blocks, w, names, labels, "sample", "joint")
    wn = np.full(len(y), 1 / len(y)) if w is None else w / w.sum()
    yc = y - wn @ y
    cc = _cross_cov(zs, wn)
    fac = block_factors(yc, zs, w=w, cross_cov=cc, main_effects=main_effects)
    stacked = stacked_pieces(yc, zs, fac, cross_cov=cc, w=w)
    jack = _jackknife_influences(blocks, y, w, names, labels, "sample", "joint", fac, stacked)
    return joint_influences(yc, zs, fac, cross_cov=cc, w=w), jack


@pytest.mark.parametrize("case", ["gauss", "gamma", "weights", "main_effects", "four_blocks"])
def test_analytic_rows_are_the_jackknife_rows_to_first_order(case):
    """The gap between the analytic and the delete-one rows is O(1/m)
    relative: 4x the rows, about a quarter of the gap (a first-order error
    would not shrink, one of order 1/sqrt(m) would halve); the gap's mean
    over three samples, at most 0.4 of it."""
    gaps = []
    for m in (250, 1000):
        gap = []
        for seed in range(3):
            y, blocks = _design(m, K=4 if case == "four_blocks" else 3,
                                n=2 if case == "four_blocks" else 3, seed=100 * seed + m,
                                factor="gamma" if case == "gamma" else "gauss")
            w = (np.random.default_rng(seed).integers(1, 4, size=m).astype(float)
                 if case == "weights" else None)
            ana, jack = _rows(y, blocks, w, main_effects=case == "main_effects")
            gap.append(max(np.linalg.norm(a - b) / np.linalg.norm(b)
                           for a, b in zip(ana, jack, strict=True)))
        gaps.append(float(np.mean(gap)))
    assert gaps[1] < 0.4 * gaps[0], gaps
    assert gaps[1] < 0.06, gaps


def test_hermite_piece_influence_is_the_derivative_in_a_row_weight():
    """The K-way piece's analytic influence (whitening, centring, cross
    covariances of the correction), the row's own share kept, is W times
    its derivative in one row's weight, to the finite difference's error."""
    m = 300
    y, blocks = _design(m, n=2, seed=3)
    names, labels = ["a", "b", "c"], [["x", "y"]] * 3

    _, white = _whiten_arrays(blocks, np.ones(m), names, labels, "sample", "joint")
    ref = [white.maps[k].solve_t(np.eye(2)) for k in range(3)]

    def piece(w):  # the whitening turned to the fit's (the symmetric change)
        zs, _ = _aligned(*_whiten_arrays(blocks, w, names, labels, "sample", "joint"), ref)
        wn = w / w.sum()
        return hermite_corrected((y - wn @ y) * m * wn, zs, _cross_cov(zs, wn)), zs, wn

    w0 = np.ones(m)
    t0, zs, wn = piece(w0)
    yc = y - wn @ y
    fac = block_factors(yc, zs, cross_cov=_cross_cov(zs, wn))
    rows = joint_influences(yc, zs, fac, cross_cov=_cross_cov(zs, wn), share_left_out=0.0)
    left = joint_influences(yc, zs, fac, cross_cov=_cross_cov(zs, wn))  # the default
    gap = np.linalg.norm(left[0] - rows[0]) / np.linalg.norm(rows[0])
    assert 0 < gap < 0.25, gap  # one copy's share left out: a small change per row
    # a fraction of the share: 1 is the default, and the rows move linearly
    # in it between the exact derivative (0) and the default to first order
    args = dict(cross_cov=_cross_cov(zs, wn))
    for k in range(3):
        np.testing.assert_array_equal(
            joint_influences(yc, zs, fac, share_left_out=1.0, **args)[k], left[k])
    half = joint_influences(yc, zs, fac, share_left_out=0.5, **args)[0]
    mid = (rows[0] + left[0]) / 2
    assert np.linalg.norm(half - mid) < 0.05 * np.linalg.norm(left[0] - rows[0])
    with pytest.raises(ValueError, match="share_left_out must be in"):
        joint_influences(yc, zs, fac, share_left_out=1.5, **args)
    # the shared moments of a part of the rows (the study's cross-fit): every
    # row is the default; a half moves the rows; an empty or misshapen mask
    # is refused
    every = joint_influences(yc, zs, fac, moments_rows=np.ones(m, bool), **args)
    for k in range(3):
        np.testing.assert_allclose(every[k], left[k], rtol=1e-10, atol=1e-12)
    first = np.arange(m) % 2 == 0
    part = joint_influences(yc, zs, fac, moments_rows=first, **args)[0]
    assert 0 < np.linalg.norm(part - left[0]) / np.linalg.norm(left[0]) < 0.5
    for bad in (np.zeros(m, bool), np.ones(m - 1, bool)):
        with pytest.raises(ValueError, match="moments_rows must be"):
            joint_influences(yc, zs, fac, moments_rows=bad, **args)
    key = (0, 1, 2)
    scale = np.sqrt(fac.weights[(key, 0)] / fac.scales[key])
    d0 = sum(np.prod(zs[j].shape[1]) for j in (1, 2))  # block 0's pair columns first
    for i in (0, 7):
        w = w0.copy()
        w[i] += 1e-6
        fd = (piece(w)[0] - t0) / 1e-6 * m
        got = rows[0][i][:, d0:] / scale
        np.testing.assert_allclose(got, fd[0].reshape(2, -1), rtol=1e-4,
                                   atol=1e-4 * np.abs(fd).max())


@pytest.mark.filterwarnings("ignore::jdr_stats.exceptions.RankSelectionWarning")
def test_joint_fit_auto_takes_no_refits_and_keeps_the_sketch_jackknife(monkeypatch):
    """fit("auto") under the joint whitening reads the analytic rows on the
    tensor route (the refits never run); the sketched route keeps them."""
    from jdr_stats import policy
    from jdr_stats.fitting import _kfit

    y, blocks = _design(300, seed=5)
    y = y + 2.0 * blocks[0][:, 0] * blocks[1][:, 0] * blocks[2][:, 0]  # every block enters
    model = jdr.JointDimReduction.from_blocks(y, blocks)

    def refuse(*args, **kw):
        raise AssertionError("delete-one refits ran")

    with monkeypatch.context() as mp:
        mp.setattr(_kfit, "_jackknife_influences", refuse)
        res = model.fit("auto")
    assert res.settings["estimator"] == "joint"
    assert res.settings["influence"]["name"] == "analytic-joint"
    assert policy.kblock_influence("joint", False, 300, 10, True).name == "jackknife"


def _reference_rank_rows(psi, mk, k, fac, rho, mult=None):
    """Block ``k``'s robust tests the direct way: every rank's complement
    rows formed, centred, and the m x m Gram of them read whole."""
    from scipy import stats

    m, n_k, d = psi.shape
    factors, values = fac.factors[k], fac.values[k]
    w = np.ones(m) if mult is None else mult
    widths = [int(np.prod([fac.factors[j].shape[0] for j in piece if j != k]))
              for piece in fac.scales if k in piece]
    cuts = np.cumsum(widths)[:-1] * (d // sum(widths))
    out = []
    for r in range(n_k):
        stat = float(np.sum(values[r:]))
        proj = np.einsum("ind,nj->ijd", psi, factors[:, r:])
        if r:
            vs = (mk.T @ factors[:, :r]) / np.sqrt(values[:r])
            proj = proj - (proj @ vs) @ vs.T
        flat = proj.reshape(m, -1)
        flat = flat - (w @ flat) / w.sum()
        gram = flat @ flat.T
        sq = (flat**2).reshape(m, n_k - r, d).sum(axis=1)
        parts = np.column_stack([c.sum(axis=1) for c in np.split(sq, cuts, axis=1)])
        expected = rho @ ((w @ parts) / w.sum())
        norms = np.diag(gram)
        total = w.sum()
        tau = w @ norms / total**2
        s_off = w @ gram**2 @ w - w @ norms**2
        var = (2.0 * s_off + w @ (norms - expected) ** 2) / total**4
        h = 2.0 * tau**2 / var
        g = tau / h
        out.append((stat, stats.chi2.sf(stat / g, h), h, g))
    return np.array(out)


@pytest.mark.parametrize("K, n, m, weighted", [(3, 3, 200, False), (3, 4, 60, False),
                                               (3, 4, 60, True), (4, 3, 80, True)])
def test_rank_rows_equal_the_direct_m_by_m_gram(K, n, m, weighted):
    """The rank tests from the rows' influences (one frame, the smaller
    Gram formed once and updated over the ranks, the K-way piece's Gram
    shared by the blocks) equal the direct computation, every rank: p =
    n_k D below m (3 blocks of 3, m = 200), above it (3 blocks of 4, m =
    60), and crossing it as the rank grows (4 blocks of 3, m = 80)."""
    from jdr_stats.inference.kblock_rank import (block_rank_table_rows, block_row_grams,
                                                 piece_energies)

    y, blocks = _design(m, K=K, n=n, seed=3)
    w = np.random.default_rng(4).integers(1, 4, size=m).astype(float) if weighted else None
    names = [f"b{k}" for k in range(K)]
    labels = [[f"v{j}" for j in range(n)] for _ in range(K)]
    zs, _ = _whiten_arrays(blocks, w, names, labels, "sample", "joint")
    wn = np.full(m, 1 / m) if w is None else w / w.sum()
    yc = y - wn @ y
    cc = _cross_cov(zs, wn)
    fac = block_factors(yc, zs, w=w, cross_cov=cc)
    stacked = stacked_pieces(yc, zs, fac, cross_cov=cc, w=w)
    psis = joint_influences(yc, zs, fac, cross_cov=cc, w=w)
    grams = list(block_row_grams(psis, fac))
    # the shared m x m Gram where it is the cheaper: here exactly where p > m
    assert [g is not None for g in grams] == [psi[0].size > m for psi in psis]
    for k in range(K):
        rho = piece_energies(yc, zs, k, fac, w)
        ref = _reference_rank_rows(psis[k], stacked[k], k, fac, rho, w)
        for gram in {id(x): x for x in (None, grams[k])}.values():
            got = block_rank_table_rows(psis[k], stacked[k], k, fac, rho, mult=w, gram=gram)
            cols = got[["statistic", "pvalue", "eff_df", "scale"]].to_numpy()
            assert np.all(np.isfinite(cols))
            np.testing.assert_allclose(cols, ref, rtol=1e-10, atol=0)


@pytest.mark.parametrize("weighted", [False, True])
def test_influences_by_parts_of_rows_are_the_whole_ones(monkeypatch, weighted):
    """The rows' influences formed a few rows at a time (a tiny
    ``config.CHUNK_FLOATS``) are those formed at once: the shared sums come
    from every row whatever the part."""
    from jdr_stats import config

    m, K = 90, 4
    y, blocks = _design(m, K=K, n=2, seed=5)
    w = np.random.default_rng(6).integers(1, 4, size=m).astype(float) if weighted else None
    names = [f"b{k}" for k in range(K)]
    labels = [[f"v{j}" for j in range(2)] for _ in range(K)]
    zs, _ = _whiten_arrays(blocks, w, names, labels, "sample", "joint")
    wn = np.full(m, 1 / m) if w is None else w / w.sum()
    yc = y - wn @ y
    cc = _cross_cov(zs, wn)
    fac = block_factors(yc, zs, w=w, cross_cov=cc)
    whole = joint_influences(yc, zs, fac, cross_cov=cc, w=w)
    monkeypatch.setattr(config, "CHUNK_FLOATS", 8 * 16 * 7)  # 7 rows of the 4-way piece
    parts = joint_influences(yc, zs, fac, cross_cov=cc, w=w)
    for a, b in zip(whole, parts, strict=True):
        np.testing.assert_allclose(b, a, rtol=0, atol=1e-13 * np.max(np.abs(a)))


@pytest.mark.parametrize("K,interactions", [(3, "stein"), (4, "stein"), (3, "orthogonal")])
def test_blocks_one_at_a_time_give_the_same_tables(monkeypatch, K, interactions):
    """Where all blocks' influences exceed the budget and two blocks' do
    not, the rank tests form one block's influences at a time: the same
    tables, bit for bit, and the settings say so."""
    y, blocks = _design(600, K=K, n=3, seed=K)
    names = [f"b{k}" for k in range(K)]
    model = jdr.JointDimReduction.from_blocks(y, dict(zip(names, blocks, strict=True)))
    whole = model.fit(1, interactions=interactions).rank_tests()
    per_block = [600 * 3 * sum(int(np.prod([3] * (len(p) - 1))) for p in pieces(K, False)
                               if k in p) for k in range(K)]
    assert sum(per_block) > 2 * max(per_block)
    monkeypatch.setattr(policy, "KBLOCK_INFLUENCE_MAX_ENTRIES", 2 * max(per_block))
    res = model.fit(1, interactions=interactions)
    parts = res.rank_tests()
    for name in names:
        np.testing.assert_array_equal(whole.tables[name].to_numpy(),
                                      parts.tables[name].to_numpy())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jdr.exceptions.RankSelectionWarning)
        auto = model.fit("auto", interactions=interactions)
    assert "one block's influences at a time" in str(auto.settings["influence"])
    monkeypatch.setattr(policy, "KBLOCK_INFLUENCE_MAX_ENTRIES", 2 * max(per_block) - 1)
    with pytest.raises(ValueError, match="KBLOCK_INFLUENCE_MAX_ENTRIES"):
        model.fit(1, interactions=interactions).rank_tests()


@pytest.mark.parametrize("interactions", ["stein", "orthogonal"])
def test_pieces_formed_once_give_the_same_tables(monkeypatch, interactions):
    """Blocks one at a time with each piece's influences kept until every
    block holding it has read them (the budget has room for the pieces
    beside two blocks): the same tables, bit for bit, as all blocks at
    once, and the settings say so."""
    K, n, m = 4, 3, 600
    y, blocks = _design(m, K=K, n=n, seed=K)
    names = [f"b{k}" for k in range(K)]
    model = jdr.JointDimReduction.from_blocks(y, dict(zip(names, blocks, strict=True)))
    whole = model.fit(1, interactions=interactions).rank_tests()
    per_block = [m * n * sum(n ** (len(p) - 1) for p in pieces(K, False) if k in p)
                 for k in range(K)]
    own = m * sum(n ** len(p) for p in pieces(K, False))
    budget = 2 * max(per_block) + own
    assert budget < sum(per_block)  # blocks one at a time
    monkeypatch.setattr(policy, "KBLOCK_INFLUENCE_MAX_ENTRIES", budget)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jdr.exceptions.RankSelectionWarning)
        auto = model.fit("auto", interactions=interactions)
    assert auto.settings["influence"]["inputs"]["pieces_once"] == 1.0
    assert "each piece's formed once" in auto.settings["influence"]["reason"]
    parts = model.fit(1, interactions=interactions).rank_tests()
    for name in names:
        np.testing.assert_array_equal(whole.tables[name].to_numpy(),
                                      parts.tables[name].to_numpy())
    monkeypatch.setattr(policy, "KBLOCK_INFLUENCE_MAX_ENTRIES", budget - 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jdr.exceptions.RankSelectionWarning)
        auto = model.fit("auto", interactions=interactions)
    assert auto.settings["influence"]["inputs"]["pieces_once"] == 0.0


@pytest.mark.parametrize("n_slots", [3, 4, 5])
def test_row_hermite_terms_are_the_sum_over_matchings(n_slots):
    """Each row's Hermite tensor, formed with the matchings grouped by their
    free slots, is the definition: ``y_i o sum_pi (-1)^|pi| (o_pi S_ab) o
    z_i,free`` over the partial matchings that leave a slot free, each term
    written out with its slots in place."""
    import itertools

    from jdr_stats.core.tensor import _partial_matchings
    from jdr_stats.inference.kblock_influence import _piece_contributions

    rng = np.random.default_rng(n_slots)
    m, q, widths = 7, 2, [2, 3, 2, 3, 2][:n_slots]
    zs = [rng.standard_normal((m, w)) for w in widths]
    y2 = rng.standard_normal((m, q))
    covs = {(a, b): rng.standard_normal((widths[a], widths[b]))
            for a, b in itertools.combinations(range(n_slots), 2)}
    u = tuple(range(n_slots))
    expect = np.zeros((m, q, *widths))
    for i in range(m):
        for pi in _partial_matchings(list(u)):
            free = [c for c in u if c not in {s for p in pi for s in p}]
            if not free:
                continue  # y_i times a constant: of mean zero, left out
            for idx in itertools.product(*(range(w) for w in widths)):
                term = float((-1) ** len(pi))
                for a, b in pi:
                    term *= covs[(a, b)][idx[a], idx[b]]
                for c in free:
                    term *= zs[c][i, idx[c]]
                expect[(i, slice(None), *idx)] += term * y2[i]
    got = _piece_contributions(y2, zs, u, covs)
    np.testing.assert_allclose(got, expect, rtol=1e-12, atol=1e-12)
