"""Issue 19, third weakness: the ladle's candidate set at width.

Luo and Li's largest candidate ``kmax = floor(p / log p)`` grows with the
width (52 at 300 x 300) and the ladle then chose it (bench_width).  For
each data set the ladle is run once with that ``kmax`` and its criterion
recomputed, from the same bootstrap, for the capped candidate set
``kmax' = min(floor(p / log p), e + 10)``, ``e`` the number of directions
with ``m s_j^2 / s_y^2`` above the normal-theory noise edge
``(sqrt(n1) + sqrt(n2))^2`` (``f0 = f / (1 - sum f)``, ``lam = phi / (1 - sum phi)``
recover the unnormalised parts).  Hit rate = share choosing the true r.
Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice -n 10 \\
        python benchmarks/check_ladle_width.py --reps 40
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference.rank_robust import ladle_from_chunks, ladle_kmax

DESIGNS = (("gaussian", 2000, 30, 3), ("t5", 2000, 30, 3), ("gaussian", 10000, 30, 5),
           ("gaussian", 10000, 100, 5), ("t5", 10000, 100, 5),
           ("gaussian", 10000, 200, 5), ("gaussian", 10000, 300, 5))


def recut(lad, kcap):
    """The criterion's argmin over k = 0..kcap from a run with a larger kmax."""
    f0 = lad.boot_var / (1.0 - lad.boot_var.sum())
    lam = lad.eig_part / (1.0 - lad.eig_part.sum())
    f0, lam = f0[: kcap + 1], lam[: kcap + 1]
    g = f0 / (1.0 + f0.sum()) + lam / (1.0 + lam.sum())
    return int(np.argmin(g))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--wide-reps", type=int, default=10,
                    help="replications of the designs with n >= 200")
    ap.add_argument("--n-boot", type=int, default=100)
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--n", type=int, nargs="*", help="only the designs of these widths")
    args = ap.parse_args()
    warnings.simplefilter("ignore")
    print(f"# reps={args.reps}, n_boot={args.n_boot}, seed=[{args.seed}, design index]; "
          "hit = P(chosen rank = r), +- MC SE")
    for idx, (name, m, n, r) in enumerate(DESIGNS):
        if args.n and n not in args.n:
            continue
        t0 = time.time()
        rng = np.random.default_rng([args.seed, idx])
        kluo = ladle_kmax(n, n)
        hits = {"luo-li": 0, "capped": 0}
        chosen = {"luo-li": [], "capped": []}
        reps = args.wide_reps if n >= 200 else args.reps
        for _ in range(reps):
            sim = jdr.simulate.scenario(name, m, n, n, r, seed=rng)
            res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(r)
            w = _whiten(res.model.data, res.moments, rows=True)
            lad = ladle_from_chunks(w.row_chunks(), w.var_y, w.u, w.s, w.v,
                                    n_boot=args.n_boot, kmax=kluo, rng=rng)
            edge = int(np.sum(w.m * w.s ** 2 / w.var_y > (2 * np.sqrt(n)) ** 2))
            kcap = min(kluo, edge + 10)
            for key, k in (("luo-li", lad.rank), ("capped", recut(lad, kcap))):
                hits[key] += k == r
                chosen[key].append(k)
        cells = "  ".join(
            f"{key}: hit {hits[key] / reps:.3f}+-"
            f"{np.sqrt(hits[key] * (reps - hits[key])) / reps ** 1.5:.3f} "
            f"median {np.median(chosen[key]):.0f}" for key in hits)
        print(f"{name:<9} m={m:<6} {n}x{n} r={r} kmax={kluo:<3} reps={reps} {cells}  ({time.time() - t0:.0f} s)",
              flush=True)


if __name__ == "__main__":
    main()
