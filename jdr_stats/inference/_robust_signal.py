"""Cross-fitted removal of the signal from ``y`` for the robust test's variance.

At a rank ``k`` below the truth the complement block holds signal
directions, and the variance of ``Lambda_k`` estimated from the influence
functions then carries the signal's own (fourth-moment) variance, so the
effective df collapses (``docs/theory/rank_tests.md``, section 6c).  This
module removes the signal from the response before the variance is
estimated, *cross-fitted*: the rows are split into ``K`` folds (by the rank
of ``(y, u_1, v_1)``, so the split does not depend on the row order or the
units), and the rows of fold ``f`` lose the fit of ``y`` on the products
``(u^T a_j)(v^T b_j)`` of the top complement directions ``(a_j, b_j)``
estimated *without* fold ``f``, each shrunk by
``max(0, 1 - edge * noise / lambda_j)`` (``noise`` the edge of a pure-noise
block).  A fit made on other rows is independent of the row's own noise, so
under the null it can only add variance (it never removes the noise's own
variance by selection, which a fit on the same rows does and which made
the test liberal on heavy-tailed designs); the shrinkage keeps that
addition small.  Opt-in: ``config.ROBUST_CROSSFIT_FOLDS`` (0 = off).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import numpy as np

from ._robust_core import RotChunks

__all__ = ["crossfit_residual_chunks"]


def _folds(chunks: RotChunks, n_folds: int) -> np.ndarray:
    """Fold of every row: rank of ``(y, u_1, v_1)`` (lexicographic) modulo ``K``."""
    keys = [np.concatenate(x) for x in zip(*(
        (y.reshape(-1), ua[:, 0], vb[:, 0]) for y, ua, vb in chunks()), strict=True)]
    order = np.lexsort((keys[2], keys[1], keys[0]))
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return rank % n_folds


def _fold_sums(chunks: RotChunks, k: int, folds: np.ndarray, n_folds: int
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, float]:
    """Per fold: ``sum u y v^T`` (complement at ``k``), ``sum y``, ``sum y^2``,
    count; and the median diagonal entry of ``Omega / s_y^2`` (no centring)."""
    acc: dict[str, np.ndarray] = {}
    start = 0
    for y, ua, vb in chunks():
        y = y.reshape(-1)
        f = folds[start:start + y.size]
        start += y.size
        u, v = ua[:, k:], vb[:, k:]
        cs = np.stack([u[f == g].T @ (y[f == g, None] * v[f == g]) for g in range(n_folds)])
        parts = {"cs": cs, "sy": np.bincount(f, y, n_folds),
                 "syy": np.bincount(f, y * y, n_folds),
                 "cnt": np.bincount(f, None, n_folds).astype(float),
                 "wnum": (u * u).T @ ((y * y)[:, None] * (v * v)),
                 "wden": np.array(float(np.sum(y * y)))}
        for key, val in parts.items():
            acc[key] = acc[key] + val if key in acc else val
    omega = float(np.median(acc["wnum"] / acc["wden"]))
    return acc["cs"], acc["sy"], acc["syy"], acc["cnt"], omega


def _directions(cs: np.ndarray, sy: np.ndarray, syy: np.ndarray, cnt: np.ndarray,
                omega: float, edge: float, n_dirs: int
                ) -> list[tuple[np.ndarray, np.ndarray, np.ndarray] | None]:
    """Per fold ``f``: the top directions without ``f`` and their shrinkage."""
    p, q = cs.shape[1:]
    noise = edge * omega * (np.sqrt(p) + np.sqrt(q)) ** 2
    out: list[tuple[np.ndarray, np.ndarray, np.ndarray] | None] = []
    for f in range(cs.shape[0]):
        n = cnt.sum() - cnt[f]
        mean = (sy.sum() - sy[f]) / n
        s2 = (syy.sum() - syy[f]) / n - mean * mean
        c = (cs.sum(0) - cs[f]) / n  # centred u, v: the y mean drops out to O(1/m)
        a, s, bt = np.linalg.svd(c)
        lam = n * s[:n_dirs] ** 2 / s2
        shrink = np.clip(1.0 - noise / lam, 0.0, None)
        keep = np.flatnonzero(shrink > 0)
        out.append(None if keep.size == 0 else (a[:, keep], bt[keep].T, shrink[keep]))
    return out


def crossfit_residual_chunks(chunks: RotChunks, k: int, n_folds: int, edge: float,
                             n_dirs: int) -> RotChunks | None:
    """Chunks of the rotated rows whose ``y`` has the cross-fitted, shrunk fit
    on the top ``n_dirs`` complement directions at rank ``k`` removed (three
    passes); ``None`` when no fold removes anything.  ``y`` must be ``(m,)``."""
    folds = _folds(chunks, n_folds)
    cs, sy, syy, cnt, omega = _fold_sums(chunks, k, folds, n_folds)
    dirs = _directions(cs, sy, syy, cnt, omega, edge, n_dirs)
    if all(d is None for d in dirs):
        return None
    # least squares without fold f: sums over every fold g of Z_f(rows of g)
    sums: dict[int, list[np.ndarray]] = {}
    start = 0
    for y, ua, vb in chunks():
        y = y.reshape(-1)
        g = folds[start:start + y.size]
        start += y.size
        for f, d in enumerate(dirs):
            if d is None:
                continue
            i = g != f
            z = (ua[i, k:] @ d[0]) * (vb[i, k:] @ d[1])
            part = [z.T @ z, z.T @ y[i], z.sum(0), np.array([y[i].sum(), i.sum()])]
            sums[f] = part if f not in sums else [x + p for x, p in zip(sums[f], part, strict=True)]
    fits: dict[int, tuple[np.ndarray, np.ndarray]] = {}
    for f, (zz, zy, zs, (ys, n)) in sums.items():
        zbar, ybar = zs / n, ys / n
        cov = zz - n * np.outer(zbar, zbar)
        beta = np.linalg.lstsq(cov, zy - n * zbar * ybar, rcond=None)[0]
        fits[f] = (zbar, beta * dirs[f][2])  # type: ignore[index]

    def gen() -> Iterator[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        pos = 0
        for y, ua, vb in chunks():
            y = np.array(y, dtype=float).reshape(-1)
            g = folds[pos:pos + y.size]
            pos += y.size
            for f, (zbar, beta) in fits.items():
                i = g == f
                d = dirs[f]
                assert d is not None
                y[i] -= ((ua[i, k:] @ d[0]) * (vb[i, k:] @ d[1]) - zbar) @ beta
            yield y, ua, vb

    def factory() -> Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]]:
        return gen()

    return factory
