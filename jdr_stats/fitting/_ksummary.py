"""Pieces of the K-block fit's summary (:meth:`KBlockResults.summary`):
the header's wrapped lists, a block's table of eigenvalues and the table of
the rank tests that chose the ranks."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

__all__ = ["_eigen_table", "_wrapped", "rank_tests_entry"]


def rank_tests_entry(tables: Mapping[str, pd.DataFrame], names: Sequence[str],
                     full: bool) -> tuple[tuple[str, pd.DataFrame, str], str]:
    """The summary's table of every block's rank tests (rows ``"<block>:
    rank <= r"``) and the words on its reference (``df`` dropped where it is
    NaN throughout, unless ``full``)."""
    tabs = []
    for n in names:
        tab = tables[n].copy()
        tab.index = pd.Index([f"{n}: rank <= {k}" for k in tab.index])
        tabs.append(tab)
    tab, scaled = pd.concat(tabs), ""
    if not full and tab["df"].isna().all():  # the note says why no df
        tab, scaled = tab.drop(columns="df"), ", referred to scale * chi2(eff_df)"
    return ("H0", tab, "rank tests"), scaled


def _wrapped(key: str, items: list[str], width: int = 36) -> dict[str, str]:
    """``{key: text}`` for the summary's header, the comma-separated items
    wrapped onto rows of at most ``width`` characters (the rows after the
    first under blank keys), so that many blocks keep it 100 wide."""
    rows: list[str] = []
    for item in items:
        if rows and len(rows[-1]) + 2 + len(item) <= width:
            rows[-1] += ", " + item
        else:
            rows.append(item)
    rows = [r + ("," if i < len(rows) - 1 else "") for i, r in enumerate(rows)]
    return {(key if i == 0 else " " * i): r for i, r in enumerate(rows)}


def _eigen_table(values: pd.Series, rank: int) -> pd.DataFrame:
    """The leading eigenvalues of a block's combined Gram with their share
    and cumulative share: ``max(10, rank + 3)`` of them at most."""
    v = values.to_numpy(dtype=float)
    total = float(v.sum())
    share = v / total if total > 0 else np.full(v.shape, np.nan)
    top = min(v.size, max(10, rank + 3))
    return pd.DataFrame({"eigenvalue": v[:top], "share": share[:top],
                         "cumulative": np.cumsum(share)[:top]},
                        index=pd.Index(np.arange(1, top + 1), name="k"))
