"""Case weights are frequency weights: whole-number weights fit as copies of rows."""

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats.runtime._frequency import frequency_nobs, whitening_nobs
from jdr_stats.core._linalg import principal_angles


def _data(m=60, n1=8, n2=6, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(m, n1))
    b = rng.normal(size=(m, n2)) + 0.3 * a[:, :n2]  # correlated blocks
    y = a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + 0.5 * rng.normal(size=m)
    w = rng.integers(1, 5, size=m).astype(float)
    return y, a, b, w


def _same_fit(r1, r2):
    np.testing.assert_allclose(r1.singular_values, r2.singular_values, rtol=1e-9)
    for d1, d2 in ((r1.directions_a, r2.directions_a), (r1.directions_b, r2.directions_b)):
        assert np.max(principal_angles(np.asarray(d1), np.asarray(d2))) < 1e-7


@pytest.mark.parametrize("independent", [True, False])
@pytest.mark.parametrize("whitening", ["auto", "shrinkage", "diagonal", "sample"])
def test_integer_weights_equal_repeated_rows(whitening, independent):
    """The OAS intensity and the auto choice count sum(w) observations, as
    the repeated rows do; the fit was the rows' count's (another intensity)."""
    y, a, b, w = _data()
    rep = np.repeat(np.arange(y.size), w.astype(int))
    weighted = jdr.JointDimReduction(y, a, b, weights=w).fit(
        2, whitening=whitening, independent_blocks=independent)
    repeated = jdr.JointDimReduction(y[rep], a[rep], b[rep]).fit(
        2, whitening=whitening, independent_blocks=independent)
    assert weighted.settings.whitening.name == repeated.settings.whitening.name
    _same_fit(weighted, repeated)


def test_auto_whitening_counts_the_weights():
    # 200 rows of weight 3: 600 observations of 8 + 6 columns; the joint
    # estimator's ratio (n1 + n2) / 600 < 0.05 gives the sample covariance
    # as for the 600 repeated rows (14 / 200 > 0.05 would give shrinkage)
    y, a, b, _ = _data(m=200)
    w = np.full(y.size, 3.0)
    res = jdr.JointDimReduction(y, a, b, weights=w).fit(1)
    rep = jdr.JointDimReduction(np.repeat(y, 3), np.repeat(a, 3, axis=0),
                                np.repeat(b, 3, axis=0)).fit(1)
    assert res.settings.whitening.name == rep.settings.whitening.name == "sample"
    _same_fit(res, rep)


def test_fractional_weights_are_relative():
    """Weights that are not whole numbers have no scale: any multiple gives
    the same fit, the shrinkage counting the rows."""
    y, a, b, w = _data(seed=1)
    w = w + 0.25
    r1 = jdr.JointDimReduction(y, a, b, weights=w).fit(1, whitening="shrinkage")
    r2 = jdr.JointDimReduction(y, a, b, weights=w * 1000.0 / 3.0).fit(1, whitening="shrinkage")
    _same_fit(r1, r2)
    assert frequency_nobs(60, w) == 60 and frequency_nobs(60, None) == 60


def test_too_few_rows_stay_counted_as_rows():
    # copies add no rank: a covariance of fewer rows than its width + 2 is
    # never "well estimated", whatever the weights
    assert whitening_nobs(10, frequency_nobs(10, np.full(10, 100.0)), 14) == 10
    assert whitening_nobs(16, frequency_nobs(16, np.full(16, 100.0)), 14) == 1600


def test_weighted_shrinkage_bootstrap_refits_with_the_fits_count():
    """A replicate of unit counts refits the fit itself: its shrinkage
    counts the observations the model's weights stand for, as the fit's."""
    from jdr_stats.inference._replicates import _refit

    y, a, b, w = _data(m=80, seed=2)
    res = jdr.JointDimReduction(y, a, b, weights=w).fit(2, whitening="shrinkage",
                                                           independent_blocks=True)
    data = res.model.data
    ctx = {"rank": 2, "standardize": True, "sparsity": None, "names_a": data.names["exog_a"],
           "names_b": data.names["exog_b"], "whitening": "shrinkage",
           "count": int(w.sum())}
    est = _refit(ctx, data.moments(np.ones(y.size)))
    np.testing.assert_allclose(est.singular_values, res.singular_values, rtol=1e-10)
    boot = res.bootstrap(n_boot=19, seed=3)
    assert boot.n_boot == 19 and np.isfinite(boot.angles_a).all()
