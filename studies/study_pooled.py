"""The pooled estimator (``fit(rank, main_effects=True)``, issue 36 item 3):
accuracy against the interaction-only estimator and per-block SIR, and the
size of its per-block rank tests at the true rank.

Designs (each block Gaussian with AR(0.3) covariance, the blocks independent;
``B_k`` a random orthonormal n_k x 2 matrix per block, ``u_kj`` the
standardised ``x_k^T B_k[:, j]``; K = 2: widths 6, 5; K = 3: widths 5, 5, 5;
m = 500, noise sd 1):

- (a) main effects only: ``eta = sum_k u_k1``;
- (b) interactions only: ``eta = u_11 u_21`` (K = 2),
  ``u_11 u_21 + u_21 u_31 + u_11 u_31`` (K = 3);
- (c) both: (b) plus ``sum_k u_k2`` (each block's true rank 2).

Numeric response ``y = eta + eps``; categorical: ``eta + eps`` cut at its
tertiles into 3 classes (in (a) the classes shift each block's mean along
``B_k[:, 0]``; in (b) the class means are equal, by symmetry).  True subspace
of block k: ``B_k[:, :1]`` in (a), (b), ``B_k[:, :2]`` in (c).

Estimators at the true ranks: pooled (``main_effects=True``),
interaction-only (``main_effects=False``), both ``independent_blocks=True``;
per-block SIR (``jdr.SIR`` on each block alone; the class codes for a
categorical response, one slice per class).  Accuracy: the largest principal
angle (degrees) between each block's estimate and its truth, mean over
blocks and replications, with its Monte Carlo SE.  Size: the rejection rate
at 0.05 of the pooled fit's per-block rank test of ``H0: rank_k <= r_k`` at
the true ``r_k`` (``rank_tests()``), over blocks and replications, with its
binomial SE (blocks of one replication are not independent: the SE is
per-block-test, a slight understatement), per-block whitening (analytic
influences, R = 100) and joint whitening (``independent_blocks=False``,
jackknife influences, R = 60).

Command (from the repository root, one BLAS thread):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/study_pooled.py
Output: studies/results/study_pooled.txt (this script's simulation part;
the real-data part is studies/study_pooled_real.py).
"""

from __future__ import annotations

import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd

import jdr_stats as jdr
from jdr_stats.metrics import principal_angles

M = 500
R_PER_BLOCK = 100
R_JOINT = 60
WIDTHS = {2: (6, 5), 3: (5, 5, 5)}
SEED = 20240536


def ar_chol(n: int, rho: float = 0.3) -> np.ndarray:
    idx = np.arange(n)
    return np.linalg.cholesky(rho ** np.abs(idx[:, None] - idx[None, :]))


def simulate(design: str, K: int, ytype: str, rng: np.random.Generator):
    widths = WIDTHS[K]
    xs, us, truths = [], [], []
    for n in widths:
        L = ar_chol(n)
        x = rng.normal(size=(M, n)) @ L.T
        B = np.linalg.qr(rng.normal(size=(n, 2)))[0]
        cov = L @ L.T
        u = (x @ B) / np.sqrt(np.diag(B.T @ cov @ B))
        xs.append(x)
        us.append(u)
        truths.append(B[:, :2] if design == "c" else B[:, :1])
    main = sum(u[:, 0] for u in us) if design == "a" else 0.0
    if design in ("b", "c"):
        inter = us[0][:, 0] * us[1][:, 0]
        if K == 3:
            inter = inter + us[1][:, 0] * us[2][:, 0] + us[0][:, 0] * us[2][:, 0]
    else:
        inter = 0.0
    if design == "c":
        main = sum(u[:, 1] for u in us)
    eta = main + inter + rng.normal(size=M)
    if ytype == "numeric":
        y: np.ndarray | pd.Categorical = eta
        codes = eta
    else:
        cuts = np.quantile(eta, [1 / 3, 2 / 3])
        c = np.searchsorted(cuts, eta)
        y = pd.Categorical(c)
        codes = c.astype(float)
    return y, codes, xs, truths


def angle(est: np.ndarray, truth: np.ndarray) -> float:
    return float(np.degrees(np.max(principal_angles(np.asarray(est, float), truth))))


def model_of(y, xs):
    if len(xs) == 2:
        return jdr.JointDimReduction(y, xs[0], xs[1]), ["a", "b"]
    return jdr.JointDimReduction.from_blocks(y, xs), ["block1", "block2", "block3"]


def one_rep(design: str, K: int, ytype: str, rng: np.random.Generator,
            joint: bool) -> dict[str, list[float]]:
    y, codes, xs, truths = simulate(design, K, ytype, rng)
    r = truths[0].shape[1]
    mod, names = model_of(y, xs)
    out: dict[str, list[float]] = {"pooled": [], "interaction": [], "sir": [], "reject": []}
    pooled = mod.fit(r, main_effects=True, independent_blocks=not joint)
    tables = pooled.rank_tests().tables
    for n in names:
        out["reject"].append(float(tables[n].loc[r, "pvalue"] < 0.05))
    if joint:
        return out
    inter = mod.fit(r, independent_blocks=True)
    for k, n in enumerate(names):
        out["pooled"].append(angle(pooled.directions[n], truths[k]))
        if K == 2:
            d = inter.directions_a if k == 0 else inter.directions_b
        else:
            d = inter.directions[n]
        out["interaction"].append(angle(d, truths[k]))
        sir = jdr.SIR(codes, xs[k]).fit(rank=r)
        out["sir"].append(angle(np.asarray(sir.directions)[:, :r], truths[k]))
    return out


def mc(values: list[float]) -> str:
    v = np.asarray(values, float)
    return f"{v.mean():6.3f} ({v.std(ddof=1) / np.sqrt(v.size):.3f})"


def mc_angle(per_rep: list[list[float]]) -> str:
    v = np.asarray([np.mean(x) for x in per_rep])  # replications independent
    return f"{v.mean():5.1f} ({v.std(ddof=1) / np.sqrt(v.size):.1f})"


def main() -> None:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    print(f"# studies/study_pooled.py, commit {commit}, python {sys.version.split()[0]}, "
          f"numpy {np.__version__}")
    print("# command: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. "
          "python studies/study_pooled.py")
    print(f"# m = {M}; widths {WIDTHS}; seed {SEED}; R = {R_PER_BLOCK} (per-block), "
          f"{R_JOINT} (joint)")
    print()
    print("## Accuracy: largest principal angle to the truth (degrees), mean over blocks "
          "and replications (MC SE)")
    print("## Size: rejection rate at 0.05 of the pooled per-block rank test at the true "
          "rank (SE)")
    print()
    header = (f"{'K':>2} {'y':<12}{'design':<7}{'pooled':>12}{'interaction':>14}"
              f"{'SIR/block':>12}{'size per-block':>18}{'size joint':>18}")
    print(header)
    rng0 = np.random.default_rng(SEED)
    t0 = time.time()
    for K in (2, 3):
        for ytype in ("numeric", "categorical"):
            for design in ("a", "b", "c"):
                rng = np.random.default_rng(rng0.integers(2**63))
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    reps = [one_rep(design, K, ytype, rng, False) for _ in range(R_PER_BLOCK)]
                    jreps = [one_rep(design, K, ytype, rng, True) for _ in range(R_JOINT)]
                print(f"{K:>2} {ytype:<12}{design:<7}"
                      f"{mc_angle([x['pooled'] for x in reps]):>12}"
                      f"{mc_angle([x['interaction'] for x in reps]):>14}"
                      f"{mc_angle([x['sir'] for x in reps]):>12}"
                      f"{mc([v for x in reps for v in x['reject']]):>18}"
                      f"{mc([v for x in jreps for v in x['reject']]):>18}", flush=True)
    print()
    print(f"# wall time {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
