"""The faster select_support against the computation it replaced.

* the leave-one-out bases from one eigendecomposition (secular equation)
  span the subspaces of one dense eigendecomposition per variable, including
  the degenerate cases the secular form cannot resolve (dense fallback);
* select_support gives the p-values, statistics and selections that the
  previous implementation (commit 7fb34fe) recorded in
  ``tests/results/support_reference/`` (every test method and rule, q = 2,
  heavy-tailed noise), to rounding; except the conditional sandwich test,
  whose statistic now takes the leave-one-out basis turned to the full one
  (theory of support, 12.1): it is checked against an explicit computation
  with arbitrarily signed and rotated bases instead;
* the tests formed from the rows block by block equal those of the arrays
  path (:func:`robust_coordinate_tests`), also when the rows come in several
  chunks and the wild resample rows in several groups.
"""

from __future__ import annotations

import importlib.util
import json
import pathlib
import warnings

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats import config
from jdr_stats.estimation._joint import joint_data
from jdr_stats.support import _robust as support_robust
from jdr_stats.support import robust_coordinate_tests
from jdr_stats.support._loo import loo_bases, loo_bases_dense
from jdr_stats.support._statistics import prepare

REF = pathlib.Path(__file__).parent / "results" / "support_reference"


def _span_gap(a: np.ndarray, b: np.ndarray) -> float:
    """Largest ||P_a - P_b||_F over the variables (projections on the spans)."""
    return max(float(np.linalg.norm(x @ x.T - y @ y.T)) for x, y in zip(a, b, strict=True))


def _problem(nf, no, r, seed, spread=1.0):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((nf, no)) / 10
    x[:r] += rng.standard_normal((r, no)) * spread * np.arange(r, 0, -1)[:, None]
    x = rng.standard_normal((nf, nf)) @ x / np.sqrt(nf)
    g = x * rng.uniform(0.5, 1.5, nf)[:, None]
    return x.T @ x, g, rng.uniform(0.2, 1.0, nf)


@pytest.mark.parametrize(("nf", "no", "r"), [(30, 20, 3), (12, 40, 5), (25, 25, 1), (8, 6, 6)])
def test_secular_bases_match_dense(nf, no, r):
    k_mat, g, rho = _problem(nf, no, r, seed=nf + no)
    fast, dense = loo_bases(k_mat, g, rho, r), loo_bases_dense(k_mat, g, rho, r)
    assert fast.shape == dense.shape == (nf, no, r)
    assert _span_gap(fast, dense) < 1e-9
    gram = np.matmul(fast.transpose(0, 2, 1), fast)
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(r), gram.shape), atol=1e-8)


def test_secular_bases_degenerate_cases_fall_back():
    """A g_j orthogonal to an eigenvector (the secular form loses that root)
    and tied eigenvalues are recomputed densely: same spans."""
    rng = np.random.default_rng(1)
    q, _ = np.linalg.qr(rng.standard_normal((10, 10)))
    lam = np.array([9.0, 7.0, 7.0, 4.0, 3.0, 2.0, 1.5, 1.0, 0.5, 0.1])
    k_mat = (q * lam) @ q.T
    g = rng.standard_normal((6, 10))
    g[0] -= (g[0] @ q[:, 0]) * q[:, 0]  # no component on the top eigenvector
    g[1] = 0.0  # a variable with no cross moment: K_j = K
    rho = np.full(6, 0.5)
    for r in (1, 2, 3):
        fast, dense = loo_bases(k_mat, g, rho, r), loo_bases_dense(k_mat, g, rho, r)
        assert np.all(np.isfinite(fast))
        # g_1 = 0 leaves the tie at 7 in K_1: its top-2 span is not unique
        keep = [j for j in range(6) if not (r == 2 and j == 1)]
        assert _span_gap(fast[keep], dense[keep]) < 1e-9


def _load_reference_script():
    spec = importlib.util.spec_from_file_location("make_support_reference", REF / "make_support_reference.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_select_support_equals_previous_implementation():
    ref = json.loads((REF / "reference_7fb34fe.json").read_text())
    script = _load_reference_script()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = {name: script.run(name, *case) for name, case in script.cases().items()}
    assert set(got) == set(ref)
    # the conditional sandwich statistic changed by design (aligned bases; see
    # test_sandwich_statistic_independent_of_basis_conventions)
    changed = {"sandwich"}
    assert got["sandwich"]["sel"] == ref["sandwich"]["sel"]
    for name in set(ref) - changed:
        p_ref, p_new = np.array(ref[name]["p"]), np.array(got[name]["p"])
        np.testing.assert_allclose(p_new, p_ref, rtol=1e-9, atol=1e-12, err_msg=name)
        np.testing.assert_allclose(np.array(got[name]["stat"]), np.array(ref[name]["stat"]),
                                   rtol=1e-9, err_msg=name)
        assert got[name]["sel"] == ref[name]["sel"], name


@pytest.mark.parametrize("standardize", [True, False])
def test_rows_path_equals_arrays_path(monkeypatch, standardize):
    """select_support (rows, block by block, several row chunks and resample
    groups) gives the statistics and p-values of robust_coordinate_tests on
    the prepared arrays with the same seed."""
    sim = jdr.simulate.bilinear(2500, 15, 9, 2, seed=4)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    monkeypatch.setattr(config, "MIN_CHUNK_ROWS", 300)
    monkeypatch.setattr(config, "CHUNK_FLOATS", 300 * 40)  # rows in chunks of 300
    monkeypatch.setattr(jdr.config, "CHUNK_FLOATS", 2500 * 2 * 3)  # 3 variables a chunk
    monkeypatch.setattr(config, "SUPPORT_RESAMPLE_BYTES", 4 * 2500 * 2 * 7)  # 2 chunks a group
    sup = model.select_support(rank=2, seed=7, standardize=standardize, n_resamples=99)
    # the default (joint) estimator's variables: those of the residual rows
    prep = prepare(joint_data(model.data)[0], standardize)
    rng = np.random.default_rng(7)
    kw = dict(rank=2, standardize=standardize, method="wild", n_resample=99, seed=rng)
    res_a = robust_coordinate_tests(prep.yc, prep.z_a, prep.w_a, prep.w_b, **kw)
    res_b = robust_coordinate_tests(prep.yc, prep.z_b, prep.w_b, prep.w_a, **kw)
    for block, res in (("a", res_a), ("b", res_b)):
        tab = sup.table.xs(block, level="block")
        np.testing.assert_allclose(tab["statistic"].to_numpy(), res.stat, rtol=1e-9)
        np.testing.assert_array_equal(tab["pvalue"].to_numpy(), res.pvalue)


def test_sandwich_statistic_independent_of_basis_conventions():
    """The conditional sandwich statistic m t_j' Omega_j^{-1} t_j, computed
    explicitly with one dense eigendecomposition per variable whose basis
    (and the full-data basis) are turned by arbitrary orthogonal matrices,
    then aligned by the Procrustes rotation: the library's value for every
    variable, whatever the rotations (before the alignment the statistic
    depended on them)."""
    from jdr_stats.support._statistics import block_tests

    sim = jdr.simulate.bilinear(600, 6, 5, 2, design="t5", seed=4)
    res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
    prep = prepare(res.model.data, True)
    yc, z, wf, wo = prep.yc, prep.z_a, prep.w_a, prep.w_b
    lib = block_tests(yc, z, wf, wo, rank=2, conditional=True, standardize=True,
                      covariance="sandwich", method="chi2", n_perm=0, rng=None).stat
    m = yc.shape[0]
    wy = yc[:, None] * wo
    xhat = wf.T @ wy / m
    h0 = wy - wy.mean(axis=0)
    rng = np.random.default_rng(0)

    def top(k_mat):
        return np.linalg.eigh(k_mat)[1][:, ::-1][:, :2]

    for trial in range(3):
        turn = np.linalg.qr(rng.standard_normal((2, 2)))[0] if trial else np.eye(2)
        v_r = top(xhat.T @ xhat) @ turn
        h = (h0 - (wf @ (xhat @ v_r)) @ v_r.T) @ v_r
        for j in range(z.shape[1]):
            g = z[:, j] @ wy / m
            zeta = z[:, j] @ z[:, j] / m
            basis = top(xhat.T @ xhat - np.outer(g, g) / zeta)
            basis = basis @ np.linalg.qr(rng.standard_normal((2, 2)))[0]  # any convention
            u, _, wt = np.linalg.svd(basis.T @ v_r)
            t = g @ basis @ (u @ wt)
            omega = (z[:, j, None] ** 2 * h).T @ h / m
            assert m * t @ np.linalg.solve(omega, t) == pytest.approx(lib[j], rel=1e-8)


def test_sandwich_wald_batched_equals_per_variable(monkeypatch):
    """The two ways of forming the sandwich covariances (all variables at once
    from the rows' outer products, or one symmetric product per variable)
    give the same statistics."""
    from jdr_stats.support import _statistics as st

    rng = np.random.default_rng(3)
    z, h, t = rng.standard_normal((400, 7)), rng.standard_normal((400, 5)), rng.standard_normal((7, 5))
    monkeypatch.setattr(st, "_SANDWICH_BATCH_MAX_D", 16)
    batched = st._sandwich_wald(z, h, t)
    monkeypatch.setattr(st, "_SANDWICH_BATCH_MAX_D", 0)
    per_variable = st._sandwich_wald(z, h, t)
    np.testing.assert_allclose(per_variable, batched, rtol=1e-10)
