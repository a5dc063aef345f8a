"""Export of results objects: plain dicts, JSON and pickles.

Every results class of the package (the joint fit, its bootstrap and
support selection, the baselines, every test table) inherits
:class:`ExportMixin`, which gives ``to_json`` (the class's ``to_dict`` as a
JSON text) and ``save`` (a pickle, read back by :func:`load`, as
statsmodels' ``save`` and ``load_pickle``).

A ``to_dict`` is built from named fields: a table becomes a list of records
(one dict per row, the index levels as named fields such as ``block`` and
``variable``), numbers become plain Python numbers (NaN and infinities
``None``), and every key is a name without spaces (:func:`json_key`).
Variable names are values, never keys, so any name survives.
"""

from __future__ import annotations

import json
import os
import pickle
import re
from typing import Any

import pandas as pd

from .summary import json_safe

__all__ = ["ExportMixin", "clean_keys", "json_key", "load", "records"]

PathLike = str | os.PathLike


def json_key(name: object) -> str:
    """A key without spaces or punctuation: each run of characters other
    than letters and digits (``_`` included) becomes one ``_``.

    Examples
    --------
    >>> json_key("eff. df"), json_key("p.value(Nor)"), json_key("dir1")
    ('eff_df', 'p_value_Nor', 'dir1')
    """
    text = re.sub(r"[^0-9A-Za-z]+", "_", str(name)).strip("_")
    return text or "value"


def clean_keys(value: Any) -> Any:
    """``value`` with every dict key passed through :func:`json_key` (recursively)."""
    if isinstance(value, dict):
        return {json_key(k): clean_keys(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_keys(v) for v in value]
    return value


def records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """A table as a list of records with JSON types and clean keys.

    Every named index level (``k``, ``block``, ``variable``, ...) becomes a
    field of each record, before the columns; an unnamed index is dropped.

    Examples
    --------
    >>> import pandas as pd
    >>> t = pd.DataFrame({"eff. df": [1.5]}, index=pd.Index([0], name="k"))
    >>> records(t)
    [{'k': 0, 'eff_df': 1.5}]
    """
    named = [n for n in frame.index.names if n is not None]
    if named:
        frame = frame.reset_index(level=named)
    out = []
    for row in frame.itertuples(index=False, name=None):
        out.append({json_key(c): json_safe(v) for c, v in zip(frame.columns, row, strict=True)})
    return out


class ExportMixin:
    """``to_json``, ``save`` and, through :func:`load`, ``load`` for a class
    that defines ``to_dict()``."""

    def to_dict(self) -> dict[str, Any]:  # pragma: no cover - overridden
        raise NotImplementedError

    def to_json(self, path: PathLike | None = None, *, indent: int | None = 2) -> str:
        """The results as JSON text (:meth:`to_dict`; NaN as ``null``).

        Parameters
        ----------
        path : str or path-like, optional
            Also write the text to this file (UTF-8).
        indent : int or None
            Indentation of the JSON text (``None``: one line).

        Returns
        -------
        str
            The JSON text; ``json.loads`` gives back :meth:`to_dict`.
        """
        text = json.dumps(self.to_dict(), indent=indent, allow_nan=False)
        if path is not None:
            with open(os.fspath(path), "w", encoding="utf-8") as fh:
                fh.write(text + "\n")
        return text

    def save(self, path: PathLike) -> None:
        """Pickle the results to ``path``; :func:`jdr_stats.load` reads them back.

        The pickle holds the whole object (with the model and its data; call
        ``remove_data()`` first, where available, for a small file).  Read
        pickles only from a source you trust: loading a pickle can run code.
        """
        with open(os.fspath(path), "wb") as fh:
            pickle.dump(self, fh, protocol=pickle.HIGHEST_PROTOCOL)


def load(path: PathLike) -> Any:
    """Read results saved with ``results.save(path)`` (a pickle).

    Parameters
    ----------
    path : str or path-like

    Returns
    -------
    The saved results object.

    Raises
    ------
    ValueError
        The file is not a pickle written by ``save``: JSON text (written by
        ``to_json``, which ``json.load`` reads back as a dict; a report, not
        an object ``load`` could rebuild) or anything else, with the path.

    Notes
    -----
    As statsmodels' ``load_pickle``: only load files you trust, since
    unpickling can run arbitrary code.  A pickle is tied to the versions of
    jdr_stats, numpy and pandas that wrote it; :meth:`ExportMixin.to_json`
    is the portable format.

    Examples
    --------
    >>> import os, tempfile
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(500, 4, 3, 1, seed=0)
    >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    >>> path = os.path.join(tempfile.mkdtemp(), "fit.pickle")
    >>> res.save(path)
    >>> bool((jdr.load(path).singular_values == res.singular_values).all())
    True
    """
    name = os.fspath(path)
    with open(name, "rb") as fh:
        head = fh.read(64).lstrip()
        fh.seek(0)
        if head[:1] in (b"{", b"["):
            raise ValueError(
                f"{name!r} holds JSON text, not a pickle: jdr_stats.load reads the files "
                "written by results.save(path); results.to_json(path) writes a report of "
                "the results, which json.load reads back as a dict (it cannot become a "
                "results object again)"
            )
        try:
            return pickle.load(fh)
        except (pickle.UnpicklingError, EOFError, ValueError, TypeError) as exc:
            raise ValueError(
                f"cannot read {name!r}: jdr_stats.load reads the pickles written by "
                f"results.save(path), and this file is not one ({type(exc).__name__}: "
                f"{exc})"
            ) from None
