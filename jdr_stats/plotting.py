"""Plots of fitted results (optional: ``pip install jdr_stats[plot]``).

Every function draws on a new figure, or on the axes given, and returns the
matplotlib ``Figure``.  The conventions shared by every plot:

* legends never cover data: on a figure the function creates, one legend
  below the panels (constrained layout makes room for it); on axes the
  caller gives, a legend to the right of the axes;
* an axis of ranks ``k`` has integer ticks;
* the level of a test is drawn (alpha on the p-value axis of the scree
  plot, the target FDR on the support plot, the bound on the bootstrap
  histograms), and colours are named in the legend (selected / not
  selected);
* variables run from top to bottom in the order of the data, in the
  loadings and the support plots alike;
* a panel with one row per variable keeps every label readable at any
  width: on a figure the function creates, its height grows with the
  number of variables (about 0.15 inch a label, labels in 7 pt beyond 30);
  ``top=k`` shows only the k variables with the largest loadings (or
  smallest q-values), still in the order of the data, and the panel's title
  says how many are hidden.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ._validation import check_choice, check_int

if TYPE_CHECKING:  # matplotlib is optional
    from matplotlib.figure import Figure

#: Colours of selected and unselected variables (named in each legend).
SELECTED, NOT_SELECTED = "C0", "0.75"

__all__ = [
    "plot_scree",
    "plot_loadings",
    "plot_sufficient_summary",
    "plot_bootstrap_angles",
    "plot_response_surface",
    "plot_support",
]


def _plt():
    try:
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ImportError(
            "plotting needs matplotlib: pip install 'jdr_stats[plot]'"
        ) from exc
    return plt


def _axes(ax, ncols=1, figsize=None):
    plt = _plt()
    if ax is None:
        fig, axes = plt.subplots(1, ncols, figsize=figsize, squeeze=False,
                                 layout="constrained")
        return fig, list(axes[0])
    axes = list(np.atleast_1d(ax))
    if len(axes) != ncols:
        raise ValueError(f"ax must hold {ncols} axes for this plot; got {len(axes)}")
    return axes[0].figure, axes


def _legend(fig: Any, axis: Any, handles: list[Any], own: bool, twin: Any = None) -> Any:
    """One legend outside the data: below the panels of a figure made here
    (``own``; as many columns as the width holds), else to the right of
    ``axis`` (beyond the labels of its ``twin`` axis, if any)."""
    labels = [h.get_label() for h in handles]
    if own:
        ncols = max(1, min(len(handles), int(fig.get_figwidth() / 2.8)))
        return fig.legend(handles, labels, loc="outside lower center", ncols=ncols,
                          frameon=False)
    x = 1.02
    if twin is not None:  # past the twin axis' tick labels and label
        fig.canvas.draw()
        right = twin.get_tightbbox(fig.canvas.get_renderer()).x1
        x = float(axis.transAxes.inverted().transform((right, 0.0))[0]) + 0.02
    return axis.legend(handles, labels, loc="upper left", bbox_to_anchor=(x, 1.0),
                       borderaxespad=0.0, frameon=False)


def _integer_ticks(axis: Any, ks: np.ndarray) -> None:
    """Integer ticks on a k axis: every k when there are few, else a
    locator that only picks integers."""
    from matplotlib.ticker import MaxNLocator

    if len(ks) <= 15:
        axis.set_xticks(ks)
    else:
        axis.xaxis.set_major_locator(MaxNLocator(integer=True))


def plot_scree(
    results: Any, *, rank_tests: Any = None, alpha: float | None = None, ax: Any = None
) -> Figure:
    """Singular values of ``X_lin`` with the fitted rank and rank-test p-values.

    Parameters
    ----------
    results : JDRResults
    rank_tests : RankTestResults, optional
        Its p-values are drawn on a second axis (log scale) with a line at
        the level ``alpha``; by default the tests already computed on
        ``results`` (if any) are used.
    alpha : float, optional
        The level drawn on the p-value axis; by default the fit's (0.05
        unless ``fit(alpha=...)`` said otherwise).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    own = ax is None
    fig, (ax,) = _axes(ax, figsize=(6, 4.2))
    s = results.singular_values
    k = np.arange(1, len(s) + 1)
    handles = ax.plot(k, s, "o-", color="C0", label="singular value s_k")
    handles.append(ax.axvline(results.rank + 0.5, color="0.5", linestyle="--",
                              label=f"fitted rank {results.rank}"))
    ax.set_xlabel("k")
    ax.set_ylabel("singular value of X_lin")
    ax.set_title("Scree plot")
    _integer_ticks(ax, k)
    if rank_tests is None:
        rank_tests = getattr(results, "rank_test_table", None)
    # every test table has a pvalue column; the ladle (a criterion) has none
    if rank_tests is not None and "pvalue" in rank_tests.table:
        if alpha is None:
            alpha = float(getattr(getattr(results, "settings", None), "alpha", None) or 0.05)
        table = rank_tests.table
        ks = np.asarray(table.index if "k" not in table.columns else table["k"], dtype=float)
        ax2 = ax.twinx()
        # The test of H0: r = k is about singular values k+1, k+2, ...
        pvals = np.clip(table["pvalue"].to_numpy(dtype=float), 1e-300, 1)
        handles += ax2.semilogy(ks + 1, pvals, "s:", color="C3",
                                label="p-value of H0: r = k - 1")
        # at least a decade below the level, so that the axis has major ticks
        low = min(float(np.nanmin(pvals)) if np.isfinite(pvals).any() else 1.0, alpha)
        ax2.set_ylim(low / 10 ** 1.2, 1.5)
        handles.append(ax2.axhline(alpha, color="C3", linewidth=0.8, linestyle="-.",
                                   label=f"level alpha = {alpha:g}"))
        ax2.set_ylabel("rank-test p-value")
        _legend(fig, ax, handles, own, twin=ax2)
    else:
        _legend(fig, ax, handles, own)
    return fig


#: Height in inches of one variable's row in a panel with a row per
#: variable, and the number of rows above which the labels shrink to 7 pt.
_ROW_INCH, _SMALL_LABELS = 0.15, 30


def _check_top(top: int | None) -> int | None:
    return None if top is None else check_int(top, "top", low=1)


def _top_rows(order: np.ndarray, top: int | None) -> np.ndarray:
    """Indices of the rows shown: the first ``top`` of ``order`` (most
    important first), returned in the order of the data; every row when
    ``top`` is None or not smaller than the number of rows."""
    if top is None or top >= len(order):
        return np.arange(len(order))
    return np.sort(order[:top])


def _rows_title(title: str, shown: int, total: int, what: str) -> str:
    """A panel's title, with how many rows ``top`` hid."""
    if shown == total:
        return title
    return f"{title}\n{shown} of {total} shown ({what}); {total - shown} hidden"


def _panel_height(n_rows: int, least: float) -> float:
    """Height in inches of a panel holding ``n_rows`` labelled rows."""
    return max(least, 1.3 + _ROW_INCH * n_rows)


def _label_rows(axis: Any, pos: np.ndarray, names: list[str]) -> None:
    """One tick label per row, the first variable on top, smaller when many."""
    axis.set_yticks(pos)
    axis.set_yticklabels(names, fontsize=7 if len(names) > _SMALL_LABELS else None)
    axis.set_ylim(len(names) - 0.4, -0.6)  # the first variable on top, no margin


def plot_loadings(
    results: Any,
    *,
    block: Literal["a", "b", "both"] = "both",
    loadings: Literal["sd", "raw"] = "sd",
    top: int | None = None,
    ax: Any = None,
) -> Figure:
    """Bar charts of each block's loadings, one bar per variable and direction.

    Parameters
    ----------
    results : JDRResults
    block : {"a", "b", "both"}
    loadings : {"sd", "raw"}
        ``"sd"`` (default) draws the per-standard-deviation loadings of the
        summary (:attr:`JDRResults.loadings_a`: the direction's entry times
        the variable's SD, each column scaled to largest absolute value 1),
        which compare variables in different units; ``"raw"`` draws the
        unit-length directions in the original units
        (:attr:`JDRResults.directions_a`).
    top : int, optional
        Show only the ``top`` variables of each block with the largest
        absolute loading (over the directions), in the order of the data;
        the panel's title says how many are hidden.  By default every
        variable is shown and a figure made here grows with the number of
        variables (about 0.15 inch a variable), which keeps 120 labels
        readable; ``top`` suits axes given by the caller.
    ax : matplotlib Axes, optional
        One axes per block.

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.ticker import MaxNLocator

    check_choice(block, "block", ("a", "b", "both"))
    check_choice(loadings, "loadings", ("sd", "raw"))
    top = _check_top(top)
    blocks = ["a", "b"] if block == "both" else [block]
    model = results.model
    panels = []
    for blk in blocks:
        if loadings == "sd":
            dirs = np.asarray(results.loadings_a if blk == "a" else results.loadings_b,
                              dtype=float)
        else:
            dirs = np.asarray(results.estimate.dir_a if blk == "a" else results.estimate.dir_b,
                              dtype=float)
        names = list(model.exog_names_a if blk == "a" else model.exog_names_b)
        # the largest absolute loading first (ties: the order of the data)
        keep = _top_rows(np.argsort(-np.abs(dirs).max(axis=1), kind="stable"), top)
        panels.append((blk, dirs[keep], [names[i] for i in keep], len(names)))
    own = ax is None
    rows = max(len(p[2]) for p in panels)
    fig, axes = _axes(ax, ncols=len(blocks),
                      figsize=(5 * len(blocks), _panel_height(rows, 4.4)))
    for axis, (blk, dirs, names, total) in zip(axes, panels, strict=True):
        pos = np.arange(len(names))
        width = 0.8 / dirs.shape[1]
        bars = [axis.barh(pos + (j - (dirs.shape[1] - 1) / 2) * width, dirs[:, j],
                          height=width, color=f"C{j}", label=f"dir{j + 1}")
                for j in range(dirs.shape[1])]
        _label_rows(axis, pos, names)  # the first variable on top, as in plot_support
        axis.axvline(0, color="0.3", linewidth=0.8)
        axis.xaxis.set_major_locator(MaxNLocator(nbins=5))  # tick labels never touch
        axis.set_xlabel("loading per SD (largest = 1)" if loadings == "sd"
                        else "direction entry (original units)")
        axis.set_title(_rows_title(f"Loadings, block {blk}", len(names), total,
                                   "largest |loading|"))
    _legend(fig, axes[-1], bars, own)
    return fig


def _response(results: Any, column: int) -> tuple[np.ndarray, str]:
    """The plotted response: ``y`` itself, or column ``column`` (1-based) of the
    whitened response matrix ``Yw`` of a response of ``q > 1`` columns."""
    y = np.asarray(results.model.endog, dtype=float)
    q = 1 if y.ndim == 1 else y.shape[1]
    column = check_int(column, "column", low=1, high=q,
                       why=f" (the response has {q} column(s))")
    if y.ndim == 1:
        return y, str(results.model.endog_name)
    names = getattr(getattr(results.model.data, "response", None), "names", ())
    name = names[column - 1] if len(names) >= column else f"y{column - 1}"
    return y[:, column - 1], f"Yw{column} (whitened {name})"


def plot_sufficient_summary(results: Any, *, direction: int = 1, column: int | None = None,
                            ax: Any = None) -> Figure:
    """The response against the reduced features of direction ``direction``.

    A numeric response: three panels, ``y`` against ``a_dir_k``, against
    ``b_dir_k`` and against their product (the joint estimator finds
    interactions between the blocks, which show best in the product).  For a
    response of ``q > 1`` columns ``column`` (1 to q, default 1) picks the
    column of the whitened response matrix ``Yw`` the estimator used.

    A categorical response (without ``column``): two panels of the reduced
    features coloured by class, with the classes and their counts in the
    legend: ``b_dir_k`` against ``a_dir_k`` (the plane in which the
    estimator looks for the interaction; classes that differ through it fall
    in opposite quadrants), and the product ``a_dir_k x b_dir_k`` per class
    (one jittered row of points per class).  ``column=j`` draws the three
    panels of the whitened indicator column ``Yw_j`` instead.

    Parameters
    ----------
    results : JDRResults
    direction : int
        Which pair of reduced features, ``1 <= direction <= rank``.
    column : int, optional
        A response of ``q > 1`` columns: the column of ``Yw`` drawn.
    ax : matplotlib Axes, optional
        Three axes (two for the class view of a categorical response).

    Returns
    -------
    matplotlib.figure.Figure
    """
    if not 1 <= direction <= results.rank:
        raise ValueError(f"direction must be between 1 and {results.rank}; got {direction}")
    _require_rows(results, "plot_sufficient_summary")
    data = results.model.data
    codes = getattr(data, "class_codes", None)
    if column is None and codes is not None:
        return _class_summary(results, direction, np.asarray(codes),
                              list(data.response.classes), ax)
    y, yname = _response(results, 1 if column is None else column)
    fig, axes = _axes(ax, ncols=3, figsize=(13, 4))
    feats = np.asarray(results.transform(), dtype=float)
    r = results.rank
    fa, fb = feats[:, direction - 1], feats[:, r + direction - 1]
    labels = (f"a_dir{direction}", f"b_dir{direction}", f"a_dir{direction} x b_dir{direction}")
    from matplotlib.ticker import MaxNLocator

    for axis, x, label in zip(axes, (fa, fb, fa * fb), labels, strict=True):
        axis.scatter(x, y, s=8, alpha=0.6)
        axis.xaxis.set_major_locator(MaxNLocator(nbins=5))  # tick labels never touch
        axis.set_xlabel(label)
        axis.set_ylabel(yname)
    fig.suptitle("Sufficient summary plot")
    return fig


def _class_colours(n: int) -> list[Any]:
    """``n`` distinguishable colours: the default cycle up to 10, then tab20, then viridis."""
    import matplotlib as mpl

    if n <= 10:
        return [f"C{j}" for j in range(n)]
    cmap = mpl.colormaps["tab20" if n <= 20 else "viridis"]
    return [cmap(j / max(n - 1, 1)) if n > 20 else cmap(j) for j in range(n)]


def _class_summary(results: Any, direction: int, codes: np.ndarray, classes: list[Any],
                   ax: Any) -> Figure:
    """The class view of :func:`plot_sufficient_summary` (categorical response)."""
    from matplotlib.ticker import MaxNLocator

    own = ax is None
    fig, (plane, strip) = _axes(ax, ncols=2, figsize=(11, 4.6))
    feats = np.asarray(results.transform(), dtype=float)
    r = results.rank
    fa, fb = feats[:, direction - 1], feats[:, r + direction - 1]
    name = str(results.model.endog_name)
    jitter = np.random.default_rng(0).uniform(-0.25, 0.25, size=len(codes))  # fixed: same plot
    alpha = 0.7 if len(codes) <= 2000 else 0.35
    handles = []
    for j, (cls, colour) in enumerate(zip(classes, _class_colours(len(classes)), strict=True)):
        rows = codes == j
        handles.append(plane.scatter(fa[rows], fb[rows], s=10, alpha=alpha, color=colour,
                                     label=f"{name} = {cls} ({int(rows.sum())})"))
        strip.scatter(fa[rows] * fb[rows], j + jitter[rows], s=8, alpha=alpha, color=colour)
    plane.set_xlabel(f"a_dir{direction}")
    plane.set_ylabel(f"b_dir{direction}")
    plane.set_title("Reduced features by class")
    strip.set_yticks(np.arange(len(classes)))
    strip.set_yticklabels([str(c) for c in classes])
    strip.set_ylim(len(classes) - 0.5, -0.5)  # the first class on top, as in the legend
    strip.set_xlabel(f"a_dir{direction} x b_dir{direction}")
    strip.set_ylabel(name)
    strip.set_title("Their product by class")
    for axis in (plane, strip):
        axis.xaxis.set_major_locator(MaxNLocator(nbins=5))  # tick labels never touch
    _legend(fig, strip, handles, own)
    if own:
        fig.suptitle("Sufficient summary plot")
    return fig


def plot_bootstrap_angles(boot: Any, *, ax: Any = None) -> Figure:
    """Histograms of the largest principal angle (degrees) per block.

    The angle between each bootstrap replicate's subspace and the estimate,
    with the upper confidence bound of :meth:`BootstrapResults.max_angle_bound`
    (computed with the results' default interval, which may rescale the
    replicate angles; see the bootstrap theory page).
    """
    own = ax is None
    fig, axes = _axes(ax, ncols=2, figsize=(10, 4.2))
    bounds = boot.max_angle_bound()
    level = round(100 * (1 - boot.alpha))
    for axis, blk in zip(axes, ("a", "b"), strict=True):
        angles = np.asarray(boot.angles_a if blk == "a" else boot.angles_b)[:, -1]
        axis.hist(angles, bins=30, color="C0", alpha=0.8)
        line = axis.axvline(bounds[blk], color="C3", linestyle="--",
                            label=f"{level}% upper bound ({boot.interval})")
        axis.set_xlabel("largest principal angle (degrees)")
        axis.set_ylabel("replicates")
        axis.set_title(f"Block {blk}: bound {bounds[blk]:.1f} deg")
    from matplotlib.patches import Patch

    hist = Patch(color="C0", alpha=0.8, label="replicates' largest angle")
    _legend(fig, axes[-1], [hist, line], own)
    return fig


def _require_rows(results: Any, what: str) -> None:
    """The plot draws the training rows: ask the model's data for them."""
    results.model.data.rows(what)


def plot_response_surface(
    results: Any,
    *,
    direction: int = 1,
    kind: Literal["hexbin", "contour"] = "hexbin",
    gridsize: int = 25,
    column: int = 1,
    ax: Any = None,
):
    """The response over the plane of the reduced features ``(a_dir_k, b_dir_k)``.

    Each hexagon (``kind="hexbin"``) is coloured by the mean response of the
    rows falling in it; ``kind="contour"`` draws filled contours of the
    binned means instead.  The joint estimator finds the directions along
    which ``y`` varies with the *product* of the two blocks' features, so a
    cross-block interaction shows as a saddle (opposite signs in opposite
    quadrants); a main effect of one block alone shows as bands parallel to
    an axis.

    Parameters
    ----------
    results : JDRResults
    direction : int
        Which pair of reduced features, ``1 <= direction <= rank``.
    kind : {"hexbin", "contour"}
    gridsize : int
        Hexagons (or bins) across the x axis, at least 3.
    column : int
        A response of ``q > 1`` columns: which column (1 to q) of the
        whitened response matrix ``Yw`` is averaged.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    if kind not in ("hexbin", "contour"):
        raise ValueError(f'kind must be "hexbin" or "contour"; got {kind!r}')
    direction = check_int(direction, "direction", low=1, high=results.rank)
    gridsize = check_int(gridsize, "gridsize", low=3)
    _require_rows(results, "plot_response_surface")
    y, yname = _response(results, column)
    fig, (axis,) = _axes(ax)
    feats = np.asarray(results.transform(), dtype=float)
    r = results.rank
    fa, fb = feats[:, direction - 1], feats[:, r + direction - 1]
    if kind == "hexbin":
        art = axis.hexbin(fa, fb, C=y, reduce_C_function=np.mean, gridsize=gridsize,
                          cmap="coolwarm", mincnt=1)
    else:
        edges_a = np.linspace(fa.min(), fa.max(), gridsize + 1)
        edges_b = np.linspace(fb.min(), fb.max(), gridsize + 1)
        sums, _, _ = np.histogram2d(fa, fb, bins=(edges_a, edges_b), weights=y)
        counts, _, _ = np.histogram2d(fa, fb, bins=(edges_a, edges_b))
        with np.errstate(invalid="ignore", divide="ignore"):
            means = np.where(counts > 0, sums / counts, np.nan)
        mid_a = (edges_a[:-1] + edges_a[1:]) / 2
        mid_b = (edges_b[:-1] + edges_b[1:]) / 2
        art = axis.contourf(mid_a, mid_b, np.ma.masked_invalid(means.T), levels=12,
                            cmap="coolwarm")
    fig.colorbar(art, ax=axis, label=f"mean {yname}")
    axis.set_xlabel(f"a_dir{direction}")
    axis.set_ylabel(f"b_dir{direction}")
    axis.set_title("Response over the reduced features")
    return fig


def plot_support(support: Any, *, top: int | None = None, ax: Any = None):
    """Support selection: q-values, and stability frequencies when computed.

    One panel per block with a horizontal bar per variable: ``-log10`` of its
    Benjamini-Hochberg q-value with the line of the target FDR (variables
    beyond it are selected by the BH rule); when the selection used
    stability selection, a second row of panels shows each variable's
    selection frequency with the stability threshold.  Selected variables
    are drawn dark, the others light.

    Parameters
    ----------
    support : SupportResults
    top : int, optional
        Show only the ``top`` variables of each block with the smallest
        q-values (selected variables first), in the order of the data; the
        panels' titles say how many are hidden.  By default every variable
        is shown and a figure made here grows with the number of variables
        (about 0.15 inch a variable).
    ax : matplotlib Axes, optional
        Two axes (four with stability frequencies).

    Returns
    -------
    matplotlib.figure.Figure
    """
    from matplotlib.patches import Patch

    table = support.table
    has_freq = "frequency" in table.columns
    top = _check_top(top)
    subs = {}
    for blk in ("a", "b"):
        sub = table.xs(blk, level="block")
        # selected first, then the smallest q-value (ties: the order of the data)
        order = np.lexsort((sub["qvalue"].to_numpy(dtype=float),
                            ~sub["selected"].to_numpy(bool)))
        subs[blk] = (sub.iloc[_top_rows(order, top)], len(sub))
    plt = _plt()
    own = ax is None
    if own:
        nrows = 2 if has_freq else 1
        height = _panel_height(max(len(v[0]) for v in subs.values()), 3.2)
        fig, grid = plt.subplots(nrows, 2, figsize=(10, height * nrows + 0.8), squeeze=False,
                                 layout="constrained")
        axes = list(grid.ravel())
    else:
        axes = list(np.ravel(ax))
        need = 4 if has_freq else 2
        if len(axes) != need:
            raise ValueError(f"ax must hold {need} axes for this plot; got {len(axes)}")
        fig = axes[0].figure
    settings = support.settings or {}
    handles: list[Any] = [Patch(color=SELECTED, label="selected"),
                          Patch(color=NOT_SELECTED, label="not selected")]
    for j, blk in enumerate(("a", "b")):
        sub, total = subs[blk]
        names = [str(v) for v in sub.index]
        pos = np.arange(len(names))
        colors = np.where(sub["selected"].to_numpy(bool), SELECTED, NOT_SELECTED)
        q = np.clip(sub["qvalue"].to_numpy(dtype=float), 1e-300, 1.0)
        axis = axes[j]
        axis.barh(pos, -np.log10(q), color=colors)
        fdr = axis.axvline(-np.log10(support.fdr), color="C3", linestyle="--",
                           label=f"target FDR {support.fdr:g} (q = {support.fdr:g})")
        _label_rows(axis, pos, names)  # the first variable on top, as in plot_loadings
        axis.set_xlabel("-log10 q-value")
        hidden = "selected, then smallest q"
        axis.set_title(_rows_title(f"Block {blk}: coordinate tests", len(names), total, hidden))
        if has_freq:
            axis = axes[2 + j]
            axis.barh(pos, sub["frequency"].to_numpy(dtype=float), color=colors)
            thr = settings.get("stability_threshold")
            if thr is not None:
                stab = axis.axvline(thr, color="C1", linestyle=":",
                                    label=f"stability threshold {thr:g}")
            _label_rows(axis, pos, names)
            axis.set_xlim(0, 1)
            axis.set_xlabel("selection frequency")
            axis.set_title(_rows_title(f"Block {blk}: stability selection", len(names),
                                       total, hidden))
    handles.append(fdr)
    if has_freq and settings.get("stability_threshold") is not None:
        handles.append(stab)
    _legend(fig, axes[1] if not has_freq else axes[3], handles, own)
    return fig
