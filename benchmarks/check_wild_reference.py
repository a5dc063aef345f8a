"""A wild bootstrap of the rank-k statistic, tried as a reference at width
(issue 19, item 1; theory 6b, "At d/m = 44"): not adopted.

Null world: ``X* = X_k + (1/m) sum_i w_i psi_i``, ``X_k`` the rank-k
truncation of the whitened cross moment (rotated frame), ``psi_i =
y_i a_i b_i^T - X`` plus the whitening's first-order terms on ``X_k``,
``w_i`` Mammen's two-point weights (mean 0, variance 1, third moment 1, so
that each row's self-influence is kept).  The replicate's excess
``T* = Lambda_k* - tau*`` (``tau*`` from the replicate's own directions and
weights) is compared with the data's ``T = Lambda_k - tau``, ``tau`` the
plain ``sum y_i^2 |a_i0|^2 |b_i0|^2 / (m s2)`` in both.  Prints, over
samples of a battery design at the true rank, the means and variances of
``T`` (and of the library's ``Lambda_k - tau``) against the replicates'.
Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/check_wild_reference.py exp-response 2000 60 120
"""

from __future__ import annotations

import sys
import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference._robust_core import robust_moments


def mammen(rng: np.random.Generator, size: int) -> np.ndarray:
    s5 = np.sqrt(5.0)
    return np.where(rng.random(size) < (s5 + 1) / (2 * s5), -(s5 - 1) / 2, (s5 + 1) / 2)


def plain_tau(y, al, be, uk, vk, wt, s2):
    pa = np.sum(al**2, 1) - np.sum((al @ uk) ** 2, 1)
    pb = np.sum(be**2, 1) - np.sum((be @ vk) ** 2, 1)
    return float(np.sum(wt**2 * y**2 * pa * pb) / (len(y) * s2))


def wild(w, k: int, nb: int, rng: np.random.Generator) -> tuple[float, np.ndarray]:
    """The data's T and nb replicates' T*."""
    y, al, be = w.in_memory()
    m, n1, n2, s, s2 = w.m, w.n1, w.n2, w.s, w.var_y
    x = np.zeros((n1, n2))
    x[np.arange(s.size), np.arange(s.size)] = s
    xk = np.zeros((n1, n2))
    xk[np.arange(k), np.arange(k)] = s[:k]
    t = w.statistic(k) - plain_tau(y, al, be, np.eye(n1, k), np.eye(n2, k), 1.0, s2)
    out = np.empty(nb)
    for b in range(nb):
        wt = mammen(rng, m)
        wbar = wt.mean()
        e = (al * (wt * y)[:, None]).T @ be / m - wbar * x
        ga = (al * wt[:, None]).T @ al[:, :k] / m
        ga[:k] -= wbar * np.eye(k)
        gb = (be * wt[:, None]).T @ be[:, :k] / m
        gb[:k] -= wbar * np.eye(k)
        e[:, :k] -= 0.5 * ga * s[:k]
        e[:k, :] -= 0.5 * (s[:k, None] * gb.T)
        u, sv, vt = np.linalg.svd(xk + e, full_matrices=False)
        out[b] = m * np.sum(sv[k:] ** 2) / s2 - plain_tau(y, al, be, u[:, :k], vt[:k].T, wt, s2)
    return t, out


def main() -> None:
    warnings.simplefilter("ignore")
    name, m, n, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    r, nb = 2, 49
    rng = np.random.default_rng([5, m, n])
    rows = []
    for _ in range(reps):
        sim = jdr.simulate.scenario(name, m, n, n, r, seed=rng)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(r)
        w = _whiten(res.model.data, res.moments, rows="rotated")
        t, ts = wild(w, r, nb, rng)
        w.robust(0)
        mom = robust_moments(w.row_chunks(), w.cache["rfirst"], r, reference="corrected")
        rows.append((w.statistic(r) - mom.tau, t, ts.mean(), ts.var(ddof=1), mom.bias))
    x = np.array(rows)
    print(f"{name} m={m} {n}x{n} r={r} reps={reps}, {nb} replicates each, seed [5, m, n]")
    print(f"  mean: Lambda - tau (library) {x[:, 0].mean():.1f}, T {x[:, 1].mean():.1f} "
          f"+- {x[:, 1].std(ddof=1) / np.sqrt(reps):.1f}, replicates' T* {x[:, 2].mean():.1f}, "
          f"library B {x[:, 4].mean():.1f}")
    print(f"  variance: T {x[:, 1].var(ddof=1):.0f}, replicates' T* (mean within sample) "
          f"{x[:, 3].mean():.0f}")


if __name__ == "__main__":
    main()
