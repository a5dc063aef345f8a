"""The ladle estimate of the rank (Luo and Li 2016) as a results object.

The ladle is a criterion, not a test: it has no level and no p-values.
:class:`LadleResults` holds its criterion table and the ``k`` at which the
criterion is smallest; ``fit(rank="auto", rank_method="ladle")`` uses it.
The computation is :func:`~jdr_stats.inference.rank_robust.ladle_from_chunks`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..core._linalg import BlockMoments, Whitening
from ..core.whitening import DesignWhitening
from ..io._data import RowsData
from ..persistence._export import ExportMixin, records
from ..runtime._validation import normalize_seed
from ..summary import SummaryMixin, build_summary
from ._ladle_criterion import ladle_from_chunks
from ._rank_stats import _whiten

if TYPE_CHECKING:  # statsmodels on first use: fast ``import jdr_stats``
    from statsmodels.iolib.summary2 import Summary

__all__ = ["LADLE_ASSUMPTIONS", "LADLE_CHOSEN_BY", "LadleResults", "ladle_results"]

LADLE_ASSUMPTIONS = (
    "Ladle (Luo and Li 2016): r = argmin_k f(k) + phi(k), f the normalised "
    "Poisson-bootstrap variability of the top-k singular vectors of X_lin (both "
    "sides), phi the normalised excess of the (k+1)-th eigenvalue s_{k+1}^2 / var(y) "
    "over the noise edge of the k-th complement block (sign-flip draws of its noise); "
    "no level, no distribution theory; candidates k = 0..kmax."
)
#: How a fit's summary names the ladle's choice (there is no test level).
LADLE_CHOSEN_BY = "ladle (bootstrap eigenvector variability, no test level)"
#: What the ladle says when its criterion is smallest at k = 0.
LADLE_AT_ZERO = (
    "the ladle criterion is smallest at k = 0; it is a criterion, not a test: "
    "run rank_tests() for a test"
)


@dataclass(frozen=True)
class LadleResults(ExportMixin, SummaryMixin):
    """The ladle estimate of the rank and its criterion.

    Attributes
    ----------
    table : DataFrame
        Index ``k = 0..kmax``; columns ``criterion`` (``g(k) = f(k) +
        phi(k)``), ``boot_var`` (``f(k)``, the normalised bootstrap
        variability of the top-``k`` singular vectors) and ``eig_part``
        (``phi(k)``, the normalised excess of the ``(k+1)``-th squared
        singular value over ``noise_edge``) and ``noise_edge`` (``e_k``, the
        estimated squared noise edge of the ``k``-th complement block, in
        units of ``var(y)``).
    rank : int
        The ``k`` of the smallest criterion.
    title, notes :
        Printed by :meth:`summary`.
    method : str
        ``"ladle"``.
    nobs, n1, n2 : int
    n_boot : int
        Poisson-bootstrap replicates.

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(2000, 6, 5, 2, seed=3)
    >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit("auto", rank_method="ladle", seed=0)
    >>> lad = res.rank_test_table
    >>> lad.select_rank(), list(lad.table.columns)
    (2, ['criterion', 'boot_var', 'eig_part', 'noise_edge'])
    """

    table: pd.DataFrame
    rank: int | dict[str, int]
    title: str = "Ladle estimate of the rank"
    notes: list[str] = field(default_factory=list)
    method: str = "ladle"
    nobs: int = 0
    n1: int = 0
    n2: int = 0
    n_boot: int = 100
    block_names: tuple[str, ...] = ()
    block_widths: tuple[int, ...] = ()

    @property
    def kind(self) -> str:
        """``"joint"`` (one rank of the two-block cross moment) or
        ``"per-block"`` (a K-block fit: one criterion and rank per block,
        ``table`` indexed by ``(block, k)``, ``rank`` a dict by block)."""
        return "per-block" if self.block_names else "joint"

    @property
    def method_label(self) -> str:
        return LADLE_CHOSEN_BY

    @property
    def criterion(self) -> pd.Series:
        """The ladle criterion ``g(k)``."""
        return self.table["criterion"]

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """Each block's criterion table by name (one table, under ``"joint"``,
        for two blocks)."""
        if self.kind == "joint":
            return {"joint": self.table.copy()}
        return {n: self.table.xs(n, level="block").copy() for n in self.block_names}

    @property
    def max_rank(self) -> int | dict[str, int]:
        """Largest candidate ``k`` (a dict by block for a K-block fit)."""
        if self.kind == "joint":
            return int(self.table.index.max())
        return {n: int(t.index.max()) for n, t in self.tables.items()}

    def select_rank(self) -> int | dict[str, int]:
        """The ladle's choice: the ``k`` of the smallest criterion (no level);
        a dict by block for a K-block fit."""
        if isinstance(self.rank, dict):
            return {str(n): int(r) for n, r in self.rank.items()}
        return int(self.rank)

    def to_dict(self) -> dict[str, Any]:
        """Title, method, chosen rank, notes and one record per ``k`` (JSON types)."""
        return {"title": self.title, "method": self.method, "method_label": self.method_label,
                "rank": self.select_rank(), "n_boot": int(self.n_boot),
                "notes": list(self.notes), "criterion": records(self.table)}

    def summary(self) -> Summary:
        notes = list(self.notes)
        if self.kind == "per-block":
            widths = ", ".join(f"{n} {w}" for n, w in zip(self.block_names, self.block_widths,
                                                           strict=True))
            ranks = self.select_rank()
            assert isinstance(ranks, dict)
            # each block's candidates are its table's rows; the method is
            # explained in the notes, so the header stays narrow at any K
            info = {"Method:": "ladle per block (no test level)", "No. observations:": self.nobs,
                    "Blocks (widths):": widths,
                    "Chosen r:": ", ".join(f"{n} {r}" for n, r in ranks.items())}
            if any(r == 0 for r in ranks.values()):
                notes.append(LADLE_AT_ZERO[0].upper() + LADLE_AT_ZERO[1:] + " (for the "
                             "blocks of rank 0).")
            return build_summary(self.title, info, [(f"block {n}: k", t)
                                                    for n, t in self.tables.items()], notes)
        info = {
            "Method:": LADLE_CHOSEN_BY,
            "No. observations:": self.nobs,
            "n1, n2:": f"{self.n1}, {self.n2}",
            "Candidates k:": f"0..{self.max_rank}",
            "Chosen r:": self.rank,
        }
        if self.rank == 0:
            notes.append(LADLE_AT_ZERO[0].upper() + LADLE_AT_ZERO[1:] + ".")
        return build_summary(self.title, info, [("k", self.table)], notes)


def ladle_results(
    data: RowsData,
    mom: BlockMoments,
    whitening: DesignWhitening[Whitening] | None,
    *,
    seed: Any,
    n_boot: int = 100,
) -> LadleResults:
    """The ladle estimate (Luo and Li 2016) on a model's data.

    The rows are whitened as for the rank tests and streamed from a row
    source when the model has one; ``n_boot`` Poisson-bootstrap replicates
    are drawn from ``seed``.
    """
    data.require_source("the ladle")
    n1, n2 = len(data.names["exog_a"]), len(data.names["exog_b"])
    if data.nobs < max(n1, n2) + 2:
        raise ValueError(
            f"the ladle needs at least max(n1, n2) + 2 = {max(n1, n2) + 2} "
            f"observations to whiten the blocks; got {data.nobs}"
        )
    w = _whiten(data, mom, whitening, rows=True)
    assert w.chunks is not None  # rows=True always builds them
    lad = ladle_from_chunks(w.chunks, w.var_y, w.u, w.s, w.v, n_boot=n_boot,
                            rng=normalize_seed(seed))
    table = pd.DataFrame(
        {"criterion": lad.criterion, "boot_var": lad.boot_var, "eig_part": lad.eig_part,
         "noise_edge": lad.edge},
        index=pd.Index(np.arange(lad.criterion.size), name="k"),
    )
    notes = [
        (
            "Ladle estimate of the rank of the whitened population cross moment "
            f"E[a' y b'^T] (chosen r = {lad.rank}, the k of the smallest criterion; "
            f"{n_boot} Poisson-bootstrap replicates)."
        ),
        LADLE_ASSUMPTIONS,
        "criterion = boot_var + eig_part; a criterion, not a test: no level, no p-values.",
    ]
    return LadleResults(table=table, rank=lad.rank, notes=notes, nobs=w.m, n1=n1, n2=n2,
                        n_boot=n_boot)
