"""The K-block core: cross-moment tensors, unfoldings, mode Grams, HOSVD
factors and the combined per-block estimate, against their definitions."""

import itertools

import numpy as np
import pytest

from jdr_stats.core._linalg import principal_angles
from jdr_stats.core.kestimate import block_factors, piece_scale, piece_weight
from jdr_stats.core.tensor import (
    cross_tensor,
    hermite_corrected,
    hosvd_factors,
    mode_gram_rows,
    mode_gram_tensor,
    pieces,
    unfold,
)


def _rows(m, widths, q=1, seed=0):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(m, q)) if q > 1 else rng.normal(size=m)
    return y, [rng.normal(size=(m, n)) for n in widths]


@pytest.mark.parametrize("widths", [(2, 3, 4), (2, 3, 2, 3)])
@pytest.mark.parametrize("q", [1, 2])
def test_cross_tensor_is_the_brute_force_sum(widths, q):
    y, zs = _rows(17, widths, q)
    t = cross_tensor(y, zs)
    y2 = y[:, None] if y.ndim == 1 else y
    assert t.shape == (q, *widths)
    for idx in itertools.product(*(range(n) for n in (q, *widths))):
        want = np.mean(y2[:, idx[0]] * np.prod([z[:, i] for z, i in zip(zs, idx[1:])], axis=0))
        assert t[idx] == pytest.approx(want, rel=1e-12, abs=1e-14)


def test_unfold_rows_are_the_mode_slices():
    t = np.arange(2 * 3 * 4 * 5, dtype=float).reshape(2, 3, 4, 5)
    u = unfold(t, 2)
    assert u.shape == (4, 30)
    for j in range(4):
        np.testing.assert_array_equal(np.sort(u[j]), np.sort(t[:, :, j, :].ravel()))


@pytest.mark.parametrize("widths", [(2, 3, 4), (3, 2, 2, 3)])
@pytest.mark.parametrize("q", [1, 3])
def test_mode_gram_by_rows_equals_the_tensor_unfolding(widths, q):
    y, zs = _rows(40, widths, q, seed=1)
    t = cross_tensor(y, zs)
    for k in range(len(zs)):
        want = mode_gram_tensor(t, k + 1)
        got = mode_gram_rows(y, zs, k)
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12 * np.abs(want).max())


def test_hosvd_factors_are_the_left_singular_vectors():
    rng = np.random.default_rng(2)
    a = rng.normal(size=(5, 30))
    f, v = hosvd_factors(a @ a.T)
    u, s, _ = np.linalg.svd(a)
    np.testing.assert_allclose(v, s**2, rtol=1e-10)
    np.testing.assert_allclose(np.abs(f.T @ u), np.eye(5), atol=1e-8)
    assert np.all(f[np.argmax(np.abs(f), axis=0), range(5)] > 0)


def test_pieces_of_k_blocks():
    assert pieces(2) == ((0, 1),)
    assert pieces(3) == ((0, 1), (0, 2), (1, 2), (0, 1, 2))
    assert len(pieces(4)) == 6 + 1


def test_hermite_correction_of_three_blocks_by_hand():
    rng = np.random.default_rng(3)
    y, zs = _rows(30, (2, 3, 2), seed=4)
    s = {(a, b): rng.normal(size=(zs[a].shape[1], zs[b].shape[1]))
         for a, b in itertools.combinations(range(3), 2)}
    got = hermite_corrected(y, zs, s)
    t = cross_tensor(y, zs)[0]
    e = [cross_tensor(y, [z])[0] for z in zs]
    want = (t - np.einsum("ij,l->ijl", s[(0, 1)], e[2])
            - np.einsum("il,j->ijl", s[(0, 2)], e[1])
            - np.einsum("jl,i->ijl", s[(1, 2)], e[0]))
    np.testing.assert_allclose(got[0], want, rtol=1e-12)


def test_hermite_correction_of_four_blocks_pairs_only():
    # y centred: complete matchings add E[y] = 0; single pairs subtract S o E[y z z]
    y, zs = _rows(25, (2, 2, 2, 2), seed=5)
    y = y - y.mean()
    rng = np.random.default_rng(6)
    s = {(a, b): rng.normal(size=(2, 2)) for a, b in itertools.combinations(range(4), 2)}
    got = hermite_corrected(y, zs, s)[0]
    want = cross_tensor(y, zs)[0]
    letters = "ijkl"
    for a, b in itertools.combinations(range(4), 2):
        c, d = [x for x in range(4) if x not in (a, b)]
        low = cross_tensor(y, [zs[c], zs[d]])[0]
        sub = f"{letters[a]}{letters[b]},{letters[c]}{letters[d]}->ijkl"
        want = want - np.einsum(sub, s[(a, b)], low)
    for (a, b), (c, d) in [((0, 1), (2, 3)), ((0, 2), (1, 3)), ((0, 3), (1, 2))]:
        sub = f"{letters[a]}{letters[b]},{letters[c]}{letters[d]}->ijkl"
        want = want + np.einsum(sub, s[(a, b)], s[(c, d)]) * y.mean()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-14)


def test_piece_scale_is_the_null_entry_variance():
    # y independent of Gaussian blocks: each entry of the piece has variance
    # E[y^2] / m; the scale estimates it
    y, zs = _rows(4000, (3, 4, 2), seed=7)
    for piece in pieces(3):
        assert piece_scale(y, zs, piece) * 4000 == pytest.approx(1.0, rel=0.1)


@pytest.mark.parametrize("weighting", ["unit", "sqrt", "columns"])
def test_block_factors_routes_agree(weighting):
    y, zs = _rows(60, (3, 4, 2), q=2, seed=8)
    a = block_factors(y, zs, route="tensor", weighting=weighting)
    b = block_factors(y, zs, route="gram", weighting=weighting)
    for fa, fb, va, vb in zip(a.factors, b.factors, a.values, b.values):
        np.testing.assert_allclose(va, vb, rtol=1e-9)
        np.testing.assert_allclose(np.abs(fa.T @ fb), np.eye(fa.shape[0]), atol=1e-6)


def test_block_factors_combined_gram_by_definition():
    y, zs = _rows(50, (3, 2, 4), seed=9)
    f = block_factors(y, zs, weighting="sqrt")
    k = 1
    total = np.zeros((2, 2))
    for piece in pieces(3):
        if k not in piece:
            continue
        t = cross_tensor(y, [zs[j] for j in piece])
        u = unfold(t, piece.index(k) + 1)
        total += u @ u.T / piece_scale(y, zs, piece) * piece_weight("sqrt", u.shape[1])
    np.testing.assert_allclose(f.values[k], np.sort(np.linalg.eigvalsh(total))[::-1],
                               rtol=1e-10)


def test_two_blocks_give_the_svd_of_the_cross_moment():
    y, zs = _rows(80, (4, 3), seed=10)
    f = block_factors(y, zs, weighting="sqrt")
    u, _s, vt = np.linalg.svd(zs[0].T @ (y[:, None] * zs[1]) / 80)
    assert np.max(principal_angles(f.factors[0][:, :2], u[:, :2])) < 1e-6
    assert np.max(principal_angles(f.factors[1][:, :2], vt.T[:, :2])) < 1e-6


@pytest.mark.parametrize("link", ["pairwise", "three-way"])
def test_block_factors_find_each_block_direction(link):
    rng = np.random.default_rng(11)
    m, widths = 4000, (5, 4, 6)
    zs = [rng.normal(size=(m, n)) for n in widths]
    us = [np.linalg.qr(rng.normal(size=(n, 1)))[0] for n in widths]
    u = [(z @ b)[:, 0] for z, b in zip(zs, us)]
    f = u[0] * u[1] + u[1] * u[2] if link == "pairwise" else u[0] * u[1] * u[2]
    y = f + 0.5 * rng.normal(size=m)
    y, zs = y - y.mean(), [z - z.mean(0) for z in zs]
    est = block_factors(y, zs)
    for k in range(3):
        assert np.max(principal_angles(us[k], est.factors[k][:, :1])) < 0.35


def test_bad_weighting_named():
    with pytest.raises(ValueError, match="weighting"):
        piece_weight("equal", 3)  # type: ignore[arg-type]
