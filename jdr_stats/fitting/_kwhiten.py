"""The whitened rows of K >= 3 blocks held in memory (per block or jointly),
shared by the K-block fit (:mod:`jdr_stats.fitting._kfit`) and its sparse fits
(:mod:`jdr_stats.fitting._ksparse`)."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core._linalg import joint_whitening
from ..core.moments import column_scales
from ..core.whitening import DesignWhitening
from ..runtime._frequency import frequency_nobs
from ..whitenings import kblock_refusal, per_block_whitening

__all__ = ["_aligned", "_cross_cov", "_whiten_arrays"]


def _whiten_arrays(blocks: Sequence[np.ndarray], w: np.ndarray | None, names: Sequence[str],
                   labels: Sequence[Sequence[str]], kind: str,
                   estimator: str) -> tuple[list[np.ndarray], DesignWhitening[Any]]:
    """Whitened rows (centred at the weighted mean) of every block and the whitening."""
    m = blocks[0].shape[0]
    wn = np.full(m, 1.0 / m) if w is None else w / w.sum()
    # columns of extreme units: their moments of the columns times powers of
    # two (exact), the scales kept on the whitening and its maps
    scale = column_scales(blocks)
    bounds = np.cumsum([0, *(x.shape[1] for x in blocks)])
    scaled = blocks if scale is None else [x * scale[lo:hi] for x, lo, hi
                                           in zip(blocks, bounds[:-1], bounds[1:], strict=True)]
    if estimator == "joint":
        x = np.hstack(scaled)
        mean = wn @ x
        xc = x  # the stacked copy, centred in place
        xc -= mean
        cov = (xc * wn[:, None]).T @ xc
        white = joint_whitening(mean, cov, [b.shape[1] for b in blocks], list(names),
                                [list(lab) for lab in labels], scale=scale)
        # DesignWhitening.rows in one product per block: the residual
        # r_k = xc R_k (R_k the residual map's columns of block k) whitened,
        # z_k = r_k L_k^{-T} = xc (R_k L_k^{-T}), from the centred rows at hand
        assert white.residual_map is not None
        zs = [xc @ np.ascontiguousarray(white.maps[k].solve(white.residual_map[:, lo:hi].T).T)
              for k, (lo, hi) in enumerate(itertools.pairwise(bounds))]
        for z in zs:
            z -= wn @ z
        return zs, white
    else:
        means = [wn @ x for x in scaled]
        covs = [((x - mu) * wn[:, None]).T @ (x - mu) for x, mu in zip(scaled, means,
                                                                       strict=True)]
        # the shrinkage counts the observations whole-number weights stand for
        made = per_block_whitening(
            kind, means, covs, frequency_nobs(m, w), names, labels, weights=w, scale=scale)
        if made is None:
            raise ValueError(kblock_refusal(kind))
        white = made
    zs = [z - wn @ z for z in white.rows(blocks)]
    return zs, white


def _cross_cov(zs: Sequence[np.ndarray], wn: np.ndarray) -> dict[tuple[int, int], np.ndarray]:
    return {(a, b): (zs[a] * wn[:, None]).T @ zs[b]
            for a in range(len(zs)) for b in range(a + 1, len(zs))}


def _aligned(zs: Sequence[np.ndarray], white: DesignWhitening[Any],
             ref_maps: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """A refit's whitened rows and maps back, each block's whitened
    coordinates turned to those of the fit (``ref_maps``: the fit's maps
    back ``A_k = C_k^{-T}``): ``(rows, maps back)``.

    A whitening is fixed up to a rotation of its coordinates; the Cholesky
    factor's depends on the order of the columns.  The refit's ``W_i =
    A_i^T`` is turned to ``U^T W_i``, ``U`` the orthogonal polar factor of
    ``X = W_i W^{-1}``, so that ``U^T X`` is symmetric positive definite:
    the refit's whitening closest to the fit's, and the same whatever the
    order or the units of the columns (a delete-one refit then moves the
    pieces by the data alone, never by the factor's order; theory page
    "K blocks", "The rotation of the whitening")."""
    out_z, out_a = [], []
    for k, (z, a_ref) in enumerate(zip(zs, ref_maps, strict=True)):
        a = white.maps[k].solve_t(np.eye(z.shape[1]))
        left, _, right = np.linalg.svd(np.linalg.solve(a_ref, a).T)
        u = left @ right
        out_z.append(z @ u)
        out_a.append(a @ u)
    return out_z, out_a
