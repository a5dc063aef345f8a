"""The record each rank test registers (:class:`RankTestMethod`), the
options a row computation may use and the notes of the tails it used."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import pandas as pd

from ...resampling._progress import ProgressArg
from .._kblock_design import KBlockDesign
from .._rank_stats import WhitenedDesign

__all__ = ["LAMBDA", "RankTestMethod", "Row", "RowOptions", "tail_notes"]


@dataclass(frozen=True)
class RowOptions:
    """Settings a row computation may use (the resampling tests')."""

    n_perm: int = 999
    rng: np.random.Generator | None = None
    n_jobs: int | None = None
    progress: ProgressArg = False
    #: generator of the robust test's sampled row pairs (wide designs)
    pair_rng: np.random.Generator | None = None
    #: called once, after the spectral test's first chunk of sign flips, with
    #: the seconds of its setup and per replicate (the long-run warning of a pass)
    timing: Callable[[float, float], None] | None = None
    #: called after each row a pass computes before its sign flips (the
    #: combined test's robust rows), so that a progress bar counts them
    row_done: Callable[[], None] | None = None
    #: a rank selection's level: the pass may stop after the first row whose
    #: p-value exceeds it (the combined test then computes no robust row past it)
    stop_alpha: float | None = None


#: A row: the numbers of the test of ``H0: r <= k`` and the tails / references
#: it used (keys of ``tail_notes``; empty when none needs a note).
Row = tuple[dict[str, float], tuple[str, ...]]


@dataclass(frozen=True)
class RankTestMethod:
    """One rank test, as its module registers it.

    Attributes
    ----------
    name : str
        The key (``rank_tests(method=name)``, ``fit(rank_method=name)``,
        ``--rank-method name``).
    label : str
        The method as a short sentence (the table's ``method_label``).
    distribution : str
        The reference distribution of its p-values.
    assumptions : str
        What the method assumes (a note of the table).
    statistic_note : str
        What the ``statistic`` column holds.
    needs : {"moments", "source", "rows"}
        ``"moments"``: the singular values of ``X_lin`` suffice (runs on bare
        moments); ``"source"``: sums over rows, streamed from a row source;
        ``"rows"``: the rows in memory.
    columns : tuple of str
        Columns after ``statistic``, ``df``, ``pvalue``.
    columns_note : str
        What those columns hold (the docs' table of columns).
    docs : (str, str, str)
        Its reference distribution, what it assumes and what it costs, for
        the docs' table of references; ``%(NAME)g`` stands for the value of
        ``jdr_stats.policy.NAME`` (each number lives once).
    theory : str
        Its section of ``docs/theory/rank_tests.md`` (``"6e"``).
    row : callable or None
        ``row(w, k, options) -> (numbers, tails)``: the test of ``H0: r <= k``
        of two blocks, read from blocks 0 and 1 of the whitened design
        (:class:`~jdr_stats.inference._rank_stats.WhitenedDesign`); None:
        the test has no two-block table (it runs through ``tables``).
    replicates : int or None
        Replicates per row when ``n_perm`` is None (None: the test draws none).
    takes_q : bool
        Whether it runs on a response of ``q > 1`` columns.
    q_label, q_assumptions : str
        Its label and assumptions for ``q > 1`` columns ("" where it does not
        take them).
    notes, tail_notes :
        Further notes, always or when a row used the named tail;
        ``tail_limits()`` the numbers the tail notes print (read at call time).
    """

    name: str
    label: str
    distribution: str
    assumptions: str
    statistic_note: str
    needs: Literal["moments", "source", "rows"]
    columns: tuple[str, ...]
    columns_note: str
    docs: tuple[str, str, str]
    theory: str
    row: Callable[[WhitenedDesign, int, RowOptions], Row] | None
    replicates: int | None = None
    takes_q: bool = False
    q_label: str = ""
    q_assumptions: str = ""
    notes: tuple[str, ...] = ()
    #: True when the rows are wanted as the rotated a'^T U, b'^T V (robust test)
    rotated: bool = False
    tail_notes: dict[str, str] = field(default_factory=dict)
    tail_limits: Callable[[], dict[str, object]] = dict
    #: ``rows(w, ks, options)``: the rows of the consecutive ranks ``ks`` at
    #: once (the spectral test's pass shares its sign flips); None: row by row
    rows: Callable[[WhitenedDesign, range, RowOptions], list[Row]] | None = None
    #: ``plan(w, top)``: the passes of ``rows`` covering ``0..top``
    plan: Callable[[WhitenedDesign, int], list[range]] | None = None
    #: ``tables(design, options)``: each block's tests of ``H0: rank_k <= r``
    #: (a DataFrame by block name, columns ``statistic, df, pvalue`` first)
    #: over the whitened design of K blocks
    #: (:class:`~jdr_stats.inference._kblock_design.KBlockDesign`, any
    #: ``K >= 2``: a fit of a rank per block); None: a two-block test only
    tables: Callable[[KBlockDesign, RowOptions], dict[str, pd.DataFrame]] | None = None
    #: why a test without ``tables`` does not run on K blocks (its error)
    two_block_reason: str = (
        "its statistic and reference are derived for the one whitened cross "
        "moment X_lin of two blocks and one rank shared by both"
    )

    @property
    def blocks(self) -> str:
        """``"two"`` or ``"any"``: the designs it runs on (``"any"``: it has ``tables``)."""
        return "two" if self.tables is None else "any"

    @property
    def random(self) -> bool:
        """Whether it draws from the seed (and reports progress)."""
        return self.replicates is not None

    @property
    def streams(self) -> bool:
        """True when the method runs on a row source without the rows in memory."""
        return self.needs != "rows"

    @property
    def needs_rows(self) -> bool:
        """True when the method needs sums over rows (not only the singular values)."""
        return self.needs != "moments"


LAMBDA = "Statistic Lambda_k = m * sum_{j>k} s_j(X_lin)^2 / var(y); "


def tail_notes(method: RankTestMethod, tails: set[str]) -> list[str]:
    """The table notes of the tails / references a method's rows used."""
    limits = method.tail_limits()
    return [method.tail_notes[t] % limits[t] if t in limits else method.tail_notes[t]
            for t in sorted(tails) if t in method.tail_notes]
