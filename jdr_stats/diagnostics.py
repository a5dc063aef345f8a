"""Checks of the premises of the joint estimator and its rank inference.

The method assumes the two blocks independent of each other (section 2 of
the paper; its Figure 2 shows what cross-block correlation does), a
covariance of each block that can be inverted accurately (the estimator
whitens), and enough rows for the asymptotic rank tests (their first test
looks at all ``n1 n2`` entries of the cross moment).  :func:`premises`
measures the three from the moments and :class:`Premises` holds the result:
a small table for every fit summary and an :class:`AssumptionWarning` when a
measure is past its threshold.  The thresholds come from the seeded study
``studies/study_premises.py`` (its result note in ``studies/results``; the
guide page "Checking the premises" explains them).

:func:`gap_advice` turns the singular values of a fit into the advice of a
:class:`~jdr_stats.exceptions.WeakGapWarning`.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import pandas as pd

from . import policy
from .core import moments as core_moments
from .exceptions import AssumptionWarning
from .io._data import RowsData
from .runtime._lazy import stats
from .summary import format_pvalue

__all__ = [
    "MAX_CONDITION",
    "MAX_CROSS_CORRELATION",
    "MIN_ROWS_PER_ENTRY",
    "Premises",
    "block_covariances",
    "block_stats",
    "condition_number",
    "cross_canonical_correlations",
    "gap_advice",
    "premises",
    "premises_of_data",
]

#: Largest cross-block canonical correlation above which the premise of
#: independent blocks is flagged (study_premises.py, part 1).
MAX_CROSS_CORRELATION = 0.3
#: Condition number of a block's correlation matrix above which the
#: whitening loses accuracy (study_premises.py, part 3).
MAX_CONDITION = 1e8
#: Rows per entry of the cross moment, ``m / (n1 n2)``, below which the
#: asymptotic rank tests are flagged (study_premises.py, part 2).
MIN_ROWS_PER_ENTRY = 1.0
#: Level of Bartlett's test of independent blocks: a cross-block correlation
#: above MAX_CROSS_CORRELATION is flagged only when this test rejects (in small
#: samples the largest sample canonical correlation of independent blocks is
#: large by chance).
INDEPENDENCE_LEVEL = 0.01


def _spectrum(cov: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Standard deviations, eigenvalues and eigenvectors of the correlation."""
    sd = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    safe = np.where(sd > 0, sd, 1.0)
    evals, evecs = np.linalg.eigh(cov / np.outer(safe, safe))
    return sd, evals, evecs


def condition_number(cov: Any) -> float:
    """Condition number of the correlation matrix of a covariance.

    ``inf`` when a column is constant or the columns are collinear.

    Examples
    --------
    >>> condition_number([[4.0, 0.0], [0.0, 1.0]])
    1.0
    >>> round(condition_number([[1.0, 0.9], [0.9, 1.0]]), 6)
    19.0
    """
    sd, evals, _ = _spectrum(np.asarray(cov, dtype=float))
    if np.any(sd <= 0) or evals[0] <= 0:
        return float("inf")
    return float(evals[-1] / evals[0])


def _canonical(cov_a: np.ndarray, cov_b: np.ndarray, cov_ab: np.ndarray) -> np.ndarray:
    """Canonical correlations, descending (NaN for a singular block)."""
    k = min(cov_a.shape[0], cov_b.shape[0])
    roots = []
    for cov in (cov_a, cov_b):
        sd, evals, evecs = _spectrum(cov)
        if np.any(sd <= 0) or evals[0] <= 1e-14 * evals[-1]:
            return np.full(k, np.nan)
        # R^{-1/2} D^{-1}: whitens the block (any square root gives the same values)
        roots.append((evecs / np.sqrt(evals)) @ evecs.T / sd)
    mat = roots[0] @ cov_ab @ roots[1].T
    return np.clip(np.linalg.svd(mat, compute_uv=False)[:k], 0.0, 1.0)


def cross_canonical_correlations(a: Any, b: Any, weights: Any = None) -> np.ndarray:
    """Sample canonical correlations between the columns of two blocks.

    Parameters
    ----------
    a, b : array_like, shapes (m, n1), (m, n2)
    weights : array_like, shape (m,), optional
        Case weights.

    Returns
    -------
    ndarray, shape (min(n1, n2),)
        Descending; 0 for independent blocks in the population.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> a = rng.standard_normal((5000, 3))
    >>> b = np.column_stack([a[:, 0] + rng.standard_normal(5000), rng.standard_normal(5000)])
    >>> np.round(cross_canonical_correlations(a, b), 1)
    array([0.7, 0. ])
    """
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    a = a[:, None] if a.ndim == 1 else a
    b = b[:, None] if b.ndim == 1 else b
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"a has {a.shape[0]} rows but b has {b.shape[0]}")
    w = np.full(a.shape[0], 1.0 / a.shape[0]) if weights is None else np.asarray(weights, float)
    w = w / w.sum()
    ca = a - w @ a
    cb = b - w @ b
    wa = ca * w[:, None]
    return _canonical(wa.T @ ca, (cb * w[:, None]).T @ cb, wa.T @ cb)


@dataclass(frozen=True)
class Premises:
    """The premise checks of a fit (see :func:`premises`).

    Attributes
    ----------
    nobs, n1, n2, rank : int
    cross_correlations : ndarray
        Sample canonical correlations between the blocks, descending.
    independence_pvalue : float
        Bartlett's chi-square test of independent blocks (all canonical
        correlations zero); in a small sample, ``m < MIN_ROWS_PER_ENTRY n1 n2``,
        where its reference is not calibrated, the largest-root test (the
        largest canonical correlation against its Tracy-Widom limit;
        :attr:`independence_test` names the test).
    condition_a, condition_b : float
        Condition numbers of the blocks' correlation matrices (NaN, shown
        "n/a", for a block with at least ``m`` columns: singular by construction).
    wide : bool
        ``n1 + n2 >= m``: the sample canonical correlations are degenerate
        (some are 1 whatever the population) and Bartlett's test undefined;
        both are reported "n/a" and not checked (:func:`block_stats`).
    """

    nobs: int
    n1: int
    n2: int
    rank: int
    cross_correlations: np.ndarray
    independence_pvalue: float
    condition_a: float
    condition_b: float
    wide: bool = False
    #: columns of the (whitened) response: ``C - 1`` for ``C`` classes
    q: int = 1
    #: the fit whitened across blocks (the joint estimator): correlated
    #: blocks are information, not a failed premise
    joint: bool = False

    @property
    def rows_per_entry(self) -> float:
        """``m / (n1 n2)``: rows per entry of the cross moment (first rank test)."""
        return self.nobs / (self.n1 * self.n2)

    @property
    def rows_per_complement_entry(self) -> float:
        """``m / ((n1 - r)(n2 - r))``: rows per entry of the complement block
        tested by the rank test of ``H0: rank = r`` (``inf`` at full rank)."""
        d = (self.n1 - self.rank) * (self.n2 - self.rank)
        return self.nobs / d if d > 0 else float("inf")

    @property
    def correlated(self) -> bool:
        """The largest cross-block canonical correlation is above
        ``MAX_CROSS_CORRELATION`` and the test of independence rejects (in a
        small sample, where the sample correlations are large by chance, the
        largest-root test calibrates the largest of them)."""
        cc = self.cross_correlations
        return bool(cc.size and cc[0] > MAX_CROSS_CORRELATION
                    and self.independence_pvalue < INDEPENDENCE_LEVEL)

    @property
    def _assumes_independence(self) -> bool:
        """The fit's estimator assumes independent blocks (per block)."""
        return not self.joint

    @property
    def independence_test(self) -> str:
        """The test of :attr:`independence_pvalue` (the table's row names it):
        ``"Bartlett"``, or ``"largest-root"`` in a small sample that is not
        wide (``n1 + n2 < m``; in a wide one neither is defined)."""
        return "largest-root" if self.small_sample and not self.wide else "Bartlett"

    @property
    def small_sample(self) -> bool:
        """``m / (n1 n2)`` is below ``MIN_ROWS_PER_ENTRY``."""
        return self.rows_per_entry < MIN_ROWS_PER_ENTRY

    @property
    def table(self) -> pd.DataFrame:
        """value, threshold and ``ok`` (within the threshold) of each measure
        (condition numbers as log10).  The last row, rows per entry of the
        complement block tested at the fit's rank, is at least the one above.

        The correlation row is not ok when the value is above the threshold
        and the test of independence (Bartlett's, or the largest-root test in a
        small sample) rejects at ``INDEPENDENCE_LEVEL`` (what raises the
        warning); the test's row is not ok when it rejects (a dependence that
        is detectable, however small).
        """
        cc = float(self.cross_correlations[0]) if self.cross_correlations.size else 0.0
        na = "n/a (n1 + n2 >= m)"
        checked = not self.wide and self._assumes_independence
        rows: list[tuple[str, Any, float, Any]] = [
            ("largest cross-block canonical corr.", na if self.wide else cc,
             MAX_CROSS_CORRELATION, not self.correlated if checked else None),
            (f"{self.independence_test} test of independence, p",
             na if self.wide else self.independence_pvalue,
             INDEPENDENCE_LEVEL,
             self.independence_pvalue >= INDEPENDENCE_LEVEL if checked else None),
        ]
        for block, cond in (("a", self.condition_a), ("b", self.condition_b)):
            rows.append((f"log10 condition number {block} (corr.)",
                         f"n/a (n{'1' if block == 'a' else '2'} >= m)" if np.isnan(cond)
                         else np.log10(cond), np.log10(MAX_CONDITION),
                         None if np.isnan(cond) else cond <= MAX_CONDITION))
        rows += [
            ("m / (n1 n2)", self.rows_per_entry, MIN_ROWS_PER_ENTRY,
             self.rows_per_entry >= MIN_ROWS_PER_ENTRY),
            ("m / ((n1 - r)(n2 - r))", self.rows_per_complement_entry, MIN_ROWS_PER_ENTRY,
             self.rows_per_complement_entry >= MIN_ROWS_PER_ENTRY),
        ]
        if self.wide:  # a column of text and numbers: the numbers to 4 digits
            rows = [(r[0], r[1] if isinstance(r[1], str) else float(f"{r[1]:.4g}"), *r[2:])
                    for r in rows]
        return pd.DataFrame(
            {"value": [r[1] for r in rows], "threshold": [r[2] for r in rows],
             "ok": [None if r[3] is None else bool(r[3]) for r in rows]},
            index=pd.Index([r[0] for r in rows], name="premise"),
        )

    @property
    def messages(self) -> list[str]:
        """One sentence per measure past its threshold (empty: all premises hold)."""
        out = []
        cc = self.cross_correlations
        if self.correlated and self._assumes_independence:
            out.append(
                f"the blocks are correlated (largest cross-block canonical correlation "
                f"{cc[0]:.2f} > {MAX_CROSS_CORRELATION}, independence test p "
                f"{_p_text(self.independence_pvalue)}); the per-block estimator assumes them "
                "independent, and correlation between them inflates the rank the tests "
                "choose and biases the directions: fit(independent_blocks=False) whitens "
                "across blocks"
            )
        for block, cond in (("a", self.condition_a), ("b", self.condition_b)):
            if not np.isnan(cond) and not cond <= MAX_CONDITION:
                out.append(
                    f"block {block} is nearly collinear (condition number of its "
                    f"correlation matrix {cond:.3g} > {MAX_CONDITION:.0e}); whitening "
                    "loses accuracy"
                )
        if self.small_sample and self.nobs < max(self.n1, self.n2) + 2:
            # no rank test runs here (_estimate.check_tests_feasible): nothing to qualify
            out.append(
                f"small sample: m = {self.nobs} rows for n1 n2 = {self.n1 * self.n2} "
                f"entries of the cross moment; no rank test runs at this width "
                f"(m < max(n1, n2) + 2)")
        elif self.small_sample:
            out.append(
                f"small sample: m = {self.nobs} rows for n1 n2 = {self.n1 * self.n2} "
                f"entries of the cross moment (m / (n1 n2) = {self.rows_per_entry:.2g} < "
                f"{MIN_ROWS_PER_ENTRY:g}); the p-values of the rank tests of Lambda_k (all but "
                "the spectral test) are unreliable"
                + (f" ({self._wide_rank_text()})" if self._wide_rank_text() else "")
            )
        return out

    @property
    def remarks(self) -> list[str]:
        """Rows of :attr:`table` that are not ok without raising the warning,
        one sentence each (today: a dependence the test of independence detects
        while the largest canonical correlation stays below ``MAX_CROSS_CORRELATION``)."""
        cc = self.cross_correlations
        if self.wide:
            return [self.wide_note]
        if self.joint:
            return []
        p = self.independence_pvalue
        if self.correlated or not np.isfinite(p) or p >= INDEPENDENCE_LEVEL:
            return []
        largest = float(cc[0]) if cc.size else 0.0
        return [
            ("The largest-root test" if self.independence_test == "largest-root"
             else "Bartlett's test")
            + f" detects a dependence between the blocks (p "
            f"{_p_text(self.independence_pvalue)}), but the largest cross-block canonical "
            f"correlation, {largest:.4f}, is below the threshold {MAX_CROSS_CORRELATION} "
            "set by the premises study (weaker dependence left the rank tests' size "
            "in its band there): no warning"
        ]

    def _wide_rank_text(self) -> str:
        """What the rank tests do above ``policy.RANK_TESTS_MAX_RATIO``."""
        ratio, limit = max(self.n1, self.n2) / self.nobs, policy.RANK_TESTS_MAX_RATIO
        if ratio <= limit:
            return ""
        return (
            f"max(n1, n2)/m = {ratio:.3g} > {limit}: the robust test's references "
            "are not derived at this width, and where "
            + ("(n1-k)(n2-k)/m > " if self.q == 1 else "q (n1-k)(n2-k)/m > ")
            + f"{policy.ROBUST_BOTH_MIN_RATIO:g} it reports the larger of two p-values, which "
            "is conservative (study_width): a non-rejection is no evidence for a smaller "
            'rank. From ' + ("n1 n2 / m" if self.q == 1 else "q n1 n2 / m")
            + f" = {policy.RANK_COMBINED_MIN_RATIO:g} (here "
            + (f"q = {self.q}: " if self.q > 1 else "")
            + f"{self.q * self.n1 * self.n2 / self.nobs:.3g}) "
            'rank_method="auto" adds the spectral test, which kept its level there '
            "(rank-test guide)"
        )

    @property
    def wide_note(self) -> str:
        """The sentence on what a wide fit (``n1 + n2 >= m``) does not check."""
        singular = [f"block {k}" for k, c in (("a", self.condition_a), ("b", self.condition_b))
                    if np.isnan(c)]
        return (
            f"n1 + n2 = {self.n1 + self.n2} >= m = {self.nobs}: the cross-block canonical "
            "correlations (some are 1 by construction) and Bartlett's test are undefined, "
            "so the blocks' independence is not checked"
            + (f"; the correlation matrix of {' and '.join(singular)} is singular (at least "
               "m columns), its condition number n/a" if singular else "")
        )

    @property
    def short_messages(self) -> list[str]:
        """:attr:`messages` in one line each for a summary: what failed and
        one consequence (the warning and :attr:`messages` say more)."""
        out = []
        cc = self.cross_correlations
        if self.correlated and self._assumes_independence:
            out.append(
                f"the blocks are correlated (largest cross-block canonical correlation "
                f"{cc[0]:.2f} > {MAX_CROSS_CORRELATION}): the per-block estimator's rank and "
                "directions are biased; fit(independent_blocks=False) whitens across blocks")
        for block, cond in (("a", self.condition_a), ("b", self.condition_b)):
            if not np.isnan(cond) and not cond <= MAX_CONDITION:
                out.append(f"block {block} is nearly collinear (condition number {cond:.3g} > "
                           f"{MAX_CONDITION:.0e}): whitening loses accuracy")
        if self.small_sample and self.nobs < max(self.n1, self.n2) + 2:
            out.append(f"small sample: m = {self.nobs} < max(n1, n2) + 2 rows: no rank test runs")
        elif self.small_sample:
            wide = max(self.n1, self.n2) / self.nobs > policy.RANK_TESTS_MAX_RATIO
            out.append(
                f"small sample (m / (n1 n2) = {self.rows_per_entry:.2g} < "
                f"{MIN_ROWS_PER_ENTRY:g}): rank-test p-values but the spectral test's are "
                "unreliable" + ("; the robust test is conservative at this width"
                                if wide else ""))
        return out

    @property
    def notes(self) -> list[str]:
        """The summary's notes: the premises (all hold, or one ``CHECK`` line
        per failure: :attr:`short_messages`), then the remarks in short."""
        head = "Premises (guide page 'Checking the premises'): "
        msgs = self.short_messages
        out = ([head + ("all hold." if not self.remarks else "see below.")] if not msgs
               else [head + f"CHECK: {msgs[0]}.", *(f"CHECK: {m}." for m in msgs[1:])])
        if self.wide:
            singular = [k for k, c in (("a", self.condition_a), ("b", self.condition_b))
                        if np.isnan(c)]
            out[-1] += (
                " Not checked (undefined at n1 + n2 >= m): "
                "the blocks' independence" + (f", block {' and '.join(singular)}'s conditioning"
                                              if singular else "") + ".")
        elif self.remarks:
            p, cc = self.independence_pvalue, self.cross_correlations
            largest = float(cc[0]) if cc.size else 0.0
            out.append(
                ("The largest-root test" if self.independence_test == "largest-root"
                 else "Bartlett's test")
                + f" detects a dependence (p {_p_text(p)}) below the threshold: largest "
                f"canonical correlation {largest:.4f} <= {MAX_CROSS_CORRELATION}; no warning.")
        return out

    @property
    def note(self) -> str:
        """The summary's notes (:attr:`notes`) as one paragraph."""
        return " ".join(self.notes)

    @property
    def ok(self) -> bool:
        """Whether every measure is within its threshold."""
        return not self.messages

    def warn(self, what: str, stacklevel: int = 3) -> None:
        """Issue one :class:`AssumptionWarning` listing the failed premises."""
        msgs = self.messages
        if msgs:
            warnings.warn(
                f"{what}: " + "; ".join(msgs) + " (see results.diagnostics and the "
                "guide page 'Checking the premises')",
                AssumptionWarning,
                stacklevel=stacklevel,
            )


#: Tracy-Widom (real case) law as a shifted gamma, ``Gamma(k, theta) - shift``:
#: the same mean (-1.2065), variance (1.6078) and skewness.
_TW1_GAMMA = (46.446, 0.186054, 9.84801)


def _largest_root(rho1: float, m: int, n1: int, n2: int) -> float:
    """p-value of the largest-root (Roy) test of independent blocks: the
    largest squared sample canonical correlation ``theta`` of independent
    Gaussian blocks is the largest root of a double Wishart (Jacobi)
    ensemble, and ``(logit theta - mu) / sigma`` tends to the Tracy-Widom
    law, accurate at small sizes (premises guide, section 1).  Needs
    ``n1 + n2 < m``."""
    p, q = min(n1, n2), max(n1, n2)
    big = float(m - 2)  # (q) + (m - 1 - q) - 1: hypothesis + error degrees of freedom - 1
    if not np.isfinite(rho1) or m - 1 - q < p:
        return float("nan")
    if rho1 >= 1.0:  # a combination of one block is one of the other
        return 0.0
    if rho1 <= 0.0:
        return 1.0
    gam = 2.0 * np.arcsin(np.sqrt((p - 0.5) / big))
    phi = 2.0 * np.arcsin(np.sqrt((q - 0.5) / big))
    mu = 2.0 * np.log(np.tan((phi + gam) / 2.0))
    sigma = (16.0 / big**2 / (np.sin(phi + gam) ** 2 * np.sin(phi) * np.sin(gam))) ** (1 / 3)
    w = (np.log(rho1**2 / (1.0 - rho1**2)) - mu) / sigma
    k, theta, shift = _TW1_GAMMA
    return float(stats.gamma.sf(w + shift, k, scale=theta))


def _independence_pvalue(cc: np.ndarray, nobs: int, n1: int, n2: int,
                         n_covariates: int = 0) -> float:
    """p-value of the test of independent blocks (:attr:`Premises.independence_test`):
    Bartlett's, or in a small sample (``nobs < MIN_ROWS_PER_ENTRY n1 n2``, the
    rule of :attr:`Premises.small_sample`), where its reference is not
    calibrated, the largest-root test; both with ``nobs - n_covariates``
    rows' degrees of freedom."""
    m = nobs - n_covariates
    if not np.all(np.isfinite(cc)):
        return float("nan")
    if nobs < MIN_ROWS_PER_ENTRY * n1 * n2:
        return _largest_root(float(cc[0]) if cc.size else 0.0, m, n1, n2)
    return _bartlett(cc, m, n1, n2)


def _bartlett(cc: np.ndarray, m: int, n1: int, n2: int) -> float:
    """p-value of Bartlett's test that every canonical correlation is zero:
    ``-(m - 1 - (n1 + n2 + 1) / 2) sum log(1 - rho_i^2)`` against chi2(n1 n2)."""
    factor = m - 1 - (n1 + n2 + 1) / 2
    if factor <= 0 or not np.all(np.isfinite(cc)):
        return float("nan")
    with np.errstate(divide="ignore"):
        stat = -factor * float(np.sum(np.log1p(-np.minimum(cc, 1.0) ** 2)))
    return float(stats.chi2.sf(stat, n1 * n2))


def premises(
    cov_a: Any, cov_b: Any, cov_ab: Any, *, nobs: int, rank: int = 1, n_covariates: int = 0
) -> Premises:
    """Premise checks from the covariances of the two blocks.

    Parameters
    ----------
    cov_a, cov_b : array_like, shapes (n1, n1), (n2, n2)
        Covariances of the blocks.
    cov_ab : array_like, shape (n1, n2)
        Covariance between them.
    nobs : int
        Number of rows.
    rank : int
        Rank of the fit (for the complement dimension).
    n_covariates : int
        Columns of covariates partialled out of the blocks (their
        covariances are then partial ones): the test of independence uses
        ``nobs - n_covariates`` rows' degrees of freedom.

    Returns
    -------
    Premises

    Examples
    --------
    >>> import numpy as np
    >>> p = premises(np.eye(3), np.eye(2), np.array([[0.5, 0], [0, 0.1], [0, 0]]), nobs=100)
    >>> p.table["ok"].tolist()
    [False, False, True, True, True, True]
    >>> print(p.messages[0][:64])
    the blocks are correlated (largest cross-block canonical correla
    """
    cov_a, cov_b, cov_ab = (np.atleast_2d(np.asarray(x, dtype=float))
                            for x in (cov_a, cov_b, cov_ab))
    n1, n2 = cov_a.shape[0], cov_b.shape[0]
    if cov_a.shape != (n1, n1) or cov_b.shape != (n2, n2) or cov_ab.shape != (n1, n2):
        raise ValueError(
            f"cov_a, cov_b and cov_ab must be (n1, n1), (n2, n2) and (n1, n2); got "
            f"{cov_a.shape}, {cov_b.shape} and {cov_ab.shape}"
        )
    cc = _canonical(cov_a, cov_b, cov_ab)
    return Premises(
        nobs=int(nobs), n1=n1, n2=n2, rank=int(rank),
        cross_correlations=cc,
        independence_pvalue=_independence_pvalue(cc, int(nobs), n1, n2, int(n_covariates)),
        condition_a=condition_number(cov_a), condition_b=condition_number(cov_b),
    )


def block_covariances(data: RowsData) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(cov_a, cov_b, cov_ab)`` of a model's data (divisor: the total weight).

    From the stored sums of a streamed model (their ``m2_ab`` is the cross
    covariance) or from the rows in memory (case weights respected); data
    without either (``remove_data()``) raise ``RowsNotInMemoryError``.

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(500, 3, 2, 1, seed=0)
    >>> ca, cb, cab = block_covariances(jdr.JointDimReduction(sim.y, sim.a, sim.b).data)
    >>> ca.shape, cb.shape, cab.shape
    ((3, 3), (2, 2), (3, 2))
    """
    sums = data.sums
    if sums is not None:
        return sums.m2_a / sums.weight, sums.m2_b / sums.weight, sums.m2_ab / sums.weight
    # rows in memory: the moments engine, slice by slice (no centred copy)
    y, a, b, weights = data.rows("the premise diagnostics", weights=True)
    y = y if y.ndim == 1 else np.ascontiguousarray(y[:, 0])  # q responses: blocks only
    t = core_moments.array_sums(y, (a, b), None if weights is None
                                else np.asarray(weights, dtype=float))
    if t is None:
        raise ValueError("the premise diagnostics need finite data")
    return t.block_m2(0, 0) / t.weight, t.block_m2(1, 1) / t.weight, t.block_m2(0, 1) / t.weight


def _scaled_block_covariances(data: RowsData, scale: np.ndarray
                              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`block_covariances` of the rows' columns times ``scale``
    (powers of two, :func:`~jdr_stats.core.moments.column_scales`)."""
    y, a, b, weights = data.rows("the premise diagnostics", weights=True)
    t = core_moments.stacked_sums(np.asarray(y, float), (a, b), None if weights is None
                                  else np.asarray(weights, dtype=float), scale=scale)
    if t is None:
        raise ValueError("the premise diagnostics need finite data")
    n1 = a.shape[1]
    cov = t.m2_xx / t.weight
    return cov[:n1, :n1], cov[n1:, n1:], cov[:n1, n1:]


def _sd_and_condition(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, float]:
    """Column SDs of rows ``x`` (normalised weights ``w``) and the condition
    number of their correlation matrix from the ``m x n`` standardised rows
    (NaN when ``n >= m``: singular by construction); memory O(m n)."""
    mean = w @ x
    xc = (x - mean) * np.sqrt(w)[:, None]
    sd = np.sqrt(np.einsum("ij,ij->j", xc, xc))
    if x.shape[1] >= x.shape[0]:
        return sd, float("nan")
    if np.any(sd <= 0):
        return sd, float("inf")
    sv = np.linalg.svd(xc / sd, compute_uv=False)
    return sd, float("inf") if sv[-1] <= 0 else float((sv[0] / sv[-1]) ** 2)


def block_stats(
    data: RowsData,
    rank: int,
    covariances: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
) -> tuple[np.ndarray, np.ndarray, Premises]:
    """The blocks' column SDs (divisor: the total weight) and the premise checks.

    With ``n1 + n2 < m``, from :func:`block_covariances` (or the
    ``covariances`` given).  Wider, memory O(m (n1 + n2)), never an ``n x n``
    matrix: the SDs from the rows, each block's condition number from its
    ``m x n`` standardised rows (n/a when ``n >= m``), the cross-block
    canonical correlations and Bartlett's test n/a (:class:`Premises`
    ``wide``).  A model without rows gives the stored sums' diagonal.

    Examples
    --------
    >>> import numpy as np, jdr_stats as jdr
    >>> rng = np.random.default_rng(0)
    >>> y, a, b = (rng.standard_normal(50), rng.standard_normal((50, 80)),
    ...            rng.standard_normal((50, 9)))
    >>> sd_a, sd_b, p = block_stats(jdr.JointDimReduction(y, a, b).data, rank=1)
    >>> sd_a.shape, p.wide, p.table.loc["log10 condition number a (corr.)", "value"]
    ((80,), True, 'n/a (n1 >= m)')
    """
    m, n1, n2 = data.nobs, len(data.exog_names_a), len(data.exog_names_b)
    q = _response_columns(data)
    if n1 + n2 < m or data.sums is not None or covariances is not None:
        scale = None  # extreme units: the premises (unit-free) of power-of-two scaled columns
        if covariances is None and data.sums is None:
            scale = core_moments.column_scales(data.rows("the premise diagnostics")[1:])
        if scale is not None:
            ca, cb, cab = _scaled_block_covariances(data, scale)
        else:
            ca, cb, cab = covariances if covariances is not None else block_covariances(data)
        prem = replace(premises(ca, cb, cab, nobs=m, rank=rank,
                                n_covariates=_covariates(data)), q=q)
        if n1 + n2 >= m:
            prem = replace(prem, cross_correlations=np.array([]), independence_pvalue=np.nan,
                           wide=True, condition_a=np.nan if n1 >= m else prem.condition_a,
                           condition_b=np.nan if n2 >= m else prem.condition_b)
        sd_a, sd_b = np.sqrt(np.diag(ca)), np.sqrt(np.diag(cb))
        if scale is not None:
            sd_a, sd_b = sd_a / scale[:n1], sd_b / scale[n1:]
        return sd_a, sd_b, prem
    _, a, b, weights = data.rows("the premise diagnostics", weights=True)
    w = np.full(m, 1.0 / m) if weights is None else np.asarray(weights, float)
    w = w / w.sum()
    sd_a, cond_a = _sd_and_condition(np.asarray(a, dtype=float), w)
    sd_b, cond_b = _sd_and_condition(np.asarray(b, dtype=float), w)
    return sd_a, sd_b, Premises(
        nobs=m, n1=n1, n2=n2, rank=int(rank), cross_correlations=np.array([]),
        independence_pvalue=float("nan"), condition_a=cond_a, condition_b=cond_b, wide=True,
        q=q)


def _covariates(data: RowsData) -> int:
    """Columns of the covariates partialled out of the blocks (0 without)."""
    return int(getattr(getattr(data, "adjustment", None), "p", 0) or 0)


def _response_columns(data: RowsData) -> int:
    """``q``: the response's columns (1 for a numeric response or two classes)."""
    info = getattr(data, "response", None)
    return max(1, int(getattr(info, "q", 1) or 1))


def premises_of_data(data: RowsData, rank: int = 1) -> Premises:
    """:func:`premises` of a model's data (rows in memory or moments).

    ``JDRResults.diagnostics`` is this for the fitted data and rank.

    Examples
    --------
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(2000, 4, 4, 1, design="correlated", rho=0.5, seed=0)
    >>> p = premises_of_data(jdr.JointDimReduction(sim.y, sim.a, sim.b).data)
    >>> p.correlated, p.small_sample
    (True, False)
    """
    ca, cb, cab = block_covariances(data)
    return replace(premises(ca, cb, cab, nobs=data.nobs, rank=rank, n_covariates=_covariates(data)),
                   q=_response_columns(data))


def gap_advice(s: Any, rank: int, ratio_min: float) -> str:
    """What to do when ``s_r / s_(r+1)`` is below ``ratio_min`` (weak gap).

    A rank ``k`` is *separated* when ``s_k / s_(k+1) >= ratio_min``.  The
    advice names the separated ranks next to ``rank``: the largest one below
    it, the smallest one above it, or says that none is separated.  At
    ``rank = 1`` it never advises a smaller rank.

    Examples
    --------
    >>> print(gap_advice([5.0, 4.8, 1.0, 0.9], 1, 1.5))  # doctest: +NORMALIZE_WHITESPACE
    the singular values separate rank 2 (s_2 / s_3 = 4.80): consider rank 2 if the rank tests
    support it
    >>> gap_advice([5.0, 1.0, 0.9, 0.8], 2, 1.5)
    'the singular values separate rank 1 (s_1 / s_2 = 5.00): consider rank 1'
    """
    s = np.asarray(s, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = s[:-1] / s[1:]
    sep = [k for k in range(1, len(s)) if ratio[k - 1] >= ratio_min]
    below = [k for k in sep if k < rank]
    above = [k for k in sep if k > rank]
    if below:
        k = below[-1]
        return (f"the singular values separate rank {k} (s_{k} / s_{k + 1} = "
                f"{ratio[k - 1]:.2f}): consider rank {k}")
    if above:
        k = above[0]
        return (f"the singular values separate rank {k} (s_{k} / s_{k + 1} = "
                f"{ratio[k - 1]:.2f}): consider rank {k} if the rank tests support it")
    return (f"no rank up to {len(s) - 1} is separated from the noise (every s_k / s_(k+1) "
            f"< {ratio_min}): no direction is well determined; check the rank tests")


def _p_text(p: float) -> str:
    """``= 0.0123`` or ``< 1e-16``: a p-value after the letter p in a sentence."""
    text = format_pvalue(p)
    return f"< {text[1:]}" if text.startswith("<") else f"= {text}"
