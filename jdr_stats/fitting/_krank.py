"""The rank tests of a K-block fit through the registry of rank tests: the
choice of each block's rank from a registered test's tables over the
whitened K-block design (:class:`~jdr_stats.inference._kblock_design.KBlockDesign`),
the warning of a block with no evidence of any direction, and the
:class:`~jdr_stats.RankTestResults` (``kind="per-block"``) that
:meth:`KBlockFit.rank_tests` returns."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence

import pandas as pd

from .. import policy
from ..exceptions import RankSelectionWarning
from ..inference._kblock_design import KBlockDesign
from ..inference._rank_results import RankTestResults
from ..inference.kblock_rank import choose_block_rank
from ..inference.rank_methods import RankTestMethod, RowOptions
from ..runtime._validation import check_int

__all__ = ["block_rank_choice", "block_rank_results", "checked_rank_options", "method_text",
           "up_to"]


def method_text(method: RankTestMethod) -> str:
    """The test's words in the fit's settings and summaries (the robust
    test's ``"robust per-block"``, as before the registry served K blocks)."""
    return "robust per-block" if method.name == "robust" else method.name


def block_rank_choice(design: KBlockDesign, method: RankTestMethod, alpha: float,
                      stop: bool) -> tuple[dict[str, pd.DataFrame], dict[str, int],
                                           policy.Choice | None]:
    """Each block's table of ``method`` (up to the first rank not rejected at
    ``alpha`` when ``stop``), the ranks chosen and the influence route the
    test took (None when it reports none)."""
    assert method.tables is not None  # rank_methods.kblock_method refuses it
    tables = method.tables(design, RowOptions(stop_alpha=alpha if stop else None))
    ranks = {n: choose_block_rank(tables[n], alpha, w)
             for n, w in zip(design.names, design.widths, strict=True)}
    if stop:
        _warn_no_evidence(tables, alpha, design.widths, method_text(method), stacklevel=5)
    return tables, ranks, design.cache.get("influence")


def _warn_no_evidence(tables: Mapping[str, pd.DataFrame], alpha: float,
                      widths: Sequence[int], test: str = "robust per-block",
                      stacklevel: int = 4) -> None:
    """``rank="auto"``: a :class:`~jdr_stats.exceptions.RankSelectionWarning`
    naming the blocks whose test of ``H0: rank_k <= 0`` was not rejected at
    ``alpha`` (no evidence of any direction; rank 0 is returned), as the
    two-block fit warns."""
    none = {n: float(t["pvalue"].iloc[0]) for (n, t), w in zip(tables.items(), widths,
                                                               strict=True)
            if choose_block_rank(t, alpha, w) == 0}
    if not none:
        return
    which = ", ".join(f"{n!r} (p = {p:.3g})" for n, p in none.items())
    warnings.warn(
        f"no rank test rejected H0: rank_k <= 0 for block(s) {which} ({test} "
        f"tests, alpha={alpha}): the data show no evidence of any direction of these "
        "blocks' pieces (y may still depend on the blocks through additive or even links); "
        "returning rank 0 (no directions) for them", RankSelectionWarning, stacklevel=stacklevel)


def block_rank_results(tables: Mapping[str, pd.DataFrame], *, widths: Sequence[int],
                       nobs: int, method: str, influence: Mapping[str, str] | None,
                       ) -> RankTestResults:
    """The per-block tests of a fit (:meth:`RankTestResults.per_block`):
    ``method`` the registry key of the test or its words (``method_text``),
    ``influence`` the fit's setting of the rows' influences (its ``reason``)."""
    key = method.removesuffix(" per-block")
    label = "robust per-block" if key == "robust" else key
    return RankTestResults.per_block(
        tables, widths=widths, nobs=nobs, method=key, method_label=label,
        influence="" if influence is None else influence["reason"])


def checked_rank_options(max_rank: object, n_perm: object, seed: object, progress: object,
                         n_jobs: object, widths: Sequence[int]) -> int | None:
    """The options of the two-block ``rank_tests`` a K-block fit's tests
    take: ``max_rank`` (each block's tables up to it, at most ``n_k - 1``);
    the others belong to permutation tests, which no K-block test draws, so
    a value other than the default is refused by name."""
    for name, value, default in (("n_perm", n_perm, None), ("seed", seed, None),
                                 ("progress", progress, False), ("n_jobs", n_jobs, None)):
        if value is not default and not (default is False and value is None):
            raise ValueError(f"{name}={value!r}: the K-block rank tests draw no permutations "
                             f"(their references are computed), so {name} has no effect "
                             "there; leave it out")
    if max_rank is None:
        return None
    return check_int(max_rank, "max_rank", low=0, high=max(widths) - 1,
                     why=" (the widest block's width - 1)")


def up_to(tables: Mapping[str, pd.DataFrame], max_rank: int | None) -> dict[str, pd.DataFrame]:
    """Each block's table of ``H0: rank_k <= r`` for ``r <= max_rank``."""
    if max_rank is None:
        return dict(tables)
    return {n: t[t.index <= max_rank] for n, t in tables.items()}
