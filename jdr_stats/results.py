"""The results of :meth:`jdr_stats.JointDimReduction.fit` (:class:`JDRResults`).

One public type whatever the number of blocks.  A results object holds
the fit of the engine that computed it and answers every public member
from it: the two-block fit (one cross moment's SVD,
:class:`~jdr_stats.fitting._two_block_results.TwoBlockFit`) or the K-block
fit (:class:`~jdr_stats.fitting._kfit.KBlockFit`, three or more blocks, a
rank per block, or ``main_effects=True``).  A member that only one engine
has (the two-block estimate's own objects, the K-block eigenvalues) raises
an AttributeError that names the engine and the member to read instead.

The members are built from the engines' own (their docstrings, and the
two-block signature where both have the member; a docstring says where the
K-block call differs), so a member added to an engine is a member here
(:data:`MEMBERS`).
"""

from __future__ import annotations

import functools
import inspect
import warnings
from typing import Any

from .estimation._settings import FitSettings
from .fitting._kfit import KBlockFit
from .fitting._two_block_results import TwoBlockFit
from .persistence._export import ExportMixin

__all__ = ["MEMBERS", "FitSettings", "JDRResults"]

_ENGINES: tuple[type, ...] = (TwoBlockFit, KBlockFit)

#: The members only one engine has, each with the member of the other
#: engine that answers the same question.
_ONE_ENGINE = {
    "singular_values": "eigenvalues", "coef_matrix": "directions",
    "estimate": "directions", "moments": "model.moments()",
    "directions_a_whitened": "whitened_bases[name]",
    "directions_b_whitened": "whitened_bases[name]",
    "directions_a_std": "loadings[name]", "directions_b_std": "loadings[name]",
    "eigenvalues": "singular_values",
}


def _public(cls: type) -> set[str]:
    return {n for n in dir(cls) if not n.startswith("_")}


#: Every public member of the results: those of either engine, but
#: ``save``, which writes this object (the engines' fits are not files).
MEMBERS: tuple[str, ...] = tuple(sorted((_public(TwoBlockFit) | _public(KBlockFit)) - {"save"}))


def _engine_name(impl: Any) -> str:
    return "two-block" if isinstance(impl, TwoBlockFit) else "K-block"


def _missing(impl: Any, name: str) -> AttributeError:
    other = _ONE_ENGINE.get(name, "the members listed in dir(results)")
    k = len(getattr(impl, "block_names", ()))
    return AttributeError(
        f"{name!r} is not a member of this fit: it was computed by the "
        f"{_engine_name(impl)} engine ({k} blocks; the two-block engine fits two blocks "
        f"of one rank without main effects), which answers it with {other}")


class JDRResults(ExportMixin):
    """Results of :meth:`JointDimReduction.fit` at any number of blocks (read-only).

    Directions are labelled DataFrames (index: variable names, columns
    ``dir1..dirr``) when the input had pandas labels, plain arrays
    otherwise; :attr:`directions` and :attr:`loadings` are by block name,
    and at two blocks ``directions_a``/``directions_b`` and every other
    ``_a``/``_b`` name are their view by block.

    Two blocks of one rank without main effects are fitted by the
    two-block engine (one cross moment's SVD, with
    :attr:`singular_values`); three or more blocks, a rank per block or
    ``main_effects=True`` by the K-block engine (with :attr:`eigenvalues`).
    Both give the same directions on the same two blocks (test
    ``tests/test_engine_equivalence.py``).  The methods take the same
    arguments whichever engine ran (``transform(blocks)`` with the blocks
    by name at every K, ``transform(exog_a, exog_b)`` for two); an option
    only one engine has (``bootstrap(interval="calibrated")``, a
    permutation count for the K-block rank tests, which permute nothing)
    is refused by name.  ``drop1`` and ``test_variables`` default to the
    K-block engine's combined test there and to the conditional test of
    the two-block engine.
    """

    __slots__ = ("_impl",)

    def __init__(self, impl: Any) -> None:
        if not isinstance(impl, _ENGINES):
            raise TypeError(f"JDRResults holds a fit of one of its engines; got "
                            f"{type(impl).__name__}")
        object.__setattr__(self, "_impl", impl)

    # -- pickling and the results file ----------------------------------
    def __getstate__(self) -> dict[str, Any]:
        return {"_impl": self._impl}

    def __setstate__(self, state: Any) -> None:
        if isinstance(state, tuple):  # (dict, slots) of the default protocol
            state = {**(state[0] or {}), **(state[1] or {})}
        impl = state.get("_impl") if isinstance(state, dict) else None
        if impl is None and isinstance(state, dict):
            # a file of format 1: the two-block fit's own attributes
            impl = TwoBlockFit.__new__(TwoBlockFit)
            impl.__dict__.update(state)
        if not isinstance(impl, _ENGINES):
            raise TypeError(f"the state of a JDRResults holds a {type(impl).__name__}, "
                            "not a fit")
        object.__setattr__(self, "_impl", impl)

    # -- what the engines' code reads ------------------------------------
    def __getattr__(self, name: str) -> Any:
        # Reached only when normal lookup fails: a private attribute of the
        # fit (read by the package's own procedures), or a public member a
        # property of the engine refused.
        if name.startswith("__") or name == "_impl":
            raise AttributeError(name)
        impl = object.__getattribute__(self, "_impl")
        if not name.startswith("_") and not hasattr(type(impl), name):
            raise _missing(impl, name)
        return getattr(impl, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._impl, name, value)

    def __str__(self) -> str:
        return str(self._impl)

    def __repr__(self) -> str:
        impl = self._impl
        return (f"<JDRResults: {len(impl.block_names)} blocks {list(impl.block_names)}, "
                f"rank {impl.rank!r}, {_engine_name(impl)} engine>")

    def _repr_html_(self) -> str:
        return str(self._impl._repr_html_())

    def _wrap(self, value: Any) -> Any:
        """A fit an engine's member returned, as results; an object that
        points back at this fit (a bootstrap) points at these results."""
        if isinstance(value, _ENGINES):
            return value if value is self._impl else JDRResults(value)
        if value is self._impl:
            return self
        if getattr(value, "_results", None) is self._impl:
            value._results = self
        return value


def _doc(name: str) -> tuple[Any, str]:
    """The member of the first engine that has ``name``, and its docstring
    (with the K-block call where it differs from the two-block one)."""
    found = [inspect.getattr_static(c, name) for c in _ENGINES if hasattr(c, name)]
    first = found[0]
    doc = inspect.getdoc(first) or ""
    if len(found) == 2 and inspect.isfunction(first) and inspect.isfunction(found[1]):
        two, kay = inspect.signature(first), inspect.signature(found[1])
        if two != kay:
            bare = inspect.Signature([p.replace(annotation=p.empty)
                                      for p in list(kay.parameters.values())[1:]])
            head, sep, rest = doc.partition("\n\n")
            note = (f"At K blocks (the K-block engine): ``{name}{bare}``. "
                    f"{(inspect.getdoc(found[1]) or '').partition(chr(10) * 2)[0]}")
            doc = f"{head}\n\n{note}{sep}{rest}" if sep else f"{head}\n\n{note}"
    return first, doc


def _answer(self: JDRResults, name: str, args: tuple[Any, ...] | None,
            kwargs: dict[str, Any]) -> Any:
    """The engine's member ``name`` (called with ``args`` unless None), its
    warnings issued again at the caller's line (not at this module's)."""
    impl = self._impl
    if not hasattr(type(impl), name):
        raise _missing(impl, name)
    with warnings.catch_warnings(record=True) as caught:
        out = getattr(impl, name) if args is None else getattr(impl, name)(*args, **kwargs)
    for w in caught:
        warnings.warn(w.message, w.category, stacklevel=3)
    return self._wrap(out)


def _forward(name: str) -> Any:
    first, doc = _doc(name)
    if isinstance(first, (property, functools.cached_property)):
        def get(self: JDRResults) -> Any:
            return _answer(self, name, None, {})

        get.__name__ = name
        return property(get, doc=doc)

    def call(self: JDRResults, *args: Any, **kwargs: Any) -> Any:
        return _answer(self, name, args, kwargs)

    call.__name__ = name
    call.__qualname__ = f"JDRResults.{name}"
    call.__doc__ = doc
    call.__wrapped__ = first  # type: ignore[attr-defined]  # the signature shown
    return call


for _name in MEMBERS:
    setattr(JDRResults, _name, _forward(_name))
del _name
