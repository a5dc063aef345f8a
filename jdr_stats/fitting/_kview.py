"""The members a K-block fit shares with a two-block one: the whitening,
the rank method and its tests, the premise checks, and for two blocks the
``_a``/``_b`` view of the members by block name."""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from ._kpremises import KBlockPremises, kblock_premises


class KBlockViewMixin:
    """Read-only members of ``KBlockFit`` named as on ``JDRResults``."""

    _model: Any
    _settings: dict[str, Any]
    _ranks: dict[str, int]
    _names: tuple[str, ...]
    _support_tests: Any

    # -- the K = 2 view -------------------------------------------------------
    def _side(self, member: str, side: int) -> Any:
        """``member[name]`` of the first (``side`` 0) or second block of a
        two-block fit; an AttributeError naming the blocks at any other K."""
        names = self._names
        if len(names) != 2:
            suffix = "ab"[side]
            raise AttributeError(
                f"{member}_{suffix} is the two-block view of {member}[name]; this fit has "
                f"{len(names)} blocks {list(names)}: use {member}[name]")
        return getattr(self, member)[names[side]]

    @property
    def directions_a(self) -> Any:
        """Two blocks: ``directions[first block]`` (the first block's basis,
        original coordinates, unit-length columns)."""
        return self._side("directions", 0)

    @property
    def directions_b(self) -> Any:
        """Two blocks: ``directions[second block]``."""
        return self._side("directions", 1)

    @property
    def loadings_a(self) -> Any:
        """Two blocks: ``loadings[first block]`` (per-SD loadings)."""
        return self._side("loadings", 0)

    @property
    def loadings_b(self) -> Any:
        """Two blocks: ``loadings[second block]``."""
        return self._side("loadings", 1)

    @property
    def support_a(self) -> list[str]:
        """Two blocks: ``support[first block]`` (the selected variables; all
        of them for a dense fit)."""
        return list(self._side("support", 0))

    @property
    def support_b(self) -> list[str]:
        """Two blocks: ``support[second block]``."""
        return list(self._side("support", 1))

    @property
    def support_tests(self) -> Any:
        """The :class:`~jdr_stats.support.SupportResults` that chose the
        kept variables of a ``sparsity="auto"`` fit (None otherwise)."""
        return self._support_tests

    @property
    def whitening(self) -> str:
        """The whitening the fit used (a key of
        :data:`jdr_stats.whitenings.WHITENING_METHODS`)."""
        return str(self._settings["whitening"])

    @property
    def standardize(self) -> bool:
        """Whether the blocks were whitened (any whitening but ``"none"``)."""
        return self.whitening != "none"

    @property
    def rank_method(self) -> str | None:
        """The tests that chose the rank (``rank="auto"``), else None."""
        method = self._settings.get("rank_method")
        return None if method is None else str(method)

    @cached_property
    def diagnostics(self) -> KBlockPremises:
        """Checks of the method's premises over every pair of blocks
        (:class:`jdr_stats.fitting._kpremises.KBlockPremises`): each pair's largest
        canonical correlation and rows per entry of its cross moment, each
        block's condition number; ``.table`` and ``.messages``."""
        data = self._model._data
        data.rows("results.diagnostics")
        blocks = [np.asarray(x, float) for x in data.blocks.values()]
        return kblock_premises(blocks, self._names, self._ranks,
                               weights=getattr(data, "weights", None),
                               joint=self._settings.get("estimator") == "joint")
