"""The permutation test of no association for K blocks, under the fit's
estimator: ``H0: y`` independent of the blocks.

The two-block combined statistic (:mod:`jdr_stats.inference.association`)
over K blocks.  Its parts, every one a function of the response and of the
blocks' rows:

- for each interaction piece ``S`` of the fit (every pair of blocks and,
  for ``K >= 3``, the K-way piece), ``||P_S||_F^2`` of the piece formed as
  the fit forms it: the fit's whitened rows (per block or across blocks),
  the K-way piece Hermite-corrected under the joint estimator, and read
  through the fit's Khatri-Rao sketch on the sketched route;
- for each block, its first moment with the standardised response,
  ``||sum_i w_i z_i x_ik||^2``, the rows whitened as
  ``independent_blocks=True`` whitens them (main effects, dense);
- the largest squared correlation of the response with one variable of each
  block and with one product of two variables of each pair of blocks (main
  effects and interactions carried by one variable or one pair).

The response is standardised (whitened for ``q > 1`` columns) under the
weights.  Each part's logarithm is standardised by its mean and standard
deviation over the ``B + 1`` statistics (the observed one counts) and the
largest is ranked among the permuted ones.  The blocks' whitenings do not
depend on ``y``, so under ``H0`` with rows of ``y`` exchangeable given the
blocks and the weights the p-value ``(1 + #{Z*_b >= Z}) / (B + 1)`` is
exact at any width and any K.  At ``K = 2`` the parts are those of the
two-block combined statistic.  Size and power: ``studies/study_kblock_inference.py``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.tensor import cross_tensor, hermite_corrected, mode_sketches, pieces
from ..runtime._validation import normalize_seed
from .association import (
    _max_z,
    _MaxCorrelations,
    _rank_of_first,
    _standardized_response,
)
from .hypotheses import TestResult

__all__ = ["KBLOCK_ASSOCIATION_NULL", "KBlockAssociation", "association_parts",
           "kblock_association_test", "part_names"]

#: The null hypothesis, as the test object prints it.
KBLOCK_ASSOCIATION_NULL = "y independent of the blocks (every block's rank 0: no association)"


def part_names(names: Sequence[str]) -> list[str]:
    """The parts of the statistic, in the order of its vector.

    Examples
    --------
    >>> part_names(["g", "l", "c"])[:4]
    ['cross moment g*l', 'cross moment g*c', 'cross moment l*c', 'cross moment g*l*c']
    >>> len(part_names(["a", "b"]))
    6
    """
    K = len(names)
    inter = [f"cross moment {'*'.join(names[j] for j in p)}" for p in pieces(K)]
    pairs = [(k, j) for k in range(K) for j in range(k + 1, K)]
    return [*inter, *(f"first moment {n}" for n in names),
            *(f"max corr {n}" for n in names),
            *(f"max corr {names[k]}*{names[j]}" for k, j in pairs)]


class KBlockAssociation:
    """The vector statistic of the module docstring, the blocks held fixed.

    Parameters
    ----------
    zs : list of ndarray (m, n_k)
        The fit's whitened, centred rows.
    main_rows : list of ndarray (m, n_k)
        Each block's rows whitened alone (the per-block fit's whitening),
        or centred where that whitening is ``"none"``.
    blocks : list of ndarray (m, n_k)
        The blocks' rows (the max-type parts standardise their columns).
    w : ndarray (m,)
        The normalised weights (sum 1).
    cross_cov : dict, optional
        The blocks' whitened cross covariances of a joint whitening: the
        K-way piece Hermite-corrected, as the fit forms it.
    tests : list of ndarray, optional
        The fit's sketch test matrices: the K-way piece through its mode
        sketches, as the sketched fit reads it.
    """

    def __init__(self, zs: Sequence[np.ndarray], main_rows: Sequence[np.ndarray],
                 blocks: Sequence[np.ndarray], w: np.ndarray, *,
                 cross_cov: dict[tuple[int, int], np.ndarray] | None = None,
                 tests: Sequence[np.ndarray] | None = None) -> None:
        self.zs = [np.asarray(z, float) for z in zs]
        self.main = [np.asarray(z, float) for z in main_rows]
        self.w = np.asarray(w, float)
        self.cross_cov = cross_cov
        self.tests = None if tests is None else [np.asarray(t, float) for t in tests]
        self.pieces = pieces(len(self.zs))
        self.maxcorr = _MaxCorrelations([np.asarray(x, float) for x in blocks], self.w)

    def _piece(self, wz: np.ndarray, piece: tuple[int, ...]) -> float:
        """``||sum_i w_i z_i o z_is1 o ...||^2`` of one interaction piece."""
        K, m = len(self.zs), wz.shape[0]
        sub = [self.zs[j] for j in piece]
        if len(piece) == 2:
            return float(sum(np.sum((sub[0].T @ (sub[1] * wz[:, c:c + 1])) ** 2)
                             for c in range(wz.shape[1])))
        if self.tests is not None and len(piece) == K:
            # the sketched fit's reading of the K-way piece: its mode sketches
            sk = mode_sketches(wz * m, self.zs, self.tests, cross_cov=self.cross_cov)
            return float(sum(np.sum(s**2) for s in sk) / len(sk))
        if self.cross_cov is not None:
            cov = {(a, b): self.cross_cov[(piece[a], piece[b])]
                   for a in range(len(piece)) for b in range(a + 1, len(piece))}
            return float(np.sum((hermite_corrected(wz * m, sub, cov)) ** 2))
        return float(np.sum(cross_tensor(wz * m, sub) ** 2))

    def __call__(self, y: np.ndarray) -> np.ndarray:
        wz = _standardized_response(y, self.w) * self.w[:, None]
        inter = [self._piece(wz, p) for p in self.pieces]
        first = [float(np.sum((x.T @ wz) ** 2)) for x in self.main]
        return np.array([*inter, *first, *self.maxcorr(wz)])


def kblock_association_test(
    y: np.ndarray,
    stat: KBlockAssociation,
    *,
    n_perm: int = 199,
    seed: int | np.random.Generator | None = None,
    estimator: str = "",
) -> TestResult:
    """The permutation test of the module docstring: ``n_perm`` permutations
    of the rows of ``y`` (``m`` or ``m x q``), the statistic ``stat``.

    Returns a :class:`~jdr_stats.inference.hypotheses.TestResult`: the
    observed largest standardised part (``statistic``), ``df`` None (a
    permutation reference), ``pvalue``.
    """
    if isinstance(n_perm, bool) or not isinstance(n_perm, (int, np.integer)) or n_perm < 1:
        raise ValueError(f"n_perm must be a positive integer; got {n_perm!r}")
    y2 = np.asarray(y, float).reshape(len(y), -1)
    m = y2.shape[0]
    rng = np.random.default_rng(normalize_seed(seed))
    observed = stat(y2)
    null = np.empty((int(n_perm), observed.size))
    for j in range(int(n_perm)):
        null[j] = stat(y2[rng.permutation(m)])
    zmax = _max_z(observed, null, log=True)
    K = len(stat.zs)
    dist = (f"permutation ({int(n_perm)} permutations), largest standardised part of "
            f"{observed.size}: each interaction piece of the fit ({len(stat.pieces)}), each "
            f"block's first moment and largest correlation with one variable ({2 * K}), each "
            f"pair's largest correlation with one product ({K * (K - 1) // 2})")
    return TestResult(
        statistic=float(zmax[0]), df=None, pvalue=_rank_of_first(zmax),
        null=KBLOCK_ASSOCIATION_NULL, distribution=dist, method="association",
        name="Test of no association" + (f" ({estimator} estimator)" if estimator else ""))


def association_parts(stat: KBlockAssociation, y: np.ndarray) -> Any:
    """The observed parts of ``stat`` for ``y`` (for studies and checks)."""
    return stat(np.asarray(y, float).reshape(len(y), -1))
