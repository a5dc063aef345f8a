"""The sparse estimator at p >> n (issue 36, item 2): the association test's
dense and sparse statistics, and the cross-validated sparsity.

* ``level``: y independent of the blocks (``bilinear(..., strengths=[0])``,
  Gaussian or t(3) noise, Gaussian blocks; t(3) noise with t(5) blocks),
  ``fit(1).association_test(B, seed, statistic=...)`` for ``"dense"`` and
  ``"sparse"``; rejection rate at 0.05 (exact: 0.05 with B = 99).
* ``power``: the paper's BILINEAR model with sparse U, V (``s1 = s2 = 5``
  active variables, one direction of strength g, N(0, 1) noise),
  rejection rate at 0.05 of both statistics.
* ``cv``: ``fit(1, sparsity="cv", seed)`` on the same model (s = 5 or 10):
  the chosen (s1, s2), true and false positives per block (a variable is
  active when its row of U (V) is nonzero), the best out-of-fold R-squared,
  the seconds per fit; ``selection_stability(50)``: the mean frequency of
  the selected true and of the selected false positives.

Monte Carlo SE: sqrt(p (1 - p) / R) for rates, sd / sqrt(R) for means.
Seeds: replication i of cell c uses ``np.random.default_rng([seed, c, i])``.

Run (single-threaded BLAS; about 5 minutes on the shared 2-core machine)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/study_sparse_wide.py

Output recorded in ``studies/results/study_sparse_wide.txt``.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import time

import numpy as np

import jdr_stats as jdr


def _rng(seed: int, cell: int, i: int) -> np.random.Generator:
    return np.random.default_rng([seed, cell, i])


def _rate(x: list[bool]) -> str:
    p = float(np.mean(x))
    return f"{p:.3f} ({np.sqrt(p * (1 - p) / len(x)):.3f})"


def _mean(x: list[float]) -> str:
    return f"{np.mean(x):.2f} ({np.std(x, ddof=1) / np.sqrt(len(x)):.2f})"


def level(args: argparse.Namespace) -> None:
    print("## Level at 0.05 (H0: y independent of the blocks); rate (MC SE)")
    print("m  n1  n2  noise  design  R  dense  sparse")
    cells = [(40, 120, 21), (100, 100, 100)]
    kinds = [("normal", "gaussian"), ("t3", "gaussian"), ("t3", "t5")]
    c = 0
    for m, n1, n2 in cells:
        reps = args.reps_level if m * (n1 + n2) < 10000 else args.reps_level // 2
        for noise, design in kinds:
            c += 1
            dense, sparse = [], []
            for i in range(reps):
                g = _rng(args.seed, c, i)
                d = jdr.simulate.bilinear(m, n1, n2, 1, strengths=[0.0], noise_dist=noise,
                                          design=design, seed=g)
                res = jdr.JointDimReduction(d.y, d.a, d.b).fit(1, independent_blocks=True)
                ps = int(g.integers(2**31))
                dense.append(res.association_test(args.n_perm, seed=ps).pvalue <= 0.05)
                sparse.append(res.association_test(args.n_perm, seed=ps,
                                                   statistic="sparse").pvalue <= 0.05)
            print(f"{m} {n1} {n2} {noise} {design} {reps} {_rate(dense)} {_rate(sparse)}",
                  flush=True)


def power(args: argparse.Namespace) -> None:
    print("\n## Power at 0.05, sparse BILINEAR (s1 = s2 = 5, r = 1, strength g)")
    print("m  n1  n2  g  R  dense  sparse")
    c = 100
    for m, n1, n2 in [(40, 120, 21), (100, 100, 100)]:
        for gs in (3.0, 6.0):
            c += 1
            dense, sparse = [], []
            for i in range(args.reps_power):
                g = _rng(args.seed, c, i)
                d = jdr.simulate.bilinear(m, n1, n2, 1, s1=5, s2=5, strengths=[gs], seed=g)
                res = jdr.JointDimReduction(d.y, d.a, d.b).fit(1, independent_blocks=True)
                ps = int(g.integers(2**31))
                dense.append(res.association_test(args.n_perm, seed=ps).pvalue <= 0.05)
                sparse.append(res.association_test(args.n_perm, seed=ps,
                                                   statistic="sparse").pvalue <= 0.05)
            print(f"{m} {n1} {n2} {gs:g} {args.reps_power} {_rate(dense)} {_rate(sparse)}",
                  flush=True)


def cv(args: argparse.Namespace) -> None:
    print('\n## fit(1, sparsity="cv"): chosen support; mean (MC SE) over R fits')
    print("m  n1  n2  s  g  R  s1  s2  TP_a  FP_a  TP_b  FP_b  best_cv_R2  "
          "freq_true_sel  freq_false_sel  sec/fit")
    c = 200
    for m, n1, n2, s, reps in [(40, 120, 21, 5, args.reps_cv), (100, 100, 100, 5, args.reps_cv),
                               (100, 100, 100, 10, args.reps_cv),
                               (100, 500, 500, 5, max(2, args.reps_cv // 4))]:
        for gs in (3.0, 6.0):
            c += 1
            out: dict[str, list[float]] = {k: [] for k in (
                "s1", "s2", "tpa", "fpa", "tpb", "fpb", "r2", "ft", "ff", "sec")}
            for i in range(reps):
                g = _rng(args.seed, c, i)
                d = jdr.simulate.bilinear(m, n1, n2, 1, s1=s, s2=s, strengths=[gs], seed=g)
                model = jdr.JointDimReduction(d.y, d.a, d.b)
                t0 = time.perf_counter()
                res = model.fit(1, sparsity="cv", seed=int(g.integers(2**31)),
                                independent_blocks=True)
                out["sec"].append(time.perf_counter() - t0)
                ta = {f"a{j}" for j in np.flatnonzero(d.U[:, 0])}
                tb = {f"b{j}" for j in np.flatnonzero(d.V[:, 0])}
                sa, sb = set(res.support_a), set(res.support_b)
                out["s1"].append(len(sa))
                out["s2"].append(len(sb))
                out["tpa"].append(len(sa & ta))
                out["fpa"].append(len(sa - ta))
                out["tpb"].append(len(sb & tb))
                out["fpb"].append(len(sb - tb))
                out["r2"].append(res.settings.sparsity_choice.inputs["best_cv_rsquared"])
                st = res.selection_stability(50, seed=int(g.integers(2**31)))
                sel = st[st.selected]
                true = [(blk == "a" and v in ta) or (blk == "b" and v in tb)
                        for blk, v in sel.index]
                fr = sel.frequency.to_numpy()
                tr = np.array(true)
                if tr.any():
                    out["ft"].append(float(fr[tr].mean()))
                if (~tr).any():
                    out["ff"].append(float(fr[~tr].mean()))
            cols = " ".join(_mean(out[k]) if len(out[k]) > 1 else "-" for k in (
                "s1", "s2", "tpa", "fpa", "tpb", "fpb", "r2", "ft", "ff", "sec"))
            print(f"{m} {n1} {n2} {s} {gs:g} {reps} {cols}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--reps-level", type=int, default=200)
    p.add_argument("--reps-power", type=int, default=50)
    p.add_argument("--reps-cv", type=int, default=20)
    p.add_argument("--n-perm", type=int, default=99)
    p.add_argument("--seed", type=int, default=36)
    p.add_argument("--part", choices=["all", "level", "power", "cv"], default="all")
    args = p.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"# study_sparse_wide: {vars(args)}; commit {commit}; {platform.machine()}, "
          f"numpy {np.__version__}, one BLAS thread")
    t0 = time.time()
    if args.part in ("all", "level"):
        level(args)
    if args.part in ("all", "power"):
        power(args)
    if args.part in ("all", "cv"):
        cv(args)
    print(f"\n# {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
