"""One estimator policy: the estimator asked for is the estimator fitted, and
the rank tests, the bootstrap and the support of a fit are those of the
fitted estimator (compared with a recomputation from the fit's own pieces),
at K = 2, 3 and 5."""

import json
import re
import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.core._linalg import principal_angles
from jdr_stats.cli import main
from jdr_stats.exceptions import RankSelectionWarning


def _blocks(widths, m=800, rho=0.3, seed=0, signal=True):
    """Blocks sharing one latent column (correlated), y through products of
    the blocks' first columns: their product for two blocks, two pairs and the
    three-way product for three, three pairs for more."""
    rng = np.random.default_rng(seed)
    shared = rng.normal(size=(m, 1))
    xs = [np.sqrt(1 - rho) * rng.normal(size=(m, n)) + np.sqrt(rho) * shared for n in widths]
    u = [x[:, 0] for x in xs]
    y = rng.normal(size=m)
    if signal:
        if len(u) == 2:
            y = 0.5 * y + u[0] * u[1]
        elif len(u) == 3:
            y = 0.5 * y + u[0] * u[1] + u[1] * u[2] + u[0] * u[1] * u[2]
        else:
            y = 0.5 * y + u[0] * u[1] + u[2] * u[3] + u[3] * u[4]
    return y, xs


def _max_angle_deg(a, b):
    assert np.shape(a) == np.shape(b)
    # a block of rank 0 (no evidence) has no direction and no angle
    return float(np.degrees(np.max(principal_angles(np.asarray(a), np.asarray(b)),
                                   initial=0.0)))


def _summary_estimator(res):
    found = re.search(r"Estimator:\s+(\S+)", str(res.summary()))
    assert found is not None
    return found.group(1)


@pytest.mark.parametrize(("widths", "m"), [((4, 4, 4), 500), ((3, 3, 3, 3, 3), 300)])
@pytest.mark.parametrize("independent", [False, True])
def test_kblock_auto_and_given_rank_fit_one_estimator_and_its_tests(widths, m, independent):
    y, xs = _blocks(widths, m=m)
    model = jdr.JointDimReduction.from_blocks(y, xs)
    with warnings.catch_warnings():  # the test is of the estimator, not of the evidence
        warnings.simplefilter("ignore", RankSelectionWarning)
        auto = model.fit("auto", independent_blocks=independent)
    given = model.fit(auto.rank, independent_blocks=independent)
    name = "per-block" if independent else "joint"
    for res in (auto, given):
        assert res.settings["estimator"] == name
        assert res.to_dict()["settings"]["estimator"] == name
        assert _summary_estimator(res) == name
    for block in model.block_names:
        assert _max_angle_deg(auto.directions[block], given.directions[block]) < 1e-8
    # the rank tests' statistic at rank r is the sum of the fit's own
    # eigenvalues beyond r: the tests are the fitted estimator's
    tests = given.rank_tests().tables
    other = model.fit(auto.rank, independent_blocks=not independent)
    for block in model.block_names:
        values = given.eigenvalues[block].to_numpy()
        tails = np.cumsum(values[::-1])[::-1][:len(tests[block])]
        np.testing.assert_allclose(tests[block]["statistic"].to_numpy(), tails, rtol=1e-10)
        # those of fit("auto") are the same tests, up to its stopping rank
        records = [r for r in auto.to_dict()["rank_tests"]["tests"] if r["block"] == block]
        chosen = pd.DataFrame(records).set_index("rank")
        np.testing.assert_allclose(chosen["statistic"].to_numpy(),
                                   tests[block]["statistic"].to_numpy()[:len(chosen)],
                                   rtol=1e-10)
        # ... and not the other estimator's (the comparison could fail)
        values_other = other.eigenvalues[block].to_numpy()
        assert not np.allclose(np.cumsum(values_other[::-1])[::-1][:len(tests[block])],
                               tails, rtol=1e-6)


@pytest.mark.parametrize("widths", [(4, 4, 4), (3, 3, 3, 3, 3)])
def test_kblock_bootstrap_refits_the_fitted_estimator(widths):
    y, xs = _blocks(widths, m=300, seed=2)
    model = jdr.JointDimReduction.from_blocks(y, xs)
    res = model.fit(1)
    assert res.settings["estimator"] == "joint"
    with warnings.catch_warnings():  # a weak gap is not this test's question
        warnings.simplefilter("ignore", jdr.exceptions.WeakGapWarning)
        boot = res.bootstrap(4, seed=7, alpha=0.4)
    # the same replicates by hand: rows resampled, the joint estimator refitted
    rng = np.random.default_rng(7)
    angles = np.zeros((4, len(widths)))
    for b in range(4):
        idx = rng.integers(0, y.size, size=y.size)
        rep = jdr.JointDimReduction.from_blocks(y[idx], [x[idx] for x in xs]).fit(
            1, independent_blocks=False, whitening=res.settings["whitening"])
        assert rep.settings["estimator"] == "joint"
        for k, block in enumerate(model.block_names):
            # in the block's covariance metric, as every bootstrap measures
            chol = np.linalg.cholesky(np.cov(xs[k], rowvar=False))
            angles[b, k] = _max_angle_deg(chol.T @ np.asarray(res.directions[block]),
                                          chol.T @ np.asarray(rep.directions[block]))
    np.testing.assert_allclose(boot.table["median"].to_numpy(), np.median(angles, axis=0),
                               rtol=1e-8, atol=1e-10)
    # the bound: the ceil((B + 1) level)-th smallest replicate angle
    np.testing.assert_allclose(boot.table["upper"].to_numpy(),
                               np.sort(angles, axis=0)[2], rtol=1e-8, atol=1e-10)


@pytest.mark.parametrize("independent", [False, True])
def test_two_blocks_auto_given_tests_and_support_are_the_fitted_estimators(independent):
    y, (a, b) = _blocks((5, 4), m=1000, rho=0.0, seed=1)
    model = jdr.JointDimReduction(y, a, b)
    auto = model.fit("auto", independent_blocks=independent)
    given = model.fit(auto.rank, independent_blocks=independent)
    name = "per-block" if independent else "joint"
    for res in (auto, given):
        assert res.settings.estimator.name == name
        assert res.to_dict()["choices"]["estimator"]["name"] == name
    assert _max_angle_deg(auto.directions_a, given.directions_a) < 1e-8
    assert _max_angle_deg(auto.directions_b, given.directions_b) < 1e-8
    # the normal-theory rank statistic recomputed from the fit's own
    # singular values: m sum_{j > k} s_j^2 / var(y)
    table = given.rank_tests(method="chi2").table
    s2 = given.singular_values**2
    tails = y.size * np.cumsum(s2[::-1])[::-1] / np.var(y)
    np.testing.assert_allclose(table["statistic"].to_numpy(), tails[:len(table)], rtol=1e-10)
    other = model.fit(auto.rank, independent_blocks=not independent)
    s2o = other.singular_values**2
    assert not np.allclose(y.size * np.cumsum(s2o[::-1])[::-1] / np.var(y), tails, rtol=1e-6)
    # support: select_support of the estimator is the fit's own coordinate test
    sparse = model.fit(1, sparsity="auto", independent_blocks=independent, seed=0)
    sup = model.select_support(rank=1, independent_blocks=independent, seed=0)
    np.testing.assert_allclose(sparse.support_tests.statistics.to_numpy(),
                               sup.statistics.to_numpy(), rtol=1e-10)
    sup_other = model.select_support(rank=1, independent_blocks=not independent, seed=0)
    assert not np.allclose(sup_other.statistics.to_numpy(), sup.statistics.to_numpy(),
                           rtol=1e-6)


@pytest.mark.parametrize("widths", [(4, 4, 4), (3, 3, 3, 3, 3)])
def test_kblock_fit_auto_warns_where_no_block_shows_evidence(widths):
    y, xs = _blocks(widths, m=300, seed=4, signal=False)
    model = jdr.JointDimReduction.from_blocks(y, xs)
    with pytest.warns(RankSelectionWarning, match=r"no rank test rejected H0: rank_k <= 0 "
                      r"for block\(s\) 'block1' \(p = [0-9.e-]+\)"):
        res = model.fit("auto")
    assert all(r == 0 for r in res.ranks.values())  # rank 0: no evidence
    # the warning names exactly the blocks whose rank-0 test is not rejected
    tests = res.rank_tests().tables  # all ranks, no warning
    assert all(t["pvalue"].iloc[0] >= 0.05 for t in tests.values())


def test_cli_rank_auto_and_rank_one_report_the_same_estimator(tmp_path, capsys):
    y, xs = _blocks((4, 3, 3), m=500, seed=3)
    cols = {"g": [f"g{j}" for j in range(4)], "l": [f"l{j}" for j in range(3)],
            "c": [f"c{j}" for j in range(3)]}
    frame = pd.DataFrame(np.column_stack([y, *xs]),
                         columns=["y", *cols["g"], *cols["l"], *cols["c"]])
    path = tmp_path / "three.csv"
    frame.to_csv(path, index=False)
    base = ["fit", str(path), "--y", "y", "--block", "g=g*", "--block", "l=l*",
            "--block", "c=c*"]
    reported = []
    for rank in ("auto", "1"):
        assert main([*base, "--rank", rank]) == 0
        text = " ".join(capsys.readouterr().out.split())
        found = re.search(r"Estimator:\s+(\S+)", text)
        reason = re.search(r"Estimator: \S+ \((default: [^.]*)", text)
        assert found is not None and reason is not None
        reported.append((found.group(1), reason.group(1)))
    assert reported[0] == reported[1] and reported[0][0] == "joint"
    two = ["fit", str(path), "--y", "y", "--a", ",".join(cols["g"]), "--b",
           ",".join(cols["l"]), "--format", "json"]
    names = []
    for rank in ("auto", "1"):
        assert main([*two, "--rank", rank]) == 0
        doc = json.loads(capsys.readouterr().out)
        names.append(doc["choices"]["estimator"]["name"])
    assert names == ["joint", "joint"]
