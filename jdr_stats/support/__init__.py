"""Which variables of each block matter: coordinate tests and support selection.

Modules: ``_select`` (the orchestration, :func:`select_support` and
:func:`choose_support`), ``_options`` (the options grouped by shape: the
selection rules :class:`FDR`, :class:`Threshold`, :class:`Stability` and the
validated test plan), ``_statistics`` (the coordinate statistics of one
block, :class:`CoordinateTests`), ``_robust`` (the heteroscedasticity-robust statistics on narrow
inputs, :func:`robust_coordinate_tests`), ``_robust_rows`` (their shared
pieces straight from chunks of rows, the default path), ``_loo`` (the
leave-one-out bases of the conditional tests from one eigendecomposition),
``_rules`` (the selection rules), ``_results``
(:class:`SupportResults`).  The NaN-safe BH/BY q-values :func:`fdr_qvalues`
live with the other test helpers in :mod:`jdr_stats.inference.hypotheses`.

For every variable ``j`` of block a the null hypothesis is that row ``j`` of
``U`` is zero (the variable does not enter ``U^T a``), in the original
coordinates; likewise for block b and ``V``.  Under the model (independent
blocks, linear conditional mean of each block given its reduction) this
implies that row ``j`` of ``M = Sigma_a^{-1} S Sigma_b^{-1}`` is zero, ``S``
the centred cross moment, and that is what the tests test.

Three tests (``docs/theory/support.md`` has the derivations):

* **marginal**: the Wald statistic of row ``j`` of ``M`` (``n2`` degrees of
  freedom), with the influence function that accounts for the estimated
  covariance of the block;
* **conditional** on a fitted rank ``r``: the row projected on the estimated
  other-block subspace (``r`` degrees of freedom; much more power);
* **permutation**: the same statistics against the distribution obtained by
  permuting the partial residual of the variable.

Each is computed as the homoscedastic partial F test of a reverse regression
or, robust to heavy-tailed correlated blocks, with a heteroscedasticity-
robust covariance: the wild bootstrap of the robust score statistic is the
default of both tests.

Selection rules: Benjamini-Hochberg at a target false discovery rate (the
default), Benjamini-Yekutieli (any dependence), the threshold rule of
section 5.3 of the paper, and stability selection (complementary-pairs
subsampling of the sparse estimator).
"""

from __future__ import annotations

from ._options import FDR, Covariance, Method, Rule, Stability, Test, Threshold
from ._results import SupportResults
from ._robust import fdr_qvalues, robust_coordinate_tests
from ._select import SupportChoice, choose_sparsity, choose_support, select_support
from ._statistics import CoordinateTests

__all__ = [
    "FDR",
    "CoordinateTests",
    "Covariance",
    "Method",
    "Rule",
    "Stability",
    "SupportChoice",
    "SupportResults",
    "Test",
    "Threshold",
    "choose_sparsity",
    "choose_support",
    "fdr_qvalues",
    "robust_coordinate_tests",
    "select_support",
]
