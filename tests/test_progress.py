"""Progress reporting and seeded batches whose numbers do not depend on n_jobs."""

import sys

import numpy as np
import pytest

from jdr_stats.resampling import _progress
from jdr_stats.resampling._progress import progress_bar, run_batches


def _draw(rngs):
    return np.array([g.standard_normal(3) for g in rngs]).reshape(len(rngs), 3)


def test_numbers_do_not_depend_on_n_jobs():
    pytest.importorskip("joblib")
    serial = np.vstack(run_batches(_draw, 50, seed=7, batch_size=8))
    parallel = np.vstack(run_batches(_draw, 50, seed=7, batch_size=8, n_jobs=2))
    assert serial.shape == (50, 3)
    np.testing.assert_array_equal(serial, parallel)
    # nor on the batches: replicate i always draws from its own generator
    other_batches = np.vstack(run_batches(_draw, 50, seed=7, batch_size=13, n_jobs=2))
    np.testing.assert_array_equal(serial, other_batches)
    gens = _progress.replicate_generators(7, 50)
    np.testing.assert_array_equal(serial[17], gens[17].standard_normal(3))
    # the seed matters; a Generator seed works like an int seed
    other = np.vstack(run_batches(_draw, 50, seed=8, batch_size=8))
    assert not np.array_equal(serial, other)
    g1 = np.vstack(run_batches(_draw, 50, seed=np.random.default_rng(3), batch_size=8))
    g2 = np.vstack(run_batches(_draw, 50, seed=np.random.default_rng(3), batch_size=8))
    np.testing.assert_array_equal(g1, g2)


def test_replicates_are_independent_streams():
    out = np.vstack(run_batches(_draw, 4000, seed=1, batch_size=1000))
    # the three coordinates of 4000 replicates: correlations near 0
    # (|r| < 4.5 / sqrt(4000)) and unit variances (SE about 0.022)
    corr = np.corrcoef(out.T)[np.triu_indices(3, 1)]
    assert np.all(np.abs(corr) < 4.5 / np.sqrt(4000))
    np.testing.assert_allclose(out.var(axis=0), 1.0, atol=0.1)


def test_callable_progress_counts_replicates():
    seen = []
    run_batches(_draw, 10, seed=0, batch_size=4, progress=lambda d, t: seen.append((d, t)))
    assert seen == [(4, 10), (8, 10), (10, 10)]


def test_plain_lines_without_tqdm(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # import tqdm fails
    monkeypatch.setitem(sys.modules, "tqdm.auto", None)
    run_batches(_draw, 20, seed=0, batch_size=2, progress=True, desc="boot")
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 10 and lines[-1].startswith("boot: 20/20 (100%)")
    assert lines[0].startswith("boot: 2/20 (10%)")


def test_tqdm_bar_when_installed(capsys):
    pytest.importorskip("tqdm")
    with progress_bar(True, 5, "perm") as update:
        for _ in range(5):
            update(1)
    assert "perm" in capsys.readouterr().err


def test_silent_by_default(capsys):
    run_batches(_draw, 20, seed=0, batch_size=2)
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("kwargs,exc,msg", [
    ({"progress": "yes"}, TypeError, "progress must be"),
    ({"n_jobs": 0}, ValueError, "n_jobs must be"),
    ({"n_jobs": 1.5}, TypeError, "n_jobs must be an integer"),  # a wrong type
    ({"batch_size": 0}, ValueError, "batch_size must be"),
])
def test_bad_arguments(kwargs, exc, msg):
    with pytest.raises(exc, match=msg):
        run_batches(_draw, 10, seed=0, **kwargs)
    assert _progress.check_n_jobs(-1) == -1
