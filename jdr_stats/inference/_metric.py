"""The metric in which the bootstrap measures its principal angles.

Angles between two estimates ``U1, U2`` of a block's subspace are measured
between ``C^T U1`` and ``C^T U2``, with ``Sigma = C C^T`` the covariance of
the block the fit whitened with: the cosines of these angles are the
canonical correlations between the reduced features ``a^T U1`` and
``a^T U2`` under ``Sigma``.  They do not change when the block's variables
are replaced by ``G a + c`` for any invertible ``G`` (units, shifts, mixtures
of the columns), whereas the angles between ``U1`` and ``U2`` in raw
coordinates do.  Any square root ``C`` gives the same angles (``C Q`` with
``Q`` orthogonal rotates ``C^T U`` by ``Q^T``).  The derivation is in
``docs/theory/bootstrap.md``.

``Sigma`` is the full-sample covariance for the ``"sample"`` and ``"none"``
whitenings, and the fit's own regularised covariance ``D R_t D`` for
``"shrinkage"`` and ``"diagonal"``: the sample covariance is singular as
soon as a block has at least as many columns as there are rows, where the
regularised one is positive definite (and is the metric the fit itself
whitened with).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from ..core._linalg import (
    BlockMoments,
    ShrunkWhitening,
    Whitening,
    batched_principal_angles,
    cholesky_factor,
    orthonormal_basis,
    unit_columns,
)
from ..io._data import RowsData

__all__ = ["covariance_factors", "covariance_metric_angles", "to_metric"]

#: ``C^T U`` for one basis (n, r) or a stack of bases (B, n, r).
Metric = Callable[[np.ndarray], np.ndarray]


def _shrunk_upper(w: ShrunkWhitening) -> Metric:
    """``C^T U = R_t^{1/2} D U`` (``C = D R_t^{1/2}``), through the thin
    eigenbasis ``Q`` of ``R``: ``R_t^{1/2} x = sqrt(t) x + Q((sqrt(l) - sqrt(t)) Q^T x)``
    with ``l = (1 - t) evals + t``; no n x n matrix is formed."""
    t = w.shrinkage
    q = w.basis
    gain = np.sqrt((1.0 - t) * w.evals + t) - np.sqrt(t)
    sd = w.sd

    def upper(bases: np.ndarray) -> np.ndarray:
        x = sd[:, None] * np.asarray(bases, dtype=float)
        out = np.sqrt(t) * x
        if q.shape[1]:
            coef = np.matmul(q.T, x) * gain[:, None]
            out = out + np.matmul(q, coef)
        return out

    return upper


def _dense_upper(upper_factor: np.ndarray) -> Metric:
    return lambda bases: np.matmul(upper_factor, bases)


def _in_units(upper: Metric, scale: np.ndarray | None) -> Metric:
    """The metric of directions in the user's units when the covariance is
    that of the columns times ``scale`` (powers of two; ``Sigma' = D Sigma
    D``, ``C' = D C``): ``C^T U = C'^T D^{-1} U``."""
    if scale is None:
        return upper
    inv = 1.0 / np.asarray(scale, float)[:, None]
    return lambda bases: upper(np.asarray(bases, dtype=float) * inv)


def covariance_factors(
    data: RowsData,
    moments: BlockMoments | None = None,
    whitening: str | None = None,
    maps: Iterable[Any] | None = None,
) -> tuple[Metric, Metric]:
    """The maps ``U -> C^T U`` of each block's metric (see the module).

    ``whitening`` is the fit's kind and ``maps`` its two block whitenings
    (``JDRResults`` passes them): for ``"shrinkage"`` and ``"diagonal"`` the
    metric is their regularised covariance.  Otherwise the full-sample
    covariance, from ``moments`` (the fit's, when it computed the
    covariances), else from ``data`` (rows in memory, case weights
    respected, or the stored sums of a streamed model); a singular one
    raises a ``ValueError`` naming the reason and what runs instead.
    """
    if whitening in ("shrinkage", "diagonal") and maps is not None:
        wa, wb = maps
        if isinstance(wa, ShrunkWhitening) and isinstance(wb, ShrunkWhitening):
            return (_in_units(_shrunk_upper(wa), wa.scale),
                    _in_units(_shrunk_upper(wb), wb.scale))
    mom = moments if moments is not None and moments.has_covariances else data.moments()
    out = []
    for arg, cov in (("exog_a", mom.cov_a), ("exog_b", mom.cov_b)):
        names = data.names[arg]
        try:
            scale = mom.scale_a if arg == "exog_a" else mom.scale_b
            out.append(_in_units(_dense_upper(cholesky_factor(cov, arg, names).T), scale))
        except ValueError as exc:
            if len(names) < data.nobs:
                raise
            raise ValueError(
                f"the bootstrap cannot run with whitening={whitening or 'none'!r} here: it "
                f"measures angles in each block's sample covariance, which is singular "
                f"because {arg} has {len(names)} columns and only {data.nobs} rows; "
                "fit with whitening='shrinkage' or 'diagonal' (the bootstrap then uses "
                "the fit's regularised covariance)"
            ) from exc
    return out[0], out[1]


def to_metric(upper: Metric, bases: np.ndarray) -> np.ndarray:
    """``C^T U`` for one basis (n, r) or a stack of bases (B, n, r)."""
    return upper(bases)


def covariance_metric_angles(
    base: np.ndarray,
    estimate: np.ndarray,
    cov: np.ndarray | Whitening | ShrunkWhitening,
    *,
    scale: np.ndarray | None = None,
    block: str = "block",
) -> np.ndarray:
    """Principal angles (radians, ascending) between ``span(base)`` and
    ``span(estimate)`` measured in one block's covariance metric.

    The angles are those between ``C^T base`` and ``C^T estimate`` with
    ``Sigma = C C^T`` (see the module): their cosines are the canonical
    correlations of the reduced features, so replacing the block's columns
    by ``G a + c`` (new units, shifts, mixtures) and the directions by
    ``G^{-T} U`` leaves them unchanged.  Any number of blocks: call it once
    per block.

    Parameters
    ----------
    base : ndarray, shape (n, r0)
        The full-sample directions of the block (original coordinates).
    estimate : ndarray, shape (n, r) or (B, n, r)
        One estimate of the block's subspace or a stack of ``B`` of them
        (bootstrap replicates).
    cov : ndarray of shape (n, n), or a block whitening
        The block's covariance (positive definite), or the fit's map of the
        block (a :class:`~jdr_stats.core._linalg.Whitening` or
        :class:`~jdr_stats.core._linalg.ShrunkWhitening`: its covariance, the
        regularised one for shrinkage and diagonal whitenings, and its
        power-of-two column scales are used).
    scale : ndarray of shape (n,), optional
        ``cov`` is the covariance of the columns times ``scale`` (the
        power-of-two scales a fit of columns of extreme units works with);
        ``base`` and ``estimate`` stay in the columns' own units.  Ignored
        when ``cov`` is a whitening (it carries its scales).
    block : str
        The block's name, for the error of a singular covariance.

    Returns
    -------
    ndarray, shape (min(r0, r),) or (B, min(r0, r))
        The angles in radians, smallest first.

    Examples
    --------
    >>> import numpy as np
    >>> cov = np.array([[4.0, 1.0], [1.0, 1.0]])
    >>> u = np.array([[1.0], [0.0]])
    >>> v = np.array([[1.0], [1.0]])
    >>> g = np.diag([1e-3, 1.0])  # the first column in other units
    >>> a = covariance_metric_angles(u, v, cov)
    >>> b = covariance_metric_angles(np.linalg.solve(g, u), np.linalg.solve(g, v),
    ...                              g @ cov @ g)
    >>> bool(np.allclose(a, b))
    True
    """
    base = np.asarray(base, dtype=float)
    est = np.asarray(estimate, dtype=float)
    if base.ndim == 1:
        base = base[:, None]
    single = est.ndim < 3
    if est.ndim == 1:
        est = est[:, None]
    stack = est[None] if single else est
    n = base.shape[0]
    if stack.ndim != 3 or stack.shape[1] != n:
        raise ValueError(f"estimate must have {n} rows (the block's columns) like base, "
                         f"as (n, r) or (B, n, r); got shape {np.shape(estimate)}")
    if not (np.isfinite(base).all() and np.isfinite(stack).all()):
        raise ValueError("base and estimate must be finite; got NaN or infinite entries")
    if isinstance(cov, ShrunkWhitening):
        upper, scale = _shrunk_upper(cov), cov.scale
    elif isinstance(cov, Whitening):
        upper, scale = _dense_upper(cov.chol.T), cov.scale
    else:
        mat = np.asarray(cov, dtype=float)
        if mat.shape != (n, n):
            raise ValueError(f"cov must be the block's ({n}, {n}) covariance; got shape "
                             f"{mat.shape}")
        # the factor through the correlation matrix: finite for any units
        upper = _dense_upper(cholesky_factor(mat, block, [str(j) for j in range(n)]).T)
    metric = _in_units(upper, None if scale is None else np.asarray(scale, float))
    # each column near unit length first (exact up to rounding: angles ignore
    # column scaling), so directions of extreme units neither over- nor underflow
    q0 = orthonormal_basis(unit_columns(metric(unit_columns(base))))
    mapped = np.stack([unit_columns(metric(unit_columns(e))) for e in stack])
    if mapped.shape[2] > q0.shape[1]:  # project the narrower basis on the wider
        out = np.stack([batched_principal_angles(orthonormal_basis(e), q0[None])[0]
                        for e in mapped])
    else:
        out = batched_principal_angles(q0, mapped)
    return out[0] if single else out
