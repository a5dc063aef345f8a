"""The contract every fit keeps at every number of blocks.

Each public member of the results (and of the model) that answers a
question by block name is called on fits of K = 2 (the two-block fit and a
fit with a rank per block), K = 3 and K = 5 blocks, and checked against
what it must return whatever K: the same names, shapes tied to the blocks'
widths and ranks, the same kinds of tables.  A capability that exists for
two blocks and not for K is a failure here, not a gap in a docstring.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr

WIDTHS = {2: (5, 4), 3: (4, 3, 3), 5: (3, 3, 2, 2, 2)}
M = 900


def _blocks(k: int, seed: int) -> tuple[np.ndarray, dict[str, pd.DataFrame]]:
    """K correlated blocks (a shared skewed factor) and y = x1 x2 + ... + e."""
    rng = np.random.default_rng(seed)
    shared = rng.gamma(2.0, 1.0, size=(M, 1)) - 2.0
    blocks = {}
    for j, n in enumerate(WIDTHS[k]):
        x = rng.standard_normal((M, n)) + 0.4 * shared
        x[:, 0] *= 10.0 ** (j - 1)  # units differ between blocks
        blocks[f"blk{j}"] = pd.DataFrame(x, columns=[f"blk{j}_v{i}" for i in range(n)])
    cols = [b.to_numpy()[:, 0] / b.to_numpy()[:, 0].std() for b in blocks.values()]
    y = cols[0] * cols[1] + (cols[2] if k > 2 else 0.0) * cols[0] \
        + 0.5 * rng.standard_normal(M)
    return y, blocks


@pytest.fixture(scope="module", params=["k2", "k2_ranks", "k3", "k5"])
def fitted(request: pytest.FixtureRequest):
    k = 2 if request.param.startswith("k2") else int(request.param[1:])
    y, blocks = _blocks(k, seed=k)
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    if request.param == "k2_ranks":
        rank = {"blk0": 2, "blk1": 1}
    else:
        rank = 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = model.fit(rank)
    ranks = rank if isinstance(rank, dict) else dict.fromkeys(blocks, rank)
    return model, res, blocks, ranks


def _mapping_by_block(value, blocks):
    assert list(value) == list(blocks)
    return value


def test_block_names(fitted):
    model, res, blocks, _ = fitted
    assert tuple(res.block_names) == tuple(blocks) == tuple(model.block_names)


def test_directions_and_loadings(fitted):
    _, res, blocks, ranks = fitted
    dirs = _mapping_by_block(res.directions, blocks)
    loads = _mapping_by_block(res.loadings, blocks)
    for name, x in blocks.items():
        d = np.asarray(dirs[name], float)
        assert d.shape == (x.shape[1], ranks[name])
        np.testing.assert_allclose(np.linalg.norm(d, axis=0), 1.0, atol=1e-10)
        assert list(dirs[name].index) == list(x.columns)
        # per-SD loadings: the directions times the columns' SDs, each
        # column scaled to a largest absolute entry of 1
        ld = np.asarray(loads[name], float)
        want = d * x.to_numpy().std(0, ddof=1)[:, None]
        want /= np.abs(want).max(0)
        np.testing.assert_allclose(np.abs(ld), np.abs(want), atol=1e-8)


def test_rank_and_support(fitted):
    _, res, blocks, ranks = fitted
    r = res.rank
    got = r if isinstance(r, dict) else dict.fromkeys(blocks, r)
    assert got == ranks
    support = _mapping_by_block(res.support, blocks)
    for name, x in blocks.items():
        assert list(support[name]) == list(x.columns)  # a dense fit keeps all
    bases = _mapping_by_block(res.whitened_bases, blocks)
    for name, x in blocks.items():
        b = np.asarray(bases[name])
        assert b.shape == (x.shape[1], ranks[name])
        np.testing.assert_allclose(b.T @ b, np.eye(ranks[name]), atol=1e-8)
    assert isinstance(res.main_effects, bool)
    assert "interaction" in res.sees


def test_transform(fitted):
    _, res, blocks, ranks = fitted
    feats = np.asarray(res.transform(), float)
    assert feats.shape == (M, sum(ranks.values()))
    assert np.all(np.isfinite(feats))
    # new rows as a dict of the blocks by name, at every K; two blocks also
    # as two arguments
    new = {n: x.iloc[:7] for n, x in blocks.items()}
    by_name = np.asarray(res.transform(new), float)
    np.testing.assert_allclose(by_name, feats[:7], rtol=1e-10, atol=1e-12)
    if len(blocks) == 2:
        np.testing.assert_array_equal(np.asarray(res.transform(*new.values()), float),
                                      by_name)
    else:
        with pytest.raises(ValueError, match="exog_b"):
            res.transform(*list(new.values())[:2])


def test_summary_fits_a_screen(fitted):
    _, res, blocks, _ = fitted
    text = str(res.summary())
    lines = text.splitlines()
    assert max(map(len, lines)) <= 100
    # about 60 lines for two or three blocks; a few more per extra block
    assert len(lines) <= 62 + 6 * max(0, len(blocks) - 3)
    for name in blocks:
        assert name in text


def test_summary_options_at_every_k(fitted):
    """``summary(loadings="raw")`` prints the unit-length directions in place
    of the per-SD loadings, and ``summary(rank_tests=...)`` the given tests,
    with one signature whatever K."""
    _, res, blocks, _ = fitted
    first = next(iter(blocks))
    raw = res.summary(loadings="raw")
    direction = np.asarray(res.directions[first])[:, 0]
    cells = " ".join(str(raw).split())
    assert f"{direction[np.argmax(abs(direction))]:.4f}" in cells
    with_tests = str(res.summary(rank_tests=res.rank_tests(max_rank=1)))
    assert "0" in with_tests and max(map(len, with_tests.splitlines())) <= 100
    with pytest.raises(ValueError, match="loadings"):
        res.summary(loadings="per-unit")


def test_exports_are_strict_json(fitted):
    _, res, blocks, _ = fitted
    d = res.to_dict()
    assert isinstance(d, dict)
    json.loads(res.to_json(), parse_constant=lambda c: pytest.fail(f"non-JSON {c}"))


def test_save_load_roundtrip(fitted, tmp_path):
    _, res, blocks, _ = fitted
    path = tmp_path / "fit.jdr"
    res.save(path)
    back = jdr.load(path)
    for name in blocks:
        np.testing.assert_array_equal(np.asarray(back.directions[name]),
                                      np.asarray(res.directions[name]))
    assert str(back.summary()) == str(res.summary())


def test_remove_data(fitted):
    _, res, blocks, _ = fitted
    light = res.remove_data()
    assert light.data_removed
    for name in blocks:
        np.testing.assert_array_equal(np.asarray(light.directions[name]),
                                      np.asarray(res.directions[name]))


def test_rank_tests(fitted):
    _, res, blocks, _ = fitted
    tests = res.rank_tests()
    table = tests.table if hasattr(tests, "table") else tests
    assert {"statistic", "df", "pvalue"} <= set(table.columns)
    p = np.asarray(table["pvalue"], float)
    assert np.all((p >= 0) & (p <= 1))
    # one call at every K: max_rank cuts the tables at H0: rank <= 1
    short = res.rank_tests(max_rank=1)
    ranks = short.table.index.get_level_values("rank") if short.table.index.nlevels > 1 \
        else short.table.index
    assert 0 in set(ranks) and max(ranks) <= 1
    # a permutation's options reach a permutation test, or a clear error
    if not _two_block_fit(res):
        with pytest.raises(ValueError, match="n_perm=99: the K-block rank tests draw no"):
            res.rank_tests(n_perm=99)
        with pytest.raises(ValueError, match="max_rank must be between 0 and"):
            res.rank_tests(max_rank=99)


@pytest.fixture(scope="module")
def booted(fitted):
    """The fit's bootstrap twice with one seed (small ``n_boot``)."""
    _, res, _, _ = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return res.bootstrap(n_boot=40, seed=3), res.bootstrap(n_boot=40, seed=3)


def _two_block_fit(res) -> bool:
    """Whether the two-block engine computed ``res`` (one cross moment's SVD)."""
    return type(res._impl).__name__ == "TwoBlockFit"


def test_bootstrap_is_one_type_with_one_set_of_members(fitted, booted):
    """``bootstrap()`` returns ``jdr.BootstrapResults`` at every K; every
    public member answers, or (the two-block view at K >= 3, the singular
    values of a K-block fit, the calibrated levels of a percentile
    bootstrap) raises a ValueError that names the reason."""
    _, res, blocks, ranks = fitted
    boot, _ = booted
    assert type(boot) is jdr.BootstrapResults
    members = sorted(n for n in dir(jdr.BootstrapResults) if not n.startswith("_"))
    assert set(members) <= set(dir(boot))
    refused = {}
    for name in members:
        if name in ("save", "load", "from_blocks"):
            continue  # need arguments: save/load below, from_blocks is the builder
        try:
            value = getattr(boot, name)
            if callable(value):
                value = value(boot.block_names[0]) if name == "sentence" else value()
        except ValueError as exc:
            refused[name] = str(exc)
    want = {"calibrated_levels"}  # a percentile bootstrap has no inner replicates
    if not _two_block_fit(res):
        want |= {"singular_values"}
    if len(blocks) > 2:
        want |= {"angles_a", "angles_b", "selected_a", "selected_b",
                 "selection_frequency_a", "selection_frequency_b"}
    assert set(refused) == want
    assert "inner replicates" in refused["calibrated_levels"]
    for name in want - {"calibrated_levels"}:
        assert "two-block" in refused[name], (name, refused[name])


def test_bootstrap_tables_are_by_block(fitted, booted):
    _, res, blocks, ranks = fitted
    boot, _ = booted
    keys = boot.block_names
    # a two-block fit keys its tables "a", "b" (its frozen output), else by name
    assert keys == (("a", "b") if _two_block_fit(res) else tuple(blocks))
    name_of = dict(zip(keys, blocks, strict=True))
    rank = {k: ranks[name_of[k]] for k in keys}
    assert boot.n_boot + boot.n_failed == 40
    angles = boot.angles
    assert list(angles) == list(keys)
    for k in keys:
        assert angles[k].shape == (boot.n_boot, rank[k])
        assert np.all((angles[k] >= 0) & (angles[k] <= 90))
        assert np.all(np.diff(angles[k], axis=1) >= 0)  # ascending
    bound = boot.max_angle_bound()
    table = boot.table
    assert list(bound.index) == list(table.index) == list(boot.gap_table.index) == list(keys)
    for k in keys:  # the ceil((B + 1)(1 - alpha))-th smallest largest angle
        t = np.sort(angles[k][:, -1])
        assert bound[k] == pytest.approx(t[int(np.ceil((boot.n_boot + 1) * 0.95)) - 1])
        assert table.loc[k, "upper"] == bound[k]
        assert table.loc[k, "median"] == pytest.approx(np.median(t))
    iv = boot.intervals
    assert len(iv) == sum(1 + r for r in rank.values())
    pd.testing.assert_frame_equal(iv, boot.conf_int().loc[list(keys)])
    assert (iv["lower"] <= iv["upper"]).all()
    loads = boot.conf_int(what="loadings")
    assert len(loads) == sum(blocks[name_of[k]].shape[1] * rank[k] for k in keys)
    assert (loads["lower"] <= loads["upper"]).all()
    gap = boot.gap
    assert gap["trusted"] == bool(boot.gap_table["trusted"].all())
    assert gap["s_r / s_(r+1)"] == boot.gap_table["s_r / s_(r+1)"].min()
    r = boot.rank  # an int when every block has the same rank (DESIGN), else by name
    assert (r if isinstance(r, dict) else dict.fromkeys(keys, r)) == rank
    text = str(boot.summary())
    for name in blocks:
        assert name in text
    for k in keys:
        assert boot.sentence(k).startswith(f"With 95% confidence the true {k}-subspace")


def test_bootstrap_seeded_json_and_save_load(booted, tmp_path):
    b1, b2 = booted
    # same seed, same numbers
    for k in b1.block_names:
        np.testing.assert_array_equal(b1.angles[k], b2.angles[k])
    assert b1.to_dict() == b2.to_dict()
    pd.testing.assert_frame_equal(b1.conf_int(what="loadings"), b2.conf_int(what="loadings"))
    # to_dict: strict JSON, back exactly
    text = b1.to_json()
    assert json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON {c}")) \
        == b1.to_dict()
    # save / load: the same results, exactly
    path = tmp_path / "boot.jdr"
    b1.save(path)
    back = jdr.load(path)
    assert type(back) is jdr.BootstrapResults
    assert back.block_names == b1.block_names
    for k in b1.block_names:
        np.testing.assert_array_equal(back.angles[k], b1.angles[k])
    assert back.to_dict() == b1.to_dict()
    pd.testing.assert_frame_equal(back.conf_int(), b1.conf_int())
    pd.testing.assert_frame_equal(back.conf_int(what="loadings"),
                                  b1.conf_int(what="loadings"))
    pd.testing.assert_frame_equal(back.gap_table, b1.gap_table)
    assert str(back.summary()) == str(b1.summary())


def test_bootstrap_too_few_replicates_is_one_error(fitted):
    """Two-sided intervals at 95% need 39 replicates, at every K."""
    _, res, _, _ = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        boot = res.bootstrap(n_boot=5, seed=0)
    with pytest.raises(ValueError, match="needs at least 39 replicates"):
        boot.conf_int()
    assert boot.angles[boot.block_names[0]].shape[0] == boot.n_boot


def test_association_and_main_effects(fitted):
    _, res, blocks, _ = fitted
    assoc = res.association_test()
    assert 0.0 <= float(assoc.pvalue) <= 1.0
    assert res.association_test(statistic="combined", seed=1).pvalue == \
        res.association_test(seed=1).pvalue
    if not _two_block_fit(res):
        with pytest.raises(ValueError, match='statistic must be "combined"'):
            res.association_test(statistic="dense")
    me = res.main_effects_test()
    table = me.table if hasattr(me, "table") else me
    assert {"statistic", "pvalue"} <= set(table.columns)


def test_variable_tests(fitted):
    _, res, blocks, _ = fitted
    table = res.drop1()
    frame = table.table if hasattr(table, "table") else table
    assert {"statistic", "df", "pvalue"} <= set(frame.columns)
    assert len(frame) == sum(x.shape[1] for x in blocks.values())
    firsts = [x.columns[0] for x in blocks.values()][:2]
    joint = res.test_variables(firsts)
    assert 0.0 <= float(joint.pvalue) <= 1.0


def test_fit_measures(fitted):
    _, res, blocks, _ = fitted
    r2 = float(res.rsquared)
    assert 0.0 <= r2 <= 1.0
    assert res.fit_measures is not None


def test_whitening_and_settings(fitted):
    _, res, blocks, _ = fitted
    assert res.whitening in jdr.whitenings.WHITENING_METHODS
    assert res.settings is not None
    assert res.nobs == M
    assert len(res.block_means) == len(blocks)


def test_diagnostics(fitted):
    _, res, blocks, _ = fitted
    prem = res.diagnostics
    assert isinstance(prem.table, pd.DataFrame)


def test_model_fit_auto_and_support(fitted):
    model, _, blocks, _ = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        auto = model.fit("auto", seed=0)
        found = model.select_support(rank=1, seed=0)
    r = auto.rank
    assert set((r if isinstance(r, dict) else dict.fromkeys(blocks, r))) == set(blocks)
    assert found is not None


def test_plots_render(fitted, tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from jdr_stats import plotting

    _, res, blocks, _ = fitted
    for fn in (plotting.plot_scree, plotting.plot_loadings,
               plotting.plot_sufficient_summary):
        fig = fn(res)
        fig.savefig(tmp_path / f"{fn.__name__}.png")
        assert len(fig.axes) >= 1


def test_compare(fitted):
    model, res, blocks, ranks = fitted
    table = jdr.compare(model, rank=1)
    frame = table.table if hasattr(table, "table") else table
    assert len(frame) >= 2
    first = frame.select_dtypes("number").iloc[0].to_numpy(float)
    assert np.isfinite(first).all()


#: The public members of a comparison, the same at every number of blocks.
COMPARISON_MEMBERS = {"table", "fit", "best", "conclusion", "unfitted", "estimates", "blocks",
                      "rank", "nobs", "summary", "to_dict", "to_json", "save"}


def test_compare_is_one_type_with_the_same_members(fitted, tmp_path):
    """``jdr.compare(results)`` is a :class:`jdr.Comparison` at every K, its
    members answer by block name, and ``to_dict`` goes through JSON."""
    model, res, blocks, ranks = fitted
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = jdr.compare(res, cv=2)
    assert type(out) is jdr.Comparison
    public = {n for n in dir(out) if not n.startswith("_")}
    assert public == COMPARISON_MEMBERS
    assert out.blocks == {n: x.shape[1] for n, x in blocks.items()}
    same = len(set(ranks.values())) == 1
    assert out.rank == (next(iter(ranks.values())) if same else ranks)
    assert out.nobs == M
    assert list(out.fit.columns) == ["rsquared", "rsquared adj", "cv rsquared"]
    assert out.fit.loc["jdr", "rsquared"] == pytest.approx(res.rsquared, rel=1e-10)
    assert out.best in out.fit.index and isinstance(out.conclusion(), str)
    joint = f"[{', '.join(blocks)}]" if len(blocks) == 2 else "[blocks]"
    assert list(out.fit.index) == ["jdr", *(f"{m} ({v})" for m in ("sir", "phd", "save")
                                            for v in ("blocks", joint))]
    assert list(out.table.columns) == [f"{s} angle {n}" for n in blocks for s in ("max", "mean")]
    for variant, bases in out.estimates.items():
        assert list(bases) == list(blocks), variant
        for name, u in bases.items():
            assert u.shape == (blocks[name].shape[1], ranks[name])
    text = str(out.summary())
    assert "Comparison of dimension reduction methods" in text and "Blocks:" in text
    assert len(" ".join(str(out.summary(notes="full")).split())) > len(" ".join(text.split()))
    doc = out.to_dict()
    assert json.loads(json.dumps(doc)) == doc == json.loads(out.to_json())
    assert doc["blocks"] == out.blocks and doc["rank"] == out.rank
    assert doc["nobs"] == M and [r["variant"] for r in doc["fit"]] == list(out.fit.index)
    assert doc["out_of_sample"] == "cv rsquared"
    out.save(tmp_path / "cmp.jdr")
    back = jdr.load(tmp_path / "cmp.jdr")
    assert type(back) is jdr.Comparison and back.to_dict() == doc


# ------------------------------------------- one results class per kind of test
def _public(obj):
    return sorted(n for n in dir(type(obj)) if not n.startswith("_"))


def _joint_rank_expected(res, blocks):
    """Two blocks sharing one rank run the joint test; a rank per block or
    three or more blocks, the K-block engine's per-block tests."""
    return len(blocks) == 2 and not isinstance(res.rank, dict)


def _assert_json_round_trip(obj):
    d = obj.to_dict()
    text = json.dumps(d, allow_nan=False)  # plain JSON types, no NaN
    assert json.loads(text) == d
    assert json.loads(obj.to_json()) == d


def test_rank_tests_are_one_class(fitted):
    _, res, blocks, _ = fitted
    rt = res.rank_tests()
    assert type(rt) is jdr.RankTestResults
    for name in _public(rt):  # every member answers at every K (rank tests have no q-values)
        if name != "qvalues":
            getattr(rt, name)
    assert rt.nobs == M and isinstance(rt.method, str) and rt.method
    assert rt.block_names == tuple(blocks)
    assert rt.widths == {n: x.shape[1] for n, x in blocks.items()}
    tables = _mapping_by_block(rt.tables, blocks)
    sel = rt.select_rank(0.05)
    if _joint_rank_expected(res, blocks):
        assert rt.kind == "joint" and type(sel) is int
        assert rt.table.index.name == "k"
        for t in tables.values():  # the one joint table under each block name
            pd.testing.assert_frame_equal(t, rt.table, check_exact=True)
        first = rt.table["pvalue"].to_numpy() > 0.05
        assert sel == (int(np.argmax(first)) if first.any() else len(rt.table))
    else:
        assert rt.kind == "per-block" and type(sel) is dict and list(sel) == list(blocks)
        assert list(rt.table.index.names) == ["block", "rank"]
        assert list(dict.fromkeys(rt.table.index.get_level_values("block"))) == list(blocks)
        for name, t in tables.items():
            assert list(t.columns[:3]) == ["statistic", "df", "pvalue"]
            assert list(t.index) == list(range(blocks[name].shape[1]))  # ranks 0 .. n_k - 1
            np.testing.assert_array_equal(
                t.to_numpy(), rt.table.xs(name, level="block").to_numpy())
            kept = t["pvalue"].to_numpy() >= 0.05
            assert sel[name] == (int(np.argmax(kept)) if kept.any() else len(t))
        text = str(rt.summary())
        for name in blocks:
            assert f"{name}: H0 rank <=" in text
    assert list(rt.table.columns[:3]) == ["statistic", "df", "pvalue"]


def test_rank_tests_export_and_reload_exactly(fitted, tmp_path):
    _, res, blocks, _ = fitted
    rt = res.rank_tests()
    _assert_json_round_trip(rt)
    doc = rt.to_dict()
    assert doc["kind"] == rt.kind and doc["block_names"] == list(blocks)
    assert len(doc["tests"]) == len(rt.table)
    path = tmp_path / "rank_tests.jdr"
    rt.save(path)
    back = jdr.load(path)
    assert type(back) is jdr.RankTestResults
    pd.testing.assert_frame_equal(back.table, rt.table, check_exact=True)
    for name in blocks:
        pd.testing.assert_frame_equal(back.tables[name], rt.tables[name], check_exact=True)
    assert back.to_dict() == doc
    assert back.select_rank(0.05) == rt.select_rank(0.05)
    assert str(back.summary()) == str(rt.summary())
    assert repr(back) == repr(rt)


@pytest.fixture(scope="module")
def support(fitted):
    model = fitted[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.select_support(rank=1, seed=0)


def test_select_support_is_one_class(fitted, support):
    _, _, blocks, _ = fitted
    sup = support
    assert type(sup) is jdr.SupportResults
    two = len(blocks) == 2
    for name in _public(sup):  # every member answers, the two-block view at K = 2 only
        if name in ("selected_a", "selected_b") and not two:
            with pytest.raises(AttributeError, match="two-block view"):
                getattr(sup, name)
        else:
            getattr(sup, name)
    assert sup.block_names == tuple(blocks)
    table = sup.table
    assert list(table.index.names) == ["block", "variable"]
    assert list(table.columns[:4]) == ["statistic", "df", "pvalue", "qvalue"]
    assert "selected" in table.columns
    for name, x in blocks.items():
        rows = table.xs(name, level="block")
        assert list(rows.index) == list(x.columns)
    chosen = _mapping_by_block(sup.support, blocks)
    for name in blocks:
        rows = table.xs(name, level="block")
        assert chosen[name] == [str(v) for v in rows.index[rows["selected"].to_numpy(bool)]]
    assert sup.counts == tuple(len(v) for v in chosen.values())
    assert sup.ranks == dict.fromkeys(blocks, 1) and sup.rank == 1
    assert sup.settings["estimator"] in ("joint", "per-block")
    if two:
        assert (sup.selected_a, sup.selected_b) == tuple(chosen.values())
    text = str(sup.summary())
    assert max(map(len, text.splitlines())) <= 100
    for name in blocks:
        assert name in text


def test_select_support_export_and_reload_exactly(fitted, support, tmp_path):
    _, _, blocks, _ = fitted
    sup = support
    _assert_json_round_trip(sup)
    doc = sup.to_dict()
    assert doc["support"] == sup.support and doc["block_names"] == list(blocks)
    assert [(t["block"], t["variable"]) for t in doc["tests"]] == list(sup.table.index)
    path = tmp_path / "support.jdr"
    sup.save(path)
    back = jdr.load(path)
    assert type(back) is jdr.SupportResults
    pd.testing.assert_frame_equal(back.table, sup.table, check_exact=True)
    assert back.to_dict() == doc
    assert back.support == sup.support and back.ranks == sup.ranks
    assert str(back.summary()) == str(sup.summary())


def test_two_block_view(fitted):
    """``directions_a``/``_b``, ``loadings_a``/``_b`` and ``support_a``/``_b``
    are the K = 2 view of the members by block name (a rank per block
    included); at any other K they name the members to use."""
    _, res, blocks, _ = fitted
    names = list(blocks)
    if len(names) == 2:
        for side, name in zip("ab", names, strict=True):
            np.testing.assert_array_equal(np.asarray(getattr(res, f"directions_{side}"), float),
                                          np.asarray(res.directions[name], float))
            np.testing.assert_array_equal(np.asarray(getattr(res, f"loadings_{side}"), float),
                                          np.asarray(res.loadings[name], float))
            assert list(getattr(res, f"support_{side}")) == list(blocks[name].columns)
        return
    for member in ("directions_a", "loadings_b", "support_a"):
        with pytest.raises(AttributeError, match=r"use (directions|loadings|support)\[name\]"):
            getattr(res, member)


# ------------------------------------------- sparse fits: stability and their tests
def _sparse_fit(fitted, sparsity):
    model, _, blocks, ranks = fitted
    rank = ranks if len(set(ranks.values())) > 1 else 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return model.fit(rank, sparsity=sparsity, seed=0)


def test_selection_stability_at_every_k(fitted):
    """``selection_stability()`` of a sparse fit answers at every K with one
    table: every variable by ``(block, variable)``, ``selected`` the fit's
    support, ``frequency`` a share of the subsamples; same seed, same
    table; a dense fit is refused by name."""
    _, res, blocks, ranks = fitted
    sp = _sparse_fit(fitted, 2)  # an int: every block keeps two, at every K
    assert sp.sparsity in ((2, 2), dict.fromkeys(blocks, 2))
    st = sp.selection_stability(12, seed=4)
    assert list(st.columns) == ["selected", "frequency"]
    assert list(st.index.names) == ["block", "variable"]
    support = {n: list(v) for n, v in zip(blocks, (sp.support_a, sp.support_b))} \
        if _two_block_fit(sp) else sp.support
    for name, x in blocks.items():
        rows = st.xs(name, level="block")
        assert sorted(rows.index) == sorted(x.columns)
        assert sorted(rows.index[rows["selected"].to_numpy(bool)]) == sorted(support[name])
        f = rows["frequency"].to_numpy(float)
        assert np.all((f >= 0) & (f <= 1))
        # each subsample keeps two variables of the block: the shares sum to 2
        assert f.sum() == pytest.approx(2.0)
        # twelve subsamples: each share is a whole number of twelfths
        np.testing.assert_allclose(f * 12, np.round(f * 12), atol=1e-12)
    pd.testing.assert_frame_equal(st, sp.selection_stability(12, seed=4))
    with pytest.raises(ValueError, match="needs a sparse fit"):
        res.selection_stability(4)


def test_support_tests_of_an_auto_sparse_fit(fitted):
    """``support_tests`` is the SupportResults that chose the kept
    variables of ``sparsity="auto"`` (None for a given sparsity), exported
    by ``to_dict()`` and kept by ``save``/``load``, at every K."""
    _, res, blocks, _ = fitted
    assert res.support_tests is None
    sp = _sparse_fit(fitted, "auto")
    st = sp.support_tests
    assert type(st) is jdr.SupportResults
    assert st.block_names == tuple(blocks)
    assert sp.to_dict()["support_tests"] == st.to_dict()


def test_results_members_at_every_k(fitted):
    """One results type whatever K: every public attribute of
    ``JDRResults`` answers on the fit, apart from the objects of one engine
    (the two-block estimate's: one cross moment's SVD ``singular_values``,
    ``coef_matrix``, ``estimate``, ``moments`` and the two-block views of
    the whitened and per-SD bases; the K-block ``eigenvalues``), which
    refuse with an AttributeError naming the engine and the member that
    answers instead."""
    _, res, _, _ = fitted
    assert type(res) is jdr.JDRResults
    refused = {}
    for name in _public_names(jdr.JDRResults):
        if callable(getattr(jdr.JDRResults, name)):
            continue  # methods are called by the tests above
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # the deprecated _std views
                getattr(res, name)
        except AttributeError as exc:
            refused[name] = str(exc)
    two_block_only = {"singular_values", "coef_matrix", "estimate", "moments",
                      "directions_a_whitened", "directions_b_whitened",
                      "directions_a_std", "directions_b_std"}
    views = {f"{m}_{s}" for m in ("directions", "loadings", "support") for s in "ab"}
    expect = {"eigenvalues"} if _two_block_fit(res) else two_block_only
    if len(res.block_names) > 2:  # the two-block view of the by-name members
        expect |= views
    assert set(refused) == expect
    engine = "two-block" if _two_block_fit(res) else "K-block"
    for name, text in refused.items():
        assert name in text, text
        assert (f"the {engine} engine" in text if name not in views
                else f"{len(res.block_names)} blocks" in text), text
    assert not hasattr(res, "no_such_member")


def _public_names(cls):
    return [n for n in dir(cls) if not n.startswith("_")]
