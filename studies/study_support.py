"""Simulation study of support selection (issue 6).

Sparse BILINEAR model, n1 = n2 = 100, s1 = s2 = 10, r = 2, m = 5000, R
replications per design (default 200): for each replication

* the marginal (rank=None) and conditional (rank=2) coordinate tests with
  Benjamini-Hochberg at fdr = 0.1: false discovery proportion and power
  (share of the true variables found), per block;
* the sparse fit with the counts of ``choose_sparsity`` (what
  ``fit(2, sparsity="auto", fdr=0.1)`` used before issue 18) and
  ``fit(2, sparsity="auto", fdr=0.1)`` itself (since issue 18: exactly the
  selected variables) against the sparse fit given the true (10, 10): mean NSEE;
* the threshold rule of section 5.3 (false and true selections);
* on the first ``--n-stability`` replications, stability selection
  (50 complementary half-samples, threshold 0.6);
* the share of true nulls rejected at level 0.05 by each test, and by the
  naive statistic ``m ||row_j of X_lin||^2 / s_y^2`` against chi2(n2).

Designs: ``gaussian`` and ``uniform`` (independent variables, the paper's
simulation), and ``ar1``: Gaussian blocks whose variables are correlated,
``corr(a_j, a_k) = 0.6^|j-k|`` (same for b), with U and V sparse in the
original coordinates (H0 is about the original coordinates, see the theory
page).

Targets: empirical FDR <= 0.1 + 2 Monte Carlo standard errors; mean NSEE of
the automatic fit within 20% of the fit given the true sparsity.

Run (one design at a time, each under ~10 minutes on one core)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python studies/study_support.py --design gaussian
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python studies/study_support.py --design uniform
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python studies/study_support.py --design ar1
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python studies/study_support.py --ablation --reps 100

The recorded output is ``studies/results/study_support.txt``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
from scipy import stats

import jdr_stats as jdr
from jdr_stats.exceptions import SupportSelectionWarning
from jdr_stats.simulate import random_basis
from jdr_stats.support import Stability, choose_sparsity, select_support

M, N, S, R = 5000, 100, 10, 2
FDR = 0.1


def _fdp_power(res, truth_a, truth_b):
    out = []
    for block, truth in (("a", truth_a), ("b", truth_b)):
        sel = res.table.xs(block, level="block")["selected"].to_numpy(bool)
        false = int((sel & ~truth).sum())
        out.append((false / max(int(sel.sum()), 1), (sel & truth).sum() / truth.sum(), false))
    return out


class _Sim:
    def __init__(self, y, a, b, U, V):
        self.y, self.a, self.b, self.U, self.V = y, a, b, U, V


def _draw(design: str, seed: int):
    if design != "ar1":
        return jdr.simulate.bilinear(M, N, N, R, s1=S, s2=S, design=design, seed=seed)
    rng = np.random.default_rng(seed)
    U = random_basis(N, R, S, seed=rng)
    V = random_basis(N, R, S, seed=rng)
    idx = np.arange(N)
    low = np.linalg.cholesky(0.6 ** np.abs(idx[:, None] - idx[None, :]))
    a = rng.standard_normal((M, N)) @ low.T
    b = rng.standard_normal((M, N)) @ low.T
    y = np.einsum("ij,ij->i", a @ U, b @ V) + rng.standard_normal(M)
    return _Sim(y, a, b, U, V)


def _null_rate(res, truth_a, truth_b, alpha=0.05):
    p = res.table["pvalue"].to_numpy()
    null = ~np.concatenate([truth_a, truth_b])
    return np.mean(p[null] <= alpha)


def run(design: str, reps: int, n_stability: int, seed0: int) -> None:
    start = time.time()
    rec = {key: [] for key in ("marginal", "conditional", "threshold", "stability")}
    nsee_auto, nsee_true, nsee_sets, counts = [], [], [], []
    size = {"marginal": [], "conditional": [], "naive": []}
    for rep in range(reps):
        sim = _draw(design, seed0 + rep)
        model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
        ta, tb = np.abs(sim.U).sum(1) > 0, np.abs(sim.V).sum(1) > 0
        marg = select_support(model, fdr=FDR)
        rec["marginal"].append(_fdp_power(marg, ta, tb))
        (s1, s2), cond = choose_sparsity(model.data, rank=R, fdr=FDR, seed=rep)
        rec["conditional"].append(_fdp_power(cond, ta, tb))
        size["marginal"].append(_null_rate(marg, ta, tb))
        size["conditional"].append(_null_rate(cond, ta, tb))
        x = model.fit(R).coef_matrix
        var_y = np.var(sim.y)
        p_naive = np.concatenate([
            stats.chi2.sf(M * np.sum(x**2, axis=1) / var_y, N),
            stats.chi2.sf(M * np.sum(x**2, axis=0) / var_y, N),
        ])
        size["naive"].append(np.mean(p_naive[~np.concatenate([ta, tb])] <= 0.05))
        thr = select_support(model, rank=R, rule="threshold")
        rec["threshold"].append(_fdp_power(thr, ta, tb))
        if rep < n_stability:
            stab = select_support(
                model, rank=R, rule=Stability(n_subsamples=50), seed=seed0 + rep
            )
            rec["stability"].append(_fdp_power(stab, ta, tb))
        fit_auto = model.fit(R, sparsity=(s1, s2))
        fit_true = model.fit(R, sparsity=(S, S))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", SupportSelectionWarning)
            fit_sets = model.fit(R, sparsity="auto", fdr=FDR, seed=rep)
        nsee_sets.append(jdr.metrics.nsee(sim.U, fit_sets.directions_a, sim.V, fit_sets.directions_b))
        nsee_auto.append(jdr.metrics.nsee(sim.U, fit_auto.directions_a, sim.V, fit_auto.directions_b))
        nsee_true.append(jdr.metrics.nsee(sim.U, fit_true.directions_a, sim.V, fit_true.directions_b))
        counts.append((s1, s2))
    elapsed = time.time() - start

    print(f"== design={design}: BILINEAR m={M}, n1=n2={N}, s1=s2={S}, r={R}, "
          f"{reps} replications (seeds {seed0}..{seed0 + reps - 1}), fdr={FDR}")
    print(f"{'rule/test':<26}{'block':>6}{'reps':>6}{'FDR':>9}{'MC SE':>9}"
          f"{'FDR<=0.1+2SE':>14}{'power':>8}{'mean #false':>13}")
    for key, rows in rec.items():
        if not rows:
            continue
        arr = np.array(rows, dtype=float)  # (reps, 2 blocks, 3)
        for k, block in enumerate(("a", "b")):
            fdp, power, nfalse = arr[:, k, 0], arr[:, k, 1], arr[:, k, 2]
            fdr_hat = fdp.mean()
            se = fdp.std(ddof=1) / np.sqrt(len(fdp))
            label = {"marginal": "BH, marginal chi2/F", "conditional": "BH, conditional (r=2)",
                     "threshold": "threshold sqrt(2log n1n2)",
                     "stability": "stability (50 halves,0.6)"}[key]
            ok = "yes" if fdr_hat <= FDR + 2 * se else "NO"
            print(f"{label:<26}{block:>6}{len(fdp):>6}{fdr_hat:>9.4f}{se:>9.4f}"
                  f"{ok if key in ('marginal', 'conditional') else '-':>14}"
                  f"{power.mean():>8.3f}{nfalse.mean():>13.2f}")
    na, nt = np.mean(nsee_auto), np.mean(nsee_true)
    ratio = na / nt
    c = np.array(counts)
    print(f"sparse fit, counts from choose_sparsity (fit(sparsity='auto') before issue 18): mean (s1, s2) = "
          f"({c[:, 0].mean():.2f}, {c[:, 1].mean():.2f})")
    print(f"mean NSEE auto = {na:.4f} (MC SE {np.std(nsee_auto, ddof=1) / np.sqrt(reps):.4f}), "
          f"given true (10, 10) = {nt:.4f} (MC SE {np.std(nsee_true, ddof=1) / np.sqrt(reps):.4f}), "
          f"ratio = {ratio:.3f} -> within 20%: {'yes' if ratio <= 1.2 else 'NO'}")
    ns = np.mean(nsee_sets)
    print(f"fit(sparsity='auto') since issue 18 (exactly the selected variables): mean NSEE = "
          f"{ns:.4f} (MC SE {np.std(nsee_sets, ddof=1) / np.sqrt(reps):.4f}), ratio to the "
          f"true (10, 10) = {ns / nt:.3f}; paired difference to the counts' fit = "
          f"{np.mean(np.subtract(nsee_sets, nsee_auto)):.4f} (MC SE "
          f"{np.std(np.subtract(nsee_sets, nsee_auto), ddof=1) / np.sqrt(reps):.4f})")
    n_null = 2 * (N - S)
    for key, rates in size.items():
        rates = np.array(rates)
        label = {"marginal": "marginal F test", "conditional": "conditional F test (r=2)",
                 "naive": "naive m||row of X_lin||^2/s_y^2 ~ chi2(n2)"}[key]
        print(f"share of true nulls rejected at 0.05, {label}: {rates.mean():.4f} "
              f"(MC SE {rates.std(ddof=1) / np.sqrt(len(rates)):.4f}; {len(rates)} x {n_null} nulls)")
    print(f"elapsed {elapsed:.0f} s")
    print()


def ablation(reps: int, seed0: int) -> None:
    """The conditional test with the full-data basis instead of the basis
    fitted without the tested variable (Gaussian design): share of true
    nulls rejected at 0.05 and 0.01."""
    from jdr_stats import support as sup

    loo = sup._loo_bases

    def full_basis(k_mat, g, rho, rank):
        _, vecs = np.linalg.eigh(k_mat)
        return np.broadcast_to(vecs[:, ::-1][:, :rank], (g.shape[0], k_mat.shape[0], rank))

    rates = {"leave-one-out basis (the package)": [], "full-data basis (ablation)": []}
    start = time.time()
    for rep in range(reps):
        sim = _draw("gaussian", seed0 + rep)
        model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
        null = ~np.concatenate([np.abs(sim.U).sum(1) > 0, np.abs(sim.V).sum(1) > 0])
        for label, fn in zip(rates, (loo, full_basis)):
            sup._loo_bases = fn
            try:
                p = select_support(model, rank=R).table["pvalue"].to_numpy()[null]
            finally:
                sup._loo_bases = loo
            rates[label].append((np.mean(p <= 0.05), np.mean(p <= 0.01)))
    print(f"== ablation: conditional test basis, gaussian design, {reps} replications "
          f"(seeds {seed0}..{seed0 + reps - 1}), {2 * (N - S)} true nulls each")
    for label, vals in rates.items():
        v = np.array(vals)
        se = v.std(axis=0, ddof=1) / np.sqrt(reps)
        print(f"{label:<36} rejected at 0.05: {v[:, 0].mean():.4f} (MC SE {se[0]:.4f}); "
              f"at 0.01: {v[:, 1].mean():.4f} (MC SE {se[1]:.4f})")
    print(f"elapsed {time.time() - start:.0f} s")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--design", choices=["gaussian", "uniform", "ar1"], default="gaussian")
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n-stability", type=int, default=20)
    parser.add_argument("--seed", type=int, default=60000)
    parser.add_argument("--ablation", action="store_true",
                        help="only the leave-one-out vs full-data basis comparison")
    args = parser.parse_args()
    if args.ablation:
        ablation(args.reps, args.seed)
    else:
        run(args.design, args.reps, args.n_stability, args.seed)


if __name__ == "__main__":
    main()
