"""Every automatic choice of the package, and the thresholds it uses (layer 0).

A choice is a function of the data's *shape and values* only: the number of
rows, the blocks' widths, the response's columns, a statistic.  It never
looks at where the rows are stored (in memory, a Parquet file, CSV chunks, a
dask array) nor at a compute budget, so the same data give the same test,
the same numbers and the same rank however they are read.  (A budget in
:mod:`jdr_stats.config` may choose an *algorithm* for the same number,
e.g. exact or sampled sums over row pairs, never which test is run.)

Each choice returns a :class:`Choice`: its ``name``, the ``reason`` (a
sentence for summaries and table notes) and the ``inputs`` it used.  The fit
stores them in its :class:`~jdr_stats.results.FitSettings` and the summary
prints their reasons.

The thresholds are calibrated by studies (named in each comment); changing
one changes results, which is why they are here and not in ``config``.  The
modules read them when they run (``policy.NAME`` inside functions), so a
test may ``monkeypatch.setattr(jdr_stats.policy, "NAME", value)``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = [
    "ASSOCIATION_PERMUTATIONS",
    "ASSOCIATION_SEED",
    "ASSOCIATION_SUMMARY_MAX_ROWS",
    "AUTO_SAMPLE_MAX_RATIO",
    "BLOCK_ROWS",
    "COMBINED_SPECTRAL_MIN_EDGE",
    "KBLOCK_GRAM_MAX_ROWS",
    "KBLOCK_INFLUENCE_MAX_ENTRIES",
    "KBLOCK_SKETCH_MIN_VECTORS",
    "KBLOCK_SKETCH_SEED",
    "KBLOCK_TENSOR_MAX_ENTRIES",
    "KBLOCK_TENSOR_MAX_WORK",
    "KBLOCK_WEIGHTING",
    "Choice",
    "JOINT_DEFAULT_REASON",
    "LADLE_EDGE_DRAWS",
    "LADLE_EDGE_QUANTILE",
    "LADLE_STRONG_EDGE",
    "MAIN_EFFECTS_MAX_DF_SHARE",
    "MAIN_EFFECTS_MAX_PARTIAL_SHARE",
    "MAIN_EFFECTS_PERMUTATIONS",
    "MAIN_EFFECTS_SEED",
    "MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS",
    "MAX_EXACT_DIM",
    "RANK_COMBINED_MIN_RATIO",
    "RANK_TESTS_MAX_RATIO",
    "ROBUST_BOTH_MIN_RATIO",
    "ROBUST_CORRECTED_MAX_RATIO",
    "ROBUST_PAIR_SEED",
    "SPARSITY_CV_FOLDS",
    "SPARSITY_CV_LEVELS",
    "SUPPORT_TESTS_MAX_RATIO",
    "block_estimator",
    "main_effects_method",
    "defaults_table",
    "joint_default_reason",
    "kblock_estimator",
    "kblock_support_estimator",
    "kblock_influence",
    "kblock_route",
    "kblock_whitening",
    "joint_rows_error",
    "kblock_sparsity_cv",
    "kblock_weighting",
    "rank_method",
    "robust_reference",
    "sparsity_cv",
    "sparsity_grid",
    "whitening",
]


@dataclass(frozen=True)
class Choice:
    """An automatic choice: ``name`` (what was chosen), ``reason`` (a sentence
    saying why, for settings and exports), ``inputs`` (the numbers it used)
    and ``brief`` (a shorter reason for a summary's note, empty where the
    reason is short already; :attr:`short` gives the one to print)."""

    name: str
    reason: str
    inputs: dict[str, float] = field(default_factory=dict)
    brief: str = ""

    @property
    def short(self) -> str:
        """The reason a summary prints: ``brief`` when given, else ``reason``."""
        return self.brief or self.reason

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "reason": self.reason, "inputs": dict(self.inputs)}


# -- whitening -----------------------------------------------------------------
#: ``whitening="auto"`` whitens with the sample covariance while the wider
#: block has at most this many columns per row (``max(n1, n2) / m``), and with
#: the OAS-shrunk covariance above it (study ``studies/study_wide.py``).
AUTO_SAMPLE_MAX_RATIO = 0.05


def whitening(nobs: int, n1: int, n2: int, joint: bool = False) -> Choice:
    """What ``whitening="auto"`` stands for: ``"sample"`` while the widest
    covariance the estimator whitens with has at most
    ``AUTO_SAMPLE_MAX_RATIO`` columns per row, else ``"shrinkage"``.

    That covariance is the wider block's (``max(n1, n2) / nobs``) for the
    per-block estimator and the covariance of both blocks together
    (``(n1 + n2) / nobs``) for the joint estimator (``joint=True``): the
    study ``studies/study_wide.py`` calibrated the ratio on the columns of
    the covariance being inverted, and the joint estimator inverts one of
    ``n1 + n2`` columns (the guide page "Which estimator is the default and
    why").

    Examples
    --------
    >>> whitening(1000, 10, 20).name, whitening(100, 10, 20).name
    ('sample', 'shrinkage')
    >>> whitening(500, 10, 20).name, whitening(500, 10, 20, joint=True).name
    ('sample', 'shrinkage')
    """
    width, what = (n1 + n2, "(n1 + n2)/m") if joint else (max(n1, n2), "max(n1, n2)/m")
    inputs = {"nobs": float(nobs), "n1": float(n1), "n2": float(n2)}
    return _auto_whitening(nobs, width, what, joint, inputs)


def _auto_whitening(nobs: int, width: int, what: str, joint: bool,
                    inputs: dict[str, float]) -> Choice:
    """The rule of :func:`whitening` on a covariance of ``width`` columns,
    ``what`` naming its ratio in the reason."""
    ratio = width / nobs
    inputs = {**inputs, "ratio": ratio}
    if ratio <= AUTO_SAMPLE_MAX_RATIO:
        return Choice("sample", (
            f"auto: {what} = {ratio:.3g} <= {AUTO_SAMPLE_MAX_RATIO}, the sample "
            "covariance is well estimated"), inputs,
            brief=f"auto: {what} = {ratio:.3g} <= {AUTO_SAMPLE_MAX_RATIO}")
    oas = ("OAS shrinkage of the correlation matrix of both blocks together" if joint
           else "OAS shrinkage of each block's correlation matrix")
    return Choice("shrinkage", (
        f"auto: {what} = {ratio:.3g} > {AUTO_SAMPLE_MAX_RATIO}, the sample "
        "covariance is noisy" + (" (singular)" if ratio >= 1 else "") + f"; {oas}"), inputs,
        brief=f"auto: {what} = {ratio:.3g} > {AUTO_SAMPLE_MAX_RATIO}; OAS, "
              + ("both blocks together" if joint else "per block"))


# -- the estimator: whitening per block or across blocks ------------------------
#: What the summary says of the default estimator (``independent_blocks=False``).
JOINT_DEFAULT_REASON = (
    "default: the joint estimator, valid when the blocks correlate; "
    "independent_blocks=True for the paper's per-block estimator, which assumes "
    "independent blocks")


#: The summary's shorter form of :data:`JOINT_DEFAULT_REASON` (the whitening
#: it uses is the whitening note's; the settings keep the full reason).
JOINT_DEFAULT_BRIEF = (
    "default: each block's residual on the other, valid when the blocks correlate; "
    "independent_blocks=True: the paper's")


def joint_default_reason(detail: str) -> str:
    """:data:`JOINT_DEFAULT_REASON` with ``detail`` (what the joint estimator
    is here) right after the estimator it describes.

    Examples
    --------
    >>> joint_default_reason("rows")[:40]
    'default: the joint estimator (rows), val'
    """
    return (f"default: the joint estimator ({detail}), valid when the blocks correlate; "
            "independent_blocks=True for the paper's per-block estimator, which assumes "
            "independent blocks")


def joint_rows_error(nobs: int, widths: tuple[int, ...], what: str) -> ValueError:
    """The error where the joint estimator's whitening (the sample covariance
    of all blocks together) is singular: ``what`` needs ``sum(n_k) + 2``
    rows; the message names ``independent_blocks`` and what would run.

    Examples
    --------
    >>> str(joint_rows_error(60, (30, 30, 30), "its whitening"))[:66]
    'independent_blocks=False (the joint estimator) needs at least sum('
    """
    p = int(sum(widths))
    label = "n1 + n2" if len(widths) == 2 else "sum(n_k)"
    return ValueError(
        f"independent_blocks=False (the joint estimator) needs at least {label} + 2 = "
        f"{p + 2} rows for {what} (the sample covariance of all blocks together is "
        f"singular otherwise); got {nobs}: pass independent_blocks=True for the per-block "
        "estimator, which assumes independent blocks")


def block_estimator(requested: object, nobs: int, n1: int, n2: int,
                    whitening: str) -> Choice:
    """What ``fit(independent_blocks=...)`` stands for with two blocks:
    ``"joint"`` (``False``, the default: each block's residual on the other
    block, whitened by its partial covariance, valid when the blocks
    correlate) or ``"per-block"`` (``True``: the paper's estimator, each
    block whitened alone, which assumes independent blocks).

    The estimator asked for is the estimator fitted: the choice is the
    user's, never made from the data's values (a pre-test of independence
    choosing between them would change the level of every test after it;
    the study ``studies/study_correlated_blocks.py`` compares them, the
    guide page "Which estimator is the default and why") nor from their
    shape.  Where the joint estimator cannot run a ``ValueError`` names
    ``independent_blocks`` and what would run: ``whitening="sample"`` needs
    ``m >= n1 + n2 + 2`` rows.  ``"shrinkage"`` (which ``"auto"`` gives
    there) whitens at any width; the joint estimator's rank and coordinate
    tests, which whiten with the sample covariance of both blocks together,
    then refuse below ``n1 + n2 + 2`` rows
    (:func:`jdr_stats.estimation._estimate.check_tests_feasible`).  ``whitening`` is
    the covariance of both blocks together the joint estimator uses; with
    ``"diagonal"`` and ``"none"`` it is block diagonal, so the joint
    whitening is the per-block one.

    Examples
    --------
    >>> block_estimator(False, 1000, 10, 20, "sample").name
    'joint'
    >>> block_estimator(True, 1000, 10, 20, "sample").name
    'per-block'
    >>> block_estimator(False, 25, 10, 20, "shrinkage").name
    'joint'
    >>> block_estimator(False, 25, 10, 20, "sample")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: independent_blocks=False (the joint estimator) with ... independent blocks
    """
    if requested is not True and requested is not False:
        raise ValueError(f"independent_blocks must be True or False; got {requested!r}")
    inputs = {"nobs": float(nobs), "n1": float(n1), "n2": float(n2)}
    if requested:
        return Choice("per-block", "given: independent_blocks=True, the per-block "
                      "estimator (the paper's), which assumes independent blocks", inputs)
    if whitening == "sample" and nobs < n1 + n2 + 2:
        raise ValueError(
            f'independent_blocks=False (the joint estimator) with whitening="sample" needs at '
            f"least n1 + n2 + 2 = {n1 + n2 + 2} rows (the sample covariance of both blocks "
            f'together is singular otherwise); got {nobs}: use whitening="shrinkage" (or '
            '"auto"), or pass independent_blocks=True for the per-block estimator, which '
            "assumes independent blocks")
    why = {"sample": "with the sample covariance of both blocks together",
           "shrinkage": "with the OAS-shrunk covariance of both blocks together",
           "diagonal": "with the SDs only: the joint whitening is then the per-block one",
           "none": "centring only: the joint whitening is then the per-block one"}
    return Choice("joint", joint_default_reason(
        f"each block's residual on the other block, whitened {why.get(whitening, whitening)}"),
        inputs, brief=JOINT_DEFAULT_BRIEF + (
            "; with this whitening it is the per-block one" if whitening in ("diagonal", "none")
            else ""))


# -- rank tests ----------------------------------------------------------------
#: From this ``q n1 n2 / m`` on (``q`` response columns) the default rank
#: method (``"auto"``) is the combined test (theory 6f, 6g), whatever the
#: number of rows and wherever they are stored; below it, the robust test.
#: There the robust test's references are in their conservative range and can
#: miss a direction just above the noise edge, which the spectral test finds
#: (studies ``check_paper_auto.py`` and ``study_spectral.py``; figures in
#: ``studies/results/policy.md``).
RANK_COMBINED_MIN_RATIO = 5.0

#: The combined rank test runs its spectral part only at the ranks whose
#: statistic ``m s_{k+1}^2 / var(y)`` is at least this share of the noise edge
#: ``(sqrt(n1-k) + sqrt(n2-k))^2``; below it the spectral p-value counts as 1
#: (the Bonferroni bound holds whatever the rule), which saves its sign flips
#: where it cannot reject (study ``check_paper_auto.py``; figures in
#: ``studies/results/policy.md``).
COMBINED_SPECTRAL_MIN_EDGE = 0.5

#: Widest ``max(n1, n2) / m`` at which the default (robust) rank test held its
#: size; wider, it was conservative with little power, or liberal for a rare
#: binary response (studies ``study_wide.py`` and ``study_width.py``; figures
#: in ``studies/results/policy.md``).  Above it the premise checks'
#: small-sample message (``m < n1 n2``) says so (the rank tests and
#: ``fit(rank="auto")`` warn with it).
RANK_TESTS_MAX_RATIO = 0.1

#: The robust rank test's reference at rank ``k`` is the self-influence
#: corrected one (theory 6d) while ``d / m`` is at most this,
#: ``d = q (n1 - k)(n2 - k)``; above it the per-row reference of theory 6, up
#: to ``ROBUST_BOTH_MIN_RATIO``.
ROBUST_CORRECTED_MAX_RATIO = 0.2

#: Above this ``d / m`` the robust test reports the larger of the corrected
#: and per-row p-values (theory 6d, "Above the bound": neither reference is
#: derived there, and in the width study ``study_width.py`` each was liberal
#: on one design there; figures in ``studies/results/policy.md``).
ROBUST_BOTH_MIN_RATIO = 5.0

#: Largest number of complement entries ``d = (n1 - k)(n2 - k)`` for which
#: the rank tests form the (d x d) covariance of the complement; above it the
#: general test uses its moment-matched tail (not the exact weights) and the
#: robust and Wald tests refuse the row.
MAX_EXACT_DIM = 2048

#: Seed of the robust test's row pairs when ``rank_tests`` gets no ``seed``
#: (so that the default test is a deterministic function of the data).
ROBUST_PAIR_SEED = 20261126


def rank_method(nobs: int, n1: int, n2: int, q: int = 1) -> Choice:
    """What ``rank_method="auto"`` stands for: ``"combined"`` (the robust and
    the spectral tests, Bonferroni-combined; theory 6f) when
    ``q n1 n2 / nobs >= RANK_COMBINED_MIN_RATIO``, else ``"robust"``.

    The rule sees the shape only: the combined test streams its sign flips
    over a row source as it runs over rows in memory, with the same numbers.

    Examples
    --------
    >>> rank_method(400, 50, 50).name, rank_method(2000, 10, 10).name
    ('combined', 'robust')
    """
    ratio = q * n1 * n2 / nobs
    inputs = {"nobs": float(nobs), "n1": float(n1), "n2": float(n2), "q": float(q),
              "ratio": ratio}
    name = "n1 n2 / m" if q == 1 else f"q n1 n2 / m (q = {q})"
    short = "n1 n2 / m" if q == 1 else "q n1 n2 / m"
    limit = RANK_COMBINED_MIN_RATIO
    if ratio < limit:
        return Choice("robust", (
            f"method='auto': {name} = {ratio:.3g} < {limit:g}, so the robust test "
            "(its references hold at this width)"), inputs,
            brief=f"method='auto': {short} = {ratio:.3g} < {limit:g}")
    return Choice("combined", (
        f"method='auto': {name} = {ratio:.3g} >= {limit:g}, so the combined test (robust "
        "and spectral tests, Bonferroni-combined; theory 6f)"), inputs,
        brief=f"method='auto': {short} = {ratio:.3g} >= {limit:g}; robust and spectral, "
              "Bonferroni-combined")


def robust_reference(d: int, nobs: int) -> Choice:
    """The robust test's reference at a positive rank with ``d`` complement
    entries (``q (n1 - k)(n2 - k)``): ``"corrected"`` while
    ``d / nobs <= ROBUST_CORRECTED_MAX_RATIO``, ``"per-row"`` up to
    ``ROBUST_BOTH_MIN_RATIO``, ``"both"`` beyond."""
    ratio = d / nobs
    inputs = {"d": float(d), "nobs": float(nobs), "ratio": ratio}
    if ratio <= ROBUST_CORRECTED_MAX_RATIO:
        return Choice("corrected", f"d/m = {ratio:.3g} <= {ROBUST_CORRECTED_MAX_RATIO:g}",
                      inputs)
    if ratio <= ROBUST_BOTH_MIN_RATIO:
        return Choice("per-row", f"{ROBUST_CORRECTED_MAX_RATIO:g} < d/m = {ratio:.3g} <= "
                      f"{ROBUST_BOTH_MIN_RATIO:g}", inputs)
    return Choice("both", f"d/m = {ratio:.3g} > {ROBUST_BOTH_MIN_RATIO:g}", inputs)


# -- support tests ---------------------------------------------------------------
#: Widest ``max(n1, n2) / m`` at which the support tests run
#: (``fit(sparsity="auto")``, ``JointDimReduction.select_support``): up to it
#: their false discovery proportion was near its nominal level, above it far
#: over it (study ``study_wide.py``; figures in ``studies/results/policy.md``),
#: so above this they refuse.
SUPPORT_TESTS_MAX_RATIO = 0.1


# -- ladle ---------------------------------------------------------------------
#: The ladle's noise edge (theory section 9, ``inference/_ladle_criterion``):
#: the quantile, over ``LADLE_EDGE_DRAWS`` sign-flip draws of the complement
#: block's noise, of its squared top singular value; the criterion's
#: eigenvalue part counts only the excess of ``s_{k+1}^2`` over it.
LADLE_EDGE_QUANTILE = 0.9
#: Sign-flip draws of the complement block's noise behind the ladle's edge
#: (one pass over the rows; cost ``O(draws m n1 n2)``).
LADLE_EDGE_DRAWS = 20
#: Sample directions with ``s_j^2`` above this multiple of the
#: Marchenko-Pastur edge of the Poisson replicates' noise are projected off
#: before that edge is measured (their noise is not the complement's).
LADLE_STRONG_EDGE = 2.0


# -- the test of no association at p >> n ------------------------------------------
#: Permutations of the summary's test of no association (``association_test``),
#: run where the rank tests do not (``association_in_summary``); 199 keep a
#: p-value's resolution at 0.005 and cost well under a second at these widths
#: (``studies/study_association.py``).
ASSOCIATION_PERMUTATIONS = 199

#: Seed of the summary's test of no association (the summary is a
#: deterministic function of the fit).
ASSOCIATION_SEED = 0

#: Rows above which the summary prints how to run the test instead of running it
#: (its kernel has m^2 entries).
ASSOCIATION_SUMMARY_MAX_ROWS = 2000


def association_in_summary(nobs: int, n1: int, n2: int) -> bool:
    """Whether the summary shows the test of no association and the caveat
    that R-squared and the directions are descriptive only: at ``p >> n``
    (``n1 + n2 >= m``) or where the rank tests refuse (``m < max(n1, n2) + 2``).

    Examples
    --------
    >>> association_in_summary(40, 120, 21), association_in_summary(500, 10, 8)
    (True, False)
    """
    return n1 + n2 >= nobs or nobs < max(n1, n2) + 2


# -- cross-validated sparsity (fit(sparsity="cv")) ----------------------------------
#: Folds of the cross-validation of ``fit(sparsity="cv")`` (K-fold over rows).
#: Five keeps eight held-out rows per fold at m = 40 and a training set of
#: 4/5 of the rows, close to the fit's (``studies/study_sparse_wide.py``).
SPARSITY_CV_FOLDS = 5

#: Candidate sparsities per block of ``fit(sparsity="cv")``: this many
#: geometrically spaced counts from the rank to the block's width (rounded,
#: duplicates dropped; the dense fit is the last candidate).
SPARSITY_CV_LEVELS = 8


def sparsity_grid(n: int, rank: int, levels: int | None = None) -> list[int]:
    """The candidate sparsities of one block of ``n`` variables for
    ``fit(sparsity="cv")``: ``levels`` (default ``SPARSITY_CV_LEVELS``)
    geometrically spaced counts from ``rank`` to ``n``, rounded, distinct.

    Examples
    --------
    >>> sparsity_grid(21, 1)
    [1, 2, 4, 6, 9, 14, 21]
    >>> sparsity_grid(3, 2)
    [2, 3]
    """
    levels = SPARSITY_CV_LEVELS if levels is None else int(levels)
    if n <= rank:
        return [int(n)]
    grid = np.unique(np.round(np.geomspace(rank, n, levels)).astype(int))
    return [int(g) for g in grid]


def sparsity_cv(best: tuple[int, int], chosen: tuple[int, int], best_score: float,
                best_se: float, n_pairs: int, folds: int) -> Choice:
    """The record of ``fit(sparsity="cv")``: the sparsest ``(s1, s2)`` (fewest
    ``s1 + s2``) whose mean out-of-fold R-squared is within one standard
    error of the best pair's (``best``), over ``n_pairs`` candidates and
    ``folds`` folds.  A best score at or below zero means no candidate
    predicts y better than its mean: the reason says so.

    Examples
    --------
    >>> c = sparsity_cv((5, 4), (3, 2), 0.41, 0.05, 56, 5)
    >>> c.name
    '(3, 2)'
    """
    inputs = {"s1": float(chosen[0]), "s2": float(chosen[1]),
              "best_s1": float(best[0]), "best_s2": float(best[1]),
              "best_cv_rsquared": float(best_score), "best_se": float(best_se),
              "candidates": float(n_pairs), "folds": float(folds)}
    reason = (f"cv: {folds}-fold out-of-fold R-squared of y on the reduced features over "
              f"{n_pairs} (s1, s2); best {best} at {best_score:.3g} (SE {best_se:.2g}); "
              "the sparsest within one SE of it")
    if not best_score > 0:
        reason += ("; no candidate predicts y better than its mean out of fold, so the "
                   "selected variables are not supported by the data")
    return Choice(f"({chosen[0]}, {chosen[1]})", reason, inputs)


def kblock_sparsity_cv(best: dict[str, int], chosen: dict[str, int], best_score: float,
                       best_se: float, n_candidates: int, folds: int) -> Choice:
    """The record of ``fit(sparsity="cv")`` for three or more blocks: one
    common count ``s`` for every block (block ``k`` keeps
    ``min(n_k, max(r_k, s))``), the smallest whose mean out-of-fold
    R-squared is within one standard error of the best candidate's.

    Examples
    --------
    >>> c = kblock_sparsity_cv({"g": 5, "l": 5}, {"g": 3, "l": 3}, 0.4, 0.05, 8, 5)
    >>> c.name
    'g=3, l=3'
    """
    inputs = {"best_cv_rsquared": float(best_score), "best_se": float(best_se),
              "candidates": float(n_candidates), "folds": float(folds),
              **{f"s_{n}": float(s) for n, s in chosen.items()},
              **{f"best_s_{n}": float(s) for n, s in best.items()}}
    label = ", ".join(f"{n}={s}" for n, s in chosen.items())
    reason = (f"cv: {folds}-fold out-of-fold R-squared of y on the reduced features and "
              f"their products across blocks over {n_candidates} common counts; best "
              f"{', '.join(f'{n}={s}' for n, s in best.items())} at {best_score:.3g} "
              f"(SE {best_se:.2g}); the smallest within one SE of it")
    if not best_score > 0:
        reason += ("; no candidate predicts y better than its mean out of fold, so the "
                   "selected variables are not supported by the data")
    return Choice(label, reason, inputs)

# -- the per-block test of main effects ----------------------------------------------
#: The robust (sandwich) test of main effects runs while its degrees of freedom
#: ``P = q n_k`` are at most this share of the rows left ``nu`` (``m - 1``
#: minus the covariates and, under the joint estimator, the other block's
#: columns); above it the sandwich's inverse is too noisy for its F reference
#: (study ``studies/study_main_effects.py``).
MAIN_EFFECTS_MAX_DF_SHARE = 0.25

#: The conditional (Freedman-Lane) test of main effects runs while the columns
#: it partials out (the other blocks under the joint estimator, the
#: covariates) are at most this share of ``m - 1``: as many rows left as
#: columns partialled; beyond it the marginal test runs under the joint
#: estimator (study ``studies/study_main_effects.py --part conditional``).
MAIN_EFFECTS_MAX_PARTIAL_SHARE = 0.5

#: Permutations and seed of the summary's main-effects tests where the
#: permutation version runs.
MAIN_EFFECTS_PERMUTATIONS = 199
MAIN_EFFECTS_SEED = 0

#: Rows above which the summary does not run a permutation version.
MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS = 2000


def main_effects_method(m: int, df: int, *, n_other: int | None, n_adjusted: int = 0,
                        requested: str = "auto", covariates_kept: bool = True,
                        n_blocks: int = 2) -> Choice:
    """How one block's main effect is tested, from the rows ``m``, the
    degrees of freedom ``df = q n_k``, the columns of the other blocks
    ``n_other`` (None: the per-block fit, which tests the marginal first
    moment) and the covariate columns ``n_adjusted``.

    ``nu = m - 1 - n_adjusted - n_other`` rows are left for the test of the
    fit's hypothesis (block ``k`` given the other blocks and the covariates).
    In order:

    1. ``"robust"`` (the sandwich score test, F reference) while
       ``df <= MAIN_EFFECTS_MAX_DF_SHARE * nu``;
    2. ``"permutation"`` (rows of ``y`` permuted; exact when ``y`` is
       independent of the block) for the marginal test without covariates;
    3. ``"Freedman-Lane"`` (the residuals of ``y`` on the partialled columns
       permuted; asymptotically valid, not exact) while the columns
       partialled out are at most ``MAIN_EFFECTS_MAX_PARTIAL_SHARE`` of
       ``m - 1`` (as many rows left as columns partialled);
    4. under the joint estimator, where the other blocks cannot be
       partialled out: the marginal test, ``"permutation (marginal)"``
       (exact) or with covariates ``"Freedman-Lane (marginal)"``;
    5. else ``"refused"`` with the reason.

    A ``requested`` method is checked against the same limits
    (``"permutation"``: steps 2-5).  ``n_blocks`` only words the reason.

    Examples
    --------
    >>> main_effects_method(200, 20, n_other=None).name
    'robust'
    >>> main_effects_method(40, 120, n_other=None).name
    'permutation'
    >>> main_effects_method(2000, 684, n_other=64).name
    'Freedman-Lane'
    >>> main_effects_method(40, 120, n_other=21).name
    'permutation (marginal)'
    >>> main_effects_method(40, 20, n_other=None, n_adjusted=30).name
    'refused'
    """
    share, part_share = MAIN_EFFECTS_MAX_DF_SHARE, MAIN_EFFECTS_MAX_PARTIAL_SHARE
    joint = n_other is not None
    partialled = n_adjusted + (n_other or 0)
    nu = m - 1 - partialled
    inputs = {"m": float(m), "df": float(df), "nu": float(nu),
              "partialled": float(partialled), "n_adjusted": float(n_adjusted)}
    robust_ok = nu > 0 and df <= share * nu
    if nu > 0:
        why_wide = (f"q n_k = {df} > {share:g} of the {nu} rows left: the sandwich cannot "
                    "be inverted reliably")
    else:
        why_wide = f"no rows are left for the test (m minus the columns it adjusts for: {nu})"
    if requested == "robust" or (requested == "auto" and robust_ok):
        if not robust_ok:
            return Choice("refused", f"robust test refused: {why_wide}", inputs)
        return Choice("robust", ("given" if requested == "robust" else
                                 f"auto: q n_k = {df} <= {share:g} of the {nu} rows left"),
                      inputs)
    head = "given" if requested == "permutation" else f"auto: {why_wide}"
    if partialled == 0:
        return Choice("permutation", f"{head}; exact when y is independent of the block",
                      inputs)
    others = "the other block" + ("s" if n_blocks > 2 else "")
    what = " and ".join(w for w, n in ((others,
                                        n_other), ("the covariates", n_adjusted)) if n)
    no_z = ("the covariates' columns are not kept by this model (a streamed source), so "
            "their fit cannot be repeated for the permuted residuals")
    if partialled <= part_share * (m - 1) and (covariates_kept or not n_adjusted):
        return Choice("Freedman-Lane", (
            f"{head}; residuals of y on {what} ({partialled} columns, at most "
            f"{part_share:g} of m - 1 = {m - 1}) permuted: asymptotically valid, not exact"),
            inputs)
    why_not = (no_z if n_adjusted and not covariates_kept else
               f"{what} cannot be partialled out: {partialled} columns > {part_share:g} of "
               f"m - 1 = {m - 1}")
    if not joint:
        return Choice("refused", f"{head}; {why_not}", inputs)
    if n_adjusted == 0:
        return Choice("permutation (marginal)", (
            f"{head}; {why_not}: the block's MARGINAL association with y is tested instead "
            f"(not given {others}), exact when y is independent of the block"), inputs)
    if n_adjusted <= part_share * (m - 1) and covariates_kept:
        return Choice("Freedman-Lane (marginal)", (
            f"{head}; {why_not}: the block's MARGINAL association with y given the "
            f"covariates only is tested instead (not given {others}), residuals of y "
            "on the covariates permuted: asymptotically valid, not exact"), inputs)
    return Choice("refused", f"{head}; {why_not}; the marginal test cannot run either "
                  f"({no_z if not covariates_kept else 'too many covariate columns'})",
                  inputs)


# -- seeding of row-wise random draws ------------------------------------------------
#: Rows per block of row-wise random draws: the Poisson-bootstrap weights and
#: the spectral test's halves and sign flips draw each block of this many rows
#: from its own spawned generator, so a row's draw does not depend on how the
#: rows are chunked or stored.  Changing it changes every such replicate.
BLOCK_ROWS = 1 << 14


def defaults_table() -> list[tuple[str, object, str]]:
    """``(name, value, what it decides)`` of every threshold above: the source
    of the docs' table of defaults."""
    return [
        ("AUTO_SAMPLE_MAX_RATIO", AUTO_SAMPLE_MAX_RATIO,
         'whitening="auto": sample covariance up to this max(n1, n2)/m, shrinkage above'),
        ("RANK_COMBINED_MIN_RATIO", RANK_COMBINED_MIN_RATIO,
         'rank_method="auto": the combined test from this q n1 n2 / m on, the robust test below'),
        ("COMBINED_SPECTRAL_MIN_EDGE", COMBINED_SPECTRAL_MIN_EDGE,
         "combined test: sign flips only where the spectral statistic reaches this share "
         "of the noise edge"),
        ("RANK_TESTS_MAX_RATIO", RANK_TESTS_MAX_RATIO,
         "rank tests: the premise checks warn above this max(n1, n2)/m"),
        ("ROBUST_CORRECTED_MAX_RATIO", ROBUST_CORRECTED_MAX_RATIO,
         "robust test: the corrected reference up to this d/m, per-row above"),
        ("ROBUST_BOTH_MIN_RATIO", ROBUST_BOTH_MIN_RATIO,
         "robust test: the larger of both references' p-values above this d/m"),
        ("MAX_EXACT_DIM", MAX_EXACT_DIM,
         "general test: exact weights up to this many complement entries"),
        ("SUPPORT_TESTS_MAX_RATIO", SUPPORT_TESTS_MAX_RATIO,
         "support tests: refused above this max(n1, n2)/m"),
        ("SPARSITY_CV_FOLDS", SPARSITY_CV_FOLDS, 'sparsity="cv": folds over rows'),
        ("SPARSITY_CV_LEVELS", SPARSITY_CV_LEVELS,
         'sparsity="cv": candidate sparsities per block (geometric, rank to width)'),
        ("LADLE_EDGE_QUANTILE", LADLE_EDGE_QUANTILE, "ladle: quantile of the noise edge"),
        ("LADLE_EDGE_DRAWS", LADLE_EDGE_DRAWS, "ladle: sign-flip draws of the noise edge"),
        ("LADLE_STRONG_EDGE", LADLE_STRONG_EDGE,
         "ladle: directions above this multiple of the edge projected off"),
        ("ASSOCIATION_PERMUTATIONS", ASSOCIATION_PERMUTATIONS,
         "summary at p >> n: permutations of the test of no association"),
        ("ASSOCIATION_SEED", ASSOCIATION_SEED, "summary at p >> n: seed of that test"),
        ("ASSOCIATION_SUMMARY_MAX_ROWS", ASSOCIATION_SUMMARY_MAX_ROWS,
         "summary at p >> n: that test runs up to this many rows (else how to run it)"),
        ("MAIN_EFFECTS_MAX_DF_SHARE", MAIN_EFFECTS_MAX_DF_SHARE,
         "main-effects test: the robust version up to this q n_k / (rows left), "
         "permutation (or refusal) above"),
        ("MAIN_EFFECTS_MAX_PARTIAL_SHARE", MAIN_EFFECTS_MAX_PARTIAL_SHARE,
         "main-effects test: the conditional (Freedman-Lane) version while the columns "
         "partialled out are at most this share of m - 1; the marginal test above"),
        ("MAIN_EFFECTS_PERMUTATIONS", MAIN_EFFECTS_PERMUTATIONS,
         "summary: permutations of the main-effects test's permutation version"),
        ("MAIN_EFFECTS_SEED", MAIN_EFFECTS_SEED, "summary: seed of those permutations"),
        ("MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS", MAIN_EFFECTS_SUMMARY_MAX_PERM_ROWS,
         "summary: the permutation version runs up to this many rows (robust only above)"),
        ("BLOCK_ROWS", BLOCK_ROWS, "rows per seeded block of row-wise random draws"),
        ("JOINT_DEFAULT_REASON", JOINT_DEFAULT_REASON,
         "the estimator's reason in the summary and settings where independent_blocks=False "
         "(the default) gives the joint estimator (two blocks: block_estimator; the K-block "
         "engine: kblock_estimator; where it cannot run, an error, never the per-block one)"),
        ("KBLOCK_TENSOR_MAX_ENTRIES", KBLOCK_TENSOR_MAX_ENTRIES,
         "K-block fit: forms the K-way tensor up to this many entries, its Khatri-Rao "
         "sketch above"),
        ("KBLOCK_TENSOR_MAX_WORK", KBLOCK_TENSOR_MAX_WORK,
         "K-block fit: most m q prod n_k of the tensor route (its product's multiply-adds)"),
        ("KBLOCK_SKETCH_MIN_VECTORS", KBLOCK_SKETCH_MIN_VECTORS,
         "K-block fit: fewest test vectors of the sketch (else sum(n_k))"),
        ("KBLOCK_SKETCH_SEED", KBLOCK_SKETCH_SEED,
         "K-block fit: seed of the sketch's test vectors (same data, same numbers)"),
        ("KBLOCK_GRAM_MAX_ROWS", KBLOCK_GRAM_MAX_ROWS,
         "K-block fit: most rows of the per-block rank tests (m x m matrices)"),
        ("KBLOCK_INFLUENCE_MAX_ENTRIES", KBLOCK_INFLUENCE_MAX_ENTRIES,
         "K-block rank tests: most entries of the jackknife's per-row influences"),
        ("KBLOCK_WEIGHTING", KBLOCK_WEIGHTING,
         "K-block fit: weights of the pieces in each block's combined Gram"),
        ("ROBUST_PAIR_SEED", ROBUST_PAIR_SEED,
         "robust test: seed of its row pairs when none is given"),
    ]


# -- K >= 3 blocks ---------------------------------------------------------------
#: Largest number of entries ``q prod_k n_k`` of the K-way cross-moment tensor
#: that a K-block fit forms (40 MB of doubles); above it, or above
#: ``KBLOCK_TENSOR_MAX_WORK``, the K-way piece is read through its Khatri-Rao
#: sketch (``O(m s sum n_k)``, memory independent of ``m``; noisier than the
#: tensor: docs/theory/k_blocks.md, section "Computation", and
#: ``studies/bench_kblocks.py``).
KBLOCK_TENSOR_MAX_ENTRIES = 5_000_000

#: Largest ``m q prod_k n_k`` (multiply-adds of forming the tensor in one
#: product) of the tensor route: a few seconds on one core.
KBLOCK_TENSOR_MAX_WORK = 5e10

#: Most rows of the per-block rank tests of a K-block fit (``m x m`` matrices
#: of doubles).
KBLOCK_GRAM_MAX_ROWS = 6000

#: Fewest test vectors of the K-way piece's sketch; a fit uses
#: ``max(KBLOCK_SKETCH_MIN_VECTORS, sum_k n_k)`` (cost about that of the
#: covariance of all blocks together; ``studies/bench_kblocks.py``).
KBLOCK_SKETCH_MIN_VECTORS = 64

#: Seed of the sketch's Rademacher test vectors: a constant, so the same data
#: (whatever their storage or order of chunks) give the same numbers.
KBLOCK_SKETCH_SEED = 20_240_501

#: The weights of the pieces in each block's combined Gram of a K-block fit:
#: ``"sqrt"`` (``c_S = D_S^{-1/2}``: every piece's null noise fluctuation the
#: same), from the comparison of ``"unit"``, ``"sqrt"`` and ``"columns"`` in
#: ``studies/study_k_blocks.py`` (figures in its results file).
KBLOCK_WEIGHTING = "sqrt"


def kblock_route(nobs: int, widths: tuple[int, ...], q: int = 1) -> Choice:
    """How a K-block fit forms its K-way piece: ``"tensor"`` while the tensor
    has at most ``KBLOCK_TENSOR_MAX_ENTRIES`` entries and forming it at most
    ``KBLOCK_TENSOR_MAX_WORK`` multiply-adds, else ``"sketch"``: its
    mode unfoldings applied to ``s = max(KBLOCK_SKETCH_MIN_VECTORS, sum n_k)``
    Khatri-Rao test vectors seeded by ``KBLOCK_SKETCH_SEED`` (``inputs``
    carry ``vectors`` and ``seed``).  The pairs are tensors on both routes.
    The choice reads the shape only; it chooses an algorithm, not the
    estimator (docs/theory/k_blocks.md, section "Computation", states
    what the sketch changes).

    Examples
    --------
    >>> kblock_route(500, (5, 5, 5)).name, kblock_route(500, (200, 200, 200)).name
    ('tensor', 'sketch')
    >>> kblock_route(20_000, (100, 100, 100)).name, kblock_route(10**5, (100, 100, 100)).name
    ('tensor', 'sketch')
    >>> int(kblock_route(500, (200, 200, 200)).inputs["vectors"])
    600
    """
    entries = float(q)
    for n in widths:
        entries *= n
    vectors = max(KBLOCK_SKETCH_MIN_VECTORS, int(sum(widths)))
    inputs = {"nobs": float(nobs), "entries": entries, "q": float(q)}
    if len(widths) < 3:
        return Choice("tensor", "two blocks: the pair's cross moments formed", inputs)
    work = entries * nobs
    if entries <= KBLOCK_TENSOR_MAX_ENTRIES and work <= KBLOCK_TENSOR_MAX_WORK:
        return Choice("tensor", f"the K-way tensor has q prod n_k = {entries:.0f} <= "
                      f"{KBLOCK_TENSOR_MAX_ENTRIES} entries and m q prod n_k = {work:.3g} <= "
                      f"{KBLOCK_TENSOR_MAX_WORK:.3g}: formed", inputs)
    inputs.update(vectors=float(vectors), seed=float(KBLOCK_SKETCH_SEED))
    why = (f"would have {entries:.0f} > {KBLOCK_TENSOR_MAX_ENTRIES} entries"
           if entries > KBLOCK_TENSOR_MAX_ENTRIES else
           f"would cost m q prod n_k = {work:.3g} > {KBLOCK_TENSOR_MAX_WORK:.3g}")
    return Choice("sketch", f"the K-way tensor {why}: its mode unfoldings applied to "
                  f"{vectors} Khatri-Rao test vectors (seed {KBLOCK_SKETCH_SEED}), one pass "
                  "over the rows", inputs)


def kblock_support_estimator(requested: object) -> Choice:
    """The estimator whose variables ``select_support`` tests for three or
    more blocks: the one asked for.  ``independent_blocks=True``: the
    per-block estimator's analytic coordinate tests (theory page "K
    blocks", section "Support selection"); ``False`` (the default, the
    joint estimator): the fit's own variable tests (``results.drop1()``,
    Wald with the covariance of the rows' jackknife influences under the
    joint whitening; section 5a).

    Examples
    --------
    >>> kblock_support_estimator(True).name
    'per-block'
    >>> kblock_support_estimator(False).name
    'joint'
    """
    if requested is not True and requested is not False:
        raise ValueError(f"independent_blocks must be True or False; got {requested!r}")
    if not requested:
        return Choice("joint", "default: the joint estimator (each block against the "
                      "others), its variable tests from the rows' jackknife influences")
    return Choice("per-block", "given: independent_blocks=True, the per-block estimator "
                  "(the paper's), which assumes independent blocks")


def kblock_estimator(requested: object, nobs: int, widths: tuple[int, ...],
                     whitening: str = "auto") -> Choice:
    """What ``fit(independent_blocks=...)`` stands for in the K-block engine
    (three or more blocks, or two with per-block ranks or
    ``main_effects=True``): ``"joint"`` (``False``, the default: the
    whitening across all blocks and the Hermite-corrected K-way tensor,
    valid when the blocks correlate) or ``"per-block"`` (``True``: the
    paper's estimator, which assumes independent blocks).

    The estimator asked for is the estimator fitted, as for two blocks
    (:func:`block_estimator`): neither the data's values nor their shape nor
    a compute budget swaps it.  The joint K-block estimator whitens with
    the sample covariance of all blocks together (it has no regularised
    version), so where it cannot run a ``ValueError`` names
    ``independent_blocks`` and what would run: with ``whitening`` other
    than ``"auto"`` or ``"sample"``, and with fewer than ``sum(n_k) + 2``
    rows.  (``whitening="auto"`` then means the sample covariance:
    :func:`kblock_whitening`.)  A budget may refuse a step of the joint
    estimator (the route of :func:`kblock_route`, the influences of
    :func:`kblock_influence`), never replace it (docs/theory/k_blocks.md,
    "Which estimator").

    Examples
    --------
    >>> kblock_estimator(False, 500, (5, 5, 5)).name
    'joint'
    >>> kblock_estimator(False, 200, (10, 10, 10)).name
    'joint'
    >>> kblock_estimator(True, 500, (5, 5, 5)).name
    'per-block'
    >>> kblock_estimator(False, 60, (30, 30, 30))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: independent_blocks=False (the joint estimator) needs at least sum(n_k) + 2 = 92 ...
    """
    if requested is not True and requested is not False:
        raise ValueError(f"independent_blocks must be True or False; got {requested!r}")
    p = int(sum(widths))
    inputs = {"nobs": float(nobs), "sum_widths": float(p)}
    if requested:
        return Choice("per-block", "given: independent_blocks=True, the per-block "
                      "estimator (the paper's), which assumes independent blocks", inputs)
    if whitening not in ("auto", "sample"):
        raise ValueError(
            f"independent_blocks=False (the joint estimator) of {len(widths)} blocks whitens "
            "with the sample covariance of all blocks together, which has no regularised "
            f'version; got whitening={whitening!r}: use whitening="auto" or "sample", or pass '
            "independent_blocks=True for the per-block estimator, which assumes independent "
            "blocks")
    if nobs < p + 2:
        raise joint_rows_error(nobs, tuple(widths), "its whitening")
    return Choice("joint", joint_default_reason(
        "the whitening across all blocks, the Hermite-corrected K-way tensor"), inputs)


def kblock_whitening(nobs: int, widths: tuple[int, ...], estimator: str) -> Choice:
    """What ``whitening="auto"`` stands for in the K-block engine: for the
    per-block estimator the rule of :func:`whitening` on the widest block
    (``max(n_k)/m``); for the joint estimator always ``"sample"`` (the
    covariance of all blocks together, the only whitening it has), the
    reason stating ``sum(n_k)/m`` against ``AUTO_SAMPLE_MAX_RATIO``.

    Examples
    --------
    >>> kblock_whitening(100, (10, 10, 10), "per-block").name
    'shrinkage'
    >>> kblock_whitening(100, (10, 10, 10), "joint").name
    'sample'
    """
    inputs = {"nobs": float(nobs), "sum_widths": float(sum(widths))}
    if estimator != "joint":
        return _auto_whitening(nobs, max(widths), "max(n_k)/m", False, inputs)
    ratio = sum(widths) / nobs
    inputs["ratio"] = ratio
    if ratio <= AUTO_SAMPLE_MAX_RATIO:
        return Choice("sample", (
            f"auto: sum(n_k)/m = {ratio:.3g} <= {AUTO_SAMPLE_MAX_RATIO}, the sample "
            "covariance of all blocks together is well estimated"), inputs,
            brief=f"auto: sum(n_k)/m = {ratio:.3g} <= {AUTO_SAMPLE_MAX_RATIO}")
    return Choice("sample", (
        f"auto: sum(n_k)/m = {ratio:.3g} > {AUTO_SAMPLE_MAX_RATIO}, the sample covariance of "
        "all blocks together is noisy, but it is the joint K-block estimator's only "
        "whitening (independent_blocks=True whitens each block alone, shrunk at width)"),
        inputs, brief=f"auto: sum(n_k)/m = {ratio:.3g} > {AUTO_SAMPLE_MAX_RATIO}; the joint "
        "estimator's only whitening")


#: Most entries ``m sum_k n_k D_k`` of the per-row influences that the
#: jackknife reference of the per-block rank tests holds (joint whitening or
#: case weights; 800 MB of doubles; docs/theory/k_blocks.md, section "Per-block rank tests").
KBLOCK_INFLUENCE_MAX_ENTRIES = 100_000_000


def kblock_influence(estimator: str, weighted: bool, nobs: int, entries: int,
                     sketched: bool = False, blocks: int = 3,
                     frequency: bool = False, block_entries: int | None = None,
                     piece_entries: int | None = None) -> Choice:
    """How the per-block rank tests of a K-block fit get each row's influence
    on the pieces: ``"analytic"`` (``psi_i = U0^T z_ik o h_i``, exact to
    first order for the per-block whitening without case weights, or with
    whole-number case weights, ``frequency=True``: copies of rows, the
    influences of the rows repeated),
    ``"analytic-joint"`` (the joint whitening on the tensor route, case
    weights or not, ``blocks >= 3``: each row's influence on the pieces
    through the joint mean, covariance and Hermite correction, from shared
    sums, :mod:`jdr_stats.inference.kblock_influence`) or ``"jackknife"``
    (delete-one refits, where neither applies: the per-block whitening with
    case weights, the joint whitening's sketched route, and two blocks with
    ``main_effects=True``, whose numbers stay those of the refits); a
    ``ValueError`` when the influences held would exceed
    ``KBLOCK_INFLUENCE_MAX_ENTRIES`` entries.  The analytic joint
    influences can be formed one block at a time (the same numbers; each
    piece's rows formed again for every block it holds): where all blocks'
    ``entries`` exceed the budget and twice the largest block's
    (``block_entries``: that block's and the block whose K-way Gram the
    others share) do not, the choice says so (``inputs["blockwise"]`` 1);
    and where the pieces' own influences (``piece_entries``, each piece's
    rows once: at most half of ``entries``) fit beside those two blocks,
    each piece's rows are formed once and kept until every block holding it
    has read them (``inputs["pieces_once"]`` 1; the same numbers).

    Examples
    --------
    >>> kblock_influence("per-block", False, 500, 10_000).name
    'analytic'
    >>> kblock_influence("joint", False, 500, 10_000).name
    'analytic-joint'
    >>> kblock_influence("joint", False, 500, 10_000, sketched=True).name
    'jackknife'
    >>> kblock_influence("per-block", True, 500, 10_000, frequency=True).name
    'analytic'
    """
    inputs = {"nobs": float(nobs), "entries": float(entries), "weighted": float(weighted)}
    if estimator == "per-block" and not weighted:
        return Choice("analytic", "per-block whitening, no case weights: each row's "
                      "influence U0^T z_ik o h_i (theory page 'K blocks', section 4)", inputs)
    if estimator == "per-block" and frequency:
        return Choice("analytic", "per-block whitening, whole-number case weights (copies "
                      "of rows): each copy's influence U0^T z_ik o h_i (theory page 'K "
                      "blocks', section 4)", inputs)
    why = ("the joint whitening" if estimator == "joint" else "") + (
        " and " if estimator == "joint" and weighted else "") + (
        "case weights" if weighted else "")
    blockwise = (entries > KBLOCK_INFLUENCE_MAX_ENTRIES and block_entries is not None
                 and 2 * block_entries <= KBLOCK_INFLUENCE_MAX_ENTRIES
                 and estimator == "joint" and not sketched and blocks >= 3)
    inputs["blockwise"] = float(blockwise)
    once = (blockwise and block_entries is not None and piece_entries is not None
            and piece_entries + 2 * block_entries <= KBLOCK_INFLUENCE_MAX_ENTRIES)
    inputs["pieces_once"] = float(once)
    if entries > KBLOCK_INFLUENCE_MAX_ENTRIES and not blockwise:
        raise ValueError(
            f'rank="auto": each block\'s rank tests under {why} hold every row\'s influence '
            f"on the pieces, {entries} entries > {KBLOCK_INFLUENCE_MAX_ENTRIES} "
            "(jdr_stats.policy.KBLOCK_INFLUENCE_MAX_ENTRIES); give the ranks (the same "
            "estimator is fitted) or narrow the blocks")
    if estimator == "joint" and not sketched and blocks >= 3:
        held = (f"; one block's influences at a time (all blocks' {entries} entries > "
                f"{KBLOCK_INFLUENCE_MAX_ENTRIES}, policy.KBLOCK_INFLUENCE_MAX_ENTRIES)"
                + (", each piece's formed once" if once else "")
                if blockwise else "")
        return Choice("analytic-joint", f"{why}: each row's influence through the joint "
                      "mean, covariance and Hermite correction, from shared sums (theory "
                      f"page 'K blocks', section 4){held}", inputs)
    return Choice("jackknife", f"{why}: each row's influence from delete-one refits "
                  "(theory page 'K blocks', section 4)", inputs)


def kblock_weighting() -> Choice:
    """The pieces' weights of a K-block fit (``KBLOCK_WEIGHTING``)."""
    return Choice(KBLOCK_WEIGHTING, (
        f"pieces scaled to unit null noise and weighted {KBLOCK_WEIGHTING!r} "
        "(c_S = D_S^-1/2 for 'sqrt': equal noise fluctuation per piece; "
        "study_k_blocks)"), {})
