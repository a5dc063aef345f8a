"""No whitening (``whitening="none"``, the historical ``standardize=False``):
the blocks are centred only, so the directions depend on the variables'
units."""

from __future__ import annotations

from ._record import TESTS_NOTE, WhiteningMethod

METHOD = WhiteningMethod(
    name="none",
    label="none (centring only)",
    when="variables on a common scale; the result depends on the units",
    covariance="`I`",
    target="`span(Sigma U)`; depends on the units of the variables",
    needs="centring",
    factory=None,
    tests_need_sample=True,
    built_by_estimator=True,
    note=TESTS_NOTE,
    joint="block-diagonal",
)
