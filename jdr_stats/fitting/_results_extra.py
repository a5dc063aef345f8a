"""What R's dr and statsmodels users look for on a joint fit: an R^2-type
fit measure, a test of a group of variables and a ``drop1`` table.

:class:`FitMeasuresMixin` is mixed into :class:`jdr_stats.JDRResults`; the
maths is in :mod:`jdr_stats.fit_measures` and
:mod:`jdr_stats.support._group` (derivations: ``docs/theory/estimator.md``,
"How much of y the reduction explains", and ``docs/theory/support.md``,
section 10).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..fit_measures import FitMeasures, fit_measures
from ..inference.hypotheses import TestResult, TestTable
from ..support._group import group_statistic, resolve_variables
from ..support._statistics import Prepared, block_tests, prepare

__all__ = ["FitMeasuresMixin"]

_H0 = ("the rows of U (block a) and V (block b) of the named variables are zero: "
       "none of them enters its block's subspace")


class FitMeasuresMixin:
    """R^2-type measures, group tests and ``drop1`` for :class:`JDRResults`."""

    _model: Any
    _fit_data: Any
    _test_input: Any

    @property
    def _fit(self) -> Any:
        """``self`` as the results object it is mixed into (rank, directions)."""
        return self

    # -- R^2 -------------------------------------------------------------------
    @cached_property
    def fit_measures(self) -> FitMeasures:
        """R^2 of the bilinear regression of ``y`` on the 2r reduced features
        (``rsquared``), on all variables (``rsquared_full``) and their ratio
        (``rsquared_ratio``, dr's R^2(OLS | dr) analogue); see
        :mod:`jdr_stats.fit_measures`.  For a response of ``q > 1`` columns
        each R^2 is Pillai's trace over ``q`` (the average R^2 of the
        whitened response columns).  Needs the rows in memory.

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(2000, 4, 3, 1, seed=0)
        >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
        >>> round(res.rsquared, 3), round(res.fit_measures.rsquared_ratio, 3)
        (0.529, 0.988)
        """
        data = self._model.data
        data.require_source("the fit measures (R^2)")
        source = getattr(data, "source", None)
        chunks = ([data.rows("the fit measures (R^2)", weights=True)] if source is None
                  else source.iter_weighted_chunks())
        return fit_measures(chunks, np.asarray(self._fit.directions_a, dtype=float),
                            np.asarray(self._fit.directions_b, dtype=float), nobs=data.nobs)

    @property
    def rsquared(self) -> float:
        """R^2 of the bilinear regression of ``y`` on the 2r reduced features
        (:attr:`fit_measures`)."""
        return self.fit_measures.rsquared

    # -- group tests -------------------------------------------------------------
    @cached_property
    def _prepared(self) -> Prepared:
        data = self._test_input[0]
        if data.weighted:
            raise ValueError("the variable tests do not handle case weights yet; the model "
                             "has weights")
        return prepare(data, self._fit.standardize)

    def test_variables(
        self,
        variables: str | Sequence[str] | Mapping[str, Sequence[str]],
        *,
        test: Literal["conditional", "marginal"] = "conditional",
    ) -> TestResult:
        """Test that several variables together do not enter the model.

        H0: the rows of ``U`` (block a) and ``V`` (block b) of the named
        variables are all zero.  Wald statistic of the stacked coordinate
        rows with the sandwich covariance of their influence functions,
        referred to ``chi2(|G| r)`` (``docs/theory/support.md``, section 10);
        for one variable it is the coordinate test with
        ``covariance="sandwich"``.  Asymptotic: i.i.d. rows, independent
        blocks, finite fourth moments.

        Parameters
        ----------
        variables : str, list of str, or dict
            Names looked up in both blocks, or ``{"a": [...], "b": [...]}``
            (needed for a name used in both blocks).
        test : {"conditional", "marginal"}
            ``"conditional"`` (default): the rows projected on the other
            block's rank-r basis fitted without the group (df ``|G| r``);
            ``"marginal"``: the whole rows (df ``|G|`` times the other
            block's width).

        Returns
        -------
        TestResult

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(1000, 4, 3, 1, seed=0)
        >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
        >>> t = res.test_variables(["a2", "a3", "b2"])
        >>> t.df, t.pvalue < 0.05
        (3.0, True)
        """
        if test not in ("conditional", "marginal"):
            raise ValueError(f'test must be "conditional" or "marginal"; got {test!r}')
        groups = resolve_variables(variables, self._model.data.exog_names_a,
                                   self._model.data.exog_names_b)
        rank = self._fit.rank if test == "conditional" else None
        g = group_statistic(self._prepared, groups, rank=rank, standardize=self._fit.standardize)
        names = ([f"a:{self._model.data.exog_names_a[j]}" for j in groups["a"]]
                 + [f"b:{self._model.data.exog_names_b[j]}" for j in groups["b"]])
        return TestResult(
            statistic=g.statistic, df=float(g.df), pvalue=g.pvalue,
            null=f"{_H0} ({', '.join(names)})", distribution=f"chi2({g.df})",
            method=f"wald_sandwich_{test}", name="Test of a group of variables",
        )

    def drop1(self, *, test: Literal["conditional", "marginal"] = "conditional") -> TestTable:
        """One test per variable of H0 "the variable does not enter its
        block's subspace" (R's ``drop1``): columns ``statistic``, ``df``,
        ``pvalue``, then ``block``, indexed by the variable names.

        Each row is :meth:`test_variables` of that variable alone, computed
        for all the variables of a block at once (the coordinate tests with
        ``covariance="sandwich"``: one eigendecomposition per block, the
        leave-one-out bases from it; theory of support, 12.1).  The
        p-values are not adjusted for multiplicity
        (:meth:`JointDimReduction.select_support` selects with FDR control).

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(1000, 4, 3, 1, seed=0)
        >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
        >>> res.drop1().table.columns.tolist()
        ['statistic', 'df', 'pvalue', 'block']
        """
        if test not in ("conditional", "marginal"):
            raise ValueError(f'test must be "conditional" or "marginal"; got {test!r}')
        rows, index = [], []
        data, prep = self._test_input[0], self._prepared
        rank = self._fit.rank if test == "conditional" else None
        for block, names, z, wf, wo in (("a", data.exog_names_a, prep.z_a, prep.w_a, prep.w_b),
                                        ("b", data.exog_names_b, prep.z_b, prep.w_b, prep.w_a)):
            ct = block_tests(prep.yc, z, wf, wo, rank=rank, conditional=rank is not None,
                             standardize=self._fit.standardize, covariance="sandwich",
                             method="chi2", n_perm=0, rng=None)
            for name, stat, pv in zip(names, ct.stat, ct.pvalue, strict=True):
                rows.append((float(stat), float(ct.df), float(pv), block))
                index.append(str(name))
        table = pd.DataFrame(rows, columns=["statistic", "df", "pvalue", "block"],
                             index=pd.Index(index, name="variable"))
        notes = [
            "H0 (per row): the variable's row of U (block a) or V (block b) is zero.",
            f"Wald statistic with the sandwich covariance, chi2(df) reference ({test} test"
            + (f": rows projected on the other block's rank-{self._fit.rank} basis fitted "
               "without the variable)." if test == "conditional" else ": whole rows)."),
            "p-values not adjusted for multiplicity; select_support() controls the FDR.",
        ]
        return TestTable(table, "drop1: one variable at a time", f"wald_sandwich_{test}",
                         notes=notes, method_label="sandwich Wald test, chi-square reference")

    def _with_fit_measures(self, info: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
        """The summary's header with "R-squared" (under n2, the fifth entry)
        and "R-squared ratio" (last) added, and the note that defines them."""
        r2, ratio, note = self._fit_measure_line()
        items = list(info.items())
        out = dict([*items[:5], ("R-squared:", r2), *items[5:], ("R-squared ratio:", ratio)])
        return out, [] if note is None else [note]

    def _fit_measure_line(self) -> tuple[str, str, str | None]:
        """The summary's header values (R^2, ratio) and note for the R^2 measures."""
        from ..exceptions import RowsNotInMemoryError

        try:
            fm = self.fit_measures
        except RowsNotInMemoryError:
            return "n/a (no rows)", "n/a", None
        q = getattr(getattr(self._model.data, "response", None), "q", 1)
        what = ": y on" if q == 1 else f" (Pillai's trace / q, q = {q}): on"
        note = (f"R-squared{what} the 2r reduced features and their products (adj. "
                f"{fm.rsquared_adj:.3f})")
        if fm.rsquared_full is not None and fm.rsquared_ratio is not None:
            note += (f"; on all variables and their n1 n2 products {fm.rsquared_full:.3f}, "
                     f"ratio {fm.rsquared_ratio:.3f} (the share the reduction keeps)")
        ratio = "n/a" if fm.rsquared_ratio is None else f"{fm.rsquared_ratio:.3f}"
        return f"{fm.rsquared:.3f}", ratio, note + "."
