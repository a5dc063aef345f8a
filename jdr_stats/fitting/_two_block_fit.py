"""The steps of a two-block ``fit``: the estimator's choice (K-block engine
or the two-block route), the whitening and estimator of the blocks, the rank
(given, or chosen by the tests), the sparsity (given, chosen by the
coordinate tests or by cross-validation) and the estimate with its
settings.  :meth:`jdr_stats.JointDimReduction.fit` calls them in this order
and wraps what they return in a :class:`jdr_stats.JDRResults`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from .. import policy
from ..core._linalg import AnyWhitening, BlockMoments, Whitening
from ..core.whitening import DesignWhitening
from ..estimation._estimate import (
    Estimate,
    check_rank,
    check_tests_feasible,
    choose_whitening,
    estimate,
    fold_standardize,
    moments_and_whitenings,
)
from ..estimation._joint import joint_data, joint_fit_data, scaled_data
from ..estimation._settings import FitSettings
from ..inference.ladle import LadleResults
from ..inference.rank_tests import RankTestResults, choose_rank
from ..io._data import ModelData
from ..runtime._frequency import observations, whitening_nobs
from ..runtime._validation import by_block, check_fit_rows
from ..support import choose_support
from ..whitenings import WHITENING_METHODS
from ._kfit import fit_kblocks
from ._kstream import BlockSums, fit_streamed_kblocks
from ._model_support import _cv_sparsity
from ._orthogonal_fit import (
    check_regression_whitening,
    choose_orthogonal_rank,
    interactions_choice,
    orthogonal_data,
)
from ._rank_zero import rank_zero_support

__all__ = ["TwoBlockPieces", "fit_kblock_engine", "fit_two_blocks"]


@dataclass(frozen=True)
class TwoBlockPieces:
    """What the two-block route hands to the results: the estimate, the
    moments it came from, the settings, the tests that chose the rank, the
    whitening and the rows the estimator saw."""

    est: Estimate
    mom: BlockMoments
    settings: FitSettings
    rank_table: RankTestResults | LadleResults | None
    whitening: DesignWhitening[AnyWhitening] | None
    data: Any


@dataclass(frozen=True)
class _TestInputs:
    """The rows, moments and whitening the rank and coordinate tests read
    (the sample covariance where the fit's whitening is not theirs)."""

    data: Any
    mom: BlockMoments
    whitening: DesignWhitening[Whitening] | None


def fit_kblock_engine(model: Any, rank: Any, *, whitening: Any, standardize: Any,
                      independent_blocks: bool, sparsity: Any, rank_method: Any,
                      alpha: float, seed: Any, main_effects: bool,
                      interactions: str = "stein", fdr: float = 0.1) -> Any:
    """Three or more blocks, main effects, or two blocks of different ranks:
    the K-block engine (in memory or streamed)."""
    data = model._data
    streamed = isinstance(data, BlockSums)
    if len(model.block_names) == 2 and not isinstance(data, ModelData):
        # the K-block engine reads the rows in memory or the K-block streamed
        # sums; a two-block row source or sums has neither
        what = "main_effects=True" if main_effects else f"rank={rank!r}"
        if streamed or data.source is not None or data.sums is not None:
            raise ValueError(f"{what}: a two-block model streamed from a row source or "
                             "built from sums runs the two-block fit only (one rank, "
                             "main_effects=False); load the rows (arrays or a DataFrame)")
        data.rows(what)  # rows removed: the error that says so
    if streamed:
        return fit_streamed_kblocks(
            model, rank, whitening=str(fold_standardize(whitening, standardize)),
            independent_blocks=independent_blocks, sparsity=sparsity,
            rank_method=rank_method, alpha=alpha, seed=seed,
            main_effects=main_effects)
    return fit_kblocks(model, rank, whitening=str(fold_standardize(whitening, standardize)),
                       independent_blocks=independent_blocks, sparsity=sparsity,
                       rank_method=rank_method, alpha=alpha, seed=seed,
                       main_effects=main_effects, interactions=interactions, fdr=fdr)


def _two_block_rank(rank: Mapping[str, int], names: Sequence[str]) -> int:
    """A two-block fit's rank from a dict by block name giving both the same."""
    if sorted(rank) != sorted(names):
        raise ValueError(f"rank: a dict needs one rank per block {list(names)}; got "
                         f"{sorted(rank)}")
    values = {int(v) for v in rank.values()}  # one value: different ranks fit the K engine
    return values.pop()


def _check_two_block_args(model: Any, rank: Any, sparsity: Any,
                          independent_blocks: Any) -> tuple[Any, Any]:
    """The rank (a dict by block as its one value), the sparsity (an int or
    a dict by block as the pair ``(s1, s2)``, as for K blocks) and
    ``independent_blocks`` of a two-block fit, checked."""
    if isinstance(rank, Mapping):
        rank = _two_block_rank(rank, model.block_names)
    if isinstance(sparsity, str) and sparsity not in ("auto", "cv"):
        raise ValueError(f'sparsity must be (s1, s2), "auto", "cv" or None; got '
                         f'{sparsity!r}')
    if sparsity is not None and not isinstance(sparsity, (str, tuple, list, np.ndarray)):
        names = list(model.block_names)  # an int for both, or a dict by block (as for K)
        given = by_block(sparsity, "sparsity", "count", names,
                         'sparsity must be (s1, s2), an int, a dict of ints by block name, '
                         '"auto", "cv" or None')
        sparsity = tuple(given[n] for n in names)
    names_a, names_b = model.exog_names_a, model.exog_names_b
    if rank != "auto":
        check_fit_rows(model.nobs, check_rank(rank, len(names_a), len(names_b), low=0))
    if independent_blocks is not True and independent_blocks is not False:
        raise ValueError(
            f"independent_blocks must be True or False; got {independent_blocks!r}")
    return rank, sparsity


def _whitening_and_estimator(model: Any, whitening: Any, standardize: Any,
                             independent_blocks: bool, interactions: str,
                             base: Any) -> tuple[Any, bool, policy.Choice, Any]:
    """The whitening asked for, resolved (``"auto"`` by the policy), whether
    the estimator is the joint one, the estimator's choice, and the rows
    it reads (the residual regression's under ``interactions="regression"``)."""
    names_a, names_b = model.exog_names_a, model.exog_names_b
    requested = fold_standardize(whitening, standardize)
    joint = policy.block_estimator(independent_blocks, model.nobs, len(names_a),
                                   len(names_b), "auto").name == "joint"
    width = len(names_a) + len(names_b) if joint else max(len(names_a), len(names_b))
    count = whitening_nobs(model.nobs, observations(model._data), width)
    choice = choose_whitening(requested, count, len(names_a), len(names_b), joint)
    if interactions == "regression":
        check_regression_whitening(interactions, choice)
        base = orthogonal_data(model._data, interactions, joint=joint)
    estimator = policy.block_estimator(independent_blocks, model.nobs, len(names_a),
                                       len(names_b), choice.name)
    return choice, joint, estimator, base


def _test_inputs(base: Any, data: Any, mom: BlockMoments,
                 whitening_pair: DesignWhitening[AnyWhitening] | None, choice: Any,
                 auto: bool, joint: bool) -> _TestInputs:
    """What the tests read: they whiten with the sample covariance (see
    fit's docstring), of both blocks together for the joint estimator."""
    test_data, test_mom = data, mom
    test_whitening = cast("DesignWhitening[Whitening] | None", None
                          if WHITENING_METHODS[choice.name].tests_need_sample
                          else whitening_pair)
    if auto and joint and choice.name != "sample":
        test_data = joint_data(base, like=data)[0]  # the fit's stacked sums
        test_mom = test_data.moments()
    return _TestInputs(test_data, test_mom, test_whitening)


def _choose_fit_rank(model: Any, rank: Any, tests: _TestInputs, *, interactions: str,
                     joint: bool, rank_method: Any, alpha: float,
                     rank_seed: np.random.Generator, progress: Any,
                     ) -> tuple[Any, RankTestResults | LadleResults | None, str | None]:
    """The rank (a given one unchanged), the tests that chose it and the
    name of the method that ran."""
    rank_table: RankTestResults | LadleResults | None = None
    chosen_by: str | None = None
    if rank == "auto" and interactions != "stein":
        rank, orth_table = choose_orthogonal_rank(model._data, joint=joint, alpha=alpha,
                                                  interactions=interactions)
        rank_table = orth_table
        check_fit_rows(model.nobs, rank)
        chosen_by = "regression" if interactions == "regression" else "orthogonal"
    elif rank == "auto":
        rank, rank_table = choose_rank(
            tests.data, tests.mom, tests.whitening, method=rank_method, alpha=alpha,
            seed=rank_seed, progress=progress,
        )
        check_fit_rows(model.nobs, rank)
        # the method that ran
        chosen_by = getattr(rank_table, "method", rank_method) \
            if rank_method != "ladle" else rank_method
    if isinstance(rank_table, RankTestResults):
        rank_table = rank_table.named(model.block_names)
    return rank, rank_table, chosen_by


def _choose_fit_sparsity(model: Any, data: Any, rank: int, sparsity: Any,
                         tests: _TestInputs, *, kind: str, fdr: float,
                         support_seed: np.random.Generator) -> tuple[Any, ...]:
    """The sparsity (a given one unchanged), the selected rows and columns,
    the coordinate tests and their note, and the cross-validation."""
    names_a, names_b = model.exog_names_a, model.exog_names_b
    support_sets = None
    support_found, support_note = None, None
    if rank == 0 and sparsity is not None:  # no direction: no variable to select
        support_sets, sparsity, support_note = rank_zero_support()
    if sparsity == "auto":
        data.rows('sparsity="auto" (support selection)')
        found = choose_support(tests.data, tests.mom, tests.whitening, rank=rank, fdr=fdr,
                               seed=support_seed)
        support_found, support_note = found.tests.named(model.block_names), found.note()
        support_sets = (found.rows, found.cols)
        sparsity = (len(found.rows), len(found.cols))
    sparsity_cv = None
    if sparsity == "cv":
        sparsity_cv = _cv_sparsity(data, rank, kind, names_a, names_b, support_seed)
        sparsity = sparsity_cv.chosen
    return sparsity, support_sets, support_found, support_note, sparsity_cv


def fit_two_blocks(model: Any, rank: Any, base: Any, interactions: str, *, whitening: Any,
                   standardize: Any, independent_blocks: Any, sparsity: Any,
                   rank_method: Any, alpha: float, fdr: float,
                   seeds: Any, progress: Any) -> TwoBlockPieces:
    """The two-block route of ``fit``: validate, whiten, choose the rank and
    the sparsity, estimate.  ``seeds`` gives the rank tests' and the support
    selection's generators when called (after the checks)."""
    rank, sparsity = _check_two_block_args(model, rank, sparsity, independent_blocks)
    names_a, names_b = model.exog_names_a, model.exog_names_b
    choice, joint, estimator, base = _whitening_and_estimator(
        model, whitening, standardize, independent_blocks, interactions, base)
    auto = rank == "auto" or sparsity == "auto"
    if auto:
        check_tests_feasible(model.nobs, len(names_a), len(names_b), rank, sparsity, joint)
    # the joint estimator is the paper's on each block's rows (Sigma_hat^{-1} x)
    # (the per-block one on columns of extreme units times powers of two)
    data, kind = joint_fit_data(base, choice.name) if joint \
        else (scaled_data(base), choice.name)
    # The moments are computed once, and each covariance factored once,
    # for the rank tests, the coordinate tests and the estimate.
    mom, whitening_pair = moments_and_whitenings(data, names_a, names_b, kind, auto)
    tests = _test_inputs(base, data, mom, whitening_pair, choice, auto, joint)
    rank_seed, support_seed = seeds()
    rank, rank_table, chosen_by = _choose_fit_rank(
        model, rank, tests, interactions=interactions, joint=joint, rank_method=rank_method,
        alpha=alpha, rank_seed=rank_seed, progress=progress)
    sparsity, support_sets, support_found, support_note, sparsity_cv = _choose_fit_sparsity(
        model, data, rank, sparsity, tests, kind=choice.name, fdr=fdr,
        support_seed=support_seed)
    est = estimate(
        mom,
        rank,
        standardize=choice.name != "none",
        sparsity=None if sparsity is None or support_sets is not None
        else tuple(sparsity),
        names_a=names_a,
        names_b=names_b,
        whitening=whitening_pair,
        support=support_sets,
    )
    settings = FitSettings(
        whitening=choice, rank_method=chosen_by,
        rank_choice=getattr(rank_table, "choice", None),
        alpha=alpha if chosen_by is not None else None,
        sparsity=None if sparsity is None else (int(sparsity[0]), int(sparsity[1])),
        support=support_found, support_note=support_note, estimator=estimator,
        sparsity_choice=None if sparsity_cv is None else sparsity_cv.choice,
        sparsity_cv=None if sparsity_cv is None else sparsity_cv.table,
        interactions=interactions_choice(interactions),
    )
    return TwoBlockPieces(est, mom, settings, rank_table, whitening_pair, data)
