"""Time of ``import jdr_stats`` in a fresh interpreter, and which heavy modules it loads.

Usage (as recorded in results/bench_import.txt)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_import.py

Runs, ``REPEATS`` times each in a new interpreter from the repository root,
``python -c "import time;t=time.perf_counter();import jdr_stats;print(...)"``
(the median wall time is reported) and once ``python -X importtime -c
"import jdr_stats"`` (its cumulative total for ``jdr_stats``), both with the
environment's bytecode setting and with a bytecode cache
(``PYTHONDONTWRITEBYTECODE`` unset, ``PYTHONPYCACHEPREFIX`` a temporary
folder, warmed by one import first), the case of an installed package.
Then whether ``scipy.stats``, ``scipy.integrate`` and ``formulaic`` are in
``sys.modules`` after the import.  The machine is shared: wall times vary
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
TIMED = ("import time;t=time.perf_counter();c=time.process_time();import jdr_stats;"
         "print(time.perf_counter()-t, time.process_time()-c)")


def _run(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, check=True)


def measure(env: dict[str, str]) -> tuple[float, float, float, float]:
    """Median and least wall seconds of REPEATS imports, their median CPU
    seconds (less sensitive to the other processes of a shared machine)
    and the -X importtime total."""
    runs = [[float(v) for v in _run(["-c", TIMED], env).stdout.split()]
            for _ in range(REPEATS)]
    walls, cpus = [r[0] for r in runs], [r[1] for r in runs]
    last = _run(["-X", "importtime", "-c", "import jdr_stats"], env).stderr.splitlines()[-1]
    return (statistics.median(walls), min(walls), statistics.median(cpus),
            int(last.split("|")[1]) / 1e6)


def main() -> None:
    base = dict(os.environ)
    with tempfile.TemporaryDirectory() as cache:
        cached = {k: v for k, v in base.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached["PYTHONPYCACHEPREFIX"] = cache
        _run(["-c", "import jdr_stats"], cached)  # warm the cache
        rows = [("environment (PYTHONDONTWRITEBYTECODE="
                 f"{base.get('PYTHONDONTWRITEBYTECODE', '')!r})", measure(base)),
                ("bytecode cache", measure(cached))]
    import jdr_stats

    print(f"jdr_stats {jdr_stats.__version__}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} cores (shared)")
    print(f"{'setting':45s} {'median wall s':>14s} {'min wall s':>11s} {'median CPU s':>13s} "
          f"{'importtime s':>13s}")
    for name, (wall, low, cpu, total) in rows:
        print(f"{name:45s} {wall:14.3f} {low:11.3f} {cpu:13.3f} {total:13.3f}")
    probe = ("import jdr_stats, sys; print([m for m in ('scipy.stats', 'scipy.integrate', "
             "'formulaic') if m in sys.modules])")
    print("heavy modules loaded by the import:", _run(["-c", probe], base).stdout.strip())


if __name__ == "__main__":
    main()
