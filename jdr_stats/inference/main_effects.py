"""The per-block test of main effects, ``H0: E[y z_k] = 0``.

The joint estimator sees ``E[y a' b'^T]``: the parts of the link odd in
each block (interactions between the blocks).  A main effect -- a class that
shifts a block's mean, an additive link -- is invisible to it by
construction.  This test looks at the first moment instead: for a Gaussian
block ``E[y z_k] = U_k E[df/du_k]`` (first-order Stein), so it sees main
effects, and its directions lie in ``span(U_k)``.

Two versions (theory of main effects, docs/theory/main_effects.md):

- ``"robust"``: the score (Lagrange multiplier) statistic of the regression
  of ``y`` on block ``k`` with the heteroscedasticity-robust (sandwich)
  variance under ``H0``, referred to Hotelling's ``F``.  It is affine
  invariant in the block and in the response, so any whitening of the block
  gives the same number.  Per block (``independent_blocks=True``) it tests
  the block's marginal first moment; under the joint estimator the first
  moment of the jointly whitened block ``(Sigma^{-1} x)_k``, i.e. block
  ``k``'s main effect given the other block.
- ``"permutation"``: at widths where the sandwich cannot be inverted, the
  sum of the squared studentised first moments of the block under its
  per-block whitening (the one ``fit(..., independent_blocks=True)`` with
  the same ``whitening=`` uses), its p-value from permutations of the
  response's rows; exact when ``y`` is independent of block ``k`` (per
  block, without covariates): the whitening depends on the blocks only.
- ``"Freedman-Lane"``: the same statistic of the residuals of ``y`` and of
  the block on what the test partials out (the other block under the joint
  estimator, the covariates), its p-value from permutations of ``y``'s
  residuals (Freedman and Lane, 1983); asymptotically valid, not exact.
  Where the other block cannot be partialled out (fewer rows than columns)
  the joint estimator's rows fall back to the marginal test, labelled
  ``"permutation (marginal)"`` (exact) or ``"Freedman-Lane (marginal)"``
  (given the covariates only).  The marginal permutation test is the
  per-block fit's: the same whitening, statistic and (same seed) p-value
  under either estimator.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import numpy as np
import pandas as pd

from .. import policy
from ..core._linalg import AnyWhitening
from ..core.moments import column_scales
from ..core.whitening import DesignWhitening
from ..runtime._lazy import stats
from ..runtime._validation import normalize_seed
from ..summary import build_summary
from .hypotheses import TestTable, perm_pvalue

if TYPE_CHECKING:  # statsmodels on first use: fast ``import jdr_stats``
    from statsmodels.iolib.summary2 import Summary

__all__ = ["MAIN_EFFECTS_NULL", "MainEffectsResults", "MainEffectsMethod", "freedman_lane",
           "main_effects_test", "robust_score", "studentized_stat"]

MainEffectsMethod = Literal["auto", "robust", "permutation"]

#: The blocks' per-block whitening (the permutation version's coordinates),
#: or a function returning it, called only when a permutation row runs.
BlockWhitening: TypeAlias = (DesignWhitening[AnyWhitening]
                             | Callable[[], DesignWhitening[AnyWhitening] | None] | None)

#: The null hypothesis of one row, as the table's notes print it.
MAIN_EFFECTS_NULL = "E[y z_k] = 0: no linear (first-moment) association of y with block k"


#: Entries of one chunk of the rows ``u_i`` (bounds the memory of the sandwich).
_CHUNK_ENTRIES = 1 << 22


def _centred(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    return x - (w @ x) / np.sum(w)


def _residual(x: np.ndarray, other: np.ndarray | None, w: np.ndarray) -> np.ndarray:
    """``x`` centred, or its weighted least squares residual on ``(1, other)``."""
    xc = _centred(x, w)
    if other is None:
        return xc
    oc = _centred(other, w)
    sw = np.sqrt(w)[:, None]
    coef = np.linalg.lstsq(oc * sw, xc * sw, rcond=None)[0]
    return xc - oc @ coef


def robust_score(e: np.ndarray, x: np.ndarray, w: np.ndarray, nu: float
                 ) -> tuple[float, float, float, float]:
    """The robust score test of ``E[e x] = 0`` from the rows ``u_i = x_i (x) e_i``.

    ``e`` (``m x q``) and ``x`` (``m x p``) are centred (residualised)
    response and block; ``w`` the case weights (mean one); ``nu`` the rows
    left after the centring and the partialled columns.  With
    ``g = sum w_i u_i / m`` and ``A = sum w_i u_i u_i^T / m - g g^T``,
    ``d = g^T A^+ g``; Hotelling's ``F = (nu - P) d / P`` on ``(P, nu - P)``
    degrees of freedom, ``P = rank(A)``.

    Returns ``(F, P, nu - P, pvalue)``; NaN where ``nu - P < 1``.
    """
    m = x.shape[0]
    # any basis of the block's column space gives the same statistic: scale
    # the columns for a well-conditioned A (powers of two first, so that the
    # squares of extreme units neither overflow nor vanish)
    scale = column_scales((x,))
    x = x if scale is None else x * scale
    sd = np.sqrt(w @ x**2 / m)
    xs = x / np.where(sd > 0, sd, 1.0)
    es = e / np.where((sd_e := np.sqrt(w @ e**2 / m)) > 0, sd_e, 1.0)
    dim = xs.shape[1] * es.shape[1]
    g, s = np.zeros(dim), np.zeros((dim, dim))
    step = max(1, _CHUNK_ENTRIES // max(dim, 1))
    for lo in range(0, m, step):  # the rows u_i = x_i (x) e_i, a chunk at a time
        u = (xs[lo:lo + step, :, None] * es[lo:lo + step, None, :]).reshape(-1, dim)
        wu = u * w[lo:lo + step, None]
        g += wu.sum(axis=0)
        s += wu.T @ u
    g /= m
    a = s / m - np.outer(g, g)
    vals, vecs = np.linalg.eigh((a + a.T) / 2)
    keep = vals > max(vals.max(), 0.0) * 1e-10
    p = int(np.sum(keep))
    den = nu - p
    if p == 0 or den < 1:
        return float("nan"), float(p), float(den), float("nan")
    proj = vecs[:, keep].T @ g
    d = float(np.sum(proj**2 / vals[keep]))
    f = den * d / p
    return f, float(p), float(den), float(stats.f.sf(f, p, den))


def studentized_stat(e: np.ndarray, z: np.ndarray, w: np.ndarray) -> float:
    """``sum_{j,c} t_jc^2``, ``t_jc = sum_i w_i z_ij e_ic / sqrt(sum_i w_i z_ij^2 e_ic^2)``:
    the squared studentised first moments of the (whitened) block's columns
    with the (whitened) response's columns."""
    num = (z * w[:, None]).T @ e
    den = (z**2 * w[:, None]).T @ e**2
    ok = den > 0
    return float(np.sum(num[ok] ** 2 / den[ok]))


def _standardized(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """The response centred and whitened under the weights (``m x q``)."""
    yc = _centred(y, w)
    cov = (yc * w[:, None]).T @ yc / np.sum(w)
    vals, vecs = np.linalg.eigh(cov)
    keep = vals > max(vals.max(), 0.0) * 1e-12
    return yc @ (vecs[:, keep] / np.sqrt(vals[keep]))


@dataclass(frozen=True)
class MainEffectsResults(TestTable):
    """The per-block tests of main effects: one row per block (columns
    ``statistic``, ``df``, ``pvalue``, then ``df_denom``, ``method`` and
    ``reason``; a row whose test cannot run has NaN numbers and the reason).

    Attributes
    ----------
    joint : bool
        True when each block was tested given the other block (the joint
        estimator's whitening), False for the marginal first moments.  Under
        the joint estimator a row whose ``method`` ends in ``"(marginal)"``
        tests the marginal first moment instead (the other block could not
        be partialled out).
    """

    joint: bool = False

    def summary(self) -> Summary:
        """The table without its ``reason`` column, each row's reason as a
        note (a reason is a sentence: as a column it would widen the table
        past any page)."""
        shown = self.table.drop(columns="reason", errors="ignore")
        reasons = [f"Why {self.method_word(method)}, block {block}: {reason}."
                   for block, method, reason in zip(self.table.index, self.table["method"],
                                                    self.table.get("reason", ""), strict=True)
                   if reason]
        return build_summary(
            self.title,
            {"Method:": self.method_label or self.method, "Tests:": len(self.table)},
            [(str(self.table.index.name or ""), shown)],
            [*self.notes, *reasons],
        )

    @staticmethod
    def method_word(method: object) -> str:
        """How a row's method reads in its reason's note."""
        return "not run" if method == "refused" else str(method)


def _partial_basis(partial: list[np.ndarray], w: np.ndarray) -> np.ndarray:
    """An orthonormal basis of ``sqrt(w) [1, partial]`` (collinear columns dropped)."""
    sw = np.sqrt(w)
    basis = [sw[:, None] / np.linalg.norm(sw)]
    if partial:
        c = _centred(np.hstack(partial), w) * sw[:, None]
        norms = np.linalg.norm(c, axis=0)
        c = c[:, norms > 1e-12 * max(float(norms.max(initial=0.0)), 1e-300)]
        c = c / np.linalg.norm(c, axis=0)
        if c.size:
            u, sv, _ = np.linalg.svd(c, full_matrices=False)
            basis.append(u[:, sv > sv[0] * 1e-10])
    return np.hstack(basis)


def freedman_lane(y: np.ndarray, x: np.ndarray, partial: list[np.ndarray], w: np.ndarray,
                  *, n_perm: int, rng: np.random.Generator) -> tuple[float, float]:
    """The Freedman--Lane permutation test of ``E[y r] = 0``, ``r`` the
    residual of the block ``x`` on ``(1, partial)``.

    ``e``: the (weighted least squares) residuals of ``y`` on
    ``(1, partial)``, whitened; ``z`` the block's residuals.  The statistic
    is :func:`studentized_stat` of ``(e, z)``; for each permutation ``P``
    of the rows the reduced fit is repeated on ``yhat + P e`` and the
    statistic computed from its residuals ``M P e`` (``M`` the annihilator
    of ``(1, partial)``: ``z^T W M P e = z^T W P e``, the fitted part of
    ``y`` contributes nothing).  Asymptotically valid, not exact (theory
    page "Main effects", section 5).

    Returns ``(statistic, pvalue)``; the p-value is
    ``(1 + #{T* >= T}) / (B + 1)``.
    """
    sw = np.sqrt(w)[:, None]
    basis = _partial_basis(partial, w)

    def resid(v: np.ndarray) -> np.ndarray:
        vs = v * sw
        return (vs - basis @ (basis.T @ vs)) / sw

    z = resid(x)
    e = _standardized(resid(y), w)
    obs = studentized_stat(e, z, w)
    m = x.shape[0]
    null = np.array([studentized_stat(resid(e[rng.permutation(m)]), z, w)
                     for _ in range(n_perm)])
    # rounding: a permuted statistic equal to T up to 1e-10 counts as >= T
    return obs, float(perm_pvalue(obs * (1 - 1e-10), null))


def _block_row(y: np.ndarray, x: np.ndarray, other: np.ndarray | None, w: np.ndarray,
               wmap: Callable[[], AnyWhitening | None], *, method: str, n_adjusted: int,
               covariates: np.ndarray | None, n_perm: int, n_blocks: int,
               rng: np.random.Generator) -> dict[str, Any]:
    m, n_k = x.shape
    q = y.shape[1]
    n_other = None if other is None else other.shape[1]
    choice = policy.main_effects_method(
        m, n_k * q, n_other=n_other, n_adjusted=n_adjusted, requested=method,
        covariates_kept=covariates is not None, n_blocks=n_blocks)
    row: dict[str, Any] = {"statistic": np.nan, "df": np.nan, "pvalue": np.nan,
                           "df_denom": np.nan, "method": choice.name, "reason": choice.reason}
    # the regressions are unit-free: columns of extreme units times powers of
    # two (exact), so that their squares neither overflow nor vanish; the
    # permutation version scales by its whitening map's own scales below
    raw = x
    scale = column_scales((x,))
    x = x if scale is None else x * scale
    if other is not None and (scale_o := column_scales((other,))) is not None:
        other = other * scale_o
    if choice.name == "robust":
        nu = m - 1 - n_adjusted - (n_other or 0)
        e = _residual(y, other, w)
        z = _residual(x, other, w)
        f, p, den, pv = robust_score(e, z, w, nu)
        row.update(statistic=f, df=p, pvalue=pv, df_denom=den)
    elif choice.name in ("permutation", "permutation (marginal)"):
        # the block's per-block whitening (under either estimator: the
        # marginal test is the per-block fit's); it depends on the blocks
        # only, never on y, so permuting y keeps the test exact
        wk = wmap()
        if wk is None:
            z = x - (w @ x) / np.sum(w)
        else:  # the map's variables: the columns times its scales (if any)
            z = wk.to_white(raw if getattr(wk, "scale", None) is None else raw * wk.scale)
        ys = _standardized(y, w)
        obs = studentized_stat(ys, z, w)
        null = np.array([studentized_stat(ys[rng.permutation(m)], z, w)
                         for _ in range(n_perm)])
        # rounding: a permuted statistic equal to T up to 1e-10 counts as >= T
        row.update(statistic=obs, pvalue=float(perm_pvalue(obs * (1 - 1e-10), null)))
    elif choice.name.startswith("Freedman-Lane"):
        partial = [] if covariates is None or not n_adjusted else [covariates]
        if other is not None and choice.name == "Freedman-Lane":
            partial.append(other)
        obs, pv = freedman_lane(y, x, partial, w, n_perm=n_perm, rng=rng)
        row.update(statistic=obs, pvalue=pv)
    return row


def main_effects_test(
    y: np.ndarray,
    blocks: list[np.ndarray],
    names: list[str],
    whitening: BlockWhitening,
    *,
    weights: np.ndarray | None = None,
    joint: bool = False,
    n_adjusted: int = 0,
    covariates: np.ndarray | None = None,
    method: MainEffectsMethod = "auto",
    n_perm: int = 199,
    seed: int | np.random.Generator | None = None,
) -> MainEffectsResults:
    """The test table of main effects; see
    :meth:`jdr_stats.results.JDRResults.main_effects_test`.

    ``y`` (``m`` or ``m x q``) and ``blocks`` are the model's rows (adjusted
    for covariates, ``n_adjusted`` columns of them, whose design
    ``covariates`` is given where the model keeps it); ``whitening`` the
    blocks' per-block whitening, the one ``fit(..., independent_blocks=True)``
    with the same ``whitening=`` builds (None: centred only), or a function
    returning it (called once, only if a permutation row runs): the
    coordinates of the permutation version, per block and of the joint
    estimator's marginal rows alike, so that the marginal test gives the
    same statistic and, with the same seed, the same p-value under either
    estimator; ``joint`` tests each block given the others.
    """
    if method not in ("auto", "robust", "permutation"):
        raise ValueError(f'method must be "auto", "robust" or "permutation"; got {method!r}')
    if isinstance(n_perm, bool) or not isinstance(n_perm, (int, np.integer)) or n_perm < 1:
        raise ValueError(f"n_perm must be a positive integer; got {n_perm!r}")
    y2 = np.asarray(y, float).reshape(len(y), -1)
    m = y2.shape[0]
    w = np.ones(m) if weights is None else np.asarray(weights, float) * m / np.sum(weights)
    rng = normalize_seed(seed)
    resolved: list[DesignWhitening[AnyWhitening] | None] = []

    def block_map(k: int) -> Callable[[], AnyWhitening | None]:
        def get() -> AnyWhitening | None:
            if not resolved:
                resolved.append(whitening() if callable(whitening) else whitening)
            white = resolved[0]
            return None if white is None else white[k]
        return get

    zdesign = None if covariates is None else np.asarray(covariates, float).reshape(m, -1)
    rows = []
    for k, x in enumerate(blocks):
        others = [np.asarray(b, float) for j, b in enumerate(blocks) if j != k]
        other = np.hstack(others) if joint and others else None
        rows.append(_block_row(y2, np.asarray(x, float), other, w, block_map(k),
                               method=method, n_adjusted=n_adjusted, covariates=zdesign,
                               n_perm=int(n_perm), n_blocks=len(blocks), rng=rng))
    table = pd.DataFrame(rows, index=pd.Index(names, name="block"))
    given = (" given the other block" + ("s" if len(blocks) > 2 else "")) if joint else ""
    notes = [
        f"H0 (each row): {MAIN_EFFECTS_NULL}{given} (z_k: the block whitened"
        f"{' jointly, (Sigma^-1 x)_k' if joint else ''}; y centred, q = {y2.shape[1]} "
        "column(s)" + ("; y and the blocks adjusted for the covariates" if n_adjusted else "")
        + ").",
        "robust: score test of the regression of y on the block with the sandwich "
        "variance (holds under heteroscedasticity and heavy tails), Hotelling's F "
        "reference; permutation: squared studentised first moments under the block's "
        f"per-block whitening, {int(n_perm)} permutations of y's rows, exact when y is "
        "independent of the block; Freedman-Lane: the same statistic of the residuals of y "
        "and of the block on what is partialled out, the residuals of y permuted and refitted, "
        "asymptotically valid, not exact (theory page 'Main effects').",
    ]
    if any(str(mt).endswith("(marginal)") for mt in table["method"]):
        notes.append("Rows marked (marginal) test the block's MARGINAL association with y "
                     "(not given the other block" + ("s" if len(blocks) > 2 else "")
                     + "), which cannot be partialled out at this width; see the reason.")
    return MainEffectsResults(table, "Tests of main effects", "main effects", notes,
                              method_label="per block: " + ", ".join(
                                  sorted(set(table["method"]))), joint=joint)
