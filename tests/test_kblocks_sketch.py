"""The K-way piece by its Khatri-Rao sketch: the sketched products against
their definition (the Hermite correction included), the sketched route of
the fit against the exact tensor route with a complete set of test vectors
(directions, eigenvalues and rank tests, both estimators), independence of
the row chunks, the seed, and the unbiasedness of the sketched mode Gram."""

import itertools

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats import policy
from jdr_stats.fitting import _kfit
from jdr_stats.core._linalg import principal_angles
from jdr_stats.core.kestimate import block_factors, stacked_pieces
from jdr_stats.core.tensor import (
    cross_tensor,
    hermite_corrected,
    mode_sketches,
    sketch_tests,
    unfold,
)

SHAPES = [(2, 3, 2), (2, 2, 3, 2), (2, 2, 2, 2, 2)]  # K = 3, 4, 5


def complete_tests(widths):
    """Test vectors enumerating every index of every block, scaled so that
    each mode's Khatri-Rao vectors have ``Omega_k Omega_k^T = s I``."""
    idx = list(itertools.product(*(range(n) for n in widths)))
    out = []
    for j, n in enumerate(widths):
        w = np.zeros((n, len(idx)))
        for t, ix in enumerate(idx):
            w[ix[j], t] = np.sqrt(n)
        out.append(w)
    return out


def _rows(m, widths, q=1, seed=0, correlated=False):
    rng = np.random.default_rng(seed)
    y = rng.normal(size=(m, q)) if q > 1 else rng.normal(size=m)
    zs = [rng.normal(size=(m, n)) for n in widths]
    if correlated:
        zs = [z + 0.5 * zs[0][:, :1] for z in zs]
    y = y - y.mean(axis=0)
    zs = [z - z.mean(axis=0) for z in zs]
    cc = None
    if correlated:
        rng2 = np.random.default_rng(seed + 1)
        cc = {(a, b): 0.3 * rng2.normal(size=(widths[a], widths[b]))
              for a, b in itertools.combinations(range(len(widths)), 2)}
    return y, zs, cc


@pytest.mark.parametrize("widths", SHAPES)
@pytest.mark.parametrize("q", [1, 2])
@pytest.mark.parametrize("correlated", [False, True])
def test_complete_sketch_gives_the_mode_grams_exactly(widths, q, correlated):
    y, zs, cc = _rows(40, widths, q, seed=1, correlated=correlated)
    t = hermite_corrected(y, zs, cc) if cc else cross_tensor(y, zs)
    tests = complete_tests(widths)
    s = tests[0].shape[1]
    for k, sk in enumerate(mode_sketches(y, zs, tests, cross_cov=cc, chunk_rows=7)):
        u = unfold(t, k + 1)
        y_k = sk.reshape(widths[k], -1)
        np.testing.assert_allclose(y_k @ y_k.T / s, u @ u.T, rtol=1e-11,
                                   atol=1e-13 * np.abs(u @ u.T).max())


@pytest.mark.parametrize("correlated", [False, True])
@pytest.mark.parametrize("widths", [(3, 2, 4, 2), (2, 3, 2, 2, 3), (2, 2, 3, 2, 2, 2)])
def test_sketch_is_the_unfolding_times_the_kronecker_vectors(correlated, widths):
    # K = 5, 6: the Hermite terms' recursion over sets of blocks three deep
    K = len(widths)
    y, zs, cc = _rows(30, widths, 2, seed=2, correlated=correlated)
    t = hermite_corrected(y, zs, cc) if cc else cross_tensor(y, zs)
    tests = sketch_tests(widths, 5, seed=3)
    sk = mode_sketches(y, zs, tests, cross_cov=cc)
    for k in range(K):
        for col in range(5):
            omega = np.ones(1)
            for j in range(K):
                if j != k:
                    omega = np.kron(omega, tests[j][:, col])
            want = unfold(t, k + 1).reshape(widths[k], 2, -1) @ omega
            np.testing.assert_allclose(sk[k][:, :, col], want, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("correlated", [False, True])
def test_sketch_does_not_depend_on_the_chunks(correlated):
    widths = (4, 3, 5)
    y, zs, cc = _rows(103, widths, seed=4, correlated=correlated)
    tests = sketch_tests(widths, 9, seed=5)
    ref = mode_sketches(y, zs, tests, cross_cov=cc, chunk_rows=103)
    for chunk in (1, 10, 64):
        for a, b in zip(ref, mode_sketches(y, zs, tests, cross_cov=cc, chunk_rows=chunk)):
            np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-15)


def test_sketch_tests_are_seeded_and_checked():
    a, b = sketch_tests((3, 4), 6, seed=7), sketch_tests((3, 4), 6, seed=7)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], sketch_tests((3, 4), 6, seed=8)[0])
    with pytest.raises(ValueError, match="size"):
        sketch_tests((3, 4), 0, seed=7)
    y, zs, _ = _rows(10, (2, 2, 2))
    with pytest.raises(ValueError, match=r"tests\[1\]"):
        mode_sketches(y, zs, [np.ones((2, 3)), np.ones((3, 3)), np.ones((2, 3))])
    with pytest.raises(ValueError, match="chunk_rows"):
        mode_sketches(y, zs, sketch_tests((2, 2, 2), 3, seed=0), chunk_rows=0)


def test_sketched_mode_gram_is_unbiased_over_the_test_vectors():
    """Mean of ``Y_k Y_k^T / s`` over independent seeds against the exact mode
    Gram: within 4 Monte Carlo standard errors entrywise, and the exact Gram
    outside 4 SE of the diagonal-free guess (the test can fail)."""
    widths = (3, 4, 3)
    y, zs, _ = _rows(60, widths, seed=9)
    u = unfold(cross_tensor(y, zs), 1)
    exact = u @ u.T
    draws = []
    for seed in range(400):
        y_k = mode_sketches(y, zs, sketch_tests(widths, 4, seed=seed))[0].reshape(3, -1)
        draws.append(y_k @ y_k.T / 4)
    draws = np.array(draws)
    mean, se = draws.mean(axis=0), draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    assert np.all(np.abs(mean - exact) < 4 * se + 1e-15)
    assert np.any(np.abs(mean - np.diag(np.diag(exact))) > 4 * se)


@pytest.mark.parametrize("widths", SHAPES)
@pytest.mark.parametrize("correlated", [False, True])
@pytest.mark.parametrize("weighted", [False, True])
def test_complete_sketched_route_equals_the_tensor_route(widths, correlated, weighted):
    y, zs, cc = _rows(50, widths, seed=10, correlated=correlated)
    w = np.random.default_rng(11).uniform(0.5, 2, size=50) if weighted else None
    exact = block_factors(y, zs, route="tensor", cross_cov=cc, w=w)
    sk = block_factors(y, zs, route="sketch", cross_cov=cc, w=w,
                       tests=complete_tests(widths))
    for k in range(len(widths)):
        np.testing.assert_allclose(sk.values[k], exact.values[k], rtol=1e-8)
        for r in range(1, widths[k]):  # every leading subspace with a gap
            if exact.values[k][r - 1] > exact.values[k][r] * (1 + 1e-6):
                ang = principal_angles(sk.factors[k][:, :r], exact.factors[k][:, :r])
                assert np.degrees(np.max(ang, initial=0.0)) < 1e-6  # rank 0: no angle
    for a, b in zip(stacked_pieces(y, zs, sk, cross_cov=cc, w=w),
                    stacked_pieces(y, zs, exact, cross_cov=cc, w=w)):
        np.testing.assert_allclose(a @ a.T, b @ b.T, rtol=1e-9, atol=1e-12)


def test_stacked_sketched_pieces_give_the_combined_grams():
    widths = (3, 4, 3, 2)
    y, zs, _ = _rows(80, widths, seed=12)
    fac = block_factors(y, zs, route="sketch", tests=sketch_tests(widths, 7, seed=0))
    for k, mk in enumerate(stacked_pieces(y, zs, fac)):
        np.testing.assert_allclose(np.sort(np.linalg.eigvalsh(mk @ mk.T))[::-1],
                                   fac.values[k], rtol=1e-9, atol=1e-12)


def _sim(m, widths, seed):
    rng = np.random.default_rng(seed)
    xs = {f"x{k}": rng.normal(size=(m, n)) for k, n in enumerate(widths)}
    first = [x[:, 0] for x in xs.values()]
    y = 3 * np.prod(first, axis=0) + first[0] * first[1] + rng.normal(size=m)
    return y, xs


@pytest.mark.parametrize("widths", SHAPES)
@pytest.mark.parametrize("independent", [True, False])
@pytest.mark.filterwarnings("ignore::jdr_stats.exceptions.RankSelectionWarning")
def test_fit_on_the_complete_sketch_equals_the_tensor_fit(monkeypatch, widths, independent):
    """The whole fit, with rank="auto" (analytic or jackknife rank tests), is
    the tensor route's when the sketch's test vectors are complete: the
    route enters the tests only through the K-way piece's rows."""
    y, xs = _sim(120, widths, seed=13)
    model = jdr.JointDimReduction.from_blocks(y, xs)
    real_influence = policy.kblock_influence
    if not independent:  # the joint tensor route's analytic rows; the sketch's refits
        monkeypatch.setattr(policy, "kblock_influence",
                            lambda *args, **kw: policy.Choice("jackknife", "forced", {}))
    exact = model.fit("auto", independent_blocks=independent)
    exact_tests = exact.rank_tests().tables
    monkeypatch.setattr(policy, "kblock_influence", real_influence)
    assert exact.settings["route"]["name"] == "tensor"
    real_route = policy.kblock_route

    def sketched(nobs, w, q=1):
        c = real_route(nobs, w, q)
        return policy.Choice("sketch", "forced", {**c.inputs, "vectors": 1.0, "seed": 0.0})

    monkeypatch.setattr(policy, "kblock_route", sketched)
    monkeypatch.setattr(_kfit, "_route_tests", lambda route, w: complete_tests(w))
    sk = model.fit("auto", independent_blocks=independent)
    assert sk.settings["route"]["name"] == "sketch"
    assert sk.settings["estimator"] == exact.settings["estimator"]
    assert sk.rank == exact.rank
    for n in xs:
        np.testing.assert_allclose(sk.eigenvalues[n], exact.eigenvalues[n], rtol=1e-8)
        ang = principal_angles(sk.directions[n].to_numpy(), exact.directions[n].to_numpy())
        assert np.degrees(np.max(ang, initial=0.0)) < 1e-6  # rank 0: no angle
        a, b = sk.rank_tests().tables[n], exact_tests[n]
        np.testing.assert_allclose(a.to_numpy(float), b.to_numpy(float), rtol=1e-7)


def test_sketched_fit_beyond_the_tensor_budget_is_seeded_and_finds_the_link(monkeypatch):
    """Widths whose tensor exceeds KBLOCK_TENSOR_MAX_ENTRIES (lowered here to
    keep the test small) and rows beyond the old m x m route: the sketched
    route runs, gives the same numbers twice, and recovers every block's
    direction of a strong three-way link."""
    monkeypatch.setattr(policy, "KBLOCK_TENSOR_MAX_ENTRIES", 200_000)
    widths = (60, 60, 60)
    y, xs = _sim(8000, widths, seed=14)
    model = jdr.JointDimReduction.from_blocks(y, xs)
    a = model.fit(1, independent_blocks=True)
    b = model.fit(1, independent_blocks=True)
    assert a.settings["route"]["name"] == "sketch"
    assert a.settings["route"]["inputs"]["vectors"] == 180
    for n in xs:
        np.testing.assert_array_equal(a.directions[n].to_numpy(), b.directions[n].to_numpy())
        e0 = np.eye(60)[:, :1]
        assert np.degrees(principal_angles(a.whitened_bases[n], e0).max()) < 60
        raw = a.directions[n].to_numpy()[:, 0]
        assert np.argmax(np.abs(raw)) == 0


def test_route_reads_the_shape_only():
    assert policy.kblock_route(100, (500, 500)).name == "tensor"  # two blocks: the pair
    small = policy.kblock_route(10**6, (10, 10, 10))
    wide = policy.kblock_route(10, (60, 60, 60, 30))
    assert small.name == "tensor" and wide.name == "sketch"
    assert wide.inputs["vectors"] == max(policy.KBLOCK_SKETCH_MIN_VECTORS, 210)
    assert wide.inputs["seed"] == policy.KBLOCK_SKETCH_SEED
    # the tensor's cost m prod n_k bounds the tensor route too
    assert policy.kblock_route(20_000, (100, 100, 100)).name == "tensor"
    assert policy.kblock_route(10**5, (100, 100, 100)).name == "sketch"
    many = policy.kblock_route(10**7, (60, 60, 60, 30))  # no bound on the rows
    assert many.name == "sketch" and many.inputs["vectors"] == wide.inputs["vectors"]
