"""The K-block core: design shapes, mergeable moments over K blocks, the
whitening of the whole design."""

from __future__ import annotations

import numpy as np
import pytest

from jdr_stats import core
from jdr_stats.core._linalg import Whitening, block_whitenings, whiten_cross
from jdr_stats.core import BlockDesign, DesignWhitening


def _rows(seed: int, m: int = 400, widths=(4, 3, 5), q: int = 1):
    rng = np.random.default_rng(seed)
    blocks = [rng.standard_t(5, size=(m, n)) + 10.0 * (k + 1) for k, n in enumerate(widths)]
    y = rng.normal(size=(m, q)) + 3.0 if q > 1 else rng.normal(size=m) + 3.0
    return y, blocks


def _direct(y, blocks, w=None):
    """The sums from their definitions (weighted averages times the weight)."""
    m = blocks[0].shape[0]
    w = np.ones(m) if w is None else w
    W = w.sum()
    x = np.hstack(blocks)
    ys = y if y.ndim == 2 else y[:, None]
    mx, my = w @ x / W, w @ ys / W
    xc, yc = x - mx, ys - my
    out = {"weight": W, "mean_x": mx, "mean_y": my,
           "m2_xx": (xc * w[:, None]).T @ xc, "m2_xy": (xc * w[:, None]).T @ yc,
           "m2_yy": (yc * w[:, None]).T @ yc}
    spans = np.cumsum([0, *[b.shape[1] for b in blocks]])
    m3 = {}
    for j in range(len(blocks)):
        for k in range(j, len(blocks)):
            xj, xk = xc[:, spans[j]:spans[j + 1]], xc[:, spans[k]:spans[k + 1]]
            m3[(j, k)] = np.einsum("i,ia,ic,ib->cab", w, xj, yc, xk)
    out["m3"] = m3
    return out


def _assert_sums(t, want, within):
    scale = max(np.abs(want["m2_xx"]).max(), 1.0)
    for key in ("mean_x", "mean_y", "m2_xx", "m2_xy", "m2_yy"):
        np.testing.assert_allclose(getattr(t, key), np.squeeze(want[key]) if key == "mean_y"
                                   and t.mean_y.ndim == 0 else want[key].reshape(
                                       getattr(t, key).shape), rtol=0, atol=1e-9 * scale,
                                   err_msg=key)
    assert t.weight == pytest.approx(want["weight"], rel=1e-12)
    expected = {p: v for p, v in want["m3"].items() if within or p[0] < p[1]}
    assert set(t.m3) == set(expected)
    for pair, value in expected.items():
        np.testing.assert_allclose(t.m3[pair], value, rtol=0,
                                   atol=1e-9 * max(np.abs(value).max(), 1.0), err_msg=pair)


@pytest.mark.parametrize("q", [1, 3])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("within", [False, True])
def test_three_blocks_match_definitions_and_merge_exactly(q, weighted, within):
    y, blocks = _rows(0, q=q)
    w = np.random.default_rng(1).exponential(size=y.shape[0]) if weighted else None
    want = _direct(y, blocks, w)
    one = core.chunk_sums(y, blocks, w, within=within)
    sliced = core.array_sums(y, blocks, w, step=37, within=within)
    _assert_sums(one, want, within)
    _assert_sums(sliced, want, within)
    assert one.design == BlockDesign.of((4, 3, 5), q=q)


def test_frequency_weights_are_repeated_rows():
    y, blocks = _rows(2, m=120)
    counts = np.random.default_rng(3).integers(0, 4, size=120)
    weighted = core.array_sums(y, blocks, counts.astype(float), step=50)
    idx = np.repeat(np.arange(120), counts)
    repeated = core.array_sums(y[idx], [b[idx] for b in blocks], None, step=50)
    assert weighted.nobs == 120 and repeated.nobs == counts.sum()
    for pair in weighted.m3:
        np.testing.assert_allclose(weighted.m3[pair], repeated.m3[pair], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(weighted.m2_xx, repeated.m2_xx, rtol=1e-10)


def test_empty_parts_and_nonfinite_chunks():
    y, blocks = _rows(4, m=50)
    design = BlockDesign.of((4, 3, 5))
    t = core.chunk_sums(y, blocks, None)
    merged = core.merge_sums(core.empty_sums(design, nobs=7), t)
    assert merged.nobs == 57 and np.array_equal(merged.m2_xx, t.m2_xx)
    zero = core.chunk_sums(y, blocks, np.zeros(50))
    assert zero.weight == 0.0 and zero.nobs == 50
    bad = [b.copy() for b in blocks]
    bad[2][3, 1] = np.nan
    assert core.chunk_sums(y, bad, None) is None
    assert core.array_sums(y, bad, None, step=20) is None
    with pytest.raises(ValueError, match="same design"):
        core.merge_sums(t, core.chunk_sums(y, blocks[:2], None))


def test_two_blocks_are_the_engine_view():
    """The two-block engine runs on the core: its state is the core's, bit for bit."""
    import jdr_stats as jdr
    from jdr_stats.core._linalg import block_moments

    y, blocks = _rows(5, m=3000, widths=(6, 4))
    w = np.random.default_rng(6).exponential(size=3000)
    k = core.array_sums(y, blocks, w)
    mom = block_moments(y, *blocks, w)
    assert np.array_equal(mom.cross, k.m3[(0, 1)][0] / k.weight)
    assert np.array_equal(mom.cov_b, k.block_m2(1, 1) / k.weight)
    pub = jdr.Moments.from_arrays(y, *blocks, weights=w)
    assert np.array_equal(pub.to_block_moments().cross, mom.cross)


def test_design_validation():
    with pytest.raises(ValueError, match="at least two blocks"):
        BlockDesign(("a",), (3,))
    with pytest.raises(ValueError, match="distinct"):
        BlockDesign(("g", "g"), (3, 2))
    with pytest.raises(ValueError, match="non-empty"):
        BlockDesign(("g", ""), (3, 2))
    with pytest.raises(ValueError, match="at least one column"):
        BlockDesign(("g", "h"), (3, 0))
    d = BlockDesign(("genes", "lipids", "clinical"), (5, 3, 2), q=2)
    assert d.K == 3 and d.p == 10 and d.index("lipids") == 1
    assert d.pairs(within=True)[:3] == ((0, 0), (0, 1), (0, 2))
    with pytest.raises(KeyError, match="no block named 'x'"):
        d.index("x")


def test_design_whitening_per_block_is_the_paper_whitening():
    from jdr_stats.core._linalg import block_moments

    y, blocks = _rows(7, m=500, widths=(4, 3))
    mom = block_moments(y, *blocks)
    dw = block_whitenings(mom, list("abcd"), list("xyz"))
    assert isinstance(dw, DesignWhitening) and dw.kind == "per-block" and dw.widths == (4, 3)
    wa, wb = dw
    assert isinstance(wa, Whitening)
    assert np.array_equal(dw.cross(0, 1, mom.cross), whiten_cross(mom.cross, wa, wb))
    white = dw.rows(blocks)
    np.testing.assert_allclose(np.cov(white[0].T, bias=True), np.eye(4), atol=1e-10)
    with pytest.raises(ValueError, match="at least two blocks"):
        DesignWhitening((wa,))


def _correlated(seed: int, m: int = 3000, rho: float = 0.6):
    """Gaussian blocks with cross-correlation ``rho`` between a1..a3 and b1..b3;
    y = u v + u^2 + v^2 + noise (a link with an even part)."""
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(m, 5))
    b = rng.normal(size=(m, 4))
    b[:, :3] = rho * a[:, :3] + np.sqrt(1 - rho**2) * b[:, :3]
    u, v = a @ np.array([1.0, 1, 0, 0, 0]) / np.sqrt(2), b @ np.array([0, 1.0, 1, 0]) / np.sqrt(2)
    y = u * v + u**2 + v**2 + rng.normal(size=m)
    truth = np.array([[1.0, 1, 0, 0, 0]]).T, np.array([[0, 1.0, 1, 0]]).T
    return y, [a + 3.0, 10.0 * b], truth


def _full_moment(t):
    """The (p, p) y-weighted co-moment (one response column) from the pairs."""
    s = np.zeros((t.design.p, t.design.p))
    for (j, k), v in t.m3.items():
        sj, sk = t.design.span(j), t.design.span(k)
        s[sj, sk], s[sk, sj] = v[0] / t.weight, v[0].T / t.weight
    return s


def test_joint_whitening_rows_and_moments_agree():
    from jdr_stats.core._linalg import joint_whitening

    y, blocks, _ = _correlated(0)
    t = core.array_sums(y, blocks, None, within=True)
    jw = joint_whitening(t.mean_x, t.m2_xx / t.weight, (5, 4), ("exog_a", "exog_b"),
                         (list("abcde"), list("wxyz")))
    assert jw.kind == "joint"
    white = jw.rows(blocks)
    # each block's whitened residual rows are white, and the blocks' residuals
    # are the least squares residuals on the other block
    for x in white:
        np.testing.assert_allclose(np.cov(x.T, bias=True), np.eye(x.shape[1]), atol=1e-9)
    r_a = jw.residuals(blocks)[0]
    design = np.column_stack([np.ones(len(y)), blocks[1]])
    ols = blocks[0] - design @ np.linalg.lstsq(design, blocks[0], rcond=None)[0]
    np.testing.assert_allclose(r_a, ols, atol=1e-8 * np.abs(ols).max())
    # the whitened cross moment from the moments equals that of the whitened rows
    x_mom = jw.cross(0, 1, jw.residual_moment(_full_moment(t))[:5, 5:])
    yc = y - y.mean()
    x_rows = (white[0] * yc[:, None]).T @ white[1] / len(y)
    np.testing.assert_allclose(x_mom, x_rows, atol=1e-10 * np.abs(x_rows).max())
    # reordering the blocks reorders everything
    swapped = jw.reordered((1, 0))
    np.testing.assert_allclose(swapped.rows(blocks[::-1])[0], white[1], atol=1e-10)


def test_joint_whitening_finds_the_subspaces_of_correlated_blocks():
    """With correlated blocks and an even part in the link the per-block
    whitening is biased; the joint one is not (second-order Stein)."""
    from jdr_stats.core._linalg import joint_whitening, principal_angles, svd_signed

    y, blocks, (ua, vb) = _correlated(1, m=80000)
    t = core.array_sums(y, blocks, None, within=True)
    jw = joint_whitening(t.mean_x, t.m2_xx / t.weight, (5, 4), ("exog_a", "exog_b"),
                         (list("abcde"), list("wxyz")))
    u, _, v = svd_signed(jw.cross(0, 1, jw.residual_moment(_full_moment(t))[:5, 5:]))
    joint_a = np.degrees(principal_angles(jw.to_original(0, u[:, :1]), ua).max())
    joint_b = np.degrees(principal_angles(jw.to_original(1, v[:, :1]), vb).max())
    pb = block_whitenings(block_moments_of(y, blocks), list("abcde"), list("wxyz"))
    u0, _, _ = svd_signed(pb.cross(0, 1, t.m3[(0, 1)][0] / t.weight))
    per_block_a = np.degrees(principal_angles(pb.to_original(0, u0[:, :1]), ua).max())
    assert joint_a < 5 and joint_b < 5
    assert per_block_a > 20


def block_moments_of(y, blocks):
    from jdr_stats.core._linalg import block_moments

    return block_moments(y, *blocks)


def test_joint_whitening_names_collinear_columns_across_blocks():
    from jdr_stats.core._linalg import joint_whitening

    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(200, 3)), rng.normal(size=(200, 2))
    b[:, 1] = 2 * a[:, 0] - a[:, 2]
    x = np.hstack([a, b])
    with pytest.raises(ValueError, match=r"exog_a:a0.*exog_b:y"):
        joint_whitening(x.mean(0), np.cov(x.T), (3, 2), ("exog_a", "exog_b"),
                        (["a0", "a1", "a2"], ["x", "y"]))


@pytest.mark.parametrize("ratio, refused", [(0.5, True), (0.99, True), (1.5, False),
                                            (3.0, False), (1e6, False)])
def test_cholesky_factor_refuses_by_the_smallest_eigenvalue(ratio, refused):
    """The factor's bound on the smallest eigenvalue only skips the
    eigendecomposition: a correlation matrix is refused exactly when its
    smallest eigenvalue is below ``tol * n``, and the factor is the
    Cholesky factor, bit for bit."""
    from jdr_stats.core._linalg import cholesky_factor

    n, tol = 12, 1e-10
    rng = np.random.default_rng(4)
    q = np.linalg.qr(rng.normal(size=(n, n)))[0]
    lam = np.linspace(1.0, 2.0, n)
    lam[0] = ratio * tol * n
    corr = (q * lam) @ q.T
    d = np.sqrt(np.diag(corr))
    corr = corr / np.outer(d, d)  # unit diagonal: the eigenvalues move a little
    small = np.linalg.eigvalsh(corr)[0]
    sd = rng.uniform(0.5, 3.0, n)
    cov = corr * np.outer(sd, sd)
    names = [f"x{j}" for j in range(n)]
    if small < tol * n:
        with pytest.raises(ValueError, match="collinear columns"):
            cholesky_factor(cov, "exog_a", names, tol=tol)
    else:
        got = cholesky_factor(cov, "exog_a", names, tol=tol)
        s = np.sqrt(np.diag(cov))
        want = s[:, None] * np.linalg.cholesky(cov / np.outer(s, s))
        np.testing.assert_array_equal(got, want)
    assert (small < tol * n) == refused
