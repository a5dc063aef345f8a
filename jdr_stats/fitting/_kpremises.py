"""The premise checks of a fit of K blocks: the two-block checks of every
pair of blocks, one table.

The premises of the two-block fit (:class:`jdr_stats.diagnostics.Premises`)
read the covariances of two blocks: their canonical correlations, each
block's condition number and the rows per entry of the cross moment.  With
K blocks every pair's cross moment is a piece of the estimate, so each pair
is checked as a two-block fit would be, and each block's condition number
once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from ..diagnostics import MAX_CONDITION, MIN_ROWS_PER_ENTRY, Premises, premises


@dataclass(frozen=True)
class KBlockPremises:
    """The premise checks of a K-block fit (``results.diagnostics``).

    Attributes
    ----------
    names : tuple of str
        The blocks, in block order.
    pairs : dict
        ``{(name_j, name_k): Premises}`` for every pair ``j < k``, each the
        two-block checks of that pair at the smaller of the two blocks' ranks.
    joint : bool
        The fit whitened across blocks (the joint estimator): correlated
        blocks are then information, not a failed premise.
    """

    names: tuple[str, ...]
    pairs: Mapping[tuple[str, str], Premises]
    joint: bool

    @property
    def nobs(self) -> int:
        return next(iter(self.pairs.values())).nobs

    @property
    def correlated(self) -> bool:
        """Some pair of blocks is correlated (see ``Premises.correlated``)."""
        return any(p.correlated for p in self.pairs.values())

    @property
    def table(self) -> pd.DataFrame:
        """value, threshold and ``ok`` of each measure: every pair's largest
        canonical correlation (checked only when the estimator assumes
        independent blocks), every block's log10 condition number, every
        pair's rows per entry of its cross moment."""
        rows: list[tuple[str, Any, float, Any]] = []
        for (j, k), p in self.pairs.items():
            two = p.table
            label = f"largest canonical corr. {j}, {k}"
            value, threshold, ok = two.iloc[0].tolist()
            rows.append((label, value, threshold, None if ok is None else bool(ok)))
        seen: dict[str, float] = {}
        for (j, k), p in self.pairs.items():
            seen.setdefault(j, p.condition_a)
            seen.setdefault(k, p.condition_b)
        for name in self.names:
            cond = seen[name]
            rows.append((f"log10 condition number {name}",
                         "n/a (n >= m)" if np.isnan(cond) else float(np.log10(cond)),
                         float(np.log10(MAX_CONDITION)),
                         None if np.isnan(cond) else bool(cond <= MAX_CONDITION)))
        for (j, k), p in self.pairs.items():
            rows.append((f"m / (n_{j} n_{k})", p.rows_per_entry, MIN_ROWS_PER_ENTRY,
                         bool(p.rows_per_entry >= MIN_ROWS_PER_ENTRY)))
        return pd.DataFrame(
            {"value": [r[1] for r in rows], "threshold": [r[2] for r in rows],
             "ok": [None if r[3] is None else bool(r[3]) for r in rows]},
            index=pd.Index([r[0] for r in rows], name="premise"))

    @property
    def messages(self) -> list[str]:
        """One sentence per measure past its threshold, naming the pair or
        block (empty: all premises hold)."""
        out: list[str] = []
        for (j, k), p in self.pairs.items():
            for msg in p.messages:
                text = (msg.replace("block a", f"block {j}").replace("block b", f"block {k}")
                        .replace("the blocks are", f"blocks {j} and {k} are"))
                if text not in out:
                    out.append(text)
        return out


def kblock_premises(blocks: Sequence[np.ndarray], names: Sequence[str],
                    ranks: Mapping[str, int], *, weights: np.ndarray | None = None,
                    joint: bool) -> KBlockPremises:
    """:class:`KBlockPremises` of K blocks' rows (weighted when ``weights``)."""
    x = np.concatenate([np.asarray(b, float) for b in blocks], axis=1)
    w = None if weights is None else np.asarray(weights, float)
    cov = np.atleast_2d(np.cov(x, rowvar=False, aweights=w))
    edges = np.cumsum([0, *(np.asarray(b).shape[1] for b in blocks)])
    cut = {n: slice(edges[i], edges[i + 1]) for i, n in enumerate(names)}
    pairs = {}
    for j, k in combinations(names, 2):
        p = premises(cov[cut[j], cut[j]], cov[cut[k], cut[k]], cov[cut[j], cut[k]],
                     nobs=x.shape[0], rank=min(ranks[j], ranks[k]))
        pairs[(j, k)] = dataclasses.replace(p, joint=joint)
    return KBlockPremises(tuple(names), pairs, joint)
