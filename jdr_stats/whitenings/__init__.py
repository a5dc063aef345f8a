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

Every number of blocks is served by the same entry: :func:`per_block_whitening`
builds each block's map with the entry's factory, for the two-block
estimator and the K-block fit alike (in memory and streamed), so a
whitening registered once whitens any ``K``.

Adding a whitening: a module here defining ``METHOD``, and its line below
(at run time: ``WHITENING_METHODS[METHOD.name] = METHOD``; the checks of
``whitening=`` read the registry).  Its name in ``WhiteningKind`` only gives
mypy's literal of ``fit(whitening=...)``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, Literal

import numpy as np

from .. import policy
from ..core.whitening import DesignWhitening
from . import diagonal, none, sample, shrinkage
from ._record import TESTS_NOTE, BlockFactory, WhiteningMethod

__all__ = ["TESTS_NOTE", "WHITENINGS", "WHITENING_METHODS", "BlockFactory",
           "WhiteningKind", "WhiteningMethod", "kblock_refusal", "per_block_whitening",
           "table_rows", "target_rows", "whitening_names"]

#: The whitenings by key, in the order the docs and the CLI list them.
WHITENING_METHODS: dict[str, WhiteningMethod] = {
    m.name: m for m in (sample.METHOD, shrinkage.METHOD, diagonal.METHOD, none.METHOD)
}

#: ``fit(whitening=...)``: a registered whitening or ``"auto"`` (checked
#: against the registry by ``tests/test_whitening_registry.py``).
WhiteningKind = Literal["auto", "sample", "shrinkage", "diagonal", "none"]

#: The accepted values of ``whitening=`` (``"auto"`` first).
WHITENINGS: tuple[str, ...] = ("auto", *WHITENING_METHODS)



def whitening_names() -> tuple[str, ...]:
    """The accepted values of ``whitening=`` now (``"auto"`` first, then the
    registry's keys: an entry registered at run time included)."""
    return ("auto", *WHITENING_METHODS)


def kblock_refusal(kind: str) -> str:
    """The message of a K-block fit refusing a whitening without a factory
    (the blocks centred, not whitened: the pieces' unit-noise scaling
    needs whitened blocks)."""
    return (f'whitening="{kind}" is not supported'
            f" for a K-block fit (three or more "
            "blocks, a rank per block or main_effects=True): it has no map to whiten "
            "a block with; use " + ", ".join(repr(k) for k in whitening_names()
                                             if k == "auto" or
                                             WHITENING_METHODS[k].factory is not None))


def per_block_whitening(
    kind: str,
    means: Sequence[np.ndarray],
    covs: Sequence[np.ndarray | None],
    nobs: int,
    argnames: Sequence[str],
    labels: Sequence[Sequence[str]],
    *,
    rows: Sequence[np.ndarray | None] | None = None,
    weights: np.ndarray | None = None,
    scales: Sequence[np.ndarray | None] | None = None,
    scale: np.ndarray | None = None,
) -> DesignWhitening[Any] | None:
    """The per-block whitening of ``K >= 2`` blocks of the registered
    ``kind``: block ``k``'s map built by the entry's factory from its mean,
    covariance (None: from its ``rows``, the dual route), ``nobs``, its
    argument name and variable names; None where the entry has no factory
    (``"none"``: the blocks are centred, not whitened).  ``scales``: each
    block's column scales, kept on its map (``scale``: all of them, kept on
    the design's whitening, and cut into the blocks' when ``scales`` is
    None)."""
    method = WHITENING_METHODS[kind]
    if method.factory is None:
        return None
    if scales is None and scale is not None:
        cuts = np.cumsum([len(mu) for mu in means])[:-1]
        scales = np.split(scale, cuts)
    maps = []
    for k, (mean, cov, arg, lab) in enumerate(zip(means, covs, argnames, labels,
                                                  strict=True)):
        made = method.factory(mean, cov, nobs, arg, lab,
                              rows=None if rows is None else rows[k], weights=weights)
        sc = None if scales is None else scales[k]
        maps.append(made if sc is None else replace(made, scale=sc))
    return DesignWhitening.per_block(maps, scale)


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
