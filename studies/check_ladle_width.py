"""Issue 19: the ladle at width.

Luo and Li's eigenvalue part ``phi(k) = lam_{k+1} / (1 + sum lam)`` is flat
across the noise eigenvalues when they do not decay (``n1 n2`` comparable
with ``m``), and the ladle chose its largest candidate (52 instead of 5 at
300 x 300, m = 1e4).  The criterion now counts only the excess of
``lam_{k+1}`` over the noise edge estimated from the same bootstrap
replicates (theory section 9).  For each data set the ladle is run once
(new criterion, ``edge``) and Luo and Li's criterion (``luo-li``) is
recomputed from the same replicates (same ``f``, ``phi`` without the edge).
Hit rate = share choosing the true r, +- its MC SE.  Also printed: the
median over the replications of ``m lam_{r+1}`` (the largest noise
eigenvalue) and of ``m e_r`` (its estimated edge), and the ladle's CPU time
per data set.  Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice -n 10 \\
        python studies/check_ladle_width.py --reps 40 --wide-reps 10
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.inference._rank_stats import _whiten
from jdr_stats.inference.rank_robust import ladle_from_chunks

#: (design, m, n1 = n2, r, signal= of simulate.scenario, which multiplies the
#: squared singular values); the first seven are the first run's settings;
#: then 300 x 300 at m = 2000..5000 with stronger signals (the noise edge
#: grows like 1 / m, and the squared singular values, in units of var(y), are at
#: most about 1 / r: at m = 3000 and signal 3 the third direction sits at the edge)
DESIGNS = (("gaussian", 2000, 30, 3, 1.0), ("t5", 2000, 30, 3, 1.0), ("gaussian", 10000, 30, 5, 1.0),
           ("gaussian", 10000, 100, 5, 1.0), ("t5", 10000, 100, 5, 1.0),
           ("gaussian", 10000, 200, 5, 1.0), ("gaussian", 10000, 300, 5, 1.0),
           ("t5", 10000, 300, 5, 1.0), ("gaussian", 3000, 300, 3, 3.0),
           ("gaussian", 5000, 300, 3, 3.0), ("gaussian", 3000, 300, 2, 6.0),
           ("gaussian", 2000, 300, 1, 8.0))


def luo_li(lad, s, var_y):
    """Luo and Li's criterion's argmin from the same replicates."""
    lam = s[: lad.boot_var.size] ** 2 / var_y
    return int(np.argmin(lad.boot_var + lam / (1.0 + lam.sum())))


def edge_next(lad, s, var_y):
    """The variant subtracting min(edge, next eigenvalue) (theory 9), same replicates."""
    lam = s[: lad.boot_var.size] ** 2 / var_y
    nxt = s[1: lam.size + 1] ** 2 / var_y
    nxt = np.concatenate([nxt, np.zeros(lam.size - nxt.size)])
    lt = np.clip(lam - np.minimum(lad.edge, nxt), 0.0, None)
    return int(np.argmin(lad.boot_var + lt / (1.0 + lt.sum())))


def edge_bound(lad, w, rng):
    """The variant whose edge is the 0.9 quantile of 20 sign-flip draws of the
    spectral test's cross-fitted bound (theory 6e) at k = h, h the directions
    above twice the library's edge, scaled to every k as the library's."""
    from jdr_stats.inference._ladle_criterion import _mp_edge, excess_part
    from jdr_stats.inference._rank_spectral import _SpectralBatch

    lam = w.s[: lad.boot_var.size] ** 2 / w.var_y
    h = min(int(np.sum(lam > 2.0 * lad.edge)), lam.size - 1)
    draws = _SpectralBatch(w, h, rng)([np.random.default_rng(int(x))
                                       for x in rng.integers(2**32, size=20)])[:, 0].min(axis=1) / w.m
    ks = np.arange(lam.size, dtype=float)
    n1, n2 = w.n1, w.n2
    edge = np.quantile(draws, 0.9) * _mp_edge(n1, n2, ks) / _mp_edge(n1, n2, np.array(float(h)))
    return int(np.argmin(lad.boot_var + excess_part(lam, edge)))


def run(idx, name, m, n, r, reps, n_boot, seed, strength):
    rng = np.random.default_rng([seed, idx])
    keys = ("edge", "luo-li", "edge-next", "edge-bound")
    chosen = {key: [] for key in keys}
    noise, edge, cpu = [], [], 0.0
    for _ in range(reps):
        sim = jdr.simulate.scenario(name, m, n, n, r, signal=strength, seed=rng)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(r)
        w = _whiten(res.model.data, res.moments, rows=True)
        t0 = time.process_time()
        lad = ladle_from_chunks(w.chunks, w.var_y, w.u, w.s, w.v, n_boot=n_boot, rng=rng)
        cpu += time.process_time() - t0
        chosen["edge"].append(lad.rank)
        chosen["luo-li"].append(luo_li(lad, w.s, w.var_y))
        chosen["edge-next"].append(edge_next(lad, w.s, w.var_y))
        chosen["edge-bound"].append(edge_bound(lad, w, np.random.default_rng([seed, idx, len(noise)])))
        noise.append(m * w.s[r] ** 2 / w.var_y)
        edge.append(m * lad.edge[r])
    cells = []
    for key in keys:
        k = np.array(chosen[key])
        hit = np.mean(k == r)
        cells.append(f"{key}: hit {hit:.3f}+-{np.sqrt(hit * (1 - hit) / reps):.3f} "
                     f"(<r {np.mean(k < r):.2f}, >r {np.mean(k > r):.2f}, median {np.median(k):.0f})")
    return ("  ".join(cells) + f"  m*lam_(r+1) {np.median(noise):.0f}, m*edge_r {np.median(edge):.0f}"
            f"  ladle cpu {cpu / reps:.1f} s/fit")


def timing(n: int, m: int, seed: int) -> str:
    """Wall time of ``fit("auto", rank_method="ladle")`` in plain fits (best of
    3 plain fits and of 2 ladle fits, measured in the same minute), and of
    the edge's sign-flip pass alone."""
    from jdr_stats.inference._ladle_criterion import noise_edge

    sim = jdr.simulate.scenario("gaussian", m, n, n, 5, seed=seed)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    fits = []
    for _ in range(3):
        t0 = time.perf_counter()
        res = model.fit(5)
        fits.append(time.perf_counter() - t0)
    ladles = []
    for _ in range(2):
        t0 = time.perf_counter()
        lad = model.fit("auto", rank_method="ladle", seed=0)
        ladles.append(time.perf_counter() - t0)
    w = _whiten(res.model.data, res.moments, rows=True)
    t0 = time.perf_counter()
    noise_edge(w.chunks, w.u, w.s, w.v, 5, w.var_y, 10, np.random.default_rng(0))
    t_edge = time.perf_counter() - t0
    return (f"time {n}x{n} m={m}: plain fit {min(fits):.2f} s, fit('auto', rank_method='ladle') "
            f"{min(ladles):.1f} s = {min(ladles) / min(fits):.0f} fits (chose {lad.rank}); "
            f"of which the edge's sign-flip pass {t_edge:.1f} s")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=40)
    ap.add_argument("--edge-quantile", type=float, default=None,
                    help="policy.LADLE_EDGE_QUANTILE for this run (default: the library's)")
    ap.add_argument("--wide-reps", type=int, default=10,
                    help="replications of the designs with n >= 200")
    ap.add_argument("--n-boot", type=int, default=100)
    ap.add_argument("--seed", type=int, default=20261126)
    ap.add_argument("--only", type=int, nargs="*", help="indices into DESIGNS")
    ap.add_argument("--time", type=int, nargs=2, metavar=("N", "M"),
                    help="only time the ladle at n1 = n2 = N, m = M")
    args = ap.parse_args()
    if args.edge_quantile is not None:
        from jdr_stats import policy
        policy.LADLE_EDGE_QUANTILE = args.edge_quantile
        print(f"# LADLE_EDGE_QUANTILE = {args.edge_quantile}")
    warnings.simplefilter("ignore")
    if args.time:
        print(timing(*args.time, seed=args.seed))
        return
    print(f"# reps={args.reps} (n >= 200: {args.wide_reps}), n_boot={args.n_boot}, "
          f"seed=[{args.seed}, design index]; hit = P(chosen rank = r) +- MC SE")
    for idx, (name, m, n, r, strength) in enumerate(DESIGNS):
        if args.only is not None and idx not in args.only:
            continue
        t0 = time.time()
        reps = args.wide_reps if n >= 200 else args.reps
        line = run(idx, name, m, n, r, reps, args.n_boot, args.seed, strength)
        print(f"[{idx}] {name:<9} m={m:<6} {n}x{n} r={r} signal={strength:g} reps={reps} {line}  ({time.time() - t0:.0f} s)",
              flush=True)


if __name__ == "__main__":
    main()
