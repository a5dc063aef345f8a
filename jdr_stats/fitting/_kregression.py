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
import pandas as pd

from .. import policy
from ..core.kestimate import KBlockFactors, Weighting, factors_from_pieces, piece_scale
from ..inference.first_order import (
    NAME,
    first_order_regression,
    first_order_wald,
    regression_pieces,
)
from ..inference.main_effects import MainEffectsResults
from ..runtime._lazy import stats

__all__ = ["NAME", "REFUSED_TESTS", "SEES", "check_regression_fit", "regression_factors",
           "regression_main_effects", "regression_route"]

#: what the reduction sees (the summary's sentence)
SEES = ("main effects and interactions between the blocks, as the least squares "
        "coefficients of [every block, within-block and cross products] "
        '(interactions="regression": exact for linear, quadratic and bilinear '
        "links whatever the design)")

#: why the K-block rank tests do not run on this fit
REFUSED_TESTS = (
    f"{NAME}: the K-block rank tests' influence rows are those of the cross moments of y "
    "and do not carry the estimation of the regression whose coefficients are this fit's "
    "pieces, so their p-values would be wrong; give the ranks (an int or a dict by block) "
    "and use results.bootstrap(), which re-estimates the regression, or "
    "results.main_effects_test(), the Wald test of the first-order piece")


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


def regression_main_effects(y: np.ndarray, blocks: Sequence[np.ndarray], names: list[str],
                            method: str) -> MainEffectsResults:
    """``main_effects_test()`` of a regression fit: per block the HC2 Wald test
    of its linear coefficients given the other blocks and every within-block
    and cross product, the influence rows carrying the products' centring
    (:func:`~jdr_stats.inference.first_order.first_order_wald`), referred to
    ``F(n_k, m - p)`` as ``W / n_k`` (``p`` the regression's columns)."""
    if method not in ("auto", "robust"):
        raise ValueError(f'main_effects_test(): a fit of {NAME} tests its first-order piece '
                         'by the Wald test of the regression (method="auto" or "robust"); '
                         f"no permutation version; got method={method!r}")
    reg = first_order_regression(y, blocks)
    m = int(np.shape(y)[0])
    rows = []
    for k in range(len(blocks)):
        w, df = first_order_wald(reg, k)
        den = m - reg.n_cols
        rows.append({"statistic": w / df, "df": float(df),
                     "pvalue": float(stats.f.sf(w / df, df, den)), "df_denom": float(den),
                     "method": "Wald (given the products)",
                     "reason": "given: the fit's first-order piece is this regression's "
                               "linear coefficients"})
    table = pd.DataFrame(rows, index=pd.Index(names, name="block"))
    notes = [
        "H0 (each row): beta_k = 0, beta_k block k's linear coefficients in the least squares "
        "regression of y on [1, every block, within-block products, cross products] (the "
        "columns centred at their means: beta_k is the average derivative E[dy/dx_k] for "
        "links linear plus quadratic plus bilinear, whatever the design).",
        "Wald: beta_k' V_k^-1 beta_k / n_k against F(n_k, m - p), V_k the HC2 sandwich whose "
        "influence rows carry the centring of the products at the sample means (theory page "
        "'Main effects', section 'The exact first-order piece').",
    ]
    return MainEffectsResults(table, "Tests of main effects", "main effects", notes,
                              method_label="per block: Wald (given the products)", joint=True)
