"""Shared numerics: moments, whitening, truncated SVD, angles, signs.

Every estimator of the package calls these; nothing here knows about a
particular method.

The moments engine (:mod:`jdr_stats.core._moments_engine`, re-exported here:
:func:`block_moments`, :class:`BlockMoments`) reduces the rows in slices,
so a fit needs O(chunk x (n1 + n2) + n1 n2) memory beyond its input and works
on any array that supports row slicing (``numpy.memmap`` included).
:class:`ReweightedMoments` (:mod:`jdr_stats.core._reweighted`, re-exported
here) gives the moments of many reweightings of the same rows (bootstrap
resamples) by matrix products, without copying rows; the BLAS thread
contexts live in :mod:`jdr_stats.core._blas`.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import cached_property

import numpy as np

from .. import config
from ..runtime._lazy import linalg as sla
from ._blas import blas_for_blocks, blas_single_thread
from ._moments_engine import (
    BlockMoments,
    CentredSums,
    block_moments,
    sums_to_block_moments,
)
from ._reweighted import ReweightedMoments
from .whitening import DesignWhitening

__all__ = [
    "BlockMoments",
    "block_moments",
    "CentredSums",
    "sums_to_block_moments",
    "ReweightedMoments",
    "blas_single_thread",
    "blas_for_blocks",
    "cholesky_factor",
    "Whitening",
    "ShrunkWhitening",
    "AnyWhitening",
    "oas_shrinkage",
    "shrunk_whitening",
    "block_whitenings",
    "joint_whitening",
    "whiten_cross",
    "sign_columns",
    "svd_signed",
    "orthonormal_basis",
    "centred_basis",
    "principal_angles",
    "batched_principal_angles",
    "unit_columns",
    "mp_edge",
]


def cholesky_factor(
    cov: np.ndarray, argname: str, names: Sequence[str], *, tol: float = 1e-10
) -> np.ndarray:
    """Lower Cholesky factor ``L`` of a covariance (``cov = L L^T``).

    Raises a ``ValueError`` naming the variables involved when the block's
    columns are collinear: the smallest eigenvalue of the correlation matrix
    is below ``tol`` (relative to the number of variables).

    The eigenvalues are computed only when the factor does not already
    bound the smallest one above that threshold: with ``corr = L L^T``,
    ``lambda_min = 1 / ||L^{-1}||_2^2 >= 1 / ||L^{-1}||_F^2``, a triangular
    inverse (``n^3 / 3`` flops, a small part of an eigendecomposition's); a bound
    within a factor 2 of the threshold, or a failed factorisation, leaves
    the decision to the eigenvalues, so the same covariances are refused.
    """
    d = np.sqrt(np.diag(cov))
    _check_sd(d, argname, names)
    corr = cov / np.outer(d, d)
    if not np.isfinite(corr).all():  # a covariance beyond float64 (the SDs were fine)
        _check_sd(np.full_like(d, np.inf), argname, names)
    limit = tol * corr.shape[0]
    try:
        chol = np.linalg.cholesky(corr)
    except np.linalg.LinAlgError:
        chol = None
    if chol is not None:
        inv, info = sla.lapack.dtrtri(chol, lower=1)
        if info == 0 and 1.0 / float(np.sum(inv * inv)) >= 2.0 * limit:
            return d[:, None] * chol
    evals, evecs = np.linalg.eigh(corr)
    if evals[0] < tol * corr.shape[0]:
        v = evecs[:, 0]
        involved = [names[int(j)] for j in np.flatnonzero(np.abs(v) > 0.05)]
        raise ValueError(
            f"{argname} has collinear columns {involved} (smallest eigenvalue of "
            f"their correlation matrix {evals[0]:.3g}); remove redundant columns"
        )
    return d[:, None] * (np.linalg.cholesky(corr) if chol is None else chol)


class _RowMaps:
    """The row and direction maps every whitening derives from its ``mean``,
    ``solve`` (``C^{-1} mat``) and ``solve_t`` (``C^{-T} mat``), with
    ``Sigma = C C^T`` (``C = L`` for :class:`Whitening`)."""

    mean: np.ndarray

    def solve(self, mat: np.ndarray) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def solve_t(self, mat: np.ndarray) -> np.ndarray:  # pragma: no cover - overridden
        raise NotImplementedError

    def to_white(self, x: np.ndarray) -> np.ndarray:
        """Whitened rows ``C^{-1}(x_i - mean)``, shape (m, n)."""
        return self.solve((x - self.mean).T).T

    def to_scores(self, x: np.ndarray) -> np.ndarray:
        """Rows ``Sigma^{-1}(x_i - mean)`` (scaled partial residuals), shape (m, n)."""
        return self.solve_t(self.solve((x - self.mean).T)).T

    def to_original(self, u_std: np.ndarray) -> np.ndarray:
        """Whitened directions back to original coordinates: unit columns of
        ``C^{-T} U'`` (times ``scale``, when the map's variables are the
        original ones times ``scale``: the user's units)."""
        coef = self.solve_t(u_std)
        scale = getattr(self, "scale", None)
        return unit_columns(coef if scale is None else coef * scale[:, None])


@dataclass(frozen=True)
class Whitening(_RowMaps):
    """Affine whitening of one block: ``x' = L^{-1}(x - mean)``, ``cov = L L^T``.

    The one whitening of the package: the joint estimator, the rank tests,
    the coordinate tests, the bootstrap and the single-block baselines all
    map rows, cross moments and directions through it.  ``chol`` is the
    lower Cholesky factor (see :func:`cholesky_factor` and
    ``JointDimReduction.fit`` for why any square root gives the same
    subspaces).

    Attributes
    ----------
    mean : ndarray, shape (n,)
    cov : ndarray, shape (n, n)
    chol : ndarray, shape (n, n)
        Lower triangular ``L`` with ``cov = L L^T``.
    """

    mean: np.ndarray
    cov: np.ndarray
    chol: np.ndarray
    #: power-of-two column scales: the map's variables are the original ones
    #: times ``scale`` (:func:`jdr_stats.core.moments.column_scales`); None: unit
    scale: np.ndarray | None = None

    @classmethod
    def from_moments(
        cls, mean: np.ndarray, cov: np.ndarray, argname: str, names: Sequence[str],
        scale: np.ndarray | None = None,
    ) -> Whitening:
        """Factor ``cov`` (``ValueError`` naming collinear variables)."""
        return cls(mean=mean, cov=cov, chol=cholesky_factor(cov, argname, names), scale=scale)

    @property
    def dim(self) -> int:
        return int(self.chol.shape[0])

    @cached_property
    def linv(self) -> np.ndarray:
        """``L^{-1}`` (lower triangular), formed once for repeated products.

        (``scipy.linalg.solve_triangular`` on small matrices can take
        milliseconds per call under a multi-threaded BLAS.)
        """
        return np.tril(np.linalg.solve(self.chol, np.eye(self.dim)))

    def solve(self, mat: np.ndarray) -> np.ndarray:
        """``L^{-1} mat`` (columns of ``mat`` in original coordinates)."""
        return sla.solve_triangular(self.chol, mat, lower=True)

    def solve_t(self, mat: np.ndarray) -> np.ndarray:
        """``L^{-T} mat`` (whitened directions to original coefficients)."""
        return sla.solve_triangular(self.chol.T, mat, lower=False)

    def precision_diag(self) -> np.ndarray:
        """``diag(Sigma^{-1})``: the squared column norms of ``L^{-1}``."""
        return (self.linv**2).sum(axis=0)

    def subset(self, idx: np.ndarray, argname: str, names: Sequence[str]) -> Whitening:
        """The whitening of the variables ``idx`` alone (their own factor)."""
        sel = np.ix_(idx, idx)
        out = Whitening.from_moments(
            self.mean[idx], self.cov[sel], argname, [names[j] for j in idx]
        )
        return out if self.scale is None else replace(out, scale=self.scale[idx])


def oas_shrinkage(sum_sq: float, n: int, nobs: int) -> float:
    """OAS shrinkage intensity of a correlation matrix towards the identity.

    ``sum_sq`` is ``||R||_F^2 = tr(R^2)`` of the sample correlation matrix
    ``R`` of ``n`` variables from ``nobs`` rows.  The oracle approximating
    shrinkage of Chen, Wiesel, Eldar and Hero (2010) with target
    ``mu I``, ``mu = tr(R)/n = 1``:
    ``t = min(1, (tr(R^2)/n^2 + 1) / ((nobs + 1)(tr(R^2)/n^2 - 1/n)))``
    (the form of scikit-learn's ``oas``); 1 when ``R = I`` exactly.
    """
    alpha = sum_sq / n**2
    den = (nobs + 1) * (alpha - 1.0 / n)
    if den <= 0:
        return 1.0
    return float(min(1.0, (alpha + 1.0) / den))


@dataclass(frozen=True)
class ShrunkWhitening(_RowMaps):
    """Whitening with a regularised covariance, ``Sigma = D R_t D``.

    ``D = diag(sd)`` holds the sample standard deviations and
    ``R_t = (1 - t) R + t I`` shrinks the sample correlation matrix
    ``R = Q diag(evals) Q^T`` (``Q`` n x k orthonormal, k <= min(m, n): the
    thin eigen decomposition, zero eigenvalues left out) towards the
    identity.  ``t = 1`` (``Q`` empty) is the diagonal whitening.  The
    square root is the symmetric one, ``C = D R_t^{1/2}``; the mapped-back
    subspace does not depend on which root (see ``JointDimReduction.fit``).
    Everything is applied through ``Q``: ``R_t^{-1/2} x = Q((g - c) * Q^T x)
    + c x`` with ``g = ((1 - t) evals + t)^{-1/2}`` and ``c = t^{-1/2}``, so no
    n x n matrix is formed or inverted (the dual route when n > m).

    Duck-types :class:`Whitening` for the estimator (``solve``, ``solve_t``,
    ``to_white``, ``to_original``, ``precision_diag``, ``subset``); ``cov``
    and ``chol`` form the n x n matrices on demand only.
    """

    mean: np.ndarray
    sd: np.ndarray
    basis: np.ndarray
    evals: np.ndarray
    shrinkage: float
    kind: str = "shrinkage"
    #: as :attr:`Whitening.scale`
    scale: np.ndarray | None = None

    @property
    def dim(self) -> int:
        return int(self.sd.shape[0])

    @cached_property
    def _gains(self) -> tuple[np.ndarray, float]:
        t = self.shrinkage
        lam = (1.0 - t) * self.evals + t
        c = 1.0 / np.sqrt(t) if t > 0 else 0.0
        return 1.0 / np.sqrt(lam), c

    def _root_inv(self, x: np.ndarray) -> np.ndarray:
        """``R_t^{-1/2} x`` (x of shape (n,) or (n, p)), computed in place in ``x``
        (the low-rank correction added by column slices: no second n x p buffer)."""
        g, c = self._gains
        q = self.basis
        coef = q.T @ x if q.shape[1] else None
        x *= c
        if coef is None:
            return x
        if x.ndim == 1:
            x += q @ (coef * (g - c))
            return x
        coef *= (g - c)[:, None]
        step = max(1, config.CHUNK_FLOATS // max(1, x.shape[0]))
        for j in range(0, x.shape[1], step):
            x[:, j:j + step] += q @ coef[:, j:j + step]
        return x

    def solve(self, mat: np.ndarray) -> np.ndarray:
        """``C^{-1} mat = R_t^{-1/2} D^{-1} mat``."""
        mat = np.asarray(mat, dtype=float)
        scale = self.sd[:, None] if mat.ndim == 2 else self.sd
        return self._root_inv(mat / scale)

    def solve_t(self, mat: np.ndarray) -> np.ndarray:
        """``C^{-T} mat = D^{-1} R_t^{-1/2} mat``."""
        out = self._root_inv(np.array(mat, dtype=float))
        out /= self.sd[:, None] if out.ndim == 2 else self.sd
        return out

    def precision_diag(self) -> np.ndarray:
        """``diag(Sigma^{-1}) = diag(R_t^{-1}) / sd^2``, without forming ``R_t^{-1}``."""
        g, c = self._gains
        d = np.full(self.dim, c**2)
        if self.basis.shape[1]:
            d += (self.basis**2) @ (g**2 - c**2)
        return d / self.sd**2

    def correlation(self, idx: np.ndarray | None = None) -> np.ndarray:
        """``R_t`` (or its submatrix on ``idx``), formed explicitly."""
        q = self.basis if idx is None else self.basis[idx]
        out = (q * ((1.0 - self.shrinkage) * self.evals)) @ q.T
        out[np.diag_indices_from(out)] += self.shrinkage
        return out

    @cached_property
    def cov(self) -> np.ndarray:
        """``D R_t D`` (n x n, formed on demand)."""
        return self.sd[:, None] * self.correlation() * self.sd[None, :]

    @cached_property
    def chol(self) -> np.ndarray:
        """Lower Cholesky factor of :attr:`cov` (n x n, formed on demand)."""
        return np.linalg.cholesky(self.cov)

    def subset(self, idx: np.ndarray, argname: str, names: Sequence[str]) -> Whitening:
        """The whitening of the variables ``idx`` with their block of the
        regularised covariance, ``D_idx R_t[idx, idx] D_idx``."""
        idx = np.asarray(idx)
        sd = self.sd[idx]
        cov = sd[:, None] * self.correlation(idx) * sd[None, :]
        out = Whitening.from_moments(self.mean[idx], cov, argname, [names[j] for j in idx])
        return out if self.scale is None else replace(out, scale=self.scale[idx])


def _check_sd(sd: np.ndarray, argname: str, names: Sequence[str]) -> None:
    """Refuse a zero SD (a constant column), naming it, and an SD whose
    square is beyond float64 (an infinite or subnormal variance: columns
    of values about 1e154 or more, or varying by less than about 1e-154),
    naming the columns and the remedy (a rescaling)."""
    tiny = np.sqrt(np.finfo(float).tiny)  # an SD whose square is subnormal
    if np.all((sd >= tiny) & np.isfinite(sd)):
        return
    if not np.all(sd > 0):
        const = [names[int(j)] for j in np.flatnonzero(~(sd > 0))]
        raise ValueError(
            f"{argname} has constant column(s) {const} at working precision (a variance "
            "of zero: constant, or varying by less than about 1e-154, whose squares "
            "vanish in float64); remove a constant column, or multiply a varying one by "
            "a power of ten")
    huge = [names[int(j)] for j in np.flatnonzero(~np.isfinite(sd) | ~(sd >= tiny))]
    raise ValueError(
        f"{argname} has column(s) {huge} whose variance is beyond float64 (values of "
        "about 1e154 or more, or varying by less than about 1e-154, whose squares "
        "overflow or lose their digits); multiply them by a power of ten to bring "
        "them near unit scale, or fit from the rows in memory, which scale such "
        "columns exactly (the fit's conclusions do not depend on the units)")


def shrunk_whitening(
    mean: np.ndarray,
    cov: np.ndarray | None,
    nobs: int,
    kind: str,
    argname: str,
    names: Sequence[str],
    *,
    rows: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> ShrunkWhitening:
    """The ``"shrinkage"`` (OAS) or ``"diagonal"`` whitening of one block.

    From the covariance (``cov``, n x n: eigen decomposition of the
    correlation matrix, O(n^3)) or, when ``rows`` (m x n) are given, from the
    thin SVD of the standardised rows through their m x m Gram matrix
    (O(m^2 n), the dual route for n > m); ``cov`` may then be None.  Both
    give the same ``R = Q diag(evals) Q^T`` (up to rounding) and the same
    intensity ``t`` (:func:`oas_shrinkage`; ``t = 1`` for ``"diagonal"``).
    """
    if rows is not None:
        w = None if weights is None else np.asarray(weights, dtype=float) / np.sum(weights)
        xc = rows - mean
        var = (xc**2).mean(axis=0) if w is None else w @ xc**2
        sd = np.sqrt(var)
    else:
        assert cov is not None
        sd = np.sqrt(np.diag(cov))
    _check_sd(sd, argname, names)
    n = sd.shape[0]
    if kind == "diagonal":
        return ShrunkWhitening(mean=mean, sd=sd, basis=np.zeros((n, 0)), evals=np.zeros(0),
                               shrinkage=1.0, kind="diagonal")
    if rows is not None:
        z = xc / sd
        z *= np.sqrt(w)[:, None] if w is not None else np.sqrt(1.0 / z.shape[0])
        gram = z @ z.T  # m x m, same nonzero spectrum as R = Z^T Z
        ev, p = np.linalg.eigh(gram)
        keep = ev > ev[-1] * max(gram.shape) * np.finfo(float).eps
        ev, p = ev[keep], p[:, keep]
        basis = (z.T @ p) / np.sqrt(ev)
    else:
        corr = cov / np.outer(sd, sd)
        ev, basis = np.linalg.eigh(corr)
        ev = np.clip(ev, 0.0, None)
    t = oas_shrinkage(float(np.sum(ev**2)), n, nobs)
    return ShrunkWhitening(mean=mean, sd=sd, basis=basis, evals=ev, shrinkage=t)


#: Either whitening object: the sample one (Cholesky) or a regularised one.
AnyWhitening = Whitening | ShrunkWhitening


def block_whitenings(
    mom: BlockMoments, names_a: Sequence[str], names_b: Sequence[str]
) -> DesignWhitening[Whitening]:
    """The sample whitening of each block of a two-block fit (one factor each):
    the per-block whitening of the design."""
    return DesignWhitening.per_block((
        Whitening.from_moments(mom.mean_a, mom.cov_a, "exog_a", names_a, mom.scale_a),
        Whitening.from_moments(mom.mean_b, mom.cov_b, "exog_b", names_b, mom.scale_b),
    ))


def joint_whitening(
    mean: np.ndarray,
    cov: np.ndarray,
    widths: Sequence[int],
    argnames: Sequence[str],
    names: Sequence[Sequence[str]],
    kind: str = "sample",
    nobs: int | None = None,
    scale: np.ndarray | None = None,
) -> DesignWhitening[Whitening]:
    """The whitening across blocks of a design (kind ``"joint"``).

    ``cov`` is the ``(p, p)`` sample covariance of the stacked blocks
    (widths ``widths``) and ``kind`` the covariance ``Sigma_hat`` the
    whitening uses: ``"sample"`` (``cov`` itself) or ``"shrinkage"`` (the
    OAS-shrunk correlation matrix of all ``p`` columns together, mapped back
    with the SDs: ``D R_t D``, ``t`` from ``nobs`` rows and ``p`` columns;
    theory page "Whitening", "Regularised joint whitening").  With
    ``P = Sigma_hat^{-1}``, block ``k``'s partial covariance is
    ``Sigma_{k|-k} = P_kk^{-1}`` (whitened by its Cholesky factor) and its
    row ``r_k = Sigma_{k|-k} (P (x - mean))_k`` (for ``"sample"`` the least
    squares residual on the other blocks), so the residual map is
    ``P diag(Sigma_{k|-k})``.  A ``ValueError`` names the variables when the
    sample covariance is singular (columns collinear, within a block or
    across blocks) or a variable is constant.  ``scale``: the design's
    columns are the original ones times ``scale`` (kept on the whitening
    and its maps, which map directions back to the original units).
    """
    every = [f"{arg}:{n}" for arg, block in zip(argnames, names, strict=True) for n in block]
    bounds = np.cumsum([0, *widths])
    if kind == "sample":
        try:
            chol = cholesky_factor(cov, "the design (all blocks together)", every)
        except ValueError:  # a block singular on its own: name that block and its columns
            for k, (lo, hi) in enumerate(itertools.pairwise(bounds)):
                cholesky_factor(cov[lo:hi, lo:hi], argnames[k], names[k])
            raise
        prec = sla.cho_solve((chol, True), np.eye(cov.shape[0]))
    elif kind == "shrinkage":
        if nobs is None:
            raise ValueError("the shrinkage joint whitening needs the number of rows")
        sw = shrunk_whitening(mean, cov, nobs, "shrinkage", "the design", every)
        t, q = sw.shrinkage, sw.basis
        if t <= 0.0:  # no shrinkage: the sample covariance
            return joint_whitening(mean, cov, widths, argnames, names, scale=scale)
        # Sigma_hat^{-1} = D^{-1} (Q diag(1/l) Q^T + (I - Q Q^T) / t) D^{-1}
        lam = (1.0 - t) * sw.evals + t
        inner = (q * (1.0 / lam - 1.0 / t)) @ q.T
        inner[np.diag_indices_from(inner)] += 1.0 / t
        prec = inner / np.outer(sw.sd, sw.sd)
    else:
        raise ValueError(f'a joint whitening is "sample" or "shrinkage"; got {kind!r}')
    prec = (prec + prec.T) / 2
    maps, partial = [], np.zeros_like(prec)
    for k, (lo, hi) in enumerate(itertools.pairwise(bounds)):
        part = np.linalg.inv(prec[lo:hi, lo:hi])
        part = (part + part.T) / 2
        partial[lo:hi, lo:hi] = part
        maps.append(Whitening.from_moments(mean[lo:hi], part, argnames[k], names[k],
                                           None if scale is None else scale[lo:hi]))
    return DesignWhitening.joint(maps, mean, prec @ partial, scale)


def whiten_cross(cross: np.ndarray, wa: AnyWhitening, wb: AnyWhitening) -> np.ndarray:
    """``La^{-1} S Lb^{-T}``: the cross moment in whitened coordinates."""
    return wb.solve(wa.solve(cross).T).T


def mp_edge(n1: int, n2: int, k: np.ndarray | int | float = 0, q: int = 1) -> np.ndarray:
    """``(sqrt(n1 - k) + sqrt(n2 - k))^2``: the Marchenko-Pastur edge of an
    ``(n1 - k) x (n2 - k)`` block of unit-variance entries, the top of the
    complement block's noise spectrum in units of ``m s^2 / s_y^2`` (the
    ladle's edge, the spectral test's pass plan).  With ``q > 1`` response
    columns, the smaller edge of the two unfoldings' complements,
    ``(n1 - k) x q (n2 - k)`` and ``(n2 - k) x q (n1 - k)``."""
    k = np.asarray(k)
    if q == 1:
        return (np.sqrt(n1 - k) + np.sqrt(n2 - k)) ** 2
    return np.minimum((np.sqrt(n1 - k) + np.sqrt(q * (n2 - k))) ** 2,
                      (np.sqrt(n2 - k) + np.sqrt(q * (n1 - k))) ** 2)


def unit_columns(x: np.ndarray) -> np.ndarray:
    """Scale each column to unit Euclidean length (zero columns kept; a
    column whose squares over- or underflow is brought near unit scale by
    a power of two first)."""
    with np.errstate(over="ignore", under="ignore"):
        norms = np.linalg.norm(x, axis=0)
    odd = ~np.isfinite(norms) | ((norms < np.sqrt(np.finfo(float).tiny))
                                 & np.any(x != 0, axis=0))  # a norm that underflowed too
    if odd.any() and np.isfinite(x).all():
        top = np.abs(x[:, odd]).max(axis=0)
        x = x.copy()
        x[:, odd] = x[:, odd] * np.ldexp(1.0, -np.frexp(top)[1])
        norms[odd] = np.linalg.norm(x[:, odd], axis=0)
    norms[norms == 0] = 1.0
    return x / norms


def sign_columns(x: np.ndarray, *others: np.ndarray) -> tuple[np.ndarray, ...]:
    """The package's sign convention: each column's entry of largest magnitude
    is positive; the columns of ``others`` are flipped with those of ``x``."""
    idx = np.argmax(np.abs(x), axis=0)
    signs = np.sign(x[idx, np.arange(x.shape[1])])
    signs[signs == 0] = 1.0
    return (x * signs, *(o * signs for o in others))


def svd_signed(
    x: np.ndarray, max_rank: int | None = None
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Thin SVD ``x = U diag(s) V^T`` with deterministic signs.

    Returns ``U`` (n1 x k), all singular values ``s`` (descending) and
    ``V`` (n2 x k), k = min(n1, n2); each column of ``U`` has its entry of
    largest magnitude positive, and ``V`` is flipped with it.

    ``max_rank``, when given, bounds the rank of ``x`` (a cross moment of
    ``m`` rows has rank at most ``m``).  When it is well below ``k`` the SVD
    goes through the range of ``x``: ``Q`` an orthonormal basis of
    ``x Omega`` (``Omega`` a fixed Gaussian n2 x (max_rank + 10) matrix,
    seed 0), the SVD of the small ``Q^T x``, ``U = Q U_small``; exact up to
    rounding because ``range(x Omega) = range(x)``; only ``max_rank + 10``
    vectors are returned (with ``k`` singular values, zeros after them).
    """
    k = min(x.shape)
    if max_rank is not None and 2 * (max_rank + 10) < k:
        omega = np.random.default_rng(0).standard_normal((x.shape[1], max_rank + 10))
        q, _ = np.linalg.qr(x @ omega)
        u_s, s_s, vt = np.linalg.svd(q.T @ x, full_matrices=False)
        u, v = sign_columns(q @ u_s, vt.T)
        s = np.zeros(k)
        s[: s_s.size] = s_s
        return u, s, v
    try:
        u, s, vt = np.linalg.svd(x, full_matrices=False)
    except np.linalg.LinAlgError:  # gesdd rarely fails to converge: the slower gesvd
        u, s, vt = sla.svd(x, full_matrices=False, lapack_driver="gesvd")
    u, v = sign_columns(u, vt.T)
    return u, s, v


def centred_basis(x: np.ndarray, label: str, what: str) -> tuple[np.ndarray, np.ndarray]:
    """The centred columns of ``x`` and an orthonormal basis of them (QR).

    Raises ``ValueError`` starting with ``label`` (the estimand's argument)
    when the columns of ``what`` (``x`` with the intercept) are linearly
    dependent.
    """
    xc = x - x.mean(axis=0)
    q, r = np.linalg.qr(xc)
    diag = np.abs(np.diag(r))
    if diag.min() <= diag.max() * x.shape[1] * np.finfo(float).eps * 100:
        raise ValueError(f"{label}: the columns of {what} are linearly dependent (a column "
                         "constant or a combination of others); drop the redundant columns")
    return xc, np.asarray(q)


def orthonormal_basis(x: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the column span of ``x`` (full column rank)."""
    q, _ = np.linalg.qr(np.asarray(x, dtype=float))
    return q


def principal_angles(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Principal angles (radians, ascending) between span(a) and span(b).

    Any full-rank bases, any column scaling; ``min(ra, rb)`` angles.  Small
    angles are computed from sines (Bjorck and Golub 1973), so they are
    accurate to machine precision rather than to its square root.
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.ndim == 1:
        a = a[:, None]
    if b.ndim == 1:
        b = b[:, None]
    if a.shape[0] != b.shape[0]:
        raise ValueError(
            f"the bases must have the same number of rows; got {a.shape[0]} and "
            f"{b.shape[0]}"
        )
    if not (np.isfinite(a).all() and np.isfinite(b).all()):
        raise ValueError("the bases must be finite; got NaN or infinite entries")
    if a.shape[1] < b.shape[1]:  # project the narrower basis on the wider
        a, b = b, a
    return batched_principal_angles(orthonormal_basis(a), b[None])[0]


def batched_principal_angles(q0: np.ndarray, bases: np.ndarray) -> np.ndarray:
    """Principal angles (radians, ascending) between span(q0) and each basis.

    ``q0`` (n, k) has orthonormal columns; ``bases`` is (B, n, r), ``r <= k``,
    any full-rank bases.  Angles below 45 degrees come from the sines of the
    residual of each basis after projection on ``q0`` (Bjorck and Golub), which
    keeps small angles accurate, the others from the cosines.
    """
    q, _ = np.linalg.qr(bases)
    proj = np.einsum("nk,bnl->bkl", q0, q)
    cos = np.linalg.svd(proj, compute_uv=False)
    resid = q - np.einsum("nk,bkl->bnl", q0, proj)
    sin = np.linalg.svd(resid, compute_uv=False)[:, ::-1]
    cos = np.clip(cos, -1.0, 1.0)
    sin = np.clip(sin, 0.0, 1.0)
    return np.where(sin**2 <= 0.5, np.arcsin(sin), np.arccos(cos))
