"""Rendering of one summary as LaTeX: one ``table`` float holding the
tables and the notes, in a font size chosen from the tables' widths so that
no line runs past the text width of a plain ``article``; the notes' maths
and code set as such (:func:`latex_note`).  The cells and the tables shown
are those of :mod:`jdr_stats.report._render`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ._render import ShownTable, _col_widths, _info_pairs

__all__ = ["latex_escape", "latex_note", "render_latex"]

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
                             or re.search(r"(?<![A-Za-z])[A-Za-z]_[A-Za-z]{4,}", token)
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


#: Font sizes tried in turn: name, width of an average character, column
#: separation and baseline skip in points (Computer Modern, 10 pt article).
_SIZES = (("small", 4.9, 5.0, 11.0), ("footnotesize", 4.4, 4.0, 9.5),
          ("scriptsize", 3.8, 3.0, 8.0), ("tiny", 3.0, 2.0, 6.0))
#: A plain article's text width (345 pt) less a margin of error, and the
#: largest estimated height of a float: a page of text is 550 pt high; the
#: estimate is checked against what pdflatex sets on fit, bootstrap and
#: support summaries (study: studies/issue23_full_report.py).
_TEXT_WIDTH = 345.0 * 0.95
_FLOAT_HEIGHT = 530.0


def _info_fits(pairs: list[tuple[str, str]], char: float, sep: float) -> bool:
    """Whether two key/value pairs a row fit the text width (see _latex_info)."""
    half = (len(pairs) + 1) // 2
    halves = (pairs[:half], pairs[half:])
    # each half is two columns: its widest key beside its widest value, in
    # prose letters (narrower than the tables' digits, as _latex_info sets them)
    need = sum(0.87 * char * (max((len(k) for k, _ in h), default=0)
                       + max((len(v) for _, v in h), default=0) + 1) for h in halves)
    return need + 6 * sep <= _TEXT_WIDTH


def _float_height(
    i: int, tables: list[ShownTable], pairs: list[tuple[str, str]], notes: list[str]
) -> float:
    """Estimated height in points of a float in size ``_SIZES[i]`` (notes
    one size smaller) holding the information ``pairs``, ``tables`` and
    ``notes``."""
    _, char, sep, skip = _SIZES[i]
    n_info = (len(pairs) + 1) // 2 if _info_fits(pairs, char, sep) else 1.2 * len(pairs)
    rows = n_info + sum(len(t.labels) + 1 for t in tables)
    height = rows * skip + len(tables) * (skip + 10.0) + 30.0
    j = min(i + 1, len(_SIZES) - 1)
    per_line = _TEXT_WIDTH / (0.87 * _SIZES[j][1])  # prose is narrower than digits
    lines = sum(int(len(n) / per_line) + 1 for n in notes)
    return height + lines * _SIZES[j][3]


#: Smallest font (index in ``_SIZES``) in which a summary is set as one
#: float; a summary too long for a page in it is split into several floats.
_SMALLEST_WHOLE = 2


def _width_size(tables: list[ShownTable]) -> int:
    """Index in ``_SIZES`` of the largest font in which the widest table
    fits the text width."""
    widths = [sum(_col_widths(t)) for t in tables] or [0]
    ncols = [len(t.columns) + 1 for t in tables] or [1]
    for i, (_, char, sep, _) in enumerate(_SIZES):
        if max(w * char + 2 * sep * n for w, n in zip(widths, ncols, strict=True)) <= _TEXT_WIDTH:
            return i
    return len(_SIZES) - 1


def _rows(t: ShownTable, start: int, stop: int | None = None) -> ShownTable:
    """Rows ``start:stop`` of ``t`` (named "(continued)" after the first)."""
    name = t.name if start == 0 or t.name.endswith("(continued)") else t.name + " (continued)"
    return ShownTable(name, t.caption, t.columns, t.labels[start:stop], t.cells[start:stop],
                      t.numeric)


def _page_pieces(tables: list[ShownTable], i: int) -> list[ShownTable]:
    """``tables`` with each table longer than a page (in size ``_SIZES[i]``)
    cut between rows into tabulars of at most a page each, named
    "(continued)" after the first and each with its header: outside a float
    a page break can fall between two tabulars but never inside one, so no
    row runs off the foot of a page."""
    skip = _SIZES[i][3]
    per_page = max(int((_FLOAT_HEIGHT - 20.0) // skip) - 4, 5)
    out: list[ShownTable] = []
    for t in tables:
        out += [_rows(t, start, start + per_page)
                for start in range(0, max(len(t.labels), 1), per_page)]
    return out


def _plan(
    tables: list[ShownTable], pairs: list[tuple[str, str]], notes: list[str], floating: bool
) -> tuple[int, list[list[ShownTable]]]:
    """The font (index in ``_SIZES``) and the tables of each float.

    One float in the largest font, down to ``\\scriptsize``, in which it
    fits a page; else, in ``\\footnotesize``, the tables packed greedily
    into several floats, a table that does not fit the rest of a float cut
    between rows: the first float holds the information, the last the notes
    (or the notes get a float of their own).
    """
    i_w = _width_size(tables)
    if not floating:
        return i_w, [_page_pieces(tables, i_w)]
    for i in range(i_w, max(i_w, _SMALLEST_WHOLE) + 1):
        if _float_height(i, tables, pairs, notes) <= _FLOAT_HEIGHT:
            return i, [tables]
    i = max(i_w, 1)
    skip = _SIZES[i][3]
    chunks: list[list[ShownTable]] = []
    cur: list[ShownTable] = []
    for table in tables:
        rest: ShownTable | None = table
        while rest is not None:
            info = [] if chunks else pairs
            if _float_height(i, [*cur, rest], info, []) <= _FLOAT_HEIGHT:
                cur, rest = [*cur, rest], None
                continue
            # the rows of ``rest`` that still fit this float (at least three, or
            # one on an empty float), the others go on to the next
            room = _FLOAT_HEIGHT - _float_height(i, [*cur, _rows(rest, 0, 0)], info, [])
            n = int(room // skip)
            if n >= 3 or (not cur and n < len(rest.labels)):
                n = max(n, 1)
                cur, rest = [*cur, _rows(rest, 0, n)], _rows(rest, n)
            chunks.append(cur)
            cur = []
    chunks.append(cur)
    if _float_height(i, chunks[-1], pairs if len(chunks) == 1 else [], notes) > _FLOAT_HEIGHT:
        chunks.append([])
    return i, chunks


def _latex_info(pairs: list[tuple[str, str]], char: float, sep: float) -> list[str]:
    """Model information: two key/value pairs a row when they fit the text
    width on one line each, else one pair a row with the value in a
    ragged-right paragraph column (a long value wraps instead of running over)."""
    if not pairs:
        return []
    prose = 0.87 * char  # letters are narrower than the digits of the tables
    half = (len(pairs) + 1) // 2
    if _info_fits(pairs, char, sep):
        lines = [r"\begin{tabular}{@{}llll@{}}"]
        for i in range(half):
            row = [pairs[i], *pairs[i + half:i + half + 1]]
            cells = [latex_escape(x) for kv in row for x in kv]
            lines.append(" & ".join(cells + [""] * (4 - len(cells))) + r" \\")
        lines.append(r"\end{tabular}")
        return lines
    key = prose * max(len(k) for k, _ in pairs)
    value = max(_TEXT_WIDTH - key - 2 * sep - 6.0, 60.0) / 345.0
    lines = [f"\\begin{{tabular}}{{@{{}}lp{{{value:.3f}\\linewidth}}@{{}}}}"]
    # \raggedright redefines \\ inside a cell: end each row with \tabularnewline
    lines += [f"{latex_escape(k)} & \\raggedright {latex_escape(v)} \\tabularnewline"
              for k, v in pairs]
    lines.append(r"\end{tabular}")
    return lines


def _latex_table(t: ShownTable, title: str) -> list[str]:
    spec = "l" + "".join("r" if num else "l" for num in t.numeric)
    head = [latex_escape(t.caption), *(latex_escape(c) for c in t.columns)]
    lines = [r"\par\medskip"]
    if t.name not in (title, t.caption):
        lines.append(f"\\textit{{{latex_escape(t.name)}}}\\par\\nopagebreak\\smallskip")
    lines += [f"\\begin{{tabular}}{{{spec}}}", r"\hline", " & ".join(head) + r" \\", r"\hline"]
    for lab, row in zip(t.labels, t.cells, strict=True):
        lines.append(" & ".join([latex_escape(lab), *(latex_escape(c) for c in row)]) + r" \\")
    lines += [r"\hline", r"\end{tabular}"]
    return lines


def render_latex(
    title: str,
    info: Mapping[str, object],
    tables: list[ShownTable],
    notes: list[str],
    label: str = "",
    floating: bool = True,
    headline: Iterable[str] = (),
) -> str:
    """The summary as a ``table`` float (no package needed).

    The title is the float's caption; the font size is the largest in which
    the widest table fits a plain article's text width and the float fits a
    page (estimated from the rows and the notes' length), down to
    ``\\scriptsize``; a longer summary is split into several floats
    ("(continued)").  The notes follow the tables inside the (last) float,
    set ragged-right one size smaller.  With ``floating=False`` the summary
    is an unnumbered section instead (``\\section*``), which may break across
    pages between its tables (a long report); a table longer than a page is
    set there as several tabulars of at most a page each, each with the
    header and named "(continued)" after the first, so no row is lost at
    the foot of a page.
    """
    pairs = _info_pairs(info)
    head = list(headline)
    i, chunks = _plan(tables, pairs, [*head, *notes], floating)
    size, char, sep, _ = _SIZES[i]
    note_size = _SIZES[min(i + 1, len(_SIZES) - 1)][0]
    lines: list[str] = []
    for c, chunk in enumerate(chunks):
        first, last = c == 0, c == len(chunks) - 1
        caption = latex_escape(title) + ("" if first else " (continued)")
        if floating:
            lines += [r"\begin{table}[htbp]", r"\centering", f"\\caption{{{caption}}}"]
        else:
            lines.append(f"\\section*{{{caption}}}")
        if label and first:
            lines.append(f"\\label{{{label}}}")
        lines += [r"{\centering" if not floating else "{", f"\\{size}",
                  f"\\setlength{{\\tabcolsep}}{{{sep:g}pt}}"]
        if first:
            lines += [f"{{\\raggedright\\sloppy\\textbf{{{latex_note(h)}}}\\par}}\\smallskip"
                      for h in head]
            lines += _latex_info(pairs, char, sep)
        for t in chunk:
            lines += _latex_table(t, title)
        lines.append(r"\par}")
        if notes and last:
            lines += [r"\medskip", f"{{\\{note_size}\\raggedright\\sloppy"]
            lines += [latex_note(n) + r"\par" for n in notes]
            lines.append("}")
        if floating:
            lines.append(r"\end{table}")
    return "\n".join(lines) + "\n"
