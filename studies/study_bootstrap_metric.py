"""Coverage of the bootstrap bound on the largest principal angle, measured in
each block's covariance metric (issue 18, item 9).

The bootstrap measures the angles between a replicate's subspace and the
full-sample one between ``L^T U*`` and ``L^T U_hat`` (``Sigma = L L^T`` the
full-sample covariance of the block; see docs/theory/bootstrap.md).  The
bound covers when the largest principal angle between the true subspace and
the estimate, in the *population* covariance metric (cosines: canonical
correlations between the true and the estimated reduced features), is at most
the bound.  For comparison the same replicates are also measured in raw units
(the old definition, ``--raw``), with the raw-unit truth.

Settings (m rows, widths n1 x n2, rank r, B = 199 pairs resamples, percentile
bound, the library's defaults):

- ``cond 1e2`` / ``1e3`` / ``1e4``: Gaussian blocks, then block a is recoded
  as ``a = G z`` with ``G = Q diag(g) Q^T`` (``Q`` a random rotation, ``g``
  log-spaced so that ``cond(Sigma_a) = cond(G)^2`` is 1e2, 1e3 or 1e4), the
  truth mapped along (``U_a = G^{-T} U``); bilinear response, m = 1000,
  n1 = n2 = 8, r = 2;
- ``binary t4``: the paper's BINARY model (``y ~ Bernoulli(exp(-||U^T a -
  V^T b||^2))``) with i.i.d. Student t(4) entries scaled to variance 1,
  m = 2000, n1 = n2 = 8, r = 2;
- ``widths 4 x 40``: Gaussian blocks, bilinear response, m = 1000, n1 = 4,
  n2 = 40, r = 2;
- the last two settings again with more rows (m = 5000 and m = 4000).

Rows ``metric``: the bound in the covariance metric against the true largest
angle in the population metric; ``sample``: the same bound against the true
largest angle in the full-sample metric (cosines: the sample canonical
correlations between the true and the estimated reduced features); ``raw``
(with ``--raw``): bound and truth in raw units.  Coverage is printed with its
Monte Carlo SE sqrt(p(1-p)/R), and the mean bound (degrees).  Replication j of setting i uses the data seed
``seed + 100003 i + 7919 j`` and the bootstrap seed ``(that) + 1``.

Run (single-threaded BLAS)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python studies/study_bootstrap_metric.py --reps 1000 --raw

Output recorded in ``studies/results/study_bootstrap_metric.txt``.
"""

from __future__ import annotations

import argparse
import time
import warnings
from unittest import mock

import numpy as np

import jdr_stats as jdr
from jdr_stats.core._linalg import principal_angles
from jdr_stats.exceptions import JDRWarning
from jdr_stats.inference import _replicates as bmod

LEVEL = 0.95

#: (label, m, n1, n2, r, model, condition number of Sigma_a)
SETTINGS = [
    ("cond 1e2", 1000, 8, 8, 2, "bilinear", 1e2),
    ("cond 1e3", 1000, 8, 8, 2, "bilinear", 1e3),
    ("cond 1e4", 1000, 8, 8, 2, "bilinear", 1e4),
    ("binary t4", 2000, 8, 8, 2, "binary-t4", 1.0),
    ("widths 4 x 40", 1000, 4, 40, 2, "bilinear", 1.0),
    # appended (the seeds of the settings above are unchanged): larger samples
    ("binary t4 m=5000", 5000, 8, 8, 2, "binary-t4", 1.0),
    ("widths 4 x 40 m=4000", 4000, 4, 40, 2, "bilinear", 1.0),
]


def _mixing(n: int, cond: float, rng: np.random.Generator) -> np.ndarray:
    """``G = Q diag(g) Q^T`` with ``cond(G G^T) = cond``."""
    q, _ = np.linalg.qr(rng.standard_normal((n, n)))
    g = np.logspace(0.0, 0.5 * np.log10(cond), n)
    return (q * g) @ q.T


def draw(m, n1, n2, r, model, cond, seed):
    """y, a, b, the true bases (in a's and b's coordinates) and Sigma_a, Sigma_b."""
    rng = np.random.default_rng(seed)
    U = jdr.simulate.random_basis(n1, r, seed=rng)
    V = jdr.simulate.random_basis(n2, r, seed=rng)
    if model == "binary-t4":
        za = rng.standard_t(4, (m, n1)) / np.sqrt(2.0)
        zb = rng.standard_t(4, (m, n2)) / np.sqrt(2.0)
        d = za @ U - zb @ V
        y = (rng.random(m) < np.exp(-np.einsum("ij,ij->i", d, d))).astype(float)
    else:
        za = rng.standard_normal((m, n1))
        zb = rng.standard_normal((m, n2))
        y = np.einsum("ij,ij->i", za @ U, zb @ V) + rng.standard_normal(m)
    G = _mixing(n1, cond, rng) if cond > 1 else np.eye(n1)
    a = za @ G.T  # a = G z: Sigma_a = G G^T, a^T U_a = z^T U with U_a = G^{-T} U
    Ua = np.linalg.solve(G.T, U)
    return y, a, zb, Ua, V, G @ G.T, np.eye(n2)


def _identity_factors(data):
    return np.eye(len(data.names["exog_a"])), np.eye(len(data.names["exog_b"]))


def one(setting, seed, n_boot, raw, interval="percentile"):
    _, m, n1, n2, r, model, cond = setting
    y, a, b, Ua, V, Sa, Sb = draw(m, n1, n2, r, model, cond, seed)
    res = jdr.JointDimReduction(y, a, b).fit(r)
    out = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JDRWarning)
        boot = res.bootstrap(n_boot=n_boot, seed=seed + 1, interval=interval)
        out["metric"] = boot.max_angle_bound(1 - LEVEL)
        if raw:
            with mock.patch.object(bmod, "covariance_factors", _identity_factors):
                rb = res.bootstrap(n_boot=n_boot, seed=seed + 1)
            out["raw"] = rb.max_angle_bound(1 - LEVEL)
    est = res.estimate

    def largest(sa, sb):
        ra, rb_ = np.linalg.cholesky(sa).T, np.linalg.cholesky(sb).T
        return (np.degrees(principal_angles(ra @ Ua, ra @ est.dir_a)).max(),
                np.degrees(principal_angles(rb_ @ V, rb_ @ est.dir_b)).max())

    true = {
        "metric": largest(Sa, Sb),
        "raw": largest(np.eye(len(Sa)), np.eye(len(Sb))),
    }
    out["sample"] = out["metric"]
    true["sample"] = largest(res.moments.cov_a, res.moments.cov_b)
    return {k: (true[k], (float(v["a"]), float(v["b"]))) for k, v in out.items()}


def _cell(cov, bounds):
    p = float(np.mean(cov))
    se = np.sqrt(p * (1 - p) / len(cov))
    return f"{p:.3f}+-{se:.3f} ({np.mean(bounds):.1f})"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n-boot", type=int, default=199)
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--raw", action="store_true", help="also measure in raw units")
    ap.add_argument("--only", type=str, default=None, help="run one setting (label)")
    ap.add_argument("--interval", default="percentile", choices=["percentile", "calibrated"])
    args = ap.parse_args()
    print(f"# B={args.n_boot}, {args.interval} bound, nominal {LEVEL:.0%}, seed={args.seed}; "
          "cells: coverage+-MC SE "
          "(mean bound, deg)", flush=True)
    for i, setting in enumerate(SETTINGS):
        if args.only and setting[0] != args.only:
            continue
        t0 = time.perf_counter()
        rows = [one(setting, args.seed + 100003 * i + 7919 * j, args.n_boot, args.raw, args.interval)
                for j in range(args.reps)]
        label, m, n1, n2, r = setting[:5]
        print(f"{label}: m={m}, n1={n1}, n2={n2}, r={r}, {args.reps} replications "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
        for metric in rows[0]:
            cells = []
            for k, block in enumerate("ab"):
                cov = [row[metric][0][k] <= row[metric][1][k] for row in rows]
                cells.append(f"block {block} " + _cell(cov, [row[metric][1][k] for row in rows]))
            print(f"  {metric:6s}: " + " | ".join(cells), flush=True)


if __name__ == "__main__":
    main()
