"""The record each whitening registers (:class:`WhiteningMethod`) and the
signature of the factory building one block's map (:class:`BlockFactory`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from ..core._linalg import AnyWhitening, ShrunkWhitening, shrunk_whitening

__all__ = ["TESTS_NOTE", "BlockFactory", "WhiteningMethod", "shrunk_factory"]

#: The summary's note of every whitening other than the sample one.
TESTS_NOTE = (
    " Rank and support tests use the sample covariance; the bootstrap re-estimates "
    "this one."
)


class BlockFactory(Protocol):
    """Builds the whitening of one block from its moments.

    ``cov`` is None when the block is whitened from its ``rows`` (m x n, the
    dual route of a block wider than the rows); ``weights`` are the rows'
    case weights; ``argname`` and ``names`` name the block and its variables
    in error messages.
    """

    def __call__(
        self,
        mean: np.ndarray,
        cov: np.ndarray | None,
        nobs: int,
        argname: str,
        names: Sequence[str],
        *,
        rows: np.ndarray | None = None,
        weights: np.ndarray | None = None,
    ) -> AnyWhitening: ...


@dataclass(frozen=True)
class WhiteningMethod:
    """One whitening of a block, as its module registers it.

    Attributes
    ----------
    name : str
        The key (``fit(whitening=name)``, ``--whitening name``,
        ``results.whitening``).
    label : str
        The covariance it uses, as a short phrase (the guide's table).
    when : str
        When to use it (the guide's table).
    covariance : str
        The matrix ``W`` it whitens with, in the notation of the theory page
        "Whitening" (its table of targets).
    target : str
        The span its block-a estimate targets (the theory page's table).
    needs : {"centring", "covariance", "rows"}
        ``"centring"``: the means only (no covariance is formed);
        ``"covariance"``: each block's sample covariance; ``"rows"``: the
        covariance, or, with the rows in memory, the rows of a block wider
        than them (the dual route through the m x m Gram matrix).
    factory : BlockFactory or None
        Builds one block's map (None: the blocks are centred, not whitened).
    tests_need_sample : bool
        Whether the rank and support tests whiten with the sample covariance
        instead of this map (they build it themselves).
    built_by_estimator : bool
        Whether the estimator builds it from the moments itself
        (``estimate(standardize=...)``: the sample whitening and none), so
        the bootstrap refits its replicates in one batch; otherwise every
        replicate rebuilds the map from its moments with ``factory``.
    note : str
        Its part of the summary's note on the whitening and the inference it
        allows (after ``"Whitening: <name> (<reason>)."``).
    check : callable or None
        ``check(nobs, widths)`` (``widths``: the blocks' argument names to
        their numbers of columns) raises a ``ValueError`` where it cannot be
        formed (None: any number of rows).
    joint : {"full", "block-diagonal"} or None
        Its version over all blocks together, for the joint estimator:
        ``"full"``, the whitening of the whole design (the sample and the
        shrunk covariance of all blocks; formed by
        :func:`jdr_stats.estimation._joint.joint_data`); ``"block-diagonal"``,
        a covariance of all blocks that is block diagonal (the SDs, the
        identity), so the joint whitening is the per-block one; None (an
        entry's default): none, and the joint estimator refuses it.
    """

    name: str
    label: str
    when: str
    covariance: str
    target: str
    needs: Literal["centring", "covariance", "rows"]
    factory: BlockFactory | None
    tests_need_sample: bool
    built_by_estimator: bool
    note: str
    check: Callable[[int, Mapping[str, int]], None] | None = None
    joint: Literal["full", "block-diagonal"] | None = None


def shrunk_factory(kind: Literal["shrinkage", "diagonal"]) -> BlockFactory:
    """The :class:`BlockFactory` of a regularised whitening of ``kind``
    (:func:`~jdr_stats.core._linalg.shrunk_whitening`: from the covariance, or
    from the rows for a block wider than them)."""

    def factory(mean: np.ndarray, cov: np.ndarray | None, nobs: int, argname: str,
                names: Sequence[str], *, rows: np.ndarray | None = None,
                weights: np.ndarray | None = None) -> ShrunkWhitening:
        return shrunk_whitening(mean, cov, nobs, kind, argname, names, rows=rows,
                                weights=weights)

    return factory
