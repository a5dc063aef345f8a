"""The layout shared by every plot (:mod:`jdr_stats.plotting`, whose
docstring states the conventions): new figures or the caller's axes, one
legend outside the data, integer ticks on a k axis, panels of one row per
variable, a log axis of p-values with the level, a grid of one panel per
block."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..runtime._validation import check_int

__all__: list[str] = []

#: Colours of selected and unselected variables (named in each legend).
SELECTED, NOT_SELECTED = "C0", "0.75"

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


def _pvalue_axis(axis: Any, ks: np.ndarray, pvalues: np.ndarray, alpha: float,
                 label: str) -> list[Any]:
    """The p-values of the tests at ``ks`` on a log axis twinned with
    ``axis``, with the level: at least a decade below it (major ticks)."""
    twin = axis.twinx()
    pvals = np.clip(pvalues, 1e-300, 1)
    handles = list(twin.semilogy(ks + 1, pvals, "s:", color="C3", label=label))
    low = min(float(np.nanmin(pvals)) if np.isfinite(pvals).any() else 1.0, alpha)
    twin.set_ylim(low / 10 ** 1.2, 1.5)
    handles.append(twin.axhline(alpha, color="C3", linewidth=0.8, linestyle="-.",
                                label=f"level alpha = {alpha:g}"))
    twin.set_ylabel("rank-test p-value")
    return handles


def _grid(ax: Any, n: int, panel: tuple[float, float], *, maxcols: int = 3,
          extra: float = 0.0) -> tuple[Any, list[Any]]:
    """``n`` panels of ``panel`` inches, at most ``maxcols`` a row, on a new
    figure (``extra`` inches more height, for a suptitle or legend), or
    the ``n`` axes given."""
    if ax is not None:
        axes = list(np.ravel(ax))
        if len(axes) != n:
            raise ValueError(f"ax must hold {n} axes for this plot; got {len(axes)}")
        return axes[0].figure, axes
    plt = _plt()
    ncols = min(n, maxcols)
    nrows = -(-n // ncols)
    fig, grid = plt.subplots(nrows, ncols, figsize=(panel[0] * ncols, panel[1] * nrows + extra),
                             squeeze=False, layout="constrained")
    axes = list(grid.ravel())
    for spare in axes[n:]:
        fig.delaxes(spare)
    return fig, axes[:n]

