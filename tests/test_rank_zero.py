"""Rank 0 is an answer: ``fit("auto")`` with no evidence of a link.

``y`` is drawn independent of the blocks; each test first checks that the
rank-0 test's p-value is at least ``alpha`` (so that it tests the behaviour
at rank 0, not the luck of a seed), then every member of the results.
"""

from __future__ import annotations

import json
import warnings

import matplotlib
import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.exceptions import RankSelectionWarning

matplotlib.use("Agg")

ALPHA = 0.05


def _null_blocks(k: int, m: int = 400, width: int = 3, seed: int = 0):
    """``k`` named Gaussian blocks and a response independent of them."""
    rng = np.random.default_rng(seed)
    blocks = {f"x{j}": pd.DataFrame(rng.standard_normal((m, width)),
                                    columns=[f"x{j}_{i}" for i in range(width)])
              for j in range(k)}
    return pd.Series(rng.standard_normal(m), name="y"), blocks


def _fit_auto(y, blocks):  # type: ignore[no-untyped-def]
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    with pytest.warns(RankSelectionWarning, match="returning rank 0"):
        res = model.fit("auto")
    return model, res


def _p0(res) -> dict[str, float]:  # type: ignore[no-untyped-def]
    """Each block's p-value of the test of H0: rank 0 (K = 2: one test)."""
    tab = res.rank_test_table
    if tab is not None and hasattr(tab, "table"):
        return {"all": float(tab.table["pvalue"].iloc[0])}
    return {n: float(t["pvalue"].iloc[0]) for n, t in res.rank_tests().tables.items()}


@pytest.mark.parametrize("k", [2, 3, 5])
def test_rank_zero_everywhere(k, tmp_path):
    y, blocks = _null_blocks(k, seed=0)
    model, res = _fit_auto(y, blocks)
    assert all(p >= ALPHA for p in _p0(res).values())  # the premise of the test
    names = list(blocks)
    # the rank
    if k == 2:
        assert res.rank == 0
    else:
        assert res.ranks == dict.fromkeys(names, 0)
    # no directions: n_k x 0 frames indexed by the variables
    for n in names:
        for frame in (res.directions[n], res.loadings[n]):
            assert frame.shape == (blocks[n].shape[1], 0)
            assert list(frame.index) == list(blocks[n].columns)
    if k == 2:
        assert res.directions_a.shape == (3, 0) and res.directions_b.shape == (3, 0)
        assert len(res.singular_values) == 3  # still all of them
        assert np.all(np.isfinite(res.singular_values))
        assert res.rank_tests().table.shape[0] >= 1  # still available
    # transform: no columns, the rows kept (training and new data)
    assert np.asarray(res.transform()).shape == (len(y), 0)
    new = {n: x.iloc[:7] for n, x in blocks.items()}
    out = (res.transform(new["x0"], new["x1"]) if k == 2 else res.transform(new))
    assert np.asarray(out).shape == (7, 0)
    # fit measure: y on no reduced feature is the intercept-only fit
    r2 = res.fit_measures.rsquared if k == 2 else res.rsquared
    assert r2 == 0.0
    # the summary says no evidence and shows no loadings
    text = str(res.summary())
    flat = " ".join(text.split())
    assert "Found: no evidence of a link" in flat and "rank 0 not rejected" in flat
    if k == 2:
        assert "dir1" not in text and "x0_0" not in text  # no loadings table
    else:
        assert "in any block" in flat
    # bootstrap and support: nothing to bound or select
    with pytest.raises(ValueError, match="rank 0.*nothing to bound"):
        res.bootstrap(49, seed=0)
    with pytest.raises(ValueError, match="rank 0.*nothing to select"):
        model.select_support(rank=res.rank, independent_blocks=k > 2, seed=0)
    # exports: strict JSON, save and load, remove_data
    doc = json.loads(res.to_json(), parse_constant=lambda c: pytest.fail(f"non-strict {c}"))
    assert doc["rank"] == res.rank
    path = tmp_path / "fit.json"
    res.save(path)
    back = jdr.load(path)
    assert back.rank == res.rank
    assert "no evidence of a link" in " ".join(str(back.summary()).split())
    slim = res.remove_data()
    assert slim.rank == res.rank and "no evidence" in " ".join(str(slim.summary()).split())
    # plots: a clear ValueError, nothing to plot
    import jdr_stats.plotting as plots

    for fn in (plots.plot_loadings, plots.plot_sufficient_summary,
               plots.plot_response_surface):
        with pytest.raises(ValueError, match="rank 0.*nothing to plot"):
            fn(res)
    assert plots.plot_scree(res) is not None  # the spectrum is still there
    # compare(): every baseline at rank 0, no angle (NaN), R-squared 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = jdr.compare(res)
    assert cmp.table.isna().all().all()
    assert np.allclose(cmp.fit["rsquared"], 0.0)
    str(cmp.summary())


def test_sparse_auto_at_rank_zero_selects_nothing():
    y, blocks = _null_blocks(2, seed=0)
    a, b = blocks["x0"], blocks["x1"]
    with pytest.warns(RankSelectionWarning, match="returning rank 0"):
        res = jdr.JointDimReduction(y, a, b).fit("auto", sparsity="auto")
    assert res.rank_test_table.table["pvalue"].iloc[0] >= ALPHA
    assert res.rank == 0 and res.sparsity == (0, 0)
    assert res.support_a == [] and res.support_b == []
    assert "nothing to select" in " ".join(str(res.summary()).split())


def _mixed(m: int = 400, seed: int = 3):
    """Three blocks; y an interaction of the first two, independent of the third."""
    rng = np.random.default_rng(seed)
    blocks = {n: pd.DataFrame(rng.standard_normal((m, 3)),
                              columns=[f"{n}{i}" for i in range(3)]) for n in ("g", "l", "c")}
    y = 2.0 * blocks["g"]["g0"] * blocks["l"]["l0"] + rng.standard_normal(m)
    return pd.Series(y, name="y"), blocks


def test_kblocks_only_the_block_without_evidence_has_rank_zero():
    y, blocks = _mixed()
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    with pytest.warns(RankSelectionWarning, match=r"'c'.*returning rank 0"):
        res = model.fit("auto")
    tables = res.rank_tests().tables
    assert tables["c"]["pvalue"].iloc[0] >= ALPHA  # premise: no evidence for c
    assert tables["g"]["pvalue"].iloc[0] < ALPHA and tables["l"]["pvalue"].iloc[0] < ALPHA
    assert res.ranks["c"] == 0 and res.ranks["g"] >= 1 and res.ranks["l"] >= 1
    assert res.directions["c"].shape == (3, 0)
    assert np.asarray(res.transform()).shape == (400, res.ranks["g"] + res.ranks["l"])
    # the other blocks' directions are those of a fit with c at rank 1: every
    # piece, c's included, still enters them; only c's reported subspace is empty
    ranks = {"g": res.ranks["g"], "l": res.ranks["l"], "c": 1}
    full, again = model.fit(ranks), model.fit(res.rank)
    for n in ("g", "l"):
        for other in (full, again):
            np.testing.assert_allclose(res.directions[n].to_numpy(),
                                       other.directions[n].to_numpy(), atol=1e-12)
    flat = " ".join(str(res.summary()).split())
    assert "c: nothing (rank 0 not rejected, interactions r = 0: p = " in flat
    assert "in any block" not in flat and "g: interactions (rank " in flat
    # the bootstrap bounds the blocks with directions only
    boot = res.bootstrap(49, seed=0)
    assert list(boot.table.index) == ["g", "l"]
    assert np.all(np.isfinite(boot.table.to_numpy()))
    # plots: by default the blocks with directions; c asked for says rank 0
    import jdr_stats.plotting as plots

    assert plots.plot_loadings(res) is not None
    assert plots.plot_sufficient_summary(res) is not None
    assert plots.plot_response_surface(res) is not None
    with pytest.raises(ValueError, match=r"rank 0 for block\(s\) \['c'\].*nothing to plot"):
        plots.plot_loadings(res, block="c")
    with pytest.raises(ValueError, match="rank 0 for block"):
        model.select_support(rank=res.rank, independent_blocks=True, seed=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cmp = jdr.compare(res)
    assert cmp.table[["max angle c", "mean angle c"]].isna().all().all()
    assert cmp.table[["max angle g", "max angle l"]].notna().all().all()


@pytest.mark.parametrize("k", [2, 3])
def test_given_rank_zero_repeats_the_auto_fit(k):
    """``fit(res.rank)`` repeats a rank-0 fit: a given rank may be 0."""
    y, blocks = _null_blocks(k, seed=0)
    model, auto = _fit_auto(y, blocks)
    given = model.fit(auto.rank)
    assert given.rank == auto.rank and given.rank_test_table is None
    for n in blocks:
        assert given.directions[n].shape == (3, 0)
    assert np.asarray(given.transform()).shape == (len(y), 0)
    assert "rank 0" in " ".join(str(given.summary()).split())
    with pytest.raises(ValueError, match="between 0 and 3"):
        model.fit(dict.fromkeys(blocks, 4) if k > 2 else 4)


def test_cli_rank_auto_prints_rank_zero(tmp_path, capsys):
    from jdr_stats.cli import main

    y, blocks = _null_blocks(2, seed=0)
    frame = pd.concat([y, blocks["x0"], blocks["x1"]], axis=1)
    path = tmp_path / "null.csv"
    frame.to_csv(path, index=False)
    args = ["fit", str(path), "--y", "y", "--a", ",".join(blocks["x0"].columns),
            "--b", ",".join(blocks["x1"].columns), "--rank", "auto"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        main([*args, "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    assert doc["rank"] == 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        code = main([*args, "--bootstrap", "49"])
    out = capsys.readouterr()
    assert "no evidence of a link" in " ".join(out.out.split())
    assert "nothing to bound" in out.err and code != 0


def test_sklearn_transformer_gives_no_columns_at_rank_zero():
    from jdr_stats.sklearn import JointDimReductionTransformer

    y, blocks = _null_blocks(3, seed=0)
    X = np.hstack([x.to_numpy() for x in blocks.values()])
    tr = JointDimReductionTransformer(rank="auto", blocks=[[0, 1, 2], [3, 4, 5], [6, 7, 8]])
    with pytest.warns(RankSelectionWarning, match="returning rank 0"):
        tr.fit(X, y.to_numpy())
    assert tr.transform(X).shape == (len(y), 0)
    assert list(tr.get_feature_names_out()) == []


def test_kblock_sparse_fit_selects_nothing_in_a_rank_zero_block():
    y, blocks = _mixed()
    with pytest.warns(RankSelectionWarning, match="returning rank 0"):
        res = jdr.JointDimReduction.from_blocks(y, blocks).fit("auto", sparsity=2)
    assert res.rank_tests().tables["c"]["pvalue"].iloc[0] >= ALPHA
    assert res.ranks["c"] == 0 and res.directions["c"].shape == (3, 0)
    # no direction, no selection: the block's pieces enter whole
    assert res.sparsity["c"] == 3 and res.support["c"] == ["c0", "c1", "c2"]
    assert len(res.support["g"]) == 2
    assert "Block c: rank 0, nothing to select" in " ".join(str(res.summary()).split())
