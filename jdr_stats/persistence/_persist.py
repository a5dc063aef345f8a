"""The results file: a safe, documented format for ``save`` and ``load``.

A results file is a zip archive of two members:

``manifest.json``
    ``{"format": "jdr_stats.results", "format_version": 2,
    "jdr_stats_version": ..., "numpy_version": ..., "pandas_version": ...,
    "class": ..., "arrays_sha256": ..., "root": ...}``: the versions that
    wrote it, the SHA-256 of the second member and the object tree
    (``root``).
``arrays.npz``
    Every numeric array of the tree (a numpy ``.npz``), read with
    ``allow_pickle=False``.

The tree is JSON: strings, booleans, integers, finite floats, ``null`` and
lists stand for themselves; anything else is a node ``{"$": tag, ...}``:
``float`` (NaN and infinities), ``complex``, ``scalar`` (a numpy scalar and
its dtype), ``tuple``, ``set``, ``frozenset``, ``dict`` (``items`` for text
keys, else ``pairs``), ``mappingproxy``, ``slice``, ``path``, ``NA``,
``dtype``, ``ndarray`` (a member of ``arrays.npz``), ``objects`` (an
object-dtype column), ``extension`` (a pandas string, boolean or nullable
number column), ``categorical``, ``Index``, ``RangeIndex``,
``MultiIndex``, ``Series``, ``DataFrame``, and ``object`` (an instance of
one of the jdr_stats classes of :data:`CLASSES`, by its name there, with an
``id`` and its attributes as ``state``) or ``ref`` (the same instance
again, by ``id``).

Reading never imports a name found in the file: the class of an ``object``
node must be a key of :data:`CLASSES`, whose fixed table says which
jdr_stats class it is; the instance is made with ``cls.__new__`` and its
attributes set, so no code of the file runs.  Values of
``functools.cached_property`` (such as ``directions``) are not written:
they are recomputed when first read after loading (a few that need the
rows and are kept by ``remove_data()`` are written, :class:`Spec`, and
computed before writing when the rows are streamed).  A
model's row sources (a Parquet or CSV file, a dask collection) and a
formula's codings are not written: a result reloaded from a streamed fit
behaves as one built from moments, and ``transform(data=...)`` of a
formula model needs ``exog_a`` and ``exog_b`` instead.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib
import io
import json
import math
import os
import pathlib
import pickle
import pickletools
import zipfile
import zlib
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

import numpy as np
import pandas as pd

from .._version import __version__
from ..runtime._atomic import atomic_write

__all__ = ["CLASSES", "FORMAT", "FORMAT_VERSION", "Spec", "read", "write"]

PathLike = str | os.PathLike

FORMAT = "jdr_stats.results"
#: Bumped when a change of the tree's encoding means older readers cannot
#: read new files; readers read every version up to theirs.
FORMAT_VERSION = 2
#: The names files of an older version give a class that has since been
#: renamed (version 1: a K-block fit was a file's top object).
RENAMED = {1: {"KBlockResults": "KBlockFit"}}
MANIFEST = "manifest.json"
ARRAYS = "arrays.npz"
_STAMP = (1980, 1, 1, 0, 0, 0)  # fixed zip dates: the same results give the same bytes
_KINDS = "biufcUSMm"  # array dtypes that npz reads without pickle


@dataclass(frozen=True)
class Spec:
    """How one class is written: where it lives, which ``cached_property``
    values are written (``keep``: they need the rows, which
    ``remove_data()`` drops), which attributes are written as None
    (``drop``), and whether it may be the top object of a file (``root``:
    the classes with a ``save`` method)."""

    path: str
    keep: tuple[str, ...] = ()
    drop: tuple[str, ...] = ()
    root: bool = False


_R = True  # a results class (readable as a file's top object)

#: The classes a results file may hold, by the name a file uses for each
#: (stable when a class moves between modules: only ``path`` changes).
CLASSES: dict[str, Spec] = {
    # results (each has save())
    "JDRResults": Spec("jdr_stats.results:JDRResults", root=_R),
    # the fit of each engine a JDRResults holds (not files of their own)
    "TwoBlockFit": Spec("jdr_stats.fitting._two_block_results:TwoBlockFit",
                        keep=("_block_stats", "fit_measures", "_summary_main_effects")),
    "KBlockFit": Spec("jdr_stats.fitting._kfit:KBlockFit",
                      keep=("_block_sds", "fit_measures", "_summary_main_effects")),
    "BootstrapResults": Spec("jdr_stats.inference._boot_results:BootstrapResults", root=_R),
    "TestResult": Spec("jdr_stats.inference.hypotheses:TestResult", root=_R),
    "InapplicableTestResult": Spec("jdr_stats.inference.hypotheses:InapplicableTestResult",
                                   root=_R),
    "TestTable": Spec("jdr_stats.inference.hypotheses:TestTable", root=_R),
    "RankTestResults": Spec("jdr_stats.inference._rank_results:RankTestResults", root=_R),
    "FrobeniusResult": Spec("jdr_stats.inference.rank_robust:FrobeniusResult", root=_R),
    "WaldResult": Spec("jdr_stats.inference.rank_robust:WaldResult", root=_R),
    "MainEffectsResults": Spec("jdr_stats.inference.main_effects:MainEffectsResults", root=_R),
    "LadleResults": Spec("jdr_stats.inference.ladle:LadleResults", root=_R),
    "SupportResults": Spec("jdr_stats.support._results:SupportResults", root=_R),
    "SDRResults": Spec("jdr_stats.baselines._base:SDRResults", root=_R),
    "SIRResults": Spec("jdr_stats.baselines.sir:SIRResults", root=_R),
    "PHDResults": Spec("jdr_stats.baselines.phd:PHDResults", root=_R),
    "SAVEResults": Spec("jdr_stats.baselines.save:SAVEResults", root=_R),
    "DimensionTests": Spec("jdr_stats.baselines._tables:DimensionTests", root=_R),
    "CoordinateTest": Spec("jdr_stats.baselines._tables:CoordinateTest", root=_R),
    "Comparison": Spec("jdr_stats.compare._results:Comparison", root=_R),
    # what results hold: models, their data, estimates, whitenings, settings
    "JointDimReduction": Spec("jdr_stats.model:JointDimReduction", drop=("_model_specs",)),
    "SIR": Spec("jdr_stats.baselines.sir:SIR", drop=("_model_specs",)),
    "PHD": Spec("jdr_stats.baselines.phd:PHD", drop=("_model_specs",)),
    "SAVE": Spec("jdr_stats.baselines.save:SAVE", drop=("_model_specs",)),
    "ModelData": Spec("jdr_stats.io._data:ModelData"),
    "RemovedData": Spec("jdr_stats.io._data:RemovedData"),
    "JointModelData": Spec("jdr_stats.estimation._joint:JointModelData"),
    "ScaledModelData": Spec("jdr_stats.estimation._joint:ScaledModelData"),
    "JointMomentsData": Spec("jdr_stats.estimation._joint:JointMomentsData"),
    "_ResidualRows": Spec("jdr_stats.estimation._joint:_ResidualRows"),
    "StackedSums": Spec("jdr_stats.core.moments:StackedSums"),
    # a streamed K-block model's sums; its reader (the row source) is not written
    "BlockSums": Spec("jdr_stats.fitting._kstream:BlockSums", drop=("reader",)),
    "DesignSums": Spec("jdr_stats.core.moments:DesignSums"),
    # a K-block model from moments: the moments kept (it refits from them)
    "BlockMomentsData": Spec("jdr_stats.fitting._kmoments:BlockMomentsData"),
    "DesignMoments": Spec("jdr_stats.core.design_moments:DesignMoments"),
    "BlockDesign": Spec("jdr_stats.core.design:BlockDesign"),
    "MomentsData": Spec("jdr_stats.io._streamed:MomentsData"),
    "Moments": Spec("jdr_stats.moments:Moments"),
    "ResponseMoments": Spec("jdr_stats.moments:ResponseMoments"),
    "BlockMoments": Spec("jdr_stats.core._moments_engine:BlockMoments"),
    "ResponseInfo": Spec("jdr_stats.io._responses:ResponseInfo"),
    "Adjustment": Spec("jdr_stats.io._responses:Adjustment"),
    "Estimate": Spec("jdr_stats.estimation._estimate:Estimate"),
    "FitSettings": Spec("jdr_stats.estimation._settings:FitSettings"),
    "Choice": Spec("jdr_stats.policy:Choice"),
    "Whitening": Spec("jdr_stats.core._linalg:Whitening"),
    "ShrunkWhitening": Spec("jdr_stats.core._linalg:ShrunkWhitening"),
    "DesignWhitening": Spec("jdr_stats.core.whitening:DesignWhitening"),
    "KBlockFactors": Spec("jdr_stats.core.kestimate:KBlockFactors"),
    "Premises": Spec("jdr_stats.diagnostics:Premises"),
    "FitMeasures": Spec("jdr_stats.fit_measures:FitMeasures"),
    "LadleResult": Spec("jdr_stats.inference._ladle_criterion:LadleResult"),
    "Standardized": Spec("jdr_stats.baselines._base:Standardized"),
    "SliceInfo": Spec("jdr_stats.baselines._slicing:SliceInfo"),
}

#: Row sources: written as None (a file may move or change; a dask graph
#: is code).  Their results behave as fits from moments once reloaded.
SOURCES = (
    "jdr_stats.streams._sources:ArraySource", "jdr_stats.streams._sources:ParquetSource",
    "jdr_stats.streams._sources:CSVSource", "jdr_stats.streams._dask_source:DaskSource",
    "jdr_stats.estimation._joint:StackedSource", "jdr_stats.estimation._joint:JointSource",
    "jdr_stats.estimation._joint:JointDaskSource", "jdr_stats.io._adjusted_source:AdjustedSource",
    "jdr_stats.io._adjusted_source:AdjustedDaskSource", "jdr_stats.io._stream_levels:LevelSource",
)


def _resolve(path: str) -> type:
    """The class at ``module:qualname`` (a path of this module's own tables)."""
    module, _, qualname = path.partition(":")
    obj: Any = importlib.import_module(module)
    for part in qualname.split("."):
        obj = getattr(obj, part)
    if not isinstance(obj, type):
        raise TypeError(f"{path} is not a class")
    return obj


@functools.lru_cache(maxsize=1)
def _tables() -> tuple[dict[type, str], frozenset[type]]:
    """The class of every name of :data:`CLASSES` (and its reverse), and the sources."""
    by_class = {_resolve(spec.path): name for name, spec in CLASSES.items()}
    return by_class, frozenset(_resolve(p) for p in SOURCES)


@functools.cache
def _cached_names(cls: type) -> frozenset[str]:
    """The ``functools.cached_property`` attributes of ``cls`` (and its bases)."""
    return frozenset(k for klass in cls.__mro__ for k, v in vars(klass).items()
                     if isinstance(v, functools.cached_property))


def _state(obj: Any) -> Any:
    """What pickle would store of ``obj``: its ``__getstate__()`` where its
    class defines one, else its ``__dict__`` and, with ``__slots__``,
    ``(dict or None, slots)`` (``object.__getstate__`` of Python 3.11)."""
    for klass in type(obj).__mro__:
        if klass is not object and "__getstate__" in vars(klass):
            return obj.__getstate__()
    attrs = getattr(obj, "__dict__", None)
    slots = {}
    for klass in type(obj).__mro__:
        names = vars(klass).get("__slots__", ())
        for key in (names,) if isinstance(names, str) else names:
            if key not in ("__dict__", "__weakref__") and hasattr(obj, key):
                slots[key] = getattr(obj, key)
    if slots:
        return (attrs or None, slots)
    return attrs


def _qualified(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


# ---------------------------------------------------------------------------
# writing
# ---------------------------------------------------------------------------
class _Writer:
    """Turns an object into the JSON tree and its arrays."""

    def __init__(self) -> None:
        self.arrays: dict[str, np.ndarray] = {}
        self._array_keys: dict[int, str] = {}
        self._objects: dict[int, int] = {}
        self._alive: list[Any] = []  # keeps the ids above unique while writing
        self._by_class, self._sources = _tables()

    def refuse(self, value: Any, where: str, why: str = "") -> TypeError:
        return TypeError(f"cannot save {where}: a {_qualified(type(value))} is not a type "
                         f"the jdr_stats results file stores{why}")

    def enc(self, v: Any, where: str) -> Any:
        t = type(v)
        if v is None or t is bool or t is str:
            return v
        if t is int:
            return v
        if t is float:
            return v if math.isfinite(v) else {"$": "float", "v": repr(v)}
        if isinstance(v, np.ndarray):
            return self.array(v, where)
        if isinstance(v, np.generic):
            return self.scalar(v, where)
        if t is complex:
            return {"$": "complex", "re": self.enc(v.real, where), "im": self.enc(v.imag, where)}
        if t is list:
            return [self.enc(x, f"{where}[{i}]") for i, x in enumerate(v)]
        if t is tuple:
            return {"$": "tuple", "items": [self.enc(x, f"{where}[{i}]") for i, x in enumerate(v)]}
        if t is set or t is frozenset:
            items = list(v)
            try:
                items.sort()
            except TypeError:
                pass
            return {"$": t.__name__, "items": [self.enc(x, f"{where}{{}}") for x in items]}
        if t is dict or t is MappingProxyType:
            node = self.mapping(v, where)
            return node if t is dict else {"$": "mappingproxy", "v": node}
        if t is slice:
            return {"$": "slice", "v": [self.enc(x, where) for x in (v.start, v.stop, v.step)]}
        if isinstance(v, pathlib.PurePath):
            return {"$": "path", "v": str(v)}
        if v is pd.NA:
            return {"$": "NA"}
        if isinstance(v, np.dtype):
            if v.kind not in _KINDS or v.names is not None:
                raise self.refuse(v, where)
            return {"$": "dtype", "v": v.str}
        if isinstance(v, pd.DataFrame):
            return self.frame(v, where)
        if isinstance(v, pd.Series):
            return {"$": "Series", "index": self.index(v.index, f"{where}.index"),
                    "values": self.values(v, where), "name": self.enc(v.name, where)}
        if isinstance(v, pd.Index):
            return self.index(v, where)
        if isinstance(v, pd.Categorical):
            return self.categorical(v, where)
        if t in self._sources:
            return None
        if t in self._by_class:
            return self.instance(v, where)
        raise self.refuse(v, where)

    def mapping(self, v: Any, where: str) -> dict[str, Any]:
        if all(type(k) is str for k in v):
            return {"$": "dict", "items": {k: self.enc(x, f"{where}[{k!r}]")
                                           for k, x in v.items()}}
        return {"$": "dict", "pairs": [[self.enc(k, f"{where} key"),
                                        self.enc(x, f"{where}[{k!r}]")] for k, x in v.items()]}

    def array(self, v: np.ndarray, where: str) -> dict[str, Any]:
        if v.dtype.kind not in _KINDS or v.dtype.names is not None:
            raise self.refuse(v, where, f" (arrays of dtype {v.dtype} are not stored)")
        key = self._array_keys.get(id(v))
        if key is None:
            key = f"a{len(self.arrays)}"
            self.arrays[key] = np.asarray(v)  # a memmap or subclass as a plain array
            self._array_keys[id(v)] = key
            self._alive.append(v)
        return {"$": "ndarray", "key": key, "readonly": not v.flags.writeable}

    def scalar(self, v: np.generic, where: str) -> dict[str, Any]:
        kind, size = v.dtype.kind, v.dtype.itemsize
        if kind in "biu" or (kind == "f" and size <= 8) or (kind == "c" and size <= 16):
            return {"$": "scalar", "dtype": v.dtype.str, "v": self.enc(v.item(), where)}
        return {"$": "scalar", "array": self.array(np.asarray(v), where)}

    def values(self, values: pd.Series | pd.Index, where: str) -> Any:
        """The values of a column or an index, by their dtype."""
        dtype = values.dtype
        if isinstance(dtype, np.dtype) and dtype.kind in _KINDS:
            return self.array(values.to_numpy(copy=True), where)
        if isinstance(dtype, np.dtype) and dtype.kind == "O":
            return {"$": "objects", "items": [self.enc(x, f"{where}[{i}]")
                                              for i, x in enumerate(values.tolist())]}
        if isinstance(dtype, pd.CategoricalDtype):
            return self.categorical(pd.Categorical(values), where)
        if isinstance(dtype, pd.api.extensions.ExtensionDtype) and dtype.kind in "biufOU":
            items = [self.enc(x, f"{where}[{i}]") for i, x in
                     enumerate(pd.Series(values).astype(object).tolist())]
            return {"$": "extension", "dtype": str(dtype), "items": items}
        raise TypeError(f"cannot save {where}: values of dtype {dtype} are not stored by "
                        "the jdr_stats results file")

    def categorical(self, v: pd.Categorical, where: str) -> dict[str, Any]:
        return {"$": "categorical", "codes": self.array(np.asarray(v.codes), where),
                "categories": self.index(v.categories, where), "ordered": bool(v.ordered)}

    def index(self, v: pd.Index, where: str) -> dict[str, Any]:
        if isinstance(v, pd.RangeIndex):
            return {"$": "RangeIndex", "start": v.start, "stop": v.stop, "step": v.step,
                    "name": self.enc(v.name, where)}
        if isinstance(v, pd.MultiIndex):
            return {"$": "MultiIndex",
                    "levels": [self.index(lev, where) for lev in v.levels],
                    "codes": [self.array(np.asarray(c), where) for c in v.codes],
                    "names": [self.enc(n, where) for n in v.names]}
        return {"$": "Index", "values": self.values(v, where), "name": self.enc(v.name, where)}

    def frame(self, v: pd.DataFrame, where: str) -> dict[str, Any]:
        node = {"$": "DataFrame", "index": self.index(v.index, f"{where}.index"),
                "columns": self.index(v.columns, f"{where}.columns"),
                "data": [self.values(v.iloc[:, j], f"{where}[{v.columns[j]!r}]")
                         for j in range(v.shape[1])]}
        if v.attrs:
            node["attrs"] = self.enc(dict(v.attrs), f"{where}.attrs")
        return node

    def instance(self, v: Any, where: str) -> dict[str, Any]:
        seen = self._objects.get(id(v))
        if seen is not None:
            return {"$": "ref", "id": seen}
        ident = len(self._objects)
        self._objects[id(v)] = ident
        self._alive.append(v)
        name = self._by_class[type(v)]
        spec = CLASSES[name]
        if spec.keep and getattr(getattr(getattr(v, "_model", None), "data", None),
                                 "source", None) is not None:
            # streamed rows: the source is not written, so what needs it is computed now
            for key in spec.keep:
                with contextlib.suppress(ValueError):
                    getattr(v, key)
        state = _state(v)
        cls: type = type(v)
        cached = _cached_names(cls)
        dict_state, slots = (state if isinstance(state, tuple) else (state, None))
        if dict_state is not None:
            dict_state = {k: (None if k in spec.drop else x) for k, x in dict_state.items()
                          if k not in cached or k in spec.keep}
        if slots is not None:
            state = (dict_state, slots)
        else:
            state = dict_state
        return {"$": "object", "class": name, "id": ident,
                "state": self.enc(state, f"{where}.{name}")}


def _arrays_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    """The arrays as an ``.npz`` (fixed dates: the same arrays, the same bytes)."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED, allowZip64=True) as zf:
        for key, arr in arrays.items():
            with zf.open(zipfile.ZipInfo(f"{key}.npy", date_time=_STAMP), "w",
                         force_zip64=True) as fh:
                np.lib.format.write_array(fh, arr, allow_pickle=False)
    return buf.getvalue()


def encode(obj: Any) -> tuple[bytes, bytes]:
    """The manifest (UTF-8 JSON) and the ``.npz`` of a results object."""
    by_class, _ = _tables()
    name = by_class.get(type(obj))
    if name is None or not CLASSES[name].root:
        raise TypeError(f"cannot save a {_qualified(type(obj))}: not a jdr_stats results "
                        "object")
    writer = _Writer()
    try:
        root = writer.enc(obj, name)
    except RecursionError:
        raise TypeError(f"cannot save the {name}: its attributes nest too deeply") from None
    arrays = _arrays_bytes(writer.arrays)
    manifest = {
        "format": FORMAT, "format_version": FORMAT_VERSION,
        "jdr_stats_version": __version__, "numpy_version": np.__version__,
        "pandas_version": pd.__version__, "class": name,
        "arrays_sha256": hashlib.sha256(arrays).hexdigest(), "root": root,
    }
    return json.dumps(manifest, allow_nan=False).encode("utf-8"), arrays


def write(obj: Any, path: PathLike, *, format: Literal["jdr", "pickle"] = "jdr") -> None:
    """Write ``obj`` to ``path`` atomically, as a results file or (opt-in) a pickle.

    Examples
    --------
    >>> import json, os, tempfile, zipfile
    >>> import jdr_stats as jdr
    >>> sim = jdr.simulate.bilinear(300, 3, 2, 1, seed=0)
    >>> res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
    >>> path = os.path.join(tempfile.mkdtemp(), "fit.jdr")
    >>> write(res, path)
    >>> with zipfile.ZipFile(path) as zf:
    ...     manifest = json.loads(zf.read("manifest.json"))
    ...     members = zf.namelist()
    >>> members, manifest["format"], manifest["format_version"], manifest["class"]
    (['manifest.json', 'arrays.npz'], 'jdr_stats.results', 2, 'JDRResults')
    >>> fit = manifest["root"]["state"]["items"]["_impl"]
    >>> fit["class"], fit["state"]["items"]["_model"]["class"]
    ('TwoBlockFit', 'JointDimReduction')
    """
    if format == "pickle":
        data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
        with atomic_write(path, "wb") as fh:
            fh.write(data)
        return
    if format != "jdr":
        raise ValueError(f'format must be "jdr" (the results file) or "pickle"; got {format!r}')
    manifest, arrays = encode(obj)
    with atomic_write(path, "wb") as fh, \
            zipfile.ZipFile(fh, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as zf:
        zf.writestr(zipfile.ZipInfo(MANIFEST, date_time=_STAMP), manifest,
                    compress_type=zipfile.ZIP_DEFLATED)
        # stored: numeric arrays deflate by a few percent at many times the time
        zf.writestr(zipfile.ZipInfo(ARRAYS, date_time=_STAMP), arrays,
                    compress_type=zipfile.ZIP_STORED)


# ---------------------------------------------------------------------------
# reading
# ---------------------------------------------------------------------------
class _Damaged(Exception):
    """A node of the tree that the writer cannot have written."""


class _Reader:
    """Rebuilds the tree of a manifest from its arrays."""

    def __init__(self, npz: Any, version: int = FORMAT_VERSION) -> None:
        self._npz = npz
        self._renamed = RENAMED.get(version, {})
        self._keys = set(npz.files)
        self._arrays: dict[str, np.ndarray] = {}
        self._objects: dict[int, Any] = {}
        self._classes: dict[str, type] = {}

    def dec(self, node: Any, where: str) -> Any:
        if node is None or isinstance(node, (bool, str, int, float)):
            return node
        if isinstance(node, list):
            return [self.dec(x, f"{where}[{i}]") for i, x in enumerate(node)]
        if not isinstance(node, dict) or not isinstance(node.get("$"), str):
            raise _Damaged(f"{where}: not a node of the format")
        tag = node["$"]
        method = getattr(self, f"_n_{tag}", None)
        if method is None:
            raise _Damaged(f"{where}: unknown node type {tag!r}")
        return method(node, where)

    @staticmethod
    def field(node: dict[str, Any], key: str, kind: type | tuple[type, ...],
              where: str) -> Any:
        if key not in node or not isinstance(node[key], kind) or (
                kind is int and isinstance(node[key], bool)):
            raise _Damaged(f"{where}: {node['$']} node without a valid {key!r}")
        return node[key]

    def _n_float(self, node: dict[str, Any], where: str) -> float:
        text = self.field(node, "v", str, where)
        if text not in ("nan", "inf", "-inf"):
            raise _Damaged(f"{where}: float node of {text!r}")
        return float(text)

    def _n_complex(self, node: dict[str, Any], where: str) -> complex:
        re, im = self.dec(node.get("re"), where), self.dec(node.get("im"), where)
        if not all(isinstance(x, (int, float)) for x in (re, im)):
            raise _Damaged(f"{where}: complex node without numbers")
        return complex(re, im)

    def _n_scalar(self, node: dict[str, Any], where: str) -> Any:
        if "array" in node:
            arr = self.dec(node["array"], where)
            if not isinstance(arr, np.ndarray) or arr.ndim != 0:
                raise _Damaged(f"{where}: scalar node without a 0-d array")
            return arr[()]
        dtype = np.dtype(self.field(node, "dtype", str, where))
        if dtype.kind not in "biufc":
            raise _Damaged(f"{where}: scalar of dtype {dtype}")
        value = self.dec(node.get("v"), where)
        if not isinstance(value, (int, float, complex)):
            raise _Damaged(f"{where}: scalar node without a number")
        return dtype.type(value)

    def _n_tuple(self, node: dict[str, Any], where: str) -> tuple[Any, ...]:
        return tuple(self.dec(self.field(node, "items", list, where), where))

    def _n_set(self, node: dict[str, Any], where: str) -> set[Any]:
        return set(self.dec(self.field(node, "items", list, where), where))

    def _n_frozenset(self, node: dict[str, Any], where: str) -> frozenset[Any]:
        return frozenset(self.dec(self.field(node, "items", list, where), where))

    def _n_dict(self, node: dict[str, Any], where: str) -> dict[Any, Any]:
        if "items" in node:
            items = self.field(node, "items", dict, where)
            return {k: self.dec(v, f"{where}[{k!r}]") for k, v in items.items()}
        out = {}
        for pair in self.field(node, "pairs", list, where):
            if not isinstance(pair, list) or len(pair) != 2:
                raise _Damaged(f"{where}: dict pair that is not [key, value]")
            key = self.dec(pair[0], f"{where} key")
            out[key] = self.dec(pair[1], f"{where}[{key!r}]")
        return out

    def _n_mappingproxy(self, node: dict[str, Any], where: str) -> MappingProxyType[Any, Any]:
        inner = self.dec(node.get("v"), where)
        if not isinstance(inner, dict):
            raise _Damaged(f"{where}: mappingproxy without a dict")
        return MappingProxyType(inner)

    def _n_slice(self, node: dict[str, Any], where: str) -> slice:
        parts = self.dec(self.field(node, "v", list, where), where)
        if len(parts) != 3 or not all(p is None or isinstance(p, int) for p in parts):
            raise _Damaged(f"{where}: slice node without start, stop and step")
        return slice(*parts)

    def _n_path(self, node: dict[str, Any], where: str) -> pathlib.Path:
        return pathlib.Path(self.field(node, "v", str, where))

    def _n_NA(self, node: dict[str, Any], where: str) -> Any:
        return pd.NA

    def _n_dtype(self, node: dict[str, Any], where: str) -> np.dtype[Any]:
        dtype = np.dtype(self.field(node, "v", str, where))
        if dtype.kind not in _KINDS:
            raise _Damaged(f"{where}: dtype {dtype}")
        return dtype

    def _n_ndarray(self, node: dict[str, Any], where: str) -> np.ndarray:
        key = self.field(node, "key", str, where)
        arr = self._arrays.get(key)
        if arr is None:
            if key not in self._keys:
                raise _Damaged(f"{where}: array {key!r} is not in {ARRAYS}")
            arr = self._npz[key]  # allow_pickle=False: object arrays refused
            if arr.dtype.kind not in _KINDS:
                raise _Damaged(f"{where}: array {key!r} of dtype {arr.dtype}")
            if node.get("readonly") is True:
                arr.flags.writeable = False
            self._arrays[key] = arr
        return arr

    def _n_objects(self, node: dict[str, Any], where: str) -> np.ndarray:
        items = self.dec(self.field(node, "items", list, where), where)
        out = np.empty(len(items), dtype=object)
        for i, x in enumerate(items):
            out[i] = x
        return out

    def _n_extension(self, node: dict[str, Any], where: str) -> Any:
        dtype = self.field(node, "dtype", str, where)
        items = self.dec(self.field(node, "items", list, where), where)
        kind = pd.api.types.pandas_dtype(dtype)
        if not isinstance(kind, pd.api.extensions.ExtensionDtype) or kind.kind not in "biufOU":
            raise _Damaged(f"{where}: extension node of dtype {dtype!r}")
        return pd.array(items, dtype=kind)

    def _n_categorical(self, node: dict[str, Any], where: str) -> pd.Categorical:
        codes = self.dec(node.get("codes"), where)
        cats = self.dec(node.get("categories"), where)
        if not isinstance(codes, np.ndarray) or not isinstance(cats, pd.Index):
            raise _Damaged(f"{where}: categorical node without codes and categories")
        return pd.Categorical.from_codes(codes, categories=cats,
                                         ordered=bool(node.get("ordered")))

    def _column(self, node: Any, where: str) -> Any:
        vals = self.dec(node, where)
        if isinstance(vals, np.ndarray) and vals.ndim != 1:
            raise _Damaged(f"{where}: a column of {vals.ndim} dimensions")
        if not isinstance(vals, (np.ndarray, pd.Categorical,
                                 pd.api.extensions.ExtensionArray)):
            raise _Damaged(f"{where}: a column that is not an array")
        return vals

    def _n_Index(self, node: dict[str, Any], where: str) -> pd.Index:
        vals = self._column(node.get("values"), where)
        name = self.dec(node.get("name"), where)
        return pd.Index(vals, name=name, dtype=vals.dtype, copy=False)

    def _n_RangeIndex(self, node: dict[str, Any], where: str) -> pd.RangeIndex:
        start, stop, step = (self.field(node, k, int, where) for k in ("start", "stop", "step"))
        return pd.RangeIndex(start, stop, step, name=self.dec(node.get("name"), where))

    def _n_MultiIndex(self, node: dict[str, Any], where: str) -> pd.MultiIndex:
        levels = [self.dec(x, where) for x in self.field(node, "levels", list, where)]
        codes = [self.dec(x, where) for x in self.field(node, "codes", list, where)]
        names = [self.dec(x, where) for x in self.field(node, "names", list, where)]
        return pd.MultiIndex(levels=levels, codes=codes, names=names, verify_integrity=True)

    def _series(self, vals: Any, index: pd.Index, name: Any = None) -> pd.Series:
        out = pd.Series(vals, dtype=vals.dtype, name=name, copy=False)
        if len(out) != len(index):
            raise _Damaged(f"values of length {len(out)} on an index of length {len(index)}")
        out.index = index
        return out

    def _n_Series(self, node: dict[str, Any], where: str) -> pd.Series:
        index = self.dec(node.get("index"), where)
        if not isinstance(index, pd.Index):
            raise _Damaged(f"{where}: Series without an index")
        return self._series(self._column(node.get("values"), where), index,
                            self.dec(node.get("name"), where))

    def _n_DataFrame(self, node: dict[str, Any], where: str) -> pd.DataFrame:
        index, columns = self.dec(node.get("index"), where), self.dec(node.get("columns"), where)
        if not isinstance(index, pd.Index) or not isinstance(columns, pd.Index):
            raise _Damaged(f"{where}: DataFrame without index and columns")
        data = [self._column(c, where) for c in self.field(node, "data", list, where)]
        if len(data) != len(columns):
            raise _Damaged(f"{where}: {len(data)} columns of data for {len(columns)} names")
        if data:
            frame = pd.DataFrame({j: self._series(c, pd.RangeIndex(len(index)))
                                  for j, c in enumerate(data)})
            frame.index = index
        else:
            frame = pd.DataFrame(index=index)
        frame.columns = columns
        if "attrs" in node:
            frame.attrs = self.dec(node["attrs"], where)
        return frame

    def _n_ref(self, node: dict[str, Any], where: str) -> Any:
        ident = self.field(node, "id", int, where)
        if ident not in self._objects:
            raise _Damaged(f"{where}: reference to object {ident}, not defined before")
        return self._objects[ident]

    def _n_object(self, node: dict[str, Any], where: str) -> Any:
        name = self.field(node, "class", str, where)
        name = self._renamed.get(name, name)
        if name not in CLASSES:
            raise _Damaged(f"{where}: unknown class {name!r} (a results file holds only the "
                           "jdr_stats classes of jdr_stats.persistence._persist.CLASSES)")
        ident = self.field(node, "id", int, where)
        if ident in self._objects:
            raise _Damaged(f"{where}: object id {ident} defined twice")
        cls: Any = self._classes.get(name) or _resolve(CLASSES[name].path)
        self._classes[name] = cls
        obj = cls.__new__(cls)
        self._objects[ident] = obj  # before the state: references to it may be inside
        state = self.dec(node.get("state"), f"{where}.{name}")
        setstate = getattr(cls, "__setstate__", None)
        if setstate is not None:
            setstate(obj, state)
            return obj
        dict_state, slots = state if isinstance(state, tuple) else (state, None)
        for part in (dict_state, slots):
            if part is not None and (not isinstance(part, dict)
                                     or not all(isinstance(k, str) for k in part)):
                raise _Damaged(f"{where}: the state of a {name} is not a dict of attributes")
        if dict_state:
            obj.__dict__.update(dict_state)
        for key, val in (slots or {}).items():
            object.__setattr__(obj, key, val)
        return obj


def _refuse(name: str, why: str) -> ValueError:
    return ValueError(f"cannot load {name!r}: {why}")


def _is_pickle(data: bytes) -> bool:
    """Whether ``data`` parses as a pickle (opcodes read, never run)."""
    if data[:1] == b"\x80":
        return True
    try:
        ops = list(pickletools.genops(data))
    except Exception:
        return False
    return bool(ops) and ops[-1][0].name == "STOP"


def read(path: PathLike, *, allow_pickle: bool = False) -> Any:
    """Read the results object of ``path`` (see :func:`jdr_stats.load`)."""
    name = os.fspath(path)
    with open(name, "rb") as fh:
        data = fh.read()
    if data[:4] == b"PK\x03\x04":
        return _read_zip(name, data)
    if data.lstrip()[:1] in (b"{", b"["):
        raise _refuse(name, "it holds JSON text, not a results file: jdr_stats.load reads "
                            "the files written by results.save(path); results.to_json(path) "
                            "writes a report of the results, which json.load reads back as "
                            "a dict (it cannot become a results object again)")
    if _is_pickle(data):
        if not allow_pickle:
            raise _refuse(name, "it is a pickle, which jdr_stats.load does not read: "
                                "unpickling can run any code the file holds.  Only for a file "
                                "you trust: jdr_stats.load(path, allow_pickle=True)")
        obj = pickle.loads(data)
        by_class, _ = _tables()
        kind = by_class.get(type(obj))
        if kind is None or not CLASSES[kind].root:
            raise _refuse(name, f"the pickle holds a {_qualified(type(obj))}, not a jdr_stats "
                                "results object")
        return obj
    raise _refuse(name, "it is not a jdr_stats results file (a zip archive written by "
                        "results.save(path))")


def _read_zip(name: str, data: bytes) -> Any:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as zf:
            members = sorted(zf.namelist())
            if members != sorted([MANIFEST, ARRAYS]):
                raise _refuse(name, f"a zip archive of {members}, not a jdr_stats results "
                                    f"file ({MANIFEST} and {ARRAYS})")
            manifest_bytes, arrays = zf.read(MANIFEST), zf.read(ARRAYS)
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as exc:
        raise _refuse(name, f"the archive is damaged or truncated ({exc})") from None
    try:
        manifest = json.loads(manifest_bytes.decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise _refuse(name, f"its {MANIFEST} is not valid JSON ({exc})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        got = manifest.get("format") if isinstance(manifest, dict) else None
        raise _refuse(name, f"a zip archive of format {got!r}, not {FORMAT!r}")
    version = manifest.get("format_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise _refuse(name, f"format_version {version!r} is not a version of {FORMAT!r}")
    if version > FORMAT_VERSION:
        raise _refuse(name, f"written in format version {version} (by jdr_stats "
                            f"{manifest.get('jdr_stats_version')}); this jdr_stats "
                            f"({__version__}) reads versions up to {FORMAT_VERSION}: upgrade "
                            "jdr_stats to read it")
    if manifest.get("arrays_sha256") != hashlib.sha256(arrays).hexdigest():
        raise _refuse(name, f"its {ARRAYS} does not match the checksum in {MANIFEST}: the "
                            "file was damaged or altered")
    top = manifest.get("class")
    top = RENAMED.get(version, {}).get(top, top) if isinstance(top, str) else top
    if top not in CLASSES or not (CLASSES[top].root or top in RENAMED.get(version, {}).values()):
        raise _refuse(name, f"class {top!r} is not a jdr_stats results class")
    try:
        with np.load(io.BytesIO(arrays), allow_pickle=False) as npz:
            obj = _Reader(npz, version).dec(manifest.get("root"), "root")
    except _Damaged as exc:
        raise _refuse(name, f"the file was damaged or altered: {exc}") from None
    except (ValueError, TypeError, KeyError, IndexError, AttributeError, OSError,
            zipfile.BadZipFile, zlib.error, RecursionError) as exc:
        raise _refuse(name, f"the file was damaged or altered ({type(exc).__name__}: "
                            f"{exc})") from None
    if type(obj) is not _resolve(CLASSES[top].path):
        raise _refuse(name, f"its manifest names a {top} but holds a "
                            f"{type(obj).__name__}: the file was altered")
    if not CLASSES[top].root:  # a version-1 file of a K-block fit: as results
        obj = _resolve(CLASSES["JDRResults"].path)(obj)
    return obj
