"""The rank-test methods as a registry of small objects.

Each method of :func:`~jdr_stats.inference.rank_tests.rank_tests` is a
:class:`RankTestMethod`: its row computation (the test of ``H0: r <= k``
for one ``k``), the columns it adds after ``statistic``, ``df``,
``pvalue``, its reference distribution, its assumptions, and what it needs
from the data (the singular values only, sums over rows that a row source
can stream, or the rows in memory).  :data:`RANK_METHODS` maps the keys
``"robust"``, ``"wald"``, ``"chi2"``, ``"general"`` and ``"permutation"``
to them; ``rank_tests`` looks the method up there and never branches on
its name.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from scipy import stats

from .. import config, policy
from .._linalg import mp_edge
from .._progress import ProgressArg
from ._rank_permutation import _permutation_stats
from ._rank_spectral import pass_plan, spectral_pvalues, spectral_statistic
from ._rank_stats import _general_weights, _Whitened
from ._robust_core import robust_pvalue
from .chi2mix import weighted_chi2_sf
from .hypotheses import perm_pvalue
from .rank_robust import complement_block, wald_from_moments

__all__ = ["RANK_METHODS", "RankTestMethod", "RowOptions", "combined_numbers", "flips_needed"]


@dataclass(frozen=True)
class RowOptions:
    """Settings a row computation may use (the permutation test's)."""

    n_perm: int = 999
    rng: np.random.Generator | None = None
    n_jobs: int | None = None
    progress: ProgressArg = False
    #: generator of the robust test's sampled row pairs (wide designs)
    pair_rng: np.random.Generator | None = None
    #: called once, after the spectral test's first chunk of sign flips, with
    #: the seconds of its setup and per replicate (the long-run warning of a pass)
    timing: Callable[[float, float], None] | None = None


#: A row: the numbers of the test of ``H0: r <= k`` and the tails / references
#: it used (keys of ``tail_notes``; empty when none needs a note).
Row = tuple[dict[str, float], tuple[str, ...]]


@dataclass(frozen=True)
class RankTestMethod:
    """One method of the rank tests.

    Attributes
    ----------
    name : str
        The key (``rank_tests(method=name)``).
    label : str
        The method as a short sentence (the table's ``method_label``).
    distribution : str
        The reference distribution of its p-values.
    assumptions : str
        What the method assumes (a note of the table).
    statistic_note : str
        What the ``statistic`` column holds.
    needs : {"moments", "source", "rows"}
        ``"moments"``: the singular values of ``X_lin`` suffice (runs on bare
        moments); ``"source"``: sums over rows, streamed from a row source;
        ``"rows"``: the rows in memory.
    columns : tuple of str
        Columns after ``statistic``, ``df``, ``pvalue``.
    row : callable
        ``row(w, k, options) -> (numbers, tails)``.
    random : bool
        Whether it draws from the seed (and reports progress).
    notes, tail_notes :
        Further notes, always or when a row used the named tail.
    """

    name: str
    label: str
    distribution: str
    assumptions: str
    statistic_note: str
    needs: Literal["moments", "source", "rows"]
    columns: tuple[str, ...]
    row: Callable[[_Whitened, int, RowOptions], Row]
    random: bool = False
    notes: tuple[str, ...] = ()
    #: True when the rows are wanted as the rotated a'^T U, b'^T V (robust test)
    rotated: bool = False
    tail_notes: dict[str, str] = field(default_factory=dict)
    #: ``rows(w, ks, options)``: the rows of the consecutive ranks ``ks`` at
    #: once (the spectral test's pass shares its sign flips); None: row by row
    rows: Callable[[_Whitened, range, RowOptions], list[Row]] | None = None
    #: ``plan(w, top)``: the passes of ``rows`` covering ``0..top``
    plan: Callable[[_Whitened, int], list[range]] | None = None

    @property
    def streams(self) -> bool:
        """True when the method runs on a row source without the rows in memory."""
        return self.needs != "rows"

    @property
    def needs_rows(self) -> bool:
        """True when the method needs sums over rows (not only the singular values)."""
        return self.needs != "moments"


_LAMBDA = "Statistic Lambda_k = m * sum_{j>k} s_j(X_lin)^2 / var(y); "


def _check_exact(w: _Whitened, k: int, name: str) -> float:
    """``d = (n1-k)(n2-k)``; the robust and Wald tests form a ``d x d`` covariance."""
    df = float((w.n1 - k) * (w.n2 - k))
    if df > policy.MAX_EXACT_DIM:
        raise ValueError(
            f"the {name} rank test at k={k} forms the covariance of the "
            f"(n1-k)(n2-k) = {int(df)} complement entries, more than "
            f"{policy.MAX_EXACT_DIM}; use method='general' (two-moment tail for "
            "large d) or fewer variables"
        )
    return df


def _robust_row(w: _Whitened, k: int, opts: RowOptions) -> Row:
    mom = w.robust(k, opts.pair_rng)
    stat = w.statistic(k)
    pv, eff, scale, mc = robust_pvalue(stat, mom)
    return {"statistic": stat, "df": np.nan, "pvalue": pv, "eff_df": eff, "scale": scale,
            "mc_se": mc}, mom.tags


def _wald_row(w: _Whitened, k: int, opts: RowOptions) -> Row:
    df = _check_exact(w, k, "wald")
    if w.m <= df + 1:
        raise ValueError(
            f"the Wald rank test at k={k} needs more than (n1-k)(n2-k) + 1 = "
            f"{int(df) + 1} observations (it estimates the covariance of the "
            f"{int(df)} complement entries); got {w.m}. Use method='robust' "
            "or max_rank"
        )
    res = wald_from_moments(w.complement(k), complement_block(w.s, k, w.n1, w.n2).reshape(-1),
                            n_lost=w.n_lost)
    return {"statistic": res.statistic, "df": float(res.df1), "pvalue": res.pvalue,
            "fstat": res.fstat, "df_denom": float(res.df2)}, ()


def _chi2_row(w: _Whitened, k: int, opts: RowOptions) -> Row:
    stat, df = w.statistic(k), float((w.n1 - k) * (w.n2 - k))
    return {"statistic": stat, "df": df, "pvalue": float(stats.chi2.sf(stat, df))}, ()


def _general_row(w: _Whitened, k: int, opts: RowOptions) -> Row:
    stat = w.statistic(k)
    lam, tr1, tr2 = _general_weights(w, k)
    eff = tr1 * tr1 / tr2 if tr2 > 0 else np.nan
    tails: tuple[str, ...]
    if lam is not None and np.any(lam > 0):
        pv, tails = float(weighted_chi2_sf(stat, lam)), ("imhof",)
    elif tr2 > 0:
        pv = float(stats.chi2.sf(stat * eff / tr1, eff))
        tails = ("bentler-xie",)
    else:
        pv, tails = 1.0, ()
    return {"statistic": stat, "df": np.nan, "pvalue": pv, "eff_df": eff}, tails


def _permutation_row(w: _Whitened, k: int, opts: RowOptions) -> Row:
    stat = w.statistic(k)
    assert opts.rng is not None
    null = _permutation_stats(w, k, opts.n_perm, opts.rng, n_jobs=opts.n_jobs,
                              progress=opts.progress)
    # guard against rounding: a permuted statistic equal to T up to 1e-10 counts as >= T
    pv = float(perm_pvalue(stat * (1 - 1e-10), null))
    return {"statistic": stat, "df": np.nan, "pvalue": pv, "n_perm": float(opts.n_perm)}, ()


def _spectral_rows(w: _Whitened, ks: range, opts: RowOptions) -> list[Row]:
    assert opts.rng is not None
    pv, used = spectral_pvalues(w, ks, opts.n_perm, opts.rng, n_jobs=opts.n_jobs,
                                progress=opts.progress, timing=opts.timing)
    return [({"statistic": spectral_statistic(w, k), "df": np.nan, "pvalue": float(p),
              "n_flips": float(used)}, ("spectral",)) for k, p in zip(ks, pv, strict=True)]


def _spectral_row(w: _Whitened, k: int, opts: RowOptions) -> Row:
    return _spectral_rows(w, range(k, k + 1), opts)[0]


def _registry(*methods: RankTestMethod) -> dict[str, RankTestMethod]:
    return {m.name: m for m in methods}


#: The rank-test methods by key (model: linearmodels' ``COVARIANCE_ESTIMATORS``).
RANK_METHODS: dict[str, RankTestMethod] = _registry(
    RankTestMethod(
        name="robust",
        label="robust two-moment test (scaled chi2 with estimated finite-sample moments)",
        distribution="scaled chi2",
        assumptions=(
            "Robust two-moment test: i.i.d. rows and finite fourth moments of the "
            "influence functions of the complement block; no Gaussian blocks, "
            "homoscedasticity or independent noise needed. Lambda_k is referred to "
            "a scaled chi-square with its finite-sample mean and variance estimated "
            "from the rows (theory of rank tests, section 6)."
        ),
        statistic_note=_LAMBDA,
        needs="source",
        columns=("eff_df", "scale", "mc_se"),
        row=_robust_row,
        tail_notes={
            "pairs": (
                "Rows whose exact variance would cost more than %s flops estimate "
                "sum_{i!=j} <psi_i, psi_j>^2 from importance-sampled row pairs (seeded; "
                "mc_se = Monte Carlo standard error of the p-value, 0 when exact)."
            ),
            "corrected": (
                "Reference at k = 0, and at k >= 1 while d/m <= %s (d = q (n1-k)(n2-k), "
                "q response columns): mean and variance corrected for each row's "
                "influence on the estimated directions (theory of rank tests, section 6d)."
            ),
            "both": (
                "Reference at k >= 1 where d/m > %s: neither reference is derived at "
                "this width, so the p-value is the larger of the corrected and per-row "
                "ones (conservative; study_width); the combined test adds the spectral "
                "test, more powerful there (theory of rank tests, sections 6d-6f)."
            ),
            "per-row": (
                "Reference at k >= 1 where %s < d/m <= %s (or the top-k singular values "
                "or core cannot be inverted): variance including the per-row part "
                "(theory of rank tests, section 6; it held its size in study_width)."
            ),
        },
        rotated=True,
    ),
    RankTestMethod(
        name="wald",
        label="Wald (Kleibergen-Paap type), Hotelling F",
        distribution="F",
        assumptions=(
            "Wald (Kleibergen-Paap type): i.i.d. rows and finite second moments of "
            "the influence functions psi of the complement block C = U_perp' X_lin V_perp, "
            "with nonsingular covariance; no Gaussian blocks, homoscedasticity or "
            "independent noise needed. T_k = m vec(C)' Omega^{-1} vec(C) (Omega the "
            "uncentred second moment of psi, T_k <= m); F = (m - d) T_k / (d (m - T_k)) "
            "~ F(d, m - d) (Hotelling), d = (n1-k)(n2-k). Conservative for heavy-tailed "
            "y, little power for rare binary y."
        ),
        statistic_note="Statistic T_k (Wald, see below); ",
        needs="source",
        columns=("fstat", "df_denom"),
        row=_wald_row,
        notes=("fstat ~ F(df, df_denom).",),
    ),
    RankTestMethod(
        name="chi2",
        label="normal-theory chi-square",
        distribution="chi2",
        assumptions=(
            "Normal theory (valid only under its premise; liberal for heavy-tailed "
            "blocks or noise whose variance depends on the blocks): the whitened "
            "complement coordinates U_perp'a', "
            "V_perp'b' are independent of each other and of (y, U'a', V'b') "
            "(Gaussian blocks independent of each other), so the complement block "
            "has covariance E[y^2] I / m and Lambda_k ~ chi2((n1-k)(n2-k)) as m "
            "grows."
        ),
        statistic_note=_LAMBDA,
        needs="moments",
        columns=(),
        row=_chi2_row,
        notes=("df = (n1 - k)(n2 - k).",),
    ),
    RankTestMethod(
        name="general",
        label="weighted chi-square with estimated weights (Imhof)",
        distribution="weighted chi2",
        assumptions=(
            "General theory: only finite second moments of vec(u y v'); the "
            "covariance Omega of the complement block is estimated from the data "
            "and Lambda_k ~ sum_j w_j chi2_1 with w = eig(Omega) / s_y^2 as m grows "
            "(tail by Imhof's formula)."
        ),
        statistic_note=_LAMBDA,
        needs="source",
        columns=("eff_df",),
        row=_general_row,
        tail_notes={
            "bentler-xie": (
                "Rows with more than %d complement entries use the two-moment "
                "(Bentler-Xie) tail with eff_df = (sum w)^2 / sum w^2."
            ),
        },
    ),
    RankTestMethod(
        name="permutation",
        label="permutation of the complement coordinates (Cook and Yin 2001)",
        distribution="permutation",
        assumptions=(
            "Permutation (Cook and Yin 2001): under H0 the complement coordinates "
            "(U_perp'a', V_perp'b') are independent of (y, U'a', V'b') (normal-theory "
            "premise; liberal for heavy-tailed blocks); their rows "
            "are permuted jointly and the whole statistic (re-whitening included) "
            "recomputed; p = (1 + #{T* >= T}) / (B + 1)."
        ),
        statistic_note=_LAMBDA,
        needs="rows",
        columns=("n_perm",),
        row=_permutation_row,
        random=True,
    ),
    RankTestMethod(
        name="spectral",
        label="spectral bound with cross-fitted projections, sign flips of the rows",
        distribution="sign flips",
        assumptions=(
            "Spectral test (for blocks much wider than the sample): the next singular "
            "value against sign flips of each row's complement coordinates, with "
            "cross-fitted projections; valid when those coordinates are sign-symmetric "
            "given y, the signal and the other block (e.g. elliptical blocks); exact "
            "at k = 0, conservative at k >= 1 (theory of rank tests, section 6e)."
        ),
        statistic_note=(
            "Statistic m * s_{k+1}(X_lin)^2 / var(y) (the (k+1)-th singular value, "
            "not the sum of the squares beyond k); "
        ),
        needs="source",
        columns=("n_flips",),
        row=_spectral_row,
        random=True,
        rows=_spectral_rows,
        plan=pass_plan,
        tail_notes={
            "spectral": (
                "Spectral test: sequential sign flips, p = 10 / L if the 10th flip at or "
                "above the statistic came at flip L (the flips then stop), else "
                "(1 + #{T* >= T}) / (B + 1), B = n_perm; n_flips counts the flips drawn "
                "(theory of rank tests, section 6e)."
            ),
        },
    ),
)


def tail_notes(method: RankTestMethod, tails: set[str]) -> list[str]:
    """The table notes of the tails / references a method's rows used."""
    ratio = f"{policy.ROBUST_CORRECTED_MAX_RATIO:g}"
    limits: dict[str, object] = {"bentler-xie": policy.MAX_EXACT_DIM,
              "not-run": f"{policy.COMBINED_SPECTRAL_MIN_EDGE:g}",
              "pairs": f"{config.ROBUST_EXACT_FLOPS:.3g}", "corrected": ratio,
              "both": f"{policy.ROBUST_BOTH_MIN_RATIO:g}",
              "per-row": (ratio, f"{policy.ROBUST_BOTH_MIN_RATIO:g}")}
    return [method.tail_notes[t] % limits[t] if t in limits else method.tail_notes[t]
            for t in sorted(tails) if t in method.tail_notes]


def flips_needed(ks: range, stats_k: np.ndarray, edge: np.ndarray, p_robust: list[float],
                 n_perm: int) -> tuple[range | None, list[str | None]]:
    """The ranks of a pass at which the combined test draws sign flips, and
    why each other rank draws none.

    A rank needs flips when its spectral statistic reaches
    ``policy.COMBINED_SPECTRAL_MIN_EDGE`` of the noise edge (a prefix of
    ``ks``: the statistic decreases in k; the others ``"not-run"``) and its
    robust p-value exceeds ``1 / (n_perm + 1)``, the smallest p-value the
    flips can give (at or below it the combined p-value is ``2 p_robust``
    whatever they give: ``"not-needed"``).  Returns the range from the first
    such rank to the last (None if none), and per rank of ``ks`` the reason
    (a key of the tail notes) or None for a rank of that range.  Neither rule
    changes a combined p-value."""
    run = int(np.sum(stats_k >= policy.COMBINED_SPECTRAL_MIN_EDGE * edge))
    need = [j for j in range(run) if p_robust[j] > 1.0 / (n_perm + 1)]
    sub = range(ks[need[0]], ks[need[-1]] + 1) if need else None
    why = [None if sub is not None and k in sub else "not-run" if j >= run else "not-needed"
           for j, k in enumerate(ks)]
    return sub, why


def combined_numbers(robust: dict[str, float], p_spectral: float, spectral_stat: float,
                     n_flips: float) -> dict[str, float]:
    """A combined row from its robust row and its spectral p-value (NaN: no flips
    drawn, counted as 1): ``pvalue = min(1, 2 min(p_robust, p_spectral))``."""
    ps = 1.0 if np.isnan(p_spectral) else p_spectral
    return {"statistic": robust["statistic"], "df": np.nan,
            "pvalue": min(1.0, 2.0 * min(robust["pvalue"], ps)),
            "eff_df": robust["eff_df"], "scale": robust["scale"], "mc_se": robust["mc_se"],
            "pvalue_robust": robust["pvalue"], "spectral_statistic": spectral_stat,
            "pvalue_spectral": p_spectral, "n_flips": n_flips}


def _combined_rows(w: _Whitened, ks: range, opts: RowOptions) -> list[Row]:
    # the spectral test runs at the ranks flips_needed names (its p-value is
    # taken as 1 below half the noise edge, where it cannot reject, and is
    # not needed where the robust p-value is below the flips' smallest);
    # the halves and flips are drawn as for the whole pass, so each rank's
    # flips are the whole pass's
    edge = mp_edge(w.n1, w.n2, np.asarray(ks))
    stats_k = np.array([spectral_statistic(w, k) for k in ks])
    robust = [_robust_row(w, k, opts) for k in ks]
    sub, why = flips_needed(ks, stats_k, edge, [r[0]["pvalue"] for r in robust], opts.n_perm)
    spectral = dict(zip(sub, _spectral_rows(w, sub, opts),
                        strict=True)) if sub is not None else {}
    out: list[Row] = []
    for j, k in enumerate(ks):
        rrow, rtails = robust[j]
        if k in spectral:
            srow, stails = spectral[k]
            ps, flips, tails = srow["pvalue"], srow["n_flips"], (*rtails, *stails, "combined")
        else:
            ps, flips, tails = np.nan, 0.0, (*rtails, "combined", str(why[j]))
        out.append((combined_numbers(rrow, ps, stats_k[j], flips), tails))
    return out


def _combined_row(w: _Whitened, k: int, opts: RowOptions) -> Row:
    return _combined_rows(w, range(k, k + 1), opts)[0]


def _combined(robust: RankTestMethod, spectral: RankTestMethod) -> RankTestMethod:
    return RankTestMethod(
        name="combined",
        label="robust and spectral tests, Bonferroni-combined",
        distribution="Bonferroni: scaled chi2 and sign flips",
        assumptions=(
            "Combined test (the default for blocks much wider than the sample): the "
            "robust test (powerful against many weak directions) and the spectral test "
            "(against a few above the noise edge), Bonferroni-combined, so it holds "
            "alpha whenever both hold alpha / 2. "
            + robust.assumptions + " " + spectral.assumptions
        ),
        statistic_note=(
            _LAMBDA + "spectral_statistic = m * s_{k+1}(X_lin)^2 / var(y); "
        ),
        needs="source",
        columns=("eff_df", "scale", "mc_se", "pvalue_robust", "spectral_statistic",
                 "pvalue_spectral", "n_flips"),
        row=_combined_row,
        random=True,
        rotated=True,
        rows=_combined_rows,
        plan=pass_plan,
        notes=robust.notes,
        tail_notes={
            **robust.tail_notes, **spectral.tail_notes,
            "combined": (
                "Combined test: pvalue = min(1, 2 min(pvalue_robust, pvalue_spectral)) "
                "(Bonferroni over the two tests; docs: theory of rank tests, section 6f)."
            ),
            "not-run": (
                "pvalue_spectral NaN (n_flips 0): the spectral test is not run where "
                "spectral_statistic is below %s of the noise edge (sqrt(n1-k) + "
                "sqrt(n2-k))^2, where it cannot reject; its p-value counts as 1."
            ),
            "not-needed": (
                "pvalue_spectral NaN (n_flips 0) where pvalue_robust is at most 1 / "
                "(n_perm + 1), the smallest p-value the sign flips can give: there "
                "pvalue = min(1, 2 pvalue_robust) whatever they give, so they are not drawn."
            ),
        },
    )


RANK_METHODS["combined"] = _combined(RANK_METHODS["robust"], RANK_METHODS["spectral"])
