""":func:`jdr_stats.compare` over K blocks.

``compare(model_or_results)``, ``compare(model, rank)`` or
``compare(endog, {"g": G, "l": L, "c": C}, rank)`` (a list of blocks
works too): the joint estimator's rows come from the K-block fit (the
results given, or ``model.fit(rank)``), the baselines are fitted on each
block alone (``r_k`` directions from y on ``x_k``) and on the concatenated
blocks (``sum_k r_k`` directions, split into the blocks' parts by
:func:`split_subspace`).  Each variant's R-squared is the K-block fit
measure (:func:`jdr_stats.fit_measures.block_fit_measures`: y on the
blocks' reduced features and the products of every pair of blocks').
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..core._linalg import orthonormal_basis
from ..fit_measures import block_fit_measures
from ..io._responses import ResponseInfo
from ..runtime._frequency import observations
from ._common import (
    MAIN_EFFECTS_NOTE,
    _applicable,
    _check_methods,
    _response_note,
    baseline_directions,
    choose_methods,
    fit_baseline,
    measure_note,
    pairwise_angles,
    response_views,
    truth_table,
)
from ._cv import CV_COLUMNS, check_cv, cross_validate, cv_note, fold_model
from ._results import Comparison, comparison_info, joint_label

__all__ = ["compare_kblocks", "is_kblock_call", "split_subspace"]


def split_subspace(basis: np.ndarray, widths: Sequence[int],
                   ranks: Sequence[int]) -> list[np.ndarray]:
    """Split a subspace of the concatenated blocks into one part per block.

    With ``Q`` an orthonormal basis of the subspace, block ``k``'s part is
    spanned by the top ``ranks[k]`` left singular vectors of ``Q``'s rows of
    that block (the ``r_k``-dimensional subspace of block ``k`` that the
    joint subspace covers best; it does not depend on the basis given).
    For two blocks this is :func:`jdr_stats.compare.split_joint_subspace`.
    """
    q = orthonormal_basis(np.asarray(basis, float))
    parts, start = [], 0
    for width, r in zip(widths, ranks, strict=True):
        u, _, _ = np.linalg.svd(q[start:start + width], full_matrices=False)
        parts.append(u[:, :r])
        start += width
    return parts


def is_kblock_call(endog: Any, exog_a: Any) -> bool:
    """Whether ``compare`` was given a model or results object, or its
    blocks as a mapping or a list of blocks (instead of ``exog_a, exog_b``)."""
    from ..model import JointDimReduction
    from ..results import JDRResults

    if isinstance(endog, (JointDimReduction, JDRResults)):
        return True
    if isinstance(exog_a, Mapping):
        return True
    return (isinstance(exog_a, (list, tuple)) and len(exog_a) >= 2
            and all(np.ndim(x) == 2 for x in exog_a))


def _truth(truth: Any, names: Sequence[str], widths: Sequence[int]) -> list[np.ndarray] | None:
    if truth is None:
        return None
    given = ([truth.get(n) for n in names] if isinstance(truth, Mapping) else list(truth))
    if len(given) != len(names) or any(t is None for t in given):
        raise ValueError(f"truth: give one basis per block {list(names)} (a dict by name or "
                         f"a list in block order); got {len(given)}")
    out = []
    for n, t, wd in zip(names, given, widths, strict=True):
        t = np.asarray(t, float)
        t = t[:, None] if t.ndim == 1 else t
        if t.shape[0] != wd:
            raise ValueError(f"truth: block {n!r} has {wd} columns; its basis has shape "
                             f"{t.shape}")
        out.append(t)
    return out


def _model_and_fit(endog: Any, exog_a: Any, exog_b: Any, rank: Any, *, missing: Any,
                   response: Any) -> tuple[Any, Any]:
    """The model and the K-block fit of a call: ``compare(model, rank)``,
    ``compare(results)`` or ``compare(endog, blocks, rank)``."""
    from ..model import JointDimReduction

    fitted = None
    if isinstance(endog, JointDimReduction):  # compare(model, rank)
        model = endog
        if exog_b is not None or (exog_a is not None and rank is not None):
            raise TypeError("compare(model, rank): the model carries the blocks; give only "
                            "the rank (an int or a dict by block name)")
        rank = exog_a if rank is None else rank
    elif not isinstance(exog_a, (Mapping, list, tuple)):  # compare(results)
        fitted, model = endog, endog.model
        if exog_a is not None or exog_b is not None or rank is not None:
            raise TypeError("compare(results): the results carry the blocks and their "
                            "ranks; give nothing else")
    else:  # compare(endog, blocks, rank)
        if exog_b is not None and rank is not None:
            raise TypeError("compare(endog, blocks, rank): with the blocks as a dict or a "
                            "list, the third argument is the rank; got both exog_b and rank")
        rank = exog_b if rank is None else rank
        model = JointDimReduction.from_blocks(endog, exog_a, missing=missing,
                                              response=response)
    names = list(model.block_names)
    if fitted is None:
        if rank is None:
            raise TypeError("compare: give the rank (an int or a dict by block name) of "
                            f"the blocks {names}")
        fitted = model.fit(rank)
    return model, fitted


def compare_kblocks(endog: Any, exog_a: Any, exog_b: Any, rank: Any, *,
                    methods: Sequence[str] | None,
                    truth: Any, n_slices: int | None, residuals: bool, missing: Any,
                    response: Any, main_effects: bool, cv: int | None = 5,
                    seed: int | np.random.Generator | None = 0) -> Comparison:
    """:func:`jdr_stats.compare` of a K-block model, results or blocks
    (the module docstring)."""
    model, fitted = _model_and_fit(endog, exog_a, exog_b, rank, missing=missing,
                                   response=response)
    names = list(model.block_names)
    ranks = (dict(fitted.rank) if isinstance(fitted.rank, Mapping)
             else dict.fromkeys(names, int(fitted.rank)))
    data = model._data
    y, *xs = data.rows("compare")
    xs = [np.asarray(x, float) for x in xs]
    widths = [x.shape[1] for x in xs]
    info: ResponseInfo = getattr(data, "response", ResponseInfo(names=(data.endog_name,)))
    true = _truth(truth, names, widths)
    requested = None if methods is None else _check_methods(methods)
    meths, left_out = choose_methods(_applicable(info), requested)
    nobs = int(data.nobs)  # rows: the folds split rows
    count = observations(data)  # what the rows stand for: whole-number weights count copies

    def variants_of(mod: Any, jdr_fit: Any, strict: bool) -> tuple[list[str], dict[str, Any],
                                                                    dict[str, str]]:
        return _kvariants(mod, jdr_fit, names, ranks, meths, info, main_effects=main_effects,
                          residuals=residuals, n_slices=n_slices, strict=strict)

    variants, est, unfitted = variants_of(model, fitted, True)
    w = getattr(data, "weights", None)
    rows = {}
    for name in variants:
        if name in est:
            fm = block_fit_measures([(np.asarray(y, float), xs, w)],
                                    [est[name][n] for n in names], nobs=count)
            rows[name] = (fm.rsquared, fm.rsquared_adj)
        else:
            rows[name] = (float("nan"), float("nan"))
    fit = pd.DataFrame.from_dict(rows, orient="index", columns=["rsquared", "rsquared adj"])
    fit.index.name = "variant"
    notes, k, note = _response_note(info, meths, left_out), check_cv(cv, nobs), ""
    if k is not None:  # every variant refitted on each training fold
        refit = _refit(fitted)

        def fits(train: np.ndarray) -> dict[str, Any]:
            _, got, why = variants_of(fold_model(model, train), refit, False)
            return {**why, **{n: [b[blk] for blk in names] for n, b in got.items()}}

        codes = getattr(data, "class_codes", None) if info.kind == "categorical" else None
        note = _cv_column(fit, fits, np.asarray(y, float), xs, w, codes, k, seed,
                          [v for v in variants if v in est])
    est_list = {v: [b[n] for n in names] for v, b in est.items()}
    table = (truth_table(est_list, variants, names, true) if true is not None
             else pairwise_angles(est_list, variants, names))
    table.index.name = "variant"
    if main_effects:
        notes.append(MAIN_EFFECTS_NOTE)
    blocks = dict(zip(names, widths, strict=True))
    out_info = comparison_info(
        endog=data.endog_name, response=info.describe(), nobs=count, rows=nobs, blocks=blocks,
        ranks=ranks, methods=meths, main_effects=main_effects, truth=true is not None,
        measure=measure_note(info))
    return Comparison(table, est, out_info, fit, blocks=blocks, ranks=ranks,
                      unfitted=unfitted, notes=notes, cv_note=note)


def _cv_column(fit: pd.DataFrame, fits: Any, y: np.ndarray, xs: list[np.ndarray],
               w: np.ndarray | None, codes: np.ndarray | None, k: int, seed: Any,
               variants: list[str]) -> str:
    """The out-of-sample column of ``fit`` (:func:`cross_validate`), and its note."""
    scores, why = cross_validate(fits, y, xs, weights=w, codes=codes, k=k, seed=seed,
                                 variants=variants)
    column = CV_COLUMNS["categorical" if codes is not None else "numeric"]
    fit[column] = scores.reindex(fit.index)
    return cv_note(column, k, seed, why)


def _kvariants(model: Any, jdr_fit: Any, names: list[str], ranks: dict[str, int],
               meths: list[str], info: ResponseInfo, *, main_effects: bool, residuals: bool,
               n_slices: int | None, strict: bool) -> tuple[list[str],
                                                            dict[str, dict[str, np.ndarray]],
                                                            dict[str, str]]:
    """Every variant fitted to the model's rows: their names, the bases of
    those fitted (a dict by block) and why the others were not.  ``jdr_fit``
    is the joint fit (results) or a function of the model returning it (a
    fold's refit); ``strict``: a failing joint fit raises."""
    data = model._data
    y, *xs = data.rows("compare")
    xs = [np.asarray(x, float) for x in xs]
    widths = [x.shape[1] for x in xs]
    categorical = info.kind == "categorical"
    y_sliced, slices = response_views(data, info, y, n_slices)
    directions = baseline_directions(y, y_sliced, slices, residuals,
                                     getattr(data, "weights", None))
    est: dict[str, dict[str, np.ndarray]] = {}
    unfitted: dict[str, str] = {}
    variants: list[str] = []
    for m in meths:
        if m == "jdr":
            variants += _jdr_variants(model, jdr_fit, names, ranks, main_effects, est,
                                      unfitted, strict=strict)
            continue
        for name, bases, why in fit_baseline(
                m, directions, blocks=[(n, x, ranks[n]) for n, x in zip(names, xs, strict=True)],
                joint_label=joint_label(names), nobs=int(data.nobs),
                split=lambda joint: split_subspace(joint, widths, [ranks[n] for n in names]),
                sir_classes=len(info.classes) if categorical else None):
            variants.append(name)
            if bases is None:
                unfitted[name] = why
            else:
                est[name] = dict(zip(names, bases, strict=True))
    return variants, est, unfitted


def _refit(fitted: Any) -> Any:
    """The joint fit of ``fitted`` repeated on a fold's model: its ranks,
    whitening, estimator, sparsity and pieces."""
    from ..fitting._kfit import KBlockFit

    if isinstance(getattr(fitted, "_impl", fitted), KBlockFit):
        s = fitted.settings
        kw = {"whitening": s["whitening"], "independent_blocks": s["estimator"] == "per-block",
              "sparsity": fitted.sparsity, "main_effects": fitted.main_effects}
    else:  # two blocks, one rank
        kw = {"whitening": fitted.whitening, "sparsity": fitted.sparsity,
              "independent_blocks": not fitted.settings.joint}
    rank = fitted.rank
    return lambda model: model.fit(rank, **kw)


def _jdr_variants(model: Any, jdr_fit: Any, names: list[str], ranks: dict[str, int],
                  main_effects: bool, est: dict[str, dict[str, np.ndarray]],
                  unfitted: dict[str, str], *, strict: bool = True) -> list[str]:
    """The joint estimator's variants, into ``est`` (or their reason in
    ``unfitted``): the K-block fit, and its main-effects refit if asked."""
    variants = ["jdr"]
    try:
        fitted = jdr_fit(model) if callable(jdr_fit) else jdr_fit
    except (ValueError, np.linalg.LinAlgError) as exc:
        if strict:
            raise
        unfitted["jdr"] = str(exc)
    else:
        est["jdr"] = {n: np.asarray(fitted.directions[n], float) for n in names}
    if main_effects:
        variants.append("jdr (main effects)")
        try:
            pooled = model.fit(ranks, main_effects=True)
        except (ValueError, np.linalg.LinAlgError) as exc:
            unfitted["jdr (main effects)"] = str(exc)
        else:
            est["jdr (main effects)"] = {n: np.asarray(pooled.directions[n], float)
                                         for n in names}
    return variants
