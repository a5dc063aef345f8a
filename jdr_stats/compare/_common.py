"""What :func:`jdr_stats.compare` shares between two and K blocks: the
methods, which baselines a response rules out, the width check, the notes
and the one-sentence conclusion."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pandas as pd

from ..io._responses import ResponseInfo

_METHODS = ("jdr", "sir", "phd", "save")
#: R-squared values closer than this are reported as explaining y equally well.
TIE = 0.01


def conclusion(fit: pd.DataFrame, unfitted: dict[str, str]) -> str:
    """One sentence from a comparison's ``fit`` table: which fitted variant's
    reduced features explain y best (ties within :data:`TIE` said so)."""
    r2 = fit["rsquared"].dropna().sort_values(ascending=False, kind="stable")
    if len(r2) == 1:
        if unfitted:
            return (f"{r2.index[0]} is the only variant fitted (R-squared "
                    f"{r2.iloc[0]:.3f}): {_none_fitted(str(r2.index[0]), unfitted)}.")
        return f"{r2.index[0]}: R-squared {r2.iloc[0]:.3f}."
    among = f" of the {len(r2)} variants fitted" if unfitted else ""
    n_tied = int((r2.iloc[0] - r2 < TIE).sum())  # sorted: the first n_tied
    if n_tied > 1:
        tied = [str(name) for name in r2.index[:n_tied]]
        return (f"{', '.join(tied[:-1])} and {tied[-1]} explain y about equally well"
                f"{among} (R-squared {r2.iloc[0]:.3f} to {r2.iloc[n_tied - 1]:.3f}; "
                f"differences below {TIE:g} are not told apart).")
    return (f"{r2.index[0]} explains y best{among} (R-squared {r2.iloc[0]:.3f}; next "
            f"{r2.index[1]}, {r2.iloc[1]:.3f}).")


#: The baselines whiten with the sample covariance: a design of p columns
#: needs at least ``p + MIN_EXTRA_ROWS`` rows (as their input check).
MIN_EXTRA_ROWS = 2


def _none_fitted(only: str, unfitted: dict[str, str]) -> str:
    n = len(unfitted)
    what = "no baseline could be fitted" if only == "jdr" else "the others could not be fitted"
    return f"{what} ({n} variant{'s' if n != 1 else ''}, see the note)"


def _unfitted_note(unfitted: dict[str, str]) -> str:
    reasons = "; ".join(f"{name}: {why}" for name, why in unfitted.items())
    note = f"Not fitted (NaN rows): {reasons}."
    if any(why.endswith(" rows") for why in unfitted.values()):
        note += (f"  The baselines whiten with the sample covariance, which needs at least "
                 f"columns + {MIN_EXTRA_ROWS} rows; the joint estimator fits at any width "
                 "(its whitening shrinks).")
    return note


def _check_methods(methods: Any) -> list[str]:
    if isinstance(methods, str):
        methods = [methods]
    try:
        out = [str(m) for m in methods]
    except TypeError:
        raise TypeError(f"methods must be a sequence of names; got {methods!r}") from None
    bad = [m for m in out if m not in _METHODS]
    if bad or not out:
        raise ValueError(f"methods must be a non-empty subset of {_METHODS}; got {methods!r}")
    if len(set(out)) != len(out):
        raise ValueError(f"methods lists a method twice: {out}")
    return out


def _applicable(info: ResponseInfo) -> dict[str, str]:
    """The baselines the response rules out, each with the reason."""
    if info.kind == "multivariate":
        why = (f"the baselines take one response column; endog has q = {info.q} "
               "(a multivariate response)")
        return {"sir": why, "phd": why, "save": why}
    if info.kind == "categorical" and len(info.classes) > 2:
        return {"phd": (f"pHd needs a numeric response (two classes work: R's dr takes "
                        f"a 0/1 response as numeric); endog is categorical with "
                        f"{len(info.classes)} classes")}
    return {}


def _response_note(info: ResponseInfo, meths: list[str], left_out: dict[str, str]) -> list[str]:
    """How the baselines read the response, and the methods left out."""
    notes = []
    if info.kind == "categorical":
        c = len(info.classes)
        text = (f"Categorical response ({c} classes): SIR and SAVE take the classes as "
                f"their slices (as dr does for a response with at most nslices values)")
        if c == 2 and "phd" in meths:
            text += ("; pHd takes the 0/1 indicator of the second class as a numeric "
                     "response, as dr does (the other coding flips its eigenvalues' signs "
                     "only)")
        notes.append(text + ".")
    if left_out:
        why = next(iter(left_out.values()))
        notes.append(f"Left out of the default methods: {', '.join(left_out)}, because {why}.")
    return notes


def _width_reason(parts: Sequence[tuple[str, int]], nobs: int) -> str | None:
    """Why a baseline cannot be fitted on these designs (None if it can)."""
    wide = [(name, p) for name, p in parts if nobs < p + MIN_EXTRA_ROWS]
    if not wide:
        return None
    return "; ".join(f"{name + ' has ' if name else ''}{p} columns for {nobs} rows"
                     for name, p in wide)


def _sir_short(n_classes: int, needed: int) -> str | None:
    """SIR finds at most C - 1 directions from C classes (the rank of its
    kernel); a variant that needs more would fill them with arbitrary ones."""
    if needed <= n_classes - 1:
        return None
    return (f"SIR finds at most C - 1 = {n_classes - 1} direction(s) from {n_classes} "
            f"classes; {needed} needed")
