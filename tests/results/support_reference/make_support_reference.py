"""Reference p-values, statistics and selections of select_support (tests/test_support_loo.py).

Made with the library BEFORE the speed rewrite of the robust test (commit 7fb34fe: one
dense eigendecomposition per variable for the leave-one-out bases, the four
m x n arrays of ``prepare``, batched per-variable designs), python 3.11.7,
numpy 2.4.6, OMP_NUM_THREADS=1:

    git archive 7fb34fe jdr_stats | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old python tests/results/support_reference/make_support_reference.py \
        tests/results/support_reference/reference_7fb34fe.json

The test reruns ``cases()`` with the current library and compares.
"""

import inspect
import json
import sys
import warnings

import numpy as np

import jdr_stats as jdr


def cases():
    """{name: (model, select_support keyword arguments)}."""
    sim = jdr.simulate.bilinear(3000, 12, 10, 2, s1=3, s2=3, seed=1)
    model = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    rng = np.random.default_rng(5)
    out = {
        "default": (model, dict(rank=2, seed=0)),
        "marginal": (model, dict(seed=0)),
        "unstd": (model, dict(rank=2, seed=0, standardize=False)),
        "hc3": (model, dict(rank=2, method="chi2", covariance="hc3")),
        "perm": (model, dict(rank=2, seed=0, method="studentized-permutation",
                             n_resamples=99)),
        "factored": (model, dict(rank=2, method="chi2")),
        "sandwich": (model, dict(rank=2, method="chi2", covariance="sandwich")),
        "sandwich_marginal": (model, dict(method="chi2", covariance="sandwich")),
        "threshold": (model, dict(rank=2, seed=0, rule="threshold")),
    }
    sim2 = jdr.simulate.bilinear(2000, 40, 30, 3, seed=3)
    wide = jdr.JointDimReduction(sim2.y + rng.standard_t(3, 2000), sim2.a, sim2.b)
    out["wide"] = (wide, dict(rank=3, seed=2))
    y2 = np.column_stack([sim.y, sim.y**2 + rng.standard_normal(3000)])
    out["q2"] = (jdr.JointDimReduction(y2, sim.a, sim.b), dict(rank=2, seed=0))
    return out


def run(name, model, kw):
    # 7fb34fe had the paper's per-block estimator only; a library whose
    # default is the joint estimator (independent_blocks=False) is asked for
    # the per-block one, which these references are of
    if "independent_blocks" in inspect.signature(model.select_support).parameters:
        kw = {**kw, "independent_blocks": True}
    r = model.select_support(**kw)
    return {"p": r.table["pvalue"].tolist(), "stat": r.table["statistic"].tolist(),
            "sel": r.table["selected"].astype(int).tolist()}


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    json.dump({k: run(k, *v) for k, v in cases().items()}, open(sys.argv[1], "w"))
