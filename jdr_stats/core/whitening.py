"""Whitenings of the whole design.

A whitening maps each row of the stacked design ``x = (x_1, ..., x_K)`` to
whitened blocks ``x'_1, ..., x'_K``, each block's cross moments into
whitened coordinates, and whitened directions back to coefficients of the
original variables.  The paper's whitening acts on each block alone
(``x'_k = C_k^{-1}(x_k - mean_k)``, ``Sigma_k = C_k C_k^T``), which is the
kind ``"per-block"`` here: a tuple of one map per block.  Its target is the
paper's when the blocks are independent.  The kind ``"joint"`` whitens
across blocks: block ``k``'s row is its residual on the other blocks,
``r_k = x_k - Sigma_{k,-k} Sigma_{-k,-k}^{-1} x_{-k}``, whitened by the
partial covariance ``Sigma_{k|-k} = C_k C_k^T``.  Since
``r_k = Sigma_{k|-k} (Sigma^{-1} x)_k``, the cross moment of the whitened
rows is ``C_j^T (Sigma^{-1} E[y x x^T] Sigma^{-1})_{jk} C_k``, whose column
and row spaces are block ``j``'s and block ``k``'s subspaces for Gaussian
designs whatever the covariance between blocks (second-order Stein's
identity; docs/theory/whitening.md).  Every estimator and test receives "the
whitening of the design", never a pair.

The maps of one block are duck-typed (:class:`BlockMap`): the sample
whitening (Cholesky factor) and the regularised ones of
:mod:`jdr_stats.core._linalg` both qualify.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Generic, Literal, Protocol, TypeVar

import numpy as np

from .. import config
from .design import BlockDesign

__all__ = ["BlockMap", "DesignWhitening", "whitening_of_covariance"]


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
    >>> from jdr_stats.core._linalg import Whitening
    >>> rng = np.random.default_rng(0)
    >>> a, b = rng.normal(size=(200, 3)), rng.normal(size=(200, 2))
    >>> maps = [Whitening.from_moments(x.mean(0), np.cov(x.T, bias=True), n, [])
    ...         for n, x in (("a", a), ("b", b))]
    >>> w = DesignWhitening(tuple(maps))
    >>> len(w), w.kind, w.cross(0, 1, np.eye(3, 2)).shape
    (2, 'per-block', (3, 2))
    """

    maps: tuple[W, ...]
    kind: Literal["per-block", "joint"] = "per-block"
    #: ``"joint"`` only: the stacked design's mean and the ``(p, p)`` map
    #: ``R = Sigma^{-1} G`` (``G = diag(Sigma_{k|-k})``) whose row form
    #: ``r_i = (x_i - mean) R`` gives each block's residual on the other blocks
    mean: np.ndarray | None = None
    residual_map: np.ndarray | None = None
    #: power-of-two column scales, the whitening's variables being the
    #: design's columns times ``scale`` (None: unit); ``mean`` and
    #: ``residual_map`` (joint) and the maps' means are those of the scaled
    #: columns, and :meth:`rows` scales the design's rows it is given
    scale: np.ndarray | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "maps", tuple(self.maps))
        if len(self.maps) < 2:
            raise ValueError(f"a design whitening needs at least two blocks; got "
                             f"{len(self.maps)}")
        if (self.kind == "joint") != (self.residual_map is not None and self.mean is not None):
            raise ValueError("a joint whitening needs its mean and residual map, and only it")

    @classmethod
    def per_block(cls, maps: Sequence[W],
                  scale: np.ndarray | None = None) -> DesignWhitening[W]:
        """The paper's whitening: each block by its own map (``scale``: the
        maps' variables are the design's columns times it)."""
        return cls(tuple(maps), "per-block",
                   scale=None if scale is None else np.asarray(scale, float))

    def __iter__(self) -> Iterator[W]:
        return iter(self.maps)

    def __len__(self) -> int:
        return len(self.maps)

    def __getitem__(self, k: int) -> W:
        return self.maps[k]

    @classmethod
    def joint(cls, maps: Sequence[W], mean: np.ndarray, residual_map: np.ndarray,
              scale: np.ndarray | None = None) -> DesignWhitening[W]:
        """The whitening across blocks: block ``k``'s row is its residual on
        the other blocks, ``r_k = x_k - E[x_k | x_-k]`` (population linear
        regression), whitened by ``maps[k]``, the whitening of the partial
        covariance ``Sigma_{k|-k}`` (docs/theory/whitening.md)."""
        return cls(tuple(maps), "joint", np.asarray(mean, float),
                   np.asarray(residual_map, float),
                   None if scale is None else np.asarray(scale, float))

    def reordered(self, order: Sequence[int]) -> DesignWhitening[W]:
        """The same whitening with the blocks in ``order`` (the maps follow
        their blocks; a joint whitening's residual map is permuted with them)."""
        order = list(order)
        maps = tuple(self.maps[k] for k in order)
        if self.kind == "per-block":
            scale = None if self.scale is None else np.concatenate(
                [self.scale[self._span(k)] for k in order])
            return DesignWhitening(maps, self.kind, scale=scale)
        assert self.mean is not None and self.residual_map is not None
        cols = np.concatenate([np.arange(self._span(k).start, self._span(k).stop)
                               for k in order])
        return DesignWhitening(maps, "joint", self.mean[cols],
                               self.residual_map[np.ix_(cols, cols)],
                               None if self.scale is None else self.scale[cols])

    def _span(self, k: int) -> slice:
        """Block ``k``'s columns of the stacked design (the design's own rule)."""
        return BlockDesign.of(self.widths).span(k)

    def residuals(self, blocks: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Each block's rows as the whitening sees them before its own map:
        the block itself (per-block) or its residual on the other blocks
        (joint; mean zero; in the units of the scaled columns when
        ``scale`` is set; one contiguous array per block, formed from
        slices of the centred rows, so no stacked copy of the design)."""
        if self.kind == "per-block":
            if self.scale is None:
                return list(blocks)
            return [x * self.scale[self._span(k)] for k, x in enumerate(blocks)]
        assert self.mean is not None and self.residual_map is not None
        spans = [self._span(k) for k in range(len(self.maps))]
        m = int(blocks[0].shape[0])
        out = [np.empty((m, s.stop - s.start)) for s in spans]
        cols = [np.ascontiguousarray(self.residual_map[:, s]) for s in spans]
        step = config.chunk_rows(self.mean.size)
        z = np.empty((min(step, m), self.mean.size))
        for lo in range(0, m, step):  # slices of the centred rows: no m x p array
            hi = min(lo + step, m)
            zz = z[:hi - lo]
            for s, x in zip(spans, blocks, strict=True):
                if self.scale is None:
                    np.subtract(x[lo:hi], self.mean[s], out=zz[:, s])
                else:  # the scaled columns (exact: powers of two), then centred
                    np.multiply(x[lo:hi], self.scale[s], out=zz[:, s])
                    zz[:, s] -= self.mean[s]
            for r, c in zip(out, cols, strict=True):
                np.matmul(zz, c, out=r[lo:hi])
        return out

    def residual_moment(self, s: np.ndarray) -> np.ndarray:
        """A ``(p, p)`` second moment of centred rows (``S = E[w x x^T]``
        with any row weight ``w``, e.g. the response) as the same moment of
        the rows of :meth:`residuals`: ``R^T S R`` (joint), ``S`` itself
        (per-block)."""
        if self.kind == "per-block":
            return s
        assert self.residual_map is not None
        return self.residual_map.T @ s @ self.residual_map

    @property
    def widths(self) -> tuple[int, ...]:
        return tuple(w.dim for w in self.maps)

    def rows(self, blocks: Sequence[np.ndarray]) -> list[np.ndarray]:
        """Each block's whitened rows."""
        if self.kind == "per-block":
            return [w.to_white(x) for w, x in zip(self.maps, self.residuals(blocks),
                                                  strict=True)]
        return [w.solve(r.T).T for w, r in zip(self.maps, self.residuals(blocks), strict=True)]

    def cross(self, j: int, k: int, s: np.ndarray) -> np.ndarray:
        """A cross moment ``S_jk`` of the rows of :meth:`residuals` of blocks
        ``j`` and ``k`` in whitened coordinates, ``C_j^{-1} S_jk C_k^{-T}``
        (per-block: of the blocks themselves; joint: the block of
        :meth:`residual_moment`)."""
        return self.maps[k].solve(self.maps[j].solve(s).T).T

    def to_original(self, k: int, u_std: np.ndarray) -> np.ndarray:
        """Block ``k``'s whitened directions as unit-length coefficients of
        its original variables."""
        return self.maps[k].to_original(u_std)


def whitening_of_covariance(cov: np.ndarray, tol: float = 1e-9) -> tuple[np.ndarray, np.ndarray]:
    """Kept columns and ``L^{-1}`` of the covariance of the response columns.

    A pivoted Cholesky factorisation of the correlation matrix drops the
    columns whose residual variance, given the columns kept before them, is
    below ``tol`` (collinear columns); ``L`` is the Cholesky factor of the
    covariance of the kept columns (in their original order).
    """
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    if not (sd > 0).all():
        raise ValueError("a response column is constant; the response must vary")
    corr = cov / np.outer(sd, sd)
    q = corr.shape[0]
    resid = corr.copy()
    chosen: list[int] = []
    for _ in range(q):
        diag = np.diag(resid).copy()
        diag[chosen] = -np.inf
        j = int(np.argmax(diag))
        if diag[j] <= tol:
            break
        chosen.append(j)
        col = resid[:, j] / np.sqrt(resid[j, j])
        resid = resid - np.outer(col, col)
    keep = np.sort(np.array(chosen, dtype=int))
    chol = np.linalg.cholesky(cov[np.ix_(keep, keep)])
    return keep, np.linalg.inv(chol)
