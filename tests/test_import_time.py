"""``import jdr_stats`` leaves the heavy libraries unimported.

They are imported at first use (a summary, a p-value, a plot); a bare
import must not pay for them, nor for pandas and the package's own modules
(the namespace binds its public names at first access).  Checked by the
modules loaded, not by a clock.
"""

import subprocess
import sys

import pytest

HEAVY = ("pandas", "jdr_stats.model", "jdr_stats.core", "statsmodels", "scipy.stats",
         "scipy.optimize", "scipy.integrate", "scipy.linalg",
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


_NAMES_SCRIPT = (
    "import importlib, sys, jdr_stats as jdr\n"
    "bad = [n for n in jdr._NAMES if n not in jdr.__all__\n"
    "       or getattr(jdr, n) is not getattr(importlib.import_module(\n"
    "           'jdr_stats.' + jdr._NAMES[n]), n)]\n"
    "mods = [n for n in jdr.__all__ if n not in jdr._NAMES and n != '__version__'\n"
    "        and getattr(jdr, n) is not sys.modules['jdr_stats.' + n]]\n"
    "missing = sorted(set(jdr.__all__) - set(dir(jdr)))\n"
    "print(bad, mods, missing, jdr.plotting.__name__)\n"
)


def test_every_public_name_resolves_at_first_access():
    """In a fresh process (nothing imported yet), each name of ``__all__``
    is its defining module's object, each public module is the module, every
    name is listed by ``dir()``, and a public module not in ``__all__``
    (``plotting``) resolves too."""
    out = subprocess.run([sys.executable, "-c", _NAMES_SCRIPT], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["[]", "[]", "[]", "jdr_stats.plotting"]


@pytest.mark.parametrize("name", ["no_such_name", "_private", "__wrapped__"])
def test_unknown_name_is_an_attribute_error(name):
    import jdr_stats as jdr

    with pytest.raises(AttributeError, match=f"has no attribute {name!r}"):
        getattr(jdr, name)


def test_function_named_as_its_subpackage_survives_the_subpackage_import():
    """``jdr.compare`` is the function even when ``jdr_stats.compare`` (the
    subpackage) is imported first, as another module's import does."""
    script = ("import jdr_stats as jdr, jdr_stats.compare._cv\n"
              "print(callable(jdr.compare), jdr.compare.__module__)")
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         check=True)
    assert out.stdout.split() == ["True", "jdr_stats.compare"]
