"""Row sources: where a streamed model reads its rows.

A row source yields the data in chunks of rows, so the sufficient
statistics (:class:`jdr_stats.Moments`) and the streamed procedures (the
robust, Wald and general rank tests, the ladle, the Poisson bootstrap) never
hold the whole data in memory.  Build a model from one with
:meth:`jdr_stats.JointDimReduction.from_source` (``from_parquet`` and dask
input build theirs for you).

- :class:`ArraySource`: arrays in memory (or ``numpy.memmap``), in chunks;
- :class:`ParquetSource`: a Parquet file or a folder of them (``pyarrow``);
- :class:`CSVSource`: a CSV file read in chunks, every line checked (``pyarrow.csv``
  when installed, else pandas);
- :class:`DaskSource`: dask arrays or DataFrame columns, reduced on the cluster;
- :class:`RowSource`: the base class (the protocol a new source implements).

For example:

>>> import jdr_stats as jdr
>>> from jdr_stats.sources import ArraySource
>>> sim = jdr.simulate.bilinear(3000, 4, 3, 1, seed=0)
>>> model = jdr.JointDimReduction.from_source(ArraySource(sim.y, sim.a, sim.b, batch_rows=1000))
>>> full = jdr.JointDimReduction(sim.y, sim.a, sim.b)
>>> bool(abs(model.fit(1).singular_values - full.fit(1).singular_values).max() < 1e-10)
True
"""

from __future__ import annotations

from .streams._sources import ArraySource, CSVSource, DaskSource, ParquetSource, RowSource

__all__ = ["ArraySource", "CSVSource", "DaskSource", "ParquetSource", "RowSource"]
