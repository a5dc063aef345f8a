"""The summary's first line says, block by block, what was found --
interactions, a main effect, both or nothing -- with the test behind each
(the fit's rank tests and ``main_effects_test()`` at the alpha of the rank
selection), at two blocks, K >= 3 and for a fit pooling the main effects;
``to_dict()`` carries the tests; a test that cannot run is said so."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats import policy
from jdr_stats.exceptions import JDRWarning
from jdr_stats.fitting._found import FirstMoment, block_verdict, p_text


def _design(m: int = 400, seed: int = 0):  # type: ignore[no-untyped-def]
    """y = a0 b0 (interaction) + 0.6 a1 (main effect of a) + noise; c is null."""
    rng = np.random.default_rng(seed)
    blocks = {n: pd.DataFrame(rng.standard_normal((m, w)), columns=[f"{n}{j}" for j in range(w)])
              for n, w in (("a", 5), ("b", 4), ("c", 3))}
    y = (2.0 * blocks["a"]["a0"] * blocks["b"]["b0"] + 0.6 * blocks["a"]["a1"]
         + rng.standard_normal(m))
    return pd.Series(y, name="y"), blocks


def _fit(blocks, y, rank="auto", **kw):  # type: ignore[no-untyped-def]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JDRWarning)
        if len(blocks) == 2 and not kw.get("main_effects"):
            return jdr.JointDimReduction(y, *blocks.values()).fit(rank, **kw)
        return jdr.JointDimReduction.from_blocks(y, blocks).fit(rank, **kw)


def _me(res):  # type: ignore[no-untyped-def]
    return res.main_effects_test("auto", n_perm=policy.MAIN_EFFECTS_PERMUTATIONS,
                                 seed=policy.MAIN_EFFECTS_SEED).pvalues


def test_three_blocks_each_verdict_with_its_tests():
    y, blocks = _design()
    res = _fit(blocks, y)
    head = res.summary().headline[0]
    me, tables = _me(res), res.rank_test_table.tables
    assert res.ranks["a"] >= 1 and res.ranks["b"] >= 1 and res.ranks["c"] == 0  # premises
    assert me["a"] < 0.05 <= me["c"]
    for n in ("a", "b"):
        p0 = p_text(tables[n]["pvalue"].iloc[0])
        assert f"{n}: interactions (rank {res.ranks[n]}; r = 0: {p0}" in head
    assert f"and a main effect ({p_text(me['a'])})" in head
    assert (f"c: nothing (rank 0 not rejected, interactions r = 0: "
            f"{p_text(tables['c']['pvalue'].iloc[0])}; main effect {p_text(me['c'])})") in head
    assert "robust per-block rank tests and main-effects tests at alpha = 0.05" in head
    assert "Main effects are not in the directions (main_effects=True pools them)." in head
    # every test shown is exported, with the same p-values
    got = {r["block"]: r["pvalue"] for r in res.to_dict()["main_effects_test"]["tests"]}
    assert got == me.to_dict()


def test_pooled_fit_says_what_its_directions_hold():
    y, blocks = _design()
    res = _fit({"a": blocks["a"], "b": blocks["b"]}, y, main_effects=True)
    head, me = res.summary().headline[0], _me(res)
    assert "rank tests of the pooled directions" in head
    assert me["a"] < 0.05 and res.ranks["a"] >= 2  # premise: a main effect and an interaction
    assert f"its main effect ({p_text(me['a'])}) and interactions" in head
    if me["b"] >= 0.05:  # b enters through the interaction only
        assert f"b: {res.ranks['b']} direction" in head and "interactions, no main effect" in head
    assert "Main effects are not in the directions" not in head


def test_two_blocks_rank_zero_with_a_main_effect_is_not_no_evidence():
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((300, 4)), rng.standard_normal((300, 3))
    y = 0.5 * a[:, 0] + rng.standard_normal(300)  # a main effect, no interaction
    res = _fit({"a": a, "b": b}, y)
    head, me = res.summary().headline[0], _me(res)
    assert res.rank == 0 and me["a"] < 0.05
    assert head.startswith("Found: no interactions (rank 0 not rejected: k = 0: p = ")
    assert f"a: a main effect ({p_text(me['a'])})" in head and "no evidence" not in head
    # a given rank: only the main effects are tested on the first line
    fixed = _fit({"a": a, "b": b}, y, rank=1).summary().headline[0]
    assert fixed.startswith("Fitted: rank 1 (given; results.rank_tests() tests it); "
                            "main-effects tests at alpha = 0.05: a: a main effect (")


def test_main_effects_test_runs_once_and_is_kept(monkeypatch):
    y, blocks = _design(seed=1)
    res = _fit(blocks, y)
    calls = []
    engine = type(res._impl)  # the fit the results hold, whose summary calls it
    orig = engine.main_effects_test

    def counted(self, *args, **kw):  # type: ignore[no-untyped-def]
        calls.append(1)
        return orig(self, *args, **kw)

    monkeypatch.setattr(engine, "main_effects_test", counted)
    text = str(res.summary())
    assert str(res.summary()) == text and res.to_dict()["main_effects_test"] is not None
    assert len(calls) == 1
    slim = res.remove_data()  # the rows go, the summary stays
    assert str(slim.summary()) == text and len(calls) == 1


def test_without_rows_the_line_says_so():
    rng = np.random.default_rng(0)
    xs = [rng.standard_normal((300, 3)) for _ in range(3)]
    y = xs[0][:, 0] * xs[1][:, 0] + rng.standard_normal(300)
    res = jdr.JointDimReduction.from_moments(jdr.Moments.from_blocks(y, xs)).fit(
        1, independent_blocks=True)
    head = res.summary().headline[0]
    assert "block1: main effect not tested (rows not in memory)" in head
    assert res.to_dict()["main_effects_test"] == {"not_run": "rows not in memory"}
    two = jdr.JointDimReduction.from_moments(jdr.Moments.from_arrays(y, xs[0], xs[1])).fit(1)
    assert "a: main effect not tested (rows not in memory)" in two.summary().headline[0]


@pytest.mark.parametrize("pooled", [False, True])
def test_block_verdicts(pooled):
    found, none, untested = FirstMoment(1e-6), FirstMoment(0.4), FirstMoment(np.nan, "why")
    tests = "r = 0: p = 0.0010, r = 1: p = 0.5000"
    text, nothing = block_verdict(0, "r = 0: p = 0.4000", none, 0.05, pooled=pooled)
    assert nothing and text.startswith("nothing (rank 0 not rejected, ")
    text, nothing = block_verdict(0, "r = 0: p = 0.4000", found, 0.05, pooled=pooled)
    assert not nothing and "a main effect (p = 1.00e-06)" in text
    text, nothing = block_verdict(0, "r = 0: p = 0.4000", untested, 0.05, pooled=pooled)
    assert not nothing and text.endswith("main effect not tested (why)")
    assert block_verdict(1, tests, found, 0.05, pooled=pooled)[0] == (
        f"1 direction ({tests}): its main effect (p = 1.00e-06), interactions not told apart"
        if pooled else f"interactions (rank 1; {tests}) and a main effect (p = 1.00e-06)")
    assert block_verdict(2, tests, found, 0.05, pooled=pooled, q=1)[0].endswith(
        "and interactions" if pooled else "and a main effect (p = 1.00e-06)")
    assert block_verdict(1, tests, none, 0.05, pooled=pooled)[0].endswith(
        "no main effect (p = 0.4000)")
    assert block_verdict(1, None, none, 0.05, pooled=pooled) == ("no main effect (p = 0.4000)",
                                                                 False)
    assert FirstMoment(0.0).p() == "p < 1e-16"
    assert FirstMoment(0.2, marginal=True).p() == "p = 0.2000, marginal"
