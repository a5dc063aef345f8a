"""The object a rank test of K blocks receives: the whitened K-block design.

:class:`KBlockDesign` holds, for any ``K >= 2``, the blocks' names, their
whitened, centred rows (``m x n_k`` each), the centred response, the case
weights, the fitted estimator (``"per-block"`` or ``"joint"``) and its
factors (each block's combined Gram and its eigenvectors,
:class:`~jdr_stats.core.kestimate.KBlockFactors`).  A registered rank test
(:mod:`~jdr_stats.inference.rank_methods`) reads what it needs from it and
computes each block's table of ``H0: rank_k <= r``; the two-block design of
the one cross moment ``X_lin`` is :class:`~jdr_stats.inference._rank_stats.WhitenedDesign`
(its blocks 0 and 1).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.kestimate import KBlockFactors

__all__ = ["KBlockDesign"]


@dataclass(frozen=True)
class KBlockDesign:
    """The whitened design of ``K`` blocks, as a rank test reads it.

    Attributes
    ----------
    names : tuple of str
        The blocks' names, in the fit's order.
    blocks : list of ndarray
        Each block's whitened, centred rows (``m x n_k``).
    y : ndarray
        The response centred at its (weighted) mean (``m`` or ``m x q``).
    weights : ndarray or None
        The rows' case weights (None: unweighted).
    estimator : {"per-block", "joint"}
        The fitted estimator (each block whitened alone, or across blocks).
    factors : KBlockFactors
        The fit's factors: each block's eigenvalues and eigenvectors, the
        pieces' scales and weights, the sketch's test vectors.
    cross_cov : dict or None
        The whitened blocks' pairwise cross covariances (the joint
        estimator's Hermite correction of the K-way piece), else None.
    main_effects : bool
        Whether each block's first moment is pooled with its pieces.
    jackknife : callable or None
        ``jackknife(stacked)``: each row's jackknife influence on every
        block's stacked pieces (the fit refitted without one copy of the
        row), for the tests that need explicit influences.
    orthogonal : bool
        ``y`` is the least squares residual of the response on ``[1, every
        block]`` (``interactions="orthogonal"``): the tests read explicit
        influences with the residual's estimation in them
        (:mod:`~jdr_stats.inference.kblock_orthogonal`).
    cache : dict
        What a test computes once (and the choices it made, e.g. its
        ``"influence"`` route, reported in the fit's settings).
    """

    names: tuple[str, ...]
    blocks: list[np.ndarray]
    y: np.ndarray
    weights: np.ndarray | None
    estimator: str
    factors: KBlockFactors
    cross_cov: dict[tuple[int, int], np.ndarray] | None = None
    main_effects: bool = False
    jackknife: Callable[[Sequence[np.ndarray]], list[np.ndarray]] | None = None
    orthogonal: bool = False
    cache: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def n_blocks(self) -> int:
        """The number of blocks."""
        return len(self.names)

    @property
    def m(self) -> int:
        """The number of rows."""
        return int(self.y.shape[0])

    @property
    def q(self) -> int:
        """Response columns."""
        return 1 if self.y.ndim == 1 else int(self.y.shape[1])

    @property
    def widths(self) -> tuple[int, ...]:
        """Each block's number of columns."""
        return tuple(int(z.shape[1]) for z in self.blocks)
