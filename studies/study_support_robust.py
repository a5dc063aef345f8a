"""FDR and power of the coordinate tests on correlated, heavy-tailed blocks (issue 13).

Sparse BILINEAR model (``jdr_stats.simulate.bilinear``) with n1 = n2 = n,
s1 = s2 = s active variables, rank r, the conditional coordinate test at the
true rank, Benjamini-Hochberg within each block at q = 0.1.  For every
replication and test: the false discovery proportion and the power (share of
the s true variables selected) of each block; reported: their means over the
2 x R block-replications (the blocks are exchangeable in every design) with
the Monte Carlo SE computed from the R per-replication averages of the two
blocks, and the share of true nulls rejected at 0.05.

Tests (``--methods``):

* ``F``: the factored partial F test (the version-0.1 default);
* ``sandwich``: version 0.1's ``covariance="sandwich"`` (chi-square);
* ``perm-F``: version 0.1's permutation of partial residuals (F studentized);
* ``hc0``, ``hc2``, ``hc3``: robust Wald test of the reverse regression,
  F reference (``jdr_stats.support``);
* ``wild``: wild (Rademacher) bootstrap of the robust score statistic
  (restricted residuals scaled by ``1 / sqrt(1 - leverage)``); ``wild-raw``:
  the same with the raw restricted residuals (the first version, screened);
* ``sperm``: studentized permutation (DiCiccio and Romano 2017);
* ``<test>-by``: Benjamini-Yekutieli instead of BH.

Stages: ``--stage screen`` (the hardest settings, 100 replications, every
candidate, B = 199), ``--stage final`` (every conditional setting and two
marginal ones, 200 replications, the old and the new default),
``--stage marginal`` (the marginal test, no rank, over the battery: F, HC3
and the wild bootstrap, 200 replications) and ``--stage cost`` (CPU time of
the marginal test at m = 5000, n1 = n2 = 60, B = 999, resample sums in
double and single precision).  Run::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python studies/study_support_robust.py --stage screen
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python studies/study_support_robust.py --stage final
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python studies/study_support_robust.py --stage marginal
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python studies/study_support_robust.py --stage cost

The recorded output is ``studies/results/study_support_robust.txt``.
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np
from scipy import linalg as sla
from statsmodels.stats.multitest import multipletests

import jdr_stats as jdr
from jdr_stats.support import robust_coordinate_tests
from jdr_stats.support._statistics import block_tests

Q = 0.1
B = 199  # resamples of the screened resampling candidates
B_WILD = 999  # resamples of the wild bootstrap in the final stage (the package default)

#: name -> (bilinear options, m, n, s, r)
SETTINGS: dict[str, tuple[dict, int, int, int, int]] = {
    "gauss-m500-n30-r2": ({}, 500, 30, 5, 2),
    "gauss-ar0.8-het-m500-n30-r2": (
        {"ar1": 0.8, "hetero": "signal", "hetero_strength": 2.0}, 500, 30, 5, 2),
    "t5-m500-n30-r2": ({"design": "t5"}, 500, 30, 5, 2),
    "t5-ar0.8-m500-n30-r2": ({"design": "t5", "ar1": 0.8}, 500, 30, 5, 2),
    "t5-ar0.8-m2000-n30-r2": ({"design": "t5", "ar1": 0.8}, 2000, 30, 5, 2),
    "t5-ar0.8-m500-n10-r1": ({"design": "t5", "ar1": 0.8}, 500, 10, 3, 1),
    "t5-ar0.4-m1000-n60-r3": ({"design": "t5", "ar1": 0.4}, 1000, 60, 6, 3),
    "laplace-ar0.8-m500-n60-r3": ({"design": "laplace", "ar1": 0.8}, 500, 60, 6, 3),
    "laplace-ar0.8-m5000-n60-r2": ({"design": "laplace", "ar1": 0.8}, 5000, 60, 5, 2),
    "t5-ar0.5-het-m1000-n30-r2": (
        {"design": "t5", "ar1": 0.5, "hetero": "signal", "hetero_strength": 2.0},
        1000, 30, 5, 2),
    "binary-gauss-ar0.5-m2000-n30-r2": (
        {"ar1": 0.5, "response": "binary", "prevalence": 0.2}, 2000, 30, 5, 2),
    # the marginal test (no rank; d = n degrees of freedom)
    "marginal-t5-ar0.8-m500-n30": ({"design": "t5", "ar1": 0.8}, 500, 30, 5, None),
    "marginal-gauss-m500-n30": ({}, 500, 30, 5, None),
    # the marginal battery (--stage marginal); the simulated rank is 2 (1 at n = 10)
    "marginal-t5-m500-n30": ({"design": "t5"}, 500, 30, 5, None),
    "marginal-gauss-ar0.8-het-m500-n30": (
        {"ar1": 0.8, "hetero": "signal", "hetero_strength": 2.0}, 500, 30, 5, None),
    "marginal-t5-ar0.8-m500-n10": ({"design": "t5", "ar1": 0.8}, 500, 10, 3, None),
    "marginal-t5-ar0.8-m2000-n30": ({"design": "t5", "ar1": 0.8}, 2000, 30, 5, None),
    "marginal-t5-ar0.5-het-m1000-n30": (
        {"design": "t5", "ar1": 0.5, "hetero": "signal", "hetero_strength": 2.0},
        1000, 30, 5, None),
    "marginal-binary-gauss-ar0.5-m2000-n30": (
        {"ar1": 0.5, "response": "binary", "prevalence": 0.2}, 2000, 30, 5, None),
    "marginal-laplace-ar0.8-m1000-n60": ({"design": "laplace", "ar1": 0.8}, 1000, 60, 6, None),
    "marginal-laplace-ar0.8-m5000-n60": ({"design": "laplace", "ar1": 0.8}, 5000, 60, 5, None),
    # the rest of the battery (appended: the seeds of the settings above are unchanged)
    "lognormal-noise-m1000-n30-r2": ({"noise_dist": "lognormal"}, 1000, 30, 5, 2),
    "main-effects-m1000-n30-r2": ({"main_effects": 1.0}, 1000, 30, 5, 2),
    "exp-response-m1000-n30-r2": ({"response": "exp"}, 1000, 30, 5, 2),
}
MARGINAL = tuple(k for k in SETTINGS if k.startswith("marginal-"))
MARGINAL_METHODS = ("F", "hc3", "wild")
#: simulated rank of the marginal settings (the marginal test does not use it)
MARGINAL_RANK = {10: 1}
SCREEN = ("t5-ar0.8-m500-n30-r2", "t5-ar0.8-m2000-n30-r2", "t5-ar0.8-m500-n10-r1",
          "laplace-ar0.8-m500-n60-r3", "t5-ar0.5-het-m1000-n30-r2")
SCREEN_METHODS = ("F", "sandwich", "perm-F", "hc0", "hc2", "hc3", "wild", "sperm")
FINAL_METHODS = ("F", "sandwich", "wild-raw", "wild", "wild-raw-by", "wild-by")


def _whiten(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    xc = x - x.mean(axis=0)
    low = np.linalg.cholesky(xc.T @ xc / x.shape[0])
    w = sla.solve_triangular(low, xc.T, lower=True)
    z = sla.solve_triangular(low.T, w, lower=False)
    return np.ascontiguousarray(z.T), np.ascontiguousarray(w.T)


def block_pvalues(method: str, yc, z, w_f, w_o, r, rng, b_wild: int = B) -> np.ndarray:
    """p-values of the conditional test (rank r; marginal: r None) of every
    variable of a block."""
    if method in ("F", "sandwich", "perm-F"):
        res = block_tests(
            yc, z, w_f, w_o, rank=r, conditional=r is not None, standardize=True,
            covariance="sandwich" if method == "sandwich" else "factored",
            method="permutation" if method == "perm-F" else "chi2", n_perm=B, rng=rng)
        return res.pvalue
    name = {"wild": "wild", "wild-raw": "wild", "sperm": "studentized-permutation"}.get(
        method, method[:3])
    return robust_coordinate_tests(yc, z, w_f, w_o, rank=r, method=name,
                                   n_resample=b_wild if name == "wild" else B, seed=rng,
                                   scale_residuals=method != "wild-raw").pvalue


def run_setting(name: str, methods, reps: int, seed0: int, b_wild: int = B) -> list[dict]:
    opts, m, n, s, r = SETTINGS[name]
    acc = {k: [] for k in methods}
    start = time.process_time()
    for rep in range(reps):
        seed = seed0 + rep
        sim = jdr.simulate.bilinear(m, n, n, r or MARGINAL_RANK.get(n, 2), s1=s, s2=s,
                                    seed=seed, **opts)
        yc = sim.y - sim.y.mean()
        za, wa = _whiten(sim.a)
        zb, wb = _whiten(sim.b)
        truth = (np.abs(sim.U).sum(1) > 0, np.abs(sim.V).sum(1) > 0)
        rng = np.random.default_rng(seed)
        cache = {}
        for meth in methods:
            base = meth[:-3] if meth.endswith("-by") else meth
            rule = "fdr_by" if meth.endswith("-by") else "fdr_bh"
            if base not in cache:
                cache[base] = (block_pvalues(base, yc, za, wa, wb, r, rng, b_wild),
                               block_pvalues(base, yc, zb, wb, wa, r, rng, b_wild))
            fdp, pw, size = [], [], []
            for p, t in zip(cache[base], truth):
                sel = multipletests(p, alpha=Q, method=rule)[0]
                fdp.append((sel & ~t).sum() / max(sel.sum(), 1))
                pw.append((sel & t).sum() / t.sum())
                size.append(np.mean(p[~t] <= 0.05))
            acc[meth].append((np.mean(fdp), np.mean(pw), np.mean(size)))
    cpu = time.process_time() - start
    rows = []
    for meth, vals in acc.items():
        v = np.array(vals)
        se = v.std(axis=0, ddof=1) / np.sqrt(reps)
        rows.append(dict(setting=name, method=meth, reps=reps, fdr=v[:, 0].mean(), se=se[0],
                         power=v[:, 1].mean(), size=v[:, 2].mean(), size_se=se[2],
                         seeds=f"{seed0}..{seed0 + reps - 1}"))
    rows[-1]["cpu"] = cpu
    return rows


def cost(m: int = 5000, n: int = 60, repeat: int = 3) -> None:
    """CPU time of select_support's marginal test (both blocks) at m, n1 = n2 = n."""
    import jdr_stats.support._robust as robust

    sim = jdr.simulate.bilinear(m, n, n, 2, s1=5, s2=5, seed=1, design="laplace", ar1=0.8)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)

    def best(**kw) -> float:
        times = []
        for _ in range(repeat):
            start = time.process_time()
            model.select_support(seed=1, **kw)
            times.append(time.process_time() - start)
        return min(times)

    print(f"# JointDimReduction(y, a, b).select_support() (marginal test), m = {m}, n1 = n2 = {n}; "
          f"best CPU time of {repeat} runs, both blocks")
    t_f = best(method="chi2")
    print(f"{'partial F (method=chi2)':<44}{t_f:>8.2f} s")
    for dtype in (np.float64, np.float32):
        robust._RESAMPLE_DTYPE = dtype
        t_w = best(method="wild", n_resamples=999)
        print(f"{'wild, B = 999, resample sums ' + np.dtype(dtype).name:<44}{t_w:>8.2f} s"
              f"  ({t_w / t_f:.0f} x F)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stage", choices=["screen", "final", "marginal", "cost"],
                        default="final")
    parser.add_argument("--settings", nargs="*", help="subset of the settings")
    parser.add_argument("--methods", nargs="*", help="subset of the tests")
    parser.add_argument("--reps", type=int)
    parser.add_argument("--seed", type=int, default=130000)
    parser.add_argument("--b-wild", type=int, help="resamples of the wild bootstrap "
                        f"(default {B} when screening, {B_WILD} in the final stage)")
    args = parser.parse_args()
    print(f"# {' '.join(sys.argv)}")
    if args.stage == "cost":
        cost()
        return
    names = args.settings or {"screen": SCREEN, "marginal": MARGINAL}.get(
        args.stage, tuple(k for k in SETTINGS if k not in MARGINAL[2:]))
    methods = args.methods or {"screen": SCREEN_METHODS, "marginal": MARGINAL_METHODS}.get(
        args.stage, FINAL_METHODS)
    reps = args.reps or (100 if args.stage == "screen" else 200)
    b_wild = args.b_wild or (B if args.stage == "screen" else B_WILD)
    print(f"# BILINEAR, n1 = n2 = n, s1 = s2 = s, conditional test at the true rank r "
          f"(marginal-*: the marginal test; simulated r = 2, 1 at n = 10), "
          f"q = {Q}, B = {B} (wild: {b_wild}); FDR and power averaged over both blocks")
    print(f"{'setting':<38}{'test':<10}{'reps':>5}{'FDR':>8}{'MC SE':>8}"
          f"{'<=q+2SE':>8}{'power':>7}{'size5%':>8}{'SE':>7}  seeds")
    for _k, name in enumerate(names):
        seed0 = args.seed + 1000 * list(SETTINGS).index(name)
        for row in run_setting(name, methods, reps, seed0, b_wild):
            ok = "yes" if row["fdr"] <= Q + 2 * row["se"] else "NO"
            print(f"{row['setting']:<38}{row['method']:<10}{row['reps']:>5}{row['fdr']:>8.4f}"
                  f"{row['se']:>8.4f}{ok:>8}{row['power']:>7.3f}{row['size']:>8.4f}"
                  f"{row['size_se']:>7.4f}  {row['seeds']}"
                  + (f"  (cpu {row['cpu']:.0f} s)" if "cpu" in row else ""), flush=True)


if __name__ == "__main__":
    main()
