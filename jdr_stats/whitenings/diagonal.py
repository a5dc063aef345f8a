"""The diagonal whitening (``whitening="diagonal"``): the standard
deviations only (the shrinkage whitening at ``t = 1``)."""

from __future__ import annotations

from ._record import TESTS_NOTE, WhiteningMethod, shrunk_factory

METHOD = WhiteningMethod(
    name="diagonal",
    label="standard deviations only",
    when="very wide blocks with weak correlations; unit free",
    covariance="`D^2 = diag(Sigma_hat)`",
    target=("`span(D^{-2} Sigma U)`: `span(U)` only if the block's variables are "
            "uncorrelated (or `span(U)` is invariant under `D^{-2} Sigma`)"),
    needs="rows",
    factory=shrunk_factory("diagonal"),
    tests_need_sample=True,
    built_by_estimator=False,
    note=TESTS_NOTE,
    joint="block-diagonal",
)
