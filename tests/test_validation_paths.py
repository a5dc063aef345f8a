"""One validation on every path, and the conventions of the ecosystem.

The same data and arguments are accepted or refused alike in memory, from
``from_blocks``, through a formula, from CSV and Parquet streams and through
dask; every refusal names the argument (or the command-line flag) and the
value; importing the package does not load the heavy scipy modules.
"""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["scipy.integrate", "scipy.stats"])
def test_import_does_not_load_heavy_scipy_modules(module: str) -> None:
    code = f"import jdr_stats, sys; print({module!r} in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_lazy_scipy_stats_is_loaded_at_first_use() -> None:
    code = (
        "import sys\n"
        "from jdr_stats._lazy import stats\n"
        "print(abs(stats.chi2.sf(3.0, 3) - 0.3916251762710877) < 1e-12,"
        " 'scipy.stats' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["True", "True"]
