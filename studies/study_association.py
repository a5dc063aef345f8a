"""Level and power of the test of no association at p >> n (issue 36, item 2).

``--statistic combined`` (the default of ``association_test``) or ``dense``
(the cross moment alone, the default before the combined statistic).

``results.association_test(n_perm, seed)`` permutes the response's rows
against the blocks whitened as the fit whitens them (``whitening="auto"``:
OAS shrinkage at these widths); it is exact under exchangeability at any
width.  This study checks that on designs of the battery and measures its
power.

* ``level``: y independent of the blocks.  Replication i draws the blocks
  from ``bilinear(m, n1, n2, 1, seed=...)`` with the design's options and y
  from an independent draw of the same scenario (so y has the design's
  marginal law: Gaussian noise plus an interaction, t(5) blocks, a binary
  0/1 response of prevalence 0.2, t(6) blocks with AR(1) 0.5), then
  ``fit(rank=1).association_test(B, seed)``.  With B = 99 permutations
  P(p <= 0.05) = 0.05 and P(p <= 0.10) = 0.10 exactly under H0.  The mean
  in-sample R-squared of the rank-1 fit is printed too at m = 40 (what the
  summary calls descriptive only: it is large under H0).
  The binary cell at m = 60 (0.140 at 0.10, 3 SE, in the first run) is run
  again with 3 x the replications and another seed.
* ``power``: ``bilinear(m, n1, n2, 1, strengths=[s])`` (Gaussian blocks,
  N(0, 1) noise, one direction of strength s), rejection rate at 0.05, at
  the three widths and at m = 100 with 100 + 20 columns.
* ``main``: main effects only (two classes, the second shifting 5 columns of
  each block by delta), both statistics: the cross moment alone is blind to
  them, and its permutations carry the shifts into the cross moment, so its
  p-values there are pushed towards 1.

* ``sparse``: one active pair (``y = c a_1 b_1 + e``) or one active
  variable (``y = c a_1 + e``), Gaussian blocks and noise, at m = 40-200
  and 100-2000 columns, the level (``y = e``) beside them: the combined
  statistic (with its max-type parts) against the permutation test of the
  max-type statistic that targets the signal alone (``max_ij corr(y,
  a_i b_j)^2`` over the products of centred columns for the pair,
  ``max_j corr(y, x_j)^2`` over every variable for the variable), the
  same B permutations; the ratio of their powers is the issue's criterion.
  The strength ``c`` shrinks as ``1 / sqrt(m)`` (``c = 1`` and ``0.6`` at
  m = 50), so the powers stay between the extremes.

Monte Carlo SE: sqrt(p (1 - p) / R).  Seeds: replication i of cell c uses
``np.random.default_rng([seed, c, i])``.

Run (single-threaded BLAS; about 5 minutes on the shared 2-core machine)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/study_association.py --reps 500 --n-perm 99
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/study_association.py --part power --statistic dense --reps 500 --n-perm 99

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/study_association.py --part sparse --reps 100 --n-perm 99

Output recorded in ``studies/results/study_association.txt`` (part ``sparse``
in ``studies/results/study_association_sparse.txt``).
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import time

import numpy as np

import jdr_stats as jdr

WIDTHS = ((40, 120, 21), (60, 300, 50), (100, 1000, 50))
DESIGNS = {
    "gaussian": {},
    "t5": {"design": "t5"},
    "t6-ar1": {"design": "t6", "ar1": 0.5},
    "binary": {"response": "binary", "prevalence": 0.2},
}
STRENGTHS = (1.0, 2.0, 3.0, 5.0)
#: power also at m = 100 with 100 + 20 columns (n1 + n2 >= m still)
POWER_WIDTHS = (*WIDTHS, (100, 100, 20))


def _mc(p: float, reps: int) -> float:
    return float(np.sqrt(p * (1 - p) / reps))


def level(reps: int, n_perm: int, seed: int, designs: dict[str, dict] | None = None,
          widths: tuple[tuple[int, int, int], ...] = WIDTHS, title: str = "level",
          statistic: str = "combined") -> None:
    print(f"== {title}: y independent of the blocks; statistic={statistic!r}; "
          "rejection rates (MC SE) ==")
    print(f"{'design':<10}{'m':>5}{'n1':>6}{'n2':>5}  {'p<=0.05':>15}  {'p<=0.10':>15}"
          f"  {'mean R2':>8}  {'s/rep':>6}")
    for c, (name, opts) in enumerate((designs or DESIGNS).items()):
        for w, (m, n1, n2) in enumerate(widths):
            t0 = time.perf_counter()
            ps, r2 = [], []
            for i in range(reps):
                rng = np.random.default_rng([seed, c, w, i])
                blocks = jdr.simulate.bilinear(m, n1, n2, 1, seed=rng, **opts)
                ydraw = jdr.simulate.bilinear(m, n1, n2, 1, seed=rng, **opts)
                if np.ptp(ydraw.y) == 0:  # a binary draw of one class: draw again
                    ydraw = jdr.simulate.bilinear(m, n1, n2, 1, seed=rng, **opts)
                res = jdr.JointDimReduction(ydraw.y, blocks.a, blocks.b).fit(rank=1)
                ps.append(res.association_test(n_perm, seed=rng, statistic=statistic).pvalue)
                if m == 40:
                    r2.append(res.rsquared)
            p = np.asarray(ps)
            r05, r10 = float(np.mean(p <= 0.05)), float(np.mean(p <= 0.10))
            r2s = f"{np.mean(r2):8.3f}" if r2 else f"{'-':>8}"
            print(f"{name:<10}{m:>5}{n1:>6}{n2:>5}  {r05:7.3f} ({_mc(0.05, reps):.3f})"
                  f"  {r10:7.3f} ({_mc(0.10, reps):.3f})  {r2s}"
                  f"  {(time.perf_counter() - t0) / reps:6.3f}", flush=True)


def power(reps: int, n_perm: int, seed: int, statistic: str = "combined") -> None:
    print("== power: bilinear, Gaussian blocks, one direction of strength s; "
          f"statistic={statistic!r}; rejection rate at 0.05 (MC SE) ==")
    print(f"{'m':>5}{'n1':>6}{'n2':>5}" + "".join(f"{f's={s:g}':>16}" for s in STRENGTHS))
    for w, (m, n1, n2) in enumerate(POWER_WIDTHS):
        cells = []
        for c, s in enumerate(STRENGTHS):
            hits = 0
            for i in range(reps):
                rng = np.random.default_rng([seed, 100 + c, w, i])
                d = jdr.simulate.bilinear(m, n1, n2, 1, strengths=[s], seed=rng)
                res = jdr.JointDimReduction(d.y, d.a, d.b).fit(rank=1)
                hits += res.association_test(n_perm, seed=rng,
                                             statistic=statistic).pvalue <= 0.05
            r = hits / reps
            cells.append(f"{r:9.3f} ({_mc(r, reps):.3f})")
        print(f"{m:>5}{n1:>6}{n2:>5}" + "".join(f"{x:>16}" for x in cells), flush=True)


SHIFTS = (0.5, 1.0)


def main_effects(reps: int, n_perm: int, seed: int) -> None:
    """Two classes of m/2 rows; the second shifts the mean of the first 5
    columns of each block by delta (Gaussian blocks): main effects only,
    nothing in the cross moment.  Rejection rate at 0.05 of both statistics."""
    print("== main effects only: 2 classes, class 2 shifts 5 columns of each block by "
          "delta; rejection rate at 0.05 (MC SE) and mean p ==")
    print(f"{'m':>5}{'n1':>6}{'n2':>5}{'delta':>7}  {'dense':>24}  {'combined':>24}")
    for w, (m, n1, n2) in enumerate(POWER_WIDTHS):
        for c, delta in enumerate(SHIFTS):
            hits = {"dense": 0, "combined": 0}
            means = {"dense": 0.0, "combined": 0.0}
            for i in range(reps):
                rng = np.random.default_rng([seed, 200 + c, w, i])
                a, b = rng.normal(size=(m, n1)), rng.normal(size=(m, n2))
                g = rng.permutation(np.repeat([0, 1], [m // 2, m - m // 2]))
                a[:, :5] += delta * g[:, None]
                b[:, :5] += delta * g[:, None]
                res = jdr.JointDimReduction(g.astype(float), a, b).fit(rank=1)
                for st in hits:
                    pv = res.association_test(n_perm, seed=i, statistic=st).pvalue
                    hits[st] += pv <= 0.05
                    means[st] += pv / reps
            cells = [f"{hits[st] / reps:7.3f} ({_mc(hits[st] / reps, reps):.3f}) p {means[st]:.2f}"
                     for st in ("dense", "combined")]
            print(f"{m:>5}{n1:>6}{n2:>5}{delta:>7g}  {cells[0]:>24}  {cells[1]:>24}",
                  flush=True)


#: (m, n1, n2, replications) of part ``sparse``: the widest cell costs a
#: shrinkage fit of 2000 columns per draw, so it has fewer replications.
SPARSE_CELLS = ((40, 50, 50, 1), (100, 200, 200, 1), (200, 100, 100, 1), (50, 100, 100, 1),
                (40, 1000, 1000, 4))


def _maxcorr_pvalue(y: np.ndarray, cols: np.ndarray, n_perm: int,
                    rng: np.random.Generator) -> float:
    """Permutation p-value of ``max_j corr(y, cols_j)^2`` (columns centred
    and scaled once; the comparator of part ``sparse``)."""
    c = cols - cols.mean(axis=0)
    c = c / np.linalg.norm(c, axis=0)

    def stat(v: np.ndarray) -> float:
        v = v - v.mean()
        return float(np.max((c.T @ v) ** 2) / (v @ v))

    t0 = stat(y)
    null = [stat(y[rng.permutation(len(y))]) for _ in range(n_perm)]
    return (1 + sum(t >= t0 * (1 - 1e-10) for t in null)) / (n_perm + 1)


def sparse_signals(reps: int, n_perm: int, seed: int) -> None:
    print("== sparse signals: one active pair or variable; rejection rate at 0.05 (MC SE) of "
          "the combined statistic, the cross moment alone and the max-type comparator ==")
    print(f"{'m':>5}{'n1':>6}{'n2':>6}{'R':>5}  {'signal':<9}{'c':>6}  {'combined':>15}"
          f"{'dense':>15}{'max-type':>15}  {'ratio':>6}")
    for w, (m, n1, n2, cut) in enumerate(SPARSE_CELLS):
        r_cell = max(10, reps // cut)
        for c, signal in enumerate(("none", "pair", "variable")):
            strength = {"none": 0.0, "pair": 1.0, "variable": 0.6}[signal] * np.sqrt(50 / m)
            hits = {"combined": 0, "dense": 0, "max-type": 0}
            for i in range(r_cell):
                rng = np.random.default_rng([seed, 300 + c, w, i])
                a, b = rng.normal(size=(m, n1)), rng.normal(size=(m, n2))
                y = rng.normal(size=m)
                if signal == "pair":
                    y = y + strength * a[:, 0] * b[:, 0]
                    ac, bc = a - a.mean(axis=0), b - b.mean(axis=0)
                    comp = (ac[:, :, None] * bc[:, None, :]).reshape(m, -1)
                elif signal == "variable":
                    y = y + strength * a[:, 0]
                    comp = np.hstack([a, b])
                else:
                    comp = np.hstack([a, b])
                res = jdr.JointDimReduction(y, a, b).fit(rank=1)
                for st in ("combined", "dense"):
                    hits[st] += res.association_test(n_perm, seed=rng,
                                                     statistic=st).pvalue <= 0.05
                hits["max-type"] += _maxcorr_pvalue(y, comp, n_perm, rng) <= 0.05
            rates = {k: v / r_cell for k, v in hits.items()}
            cells = "".join(f"{rates[k]:8.3f} ({_mc(rates[k], r_cell):.3f})"
                            for k in ("combined", "dense", "max-type"))
            ratio = (f"{rates['combined'] / rates['max-type']:6.2f}"
                     if signal != "none" and rates["max-type"] > 0 else f"{'-':>6}")
            print(f"{m:>5}{n1:>6}{n2:>6}{r_cell:>5}  {signal:<9}{strength:6.2f}  {cells}  {ratio}",
                  flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--part", choices=("level", "power", "main", "sparse", "both"), default="both")
    ap.add_argument("--statistic", choices=("combined", "dense"), default="combined",
                    help="the statistic of the level and power parts")
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--n-perm", type=int, default=99)
    ap.add_argument("--seed", type=int, default=20261127)
    args = ap.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    print(f"study_association: reps={args.reps} n_perm={args.n_perm} seed={args.seed}; "
          f"jdr_stats {jdr.__version__} commit {commit}; {platform.machine()}, "
          f"python {platform.python_version()}, numpy {np.__version__}")
    t0 = time.perf_counter()
    if args.part in ("level", "both"):
        level(args.reps, args.n_perm, args.seed, statistic=args.statistic)
        if args.statistic == "dense":
            # the cell furthest from its nominal level in the first recorded
            # run, again with 3 x the replications and another seed
            level(3 * args.reps, args.n_perm, args.seed + 1, {"binary": DESIGNS["binary"]},
                  ((60, 300, 50),), title="recheck of one cell, another seed",
                  statistic=args.statistic)
    if args.part in ("power", "both"):
        power(args.reps, args.n_perm, args.seed, statistic=args.statistic)
    if args.part in ("main", "both"):
        main_effects(args.reps, args.n_perm, args.seed)
    if args.part in ("sparse", "both"):
        sparse_signals(args.reps, args.n_perm, args.seed)
    print(f"total {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    main()
