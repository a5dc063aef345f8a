"""The command line every vignette shares (a package, so that CI's
``for v in vignettes/*.py`` does not run it as a vignette).

A vignette run as ``python vignettes/NAME.py`` finds it on ``sys.path``.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable
from pathlib import Path

#: Default output folder: ``vignettes/output/``.
DEFAULT_OUT = Path(__file__).resolve().parent.parent / "output"


def options(
    add_arguments: Callable[[argparse.ArgumentParser], None] | None = None,
) -> tuple[argparse.Namespace, Path]:
    """Parse ``--full`` (or ``JDR_FULL=1``) and ``--out``, then create the output folder.

    ``add_arguments`` adds a vignette's own options after those two.
    Unknown arguments are ignored (so the vignettes also run inside Jupyter).
    Returns the parsed arguments and the output folder.
    """
    parser = argparse.ArgumentParser()
    parser.add_argument("--full", action="store_true", default=os.environ.get("JDR_FULL") == "1")
    parser.add_argument("--out", default=str(DEFAULT_OUT))
    if add_arguments is not None:
        add_arguments(parser)
    args, _ = parser.parse_known_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    return args, out
