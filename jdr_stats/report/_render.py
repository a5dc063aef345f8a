"""Rendering of one summary as text, HTML and LaTeX.

A summary (:class:`jdr_stats.summary.JDRSummary`) keeps its tables as
numbers; this module turns them into printed cells, one number format per
column, and lays the cells out:

* **text** in the style of statsmodels' summaries: every rule as wide as the
  widest part of the summary, labels left-aligned, numbers right-aligned,
  at least two spaces between columns and three between the two halves of
  the model information;
* **HTML**: one ``<section>`` with an ``<h2>`` heading, the model
  information as a table of ``<th>``/``<td>`` pairs, each table with its
  name as ``<caption>`` and numeric cells right-aligned (an inline style, so
  that a notebook shows it without a style sheet);
* **LaTeX** (:mod:`jdr_stats.report._latex`): one ``table`` float holding
  the tables and the notes, in a font size chosen from the tables' widths so
  that no line runs past the text width of a plain ``article``.

Cell formats (:func:`format_cells`):

* p-values and q-values (columns in ``pvalue_columns``, rows whose label
  ends in ``, p`` or ``p-value``) by :func:`format_pvalue`;
* degrees of freedom and counts (``df...``, ``n_...``) as integers when
  whole, else with two decimals;
* every other float column in one format: ``float_format`` (``%.4f``), or
  ``%.3e`` throughout when the column's largest absolute entry is below
  ``1e-3`` or at least ``1e7`` (an entry small beside the largest prints as
  ``0.0000``, as statsmodels prints a negligible coefficient);
* booleans as ``yes``/``no``, missing values as ``-``.

A ``df`` column that is missing in every row (a test referred to a scaled
chi-square has no fixed df) is left out of the printed table, and one note
names every such table.

Tables whose frames carry the same ``attrs["beside"]`` (a name, such as
"per-SD loadings") and follow each other are printed side by side as one
table of that name when together they are at most :data:`MAX_WIDTH`
characters wide (:func:`side_by_side`; a table wider than that is cut into
tables of consecutive columns, :func:`split_wide`): the blocks' loadings of a fit of 30
variables a block then take 30 lines (15 when folded), not 30 a block.
Tables with the same row labels share one label column; otherwise each
later table's labels become a text column headed by its caption.  A
frame's ``attrs["beside_tag"]`` (a block's name) prefixes its column names.
"""

from __future__ import annotations

import html
import re
import textwrap
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

__all__ = [
    "PVALUE_COLUMNS",
    "ShownTable",
    "format_cells",
    "format_pvalue",
    "render_html",
    "render_text",
    "shown_tables",
    "side_by_side",
    "split_wide",
]

#: Columns formatted as p-values in every table.
PVALUE_COLUMNS = ("pvalue", "qvalue")
_COUNT = re.compile(r"^(eff\. |eff_)?df\b|^df[(_]|^n_|^count", re.IGNORECASE)
_PVALUE_ROW = re.compile(r"(,\s*p|\bp-value|\bpvalue)\s*$", re.IGNORECASE)
#: Smallest text width of a summary (a classic terminal line less two).
MIN_WIDTH = 78
#: Widest text a summary's own parts aim at: tables are put side by side
#: only up to this width.
MAX_WIDTH = 100
#: Widest side-by-side table in LaTeX (characters): what a plain article's
#: text width holds in ``\footnotesize``.
LATEX_BESIDE_WIDTH = 70


def format_pvalue(p: float) -> str:
    """A p-value as statsmodels and R print it.

    Four decimals down to ``1e-4``, then three significant digits in
    exponent form, and ``<1e-16`` below machine precision (a p-value that
    underflowed to zero is never printed as ``0``).  NaN prints as ``-``.

    Examples
    --------
    >>> [format_pvalue(p) for p in (0.04321, 2.5e-7, 0.0, float("nan"))]
    ['0.0432', '2.50e-07', '<1e-16', '-']
    """
    p = float(p)
    if not np.isfinite(p):
        return "-"
    if p < 1e-16:
        return "<1e-16"
    if p < 1e-4:
        return f"{p:.2e}"
    return f"{p:.4f}"


def _format_counts(arr: np.ndarray) -> list[str]:
    """Whole numbers as integers; a column with fractions (a moment-matched
    df) with two decimals throughout; NaN (no df applies) as ``-``."""
    finite = arr[np.isfinite(arr)]
    whole = bool(np.all(finite == np.round(finite)))
    return ["-" if not np.isfinite(v) else (str(int(v)) if whole else f"{v:.2f}") for v in arr]


def _float_cells(arr: np.ndarray, float_format: str, prow: np.ndarray) -> list[str]:
    """One format for the whole column (p-value rows apart)."""
    plain = np.abs(arr[np.isfinite(arr) & ~prow])
    # fixed decimals unless they would show the largest entry as 0.000x or
    # a long row of digits; an entry small beside the largest prints as 0.0000
    big = float(plain.max()) if plain.size else 0.0
    sci = big != 0 and (big < 1e-3 or big >= 1e7)
    fmt = "%.3e" if sci else float_format
    return ["-" if not np.isfinite(v) else (format_pvalue(v) if p else fmt % v)
            for v, p in zip(arr, prow, strict=True)]


def format_cells(
    name: str,
    values: pd.Series,
    float_format: str = "%.4f",
    pvalue_columns: Iterable[str] = PVALUE_COLUMNS,
    pvalue_rows: np.ndarray | None = None,
) -> list[str]:
    """The printed cells of one table column.

    Parameters
    ----------
    name : str
        The column's name (decides p-value and count formats).
    values : Series
    float_format : str
        Format of an ordinary float column.
    pvalue_columns : iterable of str
        Names of the columns that hold p-values.
    pvalue_rows : array of bool, optional
        Rows that hold a p-value in every float column.

    Examples
    --------
    >>> import pandas as pd
    >>> format_cells("value", pd.Series([-7.468e-05, -0.333, 0.0817]))
    ['-0.0001', '-0.3330', '0.0817']
    >>> format_cells("value", pd.Series([2.1e-05, -7.4e-06]))
    ['2.100e-05', '-7.400e-06']
    >>> format_cells("value", pd.Series([0.638, 2.58]))
    ['0.6380', '2.5800']
    >>> format_cells("ok", pd.Series([True, None, False], dtype=object))
    ['yes', '-', 'no']
    """
    if pd.api.types.is_bool_dtype(values):
        return ["yes" if bool(v) else "no" for v in values]
    flags = [v for v in values if v is not None and not (isinstance(v, float) and np.isnan(v))]
    if flags and all(isinstance(v, (bool, np.bool_)) for v in flags):
        # a yes/no column with rows that do not apply (None): one vocabulary
        return ["-" if v is None or (isinstance(v, float) and np.isnan(v))
                else "yes" if bool(v) else "no" for v in values]
    if pd.api.types.is_integer_dtype(values):
        return [str(int(v)) for v in values]
    if not pd.api.types.is_numeric_dtype(values):
        return ["-" if (v is None or (isinstance(v, float) and np.isnan(v))) else str(v)
                for v in values]
    arr = values.to_numpy(dtype=float)
    if name in set(pvalue_columns):
        return [format_pvalue(v) for v in arr]
    if _COUNT.search(name):
        return _format_counts(arr)
    prow = np.zeros(len(arr), bool) if pvalue_rows is None else np.asarray(pvalue_rows, bool)
    return _float_cells(arr, float_format, prow)


@dataclass
class ShownTable:
    """One table as printed cells."""

    name: str
    caption: str
    columns: list[str]
    labels: list[str]
    cells: list[list[str]]
    numeric: list[bool]
    #: The name of the side-by-side group (``attrs["beside"]``), and the
    #: table's tag within it (``attrs["beside_tag"]``).
    beside: str = ""
    tag: str = ""


def _df_notes(dropped: list[tuple[str, bool]]) -> list[str]:
    """One note per reason for the tables whose ``df`` column was left out
    (``dropped``: each table's name and whether it has ``eff_df`` and ``scale``)."""
    notes = []
    for scaled, why in ((True, "the reference is scale * chi2(eff_df)"),
                        (False, "the statistic has no fixed degrees of freedom (its null "
                                "distribution is given in the notes)")):
        names = [f"'{n}'" for n, s in dropped if s is scaled]
        if names:
            notes.append(f"df not shown in {', '.join(names)}: {why}.")
    return notes


def _width(t: ShownTable) -> int:
    """The natural text width of ``t`` (two spaces between columns)."""
    return sum(_col_widths(t)) + 2 * len(t.columns)


def _merge(run: list[ShownTable], name: str) -> ShownTable:
    """The tables of ``run`` as one table (see :func:`side_by_side`)."""
    first = run[0]
    same = all(t.labels == first.labels for t in run)
    columns, numeric = [], []
    n = max(len(t.labels) for t in run)
    rows: list[list[str]] = [[] for _ in range(n)]
    for j, t in enumerate(run):
        if not same and j > 0:  # its labels as a text column
            columns.append(t.caption)
            numeric.append(False)
            for i in range(n):
                rows[i].append(t.labels[i] if i < len(t.labels) else "")
        columns += [f"{t.tag} {c}".strip() for c in t.columns]
        numeric += t.numeric
        for i in range(n):
            rows[i] += t.cells[i] if i < len(t.cells) else [""] * len(t.columns)
    labels = first.labels + [""] * (n - len(first.labels))
    return ShownTable(name, first.caption, columns, labels, rows, numeric)


#: A side-by-side group whose longest table has more rows than this is
#: folded: each table's rows cut into up to three pieces set side by side.
FOLD_ROWS = 10


def _pieces(t: ShownTable, p: int) -> list[ShownTable]:
    """``t`` cut into ``p`` pieces of consecutive rows (as equal as can be),
    the pieces after the first without a caption."""
    size = -(-len(t.labels) // p)
    # a continued piece's label column has no heading: its variables go on
    return [ShownTable(t.name, t.caption if k == 0 else "", t.columns, t.labels[k:k + size],
                       t.cells[k:k + size], t.numeric, t.beside, t.tag)
            for k in range(0, len(t.labels), size)]


def split_wide(tables: list[ShownTable], width: int = MAX_WIDTH) -> list[ShownTable]:
    """Each table wider than ``width`` characters cut into tables of
    consecutive columns, each with the label column and at most ``width``
    wide (as pandas prints a wide frame), named "(continued)" after the
    first."""
    out: list[ShownTable] = []
    for t in tables:
        if _width(t) <= width or len(t.columns) < 2:
            out.append(t)
            continue
        w = _col_widths(t)
        start, used = 0, w[0]
        for j in range(len(t.columns)):
            if used + w[j + 1] + 2 > width and j > start:
                out.append(_columns(t, start, j, bool(start)))
                start, used = j, w[0]
            used += w[j + 1] + 2
        out.append(_columns(t, start, len(t.columns), bool(start)))
    return out


def _columns(t: ShownTable, start: int, stop: int, continued: bool) -> ShownTable:
    return ShownTable(t.name + (" (continued)" if continued else ""), t.caption,
                      t.columns[start:stop], t.labels, [r[start:stop] for r in t.cells],
                      t.numeric[start:stop], t.beside, t.tag)


def side_by_side(tables: list[ShownTable], width: int = MAX_WIDTH) -> list[ShownTable]:
    """Runs of tables of one ``beside`` group printed as one table where
    together they are at most ``width`` characters wide; a run whose
    longest table has more than :data:`FOLD_ROWS` rows is folded too (each
    table's rows in two or three pieces side by side) when that still fits,
    so that 30 variables a block take 10 or 15 lines."""
    out: list[ShownTable] = []
    i = 0
    while i < len(tables):
        t = tables[i]
        j = i + 1
        while t.beside and j < len(tables) and tables[j].beside == t.beside:
            j += 1
        run = tables[i:j]
        i = j
        if not t.beside:
            out += run
            continue
        longest = max(len(x.labels) for x in run)
        for p in ((3, 2, 1) if longest > FOLD_ROWS else (1,)):
            pieces = [piece for x in run for piece in _pieces(x, p)]
            if len(pieces) == 1:
                break
            merged = _merge(pieces, t.beside)
            if _width(merged) <= width:
                out.append(merged)
                break
        else:
            out += _chunks(run, t.beside, width)
            continue
        if len(pieces) == 1:
            out += run
    return out


def _chunks(run: list[ShownTable], name: str, width: int) -> list[ShownTable]:
    """A side-by-side run too wide for one table, as consecutive groups that
    each fit ``width`` (a group of one table keeps its tag on its columns, so
    every block's table still names its block)."""
    out: list[ShownTable] = []
    group: list[ShownTable] = []
    for t in run:
        if group and _width(_merge([*group, t], name)) > width:
            out.append(_merge(group, name))
            group = []
        group.append(t)
    if group:
        out.append(_merge(group, name))
    return out


def shown_tables(
    frames: Iterable[tuple[str, str, pd.DataFrame]],
    float_format: str = "%.4f",
    pvalue_columns: Iterable[str] = (),
) -> tuple[list[ShownTable], list[str]]:
    """The printed tables and the notes their printing adds.

    ``frames`` holds ``(name, caption, frame)`` triples: the caption heads
    the label column, the name says what the table is.  Tables are not put
    side by side here (:func:`side_by_side` does that).
    """
    out, dropped = [], []
    for name, caption, df in frames:
        pcols = set(PVALUE_COLUMNS) | set(pvalue_columns) | set(df.attrs.get("pvalue_columns", ()))
        labels = [" / ".join(map(str, v)) if isinstance(v, tuple) else str(v) for v in df.index]
        prow = np.array([bool(_PVALUE_ROW.search(lab)) for lab in labels], bool)
        cols, cells, numeric = [], [], []
        for col in df.columns:
            values = df[col]
            if str(col) == "df" and pd.api.types.is_float_dtype(values) and values.isna().all():
                dropped.append((name, {"eff_df", "scale"} <= set(map(str, df.columns))))
                continue
            cols.append(str(col))
            cells.append(format_cells(str(col), values, float_format, pcols, prow))
            numeric.append(pd.api.types.is_numeric_dtype(values)
                           and not pd.api.types.is_bool_dtype(values))
        rows = [[c[i] for c in cells] for i in range(len(labels))]
        out.append(ShownTable(name, caption, cols, labels, rows, numeric,
                              str(df.attrs.get("beside", "")), str(df.attrs.get("beside_tag", ""))))
    return out, _df_notes(dropped)


def _info_pairs(info: Mapping[str, object]) -> list[tuple[str, str]]:
    def text(v: object) -> str:
        if isinstance(v, float | np.floating):
            return f"{float(v):g}"
        return str(v)

    return [(str(k), text(v)) for k, v in info.items()]


# -- text ---------------------------------------------------------------------
def _info_lines(pairs: list[tuple[str, str]]) -> list[str]:
    """The model information in two halves, statsmodels' order (first half
    down the left, second half down the right)."""
    if not pairs:
        return []
    half = (len(pairs) + 1) // 2
    left, right = pairs[:half], pairs[half:]
    kl = max(len(k) for k, _ in left)
    vl = max(len(v) for _, v in left)
    kr = max((len(k) for k, _ in right), default=0)
    lines = []
    for i, (k, v) in enumerate(left):
        line = f"{k:<{kl}} {v:<{vl}}"
        if i < len(right):
            line += "   " + f"{right[i][0]:<{kr}} {right[i][1]}"
        lines.append(line.rstrip())
    return lines


def _col_widths(t: ShownTable) -> list[int]:
    widths = [max([len(t.caption), *(len(s) for s in t.labels)])]
    for j, col in enumerate(t.columns):
        widths.append(max([len(col), *(len(r[j]) for r in t.cells)]))
    return widths


def _table_lines(t: ShownTable, width: int) -> list[str]:
    """Header, rule and rows of one table, columns spread over ``width``
    (gaps of two to ten spaces)."""
    w = _col_widths(t)
    ncol = len(t.columns)
    gap = 2 if ncol == 0 else min(10, max(2, (width - sum(w)) // ncol))

    def line(first: str, rest: list[str], numeric: list[bool]) -> str:
        out = f"{first:<{w[0]}}"
        for j, cell in enumerate(rest):
            out += " " * gap + (f"{cell:>{w[j + 1]}}" if numeric[j] else f"{cell:<{w[j + 1]}}")
        return out.rstrip()

    head = line(t.caption, t.columns, t.numeric)
    body = [line(lab, row, t.numeric) for lab, row in zip(t.labels, t.cells, strict=True)]
    return [head, "-" * width, *body]


def render_text(
    title: str, info: Mapping[str, object], tables: list[ShownTable], notes: list[str],
    headline: Iterable[str] = (),
) -> str:
    """The summary as text; every rule is as wide as the widest line.  The
    ``headline`` (what was found) follows the title, wrapped, above a rule."""
    info_lines = _info_lines(_info_pairs(info))
    natural = [_width(t) for t in tables]
    width = max([MIN_WIDTH, len(title), *(len(s) for s in info_lines), *natural])
    out = [title.center(width).rstrip(), "=" * width]
    head = [line for h in headline for line in textwrap.wrap(h, width)]
    if head:
        out += [*head, "-" * width]
    out += info_lines
    for t in tables:
        out += ["-" * width, *_table_lines(t, width)]
    out.append("=" * width)
    for note in notes:
        out += textwrap.wrap(note, width) or [""]
    return "\n".join(out)


# -- HTML ---------------------------------------------------------------------
_RIGHT = ' style="text-align: right"'
_LEFT = ' style="text-align: left"'


def render_html(
    title: str, info: Mapping[str, object], tables: list[ShownTable], notes: list[str],
    headline: Iterable[str] = (),
) -> str:
    """The summary as one ``<section>``: heading, what was found (``headline``,
    in bold), information, tables, notes."""
    esc = html.escape
    out = ['<section class="jdr-summary">', f"<h2>{esc(title)}</h2>"]
    out += [f'<p class="jdr-headline"><strong>{esc(h)}</strong></p>' for h in headline]
    pairs = _info_pairs(info)
    if pairs:
        half = (len(pairs) + 1) // 2
        out.append('<table class="jdr-info">')
        for i in range(half):
            cells = ""
            for k, v in (pairs[i], *(pairs[i + half:i + half + 1])):
                cells += f"<th{_LEFT}>{esc(k)}</th><td{_LEFT}>{esc(v)}</td>"
            out.append(f"<tr>{cells}</tr>")
        out.append("</table>")
    for t in tables:
        out.append('<table class="jdr-table">')
        out.append(f"<caption>{esc(t.name)}</caption>")
        head = f'<th scope="col"{_LEFT}>{esc(t.caption)}</th>' + "".join(
            f'<th scope="col"{_RIGHT if num else _LEFT}>{esc(c)}</th>'
            for c, num in zip(t.columns, t.numeric, strict=True)
        )
        out.append(f"<thead><tr>{head}</tr></thead>")
        out.append("<tbody>")
        for lab, row in zip(t.labels, t.cells, strict=True):
            cells = "".join(
                f'<td class="{"num" if num else "text"}"{_RIGHT if num else _LEFT}>{esc(c)}</td>'
                for c, num in zip(row, t.numeric, strict=True)
            )
            out.append(f'<tr><th scope="row"{_LEFT}>{esc(lab)}</th>{cells}</tr>')
        out.append("</tbody>")
        out.append("</table>")
    out += [f'<p class="jdr-note">{esc(n)}</p>' for n in notes]
    out.append("</section>")
    return "\n".join(out)
