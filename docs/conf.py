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
    "numpydoc",
]
myst_enable_extensions = ["dollarmath", "amsmath"]
source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
exclude_patterns = ["_build"]
numpydoc_show_class_members = False
numpydoc_validation_checks = set()
autodoc_typehints = "none"
html_theme = "alabaster"
suppress_warnings = ["myst.header"]
