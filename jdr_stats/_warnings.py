"""Warning classes of jdr_stats (all in one place, see STYLE.md).

The test suite turns every warning derived from :class:`JDRWarning` into an
error, so a warning the library emits unexpectedly fails the tests.
"""

from __future__ import annotations

__all__ = [
    "JDRWarning",
    "MissingDataWarning",
    "SmallSampleWarning",
    "RankSelectionWarning",
    "WeakGapWarning",
]


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
