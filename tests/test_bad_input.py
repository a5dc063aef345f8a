"""Every bad input of the developers' guide gives a clear error naming it."""

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr

M = jdr.JointDimReduction


@pytest.fixture
def data(rng):
    sim = jdr.simulate.bilinear(200, 4, 3, 1, seed=rng)
    return sim.y, sim.a, sim.b


@pytest.mark.parametrize("which", ["endog", "exog_a", "exog_b"])
def test_nan(data, which):
    y, a, b = (x.copy() for x in data)
    {"endog": y, "exog_a": a, "exog_b": b}[which].flat[5] = np.nan
    with pytest.raises(ValueError, match=rf"{which}.*NaN.*missing=\"drop\""):
        M(y, a, b)
    with pytest.raises(ValueError, match=which):
        M(y, a, b, missing="raise")


@pytest.mark.parametrize("which", ["endog", "exog_a", "exog_b"])
def test_inf_even_with_drop(data, which):
    y, a, b = (x.copy() for x in data)
    {"endog": y, "exog_a": a, "exog_b": b}[which].flat[2] = np.inf
    with pytest.raises(ValueError, match=f"{which} contains infinite values"):
        M(y, a, b, missing="drop")


def test_mismatched_lengths(data):
    y, a, b = data
    with pytest.raises(ValueError, match="exog_b has 199 rows but endog has 200"):
        M(y, a, b[:-1])
    with pytest.raises(ValueError, match="exog_a has 150 rows"):
        M(y, a[:150], b)


def test_too_few_rows(data):
    y, a, b = data
    with pytest.raises(ValueError, match="too few rows"):
        M(y[:2], a[:2], b[:2])
    wide = np.column_stack([a, a**2, a**3])[:8]  # 12 columns, 8 rows
    with pytest.raises(ValueError, match=r'whitening="sample" needs at least 14 rows for exog_a '
                       r'\(12 columns.*got 8\. Use whitening="shrinkage"'):
        M(y[:8], wide, b[:8]).fit(1, whitening="sample")
    # the default (regularised) whitening and no whitening run on few rows, from
    # the fit's minimum of 2 (r + 1)^2 = 8 rows on (test below)
    assert M(y[:8], wide, b[:8]).fit(1).whitening == "shrinkage"
    M(y[:8], wide, b[:8]).fit(1, whitening="none")


@pytest.mark.parametrize("rank,msg", [(4, "between 0 and 3"), (-1, "got -1")])
def test_rank_out_of_range(data, rank, msg):
    with pytest.raises(ValueError, match=msg):
        M(*data).fit(rank)


@pytest.mark.parametrize("rank", [1.5, "two", None, True])
def test_rank_wrong_type(data, rank):
    with pytest.raises((TypeError, ValueError), match="rank"):
        M(*data).fit(rank)


@pytest.mark.parametrize(
    "sparsity,msg",
    [((2, 5), "s2 must be between the rank 2 and the block's 3 columns; got 5"),
     ((1, 3), "s1 must be between the rank 2"),
     ((2,), "pair"),
     ((2.5, 3), "s1 must be an integer"),
     ("dense", "sparsity must be")],
)
def test_sparsity_out_of_range(data, sparsity, msg):
    with pytest.raises((ValueError, TypeError), match=msg):
        M(*data).fit(2, sparsity=sparsity)


def test_constant_column(data):
    y, a, b = data
    a = a.copy()
    a[:, 2] = 3.0
    with pytest.raises(ValueError, match=r"exog_a has constant column\(s\) \['a2'\]"):
        M(y, a, b)


def test_collinear_columns(data):
    y, a, b = data
    b = np.column_stack([b, b[:, 0] - 2 * b[:, 2]])
    with pytest.raises(ValueError, match=r"exog_b has collinear columns \['b0', 'b2', 'b3'\]"):
        M(y, a, b).fit(1)


def test_collinear_named_dataframe(data):
    y, a, b = data
    a = pd.DataFrame(np.column_stack([a, a[:, 1] + a[:, 2]]),
                     columns=["w", "x", "y", "z", "x_plus_y"])
    with pytest.raises(ValueError, match=r"collinear columns \['x', 'y', 'x_plus_y'\]"):
        M(y, a, b).fit(1)


def test_response_one_value(data):
    _, a, b = data
    with pytest.raises(ValueError, match="endog has a single value"):
        M(np.full(200, 2.0), a, b)


def test_response_three_dimensional(data):
    # a 2-D endog is a multivariate response; 3-D is refused
    y, a, b = data
    with pytest.raises(ValueError, match="endog must be 1- or 2-dimensional"):
        M(np.stack([np.column_stack([y, y])] * 2, axis=2), a, b)


def test_non_numeric(data):
    y, a, b = data
    with pytest.raises(TypeError, match="exog_a must be numeric"):
        M(y, pd.DataFrame({"s": ["x"] * 200, "t": a[:, 0]}), b)


def test_missing_policy_value(data):
    with pytest.raises(ValueError, match="missing must be one of"):
        M(*data, missing="ignore")


def test_bad_weights(data):
    w = np.ones(200)
    w[0] = -1
    with pytest.raises(ValueError, match="weights must be positive"):
        M(*data, weights=w)
    with pytest.raises(ValueError, match="weights has 10 values"):
        M(*data, weights=np.ones(10))


def test_standardize_type(data):
    with pytest.raises(TypeError, match="standardize"):
        M(*data).fit(1, standardize="yes")


def test_no_columns(data):
    y, _, b = data
    with pytest.raises(ValueError, match="exog_a has no columns"):
        M(y, np.empty((200, 0)), b)


def test_none_input(data):
    y, a, _ = data
    with pytest.raises(TypeError, match="exog_b is required"):
        M(y, a, None)


def test_duplicate_names(data):
    y, a, b = data
    a = pd.DataFrame(a, columns=["p", "q", "p", "r"])
    with pytest.raises(ValueError, match="duplicate column names"):
        M(y, a, b)


def test_simulate_bad_arguments():
    with pytest.raises(ValueError, match="r must be at most"):
        jdr.simulate.bilinear(100, 3, 2, 3)
    with pytest.raises(ValueError, match="s1 must be between"):
        jdr.simulate.bilinear(100, 5, 5, 2, s1=1)
    with pytest.raises(ValueError, match="design must be one of"):
        jdr.simulate.binary(100, 5, 5, 2, design="normal")
    with pytest.raises(TypeError, match="seed"):
        jdr.simulate.bilinear(100, 5, 5, 2, seed="abc")


@pytest.mark.parametrize("bad,exc", [(2.5, TypeError), ("9", TypeError), (True, TypeError), (0, ValueError)])
def test_counts_follow_one_rule(data, bad, exc):
    """A non-integer count is a TypeError and an out-of-range one a ValueError,
    whichever function takes it (one check, in jdr_stats.runtime._validation)."""
    y, a, b = data
    model = M(y, a, b)
    res = model.fit(1)
    with pytest.raises(exc, match="n_perm"):
        res.rank_tests("permutation", n_perm=bad)
    with pytest.raises(exc, match="n_resamples"):
        model.select_support(method="permutation", n_resamples=bad)
    with pytest.raises(exc, match="n_boot"):
        res.bootstrap(n_boot=bad)


def test_validation_messages_name_argument_and_value():
    from jdr_stats.runtime import _validation as v

    with pytest.raises(ValueError, match=r"method must be one of \('x', 'y'\); got 'z'"):
        v.check_choice("z", "method", ("x", "y"))
    with pytest.raises(ValueError, match="k must be between 1 and 3; got 4"):
        v.check_int(4, "k", low=1, high=3)
    with pytest.raises(TypeError, match="level must be a number"):
        v.check_fraction("0.1", "level")
    with pytest.raises(TypeError, match="flag must be True or False; got 1"):
        v.check_bool(1, "flag")
    with pytest.raises(ValueError, match="too few rows to whiten exog_b with its sample covariance.*got 4"):
        v.check_rows_for_whitening(4, {"exog_a": 1, "exog_b": 3})
    g = np.random.default_rng(0)
    assert v.normalize_seed(g) is g


# ----------------------------------------------------------------------------
@pytest.mark.parametrize("whitening", ["sample", "shrinkage", "diagonal", "none"])
def test_duplicated_columns_all_named_at_once_for_every_whitening(data, whitening):
    y, a, b = data
    a = pd.DataFrame(np.column_stack([a, a[:, 0], a[:, 2], a[:, 0]]),
                     columns=["p", "q", "r", "s", "p2", "r2", "p3"])
    with pytest.raises(ValueError, match=r"exog_a has 3 duplicated column\(s\).*"
                                         r"'p' = 'p2' = 'p3'; 'r' = 'r2'"):
        M(y, a, b).fit(1, whitening=whitening)


def test_same_column_in_both_blocks_refused_by_name_and_by_value(data):
    y, a, b = data
    fa = pd.DataFrame(a, columns=["p", "q", "r", "s"])
    fb = pd.DataFrame(b, columns=["t", "u", "p"])
    with pytest.raises(ValueError, match=r"\['p'\] are in both exog_a and exog_b"):
        M(y, fa, fb)
    fb = pd.DataFrame(np.column_stack([b, a[:, 3]]), columns=["t", "u", "v", "w"])
    with pytest.raises(ValueError, match=r"both exog_a and exog_b.*'s' = 'w'"):
        M(y, fa, fb)
    # integer labels of pd.DataFrame(array) are positions, not names
    M(y, pd.DataFrame(a), pd.DataFrame(b))


def test_nan_message_names_the_columns(data):
    y, a, b = data
    a = pd.DataFrame(a, columns=["p", "q", "r", "s"])
    a.iloc[[3, 7], 1] = np.nan
    a.iloc[9, 3] = np.nan
    with pytest.raises(ValueError, match=r"exog_a: NaN in columns 'q' \(2 rows\), "
                                         r"'s' \(1 row\) \(3 of 200 rows"):
        M(y, a, b)


def test_rare_class_warning_only_for_classes_rare_in_the_design(rng):
    from jdr_stats.exceptions import RareClassWarning

    a, b = rng.standard_normal((2, 40, 3))
    balanced = pd.Categorical(np.repeat(list("vwxyz"), 8))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error", RareClassWarning)
        M(balanced, a, b)  # 8 per class, balanced: no class is rare
    skewed = pd.Categorical(["u"] * 36 + ["v"] * 4)
    with pytest.warns(RareClassWarning, match=r"\('v', 4\).*half the 20 rows"):
        M(skewed, a, b)


def test_fit_on_a_handful_of_rows_refused_below_the_stated_minimum(rng):
    """5 rows, 6 + 5 columns gave R-squared 0.94 on noise; the minimum is
    2 (r + 1)^2 rows (the R-squared of noise has expectation below 1/2)."""
    y, a, b = rng.standard_normal(5), rng.standard_normal((5, 6)), rng.standard_normal((5, 5))
    with pytest.raises(ValueError, match=r"rank-1 fit: got 5 observations, need at least "
                                         r"8 .*expected value of 0\.75"):
        M(y, a, b).fit(1)
    y, a, b = rng.standard_normal(17), rng.standard_normal((17, 6)), rng.standard_normal((17, 5))
    with pytest.raises(ValueError, match=r"rank-2 fit: got 17 observations, need at least 18"):
        M(y, a, b).fit(2)
    M(y, a, b).fit(1)  # 17 >= 8


def test_select_support_too_few_rows_advises_what_works(rng):
    """Its advice was the deprecated standardize=False."""
    y, a, b = rng.standard_normal(30), rng.standard_normal((30, 40)), rng.standard_normal((30, 5))
    with pytest.raises(ValueError, match=r"need at least 42; test at most 28 columns") as info:
        M(y, a, b).select_support(rank=1)
    assert "standardize" not in str(info.value)


def test_load_of_a_json_file_or_other_file_says_what_load_reads(data, tmp_path):
    """jdr.load on to_json's output raised a raw UnpicklingError."""
    res = M(*data).fit(1)
    path = tmp_path / "fit.json"
    res.to_json(path)
    with pytest.raises(ValueError, match=r"fit\.json': it holds JSON text, not a results "
                                         r"file.*results\.save\(path\).*json\.load"):
        jdr.load(path)
    other = tmp_path / "notes.txt"
    other.write_text("hello\n")
    with pytest.raises(ValueError, match=r"cannot load '.*notes\.txt'.*results\.save"):
        jdr.load(other)


def test_duplicates_and_shared_columns_caught_from_moments_too(data):
    """A model from sums (streamed sources, Moments) checks the same."""
    y, a, b = data
    dup = np.column_stack([a, a[:, 1]])
    with pytest.raises(ValueError, match=r"exog_a has 1 duplicated column\(s\).*'a1' = 'a4'"):
        M.from_moments(jdr.Moments.from_arrays(y, dup, b))
    shared = np.column_stack([b, a[:, 2] * 1.0])
    with pytest.raises(ValueError, match=r"both exog_a and exog_b.*'a2' = 'b3'"):
        M.from_moments(jdr.Moments.from_arrays(y, a, shared))
    M.from_moments(jdr.Moments.from_arrays(y, a, b)).fit(1)
