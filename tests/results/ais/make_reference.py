"""Frozen reference outputs of the estimators on the bundled ``ais`` data.

Run from the repository root (the package on the path, one BLAS thread)::

    PYTHONPATH=. OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python tests/results/ais/make_reference.py [--estimator joint|per-block]

It writes ``reference_joint.json`` (the default estimator,
``independent_blocks=False``; the default of this script) or
``reference.json`` (the paper's per-block estimator,
``independent_blocks=True``, the default before the change of default in
docs/changelog.md) next to this
file: the default rank-test table,
the seeded pairs-bootstrap intervals and bounds, and the seeded support
table, with the versions that made them.  ``tests/test_ais_reference.py``
recomputes the same numbers with :func:`compute` and compares them with the
file; NOTE.md says what the tolerances are and why.

Regenerate only after a change of numbers that is intended, and say so in
docs/changelog.md.
"""

from __future__ import annotations

import json
import math
import platform
import subprocess
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

HERE = Path(__file__).resolve().parent
#: The reference file of each estimator (``fit(independent_blocks=...)``).
REFERENCES = {"per-block": HERE / "reference.json", "joint": HERE / "reference_joint.json"}
INDEPENDENT_BLOCKS = {"per-block": True, "joint": False}

#: The fit and the seeded procedures (same names as the calls they feed).
RANK = 2
BOOTSTRAP = {"n_boot": 199, "seed": 20261126}
SUPPORT = {"fdr": 0.1, "seed": 20261127}

#: Table columns stored, in the library's test vocabulary (every test table
#: has statistic, df, pvalue, then qvalue, then method-specific columns).
RANK_COLUMNS = ("statistic", "df", "pvalue", "eff_df", "scale")
SUPPORT_COLUMNS = ("statistic", "df", "pvalue", "qvalue", "selected")


def column(table: pd.DataFrame, name: str) -> pd.Series:
    """The column ``name`` of a test table (every table uses the one vocabulary)."""
    return table[name]


def ais_model() -> Any:
    """The model of the ais vignette: LBM on log blood and log body-build blocks."""
    import jdr_stats as jdr
    from jdr_stats.datasets import load_ais

    ais = load_ais()
    blood = np.log(ais[["RCC", "WCC", "Hc", "Hg", "Ferr"]]).add_prefix("log")
    body = np.log(ais[["Ht", "Wt", "SSF", "Bfat"]]).add_prefix("log")
    return jdr.JointDimReduction(ais["LBM"], blood, body)


def _table(table: pd.DataFrame, columns: tuple[str, ...]) -> dict[str, Any]:
    """A table as JSON types: its index (lists for a MultiIndex) and columns."""
    index = [list(i) if isinstance(i, tuple) else i for i in table.index.tolist()]
    cols = {}
    for name in columns:
        values = column(table, name).tolist()
        cols[name] = [None if isinstance(v, float) and math.isnan(v) else v for v in values]
    return {"index": index, "columns": cols}


def compute(estimator: str = "joint") -> dict[str, Any]:
    """Today's numbers: rank tests, bootstrap and support on the ais model,
    with the ``estimator`` of :data:`INDEPENDENT_BLOCKS`.

    The library's own warnings (the ais blocks are correlated, which the
    assumption diagnostics say) are not part of the reference: silenced here.
    """
    from jdr_stats.exceptions import JDRWarning

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JDRWarning)
        model = ais_model()
        indep = INDEPENDENT_BLOCKS[estimator]
        res = model.fit(RANK, independent_blocks=indep)
        tests = res.rank_tests()
        boot = res.bootstrap(**BOOTSTRAP)
        support = model.select_support(rank=RANK, independent_blocks=indep, **SUPPORT)
    conf = boot.conf_int()
    bound = boot.max_angle_bound()
    return {
        "singular_values": [float(v) for v in res.singular_values],
        "rank_tests": {"method": tests.method, **_table(tests.table, RANK_COLUMNS)},
        "bootstrap": {
            "method": boot.method,
            "interval": boot.interval,
            "alpha": boot.alpha,
            "n_failed": int(boot.n_failed),
            "conf_int": _table(conf, ("lower", "upper")),
            "max_angle_bound": {k: float(v) for k, v in bound.items()},
        },
        "support": {
            "method": support.method,
            "n_resamples": int(support.settings["n_resamples"]),
            **_table(support.table, SUPPORT_COLUMNS),
        },
    }


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=HERE, capture_output=True,
                             text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def provenance(estimator: str = "joint") -> dict[str, Any]:
    import scipy
    import statsmodels

    import jdr_stats

    return {
        "calls": {
            "model": "JointDimReduction(ais.LBM, log(RCC, WCC, Hc, Hg, Ferr), "
                     "log(Ht, Wt, SSF, Bfat)) (vignettes/ais_analysis.py)",
            "fit": f"model.fit({RANK}, independent_blocks={INDEPENDENT_BLOCKS[estimator]})",
            "rank_tests": "res.rank_tests()",
            "bootstrap": f"res.bootstrap(n_boot={BOOTSTRAP['n_boot']}, "
                         f"seed={BOOTSTRAP['seed']})",
            "support": f"model.select_support(rank={RANK}, fdr={SUPPORT['fdr']}, "
                       f"seed={SUPPORT['seed']}, "
                       f"independent_blocks={INDEPENDENT_BLOCKS[estimator]})",
        },
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "scipy": scipy.__version__,
            "pandas": pd.__version__,
            "statsmodels": statsmodels.__version__,
            "jdr_stats": jdr_stats.__version__,
        },
        "commit": _commit(),
    }


def main() -> None:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--estimator", choices=sorted(REFERENCES), default="joint")
    estimator = parser.parse_args().estimator
    out = {"provenance": provenance(estimator), **compute(estimator)}
    path = REFERENCES[estimator]
    path.write_text(json.dumps(out, indent=1, allow_nan=False) + "\n")
    print(f"wrote {path}", file=sys.stderr)


if __name__ == "__main__":
    main()
