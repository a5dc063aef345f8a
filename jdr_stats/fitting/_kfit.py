"""The fit of K >= 3 blocks and its results (docs/theory/k_blocks.md).

A model of three or more blocks (:meth:`JointDimReduction.from_blocks`,
or a formula with two or more bars) fits here: each block whitened (alone,
the paper's estimator, or across blocks), every piece (the block pairs'
cross moments and the K-way tensor) formed or read through its mode Grams
(:mod:`jdr_stats.core.kestimate`), each block's basis the leading
eigenvectors of its combined Gram, mapped back to the original variables.
Two blocks come here only for ``main_effects=True`` (each block's first
moment pooled with the pair: no longer one SVD); otherwise they keep the
two-block code path.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
import pandas as pd

from .. import policy
from ..core._linalg import unit_columns
from ..core.kestimate import KBlockFactors, block_factors, stacked_pieces
from ..core.tensor import sketch_tests
from ..core.whitening import DesignWhitening
from ..exceptions import RankSelectionWarning
from ..inference._kblock_design import KBlockDesign
from ..inference._rank_results import RankTestResults
from ..inference.kblock_orthogonal import kblock_residual
from ..inference.ladle import LADLE_AT_ZERO, LadleResults
from ..inference.main_effects import MainEffectsMethod, MainEffectsResults, main_effects_test
from ..inference.rank_methods import kblock_method
from ..io._data import ModelData
from ..persistence._export import ExportMixin
from ..runtime._frequency import observations, whitening_nobs
from ..runtime._validation import by_block, normalize_seed
from ..summary import SummaryMixin
from ..support._results import SupportResults
from ..whitenings import WHITENING_METHODS
from . import _kregression as kreg
from ._found import KBlockFoundMixin
from ._kladle import kblock_ladle
from ._krank import (
    block_rank_choice,
    block_rank_results,
    checked_rank_options,
    method_text,
    up_to,
)
from ._kresults_extra import KBlockExtrasMixin
from ._kresults_infer import KBlockInferenceMixin
from ._ksparse import check_block_sparsity, cv_kblock_sparsity, sparse_kfit, tested_supports
from ._ksummary import kblock_summary
from ._kview import KBlockViewMixin
from ._kwhiten import _aligned, _cross_cov, _whiten_arrays
from ._rank_zero import rank_zero_sizes

if TYPE_CHECKING:  # statsmodels on first use: fast ``import jdr_stats``
    from ..summary import JDRSummary

__all__ = ["KBlockFit", "fit_kblocks"]

RankArg = int | Mapping[str, int] | Literal["auto"]


def _check_ranks(rank: Any, names: Sequence[str], widths: Sequence[int]) -> dict[str, int]:
    """Each block's rank from ``rank`` (an int for all, or a dict by name)."""
    given = by_block(rank, "rank", "rank", names,
                     'rank must be an int, a dict of ints by block name or "auto"')
    out = {}
    for n, w in zip(names, widths, strict=True):
        r = given[n]
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not 0 <= r <= w:
            raise ValueError(f"rank of block {n!r} must be an integer between 0 and {w} "
                             f"(its columns); got {r!r}")
        out[n] = int(r)
    return out


def _whiten(data: ModelData, names: Sequence[str], kind: str,
            estimator: str) -> tuple[list[np.ndarray], DesignWhitening[Any], list[np.ndarray]]:
    """Whitened, centred rows of every block, the whitening and the blocks."""
    blocks = [np.asarray(x, float) for x in data.blocks.values()]
    labels = [data.names[k] for k in data.blocks]
    zs, white = _whiten_arrays(blocks, data.weights, names, labels, kind, estimator)
    return zs, white, blocks


def _jackknife_influences(blocks: Sequence[np.ndarray], endog: np.ndarray,
                          w: np.ndarray | None, names: Sequence[str],
                          labels: Sequence[Sequence[str]], kind: str, estimator: str,
                          fac: KBlockFactors, stacked: Sequence[np.ndarray], *,
                          orthogonal: bool = False) -> list[np.ndarray]:
    """Each row's influence on every block's stacked pieces: one copy of row
    ``i`` deleted (its weight lowered by ``d_i = min(1, w_i)``, the row
    dropped at zero), the pieces refitted (whitening, centring, Hermite
    correction re-estimated, and with ``orthogonal`` the response's residual
    on ``[1, every block]``; the pieces' scales and weights held; the
    whitening turned to the fit's, :func:`~jdr_stats.fitting._kwhiten._aligned`), and
    ``(W - d_i) / d_i (M_k - M_k^{(-i)})`` (``W`` the rows or the weights'
    sum), ``m x n_k x D_k`` per block."""
    m = endog.shape[0]
    wts = np.ones(m) if w is None else np.asarray(w, float)
    total = float(wts.sum())
    out = [np.empty((m, *mk.shape)) for mk in stacked]
    _, white = _whiten_arrays(blocks, w, names, labels, kind, estimator)
    ref = [white.maps[k].solve_t(np.eye(b.shape[1])) for k, b in enumerate(blocks)]
    for i in range(m):
        d = min(1.0, float(wts[i]))
        wi = wts.copy()
        wi[i] -= d
        keep = wi > 0
        sub = [b[keep] for b in blocks]
        wk = None if w is None else wi[keep]
        zs, _ = _aligned(*_whiten_arrays(sub, wk, names, labels, kind, estimator), ref)
        n = int(keep.sum())
        wn = np.full(n, 1.0 / n) if wk is None else wk / wk.sum()
        y = (kblock_residual(endog[keep], sub) if orthogonal
             else endog[keep] - wn @ endog[keep])
        cc = _cross_cov(zs, wn) if estimator == "joint" else None
        for k, mk in enumerate(stacked_pieces(y, zs, fac, cross_cov=cc, w=wk)):
            out[k][i] = (total - d) / d * (stacked[k] - mk)
    return out


def _route_tests(route: policy.Choice, widths: Sequence[int]) -> list[np.ndarray] | None:
    """The sketch's test matrices of a ``"sketch"`` route (its seeded
    vectors, :func:`policy.kblock_route`); None on the tensor route."""
    if route.name != "sketch":
        return None
    return list(sketch_tests(widths, int(route.inputs["vectors"]), int(route.inputs["seed"])))


def check_main_effects(main_effects: Any, sparsity: Any) -> bool:
    """``main_effects`` checked: a bool, and not with a sparse fit."""
    if main_effects is not True and main_effects is not False:
        raise TypeError(f"main_effects must be True or False; got {main_effects!r}")
    if main_effects and sparsity is not None:
        raise ValueError(f"main_effects=True: sparse fits pooling the main effects are not "
                         f"available; got sparsity={sparsity!r} (use sparsity=None)")
    return bool(main_effects)


def kblock_choices(independent_blocks: object, m: int, widths: Sequence[int],
                   whitening: str, count: int | None = None,
                   ) -> tuple[policy.Choice, policy.Choice, str]:
    """The estimator (:func:`policy.kblock_estimator`: the one asked for, or
    a ``ValueError``), the whitening choice (:func:`policy.kblock_whitening`)
    and the whitening kind of a K-block fit, in memory or streamed alike.

    ``m`` is the number of rows, ``count`` the observations they stand for
    (:func:`~jdr_stats.runtime._frequency.observations`: the total weight
    of whole-number case weights; None: ``m``).  The estimator's check of
    rows counts rows (copies add no rank); ``whitening="auto"`` counts the
    observations, as for two blocks, so integer weights choose as the
    repeated rows do."""
    if whitening != "auto" and whitening not in WHITENING_METHODS:
        raise ValueError(f"whitening must be one of {['auto', *WHITENING_METHODS]}; got "
                         f"{whitening!r}")
    est_choice = policy.kblock_estimator(independent_blocks, m, tuple(widths), whitening)
    width = sum(widths) if est_choice.name == "joint" else max(widths)
    wchoice = policy.kblock_whitening(whitening_nobs(m, m if count is None else count, width),
                                      tuple(widths), est_choice.name)
    return est_choice, wchoice, wchoice.name if whitening == "auto" else whitening


def _checked_arguments(rank: RankArg, names: Sequence[str], widths: Sequence[int], *,
                       main_effects: Any, sparsity: Any, rank_method: str, interactions: str,
                       alpha: float, seed: Any) -> tuple[bool, Any, bool, dict[str, int] | None]:
    """The fit's arguments checked before any arithmetic: main effects pooled,
    the rank method, the ladle, each block's rank (None: ``rank="auto"``)."""
    main_effects = check_main_effects(main_effects, sparsity)
    what = ("three or more blocks" if len(widths) >= 3 else "main_effects=True"
            if main_effects else "a rank per block")
    if sparsity is not None and not isinstance(sparsity, str):
        check_block_sparsity(sparsity, names, widths)  # early: the ranks are checked later
    elif sparsity is not None and sparsity not in ("cv", "auto"):
        raise ValueError(f'sparsity: three or more blocks take an int, a dict by block name, '
                         f'"auto" or "cv"; got {sparsity!r}')
    ladle = rank_method == "ladle"
    method = kblock_method("auto" if ladle else rank_method, "rank_method", what)
    if ladle and interactions == "regression":
        raise ValueError('rank_method="ladle" reads the pieces of the cross moments; a fit of '
                         'interactions="regression" chooses its ranks by its own tests: use '
                         'rank_method="auto"')
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1); got {alpha!r}")
    normalize_seed(seed)
    return main_effects, method, ladle, (
        None if rank == "auto" else _check_ranks(rank, names, widths))


def fit_kblocks(model: Any, rank: RankArg, *, whitening: str, independent_blocks: bool,
                sparsity: Any, rank_method: str, alpha: float, seed: Any,
                stop: bool = True, main_effects: bool = False,
                interactions: str = "stein", fdr: float = 0.1) -> KBlockFit:
    """The K-block fit of ``model`` (see :meth:`JointDimReduction.fit`).

    With ``rank="auto"`` each block's tests run up to the first rank not
    rejected at ``alpha`` (``stop=False``: every rank, for
    :meth:`KBlockFit.rank_tests`).  ``main_effects``: each block's first
    moment pooled with its interaction pieces (two blocks included).
    ``interactions="orthogonal"``: every piece of the response's least
    squares residual on ``[1, every block]``; ``"regression"`` (with
    ``main_effects``): one regression's coefficients (checked by
    :func:`~jdr_stats.fitting._orthogonal_fit.check_interactions`).
    """
    data: ModelData = model._data
    # every number of the K-block fit is invariant to the response's unit:
    # a response of extreme units is brought near unit size (exactly)
    data = replace(data, endog=data.unit_endog)
    endog = np.asarray(data.endog, float)  # before the orthogonal residual
    orthogonal = interactions == "orthogonal"
    if orthogonal:
        data = replace(data, endog=kblock_residual(
            data.endog, [np.asarray(x, float) for x in data.blocks.values()]))
    names = model.block_names
    widths = [len(data.names[k]) for k in data.blocks]
    main_effects, method, ladle, checked = _checked_arguments(
        rank, names, widths, main_effects=main_effects, sparsity=sparsity,
        rank_method=rank_method, interactions=interactions, alpha=alpha, seed=seed)
    if checked is not None:
        ranks = checked
    m = data.nobs
    q = 1 if np.ndim(data.endog) == 1 else int(np.shape(data.endog)[1])
    est_choice, wchoice, kind = kblock_choices(independent_blocks, m, widths, whitening,
                                               observations(data))
    estimator = est_choice.name
    zs, white, blocks = _whiten(data, names, kind, estimator)
    y = np.asarray(data.endog, float)
    w = data.weights
    wn = np.full(m, 1.0 / m) if w is None else w / w.sum()
    y = y - wn @ y
    route = policy.kblock_route(m, tuple(widths), q)
    weighting = policy.kblock_weighting()
    cross_cov = None
    if estimator == "joint" and len(widths) >= 3:
        # the Hermite correction of the K-way piece (two blocks have no piece
        # of three blocks to correct): the tensor and the sketch carry it
        cross_cov = _cross_cov(zs, wn)
    if interactions == "regression":  # the pooled pieces of one least squares fit
        kreg.check_regression_fit(rank, kind, estimator, w)
        route = kreg.regression_route()
        fac = kreg.regression_factors(np.asarray(data.endog, float), blocks, zs, weighting.name)
    else:
        fac = block_factors(y, zs, w=w, route=route.name,  # type: ignore[arg-type]
                            weighting=weighting.name,  # type: ignore[arg-type]
                            cross_cov=cross_cov, main_effects=main_effects,
                            tests=_route_tests(route, widths))
    tables: dict[str, pd.DataFrame] | None = None
    influence = None
    lad: LadleResults | None = None
    if rank == "auto" and ladle:
        lad = kblock_ladle(model, KBlockFit._refit, _ladle_kwargs(
            kind, estimator, main_effects, interactions, independent_blocks),
            y=y, zs=zs, w=w, fac=fac, cross_cov=cross_cov, names=names, widths=widths,
            seed=seed)
        chosen = lad.select_rank()
        assert isinstance(chosen, dict)
        ranks = chosen
        _warn_ladle_zero(ranks)
    elif rank == "auto":
        if m > policy.KBLOCK_GRAM_MAX_ROWS:
            raise ValueError(f'rank="auto": the per-block rank tests form m x m matrices, '
                             f"m = {m} > {policy.KBLOCK_GRAM_MAX_ROWS}; give the ranks")
        labels = [data.names[b] for b in data.blocks]
        design = KBlockDesign(
            tuple(names), zs, y, w, estimator, fac, cross_cov=cross_cov,
            main_effects=main_effects, orthogonal=orthogonal,
            jackknife=lambda stacked: _jackknife_influences(
                blocks, endog, w, names, labels, kind, estimator, fac, stacked,
                orthogonal=orthogonal))
        tables, ranks, influence = block_rank_choice(design, method, alpha, stop)
    settings: dict[str, Any] = {
        "whitening": kind,
        "whitening_reason": wchoice.reason if whitening == "auto" else "given",
        "estimator": estimator, "estimator_reason": est_choice.reason,
        "route": route.to_dict(), "weighting": weighting.to_dict(),
        "main_effects": main_effects, "interactions": interactions,
        "rank_method": "ladle" if lad is not None else method_text(method)
        if tables is not None else None,
        "influence": None if influence is None else influence.to_dict(),
        "alpha": alpha if tables is not None else None}
    if sparsity is None:
        out = KBlockFit(model, fac, white, ranks, settings, tables, blocks)
    else:
        out = _sparse_results(model, sparsity, seed, y, zs, blocks, white, fac, ranks,
                              settings, tables, route=route, kind=kind, estimator=estimator,
                              cross_cov=cross_cov, q=q, fdr=fdr)
    out._ladle = lad
    return out


def _ladle_kwargs(kind: str, estimator: str, main_effects: bool, interactions: str,
                  independent_blocks: bool) -> dict[str, Any]:
    """The ladle's refits: the fit's whitening, estimator and pieces, dense."""
    return {"whitening": kind, "independent_blocks": estimator == "per-block",
            "sparsity": None, "rank_method": "auto", "alpha": 0.05, "seed": None,
            "main_effects": main_effects, "interactions": interactions}


def _warn_ladle_zero(ranks: Mapping[str, int]) -> None:
    """The ladle's word for the blocks where its criterion is smallest at 0."""
    zero = [n for n, r in ranks.items() if r == 0]
    if zero:
        warnings.warn(f"block(s) {', '.join(map(repr, zero))}: {LADLE_AT_ZERO}; returning "
                      "rank 0 (no directions) for them", RankSelectionWarning, stacklevel=5)


def _sparse_results(model: Any, sparsity: Any, seed: Any, y: np.ndarray,
                    zs: list[np.ndarray], blocks: list[np.ndarray], white: DesignWhitening[Any],
                    fac: KBlockFactors, ranks: dict[str, int], settings: dict[str, Any],
                    tables: dict[str, pd.DataFrame] | None, *, route: policy.Choice,
                    kind: str, estimator: str,
                    cross_cov: dict[tuple[int, int], np.ndarray] | None,
                    q: int, fdr: float = 0.1) -> KBlockFit:
    """The sparse fit of :func:`fit_kblocks` (``sparsity`` an int, a dict by
    block name or ``"cv"``: each block's variables selected from the dense
    fit's pieces; ``"auto"``: the variables :meth:`select_support` selects
    at ``fdr`` given the ranks), the estimator refitted on them."""
    data: ModelData = model._data
    names = model.block_names
    widths = [len(data.names[k]) for k in data.blocks]
    w = data.weights
    if route.name != "tensor":
        raise ValueError(
            f"sparsity: a sparse fit of {len(widths)} blocks selects from the pieces' tensors, "
            f"here too large ({route.reason}; at most {policy.KBLOCK_TENSOR_MAX_ENTRIES} "
            "entries, policy.KBLOCK_TENSOR_MAX_ENTRIES); screen the variables first")
    labels = [data.names[b] for b in data.blocks]
    chosen = tests = None
    if sparsity == "auto":
        chosen, tests = tested_supports(model, ranks, fdr, seed, estimator, labels)
        sizes = {n: len(idx) for n, idx in zip(names, chosen, strict=True)}
        settings["support_fdr"] = fdr
    elif sparsity == "cv":
        cv = cv_kblock_sparsity(  # out-of-fold R^2: invariant to the response's unit
            data.endog, blocks, ranks, w=w, names=names, labels=labels,
            kind=kind, estimator=estimator, rng=np.random.default_rng(normalize_seed(seed)))
        sizes = {n: cv.chosen[k] for k, n in enumerate(names)}
        settings["sparsity_choice"] = cv.choice.to_dict()
    else:
        sizes = check_block_sparsity(sparsity, names, widths)
    for n in names:
        if sizes[n] < ranks[n]:
            raise ValueError(f"sparsity of block {n!r} must be at least its rank {ranks[n]}; "
                             f"got {sizes[n]}")
    sizes = rank_zero_sizes(sizes, ranks, dict(zip(names, widths, strict=True)))
    if chosen is not None:  # a rank-0 block keeps its variables, as rank_zero_sizes says
        chosen = [idx if sizes[n] == len(idx) else np.arange(wd)
                  for n, idx, wd in zip(names, chosen, widths, strict=True)]
    sparse = sparse_kfit(y, zs, blocks, w, white, fac, [sizes[n] for n in names],
                         names=names, labels=labels, kind=kind, estimator=estimator,
                         cross_cov=cross_cov, q=q, supports=chosen)
    settings["sparsity"] = sizes
    settings["route"] = sparse.route.to_dict()
    res = KBlockFit(model, sparse.fac, sparse.white, ranks, settings, tables, blocks,
                        supports=dict(zip(names, sparse.supports, strict=True)),
                        full_white=white)
    if sparsity == "cv":
        res._cv_table = cv.table
    res._support_tests = tests
    return res


class KBlockFit(KBlockInferenceMixin, KBlockExtrasMixin, KBlockFoundMixin,
               KBlockViewMixin, ExportMixin, SummaryMixin):
    """The K-block engine's fit, held by :class:`jdr_stats.JDRResults`: a
    fit of three or more blocks, or of two blocks with
    ``main_effects=True`` or a rank per block (:attr:`main_effects`,
    :attr:`sees`; at two blocks ``directions_a``/``directions_b`` and the
    other ``_a``/``_b`` names are the view of :attr:`directions` by block).

    Read-only; its public members are those of the results (the
    members it lacks beside the two-block fit: ``tests/test_contract.py``).
    """

    #: the fit repeated on a resample (the bootstrap's refit)
    _refit = staticmethod(fit_kblocks)

    def __init__(self, model: Any, fac: KBlockFactors, white: DesignWhitening[Any],
                 ranks: dict[str, int], settings: dict[str, Any],
                 tables: dict[str, pd.DataFrame] | None, blocks: list[np.ndarray], *,
                 supports: dict[str, np.ndarray] | None = None,
                 full_white: DesignWhitening[Any] | None = None) -> None:
        self._model = model
        self._fac = fac
        self._white = white
        self._ranks = dict(ranks)
        self._settings = settings
        self._tables = tables
        self._supports = None if supports is None else {n: np.asarray(v, int)
                                                         for n, v in supports.items()}
        self._full_white = white if full_white is None else full_white
        # the maps' means (of the columns times their scales) in the user's units
        self._means = [np.asarray(getattr(mp, "mean", x.mean(0)))
                       / (1.0 if getattr(mp, "scale", None) is None else mp.scale)
                       for mp, x in zip(self._full_white.maps, blocks, strict=True)]
        self._names = tuple(model.block_names)
        self._cv_table: pd.DataFrame | None = None
        self._support_tests: SupportResults | None = None
        self._ladle: LadleResults | None = None  # rank="auto", rank_method="ladle"

    def __getstate__(self) -> dict[str, Any]:
        """The attributes to pickle: all but the cached read-only mappings
        (:attr:`directions`, :attr:`loadings`), rebuilt when next read."""
        return {k: v for k, v in self.__dict__.items() if not isinstance(v, MappingProxyType)}

    @property
    def model(self) -> Any:
        return self._model

    @property
    def block_names(self) -> tuple[str, ...]:
        return self._names

    @property
    def nobs(self) -> int:
        return int(self._model.nobs)

    @property
    def rank(self) -> int | dict[str, int]:
        """The rank: an int when every block has the same rank, else each
        block's rank by name (:attr:`ranks` is always the dict)."""
        values = set(self._ranks.values())
        return int(values.pop()) if len(values) == 1 else dict(self._ranks)

    @property
    def ranks(self) -> dict[str, int]:
        """Each block's rank, by name."""
        return dict(self._ranks)

    @property
    def settings(self) -> dict[str, Any]:
        """The fit's choices and their reasons."""
        return dict(self._settings)

    @property
    def main_effects(self) -> bool:
        """True when each block's first moment ``E[y z_k]`` (its main
        effects) was pooled with its interaction pieces."""
        return bool(self._settings.get("main_effects", False))

    @property
    def _orthogonal(self) -> bool:
        """True for a fit of ``interactions="orthogonal"`` (every piece of y's
        residual on ``[1, every block]``)."""
        return self._settings.get("interactions") == "orthogonal"

    @property
    def sees(self) -> str:
        """Which parts of the link the reduction can see (theory page
        "K blocks", sections 2 and 6)."""
        if self.main_effects and self._settings.get("interactions") == "regression":
            return kreg.SEES
        if self.main_effects:
            return "main effects and interactions between the blocks"
        if self._orthogonal:
            return ("interactions between the blocks, of y's least squares residual on "
                    "[1, every block] (interactions=\"orthogonal\": no linear main effect "
                    "enters, whatever the design; within-block curvature of y still may)")
        return "interactions between the blocks (not main effects)"

    def rank_tests(self, method: str = "auto", *, max_rank: int | None = None,
                   n_perm: int | None = None, seed: Any = None, progress: Any = False,
                   n_jobs: int | None = None) -> RankTestResults:
        """Each block's tests of ``H0: rank_k <= r``, ``r = 0 .. n_k - 1``
        (theory page "K blocks", section 4), under the fit's estimator and
        whitening.

        Parameters
        ----------
        method : str
            A registered rank test with K-block tables
            (:func:`jdr_stats.inference.rank_methods.kblock_method`);
            ``"auto"`` (default): the robust per-block test.
        max_rank : int, optional
            Each block's tables up to ``H0: rank_k <= max_rank``.
        n_perm, seed, progress, n_jobs
            The two-block permutation tests' options: none of the K-block
            tests permutes, so a value is refused by name.

        Returns
        -------
        RankTestResults
            The per-block tests (``kind="per-block"``): ``tables`` (a
            DataFrame per block: ``statistic, df, pvalue, eff_df, scale``,
            the reference ``scale * chi2(eff_df)``), ``table`` (all blocks,
            indexed by block and rank), ``select_rank(alpha)`` (a dict by
            block), ``summary()``, ``to_dict()``, ``save()``.
        """
        top = checked_rank_options(max_rank, n_perm, seed, progress, n_jobs,
                                   [len(self._labels(k)) for k in range(len(self._names))])
        if self._settings.get("interactions") == "regression":
            raise ValueError("rank_tests(): " + kreg.REFUSED_TESTS)
        what = ("a fit of three or more blocks" if len(self._names) >= 3 else
                "a fit pooling the main effects" if self.main_effects else
                "a fit of a rank per block")
        spec = kblock_method(method, "method", what)
        streamed = getattr(self._model._data, "streamed_rank_tests", None)
        if streamed is not None:  # a source: two passes more
            if spec.name != "robust":
                raise ValueError(f"method: a K-block fit on streamed rows runs the robust "
                                 f'per-block test only ("auto" or "robust"); got {method!r}')
            return streamed(self) if top is None else self._rank_results(
                up_to(streamed(self).tables, top), spec.name, self._settings["influence"])
        self._model._data.rows("rank_tests()")
        full = fit_kblocks(self._model, "auto", whitening=self._settings["whitening"],
                           independent_blocks=self._settings["estimator"] == "per-block",
                           sparsity=None, rank_method=spec.name,
                           alpha=self._settings["alpha"] or 0.05, seed=None, stop=False,
                           main_effects=self.main_effects,
                           interactions=self._settings.get("interactions", "stein"))
        assert full._tables is not None
        return self._rank_results(up_to(full._tables, top), spec.name,
                                  full._settings["influence"])

    @property
    def rank_test_table(self) -> RankTestResults | LadleResults | None:
        """The rank tests that chose each block's rank (``rank="auto"``; the
        ladle's criteria for ``rank_method="ladle"``), else None;
        :meth:`rank_tests` computes the tests for any fit."""
        if getattr(self, "_ladle", None) is not None:
            return self._ladle
        if self._tables is None:
            return None
        return self._rank_results(self._tables, self._settings["rank_method"],
                                  self._settings["influence"])

    def _rank_results(self, tables: dict[str, pd.DataFrame], method: str,
                      influence: Mapping[str, str] | None) -> RankTestResults:
        """Per-block ``tables`` of the test ``method`` as :class:`RankTestResults`."""
        return block_rank_results(
            tables, widths=[len(self._labels(k)) for k in range(len(self._names))],
            nobs=self.nobs, method=method, influence=influence)

    @property
    def block_means(self) -> dict[str, np.ndarray]:
        """Each block's (weighted) training mean, the centre of :meth:`transform`."""
        return {n: np.asarray(mu, float).copy() for n, mu in zip(self._names, self._means,
                                                                   strict=True)}

    @cached_property
    def whitened_bases(self) -> dict[str, np.ndarray]:
        """Each block's estimated basis in whitened coordinates (orthonormal;
        a sparse fit's in the coordinates of its kept variables, whitened
        alone, with zero rows for the others)."""
        out = {}
        for k, n in enumerate(self._names):
            f = self._fac.factors[k][:, :self._ranks[n]]
            if self._supports is not None:
                full = np.zeros((len(self._labels(k)), f.shape[1]))
                full[self._supports[n]] = f
                f = full
            out[n] = f.copy()
        return out

    @property
    def sparsity(self) -> dict[str, int] | None:
        """Each block's number of kept variables (None for a dense fit)."""
        return None if self._supports is None else {n: int(v.size)
                                                    for n, v in self._supports.items()}

    @property
    def support(self) -> dict[str, list[str]]:
        """Each block's kept variables, by name (all of them for a dense fit);
        the K-block form of the two-block ``support_a``, ``support_b``."""
        return {n: (list(self._labels(k)) if self._supports is None
                    else [self._labels(k)[j] for j in self._supports[n]])
                for k, n in enumerate(self._names)}

    @property
    def sparsity_cv(self) -> pd.DataFrame | None:
        """The cross-validation curve of ``fit(sparsity="cv")`` (else None):
        one row per common count ``s`` with each block's count,
        ``cv_rsquared``, ``se``, ``best`` and ``chosen``."""
        return None if self._cv_table is None else self._cv_table.copy()

    @cached_property
    def eigenvalues(self) -> dict[str, pd.Series]:
        """All eigenvalues of each block's combined Gram (unit-noise units;
        a sparse fit's on its kept variables)."""
        return {n: pd.Series(self._fac.values[k], index=range(1, len(self._fac.values[k]) + 1))
                for k, n in enumerate(self._names)}

    def _labels(self, k: int) -> list[str]:
        data = self._model._data  # keyed by the data's block keys, in block order
        return list(data.names[list(data.names)[k]])

    @cached_property
    def directions(self) -> dict[str, pd.DataFrame]:
        """Each block's directions in its original variables (unit columns),
        a DataFrame indexed by the variables, columns ``name_1 .. name_r``."""
        out = {}
        for k, n in enumerate(self._names):
            f = self._fac.factors[k][:, :self._ranks[n]]
            if self._supports is None:
                d = self._white.to_original(k, f)
            else:  # the refit's directions, zero outside the kept variables
                d = np.zeros((len(self._labels(k)), f.shape[1]))
                d[self._supports[n]] = self._white.to_original(k, f)
            out[n] = pd.DataFrame(d, index=self._labels(k),
                                  columns=[f"{n}_{j + 1}" for j in range(d.shape[1])])
        return out

    def transform(self, blocks: Mapping[str, Any] | Sequence[Any] | None = None,
                  exog_b: Any = None) -> pd.DataFrame:
        """Every block's reduced features ``(x_k - mean_k)^T U_k``, columns
        ``name_1 .. name_r`` for each block in order.

        ``blocks``: new data (a dict by block name or a list in block order,
        the fitted columns); the training data when omitted.  Two blocks
        may also be given as two arguments, ``transform(exog_a, exog_b)``.
        """
        if exog_b is not None:
            if len(self._names) != 2 or blocks is None or isinstance(blocks, Mapping):
                raise ValueError(f"exog_b: transform(exog_a, exog_b) takes the two blocks of a "
                                 f"two-block fit; this fit has {len(self._names)} blocks "
                                 f"{list(self._names)}: transform(blocks) with a dict by name")
            blocks = [blocks, exog_b]
        data = self._model._data
        if blocks is None:
            data.rows("transform() of the training rows")
            arrays = [np.asarray(x, float) for x in data.blocks.values()]
            index = data.row_index
        else:
            if isinstance(blocks, Mapping):
                missing = [n for n in self._names if n not in blocks]
                if missing:
                    raise ValueError(f"blocks: missing {missing}; need {list(self._names)}")
                given = [blocks[n] for n in self._names]
            else:
                given = list(blocks)
                if len(given) != len(self._names):
                    raise ValueError(f"blocks: need {len(self._names)} blocks; got {len(given)}")
            arrays, index = [], None
            for k, x in enumerate(given):
                if isinstance(x, pd.DataFrame):
                    index = x.index
                    cols = self._labels(k)
                    if list(x.columns) != cols and set(cols) <= set(x.columns):
                        x = x[cols]
                arr = np.asarray(x, float)
                if arr.ndim != 2 or arr.shape[1] != len(self._labels(k)):
                    raise ValueError(f"blocks: block {self._names[k]!r} needs "
                                     f"{len(self._labels(k))} columns; got shape {arr.shape}")
                arrays.append(arr)
        parts = []
        for k, n in enumerate(self._names):
            d = self.directions[n]
            parts.append(pd.DataFrame((arrays[k] - self._means[k]) @ d.to_numpy(),
                                      columns=d.columns, index=index))
        return pd.concat(parts, axis=1)

    def _per_block_whitening(self) -> DesignWhitening[Any] | None:
        """The blocks' whitening of the fit with ``independent_blocks=True``
        and this fit's ``whitening=`` (:func:`kblock_choices`, built by the
        fit's :func:`_whiten`): the main-effects permutation test's
        coordinates, the same under either estimator.  It depends on the
        blocks only, never on ``y``."""
        if self._settings["estimator"] != "joint":
            return self._full_white
        data = self._model._data
        widths = [len(data.names[k]) for k in data.blocks]
        given = self._settings.get("whitening_reason") == "given"
        kind = kblock_choices(True, data.nobs, widths, self._settings["whitening"]
                              if given else "auto", observations(data))[2]
        if WHITENING_METHODS[kind].factory is None:  # "none": centred only
            return None
        return _whiten(data, self._names, kind, "per-block")[1]

    def main_effects_test(self, method: MainEffectsMethod = "auto", *, n_perm: int = 199,
                          seed: int | np.random.Generator | None = None) -> MainEffectsResults:
        """Per-block tests of main effects, ``H0: E[y z_k] = 0``, one row per
        block (theory page "Main effects"; the two-block
        :meth:`jdr_stats.results.JDRResults.main_effects_test` applied block
        by block).

        The pieces see interactions between blocks only; this test sees the
        first moment, ``E[y z_k] = U_k E[df/du_k]`` for Gaussian blocks.  With
        ``independent_blocks=True`` each row tests the block's marginal first
        moment; with ``independent_blocks=False`` the first moment of the
        jointly whitened block ``(Sigma^{-1} x)_k``, i.e. block ``k``'s main
        effect given all the other blocks (the robust Wald test of its
        coefficients in the regression of ``y`` on every block).  A sparse
        fit tests every variable of each block.  ``method``, ``n_perm`` and
        ``seed`` as for two blocks (``"permutation"``: exact per block
        without covariates; Freedman--Lane given the other blocks and/or
        the covariates where they can be partialled out; else, under the
        joint estimator, the marginal test, method
        ``"permutation (marginal)"``, the per-block fit's test: each block
        under the whitening of ``independent_blocks=True`` with the same
        ``whitening=``, which depends on the blocks only, so exact; same
        statistic and, same seed, p-value).  Size and power for three blocks:
        ``studies/study_kblock_sparse.py``.

        Returns
        -------
        MainEffectsResults
            One row per block: ``statistic``, ``df``, ``pvalue``,
            ``df_denom``, ``method``, ``reason``.
        """
        data = self._model._data
        data.rows("main_effects_test()")
        if method not in ("auto", "robust", "permutation"):
            raise ValueError(f'method must be "auto", "robust" or "permutation"; got '
                             f"{method!r}")
        seed = normalize_seed(seed)
        if self._settings.get("interactions") == "regression":
            return kreg.regression_main_effects(
                data.unit_endog, list(data.blocks.values()), list(self._names),
                method)
        return main_effects_test(
            data.unit_endog, [np.asarray(x, float) for x in data.blocks.values()],
            list(self._names), self._per_block_whitening, weights=data.weights,
            joint=self._settings["estimator"] == "joint",
            n_adjusted=int(data.adjustment.p), covariates=data.adjustment.design,
            method=method, n_perm=n_perm, seed=seed)

    def _near_unit(self, k: int, d: np.ndarray) -> np.ndarray:
        """Block ``k``'s directions ``d`` in the coordinates of its columns
        times their power-of-two scales (near unit size: the bootstrap's
        angles of a column of extreme units), or ``d`` itself at unit scale."""
        scale = getattr(self._full_white.maps[k], "scale", None)
        return d if scale is None else unit_columns(d / scale[:, None])

    def _observations_text(self) -> str:
        """The summary's count: the observations whole-number case weights
        stand for (the repeated rows' count), with the rows when they differ."""
        count = observations(self._model._data)
        return str(count) if count == self.nobs else \
            f"{count} ({self.nobs} rows, whole-number case weights)"

    def _headline(self) -> list[str]:
        """What was found, block by block (:mod:`jdr_stats.fitting._found`)."""
        return self._found_headline()

    def summary(self, *, rank_tests: RankTestResults | None = None,
                loadings: Literal["sd", "raw"] = "sd",
                notes: Literal["short", "full"] = "short") -> JDRSummary:
        """A statsmodels ``Summary`` (:class:`~jdr_stats.summary.JDRSummary`):
        what was found (each block's rank and the tests that chose it), the
        model, the blocks' eigenvalues and directions (side by side where they
        fit 100 characters) and, for ``rank="auto"``, the rank tests.  The
        directions are shown as per-SD :attr:`loadings` (the header's
        "Loadings:" says so), so a variable's units do not change its entry;
        the header gives :attr:`rsquared` when the rows are at hand.

        ``notes="short"`` (default) gives each choice (estimator, influences)
        with its reason in a screen's notes; ``"full"`` adds the route and
        piece weights' reasons and shows every eigenvalue.  ``loadings="raw"``
        shows the unit-length :attr:`directions` instead; ``rank_tests`` (a
        :meth:`rank_tests` result) shows those tests in place of the ones
        that chose the ranks.
        """
        return kblock_summary(self, notes, rank_tests, loadings)

    def to_dict(self) -> dict[str, Any]:
        """Plain-Python content of the fit (JSON-ready)."""
        return {
            "model": "JointDimReduction",
            "blocks": list(self._names),
            "nobs": self.nobs,
            "rank": self.rank,
            "ranks": self.ranks,
            "directions": {n: {"index": list(d.index), "columns": list(d.columns),
                               "data": d.to_numpy().tolist()}
                           for n, d in self.directions.items()},
            "eigenvalues": {n: s.tolist() for n, s in self.eigenvalues.items()},
            **self._extras_dict(),  # loadings, fit_measures
            "settings": self.settings,
            # the tests that chose the ranks, as RankTestResults.to_dict()
            "rank_tests": None if (rt := self.rank_test_table) is None else rt.to_dict(),
            "sparsity": self.sparsity,
            "support": self.support,
            "sparsity_cv": None if self._cv_table is None
            else self._cv_table.to_dict(orient="list"),
            "support_tests": None if (st := self.support_tests) is None else st.to_dict(),
            # the summary's main-effects tests, or why they did not run
            "main_effects_test": (me.to_dict() if isinstance(
                me := self._summary_main_effects, MainEffectsResults) else {"not_run": me}),
        }

