"""A K-block model from moments: the streamed fit's data, its sums read
from a :class:`~jdr_stats.core.design_moments.DesignMoments` instead of a
second pass over a source.

The fit (:func:`jdr_stats.fitting._kstream.fit_streamed_kblocks`) builds
each block's whitening from the design sums, as for a streamed model, then
asks its data for the pieces' sums: a source streams its rows again, the
moments lift their tensor through each block's affine whitening
(:meth:`~jdr_stats.core.design_moments.DesignMoments.piece_totals`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.design_moments import DesignMoments
from ..core.whitening import DesignWhitening
from ..exceptions import RowsNotInMemoryError
from ._kstream import BlockSums

__all__ = ["BlockMomentsData", "affine_maps"]


class BlockMomentsData(BlockSums):
    """The data of a model of three or more blocks built from
    :class:`~jdr_stats.core.design_moments.DesignMoments` (no rows, no
    source): :class:`~jdr_stats.fitting._kstream.BlockSums` whose pieces
    come from the moments."""

    def __init__(self, moments: DesignMoments) -> None:
        self.kmoments = moments
        self.design_sums = moments.design_sums()
        self.scale = moments.scale  # columns of extreme units: held times powers of two
        self._integer_weights = moments.whole_weights  # whole numbers: copies of rows
        self.reader = None  # type: ignore[assignment]
        self.names = moments.names
        self.endog_name = moments.endog_name
        self.origin = "moments"
        sums = self.design_sums
        sd = np.sqrt(np.clip(np.diag(sums.m2_xx), 0.0, None) / sums.weight)
        scale = np.maximum(np.abs(sums.mean_x), 1.0)
        flat = [c for cols in self.names.values() for c in cols]
        const = [flat[j] for j in np.flatnonzero(sd <= 1e-12 * scale)]
        if const:
            raise ValueError(f"moments: constant column(s) {const}; drop them")

    from_moments = True
    streamed_rank_tests = None  # type: ignore[assignment]  # no source: refused by name

    def check_estimator(self, estimator: str) -> None:
        """Refuse the joint estimator, naming ``independent_blocks``."""
        if estimator != "per-block":
            raise ValueError(
                f"independent_blocks=False (the {estimator} estimator) is not available from "
                "K-block moments: its whitening of each block against the others needs "
                "moments of higher order within a block than the moments hold. Pass "
                "independent_blocks=True (the per-block estimator, fitted from the "
                "moments exactly), or build the model from the rows or a source")

    def piece_totals(self, white: DesignWhitening[Any], ybar: float, *,
                     cross_cov: Any, main_effects: bool, tests: Any,
                     piece_list: Sequence[tuple[int, ...]]) -> Any:
        """The pieces' sums from the moments' tensor (module docstring)."""
        if cross_cov is not None:
            self.check_estimator("joint")
        tensors, norms = self.kmoments.piece_totals(
            affine_maps(white, self.kmoments.means()[1], self.scale), ybar, piece_list)
        if tests is not None:  # the sketched route: the sketches of the full K-way piece
            from ..core.design_moments import sketch_of_tensor

            full = tuple(range(len(self.names)))
            tensors[full] = sketch_of_tensor(tensors[full], tests)
        return tensors, norms

    @property
    def response_unit(self) -> float:
        """1.0: the rows are not here."""
        return 1.0

    def rows(self, what: str, *, weights: bool = False,
             unit: bool = False) -> tuple[Any, ...]:
        """Raise :class:`RowsNotInMemoryError` naming ``what``."""
        raise RowsNotInMemoryError(
            f"{what} needs the rows in memory, but this model of {len(self.names)} blocks "
            "was built from moments (jdr.Moments.from_blocks) and holds only sums. What "
            "works here: fit() with given ranks (an int or a dict by block) and "
            "independent_blocks=True, summary(), to_dict() and transform() of new data. "
            "Build the model from the rows (JointDimReduction.from_blocks) for the rank "
            "tests, rank='auto' and the bootstrap")

    def require_source(self, what: str) -> None:
        self.rows(what)


def affine_maps(white: DesignWhitening[Any], centres: Sequence[np.ndarray],
                scale: np.ndarray | None = None) -> list[tuple[np.ndarray, np.ndarray]]:
    """Each block's whitening as the affine map ``z = B^T x + e`` of its
    original coordinates, ``(B, e)``, read from the whitening's rows at
    ``centres`` and one unit step from them along each variable (exact for
    an affine map; taking differences at the centres keeps the offset's
    rounding away from ``B``).  ``scale``: the coordinates are the columns
    times ``scale`` (the whitening is given the probes in the user's units,
    exactly: powers of two)."""
    widths = [c.size for c in centres]
    n_rows = 1 + max(widths)
    probes = []
    for c, n in zip(centres, widths, strict=True):
        x = np.tile(c, (n_rows, 1))
        x[1:1 + n] += np.eye(n)
        probes.append(x)
    if scale is not None:
        cuts = np.cumsum(widths)[:-1]
        probes = [x / sc for x, sc in zip(probes, np.split(scale, cuts), strict=True)]
    zs = white.rows(probes)
    out = []
    for c, z, n in zip(centres, zs, widths, strict=True):
        b = z[1:1 + n] - z[0]
        out.append((b, z[0] - c @ b))
    return out


def model_from_moments(cls: Any, moments: DesignMoments) -> Any:
    """A :class:`~jdr_stats.model.JointDimReduction` of K-block moments."""
    model = cls.__new__(cls)
    model._data = BlockMomentsData(moments)
    model._formula = None
    model._model_specs = None
    model._block_names = moments.block_names
    return model
