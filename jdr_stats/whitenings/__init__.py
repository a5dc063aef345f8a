"""The registry of whitenings: one module per kind, one entry each.

Each module of this package (``sample``, ``shrinkage``, ``diagonal``,
``none``) registers one :class:`WhiteningMethod` as ``METHOD``: its name and
label, what it needs (the means only, each block's sample covariance, or
the rows for the dual route of a block wider than the rows), whether the
rank and support tests whiten with the sample covariance instead, whether
the estimator builds it itself (the bootstrap's batched refit), the
summary's note on the inference it allows, a check of the rows it needs and
the factory building one block's map from ``(mean, cov, nobs, argname,
names, rows=None, weights=None)`` (:class:`BlockFactory`).
:data:`WHITENING_METHODS` maps the keys to them; the estimator
(``jdr_stats.estimation._estimate.block_whitening_pair``), ``fit(whitening=...)``,
the CLI's ``--whitening`` choices, the bootstrap's accepted kinds and the
docs' tables of whitenings derive from it (``tests/test_whitening_registry.py``
checks every entry).  ``"auto"`` is not a whitening but a rule choosing one
(:func:`jdr_stats.policy.whitening`).

Adding a whitening: a module here defining ``METHOD``, its line below, and
its name in ``WhiteningKind`` (mypy needs a literal).
"""

from __future__ import annotations

from typing import Literal

from .. import policy
from . import diagonal, none, sample, shrinkage
from ._record import TESTS_NOTE, BlockFactory, WhiteningMethod

__all__ = ["TESTS_NOTE", "WHITENINGS", "WHITENING_METHODS", "BlockFactory",
           "WhiteningKind", "WhiteningMethod", "table_rows", "target_rows"]

#: The whitenings by key, in the order the docs and the CLI list them.
WHITENING_METHODS: dict[str, WhiteningMethod] = {
    m.name: m for m in (sample.METHOD, shrinkage.METHOD, diagonal.METHOD, none.METHOD)
}

#: ``fit(whitening=...)``: a registered whitening or ``"auto"`` (checked
#: against the registry by ``tests/test_whitening_registry.py``).
WhiteningKind = Literal["auto", "sample", "shrinkage", "diagonal", "none"]

#: The accepted values of ``whitening=`` (``"auto"`` first).
WHITENINGS: tuple[str, ...] = ("auto", *WHITENING_METHODS)

_NEEDS = {"centring": "the means only",
          "covariance": "each block's covariance",
          "rows": "each block's covariance, or its rows (m x m Gram) when wider than them"}


def table_rows() -> list[tuple[str, str, str, str, str]]:
    """The guide's table of whitenings (written by ``docs/conf.py`` into
    ``docs/_generated/whitenings.md``): ``whitening=``, covariance used,
    when, what it needs, what the rank and support tests whiten with;
    ``"auto"`` first, with the number of :mod:`jdr_stats.policy`."""
    ratio = f"{policy.AUTO_SAMPLE_MAX_RATIO:g}"
    rows = [('`"auto"` (default)',
             f'`"sample"` while `max(n1, n2)/m <= {ratio}`, else `"shrinkage"`',
             "always a good start", "as the one chosen", "as the one chosen")]
    rows += [(f'`"{m.name}"`', m.label, m.when, _NEEDS[m.needs],
              "the sample covariance" if m.tests_need_sample else "this whitening")
             for m in WHITENING_METHODS.values()]
    return rows


def target_rows() -> list[tuple[str, str, str]]:
    """The theory page's table of targets (``docs/_generated/whitening_targets.md``):
    whitening, the matrix ``W`` it whitens with, the span it targets."""
    return [(f'`"{m.name}"`', m.covariance, m.target) for m in WHITENING_METHODS.values()]
