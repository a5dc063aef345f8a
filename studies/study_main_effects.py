"""Size and power of the per-block test of main effects (results.main_effects_test).

Question: does the test of ``H0: E[y z_k] = 0`` hold its level on the
robustness battery at m = 200-2000 and n_k = 5-50, under the per-block and the
joint estimator, and does it find main effects (classes shifting a block's
mean) that the joint estimator's rank test cannot see?

Design.  Two blocks of n_k columns each (n1 = n2 = n_k), m rows; n_k = 45 at m = 200 is the
largest share q n_k / nu where the robust version runs (0.226 <= 0.25), n_k = 50 the
first where the permutation version takes over.  Under H0 the
response has an interaction and no main effect: y = u v + noise with
u = a_0, v = b_0 (numeric designs), so E[y z_k] = 0 while y depends on both
blocks; "cat3"/"cat5" draw 3 or 5 classes independently of the blocks.
Battery: gauss (Gaussian blocks and noise), t5 (t(5) blocks and noise), skew
(centred Gamma(1) blocks, exponential noise), hetero (noise SD 2 |a_1| + 1),
binary (y ~ Bernoulli(logistic(2 u v))), cat3, cat5, corr (b = 0.6 a + 0.8 b',
blocks correlated: tested under the joint estimator only, which tests each
block given the other).  The method is "auto" (robust where q n_k <= 0.25 of
the rows left, else the permutation version with 99 permutations, else
refused); rows report which ran.  Power: 3 or 5 classes shift block a's mean
along a_0 by delta per class (y categorical); rejection rate of the
main-effects test for block a, and of the joint estimator's rank test of
r = 0 (the default robust test), which sees only E[y a' b'^T].

Seeds: numpy default_rng(20260401 + cell index); R replications per cell
(MC SE = sqrt(p (1 - p) / R), 0.0097 at p = 0.05, R = 500).

Part "conditional" (issue 36): the joint estimator's test of block a GIVEN
block b where the robust version cannot run (Freedman-Lane: residuals of y
on (1, b) permuted, 99 permutations).  Block b is drawn first and block a is
b's linear image plus independent noise, a = 0.6 b + 0.8 e (n1 = n2; at
76 + 64 columns a uses b's first 64 columns and e alone for the rest), so
the residual of a on b is e, independent of b.  y depends on b only, so
H0 (no main effect of a given b) holds while a's MARGINAL association with
y does not (E[a_0 y] = 0.6 E[b_0 y] != 0): the conditional test must hold
its level, the marginal one (per-block fit, exact permutation test) must
reject.  Battery: gauss (y = b_0 + N(0,1)), t5 (t(5) blocks, e and noise),
skew (centred Gamma(1) b and e, exponential noise), hetero_a (noise SD
1 + 2 |e_1|: heteroscedastic in the tested block's own part), binary
(y ~ Bernoulli(logistic(2 b_0))), cat10 (10 classes: deciles of b_0 +
N(0,1), q = 9).  Widths: m = 300, n1 = n2 = 30 (the numeric designs request
method="permutation": at q = 1 "auto" runs the robust version; cat10 runs
"auto", q n_k = 270 > 0.25 nu); m = 100, n1 = n2 = 45 (45 columns partialled
of m - 1 = 99, near the limit MAIN_EFFECTS_MAX_PARTIAL_SHARE = 0.5); m =
2000, 76 + 64 columns, cat10 (the UCI digits' shape).  Power: the same
designs with a main effect of a given b: y = b_0 + delta e_0 + noise
(gauss) or classes shifting e_0 by delta per class (cat10).
Seeds: default_rng(20260601 + cell index).

Command (from the repository root, one BLAS thread; ``--part size``,
``--part power`` or ``--part conditional`` runs one part):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/study_main_effects.py
Output: studies/results/study_main_effects.txt (size; part conditional is
appended to it), studies/results/study_main_effects_power.txt (power)
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import warnings

import numpy as np
import pandas as pd

import jdr_stats as jdr

R_SIZE = 500
R_POWER = 200
ALPHA = 0.05
OUT = "studies/results/study_main_effects.txt"


def draw(design: str, m: int, n: int, rng: np.random.Generator) -> tuple[object, np.ndarray,
                                                                         np.ndarray]:
    if design == "t5":
        a, b = rng.standard_t(5, (m, n)), rng.standard_t(5, (m, n))
    elif design == "skew":
        a, b = rng.gamma(1.0, 1.0, (m, n)) - 1, rng.gamma(1.0, 1.0, (m, n)) - 1
    else:
        a, b = rng.normal(size=(m, n)), rng.normal(size=(m, n))
    if design == "corr":
        b = 0.6 * a + 0.8 * b
    u, v = a[:, 0], b[:, 0]
    y: object
    if design == "t5":
        y = u * v + rng.standard_t(5, m)
    elif design == "skew":
        y = u * v + rng.exponential(size=m) - 1
    elif design == "hetero":
        y = u * v + (2 * np.abs(a[:, 1]) + 1) * rng.normal(size=m)
    elif design == "binary":
        y = (rng.random(m) < 1 / (1 + np.exp(-2 * u * v))).astype(float)
    elif design in ("cat3", "cat5"):
        y = pd.Categorical(rng.integers(0, int(design[-1]), m))
    else:
        y = u * v + rng.normal(size=m)
    return y, a, b


def size_cell(design: str, m: int, n: int, joint: bool, seed: int) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    rej = np.zeros(2)
    methods: set[str] = set()
    t0 = time.perf_counter()
    for _ in range(R_SIZE):
        y, a, b = draw(design, m, n, rng)
        res = jdr.JointDimReduction(y, a, b).fit(1, independent_blocks=not joint,
                                                  whitening="auto" if not joint else "sample")
        t = res.main_effects_test(n_perm=99, seed=rng)
        methods |= set(t.table["method"])
        rej += (t.pvalues.to_numpy() <= ALPHA)
    rate = rej / R_SIZE
    return {"design": design, "m": m, "n_k": n, "estimator": "joint" if joint else "per-block",
            "method": "/".join(sorted(methods)), "size_a": rate[0], "size_b": rate[1],
            "mc_se": np.sqrt(ALPHA * (1 - ALPHA) / R_SIZE),
            "sec_per_rep": (time.perf_counter() - t0) / R_SIZE}


def power_cell(classes: int, m: int, n: int, delta: float, seed: int) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    rej_me = rej_rank = 0
    for _ in range(R_POWER):
        cls = rng.integers(0, classes, m)
        a, b = rng.normal(size=(m, n)), rng.normal(size=(m, n))
        a[:, 0] += delta * cls
        model = jdr.JointDimReduction(pd.Categorical(cls), a, b)
        res = model.fit(1, independent_blocks=False, whitening="sample")
        rej_me += res.main_effects_test().pvalues.iloc[0] <= ALPHA
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            rank = res.rank_tests(max_rank=0, seed=rng).pvalues.iloc[0]
        rej_rank += rank <= ALPHA
    return {"classes": classes, "m": m, "n_k": n, "delta": delta,
            "main_effects_power_a": rej_me / R_POWER, "rank0_power": rej_rank / R_POWER,
            "mc_se_max": np.sqrt(0.25 / R_POWER)}


def header(part: str) -> list[str]:
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    return [f"# studies/study_main_effects.py --part {part}, commit {commit}, "
            f"python {sys.version.split()[0]}",
            "# command: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. "
            f"python studies/study_main_effects.py --part {part}", ""]


def size_part() -> None:
    lines = header("size")
    cells = []
    idx = 0
    for design in ("gauss", "t5", "skew", "hetero", "binary", "cat3", "cat5", "corr"):
        for m, n in ((200, 5), (200, 45), (200, 50), (2000, 5), (2000, 50)):
            for joint in ((False, True) if design != "corr" else (True,)):
                if joint and design not in ("gauss", "hetero", "cat5", "corr"):
                    continue
                idx += 1
                cells.append(size_cell(design, m, n, joint, 20260401 + idx))
                print(cells[-1], flush=True)
    size = pd.DataFrame(cells)
    lines += [f"## Size at alpha = {ALPHA} ({R_SIZE} replications per cell; method: what "
              "'auto' ran; refused cells have no p-value and size 0)", "",
              size.to_string(index=False, float_format=lambda x: f"{x:.4f}"), ""]
    with open(OUT, "w") as fh:
        fh.write("\n".join(lines))
    print("\n".join(lines))


def power_part() -> None:
    lines = header("power")
    pw = []
    for idx, (classes, m, n, delta) in enumerate(((3, 200, 5, 0.3), (3, 200, 20, 0.3),
                                                  (5, 500, 20, 0.15), (5, 2000, 50, 0.1))):
        pw.append(power_cell(classes, m, n, delta, 20260501 + idx))
        print(pw[-1], flush=True)
    lines += [f"## Power: classes shift block a's mean along a_0 by delta per class "
              f"({R_POWER} replications; joint estimator, sample whitening; rank0 = its "
              "default rank test of r = 0)", "",
              pd.DataFrame(pw).to_string(index=False, float_format=lambda x: f"{x:.4f}"), ""]
    with open(OUT.replace(".txt", "_power.txt"), "w") as fh:
        fh.write("\n".join(lines))
    print("\n".join(lines))


def draw_conditional(design: str, m: int, n1: int, n2: int, delta: float,
                     rng: np.random.Generator) -> tuple[object, np.ndarray, np.ndarray]:
    """Block b, then a = 0.6 b + 0.8 e; y from b only (plus delta e_0)."""
    if design == "t5":
        b, e = rng.standard_t(5, (m, n2)), rng.standard_t(5, (m, n1))
    elif design == "skew":
        b, e = rng.gamma(1.0, 1.0, (m, n2)) - 1, rng.gamma(1.0, 1.0, (m, n1)) - 1
    else:
        b, e = rng.normal(size=(m, n2)), rng.normal(size=(m, n1))
    k = min(n1, n2)
    a = 0.8 * e
    a[:, :k] += 0.6 * b[:, :k]
    lin = b[:, 0] + delta * e[:, 0]
    y: object
    if design == "t5":
        y = lin + rng.standard_t(5, m)
    elif design == "skew":
        y = lin + rng.exponential(size=m) - 1
    elif design == "hetero_a":
        y = lin + (1 + 2 * np.abs(e[:, 1])) * rng.normal(size=m)
    elif design == "binary":
        y = (rng.random(m) < 1 / (1 + np.exp(-2 * lin))).astype(float)
    elif design == "cat10":
        t = b[:, 0] + rng.normal(size=m)
        cls = np.searchsorted(np.quantile(t, np.linspace(0.1, 0.9, 9)), t)
        a[:, 0] += delta * cls
        y = pd.Categorical(cls)
    else:
        y = lin + rng.normal(size=m)
    return y, a, b


def conditional_cell(design: str, m: int, n1: int, n2: int, delta: float, reps: int,
                     seed: int) -> dict[str, object]:
    rng = np.random.default_rng(seed)
    rej_c = rej_m = 0
    methods: set[str] = set()
    t0 = time.perf_counter()
    request = "auto" if design == "cat10" else "permutation"
    for _ in range(reps):
        y, a, b = draw_conditional(design, m, n1, n2, delta, rng)
        model = jdr.JointDimReduction(y, a, b)
        t = model.fit(1).main_effects_test(request, n_perm=99, seed=rng)  # type: ignore[arg-type]
        methods.add(str(t.table["method"].iloc[0]))
        rej_c += int(t.pvalues.iloc[0] <= ALPHA)
        marg = model.fit(1, independent_blocks=True).main_effects_test(
            "permutation", n_perm=99, seed=rng)
        rej_m += int(marg.pvalues.iloc[0] <= ALPHA)
    pc, pm = rej_c / reps, rej_m / reps
    return {"design": design, "m": m, "n1": n1, "n2": n2, "delta": delta, "reps": reps,
            "method_a": "/".join(sorted(methods)), "reject_conditional": pc,
            "se_conditional": np.sqrt(max(pc * (1 - pc), ALPHA * (1 - ALPHA)) / reps),
            "reject_marginal": pm, "sec_per_rep": (time.perf_counter() - t0) / reps}


def conditional_part(reps: int) -> None:
    lines = [*header("conditional")[:2], f"# reps per cell: {reps} (m = 2000: {reps // 2})", ""]
    cells = []
    grid = [(d, 300, 30, 30, 0.0, reps) for d in
            ("gauss", "t5", "skew", "hetero_a", "binary", "cat10")]
    grid += [(d, 100, 45, 45, 0.0, reps) for d in ("gauss", "hetero_a", "binary", "cat10")]
    grid += [("cat10", 2000, 76, 64, 0.0, reps // 2)]
    grid += [("gauss", 300, 30, 30, 0.2, reps), ("cat10", 300, 30, 30, 0.1, reps),
             ("cat10", 2000, 76, 64, 0.03, reps // 2)]
    for idx, cell in enumerate(grid):
        cells.append(conditional_cell(*cell, seed=20260601 + idx))
        print(cells[-1], flush=True)
    table = pd.DataFrame(cells)
    lines += [f"## Part conditional: block a given block b under the joint estimator "
              f"(rejection rates at alpha = {ALPHA}; delta = 0: H0 given b holds and the "
              "marginal association does not; delta > 0: power; se_conditional = "
              "sqrt(max(p(1-p), 0.0475) / reps))", "",
              table.to_string(index=False, float_format=lambda x: f"{x:.4f}"), ""]
    with open(OUT, "a") as fh:
        fh.write("\n" + "\n".join(lines))
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--part", choices=("size", "power", "conditional", "all"),
                        default="all")
    parser.add_argument("--reps", type=int, default=300, help="part conditional: reps per cell")
    args = parser.parse_args()
    part = args.part
    if part == "conditional":
        conditional_part(args.reps)
        return
    if part in ("power", "all"):
        power_part()
    if part in ("size", "all"):
        size_part()


if __name__ == "__main__":
    main()
