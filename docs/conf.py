"""Sphinx configuration of the jdr_stats documentation."""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))


def _policy_defaults_table() -> None:
    """Write the table of defaults from jdr_stats.policy (each number lives
    once, in policy.py; the API page includes this file)."""
    from jdr_stats import policy

    rows = ["| name | value | what it decides |", "|---|---|---|"]
    rows += [f"| `policy.{name}` | `{value!r}` | {what} |"
             for name, value, what in policy.defaults_table()]
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_generated")
    os.makedirs(out, exist_ok=True)
    text = "\n".join(rows) + "\n"
    path = os.path.join(out, "policy_defaults.md")
    if not os.path.exists(path) or open(path).read() != text:
        with open(path, "w") as fh:
            fh.write(text)


def _write_generated(name: str, rows: list[str]) -> None:
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_generated")
    os.makedirs(out, exist_ok=True)
    text = "\n".join(rows) + "\n"
    path = os.path.join(out, name)
    if not os.path.exists(path) or open(path).read() != text:
        with open(path, "w") as fh:
            fh.write(text)


def _rank_methods_table() -> None:
    """Write the table of rank tests from their registry
    (jdr_stats.inference.rank_methods; the rank-tests guide includes it)."""
    from jdr_stats.inference.rank_methods import table_rows

    rows = ["| method | its columns | reference | needs | q > 1 | replicates | theory |",
            "|---|---|---|---|---|---|---|"]
    rows += ["| " + " | ".join(row) + " |" for row in table_rows()]
    _write_generated("rank_methods.md", rows)


def _rank_references_table() -> None:
    """The rank tests' references, assumptions and costs, from their registry."""
    from jdr_stats.inference.rank_methods import reference_rows

    rows = ["| method | reference distribution | assumes | cost |", "|---|---|---|---|"]
    rows += ["| " + " | ".join(row) + " |" for row in reference_rows()]
    _write_generated("rank_references.md", rows)


def _whitenings_tables() -> None:
    """The whitenings' tables from their registry (jdr_stats.whitenings): the
    guide page "Wide blocks" and the theory page "Whitening" include them."""
    from jdr_stats.whitenings import table_rows, target_rows

    rows = ["| `whitening=` | covariance used | when | needs | rank and support tests "
            "whiten with |", "|---|---|---|---|---|"]
    rows += ["| " + " | ".join(row) + " |" for row in table_rows()]
    _write_generated("whitenings.md", rows)
    rows = ["| whitening | `W` | target span (block a) |", "|---|---|---|"]
    rows += ["| " + " | ".join(row) + " |" for row in target_rows()]
    _write_generated("whitening_targets.md", rows)


_policy_defaults_table()
_rank_methods_table()
_rank_references_table()
_whitenings_tables()

project = "jdr_stats"
author = "jdr_stats developers"
copyright = "2026, jdr_stats developers (BSD-3-Clause)"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.mathjax",
    # MathJax 3 bundled in a pip package and copied into _static/mathjax, so
    # that a locally built copy renders the maths offline (no CDN).
    "sphinx-mathjax-offline",
    "numpydoc",
]
myst_enable_extensions = ["dollarmath", "amsmath"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
autodoc_typehints = "none"
html_theme = "alabaster"
html_static_path = ["_static"]
html_css_files = ["custom.css"]
# alabaster's fixed 940 px body cuts command lines and wide tables: the page
# takes the window's width up to a readable maximum (docs/_static/custom.css).
html_theme_options = {"page_width": "auto", "body_max_width": "none",
                      "sidebar_width": "230px"}
suppress_warnings = ["myst.header"]
