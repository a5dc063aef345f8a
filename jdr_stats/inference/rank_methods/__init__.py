"""The registry of rank tests: one module per test, one entry each.

Each module of this package (``robust``, ``wald``, ``chi2``, ``general``,
``permutation``, ``spectral``, ``combined``) defines its row computation
and registers one :class:`RankTestMethod` as ``METHOD``: its name and label,
what it needs from the data (``"moments"``, a row ``"source"`` or the
``"rows"`` in memory), its default replicate count (None: it draws none),
whether it takes a response of ``q > 1`` columns, its columns, assumptions
and reference, and its section of ``docs/theory/rank_tests.md``.
:data:`RANK_METHODS` maps the keys to them; ``rank_tests`` looks the method
up there and never branches on its name, and the ``RankMethod`` literal,
the CLI's ``--rank-method`` choices, the default replicate counts and the
docs' table of methods derive from it (``tests/test_rank_registry.py``
checks every entry).

Every K is served by the same entry.  A test's ``row`` is its two-block
computation, read from blocks 0 and 1 of the whitened design; its
``tables`` (optional) the computation over the whitened design of any
``K >= 2`` blocks (:class:`~jdr_stats.inference._kblock_design.KBlockDesign`:
the blocks' names, whitened rows, response, weights, estimator and factors),
each block's table of ``H0: rank_k <= r``.  ``KBlockFit.rank_tests`` and
the K-block ``fit(rank="auto")`` look the method up with
:func:`kblock_method`, which refuses a two-block test (no ``tables``) with
its ``two_block_reason``.

Adding a test: a module here defining ``METHOD``, and its line below (at
run time: ``RANK_METHODS[METHOD.name] = METHOD``).  Only a two-block test
also needs its name in ``RankMethod`` (``rank_tests.py``), for mypy's
literal of ``JDRResults.rank_tests``; the checks at run time read the
registry.
"""

from __future__ import annotations

from ... import policy
from . import chi2, combined, general, permutation, robust, spectral, wald
from ._record import RankTestMethod, Row, RowOptions, tail_notes
from .combined import combined_numbers, flips_needed

__all__ = ["KBLOCK_DEFAULT", "RANK_METHODS", "RankTestMethod", "Row", "RowOptions",
           "combined_numbers", "default_replicates", "flips_needed", "kblock_method",
           "reference_rows", "table_rows", "tail_notes"]

#: The rank-test methods by key, in the order the docs and the CLI list them
#: (model: linearmodels' ``COVARIANCE_ESTIMATORS``).
RANK_METHODS: dict[str, RankTestMethod] = {
    m.name: m for m in (robust.METHOD, wald.METHOD, chi2.METHOD, general.METHOD,
                        permutation.METHOD, spectral.METHOD, combined.METHOD)
}


#: The rank test ``"auto"`` runs on a design of K blocks.
KBLOCK_DEFAULT = "robust"


def kblock_method(method: str, argname: str = "method",
                  context: str = "a fit of a rank per block") -> RankTestMethod:
    """The registered test ``method`` names for a design of K blocks
    (``"auto"``: :data:`KBLOCK_DEFAULT`); a ``ValueError`` naming ``argname``,
    the value and ``context`` (what is fitted) when no test has that name, or
    when the test has no K-block tables (a two-block test: its
    ``two_block_reason``)."""
    name = KBLOCK_DEFAULT if method == "auto" else method
    spec = RANK_METHODS.get(name) if isinstance(name, str) else None
    if spec is not None and spec.tables is not None:
        return spec
    names = [k for k, m in RANK_METHODS.items() if m.tables is not None]
    takes = " or ".join(f'"{k}"' for k in ("auto", *names))
    head = (f"{argname}: {context} has the {' and '.join(names)} per-block "
            f"test{'s' if len(names) > 1 else ''} only ({takes}); got {method!r}")
    if spec is None:
        raise ValueError(head)
    raise ValueError(f"{head} ({spec.label}), a two-block test: {spec.two_block_reason}")


def default_replicates() -> dict[str, int]:
    """Replicates per row of each resampling test when ``n_perm`` is None."""
    return {k: m.replicates for k, m in RANK_METHODS.items() if m.replicates is not None}


def table_rows() -> list[tuple[str, ...]]:
    """One row per registered test for the docs' table of methods (written by
    ``docs/conf.py`` into ``docs/_generated/rank_methods.md``): name, columns
    after ``statistic, df, pvalue`` and what they hold, reference
    distribution, what it needs, whether it takes ``q > 1`` columns, default
    replicates, theory section."""
    needs = {"moments": "the moments", "source": "sums over rows (streams)",
             "rows": "the rows in memory"}
    return [(f'`"{m.name}"`',
             (", ".join(f"`{c}`" for c in m.columns) + ": " if m.columns else "")
             + m.columns_note,
             m.distribution, needs[m.needs], "yes" if m.takes_q else "no",
             str(m.replicates) if m.replicates is not None else "-", m.theory)
            for m in RANK_METHODS.values()]


def reference_rows() -> list[tuple[str, str, str, str]]:
    """One row per registered test for the docs' table of references:
    name, reference distribution, what it assumes, what it costs (the
    numbers of ``jdr_stats.policy`` filled in)."""
    values = {k: getattr(policy, k) for k in dir(policy) if k.isupper()}
    rows: list[tuple[str, str, str, str]] = []
    for m in RANK_METHODS.values():
        reference, assumes, cost = (text % values for text in m.docs)
        rows.append((f'`"{m.name}"`', reference, assumes, cost))
    return rows
