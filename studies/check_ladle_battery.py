"""Issue 19: the ladle with its noise edge on the robustness battery (narrow
designs, n1 n2 << m), against Luo and Li's criterion on the same replicates.

Every setting of ``studies/study_rank_robust.py`` with ``r >= 1`` (its
sizes, designs and seeds ``(seed, design index, r)``): per replication the
data are drawn as there, the ladle (``n_boot = 100``) is run, and Luo and
Li's criterion is recomputed from the same bootstrap replicates (same
``f``, ``phi`` without the edge).  The edge's signs come from a spawned
child of the generator, so every replication sees the study's data and the
Luo-Li column replays the study's ``ladle`` row; ``edge-next`` is the
variant that subtracts ``min(edge, next eigenvalue)`` (recomputed from the
same replicates and edge), ``edge-bound`` the variant whose edge comes from
the spectral test's cross-fitted bound (``check_ladle_width.edge_bound``).  Share choosing r, below r, above r, +- MC SE.
Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice -n 10 \\
        python studies/check_ladle_battery.py --reps 150
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import study_rank_robust as study  # studies/ is on sys.path when run as a script
from check_ladle_width import edge_bound

from jdr_stats.inference._rank_stats import WhitenedDesign
from jdr_stats.inference.rank_robust import ladle_rank
from jdr_stats.simulate import scenario


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=150)
    ap.add_argument("--edge-quantile", type=float, default=None,
                    help="policy.LADLE_EDGE_QUANTILE for this run (default: the library's)")
    ap.add_argument("--only", nargs="*", help="battery design names")
    args = ap.parse_args()
    if args.edge_quantile is not None:
        from jdr_stats import policy
        policy.LADLE_EDGE_QUANTILE = args.edge_quantile
        print(f"# LADLE_EDGE_QUANTILE = {args.edge_quantile}")
    warnings.simplefilter("ignore")
    print(f"# reps={args.reps}, n_boot={study.N_BOOT}, seeds=[{study.SEED}, design index, r] "
          "(study_rank_robust's); share choosing r (<r, >r) +- MC SE")
    worst = {"edge": 1.0, "luo-li": 1.0, "edge-next": 1.0, "edge-bound": 1.0}
    for j, sc, r, (m, n1, n2) in study.plan():
        if r == 0 or (args.only and sc.name not in args.only):
            continue
        t0 = time.time()
        rng = study.setting_rng(study.SEED, j, r)
        got = {"edge": [], "luo-li": [], "edge-next": [], "edge-bound": []}
        for _ in range(args.reps):
            sim = scenario(sc.name, m, n1, n2, r, signal=1.0, seed=rng)
            yc, aw, bw, u, s, v = study.whiten(sim.y, sim.a, sim.b)
            lad = ladle_rank(yc, aw, bw, u, s, v, n_boot=study.N_BOOT, seed=rng)
            lam = s[: lad.boot_var.size] ** 2 / (float(yc @ yc) / m)
            got["edge"].append(lad.rank)
            got["luo-li"].append(int(np.argmin(lad.boot_var + lam / (1 + lam.sum()))))
            # the variant: subtract min(edge, next eigenvalue) (theory 9, "untried")
            nxt = s[1: lam.size + 1] ** 2 / (float(yc @ yc) / m)
            nxt = np.concatenate([nxt, np.zeros(lam.size - nxt.size)])
            lt = np.clip(lam - np.minimum(lad.edge, nxt), 0.0, None)
            got["edge-next"].append(int(np.argmin(lad.boot_var + lt / (1 + lt.sum()))))
            w = WhitenedDesign(m=m, var_y=float(yc @ yc) / m, u=u, s=s, v=v, a=aw, b=bw, y=yc)
            got["edge-bound"].append(edge_bound(lad, w, np.random.default_rng(
                [study.SEED, j, r, len(got["edge"])])))
        cells = []
        for key, ks in got.items():
            k = np.array(ks)
            hit = np.mean(k == r)
            if not sc.weak:
                worst[key] = min(worst[key], hit)
            cells.append(f"{key}: {hit:.3f}+-{np.sqrt(hit * (1 - hit) / args.reps):.3f} "
                         f"({np.mean(k < r):.3f}, {np.mean(k > r):.3f})")
        weak = "  [weak last direction]" if sc.weak else ""
        print(f"{sc.name:<18} r={r} m={m} {n1}x{n2}  " + "  ".join(cells)
              + f"  ({time.time() - t0:.0f} s){weak}", flush=True)
    print("# lowest share choosing r over the non-weak settings: "
          + ", ".join(f"{key} {val:.3f}" for key, val in worst.items()))


if __name__ == "__main__":
    main()
