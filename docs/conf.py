"""Sphinx configuration of the jdr_stats documentation."""

import os
import sys

sys.path.insert(0, os.path.abspath(".."))

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
