"""The regression interaction estimand (``interactions="regression"``) against
the default (``"stein"``) and ``"orthogonal"``: size at the true rank beyond
Gaussian designs, rank-0 size under main effects, efficiency on Gaussian ones.

Designs (two blocks of n1 = n2 = 5, correlated through one shared factor
``f`` added to every column: ``a = g + f 1^T``, ``b = g' + f 1^T``; ``f``,
``g``, ``g'`` i.i.d. standardised entries):

* ``gaussian``: standard normal;
* ``t5``: standardised t(5);
* ``gamma``: standardised centred Gamma(2) (skewness 1.41);
* ``lognormal``: standardised log-normal (log-SD 0.5, skewness 1.75), with
  column a0 replaced by the dummy ``1{f > 0.84}`` and b0 by
  ``1{g'_0 + f > 1}`` (dummies correlated across blocks).

Part 1 (size at the true rank): ``y = 0.35 [(u1'a)(v1'b) + 0.6 (u2'a)(v2'b)]
+ a0 + 0.5 b1 + N(0, 1)``, ``U``, ``V`` fixed random orthonormal 5 x 2
bases (seeded).  Rejection rate of ``H0: r <= 2`` at alpha = 0.05: the
default's rank test (``fit(2).rank_tests(max_rank=2)``), the orthogonal
test and the regression test (``regression_rank_tests``), joint whitening;
m = 1000, 4000, 16000 (64000 with ``--big``, fewer samples).  Target:
within 0.05 +- (2.5 MC SE + 0.005).

Part 2 (rank-0 size under main effects only): ``y = a0 + 0.5 b1 + 0.3 a1 a2
+ N(0, 1)`` (linear and a within-block quadratic main effect); rejection
rate of ``H0: r = 0``.

Part 3 (efficiency on the Gaussian design with the part-1 link, and
without its main effects, ``main=0``): share of
``fit("auto")`` (the first k with p > 0.05 in each estimand's own
sequence) choosing 2, and the mean largest principal angle (degrees)
between ``fit(2, interactions=...)``'s directions and ``span(U)``,
``span(V)``.

Every cell draws its samples from its own seed (``SEED`` + a cell index);
rates +- MC SE ``sqrt(p (1 - p) / R)``.

Command (a few minutes, one BLAS thread)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. \\
        python studies/study_regression_estimand.py > studies/results/study_regression_estimand.txt

``--estimands`` keeps some of the three estimands and ``--ms`` gives parts
1 and 2 other row counts, each at ``--reps`` samples (the recorded run at
m = 16000 and 1e5: ``--part 1 --estimands regression --ms 16000,100000
--reps 200``, and the same with ``--part 2``).
"""

from __future__ import annotations

import argparse
import platform
import subprocess
import sys
import time
import warnings

import numpy as np
import scipy

import jdr_stats as jdr
from jdr_stats.inference.orthogonal_rank import orthogonal_rank_tests
from jdr_stats.inference.regression_rank import regression_rank_tests

SEED = 20261203
N = 5
KINDS = ["gaussian", "t5", "gamma", "lognormal"]


def _entries(kind: str, rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    if kind == "gaussian":
        return rng.standard_normal(shape)
    if kind == "gamma":
        return (rng.gamma(2.0, 1.0, size=shape) - 2.0) / np.sqrt(2.0)
    if kind == "t5":
        return rng.standard_t(5, size=shape) / np.sqrt(5.0 / 3.0)
    if kind == "lognormal":
        s2 = 0.25
        mean, var = np.exp(s2 / 2), (np.exp(s2) - 1) * np.exp(s2)
        return (np.exp(0.5 * rng.standard_normal(shape)) - mean) / np.sqrt(var)
    raise ValueError(kind)


def design(kind: str, m: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    f = _entries(kind, rng, (m, 1))
    a = _entries(kind, rng, (m, N)) + f
    b = _entries(kind, rng, (m, N)) + f
    if kind == "lognormal":
        a[:, 0] = (f[:, 0] > 0.84).astype(float)
        b[:, 0] = (b[:, 0] > 1.0).astype(float)
    return a, b


def rate(x: list[bool]) -> str:
    p = float(np.mean(x))
    return f"{p:.3f}+-{np.sqrt(p * (1 - p) / len(x)):.3f}"


def band(x: list[bool]) -> str:
    p = float(np.mean(x))
    se = np.sqrt(0.05 * 0.95 / len(x))
    return "in" if abs(p - 0.05) <= 2.5 * se + 0.005 else "OUT"


def mean_se(x: list[float]) -> str:
    v = np.asarray(x)
    return f"{v.mean():5.2f}+-{v.std(ddof=1) / np.sqrt(v.size):.2f}"


BASIS = np.random.default_rng(SEED)
U = np.linalg.qr(BASIS.standard_normal((N, 2)))[0]
V = np.linalg.qr(BASIS.standard_normal((N, 2)))[0]


def bilinear(a: np.ndarray, b: np.ndarray, rng: np.random.Generator,
             main: float = 1.0) -> np.ndarray:
    ua, vb = a @ U, b @ V
    return 0.35 * (ua[:, 0] * vb[:, 0] + 0.6 * ua[:, 1] * vb[:, 1]) \
        + main * (a[:, 0] + 0.5 * b[:, 1]) + rng.standard_normal(a.shape[0])


ESTIMANDS = ["stein", "orthogonal", "regression"]


def pvalues(y: np.ndarray, a: np.ndarray, b: np.ndarray, k: int) -> dict[str, np.ndarray]:
    out = {}
    if "stein" in ESTIMANDS:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            st = jdr.JointDimReduction(y, a, b).fit(max(k, 1)).rank_tests(max_rank=k)
        out["stein"] = st.table["pvalue"].to_numpy()
    if "orthogonal" in ESTIMANDS:
        out["orthogonal"] = orthogonal_rank_tests(y, a, b, max_rank=k).table["pvalue"].to_numpy()
    if "regression" in ESTIMANDS:
        out["regression"] = regression_rank_tests(y, a, b, max_rank=k).table["pvalue"].to_numpy()
    return out


def part_size(reps: int, ms: tuple[int, ...], k: int, cell0: int) -> None:
    for kind in KINDS:
        for m in ms:
            cell0 += 1
            # the cell's seed depends on its design, not on which designs run
            rng = np.random.default_rng(SEED + cell0 + 1000 * ("gaussian", "t5", "gamma",
                                                               "lognormal").index(kind))
            out: dict[str, list[bool]] = {e: [] for e in ESTIMANDS}
            t0 = time.time()
            for _ in range(reps):
                a, b = design(kind, m, rng)
                if k == 2:
                    y = bilinear(a, b, rng)
                else:
                    y = a[:, 0] + 0.5 * b[:, 1] + 0.3 * a[:, 1] * a[:, 2] \
                        + rng.standard_normal(m)
                for key, pv in pvalues(y, a, b, k).items():
                    out[key].append(bool(pv[k] < 0.05))
            print(f"{kind:9s} {m:6d} {reps:4d} | " + " ".join(
                f"{rate(out[e]):>12s} {band(out[e]):3s}" for e in out)
                + f" ({time.time() - t0:.0f} s)", flush=True)


def _angle(est: np.ndarray, true: np.ndarray) -> float:
    return float(np.degrees(np.max(jdr.metrics.principal_angles(est, true))))


def part_efficiency(reps: int) -> None:
    cell = 300
    for main, m in ((1.0, 1000), (1.0, 4000), (0.0, 1000), (0.0, 4000)):
        cell += 1
        rng = np.random.default_rng(SEED + cell)
        rec = {e: {"auto": [], "a": [], "b": []} for e in ("stein", "orthogonal", "regression")}
        for _ in range(reps):
            a, b = design("gaussian", m, rng)
            y = bilinear(a, b, rng, main)
            pv = pvalues(y, a, b, 3)
            model = jdr.JointDimReduction(y, a, b)
            for est, p in pv.items():
                first = int(np.argmax(p > 0.05)) if np.any(p > 0.05) else 4
                rec[est]["auto"].append(first == 2)
                res = model.fit(2, interactions=est)  # type: ignore[arg-type]
                rec[est]["a"].append(_angle(np.asarray(res.directions_a), U))
                rec[est]["b"].append(_angle(np.asarray(res.directions_b), V))
        for est, r in rec.items():
            print(f"gaussian main={main:.0f} {m:6d} {reps:4d} {est:10s} | auto=2 {rate(r['auto'])} | angle a "
                  f"{mean_se(r['a'])} b {mean_se(r['b'])}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--big", type=int, default=0, help="samples at m = 64000 (0: skip)")
    parser.add_argument("--part", type=int, choices=(1, 2, 3), default=None)
    parser.add_argument("--kinds", default=",".join(KINDS),
                        help="designs of parts 1-2, comma-separated")
    parser.add_argument("--estimands", default=",".join(ESTIMANDS),
                        help="estimands compared, comma-separated")
    parser.add_argument("--ms", default=None,
                        help="row counts of parts 1-2 at --reps samples each, comma-separated "
                             "(replaces the default 1000, 4000 and 16000 at a quarter)")
    args = parser.parse_args()
    KINDS[:] = args.kinds.split(",")
    ESTIMANDS[:] = args.estimands.split(",")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    print("# Recorded output of studies/study_regression_estimand.py; command: "
          "OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python "
          + " ".join(["studies/study_regression_estimand.py", *sys.argv[1:]]))
    print(f"# python {platform.python_version()}, numpy {np.__version__}, scipy "
          f"{scipy.__version__}; one BLAS thread; library at commit {commit}")
    ms = None if args.ms is None else tuple(int(float(v)) for v in args.ms.split(","))
    quarter = "" if ms is not None else " (a quarter at m = 16000)"
    print(f"# reps={args.reps}{quarter}, seed={SEED}; rates +- MC SE; "
          "'in': within 0.05 +- (2.5 MC SE + 0.005)")
    head = f"{'design':9s} {'m':>6s} {'R':>4s} | " + " ".join(f"{e:>16s}" for e in ESTIMANDS)
    t0 = time.time()
    if args.part in (None, 1):
        print("\n## 1. rejection rate of H0: r <= 2 (the true rank), alpha = 0.05")
        print(head)
        if ms is not None:
            part_size(args.reps, ms, 2, 200)
        else:
            part_size(args.reps, (1000, 4000), 2, 0)
            part_size(max(args.reps // 4, 1), (16000,), 2, 50)
        if args.big:
            part_size(args.big, (64000,), 2, 80)
    if args.part in (None, 2):
        print("\n## 2. rejection rate of H0: r = 0 under main effects only "
              "(y = a0 + 0.5 b1 + 0.3 a1 a2 + noise)")
        print(head)
        if ms is not None:
            part_size(args.reps, ms, 0, 300)
        else:
            part_size(args.reps, (1000, 4000), 0, 100)
            part_size(max(args.reps // 4, 1), (16000,), 0, 150)
    if args.part in (None, 3):
        print("\n## 3. Gaussian design, part-1 link: share of fit('auto') = 2, largest "
              "principal angle to the truth (degrees)")
        part_efficiency(max(args.reps // 4, 1))
    print(f"# wall {time.time() - t0:.0f} s")


if __name__ == "__main__":
    main()
