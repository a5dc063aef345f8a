"""progress= on the long loops; n_jobs= on the permutation tests and stability
selection, whose numbers do not depend on n_jobs."""

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.support import Stability

pytest.importorskip("joblib")


@pytest.fixture(scope="module")
def fitted():
    sim = jdr.simulate.bilinear(600, 5, 4, 1, s1=2, s2=2, seed=4)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    return model, model.fit(1)


def test_bootstrap_progress_callable(fitted):
    _, res = fitted
    seen = []
    res.bootstrap(150, seed=3, progress=lambda d, t: seen.append((d, t)))
    assert seen[-1] == (150, 150) and all(t == 150 for _, t in seen)
    assert [d for d, _ in seen] == sorted(d for d, _ in seen)


def test_permutation_rank_tests_same_numbers_any_n_jobs(fitted):
    _, res = fitted
    seen = []
    one = res.rank_tests("permutation", n_perm=199, seed=5,
                         progress=lambda d, t: seen.append((d, t)))
    two = res.rank_tests("permutation", n_perm=199, seed=5, n_jobs=2)
    np.testing.assert_array_equal(one.table["pvalue"], two.table["pvalue"])
    assert seen and seen[-1][0] == seen[-1][1]


def test_stability_selection_same_numbers_any_n_jobs(fitted):
    model, _ = fitted
    seen = []
    kw = dict(rank=1, rule=Stability(n_subsamples=21, sparsity=(2, 2)), seed=6)
    one = model.select_support(**kw, progress=lambda d, t: seen.append((d, t)))
    two = model.select_support(**kw, n_jobs=2)
    np.testing.assert_array_equal(one.table["frequency"], two.table["frequency"])
    assert seen[-1] == (21, 21)
    # frequencies are counts over 21 half-samples
    freq = one.table["frequency"].to_numpy()
    np.testing.assert_allclose(freq * 21, np.round(freq * 21), atol=1e-9)


def test_spectral_rank_tests_same_numbers_any_n_jobs(fitted):
    _, res = fitted
    one = res.rank_tests("spectral", n_perm=59, seed=5, max_rank=2)
    two = res.rank_tests("spectral", n_perm=59, seed=5, max_rank=2, n_jobs=2)
    np.testing.assert_array_equal(one.table["pvalue"], two.table["pvalue"])


def test_spectral_and_combined_of_q_columns_same_numbers_any_n_jobs():
    """The q-column flips (theory 6g) in joblib workers give the same table."""
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((400, 6)), rng.standard_normal((400, 5))
    y = rng.standard_normal((400, 3))
    y[:, 0] += 2 * a[:, 0] * b[:, 0]
    res = jdr.JointDimReduction(y, a, b).fit(1)
    for method in ("spectral", "combined"):
        seen: list[tuple[int, int]] = []
        one = res.rank_tests(method, n_perm=59, seed=5, max_rank=2,
                             progress=lambda done, total, seen=seen: seen.append((done, total)))
        two = res.rank_tests(method, n_perm=59, seed=5, max_rank=2, n_jobs=2)
        pd.testing.assert_frame_equal(one.table, two.table)
        if one.table["n_flips"].max() > 0:  # progress reached the flips drawn
            assert seen and seen[-1][0] >= one.table["n_flips"].max()
