"""Exact mergeable moments (jdr.Moments) against the two-pass block_moments."""

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import jdr_stats as jdr  # noqa: E402
from jdr_stats.estimation._estimate import estimate  # noqa: E402
from jdr_stats.core._linalg import block_moments, principal_angles  # noqa: E402

FIELDS = ("mean_a", "mean_b", "cov_a", "cov_b", "cross")


def _data(seed, m, n1, n2, offset, weighted):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=m) + offset
    a = rng.normal(size=(m, n1)) @ rng.normal(size=(n1, n1)) - offset
    b = rng.standard_t(3, size=(m, n2)) + 2 * offset
    w = rng.integers(0, 4, size=m).astype(float) if weighted else None
    if weighted and w.sum() == 0:
        w[0] = 1.0
    return y, a, b, w


def _pieces(y, a, b, w, cuts, within=False):
    """Moments of the pieces between sorted cut points (empty pieces included)."""
    bounds = [0, *cuts, y.shape[0]]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        out.append(jdr.Moments.from_arrays(
            y[lo:hi], a[lo:hi], b[lo:hi], None if w is None else w[lo:hi], within=within
        ))
    return out


def _assert_close(bm, ref, scale):
    tol = 1e-9 * scale
    assert bm.nobs == ref.nobs
    assert bm.mean_y == pytest.approx(ref.mean_y, rel=1e-12, abs=tol)
    assert bm.var_y == pytest.approx(ref.var_y, rel=1e-9, abs=tol)
    for f in FIELDS:
        np.testing.assert_allclose(getattr(bm, f), getattr(ref, f), rtol=1e-9, atol=tol)


# Reproducible examples, no per-example deadline (the machine is shared).
SETTINGS = settings(max_examples=60, deadline=None, derandomize=True)


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    m=st.integers(1, 40),
    n1=st.integers(1, 4),
    n2=st.integers(1, 4),
    weighted=st.booleans(),
    cuts=st.lists(st.integers(0, 40), max_size=6),
)
def test_merged_pieces_equal_two_pass(seed, m, n1, n2, weighted, cuts):
    y, a, b, w = _data(seed, m, n1, n2, 0.0, weighted)
    cuts = sorted(min(c, m) for c in cuts)  # repeated cuts give empty pieces
    merged = sum(_pieces(y, a, b, w, cuts))
    _assert_close(merged.to_block_moments(), block_moments(y, a, b, w), 1.0)
    assert merged.nobs == m
    assert merged.weight == pytest.approx(m if w is None else w.sum())


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    m=st.integers(2, 30),
    cuts=st.lists(st.integers(0, 30), min_size=2, max_size=2),
    weighted=st.booleans(),
)
def test_merge_is_associative_and_commutative(seed, m, cuts, weighted):
    y, a, b, w = _data(seed, m, 3, 2, 0.0, weighted)
    p, q, r = _pieces(y, a, b, w, sorted(min(c, m) for c in cuts))
    left, right, swapped = (p + q) + r, p + (q + r), r + (p + q)
    for attr in ("mean_a", "m2_a", "m2_b", "m2_ab", "m2_ay", "m2_by", "m3_ayb"):
        np.testing.assert_allclose(getattr(left, attr), getattr(right, attr), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(getattr(left, attr), getattr(swapped, attr), rtol=1e-10, atol=1e-10)
    assert left.m2_y == pytest.approx(right.m2_y, rel=1e-10, abs=1e-10)


@SETTINGS
@given(seed=st.integers(0, 2**32 - 1), m=st.integers(3, 40), batch=st.integers(1, 7))
def test_large_offset_is_harmless(seed, m, batch):
    """Data shifted by 1e8: centred sums keep the accuracy of the data itself.

    A raw-sum (one-pass, uncentred) algorithm loses everything here: its
    cancellation error is about (1e8)^2 * 1e-16 = 1 per entry.
    """
    y0, a0, b0, _ = _data(seed, m, 2, 3, 0.0, False)
    y, a, b, _ = _data(seed, m, 2, 3, 1e8, False)
    bm = jdr.Moments.from_arrays(y, a, b, batch_rows=batch).to_block_moments()
    ref = block_moments(y0, a0, b0)
    # The shifted inputs themselves are rounded to 1e8 * 2^-52 ~ 1.5e-8.
    for f in ("cov_a", "cov_b", "cross"):
        np.testing.assert_allclose(getattr(bm, f), getattr(ref, f), rtol=0, atol=1e-6)
    assert bm.var_y == pytest.approx(ref.var_y, abs=1e-6)


def test_one_row_chunks_and_batch_rows_one():
    y, a, b, w = _data(7, 25, 3, 3, 1e6, True)
    ref = block_moments(y, a, b, w)
    # Inputs near 1e6 are rounded to about 1e6 * 2^-52 = 2e-10: tolerance 1e-8.
    _assert_close(jdr.Moments.from_arrays(y, a, b, w, batch_rows=1).to_block_moments(), ref, 10)
    singles = sum(jdr.Moments.from_arrays(y[i:i + 1], a[i:i + 1], b[i:i + 1], w[i:i + 1])
                  for i in range(25))
    _assert_close(singles.to_block_moments(), ref, 10)


def test_frequency_weights_equal_repeated_rows():
    y, a, b, w = _data(3, 50, 2, 2, 0.0, True)
    rep = np.repeat(np.arange(50), w.astype(int))
    mw = jdr.Moments.from_arrays(y, a, b, w)
    mr = jdr.Moments.from_arrays(y[rep], a[rep], b[rep])
    assert mw.weight == mr.nobs
    np.testing.assert_allclose(mw.m3_ayb, mr.m3_ayb, atol=1e-10)
    np.testing.assert_allclose(mw.m2_ab, mr.m2_ab, atol=1e-10)


def test_uncentred_y_cross_moment():
    y, a, b, w = _data(11, 60, 3, 2, 0.0, True)
    y = y + 5.0
    bm = jdr.Moments.from_arrays(y, a, b, w, batch_rows=13).to_block_moments(center_y=False)
    # direct: sum_i w_i (a_i - abar) y_i (b_i - bbar)^T / W
    ac = a - (w @ a) / w.sum()
    bc = b - (w @ b) / w.sum()
    ref = (ac * (w * y)[:, None]).T @ bc / w.sum()
    np.testing.assert_allclose(bm.cross, ref, atol=1e-12)


def test_estimator_runs_unchanged_on_moments(bilinear_small):
    sim = bilinear_small
    mom = jdr.Moments.from_arrays(sim.y, sim.a, sim.b, batch_rows=257)
    est = estimate(mom.to_block_moments(), 2)  # the per-block estimator of the sums
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2, independent_blocks=True)
    assert principal_angles(est.dir_a, res.directions_a).max() < 1e-10
    assert principal_angles(est.dir_b, res.directions_b).max() < 1e-10
    s = res.singular_values
    np.testing.assert_allclose(est.singular_values, s, rtol=0, atol=1e-10 * s.max())


def test_identity_names_and_repr():
    y, a, b, _ = _data(0, 10, 2, 2, 0.0, False)
    m = jdr.Moments.from_arrays(y, a, b, endog_name="z", names_a=["p", "q"])
    assert m.names_a == ("p", "q") and m.names_b == ("b0", "b1") and m.endog_name == "z"
    assert (0 + m) is m and (m + 0) is m
    e = jdr.Moments.empty(2, 2, endog_name="z", names_a=["p", "q"])
    assert (e + m).nobs == 10 and np.array_equal((e + m).m3_ayb, m.m3_ayb)
    assert "nobs=10" in repr(m) and m.n1 == 2 and m.n2 == 2
    with pytest.raises(ValueError, match="different variables"):
        m + jdr.Moments.from_arrays(y, a, b)
    with pytest.raises(ValueError, match="widths"):
        m + jdr.Moments.from_arrays(y, a[:, :1], b)
    with pytest.raises(TypeError):
        m + "x"
    with pytest.raises(ValueError, match="total weight 0"):
        e.to_block_moments()
    with pytest.raises(ValueError):  # read-only arrays
        m.m2_a[0, 0] = 1.0


def test_bad_input_is_named():
    y, a, b, w = _data(0, 10, 2, 2, 0.0, True)
    a[4, 1] = np.nan
    with pytest.raises(ValueError, match=r"exog_a contains NaN.*'a1', row 4"):
        jdr.Moments.from_arrays(y, a, b, batch_rows=3)
    a[4, 1] = 0.0
    b[7, 0] = np.inf
    with pytest.raises(ValueError, match=r"exog_b contains infinite.*'b0', row 7"):
        jdr.Moments.from_arrays(y, a, b, batch_rows=3)
    b[7, 0] = 0.0
    w[2] = -1
    with pytest.raises(ValueError, match="weights must be nonnegative"):
        jdr.Moments.from_arrays(y, a, b, w)
    with pytest.raises(ValueError, match="has 9 rows but endog has 10"):
        jdr.Moments.from_arrays(y, a[:9], b)
    with pytest.raises(TypeError, match="batch_rows"):
        jdr.Moments.from_arrays(y, a, b, batch_rows=2.5)
    with pytest.raises(ValueError, match="batch_rows"):
        jdr.Moments.from_arrays(y, a, b, batch_rows=0)
    with pytest.raises(ValueError, match="names_a must have 2 names"):
        jdr.Moments.from_arrays(y, a, b, names_a=["x"])
    with pytest.raises(ValueError, match="no chunks"):
        jdr.Moments.from_chunks([])


def test_weighted_flag_survives_merges():
    y, a, b, w = _data(5, 20, 2, 2, 0.0, True)
    unweighted = jdr.Moments.from_arrays(y, a, b)
    weighted = jdr.Moments.from_arrays(y, a, b, np.ones(20))  # weights that sum to nobs
    assert not unweighted.weighted and weighted.weighted
    assert (unweighted + weighted).weighted and (weighted + unweighted).weighted
    assert (jdr.Moments.from_arrays(y[:0], a[:0], b[:0], w[:0]) + unweighted).weighted


def _within(y, a, w):
    """``sum_i w_i (a_i - abar)(y_i - ybar)(a_i - abar)^T``, two passes."""
    w = np.ones(y.shape[0]) if w is None else w
    wn = w / w.sum()
    ac, yc = a - wn @ a, y - wn @ y
    return (ac * (w * yc)[:, None]).T @ ac


@SETTINGS
@given(
    seed=st.integers(0, 2**32 - 1),
    m=st.integers(2, 40),
    weighted=st.booleans(),
    cuts=st.lists(st.integers(0, 40), max_size=6),
)
def test_within_block_moments_merge_exactly(seed, m, weighted, cuts):
    y, a, b, w = _data(seed, m, 3, 2, 0.0, weighted)
    cuts = sorted(min(c, m) for c in cuts)
    merged = sum(_pieces(y, a, b, w, cuts, within=True))
    assert merged.has_within
    np.testing.assert_allclose(merged.m3_aya, _within(y, a, w), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(merged.m3_byb, _within(y, b, w), rtol=1e-9, atol=1e-9)
    assert not merged.m3_aya.flags.writeable


def test_within_block_moments_optional_and_kept():
    import pickle

    y, a, b, w = _data(3, 50, 3, 2, 1.0, True)
    full = jdr.Moments.from_chunks([(y[:20], a[:20], b[:20], w[:20]),
                                    (y[20:], a[20:], b[20:], w[20:])], within=True)
    # on by default (the default joint estimator from bare sums needs them);
    # within=False leaves them out (they cost n1^2 + n2^2 products per row)
    assert jdr.Moments.from_arrays(y, a, b, w).has_within
    assert not jdr.Moments.from_arrays(y, a, b, w, within=False).has_within
    np.testing.assert_allclose(full.m3_aya, _within(y, a, w), rtol=1e-9, atol=1e-9)
    back = pickle.loads(pickle.dumps(full))
    np.testing.assert_array_equal(back.m3_aya, full.m3_aya)
    np.testing.assert_array_equal(back.m3_byb, full.m3_byb)
    assert not back.m3_byb.flags.writeable
    keys = ("nobs weight mean_y mean_a mean_b m2_y m2_a m2_b m2_ab m2_ay m2_by "
            "m3_ayb").split()
    bare = jdr.Moments(**{k: getattr(full, k) for k in keys})
    assert bare.m3_aya is None and bare.m3_byb is None and not bare.has_within
    assert not (bare + full).has_within and not (full + bare).has_within
    np.testing.assert_array_equal((bare + full).m3_ayb, (full + full).m3_ayb)
    assert jdr.Moments(**{k: getattr(full, k) for k in (*keys, "m3_aya", "m3_byb")}).has_within
    with pytest.raises(ValueError, match="together"):
        jdr.Moments(**{k: getattr(full, k) for k in keys}, m3_aya=full.m3_aya)
    with pytest.raises(ValueError, match="m3_byb must have shape"):
        jdr.Moments(**{k: getattr(full, k) for k in keys}, m3_aya=full.m3_aya,
                    m3_byb=full.m3_aya)
    assert jdr.Moments.empty(3, 2).m3_byb.shape == (2, 2)
    rm = jdr.moments.ResponseMoments.from_arrays(np.c_[y, a[:, 0]], a, b)
    # every column's: the default joint fit from the sums of several columns
    assert all(p.has_within for p in rm.parts) and not rm.yy.has_within


def test_within_block_moments_from_dask():
    da = pytest.importorskip("dask.array")
    y, a, b, _ = _data(5, 900, 3, 2, 2.0, False)
    model = jdr.JointDimReduction(*(da.from_array(x, chunks=200) for x in (y, a, b)))
    # the model's one pass sums them (the stacked design's sums of each block)
    assert model.data.sums.has_within
    sums = jdr.Moments.from_source(model.data.source, within=True)
    assert sums.has_within
    for got in (sums, model.data.sums):
        np.testing.assert_allclose(got.m3_aya, _within(y, a, None), rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(got.m3_byb, _within(y, b, None), rtol=1e-9, atol=1e-9)
