"""The trends of the paper's Figure 1, at reduced size (seeded).

Full-size curves: ``studies/study_paper_figure1.py``.  Each test fits the
log-log slope of the mean NSEE over a grid; the tolerance bands are several
times the slope's seed-to-seed standard deviation measured at these sizes
(about 0.02 for the m- and n-slopes).
"""

import numpy as np
import pytest

import jdr_stats as jdr


def _mean_nsee(model, m, n, r, reps, rng, s=None):
    errs = []
    for _ in range(reps):
        sim = getattr(jdr.simulate, model)(m, n, n, r, s1=s, s2=s, seed=rng)
        res = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit(
            r, sparsity=None if s is None else (s, s)
        )
        errs.append(jdr.metrics.nsee(sim.U, res.directions_a, sim.V, res.directions_b))
    return float(np.mean(errs))


def _slope(x, y):
    return float(np.polyfit(np.log(x), np.log(y), 1)[0])


@pytest.mark.parametrize(
    "model,grid,n,reps",
    [("bilinear", [2000, 4000, 8000, 16000], 10, 20), ("binary", [20000, 40000, 80000, 160000], 10, 20)],
)
def test_error_falls_like_inverse_sqrt_m(model, grid, n, reps):
    rng = np.random.default_rng(101)
    errs = [_mean_nsee(model, m, n, 2, reps, rng) for m in grid]
    assert -0.6 <= _slope(grid, errs) <= -0.4


def test_error_grows_like_sqrt_n():
    rng = np.random.default_rng(102)
    grid = [10, 20, 40, 80]
    errs = [_mean_nsee("bilinear", 20000, n, 2, 8, rng) for n in grid]
    assert 0.4 <= _slope(grid, errs) <= 0.6


def test_sparse_error_grows_with_s():
    # Theorem 2 bounds the error by O(s) (sqrt(s1 s2)); the paper's own
    # Figure 1 (column 4) has slopes 0.83 and 0.87; at this reduced size the
    # low-s end is flattened by the r-dimensional term of the bound.
    rng = np.random.default_rng(103)
    grid = [5, 10, 20, 40]
    errs = [_mean_nsee("bilinear", 10000, 100, 2, 6, rng, s=s) for s in grid]
    assert 0.55 <= _slope(grid, errs) <= 1.2
    # and the sparse fit beats the dense one when s << n
    dense = _mean_nsee("bilinear", 10000, 100, 2, 4, np.random.default_rng(104))
    sparse = _mean_nsee("bilinear", 10000, 100, 2, 4, np.random.default_rng(104), s=5)
    assert sparse < 0.5 * dense
