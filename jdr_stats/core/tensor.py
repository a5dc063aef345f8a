"""Cross-moment tensors of K whitened blocks: unfoldings, mode Grams, HOSVD.

Rows are the whitened, centred blocks ``z_1 .. z_K`` (``(m, n_k)`` each)
and the centred response ``Y`` (``(m, q)``).  For a set ``S`` of blocks
(a *piece*) the cross moment is the tensor

``P_S = (1/m) sum_i Y_i o z_i,s1 o ... o z_i,sJ``   (shape ``(q, n_s1, ..., n_sJ)``),

the response first, as the two-block ``(q, n1, n2)`` stack.  Its mode
unfolding over block ``k`` has ``n_k`` rows and ``D = q prod_{j in S, j != k}
n_j`` columns, and its Gram matrix needs no tensor:

``P_(k) P_(k)^T = (1/m^2) Z_k^T G Z_k``,
``G = (Y Y^T) * prod_{j in S, j != k} (Z_j Z_j^T)``  (entrywise products, m x m),

so the HOSVD factor of block ``k`` costs ``O(m^2 sum n_j)`` by the Gram
(:func:`mode_gram_rows`) or ``O(m q prod n_j)`` by the tensor
(:func:`cross_tensor`); the two give the same matrix to rounding.

Beyond both, :func:`mode_sketches` applies each unfolding to Khatri-Rao
test vectors, ``T_(k) (w_1 o ... o w_{k-1} o w_{k+1} o ... o w_K) = (1/m)
sum_i Y_i z_ik prod_{j != k} (w_j^T z_ij)``: one pass over the rows, cost
``O(m s sum n_j)`` for ``s`` test vectors, memory independent of ``m``
(row chunks), the Hermite correction of correlated blocks included.
Theory: docs/theory/k_blocks.md.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np

from .. import config

__all__ = [
    "cross_tensor",
    "hermite_corrected",
    "hosvd_factors",
    "mode_gram_rows",
    "mode_gram_tensor",
    "mode_sketches",
    "sketch_row_factor",
    "sketch_tests",
    "unfold",
]


def _as_2d(y: np.ndarray) -> np.ndarray:
    return y[:, None] if y.ndim == 1 else y


def cross_tensor(y: np.ndarray, zs: Sequence[np.ndarray]) -> np.ndarray:
    """``(1/m) sum_i Y_i o z_i1 o ... o z_iJ``, shape ``(q, n_1, ..., n_J)``.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y, zs = rng.normal(size=50), [rng.normal(size=(50, n)) for n in (2, 3)]
    >>> t = cross_tensor(y, zs)
    >>> bool(np.allclose(t[0], zs[0].T @ (y[:, None] * zs[1]) / 50))
    True
    """
    y2 = _as_2d(np.asarray(y, float))
    m, q = y2.shape
    shape = (q, *(z.shape[1] for z in zs))
    if not zs:
        return y2.sum(axis=0) / m
    # the modes split in two groups of balanced size; each row's Khatri-Rao
    # product of either group (a chunk of rows at a time, at most
    # config.CHUNK_FLOATS numbers) and one GEMM of the two
    sizes = [q, *(z.shape[1] for z in zs)]
    cut = 1
    while cut < len(zs) and np.prod(sizes[:cut + 1]) ** 2 <= np.prod(sizes):
        cut += 1
    left_w, right_w = int(np.prod(sizes[:cut])), int(np.prod(sizes[cut:]))
    # the chunk's two products within a core's cache (config.CHUNK_BYTES),
    # but at least min(left_w, right_w) rows, so that each chunk's GEMM
    # (rows x left_w x right_w) outweighs adding its left_w x right_w result
    step = max(1, min(config.CHUNK_FLOATS // max(left_w + right_w, 1),
                      max(config.CHUNK_BYTES // 8 // max(left_w + right_w, 1),
                          min(left_w, right_w))))
    total = np.zeros((left_w, right_w))
    for lo in range(0, m, step):
        left = _row_kron([y2[lo:lo + step], *(z[lo:lo + step] for z in zs[:cut - 1])])
        right = _row_kron([z[lo:lo + step] for z in zs[cut - 1:]])
        total += left.T @ right
    return (total / m).reshape(shape)


def _row_kron(mats: Sequence[np.ndarray]) -> np.ndarray:
    """Each row's Kronecker product of the rows of ``mats`` (the row-wise
    Khatri-Rao product), the first matrix's index slowest."""
    out = mats[0]
    for z in mats[1:]:
        out = (out[:, :, None] * z[:, None, :]).reshape(out.shape[0], -1)
    return out


def unfold(t: np.ndarray, mode: int) -> np.ndarray:
    """Mode-``mode`` unfolding: ``t.shape[mode]`` rows, the other modes'
    entries (in their order) as columns.

    Examples
    --------
    >>> unfold(np.arange(24.0).reshape(2, 3, 4), 1).shape
    (3, 8)
    """
    return np.moveaxis(t, mode, 0).reshape(t.shape[mode], -1)


def mode_gram_tensor(t: np.ndarray, mode: int) -> np.ndarray:
    """``T_(mode) T_(mode)^T`` from the tensor itself."""
    u = unfold(t, mode)
    return u @ u.T


def mode_gram_rows(y: np.ndarray, zs: Sequence[np.ndarray], k: int,
                   row_gram: np.ndarray | None = None) -> np.ndarray:
    """``P_(k) P_(k)^T`` of the piece of the blocks ``zs`` over block ``k``
    (index in ``zs``), by the ``m x m`` Gram (no tensor formed).

    ``row_gram``, when given, is ``G`` itself (the entrywise product of the
    response's and the other blocks' row Gram matrices).
    """
    m = zs[k].shape[0]
    g = piece_row_gram(y, [z for j, z in enumerate(zs) if j != k]) if row_gram is None \
        else row_gram
    zk = zs[k]
    return zk.T @ (g @ zk) / m**2


def piece_row_gram(y: np.ndarray, zs: Sequence[np.ndarray]) -> np.ndarray:
    """``(Y Y^T) * prod_j (Z_j Z_j^T)``: the inner products of the rows'
    ``Y_i o z_i1 o ... o z_iJ`` (``m x m``)."""
    y2 = _as_2d(np.asarray(y, float))
    g = y2 @ y2.T
    for z in zs:
        g *= z @ z.T
    return g


def hosvd_factors(gram: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All left singular vectors (columns, by decreasing singular value) and
    the squared singular values of a matrix whose Gram is ``gram``.

    Signs: each column's entry of largest magnitude positive (the package's
    convention), so the factor is a function of ``gram`` alone.
    """
    evals, vecs = np.linalg.eigh((gram + gram.T) / 2)
    order = np.argsort(evals)[::-1]
    evals, vecs = np.clip(evals[order], 0.0, None), vecs[:, order]
    big = np.argmax(np.abs(vecs), axis=0)
    signs = np.sign(vecs[big, np.arange(vecs.shape[1])])
    signs[signs == 0] = 1.0
    return vecs * signs, evals


def hermite_corrected(y: np.ndarray, zs: Sequence[np.ndarray],
                      cross_cov: dict[tuple[int, int], np.ndarray]) -> np.ndarray:
    """The K-way cross moment with the Hermite corrections of correlated
    blocks: ``E[Y He(z_1, ..., z_K)]``.

    ``cross_cov[(a, b)]`` (``a < b``) is the covariance ``S_ab`` of blocks
    ``a`` and ``b`` (whitened: each block's own covariance the identity).
    For a Gaussian design the multivariate Hermite tensor with one index per
    block is ``sum over partial matchings pi of the blocks of
    (-1)^{|pi|} (o_{(a,b) in pi} S_ab) o (o_{c unmatched} z_c)``, so its
    y-moment subtracts ``S_ab o E[Y o z_c ...]`` for every matched pair
    (the response centred, so complete matchings add ``E[Y] = 0``).
    docs/theory/k_blocks.md, section "Correlated blocks".
    """
    y2 = _as_2d(np.asarray(y, float))
    K = len(zs)
    letters = string.ascii_letters
    if K + 1 > len(letters):
        raise ValueError(f"too many blocks for the Hermite correction: {K}")
    out = cross_tensor(y2, zs)
    target = "Q" + "".join(letters[j] for j in range(K))
    for pi in _partial_matchings(list(range(K))):
        if not pi:
            continue
        free = sorted(set(range(K)) - {a for p in pi for a in p})
        if not free:
            continue  # E[Y] = 0: the response is centred
        lower = cross_tensor(y2, [zs[c] for c in free])
        operands = [lower] + [cross_cov[p] for p in pi]
        subs = ["Q" + "".join(letters[c] for c in free)] + \
            [letters[a] + letters[b] for a, b in pi]
        out = out + (-1) ** len(pi) * np.einsum(",".join(subs) + "->" + target, *operands)
    return out


def _partial_matchings(items: list[int]) -> list[list[tuple[int, int]]]:
    """Every set of disjoint pairs of ``items`` (the empty one included)."""
    if len(items) < 2:
        return [[]]
    first, rest = items[0], items[1:]
    out = list(_partial_matchings(rest))  # first unmatched
    for j, other in enumerate(rest):
        remaining = rest[:j] + rest[j + 1:]
        out += [[(first, other), *pi] for pi in _partial_matchings(remaining)]
    return out


def pieces(K: int, main_effects: bool = False) -> tuple[tuple[int, ...], ...]:
    """The pieces of a K-block design: every pair of blocks, then all K
    together when ``K >= 3`` (for ``K = 2`` the pair is the K-way piece);
    with ``main_effects``, each block alone first (the first moments
    ``E[Y o z_k]``, docs/theory/k_blocks.md, section "Main effects pooled").

    Examples
    --------
    >>> pieces(3)
    ((0, 1), (0, 2), (1, 2), (0, 1, 2))
    >>> pieces(2, main_effects=True)
    ((0,), (1,), (0, 1))
    """
    pairs = tuple(combinations(range(K), 2))
    inter = pairs if K == 2 else (*pairs, tuple(range(K)))
    return (*((k,) for k in range(K)), *inter) if main_effects else inter


def sketch_tests(widths: Sequence[int], size: int, seed: int) -> tuple[np.ndarray, ...]:
    """The test matrices of :func:`mode_sketches`: block ``j``'s ``n_j x size``
    Rademacher signs (entries +-1, so ``E[w w^T] = I`` and every Khatri-Rao
    column has ``E[omega omega^T] = I``), drawn in block order from
    ``numpy.random.default_rng(seed)``: the same widths, size and seed give
    the same matrices, whatever the data.

    Examples
    --------
    >>> w = sketch_tests((2, 3), 4, seed=0)
    >>> [a.shape for a in w], bool(np.all(np.abs(w[1]) == 1))
    ([(2, 4), (3, 4)], True)
    """
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"size must be a positive integer; got {size!r}")
    rng = np.random.default_rng(seed)
    return tuple(rng.choice(np.array([-1.0, 1.0]), size=(int(n), int(size))) for n in widths)


def _perfect_matchings(items: Sequence[int]) -> list[list[tuple[int, int]]]:
    """Every set of disjoint pairs covering ``items`` (one empty set for none)."""
    return [pi for pi in _partial_matchings(list(items)) if 2 * len(pi) == len(items)]


def _even_subsets(items: Sequence[int]) -> list[tuple[int, ...]]:
    """The subsets of ``items`` of even size (the empty one included)."""
    return [c for r in range(0, len(items) + 1, 2) for c in combinations(items, r)]


class _HermiteTerms:
    """The sums over the matchings of a set of blocks of the products of the
    test vectors' cross covariances, ``sum_pi prod_{(a,b) in pi} w_a^T S_ab
    w_b`` (one number per test vector), cached by the set."""

    def __init__(self, tests: Sequence[np.ndarray],
                 cross_cov: dict[tuple[int, int], np.ndarray]) -> None:
        self._pair = {(a, b): np.einsum("at,ab,bt->t", tests[a], s, tests[b])
                      for (a, b), s in cross_cov.items()}
        self._size = tests[0].shape[1]
        self._cache: dict[tuple[int, ...], np.ndarray] = {}

    def pair(self, a: int, b: int) -> np.ndarray:
        """``w_a^T S_ab w_b`` (``a < b``), one number per test vector."""
        return self._pair[(a, b)]

    def matched(self, blocks: tuple[int, ...]) -> np.ndarray:
        if blocks not in self._cache:
            total = np.zeros(self._size)
            for pi in _perfect_matchings(blocks):
                term = np.ones(self._size)
                for a, b in pi:
                    term = term * self._pair[(a, b)]
                total += term
            self._cache[blocks] = total
        return self._cache[blocks]


class _SketchPlan:
    """What every chunk of :func:`mode_sketches` computes with the Hermite
    terms, fixed once per call (sets of blocks as bit masks).

    Block ``k``'s weight is the sum over the partial matchings ``pi`` of
    the other blocks of ``(-1)^{|pi|} prod_{(a,b) in pi} c_ab prod_{j
    unmatched} p_ij`` (``c_ab = w_a^T S_ab w_b`` per test vector, ``p_ij =
    w_j^T z_ij``): ``h(A)`` for ``A`` the other blocks, where, ``j`` the
    last block of ``A``, ``h(A) = p_j h(A - j) - sum_{b in A - j} c_jb
    h(A - j - b)`` (``j`` unmatched, or matched to ``b``), ``h`` of one
    block its ``p`` and of none 1.  ``nodes`` are the sets whose ``h`` the
    ``K`` weights need, each after the sets it reads (fewer passes over a
    chunk's products than summing each weight's ``2^{K-2}`` terms apart:
    about two thirds at ``K = 6``, half at ``K = 8``).  ``free`` are the unmatched sets
    whose row sums the terms matching ``k`` need (:func:`_matched_terms`),
    and ``masks`` every product ``prod_{c in U} p_ic`` these read, each
    from the one without its last block."""

    def __init__(self, K: int, terms: _HermiteTerms) -> None:
        def mask(blocks: Sequence[int]) -> int:
            return sum(1 << j for j in blocks)

        def bits(u: int) -> list[int]:
            return [j for j in range(K) if u >> j & 1]

        self.pair = {(a, b): terms.pair(a, b) for a in range(K) for b in range(a + 1, K)}
        self.nodes: list[int] = []
        seen: set[int] = set()

        def visit(u: int) -> None:
            if u in seen:
                return
            seen.add(u)
            if bin(u).count("1") >= 2:
                top = u.bit_length() - 1
                rest = u & ~(1 << top)
                visit(rest)
                for b in bits(rest):
                    visit(rest & ~(1 << b))
                self.nodes.append(u)

        full = (1 << K) - 1
        self.others = [full & ~(1 << k) for k in range(K)]
        for u in self.others:
            visit(u)
        self.node_slot = {u: i for i, u in enumerate(self.nodes)}
        self.free: list[tuple[int, ...]] = []
        used: set[int] = set()
        for k in range(K):
            others = [j for j in range(K) if j != k]
            for b in others:
                rest = [j for j in others if j != b]
                for comp in _even_subsets(rest):
                    free = tuple(j for j in rest if j not in comp)
                    if free and free not in self.free:
                        self.free.append(free)
                        used.add(mask(free))
        # each product from the one without its highest block: close the set
        todo = sorted(used)
        closed: set[int] = set()
        while todo:
            u = todo.pop()
            if u in closed or u == 0:
                continue
            closed.add(u)
            todo.append(u & ~(1 << (u.bit_length() - 1)))
        self.masks = sorted(closed)  # increasing: each after the one it extends
        self.slot = {u: len(self.nodes) + i for i, u in enumerate(self.masks)}
        self.free_masks = [mask(f) for f in self.free]
        self.size = len(self.nodes) + len(self.masks)  # scratch arrays besides two


def _sketch_chunk(y2: np.ndarray, zs: Sequence[np.ndarray], tests: Sequence[np.ndarray],
                  plan: _SketchPlan | None, buf: np.ndarray
                  ) -> tuple[list[np.ndarray], dict[tuple[int, ...], np.ndarray]]:
    """Sums over one chunk of rows of every mode's sketch (module docstring),
    ``(n_k, q, s)`` each, with the Hermite terms leaving ``k`` unmatched
    (``plan``; None: no Hermite term); and the row sums the terms matching
    ``k`` need (:func:`_matched_terms`).  ``buf``: scratch of at least
    ``(plan.size + 2, rows, s)`` floats (``(2, rows, s)`` without the
    plan), reused across chunks so the chunk's products stay in cache."""
    K = len(zs)
    r, q = y2.shape
    proj = [z @ w for z, w in zip(zs, tests, strict=True)]  # (rows, s): w_j^T z_ij
    out: list[np.ndarray] = [np.empty(0)] * K
    ysums: dict[tuple[int, ...], np.ndarray] = {}
    weight, tmp = buf[0, :r], buf[1, :r]

    def emit(k: int, wk: np.ndarray) -> None:
        rows = np.multiply(wk, y2, out=weight) if q == 1 else \
            (y2[:, :, None] * wk[:, None, :]).reshape(r, -1)
        out[k] = (zs[k].T @ rows).reshape(zs[k].shape[1], q, -1)

    if plan is None:  # prefix and suffix products: 3K products of (rows, s)
        before = [np.ones_like(proj[0])]
        for c in range(K - 1):
            before.append(before[-1] * proj[c])
        after = np.ones_like(proj[0])
        for k in reversed(range(K)):
            np.multiply(before[k], after, out=weight)
            after = after * proj[k]
            emit(k, weight)
        return out, ysums
    h: dict[int, np.ndarray] = {1 << j: proj[j] for j in range(K)}
    for u in plan.nodes:  # h(A) = p_j h(A - j) - sum_b c_jb h(A - j - b)
        top = u.bit_length() - 1
        rest = u & ~(1 << top)
        acc = np.multiply(proj[top], h[rest], out=buf[2 + plan.node_slot[u], :r])
        for b in range(K):
            if rest >> b & 1:
                cjb = plan.pair[(b, top)]
                lower = rest & ~(1 << b)
                if lower == 0:  # h of no block: 1
                    np.subtract(acc, cjb, out=acc)
                else:
                    np.multiply(h[lower], cjb, out=tmp)
                    np.subtract(acc, tmp, out=acc)
        h[u] = acc
    for k in range(K):  # k unmatched: every matching of the others' blocks it leaves out
        emit(k, h[plan.others[k]])
    prods: dict[int, np.ndarray] = {}
    for u in plan.masks:  # prod_{c in U} w_c^T z_ic, blocks multiplied in order
        top = u.bit_length() - 1
        rest = u & ~(1 << top)
        if rest == 0:
            prods[u] = proj[top]
        else:
            prods[u] = np.multiply(prods[rest], proj[top], out=buf[2 + plan.slot[u], :r])
    for free, u in zip(plan.free, plan.free_masks, strict=True):
        ysums[free] = y2.T @ prods[u]  # (q, s): the row sums the matched terms of k need
    return out, ysums


def _matched_terms(ysums: dict[tuple[int, ...], np.ndarray], tests: Sequence[np.ndarray],
                   cross_cov: dict[tuple[int, int], np.ndarray],
                   terms: _HermiteTerms) -> list[np.ndarray]:
    """The Hermite terms matching block ``k`` with another block ``b``:
    ``(-1)^|pi| (S_kb w_b) prod_{other pairs} (w^T S w)`` times the row sums
    ``ysums[free]`` of ``Y prod_{c free} w_c^T z_c``, ``(n_k, q, s)`` each."""
    K = len(tests)
    out = []
    for k in range(K):
        acc: Any = 0.0
        for b in (j for j in range(K) if j != k):
            skb = cross_cov[(k, b)] if k < b else cross_cov[(b, k)].T
            left = skb @ tests[b]  # (n_k, s)
            rest = [j for j in range(K) if j not in (k, b)]
            inner: Any = 0.0
            for comp in _even_subsets(rest):
                free = tuple(j for j in rest if j not in comp)
                if not free:
                    continue  # E[Y] = 0: the response is centred
                sign = 1.0 if len(comp) % 4 == 2 else -1.0  # (-1)^(1 + |comp|/2)
                coef = sign * terms.matched(comp)
                inner = inner + coef * ysums[free]  # (q, s)
            acc = acc + left[:, None, :] * np.asarray(inner)[None, :, :]
        out.append(np.asarray(acc))
    return out


def mode_sketches(y: np.ndarray, zs: Sequence[np.ndarray], tests: Sequence[np.ndarray], *,
                  cross_cov: dict[tuple[int, int], np.ndarray] | None = None,
                  chunk_rows: int | None = None) -> list[np.ndarray]:
    """Every mode unfolding of the K-way moment applied to Khatri-Rao test
    vectors: block ``k``'s ``(n_k, q, s)`` array ``T_(k) (I_q o Omega_k)``,
    column ``t`` of ``Omega_k`` the Kronecker product of the other blocks'
    ``tests[j][:, t]`` (the response mode kept whole).

    Parameters
    ----------
    y : ndarray (m,) or (m, q)
        The centred response (case weights folded in, as
        :func:`~jdr_stats.core.kestimate.block_factors` does).
    zs : list of ndarray (m, n_k)
        The whitened, centred blocks.
    tests : list of ndarray (n_k, s)
        The test matrices (:func:`sketch_tests`).
    cross_cov : dict, optional
        The blocks' cross covariances ``S_ab`` (``a < b``) of a joint
        whitening: the sketch is then the Hermite-corrected moment's
        (:func:`hermite_corrected`).
    chunk_rows : int, optional
        Rows per chunk of the pass (default: the chunk's products of the
        blocks' projections within ``config.CHUNK_BYTES``, a core's
        cache, at least ``config.SKETCH_MIN_CHUNK_ROWS`` rows: memory
        ``O(chunk_rows s)``, not ``O(m)``); the result does not depend on
        it (up to the order of summation).

    Notes
    -----
    ``T_(k) omega_t = (1/m) sum_i Y_i z_ik prod_{j != k} (w_jt^T z_ij)``.
    The Hermite term of a partial matching ``pi`` contracts to, with ``k``
    unmatched, ``(-1)^|pi| prod_{(a,b) in pi} (w_a^T S_ab w_b)`` times the
    same sum over the unmatched blocks, and with ``k`` matched to ``b``,
    ``(-1)^|pi| (S_kb w_b) prod_{other pairs} (w^T S w)`` times
    ``(1/m) sum_i Y_i prod_{c unmatched} (w_c^T z_ic)``: every term a sum over
    rows once ``S`` is fixed.  With a complete set of test vectors
    (``Omega_k Omega_k^T = s I``) ``Y_k Y_k^T / s`` is the mode Gram exactly;
    with Rademacher tests it is its unbiased estimate.  Theory:
    docs/theory/k_blocks.md, section "Computation".

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> y, zs = rng.normal(size=30), [rng.normal(size=(30, n)) for n in (2, 3, 2)]
    >>> w = sketch_tests((2, 3, 2), 5, seed=1)
    >>> sk = mode_sketches(y, zs, w)
    >>> t = cross_tensor(y, zs)[0]
    >>> bool(np.allclose(sk[0][:, 0, 2], np.einsum("abc,b,c->a", t, w[1][:, 2], w[2][:, 2])))
    True
    """
    y2 = _as_2d(np.asarray(y, float))
    m, q = y2.shape
    K = len(zs)
    if len(tests) != K:
        raise ValueError(f"tests: need one test matrix per block ({K}); got {len(tests)}")
    size = tests[0].shape[1]
    for j, (z, w) in enumerate(zip(zs, tests, strict=True)):
        if w.ndim != 2 or w.shape != (z.shape[1], size):
            raise ValueError(f"tests[{j}] must have shape {(z.shape[1], size)}; "
                             f"got {w.shape}")
    terms = None if cross_cov is None or K < 3 else _HermiteTerms(tests, cross_cov)
    plan = None if terms is None else _SketchPlan(K, terms)
    held = size * (plan.size + 2 if plan is not None else K + 3) + size * q
    if chunk_rows is None:  # the chunk's products within a cache-sized budget
        chunk_rows = max(config.SKETCH_MIN_CHUNK_ROWS, config.CHUNK_BYTES // 8 // held)
    if isinstance(chunk_rows, bool) or not isinstance(chunk_rows, (int, np.integer)) \
            or chunk_rows < 1:
        raise ValueError(f"chunk_rows must be a positive integer; got {chunk_rows!r}")
    step = int(min(chunk_rows, max(m, 1)))
    buf = np.empty((plan.size + 2 if plan is not None else 2, step, size))
    total = [np.zeros((z.shape[1], q, size)) for z in zs]
    ysums: dict[tuple[int, ...], np.ndarray] = {}
    for lo in range(0, m, step):
        sl = slice(lo, lo + step)
        part, sums = _sketch_chunk(y2[sl], [z[sl] for z in zs], tests, plan, buf)
        for k in range(K):
            total[k] += part[k]
        for key, val in sums.items():
            ysums[key] = ysums[key] + val if key in ysums else val
    if terms is not None and cross_cov is not None:
        for k, extra in enumerate(_matched_terms(ysums, tests, cross_cov, terms)):
            total[k] = total[k] + extra
    return [t / m for t in total]


def sketch_row_factor(zs: Sequence[np.ndarray], tests: Sequence[np.ndarray],
                      k: int) -> np.ndarray:
    """``prod_{j != k} Z_j W_j / sqrt(s)`` (``m x s``): row ``i``'s sketched
    contribution to the other modes, ``Omega_k^T (o_{j != k} z_ij) / sqrt(s)``,
    whose inner products estimate the row Gram ``prod_{j != k} Z_j Z_j^T`` of
    :func:`piece_row_gram` (per-block whitening: no Hermite term)."""
    size = tests[0].shape[1]
    out = np.ones((zs[0].shape[0], size))
    for j, (z, w) in enumerate(zip(zs, tests, strict=True)):
        if j != k:
            out *= z @ w
    return out / np.sqrt(size)
