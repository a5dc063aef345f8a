"""Helpers that build statsmodels ``Summary`` objects for every results class."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
from statsmodels.iolib.summary2 import Summary

__all__ = ["build_summary", "SummaryMixin"]


def build_summary(
    title: str,
    info: Mapping[str, object],
    tables: Iterable[tuple[str, pd.DataFrame]] = (),
    notes: Iterable[str] = (),
    *,
    float_format: str = "%.4f",
) -> Summary:
    """A ``Summary`` with a title, a two-column info block, tables and notes.

    Parameters
    ----------
    title : str
    info : mapping
        Model information shown as ``key: value`` pairs.
    tables : iterable of (str, DataFrame)
        Each table with a short caption, shown as the header of its index
        column (``Summary`` has no per-table titles).
    notes : iterable of str
        Plain sentences appended at the end (null hypotheses, methods).
    float_format : str
        Format of floating point table entries.
    """
    smry = Summary()
    smry.add_title(title)
    smry.add_dict({str(k): str(v) for k, v in info.items()}, ncols=2)
    for caption, df in tables:
        shown = _small_values_visible(df)
        shown.index = shown.index.astype(str)
        shown = shown.reset_index(names=caption)
        smry.add_df(shown, index=False, float_format=float_format)
    for note in notes:
        smry.add_text(note)
    return smry


def _small_values_visible(df: pd.DataFrame) -> pd.DataFrame:
    """Format float columns holding tiny nonzero values with ``%.4g``.

    A fixed ``%.4f`` would print a p-value of 1e-12 as 0.0000; such columns
    are turned into strings with four significant digits instead.
    """
    shown = df.copy()
    for col in shown.columns:
        values = shown[col]
        if not pd.api.types.is_float_dtype(values):
            continue
        finite = values[np.isfinite(values)]
        if ((finite != 0) & (finite.abs() < 1e-3)).any():
            shown[col] = [("nan" if not np.isfinite(v) else f"{v:.4g}") for v in values]
    return shown


class SummaryMixin:
    """``__str__`` and ``_repr_html_`` delegate to ``summary()``."""

    def summary(self) -> Summary:  # pragma: no cover - overridden
        raise NotImplementedError

    def __str__(self) -> str:
        return str(self.summary())

    def _repr_html_(self) -> str:
        return self.summary().as_html()
