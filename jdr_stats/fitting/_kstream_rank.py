"""``rank="auto"`` of a streamed K-block fit: the per-block rank tests from
two more passes over the source
(:func:`~jdr_stats.inference.kblock_rank_sums.streamed_block_rank_tables`).

The analytic influences are those of the per-block estimator without case
weights or with whole-number ones, copies of rows, each sum one over the
copies (:func:`jdr_stats.policy.kblock_influence`); the joint estimator's
and other case weights' influences are delete-one refits, which need the
rows, and are refused by name.  Each pass re-reads the source through its
reader, so the source's integrity check holds on every pass.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .. import policy
from ..core.kestimate import KBlockFactors
from ..core.tensor import pieces
from ..core.whitening import DesignWhitening
from ..exceptions import RowsNotInMemoryError
from ..inference.kblock_rank import choose_block_rank
from ..inference.kblock_rank_sums import streamed_block_rank_tables
from ..inference.rank_methods import kblock_method

__all__ = ["streamed_rank_choice"]


def streamed_rank_choice(data: Any, fac: KBlockFactors, white: DesignWhitening[Any],
                         ybar: float, names: Sequence[str], *, estimator: str,
                         main_effects: bool, rank_method: str, alpha: float,
                         stop: bool = True
                         ) -> tuple[dict[str, pd.DataFrame], dict[str, int], policy.Choice]:
    """The tables, the chosen ranks and the influence choice of a streamed
    ``fit("auto")``, as :func:`jdr_stats.fitting._kfit.fit_kblocks` gives them
    from the rows."""
    from ._krank import _warn_no_evidence

    if kblock_method(rank_method, "rank_method").name != "robust":
        raise ValueError(f"rank_method: a K-block fit on streamed rows runs the robust "
                         f'per-block test only ("auto" or "robust"); got {rank_method!r}')
    widths = [f.shape[0] for f in fac.factors]
    m = data.nobs
    cols = [sum(fac.tests[0].shape[1] if fac.tests is not None and len(piece) == len(widths)
                else int(np.prod([widths[j] for j in piece if j != k]))
                for piece in pieces(len(widths), main_effects) if k in piece)
            for k in range(len(widths))]
    entries = m * sum(n * d for n, d in zip(widths, cols, strict=True))
    count = data.frequency_count  # whole-number weights: copies of rows
    try:
        influence = policy.kblock_influence(estimator, data.weighted, m, entries,
                                            frequency=count is not None)
    except ValueError:
        influence = policy.Choice("jackknife", "", {})
    if influence.name != "analytic":
        why = ("the joint estimator (independent_blocks=False)" if estimator == "joint"
               else "case weights that are not all whole numbers")
        raise RowsNotInMemoryError(
            f'rank="auto" on rows streamed from {data.origin}: the per-block rank tests '
            f"under {why} take each row's influence from delete-one refits, which need "
            "the rows in memory. Streamed, the tests run for the per-block estimator "
            "without case weights or with whole-number ones (fit('auto', "
            "independent_blocks=True)); or give the "
            "ranks (the same estimator is fitted), or load the rows")
    reader = data.reader

    def reduce_rows(fn: Callable[[np.ndarray, list[np.ndarray], Any], Any]) -> Any:
        from ..inference.kblock_rank_sums import _add

        def block_fn(y: np.ndarray, blocks: list[np.ndarray], w: np.ndarray | None) -> Any:
            return fn(np.asarray(y, float) - ybar, white.rows(blocks), w)

        return reader(block_fn, _add)

    tables = streamed_block_rank_tables(reduce_rows, m if count is None else count, fac, names,
                                        stop_alpha=alpha if stop else None)
    ranks = {n: choose_block_rank(tables[n], alpha, widths[k])
             for k, n in enumerate(names)}
    if stop:
        _warn_no_evidence(tables, alpha, widths)
    return tables, ranks, influence

