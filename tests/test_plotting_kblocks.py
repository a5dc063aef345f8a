"""Plots of K-block results (headless, Agg): two blocks with per-block
ranks, three and five blocks.  Each test reads back what was drawn (axes,
titles naming the blocks, the plotted numbers) and compares it with the
results' own numbers."""

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from jdr_stats import plotting  # noqa: E402


def _blocks(m, widths, seed, scale=None):
    rng = np.random.default_rng(seed)
    blocks = {}
    for k, (name, n) in enumerate(widths.items()):
        x = rng.standard_normal((m, n))
        if scale is not None and k == 0:
            x = x * scale
        blocks[name] = pd.DataFrame(x, columns=[f"{name}{j}" for j in range(n)])
    # the K-way interaction of each block's first column
    z = np.prod([b.iloc[:, 0].to_numpy() / (1 if scale is None or k else scale[0])
                 for k, b in enumerate(blocks.values())], axis=0)
    y = pd.Series(z + 0.4 * rng.standard_normal(m), name="y")
    return y, blocks


@pytest.fixture(scope="module")
def k2():
    sim = jdr.simulate.bilinear(600, 4, 3, 2, seed=5)
    return jdr.JointDimReduction(sim.y, sim.a, sim.b).fit({"a": 2, "b": 1})


@pytest.fixture(scope="module")
def k3():
    y, blocks = _blocks(700, {"g": 4, "l": 3, "c": 3}, seed=1)
    return jdr.JointDimReduction.from_blocks(y, blocks).fit(1)


@pytest.fixture(scope="module")
def k5():
    y, blocks = _blocks(600, {"b1": 3, "b2": 2, "b3": 2, "b4": 2, "b5": 3}, seed=2)
    return jdr.JointDimReduction.from_blocks(y, blocks).fit(
        {"b1": 2, "b2": 1, "b3": 1, "b4": 1, "b5": 1})


@pytest.fixture(params=["k2", "k3", "k5"])
def res(request):
    return request.getfixturevalue(request.param)


def _names(res):
    return list(res.block_names)


def _ranks(res):
    """Each block's rank (``res.rank`` is an int when they are all equal)."""
    r = res.rank
    return dict(r) if isinstance(r, dict) else dict.fromkeys(_names(res), int(r))


def _sd_loadings(res, name):
    """Per-SD loadings computed here: directions times the columns' SDs,
    each column scaled to largest |entry| 1."""
    x = np.asarray(list(res.model.data.blocks.values())[_names(res).index(name)])
    load = res.directions[name].to_numpy() * x.std(axis=0)[:, None]
    return load / np.abs(load).max(axis=0)


def _titles(fig):
    return [ax.get_title() for ax in fig.axes]


def test_scree_one_panel_per_block(res):
    fig = plotting.plot_scree(res)
    names = _names(res)
    assert len(fig.axes) == len(names)  # no rank tests: no p-value axes
    for ax, n in zip(fig.axes, names, strict=True):
        assert ax.get_title() == f"Scree plot, block {n} (rank {_ranks(res)[n]})"
        np.testing.assert_allclose(ax.lines[0].get_ydata(), res.eigenvalues[n])
        np.testing.assert_allclose(ax.lines[0].get_xdata(),
                                   np.arange(1, len(res.eigenvalues[n]) + 1))
        assert ax.lines[1].get_xdata()[0] == _ranks(res)[n] + 0.5
        # integer k ticks
        assert list(ax.get_xticks()) == list(range(1, len(res.eigenvalues[n]) + 1))
    plt.close(fig)


def test_scree_draws_each_blocks_rank_tests(k3):
    tests = k3.rank_tests()
    fig = plotting.plot_scree(k3, rank_tests=tests, alpha=0.1)
    assert len(fig.axes) == 6  # three panels and their p-value axes
    panels, twins = fig.axes[:3], fig.axes[3:]
    for ax, twin, n in zip(panels, twins, _names(k3), strict=True):
        table = tests.tables[n]
        line = twin.lines[0]
        np.testing.assert_allclose(line.get_xdata(), np.asarray(table.index) + 1)
        np.testing.assert_allclose(line.get_ydata(), np.clip(table["pvalue"], 1e-300, 1))
        assert twin.lines[1].get_ydata()[0] == 0.1
        assert twin.get_yscale() == "log" and n in ax.get_title()
    plt.close(fig)
    with pytest.raises(ValueError, match="rank_tests must be the K-block rank tests"):
        plotting.plot_scree(k3, rank_tests=object())


def test_scree_of_an_auto_fit_shows_the_tests_that_chose_the_ranks():
    y, blocks = _blocks(500, {"g": 3, "l": 3, "c": 2}, seed=4)
    fit = jdr.JointDimReduction.from_blocks(y, blocks).fit("auto")
    table = fit.rank_test_table
    assert table is not None and set(table.tables) == {"g", "l", "c"}
    assert table.select_rank(fit.settings["alpha"] or 0.05) == fit.ranks
    fig = plotting.plot_scree(fit)
    assert len(fig.axes) == 6
    np.testing.assert_allclose(fig.axes[4].lines[0].get_ydata(),
                               np.clip(table.tables["l"]["pvalue"], 1e-300, 1))
    plt.close(fig)
    # a fit of given ranks has none
    assert jdr.JointDimReduction.from_blocks(y, blocks).fit(1).rank_test_table is None


def test_loadings_one_panel_per_block_per_sd(res):
    fig = plotting.plot_loadings(res)
    names = _names(res)
    assert _titles(fig) == [f"Loadings, block {n}" for n in names]
    for ax, n in zip(fig.axes, names, strict=True):
        want = _sd_loadings(res, n)
        assert [t.get_text() for t in ax.get_yticklabels()] == list(res.directions[n].index)
        heights = [p.get_width() for p in ax.patches]
        np.testing.assert_allclose(heights, want.T.reshape(-1), atol=1e-12)
    # the legend names every direction of the block of largest rank
    (legend,) = fig.legends
    assert len(legend.get_texts()) == max(_ranks(res).values())
    plt.close(fig)


def test_loadings_raw_and_one_block(res):
    n = _names(res)[-1]
    fig = plotting.plot_loadings(res, block=n, loadings="raw")
    (ax,) = fig.axes
    assert ax.get_title() == f"Loadings, block {n}"
    np.testing.assert_allclose([p.get_width() for p in ax.patches],
                               res.directions[n].to_numpy().T.reshape(-1))
    plt.close(fig)
    two = _names(res)[:2]
    fig = plotting.plot_loadings(res, block=two, top=1)
    assert len(fig.axes) == 2 and all(len(ax.get_yticklabels()) == 1 for ax in fig.axes)
    assert "hidden" in fig.axes[0].get_title()
    plt.close(fig)
    with pytest.raises(ValueError, match=r"block must be a block name of .*got 'zzz'"):
        plotting.plot_loadings(res, block="zzz")


def test_per_sd_loadings_do_not_depend_on_units():
    # the first block's columns in units 1000x, 1, 0.001 apart: the raw
    # directions change by those factors, the per-SD loadings do not
    widths = {"g": 3, "l": 3, "c": 2}
    y, plain = _blocks(600, widths, seed=6)
    _, scaled = _blocks(600, widths, seed=6, scale=np.array([1e3, 1.0, 1e-3]))
    fits = [jdr.JointDimReduction.from_blocks(y, b).fit(1) for b in (plain, scaled)]
    bars = []
    for fit in fits:
        fig = plotting.plot_loadings(fit, block="g")
        bars.append(np.array([p.get_width() for p in fig.axes[0].patches]))
        plt.close(fig)
    signs = np.sign(bars[0][0]) * np.sign(bars[1][0])
    np.testing.assert_allclose(bars[0], signs * bars[1], atol=1e-6)
    assert np.max(np.abs(bars[0])) == pytest.approx(1.0)


def test_sufficient_summary_per_block_and_their_product(res):
    names = _names(res)
    fig = plotting.plot_sufficient_summary(res)
    feats = res.transform()
    y = np.asarray(res.model.endog, dtype=float)
    assert _titles(fig) == [f"Block {n}" for n in names] + [
        "Product of blocks " + ", ".join(names)]
    product = np.ones(len(y))
    for ax, n in zip(fig.axes[:-1], names, strict=True):
        x = feats[res.directions[n].columns[0]].to_numpy()
        product = product * x
        np.testing.assert_allclose(ax.collections[0].get_offsets(), np.column_stack([x, y]))
        assert ax.get_xlabel() == f"{n}_dir1"
    np.testing.assert_allclose(fig.axes[-1].collections[0].get_offsets()[:, 0], product)
    assert fig.axes[-1].get_xlabel() == " x ".join(f"{n}_dir1" for n in names)
    plt.close(fig)


def test_sufficient_summary_of_one_block_and_bad_arguments(res):
    # the block of the largest rank, at its last direction
    ranks = _ranks(res)
    n = max(ranks, key=ranks.get)
    d = ranks[n]
    fig = plotting.plot_sufficient_summary(res, block=n, direction=d)
    (ax,) = fig.axes
    assert ax.get_title() == f"Block {n}" and ax.get_xlabel() == f"{n}_dir{d}"
    np.testing.assert_allclose(ax.collections[0].get_offsets()[:, 0],
                               res.transform()[f"{n}_{d}"])
    plt.close(fig)
    with pytest.raises(ValueError, match=r"block must be a block name of .*got 'zzz'"):
        plotting.plot_sufficient_summary(res, block="zzz")
    low = min(ranks, key=ranks.get)
    with pytest.raises(ValueError, match=f"direction must be between 1 and 1 .*block '{low}'"):
        plotting.plot_sufficient_summary(res, direction=2)
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match=f"ax must hold {len(ranks) + 1} axes"):
        plotting.plot_sufficient_summary(res, ax=ax)
    plt.close(fig)


def test_sufficient_summary_of_classes_at_three_blocks():
    y, blocks = _blocks(500, {"g": 3, "l": 2, "c": 2}, seed=7)
    cls = pd.Series(np.where(y > 0, "high", "low"), name="y")
    fit = jdr.JointDimReduction.from_blocks(cls, blocks).fit(1)
    fig = plotting.plot_sufficient_summary(fit)
    assert _titles(fig) == ["Blocks g and l by class",
                            "Product of blocks g, l, c by class"]
    feats = fit.transform()
    product = np.prod(feats.to_numpy(), axis=1)
    strip = fig.axes[1]
    shown = np.concatenate([c.get_offsets()[:, 0] for c in strip.collections])
    np.testing.assert_allclose(np.sort(shown), np.sort(product))
    texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert texts == [f"y = {c} ({int((cls == c).sum())})" for c in ("high", "low")]
    plt.close(fig)
    fig = plotting.plot_sufficient_summary(fit, block="c")
    assert _titles(fig) == ["Block c by class"]
    plt.close(fig)


def test_response_surface_over_two_chosen_blocks(res):
    names = _names(res)
    pair = (names[-1], names[0])
    fig = plotting.plot_response_surface(res, blocks=pair, gridsize=6)
    ax = fig.axes[0]
    assert ax.get_title() == f"Response over blocks {pair[0]} and {pair[1]}"
    assert ax.get_xlabel() == f"{pair[0]}_dir1" and ax.get_ylabel() == f"{pair[1]}_dir1"
    feats = res.transform()
    centres = ax.collections[0].get_offsets()
    x, yv = feats[f"{pair[0]}_1"], feats[f"{pair[1]}_1"]
    # hexagons span the two features' range, each a mean of y
    assert centres[:, 0].min() >= x.min() - (x.max() - x.min()) / 5
    assert centres[:, 1].max() <= yv.max() + (yv.max() - yv.min()) / 5
    y = np.asarray(res.model.endog)
    means = np.asarray(ax.collections[0].get_array())
    assert means.min() >= y.min() and means.max() <= y.max()
    plt.close(fig)
    for bad in (names[:1], (names[0], names[0]), ("zzz", names[0])):
        with pytest.raises(ValueError, match="blocks must be two different block names"):
            plotting.plot_response_surface(res, blocks=bad)


def test_response_surface_shows_the_pair_interaction():
    # y = g0 * l0 (block c carries no signal): the mean response over the
    # (g, l) plane changes sign between quadrants
    rng = np.random.default_rng(9)
    m = 3000
    g, lip, c = (rng.standard_normal((m, 3)) for _ in range(3))
    y = g[:, 0] * lip[:, 0] + 0.3 * rng.standard_normal(m)
    fit = jdr.JointDimReduction.from_blocks(y, {"g": g, "l": lip, "c": c}).fit(1)
    fig = plotting.plot_response_surface(fit, blocks=("g", "l"), gridsize=8)
    coll = fig.axes[0].collections[0]
    centres, means = coll.get_offsets(), np.asarray(coll.get_array())
    same = np.sign(centres[:, 0]) == np.sign(centres[:, 1])
    assert means[same].mean() * means[~same].mean() < 0
    plt.close(fig)


@pytest.mark.filterwarnings("ignore::jdr_stats.exceptions.WeakGapWarning")  # a null block
def test_bootstrap_angles_per_block(res):
    boot = res.bootstrap(n_boot=12, seed=3, alpha=0.2)
    names = _names(res)
    # each replicate's principal angles, ascending: the largest is the last
    angles = {n: a[:, -1] for n, a in boot.angles.items()}
    assert set(angles) == set(names)
    table = boot.table
    for n in names:
        assert angles[n].shape == (12,)
        assert np.median(angles[n]) == pytest.approx(table.loc[n, "median"])
        # the ceil((B + 1) level)-th smallest largest angle, as for two blocks
        k = int(np.ceil((12 + 1) * boot.level))
        assert np.sort(angles[n])[k - 1] == pytest.approx(table.loc[n, "upper"])
    fig = plotting.plot_bootstrap_angles(boot)
    assert len(fig.axes) == len(names)
    for ax, n in zip(fig.axes, names, strict=True):
        assert ax.get_title() == f"Block {n}: bound {table.loc[n, 'upper']:.1f} deg"
        assert sum(p.get_height() for p in ax.patches) == 12
        assert ax.lines[0].get_xdata()[0] == pytest.approx(table.loc[n, "upper"])
    plt.close(fig)
    fig = plotting.plot_bootstrap_angles(boot, block=names[1])
    assert _titles(fig)[0].startswith(f"Block {names[1]}:") and len(fig.axes) == 1
    plt.close(fig)
    with pytest.raises(ValueError, match=r"block must be a block name of .*got 'zzz'"):
        plotting.plot_bootstrap_angles(boot, block="zzz")


def test_bootstrap_angles_survive_save_and_load(k3, tmp_path):
    boot = k3.bootstrap(n_boot=5, seed=0, alpha=0.4)
    boot.save(tmp_path / "boot.jdr")
    back = jdr.load(tmp_path / "boot.jdr")
    for n in _names(k3):
        np.testing.assert_array_equal(back.angles[n], boot.angles[n])
    fig = plotting.plot_bootstrap_angles(back)
    assert len(fig.axes) == 3
    plt.close(fig)


def test_support_of_a_dense_fit_keeps_every_variable(res):
    fig = plotting.plot_support(res)
    names = _names(res)
    for ax, n in zip(fig.axes, names, strict=True):
        total = len(res.directions[n])
        assert ax.get_title() == f"Block {n}: all kept (dense fit)"
        widths = [p.get_width() for p in ax.patches]
        np.testing.assert_allclose(widths, np.abs(_sd_loadings(res, n)).max(axis=1))
        assert len(widths) == total
    plt.close(fig)


def test_support_of_a_sparse_fit_at_three_blocks():
    y, blocks = _blocks(700, {"g": 5, "l": 4, "c": 3}, seed=8)
    fit = jdr.JointDimReduction.from_blocks(y, blocks).fit(1, sparsity={"g": 2, "l": 2, "c": 1})
    fig = plotting.plot_support(fit)
    assert _titles(fig) == ["Block g: 2 of 5 kept", "Block l: 2 of 4 kept",
                            "Block c: 1 of 3 kept"]
    for ax, n in zip(fig.axes, ("g", "l", "c"), strict=True):
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels == list(fit.directions[n].index)
        kept = [to_rgba(plotting.SELECTED) == p.get_facecolor() for p in ax.patches]
        assert [lab for lab, k in zip(labels, kept, strict=True) if k] == fit.support[n]
    plt.close(fig)
    fig = plotting.plot_support(fit, top=1)
    assert all(len(ax.patches) == 1 for ax in fig.axes)
    # the kept variable of the largest loading is the one shown
    kept_c = fit.support["c"]
    assert [t.get_text() for t in fig.axes[2].get_yticklabels()] == kept_c
    assert "hidden" in fig.axes[0].get_title()
    plt.close(fig)


def test_two_block_results_take_the_block_arguments():
    sim = jdr.simulate.bilinear(800, 4, 3, 1, seed=4)
    fit = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    fig = plotting.plot_sufficient_summary(fit, block="b")
    (ax,) = fig.axes
    assert ax.get_title() == "Block b" and ax.get_xlabel() == "b_dir1"
    np.testing.assert_allclose(ax.collections[0].get_offsets()[:, 0],
                               np.asarray(fit.transform())[:, 1])
    plt.close(fig)
    fig = plotting.plot_response_surface(fit, blocks=("b", "a"))
    assert fig.axes[0].get_xlabel() == "b_dir1" and fig.axes[0].get_ylabel() == "a_dir1"
    assert fig.axes[0].get_title() == "Response over blocks b and a"
    plt.close(fig)
    boot = fit.bootstrap(n_boot=39, seed=0)  # one type: its blocks picked by key
    fig = plotting.plot_bootstrap_angles(boot, block="a")
    assert _titles(fig) == [f"Block a: bound {boot.max_angle_bound()['a']:.1f} deg"]
    plt.close(fig)


def test_scree_on_given_axes_keeps_the_legend_right_of_the_pvalues(k3):
    fig, axes = plt.subplots(1, 3, figsize=(15, 4))
    assert plotting.plot_scree(k3, rank_tests=k3.rank_tests(), ax=axes) is fig
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    (legend,) = [a.get_legend() for a in fig.axes if a.get_legend() is not None]
    box = legend.get_window_extent(renderer)
    twin = fig.axes[-1]  # the last panel's p-value axis
    assert box.x0 >= twin.get_tightbbox(renderer).x1 - 1
    plt.close(fig)
    fig, ax = plt.subplots()
    with pytest.raises(ValueError, match="ax must hold 3 axes"):
        plotting.plot_scree(k3, ax=ax)
    plt.close(fig)


def test_every_plot_of_a_two_block_main_effects_fit():
    sim = jdr.simulate.bilinear(500, 3, 3, 1, seed=11)
    fit = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1, main_effects=True)
    assert fit.main_effects
    titles = {
        "scree": _titles(plotting.plot_scree(fit)),
        "loadings": _titles(plotting.plot_loadings(fit)),
        "summary": _titles(plotting.plot_sufficient_summary(fit)),
        "surface": _titles(plotting.plot_response_surface(fit)),
        "boot": _titles(plotting.plot_bootstrap_angles(fit.bootstrap(n_boot=39, seed=0))),
        "support": _titles(plotting.plot_support(fit)),
    }
    plt.close("all")
    assert titles == {
        "scree": ["Scree plot, block a (rank 1)", "Scree plot, block b (rank 1)"],
        "loadings": ["Loadings, block a", "Loadings, block b"],
        "summary": ["Block a", "Block b", "Product of blocks a, b"],
        "surface": ["Response over blocks a and b", ""],  # and the colour bar
        "boot": [t for t in titles["boot"] if t.startswith(("Block a: bound",
                                                            "Block b: bound"))],
        "support": ["Block a: all kept (dense fit)", "Block b: all kept (dense fit)"],
    }
    assert len(titles["boot"]) == 2


def test_support_of_kblock_selection():
    """``plot_support`` of ``select_support``'s K-block results: a panel per
    block, the bars the -log10 q-values of its table, selected ones dark."""
    rng = np.random.default_rng(3)
    xs = {n: rng.standard_normal((500, 3)) for n in ("g", "l", "c")}
    y = xs["g"][:, 0] * xs["l"][:, 0] + rng.standard_normal(500)
    sup = jdr.JointDimReduction.from_blocks(y, xs).select_support(rank=1)
    fig = plotting.plot_support(sup)
    assert [ax.get_title() for ax in fig.axes] == [f"Block {n}: coordinate tests"
                                                   for n in xs]
    for ax, n in zip(fig.axes, xs, strict=True):
        q = sup.table.xs(n, level="block")["qvalue"].to_numpy(float)
        widths = sorted(p.get_width() for p in ax.patches)
        np.testing.assert_allclose(widths, sorted(-np.log10(np.clip(q, 1e-300, 1))))
    plt.close(fig)
