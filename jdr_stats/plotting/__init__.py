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
  says how many are hidden;
* results of any number of blocks (``from_blocks``, per-block ranks,
  ``main_effects=True``) are read by block name: one panel per block, each
  titled with its block's name, up to three panels a row; ``block=`` (or
  ``blocks=``) picks the blocks shown.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ..runtime._validation import check_choice, check_int
from ._blocks import (
    _block_names,
    _bootstrap_kblocks,
    _check_direction,
    _check_something,
    _features,
    _is_kblock,
    _pick_blocks,
    _scree_kblocks,
    _sd_loadings,
    _support_kblocks,
    _with_directions,
)
from ._layout import (
    NOT_SELECTED,
    SELECTED,
    _axes,
    _check_top,
    _grid,
    _integer_ticks,
    _label_rows,
    _legend,
    _panel_height,
    _plt,
    _pvalue_axis,
    _rows_title,
    _top_rows,
)

if TYPE_CHECKING:  # matplotlib is optional
    from matplotlib.figure import Figure

__all__ = [
    "plot_scree",
    "plot_loadings",
    "plot_sufficient_summary",
    "plot_bootstrap_angles",
    "plot_response_surface",
    "plot_support",
]


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

    Notes
    -----
    Results of K blocks (or per-block ranks): one panel per block of the
    eigenvalues of its combined Gram (:attr:`eigenvalues`), the block's
    fitted rank, and the p-values of its tests of ``H0: rank <= k``
    (``rank_tests`` a :meth:`rank_tests` result; by default those of a
    ``rank="auto"`` fit); ``ax`` then holds one axes per block.
    """
    if _is_kblock(results):
        return _scree_kblocks(results, rank_tests, alpha, ax)
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
        # The test of H0: r = k is about singular values k+1, k+2, ...
        handles += _pvalue_axis(ax, ks, table["pvalue"].to_numpy(dtype=float), alpha,
                                "p-value of H0: r = k - 1")
        _legend(fig, ax, handles, own, twin=handles[-1].axes)
    else:
        _legend(fig, ax, handles, own)
    return fig


def plot_loadings(
    results: Any,
    *,
    block: str | Sequence[str] | None = None,
    loadings: Literal["sd", "raw"] = "sd",
    top: int | None = None,
    ax: Any = None,
) -> Figure:
    """Bar charts of each block's loadings, one bar per variable and direction.

    Parameters
    ----------
    results : JDRResults or K-block results
    block : str or list of str, optional
        The blocks drawn, one panel each, by name (``"a"``, ``"b"`` for two
        blocks; ``"both"`` is every block of two); every block by default.
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

    check_choice(loadings, "loadings", ("sd", "raw"))
    top = _check_top(top)
    names = _block_names(results)
    _check_something(results, "plot_loadings")
    blocks = _pick_blocks(None if block == "both" and len(names) == 2 else block, names)
    if block in (None, "both"):  # by default the blocks with directions
        blocks = _with_directions(results, blocks)
    _check_direction(results, 1, blocks)  # a block of rank 0 asked for: said so
    model = results.model
    panels = []
    for blk in blocks:
        if _is_kblock(results):
            dirs = (_sd_loadings(results, blk) if loadings == "sd"
                    else np.asarray(results.directions[blk], dtype=float))
        elif loadings == "sd":
            dirs = np.asarray(results.loadings_a if blk == "a" else results.loadings_b,
                              dtype=float)
        else:
            dirs = np.asarray(results.estimate.dir_a if blk == "a" else results.estimate.dir_b,
                              dtype=float)
        names = (list(map(str, results.directions[blk].index)) if _is_kblock(results)
                 else list(model.exog_names_a if blk == "a" else model.exog_names_b))
        # the largest absolute loading first (ties: the order of the data)
        keep = _top_rows(np.argsort(-np.abs(dirs).max(axis=1), kind="stable"), top)
        panels.append((blk, dirs[keep], [names[i] for i in keep], len(names)))
    own = ax is None
    rows = max(len(p[2]) for p in panels)
    if _is_kblock(results):
        fig, axes = _grid(ax, len(blocks), (5, _panel_height(rows, 3.6)), extra=0.4)
    else:
        fig, axes = _axes(ax, ncols=len(blocks),
                          figsize=(5 * len(blocks), _panel_height(rows, 4.4)))
    legend: list[Any] = []
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
        if len(bars) > len(legend):  # per-block ranks: the most directions
            legend = bars
    _legend(fig, axes[-1], legend, own)
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
                            block: str | Sequence[str] | None = None,
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
    block : str or list of str, optional
        The blocks whose reduced feature ``direction`` is drawn, by name:
        one panel per block (titled with its name) and, for two or more
        blocks, a last panel of the product of their features (the
        interaction the pieces see; for K blocks the K-way one).  By
        default every block (for two blocks, the three panels above).
    ax : matplotlib Axes, optional
        Three axes (two for the class view of a categorical response); with
        ``block`` or K blocks, one per panel.

    Returns
    -------
    matplotlib.figure.Figure
    """
    _check_something(results, "plot_sufficient_summary")
    if block is not None or _is_kblock(results):
        return _summary_by_block(results, direction, column, block, ax)
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


def _summary_by_block(results: Any, direction: int, column: int | None, block: Any,
                      ax: Any) -> Figure:
    """:func:`plot_sufficient_summary` of chosen blocks (or K blocks)."""
    from matplotlib.ticker import MaxNLocator

    shown = _pick_blocks(block, _block_names(results))
    if block is None:  # by default the blocks with directions
        shown = _with_directions(results, shown)
    direction = _check_direction(results, direction, shown)
    _require_rows(results, "plot_sufficient_summary")
    feats = _features(results)
    xs = [feats[n][:, direction - 1] for n in shown]
    labels = [f"{n}_dir{direction}" for n in shown]
    titles = [f"Block {n}" for n in shown]
    if len(shown) >= 2:
        xs.append(np.prod(xs, axis=0))
        # long names wrap: a panel's title and label stay within its width
        labels.append(textwrap.fill(" x ".join(labels), 48))
        titles.append(textwrap.fill("Product of blocks " + ", ".join(shown), 40))
    codes = getattr(results.model.data, "class_codes", None)
    if column is None and codes is not None:
        data = results.model.data
        plane = None if len(shown) < 2 else (xs[0], xs[1], labels[0], labels[1],
                                             f"Blocks {shown[0]} and {shown[1]} by class")
        strip = (xs[-1], labels[-1], f"{titles[-1]} by class")
        return _class_summary_of(results, plane, strip, np.asarray(codes),
                                 list(data.response.classes), ax)
    y, yname = _response(results, 1 if column is None else column)
    fig, axes = _grid(ax, len(xs), (4.3, 3.7), extra=0.4, maxcols=4 if len(xs) == 4 else 3)
    for axis, x, label, title in zip(axes, xs, labels, titles, strict=True):
        axis.scatter(x, y, s=8, alpha=0.6)
        axis.xaxis.set_major_locator(MaxNLocator(nbins=5))  # tick labels never touch
        axis.set_xlabel(label, fontsize=8 if len(label) > 30 else None)
        axis.set_ylabel(yname)
        axis.set_title(title)
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
    feats = np.asarray(results.transform(), dtype=float)
    r = results.rank
    fa, fb = feats[:, direction - 1], feats[:, r + direction - 1]
    la, lb = f"a_dir{direction}", f"b_dir{direction}"
    return _class_summary_of(results, (fa, fb, la, lb, "Reduced features by class"),
                             (fa * fb, f"{la} x {lb}", "Their product by class"), codes,
                             classes, ax)


def _class_summary_of(results: Any, plane_xy: tuple[Any, ...] | None,
                      strip_x: tuple[np.ndarray, str, str], codes: np.ndarray,
                      classes: list[Any], ax: Any) -> Figure:
    """The class view: the plane of two features coloured by class (when
    ``plane_xy`` is given) and a strip of ``strip_x`` per class."""
    from matplotlib.ticker import MaxNLocator

    own = ax is None
    if plane_xy is None:
        fig, (strip,) = _axes(ax, ncols=1, figsize=(6, 4.6))
        plane = None
    else:
        fig, (plane, strip) = _axes(ax, ncols=2, figsize=(11, 4.6))
        fa, fb, la, lb, plane_title = plane_xy
    px, plabel, ptitle = strip_x
    name = str(results.model.endog_name)
    jitter = np.random.default_rng(0).uniform(-0.25, 0.25, size=len(codes))  # fixed: same plot
    alpha = 0.7 if len(codes) <= 2000 else 0.35
    handles = []
    for j, (cls, colour) in enumerate(zip(classes, _class_colours(len(classes)), strict=True)):
        rows = codes == j
        label = f"{name} = {cls} ({int(rows.sum())})"
        if plane is not None:
            handles.append(plane.scatter(fa[rows], fb[rows], s=10, alpha=alpha, color=colour,
                                         label=label))
        art = strip.scatter(px[rows], j + jitter[rows], s=8, alpha=alpha, color=colour,
                            label=label)
        if plane is None:
            handles.append(art)
    if plane is not None:
        plane.set_xlabel(la)
        plane.set_ylabel(lb)
        plane.set_title(plane_title)
    strip.set_yticks(np.arange(len(classes)))
    strip.set_yticklabels([str(c) for c in classes])
    strip.set_ylim(len(classes) - 0.5, -0.5)  # the first class on top, as in the legend
    strip.set_xlabel(plabel, fontsize=8 if len(plabel) > 30 else None)
    strip.set_ylabel(name)
    strip.set_title(ptitle)
    for axis in (plane, strip):
        if axis is not None:
            axis.xaxis.set_major_locator(MaxNLocator(nbins=5))  # tick labels never touch
    _legend(fig, strip, handles, own)
    if own:
        fig.suptitle("Sufficient summary plot")
    return fig


def plot_bootstrap_angles(boot: Any, *, block: str | Sequence[str] | None = None,
                          ax: Any = None) -> Figure:
    """Histograms of the largest principal angle (degrees) per block.

    The angle between each bootstrap replicate's subspace and the estimate,
    with the upper confidence bound of :meth:`BootstrapResults.max_angle_bound`
    (computed with the results' default interval, which may rescale the
    replicate angles; see the bootstrap theory page).  ``block``: the
    blocks drawn, keys of ``boot.block_names`` (``"a"``, ``"b"`` for a
    two-block fit, the block names for K blocks); every block by default,
    one panel each with its bound (``boot.table``'s ``upper``); ``ax`` then
    holds one axes per block drawn.
    """
    if block is not None or tuple(boot.block_names) != ("a", "b"):
        return _bootstrap_kblocks(boot, block, ax)
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
    blocks: Sequence[str] | None = None,
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
    blocks : pair of str, optional
        The two blocks whose features ``direction`` span the plane (x, then
        y), by name; by default the first two blocks (``("a", "b")``).
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    if kind not in ("hexbin", "contour"):
        raise ValueError(f'kind must be "hexbin" or "contour"; got {kind!r}')
    _check_something(results, "plot_response_surface")
    names = _block_names(results)
    shown = _with_directions(results, names)  # by default two blocks with directions
    pair = (shown if len(shown) >= 2 else names)[:2] if blocks is None \
        else list(blocks) if not isinstance(blocks, str) else [blocks]
    if len(pair) != 2 or len(set(pair)) != 2 or any(b not in names for b in pair):
        raise ValueError(f"blocks must be two different block names of {names}; "
                         f"got {blocks!r}")
    if _is_kblock(results):
        direction = _check_direction(results, direction, pair)
    else:
        direction = check_int(direction, "direction", low=1, high=results.rank)
    gridsize = check_int(gridsize, "gridsize", low=3)
    _require_rows(results, "plot_response_surface")
    y, yname = _response(results, column)
    fig, (axis,) = _axes(ax)
    feats = _features(results)
    fa, fb = (feats[n][:, direction - 1] for n in pair)
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
    axis.set_xlabel(f"{pair[0]}_dir{direction}")
    axis.set_ylabel(f"{pair[1]}_dir{direction}")
    axis.set_title("Response over the reduced features" if blocks is None
                   and not _is_kblock(results)
                   else f"Response over blocks {pair[0]} and {pair[1]}")
    return fig


def plot_support(support: Any, *, top: int | None = None, ax: Any = None):
    """Support selection: q-values, and stability frequencies when computed.

    One panel per block with a horizontal bar per variable: ``-log10`` of its
    Benjamini-Hochberg q-value with the line of the target FDR (variables
    beyond it are selected by the BH rule); when the selection used
    stability selection, a second row of panels shows each variable's
    selection frequency with the stability threshold.  Selected variables
    are drawn dark, the others light.

    A K-block fit (``support`` the results themselves, read through
    :attr:`support`): one panel per block with a bar per variable, its
    largest absolute per-SD loading over the block's directions (zero
    outside a sparse fit's kept variables), kept variables dark; every
    variable is kept in a dense fit.  A :class:`SupportResults` of more
    than two blocks: one column of panels per block.

    Parameters
    ----------
    support : SupportResults or K-block results
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

    if hasattr(support, "directions") and isinstance(getattr(support, "support", None),
                                                      Mapping):  # a K-block fit
        return _support_kblocks(support, _check_top(top), ax)
    table = support.table
    has_freq = "frequency" in table.columns
    top = _check_top(top)
    subs = {}
    blocks = [str(b) for b in dict.fromkeys(table.index.get_level_values("block"))]
    nb = len(blocks)
    for blk in blocks:
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
        fig, grid = plt.subplots(nrows, nb, figsize=(5 * nb, height * nrows + 0.8),
                                 squeeze=False, layout="constrained")
        axes = list(grid.ravel())
    else:
        axes = list(np.ravel(ax))
        need = 2 * nb if has_freq else nb
        if len(axes) != need:
            raise ValueError(f"ax must hold {need} axes for this plot; got {len(axes)}")
        fig = axes[0].figure
    settings = getattr(support, "settings", None) or {}  # K blocks: none
    handles: list[Any] = [Patch(color=SELECTED, label="selected"),
                          Patch(color=NOT_SELECTED, label="not selected")]
    for j, blk in enumerate(blocks):
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
            axis = axes[nb + j]
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
    _legend(fig, axes[-1], handles, own)
    return fig
