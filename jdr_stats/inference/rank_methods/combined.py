"""The combined rank test (``method="combined"``; theory of rank tests, 6f):
the robust and spectral tests, Bonferroni-combined,
``p = min(1, 2 min(p_robust, p_spectral))``; the default ``"auto"`` for
blocks much wider than the sample (:func:`jdr_stats.policy.rank_method`)."""

from __future__ import annotations

import numpy as np

from ... import policy
from ...core._linalg import mp_edge
from .._rank_spectral import pass_plan, spectral_statistic
from .._rank_stats import WhitenedDesign
from ._record import LAMBDA, RankTestMethod, Row, RowOptions
from .chi2 import chi2_row
from .robust import METHOD as ROBUST
from .robust import robust_rows
from .spectral import METHOD as SPECTRAL
from .spectral import Q_SPECTRAL, spectral_flips
from .spectral import TAILS as SPECTRAL_TAILS

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
    """The combined test's rows of one pass ``ks``: its robust rows, then sign
    flips of the spectral test at the ranks :func:`flips_needed` names (the
    halves and flips drawn as for the whole pass, so each rank's flips, and
    p-value, are the whole pass's).

    A table (``opts.stop_alpha`` None) computes the robust rows of the pass in
    one sweep (:func:`.robust.robust_rows`), then the flips.  A rank selection
    stops after the first row whose p-value exceeds ``opts.stop_alpha``, and
    computes the robust rows only about as far as that row (at many classes
    each costs about a fit, and a sweep about two more), in sweeps of
    consecutive ranks, each taking the routes of one sweep over the pass (the
    same numbers; :func:`.._robust_core.robust_moments_ranks`):

    * the first sweep runs to the first rank at which the normal-theory
      chi-square test's p-value exceeds ``1 / (n_perm + 1)`` (the end of the
      pass if none does).  Its reference has about the robust test's mean
      and, in the wide designs of the combined test, a smaller variance: up
      to there the robust test can be expected to reject overwhelmingly
      (``pvalue_robust <= 1 / (n_perm + 1)``, no flips needed, no stop), and
      that rank to need flips.  The flips, not the robust rows, say where
      the selection can stop past it;
    * at the first rank that needs flips, they are drawn for every rank from
      it to the last that may need them (robust row not computed, or above
      ``1 / (n_perm + 1)``; :func:`flips_needed`): a superset of the table's
      flip ranks, with the same p-values;
    * then each sweep runs to the next rank at which the selection can stop:
      one whose spectral p-value exceeds ``stop_alpha / 2`` (otherwise the
      row is rejected whatever its robust p-value), or, past those ranks (or
      when no rank of the first sweep needed flips), to the end of the pass.

    ``n_flips``, the flips a table's pass draws, is the largest count of its
    flip ranks (:func:`.spectral.spectral_flips`); it and which ranks are
    ``"not-needed"`` depend on the last rank that needs flips: where the rows
    computed leave them open, the rest of the flip ranks' robust rows are
    computed (one more sweep).  So a selection's rows are the first rows of
    the table, to rounding.
    """
    return _CombinedPass(w, ks, opts).rows()


class _CombinedPass:
    """The state of :func:`combined_rows` over one pass: the robust rows
    computed so far (a prefix of the pass's ranks) and the spectral flips."""

    def __init__(self, w: WhitenedDesign, ks: range, opts: RowOptions) -> None:
        self.w, self.ks, self.opts = w, ks, opts
        self.edge = mp_edge(w.n1, w.n2, np.asarray(ks), w.q)
        self.stats = np.array([spectral_statistic(w, k) for k in ks])
        self.robust: list[Row] = []
        #: the flips: their first rank, per rank the p-value and the flips
        #: drawn when it was settled (None: not drawn)
        self.flips: tuple[int, np.ndarray, np.ndarray] | None = None

    def _sweep(self, hi: int) -> None:
        """The robust rows of the ranks from the first not computed to index ``hi - 1``."""
        lo, ks = len(self.robust), self.ks
        if hi <= lo:
            return
        rows = robust_rows(self.w, range(ks[lo], ks[hi - 1] + 1), self.opts, shared=len(ks))
        for row in rows:
            self.robust.append(row)
            if self.opts.row_done is not None:
                self.opts.row_done()

    def _needed(self, fill: float) -> tuple[range | None, list[str | None], float]:
        """:func:`flips_needed` with ``fill`` for the robust p-values not
        computed, and the flips its ranks draw in a table (``n_flips``)."""
        n = len(self.ks)
        p_robust = [self.robust[j][0]["pvalue"] if j < len(self.robust) else fill
                    for j in range(n)]
        sub, why = flips_needed(self.ks, self.stats, self.edge, p_robust, self.opts.n_perm)
        used = 0.0
        if sub is not None and self.flips is not None:
            first, _, settled = self.flips
            used = float(settled[sub[0] - first:sub[-1] - first + 1].max())
        return sub, why, used

    def _p_spectral(self, k: int) -> float:
        """Rank ``k``'s spectral p-value (NaN: no flips drawn there)."""
        if self.flips is None:
            return np.nan
        first, pv, _ = self.flips
        return float(pv[k - first]) if first <= k < first + len(pv) else np.nan

    def _sweep_end(self, j: int) -> int:
        """Where the sweep from index ``j`` ends (exclusive; :func:`combined_rows`)."""
        n, alpha = len(self.ks), self.opts.stop_alpha
        if alpha is None:
            return n
        if j == 0:
            least = 1.0 / (self.opts.n_perm + 1)  # the smallest p-value of the flips
            return next((i + 1 for i, k in enumerate(self.ks)
                         if chi2_row(self.w, k, self.opts)[0]["pvalue"] > least), n)
        if self.flips is not None:
            first, pv, _ = self.flips
            for i in range(j, n):
                k = self.ks[i]
                if first <= k < first + len(pv) and not pv[k - first] <= alpha / 2:
                    return i + 1
        return n

    def rows(self) -> list[Row]:
        ks, alpha = self.ks, self.opts.stop_alpha
        last = len(ks) - 1
        for j, k in enumerate(ks):
            if j >= len(self.robust):
                self._sweep(self._sweep_end(j))
            if self.flips is None:
                # the ranks not computed count as needing flips: the flips run
                # from the first that needs them to the last that may
                sub = self._needed(np.inf)[0]
                if sub is not None and sub[0] <= k:
                    self.flips = (sub[0], *spectral_flips(self.w, sub, self.opts))
            ps = self._p_spectral(k)
            if alpha is not None and not combined_numbers(
                    self.robust[j][0], ps, self.stats[j], 0.0)["pvalue"] <= alpha:
                last = j
                break
        sub, why, used = self._needed(np.inf)
        if len(self.robust) < len(ks) and self.flips is not None:
            # the rows up to `last` alike whether the ranks not computed need
            # flips or not (the last rank that needs them sets which ranks are
            # "not-needed" and n_flips), else the rest of the flip ranks
            if _shown(sub, why, used, ks, last) != _shown(*self._needed(0.0), ks, last):
                first, pv, _ = self.flips
                self._sweep(ks.index(first + len(pv) - 1) + 1)
                sub, why, used = self._needed(np.inf)
        out: list[Row] = []
        for j, k in enumerate(ks[:last + 1]):
            rrow, rtails = self.robust[j]
            if sub is not None and k in sub:
                numbers = combined_numbers(rrow, self._p_spectral(k), self.stats[j], used)
                out.append((numbers, (*rtails, *SPECTRAL_TAILS, "combined")))
            else:
                numbers = combined_numbers(rrow, np.nan, self.stats[j], 0.0)
                out.append((numbers, (*rtails, "combined", str(why[j]))))
        return out


def _shown(sub: range | None, why: list[str | None], used: float, ks: range,
           last: int) -> tuple[object, ...]:
    """What :func:`flips_needed` sets in the rows up to index ``last``."""
    return tuple(why[:last + 1]), used if sub is not None and sub[0] <= ks[last] else 0.0


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


