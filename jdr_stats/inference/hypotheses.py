"""Small objects for hypothesis tests: one test, and a table of tests.

Every test of the package (rank tests, coordinate and support tests, the
baselines' dimension tests) returns one of these, so they print alike.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from ..persistence._export import ExportMixin, clean_keys, records
from ..summary import SummaryMixin, build_summary, format_pvalue, json_safe

if TYPE_CHECKING:  # statsmodels on first use: fast ``import jdr_stats``
    from statsmodels.iolib.summary2 import Summary

__all__ = [
    "TEST_COLUMNS",
    "InapplicableTestResult",
    "TestResult",
    "TestTable",
    "bh_qvalues",
    "fdr_qvalues",
    "perm_pvalue",
    "renamed_blocks",
]


#: The first columns of every test table, in this order.
TEST_COLUMNS = ("statistic", "df", "pvalue")


@dataclass(frozen=True)
class TestResult(ExportMixin, SummaryMixin):
    """One hypothesis test: statistic, degrees of freedom, p-value and its null.

    Attributes
    ----------
    statistic : float
    df : float or None
        Degrees of freedom of the reference distribution (numerator df of an
        F); NaN or None where no single df applies (a weighted chi-square, a
        permutation distribution).
    pvalue : float
    df_denom : float or None
        Denominator degrees of freedom of an F reference; None otherwise.
    null : str
        The null hypothesis, as a sentence.
    distribution : str
        The reference distribution, e.g. ``"chi2(12)"``, ``"F(3, 990)"``,
        ``"scaled chi2"``, ``"permutation"``.
    method : str
        A short key (``"wald"``, ``"robust"``, ...).
    name : str
        What is tested, as a title.

    Examples
    --------
    >>> from jdr_stats.inference.hypotheses import TestResult
    >>> t = TestResult(statistic=9.5, df=3.0, pvalue=0.0233, null="r <= 1",
    ...                distribution="chi2(3)", method="chi2", name="Rank test")
    >>> t.to_dict()["pvalue"], t.stat == t.statistic
    (0.0233, True)
    >>> "H0: r <= 1" in str(t)
    True
    """

    __test__ = False

    statistic: float
    df: float | None
    pvalue: float
    df_denom: float | None = None
    null: str = ""
    distribution: str = ""
    method: str = ""
    name: str = "Hypothesis test"

    @property
    def stat(self) -> float:
        """Alias of :attr:`statistic` (linearmodels' name)."""
        return self.statistic

    @property
    def applicable(self) -> bool:
        """False for an :class:`InapplicableTestResult`."""
        return True

    def _info(self) -> dict[str, object]:
        df = "-" if self.df is None or not np.isfinite(self.df) else f"{self.df:g}"
        if self.df_denom is not None:
            df += f", {self.df_denom:g}"
        return {"Statistic:": f"{self.statistic:.4g}", "df:": df,
                "P-value:": format_pvalue(self.pvalue),
                "Distribution:": self.distribution or "-", "Method:": self.method or "-"}

    def summary(self) -> Summary:
        """A statsmodels ``Summary`` with the numbers and the null hypothesis
        (a long reference distribution: its first clause in the header, the
        whole of it in the notes, so that the table stays 100 wide)."""
        notes = [f"H0: {self.null}"] if self.null else []
        info = self._info()
        dist = str(info["Distribution:"])
        if len(dist) > _SHORT_DISTRIBUTION:
            info["Distribution:"] = _first_clause(dist)
            notes.append(f"Distribution: {dist}.")
        return build_summary(self.name, info, (), notes)

    def to_dict(self) -> dict[str, Any]:
        """Every field as plain JSON types (NaN as ``None``)."""
        out = {f.name: getattr(self, f.name) for f in fields(self)}
        return json_safe(out)


#: the longest reference distribution shown whole in a test's header
_SHORT_DISTRIBUTION = 40


def _first_clause(text: str) -> str:
    """``text`` up to its first ", " or ": " outside parentheses."""
    depth = 0
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and ch in ",:" and text[i + 1:i + 2] == " ":
            return text[:i]
    return text


@dataclass(frozen=True)
class InapplicableTestResult(TestResult):
    """A test that does not apply to these data: NaN numbers and a ``reason``.

    Examples
    --------
    >>> from jdr_stats.inference.hypotheses import InapplicableTestResult
    >>> t = InapplicableTestResult(reason="no complement left at k = min(n1, n2)",
    ...                            name="Rank test k=3")
    >>> t.applicable, t.to_dict()["pvalue"]
    (False, None)
    """

    statistic: float = float("nan")
    df: float | None = None
    pvalue: float = float("nan")
    reason: str = ""

    @property
    def applicable(self) -> bool:
        return False

    def summary(self) -> Summary:
        info = {"Statistic:": "-", "P-value:": "-", "Method:": self.method or "-"}
        return build_summary(self.name, info, (), [f"Not applicable: {self.reason}"])


def _check_columns(table: pd.DataFrame, owner: str) -> None:
    cols = [str(c) for c in table.columns]
    if tuple(cols[:3]) != TEST_COLUMNS:
        raise ValueError(
            f"{owner} table must start with the columns {list(TEST_COLUMNS)}; got {cols}"
        )
    if "qvalue" in cols and cols.index("qvalue") != 3:
        raise ValueError(f"{owner} table: qvalue must be the fourth column; got {cols}")


def renamed_blocks(current: Sequence[str], names: Sequence[str]) -> dict[str, str] | None:
    """The map from a table's block names ``current`` to ``names`` (a
    model's :attr:`~jdr_stats.JointDimReduction.block_names`), None when
    they are the same names; a ``ValueError`` when the counts differ."""
    new = tuple(str(n) for n in names)
    if new == tuple(current):
        return None
    if len(new) != len(current):
        raise ValueError(f"names: one per block {list(current)}; got {list(new)}")
    return dict(zip(current, new, strict=True))


@dataclass(frozen=True)
class TestTable(ExportMixin, SummaryMixin):
    """A sequence of tests as a DataFrame plus a summary.

    Attributes
    ----------
    table : DataFrame
        One row per null hypothesis; its columns are always ``statistic``,
        ``df``, ``pvalue``, then ``qvalue`` where the p-values are adjusted,
        then columns of the method.
    title : str
    method : str
        A short key (``"robust"``, ``"chi2"``, ``"wild"``, ...).
    notes : list of str
        Null hypothesis, method and assumptions, printed under the table.
    method_label : str
        The method as a sentence (the summary prints it; defaults to
        ``method``).
    pvalue_columns : tuple of str
        Method-specific columns that also hold p-values (formatted as such).

    Examples
    --------
    >>> import pandas as pd
    >>> from jdr_stats.inference.hypotheses import TestTable
    >>> t = TestTable(pd.DataFrame({"statistic": [9.5], "df": [3.0], "pvalue": [0.023]}),
    ...               "A test", "chi2")
    >>> t.pvalues.tolist(), t.to_dict()["tests"][0]["df"]
    ([0.023], 3.0)
    """

    __test__ = False

    table: pd.DataFrame
    title: str
    method: str
    notes: list[str] = field(default_factory=list)
    method_label: str = ""
    pvalue_columns: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _check_columns(self.table, type(self).__name__)
        declared = [c for c in ("pvalue", "qvalue") if c in self.table.columns]
        self.table.attrs["pvalue_columns"] = tuple(declared) + tuple(self.pvalue_columns)

    @property
    def statistics(self) -> pd.Series:
        """The ``statistic`` column."""
        return self.table["statistic"]

    @property
    def pvalues(self) -> pd.Series:
        """The ``pvalue`` column."""
        return self.table["pvalue"]

    @property
    def qvalues(self) -> pd.Series:
        """The ``qvalue`` column (adjusted tables only)."""
        if "qvalue" not in self.table:
            raise AttributeError(f"the {self.method} tests are not adjusted: no qvalue column")
        return self.table["qvalue"]

    def result(self, row: Any) -> TestResult:
        """The test of one row (an index label) as a :class:`TestResult`, or
        an :class:`InapplicableTestResult` when its p-value is undefined (no
        test exists there, e.g. zero degrees of freedom).

        Examples
        --------
        >>> import numpy as np, pandas as pd
        >>> from jdr_stats.inference.hypotheses import TestTable
        >>> t = TestTable(pd.DataFrame({"statistic": [9.5, 0.0], "df": [3.0, 0.0],
        ...                             "pvalue": [0.023, np.nan]}), "Tests", "chi2")
        >>> t.result(0).pvalue, t.result(1).applicable
        (0.023, False)
        """
        if row not in self.table.index:
            raise KeyError(f"row must be one of {list(self.table.index)}; got {row!r}")
        line = self.table.loc[row]
        name = f"{self.title}: {row}"
        if not np.isfinite(line["pvalue"]):
            return InapplicableTestResult(
                reason=f"no test at row {row!r} (undefined p-value, e.g. zero degrees of freedom)",
                method=self.method, name=name,
            )
        df = float(line["df"])
        denom = float(line["df_denom"]) if "df_denom" in line.index else None
        return TestResult(
            statistic=float(line["statistic"]), df=df if np.isfinite(df) else None,
            pvalue=float(line["pvalue"]), df_denom=denom, method=self.method, name=name,
            distribution=self.method_label or self.method,
        )

    def to_dict(self) -> dict[str, Any]:
        """The tests as plain JSON types: title, method, method label, notes and
        one record per row (each named index level, such as ``k`` or ``block``
        and ``variable``, as a field; keys without spaces); NaN become ``None``."""
        out: dict[str, Any] = {"title": self.title, "method": self.method,
                               "method_label": self.method_label or self.method,
                               "notes": list(self.notes), "tests": records(self.table)}
        for f in fields(self):  # a subclass's own fields (nobs, rule, ...)
            if f.name not in out and f.name != "table":
                value = getattr(self, f.name)  # a policy Choice has its own to_dict
                out[f.name] = json_safe(value.to_dict() if hasattr(value, "to_dict") else value)
        return clean_keys(out)

    def summary(self) -> Summary:
        return build_summary(
            self.title,
            {"Method:": self.method_label or self.method, "Tests:": len(self.table)},
            [(str(self.table.index.name or ""), self.table)],
            self.notes,
        )


_FDR_RULES = {"bh": "fdr_bh", "by": "fdr_by"}


def fdr_qvalues(pvalues: np.ndarray, rule: Literal["bh", "by"] = "bh") -> np.ndarray:
    """Benjamini-Hochberg or Benjamini-Yekutieli q-values, NaN-safe.

    The adjustment is ``statsmodels.stats.multitest.multipletests`` (methods
    ``"fdr_bh"`` and ``"fdr_by"``) applied to the p-values that are not NaN;
    a NaN p-value (an undefined test) gets a NaN q-value, is never selected
    (``q <= fdr`` is False) and does not count among the hypotheses.

    Parameters
    ----------
    pvalues : array_like (k,)
        p-values in [0, 1], or NaN.
    rule : {"bh", "by"}
        Benjamini-Hochberg (independent or positively dependent tests) or
        Benjamini-Yekutieli (any dependence; about ``sum_{i<=k} 1/i`` times
        more conservative).

    Returns
    -------
    ndarray (k,)

    Examples
    --------
    >>> import numpy as np
    >>> from jdr_stats.inference.hypotheses import fdr_qvalues
    >>> fdr_qvalues(np.array([0.01, np.nan, 0.04, 0.5])).round(3).tolist()
    [0.03, nan, 0.06, 0.5]
    """
    if not isinstance(rule, str) or rule not in _FDR_RULES:
        raise ValueError(f"rule must be one of {tuple(_FDR_RULES)}; got {rule!r}")
    p = np.asarray(pvalues, dtype=float).reshape(-1)
    ok = ~np.isnan(p)
    if np.any((p[ok] < 0) | (p[ok] > 1)):
        raise ValueError("pvalues must lie in [0, 1] (or be NaN)")
    q = np.full(p.shape, np.nan)
    if ok.any():
        from statsmodels.stats.multitest import multipletests  # imports scipy.stats

        q[ok] = multipletests(p[ok], method=_FDR_RULES[rule])[1]
    return q


def bh_qvalues(pvalues: np.ndarray) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (q-values), same order as input:
    :func:`fdr_qvalues` with ``rule="bh"``."""
    return fdr_qvalues(pvalues, "bh")


def perm_pvalue(stat: float | np.ndarray, null_stats: np.ndarray) -> np.ndarray:
    """Monte Carlo p-value ``(1 + #{T* >= T}) / (B + 1)`` (the observed statistic
    counts as one draw).

    ``null_stats`` has the B resampled statistics in its first axis.
    """
    null_stats = np.asarray(null_stats, dtype=float)
    b = null_stats.shape[0]
    return (1.0 + np.sum(null_stats >= np.asarray(stat), axis=0)) / (b + 1.0)
