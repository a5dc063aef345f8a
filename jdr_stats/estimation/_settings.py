"""The settings record of a fit (layer 0): what ``fit()`` was asked, what it
chose, and why.

Every automatic choice is a :class:`~jdr_stats.policy.Choice` made by
:mod:`jdr_stats.policy`; the record keeps each one, and the fit's summary
prints their reasons from it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..policy import Choice

__all__ = ["FitSettings"]


@dataclass(frozen=True)
class FitSettings:
    """What a fit used and why (read-only).

    Attributes
    ----------
    whitening : Choice
        The whitening used (``name``: a key of
        :data:`jdr_stats.whitenings.WHITENING_METHODS`), with the reason (``"given"``, or the
        rule of ``whitening="auto"``: :func:`jdr_stats.policy.whitening`).
    rank_method : str or None
        The rank tests (or ``"ladle"``) that chose the rank of a
        ``rank="auto"`` fit; None when the rank was given.
    rank_choice : Choice or None
        How ``rank_method="auto"`` chose the test
        (:func:`jdr_stats.policy.rank_method`); None when the method was
        given or the rank was.
    alpha : float or None
        Level of the rank tests of ``rank="auto"``.
    sparsity : (int, int) or None
        ``(s1, s2)`` of a sparse fit.
    support : SupportResults or None
        The coordinate tests that chose the sparsity of ``sparsity="auto"``.
    support_note : str or None
        The summary's sentence on that choice.
    sparsity_choice : Choice or None
        How ``sparsity="cv"`` chose ``(s1, s2)``
        (:func:`jdr_stats.policy.sparsity_cv`); None otherwise.
    sparsity_cv : DataFrame or None
        Its cross-validation curve (one row per candidate ``(s1, s2)``).
    estimator : Choice or None
        Whitened per block (``"per-block"``, the paper's estimator, which
        assumes independent blocks) or across blocks (``"joint"``), with the
        reason (:func:`jdr_stats.policy.block_estimator`); None in results
        saved before the choice existed (per block).
    interactions : Choice or None
        The interaction estimand of ``fit(..., interactions=...)``
        (``"stein"``, ``"orthogonal"`` or ``"orthogonal_quadratic"``), with
        its reason; None in results saved before the choice existed
        (``"stein"``).
    """

    whitening: Choice
    rank_method: str | None = None
    rank_choice: Choice | None = None
    alpha: float | None = None
    sparsity: tuple[int, int] | None = None
    support: Any = None
    support_note: str | None = None
    estimator: Choice | None = None
    sparsity_choice: Choice | None = None
    sparsity_cv: Any = None
    interactions: Choice | None = None

    @property
    def interactions_name(self) -> str:
        """The interaction estimand's name (``"stein"`` for older results)."""
        return "stein" if self.interactions is None else self.interactions.name

    @property
    def orthogonal(self) -> bool:
        """True when the fit used an interaction estimand other than the default
        (orthogonal or regression), which has its own rank test."""
        return self.interactions is not None and self.interactions.name != "stein"

    @property
    def joint(self) -> bool:
        """True when the blocks were whitened jointly (the joint estimator)."""
        return self.estimator is not None and self.estimator.name == "joint"

    @property
    def standardize(self) -> bool:
        """True unless the fit used no whitening."""
        return self.whitening.name != "none"

    @property
    def choices(self) -> dict[str, Choice]:
        """The automatic choices of the fit, by what they chose."""
        out = {"whitening": self.whitening}
        if self.estimator is not None:
            out["estimator"] = self.estimator
        if self.orthogonal and self.interactions is not None:
            out["interactions"] = self.interactions
        if self.rank_choice is not None:
            out["rank_method"] = self.rank_choice
        if self.sparsity_choice is not None:
            out["sparsity"] = self.sparsity_choice
        return out

    def reasons(self) -> list[str]:
        """One sentence per choice, for the summary."""
        return [f"{what.replace('_', ' ').capitalize()}: {c.name} ({c.reason})."
                for what, c in self.choices.items()]
