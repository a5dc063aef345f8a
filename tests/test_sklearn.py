"""The scikit-learn transformer: estimator checks, Pipeline, GridSearchCV."""

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("sklearn")

from sklearn.linear_model import LinearRegression  # noqa: E402
from sklearn.model_selection import GridSearchCV  # noqa: E402
from sklearn.pipeline import Pipeline  # noqa: E402
from sklearn.utils.estimator_checks import (  # noqa: E402
    check_estimator,
    parametrize_with_checks,
)

import jdr_stats as jdr  # noqa: E402
from jdr_stats.sklearn import JointDimReductionTransformer, expected_failed_checks  # noqa: E402


@pytest.fixture(scope="module")
def data():
    sim = jdr.simulate.bilinear(800, 4, 3, 1, seed=5)
    X = sim.frame.drop(columns="y")
    return sim, X


@parametrize_with_checks([JointDimReductionTransformer()],
                         expected_failed_checks=expected_failed_checks)
def test_default_parameters_pass_sklearn_checks(estimator, check):
    # the checks pass X without block names: the default split takes halves
    check(estimator)


def test_default_parameters_declare_no_failing_check():
    # integer sample weights equal repeated rows, shrinkage whitening included
    assert expected_failed_checks(JointDimReductionTransformer()) == {}
    check_estimator(JointDimReductionTransformer())  # raises on any failure


def test_check_estimator_unstandardized_passes_every_check():
    est = JointDimReductionTransformer(standardize=False)
    assert expected_failed_checks(est) == {}
    check_estimator(est)  # raises on any failure


def test_check_estimator_rank2_declares_narrow_data_checks():
    est = JointDimReductionTransformer(rank=2)
    failed = expected_failed_checks(est)
    assert failed and all("rank=2" in why for why in failed.values())
    # distinct rows below the rank-2 minimum, not the weights' treatment
    assert "distinct rows" in failed["check_sample_weight_equivalence_on_dense_data"]
    out = check_estimator(est, expected_failed_checks=failed, on_fail=None)
    assert not [r for r in out if r["status"] == "failed"]


def test_matches_model_transform(data):
    sim, X = data
    tr = JointDimReductionTransformer(rank=1, split="half").fit(X, sim.y)
    # split="half": first half (4 // 2 ... of 7 columns: 3) and the rest
    assert list(tr.columns_a_) == [0, 1, 2] and list(tr.columns_b_) == [3, 4, 5, 6]
    tr = JointDimReductionTransformer(rank=1, block_a=["a0", "a1", "a2", "a3"]).fit(X, sim.y)
    res = jdr.JointDimReduction(sim.y, X.iloc[:, :4], X.iloc[:, 4:]).fit(1)
    np.testing.assert_allclose(tr.transform(X), res.transform().to_numpy(), atol=1e-12)
    by_pos = JointDimReductionTransformer(rank=1, block_a=[0, 1, 2, 3], block_b=[4, 5, 6])
    np.testing.assert_allclose(by_pos.fit(X.to_numpy(), sim.y).transform(X.to_numpy()),
                               tr.transform(X), atol=1e-12)
    assert list(tr.get_feature_names_out()) == ["a_dir1", "b_dir1"]
    assert tr.results_.rank == 1 and tr.singular_values_.shape == (3,)


def test_set_output_pandas(data):
    sim, X = data
    tr = JointDimReductionTransformer(rank=1, block_b=["b0", "b1", "b2"]).set_output(
        transform="pandas")
    out = tr.fit(X, sim.y).transform(X)
    assert isinstance(out, pd.DataFrame)
    assert list(out.columns) == ["a_dir1", "b_dir1"] and out.index.equals(X.index)


def test_pipeline_and_grid_search(data):
    sim, X = data
    pipe = Pipeline([("jdr", JointDimReductionTransformer(block_a=["a0", "a1", "a2", "a3"])),
                     ("ols", LinearRegression())])
    grid = GridSearchCV(pipe, {"jdr__rank": [1, 2, 3]}, cv=3).fit(X, sim.y)
    assert grid.best_params_["jdr__rank"] in (1, 2, 3)
    assert set(grid.cv_results_["param_jdr__rank"]) == {1, 2, 3}
    assert np.isfinite(grid.cv_results_["mean_test_score"]).all()
    pred = grid.predict(X)
    assert pred.shape == (800,)


def test_bad_blocks(data):
    sim, X = data
    with pytest.raises(ValueError, match="no column 'zz'"):
        JointDimReductionTransformer(rank=1, block_a=["zz"]).fit(X, sim.y)
    with pytest.raises(ValueError, match="in both block_a and block_b"):
        JointDimReductionTransformer(rank=1, block_a=[0, 1], block_b=[1, 2]).fit(X, sim.y)
    with pytest.raises(ValueError, match="out of range"):
        JointDimReductionTransformer(rank=1, block_a=[9]).fit(X, sim.y)
    with pytest.raises(ValueError, match="no column names"):
        JointDimReductionTransformer(rank=1, block_a=["a0"]).fit(X.to_numpy(), sim.y)
    with pytest.raises(ValueError, match="rank must be between"):
        JointDimReductionTransformer(rank=4, block_a=[0, 1, 2, 3]).fit(X, sim.y)


@pytest.mark.parametrize("kind", ["str", "object"])
def test_strings_refused(data, kind):
    sim, X = data
    bad = X.astype(str) if kind == "str" else X.to_numpy().astype(str).astype(object)
    with pytest.raises(TypeError, match="X must be numeric"):
        JointDimReductionTransformer(rank=1).fit(bad, sim.y)


def test_default_split_is_half_and_split_none_refuses(data):
    sim, X = data
    tr = JointDimReductionTransformer().fit(X, sim.y)
    assert tr.rank == 1 and list(tr.columns_a_) == [0, 1, 2]
    assert list(tr.columns_b_) == [3, 4, 5, 6]
    with pytest.raises(ValueError, match=r'block_a and block_b are both None.*split="half"'):
        JointDimReductionTransformer(rank=1, split=None).fit(X, sim.y)
    with pytest.raises(ValueError, match=r"split must be None or \"half\"; got 'thirds'"):
        JointDimReductionTransformer(rank=1, split="thirds").fit(X, sim.y)
    # a given block wins over split
    tr = JointDimReductionTransformer(rank=1, block_a=["a0"], split="half").fit(X, sim.y)
    assert list(tr.columns_a_) == [0] and list(tr.columns_b_) == [1, 2, 3, 4, 5, 6]


def _three_blocks(m=900, seed=7):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, 10))
    y = X[:, 0] * X[:, 4] + X[:, 4] * X[:, 8] + 0.5 * rng.standard_normal(m)
    return pd.DataFrame(X, columns=[f"x{j}" for j in range(10)]), y


def test_three_blocks_give_every_blocks_features():
    """Issue 35: blocks=[cols_1, cols_2, cols_3] fits the K-block estimator and
    transforms to every block's reduced features, by names or positions."""
    X, y = _three_blocks()
    cols = [["x0", "x1", "x2", "x3"], ["x4", "x5", "x6"], ["x7", "x8", "x9"]]
    tr = JointDimReductionTransformer(rank=1, blocks=cols).fit(X, y)
    res = jdr.JointDimReduction.from_blocks(y, [X[c] for c in cols]).fit(1)
    np.testing.assert_allclose(tr.transform(X), res.transform().to_numpy(), rtol=1e-10,
                               atol=1e-12)
    assert list(tr.get_feature_names_out()) == ["block1_dir1", "block2_dir1", "block3_dir1"]
    assert tr.results_.ranks == {"block1": 1, "block2": 1, "block3": 1}
    by_pos = JointDimReductionTransformer(rank={"block1": 2, "block2": 1, "block3": 1},
                                          blocks=[[0, 1, 2, 3], [4, 5, 6], [7, 8, 9]])
    out = by_pos.fit(X.to_numpy(), y).transform(X.to_numpy()[:5])
    assert out.shape == (5, 4)
    np.testing.assert_allclose(out[:, 2:], tr.transform(X.iloc[:5])[:, 1:], atol=1e-10)
    # the training rows' features are centred (the weighted mean is the plain one here)
    np.testing.assert_allclose(tr.transform(X).mean(axis=0), 0, atol=1e-12)
    # in a Pipeline, with pandas output; a refit on two blocks drops the K-block state
    pipe = Pipeline([("jdr", JointDimReductionTransformer(rank=1, blocks=cols)),
                     ("ols", LinearRegression())]).set_output(transform="pandas")
    assert pipe.fit(X, y).score(X, y) < 1
    two = JointDimReductionTransformer(rank=1, blocks=cols)
    two.fit(X, y)
    two.set_params(blocks=[cols[0], cols[1] + cols[2]]).fit(X, y)
    assert not hasattr(two, "block_columns_") and two.transform(X).shape == (900, 2)


@pytest.mark.parametrize("blocks, match", [
    ([["x0", "x1"], ["x1", "x2"], ["x3"]], r"columns \[1\] are in both blocks\[0\] and blocks\[1\]"),
    ([["x0"], ["x2"], ["nope"]], "blocks\\[2\\]: X has no column 'nope'"),
    ([["x0"]], "two or more blocks"),
])
def test_three_blocks_bad_columns_are_named(blocks, match):
    X, y = _three_blocks(m=100)
    with pytest.raises(ValueError, match=match):
        JointDimReductionTransformer(rank=1, blocks=blocks).fit(X, y)


def test_string_labels_as_the_model_reads_them(data):
    sim, X = data
    labels = np.where(sim.y > np.quantile(sim.y, 0.66), "high",
                      np.where(sim.y < np.quantile(sim.y, 0.33), "low", "mid"))
    tr = JointDimReductionTransformer(block_a=["a0", "a1", "a2", "a3"]).fit(X, labels)
    res = jdr.JointDimReduction(labels, X.iloc[:, :4], X.iloc[:, 4:]).fit(1)
    assert res.model.data.response.kind == "categorical"
    np.testing.assert_allclose(tr.transform(X), res.transform().to_numpy(), atol=1e-10)


def test_two_dimensional_y_as_the_model_reads_it(data):
    sim, X = data
    y2 = np.column_stack([sim.y, sim.y**2])
    tr = JointDimReductionTransformer(block_a=["a0", "a1", "a2", "a3"]).fit(X, y2)
    res = jdr.JointDimReduction(y2, X.iloc[:, :4], X.iloc[:, 4:]).fit(1)
    np.testing.assert_allclose(tr.transform(X), res.transform().to_numpy(), atol=1e-10)
    one = JointDimReductionTransformer(block_a=["a0", "a1", "a2", "a3"])
    np.testing.assert_array_equal(one.fit(X, sim.y[:, None]).transform(X),
                                  one.fit(X, sim.y).transform(X))


def test_sample_weight_is_the_models_weights_and_zero_drops_rows(data):
    sim, X = data
    w = np.random.default_rng(3).integers(0, 4, size=len(sim.y)).astype(float)
    keep = w > 0
    tr = JointDimReductionTransformer(block_a=["a0", "a1", "a2", "a3"])
    out = tr.fit(X, sim.y, sample_weight=w).transform(X)
    res = jdr.JointDimReduction(sim.y[keep], X[keep].iloc[:, :4], X[keep].iloc[:, 4:],
                                weights=w[keep]).fit(1)
    np.testing.assert_allclose(out, res.transform(X.iloc[:, :4], X.iloc[:, 4:]).to_numpy(),
                               atol=1e-10)
    with pytest.raises(ValueError, match="[Nn]egative"):
        tr.fit(X, sim.y, sample_weight=-w)
