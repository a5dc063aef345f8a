"""The results of the coordinate tests: the table, its summary and notes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from statsmodels.iolib.summary2 import Summary

from ..inference.hypotheses import TestTable
from ..summary import build_summary

__all__ = ["SupportResults", "method_label", "notes_of", "support_table"]


@dataclass(frozen=True)
class SupportResults(TestTable):
    """Coordinate tests of every variable and the selected support.

    Attributes
    ----------
    table : DataFrame
        One row per variable, indexed by ``(block, variable)``, with columns
        ``statistic``, ``df``, ``pvalue``, ``qvalue`` (Benjamini-Hochberg or
        Benjamini-Yekutieli within the block) and ``selected``; the threshold
        rule adds ``max_abs_t`` and stability selection adds ``frequency``.
    title, notes :
        As for :class:`~jdr_stats.inference.hypotheses.TestTable`.
    method : {"wild", "studentized-permutation", "chi2", "permutation"}
        The key of the test (``select_support(method=...)``).
    method_label : str
        The test as a sentence (e.g. "conditional robust score test, wild
        bootstrap, B=499").
    test : {"conditional", "marginal"}
    rule : {"bh", "threshold", "stability"}
    fdr : float
        Target false discovery rate of the Benjamini-Hochberg rule.
    rank : int or None
        Rank the conditional test (or stability selection) used.
    settings : dict
        Remaining options (covariance, n_perm, threshold, ...).
    """

    __test__ = False

    test: str = "marginal"
    rule: str = "bh"
    fdr: float = 0.1
    rank: int | None = None
    settings: dict | None = None

    def _block(self, block: str) -> pd.DataFrame:
        rows = self.table.xs(block, level="block")
        assert isinstance(rows, pd.DataFrame)  # a cross-section of a frame's level
        return rows

    @property
    def selected_a(self) -> list[str]:
        """Names of the selected variables of block a."""
        t = self._block("a")
        return [str(v) for v in t.index[t["selected"].to_numpy(bool)]]

    @property
    def selected_b(self) -> list[str]:
        """Names of the selected variables of block b."""
        t = self._block("b")
        return [str(v) for v in t.index[t["selected"].to_numpy(bool)]]

    @property
    def counts(self) -> tuple[int, int]:
        """Numbers of selected variables ``(s1, s2)``."""
        return len(self.selected_a), len(self.selected_b)

    def to_dict(self) -> dict[str, Any]:
        """:meth:`TestTable.to_dict` (one record per variable, with its
        ``block`` and ``variable``) plus ``selected_a`` and ``selected_b``."""
        return {**super().to_dict(), "selected_a": self.selected_a,
                "selected_b": self.selected_b}

    def summary(self) -> Summary:
        """A statsmodels ``Summary``: settings, counts, the table of tests."""
        info = {
            "Method:": self.method_label or self.method,
            "Test:": self.test,
            "Selection rule:": self.rule,
            "Target FDR:": self.fdr if self.rule in ("bh", "by") else "-",
            "Rank:": "-" if self.rank is None else self.rank,
            "Selected (a, b):": self.counts,
        }
        shown = self.table.reset_index(level="block")
        shown.index.name = "variable"
        shown["selected"] = shown["selected"].astype(bool)
        return build_summary(self.title, info, [("variable", shown)], self.notes)


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
