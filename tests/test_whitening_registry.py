"""The contract of the whitening registry: every entry of
:data:`~jdr_stats.whitenings.WHITENING_METHODS` is accepted by the
``WhiteningKind`` literal, ``fit(whitening=...)``, the bootstrap and the CLI,
fits a small design (dense and sparse), returns unit directions, builds
block maps whose ``solve``, ``solve_t`` and ``to_original`` agree (a
whitened direction maps back to the coefficients that give the same
scores), and has its rows in the docs."""

from __future__ import annotations

import pathlib
from typing import get_args

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats import cli
from jdr_stats.estimation import _estimate
from jdr_stats.estimation._estimate import block_whitening_pair, choose_whitening, inference_note
from jdr_stats.core._linalg import block_moments, unit_columns
from jdr_stats.whitenings import (
    WHITENING_METHODS,
    WHITENINGS,
    WhiteningKind,
    table_rows,
    target_rows,
)

DOCS = pathlib.Path(__file__).parents[1] / "docs"
NAMES = list(WHITENING_METHODS)


@pytest.fixture(scope="module")
def design():
    """A small design with correlated columns in each block."""
    sim = jdr.simulate.bilinear(300, 6, 5, 1, seed=3)
    rng = np.random.default_rng(3)
    mix_a = np.eye(6) + 0.3 * rng.standard_normal((6, 6))
    mix_b = np.eye(5) + 0.3 * rng.standard_normal((5, 5))
    return sim.y, sim.a @ mix_a, sim.b @ mix_b


def test_literal_is_the_registry():
    assert get_args(WhiteningKind) == ("auto", *WHITENING_METHODS) == WHITENINGS
    assert _estimate.WhiteningKind is WhiteningKind and _estimate.WHITENINGS is WHITENINGS


def test_cli_choices_are_the_registry():
    parser = cli._build_parser()
    fit = next(a for a in parser._subparsers._group_actions[0].choices["fit"]._actions
               if "--whitening" in a.option_strings)
    assert tuple(fit.choices) == WHITENINGS


def test_fit_refuses_a_name_outside_the_registry(design):
    with pytest.raises(ValueError, match="whitening"):
        jdr.JointDimReduction(*design).fit(1, whitening="nonesuch")


@pytest.mark.parametrize("name", NAMES)
def test_entry_is_complete(name):
    m = WHITENING_METHODS[name]
    assert m.name == name and m.label and m.when and m.covariance and m.target
    assert m.needs in ("centring", "covariance", "rows")
    assert (m.factory is None) == (m.needs == "centring")
    head = f"Whitening: {name} (given)."
    assert inference_note(name, None) == head + m.note
    assert choose_whitening(name, 300, 6, 5).name == name


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("sparsity", [None, (2, 2)], ids=["dense", "sparse"])
def test_entry_fits_with_unit_directions(name, sparsity, design):
    res = jdr.JointDimReduction(*design).fit(2, whitening=name, sparsity=sparsity)
    assert res.whitening == name
    for d in (res.directions_a, res.directions_b):
        d = np.asarray(d)
        assert d.shape[1] == 2 and np.all(np.isfinite(d))
        np.testing.assert_allclose(np.linalg.norm(d, axis=0), 1.0, rtol=1e-12)
    assert f"Whitening: {name}" in str(res.summary())


@pytest.mark.parametrize("name", NAMES)
def test_bootstrap_accepts_the_entry(name, design):
    res = jdr.JointDimReduction(*design).fit(1, whitening=name)
    boot = res.bootstrap(n_boot=9, seed=0)
    assert boot.n_boot == 9


@pytest.mark.parametrize("name", [k for k, m in WHITENING_METHODS.items() if m.factory])
def test_factory_maps_agree(name, design):
    """``solve`` and ``solve_t`` are ``C^{-1}`` and ``C^{-T}`` of one ``C``; a
    whitened direction ``u`` maps back to ``to_original(u)``, the
    coefficients whose scores on the centred rows are the whitened rows'
    scores on ``u`` (up to the unit scale)."""
    y, a, b = design
    mom = block_moments(y, a, b)
    names = [f"a{j}" for j in range(a.shape[1])]
    factory = WHITENING_METHODS[name].factory
    assert factory is not None
    w = factory(mom.mean_a, mom.cov_a, mom.nobs, "exog_a", names)
    rng = np.random.default_rng(0)
    x, z = rng.standard_normal((6, 3)), rng.standard_normal((6, 4))
    np.testing.assert_allclose(z.T @ w.solve(x), w.solve_t(z).T @ x, atol=1e-10)
    u = unit_columns(rng.standard_normal((6, 2)))
    coef = w.solve_t(u.copy())
    np.testing.assert_allclose(w.to_white(a) @ u, (a - mom.mean_a) @ coef, atol=1e-9)
    np.testing.assert_allclose(w.to_original(u.copy()), unit_columns(coef), atol=1e-12)
    pair = block_whitening_pair(name, mom, names, [f"b{j}" for j in range(b.shape[1])])
    assert pair is not None
    np.testing.assert_allclose(pair[0].solve(x), w.solve(x), atol=1e-12)


@pytest.mark.parametrize("name", [k for k, m in WHITENING_METHODS.items() if m.needs == "rows"])
def test_dual_route_matches_the_covariance_route(name, design):
    y, a, b = design
    mom = block_moments(y, a, b)
    names = [f"a{j}" for j in range(a.shape[1])]
    factory = WHITENING_METHODS[name].factory
    assert factory is not None
    by_cov = factory(mom.mean_a, mom.cov_a, mom.nobs, "exog_a", names)
    by_rows = factory(mom.mean_a, None, mom.nobs, "exog_a", names, rows=a)
    x = np.random.default_rng(1).standard_normal((6, 3))
    np.testing.assert_allclose(by_rows.solve(x), by_cov.solve(x), atol=1e-8)


@pytest.mark.parametrize("name", [k for k, m in WHITENING_METHODS.items() if m.check is None])
def test_entry_without_a_row_check_fits_a_wide_block(name):
    sim = jdr.simulate.bilinear(40, 60, 5, 1, seed=5)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(1, whitening=name, sparsity=(3, 2))
    assert res.whitening == name
    np.testing.assert_allclose(np.linalg.norm(np.asarray(res.directions_a), axis=0), 1.0)


@pytest.mark.parametrize("name", [k for k, m in WHITENING_METHODS.items() if m.check])
def test_entry_check_names_the_rows_it_needs(name):
    with pytest.raises(ValueError, match=f'whitening="{name}"'):
        choose_whitening(name, 10, 20, 3)


@pytest.mark.parametrize("name", NAMES)
def test_entry_has_its_docs_rows(name):
    """The guide's table of whitenings and the theory page's table of targets
    are generated from the registry (docs/conf.py)."""
    assert "_generated/whitenings.md" in (DOCS / "guide" / "wide.md").read_text()
    assert "_generated/whitening_targets.md" in (DOCS / "theory" / "whitening.md").read_text()
    key = f'`"{name}"`'
    assert any(row[0] == key for row in table_rows())
    assert any(row[0] == key for row in target_rows())
    for file in ("whitenings.md", "whitening_targets.md"):  # written by a docs build
        path = DOCS / "_generated" / file
        if path.exists():
            assert f"| {key}" in path.read_text(), path
