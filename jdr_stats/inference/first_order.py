"""The exact first-order piece: main effects by regression (K blocks).

``fit(rank, main_effects=True, interactions="regression")`` pools, for every
block, the linear coefficients of one least squares regression of ``y`` on

    [1, x_1, ..., x_K, within-block products x_kj x_kl (j <= l),
     cross products x_ja x_lb (j < l)],

every column centred at its mean and scaled by its standard deviation
before the products are formed (so the fit is invariant to shifts and
rescalings of the columns).  With ``beta_k`` block ``k``'s linear
coefficients (original coordinates) and ``B_jl`` the cross products'
coefficient matrix, the pieces are, in the joint whitened metric
``z_k = G_k (Sigma^{-1} (x - mu))_k`` (``G_k^T G_k = ((Sigma^{-1})_kk)^{-1}``),

    first-order piece of block k:   G_k beta_k
    pair piece of blocks (j, l):    G_j B_jl G_l^T
    K-way piece (K >= 3):           the cross moment of the regression's
                                    residual, (1/m) sum_i r_i z_i1 o ... o z_iK.

For ``y = sum_k beta_k^T x_k + sum_{j<l} x_j^T B_jl x_l + sum_k q_k(x_k) + e``
(``q_k`` quadratic, ``e`` uncorrelated with the regressors) the population
regression returns ``beta_k`` (about the centred columns: the average
derivative ``E[d y / d x_k]``) and ``B_jl`` exactly, whatever the design's
distribution, so the first-order piece is zero when there is no main effect
and lies in ``span(U_k)`` when there is one; for a Gaussian design it equals
the first-order Stein piece ``E[y z_k]`` (theory page "Main effects", section
"The exact first-order piece"; the study ``studies/study_first_order.py``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from ..core._linalg import centred_basis

__all__ = ["FirstOrderRegression", "first_order_regression", "first_order_wald",
           "n_first_order_columns", "product_columns"]

NAME = 'main_effects=True, interactions="regression"'


def n_first_order_columns(widths: Sequence[int]) -> int:
    """Columns of the regression, intercept included (before dropping the
    within-block products a dummy column makes collinear)."""
    lin = sum(widths)
    squares = sum(n * (n + 1) // 2 for n in widths)
    cross = sum(widths[j] * widths[k] for j, k in combinations(range(len(widths)), 2))
    return 1 + lin + squares + cross


def _standardised(blocks: Sequence[np.ndarray]) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """Each block's columns centred and divided by their standard deviation,
    and the deviations."""
    out, sds = [], []
    for x in blocks:
        xc = x - x.mean(axis=0)
        sd = np.sqrt(np.mean(xc * xc, axis=0))
        if not np.all(sd > 0):
            raise ValueError(f"{NAME}: a column is constant; drop it")
        out.append(xc / sd)
        sds.append(sd)
    return out, sds


def product_columns(blocks: Sequence[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """``(S, P)``: the within-block products and the cross products of the
    blocks' standardised columns (``m x sum n_k (n_k + 1) / 2`` and
    ``m x sum_{j<l} n_j n_l``, cross products block pair by block pair, row
    major).  The regressors :func:`first_order_regression` adds to the
    blocks; the main-effects test of such a fit partials them out."""
    xs, _ = _standardised([np.asarray(x, float) for x in blocks])
    m = xs[0].shape[0]
    sq = [x[:, j] * x[:, k] for x in xs for j, k in zip(*np.triu_indices(x.shape[1]),
                                                          strict=True)]
    cross = [(xs[j][:, :, None] * xs[k][:, None, :]).reshape(m, -1)
             for j, k in combinations(range(len(xs)), 2)]
    return np.column_stack(sq), np.hstack(cross)


def _square_index(widths: Sequence[int]) -> list[tuple[int, int, int]]:
    """``(block, j, l)`` of each column of :func:`product_columns`' ``S``."""
    return [(k, int(j), int(h)) for k, n in enumerate(widths)
            for j, h in zip(*np.triu_indices(n), strict=True)]


def _centring_term(devs: Sequence[np.ndarray], cross: dict[tuple[int, int], np.ndarray],
                   squares: list[tuple[int, int, int, float]]) -> list[np.ndarray]:
    """Each row's influence, on every block's linear coefficients, of the
    products being centred at the sample means: about the centring point
    ``c`` the linear coefficients are ``beta(c) = beta_raw + grad of the
    quadratic part at c``, so ``c = xbar`` adds the gradient's change,
    ``sum_l B_kl (x_li - mu_l) + 2 Q_k (x_ki - mu_k)`` (``Q_k`` the
    within-block products' symmetric coefficient matrix)."""
    out = [np.zeros_like(d) for d in devs]
    for (j, k), bjk in cross.items():
        out[j] += devs[k] @ bjk.T
        out[k] += devs[j] @ bjk
    for k, j, h, c in squares:
        out[k][:, j] += c * devs[k][:, h]
        out[k][:, h] += c * devs[k][:, j]
    return out


@dataclass(frozen=True)
class FirstOrderRegression:
    """The regression's coefficients in the blocks' original coordinates.

    ``linear[k]`` is ``beta_k`` (``n_k``), ``cross[(j, l)]`` is ``B_jl``
    (``n_j x n_l``), ``resid`` the residual (``m``), ``influence[k]`` the
    HC2 influence rows of ``beta_k`` (``m x n_k``: ``beta_k`` minus its
    population value is about their mean, their covariance over ``m`` its
    sandwich covariance), ``n_cols`` the regression's columns kept.
    """

    linear: tuple[np.ndarray, ...]
    cross: dict[tuple[int, int], np.ndarray]
    resid: np.ndarray
    influence: tuple[np.ndarray, ...]
    n_cols: int


def first_order_regression(y: np.ndarray, blocks: Sequence[np.ndarray]
                           ) -> FirstOrderRegression:
    """The least squares regression of the module docstring.

    Raises ``ValueError`` naming the fit's arguments when ``m`` does not
    exceed the regression's columns, when the blocks' columns are linearly
    dependent, or when the cross products are (a column repeated in two
    blocks).  Within-block products the blocks explain (a dummy column's
    square) are dropped.

    Examples
    --------
    A purely bilinear response on blocks sharing a skewed factor: the
    linear coefficients are near zero, the cross coefficient near one.

    >>> import numpy as np
    >>> from jdr_stats.inference.first_order import first_order_regression
    >>> rng = np.random.default_rng(0)
    >>> f = rng.gamma(2.0, size=(4000, 1)) - 2.0
    >>> a, b = rng.normal(size=(4000, 3)) + f, rng.normal(size=(4000, 3)) + f
    >>> reg = first_order_regression(a[:, 0] * b[:, 0] + rng.normal(size=4000), [a, b])
    >>> bool(np.abs(reg.linear[0]).max() < 0.1), round(float(reg.cross[(0, 1)][0, 0]), 1)
    (True, 1.0)
    """
    y = np.asarray(y, float)
    if y.ndim != 1:
        raise ValueError(f"{NAME} needs a single numeric response column; got an array of "
                         f"shape {y.shape}")
    blocks = [np.asarray(x, float) for x in blocks]
    widths = [x.shape[1] for x in blocks]
    m = y.shape[0]
    need = n_first_order_columns(widths)
    if m <= need:
        raise ValueError(
            f"{NAME} regresses y on [1, every block, within-block products, cross products "
            f"of every pair of blocks] ({need} columns for widths {widths}) and needs more "
            f"rows than that; got m = {m}. Use fewer variables, interactions=\"stein\" or "
            "\"orthogonal\"")
    xs, sds = _standardised(blocks)
    lin = np.hstack(xs)
    _, q0 = centred_basis(lin, NAME, "[1, every block]")
    sq, cross = product_columns(blocks)
    sq = sq - sq.mean(axis=0)
    before = np.linalg.norm(sq, axis=0)
    left = np.linalg.norm(sq - q0 @ (q0.T @ sq), axis=0)
    kept = left > before * 1e-8  # a dummy's square is the dummy: dropped
    sq = sq[:, kept]
    sq_index = [ix for ix, keep in zip(_square_index(widths), kept, strict=True) if keep]
    cross = cross - cross.mean(axis=0)
    design = np.hstack([lin, sq, cross])
    uq, sv, vt = np.linalg.svd(design, full_matrices=False)
    if not sv[-1] > sv[0] * design.shape[1] * np.finfo(float).eps * 1e4:
        raise ValueError(f"{NAME}: the cross products are linearly dependent on the blocks "
                         "and the within-block products (a column repeated in two blocks, "
                         "or a constant product); drop the redundant columns")
    yc = y - y.mean()
    coef = vt.T @ ((uq.T @ yc) / sv)
    resid = yc - design @ coef
    lev = np.sum(uq * uq, axis=1) + 1.0 / m
    # rows of (D^T D / m)^{-1} D_i r_i / sqrt(1 - h_ii) (HC2)
    scaled = resid / np.sqrt(1.0 - np.clip(lev, None, 1 - 1e-12))
    infl_all = (uq / sv) @ vt * m
    infl_all = (infl_all.T * scaled).T
    bounds = np.cumsum([0, *widths])
    linear = tuple(coef[lo:hi] / sd for lo, hi, sd in zip(bounds[:-1], bounds[1:], sds,
                                                          strict=True))
    lo_sq = int(bounds[-1])
    squares = [(k, j, h, float(coef[lo_sq + i]) / (sds[k][j] * sds[k][h]))
               for i, (k, j, h) in enumerate(sq_index)]
    start = lo_sq + sq.shape[1]
    out: dict[tuple[int, int], np.ndarray] = {}
    for j, k in combinations(range(len(blocks)), 2):
        size = widths[j] * widths[k]
        c = coef[start:start + size].reshape(widths[j], widths[k])
        out[(j, k)] = c / np.outer(sds[j], sds[k])
        start += size
    devs = [x - x.mean(axis=0) for x in blocks]
    centring = _centring_term(devs, out, squares)
    influence = tuple(infl_all[:, lo:hi] / sd + extra for lo, hi, sd, extra
                      in zip(bounds[:-1], bounds[1:], sds, centring, strict=True))
    return FirstOrderRegression(linear, out, resid, influence, design.shape[1] + 1)


def metric_maps(zs: Sequence[np.ndarray], blocks: Sequence[np.ndarray]) -> list[np.ndarray]:
    """``G_k = (1/m) Z_k^T (x_k - mean)``: under the joint sample whitening
    ``z = G (Sigma^{-1} (x - mu))`` block by block, so this is ``G_k``
    exactly (``(1/m) Z^T X_c = G Sigma^{-1} Sigma``)."""
    m = zs[0].shape[0]
    return [z.T @ (x - x.mean(axis=0)) / m for z, x in zip(zs, blocks, strict=True)]


def first_order_wald(reg: FirstOrderRegression, k: int) -> tuple[float, int]:
    """``(W, n_k)``: the HC2 Wald statistic ``beta_k^T V_k^{-1} beta_k`` of
    block ``k``'s linear coefficients given the rest of the regression,
    about ``chi2(n_k)`` when block ``k`` has no main effect."""
    psi = reg.influence[k]
    m = psi.shape[0]
    psi = psi - psi.mean(axis=0)
    cov = psi.T @ psi / m**2
    beta = reg.linear[k]
    return float(beta @ np.linalg.solve(cov, beta)), int(beta.size)


def regression_pieces(reg: FirstOrderRegression, zs: Sequence[np.ndarray],
                      blocks: Sequence[np.ndarray]) -> dict[tuple[int, ...], np.ndarray]:
    """The pieces of the module docstring, each of shape ``(1, n_s1, ...)``
    as :func:`~jdr_stats.core.kestimate.factors_from_pieces` reads them:
    ``G_k beta_k``, ``G_j B_jl G_l^T`` and, for ``K >= 3``, the residual's
    K-way cross moment (its Hermite correction vanishes: the residual is
    orthogonal to every block)."""
    from ..core.tensor import cross_tensor, pieces

    g = metric_maps(zs, blocks)
    out: dict[tuple[int, ...], np.ndarray] = {}
    for piece in pieces(len(zs), True):
        if len(piece) == 1:
            k = piece[0]
            out[piece] = (g[k] @ reg.linear[k])[None, :]
        elif len(piece) == 2:
            j, k = piece
            out[piece] = (g[j] @ reg.cross[(j, k)] @ g[k].T)[None, :, :]
        else:
            out[piece] = cross_tensor(reg.resid, list(zs))
    return out
