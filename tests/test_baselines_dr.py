"""Agreement of SIR, pHd and SAVE with R's dr 3.0.11 on the ais data.

Reference outputs in tests/results/dr (see NOTE.md there).  Tolerances of
the issue: slices identical; eigenvalues, statistics, df and p-values within
1e-6 relative; directions within 1e-6 rad.  p-values that dr prints as 0 come
from ``1 - pchisq`` and are only resolved to ~1e-16, so p-values also get an
absolute tolerance of 1e-14.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from numpy.testing import assert_allclose, assert_array_equal

from jdr_stats.baselines import PHD, SAVE, SIR
from jdr_stats.metrics import principal_angles

HERE = Path(__file__).parent / "results" / "dr"
RTOL = 1e-6
PTOL = 1e-14
ANGLE = 1e-6


def load(name):
    with open(HERE / f"ais_{name}.json") as fh:
        return json.load(fh)


@pytest.fixture(scope="module")
def ais():
    df = pd.read_csv(HERE / "ais_model.csv")
    return df["LBM"], df.drop(columns="LBM")


# Our column names (every test table: statistic, df, pvalue, then the
# method's own) -> R's dr 3.0.11 names, used to read the reference tables.
SIR_DIM = {"statistic": "Stat", "df": "df", "pvalue": "p.value"}
PHDRES_DIM = {"statistic": "Stat", "df": "df", "pvalue": "Normal theory",
              "pvalue_indep": "Indep. test", "pvalue_general": "General theory"}
SAVE_DIM = {"statistic": "Stat", "df": "df(Nor)", "pvalue": "p.value(Nor)",
            "pvalue_general": "p.value(Gen)"}
SAVE_COORD = {"statistic": "Statistic", "df_normal": "df(Nor)", "pvalue_normal": "p.val(Nor)",
              "pvalue": "p.val(Gen)"}


def column(ref_table, name, names=SIR_DIM):
    name = names.get(name, name)
    return np.array([np.nan if v is None else v for v in ref_table["columns"][name]], float)


def check_fit(res, ref, n_dirs):
    assert_allclose(np.asarray(res.eigenvalues)[:n_dirs], ref["evalues"][:n_dirs], rtol=RTOL)
    want = np.array(ref["evectors"]["data"])
    got = np.asarray(res.directions)
    assert list(res.directions.index) == [n.replace("(", "").replace(")", "") for n in ref["predictor_names"]]
    for j in range(n_dirs):
        assert principal_angles(got[:, j], want[:, j])[0] < ANGLE, j
    assert_allclose(np.linalg.norm(got, axis=0), 1.0, rtol=1e-12)
    assert_allclose(res.r2_ols[:4], ref["summary_evalues_table"]["data"][1], rtol=RTOL)


def check_tests(table, ref_table, stat_cols, p_cols, names=SIR_DIM):
    assert list(table.index) == ref_table["rownames"]
    assert list(table.columns[:3]) == ["statistic", "df", "pvalue"]
    for c in stat_cols:
        assert_allclose(table[c].to_numpy(float), column(ref_table, c, names), rtol=RTOL)
    for c in p_cols:
        assert_allclose(table[c].to_numpy(float), column(ref_table, c, names), rtol=RTOL,
                        atol=PTOL)


@pytest.mark.parametrize("config, h", [("sir_h8", 8), ("sir_hdefault", None)])
def test_sir_matches_dr(ais, config, h):
    y, x = ais
    ref = load(config)
    res = SIR(y, x).fit(n_slices=h)
    si = ref["slice_info"]
    assert res.slices.n_slices == si["nslices"]
    assert_array_equal(res.slices.sizes, si["slice_sizes"])
    assert_array_equal(res.slices.indicator + 1, si["slice_indicator"])
    # rank(M) <= H - 1: with H = 8 = p the last direction is arbitrary
    n_dirs = min(8, res.slices.n_slices - 1)
    check_fit(res, ref, n_dirs)
    check_tests(res.dimension_tests().table, ref["dr_test"], ["statistic", "df"], ["pvalue"])
    full = res.dimension_tests(8).table
    ref_all = ref["dr_test_all"]
    ok = full["df"].to_numpy() > 0
    assert_allclose(full["statistic"].to_numpy()[ok], column(ref_all, "statistic")[ok],
                    rtol=RTOL)
    assert_allclose(full["df"], column(ref_all, "df"))
    assert_allclose(full["pvalue"].to_numpy()[ok], column(ref_all, "pvalue")[ok],
                    rtol=RTOL, atol=PTOL)
    # df = 0: no test; dr prints 0 or 1 from the sign of a rounding error
    assert np.isnan(full["pvalue"].to_numpy()[~ok]).all()
    assert (abs(full["statistic"].to_numpy()[~ok]) < 1e-10).all()
    assert (~ok).sum() == (1 if config == "sir_h8" else 0)


@pytest.mark.parametrize("config", ["sir_h8", "sir_hdefault"])
def test_sir_coordinate_tests_match_dr_with_pvalues_unswapped(ais, config):
    y, x = ais
    ref = load(config)
    res = SIR(y, x).fit(n_slices=8 if config == "sir_h8" else None)
    for ct in ref["coordinate_tests"]:
        name = "log" + ct["hypothesis"][len("~.-log(") : -1]
        out = res.coordinate_test([name], dr_weights=True)
        tab = out.table
        assert_allclose(out.stat, ct["result"]["columns"]["Statistic"][0], rtol=RTOL)
        # dr's default (pval="general") returns the restricted-weights p-value
        # and pval="restricted" the general one: we return them unswapped.
        assert_allclose(tab["pvalue_restricted"].iloc[0], ct["result"]["columns"]["P.value"][0],
                        rtol=RTOL)
        assert_allclose(out.pvalue, ct["result_pval_restricted"]["columns"]["P.value"][0],
                        rtol=RTOL)
        assert out.pvalue == tab["pvalue"].iloc[0] == tab["pvalue_general"].iloc[0]
        assert_allclose(tab["pvalue_general"].iloc[0], ct["bentler_xie"][1]["pval_adj"], rtol=RTOL)
        assert_allclose(tab["pvalue_restricted"].iloc[0], ct["bentler_xie"][0]["pval_adj"],
                        rtol=RTOL)
        restricted = res.coordinate_test([name], pval="restricted", dr_weights=True)
        assert restricted.pvalue == tab["pvalue_restricted"].iloc[0]
        # Without dr_weights: identical when p >= H - 1 (H = 8 here), all
        # H - 1 chi-square terms when p < H - 1 (H = 11): see
        # test_sir_coordinate_test_size and docs/theory/baselines.md.
        default = res.coordinate_test([name]).table
        assert_allclose(default["statistic"].iloc[0], out.stat, rtol=1e-12)
        same = config == "sir_h8"
        for col in ("pvalue_general", "pvalue_restricted"):
            close = np.isclose(default[col].iloc[0], tab[col].iloc[0], rtol=1e-9)
            assert close == same, col
            if not same:  # more chi-square terms: larger p-value
                assert default[col].iloc[0] > tab[col].iloc[0]


def test_save_matches_dr(ais):
    y, x = ais
    ref = load("save_h8")
    res = SAVE(y, x).fit(n_slices=8)
    assert_array_equal(res.slices.indicator + 1, ref["slice_info"]["slice_indicator"])
    check_fit(res, ref, 8)
    check_tests(res.dimension_tests().table, ref["dr_test"], ["statistic", "df"],
                ["pvalue", "pvalue_general"], SAVE_DIM)
    full = res.dimension_tests(8).table
    check_tests(full, ref["dr_test_all"], ["statistic", "df"], ["pvalue", "pvalue_general"],
                SAVE_DIM)
    internals = ref["dr_test_all_save_internals"]
    assert_allclose(full["statistic_general"], internals["st.general"], rtol=RTOL)
    assert_allclose(full["df_general"], internals["df.general"], rtol=RTOL)
    for ct in ref["coordinate_tests"]:
        name = "log" + ct["hypothesis"][len("~.-log(") : -1]
        tab = res.coordinate_test([name]).table
        assert list(tab.columns[:3]) == ["statistic", "df", "pvalue"]
        for c in ["statistic", "df_normal", "pvalue_normal", "pvalue"]:
            assert_allclose(tab[c].iloc[0], ct["result"]["columns"][SAVE_COORD[c]][0], rtol=RTOL)


@pytest.mark.parametrize("config, resid", [("phdy", False), ("phdres", True)])
def test_phd_matches_dr(ais, config, resid):
    y, x = ais
    ref = load(config)
    res = PHD(y, x).fit(residuals=resid)
    check_fit(res, ref, 8)
    assert (np.asarray(res.eigenvalues) < 0).any()  # signed, ordered by |.|
    cols = ["pvalue", "pvalue_indep", "pvalue_general"] if resid else ["pvalue"]
    names = PHDRES_DIM if resid else SIR_DIM
    check_tests(res.dimension_tests().table, ref["dr_test"], ["statistic", "df"], cols, names)
    check_tests(res.dimension_tests(8).table, ref["dr_test_all"], ["statistic", "df"], cols,
                names)


def test_phdres_weights_match_dr_bentler_xie_inputs(ais):
    """The chi-square weights of the general test, row by row."""
    y, x = ais
    ref = load("phdres")
    tab = PHD(y, x).fit(residuals=True).dimension_tests(4).table
    for row, bx in enumerate(ref["dr_test_bentler_xie"][1:]):
        assert_allclose(tab["statistic"].iloc[row], bx["f"], rtol=RTOL)
        assert_allclose(tab["pvalue_general"].iloc[row], bx["pval_adj"], rtol=RTOL)


def test_formula_gives_the_same_fit(ais):
    y, x = ais
    raw = pd.read_csv(HERE / "ais.csv")
    form = ("LBM ~ np.log(SSF) + np.log(Wt) + np.log(Hg) + np.log(Ht) + np.log(WCC)"
            " + np.log(RCC) + np.log(Hc) + np.log(Ferr)")
    res = SIR.from_formula(form, raw).fit(n_slices=8)
    ref = load("sir_h8")
    assert_allclose(np.asarray(res.eigenvalues)[:7], ref["evalues"][:7], rtol=RTOL)
    assert list(res.directions.index)[0] == "np.log(SSF)"


def test_sir_vignette_arc_slices_and_wood(ais):
    """dr's vignette call: dr.slices.arc, chi2approx = "wood"."""
    y, x = ais
    ref = load("sir_vignette_arc_wood")
    res = SIR(y, x).fit(n_slices=8, slice_method="arc", chi2approx="wood")
    assert_array_equal(res.slices.indicator + 1, ref["slice_info"]["slice_indicator"])
    assert_array_equal(res.slices.sizes, ref["slice_info"]["slice_sizes"])
    check_fit(res, ref, 7)
    check_tests(res.dimension_tests().table, ref["dr_test"], ["statistic", "df"], ["pvalue"])
    for ct in ref["coordinate_tests"]:
        name = "log" + ct["hypothesis"][len("~.-log(") : -1]
        # p = 8 >= H - 1 = 7: the default weights are dr's
        tab = res.coordinate_test([name]).table
        assert_allclose(tab["statistic"].iloc[0], ct["result"]["columns"]["Statistic"][0],
                        rtol=RTOL)
        # unswapped, as for the Bentler-Xie fits
        assert_allclose(tab["pvalue_restricted"].iloc[0],
                        ct["result"]["columns"]["P.value"][0], rtol=RTOL)
        assert_allclose(tab["pvalue_general"].iloc[0],
                        ct["result_pval_restricted"]["columns"]["P.value"][0], rtol=RTOL)
