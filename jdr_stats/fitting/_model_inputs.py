"""How a two- or K-block model is built from inputs that are not rows in
memory: streamed Parquet or CSV files (one response column or several, a
categorical response, covariates), dask collections, and the blocks' names
of ``from_blocks``.  The constructors of :class:`jdr_stats.JointDimReduction`
call these; the readers are in :mod:`jdr_stats.io` and :mod:`jdr_stats.streams`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, TypeVar, cast

from ..core.design_moments import DesignMoments
from ..io._adjusted_source import adjust_scaled, dask_adjusted
from ..io._responses import ResponseKind
from ..io._stream_levels import plan_stream
from ..io._streamed import MomentsData
from ..moments import Moments, ResponseMoments
from ..runtime._validation import check_block_names, check_real, named_blocks
from ..streams._scaled_source import ScaledDaskSource, ScaledSource
from ..streams._sources import RowSource, is_dask_collection
from ._kmoments import model_from_moments
from ._kstream import BlockSums, block_reader_dask, block_reader_file

__all__ = ["StreamedConstructorsMixin", "check_block_names", "stream_model"]

_M = TypeVar("_M", bound="StreamedConstructorsMixin")


class StreamedConstructorsMixin:
    """The constructors of :class:`jdr_stats.JointDimReduction` whose rows are
    not in memory: sufficient statistics, Parquet and CSV files, row sources."""

    # the model class provides these
    _data: Any
    _formula: Any
    with_block_names: Any

    @classmethod
    def from_moments(cls: type[_M], moments: Moments | ResponseMoments | DesignMoments
                     ) -> _M:
        """A model from sufficient statistics (no rows).

        Parameters
        ----------
        moments : Moments or ResponseMoments
            For example the merged moments of chunks of the data
            (``sum(jdr.Moments.from_arrays(...) for chunk in chunks)``); for a
            response of several columns (or classes) the mergeable
            :class:`~jdr_stats.moments.ResponseMoments`.

        Returns
        -------
        JointDimReduction
            ``fit`` (dense or sparse), ``summary()`` and the chi-square rank
            test work; procedures that need the rows, or a source to read
            again (the robust, Wald and general rank tests, the ladle, so
            ``fit("auto")`` needs ``rank_method="chi2"``), raise a
            ``RowsNotInMemoryError`` naming what they need.

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(3000, 5, 4, 2, seed=0)
        >>> mom = sum(jdr.Moments.from_arrays(sim.y[i:i + 1000], sim.a[i:i + 1000],
        ...                                   sim.b[i:i + 1000]) for i in range(0, 3000, 1000))
        >>> res = jdr.JointDimReduction.from_moments(mom).fit(2)
        >>> full = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        >>> angles = jdr.metrics.principal_angles(res.directions_a, full.directions_a)
        >>> bool(angles.max() < 1e-10)
        True
        """
        if isinstance(moments, DesignMoments):  # three or more blocks
            return model_from_moments(cls, moments)
        return cls._from_sums(moments, source=None, origin="moments")

    @classmethod
    def from_parquet(
        cls: type[_M],
        path: Any,
        *,
        y: str | list[str],
        a: list[str] | None = None,
        b: list[str] | None = None,
        blocks: Mapping[str, list[str]] | None = None,
        weights: str | None = None,
        batch_rows: int | None = None,
        covariates: str | list[str] | None = None,
        response: ResponseKind = "auto",
    ) -> _M:
        """A model from a Parquet file (or folder of files), streamed.

        ``y`` may list several numeric columns: a multivariate response
        (or the indicators of classes), summed in ``q + 1`` passes into a
        mergeable :class:`~jdr_stats.moments.ResponseMoments`.

        One pass reads only the named columns in record batches of
        ``batch_rows`` rows and merges their exact moments
        (:class:`~jdr_stats.Moments`), so memory does not grow with the
        number of rows (about one row group plus the batch being summed and
        those a reader thread reads ahead, ``jdr_stats.config.READ_AHEAD_CHUNKS``).
        That pass gives both estimators' fits: each batch is reduced to the
        stacked design's sums, within-block y-weighted moments included.

        Parameters
        ----------
        path : str or path-like
            A ``.parquet`` file or a folder of them (read in name order).
        y : str or list of str
            The response column (several: a multivariate response).  A
            text, boolean or dictionary (pandas categorical) column is a
            categorical response: a first pass reads that column alone for
            its classes (sorted; the first is the reference), and the model
            uses their indicators, as in memory.
        a, b : list of str
            The columns of the two blocks.
        blocks : dict of str to list of str, optional
            Instead of ``a`` and ``b``: the columns of each named block
            (``{"genes": [...], "lipids": [...], "clinical": [...]}``).  Two
            blocks are the model of ``a`` and ``b`` with these names; three
            or more stream the K-block fit at given ranks in two passes
            (means and covariances, then the pieces: theory page "K blocks",
            section "Streamed rows"), equal to the fit of the rows in memory
            up to rounding.  Such a model takes one numeric response column
            and ``weights``, not ``covariates`` or ``response=``; the
            procedures that need the rows (``rank="auto"``, the rank tests,
            the bootstrap, support selection, sparse fits) raise a
            ``RowsNotInMemoryError``.
        weights : str, optional
            A column of positive frequency weights (a zero is refused, naming
            its row, as in memory).
        batch_rows : int, optional
            Rows per record batch (default 65536).
        covariates : str or list of str, optional
            Covariate columns to adjust for: one more pass computes the
            least squares coefficients, and every pass then reads the rows
            residualised on ``[1, Z]`` (as a model from arrays with
            ``covariates=``).  A text, boolean or dictionary column enters
            as the indicators of its levels but the first (sorted, read by
            one pass over that column; names ``site[T.level]``).  Not with
            ``weights``.
        response : {"auto", "numeric", "categorical"}
            ``"categorical"`` declares numeric class codes in ``y``
            categorical (as ``JointDimReduction(..., response=)``).

        Returns
        -------
        JointDimReduction
            Holds the moments and the source; ``fit``, ``summary()`` and the
            chi-square rank test need no further pass; the robust (default),
            Wald and general rank tests (so ``fit("auto")``) and the ladle
            stream one more pass over the file; procedures that need the
            rows in memory (permutation tests, the bootstrap, support
            selection) raise a ``RowsNotInMemoryError``.

        Raises
        ------
        ValueError
            A missing column, NaN or infinite values (naming the column and
            row), a constant column; a missing value in a categorical
            column, or a value the first pass over it did not see.

        Examples
        --------
        >>> import os, tempfile
        >>> import jdr_stats as jdr
        >>> sim = jdr.simulate.bilinear(2000, 4, 3, 1, seed=0)
        >>> path = os.path.join(tempfile.mkdtemp(), "sim.parquet")
        >>> sim.frame.to_parquet(path, row_group_size=500)
        >>> model = jdr.JointDimReduction.from_parquet(
        ...     path, y="y", a=["a0", "a1", "a2", "a3"], b=["b0", "b1", "b2"], batch_rows=256)
        >>> res = model.fit(1)
        >>> full = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)
        >>> bool(jdr.metrics.principal_angles(res.directions_a, full.directions_a).max() < 1e-10)
        True
        """
        from ..streams._sources import ParquetSource

        a, b = _stream_blocks_args(a, b, blocks)
        if blocks is not None and len(blocks) >= 3:
            return _file_blocks_model(cls, ParquetSource, path, y, blocks, covariates,
                                      weights=weights, batch_rows=batch_rows,
                                      response=response,
                                      origin=f"the Parquet source {str(path)!r}")
        model = stream_model(cls, ParquetSource, path, y, a, b, covariates,
                             weights=weights, batch_rows=batch_rows, response=response,
                             origin=f"the Parquet source {str(path)!r}")
        return model if blocks is None else model.with_block_names(list(blocks))

    @classmethod
    def from_csv(
        cls: type[_M],
        path: Any,
        *,
        y: str | list[str],
        blocks: Mapping[str, list[str]],
        weights: str | None = None,
        batch_rows: int | None = None,
        sep: str = ",",
    ) -> _M:
        """A model from a CSV file read in chunks of ``batch_rows`` rows
        (strictly: :class:`~jdr_stats.sources.CSVSource`), streamed as :meth:`from_parquet`
        with ``blocks=``.

        Parameters
        ----------
        path : str or path-like
        y : str
            The response column.
        blocks : dict of str to list of str
            The columns of each named block (two or more blocks).
        weights : str, optional
            A column of positive frequency weights (a zero is refused, naming
            its row, as in memory).
        batch_rows : int, optional
            Rows per chunk (default 65536).
        sep : str
            Field separator.

        Examples
        --------
        >>> import os, tempfile
        >>> import numpy as np, pandas as pd, jdr_stats as jdr
        >>> rng = np.random.default_rng(0)
        >>> df = pd.DataFrame(rng.normal(size=(600, 6)), columns=list("abcdef"))
        >>> df["y"] = df.a * df.c + df.c * df.e + 0.5 * rng.normal(size=600)
        >>> path = os.path.join(tempfile.mkdtemp(), "d.csv")
        >>> df.to_csv(path, index=False)
        >>> blocks = {"g": ["a", "b"], "l": ["c", "d"], "c": ["e", "f"]}
        >>> res = jdr.JointDimReduction.from_csv(path, y="y", blocks=blocks,
        ...                                      batch_rows=128).fit(1)
        >>> full = jdr.JointDimReduction.from_blocks(
        ...     df.y, {n: df[c] for n, c in blocks.items()}).fit(1)
        >>> bool(np.allclose(res.eigenvalues["g"], full.eigenvalues["g"], rtol=1e-10))
        True
        """
        from ..streams._sources import CSVSource

        if not isinstance(blocks, Mapping) or len(blocks) < 2:
            raise ValueError(f"blocks: a dict of two or more named blocks (lists of "
                             f"columns); got {blocks!r}")
        origin = f"the CSV file {str(path)!r}"
        if len(blocks) >= 3:
            return _file_blocks_model(cls, CSVSource, path, y, blocks, None, weights=weights,
                                      batch_rows=batch_rows, response="auto", origin=origin,
                                      sep=sep)
        a, b = _stream_blocks_args(None, None, blocks)
        model = stream_model(cls, CSVSource, path, y, a, b, None, weights=weights,
                             batch_rows=batch_rows, origin=origin, sep=sep)
        return model.with_block_names(list(blocks))

    @classmethod
    def from_source(cls: type[_M], source: Any, *, origin: str | None = None) -> _M:
        """A model from a row source (:mod:`jdr_stats.sources`), one streamed pass.

        Parameters
        ----------
        source : RowSource
            An :class:`~jdr_stats.sources.ArraySource`,
            :class:`~jdr_stats.sources.ParquetSource`,
            :class:`~jdr_stats.sources.CSVSource` or
            :class:`~jdr_stats.sources.DaskSource` (or any object with the
            :class:`~jdr_stats.sources.RowSource` protocol).
        origin : str, optional
            How error messages name the data (default: the source's class).

        Returns
        -------
        JointDimReduction
            Holds the moments and the source, as :meth:`from_parquet`.

        Examples
        --------
        >>> import jdr_stats as jdr
        >>> from jdr_stats.sources import ArraySource
        >>> sim = jdr.simulate.bilinear(2000, 4, 3, 1, seed=0)
        >>> model = jdr.JointDimReduction.from_source(ArraySource(sim.y, sim.a, sim.b))
        >>> model.nobs
        2000
        """
        if not isinstance(source, RowSource):
            raise TypeError(f"source must be a row source (jdr_stats.sources); got "
                            f"{type(source).__name__}")
        origin = f"the {type(source).__name__}" if origin is None else origin
        # columns of extreme units: times powers of two from the first chunk on
        scaled = None if callable(getattr(source, "tree_reduce", None)) else ScaledSource(source)
        sums = Moments.from_source(source if scaled is None else scaled, within="stacked",
                                   positive_weights=True)
        model = cls._from_sums(sums, source=source if scaled is None or not scaled.found
                               else scaled, origin=origin)
        data = cast("MomentsData", model._data)
        if scaled is not None:
            data.scales = scaled.scales
            if sums.weighted and scaled.integer_weights and sums.weight >= 1:
                data.frequency_count = int(sums.weight)  # whole-number weights: copies
        return model


    @classmethod
    def _from_sums(cls: type[_M], moments: Moments | ResponseMoments, *, source: Any,
                   origin: str) -> _M:
        model = cls.__new__(cls)
        model._data = MomentsData(moments, source=source, origin=origin)
        model._formula = None
        return model



def stream_model(cls: Any, source_cls: Any, path: Any,
                 y: str | list[str], a: list[str], b: list[str],
                 covariates: str | list[str] | None, *, weights: str | None,
                 batch_rows: int | None, origin: str, response: str = "auto",
                 sep: str = ",") -> Any:
    """A model streamed from a file source with several response columns
    (:class:`~jdr_stats.moments.ResponseMoments`, ``q + 1`` passes), a
    categorical response or covariates (their levels first, one pass over
    each such column: :mod:`jdr_stats.io._stream_levels`) and/or covariates
    (:mod:`jdr_stats.io._adjusted_source`, one more pass per set of sums)."""
    ys = [y] if isinstance(y, str) else list(y)
    zs = [] if covariates is None else [covariates] if isinstance(covariates, str) \
        else list(covariates)
    if zs and weights is not None:
        raise ValueError("covariates with weights need the rows in memory; got weights="
                         f"{weights!r}")
    kind = "parquet" if "Parquet" in source_cls.__name__ else "csv"
    plan = plan_stream(source_cls, path, ys, zs, kind=kind, response=response,
                       weights=weights, batch_rows=batch_rows, sep=sep, where=origin)

    def make(ycol: Any, acols: list[Any], bcols: list[Any]) -> tuple[Any, Any]:
        base = plan.source(ycol, acols, [*bcols, *plan.z])
        # columns of extreme units: the adjustment of the columns times powers of two
        return adjust_scaled(base, plan.znames) if plan.z else (base, None)

    if len(plan.y) > 1:
        parts = [make(c, a, b) for c in plan.y]
        rm = ResponseMoments.from_sources([src for src, _ in parts],
                                          make(plan.y[0], plan.y, plan.y)[0],
                                          positive_weights=True)
        if plan.response is not None:  # the indicators of classes
            rm = ResponseMoments(rm.parts, rm.yy, kind="categorical", names=rm.names,
                                 classes=plan.response.classes)
        model, adj = cls._from_sums(rm, source=None, origin=origin), parts[0][1]
    else:
        src, adj = make(plan.y[0], a, b)
        model = cls.from_source(src, origin=origin)
    data = model._data
    assert isinstance(data, MomentsData)
    if plan.response is not None:  # the classes and their counts, the name as in memory
        data.response = replace(data.response, kind="categorical",
                                classes=plan.response.classes, counts=plan.response.counts)
        data.endog_name = ys[0]
    if adj is not None:
        data.adjustment = adj
        scales = getattr(model._data.source, "scales", None)
        if len(plan.y) == 1 and scales is not None:  # residuals of the scaled columns
            data.scales = scales
    return model


def _stream_blocks_args(a: list[str] | None, b: list[str] | None,
                        blocks: Mapping[str, list[str]] | None) -> tuple[list[str], list[str]]:
    """The two blocks' columns of a streamed model from ``a``/``b`` or
    ``blocks`` (exactly one of the two ways)."""
    if blocks is None:
        if a is None or b is None:
            raise ValueError("give the blocks' columns: a= and b=, or blocks={name: columns}")
        return a, b
    if a is not None or b is not None:
        raise ValueError("give either a= and b= or blocks=, not both")
    if not isinstance(blocks, Mapping) or len(blocks) < 2:
        raise ValueError(f"blocks: a dict of two or more named blocks (lists of columns); "
                         f"got {blocks!r}")
    check_block_names(list(blocks), "blocks")
    cols = list(blocks.values())
    return cols[0], cols[1]


def _file_blocks_model(cls: Any, source_cls: Any, path: Any,
                       y: str | list[str], blocks: Mapping[str, list[str]],
                       covariates: Any, *, weights: str | None, batch_rows: int | None,
                       response: str, origin: str, **kwargs: Any) -> Any:
    """A streamed model of three or more blocks of a Parquet or CSV file."""
    names = list(check_block_names(list(blocks), "blocks"))
    if not isinstance(y, str):
        raise ValueError(f"y: a streamed model of three or more blocks takes one numeric "
                         f"response column; got {y!r}")
    if covariates is not None:
        raise ValueError(f"covariates: a streamed model of three or more blocks does not "
                         f"adjust for covariates yet; got covariates={covariates!r}. "
                         "Residualise the columns first, or load the rows")
    if response != "auto":
        raise ValueError(f"response: a streamed model of three or more blocks takes a "
                         f"numeric response; got response={response!r}")
    cols = {n: list(blocks[n]) for n in names}
    reader = block_reader_file(source_cls, path, y=y, blocks=cols, weights=weights,
                               batch_rows=batch_rows, origin=origin, **kwargs)
    model = cls.__new__(cls)
    model._data = BlockSums(reader, cols, y, origin)
    model._formula = None
    model._model_specs = None
    model._block_names = tuple(names)
    return model


def _dask_blocks_model(cls: Any, endog: Any, names: Sequence[str],
                       arrays: Sequence[Any], *, covariates: Any, weights: Any,
                       missing: str, response: str) -> Any:
    """A model of three or more dask blocks: the sums reduced on the cluster."""
    if not all(is_dask_collection(x) for x in (endog, *arrays)):
        kinds = ", ".join(f"{n} {'dask' if is_dask_collection(x) else 'in memory'}"
                          for n, x in zip(("endog", *names), (endog, *arrays), strict=True))
        raise TypeError(f"blocks: give endog and every block as dask collections or all in "
                        f"memory; got {kinds}")
    for arg, val, default in (("covariates", covariates, None), ("weights", weights, None),
                              ("missing", missing, "none"), ("response", response, "auto")):
        if val is not default and val != default:
            raise ValueError(f"{arg}: three or more dask blocks do not take {arg}= yet; got "
                             f"{arg}={val!r}")
    reader, labels, yname = block_reader_dask(endog, arrays, names)
    model = cls.__new__(cls)
    model._data = BlockSums(reader, dict(zip(names, labels, strict=True)), yname,
                            "dask collections")
    model._formula = None
    model._model_specs = None
    model._block_names = tuple(names)
    return model


def _named_blocks(blocks: object) -> tuple[list[str], list[Any]]:
    """The names and arrays of ``from_blocks``'s ``blocks`` (a dict of named
    blocks, or a list: ``block1, block2, ...``)."""
    names, arrays = named_blocks(blocks)
    if len(arrays) < 2:
        raise ValueError(f"blocks: a joint reduction needs at least two blocks; got "
                         f"{len(arrays)}")
    return names, arrays


def _dask_data(
    endog: Any, exog_a: Any, exog_b: Any, dask_in: list[bool], missing: str, weights: Any,
    covariates: Any = None,
) -> MomentsData:
    """Moments of dask input, reduced on the cluster (the rows stay there);
    with covariates, of the rows residualised on ``[1, Z]`` in the tasks."""
    from ..streams._sources import DaskSource

    if not all(dask_in):
        kinds = ", ".join(
            f"{n} {'dask' if d else 'in memory'}"
            for n, d in zip(("endog", "exog_a", "exog_b"), dask_in, strict=True)
        )
        raise TypeError(
            f"give endog, exog_a and exog_b all as dask collections or all in memory; got {kinds}"
        )
    for arg, x in (("endog", endog), ("exog_a", exog_a), ("exog_b", exog_b)):
        check_real(x, arg)  # from the collections' dtypes: nothing is computed
    if weights is not None:
        raise ValueError("weights are not supported with dask input; got weights")
    if missing == "drop":
        raise ValueError(
            'missing="drop" is not supported with dask input (NaN raise an error); '
            "drop the rows with dask first (ddf.dropna())"
        )
    if covariates is not None:
        sums, source, adj = dask_adjusted(endog, exog_a, exog_b, covariates)
        data = MomentsData(sums, source=source, origin="dask collections")
        if source is not None and source.scales is not None:  # residuals of scaled columns
            data.scales = source.scales
        data.adjustment = adj
        widest = max(len(data.names["exog_a"]), len(data.names["exog_b"]))
        if data.nobs - 1 - adj.p < widest + 1:
            raise ValueError(
                f"too few rows after the adjustment: {data.nobs} rows, {adj.p} covariate "
                f"column(s); need at least {widest + 2 + adj.p}")
        return data
    if getattr(endog, "ndim", 1) == 2 and endog.shape[1] > 1:  # q responses
        # columns of extreme units: powers of two (each part's from its first block)
        parts = [ScaledDaskSource(DaskSource(endog[:, c], exog_a, exog_b, endog_name=f"y{c}"))
                 for c in range(endog.shape[1])]
        yy = DaskSource(endog[:, 0], endog, endog)
        return MomentsData(ResponseMoments.from_sources(parts, yy), origin="dask collections")
    src = DaskSource(endog, exog_a, exog_b)
    scaled = ScaledDaskSource(src)  # columns of extreme units: powers of two
    data = MomentsData(Moments.from_source(scaled, within="stacked"),
                       source=scaled if scaled.found else src, origin="dask collections")
    data.scales = scaled.scales
    return data
