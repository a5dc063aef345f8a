"""The results of the coordinate tests: the table, its summary and notes."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..inference.hypotheses import TestTable, renamed_blocks
from ..summary import build_summary

if TYPE_CHECKING:  # statsmodels on first use: fast ``import jdr_stats``
    from statsmodels.iolib.summary2 import Summary

__all__ = ["SupportResults", "method_label", "notes_of", "support_table"]


@dataclass(frozen=True)
class SupportResults(TestTable):
    """Coordinate tests of every variable and the selected support, for any
    number of blocks.

    Two blocks: the tests of :func:`jdr_stats.support.select_support`
    (q-values within each block).  Three or more blocks: the K-block tests
    of :meth:`JointDimReduction.select_support` (the robust conditional Wald
    test of the per-block estimator, or the joint estimator's own variable
    tests, each given its block's rank; q-values over all blocks'
    variables together).  The members are the same.

    Attributes
    ----------
    table : DataFrame
        One row per variable, indexed by ``(block, variable)`` (the block
        by its name), with columns ``statistic``, ``df``, ``pvalue``,
        ``qvalue`` and ``selected``; the two-block threshold rule adds
        ``max_abs_t`` and stability selection adds ``frequency``.
    title, notes :
        As for :class:`~jdr_stats.inference.hypotheses.TestTable`.
    method : {"wild", "studentized-permutation", "chi2", "permutation"}
        The key of the test (``select_support(method=...)``; the K-block
        tests are ``"chi2"``: Wald statistics referred to ``chi2(r_k)``).
    method_label : str
        The test as a sentence (e.g. "conditional robust score test, wild
        bootstrap, B=499").
    test : {"conditional", "marginal", "combined"}
    rule : {"bh", "by", "threshold", "stability"}
    fdr : float
        Target false discovery rate of the Benjamini-Hochberg
        (Benjamini-Yekutieli) rule.
    rank : int, dict or None
        Rank the conditional test (or stability selection) used: an int
        when every block has the same rank, else a dict by block name (the
        convention of ``results.rank``); None for the marginal test.
    ranks : dict or None
        The same, always by block name (None for the marginal test).
    settings : dict
        Remaining options (covariance, n_perm, threshold, ...) and
        ``estimator`` (``"joint"`` or ``"per-block"``).
    block_names : tuple of str
    support : dict of list of str
        The selected variables of each block, by name, in the block's order.
    counts : tuple of int
        The number of selected variables of each block (``(s1, s2)`` for two
        blocks).
    selected_a, selected_b : list of str
        The two-block view of :attr:`support` (its first and second block);
        an ``AttributeError`` for three or more blocks.
    """

    __test__ = False

    test: str = "marginal"
    rule: str = "bh"
    fdr: float = 0.1
    rank: int | dict[str, int] | None = None
    settings: dict | None = None
    # a class-level default: a file written before it existed reads as blocks a and b
    block_names: tuple[str, ...] = field(default=("a", "b"), repr=False)

    def named(self, names: Sequence[str]) -> SupportResults:
        """The same tests under the block names ``names`` (a model's
        :attr:`~jdr_stats.JointDimReduction.block_names`); itself when they
        are its names already."""
        new = renamed_blocks(self.block_names, names)
        if new is None:
            return self
        table = self.table.rename(index=new, level="block")
        rank = self.rank
        if isinstance(rank, dict):
            rank = {new[k]: v for k, v in rank.items()}
        return replace(self, table=table, block_names=tuple(new.values()), rank=rank)

    @property
    def support(self) -> dict[str, list[str]]:
        """The selected variables of each block, in the block's order."""
        out: dict[str, list[str]] = {str(n): [] for n in self.block_names}
        index = self.table.index
        for block, var, sel in zip(index.get_level_values("block"),
                                   index.get_level_values("variable"),
                                   self.table["selected"], strict=True):
            if sel:
                out[str(block)].append(str(var))
        return out

    @property
    def ranks(self) -> dict[str, int] | None:
        """Each block's rank, by name (None for the marginal test)."""
        if self.rank is None:
            return None
        if isinstance(self.rank, dict):
            return dict(self.rank)
        return dict.fromkeys(self.block_names, int(self.rank))

    def _two_blocks(self, which: str) -> list[str]:
        if len(self.block_names) != 2:
            raise AttributeError(
                f"selected_{which} is the two-block view; this selection has "
                f"{len(self.block_names)} blocks: use support[name] "
                f"(names {list(self.block_names)})")
        return self.support[self.block_names[0 if which == "a" else 1]]

    @property
    def selected_a(self) -> list[str]:
        """Names of the selected variables of the first of two blocks."""
        return self._two_blocks("a")

    @property
    def selected_b(self) -> list[str]:
        """Names of the selected variables of the second of two blocks."""
        return self._two_blocks("b")

    @property
    def counts(self) -> tuple[int, ...]:
        """Numbers of selected variables of each block (``(s1, s2)``)."""
        return tuple(len(v) for v in self.support.values())

    def to_dict(self) -> dict[str, Any]:
        """:meth:`TestTable.to_dict` (one record per variable, with its
        ``block`` and ``variable``) plus ``support`` (by block) and, for two
        blocks, ``selected_a`` and ``selected_b``."""
        out = {**super().to_dict(), "support": self.support}
        if len(self.block_names) == 2:
            out.update(selected_a=self.selected_a, selected_b=self.selected_b)
        return out

    def summary(self) -> Summary:
        """A statsmodels ``Summary``: settings, counts, the table of tests."""
        if len(self.block_names) > 2:
            return self._kblock_summary()
        info = {
            "Method:": self.method_label or self.method,
            "Test:": self.test,
            "Selection rule:": self.rule,
            "Target FDR:": self.fdr if self.rule in ("bh", "by") else "-",
            "Rank:": "-" if self.rank is None else self.rank,
            f"Selected ({', '.join(self.block_names)}):": self.counts,
        }
        shown = self.table.reset_index(level="block")
        shown.index.name = "variable"
        shown["selected"] = shown["selected"].astype(bool)
        return build_summary(self.title, info, [("variable", shown)], self.notes)

    def _kblock_summary(self) -> Summary:
        """The summary of three or more blocks: the variables as ``block:
        variable``; what grows with the number of blocks (each block's rank
        and count) in the notes, so that the header stays 100 wide."""
        rule = "Benjamini-Hochberg" if self.rule == "bh" else "Benjamini-Yekutieli"
        ranks = self.ranks or {}
        same = isinstance(self.rank, int)
        info: dict[str, Any] = {
            "Test:": self.method_label,
            "Rule:": f"{rule} at {self.fdr:g}",
            "Ranks:": f"{self.rank} (every block)" if same else "by block (below)",
            "Selected:": f"{sum(self.counts)} of {len(self.table)} variables",
            "Estimator:": (self.settings or {}).get("estimator", "-"),
        }
        notes = [f"Selected: {rule} q-value <= {self.fdr:g}, over all blocks' variables "
                 "together; by block: "
                 + ", ".join(f"{n} {len(v)}" for n, v in self.support.items()) + ".",
                 *([] if same else ["Ranks: " + ", ".join(f"{n}={r}"
                                                           for n, r in ranks.items()) + "."]),
                 *self.notes]
        tab = self.table.copy()
        tab.index = pd.Index([f"{b}: {v}" for b, v in tab.index])
        return build_summary(self.title, info, [("variable", tab, "coordinate tests")],
                             notes, float_format="%.4g")


def support_table(
    names: dict[str, list[str]],
    blocks: dict[str, tuple[Any, np.ndarray, np.ndarray, dict[str, np.ndarray]]],
) -> pd.DataFrame:
    """One row per variable, indexed by ``(block, variable)``.

    ``blocks`` maps ``"a"``/``"b"`` to ``(tests, qvalues, selected, extra)``.
    """
    frames = []
    for block, (res, q, sel, extra) in blocks.items():
        cols = {
            "statistic": res.stat,
            "df": np.full(res.stat.shape, res.df),
            "pvalue": res.pvalue,
            "qvalue": q,
            **extra,
            "selected": np.asarray(sel, dtype=bool),
        }
        nm = names[block]
        idx = pd.MultiIndex.from_arrays([[block] * len(nm), list(nm)], names=["block", "variable"])
        frames.append(pd.DataFrame(cols, index=idx))
    return pd.concat(frames)


def method_label(method: str, test: str, covariance: str, n_perm: int, n_boot: int) -> str:
    if method == "wild":
        return f"{test} robust score test, wild bootstrap, B={n_boot}"
    if method == "studentized-permutation":
        return f"{test} robust score test, studentized permutation, B={n_perm}"
    if method == "chi2" and covariance == "factored":
        return f"{test} partial F test (reverse regression)"
    if method == "chi2" and covariance == "hc3":
        return f"{test} robust (HC3) Wald test of the reverse regression, F"
    if method == "chi2":
        return f"{test} Wald test, sandwich covariance, chi2"
    return f"{test} partial F test, permutation of partial residuals, B={n_perm}"


def notes_of(
    test: str, method: str, covariance: str, rule: str, standardize: bool,
    fdr: float, rank: int | None, settings: dict,
) -> list[str]:
    coords = "Sigma_a^{-1} S Sigma_b^{-1}" if standardize else "S (centred cross moment)"
    blocks = ("each block replaced by its residual on the other block (the joint "
              "estimator: the blocks may correlate)" if settings.get("estimator") == "joint"
              else "independent blocks")
    notes = [
        "H0 (per variable): the variable is not in its block's subspace (its row of "
        f"U, resp. V, is zero); tested as: its row (column) of {coords} is zero.",
    ]
    if test == "conditional":
        notes.append(
            f"Conditional test: the row projected on the other block's rank-{rank} "
            "subspace fitted without the variable; df = rank."
        )
    else:
        notes.append("Marginal test: the whole row; df = width of the other block.")
    if method == "chi2" and covariance == "factored":
        notes.append(
            "stat = df x F; p-value from F(df, m - "
            + ("width of the block" if standardize else "1")
            + " - df), exact for Gaussian blocks (chi2(df) asymptotically)."
        )
    elif method == "chi2" and covariance == "hc3":
        notes.append(
            "stat: robust (HC3) Wald statistic of the reverse regression; p-value "
            "from F(df, residual df) of stat / df."
        )
    elif method == "chi2":
        notes.append("stat: Wald statistic with the sandwich covariance; p-value from chi2(df).")
    if method in ("wild", "studentized-permutation"):
        how = (
            f"wild bootstrap (Rademacher signs on the leverage-scaled restricted "
            f"residuals), B={settings['n_boot']}"
            if method == "wild"
            else f"studentized permutation of the restricted residuals, B={settings['n_perm']}"
        )
        notes.append(
            "stat: heteroscedasticity-robust score statistic of the reverse regression; "
            f"p-value (1 + #{{T* >= T}}) / (B + 1) from the {how}."
        )
        notes.append(
            f"Assumptions: {blocks}; linear conditional mean of each block "
            "given its reduction; i.i.d. rows with finite fourth moments; no "
            "homoscedasticity, Gaussianity or exchangeability needed (asymptotically "
            "valid; measured FDR on heavy-tailed correlated blocks in the docs)."
        )
        if test == "marginal" and method == "wild":
            notes.append(
                "The marginal test (df = width of the other block) is conservative "
                "when m is not large compared with the df (study_support_robust); "
                "given a rank, the conditional test has more power."
            )
    elif method == "chi2":
        if covariance == "factored":
            notes.append(
                f"Assumptions: {blocks}; linear conditional mean of each "
                "block given its reduction; the variable's partial residual "
                "independent of the reductions, the other block and y (Gaussian "
                "blocks or independent variables); exact F for Gaussian blocks, "
                "asymptotic otherwise.  It does not hold the FDR on heavy-tailed, "
                "correlated blocks (study_support_robust); the default method='wild' does."
            )
        else:
            notes.append(
                f"Assumptions: {blocks}; linear conditional mean of each "
                "block given its reduction; finite fourth moments; m large "
                "compared with the df (sandwich covariance)."
            )
    elif method == "permutation":
        notes.append(
            "Permutation p-values (1 + #{T* >= T}) / (B + 1): exact when the "
            "variable's partial residual is exchangeable and independent of the "
            "rest under H0 (no moment conditions); one permutation is shared by "
            "all variables of a block."
        )
    notes.append(_rule_note(rule, fdr, settings))
    return notes


def _rule_note(rule: str, fdr: float, settings: dict) -> str:
    """The note that says how the selection rule chose the variables."""
    if rule == "bh":
        return f"Selected: Benjamini-Hochberg q-value <= {fdr}, within each block."
    if rule == "by":
        return (
            f"Selected: Benjamini-Yekutieli q-value <= {fdr}, within each block "
            "(valid under any dependence between the tests)."
        )
    if rule == "threshold":
        return (
            "Selected (threshold rule, section 5.3): some entry of the variable's row "
            f"exceeds {settings['threshold']:.3g} sandwich standard errors; no error "
            "rate guarantee."
        )
    return (
        "Selected (stability selection): selected by the sparse fit with "
        f"sparsity {settings['sparsity']} in at least "
        f"{settings['stability_threshold']:g} of {settings['n_subsamples']} "
        "complementary half-samples; Meinshausen-Buhlmann bound on the expected "
        f"number of false selections (a, b): "
        f"({settings['pfer_bound'][0]:.3g}, {settings['pfer_bound'][1]:.3g})."
    )
