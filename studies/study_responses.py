"""Simulation study of issue 21: categorical and multivariate responses, covariates.

Settings (n1 = n2 = 5, m = 1000, alpha = 0.05):

* categorical responses with 2, 3 and 6 classes, balanced and rare (one
  class with 5% of the rows), cut from ``t = a0 b0 + 0.5 e``: joint rank 1;
* multivariate responses, q = 2 and 5: shared (every column depends on
  ``a0 b0``: rank 1) and partly shared subspaces (column c on
  ``a_(c mod 2) b_(c mod 2)``: rank 2);
* confounded nulls: a numeric and a categorical confounder shift both blocks
  and the response, which depends on nothing else (rank 0); the rank test of
  ``r = 0`` without and with ``covariates=``, for a numeric and a
  three-class response.

For each, the default rank test (``method="robust"``: the robust test, for
q > 1 with the whitened response matrix and the rows in memory) and the
chi-square test: size at the true rank, power one below it, and the rank
``fit("auto")`` would choose (sequential tests).  Bootstrap: coverage of the
90% percentile bound on the largest angle (block a) for the 3-class and the
q = 2 partly shared settings.  A size is "held" within 5% +- 2 Monte Carlo SE.

Run (from the repository root; about 15 minutes on one core at the defaults)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 python studies/study_responses.py

Options: ``--reps`` (default 300), ``--n-perm`` (default 199), ``--boot-reps``
(default 100), ``--n-boot`` (default 99), ``--seed``.  Recorded output:
``studies/results/study_responses.txt``.
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings

import numpy as np
import pandas as pd

import jdr_stats as jdr
from jdr_stats.exceptions import AssumptionWarning, RareClassWarning

ALPHA = 0.05
M, N = 1000, 5


def _blocks(rng):
    return rng.normal(size=(M, N)), rng.normal(size=(M, N))


def categorical(rng, classes: int, rare: bool):
    a, b = _blocks(rng)
    t = a[:, 0] * b[:, 0] + 0.5 * rng.normal(size=M)
    if rare:  # one class of 5% at the top, the rest balanced
        probs = np.r_[np.full(classes - 1, 0.95 / (classes - 1)), 0.05]
    else:
        probs = np.full(classes, 1.0 / classes)
    cuts = np.quantile(t, np.cumsum(probs)[:-1])
    return pd.Categorical(np.digitize(t, cuts)), a, b, None, 1


def multivariate(rng, q: int, shared: bool):
    a, b = _blocks(rng)
    cols = []
    for c in range(q):
        j = 0 if shared else c % 2
        cols.append(rng.normal() * a[:, j] * b[:, j] + rng.normal(size=M))
    return np.column_stack(cols), a, b, None, 1 if shared else 2


def confounded(rng, response: str, adjust: bool):
    a, b = _blocks(rng)
    z = rng.normal(size=M)
    g = rng.integers(0, 3, M)
    shift = z + (g - 1.0)
    a = a + shift[:, None] * np.linspace(1.0, 0.0, N)
    b = b + shift[:, None] * np.linspace(0.0, 1.0, N)
    t = shift**2 + rng.normal(size=M)
    y = t if response == "numeric" else pd.Categorical(
        np.digitize(t, np.quantile(t, [1 / 3, 2 / 3])))
    cov = pd.DataFrame({"z": z, "g": pd.Categorical(g)}) if adjust else None
    return y, a, b, cov, 0


SETTINGS = [
    *[(f"categorical C={c} {'rare' if r else 'balanced'}", categorical, (c, r))
      for c in (2, 3, 6) for r in (False, True)],
    *[(f"multivariate q={q} {'shared' if s else 'partly shared'}", multivariate, (q, s))
      for q in (2, 5) for s in (True, False)],
    *[(f"confounded null, {resp} response, {'adjusted' if adj else 'unadjusted'}",
       confounded, (resp, adj)) for resp in ("numeric", "categorical") for adj in (False, True)],
]


def one_rep(make, args, rng, n_perm):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RareClassWarning)
        warnings.simplefilter("ignore", AssumptionWarning)
        y, a, b, cov, r = make(rng, *args)
        res = jdr.JointDimReduction(y, a, b, covariates=cov).fit(max(r, 1))
        out = {}
        for meth in ("robust", "chi2"):
            rt = res.rank_tests(meth, max_rank=min(r + 1, N - 1), n_perm=n_perm, seed=rng)
            p = rt.table["pvalue"].to_numpy()
            chosen = int(np.argmax(p > ALPHA)) if (p > ALPHA).any() else len(p)
            out[meth] = (p[r], p[r - 1] if r > 0 else np.nan, chosen, rt.method)
    return out, r


def coverage(make, args, rng, reps, n_boot, truth_a):
    hits = 0
    for _ in range(reps):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y, a, b, cov, r = make(rng, *args)
            res = jdr.JointDimReduction(y, a, b, covariates=cov).fit(r)
            boot = res.bootstrap(n_boot=n_boot, seed=rng, alpha=0.10)
        upper = boot.conf_int().loc[("a", "largest angle"), "upper"]
        angle = np.degrees(jdr.metrics.principal_angles(truth_a(r), res.directions_a).max())
        hits += angle <= upper
    return hits / reps


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=300)
    ap.add_argument("--n-perm", type=int, default=199)
    ap.add_argument("--boot-reps", type=int, default=100)
    ap.add_argument("--n-boot", type=int, default=99)
    ap.add_argument("--seed", type=int, default=20261126)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    se = np.sqrt(ALPHA * (1 - ALPHA) / args.reps)
    print(f"Issue 21 study: m={M}, n1=n2={N}, alpha={ALPHA}, reps={args.reps}, "
          f"n_perm={args.n_perm}, seed={args.seed}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, jdr_stats "
          f"{jdr.__version__}")
    print(f"size band 5% +- 2 MC SE = [{ALPHA - 2 * se:.4f}, {ALPHA + 2 * se:.4f}] "
          f"(MC SE {se:.4f})")
    print("\nsetting | r | method used | size at r (MC SE) | held | power at r-1 | "
          "P(chosen = r)")
    t_all = time.time()
    for title, make, sargs in SETTINGS:
        rows = {"robust": [], "chi2": []}
        r = 0
        for _ in range(args.reps):
            out, r = one_rep(make, sargs, rng, args.n_perm)
            for meth in rows:
                rows[meth].append(out[meth])
        for meth, vals in rows.items():
            size = np.mean([v[0] < ALPHA for v in vals])
            sse = np.sqrt(max(size * (1 - size), ALPHA * (1 - ALPHA)) / args.reps)
            held = abs(size - ALPHA) <= 2 * se
            power = np.nanmean([v[1] < ALPHA for v in vals]) if r > 0 else np.nan
            chosen = np.mean([v[2] == r for v in vals])
            used = vals[0][3]
            print(f"{title} | {r} | {meth}->{used} | {size:.3f} ({sse:.3f}) | "
                  f"{'yes' if held else 'NO'} | {power:.3f} | {chosen:.3f}", flush=True)
    print(f"\nBootstrap coverage of the 90% upper bound on the largest angle (block a), "
          f"{args.boot_reps} reps x n_boot={args.n_boot}:")
    truth = lambda r: np.eye(N)[:, :r]  # noqa: E731
    for title, make, sargs in [("categorical C=3 balanced", categorical, (3, False)),
                               ("multivariate q=2 partly shared", multivariate, (2, False))]:
        cov = coverage(make, sargs, rng, args.boot_reps, args.n_boot, truth)
        cse = np.sqrt(0.9 * 0.1 / args.boot_reps)
        print(f"{title}: coverage {cov:.3f} (MC SE {cse:.3f}; nominal 0.900)", flush=True)
    print(f"\ntotal time {time.time() - t_all:.0f} s")


if __name__ == "__main__":
    main()
