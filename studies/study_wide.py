"""Study of the whitening choices for wide blocks (issue 20).

Model: ``y = c * sum_k (u_k^T a)(v_k^T b) + N(0, 1)`` with Gaussian blocks,
``corr(a_j, a_l) = rho^|j - l|`` (same for b), ``n1 = n2 = n``, ``m`` rows;
``U`` and ``V`` orthonormal (``r`` columns), dense, or sparse with ``s``
nonzero rows (``r = 1``).  Each ``u_k`` is scaled so that ``u_k^T Sigma u_k = 1``
before the response is drawn (the truth is the span).

Grid: ``n / m`` in {0.05, 0.2, 0.5, 1, 2}; ``rho`` in {0, 0.5}; structure
dense r = 1, dense r = 2, sparse s = 3, sparse s = 10; signal ``c`` in
{1, 3}.  Sparse structures are fitted with the true ``sparsity=(s, s)``.

For every replication, one set of moments, then the estimate with each
whitening: "sample" (only when ``m >= n + 2``), "shrinkage" (OAS),
"diagonal", "none", the oracle (the true covariances), and the default
``"auto"`` (the choice of ``jdr_stats.estimation._estimate.choose_whitening``, so the
same numbers as the chosen fixed one); scikit-learn's ``PLSCanonical`` and
``CCA`` (first ``r`` x- and y-weights) on the same data as outside
references (dense structures only, ``max_iter=200``; CCA only for
``m >= n + 2``, where it is defined).

Reported: mean largest principal angle (degrees, the larger of the two
blocks) with its Monte Carlo SE, and whether the default is within 10 % of
the best fixed choice (oracle included).

Run (one process, about 30 min on a shared core at the recorded settings)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python studies/study_wide.py \\
        --m 300 --reps 12 --seed 20 > studies/results/study_wide.txt

and the size / FDR part (``--size``)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 10 python studies/study_wide.py \
        --size --m 300 --reps 100 --seed 21 > studies/results/study_wide_size.txt

The recorded outputs are ``studies/results/study_wide.txt`` and
``studies/results/study_wide_size.txt``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

from jdr_stats.estimation._estimate import block_whitening_pair, choose_whitening, estimate
from jdr_stats.core._linalg import Whitening, block_moments, principal_angles

RATIOS = (0.05, 0.2, 0.5, 1.0, 2.0)
RHOS = (0.0, 0.5)
STRUCTS = (("dense", 1, None), ("dense", 2, None), ("sparse", 1, 3), ("sparse", 1, 10))
SIGNALS = (1.0, 3.0)
KINDS = ("sample", "shrinkage", "diagonal", "none", "oracle")


def ar1_cov(n: int, rho: float) -> np.ndarray:
    idx = np.arange(n)
    return rho ** np.abs(idx[:, None] - idx[None, :])


def ar1_rows(rng: np.random.Generator, m: int, n: int, rho: float) -> np.ndarray:
    e = rng.standard_normal((m, n))
    if rho == 0:
        return e
    x = np.empty_like(e)
    x[:, 0] = e[:, 0]
    c = np.sqrt(1 - rho**2)
    for j in range(1, n):
        x[:, j] = rho * x[:, j - 1] + c * e[:, j]
    return x


def basis(rng: np.random.Generator, n: int, r: int, s: int | None) -> np.ndarray:
    out = np.zeros((n, r))
    rows = np.arange(n) if s is None else rng.choice(n, size=s, replace=False)
    q, _ = np.linalg.qr(rng.standard_normal((len(rows), r)))
    out[rows] = q
    return out


def draw(rng, m, n, rho, r, s, c):
    cov = ar1_cov(n, rho)
    u, v = basis(rng, n, r, s), basis(rng, n, r, s)
    a, b = ar1_rows(rng, m, n, rho), ar1_rows(rng, m, n, rho)
    us = u / np.sqrt(np.einsum("jk,jl,lk->k", u, cov, u))
    vs = v / np.sqrt(np.einsum("jk,jl,lk->k", v, cov, v))
    y = c * np.sum((a @ us) * (b @ vs), axis=1) + rng.standard_normal(m)
    return y, a, b, u, v, cov


def angle(u, v, da, db) -> float:
    return float(np.degrees(max(principal_angles(u, da).max(), principal_angles(v, db).max())))


def one_rep(rng, m, n, rho, r, s, c) -> dict[str, float]:
    y, a, b, u, v, cov = draw(rng, m, n, rho, r, s, c)
    mom = block_moments(y, a, b)
    names = [str(j) for j in range(n)]
    sparsity = None if s is None else (s, s)
    out = {}
    for kind in KINDS:
        if kind == "sample" and m < n + 2:
            continue
        if kind == "oracle":
            pair = (Whitening.from_moments(mom.mean_a, cov, "a", names),
                    Whitening.from_moments(mom.mean_b, cov, "b", names))
        else:
            pair = block_whitening_pair(kind, mom, names, names, rows=(a, b))
        est = estimate(mom, r, standardize=kind != "none", sparsity=sparsity,
                       whitening=pair, names_a=names, names_b=names)
        out[kind] = angle(u, v, est.dir_a, est.dir_b)
    out["default"] = out[choose_whitening("auto", m, n, n).name]
    if s is None:
        out.update(sklearn_refs(y, a, b, u, v, r, m, n))
    return out


def sklearn_refs(y, a, b, u, v, r, m, n) -> dict[str, float]:
    from sklearn.cross_decomposition import CCA, PLSCanonical

    out = {}
    # the joint estimator's target is E[a y b^T]: give the references the
    # y-weighted block a (sign-centred response) and block b
    yc = (y - y.mean())[:, None]
    xa = a * yc
    for name, cls in (("PLSCanonical", PLSCanonical), ("CCA", CCA)):
        if name == "CCA" and m < n + 2:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                est = cls(n_components=r, scale=True, max_iter=200).fit(xa, b)
                wa = est.x_weights_ / xa.std(axis=0)[:, None]
                wb = est.y_weights_ / b.std(axis=0)[:, None]
                out[name] = angle(u, v, wa, wb)
            except Exception:
                out[name] = float("nan")
    return out


def size_and_fdr(m: int, reps: int, seed: int) -> None:
    """Size of the rank tests (H0: r = 1 true, level 0.05) and FDR of the
    support tests (``fit(1, sparsity="auto")``, fdr 0.1) after the default
    fit, where they are offered (``m >= n + 2``); both whiten with the
    sample covariance whatever the fit's whitening.  Coverage of the
    bootstrap's 95 % upper bound on block a's largest angle to the truth
    (the replicates re-estimate the fit's whitening)."""
    import jdr_stats as jdr

    print(f"# size / FDR: m = {m}, reps = {reps}, seed = {seed}; dense r = 1 (c = 3) for "
          "the rank tests, sparse s = 3 (c = 3) for the support tests")
    print("n/m  rho  whitening  | size chi2      | size general   | FDR (sparsity=auto) | "
          "power | coverage of the 95% bootstrap bound (block a, pairs, percentile, B = 99)")
    seq = np.random.SeedSequence(seed)
    grid = [(ratio, rho) for ratio in (0.05, 0.1, 0.2) for rho in RHOS]
    for (ratio, rho), child in zip(grid, seq.spawn(len(grid)), strict=True):
        rng = np.random.default_rng(child)
        n = round(ratio * m)
        rej: dict[str, list[float]] = {"chi2": [], "general": []}
        fdp, power, cover = [], [], []
        for _ in range(reps):
            y, a, b, u_true, _, _ = draw(rng, m, n, rho, 1, None, 3.0)
            res = jdr.JointDimReduction(y, a, b).fit(1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                boot = res.bootstrap(n_boot=99, seed=rng).conf_int()
                truth = np.degrees(principal_angles(u_true, res.estimate.dir_a).max())
                cover.append(float(truth <= boot.loc[("a", "largest angle"), "upper"]))
                for meth in rej:
                    p_1 = res.rank_tests(meth, max_rank=1).table["pvalue"].iloc[1]
                    rej[meth].append(float(p_1 <= 0.05) if np.isfinite(p_1) else np.nan)
                y, a, b, u, v, _ = draw(rng, m, n, rho, 1, 3, 3.0)
                sp = jdr.JointDimReduction(y, a, b).fit(1, sparsity="auto", seed=rng)
            sel = set(sp.estimate.rows.tolist()) | {n + j for j in sp.estimate.cols.tolist()}
            true = set(np.flatnonzero(u[:, 0]).tolist()) | {
                n + j for j in np.flatnonzero(v[:, 0]).tolist()}
            fdp.append(len(sel - true) / max(1, len(sel)))
            power.append(len(sel & true) / len(true))
        cells = []
        for meth in rej:
            x = np.array(rej[meth])
            ok = x[np.isfinite(x)]
            cells.append(f"{ok.mean():.3f} +- {ok.std(ddof=1) / np.sqrt(ok.size):.3f}"
                         if ok.size > 1 else "      -       ")
        f = np.array(fdp)
        print(f"{ratio:4.2f} {rho:4.1f}  {res.whitening:9s}  | " + " | ".join(cells)
              + f" | {f.mean():.3f} +- {f.std(ddof=1) / np.sqrt(f.size):.3f}      | "
              f"{np.mean(power):.2f}  | {np.mean(cover):.3f} +- "
              f"{np.std(cover, ddof=1) / np.sqrt(len(cover)):.3f}", flush=True)


def default_size(m: int, reps: int, seed: int, ratios: tuple[float, ...]) -> None:
    """Size of the default rank test (``res.rank_tests()``, the robust test;
    H0: r = 1 true, level 0.05) after the default fit, and the hit rate of
    ``fit("auto")`` (share of replications choosing the true r = 1; it
    fits r = 1 when no test rejects, so read it with the power, the share
    rejecting ``H0: r = 0``); dense r = 1, c = 3, where the tests run
    (``m >= n + 2``)."""
    import jdr_stats as jdr

    print(f"# default rank test: m = {m}, reps = {reps}, seed = {seed}; dense r = 1 (c = 3)")
    print("n/m   m     n  rho  whitening  | size robust (H0: r = 1) | band (2.5 MC SE + 0.005)"
          " | fit('auto') hit rate | power (reject r = 0) | r-hat >= 2")
    seq = np.random.SeedSequence(seed)
    grid = [(ratio, rho) for ratio in ratios for rho in RHOS]
    for (ratio, rho), child in zip(grid, seq.spawn(len(grid)), strict=True):
        rng = np.random.default_rng(child)
        n = round(ratio * m)
        rej, rhat, power = [], [], []
        for _ in range(reps):
            y, a, b, _, _, _ = draw(rng, m, n, rho, 1, None, 3.0)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = jdr.JointDimReduction(y, a, b).fit(1)
                p_0, p_1 = res.rank_tests(max_rank=1, seed=rng).table["pvalue"].iloc[:2]
                rhat.append(jdr.JointDimReduction(y, a, b).fit("auto", seed=rng).rank)
            rej.append(float(p_1 <= 0.05))
            power.append(float(p_0 <= 0.05))
        x, h = np.array(rej), np.array(rhat)
        se = np.sqrt(0.05 * 0.95 / x.size)
        ok = abs(x.mean() - 0.05) <= 2.5 * se + 0.005
        hit = np.mean(h == 1)
        print(f"{ratio:4.2f} {m:5d} {n:5d} {rho:4.1f}  {res.whitening:9s}  | "
              f"{x.mean():.3f} +- {x.std(ddof=1) / np.sqrt(x.size):.3f}          | "
              f"{'holds' if ok else 'FAILS'} (+- {2.5 * se + 0.005:.3f})        | "
              f"{hit:.3f} +- {np.sqrt(hit * (1 - hit) / h.size):.3f}        | "
              f"{np.mean(power):.3f}                | {np.mean(h >= 2):.3f}", flush=True)


def coverage_cell(m: int, reps: int, seed: int, ratio: float, rho: float,
                  whitening: str = "auto") -> None:
    """Coverage of the bootstrap's 95 % upper bound on block a's largest
    angle (pairs, percentile, B = 99) after the default fit, one cell."""
    import jdr_stats as jdr

    rng = np.random.default_rng(seed)
    n = round(ratio * m)
    cover = []
    for _ in range(reps):
        y, a, b, u_true, _, _ = draw(rng, m, n, rho, 1, None, 3.0)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = jdr.JointDimReduction(y, a, b).fit(1, whitening=whitening)
            boot = res.bootstrap(n_boot=99, seed=rng).conf_int()
        truth = np.degrees(principal_angles(u_true, res.estimate.dir_a).max())
        cover.append(float(truth <= boot.loc[("a", "largest angle"), "upper"]))
    c = np.array(cover)
    print(f"# coverage cell: m = {m}, n/m = {ratio}, rho = {rho}, reps = {reps}, seed = {seed}, "
          f"whitening = {res.whitening}")
    print(f"coverage of the 95% upper bound (block a): {c.mean():.3f} +- "
          f"{c.std(ddof=1) / np.sqrt(c.size):.3f}", flush=True)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--size", action="store_true",
                   help="the size / FDR part instead of the angles")
    p.add_argument("--default-size", action="store_true",
                   help="size of the default (robust) rank test and fit('auto') hit rate")
    p.add_argument("--coverage", type=float, nargs=2, metavar=("RATIO", "RHO"),
                   help="bootstrap coverage in one cell (n/m, AR(1) rho)")
    p.add_argument("--whitening", default="auto", help="the fit's whitening (--coverage)")
    p.add_argument("--m", type=int, default=300)
    p.add_argument("--reps", type=int, default=12)
    p.add_argument("--seed", type=int, default=20)
    p.add_argument("--ratios", type=float, nargs="*", default=RATIOS)
    args = p.parse_args()
    if args.default_size:
        default_size(args.m, args.reps, args.seed, tuple(args.ratios))
        return
    if args.coverage:
        coverage_cell(args.m, args.reps, args.seed, *args.coverage, args.whitening)
        return
    if args.size:
        size_and_fdr(args.m, args.reps, args.seed)
        return
    print(f"# study_wide: m = {args.m}, reps = {args.reps}, seed = {args.seed}")
    print("# mean largest principal angle to the truth (degrees, worse block) +- MC SE")
    cols = ("sample", "shrinkage", "diagonal", "none", "oracle", "default",
            "PLSCanonical", "CCA")
    print("n/m  rho  struct        c  | " + " | ".join(f"{c:>13}" for c in cols)
          + " | chosen   best_fixed  default/best")
    seq = np.random.SeedSequence(args.seed)
    t0 = time.time()
    misses = []
    grid = [(ratio, rho, st, c) for ratio in args.ratios for rho in RHOS
            for st in STRUCTS for c in SIGNALS]
    children = seq.spawn(len(grid))
    for (ratio, rho, (kind, r, s), c), child in zip(grid, children, strict=True):
        rng = np.random.default_rng(child)
        n = round(ratio * args.m)
        reps = [one_rep(rng, args.m, n, rho, r, s, c) for _ in range(args.reps)]
        cells, means = [], {}
        for col in cols:
            vals = np.array([rep.get(col, np.nan) for rep in reps])
            if np.all(np.isnan(vals)):
                cells.append(f"{'-':>13}")
                continue
            mean, se = np.nanmean(vals), np.nanstd(vals, ddof=1) / np.sqrt(np.sum(~np.isnan(vals)))
            means[col] = mean
            cells.append(f"{mean:6.1f} +-{se:4.1f}")
        fixed = {k: means[k] for k in KINDS if k in means}
        best = min(fixed, key=fixed.get)
        rel = means["default"] / fixed[best]
        chosen = choose_whitening("auto", args.m, n, n).name
        struct = f"{kind} r={r}" + ("" if s is None else f" s={s}")
        flag = "" if rel <= 1.10 else "  MISS"
        if flag:
            misses.append((ratio, rho, struct, c, best, rel))
        print(f"{ratio:4.2f} {rho:4.1f}  {struct:13s} {c:2.0f}  | " + " | ".join(cells)
              + f" | {chosen:9s} {best:10s} {rel:5.2f}{flag}", flush=True)
    print(f"# settings where the default is more than 10% above the best fixed choice: "
          f"{len(misses)} of {len(grid)}")
    for miss in misses:
        print("#   ", miss)
    print(f"# elapsed {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
