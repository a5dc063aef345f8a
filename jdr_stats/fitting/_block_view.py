"""The K-block names of a two-block fit's results.

Every results object answers the same questions by block name, whatever
the number of blocks: ``block_names``, ``support[name]``,
``whitened_bases[name]``, ``main_effects`` and ``sees``.  A two-block fit
keeps its ``_a``/``_b`` members as the two entries of these mappings.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np


class BlockViewMixin:
    """The by-name members of a two-block fit (a mixin of ``JDRResults``)."""

    _model: Any

    @property
    def block_names(self) -> tuple[str, ...]:
        """The blocks' names, in block order."""
        return tuple(self._model.block_names)

    @property
    def support(self) -> Mapping[str, list[str]]:
        """Each block's kept variables by name (all of them for a dense
        fit); ``support_a`` and ``support_b`` are its two entries."""
        pair = (self.support_a, self.support_b)  # type: ignore[attr-defined]
        return MappingProxyType(dict(zip(self.block_names, pair, strict=True)))

    @property
    def whitened_bases(self) -> Mapping[str, np.ndarray]:
        """Each block's orthonormal basis in whitened coordinates (rows
        ``w1..wn``, see ``directions_a_whitened``), as arrays by name."""
        pair = (self.directions_a_whitened, self.directions_b_whitened)  # type: ignore[attr-defined]
        return MappingProxyType({n: np.asarray(d, float).copy()
                                 for n, d in zip(self.block_names, pair, strict=True)})

    @property
    def main_effects(self) -> bool:
        """False: a two-block fit of one cross moment sees the interactions
        between the blocks (``fit(main_effects=True)`` pools the first
        moments as well)."""
        return False

    @property
    def sees(self) -> str:
        """Which parts of the link the reduction can see (theory page
        "K blocks", sections 2 and 6)."""
        return "interactions between the blocks (not main effects)"
