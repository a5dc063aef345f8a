"""The joint estimator (``fit(independent_blocks=False)``) against the paper's
per-block estimator (``independent_blocks=True``) with independent and with
correlated blocks (issue 34, item 4).

Questions: does the joint estimator lose accuracy when the blocks are
independent (the choice of the default rests on it)?  Where is the per-block
estimator biased, and where does the joint one fail outside its Gaussian
premise?  Does the joint estimator's rank inference, bootstrap bound and
support selection hold their targets when the blocks correlate?

Designs (every replication draws U, V with orthonormal columns afresh, and
both estimators are fitted to the same sample):

1. **accuracy, independent blocks**: the paper's BILINEAR model (r = 5,
   n1 = n2 = 20, m = 5000; and r = 2, n = 10, m = 2000), its BINARY model
   (r = 2, n = 10, m = 20000, the lower end of its experiment 1), and the
   bilinear link with an even part, ``y = sum_j (u_j v_j + u_j^2 + v_j^2) +
   N(0, 1)`` (``u = U^T a``, ``v = V^T b``; r = 2, n = 10, m = 5000).
   Gaussian blocks, rho = 0.
2. **accuracy, correlated blocks** (r = 2, n1 = n2 = 10, m = 5000 and 40000:
   an error that does not shrink with m is a bias): the ``"correlated"``
   design of :func:`jdr_stats.simulate.bilinear` (``corr(a_j, b_j) = rho``,
   rho = 0.3, 0.6, 0.9) and factor models ``a = sqrt(c) f Q1^T + sqrt(1 - c)
   e``, ``b = sqrt(c) f Q2^T + sqrt(1 - c) e'`` (``Q1``, ``Q2`` random
   orthogonal, ``e``, ``e'`` N(0, I), ``f`` (m x 10) i.i.d. standardised
   N(0, 1), t(5) or Gamma(2) entries; c = 0.6, so every cross-block
   canonical correlation is 0.6, the block covariances are I, and for t(5)
   or Gamma factors ``E[a | b]`` is not linear in ``b``); links bilinear and
   bilinear + even part; and the BINARY model on the correlated design with
   rho = 0.6 (m = 20000).
3. **rank inference, rho grid** (study_premises part 1 with both estimators):
   m = 1000, n1 = n2 = 6, true r = 0 (``strengths=[0]``), 1, 2, rho = 0,
   0.3, 0.6, 0.9; ``fit("auto", independent_blocks=...)`` (default robust
   tests, alpha = 0.05): the rejection rate of ``H0: r = r_true`` by the
   default test (``res.rank_tests(max_rank=r)``; target band
   0.05 +- (2.5 MC SE + 0.005)) and the share of fits whose chosen rank is
   the true one (the first k of the fit's table not rejected; target
   >= 0.90).  Three more cells, r = 1 and 2 at rho = 0.9 with m = 4000 and
   r = 2 with m = 16000, tell a lack of power from a failure.
4. **bootstrap coverage**: rho = 0 and 0.6, r = 1 and 2, m = 1000 and 2000,
   n1 = n2 = 6, bilinear link; pairs bootstrap with B = 199, percentile
   bound (the default): share of samples whose 95% upper bound on the
   largest angle (``boot.conf_int()``, row ``(block, "largest angle")``)
   covers the largest principal angle between the estimate and the truth,
   for block a and block b, both estimators.
5. **support FDR**: sparse truth s1 = s2 = 3 of n1 = n2 = 10, r = 2, rho =
   0 and 0.6, m = 1000 and 2000.  The joint estimator's support selection
   runs through ``fit(r, sparsity="auto", independent_blocks=False,
   fdr=0.1)`` (its ``support_tests``); ``model.select_support`` takes no
   ``independent_blocks`` and runs on the model's own blocks (the per-block
   estimator's metric), and is what ``fit(sparsity="auto")`` with
   ``independent_blocks=True`` runs too.  Per sample the false discovery
   proportion over both blocks (false / max(selected, 1)) and the share of
   the 6 true variables selected.

6. (extra) **outside the Gaussian premise**: the size and ``fit("auto")``
   of part 3 on the factor models of part 2 (c = 0.6, m = 1000,
   n1 = n2 = 6, r = 0, 1, 2, bilinear link) and on battery designs with
   independent blocks (:func:`jdr_stats.simulate.scenario`: t5,
   laplace-ar1, lognormal-noise, hetero-signal, main-effects with r = 0
   (``signal=0``) and r = 2, and binary-model with r = 2); and the coverage
   of part 4 on the factor models (r = 2, m = 2000, half the replications).

7. **wide blocks** (the regularised joint whitening): r = 2,
   n1 = n2 = 50, m = 200 and 1000 (the joint covariance has n1 + n2 = m / 2
   and m / 10 columns), ``whitening="shrinkage"`` for both estimators (the joint one
   shrinks the covariance of both blocks together, the per-block one each
   block's), the ``"correlated"`` design with rho = 0 and 0.6, links
   bilinear and bilinear + even part; angles and NSEE against the truth.

Each table gives means (or rates) with their Monte Carlo SE (sd / sqrt(R),
sqrt(p (1 - p) / R)); ``diff`` is joint minus per-block on the same samples.
Angles are in degrees: the largest principal angle of each block, the larger
of the two blocks' (``max angle``).  NSEE is :func:`jdr_stats.metrics.nsee`.
Replication j of cell i uses the seed ``seed + 10007 i + j`` (the cell counter
i runs over all parts in order, so a part run alone gives the same numbers).

Run (one BLAS thread)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. nice -n 5 python studies/study_correlated_blocks.py --part 1 --reps 500

and likewise ``--part 2 --reps 400``, ``--part 3 --reps 1000``, ``--part 4
--reps 500``, ``--part 5 --reps 500``, ``--part 6 --reps 1000``, ``--part 7
--reps 200`` (the
recorded runs; ``--reps`` sets the replications of each cell, the larger m
of part 2 and the coverage cells of part 6 use half).  About 40 minutes in
all on one shared core.  Output recorded in
``studies/results/study_correlated_blocks.txt``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import jdr_stats as jdr
from jdr_stats.exceptions import JDRWarning
from jdr_stats.metrics import nsee, principal_angles
from jdr_stats.simulate import SimulatedData, random_basis

ALPHA = 0.05
#: cells per part, so that the seeds of a part do not depend on the others
CELL_BASE = {1: 0, 2: 100, 3: 200, 4: 300, 5: 400, 6: 500, 7: 600}


# ---------------------------------------------------------------------------
# designs
# ---------------------------------------------------------------------------
def even_link(abar: np.ndarray, bbar: np.ndarray) -> np.ndarray:
    """Bilinear link plus an even part: sum_j u_j v_j + u_j^2 + v_j^2."""
    return (abar * bbar + abar**2 + bbar**2).sum(axis=1)


def _factor_entries(rng: np.random.Generator, kind: str, shape: tuple[int, int]) -> np.ndarray:
    if kind == "gaussian":
        return rng.standard_normal(shape)
    if kind == "t5":
        return rng.standard_t(5.0, shape) * np.sqrt(3.0 / 5.0)
    if kind == "gamma":
        return (rng.gamma(2.0, 1.0, shape) - 2.0) / np.sqrt(2.0)
    raise ValueError(kind)


def factor_model(m: int, n: int, r: int, kind: str, c: float, link: str,
                 seed: int, strength: float = 1.0) -> SimulatedData:
    """Correlated blocks through a shared factor f with ``kind`` entries."""
    rng = np.random.default_rng(seed)
    U = random_basis(n, r, seed=rng)
    V = random_basis(n, r, seed=rng)
    q1 = random_basis(n, n, seed=rng)
    q2 = random_basis(n, n, seed=rng)
    f = _factor_entries(rng, kind, (m, n))
    a = np.sqrt(c) * f @ q1.T + np.sqrt(1 - c) * rng.standard_normal((m, n))
    b = np.sqrt(c) * f @ q2.T + np.sqrt(1 - c) * rng.standard_normal((m, n))
    abar, bbar = a @ U, b @ V
    t = even_link(abar, bbar) if link == "even" else (abar * bbar).sum(axis=1)
    y = strength * t + rng.standard_normal(m)
    return SimulatedData(y=y, a=a, b=b, U=U, V=V, model="factor",
                         settings=dict(kind=kind, c=c, link=link))


def draw(spec: dict, seed: int) -> SimulatedData:
    kind = spec["kind"]
    if kind == "binary":
        return jdr.simulate.binary(spec["m"], spec["n"], spec["n"], spec["r"],
                                   design="correlated", rho=spec.get("rho", 0.0), seed=seed)
    if kind == "correlated":
        link = even_link if spec.get("link") == "even" else "bilinear"
        return jdr.simulate.bilinear(spec["m"], spec["n"], spec["n"], spec["r"],
                                     design="correlated", rho=spec["rho"], link=link,
                                     seed=seed)
    return factor_model(spec["m"], spec["n"], spec["r"], kind, spec["c"],
                        spec.get("link", "bilinear"), seed)


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------
def largest_angle(truth: np.ndarray, est) -> float:
    return float(np.degrees(principal_angles(truth, np.asarray(est))[-1]))


def fit_both(sim: SimulatedData, rank, whitening: str = "auto"):
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JDRWarning)
        joint = model.fit(rank, independent_blocks=False, whitening=whitening)
        perblock = model.fit(rank, independent_blocks=True, whitening=whitening)
    return model, joint, perblock


def errors(sim: SimulatedData, res) -> tuple[float, float]:
    """(NSEE, max over the blocks of the largest angle in degrees)."""
    ua, vb = np.asarray(res.directions_a), np.asarray(res.directions_b)
    ang = max(largest_angle(sim.U, ua), largest_angle(sim.V, vb))
    return nsee(sim.U, ua, sim.V, vb), ang


def mean_se(x) -> str:
    x = np.asarray(x, float)
    return f"{x.mean():7.3f}+-{x.std(ddof=1) / np.sqrt(x.size):.3f}"


def rate(x) -> str:
    p = float(np.mean(x))
    return f"{p:.3f}+-{np.sqrt(p * (1 - p) / len(x)):.3f}"


def seeds(args, i: int, reps: int) -> list[int]:
    return [args.seed + 10007 * i + j for j in range(reps)]


# ---------------------------------------------------------------------------
# parts 1 and 2: accuracy
# ---------------------------------------------------------------------------
def accuracy_cell(label: str, spec: dict, args, i: int, reps: int) -> None:
    t0 = time.perf_counter()
    rows = []
    for s in seeds(args, i, reps):
        sim = draw(spec, s)
        _, joint, perblock = fit_both(sim, spec["r"], spec.get("whitening", "auto"))
        rows.append((*errors(sim, joint), *errors(sim, perblock)))
    x = np.array(rows)
    print(f"{label:44s} R={reps:3d} | NSEE joint {mean_se(x[:, 0])} per-block "
          f"{mean_se(x[:, 2])} diff {mean_se(x[:, 0] - x[:, 2])} | max angle joint "
          f"{mean_se(x[:, 1])} per-block {mean_se(x[:, 3])} diff {mean_se(x[:, 1] - x[:, 3])} "
          f"({time.perf_counter() - t0:.0f} s)", flush=True)


def part1(args) -> None:
    print("## 1. accuracy, independent Gaussian blocks (rho = 0): joint vs per-block, "
          "same samples; diff = joint - per-block", flush=True)
    cells = [
        ("BILINEAR r=5 n=20 m=5000", dict(kind="correlated", rho=0.0, r=5, n=20, m=5000)),
        ("BILINEAR r=2 n=10 m=2000", dict(kind="correlated", rho=0.0, r=2, n=10, m=2000)),
        ("BINARY r=2 n=10 m=20000", dict(kind="binary", rho=0.0, r=2, n=10, m=20000)),
        ("bilinear+even r=2 n=10 m=5000",
         dict(kind="correlated", rho=0.0, r=2, n=10, m=5000, link="even")),
    ]
    for k, (label, spec) in enumerate(cells):
        accuracy_cell(label, spec, args, CELL_BASE[1] + k, args.reps)


def part2(args) -> None:
    print("## 2. accuracy, correlated blocks (r=2, n1=n2=10; factor models c=0.6 with "
          "Gaussian noise e); diff = joint - per-block", flush=True)
    designs = [(f"rho={rho}", dict(kind="correlated", rho=rho)) for rho in (0.3, 0.6, 0.9)]
    designs += [(f"factor {k} c=0.6", dict(kind=k, c=0.6)) for k in ("gaussian", "t5", "gamma")]
    k = 0
    for m in (5000, 40000):
        reps = args.reps if m == 5000 else max(args.reps // 2, 20)
        for link in ("bilinear", "even"):
            for name, d in designs:
                spec = dict(d, r=2, n=10, m=m, link=link)
                accuracy_cell(f"{name} {link} m={m}", spec, args, CELL_BASE[2] + k, reps)
                k += 1
        spec = dict(kind="binary", rho=0.6, r=2, n=10, m=4 * m)
        accuracy_cell(f"BINARY rho=0.6 m={4 * m}", spec, args, CELL_BASE[2] + k, reps)
        k += 1


# ---------------------------------------------------------------------------
# part 3: rank inference
# ---------------------------------------------------------------------------
def chosen_rank(res) -> int:
    """The rank fit("auto") chose: the first k whose test is not rejected
    (0 when H0: r = 0 is kept; the fit itself then has rank 1)."""
    p = res.rank_test_table.table["pvalue"].to_numpy()
    kept = np.flatnonzero(p >= ALPHA)
    return int(kept[0]) if kept.size else int(p.size)


def part3(args) -> None:
    print("## 3. rank inference, rho grid (m=1000, n1=n2=6, bilinear, Gaussian blocks): "
          "size of H0: r = r_true (band 0.05 +- (2.5 MC SE + 0.005)), "
          "share of fit('auto') = r_true (target >= 0.90)", flush=True)
    se = np.sqrt(ALPHA * (1 - ALPHA) / args.reps)
    lo, hi = ALPHA - 2.5 * se - 0.005, ALPHA + 2.5 * se + 0.005
    print(f"# R={args.reps}: size band [{lo:.3f}, {hi:.3f}]", flush=True)
    cells = [(r, rho, 1000) for r in (0, 1, 2) for rho in (0.0, 0.3, 0.6, 0.9)]
    # rho = 0.9 at a larger m: is a shortfall of "auto" power (it shrinks with m)?
    cells += [(1, 0.9, 4000), (2, 0.9, 4000), (2, 0.9, 16000)]
    for k, (r, rho, m) in enumerate(cells):
        t0 = time.perf_counter()
        out = {True: [], False: []}
        for s in seeds(args, CELL_BASE[3] + k, args.reps):
            sim = jdr.simulate.bilinear(m, 6, 6, max(r, 1), design="correlated",
                                        rho=rho, strengths=[0.0] if r == 0 else None,
                                        seed=s)
            model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
            for ind in (False, True):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", JDRWarning)
                    res = model.fit("auto", independent_blocks=ind)
                    p = res.rank_tests(max_rank=r).table["pvalue"].to_numpy()
                out[ind].append((p[r] < ALPHA, chosen_rank(res)))
        txt = []
        for ind, name in ((False, "joint"), (True, "per-block")):
            x = np.array(out[ind])
            size = x[:, 0].astype(float)
            ok = "in band" if lo <= size.mean() <= hi else "OUT"
            txt.append(f"{name}: size {rate(size)} ({ok}), auto=r {rate(x[:, 1] == r)}, "
                       f"auto>r {rate(x[:, 1] > r)}, auto<r {rate(x[:, 1] < r)}")
        print(f"r={r} rho={rho:.1f} m={m} | " + " | ".join(txt)
              + f" ({time.perf_counter() - t0:.0f} s)", flush=True)


# ---------------------------------------------------------------------------
# part 4: bootstrap coverage
# ---------------------------------------------------------------------------
def part4(args) -> None:
    print("## 4. bootstrap coverage of the 95% percentile bound on the largest angle "
          "(pairs, B=199; n1=n2=6, bilinear, Gaussian correlated design)", flush=True)
    k = 0
    for rho in (0.0, 0.6):
        for r in (1, 2):
            for m in (1000, 2000):
                t0 = time.perf_counter()
                cov = {True: [], False: []}
                for s in seeds(args, CELL_BASE[4] + k, args.reps):
                    sim = jdr.simulate.bilinear(m, 6, 6, r, design="correlated", rho=rho,
                                                seed=s)
                    _, joint, perblock = fit_both(sim, r)
                    for ind, res in ((False, joint), (True, perblock)):
                        with warnings.catch_warnings():
                            warnings.simplefilter("ignore", JDRWarning)
                            ci = res.bootstrap(199, seed=s).conf_int()
                        ba = ci.loc[("a", "largest angle"), "upper"]
                        bb = ci.loc[("b", "largest angle"), "upper"]
                        ta = largest_angle(sim.U, res.directions_a)
                        tb = largest_angle(sim.V, res.directions_b)
                        cov[ind].append((ta <= ba, tb <= bb, ba, ta))
                k += 1
                txt = []
                for ind, name in ((False, "joint"), (True, "per-block")):
                    x = np.array(cov[ind], float)
                    txt.append(f"{name}: cover a {rate(x[:, 0])} b {rate(x[:, 1])}, "
                               f"mean bound a {x[:, 2].mean():5.1f}, q95 true angle a "
                               f"{np.quantile(x[:, 3], 0.95):5.1f}")
                print(f"rho={rho:.1f} r={r} m={m} R={args.reps} | " + " | ".join(txt)
                      + f" ({time.perf_counter() - t0:.0f} s)", flush=True)


# ---------------------------------------------------------------------------
# part 5: support selection
# ---------------------------------------------------------------------------
def fdp_power(sel_a, sel_b, sim: SimulatedData) -> tuple[float, float]:
    true_a = {f"a{j}" for j in np.flatnonzero(np.abs(sim.U).sum(axis=1))}
    true_b = {f"b{j}" for j in np.flatnonzero(np.abs(sim.V).sum(axis=1))}
    sel = [("a", v) for v in sel_a] + [("b", v) for v in sel_b]
    false = sum(1 for blk, v in sel if v not in (true_a if blk == "a" else true_b))
    hits = len(set(sel_a) & true_a) + len(set(sel_b) & true_b)
    return false / max(len(sel), 1), hits / (len(true_a) + len(true_b))


def part5(args) -> None:
    print("## 5. support selection at fdr=0.1 (s1=s2=3 of 10, r=2, bilinear, correlated "
          "Gaussian design): joint = fit(2, sparsity='auto', independent_blocks=False)"
          ".support_tests; per-block = model.select_support(rank=2, fdr=0.1)", flush=True)
    k = 0
    for rho in (0.0, 0.6):
        for m in (1000, 2000):
            t0 = time.perf_counter()
            out = {True: [], False: []}
            for s in seeds(args, CELL_BASE[5] + k, args.reps):
                sim = jdr.simulate.bilinear(m, 10, 10, 2, s1=3, s2=3, design="correlated",
                                            rho=rho, seed=s)
                model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", JDRWarning)
                    st = model.fit(2, sparsity="auto", independent_blocks=False, fdr=0.1,
                                   seed=s).support_tests
                    pb = model.select_support(rank=2, fdr=0.1, seed=s)
                out[False].append(fdp_power(st.selected_a, st.selected_b, sim))
                out[True].append(fdp_power(pb.selected_a, pb.selected_b, sim))
            k += 1
            txt = []
            for ind, name in ((False, "joint"), (True, "per-block")):
                x = np.array(out[ind])
                txt.append(f"{name}: FDR {mean_se(x[:, 0])} power {mean_se(x[:, 1])}")
            print(f"rho={rho:.1f} m={m} R={args.reps} | " + " | ".join(txt)
                  + f" ({time.perf_counter() - t0:.0f} s)", flush=True)


# ---------------------------------------------------------------------------
# part 6: rank inference and coverage outside the Gaussian premise
# ---------------------------------------------------------------------------
BATTERY_NAMES = ("t5", "laplace-ar1", "lognormal-noise", "hetero-signal", "main-effects",
                 "binary-model")


def rank_cell(label: str, make, r: int, args, i: int, se_band) -> None:
    t0 = time.perf_counter()
    out = {True: [], False: []}
    for s in seeds(args, i, args.reps):
        sim = make(s)
        model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
        for ind in (False, True):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", JDRWarning)
                res = model.fit("auto", independent_blocks=ind)
                p = res.rank_tests(max_rank=r).table["pvalue"].to_numpy()
            out[ind].append((p[r] < ALPHA, chosen_rank(res)))
    lo, hi = se_band
    txt = []
    for ind, name in ((False, "joint"), (True, "per-block")):
        x = np.array(out[ind])
        size = x[:, 0].astype(float)
        ok = "in band" if lo <= size.mean() <= hi else "OUT"
        txt.append(f"{name}: size {rate(size)} ({ok}), auto=r {rate(x[:, 1] == r)}, "
                   f"auto>r {rate(x[:, 1] > r)}, auto<r {rate(x[:, 1] < r)}")
    print(f"{label:30s} | " + " | ".join(txt) + f" ({time.perf_counter() - t0:.0f} s)",
          flush=True)


def part6(args) -> None:
    print("## 6. (extra) rank inference outside the Gaussian premise, m=1000, n1=n2=6: "
          "(a) factor models c=0.6 (Gaussian, t(5), Gamma factors; bilinear link); "
          "(b) battery designs with independent blocks (jdr.simulate.scenario)", flush=True)
    se = np.sqrt(ALPHA * (1 - ALPHA) / args.reps)
    band = (ALPHA - 2.5 * se - 0.005, ALPHA + 2.5 * se + 0.005)
    print(f"# R={args.reps}: size band [{band[0]:.3f}, {band[1]:.3f}]", flush=True)
    k = 0
    for kind in ("gaussian", "t5", "gamma"):
        for r in (0, 1, 2):
            def make(s, kind=kind, r=r):
                return factor_model(1000, 6, max(r, 1), kind, 0.6, "bilinear", s,
                                    strength=float(r > 0))
            rank_cell(f"factor {kind} r={r}", make, r, args, CELL_BASE[6] + k, band)
            k += 1
    for name in BATTERY_NAMES:
        for r in ((2,) if name == "binary-model" else (0, 2)):
            def make(s, name=name, r=r):
                return jdr.simulate.scenario(name, 1000, 6, 6, max(r, 1),
                                             signal=float(r > 0) if name != "binary-model"
                                             else 1.0, seed=s)
            rank_cell(f"battery {name} r={r}", make, r, args, CELL_BASE[6] + k, band)
            k += 1
    print("## 6c. (extra) bootstrap coverage (as part 4) on factor models c=0.6, r=2, "
          "m=2000, n1=n2=6, B=199, joint estimator", flush=True)
    for kind in ("gaussian", "t5", "gamma"):
        t0 = time.perf_counter()
        cov = []
        for s in seeds(args, CELL_BASE[6] + k, max(args.reps // 2, 20)):
            sim = factor_model(2000, 6, 2, kind, 0.6, "bilinear", s)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", JDRWarning)
                res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(
                    2, independent_blocks=False)
                ci = res.bootstrap(199, seed=s).conf_int()
            ba = ci.loc[("a", "largest angle"), "upper"]
            bb = ci.loc[("b", "largest angle"), "upper"]
            cov.append((largest_angle(sim.U, res.directions_a) <= ba,
                        largest_angle(sim.V, res.directions_b) <= bb, ba))
        k += 1
        x = np.array(cov, float)
        print(f"factor {kind} R={len(cov)} | joint: cover a {rate(x[:, 0])} b "
              f"{rate(x[:, 1])}, mean bound a {x[:, 2].mean():5.1f} "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)


def part7(args) -> None:
    """Wide blocks: the regularised joint whitening (OAS shrinkage of the
    covariance of both blocks together) against the per-block shrinkage."""
    print("## 7. wide blocks, whitening='shrinkage' (r=2, n1=n2=50, m=200, 1000; the joint "
          "estimator shrinks the (n1+n2)-column covariance); diff = joint - per-block",
          flush=True)
    i = CELL_BASE[7]
    for m in (200, 1000):
        for rho in (0.0, 0.6):
            for link in ("bilinear", "even"):
                spec = {"kind": "correlated", "m": m, "n": 50, "r": 2, "rho": rho,
                        "link": link, "whitening": "shrinkage"}
                accuracy_cell(f"wide rho={rho} {link} m={m}", spec, args, i, args.reps)
                i += 1


PARTS = {1: part1, 2: part2, 3: part3, 4: part4, 5: part5, 6: part6, 7: part7}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--part", type=int, choices=sorted(PARTS), action="append",
                    help="part to run (repeatable; default all)")
    ap.add_argument("--seed", type=int, default=20261127)
    args = ap.parse_args()
    print(f"# reps={args.reps}, seed={args.seed}; numbers: mean (or rate) +- MC SE",
          flush=True)
    for p in args.part or sorted(PARTS):
        PARTS[p](args)


if __name__ == "__main__":
    main()
