"""The results of the rank tests, whatever the number of blocks.

One class, :class:`RankTestResults`, holds either of the two kinds of test
the fits run:

* ``kind="joint"``: the two-block fit's tests of the rank ``r`` its two
  blocks share (:func:`jdr_stats.inference.rank_tests.rank_tests`), one
  table indexed by ``k``;
* ``kind="per-block"``: the K-block engine's tests of each block's rank
  (three or more blocks, two blocks with a rank per block or with main
  effects: theory page "K blocks", section 4), one table per block, held as
  one frame indexed by ``(block, rank)``.

The members are the same for both (:attr:`table`, :attr:`tables`,
:meth:`select_rank`, :attr:`method`, :attr:`nobs`, :meth:`summary`,
:meth:`to_dict`, ``save``); where a kind answers differently the answer's
type follows the kind, never the numbers: a joint test selects one rank
(an ``int``), per-block tests select one rank per block (a ``dict`` by
block name, even when every block gets the same rank).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Literal

import pandas as pd

from ..policy import Choice
from ..runtime._validation import check_fraction
from ..summary import build_summary
from .hypotheses import TestTable, renamed_blocks
from .kblock_rank import choose_block_rank

if TYPE_CHECKING:  # statsmodels on first use: fast ``import jdr_stats``
    from statsmodels.iolib.summary2 import Summary

__all__ = ["RankTestResults"]

#: The summary's notes of per-block tests, before the rows' influences.
_PER_BLOCK_NULL = (
    "H0: block k needs at most r directions (the part of its combined pieces outside "
    "the top r); statistic: the sum of the eigenvalues beyond r; reference scale * "
    "chi2(eff_df) (theory page 'K blocks').")


@dataclass(frozen=True)
class RankTestResults(TestTable):
    """Tests of the rank: of the rank two blocks share (``kind="joint"``) or
    of each block's rank (``kind="per-block"``).

    Attributes
    ----------
    table : DataFrame
        A joint test: index ``k`` (row ``k`` tests ``H0: r <= k`` against
        ``r > k``).  Per-block tests: index ``(block, rank)`` (row ``(n,
        r)`` tests ``H0: rank_n <= r``), every block's rows in block order.
        Columns ``statistic`` (``Lambda_k``; ``T_k`` for the Wald test),
        ``df`` (chi-square or numerator F degrees of freedom; NaN where no
        single df applies), ``pvalue``, then the method's own: the robust
        test ``eff_df`` and ``scale`` (``Lambda_k ~ scale * chi2(eff_df)``),
        the Wald test ``fstat`` and ``df_denom`` (``fstat ~ F(df,
        df_denom)``), the general test ``eff_df`` (``(sum w)^2 / sum w^2``),
        the permutation test ``n_perm``, the spectral test ``n_flips``
        (its ``statistic`` is ``m s_{k+1}^2 / s_y^2``).  (The ladle is not a test: it has
        its own :class:`~jdr_stats.inference.ladle.LadleResults`.)
    tables : dict of DataFrame
        By block name.  Per-block tests: each block's rows of :attr:`table`
        (index ``rank``).  A joint test: its one table under each block
        name, since each of its rows tests the rank both blocks share (so a
        loop over ``tables`` reads the tests of every block at every K).
    kind : {"joint", "per-block"}
    method : str
        The registry key of the test (``"robust"``, ``"chi2"``, ...).
    method_label : str
        The method as a sentence.
    nobs : int
    n1, n2 : int
        The widths of the first two blocks (the two-block view; every
        block's in :attr:`widths`).
    block_names : tuple of str
    full : bool
        True when every table runs up to its last testable rank (a joint
        test: ``k = min(n1, n2) - 1``; per-block: ``r = n_k - 1``).
    influence : str
        Per-block tests: how the rows' influences were computed (empty for
        a joint test).

    ``to_dict()`` is :meth:`TestTable.to_dict`: one record per row (with its
    ``k``, or its ``block`` and ``rank``), then every field above.

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(2000, 6, 5, 2, seed=3)
    >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    >>> rt = res.rank_tests("chi2")
    >>> rt.kind, rt.select_rank(0.05)
    ('joint', 2)
    >>> list(rt.table.columns)
    ['statistic', 'df', 'pvalue']
    >>> list(rt.tables), rt.tables["a"].equals(rt.table)
    (['a', 'b'], True)
    >>> per = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit({"a": 2, "b": 1})
    >>> pt = per.rank_tests()  # a rank per block: each block's tests
    >>> pt.kind, pt.select_rank(0.05)
    ('per-block', {'a': 2, 'b': 2})
    >>> list(pt.table.index.names)
    ['block', 'rank']
    """

    __test__ = False

    nobs: int = 0
    n1: int = 0
    n2: int = 0
    full: bool = True
    #: The notes saying which reference (or tail) the rows used (also in
    #: :attr:`notes`); the fit's summary repeats them under its rank tests.
    references: tuple[str, ...] = ()
    #: How ``method="auto"`` chose the method (None when it was given).
    choice: Choice | None = None
    # the fields of every K (class-level defaults: a file written before
    # they existed reads as a joint test of blocks "a" and "b")
    kind: Literal["joint", "per-block"] = field(default="joint", repr=False)
    block_names: tuple[str, ...] = field(default=("a", "b"), repr=False)
    block_widths: tuple[int, ...] = field(default=(), repr=False)
    influence: str = field(default="", repr=False)

    # -- constructors ---------------------------------------------------
    @classmethod
    def per_block(cls, tables: Mapping[str, pd.DataFrame], *, widths: Sequence[int],
                  nobs: int, method: str, method_label: str, influence: str,
                  ) -> RankTestResults:
        """The per-block tests of a K-block fit: ``tables`` by block (index
        ``rank``, the columns of the test), each block's width, the rows,
        the test's registry key and words, and the rows' influences."""
        names = tuple(str(n) for n in tables)
        widths = tuple(int(w) for w in widths)
        if len(widths) != len(names):
            raise ValueError(f"widths: one per block {list(names)}; got {list(widths)}")
        table = pd.concat({n: t for n, t in tables.items()}, names=["block"])
        notes = [f"{_PER_BLOCK_NULL} Rows' influences: {influence}.",
                 "select_rank(alpha) = each block's first r whose test is not rejected "
                 "(a dict by block)."]
        return cls(
            table=table, title="Per-block rank tests of the K-block fit", method=method,
            notes=notes, method_label=method_label, nobs=int(nobs), n1=widths[0],
            n2=widths[1] if len(widths) > 1 else 0,
            full=all(len(tables[n]) >= w for n, w in zip(names, widths, strict=True)),
            kind="per-block", block_names=names, block_widths=widths, influence=influence)

    def named(self, names: Sequence[str]) -> RankTestResults:
        """The same tests under the block names ``names`` (a model's
        :attr:`~jdr_stats.JointDimReduction.block_names`); itself when they
        are its names already."""
        new = renamed_blocks(self.block_names, names)
        if new is None:
            return self
        table = self.table
        if self.kind == "per-block":
            table = table.rename(index=new, level="block")
        return replace(self, table=table, block_names=tuple(new.values()))

    # -- every K ----------------------------------------------------------
    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The tests of each block, by name (see the class docstring)."""
        if self.kind == "joint":
            return {n: self.table.copy() for n in self.block_names}
        out = {}
        for n in self.block_names:
            rows = self.table.xs(n, level="block")
            assert isinstance(rows, pd.DataFrame)  # a cross-section of a frame's level
            out[n] = rows.copy()
        return out

    @property
    def widths(self) -> dict[str, int]:
        """Each block's number of columns, by name."""
        widths = self.block_widths or (self.n1, self.n2)
        return dict(zip(self.block_names, widths, strict=True))

    @property
    def max_rank(self) -> int | dict[str, int]:
        """Largest rank tested: an int for a joint test, a dict by block for
        per-block tests."""
        if self.kind == "joint":
            return int(self.table.index.max())
        return {n: int(t.index.max()) for n, t in self.tables.items()}

    def select_rank(self, alpha: float = 0.05) -> int | dict[str, int]:
        """The first rank whose test is not rejected at level ``alpha``.

        A joint test: an ``int``, the first ``k`` with ``p > alpha``; if
        every computed test rejects, the dimension is at least ``max_rank +
        1``: that value is returned (it equals ``min(n1, n2)`` when the
        table is :attr:`full`).  Per-block tests: a ``dict`` by block name
        (always, even when the ranks are equal: the type follows the kind
        of test, so code reading ``select_rank(alpha)[name]`` works for
        every fit with per-block tests), each block's first ``r`` with ``p >=
        alpha``, or the number of rows of its table when every test rejects.
        Either answer can be passed to ``fit(rank=...)``.
        """
        alpha = check_fraction(alpha, "alpha")
        if self.kind == "per-block":
            return {n: choose_block_rank(t, alpha, len(t)) for n, t in self.tables.items()}
        for k, p in zip(self.table.index, self.table["pvalue"], strict=True):
            if not p <= alpha:
                return int(k)
        top = self.max_rank
        assert isinstance(top, int)
        return top + 1

    def summary(self, *, notes: Literal["short", "full"] = "short") -> Summary:
        """A statsmodels ``Summary``: the table of tests (one per block for
        per-block tests), the null hypothesis, the assumptions and why this
        method ran; ``notes="full"`` adds how each row's p-value was
        referred (:attr:`references`)."""
        if notes not in ("short", "full"):
            raise ValueError(f'notes must be "short" or "full"; got {notes!r}')
        if self.kind == "per-block":
            return self._per_block_summary()
        info = {
            "Method:": self.method,
            "No. observations:": self.nobs,
            "n1, n2:": f"{self.n1}, {self.n2}",
            "Tests:": len(self.table),
            "Selected r (alpha=0.05):": self.select_rank(0.05),
        }
        why = {self.choice.reason} if self.choice is not None else set()
        tails = set(self.references) - why
        shown = list(self.notes) if notes == "full" or not tails else [
            *(n for n in self.notes if n not in tails),
            "How each row was referred: summary(notes='full')."]
        return build_summary(self.title, info, [("k", self.table)], shown)

    def _per_block_summary(self) -> Summary:
        chosen = self.select_rank(0.05)
        assert isinstance(chosen, dict)
        tables = [(f"{n}: H0 rank <=", t, f"rank tests, block {n}")
                  for n, t in self.tables.items()]
        info = {"Blocks:": ", ".join(self.block_names), "Test:": self.method_label,
                "No. observations:": self.nobs,
                "Selected (alpha=0.05):": ", ".join(f"{n}={r}" for n, r in chosen.items())}
        return build_summary(self.title, info, tables, self.notes, float_format="%.4g")
