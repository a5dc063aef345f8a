"""The numerical core over K >= 2 named blocks (numerics only: no pandas,
no policy, no I/O).

- :mod:`~jdr_stats.core.design`: the shape of a design, K named blocks and a
  response of q columns (the response is one more mode of the cross moments);
- :mod:`~jdr_stats.core.moments`: mergeable centred sums over the K blocks
  (means, the joint covariance of all blocks, the cross moment of every pair
  of blocks with every response column), weighted, streamed chunk by chunk;
- :mod:`~jdr_stats.core.whitening`: a whitening of the whole design, with the
  per-block whitening of the paper as one kind.

Two blocks are the case ``K = 2``: the two-block engine
(:mod:`jdr_stats.core._moments_engine`) reduces its rows here and reads its state
as the two-block view, with the same numbers bit for bit.
"""

from .design import BlockDesign
from .moments import DesignSums, array_sums, chunk_sums, empty_sums, merge_sums
from .whitening import DesignWhitening

__all__ = [
    "BlockDesign",
    "DesignSums",
    "DesignWhitening",
    "array_sums",
    "chunk_sums",
    "empty_sums",
    "merge_sums",
]
