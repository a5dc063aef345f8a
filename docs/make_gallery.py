"""Regenerate the figures of the gallery page (docs/guide/gallery.md).

The figures are drawn by the vignettes themselves: this script runs
``vignettes/ais_analysis.py`` and ``vignettes/real_data.py`` with ``--out`` a
temporary folder and copies the figures the page shows into
``docs/_static/gallery/``.  They are committed (each under 60 kB at the
vignettes' 80-90 dpi) rather than drawn at every docs build, which would run
the vignettes' bootstraps (minutes) inside ``sphinx-build``.

Run from the repository root::

    MPLBACKEND=Agg PYTHONPATH=. python docs/make_gallery.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DEST = ROOT / "docs" / "_static" / "gallery"

#: vignette -> the figures of it the gallery shows
FIGURES = {
    "ais_analysis.py": ["ais_scree.png", "ais_loadings.png", "ais_bootstrap.png",
                        "ais_summary_plot.png"],
    "real_data.py": ["real_concrete_surface.png", "real_concrete_support.png"],
}


def main() -> int:
    env = {**os.environ, "MPLBACKEND": "Agg"}
    DEST.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for vignette, names in FIGURES.items():
            subprocess.run([sys.executable, str(ROOT / "vignettes" / vignette), "--out", tmp],
                           check=True, env=env, stdout=subprocess.DEVNULL)
            for name in names:
                shutil.copyfile(Path(tmp) / name, DEST / name)
                print(DEST / name, (DEST / name).stat().st_size, "bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
