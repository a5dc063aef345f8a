"""Plots of results read by block name (:mod:`jdr_stats.plotting` for any
number of blocks): which blocks a ``block=`` argument names, each block's
rank, reduced features and per-SD loadings, and the K-block forms of the
scree, bootstrap and support plots (one panel per block)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ._layout import (
    NOT_SELECTED,
    SELECTED,
    _grid,
    _integer_ticks,
    _label_rows,
    _legend,
    _panel_height,
    _pvalue_axis,
    _rows_title,
    _top_rows,
)

if TYPE_CHECKING:  # matplotlib is optional
    from matplotlib.figure import Figure

__all__: list[str] = []


def _is_kblock(results: Any) -> bool:
    """Whether ``results`` are read by block name (K blocks, per-block ranks,
    main effects) rather than through the two-block ``a``/``b`` view."""
    names = tuple(getattr(results, "block_names", ("a", "b")))
    return (isinstance(getattr(results, "rank", None), Mapping) or len(names) != 2
            or not hasattr(results, "singular_values"))


def _block_names(results: Any) -> list[str]:
    return [str(n) for n in getattr(results, "block_names", ("a", "b"))]


def _block_rank(results: Any, name: str) -> int:
    rank = results.rank
    return int(rank[name]) if isinstance(rank, Mapping) else int(rank)


def _pick_blocks(block: Any, names: Sequence[str], arg: str = "block") -> list[str]:
    """The blocks shown: every block for None, else one name or a list of
    distinct names of ``names`` (a ValueError naming ``arg`` otherwise)."""
    if block is None:
        return list(names)
    given = [block] if isinstance(block, str) else list(np.atleast_1d(np.asarray(block,
                                                                              dtype=object)))
    if (not given or len(set(map(str, given))) != len(given)
            or any(not isinstance(b, str) or b not in names for b in given)):
        raise ValueError(f"{arg} must be a block name of {list(names)}, a list of them or "
                         f"None (every block); got {block!r}")
    return [str(b) for b in given]


def _features(results: Any) -> dict[str, np.ndarray]:
    """Each block's reduced features of the training rows (m x its rank)."""
    feats = np.asarray(results.transform(), dtype=float)
    out, start = {}, 0
    for n in _block_names(results):
        r = _block_rank(results, n)
        out[n] = feats[:, start:start + r]
        start += r
    return out


def _check_direction(results: Any, direction: Any, blocks: Sequence[str]) -> int:
    """``direction`` (1-based) as an int, at most the rank of every block shown
    (a block of rank 0, no evidence of a link: nothing to plot, said so)."""
    zero = [n for n in blocks if _block_rank(results, n) == 0]
    if zero:
        others = [n for n in _block_names(results) if _block_rank(results, n) > 0]
        raise ValueError(f"rank 0 for block(s) {zero} (no evidence of a link, no "
                         "directions): nothing to plot"
                         + (f"; choose blocks among {others}" if others else ""))
    for n in blocks:
        r = _block_rank(results, n)
        if isinstance(direction, bool) or not isinstance(direction, (int, np.integer)) \
                or not 1 <= direction <= r:
            raise ValueError(f"direction must be between 1 and {r} (the rank of block "
                             f"{n!r}); got {direction!r}")
    return int(direction)


def _sd_loadings(results: Any, name: str) -> np.ndarray:
    """Per-SD loadings of block ``name`` of a K-block fit: each direction's
    entry times its variable's (weighted) standard deviation over the
    training rows, each column scaled to largest absolute value 1 (signs
    kept), the two-block ``loadings_a`` at any K."""
    names = _block_names(results)
    data = results.model.data
    data.rows("per-SD loadings")
    x = np.asarray(list(data.blocks.values())[names.index(name)], dtype=float)
    w = data.weights
    w = np.full(x.shape[0], 1.0) if w is None else np.asarray(w, dtype=float)
    mean = w @ x / w.sum()
    sd = np.sqrt(w @ (x - mean) ** 2 / w.sum())
    load = np.asarray(results.directions[name], dtype=float) * sd[:, None]
    top = np.max(np.abs(load), axis=0)
    return load / np.where(top > 0, top, 1.0)


def _scree_kblocks(results: Any, rank_tests: Any, alpha: float | None, ax: Any) -> Figure:
    """:func:`plot_scree` of K-block results: a panel per block."""
    names = _block_names(results)
    own = ax is None
    fig, axes = _grid(ax, len(names), (5.2, 3.9), extra=0.5)
    if rank_tests is None:
        rank_tests = getattr(results, "rank_test_table", None)
    tables = getattr(rank_tests, "tables", None) if rank_tests is not None else None
    if rank_tests is not None and not isinstance(tables, Mapping):
        raise ValueError("rank_tests must be the K-block rank tests of these results "
                         f"(results.rank_tests(), a table per block); got {type(rank_tests)}")
    if alpha is None:
        alpha = float((getattr(results, "settings", None) or {}).get("alpha") or 0.05)
    handles: list[Any] = []
    twin = None
    for axis, n in zip(axes, names, strict=True):
        values = np.asarray(results.eigenvalues[n], dtype=float)
        k = np.arange(1, len(values) + 1)
        r = _block_rank(results, n)
        here = list(axis.plot(k, values, "o-", color="C0", label="eigenvalue"))
        here.append(axis.axvline(r + 0.5, color="0.5", linestyle="--",
                                 label="fitted rank (between r and r + 1)"))
        axis.set_xlabel("k")
        axis.set_ylabel("eigenvalue (combined Gram)")
        axis.set_title(f"Scree plot, block {n} (rank {r})")
        _integer_ticks(axis, k)
        if tables is not None:
            if n not in tables:
                raise ValueError(f"rank_tests has no table of block {n!r}; its blocks are "
                                 f"{list(tables)}")
            table = tables[n]
            if "pvalue" in table:
                # the test of H0: rank <= k is about eigenvalues k+1, k+2, ...
                here += _pvalue_axis(axis, np.asarray(table.index, dtype=float),
                                     table["pvalue"].to_numpy(dtype=float), alpha,
                                     "p-value of H0: rank <= k - 1")
                twin = here[-1].axes
        if len(here) > len(handles):
            handles = here
    _legend(fig, axes[-1], handles, own, twin=twin)
    return fig


def _bootstrap_kblocks(boot: Any, block: Any, ax: Any) -> Figure:
    """:func:`plot_bootstrap_angles`, one panel per block of ``block``."""
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    angles = getattr(boot, "angles", None)
    if not isinstance(angles, Mapping):
        raise ValueError("boot holds no replicate angles (a bootstrap restored without "
                         "them): rerun results.bootstrap()")
    table = boot.table
    shown = _pick_blocks(block, [str(n) for n in table.index])
    own = ax is None
    fig, axes = _grid(ax, len(shown), (4.6, 3.6), extra=0.5)
    level = f"{boot.level:.0%}"
    kind = getattr(boot, "interval", "percentile")
    line = None
    for axis, n in zip(axes, shown, strict=True):
        ang = np.asarray(angles[n], dtype=float)
        ang = ang[:, -1] if ang.ndim == 2 else ang  # the largest principal angle
        axis.hist(ang, bins=30, color="C0", alpha=0.8)
        upper = float(table.loc[n, "upper"])
        line = axis.axvline(upper, color="C3", linestyle="--",
                            label=f"{level} upper bound ({kind})")
        axis.set_xlabel("largest principal angle (degrees)")
        axis.set_ylabel("replicates")
        axis.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts
        axis.set_title(f"Block {n}: bound {upper:.1f} deg")
    hist = Patch(color="C0", alpha=0.8, label="replicates' largest angle")
    _legend(fig, axes[-1], [hist, line], own)
    return fig


def _support_kblocks(results: Any, top: int | None, ax: Any) -> Figure:
    """:func:`plot_support` of a K-block fit: its kept variables per block."""
    from matplotlib.patches import Patch
    from matplotlib.ticker import MaxNLocator

    names = _block_names(results)
    kept = results.support
    panels = []
    for n in names:
        load = np.abs(_sd_loadings(results, n)).max(axis=1)
        rows = [str(v) for v in results.directions[n].index]
        chosen = np.isin(rows, [str(v) for v in kept[n]])
        # kept first, then the largest |loading| (ties: the order of the data)
        keep = _top_rows(np.lexsort((-load, ~chosen)), top)
        panels.append((n, load[keep], [rows[i] for i in keep], chosen[keep], len(rows),
                       int(chosen.sum())))
    own = ax is None
    height = _panel_height(max(len(p[2]) for p in panels), 3.2)
    fig, axes = _grid(ax, len(names), (4.6, height), extra=0.5)
    for axis, (n, load, rows, chosen, total, n_kept) in zip(axes, panels, strict=True):
        pos = np.arange(len(rows))
        axis.barh(pos, load, color=np.where(chosen, SELECTED, NOT_SELECTED))
        _label_rows(axis, pos, rows)  # the first variable on top, as in plot_loadings
        axis.set_xlim(0, 1.05)
        axis.xaxis.set_major_locator(MaxNLocator(nbins=5))
        axis.set_xlabel("largest |loading per SD| (largest = 1)")
        what = ("all kept (dense fit)" if n_kept == total
                else f"{n_kept} of {total} kept")
        axis.set_title(_rows_title(f"Block {n}: {what}", len(rows), total,
                                   "kept, then largest |loading|"))
    handles = [Patch(color=SELECTED, label="selected"),
               Patch(color=NOT_SELECTED, label="not selected")]
    _legend(fig, axes[-1], handles, own)
    return fig


def _check_something(results: Any, what: str) -> None:
    """A ``ValueError`` when every block has rank 0 (no direction to plot)."""
    if all(_block_rank(results, n) == 0 for n in _block_names(results)):
        raise ValueError(f"{what}: rank 0 (the rank tests found no evidence of a link, no "
                         "directions): nothing to plot")


def _with_directions(results: Any, blocks: list[str]) -> list[str]:
    """The default blocks of a plot: those with at least one direction."""
    return [n for n in blocks if _block_rank(results, n) > 0]
