"""Today's rank tests, bootstrap and support on the ais data against frozen outputs.

Two references, both checked: the default joint estimator
(tests/results/ais/reference_joint.json) and the paper's per-block estimator
(tests/results/ais/reference.json, ``independent_blocks=True``, frozen when
it was the default), each written by tests/results/ais/make_reference.py,
whose ``compute`` this test calls.  Its
NOTE.md derives the tolerances: perturbing every input by a relative 1e-15
(a few units in the last place, what another BLAS's rounding does) moved no
output by more than 1.3e-12 of its largest value, 1e-13 by no more than
1e-10; five OpenBLAS kernels of one machine agree to 3.7e-13
(tests/results/ais/cross_kernel.py; .ci/run runs this file under a second
kernel).  So each continuous quantity is compared with an absolute tolerance of
1e-8 times the largest value of its column (angles and p-values can be near
zero; an rtol alone would ask the impossible of them), and the Monte Carlo
p-values, counts of resamples over B + 1, must match exactly.
"""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent / "results" / "ais"
RTOL_OF_MAX = 1e-8


def _load_script():
    spec = importlib.util.spec_from_file_location("ais_make_reference", HERE / "make_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module", params=["joint", "per-block"])
def frozen_and_today(request):
    script = _load_script()
    want = json.loads(script.REFERENCES[request.param].read_text())
    return want, script.compute(request.param)


def _values(column):
    return np.array([np.nan if v is None else v for v in column], dtype=float)


def _close(got, want, name):
    got, want = _values(got), _values(want)
    assert got.shape == want.shape, name
    scale = np.nanmax(np.abs(want)) if np.isfinite(want).any() else 1.0
    np.testing.assert_allclose(got, want, rtol=0, atol=RTOL_OF_MAX * scale, err_msg=name)


def test_singular_values(frozen_and_today):
    want, got = frozen_and_today
    _close(got["singular_values"], want["singular_values"], "singular values")


def test_rank_test_table(frozen_and_today):
    want, got = frozen_and_today
    w, g = want["rank_tests"], got["rank_tests"]
    assert g["method"] == w["method"] and g["index"] == w["index"]
    for name, column in w["columns"].items():
        _close(g["columns"][name], column, f"rank tests: {name}")


def test_bootstrap_bounds(frozen_and_today):
    want, got = frozen_and_today
    w, g = want["bootstrap"], got["bootstrap"]
    for key in ("method", "interval", "alpha", "n_failed"):
        assert g[key] == w[key], key
    assert g["conf_int"]["index"] == w["conf_int"]["index"]
    for name, column in w["conf_int"]["columns"].items():
        _close(g["conf_int"]["columns"][name], column, f"bootstrap: {name}")
    blocks = sorted(w["max_angle_bound"])
    assert sorted(g["max_angle_bound"]) == blocks
    _close([g["max_angle_bound"][k] for k in blocks],
           [w["max_angle_bound"][k] for k in blocks], "bootstrap: max angle bound")


def test_support_table(frozen_and_today):
    want, got = frozen_and_today
    w, g = want["support"], got["support"]
    # the method's label changed wording once (a sentence, then a key): the
    # resampling scheme and its size are what the numbers depend on
    assert "wild" in w["method"] and "wild" in g["method"]
    assert g["n_resamples"] == w["n_resamples"]
    assert g["index"] == w["index"]
    for name in ("statistic", "df", "qvalue"):
        _close(g["columns"][name], w["columns"][name], f"support: {name}")
    # Monte Carlo p-values (1 + #{T* >= T}) / (B + 1): the counts match exactly
    b1 = w["n_resamples"] + 1
    counts = np.rint(_values(w["columns"]["pvalue"]) * b1)
    np.testing.assert_array_equal(np.rint(_values(g["columns"]["pvalue"]) * b1), counts)
    assert g["columns"]["selected"] == w["columns"]["selected"]


@pytest.mark.parametrize("name", ["reference.json", "reference_joint.json"])
def test_the_reference_names_its_provenance(name):
    want = json.loads((HERE / name).read_text())
    prov = want["provenance"]
    assert set(prov["versions"]) >= {"numpy", "scipy", "pandas", "statsmodels", "jdr_stats"}
    assert len(prov["commit"]) == 40
    # the test vocabulary: statistic, df, pvalue first (then qvalue)
    assert list(want["rank_tests"]["columns"])[:3] == ["statistic", "df", "pvalue"]
    assert list(want["support"]["columns"])[:4] == ["statistic", "df", "pvalue", "qvalue"]
