"""Invariances as properties (hypothesis).

Rescaling (any nonzero factor, both signs) and shifting the columns of a
block, permuting the columns within a block, and permuting the rows leave
every reported conclusion unchanged to rounding: singular values, the
p-values of every rank test, the rank of ``fit("auto")``, the bootstrap's
angles and bounds (same seed; measured in each block's covariance metric),
the per-SD loadings (up to sign) and the reduced features (up to scale).
The response may be shifted and rescaled as well (singular values scale
with it).

Tolerances: the transformed data are the same numbers up to a diagonal
scaling whose condition number is at most 1e6, so the results agree to
about 1e-16 * 1e6 relative; the tests use 1e-7, as an absolute tolerance
scaled by the largest value where a quantity can be near zero (singular
values, p-values).

Row permutations are not applied to the bootstrap: a resample is a vector
of counts per row position, so permuting the rows with the same seed draws
other resamples (the bootstrap is invariant in distribution only).  The
sparse supports and ``select_support`` are tested by the support module.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jdr_stats as jdr
from jdr_stats.exceptions import JDRWarning

from .strategies import column_recoding

pytestmark = pytest.mark.filterwarnings("ignore::jdr_stats.exceptions.JDRWarning")

RANK_METHODS = ("robust", "chi2", "wald", "general")
TOL = 1e-7
SETTINGS = settings(max_examples=4, derandomize=True, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.too_slow,
                                           HealthCheck.function_scoped_fixture])


def _simulated():
    sim = jdr.simulate.bilinear(400, 4, 3, 2, design="t5", seed=11)
    return sim.y, sim.a, sim.b


def _diabetes():
    datasets = pytest.importorskip("sklearn.datasets")
    d = datasets.load_diabetes(scaled=False, as_frame=True).frame
    return (d["target"].to_numpy(), d[["age", "sex", "bmi", "bp"]].to_numpy(),
            d[["s1", "s2", "s3", "s4", "s5", "s6"]].to_numpy())


DATA = {"simulated": _simulated, "diabetes": _diabetes}


@st.composite
def recodings(draw, n1: int, n2: int, m: int):
    """Per-column scale (10^[-3, 3], either sign) and shift, a permutation of
    each block's columns, of the rows, and a shift and scale of y."""
    def block(n):
        return column_recoding(draw, n)

    rows = draw(st.permutations(range(m)))
    y_scale = 10.0 ** draw(st.floats(-2, 2))
    y_shift = draw(st.floats(-1e3, 1e3))
    return block(n1), block(n2), list(rows), (y_scale, y_shift)


def _apply(data, rec, *, rows: bool = True):
    y, a, b = data
    (sa, ha, pa), (sb, hb, pb), perm, (cy, hy) = rec
    a2 = (a * sa + ha)[:, pa]
    b2 = (b * sb + hb)[:, pb]
    y2 = y * cy + hy
    if rows:
        return y2[perm], a2[perm], b2[perm]
    return y2, a2, b2


def _fit(data, rank):
    return jdr.JointDimReduction(*data).fit(rank)


def _check_fit(data, rec, rank=2):
    base = _fit(data, rank)
    new_data = _apply(data, rec)
    new = _fit(new_data, rank)
    cy = rec[3][0]
    s0 = base.singular_values
    np.testing.assert_allclose(new.singular_values / cy, s0, rtol=0, atol=TOL * s0[0])
    # per-SD loadings: the same variables, up to the sign of each column
    (sa, _, pa), (sb, _, pb) = rec[0], rec[1]
    for load0, load1, perm, scale in ((base.loadings_a, new.loadings_a, pa, sa),
                                      (base.loadings_b, new.loadings_b, pb, sb)):
        back = np.empty_like(load1)
        back[perm] = load1  # new column j is old column perm[j]
        back = back * np.sign(scale)[:, None]
        signs = np.sign(np.sum(back * load0, axis=0))
        np.testing.assert_allclose(back * signs, load0, atol=1e-6)
    # reduced features up to scale (rows in the new order)
    f0 = base.transform()[rec[2]]
    f1 = new.transform()
    for k in range(f0.shape[1]):
        c = np.corrcoef(f0[:, k], f1[:, k])[0, 1]
        assert abs(abs(c) - 1.0) < 1e-8, (k, c)
    return base, new, new_data


@pytest.mark.parametrize("name", list(DATA))
def test_fit_rank_tests_and_auto_rank_are_invariant(name):
    data = DATA[name]()
    m, n1, n2 = data[1].shape[0], data[1].shape[1], data[2].shape[1]

    @SETTINGS
    @given(rec=recodings(n1, n2, m))
    def check(rec):
        base, new, new_data = _check_fit(data, rec)
        for method in RANK_METHODS:
            p0 = base.rank_tests(method).table["pvalue"].to_numpy()
            p1 = new.rank_tests(method).table["pvalue"].to_numpy()
            np.testing.assert_allclose(p1, p0, rtol=0, atol=TOL, err_msg=method)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", JDRWarning)
            r0 = jdr.JointDimReduction(*data).fit("auto").rank
            r1 = jdr.JointDimReduction(*new_data).fit("auto").rank
        assert r0 == r1

    check()


@pytest.mark.parametrize("name", list(DATA))
def test_bootstrap_angles_and_bounds_are_invariant_to_column_recodings(name):
    data = DATA[name]()
    m, n1, n2 = data[1].shape[0], data[1].shape[1], data[2].shape[1]
    base = _fit(data, 1).bootstrap(n_boot=49, seed=3)

    @settings(max_examples=3, derandomize=True, deadline=None, database=None)
    @given(rec=recodings(n1, n2, m))
    def check(rec):
        new = _fit(_apply(data, rec, rows=False), 1).bootstrap(n_boot=49, seed=3)
        # the replicates' cross sums are single precision (1e-5 relative, see
        # test_bootstrap): 1e-5 of the largest possible angle, 90 degrees
        tol = 1e-5 * 90
        np.testing.assert_allclose(new.angles_a, base.angles_a, rtol=0, atol=tol)
        np.testing.assert_allclose(new.angles_b, base.angles_b, rtol=0, atol=tol)
        np.testing.assert_allclose(new.max_angle_bound(), base.max_angle_bound(),
                                   rtol=0, atol=tol)

    check()


def test_raw_unit_angles_would_not_be_invariant():
    """The property above fails for the old definition (angles in raw units):
    the metric is what makes the bound unit-free."""
    from jdr_stats.core._linalg import principal_angles

    y, a, b = _diabetes()
    res0 = _fit((y, a, b), 1)
    scale = np.array([1.0, 100.0, 0.01, 1.0])
    res1 = _fit((y, a * scale, b), 1)
    u_true = np.array([[1.0], [1.0], [1.0], [1.0]])  # any fixed direction of a
    raw0 = principal_angles(u_true, res0.estimate.dir_a)
    raw1 = principal_angles(u_true / scale[:, None], res1.estimate.dir_a)
    assert abs(raw0[0] - raw1[0]) > 1e-2


def test_default_rank_tests_at_width_are_invariant_to_column_recodings():
    """At n1 n2 / m >= 20 the default is the combined test (robust and spectral):
    rescaling, shifting and reordering the columns leave its table unchanged
    to rounding (the sign flips and halves are drawn by row index, the
    whitened rows only rotate), and fit("auto") chooses the same rank.  Rows
    are not permuted: that draws other flips (invariance in distribution)."""
    sim = jdr.simulate.bilinear(75, 40, 40, 1, design="t5", seed=3)
    data = (sim.y, sim.a, sim.b)

    @settings(max_examples=3, derandomize=True, deadline=None, database=None)
    @given(rec=recodings(40, 40, 75))
    def check(rec):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", JDRWarning)
            # 75 rows for 40 + 40 columns: the per-block estimator (the joint
            # one's tests need n1 + n2 + 2 rows)
            new = _apply(data, rec, rows=False)
            t0 = jdr.JointDimReduction(*data).fit(1, independent_blocks=True).rank_tests(
                max_rank=3, seed=5)
            t1 = jdr.JointDimReduction(*new).fit(1, independent_blocks=True).rank_tests(
                max_rank=3, seed=5)
            r0 = jdr.JointDimReduction(*data).fit("auto", seed=5, independent_blocks=True).rank
            r1 = jdr.JointDimReduction(*new).fit("auto", seed=5, independent_blocks=True).rank
        assert t0.method == t1.method == "combined"
        for col in ("pvalue", "pvalue_robust", "pvalue_spectral", "n_flips"):
            np.testing.assert_allclose(t1.table[col], t0.table[col], rtol=0, atol=TOL,
                                       err_msg=col)
        s0 = t0.table["spectral_statistic"].to_numpy()
        np.testing.assert_allclose(t1.table["spectral_statistic"], s0, rtol=0, atol=TOL * s0[0])
        assert r0 == r1

    check()


def test_default_rank_tests_of_q_columns_at_width_are_invariant():
    """A response of q = 3 columns at q n1 n2 / m >= 20: the default is the
    combined test (theory 6g); rescaling, shifting and reordering the
    columns of the blocks and of the response (Yw then turns by an
    orthogonal matrix, which the unfoldings' norms do not see) leave its
    table unchanged to rounding."""
    rng = np.random.default_rng(4)
    m, n = 520, 60  # q n1 n2 / m = 20.8
    a, b = rng.standard_t(5, (m, n)), rng.standard_t(5, (m, n))
    y = rng.standard_normal((m, 3))
    y[:, 0] += 4 * a[:, 0] * b[:, 0]
    y[:, 1] += 2 * a[:, 1] * b[:, 1]
    data = (y, a, b)

    @settings(max_examples=3, derandomize=True, deadline=None, database=None,
              suppress_health_check=[HealthCheck.large_base_example, HealthCheck.too_slow])
    @given(rec=recodings(n, n, m), order=st.permutations(range(3)),
           scales=st.lists(st.floats(-3, 3), min_size=3, max_size=3))
    def check(rec, order, scales):
        y2, a2, b2 = _apply(data, rec, rows=False)
        y2 = (y * 10.0 ** np.array(scales) + rec[3][1])[:, list(order)]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", JDRWarning)
            t0 = jdr.JointDimReduction(*data).fit(1).rank_tests(max_rank=2, seed=5)
            t1 = jdr.JointDimReduction(y2, a2, b2).fit(1).rank_tests(max_rank=2, seed=5)
        assert t0.method == t1.method == "combined"
        assert t0.table["n_flips"].gt(0).sum() >= 2  # the spectral test ran
        for col in ("pvalue", "pvalue_robust", "pvalue_spectral", "n_flips"):
            np.testing.assert_allclose(t1.table[col], t0.table[col], rtol=0, atol=TOL,
                                       err_msg=col)
        for col in ("statistic", "spectral_statistic"):
            s0 = t0.table[col].to_numpy()
            np.testing.assert_allclose(t1.table[col], s0, rtol=0, atol=TOL * s0[0], err_msg=col)

    check()


def test_premises_of_a_small_sample_are_invariant_to_recodings():
    """The premises table of a small sample (m < n1 n2; the largest-root test
    of independent blocks) does not change when columns are rescaled,
    shifted or reordered, rows reordered or y recoded: canonical
    correlations, condition numbers and the test's p-value."""
    rng = np.random.default_rng(7)
    m, n1, n2 = 60, 10, 12
    z = rng.standard_normal(m)
    a, b = rng.standard_normal((m, n1)), rng.standard_normal((m, n2))
    a[:, 0] += 2 * z  # a shared factor: population canonical correlation 0.8
    b[:, 3] += 2 * z
    data = (a[:, 1] * b[:, 1] + rng.standard_normal(m), a, b)

    def premises(d):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", JDRWarning)
            return jdr.JointDimReduction(*d).fit(1).diagnostics

    base = premises(data)
    assert base.independence_test == "largest-root" and base.independence_pvalue < 0.05

    @SETTINGS
    @given(rec=recodings(n1, n2, m))
    def check(rec):
        new = premises(_apply(data, rec))
        np.testing.assert_allclose(new.cross_correlations, base.cross_correlations,
                                   rtol=0, atol=1e-9)
        np.testing.assert_allclose(new.independence_pvalue, base.independence_pvalue,
                                   rtol=1e-6, atol=1e-12)
        assert list(new.table["ok"]) == list(base.table["ok"])

    check()


@pytest.mark.parametrize("estimator", ["joint", "per-block"])
def test_kblock_variable_and_rank_tests_are_invariant_to_column_recodings(estimator):
    """Three skewed blocks correlated through a Gamma factor: rescaling,
    shifting and reordering each block's columns and permuting the rows
    leave every p-value of drop1() (both parts of the combined test), of a
    group's test and of the rank tests unchanged to rounding, on the
    analytic influences and, with non-integer case weights, on the rank
    tests' delete-one refits (the whitening turned to the fit's, not the
    order-dependent Cholesky rotation)."""
    m, n = 240, 3
    rng = np.random.default_rng(4)
    f = rng.gamma(2.0, size=(m, 1))
    x = [rng.standard_t(5, size=(m, n)) + 0.7 * f for _ in range(3)]
    y = x[0][:, 0] * x[1][:, 1] + 0.5 * x[2][:, 2] * x[0][:, 0] + rng.normal(size=m)
    w = rng.uniform(0.5, 2.0, size=m)
    indep = estimator == "per-block"

    def tables(y, x, w, labels):
        blocks = {f"b{k}": pd.DataFrame(b, columns=lab) for k, (b, lab)
                  in enumerate(zip(x, labels, strict=True))}
        r = jdr.JointDimReduction.from_blocks(y, blocks).fit(1, independent_blocks=indep)
        d = r.drop1().table.sort_index()
        g = r.test_variables({"b0": ["v00", "v01"], "b1": ["v12"]})
        rt = r.rank_tests().table["pvalue"].to_numpy()
        rw = (jdr.JointDimReduction.from_blocks(y, blocks, weights=w)
              .fit(1, independent_blocks=indep).rank_tests().table["pvalue"].to_numpy())
        return d, g.pvalue, rt, rw

    names = [[f"v{k}{j}" for j in range(n)] for k in range(3)]
    base = tables(y, x, w, names)

    @settings(max_examples=3, derandomize=True, deadline=None, database=None)
    @given(draws=st.data())
    def check(draws):
        recs = [column_recoding(draws.draw, n) for _ in range(3)]
        rows = draws.draw(st.permutations(range(m)))
        x2 = [(b * s + h)[:, p][rows] for b, (s, h, p) in zip(x, recs, strict=True)]
        lab2 = [[names[k][j] for j in p] for k, (_, _, p) in enumerate(recs)]
        got = tables(y[rows] * 3.0 - 2.0, x2, w[rows], lab2)
        for col in ("pvalue", "pvalue_conditional", "pvalue_marginal", "qvalue"):
            np.testing.assert_allclose(got[0][col], base[0][col], rtol=0, atol=TOL,
                                       err_msg=col)
        assert abs(got[1] - base[1]) < TOL
        np.testing.assert_allclose(got[2], base[2], rtol=0, atol=TOL)
        np.testing.assert_allclose(got[3], base[3], rtol=0, atol=TOL)

    check()
