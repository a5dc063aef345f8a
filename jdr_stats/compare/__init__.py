"""The joint estimator and the classical baselines side by side.

:func:`compare` fits each requested method to ``(y, a, b)`` and reports, for
each block, how far its estimated subspace is from the truth (simulations) or
from the other methods (real data), and which variant's reduced features
explain y best.  The response is read as :class:`JointDimReduction` reads
it (numeric, categorical, multivariate); a baseline that cannot be fitted
(a design too wide for its sample covariance, a response it does not take)
is reported with its reason instead of stopping the comparison.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from ..estimation._estimate import check_rank
from ..fit_measures import fit_measures
from ..io._data import MissingPolicy
from ..io._responses import ResponseInfo, ResponseKind
from ..model import JointDimReduction
from ..runtime._validation import check_bool
from ._common import (
    MAIN_EFFECTS_NOTE,
    MIN_EXTRA_ROWS,
    TIE,
    _applicable,
    _check_methods,
    _response_note,
    baseline_directions,
    choose_methods,
    conclusion,
    fit_baseline,
    measure_note,
    pairwise_angles,
    response_views,
    truth_table,
)
from ._cv import CV_COLUMNS, check_cv, cross_validate, cv_note, fold_model
from ._kblocks import compare_kblocks, is_kblock_call, split_subspace
from ._results import Comparison, comparison_info, joint_label

__all__ = ["MIN_EXTRA_ROWS", "TIE", "Comparison", "compare", "conclusion", "split_joint_subspace"]


def split_joint_subspace(
    basis: np.ndarray, n1: int, rank: int
) -> tuple[np.ndarray, np.ndarray]:
    """Split a subspace of the concatenated ``[a, b]`` into an a- and a b-part.

    Parameters
    ----------
    basis : ndarray, shape (n1 + n2, k)
        Any basis of the subspace estimated on ``x = [a, b]`` (k = 2 rank
        in :func:`compare`).
    n1 : int
        Width of block a.
    rank : int
        Dimension of each part.

    Returns
    -------
    (ndarray, ndarray)
        Orthonormal bases, shapes (n1, rank) and (n2, rank).

    Notes
    -----
    With ``Q`` an orthonormal basis of the subspace, ``Q_a`` its first n1 rows
    and ``Q_b`` the others, each part is spanned by the top ``rank`` left
    singular vectors of ``Q_a`` (resp. ``Q_b``): the ``rank``-dimensional
    subspace of block a that the joint subspace covers best
    (``Q_a Q_a^T = P_a`` restricted to block a, so the choice does not depend
    on the basis given).  If y depends on ``(U^T a, V^T b)`` the central
    subspace of ``[a, b]`` is ``span(U) x span(V)``, whose parts are exactly
    ``span(U)`` and ``span(V)``.

    Examples
    --------
    >>> import numpy as np
    >>> w = np.zeros((5, 2)); w[0, 0] = 1.0; w[3, 1] = 2.0
    >>> ua, vb = split_joint_subspace(w, 2, 1)
    >>> np.abs(ua).ravel().tolist(), np.abs(vb).ravel().tolist()
    ([1.0, 0.0], [0.0, 1.0, 0.0])
    """
    basis = np.asarray(basis, dtype=float)
    parts = split_subspace(basis, [n1, basis.shape[0] - n1], [rank, rank])
    return parts[0], parts[1]


def _check_truth(truth: Any, n1: int, n2: int) -> tuple[np.ndarray, np.ndarray] | None:
    if truth is None:
        return None
    try:
        u, v = truth
    except (TypeError, ValueError):
        raise TypeError("truth must be a pair (U, V) of bases") from None
    u = np.asarray(u, dtype=float)
    v = np.asarray(v, dtype=float)
    u = u[:, None] if u.ndim == 1 else u
    v = v[:, None] if v.ndim == 1 else v
    if u.shape[0] != n1 or v.shape[0] != n2:
        raise ValueError(
            f"truth: U must have {n1} rows and V {n2} rows (the block widths); got "
            f"{u.shape} and {v.shape}"
        )
    return u, v


def compare(
    endog: Any,
    exog_a: Any = None,
    exog_b: Any = None,
    rank: Any = None,
    *,
    methods: Sequence[str] | None = None,
    truth: tuple[Any, Any] | None = None,
    n_slices: int | None = None,
    residuals: bool = False,
    missing: MissingPolicy = "none",
    response: ResponseKind = "auto",
    main_effects: bool = False,
    cv: int | None = 5,
    seed: int | np.random.Generator | None = 0,
) -> Comparison:
    """Fit the joint estimator and the baselines and compare their subspaces.

    Parameters
    ----------
    endog, exog_a, exog_b : array_like
        Response and the two blocks.  The response is read as
        :class:`~jdr_stats.JointDimReduction` reads it: a pandas
        ``Categorical``, boolean or text column is categorical, a 2-D
        ``endog`` multivariate.
    rank : int
        Dimension r of each subspace, ``1 <= r <= min(n1, n2)``.

        Three or more blocks (or per-block ranks): ``compare(endog, blocks,
        rank)`` with ``blocks`` a dict by name (or a list) and ``rank`` an
        int or a dict by block name, ``compare(model, rank)`` or
        ``compare(results)``: the joint estimator's row is the K-block fit
        (the results given, or ``model.fit(rank)``), the baselines are
        fitted on each block alone and on the concatenated blocks (split by
        :func:`jdr_stats.compare._kblocks.split_subspace`; ``"[blocks]"`` in
        the variants' names for three or more blocks, the two blocks' names
        for two); ``truth`` is then a dict of bases by block name (or a list
        in block order).  The result is a :class:`Comparison` whatever the
        number of blocks.
    methods : sequence of {"jdr", "sir", "phd", "save"}, optional
        Methods to fit; default every method the response allows (all four
        for a numeric response or two classes; pHd is left out for a
        categorical response of more than two classes, the baselines for a
        multivariate response; the summary says so).  Each baseline is
        fitted two ways: on each block alone (r directions for a from y on
        a, r for b from y on b) and on the concatenated ``[a, b]`` (2r
        directions, split by :func:`split_joint_subspace`).
    truth : (U, V), optional
        True bases: report each variant's NSEE, subspace errors and
        principal angles per block.  Without it, the angles between variants.
    n_slices : int, optional
        Slices for SIR and SAVE (default as ``dr``).  Not for a categorical
        response, whose classes are the slices.
    residuals : bool
        pHd on OLS residuals (``"phdres"``) instead of y.
    missing : {"none", "drop", "raise"}
    response : {"auto", "numeric", "categorical"}
        How to read ``endog``, as for :class:`~jdr_stats.JointDimReduction`.
    main_effects : bool
        Also fit the joint estimator with ``main_effects=True`` (the variant
        ``"jdr (main effects)"``, after ``"jdr"``): each block's first moment
        pooled with the cross moments, so that its reduction sees a block's
        own link to y (a class shifting a block's mean) as well as the
        interactions (:meth:`JointDimReduction.fit`).  Needs ``"jdr"`` among
        the methods.
    cv : int or None
        Folds of the out-of-sample measure (default 5): every variant is
        refitted on each training fold and scored on the held-out fold, by
        the cross-validated R-squared (numeric or multivariate response) or
        the accuracy of a linear discriminant (categorical), on the
        regressors of the in-sample measure (:mod:`jdr_stats.compare._cv`);
        the column ``cv rsquared`` or ``cv accuracy`` of
        :attr:`Comparison.fit`.  None: in-sample only.
    seed : int, Generator or None
        Seed of the folds (default 0: the same folds, the same numbers).

    Returns
    -------
    Comparison
        The same type, members and meanings at every number of blocks.

    Raises
    ------
    ValueError
        ``methods`` names a method the response rules out (``"phd"`` with
        more than two classes, a baseline with a multivariate response), or
        no requested variant can be fitted.

    Notes
    -----
    A categorical response of C classes is, for the joint fit and the fit
    measure, its C - 1 class indicators (whitened when C > 2); SIR and SAVE
    slice it by class (the class codes with ``C`` slices: one slice per
    value, the rule of ``dr.slices``; SIR finds at most C - 1 directions, so
    a SIR variant that needs more is not fitted rather than completed with
    arbitrary ones);
    pHd, defined for a numeric y, takes the 0/1 indicator for two classes
    (as ``dr`` does for a 0/1 response).  Each variant's R-squared is the
    measure the joint fit reports for that response (Pillai's trace over q
    for q > 1 columns), invariant to the order and labels of the classes.

    A baseline whitens with the sample covariance of its design, singular
    unless the design has at least ``columns + 2`` rows; a variant whose
    design is wider (or whose fit fails) is not fitted, its row of
    :attr:`Comparison.fit` is NaN and :attr:`Comparison.unfitted` gives the
    reason.  The joint estimator fits at any width (its automatic whitening
    shrinks).  A real-data check on nutrimouse and the UCI digits:
    ``studies/check_compare_real.py``.

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> from jdr_stats.compare import compare
    >>> sim = jdr.simulate.bilinear(3000, 5, 4, 2, seed=3)
    >>> out = compare(sim.y, sim.a, sim.b, 2, truth=(sim.U, sim.V))
    >>> out.table.index.tolist()[:3]
    ['jdr', 'sir (blocks)', 'sir ([a, b])']
    >>> bool(out.table.loc["jdr", "nsee"] < 0.3)
    True
    >>> import pandas as pd
    >>> wide = jdr.simulate.bilinear(40, 60, 5, 1, seed=0)
    >>> classes = pd.Categorical(pd.qcut(wide.y, 3, labels=["lo", "mid", "hi"]))
    >>> out = compare(classes, wide.a, wide.b, 1)
    >>> out.unfitted["sir (blocks)"], out.unfitted["save ([a, b])"]
    ('a has 60 columns for 40 rows', '65 columns for 40 rows')
    >>> out.fit["rsquared"].notna().tolist()  # jdr only; pHd left out (3 classes)
    [True, False, False, False, False]
    """

    main_effects = check_bool(main_effects, "main_effects")
    if is_kblock_call(endog, exog_a):  # a model, results, or blocks as a dict or list
        return compare_kblocks(endog, exog_a, exog_b, rank, methods=methods, truth=truth,
                               n_slices=n_slices, residuals=residuals, missing=missing,
                               response=response, main_effects=main_effects, cv=cv,
                               seed=seed)
    _check_two_block_call(exog_a, exog_b, rank)
    requested = None if methods is None else _check_methods(methods)
    if main_effects and requested is not None and "jdr" not in requested:
        raise ValueError(f"main_effects=True adds a variant of the joint estimator, so "
                         f"methods must include 'jdr'; got methods={list(methods or ())!r}")
    model = JointDimReduction(endog, exog_a, exog_b, missing=missing, response=response)
    data = model.data
    y, a, b = data.rows("compare")
    info: ResponseInfo = getattr(data, "response", ResponseInfo(names=(data.endog_name,)))
    n1, n2 = a.shape[1], b.shape[1]
    rank = check_rank(rank, n1, n2)
    true = _check_truth(truth, n1, n2)
    meths, left_out = choose_methods(
        _applicable(info), requested,
        f"; got methods={list(methods or ())!r} (leave it out, as the default does)")
    categorical = info.kind == "categorical"
    if categorical and n_slices is not None:
        raise ValueError(f"n_slices does not apply to a categorical response (its "
                         f"{len(info.classes)} classes are the slices); got n_slices={n_slices!r}")
    variants, est, unfitted = _variants(model, rank, meths, info, main_effects=main_effects,
                                        residuals=residuals, n_slices=n_slices)
    if not est:
        raise ValueError(f"methods={meths!r}: no variant could be fitted: "
                         + "; ".join(f"{k}: {v}" for k, v in unfitted.items()))
    nobs = data.nobs  # no case weights here: the rows are the observations

    nan = (float("nan"), float("nan"))
    fit = pd.DataFrame.from_dict(
        {name: (_rsquared(y, a, b, *est[name], nobs) if name in est else nan)
         for name in variants},
        orient="index", columns=["rsquared", "rsquared adj"])
    fit.index.name = "variant"
    cv_note = _cross_validated(fit, model, rank, meths, info, est, main_effects=main_effects,
                               residuals=residuals, n_slices=n_slices, cv=cv, seed=seed)
    table = (truth_table(est, variants, ["a", "b"], true) if true is not None
             else pairwise_angles(est, variants, ["a", "b"]))
    table.index.name = "variant"
    notes = _response_note(info, meths, left_out)
    if main_effects:
        notes.append(MAIN_EFFECTS_NOTE)
    blocks, ranks = {"a": n1, "b": n2}, {"a": rank, "b": rank}
    out_info = comparison_info(
        endog=data.endog_name, response=info.describe(), nobs=nobs, blocks=blocks,
        ranks=ranks, methods=meths, main_effects=main_effects, truth=true is not None,
        measure=measure_note(info))
    named = {v: {"a": ua, "b": vb} for v, (ua, vb) in est.items()}
    return Comparison(table, named, out_info, fit, blocks=blocks, ranks=ranks,
                      unfitted=unfitted, notes=notes, cv_note=cv_note)


def _variants(model: Any, rank: int, meths: list[str], info: ResponseInfo, *,
              main_effects: bool, residuals: bool, n_slices: int | None,
              strict: bool = True) -> tuple[list[str], dict[str, tuple[np.ndarray, np.ndarray]],
                                            dict[str, str]]:
    """Every variant fitted to the model's rows: their names, the bases of
    those fitted and why the others were not (``strict``: a failing joint
    fit raises, else it is one more reason)."""
    data = model.data
    y, a, b = data.rows("compare")
    n1 = a.shape[1]
    categorical = info.kind == "categorical"
    y_sliced, slices = response_views(data, info, y, n_slices)
    directions = baseline_directions(y, y_sliced, slices, residuals)
    est: dict[str, tuple[np.ndarray, np.ndarray]] = {}
    unfitted: dict[str, str] = {}
    variants: list[str] = []
    for m in meths:
        if m == "jdr":
            variants += _jdr_variants(model, rank, main_effects, est, unfitted, strict=strict)
            continue
        for name, bases, why in fit_baseline(
                m, directions, blocks=[("a", a, rank), ("b", b, rank)],
                joint_label=joint_label(["a", "b"]),
                split=lambda joint: split_joint_subspace(joint, n1, rank), nobs=data.nobs,
                sir_classes=len(info.classes) if categorical else None):
            variants.append(name)
            if bases is None:
                unfitted[name] = why
            else:
                est[name] = (bases[0], bases[1])
    return variants, est, unfitted


def _cross_validated(fit: pd.DataFrame, model: Any, rank: int, meths: list[str],
                     info: ResponseInfo, est: dict[str, tuple[np.ndarray, np.ndarray]], *,
                     main_effects: bool, residuals: bool, n_slices: int | None,
                     cv: int | None, seed: int | np.random.Generator | None) -> str:
    """The out-of-sample column of ``fit`` (:mod:`jdr_stats.compare._cv`),
    every variant refitted on each training fold, and the note saying how."""
    data = model.data
    k = check_cv(cv, data.nobs)
    if k is None:
        return ""
    categorical = info.kind == "categorical"

    def fits(train: np.ndarray) -> dict[str, Any]:
        _, got, why = _variants(fold_model(model, train), rank, meths, info,
                                main_effects=main_effects, residuals=residuals,
                                n_slices=n_slices, strict=False)
        return {**why, **{n: list(b) for n, b in got.items()}}

    y, a, b = data.rows("compare")
    scores, why = cross_validate(fits, y, [a, b], weights=None,
                                 codes=data.class_codes if categorical else None, k=k,
                                 seed=seed, variants=[v for v in fit.index if v in est])
    column = CV_COLUMNS["categorical" if categorical else "numeric"]
    fit[column] = scores.reindex(fit.index)
    return cv_note(column, k, seed, why)


def _jdr_variants(model: Any, rank: int, main_effects: bool,
                  est: dict[str, tuple[np.ndarray, np.ndarray]],
                  unfitted: dict[str, str], *, strict: bool = True) -> list[str]:
    """The joint estimator's variants, fitted into ``est`` (or their reason
    in ``unfitted``): ``"jdr"``, and ``"jdr (main effects)"`` if asked; a
    failing ``"jdr"`` fit raises when ``strict``."""
    variants = ["jdr"]
    try:
        fit = model.fit(rank)
    except (ValueError, np.linalg.LinAlgError) as exc:
        if strict:
            raise
        unfitted["jdr"] = str(exc)
    else:
        est["jdr"] = (fit.estimate.dir_a, fit.estimate.dir_b)
    if main_effects:
        name = "jdr (main effects)"
        variants.append(name)
        try:
            pooled = model.fit(rank, main_effects=True)
        except ValueError as exc:
            unfitted[name] = str(exc)
        else:
            dirs = [np.asarray(pooled.directions[blk]) for blk in pooled.block_names]
            est[name] = (dirs[0], dirs[1])
    return variants


def _check_two_block_call(exog_a: Any, exog_b: Any, rank: Any) -> None:
    """``compare(endog, exog_a, exog_b, rank)``: all three given, the rank
    not a block (three blocks given as positional arguments)."""
    hint = ("; for three or more blocks pass them as a dict (or a list): "
            "compare(endog, {'g': G, 'l': L, 'c': C}, rank), or compare(model, rank) "
            "or compare(results)")
    if exog_a is None or exog_b is None or rank is None:
        missing = [n for n, v in (("exog_a", exog_a), ("exog_b", exog_b), ("rank", rank))
                   if v is None]
        raise TypeError(f"compare(endog, exog_a, exog_b, rank): missing {missing}{hint}")
    if np.ndim(rank) >= 1 and not isinstance(rank, str):
        raise TypeError(f"rank must be an int; got an array of shape {np.shape(rank)} "
                        f"(a third block?){hint}")


def _rsquared(y: np.ndarray, a: np.ndarray, b: np.ndarray, ua: np.ndarray, vb: np.ndarray,
              nobs: int) -> tuple[float, float]:
    """R-squared and adjusted R-squared of y on the bilinear features of
    ``(ua, vb)``; Pillai's trace over q for a response of q columns."""
    fm = fit_measures([(y, a, b, None)], ua, vb, nobs=nobs)
    return fm.rsquared, fm.rsquared_adj
