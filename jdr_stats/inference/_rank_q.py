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

The default ``"robust"`` (and ``fit("auto")``) runs the robust core
(:mod:`._robust_core`, which takes a 2-D ``y``, with the self-influence
corrected reference of the HOSVD directions, theory 6d) when the rows are in memory;
on a row source it falls back to the chi-square test and says so in the
table's notes.  Derivations: docs/theory/responses.md.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy import linalg, stats

from .. import policy
from .._data import RowsData
from .._hosvd import complement_statistic, hosvd, whitened_crosses
from .._linalg import BlockMoments, Whitening, block_whitenings, mp_edge
from .._progress import ProgressArg, progress_bar, progress_forwarder
from .._validation import check_int, normalize_seed
from ..core.whitening import DesignWhitening
from ..exceptions import RowsNotInMemoryError
from ._rank_spectral import plan_passes, spectral_pvalues
from ._rank_stats import WhitenedDesign
from ._robust_core import robust_moments, robust_pvalue, rotated_first
from .hypotheses import TEST_COLUMNS, perm_pvalue
from .rank_methods import RANK_METHODS, combined_numbers, flips_needed, tail_notes

__all__ = ["FALLBACK", "run_q"]

#: What the default test becomes for q > 1, until the robust core takes 2-D y.
FALLBACK = ("the robust rank test for a response of q > 1 columns is not available "
            "yet; the {used} test was used instead")


def _white_rows(data: RowsData, whitening: DesignWhitening[Whitening]
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    y, a, b = data.rows("the permutation rank test")
    wa, wb = whitening
    return y, wa.to_white(a), wb.to_white(b)


def _centred_factor(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Centred blocks of a batch (B x m x n) and the inverse Cholesky factors of
    their covariances (divisor m)."""
    xc = x - x.mean(axis=1, keepdims=True)
    cov = xc.transpose(0, 2, 1) @ xc / x.shape[1]
    return xc, np.linalg.inv(np.linalg.cholesky(cov))


def _stats_of_rows(y: np.ndarray, a: np.ndarray, b: np.ndarray, k: int) -> np.ndarray:
    """``Lambda_k`` of a batch of data sets (blocks B x m x n re-whitened, ``y`` centred):
    ``X_c = La^{-1} (A^T diag(y_c) B / m) Lb^{-T}``."""
    m = y.shape[0]
    (ac, la), (bc, lb) = _centred_factor(a), _centred_factor(b)
    yc = y - y.mean(axis=0)
    at = ac.transpose(0, 2, 1)
    raw = np.stack([at @ (bc * yc[None, :, c:c + 1]) for c in range(yc.shape[1])], axis=1)
    xq = la[:, None] @ raw @ lb[:, None].transpose(0, 1, 3, 2) / m  # B x q x n1 x n2
    nb, q, n1, n2 = xq.shape
    # the HOSVD of every data set at once (signs do not matter for Lambda_k)
    u = np.linalg.svd(xq.transpose(0, 2, 1, 3).reshape(nb, n1, q * n2))[0][:, :, k:]
    v = np.linalg.svd(xq.transpose(0, 3, 1, 2).reshape(nb, n2, q * n1))[0][:, :, k:]
    core = u.transpose(0, 2, 1)[:, None] @ xq @ v[:, None]
    return m * np.sum(core**2, axis=(1, 2, 3))


def _perm_null(y: np.ndarray, a: np.ndarray, b: np.ndarray, u: np.ndarray, v: np.ndarray,
               k: int, n_perm: int, rng: np.random.Generator) -> np.ndarray:
    ar, br = a @ u, b @ v  # rotated: first k columns signal, the rest complement
    m = y.shape[0]
    batch = max(1, min(n_perm, 4_000_000 // (m * (ar.shape[1] + br.shape[1]))))
    out = []
    for start in range(0, n_perm, batch):
        idx = np.stack([rng.permutation(m) for _ in range(min(batch, n_perm - start))])
        ap = np.repeat(ar[None], len(idx), axis=0)
        bp = np.repeat(br[None], len(idx), axis=0)
        ap[:, :, k:], bp[:, :, k:] = ar[idx, k:], br[idx, k:]
        out.append(_stats_of_rows(y, ap, bp, k))
    return np.concatenate(out)


class _RobustQ:
    """The robust test of a q-column response: the width helper's core
    (:mod:`._robust_core`) on the rows rotated to the HOSVD bases, ``Yw`` of
    shape (m, q); ``Lambda_k ~ scale * chi2(eff_df)`` with the finite-sample
    moments of ``Lambda_k`` (docs/theory/rank_tests.md, sections 6 and 6a)."""

    def __init__(self, rows: Any, u: np.ndarray, v: np.ndarray, seed: Any) -> None:
        y, a, b = rows
        yc, ar, br = y - y.mean(axis=0), a @ u, b @ v
        self.chunks = lambda: [(yc, ar, br)]
        self.first = rotated_first(self.chunks)
        self.rng = normalize_seed(policy.ROBUST_PAIR_SEED if seed is None else seed)
        self.tags: set[str] = set()

    def row(self, stat: float, k: int) -> dict[str, float]:
        mom = robust_moments(self.chunks, self.first, k, rng=self.rng)
        self.tags.update(mom.tags)
        pv, eff, scale, mc = robust_pvalue(stat / self.first.s2, mom)
        return {"statistic": stat, "df": np.nan, "pvalue": pv, "eff_df": eff, "scale": scale,
                "mc_se": mc}


@dataclass(frozen=True)
class _SpectralQ:
    """The spectral statistics of a q-column response: ``T_k = m min(s1_{k+1},
    s2_{k+1})^2`` from the singular values of the two unfoldings (``Yw`` has
    identity covariance), and the noise edge of the smaller unfolding."""

    m: int
    u: np.ndarray
    s1: np.ndarray
    v: np.ndarray
    s2: np.ndarray

    def statistic(self, k: int) -> float:
        return float(self.m * min(self.s1[k], self.s2[k]) ** 2)

    def edge(self, k: int | np.ndarray, q: int) -> np.ndarray:
        return mp_edge(self.u.shape[0], self.v.shape[0], k, q)


def _whitened_response(y: np.ndarray) -> np.ndarray:
    """``Yw``: the centred response times the inverse Cholesky factor of its
    covariance (divisor m), identity covariance (the units of ``xq``)."""
    yc = y - y.mean(axis=0)
    chol = np.linalg.cholesky(yc.T @ yc / y.shape[0])
    return np.asarray(linalg.solve_triangular(chol, yc.T, lower=True).T)


def _spectral_rows(rows_data: tuple[np.ndarray, np.ndarray, np.ndarray], sq: _SpectralQ,
                   lam: Callable[[int], float], robust: _RobustQ | None, *, top: int, n_rep: int,
                   rng: np.random.Generator, stop_alpha: float | None, n_jobs: int | None,
                   progress: ProgressArg,
                   timing: Callable[[list[range], float, float], None] | None
                   ) -> tuple[list[dict[str, float]], set[str]]:
    """The rows ``k = 0..top`` of the spectral test (``robust`` None) or of the
    combined test of a q-column response, pass by pass as for one column
    (:func:`~._rank_spectral.plan_passes`): the sign flips of
    :class:`~._rank_spectral._SpectralBatch` with the q columns of ``Yw``; the
    combined test (``lam(k)``: its ``Lambda_k``) draws flips only at the ranks
    :func:`~.rank_methods.flips_needed` names, as for one column.  Returns the
    rows and the reasons (tail-note keys) of the reported rows without flips."""
    y, a, b = rows_data
    yw = _whitened_response(y)
    q = yw.shape[1]
    w = WhitenedDesign(m=sq.m, var_y=1.0, u=sq.u, s=sq.s1, v=sq.v, a=a, b=b, y=yw)
    stats_all = np.array([sq.statistic(k) for k in range(top + 1)])
    plan = plan_passes(stats_all, sq.edge(0, q), top)
    rows: list[dict[str, float]] = []
    skipped: set[str] = set()
    with progress_bar(progress, n_rep * len(plan), "sign flips") as update:
        for i, ks in enumerate(plan):
            rrows = [robust.row(lam(k), k) for k in ks] if robust is not None else []
            sub: range | None = ks
            why: list[str | None] = [None] * len(ks)
            if robust is not None:
                sub, why = flips_needed(ks, stats_all[list(ks)], sq.edge(np.asarray(ks), q),
                                        [r["pvalue"] for r in rrows], n_rep)
            pvs: dict[int, float] = {}
            used = 0
            if sub is not None:
                first = (lambda setup, per, plan=plan: timing(plan, setup, per)) \
                    if timing is not None and i == 0 else None
                pv, used = spectral_pvalues(
                    w, sub, n_rep, rng, n_jobs=n_jobs,
                    progress=progress_forwarder(update), timing=first,
                    stats=stats_all[sub[0]: sub[-1] + 1])
                pvs = dict(zip(sub, (float(p) for p in pv), strict=True))
            for j, k in enumerate(ks):
                ps = pvs.get(k, np.nan)
                if robust is None:
                    row = {"statistic": stats_all[k], "df": np.nan, "pvalue": ps,
                           "n_flips": float(used)}
                else:
                    row = combined_numbers(rrows[j], ps, stats_all[k],
                                           float(used) if k in pvs else 0.0)
                rows.append(row)
                if why[j] is not None:
                    skipped.add(str(why[j]))
                if stop_alpha is not None and not row["pvalue"] <= stop_alpha:
                    return rows, skipped
    return rows, skipped


def run_q(
    data: RowsData,
    mom: BlockMoments,
    whitening: DesignWhitening[Whitening] | None,
    *,
    method: str,
    top: int,
    n_perm: int,
    seed: Any,
    stop_alpha: float | None = None,
    n_jobs: int | None = None,
    progress: ProgressArg = False,
    timing: Callable[[list[range], float, float], None] | None = None,
) -> tuple[pd.DataFrame, str, str, list[str], list[str]]:
    """The table of tests ``k = 0..top`` for a ``q > 1`` response.

    Returns ``(table, method key, label, notes, reference notes)``.  ``method`` is
    ``"chi2"``, ``"permutation"``, ``"robust"`` (the fallback above),
    ``"spectral"`` or ``"combined"`` (the rows in memory, else a
    RowsNotInMemoryError naming the method; :func:`_spectral_rows`);
    the others raise a ValueError naming the restriction.  ``timing(plan,
    setup, per_replicate)`` is called once, after the first chunk of sign flips.
    """
    q = mom.q
    used = method
    notes: list[str] = []
    in_memory = data.source is None and data.sums is None
    if method == "robust" and not in_memory:
        used = "chi2"
        notes.append(FALLBACK.format(used=used) + " (the rows are not in memory).")
    elif method in ("spectral", "combined") and not in_memory:
        raise RowsNotInMemoryError(
            f"the {method} rank test of a response of q = {q} columns needs the rows in "
            "memory (it streams over a row source for one response column only); this "
            f"model's rows are not in memory. rank_method='auto' chooses the {method} test "
            "from the shape alone (jdr_stats.policy.rank_method), so pass "
            "rank_method='chi2' (or method='chi2'), or build the model from arrays")
    elif not RANK_METHODS[method].takes_q:
        takes = ", ".join(repr(k) for k, m in RANK_METHODS.items() if m.takes_q)
        raise ValueError(
            f"the {method} rank test needs a single response column; this model's "
            f"response has q = {q} columns. Use method='robust' (what the default "
            f"'auto' runs where it does not run 'combined') or another of {takes}"
        )
    check_int(n_perm, "n_perm", low=1)
    if data.weighted:
        raise ValueError("rank tests need an unweighted model; got case weights")
    if whitening is None or not mom.has_covariances:
        mom = data.moments() if not mom.has_covariances else mom
        whitening = block_whitenings(mom, data.names["exog_a"], data.names["exog_b"])
    xq = whitened_crosses(mom.cross_q, *whitening)  # type: ignore[arg-type]
    u, s1, v, s2 = hosvd(xq)
    n1, n2, m = xq.shape[1], xq.shape[2], data.nobs
    flips = used in ("spectral", "combined")
    rng = normalize_seed(seed) if used == "permutation" or flips else None
    rows_data = _white_rows(data, whitening) if used != "chi2" else None
    # the combined test's robust rows draw their row pairs from the fixed
    # seed, as for one column (the seed drives the sign flips)
    robust = (_RobustQ(rows_data, u, v, None if flips else seed)
              if used in ("robust", "combined") else None)
    if flips:
        assert rows_data is not None and rng is not None
        rows, skipped = _spectral_rows(
            rows_data, _SpectralQ(m, u, s1, v, s2),
            lambda k: complement_statistic(xq, u, v, k, m), robust, top=top, n_rep=n_perm,
            rng=rng, stop_alpha=stop_alpha, n_jobs=n_jobs, progress=progress, timing=timing)
    else:
        rows, skipped = [], set()
    for k in range(top + 1 if not flips else 0):
        stat = complement_statistic(xq, u, v, k, m)
        row: dict[str, float] = {"statistic": stat}
        if robust is not None:
            row.update(robust.row(stat, k))
        elif used == "chi2":
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
    spec = RANK_METHODS[used]
    table = pd.DataFrame(rows, index=pd.Index(np.arange(len(rows)), name="k"),
                         columns=[*TEST_COLUMNS, *spec.columns])
    label, assumption = spec.q_label, spec.q_assumptions
    notes = [
        f"Response of q = {q} whitened columns (Yw). Row k tests H0: r <= k (the q "
        "whitened cross moments E[a' Yw_c b'^T] have joint column and row spaces of "
        "dimension <= k). Statistic Lambda_k = m sum_c ||U_perp' X_c V_perp||_F^2, "
        "U_perp, V_perp the complements of the rank-k HOSVD estimates.",
        assumption, *notes,
    ]
    tags = set(robust.tags) if robust is not None else set()
    if flips:
        tags |= {used, *skipped}
    refs = tail_notes(RANK_METHODS["combined" if flips else "robust"], tags)
    notes += refs
    if used == "chi2":
        notes.append("df = q (n1 - k)(n2 - k).")
    return table, used, label, notes, refs
