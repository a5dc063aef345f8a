"""The combined rank test (``method="combined"``; theory of rank tests, 6f):
the robust and spectral tests, Bonferroni-combined,
``p = min(1, 2 min(p_robust, p_spectral))``; the default ``"auto"`` for
blocks much wider than the sample (:func:`jdr_stats.policy.rank_method`)."""

from __future__ import annotations

import numpy as np

from ... import policy
from ..._linalg import mp_edge
from .._rank_spectral import pass_plan, spectral_statistic
from .._rank_stats import WhitenedDesign
from ._record import LAMBDA, RankTestMethod, Row, RowOptions
from .robust import METHOD as ROBUST
from .robust import robust_rows
from .spectral import METHOD as SPECTRAL
from .spectral import Q_SPECTRAL, spectral_rows

__all__ = ["METHOD", "combined_numbers", "combined_rows", "flips_needed"]


def flips_needed(ks: range, stats_k: np.ndarray, edge: np.ndarray, p_robust: list[float],
                 n_perm: int) -> tuple[range | None, list[str | None]]:
    """The ranks of a pass at which the combined test draws sign flips, and
    why each other rank draws none.

    A rank needs flips when its spectral statistic reaches
    ``policy.COMBINED_SPECTRAL_MIN_EDGE`` of the noise edge (a prefix of
    ``ks``: the statistic decreases in k; the others ``"not-run"``) and its
    robust p-value exceeds ``1 / (n_perm + 1)``, the smallest p-value the
    flips can give (at or below it the combined p-value is ``2 p_robust``
    whatever they give: ``"not-needed"``).  Returns the range from the first
    such rank to the last (None if none), and per rank of ``ks`` the reason
    (a key of the tail notes) or None for a rank of that range.  Neither rule
    changes a combined p-value."""
    run = int(np.sum(stats_k >= policy.COMBINED_SPECTRAL_MIN_EDGE * edge))
    need = [j for j in range(run) if p_robust[j] > 1.0 / (n_perm + 1)]
    sub = range(ks[need[0]], ks[need[-1]] + 1) if need else None
    why = [None if sub is not None and k in sub else "not-run" if j >= run else "not-needed"
           for j, k in enumerate(ks)]
    return sub, why


def combined_numbers(robust: dict[str, float], p_spectral: float, spectral_stat: float,
                     n_flips: float) -> dict[str, float]:
    """A combined row from its robust row and its spectral p-value (NaN: no flips
    drawn, counted as 1): ``pvalue = min(1, 2 min(p_robust, p_spectral))``."""
    ps = 1.0 if np.isnan(p_spectral) else p_spectral
    return {"statistic": robust["statistic"], "df": np.nan,
            "pvalue": min(1.0, 2.0 * min(robust["pvalue"], ps)),
            "eff_df": robust["eff_df"], "scale": robust["scale"], "mc_se": robust["mc_se"],
            "pvalue_robust": robust["pvalue"], "spectral_statistic": spectral_stat,
            "pvalue_spectral": p_spectral, "n_flips": n_flips}


def combined_rows(w: WhitenedDesign, ks: range, opts: RowOptions) -> list[Row]:
    # the spectral test runs at the ranks flips_needed names (its p-value is
    # taken as 1 below half the noise edge, where it cannot reject, and is
    # not needed where the robust p-value is below the flips' smallest);
    # the halves and flips are drawn as for the whole pass, so each rank's
    # flips are the whole pass's
    edge = mp_edge(w.n1, w.n2, np.asarray(ks), w.q)
    stats_k = np.array([spectral_statistic(w, k) for k in ks])
    robust = robust_rows(w, ks, opts)
    if opts.row_done is not None:
        for _ in ks:
            opts.row_done()
    sub, why = flips_needed(ks, stats_k, edge, [r[0]["pvalue"] for r in robust], opts.n_perm)
    spectral = dict(zip(sub, spectral_rows(w, sub, opts),
                        strict=True)) if sub is not None else {}
    out: list[Row] = []
    for j, k in enumerate(ks):
        rrow, rtails = robust[j]
        if k in spectral:
            srow, stails = spectral[k]
            ps, flips, tails = srow["pvalue"], srow["n_flips"], (*rtails, *stails, "combined")
        else:
            ps, flips, tails = np.nan, 0.0, (*rtails, "combined", str(why[j]))
        out.append((combined_numbers(rrow, ps, stats_k[j], flips), tails))
    return out


def _row(w: WhitenedDesign, k: int, opts: RowOptions) -> Row:
    return combined_rows(w, range(k, k + 1), opts)[0]


def _limits() -> dict[str, object]:
    return {**ROBUST.tail_limits(), "not-run": f"{policy.COMBINED_SPECTRAL_MIN_EDGE:g}"}


_LABEL = "robust and spectral tests, Bonferroni-combined"
_ASSUMPTIONS = (
    "Combined test (the default for blocks much wider than the sample): the "
    "robust test (powerful against many weak directions) and the spectral test "
    "(against a few above the noise edge), Bonferroni-combined, so it holds "
    "alpha whenever both hold alpha / 2. "
    + ROBUST.assumptions + " " + SPECTRAL.assumptions
)

METHOD = RankTestMethod(
    name="combined",
    label=_LABEL,
    distribution="Bonferroni: scaled chi2 and sign flips",
    assumptions=_ASSUMPTIONS,
    statistic_note=(
        LAMBDA + "spectral_statistic = m * s_{k+1}(X_lin)^2 / var(y); "
    ),
    needs="source",
    columns=("eff_df", "scale", "mc_se", "pvalue_robust", "spectral_statistic",
             "pvalue_spectral", "n_flips"),
    columns_note=("the robust test's, then `pvalue_robust`, `spectral_statistic`, "
                  "`pvalue_spectral`, `n_flips`; `statistic` is `Lambda_k`; `pvalue_spectral` "
                  "is NaN (no flips drawn) where the spectral statistic is below half the "
                  "noise edge or `pvalue_robust <= 1 / (n_perm + 1)` (then `pvalue = min(1, "
                  "2 pvalue_robust)` whatever the flips give)"),
    docs=(
        "(the default from `q n1 n2 / m = %(RANK_COMBINED_MIN_RATIO)g`) "
        "`min(1, 2 min(p_robust, p_spectral))`: Bonferroni over the two (theory 6f)",
        "both tests'",
        "both tests'",
    ),
    theory="6f",
    row=_row,
    replicates=199,
    takes_q=True,
    q_label=_LABEL + ", q responses",
    q_assumptions=Q_SPECTRAL + " " + _ASSUMPTIONS,
    rotated=True,
    rows=combined_rows,
    plan=pass_plan,
    notes=ROBUST.notes,
    tail_limits=_limits,
    tail_notes={
        **ROBUST.tail_notes, **SPECTRAL.tail_notes,
        "combined": (
            "Combined test: pvalue = min(1, 2 min(pvalue_robust, pvalue_spectral)) "
            "(Bonferroni over the two tests; docs: theory of rank tests, section 6f)."
        ),
        "not-run": (
            "pvalue_spectral NaN (n_flips 0): the spectral test is not run where "
            "spectral_statistic is below %s of the noise edge (sqrt(n1-k) + "
            "sqrt(n2-k))^2, where it cannot reject; its p-value counts as 1."
        ),
        "not-needed": (
            "pvalue_spectral NaN (n_flips 0) where pvalue_robust is at most 1 / "
            "(n_perm + 1), the smallest p-value the sign flips can give: there "
            "pvalue = min(1, 2 pvalue_robust) whatever they give, so they are not drawn."
        ),
    },
)


