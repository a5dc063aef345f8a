"""The normal-theory chi-square rank test (``method="chi2"``; theory of rank
tests, section 4): ``Lambda_k ~ chi2((n1-k)(n2-k))`` under Gaussian blocks
independent of each other, ``chi2(q (n1-k)(n2-k))`` for ``q`` whitened
response columns."""

from __future__ import annotations

from ...runtime._lazy import stats
from .._rank_stats import WhitenedDesign
from ._record import LAMBDA, RankTestMethod, Row, RowOptions


def chi2_row(w: WhitenedDesign, k: int, opts: RowOptions) -> Row:
    stat, df = w.statistic(k), float(w.q * (w.n1 - k) * (w.n2 - k))
    return {"statistic": stat, "df": df, "pvalue": float(stats.chi2.sf(stat, df))}, ()


METHOD = RankTestMethod(
    name="chi2",
    label="normal-theory chi-square",
    distribution="chi2",
    assumptions=(
        "Normal theory (valid only under its premise; liberal for heavy-tailed "
        "blocks or noise whose variance depends on the blocks): the whitened "
        "complement coordinates U_perp'a', "
        "V_perp'b' are independent of each other and of (y, U'a', V'b') "
        "(Gaussian blocks independent of each other), so the complement block "
        "has covariance E[y^2] I / m and Lambda_k ~ chi2((n1-k)(n2-k)) as m "
        "grows."
    ),
    statistic_note=LAMBDA,
    needs="moments",
    columns=(),
    columns_note="none; `df = (n1-k)(n2-k)` (`q (n1-k)(n2-k)` for `q` response columns)",
    docs=(
        "chi-square, `q (n1-k)(n2-k)` df",
        "**normal theory**: Gaussian blocks, independent of each other, noise independent of "
        "the blocks",
        "free",
    ),
    theory="4",
    row=chi2_row,
    takes_q=True,
    q_label="normal-theory chi-square, q responses",
    q_assumptions=(
        "Normal theory: the whitened complement coordinates are independent of "
        "each other and of (Yw, U'a', V'b'), so Lambda_k ~ chi2(q (n1-k)(n2-k)) "
        "as m grows (liberal for heavy-tailed blocks)."
    ),
    notes=("df = q (n1 - k)(n2 - k), q the response columns.",),
)
