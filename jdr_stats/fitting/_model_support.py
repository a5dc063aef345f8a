"""The model's support selection beyond two blocks in memory: the K-block
tests of every variable (per-block robust conditional test, or the joint
estimator's own variable tests) and ``fit(sparsity="cv")``'s
cross-validation on the rows the estimator sees.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .. import policy
from ..inference.hypotheses import fdr_qvalues
from ..io._data import ModelData, RowsData
from ..runtime._validation import (
    check_fraction,
    normalize_seed,
)
from ..support._cv import SparsityCV, cv_sparsity
from ..support._kblock import kblock_results, kblock_support
from ..support._results import SupportResults

__all__: list[str] = []


def _kblock_select_support(model: Any, rank: Any, *, rule: Any, fdr: float | None,
                           seed: Any, refused: dict[str, Any], standardize: bool,
                           independent_blocks: bool) -> SupportResults:
    """``select_support`` of three or more blocks, or of two with a rank
    per block (the robust conditional test of every variable, BH over all
    blocks: :mod:`jdr_stats.support._kblock`)."""
    from ._kfit import _check_ranks

    normalize_seed(seed)  # the tests are not random: the seed is checked, not used
    of = ("of three or more blocks" if len(model.block_names) >= 3
          else "with a rank per block")
    given = {k: v for k, v in refused.items() if v is not None}
    if given:
        raise ValueError(f"select_support {of} has one test (the robust "
                         f"conditional Wald test); got {given!r}")
    if standardize is not True:
        raise ValueError(f"select_support {of} whitens each block alone "
                         f"(standardize=True); got standardize={standardize!r}")
    if rank is None:
        raise ValueError("rank: select_support of three or more blocks tests each variable "
                         "given its block's rank; give rank= (an int or a dict by block)")
    data = model._data
    assert isinstance(data, ModelData)
    if data.weights is not None:
        raise ValueError(f"select_support {of} does not take case weights "
                         "yet; the model has weights")
    names = list(model.block_names)
    labels = [data.names[k] for k in data.blocks]  # keyed by the data's block keys
    ranks = _check_ranks(rank, names, [len(lab) for lab in labels])
    if not isinstance(rule, str):
        raise ValueError(f'rule: three or more blocks take "bh" or "by"; got {rule!r}')
    # the estimator asked for: its own tests
    estimator = policy.kblock_support_estimator(independent_blocks)
    if estimator.name == "joint":
        return _joint_kblock_support(model, ranks, fdr=0.1 if fdr is None else fdr,
                                     rule=rule, estimator=estimator)
    return kblock_support(np.asarray(data.endog, float),
                          [np.asarray(x, float) for x in data.blocks.values()], names, labels,
                          ranks, fdr=0.1 if fdr is None else fdr,
                          rule=rule, estimator=estimator)  # type: ignore[arg-type]


def _joint_kblock_support(model: Any, ranks: dict[str, int], *, fdr: float,
                          rule: str, estimator: policy.Choice) -> SupportResults:
    """``select_support`` of K blocks under the joint estimator: the fit's
    own variable tests at the given ranks (``drop1()``: Wald, jackknife
    covariance of the rows' influences), then ``rule`` at ``fdr`` over all
    blocks' variables."""
    if rule not in ("bh", "by"):
        raise ValueError(f'rule: three or more blocks take "bh" or "by"; got {rule!r}')
    check_fraction(fdr, "fdr")
    res = model.fit(ranks)
    table = res.drop1().table
    pv = table["pvalue"].to_numpy(float)
    q = np.full(pv.shape, np.nan)
    finite = np.isfinite(pv)
    if finite.any():
        q[finite] = fdr_qvalues(pv[finite], "by" if rule == "by" else "bh")
    table["qvalue"] = q
    table["selected"] = np.nan_to_num(q, nan=1.0) <= fdr
    return kblock_results(table, names=list(ranks), fdr=float(fdr), rule=rule, ranks=ranks,
                          estimator=estimator)


def _cv_sparsity(data: RowsData, rank: int, kind: str, names_a: list[str],
                 names_b: list[str], rng: np.random.Generator) -> SparsityCV:
    """``fit(sparsity="cv")``: the cross-validation on the rows the estimator
    sees (:func:`jdr_stats.support._cv.cv_sparsity`)."""
    # out-of-fold R^2: invariant to the response's unit (extreme units brought near 1)
    y, a, b, weights = data.rows('sparsity="cv"', weights=True, unit=True)
    if weights is not None:
        raise ValueError('sparsity="cv" does not handle case weights yet; the model has '
                         "weights. Give sparsity=(s1, s2)")
    return cv_sparsity(y, np.asarray(a, float), np.asarray(b, float),
                       rank=rank, kind=kind, names_a=names_a, names_b=names_b, rng=rng)
