"""Bootstrap standard errors and intervals for the per-SD loadings
(``BootstrapResults.conf_int(what="loadings")``; ``docs/theory/bootstrap.md``,
"Intervals for the loadings").

A replicate's directions span its subspace with an arbitrary sign and, for
``r > 1``, an arbitrary rotation, so entry ``(j, k)`` of two fits is not the
same quantity until the replicate's basis is aligned with the point
estimate's.  The alignment is orthogonal Procrustes on the per-SD loadings
``L = diag(sd) D`` (``D`` the directions), each column scaled to unit
length so that nothing depends on the variables' units: ``R_b = P Q^T`` from
the SVD ``L_b^T L_hat = P S Q^T`` minimises ``||L_b R - L_hat||_F`` over
orthogonal ``R`` (for ``r = 1``: the sign that agrees with the estimate).
The percentile intervals and standard errors of the aligned entries are then
put on the summary's scale (each column divided by the point estimate's
largest absolute entry, a constant of the data).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from ._bounds import order_index

__all__ = ["align", "loading_table"]


def _unit(x: np.ndarray) -> np.ndarray:
    """Columns (the second-to-last axis summed) scaled to unit length."""
    norm = np.linalg.norm(x, axis=-2, keepdims=True)
    return x / np.where(norm > 0, norm, 1.0)


def align(rep: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Each replicate basis ``rep[b]`` (n x r) rotated by the orthogonal
    ``R_b`` closest to ``target`` (orthogonal Procrustes)."""
    cross = np.einsum("bnr,ns->brs", rep, target)  # L_b^T L_hat
    p, _, qt = np.linalg.svd(cross)
    return np.einsum("bnr,brs->bns", rep, p @ qt)


def loading_table(
    reps: dict[str, np.ndarray],
    dirs: dict[str, np.ndarray],
    sds: dict[str, np.ndarray],
    names: Mapping[str, Sequence[str]],
    alpha: float,
) -> pd.DataFrame:
    """Estimate, bootstrap SE and percentile interval of every per-SD loading.

    ``reps[block]``: replicate directions (B, n, r), original coordinates;
    ``dirs[block]``: the estimate's (n, r); ``sds[block]``: the variables'
    standard deviations.  Rows ``(block, variable, direction)``, the blocks in
    the order of ``dirs``.
    """
    idx, rows = [], []
    for block in dirs:
        # unit-length columns of per-SD loadings: free of the variables' units
        est = _unit(dirs[block] * sds[block][:, None])
        top = np.max(np.abs(est), axis=0)
        top = np.where(top > 0, top, 1.0)
        rep = align(_unit(reps[block] * sds[block][None, :, None]), est)
        srt = np.sort(rep, axis=0)
        nb = srt.shape[0]
        lo, hi = order_index(nb, alpha / 2), order_index(nb, 1 - alpha / 2)
        se = rep.std(axis=0, ddof=1) if nb > 1 else np.full(est.shape, np.nan)
        for j, name in enumerate(names[block]):
            for k in range(est.shape[1]):
                idx.append((block, str(name), f"dir{k + 1}"))
                rows.append((est[j, k] / top[k], se[j, k] / top[k], srt[lo, j, k] / top[k],
                             srt[hi, j, k] / top[k]))
    return pd.DataFrame(
        rows, columns=["estimate", "std_err", "lower", "upper"],
        index=pd.MultiIndex.from_tuples(idx, names=["block", "variable", "direction"]),
    )
