"""Rank tests for a response of ``q > 1`` columns (categorical with ``C > 2``
classes, or multivariate): an adapter until the rank-test core takes a 2-D ``y``.

``Lambda_k = m sum_c ||U0^T X_c V0||_F^2`` (:func:`~jdr_stats._hosvd.complement_statistic`,
the whitened response ``Yw`` has identity covariance), with ``U0``, ``V0`` the
complements of the rank-k HOSVD estimates.  Two methods run on it:

* ``"chi2"``: normal theory, ``Lambda_k -> chi2(q (n1-k)(n2-k))``;
* ``"permutation"``: the complement coordinates ``(U0^T a', V0^T b')`` are
  permuted jointly against ``(Yw, U^T a', V^T b')`` and the whole statistic
  (re-whitening of the blocks and the HOSVD included) recomputed; at ``k = 0``
  this permutes the response against the blocks, exact under independence.

The default ``"robust"`` (and ``fit("auto")``) falls back to the permutation
test when the rows are in memory, else to the chi-square test, and says so in
the table's notes.  Derivations: docs/theory/responses.md.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._data import RowsData
from .._hosvd import complement_statistic, hosvd, whitened_crosses
from .._linalg import BlockMoments, Whitening, block_whitenings
from .._validation import check_int, normalize_seed
from .hypotheses import TEST_COLUMNS, perm_pvalue

__all__ = ["FALLBACK", "run_q"]

#: What the default test becomes for q > 1, until the robust core takes 2-D y.
FALLBACK = ("the robust rank test for a response of q > 1 columns is not available "
            "yet; the {used} test was used instead")


def _labels(method: str, q: int) -> tuple[str, str]:
    if method == "chi2":
        return ("normal-theory chi-square, q responses",
                "Normal theory: the whitened complement coordinates are independent of "
                "each other and of (Yw, U'a', V'b'), so Lambda_k ~ chi2(q (n1-k)(n2-k)) "
                "as m grows (liberal for heavy-tailed blocks).")
    return ("permutation of the complement coordinates, q responses",
            "Permutation: under H0 the complement coordinates (U_perp'a', V_perp'b') "
            "are independent of (Yw, U'a', V'b'); their rows are permuted jointly and the "
            "whole statistic (re-whitening and HOSVD included) recomputed; "
            "p = (1 + #{T* >= T}) / (B + 1). At k = 0 this permutes the response "
            "against the blocks (exact under independence). With covariates the rows "
            "are residuals on [1, Z] (permutation of residuals).")


def _white_rows(data: RowsData, whitening: tuple[Whitening, Whitening]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y, a, b = data.rows("the permutation rank test")
    wa, wb = whitening
    return y, wa.to_white(a), wb.to_white(b)


def _whiten_block(x: np.ndarray) -> np.ndarray:
    xc = x - x.mean(axis=0)
    chol = np.linalg.cholesky(xc.T @ xc / x.shape[0])
    return np.linalg.solve(chol, xc.T).T


def _stat_of_rows(y: np.ndarray, a: np.ndarray, b: np.ndarray, k: int) -> float:
    """``Lambda_k`` of rows (blocks re-whitened, ``y`` centred)."""
    m = y.shape[0]
    aw, bw = _whiten_block(a), _whiten_block(b)
    yc = y - y.mean(axis=0)
    xq = np.einsum("ic,ij,il->cjl", yc, aw, bw) / m
    u, _, v, _ = hosvd(xq)
    return complement_statistic(xq, u, v, k, m)


def _perm_null(y: np.ndarray, a: np.ndarray, b: np.ndarray, u: np.ndarray, v: np.ndarray,
               k: int, n_perm: int, rng: np.random.Generator) -> np.ndarray:
    ar, br = a @ u, b @ v  # rotated: first k columns signal, the rest complement
    out = np.empty(n_perm)
    for j in range(n_perm):
        pi = rng.permutation(y.shape[0])
        ap, bp = ar.copy(), br.copy()
        ap[:, k:], bp[:, k:] = ar[pi, k:], br[pi, k:]
        out[j] = _stat_of_rows(y, ap, bp, k)
    return out


def run_q(
    data: RowsData,
    mom: BlockMoments,
    whitening: tuple[Whitening, Whitening] | None,
    *,
    method: str,
    top: int,
    n_perm: int,
    seed: Any,
    stop_alpha: float | None = None,
) -> tuple[pd.DataFrame, str, str, list[str]]:
    """The table of tests ``k = 0..top`` for a ``q > 1`` response.

    Returns ``(table, method key, label, notes)``.  ``method`` is
    ``"chi2"``, ``"permutation"`` or ``"robust"`` (the fallback above);
    the others raise a ValueError naming the restriction.
    """
    q = mom.q
    used = method
    notes: list[str] = []
    if method == "robust":
        used = "permutation" if data.source is None and data.sums is None else "chi2"
        notes.append(FALLBACK.format(used=used) + ".")
    elif method not in ("chi2", "permutation"):
        raise ValueError(
            f"the {method} rank test needs a single response column; this model's "
            f"response has q = {q} columns. Use method='robust' (default), 'chi2' or "
            "'permutation'"
        )
    check_int(n_perm, "n_perm", low=1)
    if data.weighted:
        raise ValueError("rank tests need an unweighted model; got case weights")
    if whitening is None or not mom.has_covariances:
        mom = data.moments() if not mom.has_covariances else mom
        whitening = block_whitenings(mom, data.names["exog_a"], data.names["exog_b"])
    xq = whitened_crosses(mom.cross_q, *whitening)  # type: ignore[arg-type]
    u, _, v, _ = hosvd(xq)
    n1, n2, m = xq.shape[1], xq.shape[2], data.nobs
    rng = normalize_seed(seed) if used == "permutation" else None
    rows_data = _white_rows(data, whitening) if used == "permutation" else None
    rows = []
    for k in range(top + 1):
        stat = complement_statistic(xq, u, v, k, m)
        row: dict[str, float] = {"statistic": stat}
        if used == "chi2":
            df = float(q * (n1 - k) * (n2 - k))
            row.update(df=df, pvalue=float(stats.chi2.sf(stat, df)))
        else:
            assert rows_data is not None and rng is not None
            null = _perm_null(*rows_data, u, v, k, n_perm, rng)
            row.update(df=np.nan, pvalue=float(perm_pvalue(stat * (1 - 1e-10), null)),
                       n_perm=float(n_perm))
        rows.append(row)
        if stop_alpha is not None and not row["pvalue"] <= stop_alpha:
            break
    extra = ("n_perm",) if used == "permutation" else ()
    table = pd.DataFrame(rows, index=pd.Index(np.arange(len(rows)), name="k"),
                         columns=[*TEST_COLUMNS, *extra])
    label, assumption = _labels(used, q)
    notes = [
        f"Response of q = {q} whitened columns (Yw). Row k tests H0: r <= k (the q "
        "whitened cross moments E[a' Yw_c b'^T] have joint column and row spaces of "
        "dimension <= k). Statistic Lambda_k = m sum_c ||U_perp' X_c V_perp||_F^2, "
        "U_perp, V_perp the complements of the rank-k HOSVD estimates.",
        assumption, *notes,
    ]
    if used == "chi2":
        notes.append("df = q (n1 - k)(n2 - k).")
    return table, used, label, notes
