# ---
# jupyter:
#   jupytext:
#     formats: py:percent
# ---

# %% [markdown]
# # Lean body mass of athletes: a two-block analysis
#
# The Australian Institute of Sport data (202 athletes, bundled as
# `jdr_stats.datasets.load_ais()`) has two natural predictor blocks: **blood**
# (red and white cell counts, hematocrit, hemoglobin, ferritin) and **body
# build** (height, weight, skin folds, body fat).  The response is lean body
# mass (LBM).  All predictors are logged, as in the `dr` package's vignette.
# BMI is left out: log BMI = log Wt - 2 log Ht is collinear with the others.
#
# We ask: how many directions of the two blocks jointly drive LBM, how well
# are they determined, which variables carry them, and what do the classical
# single-block methods say?
#
# Run with `python vignettes/ais_analysis.py` (reduced bootstrap and
# permutation sizes; `--full` uses 999 of each).

# %%
from __future__ import annotations

import numpy as np

import jdr_stats as jdr
from jdr_stats.datasets import load_ais

from _common import options  # vignettes/_common: the shared command line

args, OUT = options()
B = 999 if args.full else 199

ais = load_ais()
blood = np.log(ais[["RCC", "WCC", "Hc", "Hg", "Ferr"]]).add_prefix("log")
body = np.log(ais[["Ht", "Wt", "SSF", "Bfat"]]).add_prefix("log")
model = jdr.JointDimReduction(ais["LBM"], blood, body)

# %% [markdown]
# ## 1. How many directions?
#
# The chi-square test assumes Gaussian blocks; the general test estimates
# the covariance of the complement block; the permutation test needs only
# the independence of the complement coordinates.  Each row k tests
# H0: r = k.

# %%
first = model.fit(1)
tests = {}
for method in ("chi2", "general", "permutation"):
    tests[method] = first.rank_tests(method, n_perm=B, seed=1)
    print(tests[method].summary())
    print()
chosen = {k: t.select_rank(0.05) for k, t in tests.items()}
print("selected rank at alpha=0.05:", chosen)
# The permutation test needs the fewest assumptions; the analysis goes on
# with its choice (at least one direction, to have something to describe).
rank = max(1, chosen["permutation"])

# %% [markdown]
# ## 2. The fit at the chosen rank

# %%
res = model.fit(rank)
print(res.summary())

# %% [markdown]
# ## 3. How precisely are the directions determined?

# %%
boot = res.bootstrap(n_boot=B, seed=2)
print(boot.summary())
for block in ("a", "b"):
    print(boot.sentence(block))

# %% [markdown]
# ## 4. Which variables matter?
#
# Coordinate tests for every variable, conditional on the fitted rank, with
# Benjamini-Hochberg control of the false discovery rate at 10%.

# %%
support = model.select_support(rank=rank, fdr=0.1, seed=3)
print(support.summary())

# %% [markdown]
# ## 5. Comparison with SIR, pHd and SAVE

# %%
comparison = jdr.compare(ais["LBM"], blood, body, rank)
print(comparison.summary())
phd = jdr.PHD(ais["LBM"], np.hstack([blood, body])).fit()
print(phd.dimension_tests().summary())

# %% [markdown]
# ## 6. Figures

# %%
import matplotlib  # noqa: E402

matplotlib.use("Agg")
from jdr_stats import plotting  # noqa: E402

plotting.plot_scree(first, rank_tests=tests["general"]).savefig(OUT / "ais_scree.png", dpi=90)
plotting.plot_loadings(res).savefig(OUT / "ais_loadings.png", dpi=90)
plotting.plot_sufficient_summary(res).savefig(OUT / "ais_summary_plot.png", dpi=90)
plotting.plot_bootstrap_angles(boot).savefig(OUT / "ais_bootstrap.png", dpi=90)

# %% [markdown]
# ## 7. Interpretation
#
# The joint estimator looks for *interactions* between the blocks: the
# first-order cross moment $E[a\,y\,b^T]$ vanishes for a response that is
# additive in the blocks.  LBM is, to first order, a function of body build
# alone (weight times one minus the fat fraction), which the single-block
# methods pick up; the joint estimator asks whether blood and body build
# *interact*.  The sentences below are generated from the numbers above.

# %%
p0 = {k: float(t.table["pvalue"].iloc[0]) for k, t in tests.items()}
bounds = boot.max_angle_bound()
print("\nInterpretation")
print(f"  Evidence of at least one joint direction (H0: r = 0): p = {p0['chi2']:.3f} (chi2), "
      f"{p0['general']:.3f} (general), {p0['permutation']:.3f} (permutation).")
strength = "weak" if max(p0.values()) > 0.01 else "clear"
print(f"  The evidence is {strength}; the analysis uses r = {rank} (permutation test).")
print(f"  With {round(100 * (1 - boot.alpha))}% confidence the true blood direction lies within "
      f"{bounds['a']:.0f} degrees and the body-build direction within {bounds['b']:.0f} degrees "
      "of the estimates: " + ("roughly determined at n = 202." if max(bounds) > 20 else "well determined."))
print(f"  Variables selected at FDR 10%: blood {support.selected_a or 'none'}, "
      f"body build {support.selected_b or 'none'}.")

# %% [markdown]
# ## 8. The blocks correlate: the joint estimator against the paper's
#
# Blood and body build are far from independent (their largest canonical
# correlation is printed below).  The fits so far used the default, the
# joint estimator (`independent_blocks=False`): it replaces each block by
# its least squares residual on the other and whitens it by its partial
# covariance, so it does not need independent blocks (theory page
# "Whitening", section "Correlated blocks").  The paper's per-block
# estimator (`independent_blocks=True`) assumes independent blocks:
# correlated blocks add directions to its cross moment and bias the ones it
# finds.  Both are fitted here with the default rank tests.

# %%
import warnings  # noqa: E402

from jdr_stats.exceptions import AssumptionWarning  # noqa: E402

with warnings.catch_warnings():
    warnings.simplefilter("ignore", AssumptionWarning)  # shown in the premises table
    per_block = model.fit("auto", independent_blocks=True, seed=4)
joint = model.fit("auto", seed=4)  # the default
print(joint.summary())
cc = per_block.diagnostics.cross_correlations[0]
p_pb = float(per_block.rank_test_table.table["pvalue"].iloc[0])
p_j = float(joint.rank_test_table.table["pvalue"].iloc[0])
k = min(per_block.rank, joint.rank)
gap = {b: float(np.degrees(jdr.metrics.principal_angles(
    np.asarray(getattr(per_block, f"directions_{b}"))[:, :k],
    np.asarray(getattr(joint, f"directions_{b}"))[:, :k]).max())) if k else float("nan")
    for b in "ab"}  # rank 0 (no evidence): no direction to compare
print("\nPer block against joint")
print(f"  Largest cross-block canonical correlation: {cc:.2f}.")
print(f"  Rank chosen: {per_block.rank} per block, {joint.rank} joint; "
      f"p-value of H0: r = 0: {p_pb:.3g} per block, {p_j:.3g} joint.")
if k:
    print(f"  Largest angle between the two estimators' first {k} direction(s): "
          f"blood {gap['a']:.0f} degrees, body build {gap['b']:.0f} degrees.")
else:
    print("  Rank 0 (no evidence of a link): no direction to compare.")
