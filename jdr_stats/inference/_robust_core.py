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
(:func:`._robust_rows._inner`): the norms cost ``O(m p q)`` (one product with the
``p x q`` cross covariance ``C_uv``) and ``off`` is either exact (the
``d x d`` covariance or the ``m x m`` Gram in row blocks, whichever is
cheaper, when that costs at most :data:`config.ROBUST_EXACT_FLOPS` or once
sampling is expected to cost more) or an
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

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace

import numpy as np

from .. import config, policy
from ..core._linalg import blas_single_thread
from ..runtime._lazy import integrate, stats
from ._robust_rows import (
    RotatedFirst,
    _as_matrix,
    _norms,
    _off_dxd,
    _off_gram,
    _off_pairs,
    _quad_forms,
    _row_scalars,
    _rows_sampled,
    _Sub,
    _y_groups,
)

__all__ = ["RotatedFirst", "RobustMoments", "rotated_first", "first_from_sums",
           "robust_moments", "robust_moments_ranks", "robust_pvalue"]

RotChunks = Callable[[], Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]]]


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
    #: ``"corrected"`` (theory 6d: mean ``tau + bias``, variance from the
    #: off-diagonal part and the linear term ``lin``), ``"per-row"`` (6:
    #: mean ``tau``, variance from the diagonal and off-diagonal parts) or
    #: ``"both"`` (6d "Above the bound", at ``d/m > ROBUST_BOTH_MIN_RATIO``:
    #: the larger of the two p-values; :meth:`as_reference` gives each)
    reference: str = "per-row"
    bias: float = 0.0
    lin: float = 0.0
    #: Estimated variance of ``off`` (from the per-row sums ``R_i``; corrected
    #: reference only, else 0): the reference's own estimation error.
    off_var: float = 0.0

    @property
    def tags(self) -> tuple[str, ...]:
        """The keys of the table notes these moments need: the reference, and
        ``"pairs"`` when ``off`` was sampled."""
        return ("pairs", self.reference) if self.route == "pairs" else (self.reference,)

    def as_reference(self, reference: str) -> RobustMoments:
        """These moments read with one reference (``"corrected"`` or
        ``"per-row"``; from ``"both"``, which holds what each needs)."""
        if reference not in (self.reference, "per-row") and self.reference != "both":
            raise ValueError(f"moments with the {self.reference} reference cannot be read "
                             f"with the {reference} one")
        return replace(self, reference=reference)

    @property
    def var_df(self) -> float:
        """Degrees of freedom of :attr:`var` as an estimate (``inf`` when its
        error is not carried): ``2 (lin + 2 off)^2 / (4 off_var)``."""
        if self.reference not in ("corrected", "both") or not self.off_var > 0:
            return float("inf")
        num = max(self.lin, 0.0) + 2.0 * max(self.off, 0.0)
        return 2.0 * num * num / (4.0 * self.off_var)

    @property
    def mean(self) -> float:
        """Null mean of ``Lambda_k`` used by the reference (``"both"``: the
        corrected one's)."""
        return self.tau + (self.bias if self.reference in ("corrected", "both") else 0.0)

    @property
    def var(self) -> float:
        """Finite-sample variance of ``Lambda_k`` (given the realised ``tau``
        for the corrected reference)."""
        first = self.lin if self.reference in ("corrected", "both") else self.diag
        return (max(first, 0.0) + 2.0 * max(self.off, 0.0)) / (self.nobs * self.s2) ** 2

    @property
    def var_se(self) -> float:
        """Monte Carlo standard error of :attr:`var`."""
        return 2.0 * self.off_se / (self.nobs * self.s2) ** 2


def _core_grams(s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``G = sum_c S_c S_c^T`` and ``H = sum_c S_c^T S_c`` of the core ``s`` (Q x k x k)."""
    return np.einsum("cab,cdb->ad", s, s), np.einsum("cab,cad->bd", s, s)


@dataclass(frozen=True)
class _Core:
    """The top-``k`` core of the corrected reference (theory 6d): for one
    response column the reciprocal singular values ``inv_s``; for ``Q > 1``
    the HOSVD core ``S_c = U_s^T X_c V_s`` (Q x k x k) with ``G^{-1}``,
    ``H^{-1}`` (``G = sum_c S_c S_c^T``, ``H = sum_c S_c^T S_c``)."""

    inv_s: np.ndarray | None = None
    s: np.ndarray | None = None
    ginv: np.ndarray | None = None
    hinv: np.ndarray | None = None

    @classmethod
    def at(cls, first: RotatedFirst, k: int) -> _Core:
        if first.psibar.shape[0] == 1:
            return cls(inv_s=1.0 / np.diag(first.psibar[0])[:k])
        s = first.psibar[:, :k, :k]
        g, h = _core_grams(s)
        return cls(s=s, ginv=np.linalg.inv(g), hinv=np.linalg.inv(h))

    def factors(self, y: np.ndarray, us: np.ndarray, vs: np.ndarray) -> dict[str, np.ndarray]:
        """Per-row factors of the self-influence and the linear term.

        One column: ``cs = sum_t u_it v_it / s_t``.  ``Q > 1``: with
        ``M_i = sum_c y_ic S_c``, ``phi_i = M_i v_is``, ``chi_i = M_i^T u_is``,
        ``ct_i = phi_i^T G^{-1} M_i H^{-1} chi_i / |y_i|^2`` (``T_i = n_i ct_i``)
        and the weights ``wn_ic = y_ic (a_i + b_i) - gamma_ic`` of ``N_c``
        (``a_i = u_is^T G^{-1} phi_i``, ``b_i = chi_i^T H^{-1} v_is``,
        ``gamma_ic = phi_i^T G^{-1} S_c H^{-1} chi_i``).  For ``Q = 1`` these
        are ``y_i c_i`` and ``y_i^2 c_i``.
        """
        if self.inv_s is not None:
            return {"cs": (us * vs) @ self.inv_s}
        assert self.s is not None and self.ginv is not None and self.hinv is not None
        ym = _as_matrix(y)
        n, nq, k = ym.shape[0], self.s.shape[0], us.shape[1]
        # products with every S_c at once (GEMMs; M_i is never formed):
        # right[b, (c, a)] = S_cab, left[a, (c, b)] = S_cab
        right = self.s.transpose(2, 0, 1).reshape(k, nq * k)
        left = self.s.transpose(1, 0, 2).reshape(k, nq * k)
        phi = np.einsum("ic,ica->ia", ym, (vs @ right).reshape(n, nq, k))
        chi = np.einsum("ic,icb->ib", ym, (us @ left).reshape(n, nq, k))
        gphi, hchi = phi @ self.ginv, chi @ self.hinv  # G, H symmetric
        gamma = np.einsum("ia,ica->ic", gphi, (hchi @ right).reshape(n, nq, k))
        yy = np.sum(ym * ym, axis=1)
        num = np.sum(ym * gamma, axis=1)  # phi_i^T G^-1 M_i H^-1 chi_i
        ct = np.divide(num, yy, out=np.zeros_like(num), where=yy > 0)
        ab = np.sum(us * gphi, axis=1) + np.sum(hchi * vs, axis=1)
        return {"ct": ct, "wn": ym * ab[:, None] - gamma}


def _collect(chunks: RotChunks, sub: _Sub,
             core: _Core | None = None) -> tuple[list[dict[str, np.ndarray]], np.ndarray]:
    """Per-row factors at rank ``k`` for every chunk, and the per-row norms.

    ``core`` (the corrected reference's): also keep its per-row factors
    (:meth:`_Core.factors`).
    """
    k = sub.k
    step = max(1, config.CHUNK_FLOATS // (4 * (sum(sub.cm.shape) + sub.e.shape[1])))
    rows, norms = [], []
    for y, ua, vb in chunks():
        for start in range(0, y.shape[0], step):
            sl = slice(start, start + step)
            r = _row_scalars(y[sl], ua[sl, k:], vb[sl, k:], sub)
            if core is not None:
                r.update(core.factors(y[sl], ua[sl, :k], vb[sl, :k]))
            norms.append(_norms(r, sub))
            rows.append(r)
    return rows, np.concatenate(norms)


def _self_terms(rows: list[dict[str, np.ndarray]], norms: np.ndarray, m: int,
                s2: float) -> tuple[float, float]:
    """``(bias, lin)`` of the corrected reference (theory 6d), ``y`` a vector.

    ``T_i = n_i y_i c_i`` is row ``i``'s influence on its own complement
    norm through the estimated directions; ``bias = 2 sum_i T_i / (m^2 s2)``.
    ``N = (1/m) sum_j y_j^2 c_j u_j0 v_j0^T`` gives the linear term
    ``lambda_l = y_l u_l0^T N v_l0 - T_l / m``; ``lin = 4 sum_l
    (lambda_l - mean)^2 + 4 sum_i (T_i - mean)^2 / m^2`` (in the units of
    ``off``: the linear term's variance plus that of the estimated bias).
    """
    if "ct" in rows[0]:
        return _self_terms_q(rows, norms, m, s2)
    ys = np.concatenate([r["y"][:, 0] for r in rows])
    cs = np.concatenate([r["cs"] for r in rows])
    t = norms * ys * cs
    bias = 2.0 * float(t.sum()) / (m * m * s2)
    nmat = None
    for r in rows:
        w = r["y"][:, 0] ** 2 * r["cs"]
        part = (r["u"] * w[:, None]).T @ r["v"]
        nmat = part if nmat is None else nmat + part
    assert nmat is not None
    nmat /= m
    lam = np.concatenate([r["y"][:, 0] * np.einsum("ip,ip->i", r["u"] @ nmat, r["v"])
                          for r in rows]) - t / m
    return bias, _lin_variance(lam, t, m)


def _lin_variance(lam: np.ndarray, t: np.ndarray, m: int) -> float:
    """``lin = 4 sum_l (lambda_l - mean)^2 + 4 sum_i (T_i - mean)^2 / m^2``."""
    lam = lam - lam.mean()
    tc = t - t.mean()
    return 4.0 * float(lam @ lam) + 4.0 * float(tc @ tc) / (m * m)


def _self_terms_q(rows: list[dict[str, np.ndarray]], norms: np.ndarray, m: int,
                  s2: float) -> tuple[float, float]:
    """``(bias, lin)`` of the corrected reference for ``Q > 1`` columns (theory 6d,
    "Several response columns"): ``T_i = n_i ct_i``, ``bias = 2 sum_i T_i / (m^2 s2)``;
    ``N_c = (1/m) sum_j wn_jc u_j0 v_j0^T``, ``lambda_l = sum_c y_lc u_l0^T N_c v_l0``
    minus row ``l``'s own part ``n_l (sum_c y_lc wn_lc) / (|y_l|^2 m)``."""
    ct = np.concatenate([r["ct"] for r in rows])
    t = norms * ct
    bias = 2.0 * float(t.sum()) / (m * m * s2)
    nq = rows[0]["y"].shape[1]
    p, q = rows[0]["u"].shape[1], rows[0]["v"].shape[1]
    nmat = np.zeros((nq, p, q))
    # the classes in groups of one GEMM each, its product at most CHUNK_FLOATS
    groups = [range(c0, min(c0 + size, nq)) for r in rows[:1]
              for size in [max(1, config.CHUNK_FLOATS // max(r["y"].shape[0] * q, 1))]
              for c0 in range(0, nq, size)]
    for r in rows:
        for gr in groups:
            cs = slice(gr.start, gr.stop)
            wv = (r["wn"][:, cs, None] * r["v"][:, None, :]).reshape(-1, len(gr) * q)
            nmat[cs] += (r["u"].T @ wv).reshape(p, len(gr), q).transpose(1, 0, 2)
    nmat /= m
    parts, owns = [], []
    for r in rows:
        y = r["y"]
        if _y_groups(y) is not None:  # a categorical response: by classes
            parts.append(_quad_forms(y, r["u"], r["v"], nmat))
        else:
            part = np.zeros(y.shape[0])
            for gr in groups:
                cs = slice(gr.start, gr.stop)
                un = (r["u"] @ nmat[cs].transpose(1, 0, 2).reshape(p, -1)).reshape(-1, len(gr), q)
                un *= r["v"][:, None, :]
                part += np.sum(un.sum(axis=2) * y[:, cs], axis=1)
            parts.append(part)
        yy = np.sum(y * y, axis=1)
        own = np.sum(y * r["wn"], axis=1)
        owns.append(np.divide(own, yy, out=np.zeros_like(own), where=yy > 0))
    lam = np.concatenate(parts) - norms * np.concatenate(owns) / m
    return bias, _lin_variance(lam, t, m)


def _reference(first: RotatedFirst, k: int, d: int, reference: str | None) -> str:
    """``"corrected"`` (theory 6d) at ``k = 0``, and at ``k >= 1``
    :func:`jdr_stats.policy.robust_reference`: ``"corrected"`` while
    ``d / m <= ROBUST_CORRECTED_MAX_RATIO``, ``"per-row"`` (6) up to
    ``ROBUST_BOTH_MIN_RATIO`` and ``"both"`` (6d: the larger p-value of the
    two) beyond; ``"per-row"`` when the top-``k`` singular values or core
    cannot be inverted."""
    if reference is not None:
        if reference not in ("corrected", "per-row", "both"):
            raise ValueError("reference must be 'corrected', 'per-row' or 'both'; "
                             f"got {reference!r}")
        if reference == "per-row":
            return reference
    if k and not _core_invertible(first, k):
        return "per-row"
    if reference is None and k > 0:
        return policy.robust_reference(d, first.nobs).name
    return reference or "corrected"


def _core_invertible(first: RotatedFirst, k: int) -> bool:
    """The top-``k`` core can be inverted: positive singular values (one
    column), or ``G = sum_c S_c S_c^T`` and ``H`` well conditioned (``Q > 1``)."""
    if first.psibar.shape[0] == 1:
        return bool(np.all(np.diag(first.psibar[0])[:k] > 0))
    for mat in _core_grams(first.psibar[:, :k, :k]):
        ev = np.linalg.eigvalsh(mat)
        if not ev[0] > 1e-12 * max(ev[-1], 0.0) or not ev[-1] > 0:
            return False
    return True


def robust_moments(chunks: RotChunks, first: RotatedFirst, k: int, *, centre: bool = True,
                   rng: np.random.Generator | None = None, route: str | None = None,
                   reference: str | None = None) -> RobustMoments:
    """:class:`RobustMoments` at rank ``k`` from one pass over the rotated rows.

    ``centre``: estimate ``Omega`` from the influence functions centred at
    their mean ``psibar = U0^T X V0`` (at ranks below the truth the signal's
    mean then stays out of the variance); ``centre=False`` reproduces the
    uncentred estimate of the first version.  ``route`` forces ``"dxd"``,
    ``"gram"`` or ``"pairs"`` (default: the cheapest exact route when it
    costs at most ``ROBUST_EXACT_FLOPS``, else ``"pairs"``, which gives way to
    the cheapest exact route when its remaining blocks are expected to cost
    more: :func:`_off_pairs`; a forced route is kept).  ``reference``
    forces ``"corrected"``, ``"per-row"`` or ``"both"`` (default: :func:`_reference`).
    """
    return robust_moments_ranks(chunks, first, [k], centre=centre, rng=rng, route=route,
                                reference=reference)[0]


def robust_moments_ranks(chunks: RotChunks, first: RotatedFirst, ks: Sequence[int], *,
                         centre: bool = True, rng: np.random.Generator | None = None,
                         route: str | None = None,
                         reference: str | None = None,
                         shared: int | None = None) -> list[RobustMoments]:
    """:func:`robust_moments` at each rank of ``ks`` (ascending), the ranks whose
    route is the exact ``m x m`` Gram computed in one sweep over its row blocks
    (:func:`_off_gram`: the Gram products shared by the ranks are formed once).

    The same numbers as one call per rank in the order of ``ks`` (the sampled
    routes draw from ``rng`` in that order), up to the rounding of the shared
    sweep.  The cost model of the route counts the products the ranks share
    once (theory 6a), as shared by ``shared`` ranks (default ``len(ks)``): the
    ranks of a pass computed in consecutive sweeps (the combined test's rank
    selection) pass the pass's, so that they take the routes, and give the
    numbers, of one sweep over the pass.
    """
    ks = list(ks)
    if ks != sorted(ks):
        raise ValueError(f"the ranks must be ascending; got {ks}")
    m = first.nobs
    nq = first.psibar.shape[0]
    out: list[RobustMoments] = []
    todo: list[tuple[int, _Sub, dict[str, np.ndarray], bool]] = []
    for k in ks:
        sub = _Sub.at(first, k, centre)
        p, q = sub.cm.shape
        d = p * q * nq
        ref = _reference(first, k, d, reference)
        corrected = ref in ("corrected", "both")
        rows, norms = _collect(chunks, sub, _Core.at(first, k) if corrected else None)
        ysq = np.concatenate([np.sum(r["y"] ** 2, axis=1) for r in rows])
        tau = float(norms.sum()) / (m * first.s2)
        diag = float(np.sum((norms - tau * ysq / nq) ** 2))
        bias, lin = _self_terms(rows, norms, m, first.s2) if corrected else (0.0, 0.0)
        # flop-equivalents (theory 6a, measured in bench_auto): an entry of the
        # sweep's Gram costs the products the ranks of the call share (u.u, v.v,
        # y.y), its own short rows' product and ~50 elementwise passes; one
        # entry of a sampled block its products and ~40 passes
        cost_dxd = float(m) * d * (d + 10)
        cost_gram = float(m) * m * ((p + q + nq) / (shared or len(ks)) + 5 * nq + 50)
        exact = "dxd" if cost_dxd <= cost_gram else "gram"
        budget: tuple[float, float] | None = None
        how = route
        if how is None:
            cheap = min(cost_dxd, cost_gram)
            how = "pairs" if cheap > config.ROBUST_EXACT_FLOPS else exact
            # the sampled route gives way to the exact one when it is expected to
            # cost more (a block: s^2 Gram entries; the corrected reference's
            # per-row sums: one more block per s rows)
            entry = float(p + q + 2 * nq + 40)
            size = min(config.ROBUST_BLOCK_ROWS, m)
            budget = (size * size * entry, cheap - (m * size * entry if corrected else 0.0))
        if how not in ("dxd", "gram", "pairs"):
            raise ValueError(f"route must be 'dxd', 'gram' or 'pairs'; got {how!r}")
        per_row: np.ndarray | None = None
        noise, off, se, npairs = 0.0, 0.0, 0.0, 0
        gen = rng if rng is not None else np.random.default_rng(policy.ROBUST_PAIR_SEED)
        if how == "pairs":
            sampled = _off_pairs(rows, sub, norms, lin if corrected else diag, gen, budget)
            if sampled is None:
                how = exact
            else:
                off, se, npairs = sampled
                if corrected:
                    per_row, noise = _rows_sampled(rows, sub, norms, gen)
        if how == "dxd":
            off, per_row = _off_dxd(rows, sub, norms, corrected)
        mom = RobustMoments(m, k, first.s2, tau, diag, off, se, how, npairs,
                            reference=ref, bias=bias, lin=lin)
        if how == "gram":  # in the sweep below
            keep = ("y", "ue", "vc", "st", "a", "b", "g")
            todo.append((len(out), sub, {key: np.concatenate([r[key] for r in rows])
                                         for key in keep if key in rows[0]}, corrected))
            out.append(mom)
            continue
        out.append(_with_off_var(mom, per_row, noise))
    if todo:
        parts = list(chunks())
        ua = np.concatenate([uc for _, uc, _ in parts])
        vb = np.concatenate([vc for _, _, vc in parts])
        y = np.concatenate([_as_matrix(yc) for yc, _, _ in parts])
        # blocks of a few hundred rows: one BLAS thread is faster (threads
        # spinning between the products take the core from the elementwise
        # passes) and the sums do not depend on the thread count
        with blas_single_thread():
            swept = _off_gram(ua, vb, y, [(sub, r, want) for _, sub, r, want in todo])
        for (n, _, _, _), (off, per_row) in zip(todo, swept, strict=True):
            out[n] = _with_off_var(replace(out[n], off=off), per_row, 0.0)
    return out


def _with_off_var(mom: RobustMoments, per_row: np.ndarray | None, noise: float) -> RobustMoments:
    """``mom`` with the estimated variance of ``off`` (corrected reference:
    ``4 sum_i (R_i - mean)^2`` less the sampling noise of the ``R_i``)."""
    if mom.reference not in ("corrected", "both") or per_row is None:
        return mom
    dev = per_row - per_row.mean()
    return replace(mom, off_var=max(4.0 * (float(dev @ dev) - noise), 0.0))


def _tail(stat: float, mean: float, var: float, nu: float) -> tuple[float, float]:
    """``(pvalue, eff_df)`` of ``Lambda_k ~ scale chi2(eff_df)`` with mean
    ``mean`` and variance ``var``; with ``nu`` finite, ``var`` is an estimate
    with ``nu`` degrees of freedom and the p-value averages over it:
    ``P(Z_h sqrt(nu / X) > z)``, ``Z_h = (chi2_h - h)/sqrt(2h)``, ``X ~ chi2_nu``
    (Simpson's rule in ``log X`` over 1201 nodes from its ``1e-300`` quantile
    to its ``1 - 1e-20`` quantile: relative error below ``1e-4`` for ``nu >= 3``)."""
    h = 2.0 * mean * mean / var
    if not np.isfinite(nu) or nu > 1e6:
        return float(stats.chi2.sf(stat * h / mean, h)), h
    z = (stat - mean) / np.sqrt(var)
    lo = max(float(stats.chi2.ppf(1e-300, nu)), 1e-300)
    hi = float(stats.chi2.isf(1e-20, nu))
    s = np.linspace(np.log(lo), np.log(hi), 1201)
    x = np.exp(s)
    logf = (stats.chi2.logpdf(x, nu) + s
            + stats.chi2.logsf(h + z * np.sqrt(2.0 * h * x / nu), h))
    top = float(np.max(logf))
    if not np.isfinite(top):  # every term below the smallest double (far tail)
        return (0.0 if z > 0 else 1.0), h
    val = float(np.exp(top) * integrate.simpson(np.exp(logf - top), x=s))
    return min(max(val, 0.0), 1.0), h


def robust_pvalue(stat: float, mom: RobustMoments) -> tuple[float, float, float, float]:
    """``(pvalue, eff_df, scale, mc_se)``: ``Lambda_k ~ scale chi2(eff_df)``,
    ``eff_df = 2 mean^2 / var``, averaged over the error of ``var`` for the
    corrected reference (:attr:`RobustMoments.var_df`); ``mc_se`` is the
    Monte Carlo standard error of the p-value carried from that of ``var``
    (delta method, 0 when exact)."""
    if mom.reference == "both":  # theory 6d: reject only when both references do
        return max(robust_pvalue(stat, mom.as_reference("corrected")),
                   robust_pvalue(stat, mom.as_reference("per-row")),
                   key=lambda out: -np.inf if np.isnan(out[0]) else out[0])
    mean, var, nu = mom.mean, mom.var, mom.var_df
    if not (mean > 0 and var > 0):
        return float("nan"), float("nan"), 1.0, 0.0
    pv, df = _tail(stat, mean, var, nu)
    se = mom.var_se
    mc = 0.0
    if se > 0:
        lo = max(var - se, 0.5 * var)
        mc = abs(_tail(stat, mean, var + se, nu)[0] - _tail(stat, mean, lo, nu)[0]) \
            * se / (var + se - lo)
    return pv, df, mean / df, mc
