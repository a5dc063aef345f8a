"""Size and power of the K-block association test and size of the K-block
variable tests (JDRResults.association_test, JDRResults.drop1 at K blocks, with
test="conditional"; the default combined test: study_kblock_support_joint.py).

Question: does the combined permutation test of no association hold its
level at K = 3 under either estimator on Gaussian and skewed correlated
blocks, and what power has it against y = c x_11 x_21 + e?  Do the
jackknife Wald tests of drop1() hold their level for the variables that do
not enter?

Design: K = 3 blocks of 4 columns, m = 150 rows.  "gaussian": N(0, 1)
columns plus sqrt(rho) times a factor shared by all columns of all blocks
(rho = 0.4); "skewed": centred Exp(1) columns plus the centred Exp(1)
shared factor (the same rho).  Null: y independent of the blocks (N(0, 1)
for the Gaussian design, centred chi2(1) for the skewed one).  Power:
y = c x_11 x_21 + N(0, 1), c = 0.15 and 0.3.  The joint (default) and the
per-block estimator; n_perm = 199; rejection at 0.05 and 0.10; Monte Carlo
SE sqrt(p (1 - p) / R).  drop1 (rank 1, y = x_11 x_21 x_31 + N(0, 1),
m = 400): the rejection rate at 0.05 of the variables 2-4 of each block
(not in the directions), R2 samples, the blocks correlated (rho = 0.4) and
independent (rho = 0: the per-block estimator's premise).

Run: OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/study_kblock_inference.py [R] [R2]
Output: studies/results/study_kblock_inference.txt
"""

from __future__ import annotations

import subprocess
import sys
import time

import numpy as np

import jdr_stats as jdr


def blocks(rng: np.random.Generator, m: int, design: str, rho: float = 0.4):
    if design == "gaussian":
        f = rng.normal(size=(m, 1))
        return [rng.normal(size=(m, 4)) + np.sqrt(rho) * f for _ in range(3)]
    f = rng.exponential(size=(m, 1)) - 1.0
    return [rng.exponential(size=(m, 4)) - 1.0 + np.sqrt(rho) * f for _ in range(3)]


def response(rng, xs, design, c):
    m = xs[0].shape[0]
    if c == 0.0:
        return rng.normal(size=m) if design == "gaussian" else rng.chisquare(1, m) - 1.0
    return c * xs[0][:, 0] * xs[1][:, 0] + rng.normal(size=m)


def fit(y, xs, independent):
    return jdr.JointDimReduction.from_blocks(
        y, {"g": xs[0], "l": xs[1], "c": xs[2]}).fit(1, independent_blocks=independent)


def rate(p: np.ndarray, alpha: float) -> str:
    r = float(np.mean(p <= alpha))
    return f"{r:.3f} ({np.sqrt(r * (1 - r) / p.size):.3f})"


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    reps2 = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"# study_kblock_inference.py {reps} {reps2}; commit {commit}; one BLAS thread")
    print("# association_test(199): rejection rate at 0.05 and 0.10 (MC SE), K = 3, m = 150")
    print(f"{'design':9} {'estimator':10} {'c':>4} {'at 0.05':>15} {'at 0.10':>15}")
    t0 = time.time()
    for design in ("gaussian", "skewed"):
        for c in (0.0, 0.15, 0.3):
            for independent in (False, True):
                rng = np.random.default_rng([2026, int(100 * c), design == "skewed"])
                p = np.empty(reps)
                for r in range(reps):
                    xs = blocks(rng, 150, design)
                    y = response(rng, xs, design, c)
                    p[r] = fit(y, xs, independent).association_test(
                        199, seed=int(rng.integers(2**31))).pvalue
                est = "per-block" if independent else "joint"
                print(f"{design:9} {est:10} {c:4.2f} {rate(p, 0.05):>15} {rate(p, 0.10):>15}",
                      flush=True)
    print(f"# association part: {time.time() - t0:.0f} s")
    t0 = time.time()
    print("# drop1(): rejection rate at 0.05 of the 9 inactive variables (MC SE over "
          "samples x variables, not independent), m = 400, y = x11 x21 x31 + e")
    for design, rho in (("gaussian", 0.4), ("skewed", 0.4), ("gaussian", 0.0),
                        ("skewed", 0.0)):
        for independent in (False, True):
            rng = np.random.default_rng([2027, design == "skewed", int(10 * rho)])
            pv = []
            for _ in range(reps2):
                xs = blocks(rng, 400, design, rho)
                y = xs[0][:, 0] * xs[1][:, 0] * xs[2][:, 0] + rng.normal(size=400)
                tab = fit(y, xs, independent).drop1(test="conditional").table
                pv.append(tab["pvalue"].to_numpy().reshape(3, 4)[:, 1:].ravel())
            p = np.concatenate(pv)
            est = "per-block" if independent else "joint"
            print(f"{design:9} rho={rho:.1f} {est:10} {rate(p, 0.05):>15}", flush=True)
    print(f"# drop1 part: {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
