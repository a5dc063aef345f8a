"""A response in extreme units: every unit-free number is that of unit scale.

The rank, association, main-effect and support tests, R-squared, the
bootstrap bounds and the K-block fit do not depend on the response's unit.
A response near 1e300 overflows the products of four response values those
procedures sum, and one near 1e-300 underflows them: they are brought near
unit size by a power of two first (exact), so a response times 1e+-300 or
1e+-150 gives the conclusions of the response itself, at two and at three
blocks.  The two-block singular values are in the response's units: they
scale with it.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.core.moments import response_scale, unit_response

SCALES = [1e300, 1e-300, 1e150, 1e-150]


def _data(k: int, m: int = 400, seed: int = 0) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    a, b, c = rng.standard_normal((m, 3)), rng.standard_normal((m, 3)), rng.standard_normal((m, 2))
    y = a[:, 0] * b[:, 0] + 0.4 * a[:, 1] + 0.5 * rng.standard_normal(m)
    return y, ({"a": a, "b": b} if k == 2 else {"a": a, "b": b, "c": c})


def _numbers(y: np.ndarray, xs: dict[str, np.ndarray]) -> dict[str, object]:
    """Every unit-free number a user reads, from one response."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # no overflow, no 0/0
        warnings.simplefilter("ignore", jdr.exceptions.RankSelectionWarning)
        warnings.simplefilter("ignore", jdr.exceptions.WeakGapWarning)
        model = jdr.JointDimReduction.from_blocks(y, xs)
        res = model.fit(1)
        tables = res.rank_tests().tables
        out: dict[str, object] = {
            "directions": {n: np.asarray(d, float) for n, d in res.directions.items()},
            "rank_tests": pd.concat(tables.values())[["statistic", "pvalue"]].to_numpy(),
            "auto": model.fit("auto").ranks,
            "association": res.association_test(n_perm=199, seed=1).pvalue,
            "main_effects": res.main_effects_test().table[["statistic", "pvalue"]].to_numpy(),
            "rsquared": res.fit_measures.rsquared,
            "bounds": res.bootstrap(39, seed=2).table.to_numpy(),
            "support": model.select_support(rank=1, seed=3).table.select_dtypes("number")
                            .to_numpy(),
        }
    if len(xs) == 2:
        out["pooled"] = np.asarray(model.fit(1, main_effects=True).directions["a"], float)
    return out


def _close(x: object, y: object, path: str) -> None:
    if isinstance(x, dict):
        assert isinstance(y, dict) and x.keys() == y.keys(), path
        for k in x:
            _close(x[k], y[k], f"{path}/{k}")
    elif isinstance(x, (np.ndarray, float, np.floating)):
        np.testing.assert_allclose(np.asarray(y, float), np.asarray(x, float),
                                   rtol=1e-8, atol=1e-10, err_msg=path)
    else:
        assert x == y, (path, x, y)


@pytest.fixture(scope="module", params=[2, 3])
def unit(request: pytest.FixtureRequest) -> tuple[int, dict[str, object]]:
    y, xs = _data(request.param)
    return request.param, _numbers(y, xs)


@pytest.mark.parametrize("scale", SCALES)
def test_extreme_response_units_change_no_conclusion(
        unit: tuple[int, dict[str, object]], scale: float) -> None:
    k, ref = unit
    y, xs = _data(k)
    _close(ref, _numbers(y * scale, xs), f"K={k} y*{scale:g}")


@pytest.mark.parametrize("scale", SCALES)
def test_two_block_singular_values_scale_with_the_response(scale: float) -> None:
    y, xs = _data(2)
    base = jdr.JointDimReduction.from_blocks(y, xs).fit(2).singular_values
    got = jdr.JointDimReduction.from_blocks(y * scale, xs).fit(2).singular_values
    np.testing.assert_allclose(got / scale, base, rtol=1e-10)


def test_response_scale_is_a_power_of_two_beyond_the_limit() -> None:
    y = np.array([3.0, -1e200, np.nan, 0.0])
    c = response_scale(y)
    assert c != 1.0 and np.frexp(c)[0] == 0.5  # a power of two
    assert 0.5 <= np.nanmax(np.abs(y * c)) < 1.0
    assert response_scale(np.array([3.0, -7.5])) == 1.0  # unit size: untouched
    assert response_scale(np.zeros(3)) == 1.0
    plain = np.array([1.0, 2.0])
    assert unit_response(plain) is not None and np.array_equal(unit_response(plain), plain)


def _quiet() -> warnings.catch_warnings:
    ctx = warnings.catch_warnings()
    ctx.__enter__()
    warnings.simplefilter("error", RuntimeWarning)
    warnings.simplefilter("ignore", jdr.exceptions.RankSelectionWarning)
    warnings.simplefilter("ignore", jdr.exceptions.WeakGapWarning)
    return ctx


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_two_block_routes_at_extreme_response_units(scale: float) -> None:
    """The other rank tests, the ladle, the orthogonal estimand, the sparse
    fit (its selection compares norms) and its stability, the CV sparsity."""
    y, xs = _data(2)

    def numbers(y: np.ndarray) -> dict[str, object]:
        ctx = _quiet()
        try:
            model = jdr.JointDimReduction.from_blocks(y, xs)
            res = model.fit(1)
            out: dict[str, object] = {
                m: res.rank_tests(m, seed=0).table[["statistic", "pvalue"]].to_numpy()
                for m in ("chi2", "wald", "general", "permutation", "spectral")}
            out["ladle"] = model.fit("auto", rank_method="ladle", seed=0).rank
            out["orthogonal"] = model.fit(1, interactions="orthogonal").rank_tests() \
                .table["pvalue"].to_numpy()
            sparse = model.fit(1, sparsity=(2, 2))
            out["sparse"] = np.asarray(sparse.directions["a"], float)
            out["stability"] = sparse.selection_stability(n_sub=10, seed=0)["frequency"] \
                .to_numpy()
            out["cv"] = model.fit(1, sparsity="cv", seed=0).sparsity
            return out
        finally:
            ctx.__exit__(None, None, None)

    _close(numbers(y), numbers(y * scale), f"y*{scale:g}")


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_two_column_response_at_extreme_units(k: int, scale: float) -> None:
    """A response of two columns is whitened (unit-free) with its columns
    brought near unit size first."""
    y, xs = _data(k)
    rng = np.random.default_rng(5)
    y2 = np.c_[y, xs["a"][:, 2] * xs["b"][:, 1] + rng.standard_normal(len(y))]

    def numbers(y: np.ndarray) -> dict[str, object]:
        ctx = _quiet()
        try:
            model = jdr.JointDimReduction.from_blocks(y, xs)
            res = model.fit(1)
            return {"rank_tests": pd.concat(res.rank_tests().tables.values())["pvalue"]
                    .to_numpy(), "auto": model.fit("auto").ranks,
                    "rsquared": res.fit_measures.rsquared}
        finally:
            ctx.__exit__(None, None, None)

    _close(numbers(y2), numbers(y2 * np.array([scale, 1.0])), f"K={k} y[:, 0]*{scale:g}")


@pytest.mark.parametrize("k", [2, 3])
@pytest.mark.parametrize("scale", [1e40, 1e-40])
def test_streamed_response_of_extreme_units_refused(tmp_path, k: int, scale: float) -> None:
    """Streamed sums are in the response's units: beyond about 1e+-30 a
    clear error naming endog, from Parquet and CSV, at two and three blocks
    (within it the streamed numbers are those of unit scale)."""
    y, xs = _data(k, m=600)
    cols = {f"{n}{j}": x[:, j] for n, x in xs.items() for j in range(x.shape[1])}
    blocks = {n: [f"{n}{j}" for j in range(x.shape[1])] for n, x in xs.items()}
    for s, ok in ((scale, False), (1e25 if scale > 1 else 1e-25, True)):
        frame = pd.DataFrame({"y": y * s, **cols})
        frame.to_parquet(tmp_path / "d.parquet")
        frame.to_csv(tmp_path / "d.csv", index=False)
        for build, name in ((jdr.JointDimReduction.from_parquet, "d.parquet"),
                            (jdr.JointDimReduction.from_csv, "d.csv")):
            if not ok:  # refused where the sums are formed, naming the file
                with pytest.raises(ValueError, match=f"endog: a streamed response.*{name}|"
                                                     f"{name}.*endog: a streamed response"):
                    build(tmp_path / name, y="y", blocks=blocks)
                continue
            model = build(tmp_path / name, y="y", blocks=blocks)
            got = pd.concat(model.fit(1, independent_blocks=k > 2).rank_tests().tables
                            .values())["pvalue"].to_numpy()
            ref = pd.concat(jdr.JointDimReduction.from_blocks(y, xs).fit(
                1, independent_blocks=k > 2).rank_tests().tables.values())["pvalue"]
            np.testing.assert_allclose(got, ref.to_numpy(), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("independent", [False, True])
def test_two_block_fit_refuses_a_response_whose_products_overflow(independent: bool) -> None:
    """The two-block fit's moments are in the response's units: a response
    near float64's largest values times columns in the thousands overflows
    them, refused naming endog (not a NaN or a raw scipy error)."""
    y, xs = _data(2)
    xs = {n: x * 3e3 for n, x in xs.items()}
    model = jdr.JointDimReduction.from_blocks(y * 1e303, xs)
    with pytest.raises(ValueError, match="endog: the products of the response"):
        model.fit(1, independent_blocks=independent)
    # the K-block engine (main effects pooled) is free of the unit: it fits
    ranks = model.fit(1, main_effects=True).ranks
    assert ranks == jdr.JointDimReduction.from_blocks(y, xs).fit(1, main_effects=True).ranks


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_baselines_at_extreme_response_units(scale: float) -> None:
    """SIR and SAVE slice y (free of its unit); pHd's kernel and eigenvalues
    are in y's units and scale with it, its tests and R^2(OLS|dr) do not."""
    y, xs = _data(2)
    x = np.hstack(list(xs.values())) * np.array([1.0, 10.0, 100.0, 1.0, 1e3, 1.0])
    for cls, kw in ((jdr.SIR, {}), (jdr.SAVE, {}), (jdr.PHD, {}),
                    (jdr.PHD, {"residuals": True})):
        ctx = _quiet()
        try:
            ref, got = cls(y, x).fit(**kw), cls(y * scale, x).fit(**kw)
        finally:
            ctx.__exit__(None, None, None)
        unit = scale if cls is jdr.PHD else 1.0
        np.testing.assert_allclose(np.asarray(got.eigenvalues) / unit,
                                   np.asarray(ref.eigenvalues), rtol=1e-9, err_msg=cls.__name__)
        for col in ("statistic", "pvalue"):
            np.testing.assert_allclose(got.dimension_tests().table[col].to_numpy(),
                                       ref.dimension_tests().table[col].to_numpy(),
                                       rtol=1e-8, atol=1e-12, err_msg=f"{cls.__name__} {col}")
        np.testing.assert_allclose(got.r2_ols, ref.r2_ols, rtol=1e-9, err_msg=cls.__name__)


@pytest.mark.parametrize("interactions", ["orthogonal", "orthogonal_quadratic"])
def test_orthogonal_tests_report_their_statistic_in_the_response_units(interactions: str
                                                                        ) -> None:
    """The orthogonal tests' Lambda_k and scale are in squared response
    units: brought near unit size for the p-values and folded back."""
    y, xs = _data(2)
    ref = jdr.JointDimReduction.from_blocks(y, xs)
    for scale in (1e40, 1e-40, 1e300):
        model = jdr.JointDimReduction.from_blocks(y * scale, xs)
        got = model.fit(1, interactions=interactions).rank_tests().table
        want = ref.fit(1, interactions=interactions).rank_tests().table
        np.testing.assert_allclose(got["pvalue"], want["pvalue"], rtol=1e-6, atol=1e-13)
        if scale != 1e300:  # 1e300 squared is beyond float64: inf there
            np.testing.assert_allclose(got[["statistic", "scale"]].to_numpy() / scale / scale,
                                       want[["statistic", "scale"]].to_numpy(), rtol=1e-9)
        assert model.fit("auto", interactions=interactions).rank == \
            ref.fit("auto", interactions=interactions).rank


def test_summary_share_of_singular_values_at_extreme_units() -> None:
    """The summary's share and cumulative share of the singular values are
    unit-free: at 1e+-300 (squares beyond float64) those of unit scale."""
    y, xs = _data(2)
    ref = jdr.JointDimReduction.from_blocks(y, xs).fit(1)._singular_value_table()
    for scale in (1e300, 1e-300):
        got = jdr.JointDimReduction.from_blocks(y * scale, xs).fit(1)._singular_value_table()
        np.testing.assert_allclose(got[["share", "cumulative"]].to_numpy(),
                                   ref[["share", "cumulative"]].to_numpy(), rtol=1e-12)


@pytest.mark.parametrize("scale", [1e300, 1e-300, 1.0])
def test_model_data_holds_one_unit_response(scale: float) -> None:
    """The data bring the response near unit size once: ``rows(unit=True)``
    gives ``endog`` times ``response_unit`` (a power of two, 1.0 at ordinary
    sizes, where the response itself is returned), every later read the same
    array; data without rows say 1.0 and refuse the rows by name."""
    y, xs = _data(2)
    model = jdr.JointDimReduction.from_blocks(y * scale, xs)
    data = model._data
    c = data.response_unit
    assert np.frexp(c)[0] == 0.5  # a power of two
    yu = data.rows("a test", unit=True)[0]
    assert np.array_equal(yu, data.endog * c)
    assert 0.5 <= np.abs(yu).max() < 1.0 or (scale == 1.0 and c == 1.0)
    assert data.rows("again", unit=True)[0] is yu
    if scale == 1.0:
        assert yu is data.endog
    removed = model.fit(1).remove_data().model.data
    assert removed.response_unit == 1.0
    with pytest.raises(jdr.exceptions.RowsNotInMemoryError, match="a test"):
        removed.rows("a test", unit=True)
