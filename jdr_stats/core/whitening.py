"""Whitenings of the whole design.

A whitening maps each row of the stacked design ``x = (x_1, ..., x_K)`` to
whitened blocks ``x'_1, ..., x'_K``, each block's cross moments into
whitened coordinates, and whitened directions back to coefficients of the
original variables.  The paper's whitening acts on each block alone
(``x'_k = C_k^{-1}(x_k - mean_k)``, ``Sigma_k = C_k C_k^T``), which is the
kind ``"per-block"`` here: a tuple of one map per block.  It is the
population target of the paper when the blocks are independent; a whitening
across blocks (each block's residual on the others, scaled by the inverse
partial covariance) is another kind of the same object, so that every
estimator and test receives "the whitening of the design", never a pair.

The maps of one block are duck-typed (:class:`BlockMap`): the sample
whitening (Cholesky factor) and the regularised ones of
:mod:`jdr_stats._linalg` both qualify.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

import numpy as np

__all__ = ["BlockMap", "DesignWhitening"]


class BlockMap(Protocol):
    """What a whitening of one block provides (``Sigma = C C^T``)."""

    @property
    def mean(self) -> np.ndarray: ...

    @property
    def dim(self) -> int: ...

    def solve(self, mat: np.ndarray) -> np.ndarray:
        """``C^{-1} mat``."""
        ...

    def solve_t(self, mat: np.ndarray) -> np.ndarray:
        """``C^{-T} mat``."""
        ...

    def to_white(self, x: np.ndarray) -> np.ndarray:
        """Whitened rows ``C^{-1}(x_i - mean)``."""
        ...

    def to_original(self, u_std: np.ndarray) -> np.ndarray:
        """Unit columns of ``C^{-T} U'``."""
        ...


W = TypeVar("W", bound=BlockMap, covariant=True)


@dataclass(frozen=True)
class DesignWhitening(Generic[W]):
    """The whitening of a design of K blocks.

    Attributes
    ----------
    maps : tuple
        One map per block (:class:`BlockMap`), in the design's block order.
    kind : {"per-block"}
        ``"per-block"``: each block whitened with its own covariance alone
        (the paper's section 5.1; its target assumes independent blocks).

    Iterating gives the blocks' maps, so a two-block caller may write
    ``wa, wb = whitening``.

    Examples
    --------
    >>> from jdr_stats._linalg import Whitening
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(size=(200, 3)), rng.normal(size=(200, 2))
    >>> maps = [Whitening.from_moments(x.mean(0), np.cov(x.T, bias=True), n, [])
    ...         for n, x in (("a", a), ("b", b))]
    >>> w = DesignWhitening(tuple(maps))
    >>> len(w), w.kind, w.cross(0, 1, np.eye(3, 2)).shape
    (2, 'per-block', (3, 2))
    """

    maps: tuple[W, ...]
    kind: Literal["per-block"] = "per-block"

    def __post_init__(self) -> None:
        object.__setattr__(self, "maps", tuple(self.maps))
        if len(self.maps) < 2:
            raise ValueError(f"a design whitening needs at least two blocks; got "
                             f"{len(self.maps)}")

    @classmethod
    def per_block(cls, maps: Sequence[W]) -> DesignWhitening[W]:
        """The paper's whitening: each block by its own map."""
        return cls(tuple(maps), "per-block")

    def __iter__(self) -> Iterator[W]:
        return iter(self.maps)

    def __len__(self) -> int:
        return len(self.maps)

    def __getitem__(self, k: int) -> W:
        return self.maps[k]

    def reordered(self, order: Sequence[int]) -> DesignWhitening[W]:
        """The same whitening with the blocks in ``order`` (a per-block
        whitening's maps follow their blocks)."""
        return DesignWhitening(tuple(self.maps[k] for k in order), self.kind)

    @property
    def widths(self) -> tuple[int, ...]:
        return tuple(w.dim for w in self.maps)

    def rows(self, blocks: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Each block's whitened rows."""
        return [w.to_white(x) for w, x in zip(self.maps, blocks, strict=True)]

    def cross(self, j: int, k: int, s: np.ndarray) -> np.ndarray:
        """The cross moment ``S_jk`` of blocks ``j`` and ``k`` in whitened
        coordinates, ``C_j^{-1} S_jk C_k^{-T}``."""
        return self.maps[k].solve(self.maps[j].solve(s).T).T

    def to_original(self, k: int, u_std: np.ndarray) -> np.ndarray:
        """Block ``k``'s whitened directions as unit-length coefficients of
        its original variables."""
        return self.maps[k].to_original(u_std)
