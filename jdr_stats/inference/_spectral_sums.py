"""Sums of the spectral rank test's sign-flipped rows (:mod:`._rank_spectral`).

One replicate of the spectral test needs, per batch of replicates, the
sums over rows of the flipped rows' cross products and of their
projections on each half's top directions.  This module holds those sums:
the per-row pieces (:func:`_all_w`, :class:`_Sides`), the accumulation of a
chunk of rows into every replicate's sums (:func:`_accumulate`,
:class:`_FlippedRows`), and the grouped route for a response of few
distinct values, where the rows of one value are summed once per
replicate (:func:`_row_groups`, :class:`_GroupSums`).  The statistic and
its p-values are derived in ``docs/theory/rank_tests.md``, section 6e.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np


def _row_of(x: np.ndarray, r: int) -> np.ndarray:
    return x[r]


def _all_w(lu: np.ndarray, un: np.ndarray, dxu: np.ndarray, cy: np.ndarray, vn: np.ndarray,
           blk: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``W_k = L_{k-1} Y_k^T + X_k Y_k Y_k^T / 2`` of every later rank of a pass
    at once (:meth:`_SpectralBatch._unfoldings`), from the left sides ``L_s``
    at its first rank, unfolded (``R x n1 x q x n2``), and the columns ``un``,
    ``vn`` of ``U``, ``V``, ``dxu`` (``R x n1 x q x 2K``), ``cy`` (``R x q x
    2K x n2``) of the later ranks (``blk``: each column's rank).

    ``L_{k-1} Y_k^T = L_s Y_k^T + sum_{i < k} X_i Y_i Y_k^T``: with ``X_i =
    [U_i, DX_i]``, ``Y_i = [CY_i; V_i^T]`` and the weights ``M_ij = 1`` for
    ``blk_i < blk_j``, ``1/2`` for ``blk_i = blk_j`` (the half term), else 0,
    the CY columns of every ``W`` are ``L_s CY^T + U (CY CY^T * M) + DX ((CY
    V)^T * M)`` and the V columns ``L_s V + U (CY V * M) + DX (V^T V * M)``.
    Returns the CY columns summed over the response columns (their ``X``
    columns, ``U_new``, are the same for every column), ``R x n1 x 2K``, and
    the V columns as ``R x n1 x q x 2K``."""
    nrep, n1, q, n2 = lu.shape
    nk = len(blk)
    weights = np.where(blk[:, None] < blk[None, :], 1.0,
                       np.where(blk[:, None] == blk[None, :], 0.5, 0.0))
    cc = cy @ cy.swapaxes(-1, -2)
    cv = (cy.reshape(-1, n2) @ vn).reshape(nrep, q, nk, nk)
    # the sums over the columns c as products of the unfolded matrices
    w_cy = (lu.reshape(nrep, n1, q * n2) @ cy.transpose(0, 1, 3, 2).reshape(nrep, q * n2, nk)
            + un @ (cc * weights).sum(axis=1)
            + dxu.reshape(nrep, n1, q * nk) @ (cv.swapaxes(-1, -2) * weights).reshape(
                nrep, q * nk, nk))
    w_v = (lu.reshape(-1, n2) @ vn + dxu.reshape(-1, nk) @ ((vn.T @ vn) * weights)).reshape(
        nrep, n1, q, nk)
    w_v += (un @ (cv * weights).transpose(2, 0, 1, 3).reshape(nk, -1)).reshape(
        n1, nrep, q, nk).transpose(1, 0, 2, 3)
    return w_cy, w_v


class _Sides:
    """One rank's two sides for the replicates of a batch
    (:meth:`_SpectralBatch._unfoldings`): ``left(j)`` and ``right(j)`` the
    matrices of replicate ``j``, ``left_gram()`` the left sides' smaller Gram
    matrices (``R x n1 x n1``) or None where they are not the dense
    eigensolver's."""

    __slots__ = ("left", "left_gram", "right")

    def __init__(self, left: Callable[[int], np.ndarray], right: Callable[[int], np.ndarray],
                 left_gram: Callable[[], np.ndarray | None]) -> None:
        self.left, self.right, self.left_gram = left, right, left_gram


def _zero_sums(n1: int, n2: int, k2: int, projected: bool,
               q: int | tuple[int, ...]) -> dict[str, np.ndarray]:
    """Zero sums of :func:`_accumulate` for ``q`` response columns (or
    groups), stacked: ``q x ...`` arrays; ``q`` a tuple (replicates, columns):
    ``R x q x ...`` arrays."""
    lead = (q,) if isinstance(q, int) else tuple(q)
    out = {"full": np.zeros((*lead, n1, n2))}
    if projected:
        out.update(c_left=np.zeros((*lead, k2, n2)), c_right=np.zeros((*lead, n1, k2)),
                   d_left=np.zeros((*lead, n1, k2)), e_left=np.zeros((*lead, k2, k2)),
                   f_right=np.zeros((*lead, k2, n2)), g_right=np.zeros((*lead, k2, k2)))
    return out


def _accumulate(sums: dict[str, np.ndarray], y: np.ndarray, a: np.ndarray, b: np.ndarray,
                sa: np.ndarray, sb: np.ndarray, ca: np.ndarray | None, cb: np.ndarray | None,
                one_sign: bool = False) -> None:
    """Add one chunk of rows to one replicate's sums of one response column:
    ``full = sum wy a' b'^T`` (``wy = y sa sb``) and, with the projections'
    corrections ``ca``, ``cb``, the six products of :meth:`_SpectralBatch._projected`."""
    wy = y * sa * sb
    sums["full"] += a.T @ (wy[:, None] * b)
    if ca is None or cb is None:
        return
    cl, cr = y * sa * (1 - sb), y * sb * (1 - sa)
    if one_sign:
        cl = cr = np.zeros_like(y)
    sums["c_left"] += (ca * wy[:, None]).T @ b          # sum wy (U_h^T a') b'^T
    sums["c_right"] += a.T @ (cb * wy[:, None])         # sum wy a' (V_h^T b')^T
    sums["d_left"] += a.T @ (cb * cl[:, None])          # sum cl a' (V_h^T b')^T
    sums["e_left"] += (ca * cl[:, None]).T @ cb         # sum cl (U_h^T a')(V_h^T b')^T
    ca_r = ca * cr[:, None]
    sums["f_right"] += ca_r.T @ b                       # sum cr (U_h^T a') b'^T
    sums["g_right"] += ca_r.T @ cb                      # sum cr (U_h^T a')(V_h^T b')^T


class _FlippedRows:
    """The products of :func:`_accumulate` for one replicate's signs, with
    less arithmetic (the same sums up to rounding).

    * ``c_left`` and ``c_right`` are sums over the rows of a half ``h`` of
      ``wy_i (U_h^T a'_i) b_i'^T`` and ``wy_i a'_i (V_h^T b'_i)^T``: they are
      ``U_h^T F_h`` and ``F_h V_h`` with ``F_h = sum_{i in h} wy_i a'_i
      b_i'^T``, whose sum over the halves is ``full`` (no product over the
      rows for them);
    * ``cl = y sa (1 - sb)`` is ``2 y sa`` on the rows with ``sb = -1`` and 0
      elsewhere, ``cr = y sb (1 - sa)`` likewise with ``sa = -1``: the four
      products weighted by them run over those rows only (about half).

    At 76 + 64 columns, 9 response columns and ``k <= 18`` a replicate
    cost half as much as with :func:`_accumulate`.  The row selections are
    made once per replicate and shared by the response columns.
    """

    def __init__(self, a: np.ndarray, b: np.ndarray, ca: np.ndarray, cb: np.ndarray,
                 sa: np.ndarray, sb: np.ndarray,
                 halves: list[tuple[np.ndarray, np.ndarray, np.ndarray]],
                 one_sign: bool) -> None:
        self.sab = sa * sb
        self.halves = halves
        self.one_sign = one_sign
        if one_sign:
            return
        self.left = sb < 0
        self.right = sa < 0
        self.a_l, self.cb_l, self.ca_l = a[self.left], cb[self.left], ca[self.left]
        self.sa_l = 2.0 * sa[self.left]
        self.ca_r, self.b_r, self.cb_r = ca[self.right], b[self.right], cb[self.right]
        self.sb_r = 2.0 * sb[self.right]

    def accumulate(self, sums: dict[str, np.ndarray], y: np.ndarray, u1: np.ndarray | None,
                   v1: np.ndarray | None) -> None:
        """Add this replicate's sums of one response column ``y``."""
        assert u1 is not None and v1 is not None
        wy = y * self.sab
        for h, (rows, ah, bh) in enumerate(self.halves):
            f = ah.T @ (wy[rows, None] * bh)
            sums["full"] += f
            sums["c_left"][h::2] += u1[:, h::2].T @ f
            sums["c_right"][:, h::2] += f @ v1[:, h::2]
        if self.one_sign:
            return
        cl = y[self.left] * self.sa_l
        sums["d_left"] += self.a_l.T @ (self.cb_l * cl[:, None])
        sums["e_left"] += (self.ca_l * cl[:, None]).T @ self.cb_l
        ca_r = self.ca_r * (y[self.right] * self.sb_r)[:, None]
        sums["f_right"] += ca_r.T @ self.b_r
        sums["g_right"] += ca_r.T @ self.cb_r


#: group the rows by their response value when it takes at most this many
#: distinct values (a categorical response: the classes) ...
_MAX_GROUPS = 64


#: ... and each group has this many rows on average
_MIN_GROUP_ROWS = 8


class _Group:
    """The rows of a chunk whose response vector is ``value`` (``Q``), with
    their blocks, corrections and halves (:func:`_row_groups`)."""

    def __init__(self, value: np.ndarray, idx: np.ndarray, a: np.ndarray, b: np.ndarray,
                 ca: np.ndarray, cb: np.ndarray,
                 halves: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> None:
        self.value, self.idx = value, idx
        self.a, self.b, self.ca, self.cb = a[idx], b[idx], ca[idx], cb[idx]
        self.halves = [(rows[idx], self.a[rows[idx]], self.b[rows[idx]])
                       for rows, _, _ in halves]


def _row_groups(y: np.ndarray, a: np.ndarray, b: np.ndarray, ca: np.ndarray | None,
                cb: np.ndarray | None, halves: list[tuple[np.ndarray, np.ndarray, np.ndarray]]
                ) -> list[_Group] | None:
    """The chunk's rows grouped by their response vector when a response of
    ``Q > 1`` columns takes few distinct values (a categorical response: ``Q
    + 1`` classes), else None.  Every sum of a replicate is linear in ``y``:
    ``sum_i y_ic w_i X_i = sum_g value_gc sum_{i in g} w_i X_i``, so the
    products over the rows run once per replicate (each row in its group's)
    instead of once per response column (9 times at 10 classes)."""
    if y.ndim == 1 or y.shape[1] < 2 or ca is None or cb is None:
        return None
    values, inverse = np.unique(y, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    if len(values) > _MAX_GROUPS or len(values) * _MIN_GROUP_ROWS > len(y):
        return None
    return [_Group(values[g], np.flatnonzero(inverse == g), a, b, ca, cb, halves)
            for g in range(len(values))]


class _GroupSums:
    """One replicate's sums of every response column from sums over the
    groups of rows (:func:`_row_groups`) and the halves, each group's rows of
    half ``h`` as ``x_i = [a'_i, U_h^T a'_i]``, ``z_i = [b'_i, V_h^T b'_i]``
    (the corrections' nonzero columns only).  Every sum of
    :func:`_accumulate` is, per group ``g`` and half ``h``, a block of one of
    three products (``sab = sa sb``; ``sa``, ``sb`` = +-1):

    * ``sum sab x_i z_i^T = M_gh - 2 sum_{sab_i < 0} x_i z_i^T`` with the
      unsigned ``M_gh = sum x_i z_i^T`` (the replicate's product runs over
      the rows of negative sign only, about half): its blocks are ``full``
      (``a' b'^T``), ``c_left`` (``U_h^T a' b'^T``) and ``c_right``
      (``a' (V_h^T b')^T``);
    * ``sum cl x_i (V_h^T b'_i)^T`` (``cl = 2 sa`` on the rows with ``sb =
      -1``, 0 elsewhere): ``d_left`` and ``e_left``;
    * ``sum cr (U_h^T a'_i) z_i^T`` (``cr = 2 sb`` on the rows with ``sa =
      -1``): ``f_right`` and ``g_right``;

    and a response column's sum is ``sum_g value_gc`` of its groups' (the
    sums are linear in ``y``), so the unsigned part ``sum_g value_gc M_gh``
    is formed once.  The same sums as :func:`_accumulate` column by column,
    to rounding.
    """

    def __init__(self, groups: list[_Group]) -> None:
        a0, b0 = groups[0].a, groups[0].b
        self.n1, self.n2 = a0.shape[1], b0.shape[1]
        self.kh = groups[0].ca.shape[1] // 2
        self.values_t = np.stack([grp.value for grp in groups]).T  # Q x G
        #: the rows of every group and half one after the other: their
        #: indices in the chunk, x and z; part p (group g, half h) is the
        #: rows ``bounds[p]:bounds[p + 1]``
        self.parts: list[tuple[int, int]] = []
        idx, xs, zs, bounds = [], [], [], [0]
        unsigned = np.zeros((len(groups), 2, self.n1 + self.kh, self.n2 + self.kh))
        for g, grp in enumerate(groups):
            for h, (rows, ah, bh) in enumerate(grp.halves):
                x = np.hstack([ah, grp.ca[rows][:, h::2]])
                z = np.hstack([bh, grp.cb[rows][:, h::2]])
                self.parts.append((g, h))
                idx.append(grp.idx[rows])
                xs.append(x)
                zs.append(z)
                bounds.append(bounds[-1] + len(x))
                unsigned[g, h] = x.T @ z
        self.idx = np.concatenate(idx)
        self.x, self.z = np.vstack(xs), np.vstack(zs)
        self.bounds = bounds
        self.unsigned = np.tensordot(self.values_t, unsigned, axes=1)  # Q x 2 x ...

    def add(self, acc: dict[str, np.ndarray], sa: np.ndarray, sb: np.ndarray,
            one_sign: bool) -> None:
        """Add one replicate's sums (signs ``sa``, ``sb`` of the chunk's rows)
        to ``acc`` (stacked over the response columns).  The products
        weighted by ``cl`` and ``cr`` run over every row of a part with the
        weight zero where it is (two products of ``kh`` columns); the one of
        the negative signs over those rows only."""
        n1, n2, kh = self.n1, self.n2, self.kh
        ng = self.values_t.shape[1]
        neg = np.zeros((ng, *self.unsigned.shape[1:]))
        dl = np.zeros((ng, 2, n1 + kh, kh))
        fr = np.zeros((ng, 2, kh, n2 + kh))
        s_a, s_b = sa[self.idx], sb[self.idx]
        negative = s_a * s_b < 0
        x, z = self.x, self.z
        if not one_sign:
            zd = z[:, n2:] * np.where(s_b < 0, 2.0 * s_a, 0.0)[:, None]
            xf = x[:, n1:] * np.where(s_a < 0, 2.0 * s_b, 0.0)[:, None]
        for p, (g, h) in enumerate(self.parts):
            lo, hi = self.bounds[p], self.bounds[p + 1]
            rows = lo + np.flatnonzero(negative[lo:hi])
            neg[g, h] = x[rows].T @ z[rows]
            if one_sign:
                continue
            dl[g, h] = x[lo:hi].T @ zd[lo:hi]
            fr[g, h] = xf[lo:hi].T @ z[lo:hi]
        full = np.matmul(self.values_t, neg.reshape(ng, -1)).reshape(self.unsigned.shape)
        full *= -2.0
        full += self.unsigned
        acc["full"] += full[:, 0, :n1, :n2]
        acc["full"] += full[:, 1, :n1, :n2]
        for h in (0, 1):
            acc["c_left"][:, h::2] += full[:, h, n1:, :n2]
            acc["c_right"][:, :, h::2] += full[:, h, :n1, n2:]
        if one_sign:
            return
        left = np.tensordot(self.values_t, dl, axes=1)
        right = np.tensordot(self.values_t, fr, axes=1)
        for h in (0, 1):
            acc["d_left"][:, :, h::2] += left[:, h, :n1]
            acc["e_left"][:, h::2, h::2] += left[:, h, n1:]
            acc["f_right"][:, h::2] += right[:, h, :, :n2]
            acc["g_right"][:, h::2, h::2] += right[:, h, :, n2:]


def _accumulate_groups(acc: dict[str, np.ndarray], groups: list[_Group],
                       sa: np.ndarray, sb: np.ndarray, one_sign: bool) -> None:
    """One replicate's sums of every response column (``acc``, stacked) from
    its groups' sums (:class:`_GroupSums`): the same sums as column by column
    up to rounding."""
    _GroupSums(groups).add(acc, sa, sb, one_sign)
