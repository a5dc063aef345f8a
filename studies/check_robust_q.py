"""Size of the default (robust) rank test for a response of q > 1 columns.

H0: r <= 0 (the response independent of the blocks) and H0: r <= 1 (one
direction shared by the q responses), q = 2 Gaussian responses and a
3-class categorical response (q = 2 whitened indicators), t(5) or Gaussian
blocks, n1 = 6, n2 = 5, m = 1000; 500 replications each, seed [20261126, q-design].
Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_robust_q.py \\
        [--reps R] [--seed S] [--only I ...]
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
import pandas as pd

import jdr_stats as jdr


def draw(rng, kind: str, r: int, heavy: bool, m=1000, n1=6, n2=5):
    a = rng.standard_t(5, (m, n1)) / np.sqrt(5 / 3) if heavy else rng.standard_normal((m, n1))
    b = rng.standard_t(5, (m, n2)) / np.sqrt(5 / 3) if heavy else rng.standard_normal((m, n2))
    t = a[:, 0] * b[:, 0] if r else np.zeros(m)
    if kind == "multi":
        y = np.column_stack([t + rng.standard_normal(m), 0.5 * t + rng.standard_normal(m)])
    else:
        y = pd.Categorical(np.digitize(t + rng.standard_normal(m), [-0.5, 0.5]))
    return y, a, b


def main(reps: int = 500, seed: int = 20261126, only: list[int] | None = None) -> None:
    warnings.simplefilter("ignore")
    print(f"{'response':<12} {'blocks':<9} {'H0':>3} {'reps':>5} {'size 5%':>8} {'MC SE':>6}")
    for j, (kind, heavy, r) in enumerate([(k, h, r) for k in ("multi", "categorical")
                                          for h in (False, True) for r in (0, 1)]):
        if only is not None and j not in only:
            continue
        rng = np.random.default_rng([seed, j])
        rej = 0
        for _ in range(reps):
            y, a, b = draw(rng, kind, r, heavy)
            res = jdr.JointDimReduction(y, a, b).fit(1)
            rej += res.rank_tests(max_rank=r).table["pvalue"].iloc[r] <= 0.05
        p = rej / reps
        print(f"{kind:<12} {'t(5)' if heavy else 'gaussian':<9} {r:>3} {reps:>5} {p:>8.3f} "
              f"{np.sqrt(p * (1 - p) / reps):>6.3f}", flush=True)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=500)
    ap.add_argument("--seed", type=int, default=20261126, help="seeds [SEED, setting index]")
    ap.add_argument("--only", type=int, nargs="*", help="setting indices (0-7)")
    args = ap.parse_args()
    main(args.reps, args.seed, args.only)
