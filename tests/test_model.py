"""The joint estimator: recovery, invariance, labels, sparse fits, results."""

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats import config
from jdr_stats.core._linalg import block_moments
from jdr_stats.metrics import principal_angles


def _crossed_design(m1, m2, n1, n2, rng, cov_a=None):
    """All pairs of m1 draws of a and m2 draws of b (m = m1 m2 rows).

    In a crossed design the sample fourth moments factorise exactly,
    (1/m) sum a_i a_i^T M b_i b_i^T = Sigma_a M Sigma_b, so noiseless bilinear
    data identify the subspaces exactly, not only as m -> infinity.
    """
    alpha = rng.standard_normal((m1, n1))
    if cov_a is not None:
        alpha = alpha @ np.linalg.cholesky(cov_a).T
    beta = rng.standard_normal((m2, n2))
    a = np.repeat(alpha, m2, axis=0)
    b = np.tile(beta, (m1, 1))
    return a, b


def _ar1(n, rho):
    idx = np.arange(n)
    return rho ** np.abs(idx[:, None] - idx[None, :])


class TestRecovery:
    def test_noiseless_crossed_design_exact(self, rng):
        n1, n2, r = 7, 6, 2
        U = jdr.simulate.random_basis(n1, r, seed=rng)
        V = jdr.simulate.random_basis(n2, r, seed=rng)
        a, b = _crossed_design(220, 200, n1, n2, rng, cov_a=_ar1(n1, 0.6))
        y = np.einsum("ij,ij->i", a @ U, b @ V)  # m = 44_000, no noise
        res = jdr.JointDimReduction(y, a, b).fit(r)
        assert principal_angles(U, res.directions_a).max() < 1e-6
        assert principal_angles(V, res.directions_b).max() < 1e-6
        # and the (r+1)-th singular value vanishes
        assert res.singular_values[r] < 1e-8 * res.singular_values[0]

    def test_random_design_error_small(self, bilinear_small):
        sim = bilinear_small
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        err = jdr.metrics.nsee(sim.U, res.directions_a, sim.V, res.directions_b)
        assert err < 0.15

    def test_binary_model(self):
        sim = jdr.simulate.binary(40_000, 6, 6, 2, seed=3)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        assert jdr.metrics.nsee(sim.U, res.directions_a, sim.V, res.directions_b) < 0.15

    def test_standardize_false_identity_design(self, bilinear_small):
        sim = bilinear_small
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2, whitening="none")
        assert jdr.metrics.nsee(sim.U, res.directions_a, sim.V, res.directions_b) < 0.15
        # without whitening, X_lin is the centred cross moment itself
        mom = block_moments(sim.y, sim.a, sim.b)
        np.testing.assert_allclose(res.coef_matrix, mom.cross, rtol=1e-12,
                                   atol=1e-12 * np.abs(mom.cross).max())


class TestXlin:
    def test_matches_definition(self, bilinear_small):
        """The paper's X_lin (eq. lin): each block whitened by its own covariance,
        the per-block estimator."""
        sim = bilinear_small
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2, independent_blocks=True)
        m = sim.y.size
        # whitened blocks from the definition, with a symmetric square root
        def whiten(x):
            xc = x - x.mean(0)
            cov = xc.T @ xc / m
            w, q = np.linalg.eigh(cov)
            return xc @ q @ np.diag(w**-0.5) @ q.T

        aw, bw = whiten(sim.a), whiten(sim.b)
        x_sym = aw.T @ ((sim.y - sim.y.mean())[:, None] * bw) / m
        # a different square root rotates X_lin but keeps its singular values
        s = res.singular_values
        np.testing.assert_allclose(
            np.linalg.svd(x_sym, compute_uv=False), s, rtol=0, atol=1e-10 * s.max()
        )
        # ... and maps back to the same subspace (docstring claim)
        u = np.linalg.svd(x_sym)[0][:, :2]
        xc = sim.a - sim.a.mean(0)
        w, q = np.linalg.eigh(xc.T @ xc / m)
        back = q @ np.diag(w**-0.5) @ q.T @ u
        assert principal_angles(back, res.directions_a).max() < 1e-9

    def test_centering_y_shift_invariant(self, bilinear_small):
        sim = bilinear_small
        r1 = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        r2 = jdr.JointDimReduction(sim.y + 100.0, sim.a, sim.b).fit(2)
        np.testing.assert_allclose(r1.coef_matrix, r2.coef_matrix, atol=1e-10)

    def test_chunked_moments_equal_direct(self, monkeypatch, bilinear_small):
        import jdr_stats.core._linalg as L

        sim = bilinear_small
        direct = block_moments(sim.y, sim.a, sim.b)
        monkeypatch.setattr(config, "CHUNK_BYTES", 8)  # force tiny (256-row) chunks
        monkeypatch.setattr(config, "MIN_CHUNK_ROWS", 256)
        chunked = L.block_moments(sim.y, sim.a, sim.b)
        for name in ("cov_a", "cov_b", "cross", "mean_a"):
            np.testing.assert_allclose(getattr(chunked, name), getattr(direct, name), atol=1e-12)

    def test_memmap_input(self, tmp_path, bilinear_small):
        sim = bilinear_small
        path = tmp_path / "a.dat"
        mm = np.memmap(path, dtype=float, mode="w+", shape=sim.a.shape)
        mm[:] = sim.a
        mom_mm = block_moments(sim.y, mm, sim.b)
        mom = block_moments(sim.y, sim.a, sim.b)
        np.testing.assert_allclose(mom_mm.cross, mom.cross, rtol=1e-12,
                                   atol=1e-12 * np.abs(mom.cross).max())


class TestInvariance:
    def test_affine_map_of_block_a(self, bilinear_small, rng):
        sim = bilinear_small
        M = rng.standard_normal((6, 6)) + 3 * np.eye(6)
        c = rng.standard_normal(6) * 10
        r1 = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        r2 = jdr.JointDimReduction(sim.y, sim.a @ M + c, sim.b).fit(2)
        # y depends on U^T a = (M^{-1} U)^T (a M + c - c): the span maps by M^{-1}
        expected = np.linalg.solve(M, r1.directions_a)
        assert principal_angles(expected, r2.directions_a).max() < 1e-8
        assert principal_angles(r1.directions_b, r2.directions_b).max() < 1e-8
        s = r1.singular_values
        np.testing.assert_allclose(r2.singular_values, s, rtol=0, atol=1e-9 * s.max())

    def test_column_permutation(self, bilinear_small, rng):
        sim = bilinear_small
        perm = rng.permutation(6)
        r1 = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        r2 = jdr.JointDimReduction(sim.y, sim.a[:, perm], sim.b).fit(2)
        assert principal_angles(r1.directions_a[perm], r2.directions_a).max() < 1e-9

    def test_row_order_irrelevant(self, bilinear_small, rng):
        sim = bilinear_small
        p = rng.permutation(sim.y.size)
        r1 = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        r2 = jdr.JointDimReduction(sim.y[p], sim.a[p], sim.b[p]).fit(2)
        np.testing.assert_allclose(r1.directions_a, r2.directions_a, atol=1e-10)


class TestSparse:
    def test_identity_design_support(self):
        sim = jdr.simulate.bilinear(20_000, 40, 30, 2, s1=5, s2=4, seed=7)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2, sparsity=(5, 4))
        assert set(res.support_a) == {f"a{j}" for j in np.flatnonzero(sim.U.any(1))}
        assert set(res.support_b) == {f"b{j}" for j in np.flatnonzero(sim.V.any(1))}
        assert jdr.metrics.nsee(sim.U, res.directions_a, sim.V, res.directions_b) < 0.1
        # directions vanish outside the support
        inactive = ~np.isin(np.arange(40), np.flatnonzero(sim.U.any(1)))
        assert np.all(res.directions_a[inactive] == 0)

    def test_correlated_design_selects_original_variables(self, rng):
        # strongly correlated block a: the whitened matrix mixes variables, the
        # original-coordinate matrix Sigma_a^{-1} S Sigma_b^{-1} does not.
        n1, n2, r, s1, s2, m = 20, 12, 2, 4, 3, 40_000
        U = jdr.simulate.random_basis(n1, r, s1, seed=rng)
        V = jdr.simulate.random_basis(n2, r, s2, seed=rng)
        a = rng.standard_normal((m, n1)) @ np.linalg.cholesky(_ar1(n1, 0.8)).T
        b = rng.standard_normal((m, n2))
        y = np.einsum("ij,ij->i", a @ U, b @ V) + 0.5 * rng.standard_normal(m)
        res = jdr.JointDimReduction(y, a, b).fit(r, sparsity=(s1, s2))
        assert res.support_a == [f"a{j}" for j in np.flatnonzero(U.any(1))]
        assert res.support_b == [f"b{j}" for j in np.flatnonzero(V.any(1))]
        assert principal_angles(U, res.directions_a).max() < 0.1
        # the dense fit agrees with the sparse one on this easy problem
        dense = jdr.JointDimReduction(y, a, b).fit(r)
        assert principal_angles(dense.directions_a, res.directions_a).max() < 0.2

    def test_auto_sparsity_reports_its_tests(self):
        sim = jdr.simulate.bilinear(3000, 30, 20, 2, s1=4, s2=3, seed=2)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2, sparsity="auto")
        tests = res.support_tests
        assert res.sparsity == (len(tests.selected_a), len(tests.selected_b))
        assert set(res.support_a) == set(tests.selected_a)
        text = str(res.summary())
        assert f"{res.sparsity} (auto)" in text and "select_support" in text
        # only the selected variables' loadings are printed
        import re

        for name in res.model.exog_names_a:
            shown = re.search(rf"^\s*{name}\s+-?\d", text, re.M) is not None
            assert shown == (name in res.support_a), name
        dense = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        assert dense.support_tests is None

    def test_full_sparsity_equals_dense(self, bilinear_small):
        sim = bilinear_small
        dense = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        full = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2, sparsity=(6, 5))
        assert principal_angles(dense.directions_a, full.directions_a).max() < 1e-10

    def test_three_step_projection_steps(self):
        from jdr_stats.sparse import three_step_projection

        x = np.array([[5.0, 0.1, 0.0], [0.2, 4.0, 0.3], [0.0, 0.0, 0.4], [1.0, 0.2, 0.1]])
        p = three_step_projection(x, 2, 2)
        # 2.1 keeps rows {0,3} of col 0, {1,3} of col 1, {1,2} of col 2;
        # 2.2 keeps columns 0 and 1; 2.3 keeps rows 0 and 1.
        assert p.cols.tolist() == [0, 1]
        assert p.rows.tolist() == [0, 1]
        np.testing.assert_array_equal(p.projected, [[5, 0, 0], [0, 4, 0], [0, 0, 0], [0, 0, 0]])


class TestLabels:
    def test_dataframe_names_everywhere(self, bilinear_small):
        sim = bilinear_small
        a = pd.DataFrame(sim.a, columns=[f"img{j}" for j in range(6)])
        b = pd.DataFrame(sim.b, columns=[f"cog{j}" for j in range(5)])
        y = pd.Series(sim.y, name="score")
        res = jdr.JointDimReduction(y, a, b).fit(2, sparsity=(3, 3))
        assert list(res.directions_a.index) == list(a.columns)
        assert list(res.directions_b.index) == list(b.columns)
        assert list(res.directions_a.columns) == ["dir1", "dir2"]
        # whitened coordinates are not variables: rows w1..wn
        assert list(res.directions_a_whitened.index) == [f"w{j + 1}" for j in range(6)]
        assert list(res.loadings_a.index) == list(a.columns)
        with pytest.warns(FutureWarning, match="directions_a_std is deprecated"):
            old = res.directions_a_std
        pd.testing.assert_frame_equal(old, res.directions_a_whitened)
        assert list(res.coef_matrix.index) == list(a.columns)
        assert list(res.coef_matrix.columns) == list(b.columns)
        assert set(res.support_a) <= set(a.columns)
        feats = res.transform()
        assert list(feats.columns) == ["a_dir1", "a_dir2", "b_dir1", "b_dir2"]
        text = str(res.summary())
        for name in ["score", "img0", "cog4", *res.support_a]:
            assert name in text

    def test_formula(self, bilinear_small):
        df = bilinear_small.frame
        df["a2"] = df["a2"].abs() + 0.5
        mod = jdr.JointDimReduction.from_formula(
            "y ~ a0 + a1 + np.log(a2) + a3 + a4 + a5 | b0 + b1 + b2 + b3 + b4", df
        )
        assert mod.exog_names_a[2] == "np.log(a2)"
        assert mod.endog_name == "y"
        res = mod.fit(2)
        assert "np.log(a2)" in res.directions_a.index
        np.testing.assert_allclose(mod.exog_a[:, 2], np.log(df["a2"]))

    def test_formula_categorical_and_errors(self, bilinear_small):
        df = bilinear_small.frame.iloc[:500].copy()
        df["grp"] = np.where(df["a0"] > 0, "hi", "lo")
        mod = jdr.JointDimReduction.from_formula("y ~ C(grp) + a1 | b0 + b1", df)
        assert mod.exog_a.shape[1] == 2  # treatment coding, no intercept
        with pytest.raises(ValueError, match="exactly one '\\|'"):
            jdr.JointDimReduction.from_formula("y ~ a0 + a1", df)
        with pytest.raises(ValueError, match="exog_b"):
            jdr.JointDimReduction.from_formula("y ~ a0 | nosuchcol", df)

    def test_arrays_give_arrays(self, bilinear_small):
        sim = bilinear_small
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        assert isinstance(res.directions_a, np.ndarray)
        assert res.support_a == [f"a{j}" for j in range(6)]
        assert isinstance(res.transform(), np.ndarray)


class TestResults:
    def test_attributes(self, bilinear_small):
        sim = bilinear_small
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        assert res.rank == 2 and res.nobs == 3000 and res.standardize and res.sparsity is None
        assert res.singular_values.shape == (5,)
        assert np.all(np.diff(res.singular_values) <= 0)
        np.testing.assert_allclose(np.linalg.norm(res.directions_a, axis=0), 1.0)
        wa, wb = res.directions_a_whitened, res.directions_b_whitened
        np.testing.assert_allclose(wa.T @ wa, np.eye(2), atol=1e-12)
        np.testing.assert_allclose(wb.T @ wb, np.eye(2), atol=1e-12)
        assert res.coef_matrix.shape == (6, 5)

    def test_read_only_and_model_unchanged(self, bilinear_small):
        sim = bilinear_small
        mod = jdr.JointDimReduction(sim.y, sim.a, sim.b)
        before = {k: v for k, v in vars(mod).items()}
        res = mod.fit(2)
        assert vars(mod).keys() == before.keys()
        with pytest.raises(AttributeError):
            res.rank = 3
        with pytest.raises(AttributeError):
            res.singular_values = None
        res.singular_values[0] = -1  # a copy: the results do not change
        assert res.singular_values[0] > 0

    def test_transform_new_data(self, bilinear_small):
        sim = bilinear_small
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2)
        full = res.transform()
        part = res.transform(sim.a[:10], sim.b[:10])
        np.testing.assert_allclose(full[:10], part)
        assert full.shape == (3000, 4)
        with pytest.raises(ValueError, match="exog_a must have 6 columns"):
            res.transform(sim.a[:, :5], sim.b)
        with pytest.raises(ValueError, match="both"):
            res.transform(sim.a)
        with pytest.raises(ValueError, match="NaN"):
            bad = sim.a[:3].copy()
            bad[0, 0] = np.nan
            res.transform(bad, sim.b[:3])

    def test_transform_checks_names(self, bilinear_small):
        df = bilinear_small.frame
        a, b = df[[f"a{j}" for j in range(6)]], df[[f"b{j}" for j in range(5)]]
        res = jdr.JointDimReduction(df["y"], a, b).fit(1)
        with pytest.raises(ValueError, match="do not match"):
            res.transform(a[a.columns[::-1]], b)

    def test_summary_contents(self, bilinear_small):
        sim = bilinear_small
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(2, sparsity=(4, 3))
        smry = res.summary()
        text = str(smry)
        for item in ["No. observations:", "3000", "n1 (block a):", "Rank:", "(4, 3)",
                     "singular value", "share", "block a", "block b", "Selected variables"]:
            assert item in text
        assert "<table" in res._repr_html_()
        assert text == smry.as_text()

    def test_weights_equal_replication(self, bilinear_small):
        sim = bilinear_small
        w = np.ones(3000)
        w[:100] = 3
        idx = np.r_[np.arange(3000), np.repeat(np.arange(100), 2)]
        r1 = jdr.JointDimReduction(sim.y, sim.a, sim.b, weights=w).fit(2)
        r2 = jdr.JointDimReduction(sim.y[idx], sim.a[idx], sim.b[idx]).fit(2)
        np.testing.assert_allclose(r1.coef_matrix, r2.coef_matrix, atol=1e-12)

    def test_missing_drop(self, bilinear_small):
        from jdr_stats.exceptions import MissingDataWarning

        sim = bilinear_small
        a = sim.a.copy()
        a[[3, 7], 1] = np.nan
        with pytest.warns(MissingDataWarning, match="dropped 2 of 3000"):
            mod = jdr.JointDimReduction(sim.y, a, sim.b, missing="drop")
        assert mod.nobs == 2998
        keep = np.setdiff1d(np.arange(3000), [3, 7])
        ref = jdr.JointDimReduction(sim.y[keep], sim.a[keep], sim.b[keep]).fit(2)
        np.testing.assert_allclose(mod.fit(2).coef_matrix, ref.coef_matrix)


@pytest.mark.parametrize("independent_blocks", [False, True])
def test_auto_fit_computes_moments_once_and_factors_each_covariance_once(monkeypatch,
                                                                          independent_blocks):
    """fit("auto", sparsity="auto"): one pass for the moments, one Cholesky
    factor per covariance, shared by the rank tests, the coordinate tests and
    the estimate (the sparse refit factors its sub-blocks): each block's for
    the per-block estimator; the covariance of both blocks together and each
    block's partial covariance for the joint one (the default)."""
    import jdr_stats.core._linalg as lin
    import jdr_stats.io._data as data_mod
    import jdr_stats.support._statistics as st

    sim = jdr.simulate.bilinear(1500, 8, 7, 2, s1=3, s2=3, seed=4)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    expected = model.fit("auto", sparsity="auto", independent_blocks=independent_blocks)
    calls = {"moments": 0, "chol": []}
    real_moments, real_chol = lin.block_moments, lin.cholesky_factor

    def count_moments(*args, **kwargs):
        calls["moments"] += 1
        return real_moments(*args, **kwargs)

    def count_chol(cov, *args, **kwargs):
        calls["chol"].append(cov.shape[0])
        return real_chol(cov, *args, **kwargs)

    # every moments pass of the model's data goes through ModelData.moments
    # or the per-block fit's one pass (fit_moments), or (the joint
    # estimator) through the stacked design's sums
    import jdr_stats.core.moments as core_moments
    import jdr_stats.estimation._estimate as est_mod

    real_stacked = core_moments.stacked_sums

    def count_stacked(*args, **kwargs):
        calls["moments"] += 1
        return real_stacked(*args, **kwargs)

    for mod in (data_mod, st):
        monkeypatch.setattr(mod, "block_moments", count_moments)
    real_one_pass = est_mod.one_pass_block_moments

    def count_one_pass(*args, **kwargs):
        calls["moments"] += 1
        return real_one_pass(*args, **kwargs)

    monkeypatch.setattr(est_mod, "one_pass_block_moments", count_one_pass)
    monkeypatch.setattr(core_moments, "stacked_sums", count_stacked)
    monkeypatch.setattr(lin, "cholesky_factor", count_chol)
    res = model.fit("auto", sparsity="auto", independent_blocks=independent_blocks)
    assert calls["moments"] == 1
    s1, s2 = res.sparsity
    # the joint estimator factors both blocks together once, and each partial
    # covariance twice today (in the joint whitening, then as the residual
    # rows' covariance for the estimate): a known extra cost, not yet shared
    joint = [] if independent_blocks else [8 + 7, 8, 7]
    assert sorted(calls["chol"]) == sorted([*joint, 8, 7, s1, s2])
    np.testing.assert_array_equal(res.directions_a, expected.directions_a)
    assert res.rank_test_table.table.equals(expected.rank_test_table.table)
