"""Sparse fits of three blocks: support recovery, accuracy, the CV choice,
and the size of the per-block main-effects test.

Questions:

1. Does ``fit(1, sparsity=3)`` of a model of three blocks, with 3 active
   variables of 20, 35 and 50, find the active variables (true and false
   positives per block) and estimate each block's direction better than the
   dense fit, at m = 200 to 2000, for Gaussian and t(5) blocks, under the
   per-block and the joint whitening?
2. Which selection rule: the rows of largest norm in each block's combined
   unit-free pieces (one step), the thresholded screen alone (step 1), or
   the screen then the selection on the pieces restricted to the other
   blocks' screened variables (two steps, the package's)?
3. How often does ``sparsity="cv"`` choose the true count (3), and with
   what supports?
4. The size at 0.05 of ``main_effects_test()`` (robust) per block when the
   link has no main effect, under both whitenings, Gaussian and t(5); its
   power against a main effect of block 1.

Design: blocks of widths (20, 35, 50), columns AR(1) correlated 0.4 within
each block (Gaussian, or t(5) scaled to unit variance, then filtered);
``beta_k`` with 3 nonzero entries at random positions, N(0, 1) then unit
norm; ``u_k = x_k^T beta_k``; ``y = u1 u2 + u2 u3 + u1 u2 u3 + 0.5 e``
(plus ``0.5 u1`` for the power of the main-effects test).  Angles: the
largest principal angle to ``beta_k`` in degrees, averaged over the three
blocks.  Whitening: "auto" per block (shrinkage below m = 1000 here),
"sample" for the joint estimator.  Every number is a mean over replicates with its Monte Carlo SE.

Run: ``python studies/study_kblock_sparse.py [reps] [cv_reps]`` (default
200 and 40); results in ``studies/results/study_kblock_sparse.txt``.
"""

import sys
import time

import numpy as np

import jdr_stats as jdr
from jdr_stats.fitting._ksparse import selection_target
from jdr_stats.fitting._kwhiten import _whiten_arrays
from jdr_stats.core._linalg import principal_angles
from jdr_stats.core.kestimate import block_factors
from jdr_stats.core.ksparse import _slice_energy, _top, sparse_supports

WIDTHS = (20, 35, 50)
NAMES = ("g", "l", "c")
S = 3


def simulate(m, dist, rng, main=0.0):
    xs = []
    for n in WIDTHS:
        if dist == "t5":
            z = rng.standard_t(5, size=(m, n)) / np.sqrt(5 / 3)
        else:
            z = rng.normal(size=(m, n))
        for j in range(1, n):
            z[:, j] = 0.4 * z[:, j - 1] + np.sqrt(1 - 0.16) * z[:, j]
        xs.append(z)
    betas, active = [], []
    for n in WIDTHS:
        idx = np.sort(rng.choice(n, size=S, replace=False))
        b = np.zeros(n)
        b[idx] = rng.normal(size=S)
        betas.append(b / np.linalg.norm(b))
        active.append(set(idx.tolist()))
    u = [x @ b for x, b in zip(xs, betas)]
    y = u[0] * u[1] + u[1] * u[2] + u[0] * u[1] * u[2] + main * u[0] \
        + 0.5 * rng.normal(size=m)
    return y, xs, betas, active


def model(y, xs):
    return jdr.JointDimReduction.from_blocks(y, dict(zip(NAMES, xs)))


def angle(beta, d):
    return float(np.degrees(np.max(principal_angles(beta[:, None], np.asarray(d)))))


def mean_se(v):
    v = np.asarray(v, float)
    return f"{v.mean():.3f} ({v.std(ddof=1) / np.sqrt(v.size):.3f})"


def recovery(reps, rng):
    lines = ["1. Support recovery and accuracy, fit(1, sparsity=3) vs the dense fit",
             f"   reps = {reps}; TP: true variables kept per block (of 3); FP: false ones "
             "kept (= 3 - TP); exact: share of blocks with the support exactly right; "
             "angles in degrees, mean over blocks",
             f"{'dist':6s} {'estimator':10s} {'m':>5s}  {'TP':>14s} {'exact':>14s} "
             f"{'angle sparse':>16s} {'angle dense':>16s}  s/rep"]
    for dist in ("gauss", "t5"):
        for estimator in ("per-block", "joint"):
            for m in (200, 500, 1000, 2000):
                if estimator == "joint" and m < sum(WIDTHS) + 2:
                    continue
                tp, exact, a_s, a_d = [], [], [], []
                t0 = time.time()
                for _ in range(reps):
                    y, xs, betas, active = simulate(m, dist, rng)
                    mod = model(y, xs)
                    ib = estimator == "per-block"
                    kw = {"independent_blocks": ib, "whitening": "auto" if ib else "sample"}
                    sp = mod.fit(1, sparsity=S, **kw)
                    de = mod.fit(1, **kw)
                    for k, n in enumerate(NAMES):
                        kept = {int(v[len(n):]) for v in sp.support[n]}
                        tp.append(len(kept & active[k]))
                        exact.append(kept == active[k])
                    a_s.append(np.mean([angle(b, sp.directions[n])
                                        for b, n in zip(betas, NAMES)]))
                    a_d.append(np.mean([angle(b, de.directions[n])
                                        for b, n in zip(betas, NAMES)]))
                lines.append(f"{dist:6s} {estimator:10s} {m:5d}  {mean_se(tp):>14s} "
                             f"{mean_se(exact):>14s} {mean_se(a_s):>16s} {mean_se(a_d):>16s}"
                             f"  {(time.time() - t0) / reps:.2f}")
                print(lines[-1], flush=True)
    return lines


def rules(reps, rng):
    """The share of true variables kept by three rules on the same pieces."""
    lines = ["", "2. Selection rules (per-block whitening): share of the true variables kept "
             "(mean over blocks and reps, MC SE)",
             f"   reps = {reps}",
             f"{'dist':6s} {'m':>5s}  {'one step':>14s} {'step 1 only':>14s} "
             f"{'two steps':>14s}"]
    for dist in ("gauss", "t5"):
        for m in (200, 500, 1000, 2000):
            got = {"one": [], "step1": [], "two": []}
            for _ in range(reps):
                y, xs, _, active = simulate(m, dist, rng)
                labels = [[str(j) for j in range(n)] for n in WIDTHS]
                zs, white = _whiten_arrays(xs, None, NAMES, labels, "sample", "per-block")
                yc = y - y.mean()
                fac = block_factors(yc, zs)
                target = selection_target(yc, zs, None, white, fac, None)
                two, screen, _ = sparse_supports(target, fac.weights, [S] * 3)
                for k in range(3):
                    one = sum(fac.weights[(p, k)] * _slice_energy(t, p.index(k) + 1)
                              for p, t in target.items() if k in p)
                    got["one"].append(len(set(_top(one, S).tolist()) & active[k]) / S)
                    got["step1"].append(len(set(_top(screen[k], S).tolist()) & active[k]) / S)
                    got["two"].append(len(set(two[k].tolist()) & active[k]) / S)
            lines.append(f"{dist:6s} {m:5d}  {mean_se(got['one']):>14s} "
                         f"{mean_se(got['step1']):>14s} {mean_se(got['two']):>14s}")
            print(lines[-1], flush=True)
    return lines


def cv(reps, rng):
    lines = ["", "3. sparsity=\"cv\" (per-block whitening): the chosen common count and the "
             "true variables kept",
             f"   reps = {reps}",
             f"{'dist':6s} {'m':>5s}  {'P(s = 3)':>14s} {'mean s':>14s} {'TP':>14s} "
             f"{'FP':>14s}  s/rep"]
    for dist in ("gauss", "t5"):
        for m in (500, 1000):
            hit, size, tp, fp = [], [], [], []
            t0 = time.time()
            for _ in range(reps):
                y, xs, _, active = simulate(m, dist, rng)
                res = model(y, xs).fit(1, sparsity="cv", independent_blocks=True,
                                       seed=rng.integers(2**31))
                s = res.sparsity["g"]
                hit.append(s == S)
                size.append(s)
                for k, n in enumerate(NAMES):
                    kept = {int(v[len(n):]) for v in res.support[n]}
                    tp.append(len(kept & active[k]))
                    fp.append(len(kept - active[k]))
            lines.append(f"{dist:6s} {m:5d}  {mean_se(hit):>14s} {mean_se(size):>14s} "
                         f"{mean_se(tp):>14s} {mean_se(fp):>14s}  "
                         f"{(time.time() - t0) / reps:.2f}")
            print(lines[-1], flush=True)
    return lines


def main_effects(reps, rng):
    lines = ["", "4. main_effects_test() (robust), rejection rate at 0.05 per block "
             "(MC SE); H0: the link above (no main effect); power: plus 0.5 u1",
             f"   reps = {reps}, m = 500",
             f"{'dist':6s} {'estimator':10s} {'case':6s} "
             + " ".join(f"{n:>14s}" for n in NAMES)]
    for dist in ("gauss", "t5"):
        for estimator in ("per-block", "joint"):
            for case, main in (("H0", 0.0), ("power", 0.5)):
                rej = []
                for _ in range(reps):
                    y, xs, _, _ = simulate(500, dist, rng, main=main)
                    ib = estimator == "per-block"
                    res = model(y, xs).fit(1, independent_blocks=ib,
                                           whitening="auto" if ib else "sample")
                    rej.append((res.main_effects_test("robust").pvalues < 0.05).to_numpy())
                rej = np.array(rej)
                lines.append(f"{dist:6s} {estimator:10s} {case:6s} "
                             + " ".join(f"{mean_se(rej[:, k]):>14s}" for k in range(3)))
                print(lines[-1], flush=True)
    return lines


if __name__ == "__main__":
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    cv_reps = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    rng = np.random.default_rng(20240535)
    t0 = time.time()
    out = [f"study_kblock_sparse.py, reps={reps}, cv_reps={cv_reps}, seed 20240535, "
           f"jdr_stats {jdr.__version__}, widths {WIDTHS}, 3 active per block", ""]
    out += recovery(reps, rng)
    out += rules(reps, rng)
    out += cv(cv_reps, rng)
    out += main_effects(reps, rng)
    out += ["", f"total {time.time() - t0:.0f} s"]
    with open("studies/results/study_kblock_sparse.txt", "w", encoding="utf-8") as fh:
        fh.write("\n".join(out) + "\n")
