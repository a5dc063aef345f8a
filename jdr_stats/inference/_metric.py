"""The metric in which the bootstrap measures its principal angles.

Angles between two estimates ``U1, U2`` of a block's subspace are measured
between ``L^T U1`` and ``L^T U2``, with ``Sigma = L L^T`` the full-sample
covariance of the block: the cosines of these angles are the canonical
correlations between the reduced features ``a^T U1`` and ``a^T U2``.  They do
not change when the block's variables are replaced by ``G a + c`` for any
invertible ``G`` (units, shifts, mixtures of the columns), whereas the angles
between ``U1`` and ``U2`` in raw coordinates do.  The derivation is in
``docs/theory/bootstrap.md``.
"""

from __future__ import annotations

import numpy as np

from .._data import RowsData
from .._linalg import BlockMoments, cholesky_factor

__all__ = ["covariance_factors", "to_metric"]


def covariance_factors(
    data: RowsData, moments: BlockMoments | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Upper factors ``L^T`` of the full-sample covariance of each block.

    From ``moments`` (the fit's, when it computed the covariances), else
    from ``data``, which answers the rows protocol: rows in memory (case
    weights respected) or the stored sums of a streamed model.
    """
    mom = moments if moments is not None and moments.has_covariances else data.moments()
    la = cholesky_factor(mom.cov_a, "exog_a", data.names["exog_a"])
    lb = cholesky_factor(mom.cov_b, "exog_b", data.names["exog_b"])
    return la.T, lb.T


def to_metric(upper: np.ndarray, bases: np.ndarray) -> np.ndarray:
    """``L^T U`` for one basis (n, r) or a stack of bases (B, n, r)."""
    return np.matmul(upper, bases)
