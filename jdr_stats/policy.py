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

__all__ = [
    "ASSOCIATION_PERMUTATIONS",
    "ASSOCIATION_SEED",
    "ASSOCIATION_SUMMARY_MAX_ROWS",
    "AUTO_SAMPLE_MAX_RATIO",
    "BLOCK_ROWS",
    "COMBINED_SPECTRAL_MIN_EDGE",
    "KBLOCK_GRAM_MAX_ROWS",
    "KBLOCK_INFLUENCE_MAX_ENTRIES",
    "KBLOCK_TENSOR_MAX_ENTRIES",
    "KBLOCK_WEIGHTING",
    "Choice",
    "LADLE_EDGE_DRAWS",
    "LADLE_EDGE_QUANTILE",
    "LADLE_STRONG_EDGE",
    "MAX_EXACT_DIM",
    "RANK_COMBINED_MIN_RATIO",
    "RANK_TESTS_MAX_RATIO",
    "ROBUST_BOTH_MIN_RATIO",
    "ROBUST_CORRECTED_MAX_RATIO",
    "ROBUST_PAIR_SEED",
    "SUPPORT_TESTS_MAX_RATIO",
    "block_estimator",
    "defaults_table",
    "kblock_influence",
    "kblock_route",
    "kblock_weighting",
    "rank_method",
    "robust_reference",
    "whitening",
]


@dataclass(frozen=True)
class Choice:
    """An automatic choice: ``name`` (what was chosen), ``reason`` (a sentence
    saying why, for summaries) and ``inputs`` (the numbers it used)."""

    name: str
    reason: str
    inputs: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "reason": self.reason, "inputs": dict(self.inputs)}


# -- whitening -----------------------------------------------------------------
#: ``whitening="auto"`` whitens with the sample covariance while the wider
#: block has at most this many columns per row (``max(n1, n2) / m``), and with
#: the OAS-shrunk covariance above it (study ``studies/study_wide.py``).
AUTO_SAMPLE_MAX_RATIO = 0.05


def whitening(nobs: int, n1: int, n2: int) -> Choice:
    """What ``whitening="auto"`` stands for: ``"sample"`` while
    ``max(n1, n2) / nobs <= AUTO_SAMPLE_MAX_RATIO``, else ``"shrinkage"``.

    Examples
    --------
    >>> whitening(1000, 10, 20).name, whitening(100, 10, 20).name
    ('sample', 'shrinkage')
    """
    ratio = max(n1, n2) / nobs
    inputs = {"nobs": float(nobs), "n1": float(n1), "n2": float(n2), "ratio": ratio}
    if ratio <= AUTO_SAMPLE_MAX_RATIO:
        return Choice("sample", (
            f"auto: max(n1, n2)/m = {ratio:.3g} <= {AUTO_SAMPLE_MAX_RATIO}, the sample "
            "covariance is well estimated"), inputs)
    return Choice("shrinkage", (
        f"auto: max(n1, n2)/m = {ratio:.3g} > {AUTO_SAMPLE_MAX_RATIO}, the sample "
        "covariance is noisy" + (" (singular)" if ratio >= 1 else "")
        + "; OAS shrinkage of each block's correlation matrix"), inputs)


# -- the estimator: whitening per block or across blocks ------------------------
def block_estimator(requested: object, nobs: int, n1: int, n2: int,
                    whitening: str) -> Choice:
    """What ``fit(independent_blocks=...)`` stands for: ``"per-block"`` (the
    paper's estimator, each block whitened alone, which assumes independent
    blocks; ``True``, the default) or ``"joint"`` (``False``: each block's
    residual on the other block, whitened by its partial covariance, valid
    when the blocks correlate).

    Not yet an automatic choice: which estimator is the default is decided
    by the correlated-blocks study (``studies/study_correlated_blocks.py``).
    A ``ValueError`` names the arguments where the joint estimator cannot
    run (it needs the sample covariance of both blocks together).

    Examples
    --------
    >>> block_estimator(False, 1000, 10, 20, "sample").name
    'joint'
    >>> block_estimator(True, 1000, 10, 20, "sample").name
    'per-block'
    """
    if requested is not True and requested is not False:
        raise ValueError(f"independent_blocks must be True or False; got {requested!r}")
    inputs = {"nobs": float(nobs), "n1": float(n1), "n2": float(n2)}
    if requested:
        return Choice("per-block", "given: independent_blocks=True, the per-block "
                      "estimator (the paper's), which assumes independent blocks", inputs)
    if whitening != "sample":
        raise ValueError(
            "independent_blocks=False whitens across blocks with the sample covariance of "
            f'both blocks together; got whitening="{whitening}". Use whitening="sample" '
            "(or \"auto\" where it chooses the sample covariance), or independent_blocks=True")
    if nobs < n1 + n2 + 2:
        raise ValueError(
            f"independent_blocks=False needs at least n1 + n2 + 2 = {n1 + n2 + 2} rows "
            f"(the joint covariance of both blocks is singular otherwise); got {nobs}. "
            "Use independent_blocks=True")
    return Choice("joint", "given: independent_blocks=False, whitened across blocks "
                  "(valid when the blocks correlate)", inputs)


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
    limit = RANK_COMBINED_MIN_RATIO
    if ratio < limit:
        return Choice("robust", (
            f"method='auto': {name} = {ratio:.3g} < {limit:g}, so the robust test "
            "(its references hold at this width)"), inputs)
    return Choice("combined", (
        f"method='auto': {name} = {ratio:.3g} >= {limit:g}, so the combined test (robust "
        "and spectral tests, Bonferroni-combined; theory 6f)"), inputs)


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
        ("LADLE_EDGE_QUANTILE", LADLE_EDGE_QUANTILE, "ladle: quantile of the noise edge"),
        ("LADLE_EDGE_DRAWS", LADLE_EDGE_DRAWS, "ladle: sign-flip draws of the noise edge"),
        ("LADLE_STRONG_EDGE", LADLE_STRONG_EDGE,
         "ladle: directions above this multiple of the edge projected off"),
        ("ASSOCIATION_PERMUTATIONS", ASSOCIATION_PERMUTATIONS,
         "summary at p >> n: permutations of the test of no association"),
        ("ASSOCIATION_SEED", ASSOCIATION_SEED, "summary at p >> n: seed of that test"),
        ("ASSOCIATION_SUMMARY_MAX_ROWS", ASSOCIATION_SUMMARY_MAX_ROWS,
         "summary at p >> n: that test runs up to this many rows (else how to run it)"),
        ("BLOCK_ROWS", BLOCK_ROWS, "rows per seeded block of row-wise random draws"),
        ("KBLOCK_TENSOR_MAX_ENTRIES", KBLOCK_TENSOR_MAX_ENTRIES,
         "K-block fit: forms the K-way tensor up to this many entries, m x m Grams above"),
        ("KBLOCK_GRAM_MAX_ROWS", KBLOCK_GRAM_MAX_ROWS,
         "K-block fit: most rows of the m x m route and of the per-block rank tests"),
        ("KBLOCK_INFLUENCE_MAX_ENTRIES", KBLOCK_INFLUENCE_MAX_ENTRIES,
         "K-block rank tests: most entries of the jackknife's per-row influences"),
        ("KBLOCK_WEIGHTING", KBLOCK_WEIGHTING,
         "K-block fit: weights of the pieces in each block's combined Gram"),
        ("ROBUST_PAIR_SEED", ROBUST_PAIR_SEED,
         "robust test: seed of its row pairs when none is given"),
    ]


# -- K >= 3 blocks ---------------------------------------------------------------
#: Largest number of entries ``q prod_k n_k`` of the K-way cross-moment tensor
#: that a K-block fit forms; above it the pieces' mode Grams come from the
#: ``m x m`` row Gram matrices instead (``O(m^2 sum n_k)``;
#: docs/theory/k_blocks.md, section "Computation").
KBLOCK_TENSOR_MAX_ENTRIES = 200_000

#: Most rows for the ``m x m`` route of a K-block fit and for its per-block
#: rank tests (``m x m`` matrices of doubles).
KBLOCK_GRAM_MAX_ROWS = 6000

#: The weights of the pieces in each block's combined Gram of a K-block fit:
#: ``"sqrt"`` (``c_S = D_S^{-1/2}``: every piece's null noise fluctuation the
#: same), from the comparison of ``"unit"``, ``"sqrt"`` and ``"columns"`` in
#: ``studies/study_k_blocks.py`` (figures in its results file).
KBLOCK_WEIGHTING = "sqrt"


def kblock_route(nobs: int, widths: tuple[int, ...], q: int = 1) -> Choice:
    """How a K-block fit forms its pieces: ``"tensor"`` while the K-way
    tensor has at most ``KBLOCK_TENSOR_MAX_ENTRIES`` entries, else ``"gram"``
    (``m x m`` row Grams) while ``nobs <= KBLOCK_GRAM_MAX_ROWS``; a
    ``ValueError`` names the shape beyond both.

    Examples
    --------
    >>> kblock_route(500, (5, 5, 5)).name, kblock_route(500, (80, 80, 80)).name
    ('tensor', 'gram')
    """
    entries = float(q)
    for n in widths:
        entries *= n
    inputs = {"nobs": float(nobs), "entries": entries, "q": float(q)}
    if entries <= KBLOCK_TENSOR_MAX_ENTRIES:
        return Choice("tensor", f"the K-way tensor has q prod n_k = {entries:.0f} <= "
                      f"{KBLOCK_TENSOR_MAX_ENTRIES} entries: formed", inputs)
    if nobs <= KBLOCK_GRAM_MAX_ROWS:
        return Choice("gram", f"the K-way tensor would have {entries:.0f} > "
                      f"{KBLOCK_TENSOR_MAX_ENTRIES} entries: mode Grams from the "
                      f"{nobs} x {nobs} row Grams", inputs)
    raise ValueError(
        f"a K-block fit of {nobs} rows and widths {list(widths)} needs either the K-way "
        f"tensor ({entries:.0f} entries > {KBLOCK_TENSOR_MAX_ENTRIES}) or m x m row Grams "
        f"(m = {nobs} > {KBLOCK_GRAM_MAX_ROWS}); reduce the blocks' widths or the rows")


#: Most entries ``m sum_k n_k D_k`` of the per-row influences that the
#: jackknife reference of the per-block rank tests holds (joint whitening or
#: case weights; docs/theory/k_blocks.md, section "Per-block rank tests").
KBLOCK_INFLUENCE_MAX_ENTRIES = 20_000_000


def kblock_influence(estimator: str, weighted: bool, nobs: int, entries: int) -> Choice:
    """How the per-block rank tests of a K-block fit get each row's influence
    on the pieces: ``"analytic"`` (``psi_i = U0^T z_ik o h_i``, exact to
    first order for the per-block whitening without case weights) or
    ``"jackknife"`` (delete-one refits: the joint whitening's estimation, its
    Hermite correction and the case weights enter at first order); a
    ``ValueError`` when the jackknife's influences would exceed
    ``KBLOCK_INFLUENCE_MAX_ENTRIES`` entries.

    Examples
    --------
    >>> kblock_influence("per-block", False, 500, 10_000).name
    'analytic'
    >>> kblock_influence("joint", False, 500, 10_000).name
    'jackknife'
    """
    inputs = {"nobs": float(nobs), "entries": float(entries), "weighted": float(weighted)}
    if estimator == "per-block" and not weighted:
        return Choice("analytic", "per-block whitening, no case weights: each row's "
                      "influence U0^T z_ik o h_i (theory page 'K blocks', section 4)", inputs)
    why = ("the joint whitening" if estimator == "joint" else "") + (
        " and " if estimator == "joint" and weighted else "") + (
        "case weights" if weighted else "")
    if entries > KBLOCK_INFLUENCE_MAX_ENTRIES:
        raise ValueError(
            f'rank="auto": the per-block rank tests under {why} hold every row\'s influence '
            f"on the pieces, {entries} entries > {KBLOCK_INFLUENCE_MAX_ENTRIES} "
            "(jdr_stats.policy.KBLOCK_INFLUENCE_MAX_ENTRIES); give the ranks or narrow "
            "the blocks")
    return Choice("jackknife", f"{why}: each row's influence from delete-one refits "
                  "(theory page 'K blocks', section 4)", inputs)


def kblock_weighting() -> Choice:
    """The pieces' weights of a K-block fit (``KBLOCK_WEIGHTING``)."""
    return Choice(KBLOCK_WEIGHTING, (
        f"pieces scaled to unit null noise and weighted {KBLOCK_WEIGHTING!r} "
        "(c_S = D_S^-1/2 for 'sqrt': equal noise fluctuation per piece; "
        "study_k_blocks)"), {})
