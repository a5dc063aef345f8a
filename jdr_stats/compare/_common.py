"""What :func:`jdr_stats.compare` shares between two and K blocks: the
methods, which baselines a response rules out, the width check, the notes
and the one-sentence conclusion."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..baselines import PHD, SAVE, SIR
from ..core._linalg import principal_angles
from ..io._responses import ResponseInfo
from ..metrics import subspace_error

_METHODS = ("jdr", "sir", "phd", "save")
#: R-squared values closer than this are reported as explaining y equally well.
TIE = 0.01
#: The note on the variant ``"jdr (main effects)"`` (``compare(..., main_effects=True)``).
MAIN_EFFECTS_NOTE = (
    "jdr (main effects): the joint estimator with main_effects=True, each block's first "
    "moment pooled with the cross moments, so it sees main effects as well as "
    "interactions; jdr sees interactions only.")


def conclusion(fit: pd.DataFrame, unfitted: dict[str, str], column: str = "rsquared",
               label: str = "R-squared", *, short: bool = False) -> str:
    """One sentence from a comparison's ``fit`` table: which fitted variant's
    reduced features explain y best by ``column`` (``label`` names it; ties
    within :data:`TIE` said so, and what a tie is unless ``short``)."""
    r2 = fit[column].dropna().sort_values(ascending=False, kind="stable")
    if len(r2) == 0:
        return f"No variant has a {label}."
    verb = "explains y best" if column != "cv accuracy" else "classifies best"
    if len(r2) == 1:
        if unfitted:
            return (f"{r2.index[0]} is the only variant fitted ({label} "
                    f"{r2.iloc[0]:.3f}): {_none_fitted(str(r2.index[0]), unfitted)}.")
        return f"{r2.index[0]}: {label} {r2.iloc[0]:.3f}."
    among = f" of the {len(r2)} variants fitted" if unfitted else ""
    n_tied = int((r2.iloc[0] - r2 < TIE).sum())  # sorted: the first n_tied
    if n_tied > 1:
        tied = [str(name) for name in r2.index[:n_tied]]
        return (f"{', '.join(tied[:-1])} and {tied[-1]} "
                + ("explain y" if verb.startswith("explains") else "classify")
                + f" about equally well{among} ({label} {r2.iloc[0]:.3f} to "
                f"{r2.iloc[n_tied - 1]:.3f}"
                + ("" if short else f"; differences below {TIE:g} are not told apart") + ").")
    return (f"{r2.index[0]} {verb}{among} ({label} {r2.iloc[0]:.3f}; next "
            f"{r2.index[1]}, {r2.iloc[1]:.3f}).")


def out_of_sample_column(fit: pd.DataFrame) -> str | None:
    """The column of ``fit`` holding the out-of-sample measure (None without one)."""
    return next((c for c in ("cv rsquared", "cv accuracy") if c in fit.columns), None)


def out_of_sample_conclusion(fit: pd.DataFrame, unfitted: dict[str, str]) -> str:
    """`` Out of sample: ...`` (:func:`conclusion` of the cross-validated
    column), or nothing without one."""
    column = out_of_sample_column(fit)
    if column is None:
        return ""
    label = "cv R-squared" if column == "cv rsquared" else "cv accuracy"
    return " Out of sample: " + conclusion(fit, unfitted, column, label, short=True)


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


def choose_methods(ruled_out: dict[str, str], requested: list[str] | None,
                   got: str = "") -> tuple[list[str], dict[str, str]]:
    """The methods to fit and the defaults left out (with the reason):
    every method the response allows, or those ``requested`` (one the
    response rules out is an error; ``got`` ends its message)."""
    if requested is None:
        meths = [m for m in _METHODS if m not in ruled_out]
        return meths, {m: ruled_out[m] for m in _METHODS if m in ruled_out}
    bad = [m for m in requested if m in ruled_out]
    if bad:
        raise ValueError(f"methods: {bad[0]!r} cannot be fitted here: "
                         f"{ruled_out[bad[0]]}{got}")
    return requested, {}


def response_views(data: Any, info: ResponseInfo, y: Any,
                   n_slices: int | None) -> tuple[Any, int | None]:
    """What the slicing baselines see of the response: class codes and one
    slice per class for a categorical response, else ``y`` and ``n_slices``
    (pHd reads ``y``: the 0/1 indicator for two classes)."""
    categorical = info.kind == "categorical"
    codes = getattr(data, "class_codes", None)
    y_sliced = np.asarray(codes, dtype=np.float64) if categorical else y
    return y_sliced, len(info.classes) if categorical else n_slices


def baseline_directions(y: Any, y_sliced: Any, slices: int | None, residuals: bool,
                        weights: np.ndarray | None = None,
                        ) -> Callable[[Any, np.ndarray, int], np.ndarray]:
    """The first ``k`` directions of a baseline class fitted to a design:
    pHd on ``y`` (``residuals``), SIR and SAVE on ``y_sliced``, each with
    the model's case ``weights`` (None: unweighted)."""

    def directions(cls: Any, x: np.ndarray, k: int) -> np.ndarray:
        res = (cls(y, x, weights=weights).fit(residuals=residuals) if cls is PHD
               else cls(y_sliced, x, weights=weights).fit(n_slices=slices))
        return np.asarray(res.directions)[:, :k]

    return directions


def fit_baseline(m: str, directions: Callable[[Any, np.ndarray, int], np.ndarray], *,
                 blocks: Sequence[tuple[str, np.ndarray, int]], joint_label: str,
                 split: Callable[[np.ndarray], Sequence[np.ndarray]], nobs: int,
                 sir_classes: int | None) -> list[tuple[str, list[np.ndarray] | None, str]]:
    """The two variants of baseline ``m``: on each block alone (``blocks``:
    label, design and rank of each) and on the concatenated blocks (their
    directions ``split`` into the blocks' parts), each as ``(name, bases or
    None, why not fitted)``; ``sir_classes``: the classes of a categorical
    response (SIR finds at most C - 1 directions)."""
    cls = {"sir": SIR, "phd": PHD, "save": SAVE}[m]
    total = sum(k for _, _, k in blocks)
    out: list[tuple[str, list[np.ndarray] | None, str]] = []
    for name, parts in ((f"{m} (blocks)", [(lab, x.shape[1]) for lab, x, _ in blocks]),
                        (f"{m} ({joint_label})", [("", sum(x.shape[1] for _, x, _ in blocks))])):
        why = _width_reason(parts, nobs)
        if why is None and m == "sir" and sir_classes is not None:
            why = _sir_short(sir_classes, max(k for _, _, k in blocks)
                             if name.endswith("(blocks)") else total)
        if why is not None:
            out.append((name, None, why))
            continue
        try:
            if name.endswith("(blocks)"):
                bases = [directions(cls, x, k) for _, x, k in blocks]
            else:
                bases = list(split(directions(cls, np.hstack([x for _, x, _ in blocks]),
                                              total)))
        except ValueError as exc:  # e.g. collinear predictors
            out.append((name, None, str(exc)))
        else:
            out.append((name, bases, ""))
    return out


def pairwise_angles(est: Mapping[str, Sequence[np.ndarray]], variants: Sequence[str],
                    names: Sequence[str]) -> pd.DataFrame:
    """The largest and mean principal angle (degrees) between every pair of
    fitted variants, block by block (``est``: each variant's bases in the
    order of ``names``; a block of rank 0 has no angle: NaN)."""
    rows: dict[str, dict[str, float]] = {}
    fitted = [v for v in variants if v in est]
    for i, vi in enumerate(fitted):
        for vj in fitted[i + 1:]:
            row = {}
            for k, n in enumerate(names):
                ang = np.degrees(principal_angles(est[vi][k], est[vj][k]))
                row[f"max angle {n}"], row[f"mean angle {n}"] = (
                    (ang.max(), ang.mean()) if ang.size else (np.nan, np.nan))
            rows[f"{vi} vs {vj}"] = row
    cols = [f"{s} angle {n}" for n in names for s in ("max", "mean")]
    return pd.DataFrame.from_dict(rows, orient="index", columns=cols)


def truth_table(est: Mapping[str, Sequence[np.ndarray]], variants: Sequence[str],
                names: Sequence[str], true: Sequence[np.ndarray]) -> pd.DataFrame:
    """Each variant's ``nsee`` (the largest block error), block errors
    ``error <block>`` and principal angles (degrees) ``angle <block>j`` to
    the true bases (``est``: each variant's bases in the order of
    ``names``; an empty row where it was not fitted)."""
    rows: dict[str, dict[str, float]] = {}
    for name in variants:
        if name not in est:
            rows[name] = {}
            continue
        errs = {f"error {n}": subspace_error(t, e)
                for n, t, e in zip(names, true, est[name], strict=True)}
        row = {"nsee": max(errs.values()), **errs}
        for n, t, e in zip(names, true, est[name], strict=True):
            for j, ang in enumerate(np.degrees(principal_angles(t, e))):
                row[f"angle {n}{j + 1}"] = ang
        rows[name] = row
    cols = list(dict.fromkeys(["nsee", *(f"error {n}" for n in names),
                               *(k for r in rows.values() for k in r)]))
    table = pd.DataFrame.from_dict(rows, orient="index", columns=cols)
    table.index.name = "variant"
    return table


def measure_note(info: ResponseInfo) -> str:
    """How the fit measure reads a response of ``q > 1`` columns ("" for one)."""
    if info.q == 1:
        return ""
    what = "class-indicator" if info.kind == "categorical" else "response"
    return f"; Pillai's trace / q over the q = {info.q} {what} columns"
