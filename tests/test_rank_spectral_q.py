"""The spectral and combined rank tests of a response of q > 1 columns
(theory of rank tests, 6e and 6f; the default ``"auto"`` from ``q n1 n2 / m = 20``).

The replicates are checked against an explicit computation (every row's
transformed vectors formed one by one, the q columns' matrices side by
side), the statistic against the unfoldings of the whitened cross moments,
the size at ``k = 0`` (exact) and at the true rank (a bound) by seeded
simulation, and the table against rescaling, shifting and reordering the
columns of the blocks and of the response.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats import config, policy
from jdr_stats.core._hosvd import hosvd, whitened_crosses
from jdr_stats.core._linalg import block_whitenings
from jdr_stats.inference import _rank_spectral as sp
from jdr_stats.inference import _spectral_sums as ss
from jdr_stats.inference._rank_stats import WhitenedDesign, _whiten
from jdr_stats.inference.rank_tests import choose_rank, rank_tests, resolve_method

ALPHA = 0.05


def _band(reps: int, level: float = ALPHA) -> tuple[float, float]:
    half = 2.5 * np.sqrt(level * (1 - level) / reps) + 0.005
    return level - half, level + half


def _multi(m: int, n1: int, n2: int, r: int, rng: np.random.Generator, q: int = 3,
           strength: float = 1.0):
    """Gaussian blocks; q outcomes, the first two driven by the r bilinear terms."""
    a, b = rng.standard_normal((m, n1)), rng.standard_normal((m, n2))
    u = np.linalg.qr(rng.standard_normal((n1, 2)))[0]
    v = np.linalg.qr(rng.standard_normal((n2, 2)))[0]
    t = strength * (a @ u) * (b @ v) * (np.arange(2) < r)
    y = rng.standard_normal((m, q))
    y[:, 0] += t[:, 0]
    y[:, 1] += t[:, 0] + t[:, 1]
    return y, a, b


@pytest.fixture(autouse=True)
def _wide_premises():
    """The wide designs below (m < n1 n2) warn that the small-sample premise
    fails, which is what the spectral and combined tests are for."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=jdr.exceptions.AssumptionWarning,
                                message=".*small sample")
        yield


@pytest.fixture(scope="module")
def multi_r2():
    return jdr.JointDimReduction(*_multi(700, 7, 6, 2, np.random.default_rng(5))).fit(2)


def _whitened_q(res):
    data = res._fit_data  # the rows the fit was made from
    mom = data.moments()
    wh = block_whitenings(mom, data.names["exog_a"], data.names["exog_b"])
    w = _whiten(data, mom, wh)
    assert isinstance(w, WhitenedDesign) and w.q == mom.q and w.var_y == 1.0
    return w, whitened_crosses(mom.cross_q, *wh)


@pytest.fixture(scope="module")
def categorical_adjusted():
    """Three classes, adjusted for a numeric and a categorical covariate."""
    rng = np.random.default_rng(6)
    m = 500
    a, b = rng.standard_normal((m, 6)), rng.standard_normal((m, 5))
    age, site = rng.normal(50, 10, m), rng.choice(["s1", "s2", "s3"], m)
    util = np.column_stack([2 * a[:, 0] * b[:, 0], 0.05 * age, np.zeros(m)])
    y = pd.Categorical(np.array(["x", "y", "z"])[np.argmax(util + rng.gumbel(size=(m, 3)), 1)])
    cov = pd.DataFrame({"age": age, "site": site})
    return jdr.JointDimReduction(y, a, b, covariates=cov).fit(1)


@pytest.mark.parametrize("name", ["multi_r2", "categorical_adjusted"])
def test_whitened_rows_give_the_models_cross_moments(name, request):
    """X_c = sum_i Yw_ic a'_i b'_i^T / m from the rows (residuals on the
    covariates when adjusted) has the unfoldings' singular values of the
    model's whitened cross moments (Yw is determined up to a rotation of its
    columns, which leaves them unchanged)."""
    w, xq = _whitened_q(request.getfixturevalue(name))
    y, a, b = w.in_memory()
    xs = np.stack([a.T @ (y[:, c, None] * b) / w.m for c in range(y.shape[1])])
    for got, want in zip(hosvd(xs)[1::2], hosvd(xq)[1::2], strict=True):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12 * want[0])
    np.testing.assert_allclose(y.T @ y / w.m, np.eye(y.shape[1]), atol=1e-12)


@pytest.mark.parametrize("ks", [range(0, 3), range(1, 2), range(2, 4)])
def test_replicates_match_explicit_projection(multi_r2, ks):
    """Each replicate equals, at every rank k of the pass, the pair
    (||[L_1, ..., L_q]||^2, ||[R_1; ...; R_q]||^2) / m with
    L_c = sum_i Yw_ic (I - P_i) a~_i b~_i^T and R_c = sum_i Yw_ic a~_i ((I - Q_i) b~_i)^T
    of the data transformed row by row (a~_i = P_i a_i + sa_i (I - P_i) a_i,
    b~_i likewise with sb_i; P_i, Q_i the rank-k HOSVD directions of the other
    half's cross moments)."""
    w, _ = _whitened_q(multi_r2)
    y, a, b = w.in_memory()
    work = sp._SpectralBatch(w, ks, np.random.default_rng(3))
    gens = [np.random.default_rng(100 + j) for j in range(2)]
    got = work(gens)
    assert got.shape == (2, len(ks), 2)
    m, q = y.shape
    # the halves: one bit per row, by blocks of rows, from a word of the generator
    half = sp.row_halves(int(np.random.default_rng(3).integers(2**63 - 1)), 0, m).astype(int)
    dirs = []
    for h in (0, 1):
        rows = np.flatnonzero(half != h)
        xs = [sum(y[i, c] * np.outer(a[i], b[i]) for i in rows) / rows.size for c in range(q)]
        u = np.linalg.svd(np.hstack(xs))[0]   # mode-1 unfolding
        v = np.linalg.svd(np.vstack(xs))[2].T  # mode-2
        dirs.append((u, v))
    for col, k in enumerate(ks):
        pa = [u[:, :k] @ u[:, :k].T for u, _ in dirs]
        qb = [v[:, :k] @ v[:, :k].T for _, v in dirs]
        for j in range(2):
            # the signs: bits of the rows' blocks, from a word of the replicate's generator
            sa, sb = sp.flip_signs(int(np.random.default_rng(100 + j).integers(2**63 - 1)), 0, m)
            left = np.zeros((q, w.n1, w.n2))
            right = np.zeros((q, w.n1, w.n2))
            for i in range(m):
                p, qq = pa[half[i]], qb[half[i]]
                at = p @ a[i] + sa[i] * (a[i] - p @ a[i])
                bt = qq @ b[i] + sb[i] * (b[i] - qq @ b[i])
                for c in range(q):
                    left[c] += y[i, c] * np.outer(at - p @ at, bt)
                    right[c] += y[i, c] * np.outer(at, bt - qq @ bt)
            want = [np.linalg.norm(np.hstack(list(left)), 2) ** 2 / m,
                    np.linalg.norm(np.vstack(list(right)), 2) ** 2 / m]
            assert got[j, col] == pytest.approx(want, rel=1e-9), (k, j)


def test_statistic_is_the_smaller_unfoldings_next_singular_value(multi_r2):
    """The spectral table's statistic is m min(s_{k+1}(M1), s_{k+1}(M2))^2."""
    w, xq = _whitened_q(multi_r2)
    _, s1, _, s2 = hosvd(xq)
    rt = multi_r2.rank_tests("spectral", max_rank=3, n_perm=19, seed=1)
    want = w.m * np.minimum(s1[:4], s2[:4]) ** 2
    np.testing.assert_allclose(rt.table["statistic"], want, rtol=1e-12)
    assert rt.method == "spectral" and rt.table["pvalue"].notna().all()
    assert rt.select_rank(0.05) == 2


def test_selection_rows_are_the_first_rows_of_the_table(multi_r2):
    data, mom = multi_r2.model.data, multi_r2.moments
    for method in ("spectral", "combined"):
        full = rank_tests(data, mom, method=method, seed=4, n_perm=39).table
        rank, sel = choose_rank(data, mom, method=method, seed=4, n_perm=39)
        assert rank == 2, method
        pd.testing.assert_frame_equal(sel.table, full.iloc[: len(sel.table)])


def _classes(seed: int):
    """Four classes (q = 3) driven by five bilinear terms of decreasing
    strength; 12 + 10 columns, m = 400."""
    rng = np.random.default_rng(seed)
    m, n1, n2, r = 400, 12, 10, 5
    a, b = rng.standard_normal((m, n1)), rng.standard_normal((m, n2))
    u = np.linalg.qr(rng.standard_normal((n1, r)))[0]
    v = np.linalg.qr(rng.standard_normal((n2, r)))[0]
    t = 1.5 * (a @ u) * (b @ v) * np.linspace(1.5, 0.6, r)
    util = t @ rng.standard_normal((r, 4)) + rng.gumbel(size=(m, 4))
    return pd.Categorical(np.argmax(util, axis=1)), a, b


def _robust_sweeps(monkeypatch) -> list[range]:
    """The ranks of each robust sweep of the combined test, as they run."""
    from jdr_stats.inference.rank_methods import combined

    sweeps: list[range] = []
    inner = combined.robust_rows

    def spy(w, ks, opts, **kw):
        sweeps.append(ks)
        return inner(w, ks, opts, **kw)

    monkeypatch.setattr(combined, "robust_rows", spy)
    return sweeps


def test_combined_selection_computes_no_robust_row_past_its_stop(monkeypatch):
    """A rank selection by the combined test stops at rank 4 of the pass 0..5:
    its robust rows come in sweeps (0..3, where the chi-square test stops
    rejecting overwhelmingly, then 4, where the sign flips say it can
    stop), none past the stop, and its rows are the first rows of the full
    table with the same seed (to rounding: the sweeps are not the table's)."""
    model = jdr.JointDimReduction(*_classes(1))
    data, mom = model.data, model.moments()
    sweeps = _robust_sweeps(monkeypatch)
    full = rank_tests(data, mom, method="combined", seed=3, n_perm=39).table
    first_pass = sweeps[0]
    sweeps.clear()
    rank, sel = choose_rank(data, mom, method="combined", seed=3, n_perm=39)
    assert rank == 4 and first_pass == range(0, 6)
    assert sweeps == [range(0, 4), range(4, 5)]
    pd.testing.assert_frame_equal(sel.table, full.iloc[: len(sel.table)])
    assert sel.table["n_flips"].iloc[3:].eq(39).all()  # flips at ranks 3.., drawn for 3..5


def test_combined_selection_reports_the_flips_of_the_table(monkeypatch):
    """n_flips is the count of the table's pass, set by its last flip rank:
    when a flip rank past the stop drew more flips than those before it, the
    selection computes the robust rows up to that rank to know it is one."""
    from jdr_stats.inference.rank_methods import combined

    inner = combined.spectral_flips

    def late(w, ks, opts):  # the last flip rank settles last
        pv, _ = inner(w, ks, opts)
        return pv, np.where(np.arange(len(ks)) == len(ks) - 1, opts.n_perm, 16)

    monkeypatch.setattr(combined, "spectral_flips", late)
    model = jdr.JointDimReduction(*_classes(1))
    data, mom = model.data, model.moments()
    full = rank_tests(data, mom, method="combined", seed=3, n_perm=39).table
    sweeps = _robust_sweeps(monkeypatch)
    rank, sel = choose_rank(data, mom, method="combined", seed=3, n_perm=39)
    assert rank == 4 and sweeps == [range(0, 4), range(4, 5), range(5, 6)]
    pd.testing.assert_frame_equal(sel.table, full.iloc[: len(sel.table)])
    assert sel.table["n_flips"].iloc[3:].eq(39).all()


def test_combined_columns_are_the_two_tests_run_alone(multi_r2):
    """pvalue_robust is the robust test's, pvalue_spectral the spectral test's
    with the same seed, and pvalue = min(1, 2 min(both))."""
    comb = multi_r2.rank_tests("combined", max_rank=3, n_perm=39, seed=8).table
    rob = multi_r2.rank_tests("robust", max_rank=3).table
    spec = multi_r2.rank_tests("spectral", max_rank=3, n_perm=39, seed=8).table
    np.testing.assert_allclose(comb["pvalue_robust"], rob["pvalue"], rtol=1e-12)
    np.testing.assert_allclose(comb["statistic"], rob["statistic"], rtol=1e-12)
    ran = comb["n_flips"] > 0
    np.testing.assert_allclose(comb.loc[ran, "pvalue_spectral"], spec.loc[ran, "pvalue"])
    np.testing.assert_allclose(comb["spectral_statistic"], spec["statistic"], rtol=1e-12)
    both = np.minimum(comb["pvalue_robust"], comb["pvalue_spectral"].fillna(1.0))
    np.testing.assert_allclose(comb["pvalue"], np.minimum(1, 2 * both))


def _wide_q(rng, m=90, n=25, r=0):
    """q = 3 outcomes, n1 = n2 = 25, m = 90: q n1 n2 / m = 20.8."""
    return _multi(m, n, n, r, rng)


def test_auto_is_combined_from_q_n1_n2_over_m_5(monkeypatch):
    # q = 3, n1 = n2 = 60, m = 520: q n1 n2 / m = 20.8; two strong directions
    y, a, b = _multi(520, 60, 60, 2, np.random.default_rng(1), strength=4.0)
    model = jdr.JointDimReduction(y, a, b)
    name, choice = resolve_method(model.data, model.moments(), "auto")
    assert name == "combined" and "q n1 n2 / m (q = 3) = 20.8 >= 5" in choice.reason
    assert choice.inputs["q"] == 3 and choice.inputs["ratio"] == 3 * 60 * 60 / 520
    rt = model.fit(1).rank_tests(max_rank=3, seed=2)
    assert rt.method == "combined" and choice.reason in rt.notes and rt.choice == choice
    auto = model.fit("auto", seed=2)
    assert auto.rank == 2
    assert "q n1 n2 / m = 20.8 >= 5" in " ".join(str(auto.summary()).split())
    assert "q n1 n2 / m (q = 3) = 20.8" in auto.to_dict()["choices"]["rank_method"]["reason"]
    assert auto.settings.rank_choice == choice
    # the premises name the width the default's switch uses
    assert "From q n1 n2 / m = 5 (here q = 3: 20.8)" in " ".join(auto.diagnostics.messages)
    assert auto.rank_test_table.method == "combined"
    # one response column of the same blocks: n1 n2 / m = 6.92, the combined
    # test whatever the number of rows (no compute budget chooses the test)
    one = jdr.JointDimReduction(y[:, 0], a, b)
    name, choice = resolve_method(one.data, one.moments(), "auto")
    assert name == "combined" and "n1 n2 / m = 6.92 >= 5" in choice.reason
    monkeypatch.setattr(policy, "RANK_COMBINED_MIN_RATIO", 21.0)
    assert resolve_method(one.data, one.moments(), "auto")[0] == "robust"
    assert resolve_method(model.data, model.moments(), "auto")[0] == "robust"


def test_auto_without_the_rows_raises_instead_of_switching():
    """Below the combined test's width the default is the robust test, whose
    q > 1 version needs the rows: a model from bare moments raises, naming
    rank_method and what works (chi2); it never runs another test in its
    place, so the same data give the same test or an error however they are
    stored.  At the combined test's width it raises too."""
    from jdr_stats.moments import ResponseMoments

    y, a, b = _multi(400, 8, 7, 0, np.random.default_rng(2))
    parts = ResponseMoments.from_arrays(y, a, b)
    streamed = jdr.JointDimReduction.from_moments(parts).fit(1)
    with pytest.raises(jdr.exceptions.RowsNotInMemoryError,
                       match="robust rank test of a response of q = 3 columns.*'chi2'"):
        streamed.rank_tests(max_rank=1)
    rt = streamed.rank_tests("chi2", max_rank=1)
    assert rt.method == "chi2"
    with pytest.raises(jdr.exceptions.RowsNotInMemoryError, match="spectral rank test"):
        streamed.rank_tests("spectral")
    y, a, b = _wide_q(np.random.default_rng(2))
    wide = jdr.JointDimReduction.from_moments(ResponseMoments.from_arrays(y, a, b)).fit(1)
    with pytest.raises(jdr.exceptions.RowsNotInMemoryError, match="rank_method='robust' or"):
        wide.rank_tests(max_rank=1)


def test_spectral_size_at_rank_zero_is_exact():
    """y (three columns) independent of t5 blocks: the spectral test of
    H0: r = 0 is a sign-flip test, exact; its rejection rate at 5% over 300
    samples lies in the two-sided band."""
    rng = np.random.default_rng(20261127)
    reps, rej = 300, 0
    for _ in range(reps):
        a, b = rng.standard_t(5, (120, 8)), rng.standard_t(5, (120, 7))
        y = np.column_stack([rng.exponential(1.0, 120), rng.standard_normal((120, 2))])
        rt = rank_tests(jdr.JointDimReduction(y, a, b).data, jdr.JointDimReduction(y, a, b)
                        .moments(), method="spectral", max_rank=0, n_perm=19,
                        seed=int(rng.integers(2**32)))
        rej += rt.table["pvalue"].iloc[0] <= ALPHA
    lo, hi = _band(reps)
    assert lo <= rej / reps <= hi, rej / reps


def test_size_at_the_true_rank_at_most_alpha():
    """At the true rank r = 2 (t5 blocks, a categorical response of 3
    classes) the spectral and combined tests are bounds: rejection rates at
    most the band's upper end (100 samples)."""
    rng = np.random.default_rng(20261128)
    reps, rej = 100, np.zeros(2)
    for _ in range(reps):
        a, b = rng.standard_t(5, (400, 8)), rng.standard_t(5, (400, 8))
        u = np.linalg.qr(rng.standard_normal((8, 2)))[0]
        v = np.linalg.qr(rng.standard_normal((8, 2)))[0]
        t = (a @ u) * (b @ v)
        util = np.column_stack([t[:, 0], t[:, 1], np.zeros(400)]) + rng.gumbel(size=(400, 3))
        y = pd.Categorical(np.array(["x", "y", "z"])[np.argmax(util, axis=1)])
        res = jdr.JointDimReduction(y, a, b).fit(2)
        seed = int(rng.integers(2**32))
        for j, method in enumerate(("spectral", "combined")):
            tab = res.rank_tests(method, max_rank=2, n_perm=19, seed=seed).table
            rej[j] += tab["pvalue"].iloc[2] <= ALPHA
    assert np.all(rej / reps <= _band(reps)[1]), rej / reps


def test_invariant_to_units_shifts_and_column_order():
    """Rescaling and shifting the columns of the blocks, reordering them, and
    reordering the response's columns leave the default (combined) table
    unchanged: Yw changes by a rotation of its columns, which the unfoldings'
    norms do not see."""
    rng = np.random.default_rng(9)
    y, a, b = _wide_q(rng, r=1)
    base = jdr.JointDimReduction(y, a, b).fit(1).rank_tests(max_rank=2, seed=3).table
    sa, sb = rng.uniform(0.1, 10, a.shape[1]), rng.uniform(0.1, 10, b.shape[1])
    pa, pb = rng.permutation(a.shape[1]), rng.permutation(b.shape[1])
    moved = jdr.JointDimReduction(
        y[:, [2, 0, 1]] * [3.0, 0.5, 2.0] + 7.0, (a * sa + 4.0)[:, pa], (b * sb - 2.0)[:, pb],
    ).fit(1).rank_tests(max_rank=2, seed=3).table
    pd.testing.assert_frame_equal(moved, base, rtol=1e-6)


def test_combined_draws_no_flips_where_the_robust_test_decides(multi_r2, monkeypatch):
    """As for one column: no flips where pvalue_robust <= 1 / (n_perm + 1), and
    every combined p-value, and every drawn spectral p-value, equals the one
    with flips at every rank."""
    from jdr_stats.inference.rank_methods import combined

    from .test_rank_spectral import _all_flips

    new = multi_r2.rank_tests("combined", max_rank=3, n_perm=199, seed=3)
    monkeypatch.setattr(combined, "flips_needed", _all_flips)
    old = multi_r2.rank_tests("combined", max_rank=3, n_perm=199, seed=3).table
    tab = new.table
    skipped = tab["pvalue_robust"] <= 1 / 200
    assert skipped.any() and not skipped.all(), tab
    assert (tab.loc[skipped, "n_flips"] == 0).all() and (old["n_flips"] > 0).all()
    np.testing.assert_array_equal(tab["pvalue"], old["pvalue"])
    np.testing.assert_array_equal(tab.loc[~skipped, "pvalue_spectral"],
                                  old.loc[~skipped, "pvalue_spectral"])
    assert any("smallest p-value the sign flips can give" in note for note in new.notes)


@pytest.mark.slow
def test_default_finds_both_directions_where_the_robust_test_finds_one():
    """Three outcomes on 150 + 150 Gaussian variables, m = 2000 (q n1 n2 / m =
    33.8), r = 2 (``studies/study_spectral_q.py``'s ``multi`` design, where
    the robust test alone chose r = 2 in 0.45 of the samples and the
    combined test in 0.97): on this sample the default fit("auto") chooses 2,
    the robust test alone 1."""
    rng = np.random.default_rng([2026, 0])
    # the study's draw, written out: blocks, then U, V, then the noise
    a, b = rng.standard_normal((2000, 150)), rng.standard_normal((2000, 150))
    u = np.linalg.qr(rng.standard_normal((150, 2)))[0]
    v = np.linalg.qr(rng.standard_normal((150, 2)))[0]
    t = (a @ u) * (b @ v)
    e = rng.standard_normal((2000, 3))
    y = np.column_stack([t[:, 0] + e[:, 0], t[:, 0] + t[:, 1] + e[:, 1], e[:, 2]])
    model = jdr.JointDimReduction(y, a, b)
    assert model.fit("auto", rank_method="robust").rank == 1
    res = model.fit("auto", seed=1)
    assert res.rank_method == "combined" and res.rank == 2, res.rank_test_table.table


def test_long_run_warning_of_q_columns(multi_r2, monkeypatch):
    """The q-column passes warn after their first chunk of flips, as one column's do."""
    monkeypatch.setattr(config, "LONG_RUN_SECONDS", 0.0)
    with pytest.warns(jdr.exceptions.LongRunWarning, match="spectral rank tests are expected"):
        multi_r2.rank_tests("spectral", max_rank=2, n_perm=19, seed=1)


@pytest.mark.parametrize("one_sign", [False, True])
def test_flip_sums_by_groups_and_halves_match_column_sums(one_sign):
    """The replicate sums by response groups (a categorical response) and by
    halves (_FlippedRows) equal the column-by-column sums of _accumulate."""
    rng = np.random.default_rng(3)
    m, n1, n2, kmax, classes = 400, 7, 5, 3, 4
    k2 = 2 * kmax
    cls = rng.integers(classes, size=m)
    y = rng.standard_normal((classes, classes - 1))[cls]  # Q = 3 columns, 4 values
    a, b = rng.standard_normal((m, n1)), rng.standard_normal((m, n2))
    u1, v1 = rng.standard_normal((n1, k2)), rng.standard_normal((n2, k2))
    half = rng.integers(2, size=m)
    ca, cb, halves = np.zeros((m, k2)), np.zeros((m, k2)), []
    for h in (0, 1):
        rows = half == h
        ca[rows, h::2], cb[rows, h::2] = a[rows] @ u1[:, h::2], b[rows] @ v1[:, h::2]
        halves.append((rows, a[rows], b[rows]))
    sa, sb = rng.choice([-1.0, 1.0], m), rng.choice([-1.0, 1.0], m)
    if one_sign:
        sb = np.ones(m)
    q = y.shape[1]

    def column(sums, c):  # one column's sums: views of the stacked ones
        return {key: arr[c] for key, arr in sums.items()}

    ref = ss._zero_sums(n1, n2, k2, True, q)
    for c in range(q):
        ss._accumulate(column(ref, c), y[:, c], a, b, sa, sb, ca, cb, one_sign)
    by_halves = ss._zero_sums(n1, n2, k2, True, q)
    flipped = ss._FlippedRows(a, b, ca, cb, sa, sb, halves, one_sign)
    for c in range(q):
        flipped.accumulate(column(by_halves, c), y[:, c], u1, v1)
    groups = ss._row_groups(y, a, b, ca, cb, halves)
    assert groups is not None and len(groups) == classes
    by_groups = ss._zero_sums(n1, n2, k2, True, q)
    ss._accumulate_groups(by_groups, groups, sa, sb, one_sign)
    for key, val in ref.items():
        np.testing.assert_allclose(by_halves[key], val, rtol=1e-10, atol=1e-9)
        np.testing.assert_allclose(by_groups[key], val, rtol=1e-10, atol=1e-9)


@pytest.mark.parametrize("q", [1, 3])
def test_reaches_decides_as_the_replicates_values(multi_r2, q):
    """_SpectralBatch.reaches (the sequential p-values' decisions: Cholesky
    certificates below a level, the second side only where the first
    reaches it) equals self(rngs).min(axis=2) >= levels, at levels among
    the replicates' own values (each value itself: an eigenvalue computed)
    and False at a NaN level."""
    w, _ = _whitened_q(multi_r2)
    if q == 1:
        y, a, b = w.in_memory()
        w = WhitenedDesign(m=w.m, var_y=1.0, u=np.eye(w.n1), s=np.ones(min(w.n1, w.n2)),
                           v=np.eye(w.n2), a=a, b=b, y=y[:, 0])
    ks = range(0, 4)
    work = sp._SpectralBatch(w, ks, np.random.default_rng(3))
    gens = lambda: [np.random.default_rng(200 + j) for j in range(6)]  # noqa: E731
    values = work(gens()).min(axis=2)  # 6 x len(ks)
    for pick in range(values.shape[0]):
        levels = values[pick].copy()
        levels[1] = np.nan
        want = values >= levels
        want[:, 1] = False
        np.testing.assert_array_equal(work.reaches(gens(), levels), want)
    np.testing.assert_array_equal(work.reaches(gens(), np.median(values, axis=0)),
                                  values >= np.median(values, axis=0))
