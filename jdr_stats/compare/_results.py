"""The one results type of :func:`jdr_stats.compare`, whatever the number
of blocks: :class:`Comparison`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from ..persistence._export import ExportMixin, records
from ..summary import SummaryMixin, build_summary, json_safe
from ._common import _unfitted_note, conclusion, out_of_sample_column, out_of_sample_conclusion

if TYPE_CHECKING:  # statsmodels on first use: fast ``import jdr_stats``
    from statsmodels.iolib.summary2 import Summary

__all__ = ["Comparison", "joint_label"]


def joint_label(names: Sequence[str]) -> str:
    """The label of the concatenated blocks in the variants' names:
    ``"[a, b]"`` (the two blocks' names) for two blocks, ``"[blocks]"`` for
    three or more."""
    return f"[{', '.join(names)}]" if len(names) == 2 else "[blocks]"


class Comparison(ExportMixin, SummaryMixin):
    """Output of :func:`jdr_stats.compare` (read-only), for any number K of
    blocks.

    Attributes
    ----------
    table : DataFrame
        With ``truth``: one row per variant (``"jdr"``, ``"sir (blocks)"``,
        ``"sir ([a, b])"``, ...; ``"[blocks]"`` for three or more blocks)
        and columns ``nsee`` (the largest block error), ``error <block>``
        (``||U_perp^T orth(U_hat)||_F / sqrt(r)``) and the principal angles
        in degrees per block (``angle <block>1``, ...; NaN for a variant not
        fitted).  Without it: one row per pair of fitted variants with the
        largest and mean principal angles (degrees) between their
        subspaces, per block (``max angle <block>``, ``mean angle <block>``).
    fit : DataFrame
        One row per variant: ``rsquared`` and ``rsquared adj`` of the
        regression of y on the variant's reduced features (``r_k`` per
        block) and the products of every pair of blocks' features (the
        measure the joint fit reports as ``rsquared``; for two blocks the
        bilinear regression; for a response of ``q > 1`` columns, Pillai's
        trace over q), in-sample; then, unless ``compare(..., cv=None)``,
        the out-of-sample measure: ``cv rsquared`` (numeric or multivariate
        response) or ``cv accuracy`` (categorical), every variant refitted
        on each training fold (:mod:`jdr_stats.compare._cv`); NaN for a
        variant not fitted.
    best : str
        The fitted variant with the largest ``rsquared``.
    unfitted : dict
        Variant name -> why it was not fitted (e.g. ``"a has 120 columns for
        40 rows"``); empty when every variant was fitted.
    estimates : dict
        Fitted variant name -> dict of bases by block name (block order).
    blocks : dict
        Block name -> width.
    rank : int or dict
        The rank of each block: an int when every block has the same rank,
        else a dict by block name (as the fit's ``rank``).
    nobs : int
        The observations the rows stand for: the rows, or the total weight
        of whole-number case weights (as the fit counts them).
    """

    def __init__(self, table: pd.DataFrame, estimates: dict[str, dict[str, np.ndarray]],
                 info: dict[str, Any], fit: pd.DataFrame, *, blocks: dict[str, int],
                 ranks: dict[str, int], unfitted: dict[str, str] | None = None,
                 notes: Sequence[str] = (), cv_note: str = "") -> None:
        self._table = table
        self._estimates = estimates
        self._info = dict(info)
        self._fit = fit
        self._blocks = dict(blocks)
        self._ranks = dict(ranks)
        self._unfitted = dict(unfitted or {})
        self._notes = list(notes)
        self._cv_note = cv_note

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore a saved comparison; one saved by an earlier version (two
        blocks: ``n1, n2`` and one rank in its information, each variant's
        bases a pair) is read into the members of every K."""
        state = dict(state)
        if "_blocks" not in state:
            state.update(_two_block_state(state))
        self.__dict__.update(state)

    @property
    def table(self) -> pd.DataFrame:
        return self._table.copy()

    @property
    def fit(self) -> pd.DataFrame:
        return self._fit.copy()

    @property
    def unfitted(self) -> dict[str, str]:
        return dict(self._unfitted)

    @property
    def best(self) -> str:
        return str(self._fit["rsquared"].dropna().idxmax())

    @property
    def estimates(self) -> dict[str, dict[str, np.ndarray]]:
        return {v: {n: b.copy() for n, b in d.items()} for v, d in self._estimates.items()}

    @property
    def blocks(self) -> dict[str, int]:
        return dict(self._blocks)

    @property
    def rank(self) -> int | dict[str, int]:
        values = set(self._ranks.values())
        return int(values.pop()) if len(values) == 1 else dict(self._ranks)

    @property
    def nobs(self) -> int:
        return int(self._info["_nobs"])

    def conclusion(self) -> str:
        """Which fitted variant's reduced features explain y best, in sample
        and (where :attr:`fit` has its column) out of sample."""
        return conclusion(self._fit, self._unfitted) + out_of_sample_conclusion(
            self._fit, self._unfitted)

    def to_dict(self) -> dict[str, Any]:
        """The comparison as plain JSON types: ``endog``, ``response``,
        ``nobs``, ``blocks`` (block name -> width), ``rank`` (:attr:`rank`),
        ``methods``, ``truth`` (bool), ``table`` (one record per row of
        :attr:`table`, its ``variant`` first; keys without spaces, e.g.
        ``error_a``, ``angle_a1``), ``fit`` (:attr:`fit`, NaN as None),
        ``best``, ``out_of_sample`` (the column of the out-of-sample measure,
        or None) and ``unfitted`` (variant -> reason).  The bases in
        :attr:`estimates` are not included (``save`` keeps them)."""
        return {
            "endog": self._info["Dependent variable:"],
            "response": self._info.get("Response:", "numeric"),
            "nobs": self.nobs,
            "blocks": dict(self._blocks), "rank": json_safe(self.rank),
            "methods": self._info["_methods"],
            "truth": self._info["Truth:"] == "given",
            "table": records(self._table),
            "fit": records(self._fit),
            "best": self.best,
            "out_of_sample": out_of_sample_column(self._fit),
            "unfitted": dict(self._unfitted),
        }

    def _baselines_note(self, full: bool) -> str:
        names = list(self._blocks)
        joint = joint_label(names)
        if not full:
            return (f"Baselines: each block alone ('blocks') and the concatenated blocks "
                    f"('{joint}'), its directions split between the blocks "
                    "(summary(notes='full')).")
        alone = ", ".join(f"y on {n}" for n in names)
        return (f"Baselines: on each block alone ({alone}; 'blocks') and on the concatenated "
                f"{joint if len(names) == 2 else 'blocks'} ('{joint}'; its sum_k r_k "
                "directions split into each block's top-r_k left singular subspace of an "
                "orthonormal basis's rows of that block).")

    def _measure_note(self, full: bool) -> str:
        measure = self._info.get("_measure", "")
        if not full:
            return (f"R-squared: y on each variant's r reduced features per block and their "
                    f"products (equal numbers of features; the joint fit's rsquared{measure}),"
                    " in-sample" + (f". {self._cv_note} " if self._cv_note else
                                    " (optimistic: directions and regression from the "
                                    "same rows). ") + self.conclusion())
        return ("R-squared: the regression of y on each variant's reduced features (r_k per "
                "block) and the products of every pair of blocks' features (the joint fit's "
                f"rsquared{measure}; for two blocks the bilinear regression), the same r_k "
                "features per block for every variant (equal numbers of features), in-sample"
                + (f". {self._cv_note} " if self._cv_note else " (optimistic for all: "
                   "directions and regression from the same rows). ") + self.conclusion())

    def summary(self, *, notes: Literal["short", "full"] = "short") -> Summary:
        """The fit measures and :attr:`table`, with notes on how the variants
        were fitted and the conclusion; ``notes="full"`` says how the
        concatenated blocks' directions are split and what the measure is."""
        if notes not in ("short", "full"):
            raise ValueError(f"notes must be 'short' or 'full'; got {notes!r}")
        full = notes == "full"
        lines = [self._baselines_note(full), *self._notes]
        if self._unfitted:
            lines.append(_unfitted_note(self._unfitted))
        tables: list[tuple[str, pd.DataFrame, str] | tuple[str, pd.DataFrame]] = [
            ("method", self._fit, "fit measures")]
        if len(self._table):  # no pair of variants with one variant fitted
            lines.append("nsee = the largest block error; angles in degrees."
                         if self._info["Truth:"] == "given"
                         else "Principal angles (degrees) between the variants' subspaces.")
            tables.append(("variant", self._table))
        lines.append(self._measure_note(full))
        info = {k: v for k, v in self._info.items() if not k.startswith("_")}
        return build_summary("Comparison of dimension reduction methods", info, tables, lines)


def comparison_info(*, endog: str, response: str, nobs: int, blocks: dict[str, int],
                    ranks: dict[str, int], methods: list[str], main_effects: bool,
                    truth: bool, measure: str, rows: int | None = None) -> dict[str, Any]:
    """The information a :class:`Comparison` prints (keys starting with
    ``_`` are kept, not printed): ``nobs`` the observations, ``rows`` the
    rows when whole-number case weights make them differ (as the fit's
    summary prints them)."""
    same = len(set(ranks.values())) == 1
    return {
        "Dependent variable:": endog,
        "Response:": response,
        "No. observations:": (nobs if rows is None or rows == nobs
                              else f"{nobs} ({rows} rows, whole-number case weights)"),
        "_nobs": int(nobs),
        "Blocks:": ", ".join(f"{n} ({w})" for n, w in blocks.items()),
        "Rank:": (next(iter(ranks.values())) if same
                  else ", ".join(f"{n}={r}" for n, r in ranks.items())),
        "Methods:": ", ".join(methods) + (" (jdr also with main effects)"
                                          if main_effects else ""),
        "Truth:": "given" if truth else "none",
        "_methods": list(methods),
        "_measure": measure,
    }


def _two_block_state(state: dict[str, Any]) -> dict[str, Any]:
    """The attributes a two-block comparison saved by an earlier version
    lacks, from those it has."""
    info = dict(state["_info"])
    n1, n2 = (int(v) for v in str(info["n1, n2:"]).split(","))
    rank = int(info["Rank:"])
    blocks, ranks = {"a": n1, "b": n2}, {"a": rank, "b": rank}
    methods = str(info["Methods:"])
    new = comparison_info(
        endog=info["Dependent variable:"], response=info.get("Response:", "numeric"),
        nobs=int(info["No. observations:"]), blocks=blocks, ranks=ranks,
        methods=methods.split(" (")[0].split(", "),
        main_effects=methods.endswith("(jdr also with main effects)"),
        truth=info["Truth:"] == "given", measure=info.get("_measure", ""))
    return {"_info": new, "_blocks": blocks, "_ranks": ranks,
            "_cv_note": state.get("_cv_note", ""), "_unfitted": state.get("_unfitted", {}),
            "_notes": state.get("_notes", []),
            "_estimates": {v: {"a": np.asarray(p[0]), "b": np.asarray(p[1])}
                           for v, p in state["_estimates"].items()}}
