"""Speed of the K-block rank selection under the default (joint) estimator:
``fit("auto")`` over a plain ``fit(r)`` of the same model at the chosen
ranks, one BLAS thread.  Cases: K = 3 blocks of 8, K = 4 and K = 5 blocks
of 6, m = 2000, y = x1 x2 + x2 x3 (first columns) + N(0, 1) on correlated
Gaussian blocks (one shared factor, loading 0.6).  Each timing the minimum
of ``--repeats`` calls (``fit("auto")`` once when it takes over 20 s).

Run from the repository root (``PYTHONPATH`` pointing at another checkout
times that one, e.g. the code before the analytic influences)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_kblock_auto.py

Output recorded in ``studies/results/bench_kblock_auto.txt``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import jdr_stats as jdr


def _data(K, n, m, seed=0):
    rng = np.random.default_rng(seed)
    f = rng.normal(size=(m, 1))
    xs = [0.6 * f + 0.8 * rng.normal(size=(m, n)) for _ in range(K)]
    c = [x[:, 0] for x in xs]
    y = c[0] * c[1] + c[1] * c[2] + rng.normal(size=m)
    return y, {f"x{k + 1}": x for k, x in enumerate(xs)}


def _best(call, repeats):
    best = np.inf
    for _ in range(repeats):
        t = time.perf_counter()
        out = call()
        best = min(best, time.perf_counter() - t)
        if best > 20:
            break
    return best, out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--label", default="this checkout")
    args = ap.parse_args()
    print(f"library: {args.label} ({jdr.__file__})")
    for K, n, m in ((3, 8, 2000), (4, 6, 2000), (5, 6, 2000)):
        y, xs = _data(K, n, m)
        model = jdr.JointDimReduction.from_blocks(y, xs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_auto, res = _best(lambda model=model: model.fit("auto"), args.repeats)
            t_fit, _ = _best(lambda model=model, res=res: model.fit(res.rank), args.repeats)
        infl = (res.settings.get("influence") or {}).get("name")
        print(f"K={K} n={n} m={m}: fit('auto') {t_auto:.3f} s, fit(r) {t_fit:.4f} s, "
              f"ratio {t_auto / t_fit:.0f}x; ranks {res.rank}; estimator "
              f"{res.settings['estimator']}, route {res.settings['route']['name']}, "
              f"influence {infl}", flush=True)


if __name__ == "__main__":
    main()
