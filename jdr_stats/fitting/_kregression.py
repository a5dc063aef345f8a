"""``fit(rank, main_effects=True, interactions="regression")``: the pooled
K-block fit whose pieces are the least squares coefficients of one
regression (:mod:`jdr_stats.inference.first_order`; theory page "Main
effects", section "The exact first-order piece").

The per-block rank tests of the K-block engine do not carry that
regression's estimation in their influence rows, so ``rank="auto"`` and
``rank_tests()`` are refused with that reason; the bootstrap re-estimates the
regression on every resample (pairs only: the regression takes no case
weights).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from .. import policy
from ..core.kestimate import KBlockFactors, Weighting, factors_from_pieces, piece_scale
from ..inference.first_order import (
    NAME,
    first_order_regression,
    product_columns,
    regression_pieces,
)

__all__ = ["NAME", "REFUSED_TESTS", "check_regression_fit", "regression_factors",
           "regression_given", "regression_route"]

#: why the K-block rank tests do not run on this fit
REFUSED_TESTS = (
    f"{NAME}: the K-block rank tests' influence rows are those of the cross moments of y "
    "and do not carry the estimation of the regression whose coefficients are this fit's "
    "pieces, so their p-values would be wrong; give the ranks (an int or a dict by block) "
    "and use results.bootstrap(), which re-estimates the regression, or "
    "results.main_effects_test(), which tests the first-order piece given the products")


def check_regression_fit(rank: Any, kind: str, estimator: str, weights: Any) -> None:
    """The fit's rank, whitening, estimator and weights checked for the
    regression's pieces (each refusal names its argument)."""
    if rank == "auto":
        raise ValueError('rank="auto": ' + REFUSED_TESTS)
    if estimator != "joint":
        raise ValueError(f"{NAME} reports its pieces in the joint whitened metric; "
                         "independent_blocks=True (the per-block estimator) is not "
                         "available with it")
    if kind != "sample":
        raise ValueError(f'{NAME} reports its pieces in the sample-whitened metric; the '
                         f'whitening is "{kind}"; give whitening="sample" (needs more '
                         "rows than columns) or use fewer variables")
    if weights is not None:
        raise ValueError(f"{NAME} does not take case weights")


def regression_route() -> policy.Choice:
    """The route of a regression fit: its pieces are small tensors."""
    return policy.Choice("tensor", "given: the pieces are the regression's coefficients "
                                   "(and the residual's K-way moment), formed as tensors")


def regression_factors(y: np.ndarray, blocks: Sequence[np.ndarray], zs: Sequence[np.ndarray],
                       weighting: str) -> KBlockFactors:
    """Every block's factor from the regression's pieces; ``y`` the raw
    response (the regression centres it), the pieces' null scales ``s_S^2``
    those of the centred response's cross moments (they weight the pieces
    only)."""
    reg = first_order_regression(y, blocks)
    tensors = regression_pieces(reg, zs, blocks)
    yc = np.asarray(y, float) - np.mean(y)
    scales = {p: piece_scale(yc, zs, p) for p in tensors}
    widths = [z.shape[1] for z in zs]
    wt: Weighting = weighting  # type: ignore[assignment]
    return factors_from_pieces(tensors, scales, widths, 1, weighting=wt)


def regression_given(blocks: Sequence[np.ndarray]) -> np.ndarray:
    """The columns a regression fit's main-effects test partials out beside
    the other blocks: every within-block product and every cross product."""
    sq, cross = product_columns(blocks)
    return np.hstack([sq, cross])
