"""Results without their data: pickled small, what still works and what raises."""

import pickle

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.exceptions import RowsNotInMemoryError


@pytest.fixture(scope="module")
def fitted():
    sim = jdr.simulate.bilinear(5000, 5, 4, 2, seed=8)
    a = pd.DataFrame(sim.a, columns=[f"x{j}" for j in range(5)])
    b = pd.DataFrame(sim.b, columns=[f"z{j}" for j in range(4)])
    res = jdr.JointDimReduction(pd.Series(sim.y, name="resp"), a, b).fit(2)
    res.rank_tests()
    return sim, a, b, res


def test_remove_data_keeps_estimates(fitted):
    sim, a, b, res = fitted
    small = res.remove_data()
    assert small.data_removed and not res.data_removed
    # no empty arrays left behind: the rows are asked for and refused
    with pytest.raises(RowsNotInMemoryError, match="the data of exog_a needs the model's data"):
        _ = small.model.exog_a
    assert res.model.exog_a.shape == (5000, 5)
    assert small.model.exog_names_a == res.model.exog_names_a and small.model.nobs == 5000
    back = pickle.loads(pickle.dumps(small))
    assert back.nobs == 5000
    pd.testing.assert_frame_equal(back.directions_a, res.directions_a)
    np.testing.assert_array_equal(back.singular_values, res.singular_values)
    pd.testing.assert_frame_equal(back.transform(a.iloc[:10], b.iloc[:10]),
                                  res.transform(a.iloc[:10], b.iloc[:10]))
    assert str(back.summary()) == str(res.summary())  # rank tests kept
    # the size no longer grows with the number of rows
    assert len(pickle.dumps(small)) < len(pickle.dumps(res)) / 20


@pytest.mark.parametrize("call", [
    lambda r: r.transform(),
    lambda r: r.rank_tests(),
    lambda r: r.bootstrap(99, seed=0),
])
def test_what_needs_the_rows_raises(fitted, call):
    small = fitted[3].remove_data()
    with pytest.raises(ValueError, match="remove_data"):
        call(small)


def test_plots_need_the_rows(fitted):
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    from jdr_stats import plotting

    with pytest.raises(ValueError, match="remove_data"):
        plotting.plot_sufficient_summary(fitted[3].remove_data())
