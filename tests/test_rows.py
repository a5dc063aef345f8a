"""The rows protocol, row alignment of pandas inputs, the response refused
inside a block, and the integer checks routed through ``_validation``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.io._data import ModelData, RemovedData, RowsData
from jdr_stats.core._linalg import block_moments
from jdr_stats.io._streamed import MomentsData
from jdr_stats.exceptions import RowsNotInMemoryError

NA, NB = ["a0", "a1", "a2", "a3"], ["b0", "b1", "b2"]


@pytest.fixture(scope="module")
def frame():
    sim = jdr.simulate.bilinear(600, 4, 3, 1, seed=3)
    return sim.frame.set_axis(pd.Index([f"r{i}" for i in range(600)], name="id"))


@pytest.fixture(scope="module")
def three(frame):
    """The data of one fit held three ways: rows, sums, removed."""
    model = jdr.JointDimReduction(frame["y"], frame[NA], frame[NB])
    moms = jdr.JointDimReduction.from_moments(
        jdr.Moments.from_arrays(frame["y"], frame[NA], frame[NB])
    )
    removed = model.fit(1).remove_data().model
    return model.data, moms.data, removed.data


# -- the protocol -------------------------------------------------------------
def test_every_kind_of_data_answers_the_protocol(three):
    rows, sums, removed = three
    assert isinstance(rows, ModelData) and isinstance(sums, MomentsData)
    assert isinstance(removed, RemovedData)
    for data in three:
        assert isinstance(data, RowsData)
        assert data.nobs == 600 and data.endog_name == "y"
        assert data.exog_names_a == NA and data.exog_names_b == NB
        assert data.weighted is False and data.weights is None and data.source is None
        assert data.is_pandas is True
    assert rows.row_index.equals(pd.Index([f"r{i}" for i in range(600)], name="id"))
    assert sums.row_index is None and removed.row_index is None


def test_rows_are_given_or_refused_naming_the_procedure(three, frame):
    rows, sums, removed = three
    y, a, b = rows.rows("anything")
    assert y is rows.endog and a is rows.blocks["exog_a"] and b is rows.blocks["exog_b"]
    *_, w = rows.rows("anything", weights=True)
    assert w is None
    rows.require_source("anything")  # in memory: returns
    with pytest.raises(RowsNotInMemoryError, match=r"^my procedure needs the rows of the data"):
        sums.rows("my procedure")
    with pytest.raises(RowsNotInMemoryError, match=r"^my procedure needs sums over the rows"):
        sums.require_source("my procedure")
    for call in (removed.rows, removed.require_source):
        with pytest.raises(RowsNotInMemoryError,
                           match=r"^my procedure needs the model's data, which remove_data"):
            call("my procedure")
    with pytest.raises(RowsNotInMemoryError, match="remove_data"):
        removed.moments()


def test_moments_through_the_protocol(three, frame):
    rows, sums, _ = three
    want = block_moments(frame["y"].to_numpy(), frame[NA].to_numpy(), frame[NB].to_numpy())
    got = rows.moments()
    for field in ("mean_a", "cov_a", "cov_b", "cross"):
        np.testing.assert_array_equal(getattr(got, field), getattr(want, field))
    assert got.has_covariances and not rows.moments(covariances=False).has_covariances
    np.testing.assert_allclose(sums.moments().cross, want.cross, rtol=1e-10, atol=1e-14)
    with pytest.raises(RowsNotInMemoryError, match=r"^reweighting the rows"):
        sums.moments(np.ones(600))


def test_weighted_sums_and_rows(frame):
    w = np.linspace(1, 2, 600)
    model = jdr.JointDimReduction(frame["y"], frame[NA], frame[NB], weights=w)
    assert model.data.weighted
    np.testing.assert_array_equal(model.data.rows("x", weights=True)[3], w)
    res = model.fit(1)
    small = res.remove_data()
    assert small.model.data.weighted and small.model.data.weights is None
    assert "case weights" in str(small.summary())


def test_removed_data_keeps_what_needs_no_rows(frame):
    res = jdr.JointDimReduction(frame["y"], frame[NA], frame[NB]).fit(1)
    small = res.remove_data()
    assert small.data_removed and not res.data_removed
    # the chi-square rank test needs only the singular values (as from moments)
    pd.testing.assert_frame_equal(small.rank_tests("chi2").table, res.rank_tests("chi2").table)
    for method in ("robust", "permutation"):
        with pytest.raises(RowsNotInMemoryError, match="remove_data"):
            small.rank_tests(method)
    for method in ("pairs", "poisson"):
        with pytest.raises(RowsNotInMemoryError, match=r"^the bootstrap .*remove_data"):
            small.bootstrap(9, seed=0, method=method)


def test_rank_tests_of_an_unstandardized_fit_recompute_the_covariances(frame):
    model = jdr.JointDimReduction(frame["y"], frame[NA], frame[NB])
    raw = model.fit(1, whitening="none")
    assert not raw.moments.has_covariances
    white = model.fit(1)
    pd.testing.assert_frame_equal(raw.rank_tests("chi2").table, white.rank_tests("chi2").table)


def test_bootstrap_refuses_foreign_data(frame):
    from jdr_stats.inference.bootstrap import bootstrap

    res = jdr.JointDimReduction(frame["y"], frame[NA], frame[NB]).fit(1)
    with pytest.raises(TypeError, match="data must be the ModelData"):
        bootstrap(object(), res.estimate, standardize=True, sparsity=None, n_boot=9)


# -- alignment of pandas inputs -------------------------------------------------
def test_shuffled_blocks_are_aligned_on_the_index(frame):
    shuffled = frame[NA].sample(frac=1, random_state=0)
    assert not shuffled.index.equals(frame.index)
    aligned = jdr.JointDimReduction(frame["y"], frame[NA], frame[NB]).fit(1)
    got = jdr.JointDimReduction(frame["y"], shuffled, frame[NB]).fit(1)
    np.testing.assert_array_equal(got.singular_values, aligned.singular_values)
    pd.testing.assert_frame_equal(got.directions_a, aligned.directions_a)
    assert got.model.data.row_index.equals(frame.index)  # endog's order
    np.testing.assert_array_equal(got.model.exog_a, frame[NA].to_numpy())


def test_shuffled_weights_and_response_are_aligned(frame):
    w = pd.Series(np.linspace(1, 2, 600), index=frame.index)
    ref = jdr.JointDimReduction(frame["y"], frame[NA], frame[NB], weights=w).fit(1)
    perm = np.random.default_rng(0).permutation(600)
    got = jdr.JointDimReduction(frame["y"], frame[NA], frame[NB], weights=w.iloc[perm]).fit(1)
    np.testing.assert_array_equal(got.singular_values, ref.singular_values)
    # endog shuffled: the blocks follow endog's order; the same rows, so the
    # same fit up to the rounding of sums taken in another order
    plain = jdr.JointDimReduction(frame["y"], frame[NA], frame[NB]).fit(1)
    got_y = jdr.JointDimReduction(frame["y"].iloc[perm], frame[NA], frame[NB]).fit(1)
    np.testing.assert_allclose(got_y.singular_values, plain.singular_values,
                               rtol=1e-10, atol=1e-12 * plain.singular_values[0])
    assert got_y.model.data.row_index.equals(frame.index[perm])
    np.testing.assert_array_equal(got_y.model.exog_a, frame[NA].to_numpy()[perm])


def test_baselines_align_too(frame):
    shuffled = frame[NA].sample(frac=1, random_state=1)
    ref = jdr.SIR(frame["y"], frame[NA]).fit(n_slices=5)
    got = jdr.SIR(frame["y"], shuffled).fit(n_slices=5)
    np.testing.assert_allclose(got.eigenvalues, ref.eigenvalues, rtol=1e-12)


def test_different_labels_are_refused(frame):
    other = frame[NA].reset_index(drop=True)
    with pytest.raises(ValueError, match=r"the row index of exog_a differs from that of endog: "
                                         r"600 label\(s\) of exog_a are not in endog"):
        jdr.JointDimReduction(frame["y"], other, frame[NB])
    with pytest.raises(ValueError, match="never by position"):
        jdr.JointDimReduction(frame["y"], frame[NA], frame[NB].iloc[:-1].set_axis(
            frame.index[1:]))
    w = pd.Series(np.ones(600))
    with pytest.raises(ValueError, match="the row index of weights differs from that of endog"):
        jdr.JointDimReduction(frame["y"], frame[NA], frame[NB], weights=w)
    # arrays are combined by position, as given
    jdr.JointDimReduction(frame["y"], frame[NA].to_numpy(), frame[NB])


def test_duplicated_labels_are_refused(frame):
    dup = frame[NB].set_axis(frame.index[:-1].append(frame.index[:1]))
    with pytest.raises(ValueError, match=r"exog_b's index has duplicated labels \(e.g. \['r0'\]\)"):
        jdr.JointDimReduction(frame["y"], frame[NA], dup)
    # identical indexes, duplicates and all, are the same rows
    same = frame.set_axis(frame.index[:-1].append(frame.index[:1]))
    jdr.JointDimReduction(same["y"], same[NA], same[NB])


def test_formula_data_is_one_frame(frame):
    shuffled = frame.sample(frac=1, random_state=2)
    formula = "y ~ a0 + a1 + a2 + a3 | b0 + b1 + b2"
    got = jdr.JointDimReduction.from_formula(formula, shuffled).fit(1)
    ref = jdr.JointDimReduction(shuffled["y"], shuffled[NA], shuffled[NB]).fit(1)
    np.testing.assert_array_equal(got.singular_values, ref.singular_values)
    assert got.model.data.row_index.equals(shuffled.index)


# -- the response inside a block --------------------------------------------------
def test_response_in_a_block_by_name(frame):
    a = frame[NA].assign(y=frame["a0"] * 2.0)  # not the values, but the name
    with pytest.raises(ValueError, match="exog_a holds the response: its column 'y' has the name"):
        jdr.JointDimReduction(frame["y"], a, frame[NB])


def test_response_in_a_block_by_values(frame):
    b = frame[NB].assign(copy=frame["y"])
    with pytest.raises(ValueError, match=r"exog_b holds the response: its column 'copy' equals "
                                         r"endog \('y'\) in every row"):
        jdr.JointDimReduction(frame["y"], frame[NA], b)
    arr = np.column_stack([frame[NA].to_numpy(), frame["y"].to_numpy()])
    with pytest.raises(ValueError, match="exog_a holds the response: its column 'a4'"):
        jdr.JointDimReduction(frame["y"].to_numpy(), arr, frame[NB].to_numpy())
    with pytest.raises(ValueError, match="exog holds the response"):
        jdr.SIR(frame["y"], frame[NA].assign(z=frame["y"]))
    with pytest.raises(ValueError, match="exog_a holds the response"):
        jdr.JointDimReduction.from_formula("y ~ a0 + y | b0 + b1", frame)


def test_a_column_close_to_the_response_is_kept(frame):
    b = frame[NB].assign(near=frame["y"] + 1e-9 * np.arange(600))
    jdr.JointDimReduction(frame["y"], frame[NA], b)
    y = frame["y"].rename(None)  # an unnamed Series: the name "y" is a default
    jdr.JointDimReduction(y, frame[NA].assign(y=frame["a0"] ** 3), frame[NB])


# -- integer checks: a wrong type is a TypeError, a wrong value a ValueError -------
def test_integer_options_raise_typeerror_for_a_wrong_type(frame):
    from jdr_stats.resampling._progress import check_n_jobs, run_batches
    from jdr_stats.streams._sources import ArraySource, DaskSource
    from jdr_stats.inference.poisson_bootstrap import poisson_moments
    from jdr_stats.sparse import check_sparsity

    y, a, b = frame["y"].to_numpy(), frame[NA].to_numpy(), frame[NB].to_numpy()
    with pytest.raises(TypeError, match=r"n_jobs must be an integer; got 1\.5"):
        check_n_jobs(1.5)
    with pytest.raises(ValueError, match="n_jobs must be None or a nonzero integer; got 0"):
        check_n_jobs(0)
    with pytest.raises(TypeError, match=r"n_total must be an integer; got 2\.0"):
        run_batches(len, 2.0, seed=0)
    with pytest.raises(ValueError, match="batch_size must be at least 1; got 0"):
        run_batches(len, 2, seed=0, batch_size=0)
    with pytest.raises(TypeError, match="batch_rows must be an integer; got '9'"):
        ArraySource(y, a, b, batch_rows="9")
    with pytest.raises(TypeError, match="inner must be True or False; got 'yes'"):
        poisson_moments(ArraySource(y, a, b), 3, inner="yes")
    with pytest.raises(TypeError, match=r"sparsity s2 must be an integer; got 2\.0"):
        check_sparsity((2, 2.0), 4, 3, rank=1)
    da = pytest.importorskip("dask.array")
    dy, dA, dB = (da.from_array(x, chunks=200) for x in (y, a, b))
    with pytest.raises(TypeError, match=r"split_every must be an integer; got 4\.0"):
        DaskSource(dy, dA, dB, split_every=4.0)
    with pytest.raises(ValueError, match="split_every must be at least 2; got 1"):
        DaskSource(dy, dA, dB, split_every=1)


def test_robust_rank_options_raise_typeerror_for_a_wrong_type(frame):
    from jdr_stats.inference.rank_robust import ladle_rank, wald_rank_test
    from tests.test_rank_robust import _whiten

    yc, aw, bw, u, s, v = _whiten(frame["y"].to_numpy(), frame[NA].to_numpy(),
                                  frame[NB].to_numpy())
    with pytest.raises(TypeError, match=r"batch_rows must be an integer; got 1\.5"):
        wald_rank_test(yc, aw, bw, u, s, v, 0, batch_rows=1.5)
    with pytest.raises(TypeError, match=r"n_boot must be an integer; got 10\.0"):
        ladle_rank(yc, aw, bw, u, s, v, n_boot=10.0)
    with pytest.raises(TypeError, match=r"kmax must be an integer; got 1\.0"):
        ladle_rank(yc, aw, bw, u, s, v, kmax=1.0)
    with pytest.raises(ValueError, match="kmax must be between 0 and 2; got 3"):
        ladle_rank(yc, aw, bw, u, s, v, kmax=3)


def test_plot_options_raise_typeerror_for_a_wrong_type(frame):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from jdr_stats import plotting

    res = jdr.JointDimReduction(frame["y"], frame[NA], frame[NB]).fit(1)
    with pytest.raises(TypeError, match=r"gridsize must be an integer; got 2\.5"):
        plotting.plot_response_surface(res, gridsize=2.5)
    with pytest.raises(ValueError, match="gridsize must be at least 3; got 2"):
        plotting.plot_response_surface(res, gridsize=2)


def test_unstandardized_fit_of_sums_gets_its_rank_tests(frame):
    moms = jdr.Moments.from_arrays(frame["y"], frame[NA], frame[NB])
    from_sums = jdr.JointDimReduction.from_moments(moms).fit(1, whitening="none")
    rows = jdr.JointDimReduction(frame["y"], frame[NA], frame[NB]).fit(1, whitening="none")
    got, want = from_sums.rank_tests("chi2").table, rows.rank_tests("chi2").table
    np.testing.assert_allclose(got["statistic"], want["statistic"], rtol=1e-10)


# -- property: any reordering of the labelled inputs gives the same arrays ---------
def test_alignment_is_a_property_of_the_labels(frame):
    hyp = pytest.importorskip("hypothesis")
    st = hyp.strategies
    w = pd.Series(np.linspace(1, 2, 600), index=frame.index)
    ref = ModelData.from_inputs(
        frame["y"], {"exog_a": (frame[NA], "a"), "exog_b": (frame[NB], "b")}, weights=w
    )

    @hyp.settings(max_examples=25, deadline=None, derandomize=True)
    @hyp.given(seed=st.integers(0, 2**32 - 1), which=st.sets(st.sampled_from("abw"), min_size=1))
    def check(seed, which):
        rng = np.random.default_rng(seed)
        perm = {k: rng.permutation(600) if k in which else np.arange(600) for k in "abw"}
        got = ModelData.from_inputs(
            frame["y"],
            {"exog_a": (frame[NA].iloc[perm["a"]], "a"),
             "exog_b": (frame[NB].iloc[perm["b"]], "b")},
            weights=w.iloc[perm["w"]],
        )
        for name in ("exog_a", "exog_b"):
            np.testing.assert_array_equal(got.blocks[name], ref.blocks[name])
        np.testing.assert_array_equal(got.weights, ref.weights)
        assert got.row_index.equals(ref.row_index)

    check()


def test_simulation_sparsity_is_an_integer():
    with pytest.raises(TypeError, match=r"s1 must be an integer; got 2\.5"):
        jdr.simulate.bilinear(100, 5, 5, 2, s1=2.5)
    with pytest.raises(ValueError, match=r"s2 must be between 2 and 5 \(r and n2\); got 6"):
        jdr.simulate.bilinear(100, 5, 5, 2, s2=6)


def test_transform_aligns_new_blocks(frame):
    res = jdr.JointDimReduction(frame["y"], frame[NA], frame[NB]).fit(1)
    new_a, new_b = frame[NA].iloc[:50], frame[NB].iloc[:50]
    want = res.transform(new_a, new_b)
    got = res.transform(new_a, new_b.iloc[::-1])
    pd.testing.assert_frame_equal(got, want)
    with pytest.raises(ValueError, match="the row index of exog_b differs from that of exog_a"):
        res.transform(new_a, new_b.reset_index(drop=True))
