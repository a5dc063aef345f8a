"""The contract of the rank-test registry: every entry of
:data:`~jdr_stats.inference.rank_methods.RANK_METHODS` is accepted by the
``RankMethod`` literal, ``fit(rank_method=...)`` and the CLI, runs on a
small design (one response column, and four classes, q = 3, where it
claims to), returns a table whose columns start ``statistic, df, pvalue``
with p-values in [0, 1], and has its rows in the docs."""

from __future__ import annotations

import pathlib
import re
from typing import get_args

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats import cli
from jdr_stats.inference.hypotheses import TEST_COLUMNS
from jdr_stats.inference.rank_methods import (
    RANK_METHODS,
    default_replicates,
    reference_rows,
    table_rows,
)
from jdr_stats.inference.rank_tests import _DEFAULT_REPLICATES, RANK_SELECTORS, RankMethod

DOCS = pathlib.Path(__file__).parents[1] / "docs"
NAMES = list(RANK_METHODS)


@pytest.fixture(scope="module")
def one_column():
    sim = jdr.simulate.bilinear(400, 5, 4, 1, seed=2)
    return jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1)


@pytest.fixture(scope="module")
def three_columns():
    """Four classes (q = 3 whitened indicator columns)."""
    rng = np.random.default_rng(4)
    m = 400
    a, b = rng.standard_normal((m, 5)), rng.standard_normal((m, 4))
    util = np.column_stack([1.5 * a[:, 0] * b[:, 0], 0.5 * a[:, 1], np.zeros(m), np.zeros(m)])
    y = pd.Categorical(np.array(list("wxyz"))[np.argmax(util + rng.gumbel(size=(m, 4)), 1)])
    return jdr.JointDimReduction(y, a, b).fit(1)


def _check_table(rt, spec, max_rank):
    cols = list(rt.table.columns)
    assert cols[:3] == list(TEST_COLUMNS) == ["statistic", "df", "pvalue"]
    assert cols[3:] == list(spec.columns)
    assert len(rt.table) == max_rank + 1
    p = rt.table["pvalue"].to_numpy()
    assert np.all((p >= 0) & (p <= 1)), rt.table
    assert rt.method == spec.name


def test_literal_is_the_registry():
    assert get_args(RankMethod) == ("auto", *RANK_METHODS)
    assert RANK_SELECTORS == ("auto", *RANK_METHODS, "ladle")


def test_cli_choices_are_the_registry():
    parser = cli._build_parser()
    fit = next(a for a in parser._subparsers._group_actions[0].choices["fit"]._actions
               if "--rank-method" in a.option_strings)
    assert tuple(fit.choices) == RANK_SELECTORS


def test_default_replicates_come_from_the_registry():
    assert _DEFAULT_REPLICATES == default_replicates()
    for name, spec in RANK_METHODS.items():
        assert (name in _DEFAULT_REPLICATES) == spec.random
        assert spec.replicates is None or spec.replicates >= 1


@pytest.mark.parametrize("name", NAMES)
def test_entry_is_complete(name):
    spec = RANK_METHODS[name]
    assert spec.name == name and spec.label and spec.assumptions and spec.distribution
    assert spec.needs in ("moments", "source", "rows")
    assert spec.columns_note
    assert not spec.takes_q or (spec.q_label and spec.q_assumptions)
    # every tail note that prints a number has it
    limits = spec.tail_limits()
    for key, text in spec.tail_notes.items():
        assert ("%" in text) == (key in limits), key
        if key in limits:
            text % limits[key]


@pytest.mark.parametrize("name", NAMES)
def test_entry_runs_on_one_column(name, one_column):
    spec = RANK_METHODS[name]
    rt = one_column.rank_tests(name, max_rank=2, n_perm=19, seed=1)
    _check_table(rt, spec, 2)
    assert rt.method_label == spec.label and spec.assumptions in rt.notes


@pytest.mark.parametrize("name", NAMES)
def test_entry_on_three_columns_runs_or_refuses(name, three_columns):
    spec = RANK_METHODS[name]
    if not spec.takes_q:
        with pytest.raises(ValueError, match="single response column"):
            three_columns.rank_tests(name, max_rank=2, n_perm=19, seed=1)
        return
    rt = three_columns.rank_tests(name, max_rank=2, n_perm=19, seed=1)
    _check_table(rt, spec, 2)
    assert rt.method_label == spec.q_label and spec.q_assumptions in rt.notes


@pytest.mark.parametrize("name", NAMES)
def test_entry_selects_a_rank_in_fit(name, one_column):
    res = one_column.model.fit("auto", rank_method=name, seed=1)
    assert res.rank_method == name and res.rank >= 1


def test_fit_refuses_a_name_outside_the_registry(one_column):
    with pytest.raises(ValueError, match="rank_method"):
        one_column.model.fit("auto", rank_method="nonesuch")


@pytest.mark.parametrize("name", NAMES)
def test_entry_has_its_docs_rows(name):
    """The guide's two tables of methods are generated from the registry
    (docs/conf.py); each entry has its rows, and its theory section exists."""
    guide = (DOCS / "guide" / "rank_tests.md").read_text()
    assert "_generated/rank_methods.md" in guide and "_generated/rank_references.md" in guide
    key = f'`"{name}"`'
    assert any(row[0] == key for row in table_rows())
    reference = next(row for row in reference_rows() if row[0] == key)
    assert all(reference[1:]) and not any("%(" in cell for cell in reference)
    for path in (DOCS / "_generated").glob("rank_*.md"):  # written by a docs build
        assert f"| {key} |" in path.read_text(), path
    theory = (DOCS / "theory" / "rank_tests.md").read_text()
    assert re.search(rf"^#+ {re.escape(RANK_METHODS[name].theory)}\.", theory, re.M), name
