"""Named design blocks: ``JointDimReduction.from_blocks`` and ``res.directions``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr


@pytest.fixture(scope="module")
def sim():
    return jdr.simulate.bilinear(1500, 5, 4, 2, seed=3)


def test_two_named_blocks_are_the_two_block_fit(sim):
    res = jdr.JointDimReduction.from_blocks(sim.y, {"genes": sim.a, "lipids": sim.b}).fit(2)
    ref = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    assert res.model.block_names == ("genes", "lipids")
    assert list(res.directions) == ["genes", "lipids"]
    np.testing.assert_array_equal(res.directions["genes"], ref.directions_a)
    np.testing.assert_array_equal(res.directions["lipids"], ref.directions_b)
    np.testing.assert_array_equal(res.singular_values, ref.singular_values)
    assert res.directions["genes"] is res.directions_a
    with pytest.raises(TypeError):
        res.directions["genes"] = None  # read-only
    assert res.model.exog_names_b == ["lipids0", "lipids1", "lipids2", "lipids3"]


def test_a_list_of_blocks_and_labelled_columns(sim):
    a = pd.DataFrame(sim.a, columns=[f"g{j}" for j in range(5)])
    res = jdr.JointDimReduction.from_blocks(pd.Series(sim.y), [a, sim.b]).fit(1)
    assert list(res.directions) == ["block1", "block2"]
    assert list(res.directions["block1"].index) == list(a.columns)
    default = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    assert default.block_names == ("a", "b")
    assert list(default.fit(1).directions) == ["a", "b"]


def test_from_blocks_keeps_the_options(sim):
    w = np.random.default_rng(0).uniform(0.5, 2.0, size=sim.y.size)
    z = np.random.default_rng(1).normal(size=sim.y.size)
    got = jdr.JointDimReduction.from_blocks(sim.y, {"x": sim.a, "z": sim.b}, weights=w,
                                            covariates=z).fit(2)
    want = jdr.JointDimReduction(sim.y, sim.a, sim.b, weights=w, covariates=z).fit(2)
    np.testing.assert_array_equal(got.directions["z"], want.directions_b)


@pytest.mark.parametrize(("blocks", "error", "match"), [
    # three blocks fit; a pair of counts for them is refused by name
    ("three", 3, "sparsity must be an int, a dict of ints by block name"),
    ({"g": 0}, ValueError, "at least two blocks; got 1"),
    ({"g h": 0, "l": 1}, ValueError, "names must be identifiers"),
    (np.zeros((3, 3)), TypeError, "dict of named blocks or a list"),
])
def test_bad_blocks_are_named(sim, blocks, error, match):
    if isinstance(blocks, str):
        blocks, error = {"g": sim.a, "l": sim.b, "c": sim.a[:, :2] ** 2}, TypeError
    with pytest.raises(error, match=match):
        jdr.JointDimReduction.from_blocks(sim.y, blocks).fit(1, sparsity=(2, 2))


def test_the_estimate_holds_a_basis_per_block(sim):
    res = jdr.JointDimReduction.from_blocks(sim.y, [sim.a, sim.b]).fit(2, sparsity=(3, 3))
    est = res.estimate
    assert len(est.bases) == len(est.whitened_bases) == len(est.supports) == 2
    for basis, frame in zip(est.bases, res.directions.values(), strict=True):
        np.testing.assert_array_equal(basis, np.asarray(frame))
    assert [len(s) for s in est.supports] == [3, 3]


@pytest.mark.parametrize("sparsity", [3, {"x": 3, "z": 3}, (3, 3)])
def test_sparsity_forms_are_those_of_k_blocks(sim, sparsity):
    """A two-block fit takes the K-block forms of the sparsity (an int for
    every block, a dict by block name) besides the pair, with one rank or a
    rank per block, and gives the pair's fit."""
    model = jdr.JointDimReduction.from_blocks(sim.y, {"x": sim.a, "z": sim.b})
    want = model.fit(2, sparsity=(3, 3))
    got = model.fit(2, sparsity=sparsity)
    np.testing.assert_array_equal(np.asarray(got.directions["x"]), np.asarray(want.directions_a))
    per_block = model.fit({"x": 2, "z": 1}, sparsity=sparsity)
    assert per_block.sparsity == {"x": 3, "z": 3}


@pytest.mark.parametrize(("sparsity", "error", "match"), [
    (True, TypeError, "sparsity must be"),
    ({"x": 3}, ValueError, "a dict needs one count per block"),
])
def test_bad_sparsity_is_named(sim, sparsity, error, match):
    model = jdr.JointDimReduction.from_blocks(sim.y, {"x": sim.a, "z": sim.b})
    with pytest.raises(error, match=match):
        model.fit(2, sparsity=sparsity)


def test_select_support_with_a_rank_per_block(sim):
    """Two blocks with a rank per block take the K-block engine's support
    tests (the same table as three blocks); equal ranks, the two-block ones."""
    model = jdr.JointDimReduction.from_blocks(sim.y, {"x": sim.a, "z": sim.b})
    sup = model.select_support(rank={"x": 2, "z": 1})
    assert sup.ranks == {"x": 2, "z": 1}
    assert list(sup.table.index.get_level_values("block").unique()) == ["x", "z"]
    same = model.select_support(rank={"x": 2, "z": 2}, seed=0)
    pd.testing.assert_frame_equal(same.table, model.select_support(rank=2, seed=0).table)
