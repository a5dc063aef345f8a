"""Every error and warning class of jdr_stats, in one public module.

Errors derive from the built-in class a caller would catch anyway
(``ValueError``); warnings derive from :class:`JDRWarning`, which the test
suite turns into errors, so a warning the library emits unexpectedly fails
the tests.

Examples
--------
>>> import warnings
>>> from jdr_stats.exceptions import JDRWarning, RankSelectionWarning
>>> issubclass(RankSelectionWarning, JDRWarning)
True
"""

from __future__ import annotations

__all__ = [
    "RowsNotInMemoryError",
    "SourceChangedError",
    "JDRWarning",
    "MissingDataWarning",
    "SmallSampleWarning",
    "RankSelectionWarning",
    "WeakGapWarning",
    "AssumptionWarning",
    "SupportSelectionWarning",
    "LongRunWarning",
    "RareClassWarning",
    "CovariateWarning",
]


class RowsNotInMemoryError(ValueError):
    """A procedure needs the rows of the data, but the model holds only sums
    (built from moments, a Parquet or CSV source, or dask collections), or
    its rows were dropped by ``remove_data()``."""


class SourceChangedError(ValueError):
    """A streamed file changed between two passes over it (its size,
    modification time, footer or row count differ from what the first pass
    read), so the sums of the passes would mix two datasets; build the model
    again from the file as it is now."""


class JDRWarning(UserWarning):
    """Base class of the warnings issued by jdr_stats."""


class MissingDataWarning(JDRWarning):
    """Rows with missing values were dropped (``missing="drop"``)."""


class SmallSampleWarning(JDRWarning):
    """The sample is small for the asymptotics a result relies on."""


class RankSelectionWarning(JDRWarning):
    """``fit(rank="auto")``: no test rejected ``H0: r = 0``, so ``r = 1`` was used."""


class WeakGapWarning(JDRWarning):
    """Bootstrap: the r-th and (r+1)-th sample singular values are too close
    (``s_r / s_(r+1)`` below the gap rule), so the r-th direction is not
    separated from the noise: the rank-r subspace is poorly determined and
    the bound on its largest principal angle is close to 90 degrees."""


class AssumptionWarning(JDRWarning):
    """A premise of the method is in doubt: the blocks are correlated with
    each other, a block is nearly collinear, or the sample is small for the
    asymptotic rank tests (see ``results.diagnostics`` and the guide page
    "Checking the premises")."""


class LongRunWarning(JDRWarning):
    """A procedure is expected to run for more than
    :data:`jdr_stats.config.LONG_RUN_SECONDS` (a minute by default): the
    warning gives the expected time, measured on its first step, before the
    rest runs (pass ``progress=True`` to follow it)."""


class SupportSelectionWarning(JDRWarning):
    """``fit(sparsity="auto")``: the coordinate tests selected fewer variables
    than the rank in a block (often none), so that block was kept dense (all
    its variables); the summary says so, and the tests did not choose them."""


class RareClassWarning(JDRWarning):
    """A categorical response has a class that is rare relative to the design:
    fewer than 10 rows and fewer than half the rows of an average class
    (``jdr_stats.io._responses.rare_classes``); its cross moment is noisy and the
    asymptotics of the rank tests are in doubt.  A balanced design of few rows
    per class does not warn."""


class CovariateWarning(JDRWarning):
    """Covariate columns constant or collinear with the others (and the
    intercept) were dropped before the adjustment."""
