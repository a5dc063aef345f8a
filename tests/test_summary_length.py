"""A default summary fits a screen: at most 100 characters wide, about 60
lines and notes of about 120 words, for two and three blocks of up to 30
variables (simulated designs and the bundled ais data), with every number a
reader needs (what was found first, the choices with their reasons, the
tests' p-values, which ``to_dict()`` carries too); ``summary(notes="full")``
gives the long notes, the guide page "Reading the summary" explains them
(studies/check_summary_length.py measures the real data sets)."""

from __future__ import annotations

import re
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.datasets import load_ais
from jdr_stats.exceptions import JDRWarning, RankSelectionWarning
from jdr_stats.summary import format_pvalue

#: The limits: a screen of 100 columns, "about 60" lines and "about 120"
#: words of notes, with the slack the word "about" gives.
MAX_WIDTH, MAX_LINES, MAX_NOTE_WORDS = 100, 62, 130
GUIDE = Path(__file__).resolve().parents[1] / "docs" / "guide" / "summary.md"


def _two_block(res) -> bool:  # type: ignore[no-untyped-def]
    """Whether the two-block engine computed ``res`` (one cross moment's SVD)."""
    return type(getattr(res, "_impl", None)).__name__ == "TwoBlockFit"


def _notes(summary) -> list[str]:  # type: ignore[no-untyped-def]
    """The printed notes: the lines under the last rule."""
    lines = str(summary).splitlines()
    last = max(i for i, line in enumerate(lines) if line and set(line) == {"="})
    return lines[last + 1:]


def _words(lines: list[str]) -> int:
    return sum(len(line.split()) for line in lines)


def _ais_blocks() -> tuple[pd.Series, dict[str, pd.DataFrame]]:
    ais = load_ais()
    return ais["LBM"], {
        "blood": np.log(ais[["RCC", "WCC", "Hc", "Hg", "Ferr"]]).add_prefix("log"),
        "size": np.log(ais[["Ht", "Wt"]]).add_prefix("log"),
        "fat": np.log(ais[["SSF", "Bfat", "BMI"]]).add_prefix("log"),
    }


def _ais_auto():  # type: ignore[no-untyped-def]
    ais = load_ais()
    blood = np.log(ais[["RCC", "WCC", "Hc", "Hg", "Ferr"]]).add_prefix("log")
    body = np.log(ais[["Ht", "Wt", "SSF", "Bfat"]]).add_prefix("log")
    with pytest.warns(RankSelectionWarning, match="returning rank 0"):  # as the vignette says
        return jdr.JointDimReduction(ais["LBM"], blood, body).fit("auto")


def _ais_k3(rank: Any = 1):  # type: ignore[no-untyped-def]
    y, blocks = _ais_blocks()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JDRWarning)
        return jdr.JointDimReduction.from_blocks(y, blocks).fit(rank)


def _simulated(k: int, m: int = 400):  # type: ignore[no-untyped-def]
    """y, and ``k`` blocks of 30 named columns (a bilinear link of the first two)."""
    sim = jdr.simulate.bilinear(m, 30, 30, 2, seed=0)
    rng = np.random.default_rng(1)
    raw = [sim.a, sim.b, rng.standard_normal((m, 30))][:k]
    blocks = {n: pd.DataFrame(x, columns=[f"{n}{j}" for j in range(30)])
              for n, x in zip("abc", raw, strict=False)}
    return pd.Series(sim.y, name="y"), blocks


def _k2(how: str):  # type: ignore[no-untyped-def]
    y, blocks = _simulated(2)
    a, b = blocks["a"], blocks["b"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JDRWarning)
        if how == "categorical":
            y = pd.Categorical(np.where(y > np.median(y), "high", "low"))
        model = jdr.JointDimReduction(
            y, a, b, covariates=pd.DataFrame(
                np.random.default_rng(2).standard_normal((len(a), 2)), columns=["z1", "z2"])
            if how == "covariates" else None)
        if how == "auto":
            return model.fit("auto")
        return model.fit(2, sparsity=(5, 5) if how == "sparse" else None)


def _k3(rank: Any):  # type: ignore[no-untyped-def]
    y, blocks = _simulated(3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", JDRWarning)
        return jdr.JointDimReduction.from_blocks(y, blocks).fit(rank)


CASES = {
    "k2_rank2": lambda: _k2("fixed"),
    "k2_auto": lambda: _k2("auto"),
    "k2_sparse": lambda: _k2("sparse"),
    "k2_categorical": lambda: _k2("categorical"),
    "k2_covariates": lambda: _k2("covariates"),
    "k3_rank2": lambda: _k3(2),
    "k3_auto": lambda: _k3("auto"),
    "ais_auto": _ais_auto,
    "ais_k3": _ais_k3,
    "ais_k3_auto": lambda: _ais_k3("auto"),
}


@pytest.fixture(scope="module")
def fits() -> dict[str, Any]:
    return {name: make() for name, make in CASES.items()}


@pytest.mark.parametrize("name", list(CASES))
def test_default_summary_fits_a_screen(fits, name):  # type: ignore[no-untyped-def]
    res = fits[name]
    text = str(res.summary())
    lines = text.splitlines()
    notes = _notes(res.summary())
    assert max(len(line) for line in lines) <= MAX_WIDTH, name
    assert len(lines) <= MAX_LINES, (name, len(lines))
    assert _words(notes) <= MAX_NOTE_WORDS, (name, _words(notes))
    # the first line under the title says what was found
    assert lines[2].startswith(("Found:", "Fitted:")), lines[2]
    # every variable's loading or direction is printed (a block of rank 0 has none)
    blocks = (res.directions if not _two_block(res)
              else {"a": res.loadings_a, "b": res.loadings_b})
    cells = set(re.findall(r"\S+", text))
    for frame in (f for f in blocks.values() if f.shape[1]):
        shown = frame if not getattr(res, "sparsity", None) else frame[(frame != 0).any(axis=1)]
        assert set(map(str, shown.index)) <= cells, name


@pytest.mark.parametrize("name", ["k2_auto", "k3_auto", "ais_auto", "k2_sparse"])
def test_full_notes_hold_the_rest(fits, name):  # type: ignore[no-untyped-def]
    res = fits[name]
    short, full = res.summary(), res.summary(notes="full")
    assert _words(_notes(full)) > _words(_notes(short))
    flat = " ".join(" ".join(_notes(full)).split())
    if not _two_block(res):  # the route and the piece weights' reasons
        assert "Route: " in flat and "Weights: " in flat
        assert "Route: " not in " ".join(_notes(short))
    else:  # every singular value, the loading note in full, the rank tests' references
        n_sv = len(res.singular_values)
        assert len(full.frames["k"]) == n_sv
        assert len(short.named_frames["singular values"]) == min(n_sv, res.rank + 3)
        assert "Signs and rotations within a subspace are arbitrary" in flat
        if res.rank_method is not None:
            assert "results.rank_test_table.summary(notes='full')" in flat
    with pytest.raises(ValueError, match="notes must be"):
        res.summary(notes="long")


def test_two_block_short_notes_keep_every_choice_and_test(fits):  # type: ignore[no-untyped-def]
    res = fits["ais_auto"]
    text = " ".join(" ".join(_notes(res.summary())).split())
    for key in ("R-squared:", "What this reduction can see", "results.main_effects_test()",
                "Premises: all hold", "Whitening: sample (auto:", "Estimator: joint (",
                "Rank method: robust (method='auto'", "signs and rotations are arbitrary",
                "summary(notes='full')", "guide page 'Reading the summary'"):
        assert key in text, key
    # no interactions at rank 0, and each block's main effect with its test: the
    # headline says so (LBM depends on body size through a main effect)
    head = res.summary().headline[0]
    assert head.startswith("Found: no interactions (rank 0 not rejected: k = 0: p = ")
    me = res.main_effects_test("auto", n_perm=jdr.policy.MAIN_EFFECTS_PERMUTATIONS,
                               seed=jdr.policy.MAIN_EFFECTS_SEED).pvalues
    for block, p in me.items():
        verdict, shown = "a" if p < 0.05 else "no", format_pvalue(p)
        shown = "p < 1e-16" if shown == "<1e-16" else f"p = {shown}"
        assert f"{block}: {verdict} main effect ({shown})" in head, (block, head)
    assert me["b"] < 0.05 and "Main effects are not in the directions" in head
    # the structured choices keep their full reasons
    choices = res.to_dict()["choices"]
    assert {"whitening", "estimator"} <= set(choices)
    assert all(c["reason"] for c in choices.values())


def test_three_block_summary_puts_blocks_side_by_side(fits):  # type: ignore[no-untyped-def]
    res = fits["k3_rank2"]
    tables, _ = res.summary().shown()
    names = [t.name for t in tables]
    assert "eigenvalues" in names and "loadings" in names
    eig = tables[names.index("eigenvalues")]
    assert eig.columns[:2] == ["a eigenvalue", "a share"] and len(eig.labels) == 5
    # the separate tables are kept for CSV and LaTeX
    assert {"eigenvalues, block c", "per-SD loadings, block c"} <= set(res.summary().named_frames)


def _printed_pvalues(summary) -> set[str]:  # type: ignore[no-untyped-def]
    """Every p-value the summary prints: in the headline and notes after
    "p = ", in p-value columns and in rows labelled ", p"."""
    text = " ".join([*summary.headline, *summary.shown()[1]]).replace("p < 1e-16", "p = <1e-16")
    out = set(re.findall(r"\bp = (<1e-16|\d\.\d{4}|\d\.\d{2}e-\d{2})", text))
    pvalue = re.compile(r"<1e-16|\d\.\d{4}|\d\.\d{2}e-\d{2}")
    for t in summary.shown(beside=False)[0]:
        for j, col in enumerate(t.columns):
            for lab, row in zip(t.labels, t.cells, strict=True):
                if (col in ("pvalue", "qvalue") or (lab.endswith(", p") and col == "value")) \
                        and pvalue.fullmatch(row[j]):
                    out.add(row[j])
    return out


def _exported_pvalues(node: Any, key: str = "") -> set[str]:
    """Every p-value in a ``to_dict()``: values under a key naming a
    p-value, and the ``value`` of premises whose label ends in ", p"."""
    out: set[str] = set()
    if isinstance(node, dict):
        label = str(node.get("premise", ""))
        for k, v in node.items():
            if k == "value" and label.endswith(", p") and isinstance(v, float):
                out.add(format_pvalue(v))
            out |= _exported_pvalues(v, str(k))
    elif isinstance(node, list):
        for v in node:
            out |= _exported_pvalues(v, key)
    elif isinstance(node, float) and "pvalue" in key:
        out.add(format_pvalue(node))
    return out


@pytest.mark.parametrize("name", [*CASES, "p_gg_n"])
def test_every_printed_pvalue_is_exported(fits, name):  # type: ignore[no-untyped-def]
    res = fits[name] if name != "p_gg_n" else _wide_two_classes()
    summary = res.summary()
    printed = _printed_pvalues(summary)
    # a two-block fit prints its main-effects tests; a K-block fit its rank tests
    assert printed or (not _two_block(res)
                       and summary.headline[0].startswith("Fitted:")), name
    missing = printed - _exported_pvalues(res.to_dict())
    assert not missing, (name, missing)


def test_to_dict_carries_the_main_effects_and_association_tests():
    res = _wide_two_classes()
    d = res.to_dict()
    me = res.main_effects_test("auto", n_perm=jdr.policy.MAIN_EFFECTS_PERMUTATIONS,
                               seed=jdr.policy.MAIN_EFFECTS_SEED)
    got = {r["block"]: r["pvalue"] for r in d["main_effects_test"]["tests"]}
    assert got == me.table["pvalue"].to_dict()
    assert [r["method"] for r in d["main_effects_test"]["tests"]] == list(me.table["method"])
    assoc = res.association_test(jdr.policy.ASSOCIATION_PERMUTATIONS,
                                 seed=jdr.policy.ASSOCIATION_SEED)
    assert d["association_test"]["pvalue"] == assoc.pvalue
    assert d["association_test"]["method"] == assoc.method
    # where the rank tests run, no association test is shown or exported
    assert _ais_auto().to_dict()["association_test"] is None


def _wide_two_classes():  # type: ignore[no-untyped-def]
    """Shaped as nutrimouse: 40 rows, 120 + 21 columns, two classes of 20."""
    sim = jdr.simulate.bilinear(40, 120, 21, 2, seed=0)
    y = pd.Categorical(np.where(sim.y > np.median(sim.y), "high", "low"))
    return jdr.JointDimReduction(y, sim.a, sim.b).fit(2)


def test_p_gg_n_notes_keep_the_tests_and_the_caveat():
    res = _wide_two_classes()
    summary = res.summary()
    text = " ".join(" ".join(_notes(summary)).split())
    assert ("No association (H0: y independent of (a, b); exact permutation test of "
            "interactions and main effects): p =") in text
    assert "descriptive only at this width" in text
    assert "CHECK: small sample" in text and "no rank test runs" in text
    assert "Response classes (first = reference): high (20), low (20)." in text
    assert "no association: p = " in summary.headline[0]
    assert max(len(line) for line in str(summary).splitlines()) <= MAX_WIDTH


def test_guide_page_holds_what_left_the_notes():
    """The explanations the notes used to carry are on the guide page."""
    page = " ".join(GUIDE.read_text().split())
    for fact in ("share` is `s_k^2 / sum_j s_j^2", "per standard deviation",
                 "Bartlett's test of independence are undefined",
                 "under-cover with few rows and correlated blocks",
                 "each block is replaced by its residual on the other block",
                 "the first class is the reference and the others enter as indicator columns",
                 'summary(notes="full")', "side by side"):
        assert fact in page, fact


def test_a_table_wider_than_a_screen_is_cut_into_its_columns():
    """A rank-15 loading table (15 columns) prints as tables of consecutive
    columns, each at most 100 characters wide, with every column once and the
    labels repeated."""
    frame = pd.DataFrame(np.linspace(-1, 1, 45).reshape(3, 15),
                         columns=[f"dir{k + 1}" for k in range(15)],
                         index=pd.Index(["v1", "v2", "v3"], name="block a"))
    smry = jdr.summary.build_summary("Wide", {"Method:": "x"}, [("block a", frame)])
    text = smry.as_text()
    assert max(len(line) for line in text.splitlines()) <= MAX_WIDTH
    heads = [line.split()[2:] for line in text.splitlines() if line.startswith("block a")]
    assert len(heads) >= 2 and sum(heads, []) == list(frame.columns)
    assert sum(line.startswith("v1 ") for line in text.splitlines()) == len(heads)
    tables, _ = smry.shown()
    assert [t.name for t in tables][1:] == [tables[0].name + " (continued)"] * (len(tables) - 1)
    assert smry.shown(beside=False)[0][0].columns == list(frame.columns)  # LaTeX, CSV: one


def test_compare_notes_fit_and_keep_the_numbers():  # type: ignore[no-untyped-def]
    """compare() on ais (the study's case): short notes within the target,
    with the conclusion's R-squared values in and out of sample and the
    folds' seed; the split and the measure's definition in the full notes."""
    ais = load_ais()
    blood = np.log(ais[["RCC", "WCC", "Hc", "Hg", "Ferr"]]).add_prefix("log")
    body = np.log(ais[["Ht", "Wt", "SSF", "Bfat"]]).add_prefix("log")
    out = jdr.compare(ais["LBM"], blood, body, 1)
    short, full = _notes(out.summary()), _notes(out.summary(notes="full"))
    text = " ".join(" ".join(short).split())
    assert _words(short) <= 120 < _words(full), (_words(short), _words(full))
    assert max(len(line) for line in str(out.summary()).splitlines()) <= MAX_WIDTH
    r2 = out.fit["rsquared"].sort_values(ascending=False)
    cv = out.fit["cv rsquared"].sort_values(ascending=False)
    for value in (r2.iloc[0], cv.iloc[0]):
        assert f"{value:.3f}" in text
    assert "4 of 5 folds (seed 0)" in text and "in-sample" in text
    assert "left singular" in " ".join(full) and "left singular" not in text
