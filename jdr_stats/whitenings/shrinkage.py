"""The shrinkage whitening (``whitening="shrinkage"``): the covariance
``D R_t D``, the sample correlation matrix ``R`` shrunk towards the identity
with the OAS intensity ``t`` and mapped back with the SDs ``D`` (theory
page "Whitening", "The shrinkage estimator")."""

from __future__ import annotations

from ._record import TESTS_NOTE, WhiteningMethod, shrunk_factory

METHOD = WhiteningMethod(
    name="shrinkage",
    label="correlation matrix shrunk towards the identity (OAS), mapped back with the SDs",
    when="any `m`; unit free",
    covariance="`D R_t D` (below)",
    target="`span(U)` as `t -> 0`; `span((D R_t D)^{-1} Sigma U)` in general",
    needs="rows",
    factory=shrunk_factory("shrinkage"),
    tests_need_sample=True,
    built_by_estimator=False,
    note=TESTS_NOTE,
    joint="full",
)
