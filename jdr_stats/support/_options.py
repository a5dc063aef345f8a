"""The options of :func:`~jdr_stats.support.select_support`, grouped by shape.

Two groups, each validated once into a small frozen object:

* **the test** (:class:`TestPlan`, private): which statistic (``test``:
  conditional or marginal), its reference distribution (``method``), the
  covariance of the analytic reference (``covariance``, ``method="chi2"``
  only) and one resampling count for every resampling method
  (``n_resamples``);
* **the selection rule** (public): :class:`FDR` (Benjamini-Hochberg or
  Benjamini-Yekutieli q-values at most ``q``, the default), :class:`Threshold`
  (the threshold rule of section 5.3) or :class:`Stability` (stability
  selection), or the name of one with its default settings.

An option that does not apply to the chosen method or rule raises a
``ValueError`` naming it, instead of being ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from ..runtime._validation import check_choice, check_fraction, check_int, check_positive

__all__ = [
    "DEFAULT_N_RESAMPLES",
    "FDR",
    "Covariance",
    "Method",
    "Rule",
    "RuleArg",
    "SelectionRule",
    "Stability",
    "Test",
    "TestPlan",
    "Threshold",
    "plan_test",
    "resolve_rule",
]

Method = Literal["wild", "chi2", "permutation", "studentized-permutation"]
Test = Literal["conditional", "marginal"]
Covariance = Literal["factored", "sandwich", "hc3"]
Rule = Literal["bh", "by", "threshold", "stability"]

_METHODS = ("wild", "chi2", "permutation", "studentized-permutation")
_RESAMPLING = ("wild", "permutation", "studentized-permutation")

#: Resamples of every resampling test when ``n_resamples`` is not given.
DEFAULT_N_RESAMPLES = 999


@dataclass(frozen=True)
class FDR:
    """Select the variables whose q-value is at most ``q``.

    Parameters
    ----------
    q : float
        Target false discovery rate, in (0, 1), within each block.
    procedure : {"bh", "by"}
        ``"bh"``: Benjamini-Hochberg (independent or positively dependent
        tests); ``"by"``: Benjamini-Yekutieli (any dependence, more
        conservative).

    Examples
    --------
    >>> from jdr_stats.support import FDR
    >>> FDR(q=0.05, procedure="by").name
    'by'
    """

    q: float = 0.1
    procedure: Literal["bh", "by"] = "bh"

    def __post_init__(self) -> None:
        object.__setattr__(self, "q", check_fraction(self.q, "q"))
        check_choice(self.procedure, "procedure", ("bh", "by"))

    @property
    def name(self) -> str:
        """``"bh"`` or ``"by"``: the rule's name in the results."""
        return self.procedure


@dataclass(frozen=True)
class Threshold:
    """The threshold rule of section 5.3 of the paper.

    A variable is selected when some entry of its row (column) of
    ``M = Sigma_a^{-1} S Sigma_b^{-1}`` exceeds ``value`` standard errors
    (entrywise sandwich t statistics).

    Parameters
    ----------
    value : float, optional
        The threshold; default the universal threshold ``sqrt(2 log(n1 n2))``.

    Examples
    --------
    >>> from jdr_stats.support import Threshold
    >>> Threshold(3.0).name
    'threshold'
    """

    value: float | None = None

    def __post_init__(self) -> None:
        if self.value is not None:
            object.__setattr__(self, "value", check_positive(self.value, "threshold"))

    @property
    def name(self) -> str:
        return "threshold"


@dataclass(frozen=True)
class Stability:
    """Stability selection: the sparse estimator on complementary half-samples.

    Parameters
    ----------
    n_subsamples : int
        Half-samples (drawn as complementary pairs), at least 2.
    threshold : float
        Selection frequency needed, in (0.5, 1).
    sparsity : (s1, s2), optional
        Sparsity of the base sparse fit; default the Benjamini-Hochberg
        counts at level ``q`` (at least the rank).
    q : float
        False discovery rate of those default counts.

    Examples
    --------
    >>> from jdr_stats.support import Stability
    >>> Stability(n_subsamples=50, threshold=0.7).name
    'stability'
    """

    n_subsamples: int = 100
    threshold: float = 0.6
    sparsity: tuple[int, int] | None = None
    q: float = 0.1

    def __post_init__(self) -> None:
        n_subsamples = check_int(self.n_subsamples, "n_subsamples", low=2)
        object.__setattr__(self, "n_subsamples", n_subsamples)
        object.__setattr__(
            self, "threshold", check_fraction(self.threshold, "Stability threshold", low=0.5)
        )
        object.__setattr__(self, "q", check_fraction(self.q, "q"))

    @property
    def name(self) -> str:
        return "stability"


SelectionRule = FDR | Threshold | Stability
RuleArg = Rule | FDR | Threshold | Stability


@dataclass(frozen=True)
class TestPlan:
    """The validated test options: statistic, reference, covariance, resamples."""

    __test__ = False  # not a pytest class

    test: str
    method: str
    covariance: str
    n_resamples: int

    @property
    def conditional(self) -> bool:
        return self.test == "conditional"

    @property
    def robust(self) -> bool:
        """Computed by :func:`robust_coordinate_tests` (else :func:`block_tests`)."""
        return self.method in ("wild", "studentized-permutation") or self.covariance == "hc3"




def plan_test(
    *,
    rank: int | None,
    test: str | None,
    method: str | None,
    covariance: str | None,
    n_resamples: int | None,
) -> TestPlan:
    """Validate the test options (defaults as documented in select_support)."""
    if test is None:
        test = "marginal" if rank is None else "conditional"
    test = check_choice(test, "test", ("conditional", "marginal"))
    if test == "conditional" and rank is None:
        raise ValueError('test="conditional" needs the rank of the fit; got rank=None')
    if covariance is not None:
        covariance = check_choice(covariance, "covariance", ("factored", "sandwich", "hc3"))
    if method is None:
        method = "wild" if covariance is None else "chi2"
    method = check_choice(method, "method", _METHODS)
    if covariance is not None and method != "chi2":
        raise ValueError(f'covariance applies to method="chi2" only; got method={method!r}')
    if n_resamples is not None and method not in _RESAMPLING:
        raise ValueError(
            f"n_resamples applies to the resampling methods {_RESAMPLING} only; "
            f"got method={method!r}"
        )
    n = DEFAULT_N_RESAMPLES
    if n_resamples is not None:
        n = check_int(n_resamples, "n_resamples", low=1)
    return TestPlan(test=test, method=method, covariance=covariance or "factored", n_resamples=n)


def resolve_rule(rule: object, *, fdr: float | None = None) -> SelectionRule:
    """The rule object of ``rule`` (a name or an object); ``fdr`` the level
    of the rules named ``"bh"``, ``"by"`` and ``"stability"``."""
    if isinstance(rule, (FDR, Threshold, Stability)):
        if fdr is not None:
            raise ValueError(
                f"give the settings of the rule in the rule object {rule!r}, not as "
                "keywords; got fdr"
            )
        return rule
    if not isinstance(rule, str):
        raise TypeError(
            'rule must be "bh", "by", "threshold", "stability" or an FDR, Threshold or '
            f"Stability object; got {type(rule).__name__}"
        )
    name = check_choice(rule, "rule", ("bh", "by", "threshold", "stability"))
    if fdr is not None and name == "threshold":
        raise ValueError('fdr applies to rule="bh", "by" or "stability"; got rule="threshold"')
    q = 0.1 if fdr is None else check_fraction(fdr, "fdr")
    if name in ("bh", "by"):
        return FDR(q=q, procedure="by" if name == "by" else "bh")
    if name == "threshold":
        return Threshold()
    return Stability(q=q)


def rule_q(rule: SelectionRule) -> float:
    """The false discovery rate of the rule's q-values (0.1 for the threshold rule)."""
    return float(getattr(rule, "q", 0.1))


def clip_counts(counts: tuple[int, int], rank: int, widths: tuple[int, int]) -> tuple[int, int]:
    """Counts raised to at least ``rank`` and at most the block widths."""
    return (int(np.clip(counts[0], rank, widths[0])), int(np.clip(counts[1], rank, widths[1])))
