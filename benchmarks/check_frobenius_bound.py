"""Prototype: a Frobenius-norm bound calibrated by the spectral test's sign flips.

Not a library method (yet).  Eckart-Young holds in the Frobenius norm too:
for rank-k projectors P, Q, ``Lambda_k = m sum_{j>k} s_j^2 / s_y^2 <=
min(||(I - P) X||_F^2, ||X (I - Q)||_F^2) m / s_y^2``, and the sign flips of
the spectral test (theory 6e: two signs per row, cross-fitted projectors)
reproduce the law of that bound as they do the spectral one.  This script
compares, on the same samples and the same flips (``--flips``, one pass of
ranks 1 and 2; designs of ``study_width.draw``, r = 2), the rejection rates at
5% of H0: r <= 2 (size) and H0: r <= 1 (power) of

* ``spectral``: the library's spectral test;
* ``frobenius``: ``Lambda_k`` against the flips of the Frobenius bound;
* ``max``: one test of both statistics, ``min(p_spectral, p_frobenius)``
  referred to the same flips' distribution of that minimum (no Bonferroni);
* ``robust`` and ``combined`` (the library's default at width) on the same samples.

Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python benchmarks/check_frobenius_bound.py --n 100 --m 1000
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import study_width as sw

import jdr_stats as jdr
from jdr_stats.inference import _rank_spectral as sp
from jdr_stats.inference._rank_stats import _whiten

ALPHA = 0.05


class _Both(sp._SpectralBatch):
    """Per flip and rank: [spectral left, right, Frobenius left, right] (scaled)."""

    def __call__(self, rngs):
        y, ks = self.y, self.ks
        pm = np.array([-1.0, 1.0])
        out = np.empty((len(rngs), len(ks), 4))
        for j, g in enumerate(rngs):
            sa, sb = g.choice(pm, size=y.shape[0]), g.choice(pm, size=y.shape[0])
            for i, (lk, rk) in enumerate(self._matrices(y, sa, sb)):
                out[j, i, :2] = sp._sides([lk], [rk])
                out[j, i, 2:] = (np.sum(lk * lk), np.sum(rk * rk))
        return out / self.scale


def rank_p(obs: np.ndarray, reps: np.ndarray) -> np.ndarray:
    """(1 + #{reps >= obs}) / (B + 1) for each entry of ``obs`` (1-d)."""
    return (1 + (reps[None, :] >= obs[:, None]).sum(axis=1)) / (reps.size + 1)


def pvalues(y, a, b, flips: int, rng: np.random.Generator) -> np.ndarray:
    """[spectral, frobenius, max] at k = 1, then at k = 2."""
    model = jdr.JointDimReduction(y, a, b)
    w = _whiten(model.data, model.moments())
    yw, aw, bw = w.in_memory()
    s = np.linalg.svd(aw.T @ (yw[:, None] * bw), compute_uv=False) ** 2 / (w.m * w.var_y)
    work = _Both(w, range(1, 3), rng)
    reps = np.concatenate([work([np.random.default_rng(x)]) for x in rng.integers(2**62, size=flips)])
    out = np.empty((2, 3))
    for j, k in enumerate((1, 2)):
        t, f = s[k] * (1 - 1e-10), s[k:].sum() * (1 - 1e-10)
        assert abs(s[k] - sp.spectral_statistic(w, k)) <= 1e-8 * s[0]
        ts, fs = reps[:, j, :2].min(axis=1), reps[:, j, 2:].min(axis=1)
        p_t, p_f = rank_p(np.array([t]), ts)[0], rank_p(np.array([f]), fs)[0]
        # the min-p statistic of every replicate against the others and the observed bound
        mins = np.minimum(rank_p(ts, ts), rank_p(fs, fs))
        out[j] = p_t, p_f, (1 + np.sum(mins <= min(p_t, p_f))) / (flips + 1)
    return out


def main() -> None:
    warnings.simplefilter("ignore")
    ap = argparse.ArgumentParser()
    ap.add_argument("--designs", nargs="+", default=list(sw.DESIGNS))
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--m", type=int, default=1000)
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--flips", type=int, default=99)
    ap.add_argument("--seed", type=int, default=20261127)
    args = ap.parse_args()
    print(f"# check_frobenius_bound: python {platform.python_version()}, numpy {np.__version__}; "
          f"n1 = n2 = {args.n}, m = {args.m} (d/m = {args.n ** 2 / args.m:.1f}), r = 2, "
          f"{args.flips} flips, {args.reps} samples, seed [{args.seed}, design length]")
    print(f"{'design':<13} size: {'spectral':>8} {'frobenius':>9} {'max':>6} {'robust':>6} "
          f"{'combined':>8} | power: {'spectral':>8} {'frobenius':>9} {'max':>6} {'robust':>6} "
          f"{'combined':>8} {'s/rep':>6}")
    for design in args.designs:
        rng = np.random.default_rng([args.seed, len(design)])
        rows, start = [], time.perf_counter()
        for _ in range(args.reps):
            y, a, b = sw.draw(design, args.m, args.n, 2, rng)
            p = pvalues(y, a, b, args.flips, rng)
            r2, r1 = sw.robust_p(y, a, b, 2), sw.robust_p(y, a, b, 1)
            rows.append([*p[1], r2, min(1, 2 * min(r2, p[1, 0])),
                         *p[0], r1, min(1, 2 * min(r1, p[0, 0]))])
        rej = np.mean(np.asarray(rows) <= ALPHA, axis=0)
        print(f"{design:<13}       {rej[0]:>8.3f} {rej[1]:>9.3f} {rej[2]:>6.3f} {rej[3]:>6.3f} "
              f"{rej[4]:>8.3f} |        {rej[5]:>8.3f} {rej[6]:>9.3f} {rej[7]:>6.3f} "
              f"{rej[8]:>6.3f} {rej[9]:>8.3f} {(time.perf_counter() - start) / args.reps:>6.2f}",
              flush=True)


if __name__ == "__main__":
    main()
