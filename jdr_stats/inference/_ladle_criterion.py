"""The ladle criterion (Luo and Li 2016) with its eigenvalue part measured
against the noise edge.

For ``k = 0..kmax`` the ladle adds two parts:

* ``f(k)``, the normalised Poisson-bootstrap variability of the top-``k``
  singular subspaces of the whitened ``X_lin`` (Luo and Li's, unchanged);
* ``phi(k)``, the normalised ``(k+1)``-th eigenvalue *in excess of the noise
  edge*: ``lam~_{k+1} = max(0, lam_{k+1} - e_k)``, ``lam_j = s_j^2 / s_y^2``,
  ``phi(k) = lam~_{k+1} / (1 + sum_j lam~_j)``.

``e_k`` is the squared largest singular value that noise alone puts in the
``(n1 - k) x (n2 - k)`` complement block, estimated by sign-flip draws of
that block's noise (:func:`noise_edge`: the rows projected off the sample's
strong directions, each row's term ``y_i a_i b_i^T`` given a random sign),
its ``policy.LADLE_EDGE_QUANTILE`` quantile over ``policy.LADLE_EDGE_DRAWS``
draws, scaled to the size of each complement by the Marchenko-Pastur edge
``(sqrt(n1 - k) + sqrt(n2 - k))^2``.  On narrow
designs ``e_k = O((n1 + n2) / m)`` vanishes and the criterion is Luo and
Li's; at width (``n1 n2`` comparable with ``m``) the noise eigenvalues do not
decay, Luo and Li's ``phi`` is flat across them and the ladle chose its
largest candidate.  Derivation: ``docs/theory/rank_tests.md``, section 9.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from .. import config, policy
from ..core._linalg import mp_edge as _mp_edge
from ..resampling._engine import poisson_row_weights
from ..runtime._validation import check_int
from ._wide_replicates import DirectMoments
from .poisson_bootstrap import weighted_moments

__all__ = ["LadleResult", "ladle_from_chunks", "ladle_kmax", "noise_edge", "excess_part"]

Chunks = Callable[[], Iterable[tuple[np.ndarray, np.ndarray, np.ndarray]]]


@dataclass(frozen=True)
class LadleResult:
    """The ladle estimate and its criterion.

    Attributes
    ----------
    rank : int
        ``argmin_k g(k)`` over ``k = 0..kmax``.
    criterion : ndarray
        ``g(k) = f(k) + phi(k)``.
    boot_var : ndarray
        ``f(k)``: normalised bootstrap variability of the top-``k``
        singular subspaces (``f(0) = 0``).
    eig_part : ndarray
        ``phi(k)``: normalised excess of the ``(k+1)``-th squared singular
        value over the noise edge ``edge[k]``.
    edge : ndarray
        ``e_k``, the estimated noise edge of the ``k``-th complement block in
        units of ``s_y^2`` (``m e_k`` is comparable with
        ``(sqrt(n1 - k) + sqrt(n2 - k))^2`` under normal theory).
    """

    rank: int
    criterion: np.ndarray
    boot_var: np.ndarray
    eig_part: np.ndarray
    edge: np.ndarray


def ladle_kmax(n1: int, n2: int) -> int:
    """Luo and Li's largest candidate: ``p - 1`` for ``p <= 10``, else ``floor(p / log p)``."""
    p = min(n1, n2)
    return p - 1 if p <= 10 else int(np.floor(p / np.log(p)))


def _boot_sums(chunks: Chunks, n1: int, n2: int, n_boot: int, rng: np.random.Generator):
    """Covariances and centred cross moments of ``n_boot`` Poisson(1)-reweighted
    replicates, shapes ``(B, n1, n1)``, ``(B, n2, n2)``, ``(B, n1, n2)``.

    The weights come from the resampling engine (exact Poisson(1), drawn row
    by row from ``rng``: independent of the chunking); the reweighted
    moments from the bootstrap's engine
    (:func:`.poisson_bootstrap.weighted_moments`), or for wide blocks
    (``n1 + n2 >= config.BOOT_DIRECT_WIDTH``) from the rows, gathered in
    memory (:class:`._wide_replicates.DirectMoments`).
    """
    if n1 + n2 >= config.BOOT_DIRECT_WIDTH:
        # wide blocks: the same weights, each replicate's moments from the rows
        # (no m x width features; single-precision deviations, module _wide_replicates)
        parts = [(y, a, b, poisson_row_weights(rng, y.shape[0], n_boot)) for y, a, b in chunks()]
        cat = [np.concatenate([p[i] for p in parts], axis=1 if i == 3 else 0) for i in range(4)]
        moms = DirectMoments(cat[0], cat[1], cat[2]).moments(cat[3])
    else:
        moms = weighted_moments(chunks, lambda k: poisson_row_weights(rng, k, n_boot), n_boot)
    return (np.stack([m.cov_a for m in moms]), np.stack([m.cov_b for m in moms]),
            np.stack([m.cross for m in moms]))


def _replicates(chunks: Chunks, n1: int, n2: int, n_boot: int,
                rng: np.random.Generator) -> np.ndarray:
    """Whitened cross moments ``X*_b`` of the replicates, shape ``(B, n1, n2)``."""
    cov_a, cov_b, cross = _boot_sums(chunks, n1, n2, n_boot, rng)
    la = np.linalg.cholesky(cov_a)
    lb = np.linalg.cholesky(cov_b)
    xs = np.linalg.solve(la, cross)
    return np.linalg.solve(lb, xs.transpose(0, 2, 1)).transpose(0, 2, 1)


def _instability(u: np.ndarray, v: np.ndarray, xs: np.ndarray, kmax: int) -> np.ndarray:
    """Luo and Li's ``f0(k)``: the bootstrap mean of
    ``1 - (|det U_k^T U*_k| + |det V_k^T V*_k|) / 2``, ``f0(0) = 0``."""
    ub, _, vbt = np.linalg.svd(xs)
    f0 = np.zeros(kmax + 1)
    for k in range(1, kmax + 1):
        du = np.abs(np.linalg.det(np.matmul(u[:, :k].T, ub[:, :, :k])))
        dv = np.abs(np.linalg.det(np.matmul(v[:, :k].T, vbt[:, :k, :].transpose(0, 2, 1))))
        f0[k] = float(np.mean(1.0 - 0.5 * (du + dv)))
    return f0


def strong_directions(xs: np.ndarray, u: np.ndarray, s: np.ndarray, v: np.ndarray) -> int:
    """``h``: the sample directions with ``s_j^2`` above ``policy.LADLE_STRONG_EDGE``
    times the Marchenko-Pastur edge ``tau^2 (sqrt n1 + sqrt n2)^2`` of the
    replicates' noise (at most ``p - 1``).

    ``tau^2 = mean_b |X*_b - X_lin|_F^2 / (n1 n2)`` is the per-entry variance
    of the Poisson replicates' deviations (about ``s_y^2 / m``).
    """
    n1, n2, p = u.shape[0], v.shape[0], s.size
    d = xs - (u[:, :p] * s) @ v[:, :p].T
    tau2 = float(np.mean(np.einsum("bij,bij->b", d, d))) / (n1 * n2)
    edge = policy.LADLE_STRONG_EDGE * tau2 * float(_mp_edge(n1, n2, np.array(0.0)))
    return min(int(np.sum(s ** 2 > edge)), p - 1)


def noise_edge(chunks: Chunks, u: np.ndarray, s: np.ndarray, v: np.ndarray, h: int,
               var_y: float, kmax: int, rng: np.random.Generator) -> np.ndarray:
    """The noise edge ``e_k`` (in units of ``s_y^2``) for ``k = 0..kmax``.

    Each of ``policy.LADLE_EDGE_DRAWS`` sign-flip draws
    ``N_t = (1/m) sum_i eps_ti y_i a'_i b'_i^T`` (``eps`` random signs, drawn
    row by row from ``rng``, a child spawned from the ladle's generator:
    independent of the chunking) is a draw of the
    estimation noise of ``X_lin``, with the rows' own magnitudes (heavy
    tails included).  Added to the ``h`` strong sample directions
    (:func:`strong_directions`), ``X_h + N_t`` with ``X_h = U_h S_h V_h^T``,
    its ``(h+1)``-th squared singular value is what noise alone puts beyond
    them (the noise of the strong directions' own rows and columns
    included).  ``e_h`` is the ``policy.LADLE_EDGE_QUANTILE`` quantile of
    ``s_{h+1}(X_h + N_t)^2 / s_y^2`` over the draws;
    ``e_k = e_h mp(k) / mp(h)``, ``mp(k) = (sqrt(n1 - k) + sqrt(n2 - k))^2``.
    One pass over the rows.
    """
    n1, n2 = u.shape[0], v.shape[0]
    draws = check_int(policy.LADLE_EDGE_DRAWS, "policy.LADLE_EDGE_DRAWS", low=1)
    acc = np.zeros((draws, n1, n2))
    m = 0
    for y, a, b in chunks():
        eps = np.where(rng.random((y.shape[0], draws)) < 0.5, -1.0, 1.0)
        for t in range(draws):
            acc[t] += a.T @ ((eps[:, t] * y)[:, None] * b)
        m += y.shape[0]
    strong = (u[:, :h] * s[:h]) @ v[:, :h].T
    top = np.linalg.svd(strong + acc / m, compute_uv=False)[:, h] ** 2 / var_y
    e_h = float(np.quantile(top, policy.LADLE_EDGE_QUANTILE))
    ks = np.arange(kmax + 1, dtype=float)
    return e_h * _mp_edge(n1, n2, ks) / float(_mp_edge(n1, n2, np.array(float(h))))


def excess_part(lam: np.ndarray, edge: np.ndarray) -> np.ndarray:
    """``phi(k) = lam~_{k+1} / (1 + sum_j lam~_j)``, ``lam~ = max(0, lam - edge)``
    (``lam[k]`` is the ``(k+1)``-th eigenvalue, ``edge[k]`` its noise edge)."""
    lt = np.clip(lam - edge, 0.0, None)
    return lt / (1.0 + lt.sum())


def ladle_from_chunks(
    chunks: Chunks,
    var_y: float,
    u: np.ndarray,
    s: np.ndarray,
    v: np.ndarray,
    *,
    n_boot: int = 200,
    kmax: int | None = None,
    rng: np.random.Generator,
) -> LadleResult:
    """The ladle on a re-iterable factory of whitened row chunks.

    One pass over the rows: the Poisson weights are drawn row by row in the
    chunks' order, so the estimate depends neither on the chunking nor on
    whether the rows are in memory or streamed from a row source.
    ``var_y`` is the mean of the centred ``y`` squared.  See
    :func:`~jdr_stats.inference.rank_robust.ladle_rank`.
    """
    n1, n2 = u.shape[0], v.shape[0]
    n_boot = check_int(n_boot, "n_boot", low=2)
    top = min(n1, n2) - 1
    if kmax is None:
        kmax = ladle_kmax(n1, n2)
    else:
        kmax = check_int(kmax, "kmax", low=0, high=top)
    if not var_y > 0:
        raise ValueError("y is constant")
    # the edge's signs come from a spawned child: the caller's generator
    # advances by the Poisson weights only, as before the edge existed
    edge_rng = rng.spawn(1)[0]
    xs = _replicates(chunks, n1, n2, int(n_boot), rng)
    f0 = _instability(u, v, xs, kmax)
    f = f0 / (1.0 + f0.sum())
    lam = (s[: kmax + 1] ** 2) / var_y  # lam[k] is the (k+1)-th eigenvalue
    h = strong_directions(xs, u, s, v)
    edge = noise_edge(chunks, u, s, v, h, var_y, kmax, edge_rng)
    phi = excess_part(lam, edge)
    g = f + phi
    return LadleResult(rank=int(np.argmin(g)), criterion=g, boot_var=f, eig_part=phi, edge=edge)
