"""Warnings attributed to the user's code (layer 0)."""

from __future__ import annotations

import os
import sys
import warnings
from types import FrameType

__all__ = ["warn_at_caller"]

#: The package's folder (this module is in its runtime/ folder): frames
#: inside it are skipped.
_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def warn_at_caller(message: str, category: type[Warning]) -> None:
    """A warning attributed to the caller's first frame outside jdr_stats
    (the same line whether the function or the model's method was called)."""
    frame: FrameType | None = sys._getframe(1)
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE_DIR):
        frame, level = frame.f_back, level + 1
    warnings.warn(message, category, stacklevel=level)
