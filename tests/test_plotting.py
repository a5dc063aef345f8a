"""Plots, headless (Agg): axes, labels and the number of plotted points."""

import itertools

import numpy as np
import pytest

import jdr_stats as jdr

mpl = pytest.importorskip("matplotlib")
mpl.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from jdr_stats import plotting  # noqa: E402
from jdr_stats.support import Stability  # noqa: E402


@pytest.fixture(scope="module")
def res():
    sim = jdr.simulate.bilinear(1500, 5, 4, 2, seed=8)
    return jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)


def test_scree(res):
    fig = plotting.plot_scree(res)
    (ax,) = fig.axes
    line = ax.lines[0]
    np.testing.assert_allclose(line.get_ydata(), res.singular_values)
    assert ax.get_xlabel() == "k" and "singular value" in ax.get_ylabel()
    plt.close(fig)


def test_loadings(res):
    fig = plotting.plot_loadings(res)
    assert len(fig.axes) == 2
    ax_a = fig.axes[0]
    assert [t.get_text() for t in ax_a.get_yticklabels()] == res.model.exog_names_a
    assert len(ax_a.patches) == 5 * 2  # one bar per variable and direction
    plt.close(fig)
    # the bars are the per-SD loadings of the summary by default, the raw
    # directions on request
    heights = [p.get_width() for p in ax_a.patches]
    want = np.asarray(res.loadings_a, dtype=float)
    np.testing.assert_allclose(heights, want.T.reshape(-1))
    plt.close(fig)
    fig = plotting.plot_loadings(res, block="b", loadings="raw")
    assert len(fig.axes) == 1 and len(fig.axes[0].patches) == 4 * 2
    heights = [p.get_width() for p in fig.axes[0].patches]
    np.testing.assert_allclose(heights, res.estimate.dir_b.T.reshape(-1))
    plt.close(fig)
    with pytest.raises(ValueError, match="block must be"):
        plotting.plot_loadings(res, block="c")


def test_sufficient_summary(res):
    fig = plotting.plot_sufficient_summary(res, direction=2)
    assert len(fig.axes) == 3
    for ax in fig.axes:
        assert ax.collections[0].get_offsets().shape == (1500, 2)
    assert fig.axes[2].get_xlabel() == "a_dir2 x b_dir2"
    plt.close(fig)
    with pytest.raises(ValueError, match="direction must be between 1 and 2"):
        plotting.plot_sufficient_summary(res, direction=3)


def test_given_axes(res):
    fig, ax = plt.subplots()
    assert plotting.plot_scree(res, ax=ax) is fig
    with pytest.raises(ValueError, match="ax must hold 3 axes"):
        plotting.plot_sufficient_summary(res, ax=ax)
    plt.close(fig)


def test_bootstrap_angles(res):
    boot = res.bootstrap(n_boot=49, seed=1)
    fig = plotting.plot_bootstrap_angles(boot)
    assert len(fig.axes) == 2
    counts = sum(p.get_height() for p in fig.axes[0].patches)
    assert counts == boot.n_boot
    assert fig.axes[0].lines[0].get_xdata()[0] == pytest.approx(boot.max_angle_bound()["a"])
    assert "degrees" in fig.axes[1].get_xlabel()
    plt.close(fig)


def test_scree_with_rank_tests(res):
    rt = res.rank_tests("chi2")
    fig = plotting.plot_scree(res, rank_tests=rt)
    assert len(fig.axes) == 2
    np.testing.assert_allclose(fig.axes[1].lines[0].get_ydata(), np.clip(rt.table["pvalue"], 1e-300, 1))
    plt.close(fig)


def test_response_surface_hexbin_means(res):
    fig = plotting.plot_response_surface(res)
    ax = fig.axes[0]
    (coll,) = ax.collections
    values = np.asarray(coll.get_array())
    y = res.model.endog
    # every hexagon holds the mean of some rows: within the range of y
    assert values.size > 20 and values.min() >= y.min() and values.max() <= y.max()
    assert ax.get_xlabel() == "a_dir1" and ax.get_ylabel() == "b_dir1"
    plt.close(fig)
    fig = plotting.plot_response_surface(res, direction=2, kind="contour", gridsize=10)
    assert fig.axes[0].get_xlabel() == "a_dir2"
    plt.close(fig)
    with pytest.raises(ValueError, match="kind must be"):
        plotting.plot_response_surface(res, kind="surface")
    with pytest.raises(ValueError, match="direction must be between"):
        plotting.plot_response_surface(res, direction=3)


def test_response_surface_shows_the_interaction():
    # y = (u'a)(v'b): the mean response is positive in quadrants where the
    # two features share a sign and negative elsewhere
    sim = jdr.simulate.bilinear(4000, 3, 3, 1, seed=2)
    fit = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    fig = plotting.plot_response_surface(fit, gridsize=8)
    coll = fig.axes[0].collections[0]
    centres, means = coll.get_offsets(), np.asarray(coll.get_array())
    same = np.sign(centres[:, 0]) == np.sign(centres[:, 1])
    assert means[same].mean() * means[~same].mean() < 0
    plt.close(fig)


def test_plot_support():
    sim = jdr.simulate.bilinear(1500, 6, 5, 1, s1=2, s2=2, seed=3)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    sup = model.select_support(rank=1)
    fig = plotting.plot_support(sup)
    assert len(fig.axes) == 2
    assert len(fig.axes[0].patches) == 6 and len(fig.axes[1].patches) == 5
    plt.close(fig)
    stab = model.select_support(rank=1, rule=Stability(n_subsamples=10), seed=1)
    fig = plotting.plot_support(stab)
    assert len(fig.axes) == 4
    widths = [p.get_width() for p in fig.axes[2].patches]
    np.testing.assert_allclose(widths, stab.table.xs("a", level="block")["frequency"])
    plt.close(fig)


# -- what every plot draws: legends outside the data, integer k ticks, the
# level drawn, colours named, one variable order -------------------------------

def _legend_outside(fig):
    """Every legend of ``fig`` lies outside every axes (window extents)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = list(fig.legends) + [ax.get_legend() for ax in fig.axes if ax.get_legend()]
    assert legends, "no legend"
    for leg in legends:
        box = leg.get_window_extent(renderer)
        for ax in fig.axes:
            assert not box.overlaps(ax.get_window_extent(renderer)), (leg, ax)
        # and inside the figure, so that savefig keeps it
        fbox = fig.bbox
        assert fbox.x0 - 1 <= box.x0 and box.x1 <= fbox.x1 + 1 and fbox.y0 - 1 <= box.y0
    return legends


def _labels(legends):
    return [t.get_text() for leg in legends for t in leg.get_texts()]


def test_scree_legend_ticks_and_level(res):
    rt = res.rank_tests("chi2")
    fig = plotting.plot_scree(res, rank_tests=rt)
    legends = _legend_outside(fig)
    ax, ax2 = fig.axes
    ticks = [t.get_text() for t in ax.get_xticklabels()]
    assert ticks == [str(k) for k in range(1, len(res.singular_values) + 1)]
    level = [ln for ln in ax2.lines if list(ln.get_ydata()) == [0.05, 0.05]]
    assert len(level) == 1  # the level alpha drawn on the p-value axis
    assert "level alpha = 0.05" in _labels(legends)
    plt.close(fig)
    # on the caller's axes: the legend to the right, past the twin axis' labels
    fig, ax = plt.subplots(figsize=(6, 4))
    plotting.plot_scree(res, rank_tests=rt, alpha=0.1, ax=ax)
    fig.savefig(__import__("io").BytesIO(), bbox_inches="tight")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    leg = ax.get_legend()
    assert leg.get_window_extent(renderer).x0 >= fig.axes[1].get_tightbbox(renderer).x1
    assert "level alpha = 0.1" in _labels([leg])
    plt.close(fig)


def test_scree_many_k_integer_ticks():
    sim = jdr.simulate.bilinear(2000, 20, 18, 1, seed=0)
    fit = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    fig = plotting.plot_scree(fit)
    fig.canvas.draw()
    values = [t.get_position()[0] for t in fig.axes[0].get_xticklabels() if t.get_text()]
    assert values and all(float(v).is_integer() for v in values)
    plt.close(fig)


def test_loadings_legend_outside_and_order(res):
    fig = plotting.plot_loadings(res)
    legends = _legend_outside(fig)
    assert _labels(legends) == ["dir1", "dir2"]
    for ax, names in zip(fig.axes, (res.model.exog_names_a, res.model.exog_names_b)):
        # the first variable on top: its tick is highest on the screen
        ys = [t.get_window_extent().y0 for t in ax.get_yticklabels()]
        assert [t.get_text() for t in ax.get_yticklabels()] == names
        assert ys == sorted(ys, reverse=True)
    plt.close(fig)


def test_bootstrap_legend_outside_and_bound(res):
    boot = res.bootstrap(n_boot=49, seed=1)
    fig = plotting.plot_bootstrap_angles(boot)
    labels = _labels(_legend_outside(fig))
    assert labels[0] == "replicates' largest angle" and "95% upper bound" in labels[1]
    assert fig.axes[0].get_title() == f"Block a: bound {boot.max_angle_bound()['a']:.1f} deg"
    plt.close(fig)


def test_support_colours_explained_and_same_order_as_loadings():
    sim = jdr.simulate.bilinear(1500, 6, 5, 1, s1=2, s2=2, seed=3)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    sup = model.select_support(rank=1, seed=0)
    fig = plotting.plot_support(sup)
    legends = _legend_outside(fig)
    assert _labels(legends)[:3] == ["selected", "not selected", "target FDR 0.1 (q = 0.1)"]
    handles = legends[0].legend_handles
    selected = sup.table.xs("a", level="block")["selected"].to_numpy(bool)
    colours = [mpl.colors.to_hex(p.get_facecolor()) for p in fig.axes[0].patches]
    want = [mpl.colors.to_hex(handles[0 if s else 1].get_facecolor()) for s in selected]
    assert colours == want
    fig.canvas.draw()
    sup_order = [t.get_text() for t in sorted(fig.axes[0].get_yticklabels(),
                                              key=lambda t: -t.get_window_extent().y0)]
    plt.close(fig)
    fig = plotting.plot_loadings(model.fit(1), block="a")
    fig.canvas.draw()
    load_order = [t.get_text() for t in sorted(fig.axes[0].get_yticklabels(),
                                               key=lambda t: -t.get_window_extent().y0)]
    assert sup_order == load_order == model.exog_names_a
    plt.close(fig)


def test_support_on_given_axes_legend_right():
    sim = jdr.simulate.bilinear(800, 4, 4, 1, seed=5)
    sup = jdr.JointDimReduction(sim.y, sim.a, sim.b).select_support(rank=1, seed=0)
    fig, axes = plt.subplots(1, 2, figsize=(12, 3))
    plotting.plot_support(sup, ax=axes)
    leg = axes[1].get_legend()
    fig.canvas.draw()
    assert leg.get_window_extent().x0 >= axes[1].get_window_extent().x1
    plt.close(fig)


@pytest.mark.parametrize("draw", [plotting.plot_sufficient_summary, plotting.plot_loadings])
def test_tick_labels_never_touch(res, draw):
    fig = draw(res)
    fig.set_dpi(90)  # the gallery's resolution
    fig.canvas.draw()
    for ax in fig.axes:
        boxes = [t.get_window_extent() for t in ax.get_xticklabels() if t.get_text()]
        assert all(a.x1 < b.x0 for a, b in zip(boxes, boxes[1:])), ax.get_xlabel()
    plt.close(fig)


def test_scree_pvalue_axis_spans_a_decade_below_the_level(res):
    fig = plotting.plot_scree(res, rank_tests=res.rank_tests("chi2"))
    low, high = fig.axes[1].get_ylim()
    assert low <= 0.05 / 10 and high >= 1
    plt.close(fig)


def test_gallery_images_exist_and_are_small():
    import pathlib
    import re

    docs = pathlib.Path(__file__).resolve().parent.parent / "docs"
    page = (docs / "guide" / "gallery.md").read_text()
    shown = re.findall(r"\]\(\.\./_static/gallery/([\w.-]+\.png)\)", page)
    folder = docs / "_static" / "gallery"
    assert shown and sorted(shown) == sorted(p.name for p in folder.glob("*.png"))
    for name in shown:
        assert (folder / name).stat().st_size < 100_000, name


@pytest.fixture(scope="module")
def wide():
    """120 + 21 variables, as a user's gene and lipid blocks."""
    sim = jdr.simulate.bilinear(1300, 120, 21, 1, s1=2, s2=2, seed=36)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    return model.fit(2), model.select_support(rank=1, seed=0)


def _ylabels_apart(fig):
    fig.set_dpi(90)  # the gallery's resolution
    fig.canvas.draw()
    for ax in fig.axes:
        boxes = sorted((t.get_window_extent() for t in ax.get_yticklabels() if t.get_text()),
                       key=lambda b: b.y0)
        assert all(a.y1 <= b.y0 + 0.5 for a, b in itertools.pairwise(boxes)), ax.get_title()


@pytest.mark.parametrize("kind", ["loadings", "support"])
def test_many_labels_grow_the_figure_or_top_k_hides_some(wide, kind):
    res, sup = wide
    draw = ((lambda **kw: plotting.plot_loadings(res, **kw)) if kind == "loadings"
            else (lambda **kw: plotting.plot_support(sup, **kw)))
    fig = draw()
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == res.model.exog_names_a  # all 120, in the order of the data
    assert fig.get_figheight() >= 0.15 * 120  # grows with the labels
    _ylabels_apart(fig)
    plt.close(fig)
    fig = draw(top=10)
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert len(labels) == 10 and fig.get_figheight() < 6
    idx = [res.model.exog_names_a.index(n) for n in labels]
    assert idx == sorted(idx)  # still in the order of the data
    assert "10 of 120 shown" in fig.axes[0].get_title()
    assert "110 hidden" in fig.axes[0].get_title()
    if kind == "loadings":  # the 10 largest absolute loadings
        size = np.abs(np.asarray(res.loadings_a, dtype=float)).max(axis=1)
        assert min(size[idx]) >= np.sort(size)[-10]
    else:  # the selected variables are kept
        chosen = sup.table.xs("a", level="block")["selected"]
        assert set(chosen[chosen].index) <= set(labels)
    _ylabels_apart(fig)
    plt.close(fig)
    with pytest.raises(ValueError, match="top must be"):
        draw(top=0)


def test_sufficient_summary_of_classes_is_a_class_coloured_scatter():
    """Issue 36: a categorical response is drawn as the reduced features
    coloured by class, not as a whitened indicator."""
    import pandas as pd

    sim = jdr.simulate.bilinear(900, 5, 4, 1, seed=3)
    cls = pd.Series(pd.qcut(sim.y, 3, labels=["low", "mid", "high"]), name="level")
    res = jdr.JointDimReduction(cls, sim.a, sim.b).fit(1)
    fig = plotting.plot_sufficient_summary(res)
    plane, strip = fig.axes
    feats = np.asarray(res.transform(), dtype=float)
    for j, name in enumerate(["low", "mid", "high"]):
        rows = (cls == name).to_numpy()
        np.testing.assert_allclose(plane.collections[j].get_offsets(), feats[rows][:, [0, 1]])
        np.testing.assert_allclose(strip.collections[j].get_offsets()[:, 0],
                                   feats[rows, 0] * feats[rows, 1])
    assert (plane.get_xlabel(), plane.get_ylabel()) == ("a_dir1", "b_dir1")
    labels = _labels(_legend_outside(fig))
    assert labels == ["level = low (300)", "level = mid (300)", "level = high (300)"]
    assert [t.get_text() for t in strip.get_yticklabels()] == ["low", "mid", "high"]
    plt.close(fig)
    fig = plotting.plot_sufficient_summary(res, column=1)  # the whitened indicator on request
    assert len(fig.axes) == 3 and fig.axes[0].get_ylabel().startswith("Yw1 (whitened ")
    plt.close(fig)
    fig, axes = plt.subplots(1, 3)
    with pytest.raises(ValueError, match="ax must hold 2 axes"):
        plotting.plot_sufficient_summary(res, ax=axes)
    plt.close(fig)
