"""The sample whitening (``whitening="sample"``; the paper, section 5.1):
each block's sample covariance, factored by Cholesky."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from ..core._linalg import Whitening
from ._record import WhiteningMethod


def _factory(
    mean: np.ndarray,
    cov: np.ndarray | None,
    nobs: int,
    argname: str,
    names: Sequence[str],
    *,
    rows: np.ndarray | None = None,
    weights: np.ndarray | None = None,
) -> Whitening:
    if cov is None:
        raise ValueError(f"the sample whitening of {argname} needs its covariance")
    return Whitening.from_moments(mean, cov, argname, names)


def check_rows(nobs: int, widths: Mapping[str, int]) -> None:
    """A block of ``n`` columns needs ``n + 2`` rows (its sample covariance
    is singular otherwise)."""
    for arg, n in widths.items():
        if nobs < n + 2:
            raise ValueError(
                f'whitening="sample" needs at least {n + 2} rows for {arg} ({n} '
                f"columns; its sample covariance is singular otherwise); got {nobs}. "
                'Use whitening="shrinkage" or "auto" (regularised), or "diagonal"'
            )


METHOD = WhiteningMethod(
    name="sample",
    label="sample covariance (the paper, section 5.1)",
    when="`n` small against `m`; needs `m >= n + 2`",
    covariance="sample covariance `Sigma_hat`",
    target="`span(U)` as `Sigma_hat -> Sigma`",
    needs="covariance",
    factory=_factory,
    tests_need_sample=False,
    built_by_estimator=True,
    note="",
    check=check_rows,
    joint="full",
)
