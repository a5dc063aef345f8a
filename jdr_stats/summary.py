"""Summary tables shared by every results class.

:func:`build_summary` returns a :class:`JDRSummary`, a
``statsmodels.iolib.summary2.Summary`` whose ``tables`` hold the numbers
(DataFrames of floats, integers and booleans) and which formats them only
when it is printed (:mod:`jdr_stats.report._render` lays them out):

* p-values and q-values (the columns named ``pvalue`` and ``qvalue``, and
  those a table declares: ``build_summary(pvalue_columns=...)`` or the
  frame's ``attrs["pvalue_columns"]``, which every
  :class:`~jdr_stats.inference.hypotheses.TestTable` sets) with four
  decimals, ``1.2e-07`` below ``1e-4`` and ``<1e-16`` below machine precision
  (never a bare ``0``),
* degrees of freedom and counts (columns named ``df...``, ``n_...``) as
  integers when they are whole numbers,
* every other column in one format (``%.4f``, or ``%.3e`` throughout when
  the column's largest entry is below ``1e-3`` or at least ``1e7``),
* booleans as ``yes``/``no``, missing values (a df that does not apply) as
  ``-``; a ``df`` column missing in every row is not printed (a note says why);
* tables of one ``attrs["beside"]`` group (the blocks' loadings) side by
  side in the text and HTML where together they fit 100 characters.

The ``headline`` (what was found: the rank and the test that chose it)
follows the title.

``as_text()`` gives statsmodels' layout with rules of one width;
``as_html()`` a ``<section>`` fragment; ``as_latex()`` one ``table`` float
that compiles in a plain ``article`` without overfull lines;
:meth:`JDRSummary.to_html`, :meth:`JDRSummary.to_latex` and
:meth:`JDRSummary.to_csv` write complete files (see :mod:`jdr_stats.report._report`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .report._latex import latex_escape, latex_note
from .report._render import PVALUE_COLUMNS, format_pvalue

if TYPE_CHECKING:  # statsmodels is imported on first use (fast ``import jdr_stats``)
    from statsmodels.iolib.summary2 import Summary

    from .report._jdr_summary import JDRSummary

__all__ = [
    "LOADING_NOTES",
    "SHORT_LOADING_NOTES",
    "SIGNS_NOTE",
    "PVALUE_COLUMNS",
    "JDRSummary",
    "SummaryMixin",
    "build_summary",
    "format_pvalue",
    "latex_escape",
    "latex_note",
]

def __getattr__(name: str) -> Any:
    """``JDRSummary`` is defined in :mod:`jdr_stats.report._jdr_summary`,
    imported here on first access (it subclasses a statsmodels class)."""
    if name == "JDRSummary":
        from .report._jdr_summary import JDRSummary

        return JDRSummary
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: Captions that say what a table's rows are but not what the table is:
#: such a table is named after its summary.
_ROW_CAPTIONS = {"", "k", "variable", "variant", "info"}


#: The JDR summary's note on its loading tables, by ``summary(loadings=...)``
#: (the guide page "Reading the summary" says what they mean).
LOADING_NOTES = {
    "sd": "Blocks a and b: per-SD loadings, largest 1 per column (raw: summary(loadings='raw')).",
    "raw": ("Blocks a and b: raw directions, unit-length columns in the variables' units "
            "(summary() shows per-SD loadings)."),
}

#: The last note of a fit's summary: what is arbitrary, where the rest is.
SIGNS_NOTE = ("Signs and rotations within a subspace are arbitrary. More: guide page "
              "'Reading the summary'.")

#: The short notes' last sentence (``summary(notes="short")``): the loadings
#: in a clause, what is arbitrary, where the rest is.
SHORT_LOADING_NOTES = {
    "sd": ("Shown: per-SD loadings, largest 1 per column (raw: summary(loadings='raw')); signs and "
           "rotations are arbitrary. More: summary(notes='full'), guide page 'Reading the "
           "summary'."),
    "raw": ("Shown: raw directions, unit-length columns (per-SD: summary()); signs and "
            "rotations are arbitrary. More: summary(notes='full'), guide page 'Reading the "
            "summary'."),
}


def build_summary(
    title: str,
    info: Mapping[str, object],
    tables: Iterable[tuple[Any, ...]] = (),
    notes: Iterable[str] = (),
    *,
    float_format: str = "%.4f",
    pvalue_columns: Iterable[str] = (),
    headline: Iterable[str] = (),
) -> JDRSummary:
    """A :class:`JDRSummary` with a title, an info block, tables and notes.

    Parameters
    ----------
    title : str
    info : mapping
        Model information shown as ``key: value`` pairs.
    tables : iterable of (str, DataFrame) or (str, DataFrame, str)
        Each table (numbers) with a short caption, shown as the header of its
        index column, and optionally a name saying what the table is (the
        caption of the HTML and LaTeX table, the ``table`` field of the CSV
        export).  Without a name a table is named by its caption, or by the
        summary's title when the caption only labels rows (``k``,
        ``variable``).
    notes : iterable of str
        Plain sentences appended at the end (null hypotheses, methods);
        formula tokens such as ``X_lin`` are set in maths by ``as_latex``.
    float_format : str
        Format of ordinary floating point entries.
    pvalue_columns : iterable of str
        Columns that hold p-values besides ``pvalue`` and ``qvalue`` (a
        table's ``attrs["pvalue_columns"]`` adds to them): printed with
        :func:`format_pvalue`.  No other column is guessed to be one.
    headline : iterable of str
        What was found (the rank and the test that chose it), printed
        under the title.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"statistic": [12.5], "df": [4.0], "pvalue": [0.0]})
    >>> s = build_summary("Test", {"Method:": "chi2"}, [("k", t)], ["H0: r = 0."])
    >>> s.frames["k"]["pvalue"].iloc[0]
    np.float64(0.0)
    >>> "<1e-16" in s.as_text() and " 4 " in s.as_text()
    True
    """
    from .report._jdr_summary import JDRSummary

    smry = JDRSummary()
    smry.add_title(title)
    smry._float_format = float_format
    smry._pvalue_columns = tuple(str(c) for c in pvalue_columns)
    smry.info = dict(info)
    smry.headline = [str(h) for h in headline]
    smry.tables.append(
        pd.DataFrame({"value": list(smry.info.values())},
                     index=pd.Index([str(k) for k in smry.info], name="info"))
    )
    smry.settings.append({})
    for item in tables:
        caption, df = item[0], item[1]
        name = str(item[2]) if len(item) > 2 else (
            title if caption.strip().lower() in _ROW_CAPTIONS else caption)
        frame = df.copy()
        frame.index.name = caption
        smry.tables.append(frame)
        smry.settings.append({"float_format": float_format})
        smry._captions.append(caption)
        smry._names.append(name)
    for note in notes:
        smry.add_text(note)
    return smry


class SummaryMixin:
    """``__str__`` and ``_repr_html_`` delegate to ``summary()``."""

    def summary(self) -> Summary:  # pragma: no cover - overridden
        raise NotImplementedError

    def __str__(self) -> str:
        return str(self.summary())

    def _repr_html_(self) -> str:
        return self.summary().as_html()


def json_safe(value: Any) -> Any:
    """``value`` as plain JSON types: numpy scalars and arrays become Python
    numbers and lists, NaN and infinities become ``None``, mappings and
    sequences are converted item by item and a Series becomes a dict (a
    DataFrame is refused: the export of results makes records of tables).

    Examples
    --------
    >>> import numpy as np
    >>> json_safe({"x": np.float64(1.5), "y": [np.nan, 2]})
    {'x': 1.5, 'y': [None, 2]}
    """
    if isinstance(value, pd.DataFrame):  # tables go through _export.records
        raise TypeError("json_safe converts scalars, sequences and mappings; a table "
                        "becomes records through the results' to_dict()")
    if isinstance(value, pd.Series):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, dict):
        return {str(k): json_safe(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, np.ndarray)):
        return [json_safe(v) for v in value]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, (float, np.floating)):
        return float(value) if np.isfinite(value) else None
    return value
