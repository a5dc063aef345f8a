"""The default fit from the stacked design's sums, and construction by
reductions over the rows.

- :func:`jdr_stats.core.moments.stacked_sums` equals the direct products
  of the centred rows (weights included), in any slicing;
- the joint fit's moments from the sums equal those of the residual rows,
  which are formed only when a procedure reads them;
- the column reductions of the input checks find exactly the duplicated
  and constant columns that a comparison of every column's bytes finds.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats.io._inputs import Raw, _column_groups, _column_keys, column_sums
from jdr_stats.core._linalg import block_moments
from jdr_stats.core.moments import stacked_sums


def _rows(m=700, n1=4, n2=3, seed=0, shift=0.0):
    sim = jdr.simulate.bilinear(m, n1, n2, 1, seed=seed)
    return sim.y + shift, sim.a + shift, sim.b - shift


@pytest.mark.parametrize("step", [None, 1, 50, 10_000])
@pytest.mark.parametrize("weighted", [False, True])
def test_stacked_sums_are_the_centred_products(step, weighted):
    y, a, b = _rows(shift=1e4)
    w = np.random.default_rng(1).uniform(0.0, 2.0, y.size) if weighted else None
    t = stacked_sums(y, (a, b), w, step)
    wn = np.full(y.size, 1.0 / y.size) if w is None else w / w.sum()
    x = np.hstack([a, b])
    xc, yc = x - wn @ x, y - wn @ y
    wt = np.ones(y.size) if w is None else w
    scale = np.abs(xc).max() ** 2 * wt.sum()
    np.testing.assert_allclose(t.m2_xx, (xc * wt[:, None]).T @ xc, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(t.s[0], (xc * (wt * yc)[:, None]).T @ xc, rtol=0,
                               atol=1e-12 * scale * np.abs(yc).max())
    np.testing.assert_allclose(t.m2_xy[:, 0], xc.T @ (wt * yc), rtol=1e-10)
    assert t.weight == pytest.approx(wt.sum())


def test_stacked_sums_of_several_response_columns_and_nonfinite():
    y, a, b = _rows()
    ys = np.column_stack([y, y**2])
    t = stacked_sums(ys, (a, b), None, 64)
    one = stacked_sums(np.ascontiguousarray(ys[:, 1]), (a, b), None, 64)
    np.testing.assert_allclose(t.s[1], one.s[0], rtol=1e-12, atol=1e-12 * np.abs(one.s[0]).max())
    a2 = a.copy()
    a2[5, 1] = np.nan
    assert stacked_sums(y, (a2, b), None) is None


def test_joint_moments_from_sums_equal_the_residual_rows():
    y, a, b = _rows(m=900, seed=3)
    w = np.random.default_rng(2).uniform(0.5, 1.5, y.size)
    for weights in (None, w):
        model = jdr.JointDimReduction(y, a, b, weights=weights)
        res = model.fit(1)
        data = res._fit_data
        assert not data.blocks._formed  # the fit needed the sums only
        mom = data.moments()
        _, ra, rb = data.rows("the test")
        assert data.blocks._formed
        rows = block_moments(y, ra, rb, weights)
        for f in ("cov_a", "cov_b", "cross"):
            got, want = getattr(mom, f), getattr(rows, f)
            np.testing.assert_allclose(got, want, rtol=0, atol=1e-10 * np.abs(want).max(),
                                       err_msg=f)
        # a bootstrap's reweighting: the sums of the reweighted rows
        counts = 1.0 + np.random.default_rng(4).poisson(1.0, y.size)
        rw = data.moments(counts)
        full = counts if weights is None else counts * weights
        jw = jdr.estimation._joint.joint_data(jdr.JointDimReduction(y, a, b, weights=full).data)[0]
        ref = block_moments(y, *jw.rows("t")[1:], full)
        np.testing.assert_allclose(rw.cross, ref.cross, rtol=0,
                                   atol=1e-10 * np.abs(ref.cross).max())


def test_lazy_residual_rows_pickle_as_their_recipe():
    y, a, b = _rows(m=400, seed=5)
    res = jdr.JointDimReduction(y, a, b).fit(1)
    data = pickle.loads(pickle.dumps(res._fit_data))
    assert not data.blocks._formed
    np.testing.assert_array_equal(data.rows("t")[1], res._fit_data.rows("t")[1])
    assert list(data.blocks) == ["exog_a", "exog_b"] and len(data.blocks) == 2


def _raw(arrays):
    m = next(iter(arrays.values())).shape[0]
    names = {k: [f"{k[-1]}{j}" for j in range(v.shape[1])] for k, v in arrays.items()}
    return Raw(np.arange(m, dtype=float), "y", False, arrays, names, None, None)


def _partition(groups):
    """Groups of (block, column) of a grouping, as a set of frozensets."""
    by_key: dict = {}
    for arg, grp in groups.items():
        for key, js in grp.items():
            by_key.setdefault(key, set()).update((arg, j) for j in js)
    return {frozenset(v) for v in by_key.values()}


@pytest.mark.parametrize("seed", range(6))
def test_duplicate_columns_found_by_sums_are_those_found_by_bytes(seed):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(3, 400))
    a = rng.normal(size=(m, 6)) * 10.0 ** rng.integers(-150, 150, 6)
    b = rng.integers(0, 2, size=(m, 5)).astype(float)  # dummies: equal sums, other orders
    a[:, 4] = a[:, 1]
    b[:, 3] = b[:, 0]
    if seed % 2:
        b[:, 2] = a[:, 1]  # across blocks
        a[:, 5] = -0.0 * a[:, 5]  # -0.0 and 0.0 are the same value
        a[:, 0] = 0.0
    if seed % 3 == 0:
        a = np.asfortranarray(a)
    raw = _raw({"exog_a": a, "exog_b": b})
    got = _partition(_column_groups(raw))
    keys = {arg: _column_keys(arr) for arg, arr in raw.arrays.items()}
    shared: dict = {}
    want_groups = {arg: {shared.setdefault(k, len(shared)): js for k, js in grp.items()}
                   for arg, grp in keys.items()}
    assert got == _partition(want_groups)


def test_column_sums_see_constant_and_nonfinite_columns():
    x = np.random.default_rng(0).normal(size=(5000, 4))
    x[:, 2] = 3.0
    x[:, 3] *= 1e-300  # tiny but varying: not constant
    t = column_sums(x)
    assert t.finite and list(t.spread == 0) == [False, False, True, False]
    x[4000, 1] = np.inf
    assert not column_sums(x).finite
    x[4000, 1] = np.nan
    assert not column_sums(x).finite


@pytest.mark.parametrize("layout", ["C", "F"])
def test_column_sums_are_the_sums_of_the_rows(monkeypatch, layout):
    """``total``, ``mixed`` and ``spread`` equal the direct sums over the rows
    (formed from ``x - x0`` slice by slice: several slices here), also for a
    column far from zero."""
    from jdr_stats import config

    monkeypatch.setattr(config, "CHUNK_BYTES", 8)  # slices of 256 rows
    rng = np.random.default_rng(3)
    x = rng.normal(size=(1000, 5)) * [1.0, 1e-3, 1e3, 1.0, 2.0] + [0.0, 0.0, 0.0, 1e6, -3.0]
    x = np.asarray(x, order=layout)
    t = column_sums(x)
    golden = (np.arange(x.shape[0]) % 256 * 0.6180339887498949) % 1.0 - 0.5
    scale = np.abs(x).sum(axis=0)
    np.testing.assert_array_equal(t.first, x[0])
    np.testing.assert_allclose(t.total, x.sum(axis=0), rtol=0, atol=1e-13 * scale.max())
    assert (np.abs(t.mixed - golden @ x) <= 1e-12 * scale).all()
    np.testing.assert_allclose(t.spread, np.abs(x - x[0]).sum(axis=0), rtol=1e-12)


def test_construction_makes_no_copy_of_float_blocks():
    y, a, b = _rows(m=300)
    for xa, xb in ((a, b), (np.asfortranarray(a), np.asfortranarray(b))):
        _, ga, gb = jdr.JointDimReduction(y, xa, xb).data.rows("t")
        assert np.shares_memory(ga, xa) and np.shares_memory(gb, xb)


# -- scales -----------------------------------------------------------------
@pytest.mark.parametrize("exponent", [-480, -200, 200, 480])
@pytest.mark.parametrize("independent_blocks", [False, True])
def test_power_of_two_scales_keep_the_conclusions(exponent, independent_blocks):
    """Columns times a power of two whose squares stay normal floats: the
    same singular values and p-values (to rounding), the directions
    rescaled."""
    y, a, b = _rows(m=600, n1=3, n2=3, seed=7)
    fit = {"independent_blocks": independent_blocks}
    ref = jdr.JointDimReduction(y, a, b).fit(1, **fit)
    scale = 2.0 ** exponent
    a2 = a.copy()
    a2[:, 0] *= scale
    got = jdr.JointDimReduction(y, a2, b).fit(1, **fit)
    np.testing.assert_allclose(got.singular_values, ref.singular_values, rtol=1e-12)
    want = np.asarray(ref.directions_a)[:, 0].copy()
    want[0] /= scale  # a coefficient of the rescaled column, in its units
    have = np.asarray(got.directions_a)[:, 0]
    np.testing.assert_allclose(have / have[1], want / want[1], rtol=1e-10)
    pv = [t.rank_tests(max_rank=2, n_perm=19, seed=1).pvalues for t in (got, ref)]
    np.testing.assert_allclose(pv[0], pv[1], rtol=1e-10)


@pytest.mark.parametrize("scale", [1e300, 1e160, 1e-160, 1e-300])
def test_any_valid_scale_gives_the_unit_scale_conclusions(scale):
    """The default (joint) fit of a column times 1e300 ... 1e-300: the same
    singular values, rank, p-values and (up to the scale) directions as at
    unit scale; the summary renders and the block means are in the user's
    units."""
    y, a, b = _rows(m=600, n1=3, n2=3, seed=7)
    ref = jdr.JointDimReduction(y, a, b).fit(1)
    a2 = a.copy()
    a2[:, 0] *= scale
    got = jdr.JointDimReduction(y, a2, b).fit(1)
    np.testing.assert_allclose(got.singular_values, ref.singular_values, rtol=1e-12)
    want = np.asarray(ref.directions_a)[:, 0].copy()
    want[0] /= scale
    have = np.asarray(got.directions_a)[:, 0]
    np.testing.assert_allclose(have / have[1], want / want[1], rtol=1e-10)
    np.testing.assert_allclose(got.block_means[0][0] / scale, ref.block_means[0][0], rtol=1e-12)
    pv = [t.rank_tests(max_rank=2, n_perm=19, seed=1).pvalues for t in (got, ref)]
    np.testing.assert_allclose(pv[0], pv[1], rtol=1e-10)
    auto = jdr.JointDimReduction(y, a2, b).fit("auto", seed=2)
    assert auto.rank == jdr.JointDimReduction(y, a, b).fit("auto", seed=2).rank
    assert "Singular" in str(got.summary()) or len(str(got.summary())) > 0


SCALES = [1e300, 1e160, 1e-160, 1e-300]


def _degrees(got, want, scale):
    """The largest principal angle, in degrees, between the directions
    ``got`` (the user's units: coefficients of the columns times ``scale``)
    and ``want`` (unit scale), once the scale is undone."""
    from scipy.linalg import subspace_angles
    undone = np.asarray(got, float) * scale[:, None]
    return float(np.degrees(subspace_angles(undone, np.asarray(want, float)).max()))


def _scaled(x, scale, whole):
    factor = np.full(x.shape[1], scale) if whole else np.r_[1.0, scale, np.ones(x.shape[1] - 2)]
    return x * factor, factor


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("whole", [False, True], ids=["one column", "whole block"])
@pytest.mark.parametrize("independent_blocks", [True, False], ids=["per-block", "joint"])
def test_two_blocks_at_any_scale_give_the_unit_scale_conclusions(scale, whole,
                                                                 independent_blocks):
    """A column (or a whole block) times 1e300 ... 1e-300: fit("auto") chooses
    the unit-scale rank; the singular values, the rank tests' p-values and
    the support are those of unit scale, the directions the same once the
    scale is undone (angles below 1e-8 degrees), the block means in the
    user's units, and the reduced features of new rows proportional to the
    unit-scale ones (unit-length directions in the user's units)."""
    y, a, b = _rows(m=500, n1=4, n2=3, seed=8)
    a2, factor = _scaled(a, scale, whole)
    fit = {"independent_blocks": independent_blocks, "seed": 2}
    ref = jdr.JointDimReduction(y, a, b).fit("auto", **fit)
    got = jdr.JointDimReduction(y, a2, b).fit("auto", **fit)
    assert got.rank == ref.rank
    np.testing.assert_allclose(got.singular_values, ref.singular_values, rtol=1e-10)
    assert _degrees(got.directions_a, ref.directions_a, factor) < 1e-8
    assert _degrees(got.directions_b, ref.directions_b, np.ones(3)) < 1e-8
    np.testing.assert_allclose(got.block_means[0] / factor, ref.block_means[0], rtol=1e-12)
    pv = [t.rank_tests(max_rank=2, n_perm=19, seed=1).pvalues for t in (got, ref)]
    np.testing.assert_allclose(pv[0], pv[1], rtol=0, atol=1e-8)
    new_a, new_b = a[:7] + 0.25, b[:7]
    ratio = (np.asarray(got.transform(new_a * factor, new_b))
             / np.asarray(ref.transform(new_a, new_b)))
    np.testing.assert_allclose(ratio, np.broadcast_to(ratio[0], ratio.shape), rtol=1e-9)
    if independent_blocks:
        sup = [jdr.JointDimReduction(y, x, b).select_support(
            rank=1, independent_blocks=True, seed=3) for x in (a2, a)]
        assert sup[0].table["selected"].tolist() == sup[1].table["selected"].tolist()
        np.testing.assert_allclose(sup[0].table["pvalue"], sup[1].table["pvalue"],
                                   rtol=0, atol=1e-8)
    assert len(str(got.summary())) > 0


def _three(m=400, seed=3):
    rng = np.random.default_rng(seed)
    x1, x2, x3 = rng.normal(size=(m, 3)), rng.normal(size=(m, 3)), rng.normal(size=(m, 2))
    y = x1[:, 0] * x2[:, 0] * x3[:, 0] + 0.5 * rng.normal(size=m)
    return y, {"a": x1, "b": x2, "c": x3}


@pytest.mark.parametrize("scale", SCALES)
@pytest.mark.parametrize("whole", [False, True], ids=["one column", "whole block"])
@pytest.mark.parametrize("independent_blocks", [True, False], ids=["per-block", "joint"])
def test_three_blocks_at_any_scale_give_the_unit_scale_conclusions(scale, whole,
                                                                   independent_blocks):
    """Three blocks, a column (or block b) times 1e300 ... 1e-300, either
    estimator: the ranks of fit("auto"), the eigenvalues and each block's
    rank-test p-values of unit scale; the directions the same once the
    scale is undone; the block means in the user's units; the reduced
    features proportional to the unit-scale ones."""
    y, blocks = _three()
    b2, factor = _scaled(blocks["b"], scale, whole)
    scaled = {**blocks, "b": b2}
    ref = jdr.JointDimReduction.from_blocks(y, blocks).fit(
        "auto", independent_blocks=independent_blocks)
    got = jdr.JointDimReduction.from_blocks(y, scaled).fit(
        "auto", independent_blocks=independent_blocks)
    assert got.rank == ref.rank
    assert got.settings["estimator"] == ref.settings["estimator"]
    for k in "abc":
        np.testing.assert_allclose(got.eigenvalues[k], ref.eigenvalues[k], rtol=1e-10)
        np.testing.assert_allclose(got.rank_tests().tables[k]["pvalue"],
                                   ref.rank_tests().tables[k]["pvalue"], rtol=0, atol=1e-8)
        undo = factor if k == "b" else np.ones(blocks[k].shape[1])
        assert _degrees(got.directions[k], ref.directions[k], undo) < 1e-8
    np.testing.assert_allclose(got.block_means["b"] / factor, ref.block_means["b"],
                               rtol=1e-12)
    new = {k: x[:6] + 0.5 for k, x in blocks.items()}
    ratio = (got.transform({**new, "b": new["b"] * factor}).to_numpy()
             / ref.transform(new).to_numpy())
    np.testing.assert_allclose(ratio, np.broadcast_to(ratio[0], ratio.shape), rtol=1e-9)


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_three_blocks_sparse_fit_at_any_scale(scale):
    """A sparse fit of three blocks with a column of extreme units keeps the
    unit-scale variables and directions."""
    y, blocks = _three(m=300)
    b2, factor = _scaled(blocks["b"], scale, False)
    fits = [jdr.JointDimReduction.from_blocks(y, x).fit(1, sparsity=2)
            for x in ({**blocks, "b": b2}, blocks)]
    assert fits[0].support == fits[1].support
    for k in "abc":
        undo = factor if k == "b" else np.ones(blocks[k].shape[1])
        assert _degrees(fits[0].directions[k], fits[1].directions[k], undo) < 1e-8


def test_a_column_constant_at_working_precision_is_still_refused():
    """Scaling cannot rescue a column whose values are equal in float64:
    the refusal names it."""
    y, a, b = _rows(m=300, n1=3, n2=3, seed=8)
    a2 = a.copy()
    a2[:, 1] = 1e300 * (1.0 + 1e-18 * a[:, 1])  # one float64 value: constant
    with pytest.raises(ValueError, match=r"a1"):
        jdr.JointDimReduction(y, a2, b).fit(1, independent_blocks=True)


@pytest.mark.parametrize("scale", [1e300, 1e-300])
@pytest.mark.parametrize("independent_blocks", [True, False], ids=["per-block", "joint"])
def test_bootstrap_and_main_effects_at_any_scale(scale, independent_blocks):
    """Two blocks, block a times 1e300 or 1e-300: the bootstrap's angles
    (measured in each block's covariance metric, unit-free) and singular
    values, and the main-effects permutation tests, are those of unit
    scale."""
    y, a, b = _rows(m=300, n1=3, n2=3, seed=9)
    fits = [jdr.JointDimReduction(y, x, b).fit(1, independent_blocks=independent_blocks)
            for x in (a * scale, a)]
    boots = [f.bootstrap(25, seed=4) for f in fits]
    np.testing.assert_allclose(boots[0].angles_a, boots[1].angles_a, rtol=0, atol=1e-8)
    np.testing.assert_allclose(boots[0].angles_b, boots[1].angles_b, rtol=0, atol=1e-8)
    np.testing.assert_allclose(boots[0].singular_values, boots[1].singular_values,
                               rtol=1e-10)
    tests = [f.main_effects_test(method="permutation", n_perm=49, seed=5) for f in fits]
    np.testing.assert_allclose(tests[0].pvalues, tests[1].pvalues, rtol=0, atol=1e-12)


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_three_block_support_and_main_effects_at_any_scale(scale):
    """Three blocks, a column times 1e300 or 1e-300: the support tests'
    p-values and selection, and the main-effects permutation tests, are
    those of unit scale."""
    y, blocks = _three(m=300)
    b2, _ = _scaled(blocks["b"], scale, False)
    models = [jdr.JointDimReduction.from_blocks(y, x) for x in ({**blocks, "b": b2}, blocks)]
    sup = [mdl.select_support(rank=1, independent_blocks=True, seed=1) for mdl in models]
    np.testing.assert_allclose(sup[0].table["pvalue"], sup[1].table["pvalue"], rtol=0,
                               atol=1e-8)
    assert sup[0].support == sup[1].support
    for ib in (True, False):
        tests = [mdl.fit(1, independent_blocks=ib).main_effects_test(
            method="permutation", n_perm=49, seed=5) for mdl in models]
        np.testing.assert_allclose(tests[0].pvalues, tests[1].pvalues, rtol=0, atol=1e-12)


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_streamed_sums_of_extreme_units_fit_as_in_memory(tmp_path, scale):
    """A streamed column times 1e300 or 1e-300 is scaled by a power of two
    from the first chunk (tests/test_streamed_scale.py compares directions
    and p-values); a column of ordinary values with a few huge ones (not a
    unit: corrupt bytes) is not scaled, and its overflowing sums are refused
    by name with the remedies."""
    pytest.importorskip("pyarrow")
    import pandas as pd

    y, a, b = _rows(m=400, n1=3, n2=3, seed=8)
    a2 = a.copy()
    a2[:, 1] *= scale
    cols = {"y": y, **{f"a{j}": a2[:, j] for j in range(3)},
            **{f"b{j}": b[:, j] for j in range(3)}}
    path = tmp_path / "x.parquet"
    pd.DataFrame(cols).to_parquet(path)
    streamed = jdr.JointDimReduction.from_parquet(path, y="y", a=["a0", "a1", "a2"],
                                                  b=["b0", "b1", "b2"]).fit(1)
    memory = jdr.JointDimReduction(y, a2, b).fit(1)
    np.testing.assert_allclose(streamed.singular_values, memory.singular_values, rtol=1e-10)
    a3 = a.copy()
    a3[:5, 1] = 1e300  # five huge values among ordinary ones
    cols = {"y": y, **{f"a{j}": a3[:, j] for j in range(3)},
            **{f"b{j}": b[:, j] for j in range(3)}}
    pd.DataFrame(cols).to_parquet(path)
    with pytest.raises(ValueError, match=r"overflow float64 in column 'a1'.*rows in memory"):
        jdr.JointDimReduction.from_parquet(path, y="y", a=["a0", "a1", "a2"],
                                           b=["b0", "b1", "b2"])


_VARIANTS = {
    "sparse": ({}, {"sparsity": (2, 2), "independent_blocks": True}),
    "support auto": ({}, {"sparsity": "auto", "independent_blocks": True, "seed": 1}),
    "shrinkage": ({}, {"whitening": "shrinkage", "independent_blocks": True}),
    "diagonal": ({}, {"whitening": "diagonal", "independent_blocks": True}),
    "ladle": ({}, {"rank": "auto", "rank_method": "ladle", "independent_blocks": True,
                   "seed": 1}),
    "weights": ({"weights": True}, {"independent_blocks": True}),
    "covariates": ({"covariates": True}, {"independent_blocks": True}),
    "joint sparse": ({}, {"sparsity": (2, 2)}),
}


@pytest.mark.parametrize("scale", [1e300, 1e-300])
@pytest.mark.parametrize("variant", list(_VARIANTS))
def test_fit_variants_at_any_scale(variant, scale):
    """Sparse fits, regularised whitenings, the ladle, case weights and
    covariates with a column times 1e300 or 1e-300: the unit-scale rank,
    singular values and (once the scale is undone) directions."""
    y, a, b = _rows(m=400, n1=4, n2=3, seed=7)
    build, fit = _VARIANTS[variant]
    rng = np.random.default_rng(0)
    extra = {}
    if build.get("weights"):
        extra["weights"] = rng.uniform(0.5, 2.0, y.size)
    if build.get("covariates"):
        extra["covariates"] = rng.normal(size=(y.size, 2))
    fit = {"rank": 1, **fit}
    a2, factor = _scaled(a, scale, False)
    got, ref = (jdr.JointDimReduction(y, x, b, **extra).fit(**fit) for x in (a2, a))
    assert got.rank == ref.rank
    np.testing.assert_allclose(got.singular_values, ref.singular_values, rtol=1e-10)
    assert _degrees(got.directions_a, ref.directions_a, factor) < 1e-8


@pytest.mark.parametrize("scale", [1e300, 1e-300])
@pytest.mark.parametrize("fit", [{"whitening": "shrinkage", "independent_blocks": True},
                                 {"independent_blocks": True, "weights": True},
                                 {"independent_blocks": False, "weights": True}],
                         ids=["shrinkage", "weights per-block", "weights joint"])
def test_three_block_variants_at_any_scale(fit, scale):
    """Three blocks with a regularised whitening or case weights, a column
    times 1e300 or 1e-300: the unit-scale eigenvalues and directions."""
    y, blocks = _three(m=300)
    fit = dict(fit)
    extra = {"weights": np.random.default_rng(2).uniform(0.5, 2.0, y.size)} \
        if fit.pop("weights", False) else {}
    b2, factor = _scaled(blocks["b"], scale, False)
    got, ref = (jdr.JointDimReduction.from_blocks(y, x, **extra).fit(1, **fit)
                for x in ({**blocks, "b": b2}, blocks))
    for k in "abc":
        np.testing.assert_allclose(got.eigenvalues[k], ref.eigenvalues[k], rtol=1e-10)
        undo = factor if k == "b" else np.ones(blocks[k].shape[1])
        assert _degrees(got.directions[k], ref.directions[k], undo) < 1e-8


@pytest.mark.parametrize("independent_blocks", [True, False], ids=["per-block", "joint"])
def test_results_of_extreme_units_save_and_load(tmp_path, independent_blocks):
    """A fit of a column times 1e300 (its scaled rows held for the tests)
    is saved and loaded exactly, and its reloaded rank tests are the fit's."""
    y, a, b = _rows(m=300, n1=3, n2=3, seed=8)
    a2 = a.copy()
    a2[:, 1] *= 1e300
    res = jdr.JointDimReduction(y, a2, b).fit(1, independent_blocks=independent_blocks)
    path = tmp_path / "r.jdr"
    res.save(path)
    back = jdr.load(path)
    np.testing.assert_array_equal(np.asarray(back.directions_a), np.asarray(res.directions_a))
    np.testing.assert_array_equal(back.block_means[0], res.block_means[0])
    pv = [r.rank_tests(max_rank=1, n_perm=9, seed=1).pvalues for r in (back, res)]
    np.testing.assert_array_equal(pv[0], pv[1])
