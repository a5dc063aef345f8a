"""Per-SD loadings, fit measures and ``remove_data`` of a K-block fit.

:class:`KBlockExtrasMixin` is mixed into
:class:`jdr_stats.fitting._kfit.KBlockFit`; every member is written once over
the list of blocks, so that it serves K = 2 (per-block ranks,
``main_effects=True``), three and more blocks alike.  The two-block results
have the same members (:attr:`JDRResults.loadings`,
:attr:`JDRResults.fit_measures`, :meth:`JDRResults.remove_data`).
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Mapping
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from ..fit_measures import FitMeasures, block_fit_measures
from ..io._data import RemovedData

__all__ = ["KBlockExtrasMixin", "per_sd_loadings"]


def per_sd_loadings(directions: np.ndarray, sd: np.ndarray) -> np.ndarray:
    """Per-standard-deviation loadings: each direction's entry times its
    variable's SD, every column scaled so that its largest absolute entry
    is 1 (signs kept; a zero column stays zero).  The convention of
    :attr:`JDRResults.loadings_a`, for any block."""
    load = np.asarray(directions, float) * np.asarray(sd, float)[:, None]
    top = np.max(np.abs(load), axis=0) if load.size else np.zeros(load.shape[1])
    return load / np.where(top > 0, top, 1.0)


def _weighted_sd(x: np.ndarray, w: np.ndarray | None) -> np.ndarray:
    """Column SDs of ``x`` (divisor: the total weight, the rows' count
    without weights), as :attr:`JDRResults.block_sds`."""
    x = np.asarray(x, float)
    wn = np.full(x.shape[0], 1.0 / x.shape[0]) if w is None else np.asarray(w, float) / np.sum(w)
    centred = x - wn @ x
    return np.sqrt(np.clip(wn @ centred**2, 0.0, None))


class KBlockExtrasMixin:
    """Loadings, fit measures and data removal over K blocks."""

    _model: Any
    _names: tuple[str, ...]
    _ranks: dict[str, int]
    _settings: dict[str, Any]

    if TYPE_CHECKING:
        @property
        def directions(self) -> Mapping[str, pd.DataFrame]: ...

    # -- per-SD loadings ---------------------------------------------------
    @cached_property
    def _block_sds(self) -> dict[str, np.ndarray]:
        """Each block's column SDs (from the rows, or from a streamed fit's
        centred sums); kept by :meth:`remove_data` and written by ``save``."""
        data = self._model._data
        sums = getattr(data, "design_sums", None)
        if sums is not None:  # a streamed fit: the centred sums of the stacked design
            var = np.diag(np.asarray(sums.m2_xx, float)) / float(sums.weight)
            sd = np.sqrt(np.clip(var, 0.0, None))
            scale = getattr(data, "scale", None)  # sums of the columns times powers of two
            if scale is not None:
                sd = sd / np.asarray(scale, float)
            cuts = np.cumsum([len(data.names[k]) for k in data.names])[:-1]
            return dict(zip(self._names, np.split(sd, cuts), strict=True))
        _, *rows, w = data.rows("the per-SD loadings (the blocks' SDs)", weights=True)
        return {n: _weighted_sd(x, w) for n, x in zip(self._names, rows, strict=True)}

    @property
    def block_sds(self) -> dict[str, np.ndarray]:
        """Each block's column standard deviations, by block name (divisor:
        the total weight; kept by :meth:`remove_data`)."""
        return {n: sd.copy() for n, sd in self._block_sds.items()}

    @cached_property
    def loadings(self) -> Mapping[str, pd.DataFrame]:
        """Per-standard-deviation loadings of each block's variables, a
        read-only mapping by block name (beside :attr:`directions`).

        Each direction's entry times the variable's standard deviation: the
        change of the reduced feature ``x_k^T u`` when the variable moves by
        one SD (the others fixed), so variables in different units compare;
        each column is scaled so that its largest absolute entry is 1 (signs
        kept), the convention of the two-block ``loadings_a``.  With
        correlated variables a loading is a partial effect, not an
        importance that adds up.

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(600, 3, 3, 1, seed=0)
        >>> other = jdr.simulate.bilinear(600, 2, 2, 1, seed=1).a
        >>> model = jdr.JointDimReduction.from_blocks(
        ...     sim.y, {"g": sim.a * [1, 100, 0.01], "l": sim.b, "c": other})
        >>> res = model.fit(1)
        >>> float(abs(res.loadings["g"]).to_numpy().max())
        1.0
        """
        sds = self._block_sds
        out = {}
        for n in self._names:
            d = self.directions[n]
            out[n] = pd.DataFrame(per_sd_loadings(d.to_numpy(), sds[n]), index=d.index,
                                  columns=d.columns)
        return MappingProxyType(out)

    # -- fit measures ------------------------------------------------------
    @cached_property
    def fit_measures(self) -> FitMeasures:
        """R^2 of the regression of ``y`` on every block's reduced features
        and the products of every pair of blocks' features (``rsquared``),
        of the same regression on all variables (``rsquared_full``, None
        when too wide for the rows) and their ratio (``rsquared_ratio``):
        :func:`jdr_stats.fit_measures.block_fit_measures`, whose regressors
        are ``1``, ``f_k = x_k U_k`` for each block and ``f_ji f_kl`` for
        each pair ``j < k`` (K-way products are not included).  Two blocks:
        the bilinear regression of the two-block ``fit_measures``.  For a
        response of ``q > 1`` columns each R^2 is Pillai's trace over ``q``.
        Needs the rows in memory (kept by :meth:`remove_data`).
        """
        data = self._model._data
        y, *rows, w = data.rows("the fit measures (R^2)", weights=True)
        blocks = [np.asarray(x, float) for x in rows]
        bases = [self.directions[n].to_numpy() for n in self._names]
        return block_fit_measures([(np.asarray(y, float), blocks, w)], bases,
                                  nobs=int(data.nobs))

    @property
    def rsquared(self) -> float:
        """R^2 of ``y`` on the reduced features and their pairwise products
        (:attr:`fit_measures`)."""
        return self.fit_measures.rsquared

    def _rsquared_text(self) -> str:
        """:attr:`rsquared` for the summary's header ("n/a" without rows)."""
        try:
            return f"{self.fit_measures.rsquared:.3f}"
        except ValueError:  # no rows (RowsNotInMemoryError) or a streamed fit
            return "n/a (rows not in memory)"

    def _extras_dict(self) -> dict[str, Any]:
        """The :meth:`to_dict` entries of this mixin: ``loadings`` (records
        as ``directions``) and ``fit_measures`` (None without rows)."""
        try:
            fm: dict[str, Any] | None = self.fit_measures.to_dict()
        except ValueError:  # no rows in memory
            fm = None
        return {"loadings": {n: {"index": list(d.index), "columns": list(d.columns),
                                 "data": d.to_numpy().tolist()}
                             for n, d in self.loadings.items()},
                "fit_measures": fm}

    # -- data removal ------------------------------------------------------
    @property
    def data_removed(self) -> bool:
        """Whether :meth:`remove_data` dropped the model's rows."""
        return isinstance(self._model._data, RemovedData)

    def remove_data(self) -> Any:
        """A copy of the results without the model's rows (small files).

        The copy keeps the directions, eigenvalues, ranks, settings, the
        rank tests of a ``rank="auto"`` fit, the blocks' means and SDs (so
        :attr:`loadings`), :attr:`fit_measures` (computed before the rows
        go, where they can be), :meth:`summary`, ``to_dict`` and
        ``transform`` of new data.  What needs the rows (``transform()`` of
        the training rows, ``rank_tests()``, ``bootstrap()``,
        ``main_effects_test()``) raises a
        :class:`~jdr_stats.exceptions.RowsNotInMemoryError` naming it.  The
        original results are unchanged.
        """
        out = copy.copy(self)
        if not self.data_removed:
            # what needs the rows, now (the summary's main-effects tests too)
            for key in ("_block_sds", "fit_measures", "_summary_main_effects"):
                with contextlib.suppress(ValueError):
                    out.__dict__[key] = getattr(self, key)
        model = copy.copy(self._model)
        model._data = RemovedData(self._model._data)
        out._model = model
        return out
