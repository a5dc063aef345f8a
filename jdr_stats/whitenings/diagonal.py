"""The diagonal whitening (``whitening="diagonal"``): the standard
deviations only (the shrinkage whitening at ``t = 1``)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._linalg import ShrunkWhitening, shrunk_whitening
from ._record import TESTS_NOTE, WhiteningMethod


def _factory(
    mean: np.ndarray,
    cov: np.ndarray | None,
    nobs: int,
    argname: str,
    names: Sequence[str],
    *,
    rows: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> ShrunkWhitening:
    return shrunk_whitening(mean, cov, nobs, "diagonal", argname, names,
                            rows=rows, weights=weights)


METHOD = WhiteningMethod(
    name="diagonal",
    label="standard deviations only",
    when="very wide blocks with weak correlations; unit free",
    covariance="`D^2 = diag(Sigma_hat)`",
    target=("`span(D^{-2} Sigma U)`: `span(U)` only if the block's variables are "
            "uncorrelated (or `span(U)` is invariant under `D^{-2} Sigma`)"),
    needs="rows",
    factory=_factory,
    tests_need_sample=True,
    built_by_estimator=False,
    note=TESTS_NOTE,
)
