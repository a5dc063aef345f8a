"""The spectral and combined rank tests of a response of q > 1 columns (theory 6e, 6f).

For each design and size n1 = n2 = n, m, q: data with r = 2 directions (or
none, ``--rank 0``) and a response of q columns; on every sample the default
``rank_tests`` at ``q n1 n2 / m >= 20`` (the combined test, whose table also
holds the robust and spectral p-values) at the ranks 0..r.  Reported: the
rejection rates at 5% of H0: r <= true r (size) and of H0: r <= true r - 1
(power) for the robust test alone, the spectral test alone and the combined
test, with the band alpha +- (2.5 MC SE + 0.005), and the share of samples
in which each test's sequential selection (the first rank not rejected at
5%, what ``fit("auto")`` does) chooses the true r.

Responses (``t_j = (a U)_j (b V)_j`` the r bilinear terms, e N(0, 1) noise):

* ``multi``: q = 3 outcomes, ``y_1 = t_1 + e``, ``y_2 = t_1 + t_2 + e``,
  ``y_3 = e`` (one outcome unrelated);
* ``categorical``: C = 3 classes (q = 2): the class of the largest of
  ``t_1 + e``, ``t_2 + e``, ``e`` (a multinomial choice model).

``--strength`` multiplies the terms ``t``.

Blocks: ``gaussian``, ``t5`` (t(5) entries), ``mixed`` (half Bernoulli(0.3),
half exponential columns, standardised).  Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice -n 5 \\
        python studies/study_spectral_q.py --n 150 --m 2000 --reps 100
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings

import numpy as np
import pandas as pd

import jdr_stats as jdr

ALPHA = 0.05


def blocks(design: str, m: int, n: int, rng: np.random.Generator):
    def one():
        if design == "gaussian":
            return rng.standard_normal((m, n))
        if design == "t5":
            return rng.standard_t(5, (m, n)) / np.sqrt(5 / 3)
        half = n // 2
        bern = ((rng.random((m, half)) < 0.3) - 0.3) / np.sqrt(0.21)
        return np.hstack([bern, rng.exponential(1.0, (m, n - half)) - 1.0])
    return one(), one()


def draw(design: str, response: str, m: int, n: int, r: int, rng: np.random.Generator,
         strength: float = 1.0):
    a, b = blocks(design, m, n, rng)
    u = np.linalg.qr(rng.standard_normal((n, 2)))[0]
    v = np.linalg.qr(rng.standard_normal((n, 2)))[0]
    t = strength * (a @ u) * (b @ v) if r else np.zeros((m, 2))
    e = rng.standard_normal((m, 3))
    if r == 1:
        t[:, 1] = 0.0
    if response == "multi":
        y = np.column_stack([t[:, 0] + e[:, 0], t[:, 0] + t[:, 1] + e[:, 1], e[:, 2]])
        return y, a, b
    util = np.column_stack([t[:, 0] + e[:, 0], t[:, 1] + e[:, 1], e[:, 2]])
    y = pd.Categorical(np.array(["x", "y", "z"])[np.argmax(util, axis=1)])
    return y, a, b


def main() -> None:
    warnings.simplefilter("ignore")
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--designs", nargs="+", default=["gaussian", "t5", "mixed"])
    ap.add_argument("--responses", nargs="+", default=["multi", "categorical"])
    ap.add_argument("--n", type=int, default=150)
    ap.add_argument("--m", type=int, default=2000)
    ap.add_argument("--rank", type=int, default=2, choices=(0, 2))
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--flips", type=int, default=39)
    ap.add_argument("--seed", type=int, default=20261127)
    ap.add_argument("--strength", type=float, default=1.0,
                    help="factor of the bilinear terms t (1: unit strength)")
    args = ap.parse_args()
    r = args.rank
    se = np.sqrt(ALPHA * (1 - ALPHA) / args.reps)
    lo, hi = ALPHA - 2.5 * se - 0.005, ALPHA + 2.5 * se + 0.005
    print(f"# study_spectral_q: python {platform.python_version()}, numpy {np.__version__}, "
          f"jdr_stats {jdr.__version__}; n1 = n2 = {args.n}, m = {args.m}, true r = {r}, "
          f"strength {args.strength:g}, "
          f"{args.flips} flips, {args.reps} samples per line, seed [{args.seed}, design, "
          f"response]; band [{lo:.3f}, {hi:.3f}]")
    print(f"{'design':<9} {'response':<12} {'q n1 n2/m':>9} {'method':>8} | size (H0: r <= {r})"
          f" robust spectral combined | power (H0: r <= {r - 1}) robust spectral combined"
          f" | P(r_hat = {r}) robust spectral combined | s/rep")
    for di, design in enumerate(args.designs):
        for ri, response in enumerate(args.responses):
            rng = np.random.default_rng([args.seed, di, ri])
            out, start, method, ratio = [], time.perf_counter(), "", 0.0
            for _ in range(args.reps):
                y, a, b = draw(design, response, args.m, args.n, r, rng, args.strength)
                model = jdr.JointDimReduction(y, a, b)
                res = model.fit(max(r, 1))
                seed = int(rng.integers(2**32))
                tab = res.rank_tests(max_rank=r, n_perm=args.flips, seed=seed)
                # the spectral test alone, same seed: its p-values are the combined
                # table's where that draws flips (it skips the ranks the robust
                # test decides)
                spec = res.rank_tests("spectral", max_rank=r, n_perm=args.flips, seed=seed)
                method = tab.method
                q = res.moments.q
                ratio = q * args.n**2 / args.m
                robust = tab.table.get("pvalue_robust", tab.table["pvalue"])  # below 20
                t = np.column_stack([robust, spec.table["pvalue"],
                                     tab.table["pvalue"]])
                # the rank the sequential tests select at 5% (first non-rejection)
                hit = [float(np.all(t[:r, j] <= ALPHA) and t[r, j] > ALPHA) for j in range(3)]
                out.append(np.concatenate([t[r], t[r - 1] if r else np.full(3, np.nan), hit]))
            arr = np.asarray(out)
            rej = np.concatenate([np.mean(arr[:, :6] <= ALPHA, axis=0), arr[:, 6:].mean(axis=0)])
            per = (time.perf_counter() - start) / args.reps
            print(f"{design:<9} {response:<12} {ratio:>9.1f} {method:>8} | "
                  f"{'':>17} {rej[0]:>6.3f} {rej[1]:>8.3f} {rej[2]:>8.3f} | "
                  f"{'':>23} {rej[3]:>6.3f} {rej[4]:>8.3f} {rej[5]:>8.3f} | "
                  f"{'':>10} {rej[6]:>6.3f} {rej[7]:>8.3f} {rej[8]:>8.3f} | {per:.2f}",
                  flush=True)


if __name__ == "__main__":
    main()
