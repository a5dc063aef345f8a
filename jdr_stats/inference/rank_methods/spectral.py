"""The spectral rank test (``method="spectral"``; theory of rank tests, 6e and
6g): the (k+1)-th singular value against sign flips of the rows of a bound
that holds in every sample, with cross-fitted projections
(:mod:`.._rank_spectral`)."""

from __future__ import annotations

import numpy as np

from .._rank_spectral import pass_plan, spectral_pvalues_settled, spectral_statistic
from .._rank_stats import WhitenedDesign
from ._record import RankTestMethod, Row, RowOptions

#: what the spectral statistic is for q columns (a note of the table)
Q_SPECTRAL = (
    "Spectral statistic of q columns: m min(s_{k+1}(M1), s_{k+1}(M2))^2, M1 = [X_1, ..., X_q] "
    "and M2 = [X_1^T, ..., X_q^T] the unfoldings of the whitened cross moments (whose top-k "
    "singular vectors are the HOSVD estimates); the bound and its sign flips as for one "
    "column, with the q columns' matrices side by side (theory of rank tests, 6e)."
)


#: the tail note of a row that drew sign flips
TAILS = ("spectral",)


def spectral_flips(w: WhitenedDesign, ks: range, opts: RowOptions
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The spectral p-values of one pass ``ks`` and, per rank, the flips drawn
    when its p-value was settled (:func:`.._rank_spectral.spectral_pvalues_settled`):
    neither depends on the pass's other ranks, and a pass draws the largest count."""
    assert opts.rng is not None
    return spectral_pvalues_settled(w, ks, opts.n_perm, opts.rng, n_jobs=opts.n_jobs,
                                    progress=opts.progress, timing=opts.timing)


def spectral_rows(w: WhitenedDesign, ks: range, opts: RowOptions) -> list[Row]:
    """The spectral test's rows of one pass ``ks`` (sharing its sign flips)."""
    pv, settled = spectral_flips(w, ks, opts)
    used = float(settled.max())
    return [({"statistic": spectral_statistic(w, k), "df": np.nan, "pvalue": float(p),
              "n_flips": used}, TAILS) for k, p in zip(ks, pv, strict=True)]


def _row(w: WhitenedDesign, k: int, opts: RowOptions) -> Row:
    return spectral_rows(w, range(k, k + 1), opts)[0]


ASSUMPTIONS = (
    "Spectral test (for blocks much wider than the sample): the next singular "
    "value against sign flips of each row's complement coordinates, with "
    "cross-fitted projections; valid when those coordinates are sign-symmetric "
    "given y, the signal and the other block (e.g. elliptical blocks); exact "
    "at k = 0, conservative at k >= 1 (theory of rank tests, section 6e)."
)
LABEL = "spectral bound with cross-fitted projections, sign flips of the rows"

METHOD = RankTestMethod(
    name="spectral",
    label=LABEL,
    distribution="sign flips",
    assumptions=ASSUMPTIONS,
    statistic_note=(
        "Statistic m * s_{k+1}(X_lin)^2 / var(y) (the (k+1)-th singular value, "
        "not the sum of the squares beyond k); "
    ),
    needs="source",
    columns=("n_flips",),
    columns_note="`n_flips` sign flips drawn; `statistic` is `m s_{k+1}^2 / var(y)`; "
                 "`df` is NaN",
    docs=(
        "its own statistic, the next singular value `m s_{k+1}^2 / var(y)`, against sign "
        "flips of a bound that holds in every sample: each row's complement coordinates in "
        "each block flipped with its own sign, projections cross-fitted (theory 6e); exact "
        "at `k = 0`, conservative at `k >= 1`",
        "complements sign-symmetric given `y`, the signal coordinates and the other block "
        "(symmetric independent coordinates, elliptical blocks); any number of response "
        "columns (theory 6g: the smaller of the two unfoldings' next singular values)",
        "`O(n_perm * m * n1 * n2)` for all the ranks of a pass: each flip costs a third to "
        "a half of a fit",
    ),
    theory="6e",
    row=_row,
    replicates=199,
    takes_q=True,
    q_label=LABEL + ", q responses",
    q_assumptions=Q_SPECTRAL + " " + ASSUMPTIONS,
    rows=spectral_rows,
    plan=pass_plan,
    tail_notes={
        "spectral": (
            "Spectral test: sequential sign flips, p = 10 / L if the 10th flip at or "
            "above the statistic came at flip L (the flips then stop), else "
            "(1 + #{T* >= T}) / (B + 1), B = n_perm; n_flips counts the flips drawn "
            "(theory of rank tests, section 6e)."
        ),
    },
)
