"""The permutation rank test (``method="permutation"``, after Cook and Yin
2001; theory of rank tests, section 8): the complement coordinates' rows
permuted jointly and ``Lambda_k`` recomputed (:mod:`.._rank_permutation`)."""

from __future__ import annotations

import numpy as np

from .._rank_permutation import _permutation_stats
from .._rank_stats import WhitenedDesign
from ..hypotheses import perm_pvalue
from ._record import LAMBDA, RankTestMethod, Row, RowOptions


def _row(w: WhitenedDesign, k: int, opts: RowOptions) -> Row:
    stat = w.statistic(k)
    assert opts.rng is not None
    null = _permutation_stats(w, k, opts.n_perm, opts.rng, n_jobs=opts.n_jobs,
                              progress=opts.progress)
    # guard against rounding: a permuted statistic equal to T up to 1e-10 counts as >= T
    pv = float(perm_pvalue(stat * (1 - 1e-10), null))
    return {"statistic": stat, "df": np.nan, "pvalue": pv, "n_perm": float(opts.n_perm)}, ()


METHOD = RankTestMethod(
    name="permutation",
    label="permutation of the complement coordinates (Cook and Yin 2001)",
    distribution="permutation",
    assumptions=(
        "Permutation (Cook and Yin 2001): under H0 the complement coordinates "
        "(U_perp'a', V_perp'b') are independent of (y, U'a', V'b') (normal-theory "
        "premise; liberal for heavy-tailed blocks); their rows "
        "are permuted jointly and the whole statistic (re-whitening included) "
        "recomputed; p = (1 + #{T* >= T}) / (B + 1)."
    ),
    statistic_note=LAMBDA,
    needs="rows",
    columns=("n_perm",),
    columns_note="`n_perm` permutations; `df` is NaN",
    docs=(
        "rows of the complement coordinates permuted (Cook and Yin 2001), `n_perm` times",
        "complements independent of `y` and of the signal coordinates",
        "`O(n_perm * m * d)`",
    ),
    theory="8",
    row=_row,
    replicates=999,
    takes_q=True,
    q_label="permutation of the complement coordinates, q responses",
    q_assumptions=(
        "Permutation: under H0 the complement coordinates (U_perp'a', V_perp'b') "
        "are independent of (Yw, U'a', V'b'); their rows are permuted jointly and the "
        "whole statistic (re-whitening and HOSVD included) recomputed; "
        "p = (1 + #{T* >= T}) / (B + 1). At k = 0 this permutes the response "
        "against the blocks (exact under independence). With covariates the rows "
        "are residuals on [1, Z] (permutation of residuals)."
    ),
)
