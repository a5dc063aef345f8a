"""``fit(..., interactions=...)``: which interaction estimand a fit uses.

Three or more blocks (and two with a rank per block) take ``"stein"`` or
``"orthogonal"``, on the K-block engine
(:mod:`jdr_stats.inference.kblock_orthogonal`; theory page "K blocks",
section 4d), and any K with ``main_effects=True`` takes ``"stein"`` or
``"regression"`` (the exact first-order piece,
:mod:`jdr_stats.fitting._kregression`); the rest of this module is the
two-block route.

``"stein"`` (default): the cross moment of ``y`` itself, the cross block of
``Sigma^{-1} E[y x x^T] Sigma^{-1}``.  ``"orthogonal"``: the same cross
moment of ``y``'s least squares residual on ``[1, a, b]``, free of linear
main effects on any design, with its own rank test
(:mod:`jdr_stats.inference.orthogonal_rank`; theory page "Whitening",
section "Interactions orthogonal to the main effects").  ``"regression"``:
the least squares coefficients of the cross products ``a_j b_l`` given the
main effects and within-block products, exact for bilinear links on any
design (:mod:`jdr_stats.inference.regression_rank`; section "Interactions by
regression").
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

from ..exceptions import RankSelectionWarning
from ..inference.orthogonal_rank import orthogonal_rank_tests, orthogonal_residual
from ..inference.rank_tests import RankTestResults
from ..inference.regression_rank import (
    regression_design,
    regression_rank_tests,
    regression_response,
)
from ..io._data import ModelData
from ..policy import Choice
from ..runtime._validation import check_fraction

__all__ = ["INTERACTIONS", "check_interactions", "check_regression_whitening",
           "choose_orthogonal_rank", "interactions_choice",
           "orthogonal_data", "orthogonal_note", "orthogonal_tests"]

INTERACTIONS = ("stein", "orthogonal", "orthogonal_quadratic", "regression")

_REASONS = {
    "stein": "given: the cross moment of y (second-order Stein), which a main effect "
             "enters on skewed correlated blocks",
    "orthogonal": "given: the cross moments of y's residual on [1, every block], free of linear "
                  "main effects on any design; rank tests with the main effects' "
                  "estimation in their influence rows",
    "orthogonal_quadratic": "given: the cross moment of y's residual on [1, a, b] and the "
                            "within-block products, free of linear and within-block "
                            "quadratic main effects on any design; rank tests with that "
                            "regression's estimation in their influence rows",
    "regression": "given: the least squares coefficients of the cross products a_j b_l "
                  "given [1, a, b] and the within-block products, exact for bilinear "
                  "links whatever the design; rank tests from their HC2 sandwich",
}


def check_interactions(interactions: Any, *, n_blocks: int, main_effects: bool,
                       per_block_ranks: bool, sparsity: Any, data: Any) -> Any:
    """``interactions`` checked against the rest of the fit; the value."""
    if not isinstance(interactions, str) or interactions not in INTERACTIONS:
        raise ValueError('interactions must be "stein", "orthogonal", '
                         f'"orthogonal_quadratic" or "regression"; got {interactions!r}')
    if interactions == "stein":
        return interactions
    what = f'interactions="{interactions}"'
    # main_effects=True with "regression": the K engine's pooled pieces from
    # one least squares fit (jdr_stats.inference.first_order), any K
    pooled = main_effects and interactions == "regression"
    kblock = n_blocks >= 3 or pooled or (per_block_ranks and interactions == "orthogonal")
    if n_blocks != 2 and interactions != "orthogonal" and not pooled:
        raise ValueError(f'{what} is available for two blocks; this model has {n_blocks} '
                         '(three or more blocks take interactions="orthogonal" or "stein", '
                         'or "regression" with main_effects=True)')
    if main_effects and not pooled:
        raise ValueError(f"{what} removes the main effects; main_effects=True pools them "
                         'in: use one or the other (main_effects=True takes "stein" or '
                         '"regression", whose first-order piece is exact)')
    if per_block_ranks and not kblock:
        raise ValueError(f"{what} takes one rank for both blocks (an int or \"auto\")")
    if kblock and sparsity is not None:
        raise ValueError(f"{what} of K blocks (or a rank per block) fits dense directions "
                         f"only; got sparsity={sparsity!r} (use sparsity=None)")
    if sparsity == "auto":
        raise ValueError(f'{what}: sparsity="auto" (support tests) is not available; '
                         "give (s1, s2), \"cv\" or None")
    if not isinstance(data, ModelData):
        raise ValueError(f"{what} needs the rows in memory (arrays or a DataFrame); this "
                         "model streams its rows or holds sums")
    if data.weights is not None:
        raise ValueError(f"{what} does not take case weights")
    if data.response.kind != "numeric" or data.endog.ndim != 1:
        raise ValueError(f"{what} needs a single numeric response; got a "
                         f"{data.response.kind} one")
    if data.adjustment.p:
        raise ValueError(f"{what} does not take covariates; add them to a block or fit "
                         'with interactions="stein"')
    return interactions


def interactions_choice(interactions: str) -> Choice:
    """The estimand as a choice, for the fit's settings and summary."""
    return Choice(interactions, _REASONS[interactions])


def check_regression_whitening(interactions: str, whitening: Choice) -> None:
    """``interactions="regression"`` reports ``B`` in the sample-whitened
    metric: any other whitening is refused with the reason it was chosen."""
    if interactions == "regression" and whitening.name != "sample":
        raise ValueError(
            'interactions="regression" reports the cross-product coefficients in the '
            f'sample-whitened metric; the whitening is "{whitening.name}" '
            f"({whitening.reason}); give whitening=\"sample\" (needs more rows than "
            "columns) or use fewer variables")


def orthogonal_data(data: Any, interactions: str, *, joint: bool = True) -> Any:
    """``data`` with the response replaced by its residual on ``[1, a, b]``
    (and the within-block products for ``"orthogonal_quadratic"``); for
    ``"regression"`` by the response whose whitened cross moment is the
    whitened coefficient matrix ``B``
    (:func:`~jdr_stats.inference.regression_rank.regression_response`)."""
    y, a, b = data.rows(f'interactions="{interactions}"')
    if interactions == "regression":
        return replace(data, endog=regression_response(regression_design(y, a, b,
                                                                         joint=joint)))
    return replace(data, endog=orthogonal_residual(
        y, a, b, quadratic=interactions == "orthogonal_quadratic"))


def choose_orthogonal_rank(data: Any, *, joint: bool, alpha: float, interactions: str
                           ) -> tuple[int, RankTestResults]:
    """``fit(rank="auto", interactions="orthogonal")``: the first ``k`` whose
    orthogonal rank test is not rejected at ``alpha`` (rank 0, no directions,
    with a :class:`~jdr_stats.exceptions.RankSelectionWarning` when that is 0)."""
    alpha = check_fraction(alpha, "alpha")
    y, a, b = data.rows(f'fit(rank="auto", interactions="{interactions}")')
    if interactions == "regression":
        table = regression_rank_tests(y, a, b, joint=joint, stop_alpha=alpha)
    else:
        table = orthogonal_rank_tests(y, a, b, joint=joint, stop_alpha=alpha,
                                      quadratic=interactions == "orthogonal_quadratic")
    rank = table.select_rank(alpha)
    assert isinstance(rank, int)  # a joint test: one rank
    if rank == 0:
        warnings.warn(
            f"no {interactions} rank test rejected H0: r = 0 (alpha={alpha}, p = "
            f"{table.table['pvalue'].iloc[0]:.3g}): the data show no evidence of an "
            "interaction beyond the main effects; returning rank 0 (no directions)",
            RankSelectionWarning, stacklevel=4)
    return rank, table


def orthogonal_tests(data: Any, joint: bool, method: str, max_rank: int | None,
                     interactions: str) -> RankTestResults:
    """``results.rank_tests()`` of an orthogonal fit: its own test only."""
    own = "regression" if interactions == "regression" else "orthogonal"
    if method not in ("auto", own):
        raise ValueError(
            f'rank_tests: a fit with interactions="{interactions}" has one rank test, '
            f'method="{own}" (or "auto"), whose influence rows carry the '
            f"regression; got method={method!r}")
    y, a, b = data.rows(f'rank tests of interactions="{interactions}"')
    if interactions == "regression":
        return regression_rank_tests(y, a, b, joint=joint, max_rank=max_rank)
    return orthogonal_rank_tests(y, a, b, joint=joint, max_rank=max_rank,
                                 quadratic=interactions == "orthogonal_quadratic")


def orthogonal_note(interactions: str) -> str:
    """The summary's sentence on the estimand."""
    if interactions == "regression":
        return ("Interactions: regression (the least squares coefficients B of the cross "
                "products a_j b_l given [1, a, b] and the within-block products, in the "
                "whitened metric: exact for bilinear links plus main effects and "
                "within-block quadratics whatever the design; rank tests from the HC2 "
                "sandwich of B).")
    if interactions == "orthogonal_quadratic":
        return ("Interactions: orthogonal_quadratic (the cross moment of y's least squares "
                "residual on [1, a, b] and the within-block products: no linear or "
                "within-block quadratic main effect enters it, whatever the design; rank "
                "tests with the regression's estimation in their influence rows).")
    return ("Interactions: orthogonal (the cross moment of y's least squares residual on "
            "[1, a, b]: no linear main effect enters it, whatever the design; rank tests "
            "with the residual's estimation in their influence rows; within-block "
            "curvature of y is not removed).")
