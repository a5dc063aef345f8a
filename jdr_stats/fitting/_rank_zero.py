"""Rank 0 as an answer: what a fit with no direction says and refuses.

``fit("auto")`` whose test of ``H0: r = 0`` is not rejected returns rank 0
for that block (for every block at K = 2): its directions and loadings are
``n x 0`` frames, :meth:`~jdr_stats.results.JDRResults.transform` gives no
column for it, the singular values and rank tests stay available, and the
summary says there is no evidence of a link.  There is no subspace to
bootstrap and no variable to select, so those say so by a ``ValueError``.
The R-squared of ``y`` on no reduced feature is 0 (the intercept-only fit).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

NOTHING = {
    "bootstrap": "nothing to bound",
    "select": "nothing to select",
    "plot": "nothing to plot",
}


def check_rank_positive(rank: int | Mapping[str, int], what: str,
                        action: str = "bootstrap") -> None:
    """Raise a ``ValueError`` naming ``what`` when every block has rank 0
    (no direction: no subspace to bound, plot or select variables for)."""
    ranks = list(rank.values()) if isinstance(rank, Mapping) else [rank]
    if ranks and all(int(r) == 0 for r in ranks):
        raise ValueError(f"{what}: rank 0 (the rank tests found no evidence of a link): "
                         f"{NOTHING.get(action, action)}")


RANK_ZERO_SUPPORT = ("Selected variables: none (rank 0: no direction, so nothing to "
                     "select).")


def rank_zero_support() -> tuple[tuple[np.ndarray, np.ndarray], tuple[int, int], str]:
    """A sparse fit (``sparsity`` given or ``"auto"``/``"cv"``) whose rank is 0:
    no variable of either block is selected; the support sets, sparsity and
    the summary's note."""
    none = np.arange(0)
    return (none, none.copy()), (0, 0), RANK_ZERO_SUPPORT


def check_support_rank(rank: object) -> None:
    """``select_support(rank=...)``: a rank of 0 (a block with no evidence of
    a link, as ``fit("auto")`` may return) leaves nothing to select; a clear
    ``ValueError`` names the blocks."""
    if isinstance(rank, Mapping):
        zero = [n for n, r in rank.items() if isinstance(r, (int, np.integer))
                and not isinstance(r, bool) and int(r) == 0]
        if zero:
            raise ValueError(f"select_support: rank 0 for block(s) {zero} (no evidence of a "
                             "link, no directions): nothing to select there; give ranks >= 1")
    elif isinstance(rank, (int, np.integer)) and not isinstance(rank, bool) and int(rank) == 0:
        raise ValueError("select_support: rank 0 (no evidence of a link, no directions): "
                         "nothing to select; give rank >= 1")


def rank_zero_sizes(sizes: Mapping[str, int], ranks: Mapping[str, int],
                    widths: Mapping[str, int]) -> dict[str, int]:
    """A sparse K-block fit: a block of rank 0 (no evidence of a link) has
    no direction to select variables for, so none of its variables is
    dropped (its pieces enter whole, as in the dense fit)."""
    return {n: widths[n] if ranks[n] == 0 else int(s) for n, s in sizes.items()}
