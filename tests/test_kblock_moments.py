"""K-block moments: exact merging, weights, fits equal to the rows' fit,
refusals by name, persistence."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats import policy
from jdr_stats.core.design_moments import DesignMoments, affine_lift, features
from jdr_stats.exceptions import RowsNotInMemoryError


def _design(m: int, widths: tuple[int, ...], seed: int, offset: float = 0.0):
    rng = np.random.default_rng(seed)
    xs = [rng.normal(size=(m, n)) * (1 + j) + offset for j, n in enumerate(widths)]
    c = [x - x.mean(axis=0) for x in xs]
    y = c[0][:, 0] * c[1][:, 0] + 0.5 * c[0][:, -1] * c[2][:, 0] * c[-1][:, 0] \
        + rng.normal(size=m)
    return y, xs


def _parts(y, xs, cuts, weights=None):
    out = []
    for lo, hi in itertools.pairwise(cuts):
        w = None if weights is None else weights[lo:hi]
        out.append(jdr.Moments.from_blocks(y[lo:hi], [x[lo:hi] for x in xs], weights=w))
    return out


def _max_angle(res, ref):
    return max(float(jdr.metrics.principal_angles(res.directions[k], ref.directions[k]).max())
               for k in ref.directions)


def test_lift_is_the_features_of_the_affine_image():
    rng = np.random.default_rng(0)
    u = rng.normal(size=(7, 3))
    b, e = rng.normal(size=(3, 3)), rng.normal(size=3)
    lifted = features(u) @ affine_lift(b, e).T
    np.testing.assert_allclose(lifted, features(u @ b + e), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("widths", [(3, 2, 4), (2, 2, 3, 2, 2)])
@pytest.mark.parametrize("weighted", [False, True])
def test_merged_moments_fit_equals_the_rows_fit(widths, weighted):
    m = 900
    y, xs = _design(m, widths, seed=len(widths), offset=50.0)
    w = np.random.default_rng(5).uniform(0.2, 3.0, size=m) if weighted else None
    mom = sum(_parts(y, xs, [0, 150, 500, m], w))
    assert mom.nobs == m
    assert mom.weight == pytest.approx(m if w is None else w.sum(), rel=1e-13)
    model = jdr.JointDimReduction.from_moments(mom)
    ref_model = jdr.JointDimReduction.from_blocks(y, xs, weights=w)
    for rank in (1, {"block1": 2, "block2": 1, "block3": 1,
                     **{f"block{k}": 1 for k in range(4, len(widths) + 1)}}):
        for main_effects in (False, True):
            res = model.fit(rank, independent_blocks=True, main_effects=main_effects)
            ref = ref_model.fit(rank, independent_blocks=True, main_effects=main_effects)
            assert _max_angle(res, ref) < 1e-10
            for k in ref.directions:
                np.testing.assert_allclose(res.directions[k].to_numpy(),
                                           ref.directions[k].to_numpy(), atol=1e-10)
                assert list(res.directions[k].index) == list(ref.directions[k].index)


def test_merge_is_exact_and_order_free():
    y, xs = _design(400, (2, 3, 2), seed=3, offset=1e3)
    a, b, c = _parts(y, xs, [0, 90, 250, 400])
    whole = jdr.Moments.from_blocks(y, xs)
    for merged in (a + b + c, c + (b + a), sum([b, c, a])):
        s1, s2 = merged.design_sums(), whole.design_sums()
        np.testing.assert_allclose(s1.mean_x, s2.mean_x, rtol=1e-13)
        scale = np.abs(s2.m2_xx).max()
        np.testing.assert_allclose(s1.m2_xx, s2.m2_xx, rtol=0, atol=1e-11 * scale)
        for pair, t in s2.m3.items():
            np.testing.assert_allclose(s1.m3[pair], t, rtol=0,
                                       atol=1e-10 * np.abs(t).max())


def test_design_sums_equal_the_streamed_sums_of_rows():
    from jdr_stats.core.moments import chunk_sums

    y, xs = _design(300, (2, 3, 2), seed=4, offset=7.0)
    w = np.random.default_rng(1).uniform(0.5, 2, size=300)
    got = jdr.Moments.from_blocks(y, xs, weights=w).design_sums()
    want = chunk_sums(y, xs, w)
    assert want is not None
    for name in ("mean_x", "mean_y", "m2_xx", "m2_xy", "m2_yy"):
        np.testing.assert_allclose(getattr(got, name), getattr(want, name), rtol=1e-10,
                                   atol=1e-10)
    for pair in want.m3:
        np.testing.assert_allclose(got.m3[pair], want.m3[pair], rtol=1e-10, atol=1e-9)


def test_sketched_route_from_moments_equals_rows(monkeypatch):
    y, xs = _design(500, (2, 3, 2), seed=6)
    monkeypatch.setattr(policy, "KBLOCK_TENSOR_MAX_WORK", 10)
    res = jdr.JointDimReduction.from_moments(jdr.Moments.from_blocks(y, xs)).fit(
        1, independent_blocks=True)
    ref = jdr.JointDimReduction.from_blocks(y, xs).fit(1, independent_blocks=True)
    assert res.settings["route"]["name"] == "sketch"
    assert _max_angle(res, ref) < 1e-10


def test_names_come_from_dataframes_and_dicts():
    y, xs = _design(200, (2, 2, 3), seed=7)
    frames = {name: pd.DataFrame(x, columns=[f"{name}_{j}" for j in range(x.shape[1])])
              for name, x in zip(("g", "l", "c"), xs, strict=True)}
    mom = jdr.Moments.from_blocks(pd.Series(y, name="resp"), frames)
    assert mom.block_names == ("g", "l", "c")
    assert mom.names["c"] == ["c_0", "c_1", "c_2"]
    assert mom.endog_name == "resp"
    res = jdr.JointDimReduction.from_moments(mom).fit(1, independent_blocks=True)
    assert list(res.directions["l"].index) == ["l_0", "l_1"]


def test_merging_different_designs_is_refused():
    y, xs = _design(200, (2, 2, 3), seed=8)
    a = jdr.Moments.from_blocks(y, xs)
    named = jdr.Moments.from_blocks(y, dict(zip("abc", xs, strict=True)))
    wider = jdr.Moments.from_blocks(y, [xs[0], xs[1], np.hstack([xs[2], xs[0]])])
    for other in (named, wider):
        with pytest.raises(ValueError, match="different designs"):
            a + other
    with pytest.raises(TypeError):
        a + 1


def test_bad_input_is_refused_by_name():
    y, xs = _design(100, (2, 2, 2), seed=9)
    with pytest.raises(ValueError, match="three or more blocks"):
        jdr.Moments.from_blocks(y, xs[:2])
    with pytest.raises(ValueError, match="weights must be positive"):
        jdr.Moments.from_blocks(y, xs, weights=np.r_[0.0, np.ones(99)])
    with pytest.raises(ValueError, match="block 'block2' has 99 rows"):
        jdr.Moments.from_blocks(y, [xs[0], xs[1][:99], xs[2]])
    bad = xs[2].copy()
    bad[4, 1] = np.nan
    with pytest.raises(ValueError, match=r"block 'block3' has NaN.*row 4"):
        jdr.Moments.from_blocks(y, [xs[0], xs[1], bad])
    with pytest.raises(ValueError, match="endog: K-block moments take one numeric column"):
        jdr.Moments.from_blocks(np.c_[y, y], xs)
    with pytest.raises(TypeError, match="blocks: a dict"):
        jdr.Moments.from_blocks(y, xs[0])
    with pytest.raises(ValueError, match="would hold"):
        jdr.Moments.from_blocks(y[:2], [np.zeros((2, 40))] * 3)
    const = [xs[0], xs[1], np.c_[xs[2], np.ones(100)]]
    with pytest.raises(ValueError, match="constant column"):
        jdr.JointDimReduction.from_moments(jdr.Moments.from_blocks(y, const))


def test_what_needs_rows_is_refused_by_name():
    y, xs = _design(300, (2, 2, 2), seed=10)
    model = jdr.JointDimReduction.from_moments(jdr.Moments.from_blocks(y, xs))
    with pytest.raises(ValueError, match="independent_blocks=True"):
        model.fit(1)  # the joint estimator: not from these moments
    res = model.fit(1, independent_blocks=True)
    with pytest.raises(RowsNotInMemoryError, match='rank="auto"'):
        model.fit("auto", independent_blocks=True)
    with pytest.raises(RowsNotInMemoryError, match="rank_tests"):
        res.rank_tests()
    with pytest.raises(RowsNotInMemoryError, match="bootstrap"):
        res.bootstrap(n_boot=9, seed=0)


def test_persistence_round_trip(tmp_path):
    y, xs = _design(400, (2, 3, 2), seed=11)
    w = np.random.default_rng(2).uniform(0.5, 2, size=400)
    mom = sum(_parts(y, xs, [0, 200, 400], w))
    res = jdr.JointDimReduction.from_moments(mom).fit(1, independent_blocks=True)
    path = tmp_path / "k.json"
    res.save(path)
    back = jdr.load(path)
    for k in res.directions:
        np.testing.assert_array_equal(back.directions[k].to_numpy(),
                                      res.directions[k].to_numpy())
    again = back.model.fit(1, independent_blocks=True)  # the moments are kept: it refits
    assert _max_angle(again, res) < 1e-12
    assert isinstance(back.model._data.kmoments, DesignMoments)
