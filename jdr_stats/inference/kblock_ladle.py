"""The ladle criterion (Luo and Li 2016) for each block of a K-block fit.

Block ``k``'s directions are the leading left singular vectors of its
stacked pieces ``M_k`` (``n_k x D_k``,
:func:`~jdr_stats.core.kestimate.stacked_pieces`), each piece scaled to
unit null noise; ``M_k M_k^T`` has the eigenvalues ``values_k`` of the fit.
For ``j = 0..kmax_k`` the criterion adds, as for two blocks
(:mod:`._ladle_criterion`):

* ``f(j)``, the normalised bootstrap variability of the top-``j``
  directions: ``f0(j)`` the replicates' mean of ``1 - prod_i cos theta_i``
  over the principal angles between the fit's and a replicate's top-``j``
  directions, in the block's covariance metric (unit-free, as the
  bootstrap's angles), ``f(j) = f0(j) / (1 + sum_i f0(i))``, ``f(0) = 0``;
* ``phi(j)``, the normalised ``(j+1)``-th eigenvalue in excess of the noise
  edge: ``lam_j = values_{k,j} / m`` (the pieces' unit-noise scale makes a
  signal's eigenvalue grow as ``m`` and the noise's stay ``O(D_k)``),
  ``lam~ = max(0, lam - e / m)``, ``phi(j) = lam~_{j+1} / (1 + sum lam~)``.

The noise edge ``e_j`` is estimated as for two blocks, from sign-flip draws
of the pieces: ``N_t = M_k(eps_t y)`` (each row's response given a random
sign, the whitening and the pieces' scales held) is a draw of ``M_k``'s
estimation noise with the rows' own magnitudes.  Its per-entry variance
``tau^2`` sets the strong directions ``h`` (squared singular values above
``policy.LADLE_STRONG_EDGE tau^2 (sqrt n_k + sqrt D_k)^2``); ``e_h`` is the
``policy.LADLE_EDGE_QUANTILE`` quantile of ``s_{h+1}(M_h + N_t)^2``,
``M_h`` the rank-``h`` part of ``M_k``, and ``e_j = e_h mp(j) / mp(h)``,
``mp(j) = (sqrt(n_k - j) + sqrt(D_k - j))^2``.  Derivation: theory page
"K blocks", section "The ladle".
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .. import policy
from ._ladle_criterion import excess_part, ladle_kmax

__all__ = ["KBLOCK_LADLE_ASSUMPTIONS", "block_kmax", "block_noise_edge", "ladle_table",
           "subspace_instability"]

KBLOCK_LADLE_ASSUMPTIONS = (
    "Ladle (Luo and Li 2016), per block: r_k = argmin_j f(j) + phi(j), f the normalised "
    "Poisson-bootstrap variability of the block's top-j directions (refits of the fit; "
    "angles in the block's covariance metric), phi the normalised excess of the (j+1)-th "
    "eigenvalue of the block's combined Gram, over m, above the noise edge of its j-th "
    "complement (sign-flip draws of the pieces); no level, no distribution theory; "
    "candidates j = 0..kmax_k."
)


def block_kmax(n_k: int, d_k: int) -> int:
    """Luo and Li's largest candidate for an ``n_k x d_k`` matrix."""
    return ladle_kmax(n_k, d_k)


def _mp(n: int, d: int, j: np.ndarray) -> np.ndarray:
    return (np.sqrt(np.maximum(n - j, 0.0)) + np.sqrt(np.maximum(d - j, 0.0))) ** 2


def block_noise_edge(mk: np.ndarray, flips: np.ndarray, kmax: int) -> np.ndarray:
    """The noise edge ``e_j`` (``j = 0..kmax``, the units of the fit's
    eigenvalues) of block ``k``'s stacked pieces ``mk`` (``n x D``) from
    the sign-flip draws ``flips`` (``T x n x D``; module docstring)."""
    n, d = mk.shape
    p = min(n, d)
    u, s, vt = np.linalg.svd(mk, full_matrices=False)
    tau2 = float(np.mean(np.einsum("tij,tij->t", flips, flips))) / (n * d)
    strong_edge = policy.LADLE_STRONG_EDGE * tau2 * float(_mp(n, d, np.array(0.0)))
    h = min(int(np.sum(s ** 2 > strong_edge)), p - 1)
    strong = (u[:, :h] * s[:h]) @ vt[:h]
    top = np.linalg.svd(strong[None] + flips, compute_uv=False)[:, h] ** 2
    e_h = float(np.quantile(top, policy.LADLE_EDGE_QUANTILE))
    ks = np.arange(kmax + 1, dtype=float)
    return e_h * _mp(n, d, ks) / float(_mp(n, d, np.array(float(h))))


def subspace_instability(cosines: Sequence[Sequence[np.ndarray]], kmax: int) -> np.ndarray:
    """Luo and Li's ``f0(j)``, ``j = 0..kmax``: ``cosines[b][j - 1]`` the
    cosines of the principal angles between the fit's and replicate
    ``b``'s top-``j`` directions (NaN for a failed replicate, left out)."""
    f0 = np.zeros(kmax + 1)
    for j in range(1, kmax + 1):
        dev = np.array([1.0 - float(np.prod(c[j - 1])) for c in cosines])
        dev = dev[np.isfinite(dev)]
        f0[j] = float(np.mean(dev)) if dev.size else np.nan
    return f0


def ladle_table(values: np.ndarray, m: int, edge: np.ndarray, f0: np.ndarray
                ) -> tuple[pd.DataFrame, int]:
    """One block's criterion table (index ``k``: ``criterion``, ``boot_var``,
    ``eig_part``, ``noise_edge`` in the units ``lam = values / m``) and the
    ``k`` of its smallest criterion."""
    kmax = f0.size - 1
    lam = np.asarray(values, float)[:kmax + 1] / m
    phi = excess_part(lam, np.asarray(edge, float) / m)
    f = f0 / (1.0 + float(np.sum(f0[1:])))
    g = f + phi
    table = pd.DataFrame({"criterion": g, "boot_var": f, "eig_part": phi,
                          "noise_edge": np.asarray(edge, float) / m},
                         index=pd.Index(np.arange(kmax + 1), name="k"))
    return table, int(np.argmin(g))
