"""Model data held as sufficient statistics (and optionally a row source).

A :class:`~jdr_stats.JointDimReduction` built with ``from_moments``,
``from_parquet`` or from dask input holds a :class:`MomentsData` instead of
the rows: everything the estimator, ``summary()`` and the chi-square rank test
need comes from the :class:`~jdr_stats.Moments`.  Procedures that need the
rows themselves ask for them through :meth:`MomentsData.rows` (the
:class:`~jdr_stats.io._data.RowsData` protocol), which raises a
:class:`RowsNotInMemoryError` naming the procedure.  Procedures that
need further sums over rows (the robust, Wald and general rank tests, the
ladle) stream them from the model's row source, and ask for one through
:meth:`MomentsData.require_source`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ..core._linalg import BlockMoments
from ..exceptions import RowsNotInMemoryError
from ..moments import Moments, ResponseMoments
from ._data import _NamesMixin
from ._responses import Adjustment, ResponseInfo

__all__ = ["MomentsData", "check_moments"]


def check_moments(mom: Moments) -> None:
    """The checks ``ModelData`` makes on rows, made on the moments.

    Raises ``ValueError`` for too few rows, a constant response or a
    constant column (its centred sum of squares is zero up to rounding).
    """
    if not isinstance(mom, Moments):
        raise TypeError(f"moments must be a jdr_stats.Moments; got {type(mom).__name__}")
    if mom.weight <= 0:
        raise ValueError(f"the moments hold no data (nobs={mom.nobs}, total weight 0)")
    if mom.nobs < 3:
        raise ValueError(f"too few rows: got {mom.nobs} observations, need at least 3")

    def constant(m2: np.ndarray, mean: np.ndarray) -> np.ndarray:
        sd = np.sqrt(np.maximum(m2, 0.0) / mom.weight)
        return sd <= 1e-12 * np.maximum(np.abs(mean), np.finfo(float).tiny)

    if constant(np.array([mom.m2_y]), np.array([mom.mean_y]))[0]:
        raise ValueError(
            f"endog has a single value ({mom.mean_y!r}) in all {mom.nobs} rows; the "
            "response must vary"
        )
    for argname, m2, mean, names in (
        ("exog_a", mom.m2_a, mom.mean_a, mom.names_a),
        ("exog_b", mom.m2_b, mom.mean_b, mom.names_b),
    ):
        const = constant(np.diag(m2), mean)
        tiny = const & (np.abs(mean) > 0) & (np.abs(mean) < 1e-150)
        if tiny.any():  # squares below float64's range: not known to be constant
            cols = [names[j] for j in np.flatnonzero(tiny)]
            raise ValueError(
                f"{argname} has column(s) {cols} of values below about 1e-150 whose "
                "squares vanish in float64, so these sums cannot tell them from constant "
                "columns; multiply them by a power of ten, or read the rows into memory "
                "(arrays, DataFrames), where columns of extreme units are scaled exactly "
                "before the moments are formed")
        if const.any():
            cols = [names[j] for j in np.flatnonzero(const)]
            raise ValueError(
                f"{argname} has constant column(s) {cols}; the blocks are centred, so "
                "a constant column carries no information: remove it"
            )
    check_duplicates_from_moments(mom)


def _same(m2_x: np.ndarray, m2_z: np.ndarray, m2_xz: np.ndarray, mean_x: np.ndarray,
          mean_z: np.ndarray) -> np.ndarray:
    """``same[i, j]``: column i of x equals column j of z in every row (their
    difference has zero mean and zero centred sum of squares, up to rounding)."""
    vx, vz = np.diag(m2_x), np.diag(m2_z)
    ss = vx[:, None] + vz[None, :] - 2.0 * m2_xz
    scale = np.maximum(vx[:, None] + vz[None, :], np.finfo(float).tiny)
    mscale = np.maximum(np.abs(mean_x)[:, None] + np.abs(mean_z)[None, :], 1.0)
    return (ss <= 1e-12 * scale) & (np.abs(mean_x[:, None] - mean_z[None, :]) <= 1e-12 * mscale)


def check_duplicates_from_moments(mom: Moments) -> None:
    """Duplicated columns within a block, and a column in both blocks (by
    name or values), found from the moments (the checks of
    :func:`jdr_stats.io._inputs.check_duplicates` on rows)."""
    blocks = (("exog_a", mom.m2_a, mom.mean_a, list(mom.names_a)),
              ("exog_b", mom.m2_b, mom.mean_b, list(mom.names_b)))
    for argname, m2, mean, names in blocks:
        same = np.triu(_same(m2, m2, m2, mean, mean), 1)
        if same.any():
            groups: dict[int, list[int]] = {}
            copies = set()
            for i, j in zip(*np.nonzero(same), strict=True):
                if int(i) not in copies:
                    groups.setdefault(int(i), [int(i)]).append(int(j))
                    copies.add(int(j))
            said = "; ".join(" = ".join(repr(names[k]) for k in g) for g in groups.values())
            raise ValueError(
                f"{argname} has {len(copies)} duplicated column(s), identical in every "
                f"row: {said}; keep one column of each group"
            )
    both = sorted(n for n in set(mom.names_a) & set(mom.names_b) if not str(n).isdigit())
    if both:
        raise ValueError(f"column(s) {both} are in both exog_a and exog_b; a variable "
                         "belongs to one block: remove it from one of them")
    same = _same(mom.m2_a, mom.m2_b, mom.m2_ab, mom.mean_a, mom.mean_b)
    if same.any():
        said = ", ".join(f"{mom.names_a[i]!r} = {mom.names_b[j]!r}"
                         for i, j in zip(*np.nonzero(same), strict=True))
        raise ValueError(
            "the same column is in both exog_a and exog_b (identical in every row): "
            f"{said}; a variable belongs to one block: remove it from one of them")


class MomentsData(_NamesMixin):
    """The data of a model that holds sums of rows, not the rows.

    Implements :class:`~jdr_stats.io._data.RowsData`: ``nobs``, names and
    :meth:`moments` come from the :class:`~jdr_stats.Moments`; :meth:`rows`
    raises :class:`RowsNotInMemoryError`; :meth:`require_source` returns
    when a row source can be read again.

    Attributes
    ----------
    sums : Moments
        The sufficient statistics.
    source : row source or None
        The source the moments were computed from (Parquet, CSV, dask), kept
        so that procedures needing only sums can read it again.
    origin : str
        How the model was built, for messages (``"moments"``, ``"a Parquet
        file"``, ...).
    """

    is_pandas = True
    row_index: pd.Index | None = None
    weights: np.ndarray | None = None
    #: each block's power-of-two column scales (the sums are of the columns
    #: times them: a streamed source of extreme units), or None
    scales: tuple[np.ndarray, np.ndarray] | None = None
    #: the observations whole-number case weights stand for (their total),
    #: or None (rows; see :mod:`jdr_stats.runtime._frequency`)
    frequency_count: int | None = None

    def __init__(self, moments: Moments | ResponseMoments, *, source: Any = None,
                 origin: str = "moments") -> None:
        self.adjustment = Adjustment()
        self.response_sums: ResponseMoments | None = None
        if isinstance(moments, ResponseMoments):  # q response columns
            self.response_sums = moments
            keep, _ = moments.kept()
            names = [moments.names[j] for j in keep]
            self.response = ResponseInfo(
                kind=moments.kind, names=tuple(names), q=len(keep),
                classes=moments.classes,
                counts=_class_counts(moments),
                dropped=tuple(n for n in moments.names if n not in names))
            held, scales = moments._held_parts()  # one scale for every column's sums
            moments = held[0] if scales is None else held[0]._held_as(scales)
        if isinstance(moments, Moments) and moments.scales is not None:  # extreme units
            self.scales = moments.scales
            moments = moments._held()
        check_moments(moments)
        if self.response_sums is None:
            self.response = ResponseInfo(names=(moments.endog_name,))
        self.sums = moments
        self.source = source
        self.origin = origin
        self.endog_name = moments.endog_name if self.response_sums is None else \
            ", ".join(self.response_sums.names)
        self.names = {"exog_a": list(moments.names_a), "exog_b": list(moments.names_b)}

    @property
    def nobs(self) -> int:
        return int(self.sums.nobs)

    @property
    def weighted(self) -> bool:
        """Whether the sums carry case weights (a weights column of the source)."""
        return bool(self.sums.weighted)

    def moments(
        self, weights: np.ndarray | None = None, *, covariances: bool = True
    ) -> BlockMoments:
        """The block moments of the sums; reweighting (``weights``) needs the rows."""
        if weights is not None:
            self.rows("reweighting the rows (the bootstrap)")
        if self.response_sums is not None:
            return self.response_sums.to_block_moments()
        mom = self.sums.to_block_moments()
        return mom if self.scales is None else replace(mom, scale_a=self.scales[0],
                                                       scale_b=self.scales[1])

    @property
    def response_unit(self) -> float:
        """1.0: the rows are not here (a streamed response that far from 1 is
        refused when read)."""
        return 1.0

    def rows(self, what: str, *, weights: bool = False,
             unit: bool = False) -> tuple[Any, ...]:
        """Raise :class:`RowsNotInMemoryError` naming ``what`` needs the rows."""
        raise RowsNotInMemoryError(
            f"{what} needs the rows of the data in memory, but this model was built "
            f"from {self.origin} and holds only its sums (jdr.Moments). What works "
            "here (reading a row source again where needed): the fit, dense or "
            "sparse, with a given rank or rank='auto'; summary(); every rank test "
            "except the permutation and spectral tests, and the ladle; the Poisson bootstrap "
            "(bootstrap(method='poisson')); transform() of new data. A model from "
            "bare Moments has no row source: rank_tests('chi2') only. The rest "
            "(the permutation and spectral tests, the pairs bootstrap, support selection, "
            "transform() of the training data) needs a model built from arrays: "
            "jdr.JointDimReduction(y, a, b)"
        )

    def require_source(self, what: str) -> None:
        """Raise :class:`RowsNotInMemoryError` unless a row source can be read again.

        ``what`` needs sums over the rows beyond the moments (one more
        streamed pass): fine on a model built from a Parquet file, CSV
        chunks or dask collections, impossible on one built from bare
        :class:`~jdr_stats.Moments`.
        """
        if self.source is not None:
            return
        raise RowsNotInMemoryError(
            f"{what} needs sums over the rows beyond the moments (one more pass "
            f"over the data), but this model was built from {self.origin} without "
            "a row source to read again. Build it from a source that can be read "
            "again (JointDimReduction.from_parquet, dask collections, the CLI on "
            "a file) or from arrays, or use the chi2 rank test "
            "(rank_tests('chi2'), fit(rank='auto', rank_method='chi2'))"
        )


def _class_counts(moments: ResponseMoments) -> tuple[int, ...]:
    """Rows per class of a categorical response, from the indicators' means."""
    if not moments.classes:
        return ()
    w = moments.parts[0].weight
    rest = [round(p.mean_y * w) for p in moments.parts]
    return (round(w) - sum(rest), *rest)
