"""One test vocabulary: TestResult, InapplicableTestResult and
TestTable, every test table of the package in its shape, the p-value
formatter by column name, and the ladle as a criterion (not a test)."""

from __future__ import annotations

import dataclasses
import json
import re

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.exceptions import RankSelectionWarning
from jdr_stats.inference.hypotheses import TEST_COLUMNS
from jdr_stats.inference.rank_methods import RANK_METHODS
from jdr_stats.summary import build_summary


# -- TestResult and InapplicableTestResult ------------------------------------
def test_test_result_fields_summary_and_dict():
    t = jdr.TestResult(statistic=12.5, df=3.0, pvalue=0.0059, df_denom=990.0,
                       null="the coefficients are zero", distribution="F(3, 990)",
                       method="wald", name="Wald test")
    assert t.stat == t.statistic == 12.5 and t.applicable
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.pvalue = 0.5  # type: ignore[misc]
    text = str(t)
    assert "Wald test" in text and "H0: the coefficients are zero" in text
    assert "F(3, 990)" in text and "3, 990" in text and "0.0059" in text
    d = t.to_dict()
    assert d == {"statistic": 12.5, "df": 3.0, "pvalue": 0.0059, "df_denom": 990.0,
                 "null": "the coefficients are zero", "distribution": "F(3, 990)",
                 "method": "wald", "name": "Wald test"}
    assert t._repr_html_().startswith("<")


def test_test_result_without_df_prints_a_dash():
    t = jdr.TestResult(statistic=4.0, df=None, pvalue=1e-20, distribution="permutation")
    info = t.summary().info
    assert info["df:"] == "-" and info["P-value:"] == "<1e-16"
    assert t.to_dict()["df"] is None and t.df_denom is None


def test_inapplicable_result_has_nan_numbers_and_a_reason():
    t = jdr.InapplicableTestResult(reason="no complement is left at k = 4", method="chi2")
    assert not t.applicable
    assert np.isnan(t.statistic) and np.isnan(t.pvalue) and t.df is None
    assert isinstance(t, jdr.TestResult)
    d = t.to_dict()
    assert d["statistic"] is None and d["pvalue"] is None
    assert d["reason"] == "no complement is left at k = 4"
    json.dumps(d, allow_nan=False)
    assert "Not applicable: no complement is left at k = 4" in " ".join(str(t).split())


def test_wald_and_robust_rows_are_test_results(fit):
    from jdr_stats.inference._rank_stats import _whiten
    from jdr_stats.inference.rank_methods.general import complement
    from jdr_stats.inference.rank_robust import (
        complement_block,
        frobenius_from_moments,
        wald_from_moments,
    )

    w = _whiten(fit._fit_data, fit.moments)
    rob = frobenius_from_moments(complement(w, 1), w.s)
    wald = wald_from_moments(complement(w, 1), complement_block(w.s, 1, w.n1, w.n2).reshape(-1))
    for res in (rob, wald):
        assert isinstance(res, jdr.TestResult) and 0 <= res.pvalue <= 1
        assert res.null == "rank(E[a' y b'^T]) <= 1"
        json.dumps(res.to_dict(), allow_nan=False)
    assert rob.method == "robust" and rob.df_denom is None and "chi2" in rob.distribution
    d = (w.n1 - 1) * (w.n2 - 1)
    assert wald.method == "wald" and (wald.df, wald.df_denom) == (d, w.m - d)
    assert (wald.df1, wald.df2) == (d, w.m - d) and wald.distribution == f"F({d}, {w.m - d})"
    # the rows of the rank table are these results
    table = fit.rank_tests("wald").table
    assert table.loc[1, "statistic"] == wald.statistic and table.loc[1, "pvalue"] == wald.pvalue
    assert table.loc[1, "fstat"] == wald.fstat and table.loc[1, "df_denom"] == wald.df_denom


# -- TestTable ---------------------------------------------------------------
def test_test_table_refuses_other_columns():
    with pytest.raises(ValueError, match=r"must start with the columns \['statistic', "
                                         r"'df', 'pvalue'\]; got \['stat', 'df', 'pvalue'\]"):
        jdr.TestTable(pd.DataFrame({"stat": [1.0], "df": [1.0], "pvalue": [0.3]}), "T", "x")
    with pytest.raises(ValueError, match="qvalue must be the fourth column"):
        jdr.TestTable(pd.DataFrame({"statistic": [1.0], "df": [1.0], "pvalue": [0.3],
                                    "n": [3.0], "qvalue": [0.3]}), "T", "x")


def test_test_table_properties():
    frame = pd.DataFrame({"statistic": [5.0, 1.0], "df": [2.0, 2.0], "pvalue": [0.08, 0.6],
                          "qvalue": [0.16, 0.6]}, index=pd.Index(["x", "y"], name="var"))
    t = jdr.TestTable(frame, "Two tests", "chi2", method_label="chi-square tests")
    assert t.statistics.tolist() == [5.0, 1.0] and t.pvalues.tolist() == [0.08, 0.6]
    assert t.qvalues.tolist() == [0.16, 0.6]
    assert "chi-square tests" in str(t)
    d = t.to_dict()
    assert d["method"] == "chi2" and d["method_label"] == "chi-square tests"
    assert d["tests"][0] == {"var": "x", "statistic": 5.0, "df": 2.0, "pvalue": 0.08,
                             "qvalue": 0.16}
    plain = jdr.TestTable(frame.drop(columns="qvalue"), "T", "chi2")
    with pytest.raises(AttributeError, match="no qvalue column"):
        _ = plain.qvalues


def test_table_rows_as_test_results(fit):
    rt = fit.rank_tests("wald")
    one = rt.result(1)
    assert isinstance(one, jdr.TestResult) and one.applicable
    assert (one.statistic, one.pvalue) == (rt.table.loc[1, "statistic"], rt.table.loc[1, "pvalue"])
    assert (one.df, one.df_denom) == (rt.table.loc[1, "df"], rt.table.loc[1, "df_denom"])
    assert fit.rank_tests("robust").result(0).df is None  # NaN df: none applies
    with pytest.raises(KeyError, match="row must be one of"):
        rt.result(7)
    # SIR with H = p: the last row has zero df, no test exists there
    sim = jdr.simulate.bilinear(400, 4, 4, 1, seed=0)
    x = np.hstack([sim.a, sim.b])
    dims = jdr.SIR(sim.y, x).fit(n_slices=8).dimension_tests(8)
    last = dims.result(dims.table.index[-1])
    assert dims.table["df"].iloc[-1] == 0 and not last.applicable
    assert np.isnan(last.pvalue) and "zero degrees of freedom" in last.reason


def test_pvalue_columns_are_known_by_name_not_guessed():
    t = pd.DataFrame({"statistic": [3.0], "df": [1.0], "pvalue": [1e-9], "p.value": [1e-9],
                      "pvalue_other": [1e-9]})
    shown = build_summary("T", {}, [("k", t)])._display("text").tables[1]
    assert shown["pvalue"].iloc[0] == "1.00e-09"
    # a column that only looks like a p-value is an ordinary number
    assert shown["p.value"].iloc[0] == "1.000e-09" and shown["pvalue_other"].iloc[0] == "1.000e-09"
    declared = build_summary("T", {}, [("k", t)], pvalue_columns=["pvalue_other"])
    assert declared._display("text").tables[1]["pvalue_other"].iloc[0] == "1.00e-09"
    # a TestTable declares its method's p-value columns through the frame
    tt = jdr.TestTable(t, "T", "x", pvalue_columns=("pvalue_other",))
    assert tt.summary()._display("text").tables[1]["pvalue_other"].iloc[0] == "1.00e-09"


# -- every test table of the package -------------------------------------------
@pytest.fixture(scope="module")
def fit():
    sim = jdr.simulate.bilinear(600, 5, 4, 2, seed=11)
    return jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)


@pytest.fixture(scope="module")
def all_tables(fit):
    out = {f"rank {m}": fit.rank_tests(m, n_perm=19, seed=1) for m in RANK_METHODS}
    model = fit.model
    out["support"] = model.select_support(rank=2, seed=1)
    out["support marginal chi2"] = model.select_support(method="chi2")
    x = np.hstack([model.exog_a, model.exog_b])
    y = model.endog
    sir, save = jdr.SIR(y, x).fit(), jdr.SAVE(y, x).fit()
    out["SIR dimension"] = sir.dimension_tests()
    out["SIR coordinate"] = sir.coordinate_test([0])
    out["SIR rank_tests"] = sir.rank_tests()
    out["pHd dimension"] = jdr.PHD(y, x).fit().dimension_tests()
    out["pHd residuals dimension"] = jdr.PHD(y, x).fit(residuals=True).dimension_tests()
    out["SAVE dimension"] = save.dimension_tests()
    out["SAVE coordinate"] = save.coordinate_test([0])
    return out


TABLES = [f"rank {m}" for m in RANK_METHODS] + [
    "support", "support marginal chi2", "SIR dimension", "SIR coordinate", "SIR rank_tests",
    "pHd dimension",
    "pHd residuals dimension", "SAVE dimension", "SAVE coordinate"]


@pytest.mark.parametrize("name", TABLES)
def test_every_test_table_has_the_fixed_columns_and_a_json_dict(all_tables, name):
    t = all_tables[name]
    assert isinstance(t, jdr.TestTable)
    cols = list(t.table.columns)
    assert tuple(cols[:3]) == TEST_COLUMNS, (name, cols)
    if "qvalue" in cols:
        assert cols[3] == "qvalue"
    # method is a key, the sentence is the label
    assert re.fullmatch(r"[a-z0-9_-]+", t.method), t.method
    assert t.method_label
    assert t.pvalues.between(0, 1).all() or t.pvalues.isna().any()
    doc = t.to_dict()
    text = json.dumps(doc, allow_nan=False)
    assert json.loads(text)["tests"][0]["statistic"] == pytest.approx(t.table["statistic"].iloc[0])
    # every p-value column (the fixed ones and those declared) prints as a p-value
    for col in t.table.attrs["pvalue_columns"]:
        assert col in cols and (col in ("pvalue", "qvalue") or col in t.pvalue_columns)


def test_rank_method_columns_come_from_the_registry(all_tables):
    for key, spec in RANK_METHODS.items():
        t = all_tables[f"rank {key}"]
        assert list(t.table.columns) == [*TEST_COLUMNS, *spec.columns]
        assert t.method == key and t.method_label == spec.label
        assert spec.assumptions in t.notes
        # the spectral and combined tests stream their sign flips
        assert spec.streams == (key != "permutation")
        assert spec.needs_rows == (key != "chi2")


def test_coordinate_test_result(all_tables):
    ct = all_tables["SAVE coordinate"]
    res = ct.result()
    assert res.statistic == ct.stat == ct.statistic and res.pvalue == ct.pvalue
    assert res.distribution == "weighted chi2" and res.method == "general"
    assert ct.pvalue == ct.table["pvalue"].iloc[0]


# -- the ladle: a criterion, not a test -----------------------------------------
def test_ladle_results_have_no_pvalues_and_no_level(fit):
    res = fit.model.fit("auto", rank_method="ladle", seed=0)
    lad = res.rank_test_table
    assert isinstance(lad, jdr.LadleResults) and not isinstance(lad, jdr.TestTable)
    assert lad.select_rank() == lad.rank == res.rank == 2
    assert list(lad.table.columns) == ["criterion", "boot_var", "eig_part", "noise_edge"]
    np.testing.assert_allclose(lad.criterion, lad.table["boot_var"] + lad.table["eig_part"])
    assert int(np.argmin(lad.criterion)) == lad.rank
    assert not hasattr(lad, "pvalues")
    with pytest.raises(TypeError):
        lad.select_rank(0.05)  # type: ignore[call-arg]
    json.dumps(lad.to_dict(), allow_nan=False)
    for text in (str(lad.summary()), str(res.summary())):
        assert "alpha" not in text and "p-value" not in text.lower().replace("no p-values", "")
        assert re.search(r"ladle \(bootstrap eigenvector variability, no test level\)", text)


def test_ladle_at_zero_says_criterion_not_no_evidence():
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((400, 4)), rng.standard_normal((400, 3))
    y = rng.standard_normal(400)  # independent of both blocks
    model = jdr.JointDimReduction(y, a, b)
    with pytest.warns(RankSelectionWarning) as rec:
        res = model.fit("auto", rank_method="ladle", seed=0)
    msg = str(rec[0].message)
    assert "the ladle criterion is smallest at k = 0" in msg and "run rank_tests()" in msg
    assert "no evidence" not in msg
    assert res.rank == 0 and res.rank_test_table.rank == 0
    for smry in (res.summary(), res.rank_test_table.summary()):
        text = " ".join(str(smry).split())  # the notes are wrapped
        assert "smallest at k = 0" in text and "run rank_tests() for a test" in text
        assert "no evidence" not in text and "alpha" not in text
    # the tests, by contrast, say what a test says
    with pytest.warns(RankSelectionWarning, match="no evidence"):
        model.fit("auto", rank_method="chi2")
