"""``import jdr_stats`` leaves the heavy libraries unimported.

They are imported at first use (a summary, a p-value, a plot); a bare
import must not pay for them.  Checked by the modules loaded, not by a clock.
"""

import subprocess
import sys

import pytest

HEAVY = ("statsmodels", "scipy.stats", "scipy.optimize", "scipy.integrate", "scipy.linalg",
         "scipy.sparse", "matplotlib", "sklearn", "dask", "joblib", "tqdm")

_SCRIPT = (
    "import sys, jdr_stats\n"
    f"heavy = {HEAVY!r}\n"
    "print('\\n'.join(sorted(m for m in sys.modules\n"
    "                        if any(m == h or m.startswith(h + '.') for h in heavy))))\n"
)


@pytest.fixture(scope="module")
def loaded_after_import() -> list[str]:
    out = subprocess.run([sys.executable, "-c", _SCRIPT], capture_output=True, text=True,
                         check=True)
    return out.stdout.split()


@pytest.mark.parametrize("name", HEAVY)
def test_bare_import_leaves_heavy_module_unloaded(loaded_after_import, name):
    loaded = [m for m in loaded_after_import if m == name or m.startswith(name + ".")]
    assert loaded == [], f"import jdr_stats imported {loaded}"


def test_summary_still_imports_statsmodels_on_use():
    script = ("import sys, numpy as np, jdr_stats as jdr\n"
              "from jdr_stats.summary import JDRSummary, build_summary\n"
              "s = build_summary('T', {'a:': 1})\n"
              "from statsmodels.iolib.summary2 import Summary\n"
              "print(isinstance(s, JDRSummary), isinstance(s, Summary), 'statsmodels' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["True", "True", "True"]
