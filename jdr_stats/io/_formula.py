"""Formulas: ``"y ~ a-terms | b-terms"`` to a response and design blocks (formulaic).

Used by :meth:`jdr_stats.io._data.DataModel.from_formula` and, for new data,
by ``transform(data=...)``; ``np`` is available in a formula.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

import numpy as np
import pandas as pd

__all__ = ["covariates_from_formula", "design_from_spec", "designs_from_formula"]


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


#: A terminal colour or style code (formulaic marks the failing part of a
#: formula with them).
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


def _plain(exc: BaseException) -> str:
    """An error's message without terminal codes, on one line."""
    return " ".join(_ANSI.sub("", str(exc)).split())


def _formula_error_types() -> tuple[type[BaseException], ...]:
    from formulaic.errors import FormulaicError

    # a missing column or a failing function surface as these
    return (FormulaicError, NameError, KeyError, TypeError, ValueError, SyntaxError)


def _design(terms: str, data: Any, context: Mapping[str, Any], argname: str):
    """One block's design (intercept dropped) and the formulaic ModelSpec."""
    import formulaic

    try:
        mm = formulaic.model_matrix(
            # na_action="ignore" keeps NaN: ModelData applies `missing`
            "1 + " + terms, data, context=context, na_action="ignore",
        )
    except _formula_error_types() as exc:
        raise ValueError(
            f"cannot build {argname} from the formula terms {terms.strip()!r}: {_plain(exc)}"
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
        raise ValueError(f"cannot build {argname} from the new data: {_plain(exc)}") from None
    return pd.DataFrame(mm).drop(columns="Intercept")


def _formula_context(depth: int) -> dict[str, Any]:
    """Names visible ``depth`` frames above the caller, plus ``np``."""
    frame = sys._getframe(depth + 1)
    context = {"np": np}
    context.update(frame.f_globals)
    context.update(frame.f_locals)
    return context


@overload
def designs_from_formula(
    formula: Any, data: Any, argnames: Sequence[str], *, eval_env: int = ...,
    return_specs: Literal[False] = ...,
) -> tuple[Any, list[pd.DataFrame]]: ...


@overload
def designs_from_formula(
    formula: Any, data: Any, argnames: Sequence[str], *, eval_env: int = ...,
    return_specs: Literal[True],
) -> tuple[Any, list[pd.DataFrame], list[Any]]: ...


def designs_from_formula(
    formula: Any,
    data: Any,
    argnames: Sequence[str],
    *,
    eval_env: int = 0,
    return_specs: bool = False,
) -> tuple[Any, list[pd.DataFrame]] | tuple[Any, list[pd.DataFrame], list[Any]]:
    """Response and design blocks of ``"y ~ terms | terms ..."`` (formulaic).

    One block per name in ``argnames``, separated by top-level bars.  Each
    block is built with an intercept that is then dropped, so a categorical
    term gets treatment-coded dummies (the blocks are centred anyway).
    ``np`` is available in the formula; ``eval_env`` counts frames above the
    caller of this function's caller.  With ``return_specs`` the blocks'
    formulaic ``ModelSpec`` objects are returned too (for new data).
    """
    if len(argnames) < 1:
        raise ValueError("a formula needs at least one block")
    example = ("y ~ a1 + a2 | b1 + b2" if len(argnames) == 2 else "y ~ x1 + x2"
               if len(argnames) == 1 else " | ".join(["y ~ g1 + g2", "l1 + l2", "c1 + c2"]))
    if not isinstance(formula, str) or "~" not in formula:
        raise ValueError(f'formula must look like "{example}"; got {formula!r}')
    lhs, rhs = formula.split("~", 1)
    parts = _split_top_level(rhs, "|")
    if len(parts) == len(argnames) and not all(p.strip() for p in parts):
        empty = [i for i, p in enumerate(parts) if not p.strip()]
        where = ", ".join(
            f"block {i + 1} ({argnames[i]}, "
            + ("before the first '|'" if i == 0 else f"after '|' number {i}") + ")"
            for i in empty
        )
        raise ValueError(
            f"formula has an empty block: {where} has no terms; give each block its "
            f'variables, as in "{example}"; got {formula!r}'
        )
    if len(parts) != len(argnames):
        need = (
            "exactly one '|' separating the two blocks"
            if len(argnames) == 2 else "predictors and no '|'" if len(argnames) == 1
            else f"{len(argnames) - 1} '|' separating the blocks"
        )
        raise ValueError(f'formula needs {need}, as in "{example}"; got {formula!r}')
    context = _formula_context(eval_env + 2)
    response = _response(lhs, data, context, multi=len(argnames) >= 2)
    built = [_design(part, data, context, arg) for part, arg in zip(parts, argnames, strict=True)]
    blocks = [b for b, _ in built]
    if return_specs:
        return response, blocks, [spec for _, spec in built]
    return response, blocks


_CATEGORICAL = re.compile(r"^\s*C\((.+)\)\s*$")


def _response(lhs: str, data: Any, context: Mapping[str, Any], *, multi: bool) -> Any:
    """The left-hand side: one numeric column; ``C(y)`` a categorical Series
    (its classes, NaN kept missing; also a bare text, boolean or categorical
    column); several terms (``y1 + y2``) a DataFrame, a multivariate
    response (``multi``: the joint model only)."""
    match = _CATEGORICAL.match(lhs)
    if match:
        inner = match.group(1).strip()
        if _is_column(inner, data):
            return pd.Series(data[inner]).astype("category").rename(inner)
        frame, _ = _design(inner, data, context, "endog")
        if frame.shape[1] != 1:
            raise ValueError(f"C(...) on the left of ~ takes one variable; got {lhs.strip()!r}")
        return frame.iloc[:, 0].astype("category").rename(inner)
    if match is None and _is_plain(lhs, data):
        return pd.Series(data[lhs.strip()]).rename(lhs.strip())  # keep its dtype
    ydf, _ = _design(lhs, data, context, "endog")
    if ydf.shape[1] != 1 and not multi:
        raise ValueError(
            f"the response {lhs.strip()!r} must be a single numeric column; it "
            f"expands to {list(ydf.columns)}"
        )
    return ydf.iloc[:, 0] if ydf.shape[1] == 1 else ydf


def _is_column(name: str, data: Any) -> bool:
    try:
        data[name]
    except (KeyError, TypeError, IndexError, ValueError):
        return False
    return True


def _is_plain(lhs: str, data: Any) -> bool:
    """A bare column name holding text, booleans or categories (formulaic would
    expand it to indicators): it is passed as it is, a categorical response."""
    name = lhs.strip()
    try:
        col = data[name]
    except (KeyError, TypeError, IndexError):
        return False
    dtype = getattr(col, "dtype", None)
    if dtype is None:
        return False
    return (not pd.api.types.is_numeric_dtype(dtype) or pd.api.types.is_bool_dtype(dtype)
            or isinstance(dtype, pd.CategoricalDtype))


def covariates_from_formula(terms: str, data: Any, *, eval_env: int = 0) -> pd.DataFrame:
    """The covariates' design of ``"age + C(site)"`` (treatment-coded
    indicators, intercept dropped; NaN kept for ``missing``)."""
    if not isinstance(terms, str) or not terms.strip():
        raise ValueError(f'covariates must be formula terms such as "age + C(site)"; '
                         f"got {terms!r}")
    frame, _ = _design(terms, data, _formula_context(eval_env + 2), "covariates")
    if frame.shape[1] == 0:
        raise ValueError(f"the covariates {terms!r} give no columns")
    frame.attrs["jdr_terms"] = terms.strip()  # named in the summary
    return frame
