"""The members a K-block fit shares with a two-block one: the whitening,
the rank method and its tests, the premise checks."""

from __future__ import annotations

from functools import cached_property
from typing import Any

import numpy as np

from ._kpremises import KBlockPremises, kblock_premises


class KBlockViewMixin:
    """Read-only members of ``KBlockResults`` named as on ``JDRResults``."""

    _model: Any
    _settings: dict[str, Any]
    _ranks: dict[str, int]
    _names: tuple[str, ...]

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
