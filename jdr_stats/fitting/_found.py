"""What a fit found, block by block: the first line of its summary.

Each block's verdict joins two of the fit's own tests at the alpha of its
rank selection (0.05 for a given rank): the rank tests, which see the
interactions between the blocks (for a fit pooling the main effects, the
pooled directions), and ``main_effects_test()``, which sees the block's
first moment ``E[y z_k]`` (its main effect).  A block is said to hold
interactions, a main effect, both or nothing, each with the p-value behind
it; a test that did not run says so in a few words.

A pooled fit (``main_effects=True``) has one set of directions per block:
the first moment is an ``n_k x q`` piece of its Gram, so at most ``q``
directions come from it, and directions beyond ``q`` come from the
interaction pieces.  The line says what the directions hold from those two
facts; it does not test the interactions apart (``main_effects=False`` does).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from .. import policy
from ..exceptions import RowsNotInMemoryError
from ..inference.main_effects import MainEffectsMethod, MainEffectsResults
from ..report._render import format_pvalue

__all__ = ["NOT_IN_DIRECTIONS", "FirstMoment", "KBlockFoundMixin", "block_verdict",
           "first_moments", "main_effects_clause", "p_text", "pvalue_list",
           "summary_main_effects_method"]

#: Said once when an interaction-only fit finds a main effect.
NOT_IN_DIRECTIONS = "Main effects are not in the directions (main_effects=True pools them)."


def p_text(p: float) -> str:
    """``p = 0.0432``, or ``p < 1e-16`` below machine precision."""
    shown = format_pvalue(p)
    return "p < 1e-16" if shown == "<1e-16" else f"p = {shown}"


def summary_main_effects_method(nobs: int) -> MainEffectsMethod:
    """The summary's main-effects test: ``"auto"``, or ``"robust"`` above
    :data:`jdr_stats.policy.MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS` rows (a
    permutation version there would make the summary slow)."""
    return "robust" if nobs > policy.MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS else "auto"


@dataclass(frozen=True)
class FirstMoment:
    """One block's main-effects test as the first line reads it: its
    p-value (NaN: not run, ``why`` in a few words) and whether it is the
    marginal test (not given the other blocks)."""

    pvalue: float
    why: str = ""
    marginal: bool = False

    @property
    def ran(self) -> bool:
        return bool(np.isfinite(self.pvalue))

    def found(self, alpha: float) -> bool:
        return self.ran and self.pvalue < alpha

    def p(self) -> str:
        """``p = 0.31`` (``, marginal`` where it is the marginal test)."""
        return p_text(self.pvalue) + (", marginal" if self.marginal else "")

    def phrase(self, alpha: float) -> str:
        """``a main effect (p = ...)``, ``no main effect (p = ...)`` or why not tested."""
        if not self.ran:
            return f"main effect not tested ({self.why})"
        return f"{'a' if self.found(alpha) else 'no'} main effect ({self.p()})"


def first_moments(tests: MainEffectsResults | str | None, names: Sequence[str],
                  nobs: int) -> dict[str, FirstMoment]:
    """Each block's row of the summary's main-effects tests; ``tests`` a
    string (or None: no rows in memory) says why none ran."""
    if not isinstance(tests, MainEffectsResults):
        why = tests or "rows not in memory"
        return {n: FirstMoment(np.nan, why) for n in names}
    out = {}
    for n in names:
        row = tests.table.loc[n]
        reason = str(row.get("reason", "") or "")
        if "no rows are left" in reason:
            why = "no rows left for it"
        elif reason.startswith("robust test refused") \
                and nobs > policy.MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS:
            why = "too wide for the robust test; results.main_effects_test() permutes"
        else:
            why = "too wide for the rows"
        out[n] = FirstMoment(float(row["pvalue"]), why,
                             str(row["method"]).endswith("(marginal)"))
    return out


def pvalue_list(pvalues: pd.Series, letter: str) -> str:
    """``r = 0: p = ..., r = 1: p = ...``: the rank tests up to the rank (the
    first and the last two where there are more than three)."""
    shown = [f"{letter} = {k}: {p_text(p)}" for k, p in pvalues.items()]
    if len(shown) > 3:
        shown = [shown[0], "...", *shown[-2:]]
    return ", ".join(shown)


def block_verdict(rank: int, tests: str | None, me: FirstMoment, alpha: float, *,
                  pooled: bool = False, q: int = 1) -> tuple[str, bool]:
    """One block's verdict and whether nothing was found.

    ``tests``: the rank tests' p-values up to ``rank`` (:func:`pvalue_list`),
    None for a given rank; ``me``: its main-effects test; ``pooled``: the
    directions pool the main effects with the interactions (``q`` response
    columns: at most ``q`` directions from the first moment).
    """
    m_phrase, found_me = me.phrase(alpha), me.found(alpha)
    if tests is None:  # a given rank: only the main effect is tested here
        return m_phrase, False
    if rank == 0:
        what = f"rank 0 not rejected, {'' if pooled or found_me else 'interactions '}{tests}"
        if found_me:
            return ((f"no direction ({what}), though {m_phrase}" if pooled
                     else f"{m_phrase}, no interactions ({what})"), False)
        if not me.ran:
            return f"no {'direction' if pooled else 'interactions'} ({what}); {m_phrase}", False
        return f"nothing ({what}; main effect {me.p()})", True
    if not pooled:
        inter = f"interactions (rank {rank}; {tests})"
        return (f"{inter} and {m_phrase}" if found_me else f"{inter}, {m_phrase}"), False
    dirs = f"{rank} direction{'s' if rank > 1 else ''} ({tests})"
    if not me.ran:
        return f"{dirs}: main effects and interactions pooled; {m_phrase}", False
    if not found_me:
        return f"{dirs}: interactions, {m_phrase}", False
    held = f"its main effect ({me.p()})"
    return (f"{dirs}: {held} and interactions" if rank > q
            else f"{dirs}: {held}, interactions not told apart"), False


def main_effects_clause(names: Sequence[str], me: Mapping[str, FirstMoment],
                        alpha: float) -> str:
    """``a: a main effect (p = ...); b: no main effect (p = ...)``."""
    return "; ".join(f"{n}: {me[n].phrase(alpha)}" for n in names)


class KBlockFoundMixin:
    """The first line of a K-block fit's summary (three or more blocks, or
    two pooling the main effects): each block's verdict from its rank tests
    and its main-effects test, the latter computed once and kept."""

    _model: Any
    _names: tuple[str, ...]
    _ranks: dict[str, int]
    _settings: dict[str, Any]
    _tables: dict[str, pd.DataFrame] | None
    main_effects_test: Any

    if TYPE_CHECKING:
        @property
        def sees(self) -> str: ...

        @property
        def main_effects(self) -> bool: ...

        @property
        def nobs(self) -> int: ...

    @cached_property
    def _summary_main_effects(self) -> MainEffectsResults | str:
        """The summary's main-effects tests, or why they do not run (no rows
        in memory: streamed, built from sums, rows removed)."""
        try:
            self._model._data.rows("main_effects_test()")
        except RowsNotInMemoryError:
            return ("rows removed" if getattr(self, "data_removed", False)
                    else "rows not in memory")
        return self.main_effects_test(summary_main_effects_method(self.nobs),
                                      n_perm=policy.MAIN_EFFECTS_PERMUTATIONS,
                                      seed=policy.MAIN_EFFECTS_SEED)

    def _sees_note(self) -> str:
        """What the reduction sees, and how the first line's main effects were tested."""
        note = f"The reduction sees {self.sees}; links even in a block are invisible to it"
        tests = self._summary_main_effects
        if not isinstance(tests, MainEffectsResults):
            return note + "."
        methods = sorted({str(m) for m in tests.table["method"] if m != "refused"})
        marginal = any(m.endswith("(marginal)") for m in methods)
        return (note + "; main-effects tests (results.main_effects_test()): "
                + (", ".join(methods) or "not run, too wide")
                + ("; (marginal): not given the other blocks" if marginal else "") + ".")

    def _response_columns(self) -> int:
        """``q``: the response's columns (indicators of a categorical one)."""
        endog = getattr(self._model._data, "endog", None)
        if endog is not None:
            return 1 if np.ndim(endog) < 2 else int(np.shape(endog)[1])
        tests = self._summary_main_effects  # rows removed: df = q n_k of a robust row
        if isinstance(tests, MainEffectsResults):
            for n, df in tests.table["df"].items():
                width = len(self.directions[n].index)  # type: ignore[attr-defined]
                if np.isfinite(df) and width:
                    return max(1, round(float(df) / width))
        return 1

    def _found_headline(self) -> list[str]:
        """What was found: each block's verdict with its tests; blocks with
        nothing found named (every block: "no evidence of a link")."""
        alpha = float(self._settings.get("alpha") or 0.05)
        me = first_moments(self._summary_main_effects, self._names, self.nobs)
        ranks = ", ".join(f"{n}={r}" for n, r in self._ranks.items())
        if getattr(self, "_ladle", None) is not None:  # a criterion: no level, no verdicts
            return [f"Found: ranks {ranks} (chosen by the ladle estimator: no test level); "
                    f"main-effects tests at alpha = {alpha:g}: "
                    f"{main_effects_clause(self._names, me, alpha)}."]
        if self._tables is None:
            given = ("given; no rank test carries the regression's estimation"
                     if self._settings.get("interactions") == "regression"
                     else "given; results.rank_tests() tests them")
            return [f"Fitted: ranks {ranks} ({given}); "
                    f"main-effects tests at alpha = {alpha:g}: "
                    f"{main_effects_clause(self._names, me, alpha)}."]
        q = self._response_columns()
        parts, nothing = [], []
        for n in self._names:
            pv = self._tables[n]["pvalue"].iloc[:self._ranks[n] + 1]
            text, none = block_verdict(self._ranks[n], pvalue_list(pv, "r"), me[n], alpha,
                                       pooled=self.main_effects, q=q)
            parts.append(f"{n}: {text}")
            nothing += [n] if none else []
        what = "rank tests of the pooled directions" if self.main_effects else "rank tests"
        head = ("Found: no evidence of a link in any block: " if len(nothing) == len(self._names)
                else "Found: ") + "; ".join(parts)
        head += (f"; {self._settings['rank_method']} {what} and main-effects tests at alpha = "
                 f"{alpha:g}.")
        if not self.main_effects and any(m.found(alpha) for m in me.values()):
            head += " " + NOT_IN_DIRECTIONS
        return [head]
