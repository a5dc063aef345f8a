"""Heavy modules imported when first used, not when the package is imported.

``scipy.stats``, ``scipy.integrate`` and ``scipy.linalg`` take most of the time of a plain
``import jdr_stats``; the modules that need them bind a :class:`LazyModule`
in their place, which imports the real module at its first attribute access
(a p-value, a quadrature) and forwards every access to it.  Type checkers
see the real module (the proxies are bound under ``not TYPE_CHECKING``).
This module is at the bottom of the package's layers: it imports nothing
from the package.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import TYPE_CHECKING, Any

__all__ = ["LazyModule", "blas", "integrate", "lapack", "linalg", "sparse_linalg", "stats"]


class LazyModule:
    """A stand-in for the module ``name``, imported at first attribute access.

    Parameters
    ----------
    name : str
        The module's absolute name (``"scipy.stats"``).

    Examples
    --------
    >>> math = LazyModule("math")
    >>> math.sqrt(4.0)
    2.0
    """

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def _module(self) -> ModuleType:
        return importlib.import_module(self._name)

    def __getattr__(self, attr: str) -> Any:
        return getattr(self._module(), attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


if TYPE_CHECKING:
    from scipy import integrate, linalg, stats
    from scipy.linalg import blas, lapack
    from scipy.sparse import linalg as sparse_linalg
else:
    #: ``scipy.stats``, imported at the first distribution used.
    stats = LazyModule("scipy.stats")
    #: ``scipy.integrate``, imported at the first quadrature (the Imhof tail).
    integrate = LazyModule("scipy.integrate")
    #: ``scipy.linalg`` and its BLAS and LAPACK wrappers, imported at the
    #: first factorisation (scipy's own import costs about 0.2 s).
    linalg = LazyModule("scipy.linalg")
    blas = LazyModule("scipy.linalg.blas")
    lapack = LazyModule("scipy.linalg.lapack")
    #: ``scipy.sparse.linalg``, imported at the first iterative eigensolve.
    sparse_linalg = LazyModule("scipy.sparse.linalg")
