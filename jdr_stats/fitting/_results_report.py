"""What a two-block fit says of itself: its ``summary()`` (the headline,
the model information, the tables and the notes) and its ``to_dict()``
export.  :class:`ResultsReportMixin` is mixed into
:class:`jdr_stats.JDRResults`; the rendering is in :mod:`jdr_stats.summary`.
"""

from __future__ import annotations

import dataclasses
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from .. import policy
from .._version import __version__
from ..estimation._estimate import (
    inference_note,
)
from ..fitting._found import (
    NOT_IN_DIRECTIONS,
    first_moments,
    main_effects_clause,
    p_text,
    pvalue_list,
    summary_main_effects_method,
)
from ..fitting._orthogonal_fit import orthogonal_note
from ..inference.hypotheses import TestResult
from ..inference.ladle import LADLE_AT_ZERO, LADLE_CHOSEN_BY, LadleResults
from ..inference.main_effects import MainEffectsResults
from ..inference.rank_methods import RANK_METHODS, tail_notes
from ..inference.rank_tests import RankTestResults
from ..io._responses import summary_lines as _response_lines
from ..io._responses import summary_notes as _response_notes
from ..persistence._export import records
from ..summary import (
    LOADING_NOTES,
    SHORT_LOADING_NOTES,
    SIGNS_NOTE,
    build_summary,
    format_pvalue,
    json_safe,
)

if TYPE_CHECKING:  # statsmodels on first use: fast ``import jdr_stats``
    from statsmodels.iolib.summary2 import Summary

__all__ = ["ResultsReportMixin"]


def _labels(prefix: str, r: int) -> list[str]:
    return [f"{prefix}{k + 1}" for k in range(r)]


def _rank_reference_note(rt: RankTestResults) -> str:
    """The fit summary's short word on how its rank tests' rows were
    referred (their own summary gives every reference in full)."""
    method = RANK_METHODS.get(rt.method)
    both = tail_notes(method, {"both"}) if method is not None else []
    head = (f"conservative where d/m > {policy.ROBUST_BOTH_MIN_RATIO:g}; "
            if both and both[0] in rt.references else "")
    return head + "references: results.rank_test_table.summary(notes='full')."



#: What the summary's main-effects line says once of a test that ran (the
#: reasons in ``main_effects_test().table`` give the numbers).
_MAIN_EFFECTS_METHOD_NOTES = {
    "Freedman-Lane": "Freedman-Lane: given the other block, residuals of y permuted, "
                     "asymptotically valid",
    "permutation (marginal)": "marginal: not given the other block (too wide to partial "
                              "out), exact",
    "Freedman-Lane (marginal)": "marginal: given the covariates, not the other block (too "
                                "wide to partial out), asymptotically valid",
}


def _method_label(method: str) -> str:
    """``"permutation (marginal)"`` as ``"marginal permutation"`` (no nested brackets)."""
    return ("marginal " + method.removesuffix(" (marginal)") if method.endswith("(marginal)")
            else method)

class ResultsReportMixin:
    """``summary()`` and ``to_dict()`` of :class:`JDRResults`, with the tests they show."""

    # the results class provides these
    _block_stats: Any
    _est: Any
    _fit_data: Any
    _loadings: Any
    _model: Any
    _names_a: Any
    _names_b: Any
    _rank_tests: Any
    _settings: Any
    _with_fit_measures: Any
    association_test: Any
    data_removed: Any
    diagnostics: Any
    fit_measures: Any
    main_effects_test: Any
    nobs: Any
    rank: Any
    rank_method: Any
    singular_values: Any
    sparsity: Any
    sparsity_cv: Any
    standardize: Any
    support_a: Any
    support_b: Any
    support_tests: Any
    whitening: Any

    @cached_property
    def _summary_main_effects(self) -> MainEffectsResults | None:
        """The summary's main-effects tests (None without rows, or where a
        permutation version would be too long for a summary)."""
        data = self._model.data
        if self.data_removed or (data.sums is not None
                                 and getattr(data, "source", None) is None):
            return None
        return self.main_effects_test(summary_main_effects_method(self.nobs),
                                      n_perm=policy.MAIN_EFFECTS_PERMUTATIONS,
                                      seed=policy.MAIN_EFFECTS_SEED)

    def _main_effects_notes(self, info: dict[str, Any], full: bool = True) -> list[str]:
        """"What this reduction can see": one note, with the method of each
        block's main-effects test (its p-value is on the first line), or why
        it did not run and what runs instead (``full``: with what a main
        effect is)."""
        table = self._summary_main_effects
        sees = ("What this reduction can see: interactions between the blocks, not main "
                "effects" + (" (a block's own link to y)" if full else ""))
        if table is None:
            return [sees + "."]
        parts: list[str] = []
        tails: list[str] = []  # what the refusals share is said once
        for _, row in table.table.iterrows():
            reason = str(row.get("reason", "") or "see results.main_effects_test()")
            head, _, tail = reason.partition("; ")
            # the summary gives the numbers that failed; the guide page says why
            head = head.removeprefix("robust test refused: ").split(": the sandwich")[0]
            head = "no rows left" if head.startswith("no rows left") else head
            ran = bool(np.isfinite(row["pvalue"]))
            if not ran and reason.startswith("robust test refused") \
                    and self.nobs > policy.MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS:
                tail = ("what runs: results.main_effects_test(), a permutation version (not "
                        f"in the summary above {policy.MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS} rows)")
            if ran:
                tail = _MAIN_EFFECTS_METHOD_NOTES.get(str(row["method"]), "")
            if tail and tail not in tails:
                tails.append(tail)
            parts.append(_method_label(str(row["method"])) if ran else f"not run ({head})")
        shown = (parts[0] if len(set(parts)) == 1 else
                 "; ".join(f"{block}, {part}" for block, part in zip(table.table.index, parts,
                                                                     strict=True)))
        line = f"{sees}; the first line's main-effects tests (results.main_effects_test()): " \
            + shown
        # a refusal's last clause says what runs instead
        line += "".join(("; instead " + t.split("what runs: ", 1)[1] if "what runs: " in t
                         else f"; {t}") for t in tails)
        return [line + "."]

    @cached_property
    def _summary_association(self) -> TestResult | str | None:
        """The summary's association test (policy.ASSOCIATION_SUMMARY_*): the
        test, a line saying how to run it, or None where the rank tests run."""
        m, n1, n2 = self.nobs, len(self._names_a), len(self._names_b)
        if not policy.association_in_summary(m, n1, n2):
            return None
        if self._model.data.adjustment.p if hasattr(self._model.data, "adjustment") else 0:
            return None
        if m > policy.ASSOCIATION_SUMMARY_MAX_ROWS or self.data_removed \
                or self._fit_data.sums is not None:
            return ("Test of no association not run here (its cost, or rows not in memory): "
                    "results.association_test(n_perm=199, seed=0).")
        return self.association_test(policy.ASSOCIATION_PERMUTATIONS,
                                     seed=policy.ASSOCIATION_SEED)

    # -- export -----------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The fit as plain JSON types (``to_json`` writes it, the command
        line's ``--format json`` prints it).

        Returns
        -------
        dict
            ``model``, ``version``, ``endog``, ``formula``, ``nobs``, ``n1``,
            ``n2``, ``rank``, ``rank_method``, ``alpha``, ``standardize``,
            ``whitening``, ``choices`` (each automatic choice of the fit as
            ``{"name", "reason", "inputs"}``: :attr:`settings`),
            ``sparsity`` (``[s1, s2]`` or None), ``weights`` (bool),
            ``response`` and ``adjusted_for`` (the summary's lines; with
            covariates also ``effective_obs``), ``singular_values``,
            ``directions`` (one record per variable:
            ``{"block": "a", "variable": name, "dir1": ..., "dirr": ...}``,
            original coordinates), ``support_a``, ``support_b``,
            ``rank_tests`` (the tests that chose the rank of a
            ``rank="auto"`` fit, as their ``to_dict()``, else None) and
            ``support_tests`` (likewise for ``sparsity="auto"``),
            ``loadings`` (the per-SD loadings, records like ``directions``)
            ``fit_measures`` (:attr:`fit_measures` as a dict, None without
            rows in memory), ``premises`` (:attr:`diagnostics`:
            its table as records, the cross-block canonical correlations, the
            messages and the remarks), and the tests the summary shows:
            ``main_effects_test`` (its ``to_dict()``: each block's p-value
            and method; None without rows) and ``association_test`` (at
            p >> n: the permutation test of no association as its
            ``to_dict()``, or ``{"not_run": why}``; None where the rank
            tests run instead).  NaN are None; keys have no spaces.

        Examples
        --------
        >>> import json, jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(500, 3, 2, 1, seed=0)
        >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
        >>> res.to_dict()["directions"][0].keys()
        dict_keys(['block', 'variable', 'dir1'])
        >>> json.loads(res.to_json())["rank"]
        1
        """
        m: Any = self._model
        cols = _labels("dir", self.rank)
        names = [("a", v) for v in m.data.exog_names_a] + [("b", v) for v in m.data.exog_names_b]
        dirs = pd.DataFrame(np.vstack([self._est.dir_a, self._est.dir_b]), columns=cols,
                            index=pd.MultiIndex.from_tuples(names, names=["block", "variable"]))
        return {
            "model": "JointDimReduction",
            "version": __version__,
            "endog": m.endog_name,
            "formula": m.formula,
            "nobs": self.nobs,
            "n1": len(m.data.exog_names_a),
            "n2": len(m.data.exog_names_b),
            "blocks": list(m.block_names),
            "rank": self.rank,
            "rank_method": self.rank_method,
            "alpha": json_safe(self._settings.alpha),
            "standardize": self.standardize,
            "whitening": self.whitening,
            # every automatic choice with its reason and inputs (policy.Choice)
            "choices": {what: json_safe(c.to_dict())
                        for what, c in self._settings.choices.items()},
            "sparsity": None if self.sparsity is None else list(self.sparsity),
            "weights": bool(m.data.weighted),
            **{k.rstrip(":").lower().replace(" ", "_").replace(".", ""): v
               for k, v in _response_lines(m.data).items()},
            "singular_values": json_safe(self.singular_values),
            "directions": records(dirs),
            "support_a": self.support_a,
            "support_b": self.support_b,
            "rank_tests": None if self._rank_tests is None else self._rank_tests.to_dict(),
            "support_tests": (None if self.support_tests is None
                              else self.support_tests.to_dict()),
            "loadings": records(pd.DataFrame(
                np.vstack([self._loadings(self._est.dir_a, self._block_stats[0]),
                           self._loadings(self._est.dir_b, self._block_stats[1])]),
                columns=cols, index=dirs.index)),
            "fit_measures": self._fit_measures_dict(),
            "premises": {
                "table": records(self.diagnostics.table),
                "cross_correlations": json_safe(self.diagnostics.cross_correlations),
                "messages": self.diagnostics.messages,
                "remarks": self.diagnostics.remarks,
            },
            **self._shown_tests_dict(),
        }

    def _shown_tests_dict(self) -> dict[str, Any]:
        """The tests the summary prints besides the rank tests and premises:
        the main-effects and association tests, as their ``to_dict()``."""
        me = self._summary_main_effects
        assoc = self._summary_association
        return {
            "main_effects_test": None if me is None else me.to_dict(),
            "association_test": (None if assoc is None
                                 else {"not_run": assoc} if isinstance(assoc, str)
                                 else assoc.to_dict()),
        }

    def _fit_measures_dict(self) -> dict[str, Any] | None:
        """:attr:`fit_measures` as plain types, None where the summary shows n/a."""
        from ..exceptions import RowsNotInMemoryError

        try:
            fm = self.fit_measures
        except (RowsNotInMemoryError, ValueError):
            return None
        return {k: json_safe(v) for k, v in dataclasses.asdict(fm).items()}

    # -- summary ----------------------------------------------------------
    def _singular_value_table(self, max_rows: int = 10) -> pd.DataFrame:
        s = self._est.singular_values
        top = float(np.max(np.abs(s), initial=0.0))
        rel = s / top if top > 0 else np.zeros_like(s)  # unit-free: no overflow of s^2
        energy = rel**2 / np.sum(rel**2) if top > 0 else np.zeros_like(s)
        k = min(len(s), max(max_rows, self.rank))
        return pd.DataFrame(
            {
                "singular value": s[:k],
                "share": energy[:k],
                "cumulative": np.cumsum(energy)[:k],
            },
            index=pd.Index(np.arange(1, k + 1), name="k"),
        )

    def _loading_tables(self, loadings: str) -> tuple[pd.DataFrame, pd.DataFrame]:
        """Loadings of the selected variables (all of them for a dense fit;
        the others are zero by construction): per-SD or raw directions."""
        if loadings == "sd":
            ma = self._loadings(self._est.dir_a, self._block_stats[0])
            mb = self._loadings(self._est.dir_b, self._block_stats[1])
        else:
            ma, mb = self._est.dir_a, self._est.dir_b
        cols = _labels("dir", self.rank)
        la = pd.DataFrame(ma, index=self._names_a, columns=cols).iloc[self._est.rows]
        lb = pd.DataFrame(mb, index=self._names_b, columns=cols).iloc[self._est.cols]
        return la, lb

    def _block_headings(self) -> tuple[str, str]:
        """``"block a"``, ``"block b"``, or the blocks' names (``from_blocks``)."""
        names = self._model.block_names
        if tuple(names) == ("a", "b"):
            return ("block a", "block b")
        return (f"block a: {names[0]}", f"block b: {names[1]}")

    def _association_notes(self, info: dict[str, Any]) -> list[str]:
        """At p >> n (policy.association_in_summary): the test of no
        association in ``info`` (or how to run it) and the caveat on R^2."""
        assoc = self._summary_association
        if assoc is None:
            return []
        notes = [assoc] if isinstance(assoc, str) else [
            f"No association (H0: y independent of (a, b); exact permutation test of "
            f"interactions and main effects): p = {format_pvalue(assoc.pvalue)} "
            "(results.association_test())."]
        if isinstance(assoc, TestResult):
            info["No association p:"] = f"{format_pvalue(assoc.pvalue)} (permutation)"
        return notes

    def _headline(self, rank_tests: RankTestResults | LadleResults | None) -> list[str]:
        """What was found, the summary's first line: the interactions (the
        rank and the tests that chose it, with their p-values) and each
        block's main effect (its test, at the same alpha), then the
        association test where shown (:mod:`jdr_stats.fitting._found`)."""
        rt, alpha = self._rank_tests, float(self._settings.alpha or 0.05)
        names = list(self._model.block_names)
        me = first_moments(self._summary_main_effects, names, self.nobs)
        pair, nothing = f"{names[0]} and {names[1]}", False
        if isinstance(rt, LadleResults):
            inter = (f"interactions between {pair} (rank {self.rank})" if rt.rank else
                     f"no interactions ({LADLE_AT_ZERO}; rank 0, no directions)")
        elif rt is not None:
            pv = rt.table["pvalue"].iloc[:self.rank + 1]
            tests, which = pvalue_list(pv, "k"), f"{rt.method} rank tests"
            nothing = bool(len(pv)) and not pv.iloc[0] < alpha
            inter = (f"no interactions (rank 0 not rejected: {tests}; no directions"
                     + (f"; rank {self.rank} fitted)" if self.rank else ")") if nothing
                     else f"interactions between {pair} (rank {self.rank}; {tests})")
        clause = main_effects_clause(names, me, alpha)
        if isinstance(rt, LadleResults):  # a criterion: no level, so no verdicts
            head = (f"Found: {inter}; main-effects tests: "
                    + "; ".join(f"{n}: {me[n].p() if me[n].ran else me[n].phrase(alpha)}"
                                for n in names) + " (ladle estimator: no test level)")
        elif rt is None:
            head = (f"Fitted: rank {self.rank} (given; results.rank_tests() tests it); "
                    f"main-effects tests at alpha = {alpha:g}: {clause}")
        else:
            nothing = nothing and all(m.ran and not m.found(alpha) for m in me.values())
            head = ("Found: no evidence of a link: " if nothing else "Found: ") + (
                f"{inter}; {clause}; {which} and main-effects tests at alpha = {alpha:g}")
        if rank_tests is not None:
            pv = rank_tests.table["pvalue"].iloc[:self.rank + 1]
            head += (f"; {rank_tests.method} tests: " + ", ".join(
                f"k = {k}: {p_text(p)}" for k, p in pv.items()))
        assoc = self._summary_association
        if isinstance(assoc, TestResult):
            head += f"; no association: {p_text(assoc.pvalue)} (permutation)"
        head += "."
        if not isinstance(rt, LadleResults) and any(m.found(alpha) for m in me.values()):
            head += " " + NOT_IN_DIRECTIONS
        return [head]

    def _summary_info(self) -> dict[str, Any]:
        """The summary's model information: the data, the rank and how it was
        chosen, the whitening, the sparsity, the weights and the response."""
        m = self._model
        info: dict[str, Any] = {
            "Model:": "Joint dimension reduction",
            "Dependent variable:": m.endog_name,
            "No. observations:": self.nobs,
            "n1 (block a):": len(m.data.exog_names_a),
            "n2 (block b):": len(m.data.exog_names_b),
            "Rank:": self.rank,
            "Rank chosen by:": (
                "given" if self.rank_method is None
                else LADLE_CHOSEN_BY if self.rank_method == "ladle"
                else f"{self.rank_method} tests, alpha={self._settings.alpha}"
            ),
            "Whitening:": self.whitening + (
                " (across blocks)" if self._settings.joint else ""),
            "Sparsity (s1, s2):": (
                "none (dense)" if self.sparsity is None
                else f"{self.sparsity}" + (" (auto)" if self.support_tests is not None
                                           else " (cv)" if self.sparsity_cv is not None
                                           else "")
            ),
            "Weights:": (
                "case weights" if m.data.weighted
                else "none"
            ),
            **_response_lines(m.data),
        }
        return info

    def _rank_test_sections(self, rank_tests: RankTestResults | None, full: bool,
                            tables: list[tuple[Any, ...]], out: list[str]) -> None:
        """The tables and notes of the fit's own rank tests (or ladle) and of
        ``rank_tests`` when given, appended to ``tables`` and ``out``."""
        for rt in (self._rank_tests, rank_tests):
            if isinstance(rt, LadleResults):
                tables.append(("Ladle criterion", rt.table))
                if rt.rank == 0:
                    out.append(f"Rank: {LADLE_AT_ZERO}; rank 0 (no directions).")
            elif rt is not None:
                # the fit's choice of method is printed from its settings
                own = self._settings.rank_choice if rt is self._rank_tests else None
                tab, scaled = rt.table, ""
                if own is not None and not full and {"eff_df", "scale"} <= set(tab.columns) \
                        and tab["df"].isna().all():  # the note says why no df
                    tab, scaled = tab.drop(columns="df"), ", referred to scale * chi2(eff_df)"
                tables.append((f"Rank tests ({rt.method})", tab))
                if own is not None:  # the fit's own tests: their references in short
                    ref = _rank_reference_note(rt)
                    if not full:  # the references: notes="full" (the last note says so)
                        ref = ref.removesuffix("references: results.rank_test_table.summary("
                                               "notes='full').").removesuffix("; ")
                    out.append(f"Rank method: {own.name} ({own.short}){scaled}"
                               + (f"; {ref}" if ref else "") + ("" if ref.endswith(".") else "."))
                if own is None or full:
                    out += [f"Rank tests: {ref}" for ref in rt.references]

    def _selection_notes(self, full: bool) -> list[str]:
        """The notes on the selected variables: the support of a sparse fit, how
        its sparsity was chosen, the coordinate tests that chose it."""
        notes: list[str] = []
        if self.sparsity is not None:
            notes.append(
                f"Selected variables: block a {self.support_a}; block b {self.support_b}; "
                + ("the loadings of the other variables are zero and not shown." if full
                   else "the others' loadings are zero.")
            )
        if self._settings.sparsity_choice is not None:
            notes.append(f"Sparsity {self._settings.sparsity_choice.name} "
                         f"({self._settings.sparsity_choice.reason}); results.sparsity_cv.")
        if self.support_tests is not None:
            notes.append(self._settings.support_note or (
                "Sparsity chosen by the coordinate tests of select_support "
                f"({self.support_tests.method_label}); see results.support_tests.summary()."
            ))
        elif self._settings.support_note:  # rank 0: nothing selected
            notes.append(self._settings.support_note)
        return notes

    def summary(
        self,
        *,
        rank_tests: RankTestResults | None = None,
        loadings: Literal["sd", "raw"] = "sd",
        notes: Literal["short", "full"] = "short",
    ) -> Summary:
        """A statsmodels ``Summary``: what was found (the rank and the test
        that chose it), model information, singular values, loadings of each
        block (side by side), the premise checks (:attr:`diagnostics`), the
        rank tests of a ``rank="auto"`` fit, and the table ``rank_tests``
        when one is given (from :meth:`rank_tests`).

        ``loadings="sd"`` (default) shows :attr:`loadings_a` and
        :attr:`loadings_b` (per-SD, largest 1 per column); ``"raw"`` the
        unit-length directions in the variables' own units.

        ``notes="short"`` (default) keeps the notes to a screen: each
        automatic choice with its reason, the tests' p-values and the
        premises' verdict; ``"full"`` adds what each choice implies (the
        whitening's effect on the tests, the rank tests' references) and
        shows every singular value.  The guide page "Reading the summary"
        explains each line.

        The text depends only on the fit and the arguments: calling other
        methods first never changes it.
        """
        if notes not in ("short", "full"):
            raise ValueError(f'notes must be "short" or "full"; got {notes!r}')
        if loadings not in ("sd", "raw"):
            raise ValueError(f'loadings must be "sd" or "raw"; got {loadings!r}')
        if rank_tests is not None and not isinstance(rank_tests, RankTestResults):
            raise TypeError(
                f"rank_tests must be a RankTestResults; got {type(rank_tests).__name__}"
            )
        full = notes == "full"
        m = self._model
        info = self._summary_info()
        info, r2_notes = self._with_fit_measures(info)
        la, lb = self._loading_tables(loadings)
        what = "per-SD loadings" if loadings == "sd" else "directions"
        for tab in (la, lb):  # printed side by side where they fit
            tab.attrs["beside"] = what
        blocks = zip(self._block_headings(), (la, lb), strict=True) if self.rank else ()
        sv = self._singular_value_table(len(self._est.singular_values) if full
                                        else self.rank + 3)
        n_sv = len(self._est.singular_values)
        tables: list[tuple[Any, ...]] = [
            ("k" if len(sv) == n_sv else f"k (of {n_sv})", sv, "singular values"),
            *((head, tab, f"{what}, {head}") for head, tab in blocks),  # rank 0: none
            ("Premises", self.diagnostics.table, "premises"),
        ]
        if self._summary_association is not None:  # p >> n: R^2 is descriptive only
            caveat = ("descriptive only at this width, as the directions; the tests below "
                      "are the inference.")
            r2_notes = ([f"{r2_notes[0][:-1]}; {caveat}"] if r2_notes
                        else [caveat[:1].upper() + caveat[1:]])
        premises = list(self.diagnostics.notes)
        if not full:  # the guide page is named once, in the last note
            premises = [n.replace(" (guide page 'Checking the premises')", "") for n in premises]
        out = r2_notes + self._main_effects_notes(info, full) + self._association_notes(info) \
            + premises
        whitening = inference_note(self.whitening, self._settings.whitening.short,
                                   max(info["n1 (block a):"], info["n2 (block b):"]) / self.nobs)
        # in short: the choice and its reason (what it implies: notes="full")
        head, cut, _ = whitening.partition(").")
        out.append(whitening if full or not cut else head + ").")
        if self._settings.estimator is not None:
            est = self._settings.estimator
            out.append(f"Estimator: {'joint' if est.name == 'joint' else 'per block'} "
                       f"({est.short}).")
        if self._settings.orthogonal:
            out.append(orthogonal_note(self._settings.interactions_name))
        self._rank_test_sections(rank_tests, full, tables, out)
        out += self._selection_notes(full)
        # short: the effective sample size is in the information already
        out += [n if full else n.split(" (effective sample size")[0].rstrip(".") + "."
                for n in _response_notes(m.data)]
        out.append(f"{LOADING_NOTES[loadings]} {SIGNS_NOTE}" if full
                   else SHORT_LOADING_NOTES[loadings])
        return build_summary("Joint Dimension Reduction Results", info, tables, out,
                             headline=self._headline(rank_tests))



