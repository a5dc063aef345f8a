"""The statsmodels ``Summary`` subclass behind every results' ``summary()``.

Kept apart from :mod:`jdr_stats.summary` so that ``import jdr_stats`` does not
import statsmodels: :func:`jdr_stats.summary.build_summary` imports this
module on first use, and ``jdr_stats.summary.JDRSummary`` resolves to the
class defined here.
"""

from __future__ import annotations

import os

import pandas as pd
from statsmodels.iolib.summary2 import Summary

from ._latex import render_latex
from ._render import (
    LATEX_BESIDE_WIDTH,
    MAX_WIDTH,
    ShownTable,
    render_html,
    render_text,
    shown_tables,
    side_by_side,
    split_wide,
)

__all__ = ["JDRSummary"]


# -- the Summary --------------------------------------------------------------
class JDRSummary(Summary):
    """A statsmodels ``Summary`` that keeps its tables as numbers.

    Attributes
    ----------
    tables : list of DataFrame
        ``tables[0]`` is the model information (one column ``value``,
        indexed by the labels); the others are the numeric tables, each
        with its caption as the name of its index.
    frames : dict of str to DataFrame
        The numeric tables keyed by caption.
    info : dict
        The model information.
    extra_txt : list of str
        The notes.
    headline : list of str
        What was found, printed under the title.

    Notes
    -----
    The text, HTML and LaTeX renderings format the numbers when they are
    produced (see :mod:`jdr_stats.summary`); the DataFrames are copies of
    the numbers the results computed.
    """

    def __init__(self) -> None:
        super().__init__()
        self.info: dict[str, object] = {}
        self._captions: list[str] = []
        self._names: list[str] = []
        self._float_format = "%.4f"
        self._pvalue_columns: tuple[str, ...] = ()
        self.headline: list[str] = []

    @property
    def frames(self) -> dict[str, pd.DataFrame]:
        """The numeric tables keyed by caption (the header of the label column)."""
        return dict(zip(self._captions, self.tables[1:], strict=False))

    @property
    def named_frames(self) -> dict[str, pd.DataFrame]:
        """The numeric tables keyed by name (what the table is: "singular
        values", "loadings a", ...), as the CSV export and the captions of
        the HTML and LaTeX tables call them."""
        return dict(zip(self._names, self.tables[1:], strict=False))

    def shown(self, *, beside: bool | int = True) -> tuple[list[ShownTable], list[str]]:
        """The tables as printed cells, and every note (the summary's, then
        those the printing adds).  With ``beside`` (the text and the HTML),
        the tables of one side-by-side group as one table where they fit
        100 characters (or ``beside`` characters when it is a number), and
        a table wider than 100 characters cut into tables of its columns."""
        triples = zip(self._names, self._captions, self.tables[1:], strict=False)
        tables, added = shown_tables(triples, self._float_format, self._pvalue_columns)
        if beside is not False:
            tables = split_wide(side_by_side(tables, MAX_WIDTH if beside is True
                                             else int(beside)), MAX_WIDTH)
        return tables, [*self.extra_txt, *added]

    def _display(self, kind: str = "text") -> Summary:
        """A plain ``Summary`` whose tables hold the printed cells (strings),
        each table's label column first; ``kind`` is kept for callers of
        earlier versions and only ``"text"`` cells are produced."""
        out = Summary()
        out.add_title(self.title or "")
        for line in self.headline:
            out.add_text(line)
        out.add_dict({str(k): str(v) for k, v in self.info.items()}, ncols=2)
        tables, notes = self.shown(beside=False)
        for t in tables:
            frame = pd.DataFrame(t.cells, columns=t.columns, index=range(len(t.labels)))
            frame.insert(0, t.caption, t.labels)
            out.add_df(frame, index=False)
        for note in notes:
            out.add_text(note)
        return out

    def as_text(self) -> str:
        """statsmodels' layout: title, model information, the tables under
        rules of one width, the notes wrapped to that width."""
        tables, notes = self.shown()
        return render_text(self.title or "", self.info, tables, notes, self.headline)

    def as_html(self) -> str:
        """An HTML fragment: one ``<section>`` with the title as ``<h2>``,
        the model information, each table with its name as ``<caption>``
        (numbers right-aligned), the notes as paragraphs.
        :meth:`to_html` writes a complete document."""
        tables, notes = self.shown()
        return render_html(self.title or "", self.info, tables, notes, self.headline)

    def as_latex(self, label: str = "", *, floating: bool = True) -> str:
        """One ``table`` float holding the tables and, inside it under them,
        the notes (in a plain article they stay with their tables), in a
        font size at which the widest table fits the text width.  A
        ``\\label`` is written only when ``label`` is given.  With
        ``floating=False``, an unnumbered section that may break across pages
        between its tables (what a report of several summaries uses)."""
        # side by side while a page's width holds them in \\footnotesize
        tables, notes = self.shown(beside=LATEX_BESIDE_WIDTH)
        return render_latex(self.title or "", self.info, tables, notes, label=label,
                            floating=floating, headline=self.headline)

    def tidy(self) -> pd.DataFrame:
        """Every table in one long frame (see :func:`jdr_stats.report._report.tidy`)."""
        from ._report import tidy

        return tidy([self])

    def to_html(self, path: str | os.PathLike[str] | None = None) -> str:
        """A complete HTML document (charset, a small style sheet: borders,
        right-aligned numbers) holding this summary; written to ``path``
        when given."""
        from ._report import html_document, write_text

        return write_text(html_document([self]), path)

    def to_latex(self, path: str | os.PathLike[str] | None = None) -> str:
        """A complete LaTeX document (a plain ``article``) holding this
        summary; written to ``path`` when given."""
        from ._report import latex_document, write_text

        return write_text(latex_document([self]), path)

    def to_csv(self, path: str | os.PathLike[str] | None = None) -> str:
        """Every table as one long CSV table (:meth:`tidy`; columns
        ``summary``, ``table``, ``row``, then the tables' columns), which
        ``pandas.read_csv`` reads in one call; written to ``path`` when given."""
        from ._report import csv_text, write_text

        return write_text(csv_text([self]), path)
