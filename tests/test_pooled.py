"""The pooled estimator: ``fit(rank, main_effects=True)`` (theory page
"K blocks", section 6; studies/study_pooled.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.fitting._kfit import KBlockFit
from jdr_stats.core.tensor import pieces
from jdr_stats.metrics import principal_angles


def _deg(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.degrees(np.max(principal_angles(np.asarray(a, float),
                                                    np.asarray(b, float)))))


def _design(m: int, seed: int, *, main: float, inter: float, K: int = 2):
    """Independent Gaussian blocks; block k's interaction direction e_0 and
    main-effect direction e_1."""
    rng = np.random.default_rng(seed)
    widths = (6, 5, 4)[:K]
    xs = [rng.normal(size=(m, n)) for n in widths]
    y = inter * xs[0][:, 0] * xs[1][:, 0] + main * sum(x[:, 1] for x in xs) \
        + 0.5 * rng.normal(size=m)
    return y, xs


def test_pieces_with_main_effects():
    assert pieces(2, main_effects=True) == ((0,), (1,), (0, 1))
    assert pieces(3, main_effects=True)[:3] == ((0,), (1,), (2,))
    assert pieces(3) == ((0, 1), (0, 2), (1, 2), (0, 1, 2))


def test_pooled_recovers_a_main_effect_the_cross_moment_cannot_see():
    y, (a, b) = _design(2000, 0, main=1.0, inter=0.0)
    mod = jdr.JointDimReduction(y, a, b)
    pooled = mod.fit(1, main_effects=True, independent_blocks=True)
    inter = mod.fit(1, independent_blocks=True)
    e1a, e1b = np.eye(6)[:, [1]], np.eye(5)[:, [1]]
    assert isinstance(pooled._impl, KBlockFit)
    assert _deg(pooled.directions["a"], e1a) < 10
    assert _deg(pooled.directions["b"], e1b) < 10
    assert _deg(inter.directions_a, e1a) > 30  # E[y a' b'^T] = 0: noise only
    # the two-block view of the K-block results (DESIGN: directions_a is the K = 2 view)
    np.testing.assert_array_equal(np.asarray(pooled.directions_a, float),
                                  np.asarray(pooled.directions["a"], float))


def test_categorical_classes_shifting_the_means():
    rng = np.random.default_rng(3)
    m = 900
    cls = rng.integers(0, 3, m)
    shift = np.array([-1.0, 0.0, 1.0])[cls]
    a = rng.normal(size=(m, 5))
    b = rng.normal(size=(m, 4))
    a[:, 2] += shift
    b[:, 0] -= shift
    res = jdr.JointDimReduction(pd.Categorical(cls), a, b).fit(
        1, main_effects=True, independent_blocks=True)
    assert _deg(res.directions["a"], np.eye(5)[:, [2]]) < 10
    assert _deg(res.directions["b"], np.eye(4)[:, [0]]) < 10


def test_without_main_effects_the_limit_is_the_interaction_subspace():
    # no main effect: the first moment's population value is zero and its
    # noise Gram isotropic, so both estimators converge to span(U_k)
    y, (a, b) = _design(20000, 1, main=0.0, inter=1.0)
    mod = jdr.JointDimReduction(y, a, b)
    pooled = mod.fit(1, main_effects=True, independent_blocks=True)
    inter = mod.fit(1, independent_blocks=True)
    assert _deg(pooled.directions["a"], inter.directions_a) < 2
    assert _deg(pooled.directions["b"], inter.directions_b) < 2


def test_both_parts_seen_and_auto_ranks_k3():
    y, xs = _design(1500, 2, main=1.0, inter=1.0, K=3)
    mod = jdr.JointDimReduction.from_blocks(y, xs)
    res = mod.fit("auto", main_effects=True, independent_blocks=True)
    # blocks 1, 2: interaction e_0 and main effect e_1; block 3: main effect only
    assert res.rank == {"block1": 2, "block2": 2, "block3": 1}
    assert _deg(res.directions["block1"], np.eye(6)[:, :2]) < 10
    assert _deg(res.directions["block3"], np.eye(4)[:, [1]]) < 10
    assert res.main_effects and "main effects and interactions" in str(res.summary())
    inter = mod.fit(1, independent_blocks=True)
    assert not inter.main_effects and "not main effects" in str(inter.summary())


def test_influences_of_the_first_moment_analytic_and_jackknife_agree():
    # unit case weights send the tests through delete-one refits; the
    # statistic is the same and the two references close
    y, (a, b) = _design(400, 4, main=0.7, inter=0.7)
    plain = jdr.JointDimReduction(y, a, b).fit(1, main_effects=True,
                                               independent_blocks=True).rank_tests()
    jk = jdr.JointDimReduction.from_blocks(y, {"a": a, "b": b}, weights=np.ones(400))
    jack = jk.fit(1, main_effects=True, independent_blocks=True).rank_tests()
    for n in ("a", "b"):
        t0, t1 = plain.tables[n], jack.tables[n]
        np.testing.assert_allclose(t0["statistic"], t1["statistic"], rtol=1e-8)
        np.testing.assert_allclose(t0["eff_df"].iloc[2:], t1["eff_df"].iloc[2:], rtol=0.25)


def test_joint_whitening_reads_main_effects_given_the_other_block():
    # y depends on block a only; b correlates with a, so b's marginal first
    # moment is not zero, but its first moment given a is
    rng = np.random.default_rng(5)
    m = 1500
    a = rng.normal(size=(m, 4))
    b = 0.8 * a[:, [0, 1, 2]] + 0.6 * rng.normal(size=(m, 3))
    y = a[:, 0] + 0.5 * rng.normal(size=m)
    mod = jdr.JointDimReduction(y, a, b)
    per_block = mod.fit(1, main_effects=True, independent_blocks=True).rank_tests()
    joint = mod.fit(1, main_effects=True, independent_blocks=False).rank_tests()
    assert per_block.tables["b"].loc[0, "pvalue"] < 1e-6
    assert joint.tables["b"].loc[0, "pvalue"] > 0.01
    assert joint.tables["a"].loc[0, "pvalue"] < 1e-6


def test_invariant_to_rescaling_shifting_and_reordering_columns():
    y, (a, b) = _design(800, 6, main=0.8, inter=0.8)
    rng = np.random.default_rng(7)
    res = jdr.JointDimReduction(y, a, b).fit(2, main_effects=True, independent_blocks=True)
    pa, pb = rng.permutation(6), rng.permutation(5)
    a2 = a[:, pa] * rng.uniform(0.1, 10, 6) + rng.normal(size=6)
    b2 = b[:, pb] * rng.uniform(0.1, 10, 5) - 3.0
    res2 = jdr.JointDimReduction(y, a2, b2).fit(2, main_effects=True,
                                                independent_blocks=True)
    for n in ("a", "b"):
        np.testing.assert_allclose(res.eigenvalues[n], res2.eigenvalues[n],
                                   atol=1e-8 * res.eigenvalues[n].max())
    f1, f2 = res.transform(), res2.transform()
    assert _deg(f1.iloc[:, :2], f2.iloc[:, :2]) < 1e-5
    assert _deg(f1.iloc[:, 2:], f2.iloc[:, 2:]) < 1e-5


def test_bootstrap_and_transform_of_new_rows():
    y, (a, b) = _design(300, 8, main=1.0, inter=1.0)
    res = jdr.JointDimReduction(y, a, b).fit({"a": 2, "b": 2}, main_effects=True,
                                             independent_blocks=True)
    boot = res.bootstrap(39, seed=0)
    assert list(boot.table.index) == ["a", "b"]
    assert boot.table.equals(res.bootstrap(39, seed=0).table)
    new = res.transform({"a": a[:5], "b": b[:5]})
    assert new.shape == (5, 4)
    assert res.to_dict()["settings"]["main_effects"] is True


@pytest.mark.parametrize("value", ["yes", 1, None])
def test_main_effects_must_be_a_bool(value):
    y, (a, b) = _design(100, 9, main=1.0, inter=0.0)
    with pytest.raises(TypeError, match=f"main_effects must be True or False; got {value!r}"):
        jdr.JointDimReduction(y, a, b).fit(1, main_effects=value)


def test_sparse_and_other_tests_refused_by_name():
    y, xs = _design(200, 10, main=1.0, inter=0.0, K=3)
    with pytest.raises(ValueError, match=r"main_effects=True: sparse fits.*sparsity=\(2, 2\)"):
        jdr.JointDimReduction(y, xs[0], xs[1]).fit(1, main_effects=True, sparsity=(2, 2))
    with pytest.raises(ValueError, match="main_effects=True: sparse fits"):
        jdr.JointDimReduction.from_blocks(y, xs).fit(1, main_effects=True, sparsity=(2, 2, 2))
    with pytest.raises(ValueError, match="rank_method: main_effects=True has the robust"):
        jdr.JointDimReduction(y, xs[0], xs[1]).fit("auto", main_effects=True,
                                                   rank_method="chi2")


@pytest.mark.parametrize("source", ["parquet", "csv", "moments"])
def test_two_block_row_source_refuses_the_k_block_engine_by_name(tmp_path, source):
    """main_effects=True and a rank per block run on the K-block engine, which
    reads rows in memory (or K-block streamed sums): a two-block model
    streamed from a file or built from sums refuses them by argument (it
    raised an AttributeError), and its one-rank fit still runs."""
    y, (a, b) = _design(600, 0, main=1.0, inter=0.5)
    frame = pd.DataFrame(np.column_stack([y, a, b]),
                         columns=["y"] + [f"a{j}" for j in range(a.shape[1])]
                         + [f"b{j}" for j in range(b.shape[1])])
    blocks = {"a": [f"a{j}" for j in range(a.shape[1])],
              "b": [f"b{j}" for j in range(b.shape[1])]}
    if source == "parquet":
        frame.to_parquet(tmp_path / "d.parquet")
        model = jdr.JointDimReduction.from_parquet(tmp_path / "d.parquet", y="y", blocks=blocks)
    elif source == "csv":
        frame.to_csv(tmp_path / "d.csv", index=False)
        model = jdr.JointDimReduction.from_csv(tmp_path / "d.csv", y="y", blocks=blocks)
    else:
        model = jdr.JointDimReduction.from_moments(jdr.Moments.from_arrays(y, a, b))
    with pytest.raises(ValueError, match="main_effects=True: a two-block model streamed"):
        model.fit(1, main_effects=True, independent_blocks=True)
    with pytest.raises(ValueError, match=r"rank=\{'a': 1, 'b': 2\}: a two-block model"):
        model.fit({"a": 1, "b": 2}, independent_blocks=True)
    assert model.fit(1, independent_blocks=True).rank == 1
