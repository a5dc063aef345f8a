"""Main effects leaking into the interaction estimand: today's default
(``interactions="stein"``) against ``fit(..., interactions="orthogonal")``.

Questions: does a response depending on the blocks only through linear main
effects make the rank-0 test reject, on skewed, heavy-tailed or dummy-column
correlated designs, and at which m?  Does the orthogonal estimand's test hold
its size there?  What do its size at the true rank, its power and its
directions look like under a bilinear link, and what does it lose against the
default on Gaussian designs?

Designs (two blocks of n1 = n2 = 6, correlated through one shared factor
``f`` added to every column: ``a = g + f 1^T``, ``b = g' + f 1^T``, ``g``,
``g'`` (m x 6) i.i.d., so every cross-block correlation is 1/2):

* ``gaussian``: ``f``, ``g`` standard normal;
* ``gamma``: ``f`` and ``g`` standardised centred Gamma(2) (skewness 1.41);
* ``t5``: ``f`` and ``g`` standardised t(5);
* ``dummy``: the ``gamma`` design with column a0 replaced by the dummy
  ``1{f > 0.84}`` (about 20 % ones; correlated with block b, skewed).

Part 1 (leak): ``y = a0 + 0.5 b1 + N(0, 1)`` (pure linear main effects), and,
to show what the orthogonal estimand does not remove, ``y = a0^2 + b1^2 +
N(0, 1)`` (within-block curvature) on ``gamma``.  Rejection rate of
``H0: r = 0`` at alpha = 0.05: the default's robust test
(``fit(1).rank_tests(max_rank=0)``, joint estimator) and the orthogonal test
(``orthogonal_rank_tests(..., max_rank=0)``, joint and per-block
whitening); m = 1000, 4000, 16000.

Part 2 (size and power under a bilinear rank-2 link):
``y = 0.35 [(u1'a)(v1'b) + 0.6 (u2'a)(v2'b)] + a0 + 0.5 b1 + N(0, 1)``
with ``U``, ``V`` fixed random orthonormal 6 x 2 bases (seeded), on the
``gaussian`` and ``gamma`` designs, and without the main effects
(``main=0``: the efficiency the residual costs when there is nothing to
remove) on ``gaussian``; m = 1000, 4000: rejection rates at
k = 0, 1 (power) and k = 2 (size at the true rank; the default's bias on
non-Gaussian designs, a separate problem, shows there for both estimands),
the share of ``fit("auto")`` choosing 2, and the mean largest principal
angle (degrees) between the rank-2 directions and ``span(U)``, ``span(V)``.

Part 3 (within-block curvature): the rank-0 rejection rate of the
orthogonal test against ``interactions="orthogonal_quadratic"`` (the
residual also on the within-block products), joint and per-block
whitening, under ``y = a0^2 + b1^2 + N(0, 1)`` on ``gamma`` and
``dummy``, and under the linear main effects on ``gamma``; m = 1000, 4000.

Every cell draws its samples from its own seed (``SEED`` + a cell index);
rates +- MC SE ``sqrt(p (1 - p) / R)``.

Command (a few minutes, one BLAS thread)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. \\
        python studies/study_main_effect_leak.py > studies/results/study_main_effect_leak.txt

(parts 1-2 with ``--reps 400``, part 3 with ``--part 3 --reps 200``; each
part's header gives its command.)
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import time
import warnings

import numpy as np
import scipy

import jdr_stats as jdr
from jdr_stats.inference.orthogonal_rank import orthogonal_rank_tests

SEED = 20261202
N = 6


def _entries(kind: str, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    if kind == "gaussian":
        return rng.standard_normal(shape)
    if kind in ("gamma", "dummy"):
        return (rng.gamma(2.0, 1.0, size=shape) - 2.0) / np.sqrt(2.0)
    if kind == "t5":
        return rng.standard_t(5, size=shape) / np.sqrt(5.0 / 3.0)
    raise ValueError(kind)


def design(kind: str, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    f = _entries(kind, rng, (m, 1))
    a = _entries(kind, rng, (m, N)) + f
    b = _entries(kind, rng, (m, N)) + f
    if kind == "dummy":
        a[:, 0] = (f[:, 0] > 0.84).astype(float)
    return a, b


def rate(x: list[bool]) -> str:
    p = float(np.mean(x))
    return f"{p:.3f}+-{np.sqrt(p * (1 - p) / len(x)):.3f}"


def mean_se(x: list[float]) -> str:
    v = np.asarray(x)
    return f"{v.mean():6.2f}+-{v.std(ddof=1) / np.sqrt(v.size):.2f}"


def part1(reps: int) -> None:
    print("## 1. rank-0 rejection rate (alpha = 0.05) under main effects only")
    print(f"{'design':8s} {'y':14s} {'m':>6s} {'R':>4s} | {'stein (robust)':>14s} "
          f"{'orthogonal':>12s} {'orth. per-block':>15s}")
    cell = 0
    for kind, link in [("gamma", "linear"), ("t5", "linear"), ("dummy", "linear"),
                       ("gaussian", "linear"), ("gamma", "quadratic")]:
        for m in (1000, 4000, 16000):
            cell += 1
            rng = np.random.default_rng(SEED + cell)
            r = reps if m < 16000 else max(reps // 2, 1)
            out: dict[str, list[bool]] = {"stein": [], "orth": [], "orth_pb": []}
            t0 = time.time()
            for _ in range(r):
                a, b = design(kind, m, rng)
                lin = a[:, 0] + 0.5 * b[:, 1] if link == "linear" else a[:, 0]**2 + b[:, 1]**2
                y = lin + rng.standard_normal(m)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    p0 = jdr.JointDimReduction(y, a, b).fit(1).rank_tests(max_rank=0)
                out["stein"].append(p0.table["pvalue"].iloc[0] < 0.05)
                out["orth"].append(orthogonal_rank_tests(
                    y, a, b, max_rank=0).table["pvalue"].iloc[0] < 0.05)
                out["orth_pb"].append(orthogonal_rank_tests(
                    y, a, b, joint=False, max_rank=0).table["pvalue"].iloc[0] < 0.05)
            print(f"{kind:8s} {link:14s} {m:6d} {r:4d} | {rate(out['stein']):>14s} "
                  f"{rate(out['orth']):>12s} {rate(out['orth_pb']):>15s} "
                  f"({time.time() - t0:.0f} s)", flush=True)


def _angle(est: np.ndarray, true: np.ndarray) -> float:
    return float(np.degrees(np.max(jdr.metrics.principal_angles(est, true))))


def part2(reps: int) -> None:
    print("\n## 2. bilinear rank-2 link plus main effects: rejection rates at k = 0, 1 "
          "(power) and k = 2 (size), share of fit('auto') = 2, largest angle (deg)")
    basis = np.random.default_rng(SEED)
    u = np.linalg.qr(basis.standard_normal((N, 2)))[0]
    v = np.linalg.qr(basis.standard_normal((N, 2)))[0]
    cell = 100
    for kind, main in (("gaussian", 1.0), ("gaussian", 0.0), ("gamma", 1.0)):
        for m in (1000, 4000):
            cell += 1
            rng = np.random.default_rng(SEED + cell)
            rows: dict[str, dict[str, list]] = {
                e: {"k0": [], "k1": [], "k2": [], "auto2": [], "ang_a": [], "ang_b": []}
                for e in ("stein", "orthogonal")}
            t0 = time.time()
            for _ in range(reps):
                a, b = design(kind, m, rng)
                ua, vb = a @ u, b @ v
                y = 0.35 * (ua[:, 0] * vb[:, 0] + 0.6 * ua[:, 1] * vb[:, 1]) \
                    + main * (a[:, 0] + 0.5 * b[:, 1]) + rng.standard_normal(m)
                model = jdr.JointDimReduction(y, a, b)
                for est in ("stein", "orthogonal"):
                    res = model.fit(2, interactions=est)  # type: ignore[arg-type]
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        pv = res.rank_tests(max_rank=2).table["pvalue"].to_numpy()
                    rec = rows[est]
                    for k in range(3):
                        rec[f"k{k}"].append(pv[k] < 0.05)
                    first = int(np.argmax(pv > 0.05)) if np.any(pv > 0.05) else 3
                    rec["auto2"].append(first == 2)
                    rec["ang_a"].append(_angle(np.asarray(res.directions_a), u))
                    rec["ang_b"].append(_angle(np.asarray(res.directions_b), v))
            for est, rec in rows.items():
                print(f"{kind:8s} main={main:.0f} m={m:5d} R={reps:4d} {est:10s} | k=0 {rate(rec['k0'])} "
                      f"k=1 {rate(rec['k1'])} k=2 {rate(rec['k2'])} | auto=2 "
                      f"{rate(rec['auto2'])} | angle a {mean_se(rec['ang_a'])} "
                      f"b {mean_se(rec['ang_b'])}", flush=True)
            print(f"# ({time.time() - t0:.0f} s)", flush=True)


def part3(reps: int) -> None:
    print("\n## 3. rank-0 rejection rate (alpha = 0.05): interactions='orthogonal' against "
          "'orthogonal_quadratic' (joint and per-block whitening)")
    print(f"{'design':8s} {'y':14s} {'m':>6s} {'R':>4s} | {'orth':>12s} {'orth_quad':>12s} "
          f"{'orth pb':>12s} {'orth_quad pb':>12s}")
    cell = 200
    for kind, link in [("gamma", "quadratic"), ("dummy", "quadratic"), ("gamma", "linear")]:
        for m in (1000, 4000):
            cell += 1
            rng = np.random.default_rng(SEED + cell)
            r = reps
            out: dict[str, list[bool]] = {"o": [], "oq": [], "opb": [], "oqpb": []}
            t0 = time.time()
            for _ in range(r):
                a, b = design(kind, m, rng)
                lin = a[:, 0] + 0.5 * b[:, 1] if link == "linear" else a[:, 0]**2 + b[:, 1]**2
                y = lin + rng.standard_normal(m)
                for key, joint, quad in (("o", True, False), ("oq", True, True),
                                         ("opb", False, False), ("oqpb", False, True)):
                    p0 = orthogonal_rank_tests(y, a, b, joint=joint, quadratic=quad,
                                               max_rank=0).table["pvalue"].iloc[0]
                    out[key].append(p0 < 0.05)
            print(f"{kind:8s} {link:14s} {m:6d} {r:4d} | {rate(out['o']):>12s} "
                  f"{rate(out['oq']):>12s} {rate(out['opb']):>12s} {rate(out['oqpb']):>12s} "
                  f"({time.time() - t0:.0f} s)", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--part", type=int, choices=(1, 2, 3), default=None)
    args = parser.parse_args()
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    import sys
    print("# Recorded output of studies/study_main_effect_leak.py; command: "
          "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python "
          + " ".join(["studies/study_main_effect_leak.py", *sys.argv[1:]]))
    print(f"# python {platform.python_version()}, numpy {np.__version__}, scipy "
          f"{scipy.__version__}; one BLAS thread; library at commit {commit}")
    print(f"# reps={args.reps} (half at m = 16000), seed={SEED}; rates +- MC SE")
    t0 = time.time()
    if args.part in (None, 1):
        part1(args.reps)
    if args.part in (None, 2):
        part2(max(args.reps // 2, 1))
    if args.part in (None, 3):
        part3(args.reps)
    print(f"# wall {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
