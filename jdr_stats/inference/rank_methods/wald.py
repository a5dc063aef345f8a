"""The Wald rank test (``method="wald"``, Kleibergen-Paap type; theory of rank
tests, section 7): the complement block normalised by the estimated
covariance of its influence functions, referred to Hotelling's F."""

from __future__ import annotations

from ... import policy
from .._rank_stats import WhitenedDesign
from ..rank_robust import complement_block, wald_from_moments
from ._record import RankTestMethod, Row, RowOptions
from .general import complement


def check_exact(w: WhitenedDesign, k: int, name: str) -> float:
    """``d = (n1-k)(n2-k)``; the Wald test forms a ``d x d`` covariance."""
    df = float((w.n1 - k) * (w.n2 - k))
    if df > policy.MAX_EXACT_DIM:
        raise ValueError(
            f"the {name} rank test at k={k} forms the covariance of the "
            f"(n1-k)(n2-k) = {int(df)} complement entries, more than "
            f"{policy.MAX_EXACT_DIM}; use method='general' (two-moment tail for "
            "large d) or fewer variables"
        )
    return df


def _row(w: WhitenedDesign, k: int, opts: RowOptions) -> Row:
    df = check_exact(w, k, "wald")
    if w.m <= df + 1:
        raise ValueError(
            f"the Wald rank test at k={k} needs more than (n1-k)(n2-k) + 1 = "
            f"{int(df) + 1} observations (it estimates the covariance of the "
            f"{int(df)} complement entries); got {w.m}. Use method='robust' "
            "or max_rank"
        )
    res = wald_from_moments(complement(w, k), complement_block(w.s, k, w.n1, w.n2).reshape(-1),
                            n_lost=w.n_lost)
    return {"statistic": res.statistic, "df": float(res.df1), "pvalue": res.pvalue,
            "fstat": res.fstat, "df_denom": float(res.df2)}, ()


METHOD = RankTestMethod(
    name="wald",
    label="Wald (Kleibergen-Paap type), Hotelling F",
    distribution="F",
    assumptions=(
        "Wald (Kleibergen-Paap type): i.i.d. rows and finite second moments of "
        "the influence functions psi of the complement block C = U_perp' X_lin V_perp, "
        "with nonsingular covariance; no Gaussian blocks, homoscedasticity or "
        "independent noise needed. T_k = m vec(C)' Omega^{-1} vec(C) (Omega the "
        "uncentred second moment of psi, T_k <= m); F = (m - d) T_k / (d (m - T_k)) "
        "~ F(d, m - d) (Hotelling), d = (n1-k)(n2-k). Conservative for heavy-tailed "
        "y, little power for rare binary y."
    ),
    statistic_note="Statistic T_k (Wald, see below); ",
    needs="source",
    columns=("fstat", "df_denom"),
    columns_note="`statistic` is `T_k`, `fstat ~ F(df, df_denom)`",
    docs=(
        "Hotelling F of `T_k = m vec(C)' Omega^{-1} vec(C)` (Kleibergen-Paap type)",
        "finite second moments; `m > d + 1`",
        "`O(m d^2)`",
    ),
    theory="7",
    row=_row,
    notes=("fstat ~ F(df, df_denom).",),
)
