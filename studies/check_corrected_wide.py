"""The corrected reference (theory 6d) decomposed at d/m = 44 (issue 19, item 1).

``check_corrected_reference.one`` at n1 = n2 = 300, m = 2000, r = 2
(d = 88804), 60 samples per design, seed [20261126, m, n, r], for the
designs given on the command line (the four where the width study's sizes
are worst or its reference simplest).  Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice -n 5 \\
        python studies/check_corrected_wide.py binary-rare exp-response t5-hetero gaussian
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import check_corrected_reference as ccr


def main() -> None:
    warnings.simplefilter("ignore")
    for name in sys.argv[1:] or ["binary-rare", "exp-response", "t5-hetero", "gaussian"]:
        ccr.one(name, 2000, 300, 2, 60, 20261126)


if __name__ == "__main__":
    main()
