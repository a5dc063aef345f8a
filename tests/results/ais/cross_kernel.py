"""How far the frozen outputs move between OpenBLAS kernels.

Run from the repository root (the package on the path, one BLAS thread)::

    PYTHONPATH=. OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 \\
        python tests/results/ais/cross_kernel.py [KERNEL ...]

Each kernel (default: Haswell Sandybridge SkylakeX Nehalem Prescott) runs
``make_reference.compute()`` in its own process with ``OPENBLAS_CORETYPE``
set, and is named by the kernel threadpoolctl reports (OpenBLAS maps some
names to another kernel, Prescott to Katmai; a kernel already run is
skipped).  Printed: per table, the largest difference
between any two kernels, and between any kernel and ``reference.json``,
in the test's measure (absolute difference over the largest absolute value
of the column), to set against its tolerance of 1e-8.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
KERNELS = ("Haswell", "Sandybridge", "SkylakeX", "Nehalem", "Prescott")

_RUN = """
import importlib.util, json, threadpoolctl
spec = importlib.util.spec_from_file_location("m", {script!r})
m = importlib.util.module_from_spec(spec); spec.loader.exec_module(m)
out = m.compute()
import scipy.linalg
out["kernels"] = sorted({{i["architecture"] for i in threadpoolctl.threadpool_info()
                          if i["internal_api"] == "openblas"}})
print(json.dumps(out))
"""


def run(kernel: str) -> tuple[str, dict]:
    """The outputs under ``OPENBLAS_CORETYPE=kernel``, and the kernel(s) used."""
    env = dict(os.environ, OPENBLAS_CORETYPE=kernel)
    code = _RUN.format(script=str(HERE / "make_reference.py"))
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True)
    got = json.loads(out.stdout)
    return "+".join(got.pop("kernels")), got


def columns(out: dict) -> dict[str, np.ndarray]:
    """Every numeric column of the outputs, by a path name."""
    cols = {"singular_values": out["singular_values"],
            "bootstrap max_angle_bound": [out["bootstrap"]["max_angle_bound"][k]
                                          for k in sorted(out["bootstrap"]["max_angle_bound"])]}
    for name, col in out["rank_tests"]["columns"].items():
        cols[f"rank_tests {name}"] = col
    for name, col in out["bootstrap"]["conf_int"]["columns"].items():
        cols[f"bootstrap {name}"] = col
    for name in ("statistic", "df", "pvalue", "qvalue"):
        cols[f"support {name}"] = out["support"]["columns"][name]
    return {k: np.array([np.nan if v is None else v for v in c], dtype=float)
            for k, c in cols.items()}


def distance(one: dict, two: dict) -> dict[str, float]:
    """Per column: max |one - two| / max |two| (the test's measure)."""
    a, b = columns(one), columns(two)
    out = {}
    for k in b:
        assert np.array_equal(np.isnan(a[k]), np.isnan(b[k])), k
        fin = np.isfinite(b[k])
        if not fin.any():
            out[k] = 0.0
            continue
        scale = np.abs(b[k][fin]).max() or 1.0
        out[k] = float(np.abs(a[k][fin] - b[k][fin]).max() / scale)
    return out


def main(kernels: list[str]) -> None:
    frozen = json.loads((HERE / "reference.json").read_text())
    runs = {}
    for k in kernels:
        used, got = run(k)
        seen = used in runs
        print(f"OPENBLAS_CORETYPE={k}: kernel {used}{' (already run)' if seen else ''}")
        if not seen:
            runs[used] = got
    worst_pair: dict[str, float] = {}
    for o1, o2 in itertools.combinations(runs.values(), 2):
        for col, d in distance(o1, o2).items():
            worst_pair[col] = max(worst_pair.get(col, 0.0), d)
    worst_ref = {}
    for o in runs.values():
        for col, d in distance(o, frozen).items():
            worst_ref[col] = max(worst_ref.get(col, 0.0), d)
    print(f"{'column':32s} {'between kernels':>16s} {'to reference':>13s}")
    for col in worst_ref:
        print(f"{col:32s} {worst_pair.get(col, float('nan')):16.2e} {worst_ref[col]:13.2e}")


if __name__ == "__main__":
    main(sys.argv[1:] or list(KERNELS))
