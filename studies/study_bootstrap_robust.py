"""Coverage of the bootstrap bounds on the largest principal angle across the
robustness battery (issue 12).

Designs from :data:`jdr_stats.simulate.BATTERY` at m = 1000, n1 = n2 = 10:
strong and weak last directions (strength g = 0.5, 0.3, 0.2 of the others),
t(5) blocks, heteroscedastic noise, the BINARY model, a rare binary
response, sparse fits, r = 1, 2, 3.  In every seeded replication the data
are drawn, the joint estimator is fitted with the true rank, and from the
same seeded resamples the 95% upper bound on the largest principal angle of
each block is computed by every candidate:

- ``percentile``: the ceil((B+1) 0.95)-th smallest replicate angle (pairs
  bootstrap, B resamples of the m rows);
- ``calibrated``: the fast double bootstrap (prepivoting, Beran 1987, with
  one inner resample per replicate, Chang and Hall 2015): the percentile
  bound at the level lam = G**(Q*(0.95));
- ``subsample``: m-out-of-n bootstrap with k = m/4 rows, sin(angle)
  rescaled by sqrt(k/m) (dense fits only, to keep the study's budget);
- ``deflated``: version 0.1's default (first-order deflation of sin angle*);
- ``poisson-percentile`` / ``poisson-calibrated`` (some designs): the same
  bounds from Poisson(1) row weights (``method="poisson"``), inner
  replicate weights Poisson(w*).

A bound covers when the largest principal angle between the true U (V) and
the estimate is at most the bound.  Coverage is printed with its Monte Carlo
SE sqrt(p(1-p)/R) for block a and block b, the mean bound, and the 95%
quantile of the true largest angle (what an exact bound would be on
average).  Gap diagnostics per replication (s_r/s_{r+1} of the sample and
the share of replicates whose r-th singular value falls below the sample's
(r+1)-th) are stored with ``--save`` for the gap rule.

Run (single-threaded BLAS)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 nice -n 5 python studies/study_bootstrap_robust.py --reps 250

Output recorded in ``studies/results/study_bootstrap_robust.txt``.
"""

from __future__ import annotations

import argparse
import itertools
import time

import numpy as np

import jdr_stats as jdr
from jdr_stats.estimation._estimate import estimate
from jdr_stats.core._linalg import ReweightedMoments
from jdr_stats.resampling._engine import draw_entropy, poisson_weights
from jdr_stats.inference import _bounds as bd

LEVEL = 0.95
#: Floor of version 0.1's deflation factor (the removed "deflated" bound).
MIN_DEFLATION = 0.5

#: (label, battery design, r, weak strength, sparsity, with the Poisson bootstrap)
SETTINGS = [
    ("weak g=0.2 r=2", "weak", 2, 0.2, None, True),
    ("weak g=0.3 r=2", "weak", 2, 0.3, None, False),
    ("gaussian r=2", "gaussian", 2, None, None, True),
    ("weak g=0.5 r=2", "weak", 2, 0.5, None, False),
    ("weak-t5 g=0.3 r=2", "weak-t5", 2, 0.3, None, False),
    ("t5 r=2", "t5", 2, None, None, True),
    ("hetero-signal r=2", "hetero-signal", 2, None, None, False),
    ("t5-hetero r=2", "t5-hetero", 2, None, None, False),
    ("binary-model r=2", "binary-model", 2, None, None, True),
    ("binary-rare r=2", "binary-rare", 2, None, None, False),
    ("gaussian r=1", "gaussian", 1, None, None, False),
    ("gaussian r=3", "gaussian", 3, None, None, False),
    ("weak g=0.3 r=3", "weak", 3, 0.3, None, False),
    ("sparse gaussian r=2 s=4", "gaussian", 2, None, (4, 4), False),
    ("sparse weak g=0.3 r=2 s=4", "weak", 2, 0.3, (4, 4), False),
    # the rest of the battery (appended: the seeds of the settings above are unchanged)
    ("t6-ar1 r=2", "t6-ar1", 2, None, None, False),
    ("laplace-ar1 r=2", "laplace-ar1", 2, None, None, False),
    ("lognormal-noise r=2", "lognormal-noise", 2, None, None, False),
    ("t3-noise r=2", "t3-noise", 2, None, None, False),
    ("hetero-nonsignal r=2", "hetero-nonsignal", 2, None, None, False),
    ("main-effects r=2", "main-effects", 2, None, None, False),
    ("exp-response r=2", "exp-response", 2, None, None, False),
]

CANDIDATES = ["percentile", "calibrated", "subsample", "deflated"]


# version 0.1's deflation factor (interval="deflated", removed), kept for the comparison
def _deflation(s: np.ndarray, rank: int, dim: int) -> float:
    """First-order ratio of true-world to bootstrap-world angle scale.

    With singular values ``s`` of the decomposed matrix (``dim`` variables
    in the block), a perturbation ``E`` moves the left singular vector ``j``
    towards ``k`` by ``(s_j e_kj + s_k e_jk) / (s_j^2 - s_k^2)``; for
    isotropic noise its variance is proportional to
    ``(s_j^2 + s_k^2) / (s_j^2 - s_k^2)^2``.  In the population the trailing
    singular values are 0 (variance ``1 / s_j^2``); in the bootstrap world
    they are the sample's noise singular values.  The factor is the square
    root of the ratio of the two sums over ``j <= r < k``, clipped to
    ``[0.5, 1]``.
    """
    sj = s[:rank]
    sk = np.zeros(max(dim - rank, 0))
    tail = s[rank:dim]
    sk[: len(tail)] = tail
    if sk.size == 0 or np.any(sj <= 0):
        return 1.0
    gap = sj[:, None] ** 2 - sk[None, :] ** 2
    if np.any(gap <= 0):
        return MIN_DEFLATION
    num = sk.size * np.sum(1.0 / sj**2)
    den = np.sum((sj[:, None] ** 2 + sk[None, :] ** 2) / gap**2)
    return float(np.clip(np.sqrt(num / den), MIN_DEFLATION, 1.0))


def _counts(idx, m):
    """Row counts of each resample (rows of ``idx`` hold drawn row indices)."""
    nb = idx.shape[0]
    flat = idx + m * np.arange(nb)[:, None]
    return np.bincount(flat.ravel(), minlength=nb * m).reshape(nb, m).astype(float)


def _fits(moms, rank, sparsity):
    """dir_a, dir_b, singular values of each replicate (NaN where it failed)."""
    if sparsity is None:
        da, db, s, _ = bd.batched_dense_estimate(moms, rank)
        return da, db, s
    n1, n2 = moms[0].cov_a.shape[0], moms[0].cov_b.shape[0]
    nb = len(moms)
    da = np.full((nb, n1, rank), np.nan)
    db = np.full((nb, n2, rank), np.nan)
    s = np.full((nb, min(n1, n2)), np.nan)
    for k, mom in enumerate(moms):
        try:
            e = estimate(mom, rank, sparsity=sparsity)
        except ValueError:
            continue
        da[k], db[k] = e.dir_a, e.dir_b
        s[k, : len(e.singular_values)] = e.singular_values
    return da, db, s


def _largest(x, y):
    """Largest principal angle per replicate (NaN where either basis failed)."""
    bad = np.isnan(x).any(axis=(-1, -2)) | (np.isnan(y).any(axis=(-1, -2)) if y.ndim == 3 else False)
    x = np.where(np.isnan(x), 0.0, x)
    if y.ndim == 3:
        y = np.where(np.isnan(y), 0.0, y)
    x = x + bad[:, None, None] * np.eye(x.shape[1], x.shape[2])
    if y.ndim == 3:
        y = y + bad[:, None, None] * np.eye(y.shape[1], y.shape[2])
    t = bd.pair_angles(x, y)[:, -1]
    t[bad] = np.nan
    return t


def _bounds(th_out, th_in, th_sub, k, m, defl):
    ok = ~np.isnan(th_out) & ~np.isnan(th_in)
    out = {
        "percentile": bd.percentile_bound(th_out[~np.isnan(th_out)], LEVEL),
        "calibrated": bd.calibrated_bound(th_out[ok], th_in[ok], LEVEL),
    }
    if th_sub is not None:
        out["subsample"] = bd.subsample_bound(th_sub[~np.isnan(th_sub)], k, m, LEVEL)
    if defl is not None:
        adj = np.arcsin(np.clip(defl * np.sin(th_out[~np.isnan(th_out)]), 0.0, 1.0))
        out["deflated"] = bd.percentile_bound(adj, LEVEL)
    return out


def one_replication(setting, m, n, n_boot, seed):
    _label, design, r, g, sparsity, with_poisson = setting
    kw = {} if g is None else {"weak_strength": g}
    s1 = s2 = None if sparsity is None else sparsity[0]
    sim = jdr.simulate.scenario(design, m, n, n, r, s1=s1, s2=s2, seed=seed, **kw)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    res = model.fit(r, sparsity=sparsity)
    est = res.estimate
    truth = {"a": np.degrees(bd.pair_angles(sim.U, est.dir_a)[-1]),
             "b": np.degrees(bd.pair_angles(sim.V, est.dir_b)[-1])}
    rng = np.random.default_rng(seed + 10**6)
    k = m // 4
    idx = rng.integers(0, m, size=(n_boot, m))
    c_out = _counts(idx, m)
    # inner resample: m draws from the rows of the outer resample
    c_in = _counts(np.take_along_axis(idx, rng.integers(0, m, size=(n_boot, m)), axis=1), m)
    rw = ReweightedMoments(model.endog, model.exog_a, model.exog_b, None)
    weights = [c_out, c_in]
    if sparsity is None:  # m-out-of-n: dense fits only (study budget)
        weights.append(_counts(rng.integers(0, m, size=(n_boot, k)), m))
    if with_poisson:
        w_out = poisson_weights(draw_entropy(seed + 2 * 10**6, 4), 0, n_boot)[:, :m].astype(float)
        w_in = rng.poisson(w_out).astype(float)
        weights += [w_out, w_in]
    moms = rw.moments(rw.sums(np.vstack(weights)))
    da, db, s = _fits(moms, r, sparsity)
    parts = np.cumsum([0] + [w.shape[0] for w in weights])
    sl = [slice(parts[i], parts[i + 1]) for i in range(len(weights))]
    out = {"true_a": truth["a"], "true_b": truth["b"]}
    gap = bd.gap_diagnostics(est.singular_values, s[sl[0]], r)
    out["gap_ratio"], out["crossing"] = gap["ratio"], gap["crossing"]
    for block, dirs, dim in (("a", da, len(est.rows)), ("b", db, len(est.cols))):
        d0 = est.dir_a if block == "a" else est.dir_b
        th_out = _largest(dirs[sl[0]], d0)
        th_in = _largest(dirs[sl[1]], dirs[sl[0]])
        th_sub = _largest(dirs[sl[2]], d0) if sparsity is None else None
        defl = _deflation(est.singular_values, r, dim)
        for name, v in _bounds(th_out, th_in, th_sub, k, m, defl).items():
            out[f"{name}_{block}"] = np.degrees(v)
        out[f"lam_{block}"] = bd.calibrated_level(th_out, th_in, LEVEL)
        out[f"spread_{block}"] = np.degrees(np.nanmedian(th_out))
        if with_poisson:
            p_out = _largest(dirs[sl[-2]], d0)
            p_in = _largest(dirs[sl[-1]], dirs[sl[-2]])
            for name, v in _bounds(p_out, p_in, None, k, m, None).items():
                out[f"poisson-{name}_{block}"] = np.degrees(v)
    return out


def report(label, reps, seed, elapsed, n_boot):
    R = len(reps)
    print(f"{label}: {R} replications, B={n_boot}, seed={seed} ({elapsed:.0f} s); "
          f"median s_r/s_(r+1) {np.median([x['gap_ratio'] for x in reps]):.2f}, "
          f"mean crossing share {np.mean([x['crossing'] for x in reps]):.3f}")
    names = [c for c in [*CANDIDATES, "poisson-percentile", "poisson-calibrated"]
             if f"{c}_a" in reps[0]]
    for b in "ab":
        q = np.quantile([x[f"true_{b}"] for x in reps], LEVEL)
        cells = []
        for c in names:
            cover = np.array([x[f"true_{b}"] <= x[f"{c}_{b}"] for x in reps])
            p = cover.mean()
            se = np.sqrt(p * (1 - p) / R)
            mb = np.mean([x[f"{c}_{b}"] for x in reps])
            cells.append(f"{c} {p:.3f}+-{se:.3f} ({mb:.1f})")
        print(f"  block {b}: true q95 {q:.1f} deg | " + " | ".join(cells))
    print(flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=250)
    parser.add_argument("--n-boot", type=int, default=199)
    parser.add_argument("--m", type=int, default=1000)
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--seed", type=int, default=20261126)
    parser.add_argument("--only", type=str, nargs="*", default=None,
                        help="labels (substrings) of the settings to run")
    parser.add_argument("--save", type=str, default=None, help="npz of every replication")
    parser.add_argument("--analyse", type=str, nargs="+", default=None,
                        help="only print the gap analysis of saved runs (npz)")
    args = parser.parse_args()
    if args.analyse:
        for path in args.analyse:
            analyse(path)
        return
    print(f"# m={args.m}, n1=n2={args.n}, nominal {100 * LEVEL:g}%; cells: coverage+-MC SE "
          "(mean bound, deg)")
    saved = {}
    for i, setting in enumerate(SETTINGS):
        if args.only and not any(o in setting[0] for o in args.only):
            continue
        seed0 = args.seed + 100_003 * i
        start = time.perf_counter()
        reps = [one_replication(setting, args.m, args.n, args.n_boot, seed0 + 7919 * j)
                for j in range(args.reps)]
        report(setting[0], reps, seed0, time.perf_counter() - start, args.n_boot)
        saved[setting[0]] = {key: np.array([x[key] for x in reps]) for key in reps[0]}
        if args.save:
            flat = {f"{lab}|{key}": v for lab, d in saved.items() for key, v in d.items()}
            np.savez(args.save, **flat)



def analyse(path: str, cuts=(1.2, 1.35, 1.5, 1.75, 2.0, 3.0)) -> None:
    """Coverage by the sample gap ratio s_r / s_(r+1), pooled over the
    settings of a saved run (``--save``): the evidence for the gap rule."""
    data = np.load(path)
    labels = sorted({k.split("|")[0] for k in data.files})
    cols = ["percentile", "calibrated"]
    rows = {c: [] for c in ["gap", "true", "crossing", *[f"{c}_{b}" for c in cols for b in "ab"],
                            "true_a", "true_b"]}
    for lab in labels:
        for key in rows:
            if key in ("gap", "true", "crossing"):
                continue
            rows[key].append(data[f"{lab}|{key}"])
        rows["gap"].append(data[f"{lab}|gap_ratio"])
        rows["crossing"].append(data[f"{lab}|crossing"])
    pooled = {k: np.concatenate(v) for k, v in rows.items() if v}
    edges = (0.0, *cuts, np.inf)
    print(f"# gap analysis of {path}: {len(labels)} settings, "
          f"{pooled['gap'].size} replications pooled; coverage per block pooled (a and b)")
    for lo, hi in itertools.pairwise(edges):
        sel = (pooled["gap"] >= lo) & (pooled["gap"] < hi)
        n = int(sel.sum())
        if n == 0:
            continue
        cells = []
        for c in cols:
            cover = np.concatenate([pooled[f"true_{b}"][sel] <= pooled[f"{c}_{b}"][sel]
                                    for b in "ab"])
            p = cover.mean()
            se = np.sqrt(p * (1 - p) / cover.size)
            mb = np.mean(np.concatenate([pooled[f"{c}_{b}"][sel] for b in "ab"]))
            cells.append(f"{c} {p:.3f}+-{se:.3f} (mean bound {mb:.1f})")
        true = np.concatenate([pooled[f"true_{b}"][sel] for b in "ab"])
        print(f"  s_r/s_(r+1) in [{lo:.2f}, {hi:.2f}): {n:4d} reps | mean true angle "
              f"{true.mean():.1f}, share > 45 deg {np.mean(true > 45):.3f} | " + " | ".join(cells))


if __name__ == "__main__":
    main()
