"""The joint estimator's rank-0 tests against the rows' own contributions
(theory page "K blocks", section 4): the statistic is their exact
quadratic, copies of rows are the rows repeated, and where no block rejects
rank 0 no influence is formed."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats.core.kestimate import stacked_pieces
from jdr_stats.exceptions import RankSelectionWarning
from jdr_stats.inference.kblock_influence import row_contributions
from jdr_stats.inference.kblock_rank import rank_zero_row
from jdr_stats.inference.rank_methods import _kblock_robust, robust


@pytest.fixture
def caught():
    """The whitened design the K-block robust tables receive."""
    got = {}
    orig = _kblock_robust.kblock_robust_tables

    def spy(d, opts):
        got["d"] = d
        return orig(d, opts)

    spec = next(v for v in vars(robust).values() if getattr(v, "tables", None) is orig)
    object.__setattr__(spec, "tables", spy)
    yield got
    object.__setattr__(spec, "tables", orig)


def _blocks(m, widths, rng, shared=0.6):
    f = rng.normal(size=(m, 1))
    return {f"x{k}": shared * f + rng.normal(size=(m, n)) for k, n in enumerate(widths)}


@pytest.mark.parametrize(("widths", "main_effects", "m"), [
    ((3, 4, 2), False, 300), ((3, 4, 2, 3), False, 300), ((3, 4, 2), True, 300),
    ((3, 4), True, 300), ((3, 4, 2, 3), False, 60)])  # m = 60: the m x m route, pieces shared
def test_the_statistic_is_the_contributions_exact_quadratic(caught, widths, main_effects, m):
    rng = np.random.default_rng(1)
    blocks = _blocks(m, widths, rng)
    y = blocks["x0"][:, 0] * blocks["x1"][:, 0] + rng.normal(size=m)
    res = jdr.JointDimReduction.from_blocks(y, blocks).fit(1, main_effects=main_effects)
    table = res.rank_tests().tables
    d = caught["d"]
    assert d.estimator == "joint"
    mks = stacked_pieces(d.y, d.blocks, d.factors, cross_cov=d.cross_cov)
    cs = row_contributions(d.y, d.blocks, d.factors, cross_cov=d.cross_cov)
    for k, name in enumerate(d.names):
        np.testing.assert_allclose(cs[k].mean(axis=0), mks[k], atol=1e-12)
        stat = float(np.sum(d.factors.values[k]))
        np.testing.assert_allclose(np.sum(cs[k].mean(axis=0) ** 2), stat, rtol=1e-12)
        row = rank_zero_row(stat, cs[k])
        # the table's rank-0 row is this reference: mean D, the pairs' variance
        assert table[name].loc[0, "pvalue"] == pytest.approx(row[2], rel=1e-9)
        flat = cs[k].reshape(m, -1)
        mean = np.sum(flat**2) / m**2
        assert table[name].loc[0, "scale"] * table[name].loc[0, "eff_df"] == pytest.approx(mean)


def test_copies_of_rows_are_the_rows_repeated():
    rng = np.random.default_rng(4)
    contrib = rng.normal(size=(40, 3, 5))
    w = rng.integers(1, 4, size=40).astype(float)
    rep = np.repeat(np.arange(40), w.astype(int))
    weighted = rank_zero_row(2.0, contrib, w)
    repeated = rank_zero_row(2.0, contrib[rep])
    np.testing.assert_allclose(weighted[2:], repeated[2:], rtol=1e-10)
    # both routes (m x m Gram for wide rows, p x p otherwise) give the formula
    for shape in ((12, 4, 9), (60, 2, 3)):
        x = rng.normal(size=shape)
        flat = x.reshape(shape[0], -1)
        mean = np.sum(flat**2) / shape[0] ** 2
        c = flat - flat.mean(axis=0)
        g = c @ c.T
        var = 2 * (np.sum(g**2) - np.sum(np.diag(g) ** 2)) / shape[0] ** 4
        h = 2 * mean**2 / var
        out = rank_zero_row(3.0 * mean, x)
        assert out[3] == pytest.approx(h) and out[4] == pytest.approx(mean / h)


def test_no_influence_is_formed_where_no_block_rejects_rank_zero(monkeypatch):
    rng = np.random.default_rng(2)
    blocks = {f"x{k}": rng.normal(size=(200, n)) for k, n in enumerate((3, 3, 2))}
    y = rng.normal(size=200)

    def refuse(*args, **kw):
        raise AssertionError("the influences were formed")

    monkeypatch.setattr(_kblock_robust, "joint_influences", refuse)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankSelectionWarning)
        res = jdr.JointDimReduction.from_blocks(y, blocks).fit("auto")
    assert res.ranks == dict.fromkeys(blocks, 0)
    for t in res.rank_test_table.tables.values():
        assert list(t.index) == [0] and t.loc[0, "pvalue"] >= 0.05
