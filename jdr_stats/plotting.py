"""Plots of fitted results (optional: ``pip install jdr_stats[plot]``).

Every function draws on a new figure, or on the axes given, and returns the
matplotlib ``Figure``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from ._validation import check_choice

if TYPE_CHECKING:  # matplotlib is optional
    from matplotlib.figure import Figure

__all__ = [
    "plot_scree",
    "plot_loadings",
    "plot_sufficient_summary",
    "plot_bootstrap_angles",
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
        fig, axes = plt.subplots(1, ncols, figsize=figsize, squeeze=False)
        return fig, list(axes[0])
    axes = list(np.atleast_1d(ax))
    if len(axes) != ncols:
        raise ValueError(f"ax must hold {ncols} axes for this plot; got {len(axes)}")
    return axes[0].figure, axes


def plot_scree(results: Any, *, rank_tests: Any = None, ax: Any = None) -> Figure:
    """Singular values of ``X_lin`` with the fitted rank and rank-test p-values.

    Parameters
    ----------
    results : JDRResults
    rank_tests : RankTestResults, optional
        Its p-values are drawn on a second axis (log scale); by default the
        tests already computed on ``results`` (if any) are used.
    ax : matplotlib Axes, optional

    Returns
    -------
    matplotlib.figure.Figure
    """
    fig, (ax,) = _axes(ax)
    s = results.singular_values
    k = np.arange(1, len(s) + 1)
    ax.plot(k, s, "o-", color="C0", label="singular value")
    ax.axvline(results.rank + 0.5, color="0.5", linestyle="--", label=f"fitted rank {results.rank}")
    ax.set_xlabel("k")
    ax.set_ylabel("singular value of X_lin")
    ax.set_title("Scree plot")
    if rank_tests is None and getattr(results, "_rank_tests", None):
        rank_tests = next(iter(results._rank_tests.values()))
    if rank_tests is not None:
        table = rank_tests.table
        pcol = next(c for c in table.columns if "p" in str(c).lower() and "value" in str(c).lower())
        ks = np.asarray(table.index if "k" not in table.columns else table["k"], dtype=float)
        ax2 = ax.twinx()
        # The test of H0: r = k is about singular values k+1, k+2, ...
        ax2.semilogy(ks + 1, np.clip(table[pcol].to_numpy(dtype=float), 1e-300, 1), "s:",
                     color="C3", label="p-value of H0: r = k-1")
        ax2.set_ylabel("rank-test p-value")
        ax2.legend(loc="center right")
    ax.legend(loc="upper right")
    return fig


def plot_loadings(results: Any, *, block: Literal["a", "b", "both"] = "both", ax: Any = None) -> Figure:
    """Bar charts of the directions (unit-length columns) of each block."""
    check_choice(block, "block", ("a", "b", "both"))
    blocks = ["a", "b"] if block == "both" else [block]
    fig, axes = _axes(ax, ncols=len(blocks), figsize=(5 * len(blocks), 4))
    model = results.model
    for axis, blk in zip(axes, blocks):
        dirs = results.estimate.dir_a if blk == "a" else results.estimate.dir_b
        names = model.exog_names_a if blk == "a" else model.exog_names_b
        pos = np.arange(len(names))
        width = 0.8 / dirs.shape[1]
        for j in range(dirs.shape[1]):
            axis.barh(pos + j * width, dirs[:, j], height=width, label=f"dir{j + 1}")
        axis.set_yticks(pos + width * (dirs.shape[1] - 1) / 2)
        axis.set_yticklabels(names)
        axis.axvline(0, color="0.3", linewidth=0.8)
        axis.set_xlabel("loading")
        axis.set_title(f"Directions, block {blk}")
        axis.legend()
    return fig


def plot_sufficient_summary(results: Any, *, direction: int = 1, ax: Any = None) -> Figure:
    """The response against the reduced features of direction ``direction``.

    Three panels: ``y`` against ``a_dir_k``, against ``b_dir_k`` and against
    their product (the joint estimator finds interactions between the
    blocks, which show best in the product).
    """
    if not 1 <= direction <= results.rank:
        raise ValueError(f"direction must be between 1 and {results.rank}; got {direction}")
    fig, axes = _axes(ax, ncols=3, figsize=(13, 4))
    feats = np.asarray(results.transform(), dtype=float)
    r = results.rank
    fa, fb = feats[:, direction - 1], feats[:, r + direction - 1]
    y = results.model.endog
    yname = results.model.endog_name
    for axis, x, label in zip(axes, (fa, fb, fa * fb),
                              (f"a_dir{direction}", f"b_dir{direction}",
                               f"a_dir{direction} x b_dir{direction}")):
        axis.scatter(x, y, s=8, alpha=0.6)
        axis.set_xlabel(label)
        axis.set_ylabel(yname)
    fig.suptitle("Sufficient summary plot")
    return fig


def plot_bootstrap_angles(boot: Any, *, ax: Any = None) -> Figure:
    """Histograms of the largest principal angle (degrees) per block.

    The angle between each bootstrap replicate's subspace and the estimate,
    with the upper confidence bound of :meth:`BootstrapResults.max_angle_bound`
    (computed with the results' default interval, which may rescale the
    replicate angles; see the bootstrap theory page).
    """
    fig, axes = _axes(ax, ncols=2, figsize=(10, 4))
    bounds = boot.max_angle_bound()
    level = round(100 * (1 - boot.alpha))
    for axis, blk in zip(axes, ("a", "b")):
        angles = np.asarray(boot.angles_a if blk == "a" else boot.angles_b)[:, -1]
        axis.hist(angles, bins=30, color="C0", alpha=0.8)
        axis.axvline(bounds[blk], color="C3", linestyle="--",
                     label=f"{level}% bound {bounds[blk]:.2f} deg ({boot.interval})")
        axis.set_xlabel("largest principal angle (degrees)")
        axis.set_ylabel("replicates")
        axis.set_title(f"Bootstrap, block {blk}")
        axis.legend()
    return fig
