"""The data a model holds and the sufficient statistics a fit computes.

``model.data`` is a :class:`ModelData` (validated float arrays, names, case
weights) for data in memory, or a :class:`MomentsData` (the exact moments
and, when streamed, the row source) for a model built from moments, a
Parquet or CSV source or dask collections.  ``model.moments()`` and
``results.moments`` are :class:`BlockMoments`; each block's whitening
(mean, covariance and its Cholesky factor) is a :class:`Whitening`;
``results.estimate`` (the unlabelled arrays of a fit) is an :class:`Estimate`.  The
inference functions (``jdr_stats.inference``, ``jdr_stats.support``) take
these objects, never a model.

For example:

>>> import jdr_stats as jdr
>>> from jdr_stats.data import BlockMoments, ModelData
>>> sim = jdr.simulate.bilinear(200, 3, 2, 1, seed=0)
>>> model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
>>> isinstance(model.data, ModelData), isinstance(model.moments(), BlockMoments)
(True, True)
"""

from __future__ import annotations

from ._data import ModelData
from ._estimate import Estimate
from ._linalg import BlockMoments, Whitening
from ._streamed import MomentsData

__all__ = ["BlockMoments", "Estimate", "ModelData", "MomentsData", "Whitening"]
