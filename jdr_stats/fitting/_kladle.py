"""The ladle choice of each block's rank in a K-block fit
(``fit("auto", rank_method="ladle")``): the criterion of
:mod:`jdr_stats.inference.kblock_ladle` from the fit's stacked pieces,
sign-flip draws of them and Poisson-bootstrap refits of the fit (its
estimator, whitening and pieces) at each block's largest candidate."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import pandas as pd

from .. import policy
from ..core._linalg import unit_columns
from ..core.kestimate import KBlockFactors, stacked_pieces
from ..inference._metric import covariance_metric_angles
from ..inference.kblock_bootstrap import draw_resamples
from ..inference.kblock_ladle import (
    KBLOCK_LADLE_ASSUMPTIONS,
    block_kmax,
    block_noise_edge,
    ladle_table,
    subspace_instability,
)
from ..inference.ladle import LadleResults
from ..runtime._validation import child_seeds
from ._kresults_infer import resampled_model

__all__ = ["KBLOCK_LADLE_BOOT", "kblock_ladle"]

#: Poisson-bootstrap replicates of the K-block ladle (the two-block ladle's count).
KBLOCK_LADLE_BOOT = 100


def kblock_ladle(model: Any, refit: Callable[..., Any], kwargs: dict[str, Any], *,
                 y: np.ndarray, zs: Sequence[np.ndarray], w: np.ndarray | None,
                 fac: KBlockFactors, cross_cov: Any, names: Sequence[str],
                 widths: Sequence[int], seed: Any,
                 n_boot: int = KBLOCK_LADLE_BOOT) -> LadleResults:
    """Each block's ladle table and rank (:class:`~jdr_stats.LadleResults`
    by block).  ``refit(model, ranks, **kwargs)`` is the fit with the same
    settings; ``y``, ``zs``, ``w``, ``fac``, ``cross_cov`` the fit's
    centred response, whitened blocks, weights, factors and cross
    covariances."""
    data = model._data
    data.rows("the ladle")
    m = int(y.shape[0])
    rank_rng = child_seeds(seed, 2)[0]
    boot_rng, flip_rng = child_seeds(rank_rng, 2)
    stacked = stacked_pieces(y, zs, fac, cross_cov=cross_cov, w=w)
    for n, s in zip(names, stacked, strict=True):
        if min(s.shape) < 2:  # candidates 0..p - 1 = {0}: the rank is not the ladle's to choose
            raise ValueError(
                f'rank_method="ladle": block {n!r} has pieces of shape {s.shape}; the ladle '
                "chooses among 0..min(n_k, D_k) - 1 and cannot choose the rank of a block of "
                'one column (or of one column of pieces): use rank_method="auto" (the tests)')
    kmax = [min(block_kmax(n, s.shape[1]), n - 1) for n, s in zip(widths, stacked, strict=True)]
    # sign-flip draws of every block's pieces: y's rows given random signs
    draws = int(policy.LADLE_EDGE_DRAWS)
    eps = np.where(flip_rng.random((m, draws)) < 0.5, -1.0, 1.0)
    y2 = y[:, None] if y.ndim == 1 else y
    flips: list[list[np.ndarray]] = [[] for _ in names]
    for t in range(draws):
        yt = eps[:, t, None] * y2
        for k, piece in enumerate(stacked_pieces(yt if y.ndim > 1 else yt[:, 0], zs, fac,
                                                 cross_cov=cross_cov, w=w)):
            flips[k].append(piece)
    edges = [block_noise_edge(s, np.stack(f), km)
             for s, f, km in zip(stacked, flips, kmax, strict=True)]
    # the fit at each block's largest candidate and its Poisson replicates
    top = {n: max(1, km) for n, km in zip(names, kmax, strict=True)}
    base_fit = refit(model, top, **kwargs)
    base = [base_fit._near_unit(k, base_fit.directions[n].to_numpy()) for k, n in
            enumerate(names)]
    scales = [getattr(base_fit._full_white.maps[k], "scale", None) for k in range(len(names))]
    covs = [np.atleast_2d(np.cov(np.asarray(x, float) * (1.0 if sc is None else sc),
                                 rowvar=False, aweights=data.weights))
            for x, sc in zip(data.blocks.values(), scales, strict=True)]
    cosines: list[list[list[np.ndarray]]] = [[] for _ in names]
    for idx in draw_resamples("poisson", m, int(n_boot), boot_rng):
        try:
            rep = refit(resampled_model(model, idx), top, **kwargs)
        except (ValueError, np.linalg.LinAlgError):  # a resample with a singular block
            for k, km in enumerate(kmax):
                cosines[k].append([np.full(j, np.nan) for j in range(1, km + 1)])
            continue
        for k, n in enumerate(names):
            d = rep.directions[n].to_numpy()
            sc = scales[k]
            d = d if sc is None else unit_columns(d / sc[:, None])
            cosines[k].append([np.cos(covariance_metric_angles(base[k][:, :j], d[:, :j],
                                                               covs[k]))
                               for j in range(1, kmax[k] + 1)])
    tables, ranks = {}, {}
    for k, n in enumerate(names):
        f0 = subspace_instability(cosines[k], kmax[k])
        tables[n], ranks[n] = ladle_table(np.asarray(fac.values[k], float), m, edges[k], f0)
    table = pd.concat(tables, names=["block"])
    notes = [
        f"Ladle estimate of each block's rank (chosen {ranks}: each block's k of the "
        f"smallest criterion; {int(n_boot)} Poisson-bootstrap refits of the fit, "
        f"{draws} sign-flip draws of its pieces).",
        KBLOCK_LADLE_ASSUMPTIONS,
        "criterion = boot_var + eig_part; a criterion, not a test: no level, no p-values.",
    ]
    return LadleResults(table=table, rank=ranks, notes=notes, nobs=m, n1=int(widths[0]),
                        n2=int(widths[1]), n_boot=int(n_boot), block_names=tuple(names),
                        block_widths=tuple(int(v) for v in widths))
