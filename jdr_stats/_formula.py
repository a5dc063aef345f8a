"""Formulas: ``"y ~ a-terms | b-terms"`` to a response and design blocks (formulaic).

Used by :meth:`jdr_stats._data.DataModel.from_formula` and, for new data,
by ``transform(data=...)``; ``np`` is available in a formula.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["design_from_spec", "designs_from_formula"]


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
