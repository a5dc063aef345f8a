"""Analytic per-row influences of a K-block fit's pieces under the joint
whitening (docs/theory/k_blocks.md, section "Per-block rank tests",
"Analytic influences under the joint whitening").

The joint ("sample") whitening maps the stacked centred rows to
``z = B P (x - mu)``, ``P = Sigma^{-1}``, ``B = diag(C_k^T)``, ``C_k`` the
lower Cholesky factor of ``P_kk^{-1}``, so that ``R = E[z z^T]`` has
identity diagonal blocks and the blocks' cross covariances ``S_ab`` off
them.  A row's influence on ``(mu, Sigma)`` moves every whitened row by
``dz(x) = G_i z(x) - z_i`` with, in whitened coordinates only,

    G_i = diag_k(E_i,kk / 2) - E_i R^{-1},   E_i = z_i z_i^T - R.

A whitening is fixed up to a rotation of each block's coordinates: the
Cholesky factor's change, ``dC_k = C_k Phi(E_i,kk)`` (``Phi`` the lower
triangle with half its diagonal), is its symmetric part ``E_i,kk / 2``
plus a rotation that depends on the order of the columns.  The influences
take the symmetric part alone (the refit's whitening turned to the fit's,
as the delete-one refits do, :func:`~jdr_stats.fitting._kwhiten._aligned`):
the same under any order or units of the columns, and, the rotation
moving only the pieces' null parts, the same tests to first order.  A
plain cross moment ``T_U = E[(y - ybar) o_{c in U} z_c]`` then has the
influence

    (y_i - ybar) o z_iU - T_U - (y_i - ybar) o E[o_U z]
      - sum_{j in U} z_ij (slot j) o T_{U - j}
      + sum_{j in U} G_i[j, :] (slot j) . E[(y - ybar) o_{U - j} z o z],

and the Hermite-corrected piece ``sum_pi (-1)^|pi| (o_pi S_ab) o T_free``
adds, for each matched pair, ``dS_ab = (E_i + G_i R + R G_i^T)_ab`` with
the influence of ``T_free``.  Each block whitened alone gives ``G_i =
-diag_k E_i,kk / 2`` instead.  Each term is
a shared moment (formed once, ``O(m)`` rows each) contracted with the
row's own values: no refits.  The
influence is that of one copy of row ``i`` on the (weighted) mean, what
the delete-one jackknife approximates (``(W - 1)(M - M^(-i))``).
"""

from __future__ import annotations

import string
from collections.abc import Collection, Sequence
from copy import copy as _shallow_copy

import numpy as np

from .. import config
from ..core.kestimate import KBlockFactors
from ..core.tensor import _partial_matchings, cross_tensor, mode_sketches

__all__ = ["contribution_grams", "joint_influences", "mapped_influences", "row_contributions"]

Piece = tuple[int, ...]


class _Moments:
    """Shared sums of the whitened rows: the weighted means every influence
    term contracts, each formed once."""

    def __init__(self, y2: np.ndarray, zs: Sequence[np.ndarray], wn: np.ndarray,
                 joint: bool = True, share: np.ndarray | None = None,
                 cov_w: np.ndarray | None = None) -> None:
        m = y2.shape[0]
        self.joint = joint
        # one copy's share of a weighted mean (zero: the row's whole influence)
        self.share = np.zeros(m) if share is None else share
        self.m, self.zs, self.wn = m, list(zs), wn
        self.yw = y2 * (m * wn)[:, None]  # cross_tensor(yw, .) = sum_i wn_i y_i o ...
        self.ones = (m * wn)[:, None]
        self.zfull = np.hstack(zs)
        self.bounds = np.cumsum([0, *(z.shape[1] for z in zs)])
        self.y2 = y2
        # the whitening's covariance (that of every row when the shared sums
        # are one part's, ``cov_w``)
        rmat = (self.zfull * (wn if cov_w is None else cov_w)[:, None]).T @ self.zfull
        self.r = (rmat + rmat.T) / 2
        self.rinv = np.linalg.inv(self.r)
        self._cache: dict[tuple[str, Piece], np.ndarray] = {}
        self._all = (self.zs, self.zfull)  # the moments' rows (every row, in every part)

    def rows(self, sl: slice) -> _Moments:
        """The same shared sums (one cache) with the row-wise arrays of the
        rows ``sl`` only: their influences, a part at a time."""
        self.sensitivities()
        part = _shallow_copy(self)
        part.y2, part.zs, part.zfull = self.y2[sl], [z[sl] for z in self.zs], self.zfull[sl]
        part.share, part.g = self.share[sl], self.g[sl]
        return part

    def block(self, k: int) -> slice:
        return slice(int(self.bounds[k]), int(self.bounds[k + 1]))

    def plain(self, u: Piece) -> np.ndarray:
        """``E[(y - ybar) o_U z]``, ``(q, n_U...)``."""
        key = ("plain", u)
        if key not in self._cache:
            self._cache[key] = cross_tensor(self.yw, [self._all[0][c] for c in u])
        return self._cache[key]

    def design(self, u: Piece) -> np.ndarray:
        """``E[o_U z]`` (no response), ``(n_U...)``."""
        key = ("design", u)
        if key not in self._cache:
            self._cache[key] = cross_tensor(self.ones, [self._all[0][c] for c in u])[0]
        return self._cache[key]

    def extended(self, u: Piece) -> np.ndarray:
        """``E[(y - ybar) o_U z o z]`` (the full whitened row last), ``(q, n_U..., p)``."""
        key = ("ext", u)
        if key not in self._cache:
            zs, zfull = self._all
            self._cache[key] = cross_tensor(self.yw, [*(zs[c] for c in u), zfull])
        return self._cache[key]

    def sensitivities(self) -> np.ndarray:
        """Each row's ``G_i`` (``m x p x p``)."""
        if "g" not in self.__dict__:
            e = self.zfull[:, :, None] * self.zfull[:, None, :] - self.r
            g = -e @ self.rinv if self.joint else np.zeros_like(e)
            for k in range(len(self.zs)):
                sl = self.block(k)
                # the factor's symmetric change (module docstring): joint + E_kk / 2
                # (the factor of P_kk^-1), per block - E_kk / 2
                g[:, sl, sl] += (0.5 if self.joint else -0.5) * e[:, sl, sl]
            self.g = g
        return self.g

    def cov_influence(self, a: int, b: int) -> np.ndarray:
        """Each row's influence on ``S_ab``, ``m x n_a x n_b``."""
        g = self.sensitivities()
        sa, sb = self.block(a), self.block(b)
        za, zb = self.zfull[:, sa], self.zfull[:, sb]
        e = za[:, :, None] * zb[:, None, :] - self.r[sa, sb]
        return (g[:, sa, :] @ self.r[:, sb]) + (self.r[sa, :] @ np.swapaxes(g[:, sb, :], 1, 2)) + e


def _row_products(y2: np.ndarray, zs: Sequence[np.ndarray]) -> np.ndarray:
    """Each row's ``y_i o z_i1 o ...``, ``(m, q, n_1, ...)``."""
    m = y2.shape[0]
    row = y2
    for z in zs:
        row = (row[:, :, None] * z[:, None, :]).reshape(m, -1)
    return row.reshape(m, y2.shape[1], *(z.shape[1] for z in zs))


def _plain_influence(mom: _Moments, u: Piece) -> np.ndarray:
    """Each row's influence on ``T_U`` (module docstring), ``(m, q, n_U...)``.

    The shared moments the whitening's terms contract are taken without the
    row's own contribution (``(T - w_i t_i) / (1 - w_i)``): the same to
    first order, and the row's influence then does not correlate with its
    own share of a moment that vanishes under the null (what would bias the
    reference's mean by O(p / m)).

    Slot ``j``'s terms (the whitening's mean and covariance, both shares)
    are one array ``(m, n_j, q n_rest)``: one GEMM of the rows' ``[G_i[j, :],
    z_ij]`` with the shared ``[E[. o z], T_rest]`` and one outer product of
    ``G_i[j, :] z_i`` with the row's own ``y_i o z_i,rest``, added once."""
    m = mom.y2.shape[0]
    y2, zs = mom.y2, mom.zs
    own = mom.share / (1.0 - mom.share)
    keep = 1.0 / (1.0 - mom.share)
    row = _row_products(y2, [zs[c] for c in u])
    # each slot with a rest gives the row back its own share (own * row)
    out = row * (1.0 + own * len(u)).reshape((m,) + (1,) * (row.ndim - 1)) if len(u) >= 2 \
        else row.copy()
    out -= mom.plain(u)[None]
    if len(u) >= 2:  # the response's mean (E[o_U z] = 0 for one block: centred)
        out -= (y2.reshape(y2.shape + (1,) * len(u)) * mom.design(u)[None, None])
    g = mom.sensitivities()
    for pos, j in enumerate(u):
        rest = u[:pos] + u[pos + 1:]
        gj = g[:, mom.block(j), :]  # (m, n_j, p)
        ext = mom.extended(rest)  # (q, n_rest..., p)
        coef = gj * keep[:, None, None]
        shared = ext.reshape(-1, ext.shape[-1])  # (q n_rest, p)
        if rest:  # the whitening's mean: - the row's z_j in slot j times T_rest
            coef = np.concatenate([coef, -(zs[j] * keep[:, None])[:, :, None]], axis=2)
            shared = np.concatenate([shared, mom.plain(rest).reshape(-1, 1)], axis=1)
        term = (coef.reshape(-1, coef.shape[-1]) @ shared.T).reshape(m, zs[j].shape[1], -1)
        # the covariance's own share: G_i[j, :] z_i in slot j times y_i o z_i,rest
        gz = np.einsum("inp,ip->in", gj, mom.zfull) * own[:, None]
        term -= gz[:, :, None] * _row_products(y2, [zs[c] for c in rest]).reshape(m, 1, -1)
        out += np.moveaxis(term.reshape(m, zs[j].shape[1], *ext.shape[:-1]), 1, pos + 2)
    return out


def _hermite_influence(mom: _Moments, u: Piece, cross_cov: dict[tuple[int, int], np.ndarray]
                       ) -> np.ndarray:
    """Each row's influence on the Hermite-corrected piece ``U`` (the
    correction's cross covariances and lower moments estimated too).

    The matchings leaving the same slots free are summed first, on the
    matched slots alone (a constant and a per-row tensor), and added to
    the piece's influence in one product with the free slots' two tensors
    (the influence of ``T_free`` and ``T_free`` itself)."""
    letters = string.ascii_letters
    n = len(u)
    out = _plain_influence(mom, u)
    groups: dict[tuple[int, ...], list[list[tuple[int, int]]]] = {}
    for pi in _partial_matchings(list(range(n))):
        free = tuple(sorted(set(range(n)) - {a for p in pi for a in p}))
        if pi and free:  # no free slot: the response is centred, E[y - ybar] = 0
            groups.setdefault(free, []).append(pi)
    dcovs: dict[tuple[int, int], np.ndarray] = {}
    for free, matchings in groups.items():
        psub = "".join(letters[a] for a in range(n) if a not in free)
        const: np.ndarray | float = 0.0
        rows: np.ndarray | float = 0.0
        for pi in matchings:
            sign = float((-1) ** len(pi))
            covs = [sign * cross_cov[(u[a], u[b])] if t == 0 else cross_cov[(u[a], u[b])]
                    for t, (a, b) in enumerate(pi)]
            csubs = [letters[a] + letters[b] for a, b in pi]
            const = const + np.einsum(",".join(csubs) + "->" + psub, *covs)
            for t, (a, b) in enumerate(pi):
                if (a, b) not in dcovs:
                    dcovs[(a, b)] = mom.cov_influence(u[a], u[b])
                ops = [*covs[:t], sign * dcovs[(a, b)] if t == 0 else dcovs[(a, b)],
                       *covs[t + 1:]]
                subs = [*csubs[:t], "Z" + csubs[t], *csubs[t + 1:]]
                rows = rows + np.einsum(",".join(subs) + "->Z" + psub, *ops, optimize=True)
        sub = tuple(u[c] for c in free)
        # T_free without the row's own share (as in _plain_influence)
        wcol = mom.share.reshape((-1,) + (1,) * (len(free) + 1))
        lower = (mom.plain(sub)[None] - wcol * _row_products(mom.y2, [mom.zs[c] for c in sub])
                 ) / (1.0 - wcol)
        assert isinstance(rows, np.ndarray)
        left = np.stack([_plain_influence(mom, sub), lower], axis=1)
        right = np.stack([np.broadcast_to(const, rows.shape), rows], axis=1)
        _add_row_outer(out, left, right, free, n)
    return out


def _add_row_outer(out: np.ndarray, left: np.ndarray, right: np.ndarray,
                   free: Sequence[int], n: int) -> None:
    """``out[i] += sum_t left[i, t] o right[i, t]`` with ``left`` over the
    response and the ``free`` slots, ``right`` over the other slots, each
    slot put in its place among the ``n`` (one batched product over ``t``
    and a transposed add: the einsum ``Zt..,Zt..->Z..`` without its
    generic loops)."""
    m, terms = left.shape[:2]
    matched = [c for c in range(n) if c not in free]
    prod = np.matmul(left.reshape(m, terms, -1).transpose(0, 2, 1),
                     right.reshape(m, terms, -1))
    prod = prod.reshape(left.shape[:1] + left.shape[2:] + right.shape[2:])
    place = [*free, *matched]  # the slots in the axes of prod, after (Z, Y)
    out += prod.transpose([0, 1, *(2 + place.index(c) for c in range(n))])


def joint_influences(y: np.ndarray, zs: Sequence[np.ndarray], fac: KBlockFactors, *,
                     cross_cov: dict[tuple[int, int], np.ndarray] | None,
                     w: np.ndarray | None = None, joint: bool = True,
                     share_left_out: float = 1.0,
                     moments_rows: np.ndarray | None = None,
                     only: Collection[int] | None = None,
                     pieces_held: dict[Piece, np.ndarray] | None = None) -> list[np.ndarray]:
    """Each row's analytic influence on every block's stacked pieces
    (:func:`~jdr_stats.core.kestimate.stacked_pieces`, the pieces' scales
    and weights held) under the joint sample whitening, ``m x n_k x D_k``
    per block: the rows :func:`~jdr_stats.inference.kblock_rank.block_rank_table_rows`
    reads, in place of delete-one refits.

    ``y`` the centred response, ``zs`` the jointly whitened, centred rows,
    ``cross_cov`` their blocks' cross covariances (the Hermite correction of
    pieces of three or more blocks; None: uncorrected), ``w`` the case
    weights (the influence of one copy of a row), ``joint=False``: each block
    whitened alone by its sample covariance (``G_i = -diag_k E_i,kk / 2``).
    ``share_left_out``: the fraction of one copy's share (``min(1, w_i) / W``)
    left out of the moments the whitening's terms contract; by default all of it
    (theory page, "The rows' own shares"), ``0``: the row's own share kept (the
    exact derivative at the sample).  ``moments_rows``: a boolean mask of the
    rows whose (weighted) sums form the shared moments the whitening's terms
    contract, the own share left out for the rows in it (None: every row);
    the whitening's covariance is every row's.  The cross-fitted reference
    (theory page, "A cross-fitted reference") reads each row's influence
    with its own half's moments and with the other half's.  The tensor route only (``fac.tests``
    None).  Each piece's influences are formed a part of the rows at a time
    (each part's arrays of about ``config.CHUNK_FLOATS / 8`` numbers) straight
    into the blocks' rows.  ``only``: the blocks whose influences are formed
    (the others' arrays are empty, ``m x n_k x 0``), the same numbers as the
    blocks' of a call with every block.  ``pieces_held``: a dict that keeps each
    piece's influences (``m x q x n_U...``) once formed, so that calls for the
    blocks one at a time form every piece once (the same numbers; the caller
    drops what it no longer needs).
    """
    if fac.tests is not None:
        raise ValueError("joint_influences: the sketched route's pieces have no analytic "
                         "influences here; use the tensor route")
    y2 = y[:, None] if y.ndim == 1 else y
    m = y2.shape[0]
    wn = np.full(m, 1.0 / m) if w is None else np.asarray(w, float) / np.sum(w)
    copy = (np.full(m, 1.0 / m) if w is None
            else np.minimum(1.0, np.asarray(w, float)) / np.sum(w))
    if not 0.0 <= share_left_out <= 1.0:
        raise ValueError(f"share_left_out must be in [0, 1]; got {share_left_out!r}")
    share = None if share_left_out == 0 else share_left_out * copy
    cov_w = None
    if moments_rows is not None:
        inside = np.asarray(moments_rows, bool)
        if inside.shape != (m,) or not inside.any():
            raise ValueError("moments_rows must be a boolean mask of the rows with at least "
                             f"one row in it; got shape {inside.shape}")
        cov_w, whole = wn, np.where(inside, wn, 0.0).sum()
        wn = np.where(inside, wn, 0.0) / whole
        share = None if share is None else np.where(inside, share / whole, 0.0)
    mom = _Moments(y2, zs, wn, joint, share, cov_w)
    q, widths = y2.shape[1], [z.shape[1] for z in zs]
    cols = [0] * len(zs)  # each block's stacked columns, filled in the fit's order
    for piece in fac.scales:
        for k in piece:
            cols[k] += q * int(np.prod([widths[j] for j in piece if j != k]))
    want = set(range(len(zs)) if only is None else only)
    out = [np.empty((m, n, c if k in want else 0))
           for k, (n, c) in enumerate(zip(widths, cols, strict=True))]
    at = [0] * len(zs)
    for piece in fac.scales:
        size = q * int(np.prod([widths[j] for j in piece]))
        if want.isdisjoint(piece):
            for k in piece:
                at[k] += size // widths[k]
            continue
        step = max(1, config.CHUNK_FLOATS // (8 * size))  # a part's arrays stay small
        s2 = fac.scales[piece]
        held = None if pieces_held is None else pieces_held.get(piece)
        if pieces_held is not None and held is None:
            held = np.empty((m, q, *(widths[j] for j in piece)))
            for start in range(0, m, step):
                sl = slice(start, start + step)
                held[sl] = _piece_influence(mom.rows(sl), piece, cross_cov)
            pieces_held[piece] = held
        for start in range(0, m, step):
            sl = slice(start, start + step)
            t = (held[sl] if held is not None
                 else _piece_influence(mom.rows(sl), piece, cross_cov))
            for pos, k in enumerate(piece):
                if k not in want:
                    continue
                c = fac.weights[(piece, k)]
                moved = np.moveaxis(t, pos + 2, 1)  # (rows, n_k, q, n_others...)
                dest = out[k][sl, :, at[k]:at[k] + size // widths[k]].view()
                dest.shape = moved.shape  # a view of out[k] (an error, never a copy)
                np.multiply(moved, np.sqrt(c / s2) if s2 > 0 else np.sqrt(c), out=dest)
        for k in piece:
            at[k] += size // widths[k]
    return out


def _piece_influence(part: _Moments, piece: Piece,
                     cross_cov: dict[tuple[int, int], np.ndarray] | None) -> np.ndarray:
    """The influences of the rows of ``part`` on ``piece`` (Hermite-corrected
    for three or more blocks when ``cross_cov`` is given)."""
    if cross_cov is not None and len(piece) >= 3:
        return _hermite_influence(part, piece, cross_cov)
    return _plain_influence(part, piece)


def _piece_contributions(y2: np.ndarray, zs: Sequence[np.ndarray], u: Piece,
                         cross_cov: dict[tuple[int, int], np.ndarray] | None) -> np.ndarray:
    """Each row's own term of piece ``u``, ``(m, q, n_U...)``: ``y_i o
    z_iU``, and, Hermite-corrected (three or more blocks, ``cross_cov``
    given), the row's Hermite tensor ``sum_pi (-1)^|pi| (o_pi S_ab) o y_i o
    z_i,free`` over the partial matchings that leave a slot free (as the
    piece itself, :func:`~jdr_stats.core.tensor.hermite_corrected`, and its
    sketch: the complete ones would add ``y_i`` times a constant, of mean
    zero with the response centred): the terms whose mean over the rows is
    the piece."""
    out = _row_products(y2, [zs[c] for c in u])
    if cross_cov is None or len(u) < 3:
        return out
    letters = string.ascii_letters
    n = len(u)
    # the matchings that leave the same slots free: one constant tensor over
    # the matched slots, times the row's product over the free ones
    groups: dict[tuple[int, ...], np.ndarray] = {}
    for pi in _partial_matchings(list(range(n))):
        free = tuple(c for c in range(n) if c not in {a for p in pi for a in p})
        if not pi or not free:
            continue
        matched = "".join(letters[c] for c in range(n) if c not in free)
        term = (-1.0) ** len(pi) * np.einsum(
            ",".join(letters[a] + letters[b] for a, b in pi) + "->" + matched,
            *[cross_cov[(u[a], u[b])] for a, b in pi])
        groups[free] = groups[free] + term if free in groups else term
    for free, const in groups.items():
        lower = _row_products(y2, [zs[u[c]] for c in free])
        _add_row_outer(out, lower[:, None], np.broadcast_to(const, (len(y2), 1, *const.shape)),
                       free, n)
    return out


def _sketch_contributions(y2: np.ndarray, zs: Sequence[np.ndarray], fac: KBlockFactors,
                          cross_cov: dict[tuple[int, int], np.ndarray] | None,
                          want: Collection[int], at: Sequence[int],
                          out: list[np.ndarray]) -> None:
    """Each row's own term of the sketched K-way piece, written into the
    blocks' rows ``out[k][:, :, at[k]:]`` (``n_k x q s`` each): the sketch is
    linear in the response with the test vectors and cross covariances
    fixed, so the sketch of a part of the rows with the response spread over
    ``r q`` columns (row ``i``'s values in its own ``q``) gives each row's
    term in its own columns."""
    m, q = y2.shape
    tests = fac.tests
    assert tests is not None
    size = tests[0].shape[1]
    full = tuple(range(len(zs)))
    s2 = fac.scales[full]
    per_row = q * size * max(z.shape[1] for z in zs)
    step = max(1, int(np.sqrt(config.CHUNK_FLOATS / 8 / per_row)))
    for start in range(0, m, step):
        sl = slice(start, min(start + step, m))
        r = sl.stop - sl.start
        spread = np.zeros((r, r * q))
        for j in range(q):
            spread[np.arange(r), np.arange(r) * q + j] = y2[sl, j]
        sks = mode_sketches(spread, [z[sl] for z in zs], tests, cross_cov=cross_cov)
        for k in want:
            c = fac.weights[(full, k)]
            n_k = zs[k].shape[1]
            rows = np.moveaxis(sks[k].reshape(n_k, r, q, size), 1, 0).reshape(r, n_k, -1)
            out[k][sl, :, at[k]:at[k] + q * size] = rows * (
                r / np.sqrt(size) * (np.sqrt(c / s2) if s2 > 0 else np.sqrt(c)))


def contribution_grams(y: np.ndarray, zs: Sequence[np.ndarray], fac: KBlockFactors, *,
                       cross_cov: dict[tuple[int, int], np.ndarray] | None,
                       blocks: Collection[int], w: np.ndarray | None = None
                       ) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """For each block of ``blocks``, the rows' own contributions to its
    stacked pieces (:func:`row_contributions`) as their ``m x m`` Gram, the
    rows centred at their (weighted) mean, and their uncentred squared
    norms: the same numbers without the blocks' rows.  Each piece's per-row
    tensor is the same for every block it holds (unfolded along another
    mode: the same entries), so its Gram is formed once and added to each
    of its blocks' Grams with the weight ``c_S / s_S^2``.  The tensor route
    only (``fac.tests`` None)."""
    if fac.tests is not None:
        raise ValueError("contribution_grams: the tensor route only")
    y2 = y[:, None] if y.ndim == 1 else y
    m = y2.shape[0]
    share = np.full(m, 1.0 / m) if w is None else np.asarray(w, float) / np.sum(w)
    want = set(blocks)
    out = {k: (np.zeros((m, m)), np.zeros(m)) for k in want}
    for piece in fac.scales:
        held = want.intersection(piece)
        if not held:
            continue
        t = _piece_contributions(y2, zs, piece, cross_cov).reshape(m, -1)
        raw = np.einsum("ij,ij->i", t, t)
        t -= share @ t
        gram = t @ t.T
        del t
        s2 = fac.scales[piece]
        for k in held:
            c = fac.weights[(piece, k)]
            scale = c / s2 if s2 > 0 else c
            acc, norms = out[k]
            acc += scale * gram
            norms += scale * raw
    return out


def row_contributions(y: np.ndarray, zs: Sequence[np.ndarray], fac: KBlockFactors, *,
                      cross_cov: dict[tuple[int, int], np.ndarray] | None,
                      only: Collection[int] | None = None) -> list[np.ndarray]:
    """Each row's own contribution to every block's stacked pieces
    (:func:`~jdr_stats.core.kestimate.stacked_pieces`, the fit's scales,
    weights and cross covariances held; on the sketched route the K-way
    piece's sketch, the same test vectors), ``m x n_k x D_k`` per block in the
    layout of :func:`joint_influences`: their mean over the rows is ``M_k``
    exactly (with case weights ``w``, ``sum_i w_i c_ik / sum w``, the
    response centred at its weighted mean), so the rank-0 statistic is
    ``|mean_i c_ik|^2``, its
    diagonal part the rows' squared norms and the rest the pairs of rows
    (the self-normalised reference, theory page "K blocks", section 4).  The
    tensor route only; ``only`` as in :func:`joint_influences`."""
    y2 = y[:, None] if y.ndim == 1 else y
    m, q = y2.shape
    widths = [z.shape[1] for z in zs]
    want = set(range(len(zs)) if only is None else only)
    cols = [0] * len(zs)
    sketched = None if fac.tests is None or len(zs) < 3 else tuple(range(len(zs)))
    vectors = 0 if fac.tests is None else int(fac.tests[0].shape[1])
    for piece in fac.scales:
        for k in piece:
            cols[k] += q * (vectors if piece == sketched
                            else int(np.prod([widths[j] for j in piece if j != k])))
    out = [np.empty((m, n, c if k in want else 0))
           for k, (n, c) in enumerate(zip(widths, cols, strict=True))]
    at = [0] * len(zs)
    for piece in fac.scales:
        size = q * int(np.prod([widths[j] for j in piece]))
        if piece == sketched:  # the sketched K-way piece
            _sketch_contributions(y2, zs, fac, cross_cov, want, at, out)
            for k in piece:
                at[k] += q * vectors
            continue
        if not want.isdisjoint(piece):
            step = max(1, config.CHUNK_FLOATS // (8 * size))
            s2 = fac.scales[piece]
            for start in range(0, m, step):
                sl = slice(start, start + step)
                t = _piece_contributions(y2[sl], [z[sl] for z in zs], piece, cross_cov)
                for pos, k in enumerate(piece):
                    if k in want:
                        c = fac.weights[(piece, k)]
                        moved = np.moveaxis(t, pos + 2, 1)
                        out[k][sl, :, at[k]:at[k] + size // widths[k]] = (
                            moved.reshape(moved.shape[0], widths[k], -1)
                            * (np.sqrt(c / s2) if s2 > 0 else np.sqrt(c)))
        for k in piece:
            at[k] += size // widths[k]
    return out


def mapped_influences(psis: Sequence[np.ndarray], zs: Sequence[np.ndarray],
                      mks: Sequence[np.ndarray], amaps: Sequence[np.ndarray],
                      wn: np.ndarray | None = None) -> list[np.ndarray]:
    """Each row's influence on ``G_k = A_k M_k`` (the variable tests'
    pieces in the original variables, ``A_k = C_k^{-T}``) from its influence
    ``psis[k]`` on ``M_k``: ``A_k (psi_ik - E_i,kk M_k / 2)``, the second
    term the map's own estimation (``dC_k = C_k E_i,kk / 2``, the factor's
    symmetric change, module docstring, for the per-block and the joint
    whitening alike)."""
    out = []
    for psi, z, mk, a in zip(psis, zs, mks, amaps, strict=True):
        m = z.shape[0]
        w = np.full(m, 1.0 / m) if wn is None else wn
        cov = (z * w[:, None]).T @ z
        half = 0.5 * (z[:, :, None] * z[:, None, :] - (cov + cov.T) / 2)
        inner = psi - half @ mk
        out.append(np.einsum("jn,ind->ijd", a, inner, optimize=True))
    return out
