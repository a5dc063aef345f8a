"""Rank tests and whitenings are plug-ins over K blocks: one registry entry
serves every number of blocks, a test or whitening registered at run time
runs at K = 2 and K = 3, and the methods that cannot run on a design are
refused by name with their reason."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.core._linalg import block_moments
from jdr_stats.estimation._estimate import block_whitening_pair
from jdr_stats.fitting._kwhiten import _whiten_arrays
from jdr_stats.inference._kblock_design import KBlockDesign
from jdr_stats.inference._rank_stats import WhitenedDesign
from jdr_stats.inference.rank_methods import (
    RANK_METHODS,
    RankTestMethod,
    Row,
    RowOptions,
    kblock_method,
)
from jdr_stats.runtime._lazy import stats
from jdr_stats.whitenings import WHITENING_METHODS, WhiteningMethod
from jdr_stats.whitenings import sample as sample_whitening


def _data(m: int = 400, k: int = 3, seed: int = 0) -> tuple[np.ndarray, list[np.ndarray]]:
    rng = np.random.default_rng(seed)
    blocks = [rng.standard_normal((m, 3)) for _ in range(k)]
    y = blocks[0][:, 0] * blocks[1][:, 0] + 0.5 * rng.standard_normal(m)
    if k >= 3:
        y = y + blocks[0][:, 0] * blocks[2][:, 0] + blocks[1][:, 0] * blocks[2][:, 0]
    return y, blocks


def _toy_tables(d: KBlockDesign, opts: RowOptions) -> dict[str, pd.DataFrame]:
    """A toy K-block test: each block's eigenvalues beyond r against a
    chi-square of ``n_k - r`` degrees of freedom (in units of m)."""
    out = {}
    for k, name in enumerate(d.names):
        values = d.factors.values[k]
        rows = []
        for r in range(d.widths[k]):
            stat = float(d.m * np.sum(values[r:]))
            df = float(d.widths[k] - r)
            rows.append((stat, df, float(stats.chi2.sf(stat, df))))
            if opts.stop_alpha is not None and not rows[-1][2] < opts.stop_alpha:
                break
        tab = pd.DataFrame(rows, columns=["statistic", "df", "pvalue"])
        tab.index.name = "rank"
        out[name] = tab
    return out


def _toy_row(w: WhitenedDesign, k: int, opts: RowOptions) -> Row:
    """A toy two-block test: ``Lambda_k`` against chi2((n1-k)(n2-k))."""
    stat, df = w.statistic(k), float((w.n1 - k) * (w.n2 - k))
    return {"statistic": stat, "df": df, "pvalue": float(stats.chi2.sf(stat, df))}, ()


def _toy(name: str, **kw: object) -> RankTestMethod:
    base = dict(name=name, label="toy test", distribution="chi2", assumptions="none",
                statistic_note="", needs="moments", columns=(), columns_note="",
                docs=("", "", ""), theory="4", row=None)
    return RankTestMethod(**{**base, **kw})  # type: ignore[arg-type]


def test_a_rank_test_registered_at_run_time_serves_k2_and_k3(monkeypatch):
    """One module's METHOD and one registry line: the test runs on a fit of a
    rank per block with two blocks and with three, through rank_tests(method=)
    and fit("auto", rank_method=); removed, it is unknown again."""
    toy = _toy("toy-k", tables=_toy_tables)
    with monkeypatch.context() as mp:
        mp.setitem(RANK_METHODS, toy.name, toy)
        for k in (2, 3):
            y, blocks = _data(k=k)
            model = jdr.JointDimReduction.from_blocks(y, blocks)
            res = model.fit(dict.fromkeys(model.block_names, 1), main_effects=k == 2)
            tests = res.rank_tests(method="toy-k")
            assert list(tests.tables) == list(model.block_names)
            first = tests.tables[model.block_names[0]]
            assert list(first.columns[:3]) == ["statistic", "df", "pvalue"]
            assert first["pvalue"].iloc[0] < 1e-6  # the first block's direction is found
            auto = model.fit("auto", rank_method="toy-k", main_effects=k == 2)
            assert auto.settings["rank_method"] == "toy-k"
            assert auto.settings["influence"] is None
            assert auto.ranks[model.block_names[0]] >= 1
            assert "toy-k" in str(auto.summary())
    assert "toy-k" not in RANK_METHODS
    with pytest.raises(ValueError, match=r"method: .*got 'toy-k'"):
        res.rank_tests(method="toy-k")


def test_a_two_block_test_registered_at_run_time_runs_on_two_blocks_only(monkeypatch):
    """A test with a row (blocks 0 and 1 of the two-block design) and no
    K-block tables: the two-block fit runs it, a fit of three blocks refuses
    it naming the method and the reason."""
    toy = _toy("toy-2", row=_toy_row, two_block_reason="its toy reference needs one X_lin")
    with monkeypatch.context() as mp:
        mp.setitem(RANK_METHODS, toy.name, toy)
        y, blocks = _data(k=2)
        two = jdr.JointDimReduction(y, *blocks).fit(1)
        table = two.rank_tests(method="toy-2")  # type: ignore[arg-type]
        chi2 = two.rank_tests(method="chi2")
        np.testing.assert_allclose(table.table["pvalue"], chi2.table["pvalue"], rtol=1e-12)
        y, blocks = _data(k=3)
        three = jdr.JointDimReduction.from_blocks(y, blocks).fit(1)
        with pytest.raises(ValueError, match=r"method: .*got 'toy-2' \(toy test\), "
                                             r"a two-block test: its toy reference"):
            three.rank_tests(method="toy-2")
        # a K-only test has no table of one shared rank
        mp.setitem(RANK_METHODS, "toy-k", _toy("toy-k", tables=_toy_tables))
        with pytest.raises(ValueError, match=r"method='toy-k'.*rank per block"):
            two.rank_tests(method="toy-k")  # type: ignore[arg-type]


def test_k_block_tests_dispatch_through_the_registry():
    """method="auto" and "robust" give the default numbers; every two-block
    test is refused by name on K blocks; an unknown method names the argument."""
    y, blocks = _data(k=3)
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    res = model.fit(1)
    default = res.rank_tests()
    pd.testing.assert_frame_equal(res.rank_tests(method="robust").table, default.table)
    auto = model.fit("auto")
    pd.testing.assert_frame_equal(auto.rank_test_table.table, model.fit(
        "auto", rank_method="robust").rank_test_table.table)
    assert kblock_method("auto").name == "robust"
    for name, spec in RANK_METHODS.items():
        if spec.tables is None:
            with pytest.raises(ValueError, match=f"method: .*got '{name}' .*two-block test"):
                res.rank_tests(method=name)
            with pytest.raises(ValueError,
                               match=f"rank_method: three or more blocks .*got '{name}'"):
                model.fit("auto", rank_method=name)
    with pytest.raises(ValueError, match=r"method: a fit of three or more blocks has the robust "
                                         r"per-block test only.*got 'nope'"):
        res.rank_tests(method="nope")


def test_a_whitening_registered_at_run_time_serves_k2_and_k3(monkeypatch):
    """One module's METHOD and one registry line: a copy of the sample
    whitening under another name fits two blocks (the two-block path) and
    three (the K-block path) with the sample whitening's numbers."""
    toy = WhiteningMethod(
        name="toy", label="the sample covariance again", when="a test", covariance="",
        target="", needs="covariance", factory=sample_whitening.METHOD.factory,
        tests_need_sample=False, built_by_estimator=False, note="")
    with monkeypatch.context() as mp:
        mp.setitem(WHITENING_METHODS, toy.name, toy)
        y, blocks = _data(k=2)
        two = jdr.JointDimReduction(y, *blocks)
        got = two.fit(1, whitening="toy", independent_blocks=True)
        ref = two.fit(1, whitening="sample", independent_blocks=True)
        assert got.whitening == "toy"
        np.testing.assert_allclose(got.singular_values, ref.singular_values, rtol=1e-12)
        # no version over both blocks together (joint=None): the joint
        # estimator refuses it by name rather than whitening block by block
        with pytest.raises(ValueError, match=r"whitening='toy' has no version over both"):
            two.fit(1, whitening="toy")
        y, blocks = _data(k=3)
        three = jdr.JointDimReduction.from_blocks(y, blocks)
        got3 = three.fit(1, whitening="toy", independent_blocks=True)
        ref3 = three.fit(1, whitening="sample", independent_blocks=True)
        assert got3.settings["whitening"] == "toy"
        for name in three.block_names:
            np.testing.assert_allclose(got3.eigenvalues[name], ref3.eigenvalues[name],
                                       rtol=1e-12)
    assert "toy" not in WHITENING_METHODS
    with pytest.raises(ValueError, match=r"whitening.*'toy'"):
        two.fit(1, whitening="toy")  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", [k for k, m in WHITENING_METHODS.items()
                                  if m.factory is not None])
def test_k_block_whitening_is_the_registry_s(kind):
    """The K-block fit's per-block whitening of two blocks is the two-block
    estimator's, map for map (one builder from the registry)."""
    _, blocks = _data(m=300, k=2, seed=3)
    labels = [[f"a{j}" for j in range(3)], [f"b{j}" for j in range(3)]]
    zs, _ = _whiten_arrays(blocks, None, ["exog_a", "exog_b"], labels, kind, "per-block")
    mom = block_moments(np.zeros(300), blocks[0], blocks[1])
    pair = block_whitening_pair(kind, mom, labels[0], labels[1], count=300)
    assert pair is not None
    for z, x, wmap in zip(zs, blocks, pair.maps, strict=True):
        np.testing.assert_allclose(z, wmap.to_white(x), rtol=1e-10, atol=1e-12)
    with pytest.raises(ValueError, match='whitening="none" is not supported'):
        _whiten_arrays(blocks, None, ["a", "b"], labels, "none", "per-block")
