"""K >= 3 blocks: accuracy of the combined estimator under three piece
weightings, size of the per-block rank test at the true rank, the share of
fit("auto") choosing every block's true rank, and cost as K grows.

Run: OPENBLAS_NUM_THREADS=1 python studies/study_k_blocks.py [reps]
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


def design(rng, m, widths, link, dist):
    if dist == "gauss":
        xs = [rng.normal(size=(m, n)) for n in widths]
    else:  # t(5), unit variance
        xs = [rng.standard_t(5, size=(m, n)) / np.sqrt(5 / 3) for n in widths]
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


def main(reps):
    lines = []
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
    lines.append(f"## per-block rank test: rejection at 5% of H0 rank <= 1 (true rank 1), "
                 f"and fit('auto') choosing every block's rank 1; mixed link, K = 3, "
                 f"m = 1000, widths 6; {reps} reps")
    for dist in ("gauss", "t5"):
        rej, allok = [], []
        for _ in range(reps):
            y, xs, _ = design(rng, 1000, (6, 6, 6), "mixed", dist)
            res = jdr.JointDimReduction.from_blocks(y, xs).fit("auto", independent_blocks=True)
            rej.append(np.mean([t.loc[1, "pvalue"] < 0.05 for t in res.rank_tests.values()]))
            allok.append(all(r == 1 for r in res.rank.values()))
        p, q = np.mean(rej), np.mean(allok)
        lines.append(f"{dist:5s} size {p:.3f} (MC SE {np.sqrt(p * (1 - p) / (3 * reps)):.3f}, "
                     f"blocks pooled)  all ranks right {q:.3f} "
                     f"(MC SE {np.sqrt(q * (1 - q) / reps):.3f})")
    lines.append("")
    lines.append("## cost: seconds of fit(1) and of fit('auto'), m = 1000, widths 8, "
                 "one BLAS thread")
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
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 100)
