"""The data a model holds and the sufficient statistics a fit computes.

``model.data`` is a :class:`ModelData` (validated float arrays, names, case
weights) for data in memory, a :class:`MomentsData` (the exact moments
and, when streamed, the row source) for a model built from moments, a
Parquet or CSV source or dask collections, or a :class:`RemovedData` (names
and counts) after ``results.remove_data()``.  All three answer the
:class:`RowsData` protocol: a procedure asks ``data.rows("what")`` or
``data.require_source("what")`` and gets the rows, or a
:class:`~jdr_stats.exceptions.RowsNotInMemoryError` naming it.  ``model.moments()`` and
``results.moments`` are :class:`BlockMoments`; each block's whitening
(mean, covariance and its Cholesky factor) is a :class:`Whitening`;
``results.estimate`` (the unlabelled arrays of a fit) is an :class:`Estimate`.
``data.response`` (a :class:`ResponseInfo`) says what the response is
(numeric, categorical, multivariate) and ``data.adjustment`` (an
:class:`Adjustment`) which covariates were partialled out.  The
inference functions (``jdr_stats.inference``, ``jdr_stats.support``) take
these objects, never a model.

For example:

>>> import jdr_stats as jdr
>>> from jdr_stats.data import BlockMoments, ModelData
>>> sim = jdr.simulate.bilinear(200, 3, 2, 1, seed=0)
>>> model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
>>> isinstance(model.data, ModelData), isinstance(model.moments(), BlockMoments)
(True, True)
>>> from jdr_stats.data import RowsData
>>> isinstance(model.fit(1).remove_data().model.data, RowsData)
True
"""

from __future__ import annotations

from .core._linalg import BlockMoments, Whitening
from .estimation._estimate import Estimate
from .io._data import ModelData, RemovedData, RowsData
from .io._responses import Adjustment, ResponseInfo
from .io._streamed import MomentsData

__all__ = [
    "Adjustment",
    "BlockMoments",
    "Estimate",
    "ModelData",
    "MomentsData",
    "RemovedData",
    "ResponseInfo",
    "RowsData",
    "Whitening",
]
