"""The robust two-moment rank test (``method="robust"``; theory of rank
tests, section 6 and 6a-6d): ``Lambda_k`` against ``g chi2(h)`` whose mean
and variance are the finite-sample moments of ``Lambda_k`` estimated from
the influence functions of the complement block (:mod:`.._robust_core`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from ... import config, policy
from .._rank_stats import WhitenedDesign
from .._robust_core import (
    RobustMoments,
    RotatedFirst,
    first_from_sums,
    robust_moments,
    robust_moments_ranks,
    robust_pvalue,
    rotated_first,
)
from .._robust_signal import crossfit_residual_chunks
from ._kblock_robust import kblock_robust_tables
from ._record import LAMBDA, RankTestMethod, Row, RowOptions


def _first(w: WhitenedDesign) -> RotatedFirst:
    """The first-order sums of every ``k``, from one pass (rows in memory) or
    from the moments of a row source, made at the first call (kept in
    ``w.cache``)."""
    if not w.rotated:
        raise RuntimeError("the robust test needs the rotated rows (rows='rotated')")
    if "rfirst" not in w.cache:
        if w.first is not None:
            m, c_ay, c_by, c_ab, var_y = w.first
            w.cache["rfirst"] = first_from_sums(m, c_ay, c_by, c_ab, var_y, w.u, w.s, w.v)
        else:
            w.cache["rfirst"] = rotated_first(w.row_chunks())
    first: RotatedFirst = w.cache["rfirst"]
    return first


def robust_moments_at(w: WhitenedDesign, k: int,
                      rng: np.random.Generator | None = None) -> RobustMoments:
    """Moments of the robust test at rank ``k`` (:mod:`.._robust_core`).

    One pass over the rotated rows per ``k`` (no ``d x d`` matrix unless
    it is the cheapest exact route).
    """
    return _crossfit(w, k, robust_moments(w.row_chunks(), _first(w), k, rng=rng), rng)


def robust_moments_over(w: WhitenedDesign, ks: range, rng: np.random.Generator | None = None,
                        *, shared: int | None = None) -> list[RobustMoments]:
    """:func:`robust_moments_at` at every rank of ``ks``: the same numbers up
    to rounding, the ranks whose route is the exact Gram sharing one sweep
    over its row blocks (:func:`.._robust_core.robust_moments_ranks`, which
    ``shared`` is passed to)."""
    if config.ROBUST_CROSSFIT_FOLDS >= 2:  # theory 6c: rank by rank
        return [robust_moments_at(w, k, rng) for k in ks]
    return robust_moments_ranks(w.row_chunks(), _first(w), ks, rng=rng, shared=shared)


def _crossfit(w: WhitenedDesign, k: int, mom: RobustMoments,
              rng: np.random.Generator | None) -> RobustMoments:
    """``mom`` with the variance from the cross-fitted noise (theory 6c; opt-in)."""
    if config.ROBUST_CROSSFIT_FOLDS < 2 or k >= min(w.n1, w.n2):
        return mom
    res = crossfit_residual_chunks(w.row_chunks(), k, config.ROBUST_CROSSFIT_FOLDS,
                                   config.ROBUST_CROSSFIT_EDGE, config.ROBUST_CROSSFIT_DIRS)
    if res is None:
        return mom
    # theory 6c: the mean from the rows, the variance from the noise
    noise = robust_moments(res, rotated_first(res), k, rng=rng)
    return replace(noise, tau=mom.tau, s2=mom.s2, bias=mom.bias, reference=mom.reference)


def robust_row(w: WhitenedDesign, k: int, opts: RowOptions) -> Row:
    """The robust test's row ``k``."""
    return _row(w, k, robust_moments_at(w, k, opts.pair_rng))


def robust_rows(w: WhitenedDesign, ks: range, opts: RowOptions, *,
                shared: int | None = None) -> list[Row]:
    """The robust test's rows ``ks`` (the combined test's first part), as
    :func:`robust_row` rank by rank (:func:`robust_moments_over`; ``shared``:
    the ranks of the pass that ``ks`` is a part of, whose routes they take)."""
    moms = robust_moments_over(w, ks, opts.pair_rng, shared=shared)
    return [_row(w, k, mom) for k, mom in zip(ks, moms, strict=True)]


def _row(w: WhitenedDesign, k: int, mom: RobustMoments) -> Row:
    stat = w.statistic(k)
    pv, eff, scale, mc = robust_pvalue(stat, mom)
    return {"statistic": stat, "df": np.nan, "pvalue": pv, "eff_df": eff, "scale": scale,
            "mc_se": mc}, mom.tags


def _limits() -> dict[str, object]:
    ratio = f"{policy.ROBUST_CORRECTED_MAX_RATIO:g}"
    both = f"{policy.ROBUST_BOTH_MIN_RATIO:g}"
    return {"pairs": f"{config.ROBUST_EXACT_FLOPS:.3g}", "corrected": ratio, "both": both,
            "per-row": (ratio, both)}


METHOD = RankTestMethod(
    name="robust",
    label="robust two-moment test (scaled chi2 with estimated finite-sample moments)",
    distribution="scaled chi2",
    assumptions=(
        "Robust two-moment test: i.i.d. rows and finite fourth moments of the "
        "influence functions of the complement block; no Gaussian blocks, "
        "homoscedasticity or independent noise needed. Lambda_k is referred to "
        "a scaled chi-square with its finite-sample mean and variance estimated "
        "from the rows (theory of rank tests, section 6)."
    ),
    statistic_note=LAMBDA,
    needs="source",
    columns=("eff_df", "scale", "mc_se"),
    columns_note=("`Lambda_k ~ scale * chi2(eff_df)`, `mc_se` the Monte Carlo standard "
                  "error of a p-value from sampled row pairs (0 when exact); `df` is NaN"),
    docs=(
        "(the default below `q n1 n2 / m = %(RANK_COMBINED_MIN_RATIO)g`) scaled chi-square with "
        "the **finite-sample** mean and variance of `Lambda_k`, estimated from the rows: "
        "corrected for each row's influence on the estimated directions (SVD directions for "
        "one response column, HOSVD directions for `q > 1` columns or classes) and averaged "
        "over the error of the variance estimate (theory 6d; at `k = 0`, and at `k >= 1` "
        "while `d/m <= %(ROBUST_CORRECTED_MAX_RATIO)g`, `d = q (n1-k)(n2-k)`), else with the "
        "per-row variance (theory 6) up to `d/m = %(ROBUST_BOTH_MIN_RATIO)g`, and the larger "
        "of the two p-values beyond",
        "finite fourth moments (sixth for the correction)",
        "`O(m (n1 + n2) p + m p q)` per `k` and row pairs (theory 6a), `d = (n1-k)(n2-k)`",
    ),
    theory="6",
    row=robust_row,
    takes_q=True,
    q_label=("robust two-moment test (scaled chi2 with estimated finite-sample moments), "
             "q responses"),
    q_assumptions=(
        "Robust two-moment test: i.i.d. rows and finite fourth moments of the "
        "influence functions psi_i = u_i (x) v_i (x) Yw_i (plus centring terms) of the "
        "complement core; Lambda_k ~ g chi2(h) with g h and 2 g^2 h its finite-sample "
        "mean and variance estimated from the rows."
    ),
    tail_notes={
        "pairs": (
            "Rows whose exact variance would cost more than %s flops (and more than "
            "sampling it) estimate sum_{i!=j} <psi_i, psi_j>^2 from importance-sampled "
            "row pairs (seeded; mc_se = Monte Carlo standard error of the p-value, 0 "
            "when exact)."
        ),
        "corrected": (
            "Reference at k = 0, and at k >= 1 while d/m <= %s (d = q (n1-k)(n2-k), "
            "q response columns): mean and variance corrected for each row's "
            "influence on the estimated directions (theory of rank tests, section 6d)."
        ),
        "both": (
            "Reference at k >= 1 where d/m > %s: neither reference is derived at "
            "this width, so the p-value is the larger of the corrected and per-row "
            "ones (conservative; study_width); the combined test adds the spectral "
            "test, more powerful there (theory of rank tests, sections 6d-6f)."
        ),
        "per-row": (
            "Reference at k >= 1 where %s < d/m <= %s (or the top-k singular values "
            "or core cannot be inverted): variance including the per-row part "
            "(theory of rank tests, section 6; it held its size in study_width)."
        ),
    },
    tail_limits=_limits,
    rotated=True,
    tables=kblock_robust_tables,
)
