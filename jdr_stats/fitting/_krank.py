"""The rank tests of a K-block fit through the registry of rank tests: the
choice of each block's rank from a registered test's tables over the
whitened K-block design (:class:`~jdr_stats.inference._kblock_design.KBlockDesign`),
the warning of a block with no evidence of any direction, and the table
object :meth:`KBlockResults.rank_tests` returns."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from typing import Any

import pandas as pd

from .. import policy
from ..exceptions import RankSelectionWarning
from ..inference._kblock_design import KBlockDesign
from ..inference.kblock_rank import choose_block_rank
from ..inference.rank_methods import RankTestMethod, RowOptions
from ..persistence._export import ExportMixin
from ..summary import JDRSummary, build_summary

__all__ = ["KBlockRankTests", "block_rank_choice", "method_text"]


def method_text(method: RankTestMethod) -> str:
    """The test's words in the fit's settings and summaries (the robust
    test's ``"robust per-block"``, as before the registry served K blocks)."""
    return "robust per-block" if method.name == "robust" else method.name


def block_rank_choice(design: KBlockDesign, method: RankTestMethod, alpha: float,
                      stop: bool) -> tuple[dict[str, pd.DataFrame], dict[str, int],
                                           policy.Choice | None]:
    """Each block's table of ``method`` (up to the first rank not rejected at
    ``alpha`` when ``stop``), the ranks chosen and the influence route the
    test took (None when it reports none)."""
    assert method.tables is not None  # rank_methods.kblock_method refuses it
    tables = method.tables(design, RowOptions(stop_alpha=alpha if stop else None))
    ranks = {n: choose_block_rank(tables[n], alpha, w)
             for n, w in zip(design.names, design.widths, strict=True)}
    if stop:
        _warn_no_evidence(tables, alpha, design.widths, method_text(method), stacklevel=5)
    return tables, ranks, design.cache.get("influence")


def _warn_no_evidence(tables: Mapping[str, pd.DataFrame], alpha: float,
                      widths: Sequence[int], test: str = "robust per-block",
                      stacklevel: int = 4) -> None:
    """``rank="auto"``: a :class:`~jdr_stats.exceptions.RankSelectionWarning`
    naming the blocks whose test of ``H0: rank_k <= 0`` was not rejected at
    ``alpha`` (no evidence of any direction; rank 0 is returned), as the
    two-block fit warns."""
    none = {n: float(t["pvalue"].iloc[0]) for (n, t), w in zip(tables.items(), widths,
                                                               strict=True)
            if choose_block_rank(t, alpha, w) == 0}
    if not none:
        return
    which = ", ".join(f"{n!r} (p = {p:.3g})" for n, p in none.items())
    warnings.warn(
        f"no rank test rejected H0: rank_k <= 0 for block(s) {which} ({test} "
        f"tests, alpha={alpha}): the data show no evidence of any direction of these "
        "blocks' pieces (y may still depend on the blocks through additive or even links); "
        "returning rank 0 (no directions) for them", RankSelectionWarning, stacklevel=stacklevel)




class KBlockRankTests(ExportMixin):
    """The per-block rank tests of a K-block fit
    (:meth:`KBlockResults.rank_tests`).

    ``tables``: by block, the tests of ``H0: rank_k <= r`` (columns
    ``statistic, df, pvalue, eff_df, scale``; ``df`` is NaN: the reference
    is ``scale * chi2(eff_df)``); ``table``: all blocks, indexed by
    ``(block, rank)``; :meth:`select_rank`; :meth:`summary`.
    """

    def __init__(self, tables: Mapping[str, pd.DataFrame], influence: str,
                 method: str = "robust per-block") -> None:
        self._tables = {n: t.copy() for n, t in tables.items()}
        self._influence = influence
        self._method = method

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        return {n: t.copy() for n, t in self._tables.items()}

    @property
    def table(self) -> pd.DataFrame:
        return pd.concat(self._tables, names=["block"])

    def select_rank(self, alpha: float = 0.05) -> dict[str, int]:
        """Each block's first rank whose test does not reject at ``alpha``
        (the block's width when every test rejects)."""
        if not 0 < alpha < 1:
            raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
        return {n: choose_block_rank(t, alpha, len(t)) for n, t in self._tables.items()}

    def summary(self) -> JDRSummary:
        tables = [(f"{n}: H0 rank <=", t, f"rank tests, block {n}")
                  for n, t in self._tables.items()]
        return build_summary(
            "Per-block rank tests of the K-block fit",
            {"Blocks:": ", ".join(self._tables), "Test:": self._method},
            tables,
            ["H0: block k needs at most r directions (the part of its combined pieces "
             "outside the top r); statistic: the sum of the eigenvalues beyond r; "
             "reference scale * chi2(eff_df) (theory page 'K blocks'). Rows' influences: "
             f"{self._influence}."],
            float_format="%.4g")

    def __str__(self) -> str:
        return str(self.summary())

    def to_dict(self) -> dict[str, Any]:
        return {"method": self._method, "influence": self._influence,
                "tests": {n: t.reset_index().to_dict(orient="list")
                          for n, t in self._tables.items()}}
