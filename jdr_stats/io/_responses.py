"""Responses and covariates: what the estimator sees of ``endog`` and ``covariates``.

A numeric response is one column; a categorical response with ``C`` classes
becomes ``C - 1`` class indicators (the first class is the reference); a
2-D ``endog`` is a multivariate response of ``q`` columns.  Covariates ``Z``
(numeric columns, and the indicators of categorical ones) are partialled
out: the response and both blocks are replaced by their (weighted) least
squares residuals on ``[1, Z]`` (:func:`residualize`).  A response of more
than one column is then centred and whitened (:func:`whiten_response`), so
that the estimator sees ``Yw`` (m x q) with identity covariance; one column
is kept as it is, so that a single numeric response gives today's numbers.
Derivations: docs/theory/responses.md.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import pandas as pd

from ..core.moments import column_scales
from ..exceptions import CovariateWarning, RareClassWarning

__all__ = [
    "Adjustment",
    "ResponseInfo",
    "ResponseKind",
    "covariate_matrix",
    "indicators",
    "parse_response",
    "residualize",
    "summary_lines",
    "summary_notes",
    "whiten_response",
]

ResponseKind = Literal["auto", "numeric", "categorical"]
_KINDS = ("auto", "numeric", "categorical")
#: A class is rare (RareClassWarning) when it has fewer rows than this ...
RARE_CLASS_ROWS = 10
#: ... and fewer than this share of an average class's rows (m / K).
RARE_CLASS_SHARE = 0.5


def rare_classes(classes: Sequence[Any], counts: Sequence[int]) -> list[tuple[Any, int]]:
    """The classes that are rare relative to the design, with their counts.

    A class of ``m_k`` rows among ``K`` classes and ``m`` rows is rare when
    ``m_k < RARE_CLASS_ROWS`` (10) and ``m_k < RARE_CLASS_SHARE m / K``
    (half an average class): its indicator's cross moment is then much
    noisier than the others'.  A balanced design of few rows per class has
    no rare class (its smallness is the sample size's, which the fit's
    minimum number of rows and the tests' own checks address).
    """
    present = [(c, int(n)) for c, n in zip(classes, counts, strict=True) if n > 0]
    if not present:
        return []
    average = sum(n for _, n in present) / len(present)
    return [(c, n) for c, n in present
            if n < RARE_CLASS_ROWS and n < RARE_CLASS_SHARE * average]


def rare_class_message(rare: list[tuple[Any, int]], counts: Sequence[int]) -> str:
    """The RareClassWarning's text, with the rule that made the classes rare."""
    present = [int(n) for n in counts if n > 0]
    average = sum(present) / len(present)
    return (f"endog has rare class(es) {rare} (fewer than {RARE_CLASS_ROWS} rows and "
            f"fewer than half the {average:.3g} rows of an average class): their cross "
            "moments are noisy and the rank tests' asymptotics are in doubt")


@dataclass(frozen=True)
class ResponseInfo:
    """What the response is: its type, its columns and (categorical) classes.

    ``kind`` is ``"numeric"``, ``"categorical"`` or ``"multivariate"``;
    ``q`` the number of columns the estimator uses (``C - 1`` for ``C``
    classes, the rank of the response covariance for a multivariate one);
    ``classes`` the class labels (reference first) with their counts.
    """

    kind: str = "numeric"
    names: tuple[str, ...] = ("y",)
    q: int = 1
    classes: tuple[Any, ...] = ()
    counts: tuple[int, ...] = ()
    dropped: tuple[str, ...] = ()

    def class_note(self) -> str:
        """The classes and their counts (reference first), for a summary note."""
        shown = ", ".join(f"{c} ({n})" for c, n in zip(self.classes, self.counts, strict=True))
        return f"Response classes (first = reference): {shown}."

    def describe(self) -> str:
        """One line for summaries: ``numeric``, ``categorical, 3 classes``, ..."""
        if self.kind == "categorical":
            return f"categorical, {len(self.classes)} classes"
        if self.kind == "multivariate":
            out = f"multivariate, q = {self.q} ({', '.join(self.names)})"
            if self.dropped:
                out += f"; collinear column(s) {list(self.dropped)} dropped"
            return out
        return "numeric"


@dataclass(frozen=True)
class Adjustment:
    """The covariates partialled out: their design columns and the count lost.

    ``names`` are the design columns kept (indicators named ``site[T.b]``),
    ``dropped`` those removed as collinear with the intercept or the other
    columns; ``p`` the rank of ``Z`` without the intercept, so that the
    effective sample size is ``nobs - 1 - p``.  ``design`` holds the kept
    columns of ``Z`` (rows as the model's) where the model keeps them (in
    memory; None for a streamed source): the conditional main-effects test
    repeats the fit on ``Z`` for each permutation.
    """

    names: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()
    terms: str | None = None
    design: np.ndarray | None = field(default=None, repr=False, compare=False)

    @property
    def p(self) -> int:
        return len(self.names)

    @property
    def active(self) -> bool:
        return bool(self.names) or bool(self.dropped)

    def describe(self) -> str:
        """One line for summaries."""
        if not self.active:
            return "none"
        what = self.terms if self.terms else ", ".join(self.names)
        out = f"{what} (linear, p_Z = {self.p})"
        if self.dropped:
            out += f"; dropped {list(self.dropped)}"
        return out


# ---------------------------------------------------------------------------
# Reading the response
# ---------------------------------------------------------------------------
def _looks_numeric(values: pd.Series) -> bool:
    present = values.dropna()
    if present.empty:
        return False
    converted = pd.to_numeric(present.astype(str).str.strip(), errors="coerce")
    return bool(converted.notna().all())


@dataclass
class ParsedResponse:
    """``endog`` read: float values (codes for a categorical one) and names."""

    values: np.ndarray  # (m,) numeric or class codes (NaN missing), or (m, q)
    names: list[str]
    kind: str  # "numeric", "categorical" or "multivariate"
    classes: list[Any] = field(default_factory=list)


def _name(y: Any) -> str:
    if isinstance(y, pd.Series) and y.name is not None:
        return str(y.name)
    if isinstance(y, pd.DataFrame):
        return str(y.columns[0])
    return "y"


def _categorical(series: pd.Series, name: str) -> ParsedResponse:
    cat = series.astype("category") if not isinstance(series.dtype, pd.CategoricalDtype) \
        else series
    codes = cat.cat.codes.to_numpy().astype(float)
    codes[codes < 0] = np.nan
    return ParsedResponse(codes, [name], "categorical", list(cat.cat.categories))


def _to_float(x: Any, argname: str) -> np.ndarray:
    """Numbers to a float array; text (or anything else) a TypeError naming ``argname``."""
    arr = np.asarray(x)
    if arr.dtype.kind in "USa" or (arr.dtype.kind == "O" and any(
            isinstance(v, (str, bytes)) for v in arr.ravel())):
        raise TypeError(f"{argname} must be numeric; got an array of strings "
                        f"(dtype {arr.dtype})")
    try:
        return np.asarray(x, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{argname} must be numeric; got {type(x).__name__} ({exc})") from None


def parse_response(y: Any, response: str) -> ParsedResponse:
    """Decide the response type of ``endog`` and read it.

    Categorical: a pandas Categorical, a boolean or a text column, or any
    1-D response with ``response="categorical"``.  A text column whose
    values all look like numbers is refused (a CSV column read as text).
    Multivariate: a 2-D array or DataFrame with more than one column.
    """
    from ..runtime._validation import check_choice

    check_choice(response, "response", _KINDS)
    if y is None:
        raise TypeError("endog is required; got None")
    name = _name(y)
    if isinstance(y, pd.DataFrame):
        if y.shape[1] == 1:
            return parse_response(y.iloc[:, 0], response)
        bad = [str(c) for c, t in y.dtypes.items() if not pd.api.types.is_numeric_dtype(t)
               or isinstance(t, pd.CategoricalDtype)]
        if bad:
            raise TypeError(
                f"a multivariate endog must be numeric; column(s) {bad} are not "
                "(a categorical response is one column)"
            )
        if response == "categorical":
            raise ValueError('response="categorical" needs a single column; got a '
                             f"DataFrame with {y.shape[1]} columns")
        return ParsedResponse(y.to_numpy(dtype=float), [str(c) for c in y.columns],
                              "multivariate")
    if isinstance(y, (pd.Categorical, pd.Index)):
        y = pd.Series(y)
    if isinstance(y, (list, tuple)):
        y = np.asarray(y, dtype=object if any(isinstance(v, str) for v in y) else None)
    if isinstance(y, np.ndarray) and y.ndim > 2:
        raise ValueError(f"endog must be 1- or 2-dimensional (one response, or m x q "
                         f"responses); got an array of shape {y.shape}")
    if isinstance(y, np.ndarray) and y.ndim == 2 and y.shape[1] == 1:
        y = y[:, 0]
    if isinstance(y, np.ndarray) and y.ndim == 2 and y.shape[1] > 1:
        if response == "categorical":
            raise ValueError('response="categorical" needs a single column; got an '
                             f"array of shape {y.shape}")
        arr = _to_float(y, "endog")
        return ParsedResponse(arr, [f"y{j}" for j in range(arr.shape[1])], "multivariate")
    series = pd.Series(np.asarray(y).reshape(-1)) if isinstance(y, np.ndarray) else y
    if not isinstance(series, pd.Series):
        return ParsedResponse(_to_float(y, "endog").reshape(-1), [name], "numeric")
    dtype = series.dtype
    text = dtype is np.dtype(object) or pd.api.types.is_string_dtype(dtype)
    if isinstance(dtype, pd.CategoricalDtype) or pd.api.types.is_bool_dtype(dtype):
        if response == "numeric":
            raise TypeError(f'endog is {dtype} but response="numeric"; convert it to '
                            "numbers first, or leave response=\"auto\"")
        return _categorical(series, name)
    if text and series.map(lambda v: isinstance(v, (str, bytes))).any():
        if _looks_numeric(series):
            raise TypeError(
                "endog must be numeric or categorical; it holds strings that look "
                "like numbers (e.g. "
                f"{series.dropna().iloc[0]!r}); convert it with pd.to_numeric for a "
                'numeric response, or with astype("category") for a categorical one'
            )
        if response == "numeric":
            raise TypeError('endog holds strings but response="numeric"')
        return _categorical(series, name)
    if response == "categorical":
        return _categorical(series, name)
    return ParsedResponse(_to_float(series, "endog"), [name], "numeric")


def indicators(codes: np.ndarray, classes: list[Any], name: str,
               ) -> tuple[np.ndarray, ResponseInfo]:
    """Class indicators of the classes present (the first present one dropped).

    Refuses a single class; warns (:class:`RareClassWarning`) about classes
    rare relative to the design (:func:`rare_classes`).  Two classes give one column
    (shape ``(m,)``), the indicator of the second class.
    """
    codes = codes.astype(int)
    counts = np.bincount(codes, minlength=len(classes))
    present = np.flatnonzero(counts)
    if present.size < 2:
        only = classes[int(present[0])] if present.size else None
        raise ValueError(
            f"endog has a single class ({only!r}) in all {codes.size} rows; a "
            "categorical response needs at least two classes"
        )
    rare = rare_classes(classes, counts.tolist())
    if rare:
        warnings.warn(rare_class_message(rare, counts.tolist()), RareClassWarning,
                      stacklevel=5)
    ind = (codes[:, None] == present[None, 1:]).astype(float)
    info = ResponseInfo(
        kind="categorical", names=tuple(f"{name}[{classes[j]}]" for j in present[1:]),
        q=present.size - 1, classes=tuple(classes[j] for j in present),
        counts=tuple(int(counts[j]) for j in present),
    )
    return (ind[:, 0] if info.q == 1 else ind), info


# ---------------------------------------------------------------------------
# Covariates
# ---------------------------------------------------------------------------
def covariate_matrix(z: Any) -> tuple[np.ndarray, list[str]]:
    """Float design of the covariates: numeric columns as they are, the
    indicators of categorical / boolean / text columns (first level dropped);
    rows with a missing value are NaN in every column."""
    if isinstance(z, pd.Series):
        z = z.to_frame(name=z.name if z.name is not None else "z0")
    if not isinstance(z, pd.DataFrame):
        arr = _to_float(z, "covariates")
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2:
            raise ValueError(f"covariates must be 1- or 2-dimensional; got shape {arr.shape}")
        return arr, [f"z{j}" for j in range(arr.shape[1])]
    parts, names = [], []
    for col in z.columns:
        s = z[col]
        numeric = pd.api.types.is_numeric_dtype(s.dtype) and not isinstance(
            s.dtype, pd.CategoricalDtype) and not pd.api.types.is_bool_dtype(s.dtype)
        if numeric:
            parts.append(s.to_numpy(dtype=float)[:, None])
            names.append(str(col))
            continue
        if s.dtype == object and _looks_numeric(s) and s.map(
                lambda v: isinstance(v, str)).any():
            raise TypeError(
                f"covariates column {col!r} holds strings that look like numbers; "
                'convert it with pd.to_numeric (numeric) or astype("category")'
            )
        cat = s.astype("category")
        dummies = pd.get_dummies(cat, prefix=str(col), prefix_sep="[T.", dtype=float)
        dummies = dummies.iloc[:, 1:]
        dummies.columns = [f"{c}]" for c in dummies.columns]
        block = dummies.to_numpy(dtype=float, copy=True)
        block[cat.isna().to_numpy()] = np.nan
        parts.append(block)
        names.extend(dummies.columns)
    if not parts:
        raise ValueError("covariates has no columns")
    return np.hstack(parts), names


def residualize(
    z: np.ndarray, znames: list[str], w: np.ndarray | None, *arrays: np.ndarray
) -> tuple[Adjustment, list[np.ndarray]]:
    """Least squares residuals of each array on ``[1, Z]`` (weighted by ``w``).

    ``Z`` is reduced to linearly independent columns by a pivoted QR of the
    (weighted, centred) design: a column whose residual norm is below
    ``1e-9`` times the largest column norm is dropped, with a
    :class:`CovariateWarning` naming it.  The kept columns are reported in
    their original order, so the result does not depend on column order.
    """
    from scipy.linalg import qr

    m = z.shape[0]
    sw = np.ones(m) if w is None else np.sqrt(w / w.mean())
    mean = (sw**2 @ z) / (sw**2).sum()
    zc = (z - mean) * sw[:, None]
    scale = np.sqrt((zc**2).sum(axis=0))
    top = scale.max() if scale.size else 0.0
    keep_mask = scale > 1e-12 * max(top, 1e-300)
    if keep_mask.any():
        zs = zc[:, keep_mask] / scale[keep_mask]
        _, r, piv = qr(zs, mode="economic", pivoting=True)
        diag = np.abs(np.diag(r))
        rank = int(np.sum(diag > 1e-9 * diag[0]))
        idx = np.flatnonzero(keep_mask)[np.sort(piv[:rank])]
    else:
        idx = np.array([], dtype=int)
    dropped = [znames[j] for j in range(len(znames)) if j not in set(idx.tolist())]
    if dropped:
        warnings.warn(
            f"covariates column(s) {dropped} are constant or collinear with the other "
            "covariates and the intercept; dropped", CovariateWarning, stacklevel=5,
        )
    if m <= idx.size + 1:
        raise ValueError(f"covariates have {idx.size} independent columns but only {m} rows")
    q, _ = np.linalg.qr(zc[:, idx]) if idx.size else (np.zeros((m, 0)), None)
    out = []
    for arr in arrays:
        wmean = (sw**2 @ arr) / (sw**2).sum()
        xc = (arr - wmean) * (sw[:, None] if arr.ndim == 2 else sw)
        proj = q @ (q.T @ xc)
        res = (xc - proj) / (sw[:, None] if arr.ndim == 2 else sw)
        out.append(np.ascontiguousarray(res))
    return Adjustment(names=tuple(znames[j] for j in idx), dropped=tuple(dropped),
                      design=np.asarray(z[:, idx], float)), out


def whiten_response(y: np.ndarray, names: list[str], w: np.ndarray | None,
                    ) -> tuple[np.ndarray, list[str], list[str]]:
    """Centre and whiten a response matrix; collinear columns dropped.

    Returns ``(Yw, kept names, dropped names)``: ``Yw = (Y - mean) L^{-T}``
    with ``L`` the Cholesky factor of the (weighted) covariance of the kept
    columns, chosen by a pivoted QR (relative tolerance ``1e-9``), so a
    scaled copy of a column changes nothing.
    """
    from scipy.linalg import qr, solve_triangular

    m = y.shape[0]
    wn = np.full(m, 1.0 / m) if w is None else w / w.sum()
    scale = column_scales((y,), rows=m)  # Yw is unit-free: extreme units brought near 1
    if scale is not None:
        y = y * scale
    yc = y - wn @ y
    sd = np.sqrt(wn @ yc**2)
    const = sd <= 1e-12 * max(float(np.abs(y).max()), 1e-300)
    if const.any():
        cols = [names[j] for j in np.flatnonzero(const)]
        raise ValueError(f"endog has constant column(s) {cols}; the response must vary")
    ys = yc / sd * np.sqrt(wn)[:, None]
    _, r, piv = qr(ys, mode="economic", pivoting=True)
    diag = np.abs(np.diag(r))
    rank = int(np.sum(diag > 1e-9 * diag[0]))
    keep = np.sort(piv[:rank])
    dropped = [names[j] for j in range(len(names)) if j not in set(keep.tolist())]
    yk = yc[:, keep]
    cov = (yk * wn[:, None]).T @ yk
    chol = np.linalg.cholesky((cov + cov.T) / 2)
    yw = solve_triangular(chol, yk.T, lower=True).T
    return np.ascontiguousarray(yw), [names[j] for j in keep], dropped


def _check_explained(before: dict[str, np.ndarray], after: list[np.ndarray]) -> None:
    """A block column the covariates explain (residual SD below ``1e-8`` of its
    SD) carries nothing after the adjustment: a ValueError naming it."""
    for (argname, x), r in zip(before.items(), after, strict=True):
        scale = column_scales((x,))  # extreme units: SDs of the columns times powers of two
        if scale is not None:
            x, r = x * scale, r * scale
        gone = np.flatnonzero(r.std(axis=0) <= 1e-8 * x.std(axis=0))
        if gone.size:
            raise ValueError(
                f"{argname} column(s) at position(s) {gone.tolist()} are linear functions "
                "of the covariates: nothing is left of them after the adjustment; remove "
                "them from the block (or from the covariates)"
            )


def model_response(
    y: np.ndarray, kind: str, ynames: list[str], classes: list[Any] | None,
    arrays: dict[str, np.ndarray], w: np.ndarray | None,
    z: np.ndarray | None, znames: list[str] | None, terms: str | None = None,
) -> tuple[np.ndarray, dict[str, np.ndarray], ResponseInfo, Adjustment]:
    """The response matrix and blocks the estimator sees (rows already complete).

    Class indicators for a categorical response; the residuals on
    ``[1, Z]`` of the response and of each block when there are covariates;
    a response of more than one column centred and whitened
    (:func:`whiten_response`).  A single numeric response without covariates
    is returned untouched (today's numbers).
    """
    name = ynames[0]
    if kind == "categorical":
        y, info = indicators(y, list(classes or []), name)
    elif kind == "multivariate":
        info = ResponseInfo(kind="multivariate", names=tuple(ynames), q=len(ynames))
    else:
        info = ResponseInfo(kind="numeric", names=(name,), q=1)
    adjustment = Adjustment()
    if z is not None:
        keys = list(arrays)
        adjustment, res = residualize(z, list(znames or []), w, y, *arrays.values())
        adjustment = Adjustment(adjustment.names, adjustment.dropped, terms,
                                design=adjustment.design)
        _check_explained(arrays, res[1:])
        y, arrays = res[0], dict(zip(keys, res[1:], strict=True))
        if y.ndim == 1 and np.ptp(y) <= 1e-12 * max(float(np.abs(y).max()), 1e-300):
            raise ValueError("endog is a function of the covariates: its residual is constant")
    if y.ndim == 2:
        cols = list(info.names)
        yw, kept, dropped = whiten_response(y, cols, w)
        # collinear response columns add nothing: dropped, named in the summary
        info = ResponseInfo(info.kind, tuple(kept) if info.kind == "multivariate"
                            else info.names, yw.shape[1], info.classes, info.counts,
                            tuple(dropped))
        y = yw[:, 0] if yw.shape[1] == 1 else yw
    return y, arrays, info, adjustment


def summary_lines(data: Any) -> dict[str, Any]:
    """The summary's response type and adjustment."""
    info = getattr(data, "response", None) or ResponseInfo()
    adj = getattr(data, "adjustment", None) or Adjustment()
    out: dict[str, Any] = {"Response:": info.describe(), "Adjusted for:": adj.describe()}
    if adj.active:
        out["Effective obs.:"] = f"{data.nobs - 1 - adj.p} (m - 1 - p_Z)"
    return out


def summary_notes(data: Any) -> list[str]:
    """Notes on a categorical or multivariate response and on the adjustment."""
    info = getattr(data, "response", None) or ResponseInfo()
    adj = getattr(data, "adjustment", None) or Adjustment()
    notes = [info.class_note()] if info.kind == "categorical" else []
    if adj.active:
        notes.append(
            "Adjusted: y and both blocks are least squares residuals on "
            f"[1, {', '.join(adj.names)}] (effective sample size m - 1 - p_Z = "
            f"{data.nobs - 1 - adj.p})."
        )
    return notes
