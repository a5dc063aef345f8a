"""Input validation: arrays, Series and DataFrames to float arrays plus names.

Every model of the package (the joint estimator and the single-block
baselines) validates its input once, here, into a :class:`ModelData`: a float
response, one or more float design blocks, their variable names and the row
labels.  Errors name the argument and the offending value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, runtime_checkable

import numpy as np
import pandas as pd

from .. import config
from ..core._linalg import BlockMoments, block_moments
from ..core._moments_engine import response_block_moments
from ..core.moments import response_scale
from ..exceptions import RowsNotInMemoryError
from ..runtime._validation import check_choice
from ._formula import covariates_from_formula, design_from_spec, designs_from_formula
from ._inputs import (
    align_inputs,
    as_block,
    check_infinite,
    check_not_text,
    check_values,
    drop_missing,
    read_inputs,
)
from ._responses import Adjustment, ResponseInfo, model_response

if TYPE_CHECKING:
    from ..moments import Moments

__all__ = [
    "DataModel",
    "MissingPolicy",
    "ModelData",
    "RemovedData",
    "RowsData",
    "align_inputs",
    "check_effective_rows",
    "check_new_block",
    "check_not_text",
    "design_from_spec",
    "designs_from_formula",
]

MissingPolicy = Literal["none", "drop", "raise"]
_Model = TypeVar("_Model", bound="DataModel")
_MISSING = ("none", "drop", "raise")


@runtime_checkable
class RowsData(Protocol):
    """What the data of every model answers, whether or not it holds the rows.

    Implemented by :class:`ModelData` (rows in memory),
    :class:`~jdr_stats.data.MomentsData` (sums of rows, with or
    without a row source to read again) and :class:`RemovedData` (the names
    and counts left by ``JDRResults.remove_data()``).  A procedure asks
    for what it needs with one call: :meth:`rows` for the rows themselves,
    :meth:`require_source` for one more pass over them; both raise
    :class:`~jdr_stats.exceptions.RowsNotInMemoryError` naming the procedure
    when the data cannot give it.
    """

    @property
    def endog_name(self) -> str:
        """Name of the response."""
        ...

    @property
    def names(self) -> dict[str, list[str]]:
        """Variable names per block argument (``{"exog_a": [...], ...}``)."""
        ...

    @property
    def row_index(self) -> pd.Index | None:
        """Row labels of pandas input held in memory, else None."""
        ...

    @property
    def weights(self) -> np.ndarray | None:
        """Case weights held in memory, else None (see :attr:`weighted`)."""
        ...

    @property
    def is_pandas(self) -> bool:
        """Whether outputs are labelled (pandas input, or names from sums)."""
        ...

    @property
    def sums(self) -> Moments | None:
        """The stored sufficient statistics when the data are sums, else None."""
        ...

    @property
    def nobs(self) -> int:
        """Number of observations (rows, or rows summed into moments)."""
        ...

    @property
    def exog_names_a(self) -> list[str]:
        """Variable names of block a."""
        ...

    @property
    def exog_names_b(self) -> list[str]:
        """Variable names of block b."""
        ...

    @property
    def weighted(self) -> bool:
        """Whether the data carry case weights (in memory or in the sums)."""
        ...

    @property
    def source(self) -> Any:
        """A row source that can be read again (jdr_stats.streams._sources), or None."""
        ...

    def rows(self, what: str, *, weights: bool = False, unit: bool = False) -> tuple[Any, ...]:
        """``(endog, *blocks)`` (then the weights or None when ``weights``),
        or ``RowsNotInMemoryError`` naming the procedure ``what``.  ``unit``:
        the response times :attr:`response_unit` (for the procedures whose
        numbers are free of its unit)."""
        ...

    @property
    def response_unit(self) -> float:
        """The power of two that brings the response's largest magnitude near 1
        when it is beyond ``2^+-100``
        (:func:`~jdr_stats.core.moments.response_scale`), else 1.0; 1.0 where
        the rows are not in memory (a streamed response that far from 1 is
        refused)."""
        ...

    def require_source(self, what: str) -> None:
        """Return when the rows can be read (in memory or from a source again),
        else raise ``RowsNotInMemoryError`` naming ``what``."""
        ...

    def moments(
        self, weights: np.ndarray | None = None, *, covariances: bool = True
    ) -> BlockMoments:
        """Sufficient statistics of the two blocks (optionally reweighted)."""
        ...


class _NamesMixin:
    """The block names of the two-block model, from ``names``."""

    names: dict[str, list[str]]

    @property
    def exog_names_a(self) -> list[str]:
        return list(self.names["exog_a"])

    @property
    def exog_names_b(self) -> list[str]:
        return list(self.names["exog_b"])


def map_rows(x: np.ndarray, mean: np.ndarray, rot: np.ndarray,
             out: np.ndarray | None = None) -> np.ndarray:
    """``(x - mean) @ rot`` in blocks of rows written into ``out`` (a new
    array by default; no centred copy of ``x``: at 1000 + 1000 variables and
    ``m = 1e5`` that is 0.8 GB less at the peak)."""
    if out is None:
        out = np.empty((x.shape[0], rot.shape[1]))
    step = max(1, config.CHUNK_FLOATS // max(x.shape[1], 1))
    for start in range(0, x.shape[0], step):
        sl = slice(start, start + step)
        np.matmul(x[sl] - mean, rot, out=out[sl])
    return out


@dataclass(frozen=True)
class ModelData(_NamesMixin):
    """Validated data of a model: a response and named design blocks.

    Attributes
    ----------
    endog : ndarray, shape (m,)
    blocks : dict of str to ndarray
        Each design block, shape (m, n_k), float64, finite.
    endog_name : str
    names : dict of str to list of str
        Variable names per block (DataFrame columns, or ``a0, a1, ...``).
    row_index : pandas.Index or None
        Row labels of the (kept) rows when any input was a pandas object.
    weights : ndarray or None
        Optional positive case weights, shape (m,).
    is_pandas : bool
        Whether any input was a pandas object (outputs are then labelled).
    """

    endog: np.ndarray
    blocks: dict[str, np.ndarray]
    endog_name: str
    names: dict[str, list[str]]
    row_index: pd.Index | None
    weights: np.ndarray | None
    is_pandas: bool
    #: the response type (numeric, categorical, multivariate) and its columns
    response: ResponseInfo = field(default_factory=ResponseInfo)
    #: the covariates partialled out of the response and the blocks
    adjustment: Adjustment = field(default_factory=Adjustment)
    #: a categorical response: each row's class, as a position in
    #: ``response.classes`` (the plots colour by it); None otherwise
    class_codes: np.ndarray | None = None

    @property
    def nobs(self) -> int:
        return int(self.endog.shape[0])

    @property
    def nobs_eff(self) -> int:
        """Effective sample size ``nobs - 1 - p_Z`` (``nobs - 1`` without covariates)."""
        return self.nobs - 1 - self.adjustment.p

    @property
    def weighted(self) -> bool:
        return self.weights is not None

    @property
    def source(self) -> None:
        """None: the rows are in memory (no source to read again)."""
        return None

    @property
    def sums(self) -> None:
        """None: the rows are in memory (no stored sums)."""
        return None

    @cached_property
    def response_unit(self) -> float:
        """:attr:`RowsData.response_unit` of the response (one scan, kept)."""
        return response_scale(self.endog)

    @cached_property
    def unit_endog(self) -> np.ndarray:
        """The response times :attr:`response_unit` (``endog`` itself at
        ordinary sizes): what every procedure whose numbers are free of the
        response's unit reads (docs/theory/whitening.md, "The response's
        unit")."""
        c = self.response_unit
        return self.endog if c == 1.0 else self.endog * c

    def rows(self, what: str, *, weights: bool = False, unit: bool = False) -> tuple[Any, ...]:
        """``(endog, *blocks[, weights])``: the rows are here, for any ``what``;
        ``unit``: :attr:`unit_endog` as the response."""
        out = (self.unit_endog if unit else self.endog, *self.blocks.values())
        return (*out, self.weights) if weights else out

    def mapped_rows(self, what: str, maps: Sequence[tuple[np.ndarray, np.ndarray]]
                    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """``(endog, [(x_k - mean_k) @ rot_k for each block k])``, ``maps`` one
        ``(mean_k, rot_k)`` per block: each formed in blocks of rows written
        into one output (no centred copy of a block)."""
        y, *blocks = self.rows(what)
        return y, [map_rows(x, mean, rot) for x, (mean, rot) in zip(blocks, maps, strict=True)]

    def require_source(self, what: str) -> None:
        """The rows are in memory: any procedure can read them."""

    def moments(
        self, weights: np.ndarray | None = None, *, covariances: bool = True
    ) -> BlockMoments:
        """:func:`~jdr_stats.core._linalg.block_moments` of the rows; ``weights``
        multiply the case weights (a bootstrap passes resampling counts)."""
        w = self.weights
        if weights is not None:
            w = weights if w is None else w * weights
        y, a, b = self.rows("moments()")
        if y.ndim == 2:  # q responses: the blocks' moments once, q cross moments
            return response_block_moments(y, a, b, w, covariances=covariances)
        return block_moments(y, a, b, w, covariances=covariances)

    @classmethod
    def from_inputs(
        cls,
        endog: Any,
        blocks: Mapping[str, tuple[Any, str]],
        *,
        missing: str = "none",
        weights: Any = None,
        min_rows: int | None = None,
        check_response: bool = True,
        response: str | None = None,
        covariates: Any = None,
        covariate_terms: str | None = None,
    ) -> ModelData:
        """Validate a response and design blocks.

        Parameters
        ----------
        endog : array_like
            The response, one value per row.
        blocks : mapping
            ``{argname: (data, prefix)}``: each block with the prefix of its
            default variable names (``"a"`` gives ``a0, a1, ...``).
        missing : {"none", "drop", "raise"}
            What to do with rows holding NaN.  ``"drop"`` removes them (with a
            :class:`MissingDataWarning` giving the count); ``"none"`` and
            ``"raise"`` raise a ``ValueError`` (a NaN never reaches the
            estimator).  Infinite values always raise.
        weights : array_like, optional
            Positive case weights.
        min_rows : int, optional
            Fewest rows accepted; default: the widest block's width + 2, so
            that every sample covariance can be nonsingular.
        check_response : bool
            Require at least two distinct response values.
        response : {"auto", "numeric", "categorical"} or None
            How to read ``endog`` (:mod:`jdr_stats.io._responses`); None: one
            numeric response (the baselines).
        covariates, covariate_terms : optional
            Covariates partialled out of the response and the blocks, and
            their formula terms (for the summary).

        Notes
        -----
        Pandas inputs are matched by row label (see :func:`align_inputs`):
        the same labels in another order are reordered to endog's index,
        different or duplicated labels raise.  A block holding the response
        (a column of endog's name, or equal to endog in every row) raises.
        """
        check_choice(missing, "missing", _MISSING)
        if covariates is not None and response is None:
            raise TypeError("covariates are supported by the joint model only")
        given = align_inputs(
            {"endog": endog, **{k: x for k, (x, _) in blocks.items()},
             **({"covariates": covariates} if covariates is not None else {}),
             "weights": weights}
        )
        prefixes = {k: p for k, (_, p) in blocks.items()}
        raw = read_inputs(given, prefixes, response)
        check_infinite(raw)
        raw = drop_missing(raw, missing)
        check_values(raw, min_rows=min_rows, check_response=check_response)
        info, adjustment = ResponseInfo(names=(raw.yname,)), Adjustment()
        y, arrays = raw.y, raw.arrays
        codes = None
        if response is not None:
            y, arrays, info, adjustment = model_response(
                raw.y, raw.kind, raw.ynames or [raw.yname], raw.classes, raw.arrays,
                raw.w, raw.z, raw.znames, covariate_terms,
            )
            if info.kind == "categorical":  # codes of all levels -> the classes present
                labels = list(raw.classes or [])
                where = {c: j for j, c in enumerate(info.classes)}
                codes = np.array([where[labels[int(c)]] for c in np.asarray(raw.y)],
                                 dtype=np.intp)
        return cls(
            endog=np.ascontiguousarray(y),
            blocks=arrays,
            endog_name=raw.yname,
            names=raw.names,
            row_index=raw.index,
            weights=raw.w,
            is_pandas=raw.index is not None,
            response=info,
            adjustment=adjustment,
            class_codes=codes,
        )


class RemovedData(_NamesMixin):
    """The data of a model after ``JDRResults.remove_data()``: names and counts.

    Answers the :class:`RowsData` questions that need no rows (``nobs``,
    names, whether there were weights); :meth:`rows`, :meth:`moments` and
    :meth:`require_source` raise :class:`RowsNotInMemoryError` naming the
    procedure and ``remove_data()``.
    """

    row_index: pd.Index | None = None
    weights: np.ndarray | None = None
    source: Any = None
    sums: Moments | None = None

    def __init__(self, data: RowsData) -> None:
        self.response = getattr(data, "response", ResponseInfo(names=(data.endog_name,)))
        adj = getattr(data, "adjustment", Adjustment())
        # names and counts only: the covariates' rows go with the other rows
        self.adjustment = Adjustment(adj.names, adj.dropped, adj.terms)
        self._nobs = int(data.nobs)
        self.endog_name = data.endog_name
        self.names = {k: list(v) for k, v in data.names.items()}
        self.is_pandas = bool(data.is_pandas)
        self._weighted = bool(data.weighted)

    @property
    def nobs(self) -> int:
        return self._nobs

    @property
    def weighted(self) -> bool:
        return self._weighted

    @property
    def nobs_eff(self) -> int:
        """Effective sample size ``nobs - 1 - p_Z``."""
        return self._nobs - 1 - self.adjustment.p

    @property
    def response_unit(self) -> float:
        """1.0: the rows were dropped."""
        return 1.0

    def rows(self, what: str, *, weights: bool = False, unit: bool = False) -> tuple[Any, ...]:
        """Raise :class:`RowsNotInMemoryError`: the rows were dropped."""
        raise RowsNotInMemoryError(
            f"{what} needs the model's data, which remove_data() dropped; refit "
            "the model to use it"
        )

    def require_source(self, what: str) -> None:
        """Raise :class:`RowsNotInMemoryError`: no rows, no source."""
        self.rows(what)

    def moments(
        self, weights: np.ndarray | None = None, *, covariances: bool = True
    ) -> BlockMoments:
        """Raise: the results keep the fit's moments; the model has none."""
        self.rows("moments() of the training data")
        raise AssertionError  # pragma: no cover


class DataModel:
    """Base of every model: read-only access to its validated data.

    Subclasses set ``self._data`` (a :class:`RowsData`: a :class:`ModelData`
    for rows in memory) and ``self._formula`` in ``__init__``/``from_formula``.
    """

    _data: RowsData
    _formula: str | None = None
    _model_specs: tuple[Any, ...] | None = None
    #: Constructor argument of each design block, in order (one block:
    #: ``"y ~ x1 + x2"``; two blocks: ``"y ~ a-terms | b-terms"``).
    _block_args: tuple[str, ...] = ()

    @classmethod
    def from_formula(
        cls: type[_Model],
        formula: str,
        data: Any,
        *,
        missing: MissingPolicy = "none",
        weights: Any = None,
        eval_env: int = 0,
        covariates: str | None = None,
    ) -> _Model:
        """Build the model from a formula (formulaic, patsy syntax; ``np`` is available).

        Parameters
        ----------
        formula : str
            The response left of ``~``; right of it the predictors
            (``"y ~ x1 + np.log(x2)"``) or, for the joint model, the terms of
            block a and block b separated by a bar
            (``"y ~ x1 + x2 | z1 + np.log(z2)"``).  No intercept is used (the
            blocks are centred); a categorical term gets treatment-coded
            dummies.
        data : DataFrame or mapping
        missing, weights
            As for the constructor.
        eval_env : int
            Frames above the caller in which to look up names not in ``data``.
        covariates : str, optional
            Joint model: formula terms of covariates to adjust for
            (``"age + C(site)"``, treatment-coded), see the constructor.  On
            the left of ``~``, ``C(y)`` (or a text, boolean or categorical
            column) is a categorical response and ``y1 + y2`` a multivariate one.

        Examples
        --------
        >>> import numpy as np, jdr_stats as jdr
        >>> df = jdr.simulate.bilinear(500, 3, 2, 1, seed=1).frame
        >>> mod = jdr.JointDimReduction.from_formula("y ~ a0 + a1 + np.exp(a2) | b0 + b1", df)
        >>> mod.exog_names_a
        ['a0', 'a1', 'np.exp(a2)']
        """
        y, blocks, specs = designs_from_formula(
            formula, data, list(cls._block_args), eval_env=eval_env, return_specs=True
        )
        extra: dict[str, Any] = {}
        if covariates is not None:
            if cls._block_args != ("exog_a", "exog_b"):
                raise TypeError(f"{cls.__name__}.from_formula takes no covariates")
            extra["covariates"] = covariates_from_formula(covariates, data,
                                                          eval_env=eval_env + 1)
        model = cls(y, *blocks, missing=missing, weights=weights, **extra)  # type: ignore[call-arg]
        model._formula = formula
        model._model_specs = tuple(specs)  # rebuilds the blocks of new data
        return model

    @property
    def endog(self) -> np.ndarray:
        """The response (float array)."""
        return self._data.rows("the data of endog")[0]

    @property
    def endog_name(self) -> str:
        return self._data.endog_name

    @property
    def nobs(self) -> int:
        return self._data.nobs

    @property
    def weights(self) -> np.ndarray | None:
        """Case weights, or None."""
        return self._data.weights

    @property
    def formula(self) -> str | None:
        """The formula the model was built from, or None."""
        return self._formula

    @property
    def data(self) -> RowsData:
        """The validated data (read-only; :class:`RowsData`)."""
        return self._data


def check_new_block(
    x: Any, argname: str, names: Sequence[str], *, labelled: bool
) -> np.ndarray:
    """Validate new data for ``transform``: width, finiteness and names."""
    arr, new_names = as_block(x, argname, "_")
    if arr.shape[1] != len(names):
        raise ValueError(
            f"{argname} must have {len(names)} columns (as in the fitted model); "
            f"got {arr.shape[1]}"
        )
    if isinstance(x, pd.DataFrame) and labelled and list(new_names) != list(names):
        raise ValueError(
            f"{argname} columns {list(new_names)} do not match the fitted model's "
            f"{list(names)}"
        )
    if not np.isfinite(arr).all():
        raise ValueError(f"{argname} contains NaN or infinite values")
    return arr


def check_effective_rows(data: ModelData) -> None:
    """With covariates, ``nobs - 1 - p_Z`` must exceed the widest block by 1."""
    if not data.adjustment.active:
        return
    widest = max(len(v) for v in data.names.values())
    if data.nobs_eff < widest + 1:
        raise ValueError(
            f"too few rows after the adjustment: {data.nobs} rows, {data.adjustment.p} "
            f"covariate column(s), effective sample size {data.nobs_eff}; need at least "
            f"{widest + 1} (the widest block has {widest} columns)"
        )
