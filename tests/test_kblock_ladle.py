"""The ladle choice of each block's rank in a K-block fit
(``fit("auto", rank_method="ladle")``): the ranks it chooses, rank 0 for a
block with nothing, its determinism, its invariance to the columns' units
and order, its results (table, summary, export, save/load) at K = 2 and 3,
and its clear refusals."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.exceptions import RankSelectionWarning
from jdr_stats.inference.kblock_ladle import block_noise_edge, ladle_table


def _design(m: int = 1500, seed: int = 1, noise_block: bool = False):
    """Three skewed blocks correlated through a Gamma factor; y's pieces
    have rank 2 in a, 1 in b and 1 in c (and 0 in a fourth, noise block)."""
    rng = np.random.default_rng(seed)
    f = rng.gamma(2.0, size=(m, 1)) - 2.0
    x = [rng.standard_normal((m, 6)) + 0.5 * f for _ in range(4 if noise_block else 3)]
    y = x[0][:, 0] * x[1][:, 1] + 0.8 * x[0][:, 1] * x[2][:, 0] + 0.5 * rng.standard_normal(m)
    names = "abcd"
    return y, {names[k]: pd.DataFrame(b, columns=[f"{names[k]}{j}" for j in range(6)])
               for k, b in enumerate(x)}


@pytest.fixture(scope="module")
def three():
    y, blocks = _design()
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    return model, model.fit("auto", rank_method="ladle", seed=0)


def test_the_ladle_chooses_each_blocks_rank(three):
    model, res = three
    assert res.ranks == {"a": 2, "b": 1, "c": 1}
    lad = res.rank_test_table
    assert isinstance(lad, jdr.LadleResults) and lad.kind == "per-block"
    assert lad.select_rank() == res.ranks and res.settings["rank_method"] == "ladle"
    assert list(lad.table.columns) == ["criterion", "boot_var", "eig_part", "noise_edge"]
    assert lad.table.index.names == ["block", "k"]
    for n, t in lad.tables.items():
        assert int(t["criterion"].idxmin()) == res.ranks[n]
        np.testing.assert_allclose(t["criterion"], t["boot_var"] + t["eig_part"])
        assert t["boot_var"].iloc[0] == 0.0 and (t["boot_var"] >= 0).all()
        assert lad.max_rank[n] == 5  # Luo and Li's n_k - 1 for a block of 6
    # the robust tests choose the same ranks on these data
    assert model.fit("auto").ranks == res.ranks


def test_a_block_with_nothing_gets_rank_zero_with_a_warning():
    y, blocks = _design(noise_block=True)
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    with pytest.warns(RankSelectionWarning, match=r"'d'.*ladle criterion is smallest at k = 0"):
        res = model.fit("auto", rank_method="ladle", seed=0)
    assert res.ranks["d"] == 0 and res.ranks["a"] == 2
    assert res.transform().shape[1] == sum(res.ranks.values())


def test_same_seed_same_numbers_and_the_seed_matters(three):
    model, res = three
    again = model.fit("auto", rank_method="ladle", seed=0).rank_test_table.table
    pd.testing.assert_frame_equal(res.rank_test_table.table, again)
    other = model.fit("auto", rank_method="ladle", seed=1).rank_test_table.table
    assert not np.allclose(other["boot_var"], again["boot_var"])


def test_the_criterion_does_not_depend_on_the_columns_units_or_order(three):
    """Rescaled, shifted and reordered columns (the rows kept, so the same
    Poisson weights and signs): the same criterion to rounding."""
    _model, res = three
    y, blocks = _design()
    rng = np.random.default_rng(5)
    moved = {}
    for n, b in blocks.items():
        perm = rng.permutation(b.shape[1])
        moved[n] = (b * rng.uniform(0.1, 50.0, size=b.shape[1]) + 7.0).iloc[:, perm]
    other = jdr.JointDimReduction.from_blocks(y * 1e3 - 5.0, moved).fit(
        "auto", rank_method="ladle", seed=0)
    assert other.ranks == res.ranks
    np.testing.assert_allclose(other.rank_test_table.table.to_numpy(),
                               res.rank_test_table.table.to_numpy(), rtol=1e-7, atol=1e-10)


def test_results_of_a_ladle_fit_export_render_and_reload(three, tmp_path):
    _, res = three
    doc = json.loads(json.dumps(res.to_dict()))
    assert doc["rank_tests"]["rank"] == res.ranks
    assert {"block", "k", "criterion"} <= set(doc["rank_tests"]["criterion"][0])
    text = str(res.summary())
    assert "chosen by the ladle estimator" in text and "ladle estimator, each block's k" in text
    lad_text = str(res.rank_test_table.summary())
    assert "block b: k" in lad_text and "Chosen r:" in lad_text
    # pasted into reports: no wider than the fit's own summary
    assert max(map(len, lad_text.splitlines())) <= max(map(len, text.splitlines()))
    res.save(tmp_path / "fit.jdr")
    back = jdr.load(tmp_path / "fit.jdr")
    pd.testing.assert_frame_equal(back.rank_test_table.table, res.rank_test_table.table)
    assert back.ranks == res.ranks
    assert res.remove_data().rank_test_table.select_rank() == res.ranks


def test_two_blocks_through_the_k_engine_take_the_ladle_too():
    """Every K: two blocks with the main effects pooled (the K-block engine)
    and the plain two-block fit (its own ladle, one rank)."""
    rng = np.random.default_rng(3)
    m = 1500
    a, b = rng.standard_normal((m, 5)), rng.standard_normal((m, 5))
    y = a[:, 0] * b[:, 0] + a[:, 1] + 0.5 * rng.standard_normal(m)
    model = jdr.JointDimReduction(y, a, b)
    pooled = model.fit("auto", rank_method="ladle", main_effects=True, seed=0)
    assert pooled.rank_test_table.kind == "per-block"
    assert set(pooled.ranks) == set(model.block_names)
    assert all(r >= 1 for r in pooled.ranks.values())
    plain = model.fit("auto", rank_method="ladle", seed=0)
    assert plain.rank_test_table.kind == "joint" and isinstance(plain.rank, int)


def test_the_ladle_refuses_what_it_cannot_read():
    y, blocks = _design(m=400)
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    with pytest.raises(ValueError, match=r'rank_method="ladle".*interactions="regression"'):
        model.fit("auto", rank_method="ladle", interactions="regression", main_effects=True)
    with pytest.raises(ValueError, match=r"method: .*got 'ladle'"):
        model.fit(1).rank_tests(method="ladle")
    blocks["c"] = blocks["c"].iloc[:, :1]  # one column: candidates {0} only
    with pytest.raises(ValueError, match=r"rank_method=\"ladle\": block 'c' .*one column"):
        jdr.JointDimReduction.from_blocks(y, blocks).fit("auto", rank_method="ladle", seed=0)


def test_the_noise_edge_is_the_flips_top_singular_value_for_pure_noise():
    """With no strong direction (h = 0) the edge at k = 0 is the quantile of
    the draws' largest squared singular value, and it shrinks with k as the
    Marchenko-Pastur edge of the complement."""
    rng = np.random.default_rng(0)
    flips = rng.standard_normal((20, 6, 40))
    mk = rng.standard_normal((6, 40))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        edge = block_noise_edge(mk, flips, 5)
    top = np.linalg.svd(flips, compute_uv=False)[:, 0] ** 2
    assert edge[0] == pytest.approx(np.quantile(top, 0.9))
    assert np.all(np.diff(edge) < 0)
    table, rank = ladle_table(np.linalg.svd(mk, compute_uv=False) ** 2, 1, edge,
                              np.r_[0.0, np.full(5, 0.2)])
    assert rank == 0 and table["eig_part"].iloc[0] == 0.0
