"""Input validation: arrays, Series and DataFrames to float arrays plus names.

Every model of the package (the joint estimator and the single-block
baselines) validates its input once, here, into a :class:`ModelData`: a float
response, one or more float design blocks, their variable names and the row
labels.  Errors name the argument and the offending value (STYLE.md, 8).
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import numpy as np
import pandas as pd

from ._validation import check_choice
from .exceptions import MissingDataWarning

__all__ = [
    "ModelData",
    "MissingPolicy",
    "check_new_block",
    "designs_from_formula",
    "DataModel",
    "check_not_text",
    "design_from_spec",
]

MissingPolicy = Literal["none", "drop", "raise"]
_Model = TypeVar("_Model", bound="DataModel")
_MISSING = ("none", "drop", "raise")


def _names_of(x: Any, ncol: int, prefix: str) -> list[str]:
    if isinstance(x, pd.DataFrame):
        return [str(c) for c in x.columns]
    if isinstance(x, pd.Series) and x.name is not None:
        return [str(x.name)]
    if ncol == 1 and prefix == "y":
        return ["y"]
    return [f"{prefix}{j}" for j in range(ncol)]


def _has_text(values: Any) -> bool:
    return any(isinstance(v, (str, bytes)) for v in np.asarray(values, dtype=object).ravel())


def check_not_text(x: Any, argname: str) -> None:
    """Refuse string, categorical and text-holding object data with a TypeError.

    Numeric-looking strings (``"1.5"``) are refused too: a block of strings
    is a mistake in the input (a CSV column read as text), not data to
    convert silently.  Booleans are numeric (0/1).
    """
    if isinstance(x, (pd.DataFrame, pd.Series)):
        frame = x.to_frame() if isinstance(x, pd.Series) else x
        bad = []
        for col, dtype in frame.dtypes.items():
            if pd.api.types.is_bool_dtype(dtype) or (
                pd.api.types.is_numeric_dtype(dtype)
                and not isinstance(dtype, pd.CategoricalDtype)
            ):
                continue
            if dtype == object and not _has_text(frame[col].to_numpy()):
                continue
            bad.append(f"{col} ({dtype})")
        if bad:
            raise TypeError(
                f"{argname} must be numeric; column(s) {', '.join(map(str, bad))} hold "
                "strings or categories (convert them with pd.to_numeric, or code a "
                "categorical variable in a formula, e.g. C(x))"
            )
        return
    if isinstance(x, np.ndarray):
        kind = x.dtype.kind
        if kind in "USa" or (kind == "O" and _has_text(x)):
            raise TypeError(
                f"{argname} must be numeric; got an array of strings (dtype {x.dtype}); "
                "convert it explicitly, e.g. with astype(float)"
            )
        return
    if isinstance(x, (list, tuple)) and _has_text(np.asarray(x, dtype=object)):
        raise TypeError(f"{argname} must be numeric; got a {type(x).__name__} holding strings")


def _as_float(x: Any, argname: str) -> np.ndarray:
    check_not_text(x, argname)
    if isinstance(x, (pd.DataFrame, pd.Series)):
        try:
            arr = x.to_numpy(dtype=float)
        except (TypeError, ValueError) as exc:
            raise TypeError(
                f"{argname} must be numeric; could not convert its columns to "
                f"float ({exc})"
            ) from None
        return arr
    try:
        arr = np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            f"{argname} must be a numeric array, Series or DataFrame; got "
            f"{type(x).__name__} ({exc})"
        ) from None
    return arr


def _as_block(x: Any, argname: str, prefix: str) -> tuple[np.ndarray, list[str]]:
    """Convert one design block to a 2-D float array and its column names."""
    if x is None:
        raise TypeError(f"{argname} is required; got None")
    arr = _as_float(x, argname)
    if arr.ndim == 1:
        arr = arr[:, None]
    if arr.ndim != 2:
        raise ValueError(
            f"{argname} must be 1- or 2-dimensional; got an array of shape {arr.shape}"
        )
    if arr.shape[1] == 0:
        raise ValueError(f"{argname} has no columns; got shape {arr.shape}")
    names = _names_of(x, arr.shape[1], prefix)
    if len(set(names)) != len(names):
        dup = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"{argname} has duplicate column names: {dup}")
    return arr, names


def _as_endog(y: Any) -> tuple[np.ndarray, str]:
    if y is None:
        raise TypeError("endog is required; got None")
    arr = _as_float(y, "endog")
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(
            f"endog must be one-dimensional (a single response); got shape {arr.shape}"
        )
    if isinstance(y, pd.Series) and y.name is not None:
        name = str(y.name)
    elif isinstance(y, pd.DataFrame):
        name = str(y.columns[0])
    else:
        name = "y"
    return arr, name


def _row_index(*objs: Any) -> pd.Index | None:
    for obj in objs:
        if isinstance(obj, (pd.Series, pd.DataFrame)):
            return obj.index
    return None


@dataclass(frozen=True)
class ModelData:
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

    @property
    def nobs(self) -> int:
        return int(self.endog.shape[0])

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
        """
        check_choice(missing, "missing", _MISSING)
        y, yname = _as_endog(endog)
        arrays: dict[str, np.ndarray] = {}
        names: dict[str, list[str]] = {}
        m = y.shape[0]
        for argname, (x, prefix) in blocks.items():
            arr, nm = _as_block(x, argname, prefix)
            if arr.shape[0] != m:
                raise ValueError(
                    f"{argname} has {arr.shape[0]} rows but endog has {m}; "
                    "every input must have one row per observation"
                )
            arrays[argname] = arr
            names[argname] = nm
        w = None
        if weights is not None:
            w = _as_float(weights, "weights").ravel()
            if w.shape[0] != m:
                raise ValueError(
                    f"weights has {w.shape[0]} values but endog has {m} rows"
                )
        index = _row_index(endog, *(x for x, _ in blocks.values()), weights)
        is_pandas = index is not None

        # Infinite values are errors whatever the missing policy.
        all_finite: dict[str, bool] = {}
        for argname, arr in [("endog", y), *arrays.items()] + (
            [("weights", w)] if w is not None else []
        ):
            all_finite[argname] = bool(np.isfinite(arr).all())
            if all_finite[argname]:  # one pass in the common case
                continue
            bad = np.isinf(arr)
            if bad.any():
                row = int(np.argwhere(bad)[0][0])
                raise ValueError(
                    f"{argname} contains infinite values ({int(bad.sum())} of them, "
                    f"first in row {row})"
                )
        # Missing values.
        nan_rows = np.isnan(y)
        for argname, arr in arrays.items():
            if not all_finite[argname]:  # no inf here, so it holds NaN
                nan_rows |= np.isnan(arr).any(axis=1)
        if w is not None:
            nan_rows |= np.isnan(w)
        if nan_rows.any():
            if missing == "drop":
                keep = ~nan_rows
                warnings.warn(
                    f"dropped {int(nan_rows.sum())} of {m} rows with missing values "
                    '(missing="drop")',
                    MissingDataWarning,
                    stacklevel=3,
                )
                y = y[keep]
                arrays = {k: v[keep] for k, v in arrays.items()}
                if w is not None:
                    w = w[keep]
                if index is not None:
                    index = index[keep]
            else:
                where = [
                    name
                    for name, arr in [("endog", y), *arrays.items()]
                    if np.isnan(arr).any()
                ]
                raise ValueError(
                    f"{', '.join(where)} contain(s) NaN in {int(nan_rows.sum())} rows "
                    f'(missing={missing!r}); pass missing="drop" to drop those rows'
                )
        m = y.shape[0]
        if w is not None and (w <= 0).any():
            raise ValueError(
                f"weights must be positive; got minimum {float(w.min())!r}"
            )
        widest = max(a.shape[1] for a in arrays.values())
        need = widest + 2 if min_rows is None else min_rows
        if m < need:
            raise ValueError(
                f"too few rows: got {m} complete observations, need at least {need} "
                f"(the widest block has {widest} columns)"
            )
        if check_response and np.ptp(y) == 0:
            raise ValueError(
                f"endog has a single value ({y[0]!r}) in all {m} rows; the "
                "response must vary"
            )
        for argname, arr in arrays.items():
            const = np.ptp(arr, axis=0) == 0
            if const.any():
                cols = [names[argname][j] for j in np.flatnonzero(const)]
                raise ValueError(
                    f"{argname} has constant column(s) {cols}; the blocks are centred, "
                    "so a constant column carries no information: remove it"
                )
        return cls(
            endog=np.ascontiguousarray(y),
            blocks=arrays,
            endog_name=yname,
            names=names,
            row_index=index,
            weights=w,
            is_pandas=is_pandas,
        )


class DataModel:
    """Base of every model: read-only access to its validated data.

    Subclasses set ``self._data`` (a :class:`ModelData`) and
    ``self._formula`` in ``__init__``/``from_formula``.
    """

    _data: ModelData
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
        model = cls(y, *blocks, missing=missing, weights=weights)  # type: ignore[call-arg]
        model._formula = formula
        model._model_specs = tuple(specs)  # rebuilds the blocks of new data
        return model

    @property
    def endog(self) -> np.ndarray:
        """The response (float array)."""
        return self._data.endog

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
    def data(self) -> ModelData:
        """The validated data (read-only container)."""
        return self._data


def check_new_block(
    x: Any, argname: str, names: Sequence[str], *, labelled: bool
) -> np.ndarray:
    """Validate new data for ``transform``: width, finiteness and names."""
    arr, new_names = _as_block(x, argname, "_")
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


def _split_top_level(text: str, sep: str) -> list[str]:
    """Split ``text`` at ``sep`` outside parentheses and brackets."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return parts


def _formula_error_types() -> tuple[type[BaseException], ...]:
    from formulaic.errors import FormulaicError

    # a missing column or a failing function surface as these
    return (FormulaicError, NameError, KeyError, TypeError, ValueError, SyntaxError)


def _design(terms: str, data: Any, context: Mapping[str, Any], argname: str):
    """One block's design (intercept dropped) and the formulaic ModelSpec."""
    import formulaic

    try:
        mm = formulaic.model_matrix(
            "1 + " + terms, data, context=context, na_action="ignore",  # keep NaN: ModelData applies `missing`
        )
    except _formula_error_types() as exc:
        raise ValueError(
            f"cannot build {argname} from the formula terms {terms.strip()!r}: {exc}"
        ) from None
    frame = pd.DataFrame(mm).drop(columns="Intercept")
    return frame, mm.model_spec


def design_from_spec(spec: Any, data: Any, argname: str) -> pd.DataFrame:
    """Rebuild a block for new data with a training ModelSpec.

    Stateful transforms (``center(x)``, ``scale(x)``) use the training
    statistics and categorical terms the training levels and coding.
    """
    try:
        mm = spec.get_model_matrix(data, na_action="ignore")
    except _formula_error_types() as exc:
        raise ValueError(f"cannot build {argname} from the new data: {exc}") from None
    return pd.DataFrame(mm).drop(columns="Intercept")


def _formula_context(depth: int) -> dict[str, Any]:
    """Names visible ``depth`` frames above the caller, plus ``np``."""
    frame = sys._getframe(depth + 1)
    context = {"np": np}
    context.update(frame.f_globals)
    context.update(frame.f_locals)
    return context


def designs_from_formula(
    formula: Any,
    data: Any,
    argnames: Sequence[str],
    *,
    eval_env: int = 0,
    return_specs: bool = False,
) -> tuple[pd.Series, list[pd.DataFrame]] | tuple[pd.Series, list[pd.DataFrame], list[Any]]:
    """Response and design blocks of ``"y ~ terms | terms ..."`` (formulaic).

    One block per name in ``argnames``, separated by top-level bars.  Each
    block is built with an intercept that is then dropped, so a categorical
    term gets treatment-coded dummies (the blocks are centred anyway).
    ``np`` is available in the formula; ``eval_env`` counts frames above the
    caller of this function's caller.  With ``return_specs`` the blocks'
    formulaic ``ModelSpec`` objects are returned too (for new data).
    """
    if len(argnames) not in (1, 2):
        raise ValueError(f"one or two blocks are supported; got {len(argnames)}")
    example = "y ~ a1 + a2 | b1 + b2" if len(argnames) == 2 else "y ~ x1 + x2"
    if not isinstance(formula, str) or "~" not in formula:
        raise ValueError(f'formula must look like "{example}"; got {formula!r}')
    lhs, rhs = formula.split("~", 1)
    parts = _split_top_level(rhs, "|")
    if len(parts) != len(argnames) or not all(p.strip() for p in parts):
        need = (
            "exactly one '|' separating the two blocks"
            if len(argnames) == 2 else "predictors and no '|'"
        )
        raise ValueError(f'formula needs {need}, as in "{example}"; got {formula!r}')
    context = _formula_context(eval_env + 2)
    ydf, _ = _design(lhs, data, context, "endog")
    if ydf.shape[1] != 1:
        raise ValueError(
            f"the response {lhs.strip()!r} must be a single numeric column; it "
            f"expands to {list(ydf.columns)}"
        )
    built = [_design(part, data, context, arg) for part, arg in zip(parts, argnames)]
    blocks = [b for b, _ in built]
    if return_specs:
        return ydf.iloc[:, 0], blocks, [spec for _, spec in built]
    return ydf.iloc[:, 0], blocks
