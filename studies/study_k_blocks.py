"""K >= 3 blocks: accuracy of the combined estimator under three piece
weightings and under the per-block and joint whitenings with correlated
blocks, size of the per-block rank test at the true rank (per-block
whitening: analytic influences; joint whitening: jackknife influences),
the share of fit("auto") choosing every block's true rank, and cost as K
grows.

Run: OPENBLAS_NUM_THREADS=1 python studies/study_k_blocks.py [reps] [rank_reps]
Output: studies/results/study_k_blocks.txt
"""

import pathlib
import sys
import time

import numpy as np

import jdr_stats as jdr
from jdr_stats.core.kestimate import block_factors
from jdr_stats.inference.kblock_rank import block_rank_table

OUT = pathlib.Path(__file__).parent / "results" / "study_k_blocks.txt"


def design(rng, m, widths, link, dist, rho=0.0):
    """Blocks Gaussian or t(5) (unit variance); with ``rho > 0`` equal widths
    and Cov(x_a, x_b) = rho I across blocks (one shared component)."""
    draw = rng.normal if dist == "gauss" else (
        lambda size: rng.standard_t(5, size=size) / np.sqrt(5 / 3))
    xs = [draw(size=(m, n)) for n in widths]
    if rho > 0:
        shared = draw(size=(m, widths[0]))
        xs = [np.sqrt(1 - rho) * x + np.sqrt(rho) * shared for x in xs]
    us = [np.linalg.qr(rng.normal(size=(n, 1)))[0] for n in widths]
    u = [(x @ b)[:, 0] for x, b in zip(xs, us)]
    if link == "pairwise":
        f = sum(u[k] * u[k + 1] for k in range(len(u) - 1))
    elif link == "three-way":
        f = u[0] * u[1] * u[2]
    else:  # mixed
        f = u[0] * u[1] + u[0] * u[1] * u[2] + (u[3] * u[1] if len(u) > 3 else 0)
    return f + 0.5 * rng.normal(size=m), xs, us


def angle(u, d):
    return float(np.degrees(np.max(jdr.metrics.principal_angles(u, d))))


def main(reps, rank_reps):
    lines = [f"# command: OPENBLAS_NUM_THREADS=1 python studies/study_k_blocks.py {reps} "
             f"{rank_reps}"]
    rng = np.random.default_rng(20260301)
    lines.append("## accuracy: mean largest principal angle (degrees) over blocks, "
                 f"{reps} reps, m = 1000, widths 8 each; MC SE in brackets")
    for K in (3, 4):
        for dist in ("gauss", "t5"):
            for link in ("pairwise", "three-way", "mixed"):
                if link == "three-way" and K == 4:
                    continue
                acc = {w: [] for w in ("unit", "sqrt", "columns")}
                for _ in range(reps):
                    y, xs, us = design(rng, 1000, (8,) * K, link, dist)
                    zs = [(x - x.mean(0)) @ np.linalg.inv(np.linalg.cholesky(np.cov(x.T, bias=True))).T
                          for x in xs]
                    yc = y - y.mean()
                    for w in acc:
                        f = block_factors(yc, zs, weighting=w)
                        involved = range(3) if link == "three-way" else range(K)
                        acc[w].append(np.mean([angle(us[k], f.factors[k][:, :1])
                                               for k in involved]))
                row = "  ".join(f"{w} {np.mean(v):5.1f} ({np.std(v) / np.sqrt(reps):.1f})"
                                for w, v in acc.items())
                lines.append(f"K={K} {dist:5s} {link:9s} {row}")
    lines.append("")
    lines.append(f"## accuracy under correlated blocks: mean largest angle (degrees) over the "
                 f"blocks, fit(1) per-block vs joint whitening, K = 3, Gaussian, m = 1000, "
                 f"widths 8, Cov(x_a, x_b) = rho I; {reps} reps, MC SE in brackets")
    for rho in (0.0, 0.3, 0.6):
        for link in ("pairwise", "three-way", "mixed"):
            acc = {"per-block": [], "joint": []}
            for _ in range(reps):
                y, xs, us = design(rng, 1000, (8, 8, 8), link, "gauss", rho)
                model = jdr.JointDimReduction.from_blocks(y, xs)
                for est in acc:
                    res = model.fit(1, independent_blocks=est == "per-block")
                    acc[est].append(np.mean([angle(us[k], d.to_numpy())
                                             for k, d in enumerate(res.directions.values())]))
            row = "  ".join(f"{e} {np.mean(v):5.1f} ({np.std(v) / np.sqrt(reps):.1f})"
                            for e, v in acc.items())
            lines.append(f"rho={rho:.1f} {link:9s} {row}")
    lines.append("")
    lines.append(f"## per-block rank test: rejection at 5% of H0 rank <= 1 (true rank 1) "
                 f"averaged over the 3 blocks, and fit('auto') choosing every block's rank 1; "
                 f"mixed link, K = 3, m = 600, widths 5; {rank_reps} reps; MC SE from the "
                 f"reps' block averages")
    for est, dist, rho in (("per-block", "gauss", 0.0), ("per-block", "t5", 0.0),
                           ("joint", "gauss", 0.0), ("joint", "gauss", 0.3),
                           ("joint", "gauss", 0.6), ("joint", "t5", 0.3)):
        rej, allok = [], []
        t0 = time.perf_counter()
        for _ in range(rank_reps):
            y, xs, _ = design(rng, 600, (5, 5, 5), "mixed", dist, rho)
            res = jdr.JointDimReduction.from_blocks(y, xs).fit(
                "auto", independent_blocks=est == "per-block")
            rej.append(np.mean([t.loc[1, "pvalue"] < 0.05 for t in res.rank_tests.values()]))
            allok.append(all(r == 1 for r in res.ranks.values()))
        p, q = np.mean(rej), np.mean(allok)
        lines.append(f"{est:9s} {dist:5s} rho={rho:.1f} size {p:.3f} "
                     f"(MC SE {np.std(rej) / np.sqrt(rank_reps):.3f})  all ranks right "
                     f"{q:.3f} (MC SE {np.sqrt(q * (1 - q) / rank_reps):.3f})  "
                     f"[{(time.perf_counter() - t0) / rank_reps:.2f} s/fit]")
        print(lines[-1], flush=True)
    lines.append("")
    lines.append("## cost: seconds of fit(1) and of fit('auto'), m = 1000, widths 8, "
                 "one BLAS thread, per-block whitening")
    for K in (3, 4, 5, 6):
        y, xs, _ = design(rng, 1000, (8,) * K, "pairwise", "gauss")
        model = jdr.JointDimReduction.from_blocks(y, xs)
        t0 = time.perf_counter()
        res = model.fit(1, independent_blocks=True)
        t1 = time.perf_counter()
        model.fit("auto", independent_blocks=True)
        t2 = time.perf_counter()
        lines.append(f"K={K} route {res.settings['route']['name']:6s} fit {t1 - t0:6.2f} s  "
                     f"auto {t2 - t1:6.2f} s")
    OUT.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100,
         int(sys.argv[2]) if len(sys.argv) > 2 else 150)
