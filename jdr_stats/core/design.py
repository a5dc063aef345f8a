"""The shape of a design: K >= 2 named blocks and a response of q columns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

__all__ = ["BlockDesign"]


@dataclass(frozen=True)
class BlockDesign:
    """K named design blocks of ``widths[k]`` columns and ``q`` response columns.

    The stacked design ``x = (x_1, ..., x_K)`` has ``p = sum(widths)``
    columns; block ``k`` occupies the columns :meth:`span` ``(k)``.  The
    response is one more mode: the cross moment of blocks ``j`` and ``k`` is a
    ``(q, n_j, n_k)`` stack, one matrix per response column.

    Examples
    --------
    >>> d = BlockDesign(("genes", "lipids", "clinical"), (5, 3, 2))
    >>> d.p, d.span(1), d.pairs()
    (10, slice(5, 8, None), ((0, 1), (0, 2), (1, 2)))
    """

    names: tuple[str, ...]
    widths: tuple[int, ...]
    q: int = 1

    def __post_init__(self) -> None:
        names, widths = tuple(self.names), tuple(int(n) for n in self.widths)
        if len(names) != len(widths):
            raise ValueError(f"{len(names)} block names for {len(widths)} blocks")
        if len(names) < 2:
            raise ValueError(f"a design needs at least two blocks; got {len(names)}")
        bad = [n for n in names if not isinstance(n, str) or not n]
        if bad:
            raise ValueError(f"block names must be non-empty strings; got {bad!r}")
        if len(set(names)) != len(names):
            dup = sorted({n for n in names if names.count(n) > 1})
            raise ValueError(f"block names must be distinct; {dup} repeated")
        if min(widths) < 1:
            raise ValueError(f"every block needs at least one column; widths {widths}")
        if int(self.q) < 1:
            raise ValueError(f"q (response columns) must be at least 1; got {self.q}")
        object.__setattr__(self, "names", names)
        object.__setattr__(self, "widths", widths)
        object.__setattr__(self, "q", int(self.q))

    @classmethod
    def of(cls, widths: Sequence[int], q: int = 1,
           names: Sequence[str] | None = None) -> BlockDesign:
        """A design with default names ``block1, block2, ...`` unless given."""
        names = [f"block{k + 1}" for k in range(len(widths))] if names is None else names
        return cls(tuple(names), tuple(widths), q)

    @property
    def K(self) -> int:
        """Number of blocks."""
        return len(self.widths)

    @property
    def p(self) -> int:
        """Columns of the stacked design."""
        return sum(self.widths)

    def span(self, k: int) -> slice:
        """Columns of block ``k`` in the stacked design."""
        lo = sum(self.widths[:k])
        return slice(lo, lo + self.widths[k])

    def index(self, name: str) -> int:
        """Position of the block called ``name``."""
        try:
            return self.names.index(name)
        except ValueError:
            raise KeyError(f"no block named {name!r}; the blocks are {list(self.names)}") \
                from None

    def pairs(self, within: bool = False) -> tuple[tuple[int, int], ...]:
        """The block pairs ``(j, k)``, ``j < k`` (``j <= k`` when ``within``)."""
        if within:
            return tuple((j, k) for j in range(self.K) for k in range(j, self.K))
        return tuple(combinations(range(self.K), 2))
