"""Robust rank tests on the shared battery: size, power, selection, run time.

For every design of :data:`jdr_stats.simulate.BATTERY` and three nulls
(``H0: rank 0`` with ``signal=0``; ``H0: rank 1`` with ``r = 1``;
``H0: rank 2`` with ``r = 2``, each tested at the true rank), sizes
``(m, n1, n2)`` cycle through ``CONFIGS`` (m from 1000 to 5000, n from 5 to
15).  Every replication draws one data set and runs, on the same data:

* ``chi2``: ``Lambda_k`` against chi-square((n1-k)(n2-k)) (normal theory);
* ``general``: the version-0.1 general test (Imhof, shrunk weights);
* ``general-plugin``: Imhof with the plug-in weights eig(Omega) / s_y^2;
* ``wald-chi2``: the Wald statistic ``T_k`` against chi-square(d);
* ``wald``: ``T_k`` against Hotelling's F(d, m - d) (the candidate default);
* ``general-fs`` (opt-in): ``Lambda_k`` against a scaled chi-square with its
  finite-sample mean and variance (section 5 of the theory page);

for ``k = 0..r`` (the rows ``k < r`` give the power of each method and the
sequential choice), and the ladle estimator (``n_boot`` Poisson-bootstrap
replicates).  Target: size within ``alpha +- (2.5 MC SE + 0.005)``.

A second part measures power on Gaussian designs (alternatives ``r = k + 1``
with strong and weak last directions), a third the rank of the cross moment
under the paper's cross-correlated design (rho = 0.2, r = 1).

The recorded outputs come from two runs on the same data sets (every
setting's generator is seeded by ``(seed, design, r)`` and the ladle draws
from it, so runs with the same ``--ladle-reps`` see the same data)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python studies/study_rank_robust.py \
        --reps 400 --ladle-reps 150 --methods chi2 general wald \
        --out studies/results/study_rank_robust.txt
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python studies/study_rank_robust.py \
        --reps 400 --ladle-reps 150 --methods chi2 general-fs --no-corr \
        --out studies/results/study_rank_robust_fs.txt

and the issue's two settings at their sizes::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python studies/study_rank_robust.py \
        --reps 400 --ladle-reps 0 --only lognormal-noise t5 --nulls 2 --config 2000 10 10 \
        --methods chi2 general general-fs wald --no-power --no-corr \
        --out studies/results/study_rank_robust_issue.txt

``general-fs`` is ``rank_tests(method="robust")``, the default.  The
screening run (200 replications, four designs, also ``general-plugin`` and
``wald-chi2``) is ``studies/results/study_rank_robust_screen.txt``.

``--only NAME`` runs one battery design, ``--nulls 2`` one null, ``--methods``
a subset; every setting has its own seed ``(seed, design index, r)`` and
sizes, so a subset replays the full run's numbers.  The recorded output is ``studies/results/study_rank_robust.txt``.
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time

import numpy as np
from scipy import stats

import jdr_stats as jdr
from jdr_stats.inference._rank_stats import WhitenedDesign
from jdr_stats.inference.rank_methods.general import general_weights
from jdr_stats.inference.chi2mix import weighted_chi2_sf
from jdr_stats.inference.rank_robust import (
    complement_block,
    complement_moments,
    frobenius_from_moments,
    ladle_rank,
    wald_from_moments,
)
from jdr_stats.simulate import BATTERY, scenario

ALPHA = 0.05
SEED = 20261126
#: (m, n1, n2) cycled over the settings
CONFIGS = ((1000, 15, 15), (2000, 10, 10), (3000, 8, 6), (5000, 12, 8), (1500, 5, 5))
METHODS = ("chi2", "general", "general-fs", "wald")
N_BOOT = 100


def whiten(y, a, b):
    """Centred y, sample-whitened blocks and the full SVD of X_lin."""
    m = y.shape[0]
    yc = y - y.mean()
    ac = a - a.mean(axis=0)
    bc = b - b.mean(axis=0)
    la = np.linalg.cholesky(ac.T @ ac / m)
    lb = np.linalg.cholesky(bc.T @ bc / m)
    aw = np.linalg.solve(la, ac.T).T
    bw = np.linalg.solve(lb, bc.T).T
    x = aw.T @ (yc[:, None] * bw) / m
    u, s, vt = np.linalg.svd(x, full_matrices=True)
    return yc, aw, bw, u, s, vt.T


def pvalues_at(yc, aw, bw, u, s, v, k, methods):
    m, n1, n2 = aw.shape[0], aw.shape[1], bw.shape[1]
    var_y = float(yc @ yc) / m
    lam_stat = m * float(np.sum(s[k:] ** 2)) / var_y
    d = (n1 - k) * (n2 - k)
    out = {}
    if "chi2" in methods:
        out["chi2"] = float(stats.chi2.sf(lam_stat, d))
    if "general" in methods:
        w = WhitenedDesign(m=m, var_y=var_y, u=u, s=s, v=v, a=aw, b=bw, y=yc)
        lam, _, _ = general_weights(w, k)
        out["general"] = float(weighted_chi2_sf(lam_stat, lam))
    need = {"general-plugin", "wald-chi2", "wald", "general-fs"} & set(methods)
    if need:
        chunks = lambda: iter([(yc, aw, bw)])  # noqa: E731
        mom = complement_moments(chunks, u[:, k:], v[:, k:], k)
        if "general-plugin" in methods:
            ev = np.clip(np.linalg.eigvalsh(mom.omega - np.outer(mom.mean, mom.mean)), 0, None)
            out["general-plugin"] = float(weighted_chi2_sf(lam_stat, ev / var_y))
        if "general-fs" in methods:
            out["general-fs"] = frobenius_from_moments(mom, s).pvalue
        if not {"wald-chi2", "wald"} & set(methods):
            return out
        wr = wald_from_moments(mom, complement_block(s, k, n1, n2).reshape(-1))
        if "wald-chi2" in methods:
            out["wald-chi2"] = float(stats.chi2.sf(wr.statistic, wr.df1))
        if "wald" in methods:
            out["wald"] = wr.pvalue
    return out


#: methods computed at the true rank only (size), not at k < r (power, selection)
SIZE_ONLY = ("general",)


def run_setting(name, r, m, n1, n2, reps, methods, ladle, rng, weak_strength=None):
    """p-values (reps x (r+1)) per method and ladle choices, one setting.

    The ladle runs on the first ``ladle`` replications; the methods in
    ``SIZE_ONLY`` only at ``k = r`` (to keep the study's CPU time down).
    """
    signal = 0.0 if r == 0 else 1.0
    r_draw = max(r, 1)
    pv = {meth: np.full((reps, r + 1), np.nan) for meth in methods}
    lad = np.full(reps, -1)
    times = {meth: 0.0 for meth in methods}
    times["ladle"] = 0.0
    kw = {} if weak_strength is None else {"weak_strength": weak_strength}
    for i in range(reps):
        sim = scenario(name, m, n1, n2, r_draw, signal=signal, seed=rng, **kw)
        yc, aw, bw, u, s, v = whiten(sim.y, sim.a, sim.b)
        for k in range(r + 1):
            for meth in methods:
                if meth in SIZE_ONLY and k < r:
                    continue
                t0 = time.process_time()
                pv[meth][i, k] = pvalues_at(yc, aw, bw, u, s, v, k, (meth,))[meth]
                times[meth] += time.process_time() - t0
        if i < ladle and r >= 1:
            t0 = time.process_time()
            lad[i] = ladle_rank(yc, aw, bw, u, s, v, n_boot=N_BOOT, seed=rng).rank
            times["ladle"] += time.process_time() - t0
    return pv, lad, times


def selected(p: np.ndarray, alpha: float = ALPHA) -> np.ndarray:
    """First k not rejected among the computed rows (r + 1 if all reject)."""
    rej = p <= alpha
    out = np.full(p.shape[0], p.shape[1])
    for i in range(p.shape[0]):
        nz = np.flatnonzero(~rej[i])
        if nz.size:
            out[i] = nz[0]
    return out


def band(reps: int) -> tuple[float, float, float]:
    se = np.sqrt(ALPHA * (1 - ALPHA) / reps)
    half = 2.5 * se + 0.005
    return se, ALPHA - half, ALPHA + half


def plan() -> list[tuple[int, object, int, tuple[int, int, int]]]:
    """Every setting: (design index, Scenario, null rank r, (m, n1, n2)).

    Sizes and seeds depend on the setting only, so ``--only``/``--nulls``
    (and the slow test) replay the full run's numbers.
    """
    out = []
    for j, sc in enumerate(BATTERY):
        for r in (0, 1, 2):
            if r == 0 and (sc.weak or sc.model == "binary"):
                continue  # same data as the non-weak null / no signal scale
            out.append((j, sc, r, CONFIGS[len(out) % len(CONFIGS)]))
    return out


def setting_rng(seed: int, j: int, r: int) -> np.random.Generator:
    return np.random.default_rng([seed, j, r])


def battery_part(args) -> list[str]:
    lines = []
    se, lo, hi = band(args.reps)
    lines.append(
        f"size band alpha +- (2.5 MC SE + 0.005) = [{lo:.4f}, {hi:.4f}] (MC SE at 0.05: {se:.4f})"
    )
    lines.append("size = rejection rate of H0: rank <= r at the true rank r; "
                 "+- its MC SE sqrt(p(1-p)/reps); '*' outside the band")
    lines.append("power = rejection of H0: rank <= r-1; sel = share choosing r by the "
                 "sequential tests (k = 0..r) or by the ladle (first ladle-reps replications); "
                 f"{', '.join(SIZE_ONLY)}: size only; cpu ms per replication (all k)")
    fails = {meth: [] for meth in args.methods}
    summary = []
    for j, sc, r, (m, n1, n2) in plan():
        if (args.only and sc.name not in args.only) or r not in args.nulls:
            continue
        rng = setting_rng(args.seed, j, r)
        if args.config:
            m, n1, n2 = args.config
        t0 = time.time()
        pv, lad, times = run_setting(sc.name, r, m, n1, n2, args.reps, args.methods,
                                     args.ladle, rng)
        wall = time.time() - t0
        lines.append("")
        lines.append(f"== {sc.name}: H0 rank {r}, m={m}, n1={n1}, n2={n2} ({wall:.0f} s)"
                     f"{'  [weak last direction]' if sc.weak else ''}")
        lines.append(f"{'method':<16}{'size':>8}{'+-SE':>8}{'':>2}{'power':>8}{'sel=r':>8}"
                     f"{'sel<r':>8}{'sel>r':>8}{'cpu ms':>8}")
        for meth in args.methods:
            p = pv[meth]
            size = float(np.mean(p[:, r] <= ALPHA))
            sse = np.sqrt(max(size * (1 - size), 1e-12) / args.reps)
            flag = "*" if not lo <= size <= hi else " "
            if flag == "*":
                fails[meth].append(f"{sc.name}/H0 rank {r}: {size:.3f}")
            power = float(np.mean(p[:, r - 1] <= ALPHA)) if r >= 1 else np.nan
            sel = selected(p) if not np.isnan(p).any() else np.full(args.reps, -1)
            if meth in SIZE_ONLY:
                tail = f"{'-':>8}{'-':>8}{'-':>8}{'-':>8}"
                share = np.nan
            else:
                share = float(np.mean(sel == r))
                tail = (f"{power:>8.3f}{share:>8.3f}{np.mean(sel < r):>8.3f}"
                        f"{np.mean(sel > r):>8.3f}")
            lines.append(
                f"{meth:<16}{size:>8.3f}{sse:>8.3f}{flag:>2}{tail}"
                f"{1000 * times[meth] / args.reps:>8.1f}"
            )
            summary.append((sc.name, r, meth, size, sse, share, sc.weak))
        if args.ladle and r >= 1:
            nl = min(args.ladle, args.reps)
            ll = lad[:nl]
            lines.append(
                f"{'ladle (' + str(nl) + ')':<16}{'':>8}{'':>8}{'':>2}{'':>8}"
                f"{np.mean(ll == r):>8.3f}{np.mean(ll < r):>8.3f}{np.mean(ll > r):>8.3f}"
                f"{1000 * times['ladle'] / nl:>8.1f}"
            )
            summary.append((sc.name, r, "ladle", np.nan, np.nan, float(np.mean(ll == r)),
                            sc.weak))
        print("\n".join(lines[-(len(args.methods) + 3 + (args.ladle and r >= 1)):]),
              flush=True)
    lines.append("")
    lines.append("== settings outside the size band, by method")
    for meth in args.methods:
        lines.append(f"{meth:<16}{len(fails[meth]):>3}  " + "; ".join(fails[meth]))
    lines.append("")
    lines.append("== lowest share choosing the true r over the non-weak settings with r >= 1")
    for meth in list(args.methods) + (["ladle"] if args.ladle else []):
        rows = [(x[5], x[0], x[1]) for x in summary
                if x[2] == meth and x[1] >= 1 and not x[6] and not np.isnan(x[5])]
        if rows:
            worst = min(rows)
            lines.append(f"{meth:<16}{worst[0]:.3f} ({worst[1]}, r={worst[2]})")
    return lines


def power_part(args, rng) -> list[str]:
    """Gaussian designs, alternatives r = k + 1; the last direction of strength g.

    The methods are those of ``--methods`` (p-values draw no random numbers,
    so every method sees the same data sets)."""
    pm = tuple(args.methods)
    lines = ["", "== power on Gaussian designs (alternative r = k + 1, last direction "
             f"of strength g; reps = {args.power_reps})"]
    lines.append(f"{'k':>2} {'m':>5} {'n1':>3} {'n2':>3} {'g':>6}" + "".join(
        f"{meth:>18}" for meth in pm))
    cases = [
        (0, 1000, 10, 10, 0.12), (0, 1000, 10, 10, 0.18),
        (0, 2000, 15, 15, 0.10), (0, 2000, 15, 15, 0.14),
        (1, 1000, 10, 10, 0.12), (1, 1000, 10, 10, 0.18),
        (1, 3000, 8, 6, 0.07), (1, 3000, 8, 6, 0.10),
    ]
    for k, m, n1, n2, g in cases:
        strengths = [1.0] * k + [g]
        rej = {meth: 0 for meth in pm}
        for _ in range(args.power_reps):
            sim = jdr.simulate.bilinear(m, n1, n2, k + 1, strengths=strengths, seed=rng)
            yc, aw, bw, u, s, v = whiten(sim.y, sim.a, sim.b)
            p = pvalues_at(yc, aw, bw, u, s, v, k, pm)
            for meth in rej:
                rej[meth] += p[meth] <= ALPHA
        row = f"{k:>2} {m:>5} {n1:>3} {n2:>3} {g:>6.2f}"
        for meth in pm:
            pw = rej[meth] / args.power_reps
            row += f"{pw:>12.3f} +-{np.sqrt(pw * (1 - pw) / args.power_reps):.3f}"
        lines.append(row)
        print(lines[-1], flush=True)
    return lines


def correlated_part(args, rng) -> list[str]:
    """The paper's rho = 0.2 cross-correlated design: the cross moment's rank exceeds r."""
    m, n, reps = 200_000, 10, args.corr_reps
    rej = {"chi2": 0, "wald": 0}
    for _ in range(reps):
        sim = jdr.simulate.bilinear(m, n, n, 1, design="correlated", rho=0.2, seed=rng)
        yc, aw, bw, u, s, v = whiten(sim.y, sim.a, sim.b)
        p = pvalues_at(yc, aw, bw, u, s, v, 1, ("chi2", "wald"))
        for meth in rej:
            rej[meth] += p[meth] <= ALPHA
    return ["", f"== correlated blocks (rho = 0.2), BILINEAR r = 1, m = {m}, n1 = n2 = {n}, "
            f"reps = {reps}: rejection of H0: rank <= 1",
            "  ".join(f"{meth} {rej[meth] / reps:.3f}" for meth in rej)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=400)
    ap.add_argument("--power-reps", type=int, default=200)
    ap.add_argument("--corr-reps", type=int, default=20)
    ap.add_argument("--seed", type=int, default=SEED)
    ap.add_argument("--only", nargs="*", default=None)
    ap.add_argument("--nulls", nargs="*", type=int, default=[0, 1, 2])
    ap.add_argument("--methods", nargs="*", default=list(METHODS))
    ap.add_argument("--ladle-reps", dest="ladle", type=int, default=200,
                    help="replications (the first ones) that also run the ladle; 0: none")
    ap.add_argument("--no-power", dest="power", action="store_false")
    ap.add_argument("--no-corr", dest="corr", action="store_false")
    ap.add_argument("--out", default=None, help="write the full report to this file")
    ap.add_argument("--config", nargs=3, type=int, default=None, metavar=("M", "N1", "N2"),
                    help="override the cycled sizes (e.g. the issue's settings)")
    args = ap.parse_args(argv)
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, check=False).stdout.strip()
    except OSError:  # pragma: no cover
        commit = "?"
    head = [
        "# OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python "
        "studies/study_rank_robust.py " + " ".join(sys.argv[1:] if argv is None else argv)
        + f"   (commit {commit}, shared 2-core machine)",
        f"Robust rank-test study: alpha={ALPHA}, reps={args.reps}, seed={args.seed}, "
        f"ladle n_boot={N_BOOT}, configs (m, n1, n2) cycled: {CONFIGS}",
        f"python {platform.python_version()}, numpy {np.__version__}, "
        f"jdr_stats {jdr.__version__}",
    ]
    print("\n".join(head), flush=True)
    t0 = time.time()
    cpu0 = time.process_time()
    lines = head + battery_part(args)
    if args.power:
        lines += power_part(args, np.random.default_rng([args.seed, 100]))
    if args.corr:
        lines += correlated_part(args, np.random.default_rng([args.seed, 200]))
    lines.append("")
    lines.append(f"total {time.time() - t0:.0f} s wall, {time.process_time() - cpu0:.0f} s CPU")
    print("\n".join(lines[-8:]))
    if args.out:
        with open(args.out, "w") as fh:
            fh.write("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
