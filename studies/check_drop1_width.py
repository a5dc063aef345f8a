"""The two-block variable tests at width: the level of ``drop1()``'s
conditional test (the default) and of its marginal test (whole rows, df the
other block's width) for the inactive variables when df is a sizeable share
of the rows.

Question: the K-block marginal test referred to chi2(df) over-rejected
when df was a fifth of m (the estimated covariance); does the two-block
``drop1(test="marginal")``, which still reads chi2(df), do the same?

Design (seeded): two blocks of n columns, Gaussian or standardised t(5)
entries, y = a0 b0 + 0.5 N(0, 1), ``fit(1)``.  Per sample, the share of the
2 (n - 1) inactive variables with p < 0.05; reported: its mean over the
samples +- the MC SE of that mean (the samples are independent, the
variables of one sample are not).  Cases: n = 10 at m = 1000 (df / m =
0.01), n = 40 and 100 at m = 300 (df / m = 0.13 and 0.33).

Run: ``OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_drop1_width.py [R]``
(results in ``studies/results/check_drop1_width.txt``).
"""

from __future__ import annotations

import sys
import time
import warnings

import numpy as np

import jdr_stats as jdr

CASES = [(10, 1000), (40, 300), (100, 300)]


def entries(kind: str, rng: np.random.Generator, shape: tuple[int, int]) -> np.ndarray:
    if kind == "gaussian":
        return rng.standard_normal(shape)
    return rng.standard_t(5, size=shape) / np.sqrt(5.0 / 3.0)


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    warnings.simplefilter("ignore")
    print(__doc__.split("Run:")[0].strip())
    print(f"\nR = {reps} samples per cell; seed = sample index + 1000 * cell")
    print(f"{'design':>9} {'n':>4} {'m':>5} {'df/m':>5} | {'conditional':>15} "
          f"{'marginal':>15}")
    for c, (kind, (n, m)) in enumerate((k, case) for k in ("gaussian", "t5")
                                       for case in CASES):
        t0 = time.time()
        share: dict[str, list[float]] = {"conditional": [], "marginal": []}
        for r in range(reps):
            rng = np.random.default_rng(r + 1000 * c)
            a, b = entries(kind, rng, (m, n)), entries(kind, rng, (m, n))
            y = a[:, 0] * b[:, 0] + 0.5 * rng.standard_normal(m)
            res = jdr.JointDimReduction(y, a, b).fit(1)
            for test, out in share.items():
                p = res.drop1(test=test).table["pvalue"].to_numpy()
                out.append(float(np.mean(np.r_[p[1:n], p[n + 1:]] < 0.05)))
        cells = [f"{np.mean(v):.4f}+-{np.std(v, ddof=1) / np.sqrt(reps):.4f}"
                 for v in share.values()]
        print(f"{kind:>9} {n:>4} {m:>5} {n / m:>5.2f} | {cells[0]:>15} {cells[1]:>15}"
              f"  ({time.time() - t0:.0f} s)", flush=True)


if __name__ == "__main__":
    main()
