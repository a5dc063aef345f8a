"""Row sources: arrays, Parquet, CSV and dask, read in chunks, with the
integrity checks of every pass.
"""
