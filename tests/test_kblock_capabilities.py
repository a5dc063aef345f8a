"""Per-SD loadings, save/load/remove_data, fit measures, compare() and the
command line's --support for fits of K blocks: K = 2 (per-block ranks),
3 and 5."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.cli import main
from jdr_stats.exceptions import RowsNotInMemoryError
from jdr_stats.fit_measures import block_fit_measures, fit_measures, pairwise_design
from jdr_stats.metrics import principal_angles

WIDTHS = {2: (4, 3), 3: (4, 3, 3), 5: (3, 3, 2, 3, 2)}


def _design(k: int, m: int, seed: int) -> tuple[np.ndarray, dict[str, pd.DataFrame],
                                                  list[np.ndarray]]:
    """y = the sum over block pairs of (u_j^T x_j)(u_k^T x_k) + noise, every
    block Gaussian with unit-free columns; the true directions returned."""
    rng = np.random.default_rng(seed)
    blocks, us = {}, []
    for j, n in enumerate(WIDTHS[k]):
        x = rng.standard_normal((m, n))
        u = rng.standard_normal(n)
        us.append(u / np.linalg.norm(u))
        blocks[f"b{j}"] = pd.DataFrame(x, columns=[f"b{j}x{i}" for i in range(n)])
    f = [blocks[f"b{j}"].to_numpy() @ us[j] for j in range(k)]
    y = sum(f[i] * f[j] for i in range(k) for j in range(i + 1, k)) + 0.5 * rng.standard_normal(m)
    return pd.Series(y, name="y"), blocks, us


def _fit(k: int, m: int = 1500, seed: int = 0, blocks=None):  # type: ignore[no-untyped-def]
    y, given, _ = _design(k, m, seed)
    blocks = given if blocks is None else blocks
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    rank = {"b0": 2, "b1": 1} if k == 2 else 1  # K = 2: per-block ranks (the K engine)
    return model, model.fit(rank)


# ---------------------------------------------------------------- loadings
@pytest.mark.parametrize("k", [2, 3, 5])
def test_loadings_are_directions_times_sd_largest_one(k):  # type: ignore[no-untyped-def]
    model, res = _fit(k)
    assert type(res) is jdr.JDRResults and type(res._impl).__name__ == "KBlockFit"
    _, blocks, _ = _design(k, 1500, 0)
    assert list(res.loadings) == list(res.directions)
    for name, x in blocks.items():
        d = res.directions[name].to_numpy()
        expect = d * x.to_numpy().std(axis=0)[:, None]  # divisor m, as block_sds
        expect /= np.abs(expect).max(axis=0)
        got = res.loadings[name]
        assert list(got.index) == list(x.columns)
        np.testing.assert_allclose(got.to_numpy(), expect, rtol=1e-10, atol=1e-12)
        assert np.allclose(np.abs(got.to_numpy()).max(axis=0), 1.0)
        np.testing.assert_allclose(res.block_sds[name], x.to_numpy().std(axis=0), rtol=1e-12)


@pytest.mark.parametrize("k", [2, 3, 5])
def test_loadings_and_summary_do_not_depend_on_units(k):  # type: ignore[no-untyped-def]
    _, blocks, _ = _design(k, 1500, 0)
    scaled = {n: x.copy() for n, x in blocks.items()}
    scaled["b0"] = scaled["b0"] * np.r_[1e4, 1e-3, np.ones(scaled["b0"].shape[1] - 2)]
    _, res = _fit(k)
    _, res_s = _fit(k, blocks=scaled)
    for n in blocks:
        # directions change with the units, the per-SD loadings do not
        a, b = res.loadings[n].to_numpy(), res_s.loadings[n].to_numpy()
        signs = np.sign(np.sum(a * b, axis=0))
        np.testing.assert_allclose(b * signs, a, atol=1e-6)
    assert not np.allclose(np.abs(res.directions["b0"].to_numpy()),
                           np.abs(res_s.directions["b0"].to_numpy()), atol=1e-3)
    text = str(res.summary())
    assert "Loadings:" in text and "per-SD" in text
    frames = res.summary().named_frames
    for n in blocks:
        np.testing.assert_allclose(frames[f"per-SD loadings, block {n}"].to_numpy(),
                                   res.loadings[n].to_numpy())
    # the printed entry of the rescaled variable is its loading, as without rescaling
    big = res_s.loadings["b0"].iloc[0, 0]
    assert f"{big:.4f}" in str(res_s.summary()) or f"{-big:.4f}" in str(res_s.summary())


def test_two_block_results_loadings_mapping():  # type: ignore[no-untyped-def]
    sim = jdr.simulate.bilinear(800, 4, 3, 1, seed=0)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    assert list(res.loadings) == list(res.model.block_names)
    np.testing.assert_array_equal(res.loadings["a"], res.loadings_a)
    np.testing.assert_array_equal(res.loadings["b"], res.loadings_b)
    with pytest.raises(TypeError):
        res.loadings["a"] = None  # type: ignore[index]


# ------------------------------------------------------- save, load, remove_data
@pytest.mark.parametrize("k", [2, 3, 5])
def test_save_load_and_remove_data_round_trip(k, tmp_path):  # type: ignore[no-untyped-def]
    _, res = _fit(k, m=500)
    _, new, _ = _design(k, 50, seed=9)
    for obj, name in ((res, "full.jdr"), (res.remove_data(), "small.jdr")):
        path = tmp_path / name
        obj.save(path)
        back = jdr.load(path)
        assert type(back) is type(res)
        assert back.rank == res.rank
        for n in res.directions:
            np.testing.assert_array_equal(back.directions[n], res.directions[n])
            np.testing.assert_array_equal(back.loadings[n], res.loadings[n])
        assert str(back.summary()) == str(res.summary())
        np.testing.assert_array_equal(back.transform(new), res.transform(new))
        assert back.fit_measures == res.fit_measures
    small = jdr.load(tmp_path / "small.jdr")
    assert small.data_removed and not res.data_removed
    assert (tmp_path / "small.jdr").stat().st_size < (tmp_path / "full.jdr").stat().st_size / 3
    for call in (small.rank_tests, small.transform, lambda: small.bootstrap(5, seed=0)):
        with pytest.raises(RowsNotInMemoryError, match="remove_data"):
            call()
    # the reloaded full results still have the rows: the same rank tests
    full = jdr.load(tmp_path / "full.jdr")
    pd.testing.assert_frame_equal(full.rank_tests().table, res.rank_tests().table)


# ------------------------------------------------------------ fit measures
@pytest.mark.parametrize("k", [2, 3, 5])
def test_fit_measures_are_the_pairwise_regression(k):  # type: ignore[no-untyped-def]
    y, blocks, _ = _design(k, 1500, 0)
    _, res = _fit(k)
    feats = [blocks[n].to_numpy() @ res.directions[n].to_numpy() for n in blocks]
    cols = [*feats]  # an OLS of y on 1, every block's features, every pair's products
    for i in range(k):
        for j in range(i + 1, k):
            cols += [(feats[i][:, a] * feats[j][:, b])[:, None]
                     for a in range(feats[i].shape[1]) for b in range(feats[j].shape[1])]
    x = np.column_stack([np.ones(len(y)), *cols])
    beta = np.linalg.lstsq(x, y.to_numpy(), rcond=None)[0]
    resid = y.to_numpy() - x @ beta
    r2 = 1 - resid @ resid / np.sum((y - y.mean()) ** 2)
    fm = res.fit_measures
    assert fm.rsquared == pytest.approx(r2, rel=1e-9)
    assert res.rsquared == fm.rsquared
    doc = json.loads(res.to_json())
    assert doc["fit_measures"]["rsquared"] == pytest.approx(fm.rsquared, rel=1e-12)
    np.testing.assert_allclose(doc["loadings"]["b1"]["data"], res.loadings["b1"].to_numpy())
    ranks = [res.ranks[n] for n in blocks]
    assert fm.n_regressors == sum(ranks) + sum(ranks[i] * ranks[j] for i in range(k)
                                               for j in range(i + 1, k))
    widths = WIDTHS[k]
    assert fm.n_regressors_full == sum(widths) + sum(widths[i] * widths[j] for i in range(k)
                                                     for j in range(i + 1, k))
    assert fm.rsquared_full is not None and fm.rsquared <= fm.rsquared_full + 1e-12
    assert 0.5 < fm.rsquared_ratio <= 1.0 + 1e-12  # the link is in the fitted directions
    # no link: y permuted, the measure collapses
    model_null = jdr.JointDimReduction.from_blocks(
        pd.Series(np.random.default_rng(1).permutation(y.to_numpy()), name="y"), blocks)
    assert model_null.fit(1 if k > 2 else {"b0": 2, "b1": 1}).rsquared < 0.1 * fm.rsquared


def test_two_block_fit_measures_are_k2_of_the_block_measures():  # type: ignore[no-untyped-def]
    sim = jdr.simulate.bilinear(1000, 4, 3, 2, seed=2)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    two = fit_measures([(sim.y, sim.a, sim.b, None)], res.directions_a, res.directions_b,
                       nobs=1000)
    assert two == res.fit_measures
    k = block_fit_measures([(sim.y, [sim.a, sim.b], None)], [res.directions_a,
                                                             res.directions_b], nobs=1000)
    assert k == two
    f = [np.ones((3, 2)), 2 * np.ones((3, 1)), 3 * np.ones((3, 2))]
    d = pairwise_design(f)  # 5 features, then pairs (0,1): 2, (0,2): 4, (1,2): 2
    assert d.shape == (3, 5 + 2 + 4 + 2)
    np.testing.assert_array_equal(d[0, 5:], [2, 2, 3, 3, 3, 3, 6, 6])


# ----------------------------------------------------------------- compare
@pytest.mark.parametrize("k", [2, 3, 5])
def test_compare_takes_k_blocks(k):  # type: ignore[no-untyped-def]
    y, blocks, us = _design(k, 1500, 0)
    model, res = _fit(k)
    out = jdr.compare(res)
    assert out.fit.loc["jdr", "rsquared"] == pytest.approx(res.rsquared, rel=1e-12)
    joint = "[b0, b1]" if k == 2 else "[blocks]"  # two blocks: named, as compare(y, a, b, r)
    assert {"sir (blocks)", f"sir ({joint})", "phd (blocks)", f"save ({joint})"} <= set(
        out.fit.index)
    assert isinstance(out, jdr.Comparison)
    ranks = res.rank if isinstance(res.rank, dict) else dict.fromkeys(blocks, res.rank)
    # DESIGN: an int when every block has the same rank, else a dict by block name
    assert out.rank == (ranks if len(set(ranks.values())) > 1 else 1)
    assert out.blocks == {n: x.shape[1] for n, x in blocks.items()}
    for n in blocks:  # the jdr row is the fit's
        assert np.max(principal_angles(out.estimates["jdr"][n], res.directions[n])) < 1e-8
    assert "Comparison of dimension reduction methods" in str(out.summary())
    json.loads(out.to_json())
    if k >= 3:
        truth = dict(zip(blocks, us, strict=True))
        by_model = jdr.compare(model, 1, truth=truth)
        by_blocks = jdr.compare(y, blocks, 1, truth=truth, methods=["jdr", "sir"])
        pd.testing.assert_frame_equal(by_model.table.loc[["jdr", "sir (blocks)"]],
                                      by_blocks.table.loc[["jdr", "sir (blocks)"]])
        # the joint estimator recovers every block of this interaction model;
        # SIR, which sees a first moment, cannot (E[y | x_k] is flat)
        assert by_model.table.loc["jdr", "nsee"] < 0.3
        assert by_model.table.loc["sir (blocks)", "nsee"] > 0.5
        assert by_model.best in ("jdr", "phd ([blocks])", "save ([blocks])")


def test_compare_says_how_to_pass_three_blocks():  # type: ignore[no-untyped-def]
    y, blocks, _ = _design(3, 300, 0)
    g, l, c = (blocks[n] for n in blocks)
    with pytest.raises(TypeError, match=r"a third block\?.*as a dict"):
        jdr.compare(y, g, l, c)
    with pytest.raises(TypeError, match=r"missing \['rank'\].*compare\(model, rank\)"):
        jdr.compare(y, g, l)
    with pytest.raises(ValueError, match="truth: block 'b1' has 3 columns"):
        jdr.compare(y, blocks, 1, truth={"b0": np.ones(4), "b1": np.ones(2), "b2": np.ones(3)})


# -------------------------------------------------------- the command line
def test_cli_support_at_three_blocks_is_python_select_support(tmp_path, capsys):  # type: ignore[no-untyped-def]
    y, blocks, _ = _design(3, 600, 0)
    frame = pd.concat([y, *blocks.values()], axis=1)
    path = tmp_path / "three.csv"
    frame.to_csv(path, index=False)
    base = ["fit", str(path), "--y", "y", "--block", "b0=b0x*", "--block", "b1=b1x*",
            "--block", "b2=b2x*", "--rank", "1", "--seed", "3"]
    assert main([*base, "--support", "--independent-blocks", "yes", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    py = model.select_support(rank=1, fdr=0.1, independent_blocks=True)
    assert doc["support"] == json.loads(json.dumps(py.to_dict(), default=float))
    assert doc["support"]["support"] == py.support
    assert all(py.support[n] for n in blocks)  # every block carries the link
    # the default estimator: its own tests (the fit's jackknife variable tests), as in Python
    assert main([*base, "--support", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    joint = model.select_support(rank=1, fdr=0.1)
    assert doc["support"] == json.loads(json.dumps(joint.to_dict(), default=float))
    assert doc["support"]["settings"]["estimator"] == "joint"


@pytest.mark.parametrize("weighted", [False, True])
def test_streamed_k_block_loadings_equal_memory(tmp_path, weighted):  # type: ignore[no-untyped-def]
    """A streamed fit's per-SD loadings come from its centred sums: the same
    as in memory (weights included); its R-squared needs the rows."""
    y, blocks, _ = _design(3, 700, 4)
    frame = pd.concat([y, *blocks.values()], axis=1)
    w = np.random.default_rng(5).uniform(0.5, 2.0, len(frame)) if weighted else None
    if weighted:
        frame["w"] = w
    frame.to_csv(tmp_path / "x.csv", index=False)
    cols = {n: list(x.columns) for n, x in blocks.items()}
    st = jdr.JointDimReduction.from_csv(tmp_path / "x.csv", y="y", blocks=cols,
                                        weights="w" if weighted else None,
                                        batch_rows=128).fit(1)
    mem = jdr.JointDimReduction.from_blocks(y, blocks, weights=w).fit(1)
    for n in blocks:
        np.testing.assert_allclose(st.block_sds[n], mem.block_sds[n], rtol=1e-9)
        a, b = st.loadings[n].to_numpy(), mem.loadings[n].to_numpy()
        np.testing.assert_allclose(a * np.sign(np.sum(a * b, axis=0)), b, atol=1e-8)
    assert "R-squared:     n/a (rows not in memory)" in str(st.summary())
    with pytest.raises(RowsNotInMemoryError):
        st.fit_measures  # noqa: B018
    st.save(tmp_path / "st.jdr")
    back = jdr.load(tmp_path / "st.jdr")  # the sums written, the source not
    np.testing.assert_array_equal(back.loadings["b1"], st.loadings["b1"])
    assert str(back.summary()) == str(st.summary())
    _, new, _ = _design(3, 20, 8)
    np.testing.assert_array_equal(back.transform(new), st.transform(new))
    with pytest.raises(RowsNotInMemoryError, match="rebuild the model"):
        back.model.fit(1)
