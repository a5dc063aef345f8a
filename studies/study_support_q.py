"""FDR of ``select_support`` for a response of q > 1 columns (issue 21, item 4).

Designs (n1 = n2 = 20, the first 3 variables of each block active,
``abar_k = sum_{j<3} U_jk a_j``, ``bbar_k`` likewise, rank 2):

* ``cat3``: 3 balanced classes, ``class = argmax(abar_1 bbar_1 + e_1,
  abar_2 bbar_2 + e_2, e_3)``, Gaussian independent blocks (q = 2 indicators);
* ``cat3-rare``: the same with the third class shifted to about 5.6% of the rows;
* ``cat3-t5ar``: the same as ``cat3`` with elliptical heavy-tailed, correlated
  blocks (multivariate t with 5 df, AR(1) correlation 0.5 within each block);
* ``q2``: multivariate ``Y = (abar_1 bbar_1 + e_1, abar_2 bbar_2 + e_2)``,
  partly shared subspaces (each column one direction), Gaussian;
* ``q2-het``: ``q2`` with heteroscedastic noise ``e_c (1 + |abar_1|) / 2`` and
  t5 AR(1) blocks.

For each replication, ``model.select_support(rank=2, fdr=0.1, seed=...)``
(the default: conditional robust score test, wild bootstrap) and the marginal
test (``rank=None``); FDP = false selections / max(selections, 1) per block,
pooled over the two blocks; the FDR is its mean (Monte Carlo SE =
sd / sqrt(reps)); TPR the share of the 6 active variables selected; size the
share of the 34 inactive variables whose p-value is below 5%.  The FDR holds
when it is below 0.1 + 2 MC SE.

Run (from the repository root)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python studies/study_support_q.py \\
        --reps 200 --n-resamples 199 --seed 20261126

Recorded output: ``studies/results/study_support_q.txt``.
"""

from __future__ import annotations

import argparse
import platform
import time

import numpy as np
import pandas as pd

import jdr_stats as jdr

M, N, S, FDR = 1500, 20, 3, 0.1


def _blocks(rng, heavy: bool):
    a, b = rng.normal(size=(M, N)), rng.normal(size=(M, N))
    if heavy:  # AR(1) 0.5 correlation, multivariate t5 (elliptical)
        idx = np.arange(N)
        chol = np.linalg.cholesky(0.5 ** np.abs(idx[:, None] - idx[None, :]))
        a = a @ chol.T / np.sqrt(rng.chisquare(5, M) / 3)[:, None]
        b = b @ chol.T / np.sqrt(rng.chisquare(5, M) / 3)[:, None]
    return a, b


def _latent(rng, a, b):
    u = np.zeros((N, 2))
    u[:S] = rng.normal(size=(S, 2))
    v = np.zeros((N, 2))
    v[:S] = rng.normal(size=(S, 2))
    abar, bbar = a @ u, b @ v
    sa, sb = abar.std(axis=0), bbar.std(axis=0)
    return abar / sa, bbar / sb


def design(name: str, rng):
    heavy = name.endswith(("t5ar", "het"))
    a, b = _blocks(rng, heavy)
    abar, bbar = _latent(rng, a, b)
    t = abar * bbar  # (M, 2)
    if name.startswith("cat3"):
        third = np.full(M, 0.0 if name != "cat3-rare" else -1.6)
        score = np.column_stack([t, third]) + rng.normal(size=(M, 3))
        y = pd.Categorical(np.argmax(score, axis=1))
    else:
        noise = rng.normal(size=(M, 2))
        if name == "q2-het":
            noise *= (1 + np.abs(abar[:, :1])) / 2
        y = t + noise
    return y, a, b


def one(name: str, rng, n_resamples: int) -> dict[str, float]:
    y, a, b = design(name, rng)
    model = jdr.JointDimReduction(y, a, b)
    out = {}
    for test, rank in (("cond", 2), ("marg", None)):
        sup = model.select_support(rank=rank, fdr=FDR, n_resamples=n_resamples,
                                   seed=rng.integers(2**32))
        sel = np.r_[sup.table.loc["a"]["selected"].to_numpy(bool),
                    sup.table.loc["b"]["selected"].to_numpy(bool)]
        pv = np.r_[sup.table.loc["a"]["pvalue"].to_numpy(float),
                   sup.table.loc["b"]["pvalue"].to_numpy(float)]
        active = np.r_[np.arange(N) < S, np.arange(N) < S]
        fdp = [s[~act].sum() / max(s.sum(), 1)
               for s, act in ((sel[:N], active[:N]), (sel[N:], active[N:]))]
        out[f"{test}_fdp"] = float(np.mean(fdp))
        out[f"{test}_tpr"] = float(sel[active].mean())
        out[f"{test}_size"] = float((pv[~active] < 0.05).mean())
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n-resamples", type=int, default=199)
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--designs", default="cat3,cat3-rare,cat3-t5ar,q2,q2-het")
    args = ap.parse_args()
    print(f"study_support_q: m={M}, n1=n2={N}, {S} active per block, rank 2, BH at {FDR}; "
          f"reps={args.reps}, B={args.n_resamples}, seed={args.seed}; "
          f"numpy {np.__version__}, python {platform.python_version()}")
    print("FDR held when FDR <= 0.1 + 2 MC SE; size: share of null p-values < 0.05")
    root = np.random.SeedSequence(args.seed)
    for name, seq in zip(args.designs.split(","), root.spawn(5), strict=False):
        rng = np.random.default_rng(seq)
        t0 = time.perf_counter()
        rows = pd.DataFrame([one(name, rng, args.n_resamples) for _ in range(args.reps)])
        for test in ("cond", "marg"):
            fdp = rows[f"{test}_fdp"]
            fdr, se = fdp.mean(), fdp.std(ddof=1) / np.sqrt(len(fdp))
            size = rows[f"{test}_size"].mean()
            size_se = np.sqrt(size * (1 - size) / (len(fdp) * 2 * (N - S)))
            held = "held" if fdr <= FDR + 2 * se else "NOT HELD"
            print(f"{name:10s} {test}: FDR {fdr:.4f} (MC SE {se:.4f}) {held}; "
                  f"TPR {rows[f'{test}_tpr'].mean():.3f}; size {size:.4f} "
                  f"(MC SE >= {size_se:.4f})")
        print(f"{name:10s} {time.perf_counter() - t0:.0f} s", flush=True)


if __name__ == "__main__":
    main()
