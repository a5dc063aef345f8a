"""Reports: several summaries in one file.

The command line (``--format html|latex|csv``, ``--output``,
``--output-dir``) and :meth:`JDRSummary.to_html` / ``to_latex`` /
``to_csv`` write through these functions:

* :func:`html_document`: a complete HTML5 document (UTF-8 charset, a small
  style sheet with borders and right-aligned numbers), one ``<section>``
  with an ``<h2>`` heading per summary;
* :func:`latex_document`: a plain ``article`` holding one unnumbered
  section per summary (no package needed beyond the class);
* :func:`tidy` / :func:`csv_text`: every table of every summary in one long
  table with the columns ``summary``, ``table`` and ``row`` before the
  tables' own columns, which ``pandas.read_csv`` reads in one call;
* :func:`write_csv_dir`: one CSV file per table in a directory, named
  after the summary and the table, its first column the row labels.
"""

from __future__ import annotations

import html
import os
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ..runtime._atomic import write_text as atomic_text
from ._latex import latex_escape

#: A :class:`jdr_stats.summary.JDRSummary` (not imported: summary imports
#: this module).
JDRSummary = Any

__all__ = ["csv_text", "html_document", "latex_document", "slug", "tidy", "write_csv_dir",
           "write_text"]

#: The style sheet of an HTML report: ruled tables, numbers right-aligned.
CSS = """\
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 60em;
       padding: 0 1em; line-height: 1.4; }
section.jdr-summary { margin-bottom: 2.5em; }
h2 { font-size: 1.25em; border-bottom: 1px solid #888; padding-bottom: 0.2em; }
table { border-collapse: collapse; margin: 0.8em 0; }
caption { caption-side: top; text-align: left; font-weight: bold; padding: 0.3em 0;
          white-space: nowrap; }
th, td { border: 1px solid #bbb; padding: 0.2em 0.6em; vertical-align: top; }
thead th { background: #f0f0f0; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.jdr-info th { background: #f7f7f7; font-weight: normal; }
p.jdr-note { font-size: 0.92em; margin: 0.4em 0; max-width: 50em; }
"""


def slug(text: str) -> str:
    """A file-name part: lower-case words joined by ``_``.

    Examples
    --------
    >>> slug("Rank tests (robust)")
    'rank_tests_robust'
    """
    return re.sub(r"[^0-9a-z]+", "_", str(text).lower()).strip("_") or "table"


def write_text(text: str, path: str | os.PathLike[str] | None) -> str:
    """Write ``text`` (UTF-8) to ``path`` when one is given, atomically (a
    failed write leaves a previous file as it was); return it."""
    if path is not None:
        atomic_text(path, text)
    return text


def html_document(summaries: Sequence[JDRSummary], title: str = "jdr_stats report",
                  preamble: str = "") -> str:
    """A complete HTML document: one ``<section>`` per summary.

    ``preamble`` (plain text, escaped) is shown before the first section.
    """
    body = [f"<h1>{html.escape(title)}</h1>"]
    if preamble.strip():
        body += [f"<p>{html.escape(line)}</p>" for line in preamble.strip().splitlines()]
    body += [s.as_html() for s in summaries]
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n"
        f"<title>{html.escape(title)}</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n"
        + "\n".join(body) + "\n</body>\n</html>\n"
    )


def latex_document(summaries: Sequence[JDRSummary], preamble: str = "") -> str:
    """A plain ``article`` with one unnumbered section per summary (page
    breaks fall between tables, so a long summary never overflows a page)."""
    parts = ["\\documentclass{article}", "\\begin{document}"]
    if preamble.strip():
        parts += [latex_escape(line) + "\\par" for line in preamble.strip().splitlines()]
    parts += [s.as_latex(floating=False) for s in summaries]
    parts.append("\\end{document}")
    return "\n".join(parts) + "\n"


def _rows(frame: pd.DataFrame) -> list[str]:
    return [" / ".join(map(str, v)) if isinstance(v, tuple) else str(v) for v in frame.index]


def tidy(summaries: Sequence[JDRSummary]) -> pd.DataFrame:
    """Every table of every summary in one long frame.

    Columns ``summary`` (the summary's title), ``table`` (the table's
    name), ``row`` (the row label), then the union of the tables' columns
    in order of appearance; the model information is the table
    ``model information`` with the column ``value`` (as text).
    """
    parts = []
    for s in summaries:
        info = pd.DataFrame({"value": [str(v) for v in s.info.values()]})
        info.insert(0, "row", [str(k).rstrip(":") for k in s.info])
        info.insert(0, "table", "model information")
        mine = [info]
        for name, frame in s.named_frames.items():
            body = frame.reset_index(drop=True).copy()
            body.columns = [str(c) for c in body.columns]
            body.insert(0, "row", _rows(frame))
            body.insert(0, "table", name)
            mine.append(body)
        for part in mine:
            part.insert(0, "summary", s.title)
        parts += mine
    return pd.concat(parts, ignore_index=True, sort=False) if parts else pd.DataFrame()


def csv_text(summaries: Sequence[JDRSummary]) -> str:
    """:func:`tidy` as CSV text (one header line, no index)."""
    return str(tidy(summaries).to_csv(index=False, lineterminator="\n"))


def write_csv_dir(summaries: Sequence[JDRSummary], directory: str | os.PathLike[str]
                  ) -> list[Path]:
    """One CSV file per table in ``directory`` (created if needed).

    Files are named ``<summary>__<table>.csv`` (:func:`slug` of the title and
    of the table's name); the first column holds the row labels under the
    table's caption.  The model information of each summary is
    ``<summary>__model_information.csv``.  Returns the paths written.
    """
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for s in summaries:
        info = pd.DataFrame({"value": [str(v) for v in s.info.values()]},
                            index=pd.Index([str(k).rstrip(":") for k in s.info], name="item"))
        tables = {"model information": info, **s.named_frames}
        for name, frame in tables.items():
            path = out / f"{slug(s.title or 'summary')}__{slug(name)}.csv"
            if path in written:
                raise ValueError(f"two tables would be written to the same file {path}")
            flat = frame.copy()
            if not isinstance(flat.index, pd.MultiIndex):
                flat.index.name = flat.index.name or "row"
            atomic_text(path, flat.to_csv(lineterminator="\n"))
            written.append(path)
    return written
