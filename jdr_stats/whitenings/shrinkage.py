"""The shrinkage whitening (``whitening="shrinkage"``): the covariance
``D R_t D``, the sample correlation matrix ``R`` shrunk towards the identity
with the OAS intensity ``t`` and mapped back with the SDs ``D`` (theory
page "Whitening", "The shrinkage estimator")."""

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
    return shrunk_whitening(mean, cov, nobs, "shrinkage", argname, names,
                            rows=rows, weights=weights)


METHOD = WhiteningMethod(
    name="shrinkage",
    label="correlation matrix shrunk towards the identity (OAS), mapped back with the SDs",
    when="any `m`; unit free",
    covariance="`D R_t D` (below)",
    target="`span(U)` as `t -> 0`; `span((D R_t D)^{-1} Sigma U)` in general",
    needs="rows",
    factory=_factory,
    tests_need_sample=True,
    built_by_estimator=False,
    note=TESTS_NOTE,
)
