"""False discovery rate and power of the K-block support selection.

Question: does ``select_support(rank=1, fdr=0.1)`` of a model of three
blocks (the robust conditional Wald test of every variable, Benjamini-
Hochberg over all blocks' variables) keep the FDR at 0.1, and with what
power, when 3 of 12-15 variables of each block are active?

Designs: K = 3, widths (12, 15, 12), m = 1000, link
``y = u1 u2 + u2 u3 + u1 u2 u3 + 0.5 e`` (u_k = x_k^T beta_k, beta_k with
3 nonzero entries); blocks Gaussian, t(5) (independent columns, unit
variance) and Gaussian with AR(1) correlation 0.5 within each block.
Reported: mean FDP with its Monte Carlo SE, mean power, and the rejection
rate at 0.05 of the inactive variables' tests (their size).

Run: ``python studies/study_kblock_support.py [reps]`` (default 500);
results in ``studies/results/study_kblock_support.txt``.
"""

import sys
import time

import numpy as np

import jdr_stats as jdr

WIDTHS = (12, 15, 12)
NAMES = ("g", "l", "c")


def simulate(m, dist, rng):
    xs = []
    for n in WIDTHS:
        if dist == "t5":
            x = rng.standard_t(5, size=(m, n)) / np.sqrt(5 / 3)
        else:
            x = rng.normal(size=(m, n))
            if dist == "gauss-ar":
                cov = 0.5 ** np.abs(np.subtract.outer(np.arange(n), np.arange(n)))
                x = x @ np.linalg.cholesky(cov).T
        xs.append(x)
    betas = []
    for n in WIDTHS:
        b = np.zeros(n)
        b[:3] = rng.normal(size=3)
        betas.append(b / np.linalg.norm(b))
    u = [x @ b for x, b in zip(xs, betas)]
    y = u[0] * u[1] + u[1] * u[2] + u[0] * u[1] * u[2] + 0.5 * rng.normal(size=m)
    return y, xs


def run(reps, seed=20240535, m=1000):
    rng = np.random.default_rng(seed)
    active = np.concatenate([np.arange(n) < 3 for n in WIDTHS])
    out = {}
    for dist in ("gauss", "t5", "gauss-ar"):
        fdp, power, size = [], [], []
        t0 = time.time()
        for _ in range(reps):
            y, xs = simulate(m, dist, rng)
            res = jdr.JointDimReduction.from_blocks(y, dict(zip(NAMES, xs))).select_support(
                rank=1, fdr=0.1, independent_blocks=True)  # the per-block tests
            sel = res.table["selected"].to_numpy()
            p = res.table["pvalue"].to_numpy()
            fdp.append((sel & ~active).sum() / max(sel.sum(), 1))
            power.append((sel & active).sum() / active.sum())
            size.append(np.mean(p[~active] <= 0.05))
        fdp, power, size = map(np.asarray, (fdp, power, size))
        out[dist] = (fdp.mean(), fdp.std(ddof=1) / np.sqrt(reps), power.mean(),
                     size.mean(), size.std(ddof=1) / np.sqrt(reps), time.time() - t0)
    return out


def main():
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    out = run(reps)
    lines = [f"study_kblock_support: {reps} reps, m = 1000, widths {WIDTHS}, 3 active "
             "per block, fdr = 0.1 (BH over all blocks), rank 1",
             f"{'design':10s} {'FDR':>7s} {'MC SE':>7s} {'power':>7s} {'size@.05':>9s} "
             f"{'MC SE':>7s} {'seconds':>8s}"]
    for dist, (f, fse, pw, sz, szse, sec) in out.items():
        lines.append(f"{dist:10s} {f:7.3f} {fse:7.3f} {pw:7.3f} {sz:9.3f} {szse:7.3f} "
                     f"{sec:8.1f}")
    text = "\n".join(lines)
    print(text)
    with open("studies/results/study_kblock_support.txt", "w") as fh:
        fh.write(text + "\n")


if __name__ == "__main__":
    main()
