"""Summary tables shared by every results class.

:func:`build_summary` returns a :class:`JDRSummary`, a
``statsmodels.iolib.summary2.Summary`` whose ``tables`` hold the numbers
(DataFrames of floats, integers and booleans) and which formats them only
when it is printed:

* p-values and q-values (the columns named ``pvalue`` and ``qvalue``, and
  those a table declares: ``build_summary(pvalue_columns=...)`` or the
  frame's ``attrs["pvalue_columns"]``, which every
  :class:`~jdr_stats.inference.hypotheses.TestTable` sets) with four
  decimals, ``1.2e-07`` below ``1e-4`` and ``<1e-16`` below machine precision
  (never a bare ``0``),
* degrees of freedom and counts (columns named ``df...``, ``n_...``) as
  integers when they are whole numbers,
* booleans as ``yes``/``no``, missing values (a df that does not apply) as
  ``-``.

``as_latex()`` escapes every text cell and note and puts the notes' formula
tokens (``X_lin``, ``s_k^2``) in ``$...$``, so that the output compiles in a
plain ``article``; ``as_html()`` escapes text cells and notes.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.iolib.summary2 import Summary

__all__ = [
    "PVALUE_COLUMNS",
    "JDRSummary",
    "SummaryMixin",
    "build_summary",
    "format_pvalue",
    "latex_escape",
    "latex_note",
]

#: Columns formatted as p-values in every table.
PVALUE_COLUMNS = ("pvalue", "qvalue")
_COUNT = re.compile(r"^(eff\. |eff_)?df\b|^df[(_]|^n_|^count", re.IGNORECASE)


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


def _format_column(
    name: str, values: pd.Series, float_format: str, pvalue_columns: Iterable[str] = PVALUE_COLUMNS
) -> list[str]:
    """The printed cells of one numeric table column (``pvalue_columns``:
    the names of the columns that hold p-values)."""
    if pd.api.types.is_bool_dtype(values):
        return ["yes" if bool(v) else "no" for v in values]
    if pd.api.types.is_integer_dtype(values):
        return [str(int(v)) for v in values]
    if not pd.api.types.is_numeric_dtype(values):
        return ["-" if (v is None or (isinstance(v, float) and np.isnan(v))) else str(v)
                for v in values]
    arr = values.to_numpy(dtype=float)
    if name in pvalue_columns:
        return [format_pvalue(v) for v in arr]
    if _COUNT.search(name):
        return _format_counts(arr)
    finite = arr[np.isfinite(arr)]
    # a fixed %.4f would print 1e-12 as 0.0000: such columns get %.4g
    tiny = bool(((finite != 0) & (np.abs(finite) < 1e-3)).any())
    return ["-" if not np.isfinite(v) else (f"{v:.4g}" if tiny else float_format % v)
            for v in arr]


def _formatted(
    df: pd.DataFrame, caption: str, float_format: str, pvalue_columns: Iterable[str] = ()
) -> pd.DataFrame:
    """The table as strings, its index turned into the first column."""
    pcols = set(PVALUE_COLUMNS) | set(pvalue_columns) | set(df.attrs.get("pvalue_columns", ()))
    out = pd.DataFrame(
        {str(col): _format_column(str(col), df[col], float_format, pcols) for col in df.columns},
        index=range(len(df)),
    )
    out.insert(0, caption, [str(v) for v in df.index])
    return out


# -- LaTeX --------------------------------------------------------------------
_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "<": r"\textless{}",
    ">": r"\textgreater{}",
    "|": r"\textbar{}",
}
# statsmodels' SimpleTable escapes these itself in LaTeX cells
_SIMPLETABLE_ESCAPES = set("#$%&>_|")


def _latex_cell(text: str) -> str:
    return "".join(
        ch if ch in _SIMPLETABLE_ESCAPES else _LATEX_SPECIAL.get(ch, ch) for ch in str(text)
    )


def latex_escape(text: str) -> str:
    """Escape LaTeX's special characters in plain text.

    Examples
    --------
    >>> print(latex_escape("a_1 & 5% {x}"))
    a\\_1 \\& 5\\% \\{x\\}
    """
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


_MATH_CHARS = re.compile(r"^[A-Za-z0-9_^'()\[\]{},*/+=<>.-]+$")
_MATH_WORDS = {
    "sum": r"\sum",
    "perp": r"\perp",
    "Lambda": r"\Lambda",
    "lambda": r"\lambda",
    "alpha": r"\alpha",
    "beta": r"\beta",
    "Sigma": r"\Sigma",
    "sigma": r"\sigma",
    "rho": r"\rho",
    "chi2": r"\chi^2",
}


def _balanced(token: str) -> bool:
    depth = {"()": 0, "[]": 0, "{}": 0}
    for ch in token:
        for pair in depth:
            if ch == pair[0]:
                depth[pair] += 1
            elif ch == pair[1]:
                depth[pair] -= 1
                if depth[pair] < 0:
                    return False
    return all(v == 0 for v in depth.values())


def _as_math(token: str) -> str | None:
    """``token`` in LaTeX maths, or None if it is not a formula token."""
    if "_" not in token and "^" not in token:
        return None
    if not _MATH_CHARS.match(token) or not _balanced(token) or token.startswith("'"):
        return None
    if token[-1] in "_^" or "['" in token:
        return None
    if "^" not in token and (re.search(r"[A-Za-z]{3,}_[A-Za-z]{2,}", token)
                             or re.search(r"[A-Za-z]\.[A-Za-z]", token)):
        return r"\texttt{" + latex_escape(token) + "}"  # a Python name, not maths
    # one sub- and one superscript per atom, else "Double subscript"
    for atom in re.split(r"[^\w{}^]", token):
        if atom.count("_") > 1 or atom.count("^") > 1:
            return None
    body = re.sub(r"([_^])(\w{2,})", r"\1{\2}", token)
    body = re.sub(
        r"(?<![A-Za-z\\])(" + "|".join(_MATH_WORDS) + r")(?![A-Za-z0-9])",
        lambda mt: _MATH_WORDS[mt.group(1)] + " ",
        body,
    )
    return "$" + body.replace(" }", "}").strip() + "$"


def latex_note(text: str) -> str:
    """A note in LaTeX: formula tokens in ``$...$``, the rest escaped.

    A whitespace-separated token holding ``_`` or ``^`` (and only characters
    of a formula) is set in maths, with multi-letter sub- and superscripts
    braced (``X_lin`` becomes ``$X_{lin}$``); everything else is escaped.

    Examples
    --------
    >>> print(latex_note("share = s_k^2 / sum_j s_j^2 of X_lin, 5%."))
    share = $s_k^2$ / $\\sum _j$ $s_j^2$ of $X_{lin}$, 5\\%.
    """
    out = []
    for piece in re.split(r"(\s+)", str(text)):
        if not piece or piece.isspace():
            out.append(piece)
            continue
        core = piece.rstrip(".,;:")
        tail = piece[len(core):]
        math = _as_math(core) if core else None
        out.append(latex_escape(piece) if math is None else math + latex_escape(tail))
    return "".join(out)


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
        self._float_format = "%.4f"
        self._pvalue_columns: tuple[str, ...] = ()

    @property
    def frames(self) -> dict[str, pd.DataFrame]:
        # one caption per table after the info table; extra tables (if any) unnamed
        return dict(zip(self._captions, self.tables[1:], strict=False))

    def _display(self, kind: str) -> Summary:
        """A plain ``Summary`` of formatted strings for one output format."""
        esc: Callable[[str], str]
        if kind == "latex":
            esc = _latex_cell
        elif kind == "html":
            esc = html.escape
        else:
            esc = str
        out = Summary()
        out.add_title(latex_escape(self.title or "") if kind == "latex" else esc(self.title or ""))
        out.add_dict({esc(str(k)): esc(str(v)) for k, v in self.info.items()}, ncols=2)
        for caption, df in zip(self._captions, self.tables[1:], strict=False):
            shown = _formatted(df, caption, self._float_format, self._pvalue_columns)
            shown.columns = [esc(c) for c in shown.columns]
            shown = shown.map(esc)
            out.add_df(shown, index=False)
        for note in self.extra_txt:
            if kind == "latex":
                out.add_text(latex_note(note))
            elif kind == "html":
                out.add_text(html.escape(note))
            else:
                out.add_text(note)
        return out

    def as_text(self) -> str:
        return self._display("text").as_text()

    def as_html(self) -> str:
        """HTML tables; the title is the first table's ``<caption>`` (as in
        statsmodels' own tables), the notes follow as paragraphs."""
        text = self._display("html").as_html()
        if self.title:
            start = text.find("<table")
            if start >= 0:
                end = text.index(">", start) + 1
                caption = f"<caption>{html.escape(self.title)}</caption>"
                text = text[:end] + "\n" + caption + text[end:]
        return text

    def as_latex(self, label: str = "") -> str:
        """One ``table`` float holding the tables and, inside it under them,
        the notes (in a plain article they stay with their tables).  A
        ``\\label`` is written only when ``label`` is given."""
        text = self._display("latex").as_latex(label=label)
        if not label:
            text = text.replace("\\label{}\n", "")
        end = text.rfind("\\end{table}")
        if end >= 0:
            notes = text[end + len("\\end{table}"):].strip()
            if notes.startswith("\\bigskip"):
                notes = notes[len("\\bigskip"):].strip()
            text = text[:end]
            if notes:
                text += "\\par\\smallskip\n{\\footnotesize\n" + notes + "\n}\n"
            text += "\\end{table}\n"
        return text


def build_summary(
    title: str,
    info: Mapping[str, object],
    tables: Iterable[tuple[str, pd.DataFrame]] = (),
    notes: Iterable[str] = (),
    *,
    float_format: str = "%.4f",
    pvalue_columns: Iterable[str] = (),
) -> JDRSummary:
    """A :class:`JDRSummary` with a title, an info block, tables and notes.

    Parameters
    ----------
    title : str
    info : mapping
        Model information shown as ``key: value`` pairs.
    tables : iterable of (str, DataFrame)
        Each table (numbers) with a short caption, shown as the header of its
        index column (``Summary`` has no per-table titles).
    notes : iterable of str
        Plain sentences appended at the end (null hypotheses, methods);
        formula tokens such as ``X_lin`` are set in maths by ``as_latex``.
    float_format : str
        Format of ordinary floating point entries.
    pvalue_columns : iterable of str
        Columns that hold p-values besides ``pvalue`` and ``qvalue`` (a
        table's ``attrs["pvalue_columns"]`` adds to them): printed with
        :func:`format_pvalue`.  No other column is guessed to be one.

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
    smry = JDRSummary()
    smry.add_title(title)
    smry._float_format = float_format
    smry._pvalue_columns = tuple(str(c) for c in pvalue_columns)
    smry.info = dict(info)
    smry.tables.append(
        pd.DataFrame({"value": list(smry.info.values())},
                     index=pd.Index([str(k) for k in smry.info], name="info"))
    )
    smry.settings.append({})
    for caption, df in tables:
        frame = df.copy()
        frame.index.name = caption
        smry.tables.append(frame)
        smry.settings.append({"float_format": float_format})
        smry._captions.append(caption)
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
