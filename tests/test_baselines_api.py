"""SIR, pHd and SAVE: interface, input errors, weights, slicing edge cases."""

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from jdr_stats.baselines import PHD, SAVE, SIR, arc_slices, dr_slices
from jdr_stats.metrics import principal_angles

FITS = [
    (SIR, {"n_slices": 6}),
    (SAVE, {"n_slices": 6}),
    (PHD, {"residuals": False}),
    (PHD, {"residuals": True}),
]


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(7)
    x = rng.standard_normal((400, 5))
    y = x[:, 0] + 0.5 * x[:, 1] ** 2 + 0.2 * rng.standard_normal(400)
    return y, x


def test_dr_slices_without_ties():
    n, h = 103, 8
    info = dr_slices(np.random.default_rng(0).permutation(n).astype(float), h)
    m = n // h
    j = int(np.ceil((n - 2) / m))
    assert_array_equal(info.sizes, [m] * (j - 1) + [n - (j - 1) * m])


def test_dr_slices_never_split_ties_and_categorical_response():
    y = np.repeat([3.0, 1.0, 2.0, 5.0], [10, 40, 5, 45])
    info = dr_slices(y, 3)  # 4 values > 3 slices: boundaries pushed past ties
    for k in range(info.n_slices):
        vals = set(y[info.indicator == k])
        assert all(set(y[info.indicator == j]).isdisjoint(vals) for j in range(k))
    cat = dr_slices(y, 8)  # few values: one slice per value, sorted
    assert cat.n_slices == 4
    assert_array_equal(cat.sizes, [40, 5, 10, 45])
    assert_array_equal(cat.indicator, np.searchsorted([1.0, 2.0, 3.0, 5.0], y))


@pytest.mark.parametrize("cls, opts", FITS)
def test_results_interface(data, cls, opts):
    y, x = data
    res = cls(y, x).fit(**opts)
    p = x.shape[1]
    assert res.directions.shape == (p, p)
    assert_allclose(np.linalg.norm(res.directions, axis=0), 1.0)
    assert np.all(np.diff(np.abs(res.eigenvalues)) <= 1e-12)
    assert res.rank == 4
    red = res.transform()
    assert red.shape == (400, 4)
    assert_allclose(red, res.transform(x))
    assert res.transform(x[:3], rank=2).shape == (3, 2)
    tests = res.dimension_tests()
    assert tests.table.shape[0] == 4
    assert "0D vs >= 1D" in str(tests.summary())
    text = str(res.summary())
    assert "Eigenvalues" in text and "R^2(OLS|dr)" in text
    assert "marginal dimension tests" in text.lower()
    assert "<table" in res._repr_html_()
    # read-only: copies come back
    ev = res.eigenvalues
    ev[0] = 99.0
    assert res.eigenvalues[0] != 99.0
    with pytest.raises(AttributeError):
        res.eigenvalues = ev
    assert (res.slices is None) == (cls is PHD)
    assert_allclose(res.directions_std.T @ res.directions_std, np.eye(p), atol=1e-12)
    assert res.kernel.shape == (p, p)


@pytest.mark.parametrize("cls, opts", FITS)
def test_labelled_output_and_formula(data, cls, opts):
    y, x = data
    df = pd.DataFrame(x, columns=list("abcde")).assign(resp=y)
    res = cls.from_formula("resp ~ a + b + c + d + e", df).fit(**opts)
    assert list(res.directions.index) == list("abcde")
    assert list(res.directions.columns[:2]) == ["dir1", "dir2"]
    assert list(res.eigenvalues.index[:1]) == ["dir1"]
    plain = cls(y, x).fit(**opts)
    assert_allclose(res.eigenvalues.to_numpy(), plain.eigenvalues)
    assert isinstance(res.transform(), pd.DataFrame)
    with pytest.raises(ValueError, match="columns"):
        res.transform(df[list("abced")])


@pytest.mark.parametrize("cls, opts", FITS)
def test_integer_weights_equal_repeated_rows(data, cls, opts):
    y, x = data
    w = np.random.default_rng(3).integers(1, 4, size=y.shape[0])
    wfit = cls(y, x, weights=w).fit(**opts)
    rep = cls(np.repeat(y, w), np.repeat(x, w, axis=0)).fit(**opts)
    # dr slices ignore the weights, so for SIR and SAVE the slices of the
    # repeated data differ; see test_weighted_sliced_methods_with_fixed_slices
    if cls is PHD:
        # eigenvalue errors are absolute (Weyl): scaled by the largest
        ev = np.abs(rep.eigenvalues).max()
        assert_allclose(wfit.eigenvalues, rep.eigenvalues, rtol=0, atol=1e-10 * ev)
        for j in range(x.shape[1]):
            assert principal_angles(wfit.directions[:, j], rep.directions[:, j])[0] < 1e-8
    ones = cls(y, x, weights=np.ones_like(y)).fit(**opts)
    plain = cls(y, x).fit(**opts).eigenvalues
    assert_allclose(ones.eigenvalues, plain, rtol=0, atol=1e-12 * np.abs(plain).max())
    assert "case weights" in str(wfit.summary())


def test_weighted_sliced_methods_with_fixed_slices():
    """Weights enter the kernel as frequencies when the slices coincide."""
    rng = np.random.default_rng(11)
    y = np.repeat(np.arange(5.0), 30)  # categorical: same slices either way
    x = rng.standard_normal((150, 3)) + y[:, None] * np.array([1.0, 0.0, 0.5])
    w = rng.integers(1, 4, size=150)
    for cls in (SIR, SAVE):
        a = cls(y, x, weights=w).fit()
        b = cls(np.repeat(y, w), np.repeat(x, w, axis=0)).fit()
        assert_allclose(a.eigenvalues, b.eigenvalues, rtol=0,
                        atol=1e-10 * np.abs(b.eigenvalues).max())
        assert principal_angles(a.directions[:, :2], b.directions[:, :2]).max() < 1e-8


def test_categorical_response_sir():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((300, 4))
    y = (x[:, 2] > 0).astype(float) + (x[:, 2] > 1)
    res = SIR(y, x).fit()
    assert res.slices.n_slices == 3
    assert principal_angles(res.directions[:, :1], np.eye(4)[:, 2:3])[0] < 0.2


def test_coordinate_test_interface(data):
    y, x = data
    df = pd.DataFrame(x, columns=list("abcde"))
    for res in (SIR(y, df).fit(), SAVE(y, df).fit()):
        ct = res.coordinate_test(["e"])
        assert 0 <= ct.pvalue <= 1 and ct.stat > 0
        assert "do not enter" in str(ct.summary())
        assert_allclose(res.coordinate_test([4]).stat, ct.stat)
        for bad, err in [([], ValueError), (["zz"], ValueError), ([9], ValueError),
                         (["a", "a"], ValueError), (list("abcde"), ValueError),
                         ([1.5], TypeError)]:
            with pytest.raises(err, match="drop"):
                res.coordinate_test(bad)
    with pytest.raises(ValueError, match="pval"):
        SIR(y, x).fit().coordinate_test([0], pval="exact")


def test_coordinate_tests_detect_active_predictor():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1000, 4))
    y = x[:, 0] + 0.3 * rng.standard_normal(1000)
    res = SIR(y, x).fit(n_slices=8)
    assert res.coordinate_test([0]).pvalue < 1e-6
    z = x[:, 1] ** 2 + 0.3 * rng.standard_normal(1000)
    sv = SAVE(z, x).fit(n_slices=8)
    assert sv.coordinate_test([1]).pvalue < 1e-6


def test_input_errors(data):
    y, x = data
    with pytest.raises(ValueError, match="n_slices must be at least 2"):
        SIR(y, x).fit(n_slices=1)
    with pytest.raises(TypeError, match="n_slices"):
        SAVE(y, x).fit(n_slices=2.5)
    with pytest.raises(TypeError, match="residuals"):
        PHD(y, x).fit(residuals="yes")
    with pytest.raises(ValueError, match="rank"):
        SIR(y, x).fit(rank=0)
    with pytest.raises(ValueError, match="rank"):
        SIR(y, x).fit().transform(rank=9)
    with pytest.raises(ValueError, match="collinear"):
        SIR(y, np.c_[x, x[:, 0] + x[:, 1]]).fit()
    with pytest.raises(ValueError, match="exog has 3 rows"):
        PHD(y, x[:3])
    xn = x.copy()
    xn[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SIR(y, xn)
    with pytest.warns(UserWarning, match="dropped 1"):
        assert SIR(y, xn, missing="drop").fit().nobs == 399
    with pytest.raises(ValueError, match="formula"):
        SIR.from_formula("y + x", {})


def test_sir_recovers_linear_direction_and_tests_dimension():
    rng = np.random.default_rng(21)
    x = rng.standard_normal((3000, 6))
    beta = np.array([1.0, -1.0, 0, 0, 0, 0]) / np.sqrt(2)
    y = np.exp(x @ beta) + 0.1 * rng.standard_normal(3000)
    res = SIR(y, x).fit()
    assert principal_angles(res.directions[:, :1], beta)[0] < 0.1
    tab = res.dimension_tests().table
    assert tab["pvalue"].iloc[0] < 1e-6 and tab["pvalue"].iloc[1] > 0.001


def test_sir_coordinate_test_size():
    """Size at level 0.05 under H0 (x5 inactive), normal x, p = 5, H = 8.

    200 replicates: Monte Carlo s.e. 0.015, tolerance 3 s.e. around 0.05.
    dr's truncated weights (min(d, H - 1) = 5 of the H - 1 = 7 terms) are
    anti-conservative here; the full study is
    studies/study_baselines_size.py.
    """
    rng = np.random.default_rng(99)
    reps, n = 200, 500
    hits = np.zeros(3)
    for _ in range(reps):
        x = rng.standard_normal((n, 5))
        y = x[:, 0] + 0.5 * rng.standard_normal(n)
        res = SIR(y, x).fit(n_slices=8)
        tab = res.coordinate_test([4]).table
        dr = res.coordinate_test([4], dr_weights=True).table
        hits += [tab["pvalue_general"].iloc[0] <= 0.05,
                 tab["pvalue_restricted"].iloc[0] <= 0.05,
                 dr["pvalue_general"].iloc[0] <= 0.05]
    rate = hits / reps
    se = np.sqrt(0.05 * 0.95 / reps)
    assert abs(rate[0] - 0.05) < 3 * se
    assert abs(rate[1] - 0.05) < 3 * se
    assert rate[2] > 0.05 + 3 * se


def test_dimension_test_sizes_reduced():
    """Size of the d = 1 vs > 1 tests (normal x, n = 1000, 150 replicates).

    Tolerance 3 Monte Carlo s.e. (0.018) around 0.05, one-sided for SAVE,
    whose tests are conservative at moderate n (full study:
    studies/study_baselines_size.py).
    """
    rng = np.random.default_rng(7)
    reps, n = 150, 1000
    p_vals = {k: [] for k in ("sir", "phdy", "phdres_gen", "save_nor", "save_gen")}
    for _ in range(reps):
        x = rng.standard_normal((n, 4))
        e = 0.5 * rng.standard_normal(n)
        p_vals["sir"].append(SIR(x[:, 0] + e, x).fit(n_slices=6)
                             .dimension_tests(2).table["pvalue"].iloc[1])
        ysq = x[:, 0] ** 2 + e
        p_vals["phdy"].append(PHD(ysq, x).fit().dimension_tests(2).table["pvalue"].iloc[1])
        p_vals["phdres_gen"].append(PHD(ysq, x).fit(residuals=True).dimension_tests(2)
                                    .table["pvalue_general"].iloc[1])
        sv = SAVE(ysq, x).fit(n_slices=6).dimension_tests(2).table
        p_vals["save_nor"].append(sv["pvalue"].iloc[1])
        p_vals["save_gen"].append(sv["pvalue_general"].iloc[1])
    se = np.sqrt(0.05 * 0.95 / reps)
    for key, vals in p_vals.items():
        rate = np.mean(np.asarray(vals) <= 0.05)
        assert rate < 0.05 + 3 * se, key
        if not key.startswith("save"):
            assert rate > 0.05 - 3 * se, key


def test_dimension_tests_are_cached_but_not_shared(data):
    y, x = data
    res = SAVE(y, x).fit()
    first = res.dimension_tests()
    first.table.iloc[0, 0] = -1.0
    again = res.dimension_tests()
    assert again.table.iloc[0, 0] > 0


def test_arc_slices_rule():
    info = arc_slices(np.arange(103.0), 8)  # m = 12, 7 slices of 13 first
    assert_array_equal(info.sizes, [13] * 7 + [12])
    y = np.r_[np.zeros(30), np.arange(1.0, 71.0)]
    info = arc_slices(y, 5)  # the 30 ties form one slice, never split
    assert info.sizes[0] == 30
    assert info.sizes.sum() == 100 and info.n_slices <= 5
    assert arc_slices(np.repeat([1.0, 2.0], 5), 4).sizes.tolist() == [5, 5]


def test_weighted_chi2_approximations():
    from scipy import stats

    from jdr_stats.baselines import bentler_xie_pvalue, wood_pvalue

    # equal weights: Q = c chi2_k exactly, both approximations exact
    for f in (2.0, 10.0):
        exact = stats.chi2.sf(f / 0.5, 4)
        assert_allclose(bentler_xie_pvalue(np.full(4, 0.5), f), exact, rtol=1e-12)
        assert_allclose(wood_pvalue(np.full(4, 0.5), f), exact, rtol=1e-12)
    # unequal weights: Wood (three moments) is closer to the truth in the tail
    c = np.array([3.0, 1.0, 0.2, 0.2, 0.1])
    rng = np.random.default_rng(0)
    q = (rng.chisquare(1, size=(400_000, c.size)) * c).sum(axis=1)
    f = np.quantile(q, 0.99)
    err_bx = abs(bentler_xie_pvalue(c, f) - 0.01)
    err_wood = abs(wood_pvalue(c, f) - 0.01)
    assert err_wood < err_bx
    assert err_wood < 0.002


@pytest.mark.parametrize("cls", [SIR, SAVE, PHD])
def test_bad_options(data, cls):
    y, x = data
    with pytest.raises(ValueError, match="chi2approx"):
        cls(y, x).fit(chi2approx="exact")
    if cls is not PHD:
        with pytest.raises(ValueError, match="slice_method"):
            cls(y, x).fit(slice_method="quantile")


def test_model_and_result_attributes(data):
    y, x = data
    df = pd.DataFrame(x, columns=list("abcde")).assign(resp=y)
    model = SIR.from_formula("resp ~ a + b + c + d + e", df)
    assert model.formula == "resp ~ a + b + c + d + e"
    assert model.endog_name == "resp" and model.exog_names == list("abcde")
    assert model.nobs == 400 and model.weights is None
    assert_allclose(model.endog, y)
    assert_allclose(model.exog, x)
    assert model.data.is_pandas
    res = model.fit(n_slices=7)
    again = model.fit(n_slices=7)  # fit leaves the model unchanged
    assert_allclose(res.eigenvalues, again.eigenvalues)
    assert res.model is model and res.method == "sir" and res.nobs == 400
    assert res.chi2approx == "bx"
    assert res.slices.requested == 7
    assert_array_equal(np.sort(res.slices.order), np.arange(400))
    assert res.slices.starts[0] == 0
    assert res.r2_ols.shape == (5,) and np.all(np.diff(res.r2_ols) >= -1e-12)
    d = res.directions.to_numpy()
    assert (d[np.abs(d).argmax(axis=0), np.arange(5)] > 0).all()  # sign convention
    ph = PHD(y, x).fit(residuals=True, chi2approx="wood")
    assert ph.residuals and ph.method == "phdres" and ph.chi2approx == "wood"
    assert "phdres" in str(ph.summary())
    assert PHD(y, x).fit().method == "phdy"


@pytest.mark.parametrize("cls", [SIR, SAVE])
@pytest.mark.parametrize("kind", ["text", "categorical", "object"])
def test_text_response_is_sliced_by_its_classes(cls, kind):
    """A text or categorical response: one slice per class, the same fit as
    the classes coded as numbers (dr slices such a response by value)."""
    rng = np.random.default_rng(12)
    x = rng.standard_normal((300, 4))
    t = x[:, 0] - 0.5 * x[:, 2]
    labels = np.where(t > 0.6, "high", np.where(t < -0.6, "low", "mid"))
    y = {"text": labels, "categorical": pd.Series(labels, dtype="category"),
         "object": labels.astype(object)}[kind]
    codes = pd.Series(labels).astype("category").cat.codes.to_numpy().astype(float)
    res = cls(y, x).fit()
    ref = cls(codes, x).fit(n_slices=3)
    assert res.model.classes == ["high", "low", "mid"]
    assert res.slices.n_slices == 3
    assert_array_equal(np.sort(res.slices.sizes), np.sort(np.bincount(codes.astype(int))))
    assert_allclose(res.eigenvalues, ref.eigenvalues, rtol=1e-12, atol=1e-14)
    dirs, ref_dirs = np.asarray(res.directions)[:, :2], np.asarray(ref.directions)[:, :2]
    assert np.max(principal_angles(dirs, ref_dirs)) < 1e-8
    assert_allclose(cls(y, x).fit(n_slices=5).eigenvalues, res.eigenvalues, rtol=1e-12)
    with pytest.raises(ValueError, match=r"sliced by its 3 classes.*got n_slices=2"):
        cls(y, x).fit(n_slices=2)


def test_text_response_in_a_formula():
    rng = np.random.default_rng(13)
    df = pd.DataFrame(rng.standard_normal((200, 3)), columns=["x1", "x2", "x3"])
    df["g"] = np.where(df["x1"] > 0, "yes", "no")
    res = SIR.from_formula("g ~ x1 + x2 + x3", df).fit()
    assert res.model.classes == ["no", "yes"] and res.slices.n_slices == 2


def test_phd_refuses_a_text_response_but_takes_booleans():
    rng = np.random.default_rng(14)
    x = rng.standard_normal((200, 3))
    with pytest.raises(TypeError, match=r"PHD needs a numeric response.*\['a', 'b'\]"):
        PHD(np.where(x[:, 0] > 0, "a", "b"), x)
    flag = x[:, 0] + 0.3 * rng.standard_normal(200) > 0
    assert_allclose(PHD(flag, x).fit().eigenvalues, PHD(flag.astype(float), x).fit().eigenvalues,
                    rtol=1e-12)


@pytest.mark.parametrize("cls", [SIR, SAVE, PHD])
def test_multivariate_response_refused(cls):
    rng = np.random.default_rng(15)
    x = rng.standard_normal((100, 3))
    with pytest.raises(ValueError, match=f"{cls.__name__} takes one response column; got 2"):
        cls(np.column_stack([x[:, 0] + x[:, 1], x[:, 1] ** 2]), x)
