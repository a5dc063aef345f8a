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

from typing import Any

import numpy as np

from .._linalg import block_moments, cholesky_factor
from .._streamed import MomentsData

__all__ = ["covariance_factors", "to_metric"]


def covariance_factors(data: Any) -> tuple[np.ndarray, np.ndarray]:
    """Upper factors ``L^T`` of the full-sample covariance of each block.

    ``data`` is the model's ``ModelData`` (rows in memory, optional case
    weights) or ``MomentsData`` (the covariances come from the moments).
    """
    if isinstance(data, MomentsData):
        mom = data.moments.to_block_moments()
    else:
        mom = block_moments(data.endog, data.blocks["exog_a"], data.blocks["exog_b"],
                            data.weights)
    la = cholesky_factor(mom.cov_a, "exog_a", data.names["exog_a"])
    lb = cholesky_factor(mom.cov_b, "exog_b", data.names["exog_b"])
    return la.T, lb.T


def to_metric(upper: np.ndarray, bases: np.ndarray) -> np.ndarray:
    """``L^T U`` for one basis (n, r) or a stack of bases (B, n, r)."""
    return np.matmul(upper, bases)
