"""Rows of the robust rank test: per-row scalars, inner products and off-diagonal sums.

The robust rank test (:mod:`._robust_core`) needs, at each rank ``k``, the
per-row norms ``||psi_i||^2`` and ``off = sum_{i != j} <psi_i, psi_j>^2`` of
the complement block's influences.  Each ``psi_i`` is a rank-one tensor
plus three centring terms, so ``<psi_i, psi_j>`` is a short combination of
the Gram factors of the rotated rows and of per-row scalars; this module
holds those scalars (:func:`_row_scalars`), the inner products
(:func:`_inner`, :func:`_gram_block`) and the three routes to ``off``: the
``m x m`` Gram in row blocks (:func:`_off_gram`), the ``d x d`` covariance
(:func:`_off_dxd`) and the importance-sampled incomplete U-statistic over
row pairs (:func:`_off_pairs`, :func:`_rows_sampled`).  The derivations are
in ``docs/theory/rank_tests.md``, sections 6 and 6a.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .. import config
from ..runtime._lazy import blas


@dataclass(frozen=True)
class RotatedFirst:
    """First-order sums of the rotated rows (every ``k`` is a sub-block).

    ``c_uy`` (n1 x Q) ``= (1/m) sum u_i y_i^T``, ``c_vy`` (n2 x Q),
    ``c_uv`` (n1 x n2), ``psibar`` (Q x n1 x n2) ``= (1/m) sum_i psi_i`` of
    rank 0 and ``s2 = mean_i |y_i|^2 / Q``.
    """

    nobs: int
    c_uy: np.ndarray
    c_vy: np.ndarray
    c_uv: np.ndarray
    psibar: np.ndarray
    s2: float


def _as_matrix(y: np.ndarray) -> np.ndarray:
    return y[:, None] if y.ndim == 1 else y


@dataclass(frozen=True)
class _Sub:
    """The rank-``k`` sub-blocks of :class:`RotatedFirst`."""

    k: int
    e: np.ndarray  # p x Q   c_uy
    c: np.ndarray  # q x Q   c_vy
    cm: np.ndarray  # p x q  C_uv
    pb: np.ndarray  # Q x p x q  psibar
    ee: float
    ccq: float  # sum_c |c_c|^2
    cc: float  # ||C||^2
    pbpb: float  # ||psibar||^2
    pbc: np.ndarray  # Q: <C, psibar_c>

    @classmethod
    def at(cls, f: RotatedFirst, k: int, centre: bool) -> _Sub:
        e, c, cm = f.c_uy[k:], f.c_vy[k:], f.c_uv[k:, k:]
        pb = f.psibar[:, k:, k:] if centre else np.zeros((f.psibar.shape[0], *cm.shape))
        return cls(k, e, c, cm, pb, float(np.sum(e * e)), float(np.sum(c * c)),
                   float(np.sum(cm * cm)), float(np.sum(pb * pb)),
                   np.einsum("pq,cpq->c", cm, pb))


#: quadratic forms by groups of rows when ``y`` takes at most this many
#: distinct rows (a categorical response: its classes) ...
_MAX_GROUPS = 64


#: ... each with this many rows on average (:func:`_y_groups`)
_MIN_GROUP_ROWS = 8


def _y_groups(ym: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]] | None:
    """The distinct rows of ``ym`` (``Q > 1`` columns) and the indices of the
    rows equal to each, when there are few (a categorical response), else None.

    The rows are told apart by one projection (a fixed vector; the grouping
    is then checked row by row, so a collision only means None)."""
    n, nq = ym.shape
    if nq < 2 or n < 2 * _MIN_GROUP_ROWS:
        return None
    key = ym @ (1.0 + np.arange(nq) / (nq + np.pi))
    uniq, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    if len(uniq) > _MAX_GROUPS or len(uniq) * _MIN_GROUP_ROWS > n:
        return None
    values = ym[first]
    if not np.array_equal(values[inverse], ym):
        return None
    order = np.argsort(inverse, kind="stable")
    bounds = np.searchsorted(inverse[order], np.arange(len(uniq) + 1))
    return values, [order[bounds[g]:bounds[g + 1]] for g in range(len(uniq))]


def _quad_forms(ym: np.ndarray, u: np.ndarray, v: np.ndarray, mats: np.ndarray) -> np.ndarray:
    """``sum_c y_ic u_i^T M_c v_i`` per row ``i`` (``mats``: ``Q x p x q``).

    With few distinct response rows (:func:`_y_groups`) the rows of a group
    ``g`` share ``M_g = sum_c y_gc M_c``: one product ``u_i^T M_g`` per row,
    ``m p q`` multiply-adds instead of the ``m p q Q`` of one product per
    column (the same numbers to rounding)."""
    out = np.zeros(u.shape[0])
    groups = _y_groups(ym)
    if groups is None:
        for ci in range(mats.shape[0]):
            out += ym[:, ci] * np.einsum("iq,iq->i", u @ mats[ci], v)
        return out
    values, idx = groups
    for value, rows in zip(values, idx, strict=True):
        mg = np.tensordot(value, mats, axes=1)
        out[rows] = np.einsum("iq,iq->i", u[rows] @ mg, v[rows])
    return out


def _row_scalars(y: np.ndarray, u: np.ndarray, v: np.ndarray, sub: _Sub) -> dict[str, np.ndarray]:
    """Per-row factors of ``<psi_i, psi_j>`` (see :func:`_inner`)."""
    ym = _as_matrix(y)
    uc = u @ sub.cm  # rows u_i^T C   (m x q): the O(m p q) product
    w1 = np.einsum("iq,iq->i", uc, v)
    s = ym * w1[:, None] - uc @ sub.c  # s_ic = u_i^T C r_ic
    t = v @ (sub.cm.T @ sub.e)  # t_ic = e_c^T C v_i
    ue, vc = u @ sub.e, v @ sub.c
    out = {"y": ym, "u": u, "v": v, "ue": ue, "vc": vc, "st": s - t,
           "a": np.sum(ym * vc, axis=1), "b": np.sum(ue * ym, axis=1)}
    if sub.pbpb > 0:  # g_i = <psi_i, psibar> (centring)
        # sum_c [y_ic u_i^T P_c v_i - u_i^T P_c c_c - e_c^T P_c v_i - y_ic <C, P_c>]
        pc = np.einsum("cpq,qc->p", sub.pb, sub.c)  # sum_c P_c c_c
        pe = np.einsum("cpq,pc->q", sub.pb, sub.e)  # sum_c P_c^T e_c
        g = _quad_forms(ym, u, v, sub.pb)
        g -= u @ pc + v @ pe + ym @ sub.pbc
        out["g"] = g
    return out


def _inner(ri: dict[str, np.ndarray], rj: dict[str, np.ndarray], sub: _Sub,
           uu: np.ndarray, vv: np.ndarray, yy: np.ndarray, outer: bool) -> np.ndarray:
    """``<psi_i - psibar, psi_j - psibar>`` from the Gram factors ``uu``, ``vv``, ``yy``.

    ``outer``: all pairs of two row sets (matrices); else pairs row by row.
    ``<psi_i, psi_j> = uu (yy vv - a_i - a_j + |c|^2) - vv (b_i + b_j)
    + ue_i . vc_j + ue_j . vc_i + |e|^2 vv - y_j . st_i - y_i . st_j + ||C||^2 yy``.
    """
    def pair(x: np.ndarray, z: np.ndarray) -> np.ndarray:
        return x[:, None] + z[None, :] if outer else x + z

    def dot(x: np.ndarray, z: np.ndarray) -> np.ndarray:
        return x @ z.T if outer else np.sum(x * z, axis=1)

    g = yy * vv  # in place from here: one temporary of the block's size
    g -= pair(ri["a"], rj["a"])
    g += sub.ccq
    g *= uu
    t = pair(ri["b"], rj["b"])
    t -= sub.ee
    t *= vv
    g -= t
    g += dot(ri["ue"], rj["vc"])
    g += dot(ri["vc"], rj["ue"])
    if sub.cc:
        g += sub.cc * yy
    g -= dot(ri["st"], rj["y"])
    g -= dot(ri["y"], rj["st"])
    if "g" in ri:
        g -= pair(ri["g"], rj["g"])
        g += sub.pbpb
    return g


def _norms(r: dict[str, np.ndarray], sub: _Sub) -> np.ndarray:
    uu = np.sum(r["u"] ** 2, axis=1)
    vv = np.sum(r["v"] ** 2, axis=1)
    yy = np.sum(r["y"] ** 2, axis=1)
    return _inner(r, r, sub, uu, vv, yy, outer=False)


def _take(r: dict[str, np.ndarray], idx: np.ndarray | slice) -> dict[str, np.ndarray]:
    return {key: val[idx] for key, val in r.items()}


def _gather(rows: list[dict[str, np.ndarray]], idx: np.ndarray) -> dict[str, np.ndarray]:
    """The per-row factors of the rows ``idx`` (global indices, any order) from
    the chunks, without concatenating the chunks (the complement rows ``u``,
    ``v`` are views of the rotated rows: a concatenation would copy them)."""
    if len(rows) == 1:  # one chunk (the rows of most fits): plain indexing
        return {key: val[idx] for key, val in rows[0].items()}
    sizes = np.array([r["y"].shape[0] for r in rows])
    starts = np.concatenate([[0], np.cumsum(sizes)])
    chunk = np.searchsorted(starts, idx, side="right") - 1
    out: dict[str, np.ndarray] = {}
    for key in rows[0]:
        first = rows[0][key]
        vals = np.empty((idx.size, *first.shape[1:]), dtype=first.dtype)
        for c in np.unique(chunk):
            sel = chunk == c
            vals[sel] = rows[c][key][idx[sel] - starts[c]]
        out[key] = vals
    return out


def _gram_block(ri: dict[str, np.ndarray], rj: dict[str, np.ndarray], sub: _Sub) -> np.ndarray:
    """``<psi_i - psibar, psi_j - psibar>`` for all pairs of two row sets: the
    terms of :func:`_inner` (``outer=True``) with its four cross dot products
    in one GEMM and its sums of row scalars added in place (the same numbers
    up to rounding; the robust rows' sampled pairs and exact Gram spend most
    of their time here).  Two block-sized buffers besides the result and the
    products: ``vv`` becomes the result once the ``vv`` term is formed, and
    the last GEMM is written into that term's buffer."""
    vv = ri["v"] @ rj["v"].T
    t = np.add.outer(ri["b"], rj["b"])
    t -= sub.ee
    t *= vv
    yy = ri["y"] @ rj["y"].T
    g = vv  # vv is not needed again: the product yy vv in its buffer
    g *= yy
    g -= ri["a"][:, None]
    g -= rj["a"][None, :]
    g += sub.ccq
    g *= ri["u"] @ rj["u"].T
    g -= t
    # ue_i.vc_j + vc_i.ue_j - st_i.y_j - y_i.st_j
    left = np.hstack([ri["ue"], ri["vc"], ri["st"], ri["y"]])
    right = np.hstack([rj["vc"], rj["ue"], -rj["y"], -rj["st"]])
    g += np.matmul(left, right.T, out=t)
    if sub.cc:
        yy *= sub.cc
        g += yy
    if "g" in ri:
        g -= ri["g"][:, None]
        g -= rj["g"][None, :]
        g += sub.pbpb
    return g


def _gemm_into(c: np.ndarray, a: np.ndarray, b: np.ndarray, alpha: float = 1.0) -> None:
    """``c += alpha a b^T`` in place (``c`` C-contiguous: BLAS on its transpose,
    with no temporary of ``c``'s size)."""
    out = blas.dgemm(alpha, b.T, a.T, beta=1.0, c=c.T, trans_a=1, overwrite_c=1)
    assert np.shares_memory(out, c)


def _gram_factors(sub: _Sub, r: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """What the exact Gram of rank ``sub.k`` needs of a row's factors: the
    row scalars ``a - |c|^2`` and ``b - |e|^2`` of the products with ``uu`` and
    ``vv``, and the rows ``L_i``, ``R_j`` whose dot products give the rest of
    :func:`_inner`: ``ue_i . vc_j + vc_i . ue_j - st_i . y_j - y_i . st_j +
    ||C||^2 y_i . y_j - g_i - g_j + ||psibar||^2``."""
    y = r["y"]
    left = [r["ue"], r["vc"], r["st"], y, sub.cc * y]
    right = [r["vc"], r["ue"], -y, -r["st"], y]
    if "g" in r:
        one = np.ones((y.shape[0], 1))
        left += [r["g"][:, None], one]
        right += [-one, sub.pbpb - r["g"][:, None]]
    return {"a": r["a"] - sub.ccq, "b": r["b"] - sub.ee, "aj": r["a"],
            "bj": r["b"], "left": np.hstack(left), "right": np.hstack(right)}


def _off_gram(ua: np.ndarray, vb: np.ndarray, y: np.ndarray,
              ranks: list[tuple[_Sub, dict[str, np.ndarray], bool]],
              ) -> list[tuple[float, np.ndarray | None]]:
    """Exact ``sum_{i != j} <psi_i, psi_j>^2`` at several ranks from the Gram in
    row blocks (with the per-row sums ``R_i = sum_{j != i} <psi_i, psi_j>^2``
    where asked), in one sweep over the pairs of row blocks.

    ``ua``, ``vb``, ``y``: all the rotated rows (``m x n1``, ``m x n2``,
    ``m x Q``); ``ranks``: per rank, ascending, its :class:`_Sub`, its row
    factors (concatenated over the chunks) and whether ``R_i`` is wanted.
    Per pair of blocks the products ``y_i . y_j`` and ``u_i . u_j``,
    ``v_i . v_j`` over the complement columns of the first rank are formed
    once; the next rank's complement Grams are these less the products of the
    columns it drops (``u_i[k:] . u_j[k:] = u_i[k0:] . u_j[k0:] - sum_{k0 <= t < k}
    u_it u_jt``), downdated in place, so that a rank costs one product of the
    short rows ``L_i``, ``R_j`` (:func:`_gram_factors`) and a few elementwise
    passes over the block.  Up to rounding (the downdated Grams and the order
    of the sums differ from a direct product in the last bits), the numbers
    of :func:`_inner`.  Buffers: five of a block's size
    (``ROBUST_GRAM_BLOCK`` rows squared)."""
    m = y.shape[0]
    ks = [sub.k for sub, _, _ in ranks]
    if ks != sorted(ks):
        raise ValueError("the ranks of one sweep must be ascending")
    facs = [_gram_factors(sub, r) for sub, r, _ in ranks]
    per_row = [np.zeros(m) if want else None for _, _, want in ranks]
    total = np.zeros(len(ranks))
    step = max(1, min(config.ROBUST_GRAM_BLOCK, m))
    bufs = [np.empty(step * step) for _ in range(5)]

    def view(buf: np.ndarray, ni: int, nj: int) -> np.ndarray:
        return buf[:ni * nj].reshape(ni, nj)  # contiguous, whatever the block's shape

    k0 = ks[0]
    for i0 in range(0, m, step):
        bi = slice(i0, min(i0 + step, m))
        for j0 in range(i0, m, step):
            bj = slice(j0, min(j0 + step, m))
            ni, nj = bi.stop - i0, bj.stop - j0
            yy, uu, vv, g, t = (view(b, ni, nj) for b in bufs)
            np.matmul(y[bi], y[bj].T, out=yy)
            np.matmul(ua[bi, k0:], ua[bj, k0:].T, out=uu)
            np.matmul(vb[bi, k0:], vb[bj, k0:].T, out=vv)
            done = k0
            for n, (sub, _, _) in enumerate(ranks):
                if sub.k > done:  # drop the columns done..k-1 from the complement
                    _gemm_into(uu, ua[bi, done:sub.k], ua[bj, done:sub.k], -1.0)
                    _gemm_into(vv, vb[bi, done:sub.k], vb[bj, done:sub.k], -1.0)
                    done = sub.k
                f = facs[n]
                np.multiply(yy, vv, out=g)
                g -= f["a"][bi, None]
                g -= f["aj"][None, bj]
                g *= uu
                np.add(f["b"][bi, None], f["bj"][None, bj], out=t)
                t *= vv
                g -= t
                _gemm_into(g, f["left"][bi], f["right"][bj])
                if i0 == j0:
                    np.fill_diagonal(g, 0.0)
                rows = per_row[n]
                if rows is None:
                    total[n] += (1.0 if i0 == j0 else 2.0) * float(np.vdot(g, g))
                    continue
                g *= g
                rows[bi] += g.sum(axis=1)
                if i0 != j0:
                    rows[bj] += g.sum(axis=0)
    return [(float(rows.sum()), rows) if rows is not None else (float(tot), None)
            for tot, rows in zip(total, per_row, strict=True)]


def _psi_rows(r: dict[str, np.ndarray], sub: _Sub) -> np.ndarray:
    """The explicit influence functions of a chunk, ``rows x (Q p q)``."""
    ym, u, v = r["y"], r["u"], r["v"]
    p, q = sub.cm.shape
    parts = []
    for c in range(ym.shape[1]):
        rr = ym[:, [c]] * v - sub.c[:, c][None, :]
        psi = (u[:, :, None] * rr[:, None, :]).reshape(-1, p * q)
        psi -= (sub.e[:, c][None, :, None] * v[:, None, :]).reshape(-1, p * q)
        psi -= ym[:, [c]] * sub.cm.reshape(1, -1)
        psi -= sub.pb[c].reshape(1, -1)
        parts.append(psi)
    return np.hstack(parts)


def _off_dxd(rows: list[dict[str, np.ndarray]], sub: _Sub, norms: np.ndarray,
             want_rows: bool = False) -> tuple[float, np.ndarray | None]:
    """``m^2 ||Omega||_F^2 - sum_i ||psi_i||^4`` with ``Omega`` (d x d) formed;
    ``want_rows``: also ``R_i = psi_i^T (sum_j psi_j psi_j^T) psi_i - n_i^2``
    (a second pass)."""
    omega = None
    for r in rows:
        big = _psi_rows(r, sub)
        omega = big.T @ big if omega is None else omega + big.T @ big
    assert omega is not None
    off = float(np.sum(omega * omega)) - float(norms @ norms)
    if not want_rows:
        return off, None
    quad = np.concatenate([np.einsum("id,id->i", big @ omega, big)
                           for big in (_psi_rows(r, sub) for r in rows)])
    return off, quad - norms * norms


class _Sampler:
    """Rows drawn i.i.d. with ``P(I = i) = pi_i = n_i / sum n`` (``n_i``
    the per-row norms), with their importance weights ``1 / pi_i``."""

    def __init__(self, norms: np.ndarray) -> None:
        self.pos = np.clip(norms, 0.0, None)
        self.total = float(self.pos.sum())
        self.m = self.pos.size
        self.size = int(min(config.ROBUST_BLOCK_ROWS, self.m))
        self.ok = self.total > 0 and self.m >= 2
        if self.ok:
            self.cum = np.cumsum(self.pos / self.total)
            self.cum[-1] = 1.0

    def draw(self, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """``(indices, 1 / pi)`` of one block of ``size`` draws (unsorted)."""
        idx = np.searchsorted(self.cum, rng.random(self.size), side="right")
        return idx, self.total / self.pos[idx]


def _rows_sampled(rows: list[dict[str, np.ndarray]], sub: _Sub, norms: np.ndarray,
                  rng: np.random.Generator) -> tuple[np.ndarray, float]:
    """Unbiased ``R_i`` from ``s`` partners drawn with ``P(J = j) = n_j / sum n``
    (``1{J != i} <psi_i, psi_J>^2 / pi_J``), and the summed variance of those
    estimates (their noise in the spread of the ``R_i``)."""
    sampler = _Sampler(norms)
    m, size = sampler.m, sampler.size
    if not sampler.ok:
        return np.zeros(m), 0.0
    idx, w = sampler.draw(rng)
    rb = _gather(rows, idx)
    est, noise, i0 = np.empty(m), 0.0, 0
    for rc in rows:
        g = _gram_block(rc, rb, sub)
        g = g * g * w[None, :]
        g[np.arange(i0, i0 + g.shape[0])[:, None] == idx[None, :]] = 0.0
        est[i0:i0 + g.shape[0]] = g.mean(axis=1)
        noise += float(np.sum(g.var(axis=1, ddof=1))) / size
        i0 += g.shape[0]
    return est, noise


def _off_pairs(rows: list[dict[str, np.ndarray]], sub: _Sub, norms: np.ndarray,
               other: float, rng: np.random.Generator,
               budget: tuple[float, float] | None = None) -> tuple[float, float, int] | None:
    """Importance-sampled ``sum_{i != j} <psi_i, psi_j>^2`` and its MC SE.

    Blocks of ``s`` rows drawn i.i.d. with ``P(I = i) = pi_i = n_i / sum n``
    (``n_i = ||psi_i||^2``); within a block every pair ``a != b`` of draws is
    a pair of independent draws, and ``1{I_a != I_b} <psi_{I_a},
    psi_{I_b}>^2 / (pi_{I_a} pi_{I_b}) = S^2 cos^2(psi_{I_a}, psi_{I_b})`` is
    unbiased for the sum, with a variance that does not depend on the spread
    of the row norms.  A block's ``s (s - 1)`` terms come from one Gram
    product (BLAS); the blocks are independent, so the standard error is
    that of their mean.  Blocks are added until the standard error of
    ``var`` is at most ``ROBUST_VAR_RTOL`` of it or ``ROBUST_MAX_PAIRS``
    pairs were used.

    ``budget = (block, exact)``: the flops of one more block and of the exact
    route (in the units of :func:`robust_moments`'s cost model).  After the
    fewest blocks, whenever the blocks still expected before the target is
    met (``B (2 se / (rtol V))^2`` in all, from the blocks so far, at most
    the pairs' cap) would cost more than the exact route, the sampling stops
    and None is returned: the caller computes the exact sum instead (the
    blocks drawn are discarded; the decision never looks back at them).
    """
    sampler = _Sampler(norms)
    if not sampler.ok:
        return 0.0, 0.0, 0
    size = sampler.size
    ests: list[float] = []
    while True:
        idx, w = sampler.draw(rng)
        order = np.argsort(idx, kind="stable")
        idx, w = idx[order], w[order]
        rb = _gather(rows, idx)
        g = _gram_block(rb, rb, sub)
        g *= g
        g *= w[:, None]
        g *= w[None, :]
        g[idx[:, None] == idx[None, :]] = 0.0  # the same row twice (and a = b)
        ests.append(float(g.sum()) / (size * (size - 1.0)))
        n = len(ests)
        if n < config.ROBUST_MIN_BLOCKS:
            continue
        est = float(np.mean(ests))
        se = float(np.std(ests, ddof=1) / np.sqrt(n))
        scale = max(other, 0.0) + 2.0 * max(est, 0.0)  # m^2 s2^2 var
        pairs = n * size * (size - 1)
        if 2.0 * se <= config.ROBUST_VAR_RTOL * scale or pairs >= config.ROBUST_MAX_PAIRS:
            return est, se, pairs
        if budget is not None and _exact_is_cheaper(n, se, scale, size, budget):
            return None


def _exact_is_cheaper(n: int, se: float, scale: float, size: int,
                      budget: tuple[float, float]) -> bool:
    """Whether the blocks the sampled route still needs (expected from the
    ``n`` so far: the standard error falls as ``1 / sqrt(blocks)``) cost
    more than the exact route (:func:`_off_pairs`)."""
    block, exact = budget
    cap = -(-config.ROBUST_MAX_PAIRS // (size * (size - 1)))  # ceil: the pairs' cap in blocks
    target = config.ROBUST_VAR_RTOL * scale
    need = float(cap) if not target > 0 else min(float(cap), n * (2.0 * se / target) ** 2)
    return (need - n) * block > exact
