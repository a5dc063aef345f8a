"""Speed with many classes (issue 36, item 2 and deliverable 4).

Times, in this process and with the clock around the call only, the
procedures a user of a 10-class response runs, each as a ratio to a plain
``fit(3)`` of the same model measured in the same run (the unit):

* ``fit``: ``model.fit(3)``, the median of ``--repeats`` calls;
* ``auto``: ``model.fit("auto", seed=1)`` (the default rank selection: at
  ``q n1 n2 / m >= 5`` the combined test, robust rows and sign flips);
* ``bootstrap``: ``res.bootstrap(B, seed=1)`` of the fit, per replicate
  (``B = --n-boot``).

Designs (m = 2000 rows, 10 classes, seed 1):

* ``quantile``: ``jdr.simulate.bilinear(m, n1, n2, 3)`` blocks and a
  10-class response cut at the deciles of its ``y`` (little of it is
  visible to the estimator at this width: ``fit("auto")`` stops early);
* ``classes``: Gaussian blocks whose class means differ (shift 3) and
  whose cross-covariance differs by class (``b = nu_c + B_c a + noise``,
  ``B_c`` of rank 3 and norm 1.5): about 16 directions, so the rank
  selection runs about 17 rows of the combined test, as on the handwritten
  digits of the issue.

Run from the repository root (one BLAS thread: the machine is shared)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_classes.py

``--label`` names the library in the output (run the same script with
``PYTHONPATH`` pointing at an older checkout of ``jdr_stats`` to time it).
Output recorded in ``studies/results/bench_classes.txt``.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time
import warnings

import numpy as np

import jdr_stats as jdr


def quantile_design(m: int, n1: int, n2: int, classes: int = 10,
                    seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    sim = jdr.simulate.bilinear(m, n1, n2, 3, seed=seed)
    cuts = np.quantile(sim.y, np.linspace(0, 1, classes + 1)[1:-1])
    return np.searchsorted(cuts, sim.y), np.asarray(sim.a), np.asarray(sim.b)


def class_design(m: int, n1: int, n2: int, classes: int = 10, shift: float = 3.0,
                 coupling: float = 1.5, dirs: int = 3,
                 seed: int = 1) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Class c uniform; ``a = mu_c + N(0, I)``, ``b = nu_c + B_c a + N(0, I)``."""
    rng = np.random.default_rng(seed)
    y = rng.integers(classes, size=m)
    mu = rng.standard_normal((classes, n1)) * shift / np.sqrt(n1)
    nu = rng.standard_normal((classes, n2)) * shift / np.sqrt(n2)
    a = mu[y] + rng.standard_normal((m, n1))
    b = nu[y] + rng.standard_normal((m, n2))
    for c in range(classes):
        left = np.linalg.qr(rng.standard_normal((n1, dirs)))[0]
        right = np.linalg.qr(rng.standard_normal((n2, dirs)))[0]
        b[y == c] += a[y == c] @ (left @ right.T * coupling)
    return y, a, b


DESIGNS = {"quantile": quantile_design, "classes": class_design}


def _seconds(call) -> float:  # type: ignore[no-untyped-def]
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def run(design: str, n1: int, n2: int, m: int, procs: list[str], repeats: int,
        n_boot: int) -> None:
    y, a, b = DESIGNS[design](m, n1, n2)
    model = jdr.JointDimReduction(y, a, b, response="categorical")
    model.fit(3)  # warm-up (imports, caches)
    unit = statistics.median(_seconds(lambda: model.fit(3)) for _ in range(repeats))
    print(f"{design:9s} {n1:4d} {n2:4d} {m:6d} {'fit':10s} {unit:9.3f} {1.0:8.1f}  "
          f"median of {repeats}", flush=True)
    if "auto" in procs:
        box: dict[str, object] = {}
        sec = _seconds(lambda: box.update(res=model.fit("auto", seed=1)))
        print(f"{design:9s} {n1:4d} {n2:4d} {m:6d} {'auto':10s} {sec:9.3f} {sec / unit:8.1f}  "
              f"r={box['res'].rank}", flush=True)  # type: ignore[attr-defined]
    if "bootstrap" in procs:
        res = model.fit(3)
        sec = _seconds(lambda: res.bootstrap(n_boot, seed=1)) / n_boot
        print(f"{design:9s} {n1:4d} {n2:4d} {m:6d} {'boot/rep':10s} {sec:9.3f} "
              f"{sec / unit:8.2f}  B={n_boot}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--label", default="this checkout")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--n-boot", type=int, default=199)
    parser.add_argument("--only", nargs="*", default=None,
                        help="cases as DESIGN:N1:N2:PROC (default: the issue's)")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    cases = args.only or ["quantile:216:240:fit", "quantile:216:240:bootstrap",
                          "quantile:76:64:auto", "classes:76:64:auto",
                          "classes:76:64:bootstrap"]
    print(f"# bench_classes: {args.label}; python {platform.python_version()}, numpy "
          f"{np.__version__}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    print(f"# load average before: {tuple(round(x, 2) for x in os.getloadavg())}")
    print(f"{'design':9s} {'n1':>4s} {'n2':>4s} {'m':>6s} {'procedure':10s} {'seconds':>9s} "
          f"{'x fit':>8s}  note")
    for case in cases:
        design, n1, n2, proc = case.split(":")
        run(design, int(n1), int(n2), 2000, [proc], args.repeats, args.n_boot)
    print(f"# load average after: {tuple(round(x, 2) for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
