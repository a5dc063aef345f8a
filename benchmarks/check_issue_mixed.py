"""The issue's mixed Bernoulli(0.3)/exponential design: centred (default) against the
first version's uncentred variance of the robust test, on the same data.

10 x 10, m = 1500, r = 2, H0: r <= 2, 2000 replications.  ``--axis``: the signal on
coordinate axes (``y = a0 b0 + a5 b5 + e``: one Bernoulli and one exponential column
per block), seed ``[20261126, 78]``; otherwise random orthonormal U, V
(``study_width._mixed``), seed ``[20261126, 77]`` (the data of study_width.py part 3).
Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/check_issue_mixed.py [--axis]
"""

from __future__ import annotations

import argparse
import sys
import warnings

import numpy as np

sys.path.insert(0, "benchmarks")
import study_width as sw

import jdr_stats as jdr
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference._robust_core import (
    robust_moments,
    robust_pvalue,
    rotated_first,
)


def mixed_axis(rng, m=1500, n=10):
    def block():
        bern = ((rng.random((m, n // 2)) < 0.3) - 0.3) / np.sqrt(0.21)
        return np.hstack([bern, rng.exponential(1.0, (m, n - n // 2)) - 1.0])

    a, b = block(), block()
    return a[:, 0] * b[:, 0] + a[:, 5] * b[:, 5] + rng.standard_normal(m), a, b


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--axis", action="store_true")
    ap.add_argument("--reps", type=int, default=2000)
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    rng = np.random.default_rng([20261126, 78 if args.axis else 77])
    pc, pu = [], []
    for _ in range(args.reps):
        y, a, b = mixed_axis(rng) if args.axis else sw._mixed(1500, 10, 2, rng)
        res = jdr.JointDimReduction(y, a, b).fit(2)
        w = _whiten(res.model.data, res.moments, rows="rotated")
        first = rotated_first(w.row_chunks())
        for centre, out in ((True, pc), (False, pu)):
            mom = robust_moments(w.row_chunks(), first, 2, centre=centre)
            out.append(robust_pvalue(w.statistic(2), mom)[0])
    for name, ps in (("centred (default)", pc), ("uncentred (first version)", pu)):
        arr = np.array(ps)
        print(name, [(al, round(float(np.mean(arr <= al)), 4)) for al in (0.05, 0.10)])


if __name__ == "__main__":
    main()
