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

from .._data import RowsData
from .._linalg import BlockMoments, ShrunkWhitening, cholesky_factor

__all__ = ["covariance_factors", "to_metric"]

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
