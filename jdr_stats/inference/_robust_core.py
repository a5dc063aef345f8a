"""The robust rank test at any width: moments of ``Lambda_k`` without the d x d covariance.

The robust (default) rank test refers ``Lambda_k`` to a scaled chi-square
whose mean and variance are estimated from the influence functions
``psi_i`` of the complement block (``docs/theory/rank_tests.md``, sections 6
and 6a).  It needs

* ``tau = sum_i ||psi_i||^2 / (m s2)`` and the per-row norms ``||psi_i||^2``;
* ``off = sum_{i != j} <psi_i, psi_j>^2``.

Each ``psi_i`` is a rank-one tensor ``u_i (x) v_i (x) y_i`` plus three
centring terms, so ``<psi_i, psi_j>`` is a short combination of the Gram
factors ``u_i . u_j``, ``v_i . v_j``, ``y_i . y_j`` and of per-row scalars
(:func:`_inner`): the norms cost ``O(m p q)`` (one product with the
``p x q`` cross covariance ``C_uv``) and ``off`` is either exact (the
``d x d`` covariance or the ``m x m`` Gram in row blocks, whichever is
cheaper, when that costs at most :data:`config.ROBUST_EXACT_FLOPS`) or an
importance-sampled incomplete U-statistic over row pairs drawn with
probability proportional to ``||psi_i||^2 ||psi_j||^2``, whose Monte Carlo
standard error is estimated and carried to the p-value.

The rows come as chunks ``(y, A'U, B'V)`` of *rotated* whitened rows (full
singular bases ``U``, ``V`` of ``X_lin``): at rank ``k`` the complement
coordinates are the trailing columns, and every first-order sum at rank
``k`` is a sub-block of the one at rank 0 (:class:`RotatedFirst`), so the
first pass serves every ``k``.  ``y`` is ``(m,)`` or ``(m, Q)`` (a whitened
response matrix: ``Lambda_k = m sum_c ||U0^T X_c V0||^2 / s2`` with
``s2 = mean_i |y_i|^2 / Q``, today's statistic when ``Q = 1``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from scipy import stats

from .. import config

__all__ = ["RotatedFirst", "RobustMoments", "rotated_first", "first_from_sums",
           "robust_moments", "robust_pvalue"]

RotChunks = Callable[[], Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]]]


def _as_matrix(y: np.ndarray) -> np.ndarray:
    return y[:, None] if y.ndim == 1 else y


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


def _psibar(suyv: np.ndarray, su: np.ndarray, sv: np.ndarray, sy: np.ndarray,
            c_uy: np.ndarray, c_vy: np.ndarray, c_uv: np.ndarray, m: int) -> np.ndarray:
    """``(1/m) sum_i psi_i`` from the sums ``sum u y_c v^T``, ``sum u``, ``sum v``, ``sum y``."""
    out = suyv.copy()
    for c in range(suyv.shape[0]):
        out[c] -= np.outer(su, c_vy[:, c]) + np.outer(c_uy[:, c], sv) + sy[c] * c_uv
    return out / m


def rotated_first(chunks: RotChunks) -> RotatedFirst:
    """:class:`RotatedFirst` by one pass over the rotated rows."""
    m = 0
    acc: dict[str, np.ndarray] = {}
    for y, ua, vb in chunks():
        ym = _as_matrix(y)
        parts = {"uy": ua.T @ ym, "vy": vb.T @ ym, "uv": ua.T @ vb, "su": ua.sum(0),
                 "sv": vb.sum(0), "sy": ym.sum(0), "yy": np.array(float(np.sum(ym * ym))),
                 "uyv": np.stack([ua.T @ (ym[:, [c]] * vb) for c in range(ym.shape[1])])}
        for key, val in parts.items():
            acc[key] = acc[key] + val if key in acc else val
        m += y.shape[0]
    if m == 0:
        raise ValueError("the row chunks are empty")
    q = acc["sy"].shape[0]
    c_uy, c_vy, c_uv = acc["uy"] / m, acc["vy"] / m, acc["uv"] / m
    pb = _psibar(acc["uyv"], acc["su"], acc["sv"], acc["sy"], c_uy, c_vy, c_uv, m)
    return RotatedFirst(m, c_uy, c_vy, c_uv, pb, float(acc["yy"]) / (m * q))


def first_from_sums(m: int, c_ay: np.ndarray, c_by: np.ndarray, c_ab: np.ndarray,
                    var_y: float, u: np.ndarray, s: np.ndarray, v: np.ndarray) -> RotatedFirst:
    """:class:`RotatedFirst` of exactly centred and whitened rows, from the
    whitened cross sums (no pass): ``sum u = sum v = sum y = 0`` and
    ``(1/m) sum u_i y_i v_i^T = U^T X_lin V = diag(s)`` (``Q = 1``)."""
    n1, n2 = u.shape[0], v.shape[0]
    xs = np.zeros((1, n1, n2))
    xs[0, np.arange(s.size), np.arange(s.size)] = s
    c_uy = (u.T @ c_ay).reshape(n1, 1)
    c_vy = (v.T @ c_by).reshape(n2, 1)
    return RotatedFirst(m, c_uy, c_vy, u.T @ c_ab @ v, xs, float(var_y))


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
        g = np.zeros(u.shape[0])
        for ci in range(ym.shape[1]):
            up = u @ sub.pb[ci]
            g += ym[:, ci] * np.einsum("iq,iq->i", up, v) - up @ sub.c[:, ci]
            g -= v @ (sub.pb[ci].T @ sub.e[:, ci]) + ym[:, ci] * sub.pbc[ci]
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


def _gram_block(ri: dict[str, np.ndarray], rj: dict[str, np.ndarray], sub: _Sub) -> np.ndarray:
    return _inner(ri, rj, sub, ri["u"] @ rj["u"].T, ri["v"] @ rj["v"].T,
                  ri["y"] @ rj["y"].T, outer=True)


@dataclass(frozen=True)
class RobustMoments:
    """What the robust reference needs at rank ``k``.

    ``tau`` (null mean of ``Lambda_k``), ``diag = sum_i (n_i - tau |y_i|^2 / Q)^2``,
    ``off`` (exact or sampled ``sum_{i != j} <psi_i, psi_j>^2``) and its Monte
    Carlo standard error ``off_se`` (0 when exact), ``route`` ("dxd",
    "gram" or "pairs") and ``n_pairs``.
    """

    nobs: int
    k: int
    s2: float
    tau: float
    diag: float
    off: float
    off_se: float
    route: str
    n_pairs: int = 0

    @property
    def var(self) -> float:
        """Finite-sample variance of ``Lambda_k``."""
        return (max(self.diag, 0.0) + 2.0 * max(self.off, 0.0)) / (self.nobs * self.s2) ** 2

    @property
    def var_se(self) -> float:
        """Monte Carlo standard error of :attr:`var`."""
        return 2.0 * self.off_se / (self.nobs * self.s2) ** 2


def _collect(chunks: RotChunks, sub: _Sub) -> tuple[list[dict[str, np.ndarray]], np.ndarray]:
    """Per-row factors at rank ``k`` for every chunk, and the per-row norms."""
    k = sub.k
    step = max(1, config.CHUNK_FLOATS // (4 * (sum(sub.cm.shape) + sub.e.shape[1])))
    rows, norms = [], []
    for y, ua, vb in chunks():
        for start in range(0, y.shape[0], step):
            sl = slice(start, start + step)
            r = _row_scalars(y[sl], ua[sl, k:], vb[sl, k:], sub)
            norms.append(_norms(r, sub))
            rows.append(r)
    return rows, np.concatenate(norms)


def _off_gram(rows: list[dict[str, np.ndarray]], sub: _Sub) -> float:
    r = {key: np.concatenate([x[key] for x in rows]) for key in rows[0]}
    m = r["y"].shape[0]
    step = max(1, int(np.sqrt(config.CHUNK_FLOATS / 8)))
    tot = 0.0
    for i0 in range(0, m, step):
        ri = _take(r, slice(i0, i0 + step))
        for j0 in range(i0, m, step):
            g = _gram_block(ri, _take(r, slice(j0, j0 + step)), sub)
            if i0 == j0:
                np.fill_diagonal(g, 0.0)
                tot += float(np.sum(g * g))
            else:
                tot += 2.0 * float(np.sum(g * g))
    return tot


def _off_dxd(rows: list[dict[str, np.ndarray]], sub: _Sub, norms: np.ndarray) -> float:
    """``m^2 ||Omega||_F^2 - sum_i ||psi_i||^4`` with ``Omega`` (d x d) formed."""
    p, q = sub.cm.shape
    omega = None
    for r in rows:
        ym, u, v = r["y"], r["u"], r["v"]
        parts = []
        for c in range(ym.shape[1]):
            rr = ym[:, [c]] * v - sub.c[:, c][None, :]
            psi = (u[:, :, None] * rr[:, None, :]).reshape(-1, p * q)
            psi -= (sub.e[:, c][None, :, None] * v[:, None, :]).reshape(-1, p * q)
            psi -= ym[:, [c]] * sub.cm.reshape(1, -1)
            psi -= sub.pb[c].reshape(1, -1)
            parts.append(psi)
        big = np.hstack(parts)
        omega = big.T @ big if omega is None else omega + big.T @ big
    assert omega is not None
    return float(np.sum(omega * omega)) - float(norms @ norms)


def _off_pairs(rows: list[dict[str, np.ndarray]], sub: _Sub, norms: np.ndarray,
               diag: float, rng: np.random.Generator) -> tuple[float, float, int]:
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
    """
    r = {key: np.concatenate([x[key] for x in rows]) for key in rows[0]}
    pos = np.clip(norms, 0.0, None)
    total = float(pos.sum())
    m = pos.size
    if not total > 0 or m < 2:
        return 0.0, 0.0, 0
    cum = np.cumsum(pos / total)
    cum[-1] = 1.0
    size = int(min(config.ROBUST_BLOCK_ROWS, m))
    ests: list[float] = []
    while True:
        idx = np.sort(np.searchsorted(cum, rng.random(size), side="right"))
        rb = _take(r, idx)
        g = _gram_block(rb, rb, sub)
        w = total / pos[idx]
        g = g * g * np.outer(w, w)
        g[idx[:, None] == idx[None, :]] = 0.0  # the same row twice (and a = b)
        ests.append(float(g.sum()) / (size * (size - 1.0)))
        n = len(ests)
        if n < config.ROBUST_MIN_BLOCKS:
            continue
        est = float(np.mean(ests))
        se = float(np.std(ests, ddof=1) / np.sqrt(n))
        scale = max(diag, 0.0) + 2.0 * max(est, 0.0)  # m^2 s2^2 var
        pairs = n * size * (size - 1)
        if 2.0 * se <= config.ROBUST_VAR_RTOL * scale or pairs >= config.ROBUST_MAX_PAIRS:
            return est, se, pairs


def robust_moments(chunks: RotChunks, first: RotatedFirst, k: int, *, centre: bool = True,
                   rng: np.random.Generator | None = None,
                   route: str | None = None) -> RobustMoments:
    """:class:`RobustMoments` at rank ``k`` from one pass over the rotated rows.

    ``centre``: estimate ``Omega`` from the influence functions centred at
    their mean ``psibar = U0^T X V0`` (at ranks below the truth the signal's
    mean then stays out of the variance); ``centre=False`` reproduces the
    uncentred estimate of the first version.  ``route`` forces ``"dxd"``,
    ``"gram"`` or ``"pairs"`` (default: the cheapest exact route when it
    costs at most ``ROBUST_EXACT_FLOPS``, else ``"pairs"``).
    """
    sub = _Sub.at(first, k, centre)
    rows, norms = _collect(chunks, sub)
    m = first.nobs
    nq = rows[0]["y"].shape[1]
    ysq = np.concatenate([np.sum(r["y"] ** 2, axis=1) for r in rows])
    tau = float(norms.sum()) / (m * first.s2)
    diag = float(np.sum((norms - tau * ysq / nq) ** 2))
    p, q = sub.cm.shape
    d = p * q * nq
    # flop-equivalents: a Gram entry costs its dot products plus ~40 elementwise passes
    cost_dxd, cost_gram = float(m) * d * (d + 10), float(m) * m * (p + q + 2 * nq + 40)
    if route is None:
        cheap = min(cost_dxd, cost_gram)
        route = ("pairs" if cheap > config.ROBUST_EXACT_FLOPS
                 else "dxd" if cost_dxd <= cost_gram else "gram")
    if route == "dxd":
        off, se, npairs = _off_dxd(rows, sub, norms), 0.0, 0
    elif route == "gram":
        off, se, npairs = _off_gram(rows, sub), 0.0, 0
    elif route == "pairs":
        gen = rng if rng is not None else np.random.default_rng(config.ROBUST_PAIR_SEED)
        off, se, npairs = _off_pairs(rows, sub, norms, diag, gen)
    else:
        raise ValueError(f"route must be 'dxd', 'gram' or 'pairs'; got {route!r}")
    return RobustMoments(m, k, first.s2, tau, diag, off, se, route, npairs)


def robust_pvalue(stat: float, mom: RobustMoments) -> tuple[float, float, float, float]:
    """``(pvalue, eff_df, scale, mc_se)``: ``Lambda_k ~ scale chi2(eff_df)``,
    ``eff_df = 2 tau^2 / var``; ``mc_se`` is the Monte Carlo standard error of
    the p-value carried from that of ``var`` (delta method, 0 when exact)."""
    tau, var = mom.tau, mom.var

    def pv(vv: float) -> float:
        df = 2.0 * tau * tau / vv
        return float(stats.chi2.sf(stat * df / tau, df))

    if not (tau > 0 and var > 0):
        return float("nan"), float("nan"), 1.0, 0.0
    df = 2.0 * tau * tau / var
    se = mom.var_se
    mc = 0.0
    if se > 0:
        lo = max(var - se, 0.5 * var)
        mc = abs(pv(var + se) - pv(lo)) * se / (var + se - lo)
    return pv(var), df, tau / df, mc
