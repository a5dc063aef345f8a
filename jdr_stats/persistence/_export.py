"""Export of results objects: plain dicts, JSON and results files.

Every results class of the package (the joint fit, its bootstrap and
support selection, the baselines, every test table) inherits
:class:`ExportMixin`, which gives ``to_json`` (the class's ``to_dict`` as a
JSON text) and ``save`` (a results file, :mod:`jdr_stats.persistence._persist`, read
back by :func:`load` without running code from the file; a pickle only on
request).  Every file is written atomically (:mod:`jdr_stats.runtime._atomic`).

A ``to_dict`` is built from named fields: a table becomes a list of records
(one dict per row, the index levels as named fields such as ``block`` and
``variable``), numbers become plain Python numbers (NaN and infinities
``None``), and every key is a name without spaces (:func:`json_key`).
Variable names are values, never keys, so any name survives.
"""

from __future__ import annotations

import json
import os
import re
from typing import Any, Literal

import pandas as pd

from ..runtime._atomic import write_text
from ..summary import json_safe

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
            Also write the text to this file (UTF-8), atomically: a failed
            write leaves a previous file of that name as it was.
        indent : int or None
            Indentation of the JSON text (``None``: one line).

        Returns
        -------
        str
            The JSON text; ``json.loads`` gives back :meth:`to_dict`.
        """
        text = json.dumps(json_safe(self.to_dict()), indent=indent, allow_nan=False)
        if path is not None:
            write_text(path, text + "\n")
        return text

    def save(self, path: PathLike, *, format: Literal["jdr", "pickle"] = "jdr") -> None:
        """Write the results to ``path``; :func:`jdr_stats.load` reads them back.

        Parameters
        ----------
        path : str or path-like
            The file (any name; ``.jdr`` is a good suffix).  It is written
            atomically: a save that fails leaves a previous file of that
            name as it was.
        format : {"jdr", "pickle"}
            ``"jdr"``: the results file (a zip of a JSON manifest and an
            ``.npz`` of the arrays, guide page "The model and its results",
            section "Saving results"), which :func:`jdr_stats.load` reads
            without running any code from it.  ``"pickle"``: a pickle,
            **unsafe** to read from anyone you do not trust (loading it can
            run code; ``load(path, allow_pickle=True)`` reads it) and tied
            to the versions that wrote it.

        Notes
        -----
        The file holds the model and its rows when they are in memory, so
        that the reloaded results compute everything the original does;
        ``remove_data()`` first (where available) for a small file without
        them.  A streamed model's source and a formula's codings are not
        written (the reloaded results say so when asked for what needs
        them).  Format: :mod:`jdr_stats.persistence._persist`.

        Examples
        --------
        >>> import os, tempfile
        >>> import jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(500, 4, 3, 1, seed=0)
        >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
        >>> path = os.path.join(tempfile.mkdtemp(), "fit.jdr")
        >>> res.save(path)
        >>> back = jdr.load(path)
        >>> bool((back.singular_values == res.singular_values).all())
        True
        """
        from ._persist import write

        write(self, path, format=format)


def load(path: PathLike, *, allow_pickle: bool = False) -> Any:
    """Read results saved with ``results.save(path)``.

    Parameters
    ----------
    path : str or path-like
    allow_pickle : bool
        Also read a pickle (written by ``save(path, format="pickle")``).
        **Unsafe**: unpickling runs whatever code the file holds; pass True
        only for a file you trust.  A results file is read the same way
        whatever this is.

    Returns
    -------
    The saved results object, equal to the one saved: the same arrays
    bit for bit, tables, settings, summary and ``to_dict()``; derived
    attributes (``directions``, ...) are recomputed when first read.

    Raises
    ------
    ValueError
        Naming the path and what is wrong: the file is JSON text (written by
        ``to_json``: a report, which ``json.load`` reads back as a dict), a
        pickle (without ``allow_pickle=True``), truncated or damaged, altered
        (its arrays do not match the manifest's checksum, or the manifest
        names a class or a node that the format does not have), written in a
        newer format version, or anything else.

    Notes
    -----
    Loading never runs code from the file: the manifest is JSON, the arrays
    are read with ``allow_pickle=False``, and objects are rebuilt only for
    the jdr_stats classes of a fixed table (by ``cls.__new__`` and their
    attributes), never by importing a name found in the file.

    Examples
    --------
    >>> import os, pickle, tempfile
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(500, 4, 3, 1, seed=0)
    >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    >>> path = os.path.join(tempfile.mkdtemp(), "fit.jdr")
    >>> res.save(path)
    >>> str(jdr.load(path).summary()) == str(res.summary())
    True
    >>> with open(path + ".pickle", "wb") as fh:
    ...     pickle.dump({"not": "results"}, fh)
    >>> jdr.load(path + ".pickle")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: cannot load '...fit.jdr.pickle': it is a pickle, which ...
    """
    from ._persist import read

    return read(path, allow_pickle=allow_pickle)
