"""Exact mergeable moments of a response and K design blocks.

The per-block K-block fit reads, after whitening each block with its own
mean and covariance, the sums over rows of ``w_i (y_i - ybar) o z_is1 o ...
o z_isJ`` (one piece ``S`` of blocks) and of ``w_i (y_i - ybar)^2 prod_{j in
S} |z_ij|^2`` (its noise scale).  The whitening is an affine map of each
block, unknown until every row has been seen, so these sums are not
mergeable as they stand; they are linear images of one tensor that is:

``T = sum_i w_i phi(y_i - c_y) o phi_1(x_i1 - c_1) o ... o phi_K(x_iK - c_K)``,
``phi(u) = (1, u, u o u)`` (``1 + n + n^2`` features of a block of width
``n``; ``1, u, u^2`` of the response), about a shift ``c`` (the data's own
mean, so a large common offset costs no precision).

An affine map ``z = B^T u + e`` of a block lifts to a linear map of its
features, ``phi(z) = L(B, e) phi(u)`` with

``L = [[1, 0, 0], [e, B^T, 0], [e o e, e o B^T + B^T o e, B^T o B^T]]``,

so a change of shift (``B = I``: two parts' tensors brought to a common
shift and added, exactly), the centring and the whitening are mode products
of ``T``.  ``L`` is block lower triangular in the features' order (a
feature of order ``o`` depends on those of order at most ``o``), so a
moment of low order reads a small slice of ``T``.  Memory is ``3 prod_k
(1 + n_k + n_k^2)`` numbers: for narrow blocks (docs/theory/k_blocks.md,
section "Moments").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from .. import config
from ..runtime._frequency import whole_numbers
from ..runtime._validation import named_blocks
from .design import BlockDesign
from .moments import DesignSums, column_scales, merged_at_one_scale

__all__ = ["MAX_ENTRIES", "DesignMoments", "affine_lift", "feature_tensor", "lift_modes",
           "shift_tensor", "sketch_of_tensor"]

#: Largest tensor of features (numbers) a K-block moments object holds.
MAX_ENTRIES = 20_000_000

def features(u: np.ndarray) -> np.ndarray:
    """``(1, u, u o u)`` of each row of ``u`` (``m x n``): ``m x (1 + n + n^2)``."""
    m, n = u.shape
    quad = (u[:, :, None] * u[:, None, :]).reshape(m, n * n)
    return np.hstack([np.ones((m, 1)), u, quad])


def feature_tensor(y: np.ndarray, blocks: Sequence[np.ndarray], w: np.ndarray | None,
                   shift_y: float, shifts: Sequence[np.ndarray]) -> np.ndarray:
    """``T`` about ``(shift_y, shifts)`` (module docstring), summed by chunks of rows."""
    m = y.shape[0]
    dims = [3, *(1 + x.shape[1] + x.shape[1] ** 2 for x in blocks)]
    head = int(np.prod(dims[:-1]))
    step = max(1, config.CHUNK_FLOATS // head)  # rows x numbers: the memory budget
    out = np.zeros((head, dims[-1]))
    for lo in range(0, m, step):
        sl = slice(lo, lo + step)
        yc = y[sl] - shift_y
        f = np.column_stack([np.ones_like(yc), yc, yc**2])
        if w is not None:
            f = f * w[sl, None]
        for x, c in zip(blocks[:-1], shifts[:-1], strict=True):
            g = features(x[sl] - c)
            f = (f[:, :, None] * g[:, None, :]).reshape(f.shape[0], -1)
        out += f.T @ features(blocks[-1][sl] - shifts[-1])
    return out.reshape(dims)


def affine_lift(b: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``L(B, e)`` of the module docstring: ``(1 + n' + n'^2) x (1 + n + n^2)``
    for ``B`` of shape ``n x n'`` (``z = B^T u + e``)."""
    n, n2 = b.shape
    bt = b.T
    out = np.zeros((1 + n2 + n2 * n2, 1 + n + n * n))
    out[0, 0] = 1.0
    out[1:1 + n2, 0] = e
    out[1:1 + n2, 1:1 + n] = bt
    out[1 + n2:, 0] = np.kron(e, e)
    out[1 + n2:, 1:1 + n] = np.kron(e[:, None], bt) + np.kron(bt, e[:, None])
    out[1 + n2:, 1 + n:] = np.kron(bt, bt)
    return out


def response_lift(e: float) -> np.ndarray:
    """``L(1, e)`` of the response's features ``(1, u, u^2)``."""
    return np.array([[1.0, 0.0, 0.0], [e, 1.0, 0.0], [e * e, 2.0 * e, 1.0]])


def lift_modes(t: np.ndarray, lifts: Sequence[np.ndarray]) -> np.ndarray:
    """``t`` with mode ``k`` multiplied by ``lifts[k]`` (rows: new features)."""
    for k, lift in enumerate(lifts):
        t = np.moveaxis(np.tensordot(lift, t, axes=(1, k)), 0, k)
    return t


def order_columns(n: int, order: int) -> np.ndarray:
    """The features of a block of width ``n`` of order at most ``order``."""
    return np.arange((1, 1 + n, 1 + n + n * n)[order])


def shift_tensor(t: np.ndarray, dy: float, dx: Sequence[np.ndarray]) -> np.ndarray:
    """``T`` about the shift ``c + d`` from ``T`` about ``c``."""
    lifts = [response_lift(-dy), *(affine_lift(np.eye(d.size), -d) for d in dx)]
    return lift_modes(t, lifts)


def _lifted(t: np.ndarray, orders: Sequence[int], lifts: Sequence[np.ndarray]) -> np.ndarray:
    """The slice of ``t`` of features of order at most ``orders[k]`` in mode
    ``k``, lifted by ``lifts`` restricted to the slice (exact: the lifts are
    block lower triangular)."""
    cols = [np.arange(o + 1) if k == 0 else order_columns(_width(t.shape[k]), o)
            for k, o in enumerate(orders)]
    return lift_modes(t[np.ix_(*cols)],
                      [lift[np.ix_(c, c)] for lift, c in zip(lifts, cols, strict=True)])


def _width(dim: int) -> int:
    """``n`` of a block of ``1 + n + n^2`` features."""
    return round((np.sqrt(4 * dim - 3) - 1) / 2)


class DesignMoments:
    """Exact mergeable moments of a response and three or more named blocks.

    Build with :meth:`jdr_stats.Moments.from_blocks`; ``m1 + m2`` merges the
    moments of disjoint rows exactly; :meth:`jdr_stats.JointDimReduction.from_moments`
    fits the per-block K-block estimator (``independent_blocks=True``) from
    them as from the rows.

    Attributes
    ----------
    nobs : int
        Rows summed.
    weight : float
        Total (frequency) weight.
    names : dict of str to list of str
        Each block's variables, by block name, in order.
    endog_name : str

    Notes
    -----
    The tensor of products of each block's features ``(1, u, u o u)`` and
    the response's ``(1, u, u^2)`` about the data's mean (module
    :mod:`jdr_stats.core.design_moments`): the whitening, the pieces and
    their noise scales are its linear images, so the fit from moments is
    the fit from rows up to rounding.  The joint estimator whitens each
    block against the others, which needs moments of higher order in one
    block than are held, and is refused by name; so are the rank tests and
    the bootstrap, which need the rows.
    """

    #: power-of-two column scales of the stacked design (the tensor is of the
    #: columns times them: columns of extreme units), or None (unit)
    _scale: np.ndarray | None = None
    #: every case weight summed is a whole number (or none was given): the
    #: rows stand for ``weight`` observations (copies of rows)
    _whole: bool = True

    def __init__(self, tensor: np.ndarray, shift_y: float, shifts: Sequence[np.ndarray],
                 nobs: int, names: dict[str, list[str]], endog_name: str,
                 scale: np.ndarray | None = None, whole_weights: bool = True) -> None:
        self._scale = None if scale is None else np.asarray(scale, float)
        self._whole = bool(whole_weights)
        self._tensor = tensor
        self._shift_y = float(shift_y)
        self._shifts = [np.asarray(c, dtype=float) for c in shifts]
        self._nobs = int(nobs)
        self._names = {str(k): [str(c) for c in v] for k, v in names.items()}
        self._endog_name = str(endog_name)

    @classmethod
    def from_blocks(cls, endog: object, blocks: object, *,
                    weights: object = None) -> DesignMoments:
        """The moments of the rows of a response and three or more blocks.

        Parameters
        ----------
        endog : array_like (m,)
            The (numeric) response.
        blocks : dict of str to array_like, or a list of array_like
            The blocks, each ``(m, n_k)``, as for
            :meth:`jdr_stats.JointDimReduction.from_blocks`: a dict names
            them, a list calls them ``block1, block2, ...``; a block's
            unlabelled columns are called after it (``genes0, genes1, ...``).
        weights : array_like (m,), optional
            Positive frequency weights.

        Returns
        -------
        DesignMoments

        Examples
        --------
        >>> import numpy as np, jdr_stats as jdr
        >>> rng = np.random.default_rng(0)
        >>> xs = {k: rng.normal(size=(600, 3)) for k in ("g", "l", "c")}
        >>> y = xs["g"][:, 0] * xs["l"][:, 0] + rng.normal(size=600)
        >>> parts = [jdr.Moments.from_blocks(y[i:i + 200], {k: x[i:i + 200]
        ...          for k, x in xs.items()}) for i in (0, 200, 400)]
        >>> mom = sum(parts)
        >>> res = jdr.JointDimReduction.from_moments(mom).fit(1, independent_blocks=True)
        >>> full = jdr.JointDimReduction.from_blocks(y, xs).fit(1, independent_blocks=True)
        >>> ang = jdr.metrics.principal_angles(res.directions["g"], full.directions["g"])
        >>> bool(ang.max() < 1e-8)
        True
        """
        names, arrays = _named_blocks(blocks)
        y = _vector(endog, "endog")
        endog_name = str(getattr(endog, "name", None) or "y")
        m = y.shape[0]
        for name, x in zip(names, arrays, strict=True):
            if x.shape[0] != m:
                raise ValueError(f"blocks: block {name!r} has {x.shape[0]} rows; endog has {m}")
        w = None
        if weights is not None:
            w = _vector(weights, "weights")
            if w.shape[0] != m:
                raise ValueError(f"weights: {w.shape[0]} values for {m} rows")
            if not (w > 0).all():
                bad = int(np.flatnonzero(~(w > 0))[0])
                raise ValueError(f"weights must be positive (frequency weights); got "
                                 f"{w[bad]!r} in row {bad}")
        if m == 0:
            raise ValueError("endog: no rows to sum")
        labels = {n: list(lab) for n, lab in zip(names, [_labels(n, x, b) for n, x, b in zip(
            names, arrays, _raw_blocks(blocks), strict=True)], strict=True)}
        mats = [np.asarray(x, dtype=float) for x in arrays]
        dims = 3 * int(np.prod([1 + x.shape[1] + x.shape[1] ** 2 for x in mats]))
        if dims > MAX_ENTRIES:
            widths = [x.shape[1] for x in mats]
            raise ValueError(f"blocks: moments of blocks of widths {widths} would hold "
                             f"{dims} numbers (at most {MAX_ENTRIES}); stream the rows "
                             "instead (JointDimReduction.from_parquet(..., blocks=...))")
        # columns of extreme units: times powers of two, as the in-memory fit does
        scale = column_scales(mats, rows=m)
        if scale is not None:
            cuts = np.cumsum([x.shape[1] for x in mats])[:-1]
            mats = [x * sc for x, sc in zip(mats, np.split(scale, cuts), strict=True)]
        wn = np.full(m, 1.0 / m) if w is None else w / w.sum()
        cy = float(wn @ y)
        cs = [wn @ x for x in mats]
        whole = w is None or whole_numbers(w)
        return cls(feature_tensor(y, mats, w, cy, cs), cy, cs, m, labels, endog_name, scale,
                   whole)

    # -- what it holds ------------------------------------------------------
    @property
    def nobs(self) -> int:
        return self._nobs

    @property
    def weight(self) -> float:
        return float(self._tensor[(0,) * self._tensor.ndim])

    @property
    def names(self) -> dict[str, list[str]]:
        return {k: list(v) for k, v in self._names.items()}

    @property
    def block_names(self) -> tuple[str, ...]:
        return tuple(self._names)

    @property
    def widths(self) -> tuple[int, ...]:
        return tuple(len(v) for v in self._names.values())

    @property
    def endog_name(self) -> str:
        return self._endog_name

    @property
    def whole_weights(self) -> bool:
        """Whether every case weight summed is a whole number (or none was
        given): then the rows stand for :attr:`weight` observations."""
        return self._whole

    @property
    def scale(self) -> np.ndarray | None:
        """The stacked design's power-of-two column scales (the moments are
        held of the columns times them), or None."""
        return self._scale

    def _lifted(self, f: np.ndarray, scale: np.ndarray) -> DesignMoments:
        """The same moments held at the column scales ``scale``, ``f`` the
        factors from this one's (a diagonal lift of each block's features:
        exact for powers of two; :func:`~jdr_stats.core.moments.merged_at_one_scale`)."""
        cuts = np.cumsum(self.widths)[:-1]
        parts = np.split(f, cuts)
        with np.errstate(over="ignore", under="ignore"):
            t = lift_modes(self._tensor, [np.eye(3), *(affine_lift(np.diag(fk), np.zeros(fk.size))
                                                      for fk in parts)])
        return DesignMoments(t, self._shift_y, [c * fk for c, fk in zip(self._shifts, parts,
                                                                         strict=True)],
                             self._nobs, self.names, self._endog_name, scale, self._whole)

    def __repr__(self) -> str:
        blocks = ", ".join(f"{k}: {len(v)}" for k, v in self._names.items())
        return f"DesignMoments(nobs={self.nobs}, blocks={{{blocks}}})"

    # -- merging ------------------------------------------------------------
    def __add__(self, other: object) -> DesignMoments:
        if not isinstance(other, DesignMoments):
            return NotImplemented
        if other._names != self._names or other._endog_name != self._endog_name:
            raise ValueError(
                "moments of different designs cannot be merged: blocks "
                f"{_layout(self)} and {_layout(other)} (the same blocks, names and "
                "variables, in the same order, are needed)")
        return merged_at_one_scale(self, other, lambda m: m._scale, sum(self.widths),
                                   DesignMoments._lifted, DesignMoments._merge)

    def _merge(self, other: DesignMoments) -> DesignMoments:
        w1, w2 = self.weight, other.weight
        wsum = w1 + w2
        m1, m2 = self.means(), other.means()
        cy = (w1 * m1[0] + w2 * m2[0]) / wsum
        cs = [(w1 * a + w2 * b) / wsum for a, b in zip(m1[1], m2[1], strict=True)]
        t1 = shift_tensor(self._tensor, cy - self._shift_y,
                          [c - s for c, s in zip(cs, self._shifts, strict=True)])
        t2 = shift_tensor(other._tensor, cy - other._shift_y,
                          [c - s for c, s in zip(cs, other._shifts, strict=True)])
        return DesignMoments(t1 + t2, cy, cs, self.nobs + other.nobs, self.names,
                             self._endog_name, self._scale, self._whole and other._whole)

    def __radd__(self, other: object) -> DesignMoments:
        if isinstance(other, int) and other == 0:  # sum() starts from 0
            return self
        return NotImplemented

    # -- the fit's sums -----------------------------------------------------
    def means(self) -> tuple[float, list[np.ndarray]]:
        """The weighted means of the response and of each block."""
        t, W = self._tensor, self.weight
        K = len(self._shifts)
        my = self._shift_y + float(t[(1,) + (0,) * K]) / W
        out = []
        for k, (c, n) in enumerate(zip(self._shifts, self.widths, strict=True)):
            idx: list[Any] = [0] * (K + 1)
            idx[k + 1] = slice(1, 1 + n)
            out.append(c + t[tuple(idx)] / W)
        return my, out

    def design_sums(self) -> DesignSums:
        """The centred sums of :class:`~jdr_stats.core.moments.DesignSums`
        (the pairs' y-weighted cross moments included)."""
        my, mx = self.means()
        widths = self.widths
        K = len(widths)
        lifts = [response_lift(self._shift_y - my),
                 *(affine_lift(np.eye(n), c - mu) for n, c, mu in
                   zip(widths, self._shifts, mx, strict=True))]
        design = BlockDesign.of(widths, q=1)
        p = design.p
        m2_xx = np.zeros((p, p))
        m2_xy = np.zeros((p, 1))
        m3: dict[tuple[int, int], np.ndarray] = {}
        yy = _lifted(self._tensor, [2] + [0] * K, lifts)
        for k, n in enumerate(widths):
            orders = [1] + [0] * K
            orders[k + 1] = 2
            sub = _lifted(self._tensor, orders, lifts).reshape(2, -1)
            m2_xy[design.span(k), 0] = sub[1, 1:1 + n]
            m2_xx[design.span(k), design.span(k)] = sub[0, 1 + n:].reshape(n, n)
        for j, k in design.pairs():
            orders = [1] + [0] * K
            orders[j + 1] = orders[k + 1] = 1
            cube = _lifted(self._tensor, orders, lifts).reshape(2, 1 + widths[j], 1 + widths[k])
            m2_xx[design.span(j), design.span(k)] = cube[0, 1:, 1:]
            m2_xx[design.span(k), design.span(j)] = cube[0, 1:, 1:].T
            m3[(j, k)] = cube[1, 1:, 1:][None]
        return DesignSums(design, self.nobs, self.weight, np.array([my]),
                          np.concatenate(mx), yy.reshape(-1)[2:].reshape(1, 1), m2_xx,
                          m2_xy, m3)

    def piece_totals(self, maps: Sequence[tuple[np.ndarray, np.ndarray]], ybar: float,
                     piece_list: Sequence[tuple[int, ...]]
                     ) -> tuple[dict[tuple[int, ...], np.ndarray], dict[tuple[int, ...], float]]:
        """For each piece ``S``, ``sum_i w_i (y_i - ybar) o z_is1 o ...`` and
        ``sum_i w_i (y_i - ybar)^2 prod_{j in S} |z_ij|^2``, each block
        whitened by the affine map ``z = B^T x + e`` of ``maps[k] = (B, e)``
        (in the original coordinates): what
        :func:`~jdr_stats.core.kestimate.piece_sums` adds over the rows."""
        K = len(self._shifts)
        widths = self.widths
        lifts: list[np.ndarray] = [response_lift(self._shift_y - ybar)[1:]]
        for (b, e), c in zip(maps, self._shifts, strict=True):
            lift = affine_lift(b, e + c @ b)  # in the coordinates about the shift
            n2 = b.shape[1]
            trace = lift[1 + n2 + np.arange(n2) * (n2 + 1)].sum(axis=0)
            lifts.append(np.vstack([lift[1:1 + n2], trace]))
        tensors, norms = {}, {}
        for piece in piece_list:
            cols = [np.arange(3)]
            mats = [lifts[0]]
            for k in range(K):
                inside = k in piece
                cols.append(order_columns(widths[k], 2 if inside else 0))
                mats.append(lifts[k + 1] if inside else np.ones((1, 1)))
            out = lift_modes(self._tensor[np.ix_(*cols)], mats)
            out = out.reshape([2, *(widths[k] + 1 for k in piece)])
            first: tuple[Any, ...] = (0, *(slice(0, widths[k]) for k in piece))
            noise: tuple[Any, ...] = (1, *(widths[k] for k in piece))
            tensors[piece] = np.asarray(out[first])[None]
            norms[piece] = float(out[noise])
        return tensors, norms


def _layout(m: DesignMoments) -> str:
    return "{" + ", ".join(f"{k}: {v}" for k, v in m._names.items()) + "}"


def _raw_blocks(blocks: object) -> list[object]:
    if isinstance(blocks, Mapping):
        return list(blocks.values())
    return list(blocks)  # type: ignore[call-overload]


def _named_blocks(blocks: object) -> tuple[list[str], list[np.ndarray]]:
    """Names and 2-D float arrays of ``blocks`` (a dict or a list)."""
    names, raw = named_blocks(blocks)  # as JointDimReduction's
    if len(raw) < 3:
        raise ValueError(f"blocks: K-block moments take three or more blocks; got {len(raw)} "
                         "(two blocks: jdr.Moments.from_arrays(y, a, b))")
    arrays = []
    for name, x in zip(names, raw, strict=True):
        arr = np.asarray(x, dtype=float)
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.ndim != 2 or arr.shape[1] == 0:
            raise ValueError(f"blocks: block {name!r} must be (m, n_k) with n_k >= 1; got "
                             f"shape {arr.shape}")
        if not np.isfinite(arr).all():
            row = int(np.argwhere(~np.isfinite(arr))[0][0])
            raise ValueError(f"blocks: block {name!r} has NaN or infinite values (row {row})")
        arrays.append(arr)
    return names, arrays


def _labels(name: str, arr: np.ndarray, raw: object) -> list[str]:
    cols = getattr(raw, "columns", None)
    if cols is not None:
        return [str(c) for c in cols]
    name_attr = getattr(raw, "name", None)
    if name_attr is not None and np.ndim(np.asarray(raw)) == 1:  # a Series
        return [str(name_attr)]
    return [f"{name}{j}" for j in range(arr.shape[1])]


def _vector(x: object, argname: str) -> np.ndarray:
    arr = np.asarray(x, dtype=float)
    if arr.ndim == 2 and arr.shape[1] == 1:
        arr = arr[:, 0]
    if arr.ndim != 1:
        raise ValueError(f"{argname}: K-block moments take one numeric column; got shape "
                         f"{arr.shape}")
    if not np.isfinite(arr).all():
        row = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"{argname}: NaN or infinite value in row {row}")
    return arr


def sketch_of_tensor(t: np.ndarray, tests: Sequence[np.ndarray]) -> np.ndarray:
    """The mode sketches of a K-way sum ``t`` (``q x n_1 x ... x n_K``) as
    :func:`~jdr_stats.core.kestimate.piece_sums` lays them out: block
    ``k``'s ``(n_k, q, s)`` array ``T_(k) (I_q o Omega_k)`` (column ``t`` of
    ``Omega_k`` the Kronecker product of the other blocks' ``tests[j][:, t]``),
    flattened and concatenated in block order."""
    K = t.ndim - 1
    out = []
    for k in range(K):
        cur = t
        # contract every other block with its test vectors, one at a time,
        # keeping the test index s as the last axis
        first = True
        for j in range(K - 1, -1, -1):
            if j == k:
                continue
            ax = j + 1
            if first:
                cur = np.tensordot(cur, tests[j], axes=(ax, 0))  # s appended last
                first = False
            else:  # the diagonal in s: multiply and sum the block's axis
                cur = np.einsum("...is->...s", np.moveaxis(cur, ax, -2) * tests[j])
        # cur: (q, n_k, s)
        out.append(np.moveaxis(cur, 1, 0).ravel())
    return np.concatenate(out)
