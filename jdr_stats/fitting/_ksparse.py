"""Sparse fits of K >= 3 blocks (docs/theory/k_blocks.md, section "Sparse fits").

``fit(rank, sparsity={name: s_k})`` keeps ``s_k`` variables of every block,
chosen from the dense fit's pieces by
:func:`jdr_stats.core.ksparse.sparse_supports`, and refits the estimator on
them; ``sparsity="cv"`` chooses one common ``s`` for every block by K-fold
cross-validation over rows (:func:`cv_kblock_sparsity`).
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from .. import policy
from ..core.kestimate import KBlockFactors, block_factors
from ..core.ksparse import sparse_supports, unit_free_pieces
from ..core.tensor import cross_tensor, hermite_corrected, pieces
from ..core.whitening import DesignWhitening
from ..exceptions import SupportSelectionWarning
from ..runtime._validation import by_block
from ._kwhiten import _cross_cov, _whiten_arrays

__all__ = ["KSparsityCV", "SparseKFit", "check_block_sparsity", "cv_kblock_sparsity", "sparse_kfit",
           "tested_supports"]


def _piece_tensors(y: np.ndarray, zs: Sequence[np.ndarray], w: np.ndarray | None,
                   cross_cov: dict[tuple[int, int], np.ndarray] | None
                   ) -> dict[tuple[int, ...], np.ndarray]:
    """The pieces ``P_S`` of the tensor route of
    :func:`~jdr_stats.core.kestimate.block_factors` (the same weighted means
    and Hermite correction)."""
    yraw = y[:, None] if y.ndim == 1 else y
    m = yraw.shape[0]
    y2 = yraw if w is None else yraw * (m * w / np.sum(w))[:, None]
    out = {}
    for piece in pieces(len(zs)):
        sub = [zs[j] for j in piece]
        if cross_cov is not None and len(piece) >= 3:
            cc = {(a, b): cross_cov[(piece[a], piece[b])]
                  for a in range(len(piece)) for b in range(a + 1, len(piece))}
            out[piece] = hermite_corrected(y2, sub, cc)
        else:
            out[piece] = cross_tensor(y2, sub)
    return out


def _unit_free_ops(white: DesignWhitening[Any]) -> list[np.ndarray]:
    """``A_j = diag(Sigma_j^{-1})^{-1/2} C_j^{-T}`` of every block (whitened
    to unit-free original coordinates; ``Sigma_j`` the block's partial
    covariance under the joint whitening)."""
    out = []
    for mp in white.maps:
        inv_t = mp.solve_t(np.eye(mp.dim))
        out.append(inv_t / np.sqrt(mp.precision_diag())[:, None])
    return out


def selection_target(y: np.ndarray, zs: Sequence[np.ndarray], w: np.ndarray | None,
                     white: DesignWhitening[Any], fac: KBlockFactors,
                     cross_cov: dict[tuple[int, int], np.ndarray] | None
                     ) -> dict[tuple[int, ...], np.ndarray]:
    """The unit-free, scaled pieces the selection reads
    (:func:`jdr_stats.core.ksparse.unit_free_pieces`)."""
    return unit_free_pieces(_piece_tensors(y, zs, w, cross_cov), _unit_free_ops(white),
                            fac.scales)


@dataclass(frozen=True)
class SparseKFit:
    """A sparse K-block fit: the kept variables and the refit on them."""

    supports: list[np.ndarray]
    fac: KBlockFactors
    white: DesignWhitening[Any]
    route: policy.Choice


def sparse_kfit(y: np.ndarray, zs: Sequence[np.ndarray], blocks: Sequence[np.ndarray],
                w: np.ndarray | None, white: DesignWhitening[Any], fac: KBlockFactors,
                sizes: Sequence[int], *, names: Sequence[str],
                labels: Sequence[Sequence[str]], kind: str, estimator: str,
                cross_cov: dict[tuple[int, int], np.ndarray] | None, q: int,
                target: dict[tuple[int, ...], np.ndarray] | None = None,
                supports: Sequence[np.ndarray] | None = None) -> SparseKFit:
    """Select ``sizes[k]`` variables of every block from the dense fit's
    pieces (:func:`jdr_stats.core.ksparse.sparse_supports`) and refit the
    estimator on them: each block whitened with its own sub-covariance (the
    per-block maps restricted to the kept variables), or the joint
    whitening of the kept variables of all blocks re-estimated.  ``target``:
    :func:`selection_target` when already formed; ``supports``: the kept
    columns of every block, given (``sparsity="auto"``: the support tests')
    instead of selected."""
    if supports is None:
        if target is None:
            target = selection_target(y, zs, w, white, fac, cross_cov)
        supports, _, _ = sparse_supports(target, fac.weights, sizes)
    sub = [x[:, idx] for x, idx in zip(blocks, supports, strict=True)]
    m = y.shape[0]
    wn = np.full(m, 1.0 / m) if w is None else w / w.sum()
    if estimator == "joint":
        sub_labels = [[lab[j] for j in idx] for lab, idx in zip(labels, supports, strict=True)]
        zsub, wsub = _whiten_arrays(sub, w, names, sub_labels, kind, estimator)
        cc = _cross_cov(zsub, wn)
    else:
        wsub = DesignWhitening.per_block([
            mp.subset(idx, name, list(lab))
            for mp, idx, name, lab in zip(white.maps, supports, names, labels, strict=True)])
        zsub = [z - wn @ z for z in wsub.rows(sub)]
        cc = None
    route = policy.kblock_route(m, tuple(len(s) for s in supports), q)
    if cc is not None and route.name != "tensor":  # pragma: no cover - the dense fit was
        raise ValueError("the sparse joint fit needs the tensor route")
    sfac = block_factors(y, zsub, w=w, route=route.name,  # type: ignore[arg-type]
                         weighting=policy.kblock_weighting().name,  # type: ignore[arg-type]
                         cross_cov=cc)
    return SparseKFit(list(supports), sfac, wsub, route)




def directions(sp: SparseKFit, ranks: Sequence[int], widths: Sequence[int]) -> list[np.ndarray]:
    """Each block's directions of a sparse fit in its original variables
    (unit columns, zero outside the kept variables)."""
    out = []
    for k, (idx, r, n) in enumerate(zip(sp.supports, ranks, widths, strict=True)):
        d = np.zeros((n, r))
        d[idx] = sp.white.to_original(k, sp.fac.factors[k][:, :r])
        out.append(d)
    return out


def interaction_design(features: Sequence[np.ndarray]) -> np.ndarray:
    """The regression design of the K-block criterion: an intercept, every
    block's reduced features, the products of the features of every pair of
    blocks and the products of one feature of every block (the terms the
    pairwise and K-way pieces see)."""
    m = features[0].shape[0]
    cols = [np.ones((m, 1)), *features]
    for j, k in combinations(range(len(features)), 2):
        cols.append((features[j][:, :, None] * features[k][:, None, :]).reshape(m, -1))
    prod = features[0]
    for f in features[1:]:
        prod = (prod[:, :, None] * f[:, None, :]).reshape(m, -1)
    cols.append(prod)
    return np.hstack(cols)


@dataclass(frozen=True)
class KSparsityCV:
    """The cross-validation of ``fit(sparsity="cv")`` for K >= 3 blocks.

    Attributes
    ----------
    table : DataFrame
        One row per candidate: the common count ``s``, each block's count
        (columns by block name), ``cv_rsquared`` (mean out-of-fold
        R-squared), ``se``, ``best`` and ``chosen`` flags.
    chosen : tuple of int
        Each block's count.
    choice : Choice
        The record for the fit's settings (:func:`jdr_stats.policy.kblock_sparsity_cv`).
    """

    table: pd.DataFrame
    chosen: tuple[int, ...]
    choice: policy.Choice


def cv_kblock_sparsity(endog: np.ndarray, blocks: Sequence[np.ndarray], ranks: dict[str, int],
                       *, w: np.ndarray | None, names: Sequence[str],
                       labels: Sequence[Sequence[str]], kind: str, estimator: str,
                       rng: np.random.Generator) -> KSparsityCV:
    """K-fold cross-validation of one common sparsity for every block.

    Candidates: ``s`` in :func:`jdr_stats.policy.sparsity_grid` of the widest
    block from the largest rank, block ``k`` keeping ``min(n_k, max(r_k, s))``.
    For each fold the whole estimator runs on the other folds (whitening,
    pieces, the selection at every candidate, the refit); ``y`` is regressed
    on :func:`interaction_design` of the training rows' reduced features and
    predicts the held-out rows; the criterion is the out-of-fold R-squared
    averaged over the folds, and the chosen candidate the smallest ``s``
    within one standard error of the best (theory page "K blocks", section
    "Sparse fits").
    """
    if w is not None:
        raise ValueError('sparsity="cv" does not handle case weights yet; the model has '
                         "weights. Give sparsity= an int or a dict by block")
    y = np.asarray(endog, float)
    m = y.shape[0]
    widths = [x.shape[1] for x in blocks]
    r = [ranks[n] for n in names]
    folds = policy.SPARSITY_CV_FOLDS
    n_terms = 1 + sum(r) + sum(r[j] * r[k] for j, k in combinations(range(len(r)), 2)) \
        + int(np.prod(r))
    m_train = m - int(np.ceil(m / folds))
    if m < 2 * folds or m_train < n_terms + 2:
        raise ValueError(
            f'sparsity="cv" needs at least 2 held-out rows in each of {folds} folds and '
            f"{n_terms + 2} training rows for the regression on {n_terms} terms; got {m} "
            "rows. Give sparsity= an int or a dict by block")
    need = sum(widths) if estimator == "joint" else max(widths) if kind == "sample" else 0
    if need and m_train < need + 2:
        raise ValueError(
            f'sparsity="cv" whitens each training fold ({m_train} rows) with the sample '
            f"covariance of {need} columns, which needs {need + 2} rows; use "
            'independent_blocks=True with whitening="shrinkage", or give the sparsity')
    grid = policy.sparsity_grid(max(widths), max(r))
    cands = [tuple(min(n, max(rk, s)) for n, rk in zip(widths, r, strict=True)) for s in grid]
    q = 1 if y.ndim == 1 else y.shape[1]
    y2 = y.reshape(m, -1)
    scores = np.empty((folds, len(cands)))
    order = rng.permutation(m)
    for f, test in enumerate(np.array_split(order, folds)):
        test = np.sort(test)
        train = np.setdiff1d(np.arange(m), test)
        sub = [x[train] for x in blocks]
        zs, white = _whiten_arrays(sub, None, names, labels, kind, estimator)
        ytr = y[train] - y[train].mean(axis=0)
        wn = np.full(len(train), 1.0 / len(train))
        cc = _cross_cov(zs, wn) if estimator == "joint" else None
        fac = block_factors(ytr, zs, route="tensor",
                            weighting=policy.kblock_weighting().name,  # type: ignore[arg-type]
                            cross_cov=cc)
        target = selection_target(ytr, zs, None, white, fac, cc)
        means = [x.mean(axis=0) for x in sub]
        sst = float(np.sum((y2[test] - y2[train].mean(axis=0)) ** 2))
        for j, sizes in enumerate(cands):
            sp = sparse_kfit(ytr, zs, sub, None, white, fac, sizes, names=names,
                             labels=labels, kind=kind, estimator=estimator, cross_cov=cc,
                             q=q, target=target)
            ds = directions(sp, r, widths)
            xtr = interaction_design([(x - mu) @ d for x, mu, d in zip(sub, means, ds,
                                                                        strict=True)])
            xte = interaction_design([(x[test] - mu) @ d
                                      for x, mu, d in zip(blocks, means, ds, strict=True)])
            beta = np.linalg.lstsq(xtr, y2[train], rcond=None)[0]
            sse = float(np.sum((y2[test] - xte @ beta) ** 2))
            scores[f, j] = 1.0 - sse / sst if sst > 0 else np.nan
    mean = np.nanmean(scores, axis=0)
    se = np.nanstd(scores, axis=0, ddof=1) / np.sqrt(np.sum(np.isfinite(scores), axis=0))
    best = int(np.nanargmax(mean))
    pick = int(np.flatnonzero(mean >= mean[best] - se[best])[0])  # the smallest s
    table = pd.DataFrame({"s": grid, **{n: [c[k] for c in cands] for k, n in enumerate(names)},
                          "cv_rsquared": mean, "se": se,
                          "best": np.arange(len(cands)) == best,
                          "chosen": np.arange(len(cands)) == pick})
    choice = policy.kblock_sparsity_cv(dict(zip(names, cands[best], strict=True)),
                                       dict(zip(names, cands[pick], strict=True)),
                                       float(mean[best]), float(se[best]), len(cands), folds)
    return KSparsityCV(table=table, chosen=cands[pick], choice=choice)


def tested_supports(model: Any, ranks: dict[str, int], fdr: float, seed: Any,
                     estimator: str, labels: Sequence[Sequence[str]]
                     ) -> tuple[list[np.ndarray], Any]:
    """``sparsity="auto"``: each block's variables that ``select_support``
    (the fitted estimator's robust conditional tests given the ranks, BH at
    ``fdr`` over all blocks) selects, as column positions, and those tests
    (the :class:`~jdr_stats.support.SupportResults`); a block where fewer
    than its rank are selected stays dense, with a
    :class:`~jdr_stats.exceptions.SupportSelectionWarning`."""
    sup = model.select_support(rank=dict(ranks), fdr=fdr, seed=seed,
                               independent_blocks=estimator == "per-block")
    out, dense = [], []
    for (name, r), lab in zip(ranks.items(), labels, strict=True):
        keep = set(sup.support[name])
        idx = np.array([j for j, v in enumerate(lab) if v in keep], dtype=np.int64)
        if r > 0 and idx.size < r:
            dense.append(f"{name!r} ({idx.size} selected, rank {r})")
            idx = np.arange(len(lab))
        out.append(idx)
    if dense:
        warnings.warn(f'sparsity="auto": the support tests selected fewer variables than the '
                      f"rank in block(s) {', '.join(dense)} at fdr={fdr}; those blocks are "
                      "kept dense", SupportSelectionWarning, stacklevel=6)
    return out, sup


def check_block_sparsity(sparsity: Any, names: Sequence[str],
                         widths: Sequence[int]) -> dict[str, int]:
    """Each block's ``s_k`` from ``sparsity`` (an int for all, or a dict by name)."""
    if isinstance(sparsity, (tuple, list)) and len(sparsity) == len(names):
        sparsity = dict(zip(names, sparsity, strict=True))  # one count per block, in order
    given = by_block(sparsity, "sparsity", "count", names,
                     f'sparsity must be an int, a dict of ints by block name, {len(names)} ints '
                     'in block order, "cv" or "auto"')
    out = {}
    for n, wd in zip(names, widths, strict=True):
        s = given[n]
        if isinstance(s, bool) or not isinstance(s, (int, np.integer)) or not 1 <= s <= wd:
            raise ValueError(f"sparsity of block {n!r} must be an integer between its rank "
                             f"and its {wd} columns; got {s!r}")
        out[n] = int(s)
    return out
