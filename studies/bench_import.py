"""Time of ``import jdr_stats`` in a fresh interpreter, and which heavy modules it loads.

Usage (as recorded in results/bench_import.txt)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_import.py

Runs, ``REPEATS`` times each in a new interpreter from the repository root,
``python -c "import time;t=time.perf_counter();import jdr_stats;print(...)"``
(the median and least wall times and the median CPU time are reported), for the bare import,
the import with the first access of ``jdr_stats.JointDimReduction`` (the
namespace imports each public name at its first access, so this is what a
session pays before its first fit) and ``import pandas`` alone (a
floor), both with the environment's bytecode setting and with a bytecode cache
(``PYTHONDONTWRITEBYTECODE`` unset, ``PYTHONPYCACHEPREFIX`` a temporary
folder, warmed by one import first), the case of an installed package.
Then which of ``scipy.stats``, ``scipy.integrate``, ``formulaic``, pandas and
``jdr_stats.model`` are in ``sys.modules`` after the bare import.  The machine is shared: wall times vary
between runs by tens of percent; compare runs made together.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REPEATS = 5
# what is timed: the bare import, the import with the first access of the
# model class (what a session pays before its first fit), and pandas alone
STATEMENTS = {
    "import jdr_stats": "import jdr_stats",
    "+ jdr_stats.JointDimReduction": "import jdr_stats;jdr_stats.JointDimReduction",
    "import pandas (a floor)": "import pandas",
}


def _timed(statement: str) -> str:
    return ("import time;t=time.perf_counter();c=time.process_time();" + statement + ";"
            "print(time.perf_counter()-t, time.process_time()-c)")


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=True)


def measure(env: dict[str, str], statement: str) -> tuple[float, float, float]:
    """Median and least wall seconds of REPEATS runs of ``statement``, and
    their median CPU seconds (less sensitive to the other processes of a
    shared machine)."""
    runs = [[float(v) for v in _run(["-c", _timed(statement)], env).stdout.split()]
            for _ in range(REPEATS)]
    walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
    return statistics.median(walls), min(walls), statistics.median(cpus)


def main() -> None:
    base = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        cached = {k: v for k, v in base.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached["PYTHONPYCACHEPREFIX"] = cache
        _run(["-c", "import jdr_stats"], cached)  # warm the cache
        envs = {f"env (PYTHONDONTWRITEBYTECODE={base.get('PYTHONDONTWRITEBYTECODE', '')!r})":
                base, "bytecode cache": cached}
        rows = [(f"{label}: {what}", measure(env, statement))
                for label, env in envs.items() for what, statement in STATEMENTS.items()]
    import jdr_stats

    print(f"jdr_stats {jdr_stats.__version__}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cores (shared)")
    print(f"{'setting: what':62s} {'median wall s':>14s} {'min wall s':>11s} {'median CPU s':>13s}")
    for name, (wall, low, cpu) in rows:
        print(f"{name:62s} {wall:14.3f} {low:11.3f} {cpu:13.3f}")
    probe = ("import jdr_stats, sys; print([m for m in ('scipy.stats', 'scipy.integrate', "
             "'formulaic', 'pandas', 'jdr_stats.model') if m in sys.modules])")
    print("heavy modules loaded by the import:", _run(["-c", probe], base).stdout.strip())


if __name__ == "__main__":
    main()
