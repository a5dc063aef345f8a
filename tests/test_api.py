"""One API across the four estimators and the public surface: ``rank`` everywhere (old names warn), ``rank_tests``
on every results object, the same transform shapes, ``to_dict`` /
``to_json`` / ``save`` / ``jdr.load``, one child seed per procedure of a
fit, and no public name living only in a private module."""

from __future__ import annotations

import json
import pathlib
import re

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.baselines import PHD, SAVE, SIR
from jdr_stats.inference.rank_tests import choose_rank
from jdr_stats.model import child_seeds
from jdr_stats.support import select_support

ROOT = pathlib.Path(__file__).resolve().parents[1]

BASELINES = [(SIR, {"n_slices": 6}), (PHD, {}), (PHD, {"residuals": True}), (SAVE, {"n_slices": 6})]


@pytest.fixture(scope="module")
def xy():
    rng = np.random.default_rng(11)
    x = pd.DataFrame(rng.standard_normal((300, 5)), columns=list("pqrst"))
    y = pd.Series(x["p"] + x["q"] ** 2 + 0.3 * rng.standard_normal(300), name="resp")
    return y, x


@pytest.fixture(scope="module")
def joint():
    sim = jdr.simulate.bilinear(600, 5, 4, 2, seed=5)
    frame = sim.frame
    a_cols, b_cols = [f"a{j}" for j in range(5)], [f"b{j}" for j in range(4)]
    model = jdr.JointDimReduction(frame["y"], frame[a_cols], frame[b_cols])
    return model, frame, a_cols, b_cols


# ---------------------------------------------------------------------------
# one word for the dimension
# ---------------------------------------------------------------------------
@pytest.mark.parametrize("cls, opts", BASELINES)
def test_rank_is_the_one_name_of_the_dimension(xy, cls, opts):
    y, x = xy
    res = cls(y, x).fit(rank=2, **opts)
    assert res.rank == 2
    assert not hasattr(res, "numdir")
    with pytest.raises(TypeError, match="numdir"):
        cls(y, x).fit(numdir=2, **opts)
    with pytest.raises(TypeError, match="n_dirs"):
        res.transform(n_dirs=1)
    with pytest.raises(TypeError, match="numdir"):
        res.dimension_tests(numdir=3)
    assert res.transform(rank=1).shape[1] == 1


@pytest.mark.parametrize("cls, opts", BASELINES)
def test_rank_tests_equal_dimension_tests(xy, cls, opts):
    y, x = xy
    res = cls(y, x).fit(rank=3, **opts)
    rt = res.rank_tests()
    pd.testing.assert_frame_equal(rt.table, res.dimension_tests().table)
    assert rt.title == res.dimension_tests().title and len(rt.table) == 3
    # max_rank: rows k = 0..max_rank, as the joint model's rank tests
    full = res.rank_tests(max_rank=4)
    assert len(full.table) == 5
    pd.testing.assert_frame_equal(full.table.iloc[:3], rt.table)
    pd.testing.assert_frame_equal(full.table, res.dimension_tests(5).table)
    with pytest.raises(ValueError, match="max_rank"):
        res.rank_tests(max_rank=5)
    with pytest.raises(TypeError, match="max_rank"):
        res.rank_tests(max_rank=1.5)


def test_same_shapes_across_estimators(xy, joint):
    y, x = xy
    model, frame, *_ = joint
    jres = model.fit(2)
    assert list(jres.directions_a.columns) == ["dir1", "dir2"]
    feats = jres.transform()
    assert isinstance(feats, pd.DataFrame) and feats.shape == (600, 4)
    assert feats.index.equals(frame.index)
    for cls, opts in BASELINES:
        res = cls(y, x).fit(rank=2, **opts)
        assert list(res.directions.columns) == ["dir1", "dir2", "dir3", "dir4", "dir5"]
        assert list(res.eigenvalues.index[:2]) == ["dir1", "dir2"]
        red = res.transform()
        assert isinstance(red, pd.DataFrame) and list(red.columns) == ["dir1", "dir2"]
        assert red.index.equals(x.index)
        new = res.transform(x.iloc[:7])
        assert isinstance(new, pd.DataFrame) and new.index.equals(x.index[:7])
        # plain arrays in, plain arrays out (as the joint model)
        plain = cls(y.to_numpy(), x.to_numpy()).fit(rank=2, **opts)
        assert isinstance(plain.transform(), np.ndarray) and plain.transform().shape == (300, 2)
        # the summaries are built alike (statsmodels Summary with the same builder)
        assert type(res.summary()) is type(jres.summary())
        assert "dir1" in str(res.summary())


# ---------------------------------------------------------------------------
# to_dict / to_json / save / load
# ---------------------------------------------------------------------------
def _keys(value, out):
    if isinstance(value, dict):
        out.update(value)
        for v in value.values():
            _keys(v, out)
    elif isinstance(value, list):
        for v in value:
            _keys(v, out)
    return out


def _check_export(res, tmp_path, name):
    doc = res.to_dict()
    text = res.to_json()
    assert json.loads(text) == doc  # plain JSON types, NaN as null
    assert all(re.fullmatch(r"[0-9A-Za-z_]+", k) for k in _keys(doc, {})), sorted(_keys(doc, {}))
    path = tmp_path / f"{name}.json"
    assert res.to_json(path, indent=None) == json.dumps(doc)
    assert json.loads(path.read_text()) == doc
    pkl = tmp_path / f"{name}.pickle"
    res.save(pkl)
    back = jdr.load(pkl)
    assert type(back) is type(res)
    assert back.to_dict() == doc
    assert str(back.summary()) == str(res.summary())
    return doc


def test_joint_results_export(joint, tmp_path):
    model, _, a_cols, b_cols = joint
    res = model.fit("auto", sparsity="auto", seed=3)
    doc = _check_export(res, tmp_path, "jdr")
    assert doc["rank"] == res.rank and doc["nobs"] == 600
    recs = doc["directions"]
    assert [(d["block"], d["variable"]) for d in recs] == (
        [("a", c) for c in a_cols] + [("b", c) for c in b_cols])
    cols = [f"dir{k + 1}" for k in range(res.rank)]
    np.testing.assert_array_equal([[d[c] for c in cols] for d in recs[:5]],
                                  res.directions_a.to_numpy())
    np.testing.assert_array_equal(doc["singular_values"], res.singular_values)
    assert doc["rank_tests"]["method"] == "robust"
    assert [t["k"] for t in doc["rank_tests"]["tests"]] == list(res.rank_test_table.table.index)
    sup = doc["support_tests"]
    assert sup["selected_a"] == res.support_tests.selected_a
    assert [(t["block"], t["variable"]) for t in sup["tests"]] == list(res.support_tests.table.index)
    # a fit with a given rank has no test tables
    plain = model.fit(2).to_dict()
    assert plain["rank_tests"] is None and plain["support_tests"] is None


def test_bootstrap_support_rank_tests_export(joint, tmp_path):
    model, *_ = joint
    res = model.fit(2, sparsity=(3, 3))
    boot = res.bootstrap(59, seed=1)
    doc = _check_export(boot, tmp_path, "boot")
    assert doc["n_boot"] == 59 and doc["max_angle_bound_deg"]["a"] == boot.max_angle_bound()["a"]
    ci = boot.conf_int()
    assert [(r["block"], r["parameter"]) for r in doc["conf_int"]] == list(ci.index)
    np.testing.assert_array_equal([r["upper"] for r in doc["conf_int"]], ci["upper"])
    freq = {(r["block"], r["variable"]): r["frequency"] for r in doc["selection_frequency"]}
    assert freq[("a", "a0")] == boot.selection_frequency_a["a0"]
    assert doc["gap"]["trusted"] == bool(boot.gap["trusted"])
    _check_export(model.select_support(rank=2, seed=2, n_resamples=199), tmp_path, "support")
    rt = res.rank_tests("chi2")
    rdoc = _check_export(rt, tmp_path, "ranktests")
    assert rdoc["nobs"] == 600 and [t["k"] for t in rdoc["tests"]] == list(rt.table.index)


@pytest.mark.parametrize("cls, opts", BASELINES)
def test_baseline_results_export(xy, tmp_path, cls, opts):
    y, x = xy
    res = cls(y, x).fit(rank=2, **opts)
    doc = _check_export(res, tmp_path, cls.__name__)
    assert doc["model"] == cls.__name__ and doc["rank"] == 2
    assert [d["variable"] for d in doc["directions"]] == list("pqrst")
    np.testing.assert_array_equal([d["dir1"] for d in doc["directions"]], res.directions["dir1"])
    assert doc["rank_tests"] == res.rank_tests().to_dict()
    np.testing.assert_array_equal(doc["eigenvalues"], res.eigenvalues)
    _check_export(res.rank_tests(), tmp_path, "dimtests")
    if cls is not PHD:
        ct = _check_export(res.coordinate_test(["p"]), tmp_path, "coordtest")
        assert len(ct["tests"]) == 1 and ct["title"].endswith("coordinate test")


def test_comparison_export(tmp_path):
    sim = jdr.simulate.bilinear(600, 5, 4, 2, seed=5)
    comp = jdr.compare(sim.y, sim.a, sim.b, rank=2, truth=(sim.U, sim.V))
    doc = _check_export(comp, tmp_path, "compare")
    assert doc["truth"] is True and doc["rank"] == 2 and doc["blocks"] == {"a": 5, "b": 4}
    assert [r["variant"] for r in doc["table"]] == list(comp.table.index)
    np.testing.assert_array_equal([r["nsee"] for r in doc["table"]], comp.table["nsee"])
    plain = jdr.compare(sim.y, sim.a, sim.b, rank=2, methods=["jdr", "sir"]).to_dict()
    assert plain["truth"] is False and plain["methods"] == ["jdr", "sir"]


def test_ladle_and_single_test_export(joint, tmp_path):
    model, *_ = joint
    res = model.fit("auto", rank_method="ladle", seed=4)
    assert isinstance(res.rank_test_table, jdr.LadleResults)
    doc = _check_export(res, tmp_path, "ladlefit")
    assert doc["rank_tests"]["rank"] == res.rank
    lad = _check_export(res.rank_test_table, tmp_path, "ladle")
    assert [r["k"] for r in lad["criterion"]] == list(res.rank_test_table.table.index)
    rt = model.fit(2).rank_tests("chi2")
    one = rt.result(0)
    assert isinstance(one, jdr.TestResult)
    tdoc = _check_export(one, tmp_path, "one")
    assert tdoc["statistic"] == rt.table["statistic"].iloc[0]


def test_export_nan_is_null():
    # a SIR test with df <= 0 has a NaN p-value: null in JSON, never NaN
    rng = np.random.default_rng(0)
    x = rng.standard_normal((200, 4))
    res = SIR(x[:, 0] + rng.standard_normal(200), x).fit(n_slices=3, rank=4)
    table = res.rank_tests().table
    assert table.iloc[-1].isna().any()
    text = res.to_json()
    assert "NaN" not in text
    last = json.loads(text)["rank_tests"]["tests"][-1]
    assert [v is None for v in last.values()][1:] == table.iloc[-1].isna().tolist()


# ---------------------------------------------------------------------------
# child seeds
# ---------------------------------------------------------------------------
def test_child_seeds():
    a = [g.integers(1 << 30, size=3) for g in child_seeds(42, 2)]
    b = [g.integers(1 << 30, size=3) for g in child_seeds(42, 2)]
    np.testing.assert_array_equal(a[0], b[0])
    np.testing.assert_array_equal(a[1], b[1])
    assert not np.array_equal(a[0], a[1])
    gens = child_seeds(np.random.default_rng(42), 2)
    assert len(gens) == 2 and all(isinstance(g, np.random.Generator) for g in gens)
    with pytest.raises(TypeError, match="seed"):
        child_seeds("42", 2)


def test_fit_spawns_one_stream_per_procedure(joint):
    model, *_ = joint
    first = model.fit("auto", sparsity="auto", rank_method="ladle", seed=7)
    again = model.fit("auto", sparsity="auto", rank_method="ladle", seed=7)
    # the same seed gives the same fit
    pd.testing.assert_frame_equal(first.rank_test_table.table, again.rank_test_table.table)
    pd.testing.assert_frame_equal(first.support_tests.table, again.support_tests.table)
    pd.testing.assert_frame_equal(first.directions_a, again.directions_a)
    # rank selection draws from child 0 of the seed, support selection from child 1
    rank_seed, support_seed = child_seeds(7, 2)
    # the fit's own rows and moments (the default joint estimator's residual rows)
    data, mom = first._fit_data, first.moments
    whit = first._whitening
    r, table = choose_rank(data, mom, whit, method="ladle", seed=rank_seed)
    assert r == first.rank
    pd.testing.assert_frame_equal(table.table, first.rank_test_table.table)
    sup = select_support(data, mom, whit, rank=first.rank, fdr=0.1, seed=support_seed)
    pd.testing.assert_frame_equal(sup.table, first.support_tests.table)
    # (On the joint default's rows of this design every support p-value the
    # parent seed gives equals the child's, most at the 1/(B + 1) floor, so
    # the former check that the parent seed draws other signs cannot show
    # the streams apart here; the equalities above pin the child streams.)


# ---------------------------------------------------------------------------
# the public surface
# ---------------------------------------------------------------------------
def test_public_names_and_homes():
    for name in jdr.__all__:
        assert getattr(jdr, name) is not None
    for cls in (jdr.JDRResults, jdr.RankTestResults, jdr.BootstrapResults, jdr.SupportResults,
                jdr.SIRResults, jdr.PHDResults, jdr.SAVEResults, jdr.SDRResults, jdr.TestTable,
                jdr.Comparison, jdr.LadleResults, jdr.TestResult, jdr.InapplicableTestResult):
        for method in ("to_dict", "to_json", "save", "summary"):
            assert callable(getattr(cls, method)), (cls, method)
    from jdr_stats.resampling import _progress
    from jdr_stats.streams import _sources
    for name in ("ArraySource", "ParquetSource", "CSVSource", "DaskSource", "RowSource"):
        assert getattr(jdr.sources, name) is getattr(_sources, name)
    for name in ("progress_bar", "run_batches", "replicate_generators"):
        assert getattr(jdr.progress, name) is getattr(_progress, name)
    assert jdr.baselines.SDRResults is jdr.SDRResults
    for name in ("ModelData", "MomentsData", "BlockMoments", "Whitening", "Estimate"):
        assert hasattr(jdr.data, name)


def test_from_source(joint):
    model, frame, a_cols, b_cols = joint
    src = jdr.sources.ArraySource(frame["y"].to_numpy(), frame[a_cols].to_numpy(),
                                  frame[b_cols].to_numpy(), batch_rows=128)
    streamed = jdr.JointDimReduction.from_source(src).fit(2)
    np.testing.assert_allclose(streamed.singular_values, model.fit(2).singular_values,
                               rtol=1e-10, atol=1e-12)
    with pytest.raises(TypeError, match="row source"):
        jdr.JointDimReduction.from_source(frame)


def test_docs_name_no_private_module():
    files = [ROOT / "README.md", *(ROOT / "docs").rglob("*.md"), *(ROOT / "vignettes").rglob("*.py")]
    offenders = [f"{p.relative_to(ROOT)}: {m.group(0)}" for p in files
                 for m in re.finditer(r"jdr_stats[./]_[a-z]\w*", p.read_text())]
    assert offenders == []


def test_cli_json_is_to_dict_and_seeded_per_procedure(tmp_path, capsys):
    from jdr_stats.cli import main

    sim = jdr.simulate.bilinear(300, 4, 3, 1, seed=3)
    path = tmp_path / "data.csv"
    sim.frame.to_csv(path, index=False)
    argv = ["fit", str(path), "--y", "y", "--a", "a0,a1,a2,a3", "--b", "b0,b1,b2", "--rank", "1",
            "--bootstrap", "39", "--support", "--seed", "5", "--format", "json"]
    assert main(argv) == 0
    doc = json.loads(capsys.readouterr().out)
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out) == doc  # same seed, same document
    # the document is made of the to_dict()s, with one child of --seed per procedure
    model = jdr.JointDimReduction(sim.frame["y"], sim.frame[["a0", "a1", "a2", "a3"]],
                                  sim.frame[["b0", "b1", "b2"]])
    res = model.fit(1)
    _, boot_seed, support_seed = np.random.SeedSequence(5).spawn(3)
    boot = res.bootstrap(39, seed=np.random.default_rng(boot_seed))
    sup = model.select_support(rank=1, seed=np.random.default_rng(support_seed))
    expected = {**res.to_dict(), "bootstrap": boot.to_dict(), "support": sup.to_dict()}
    assert doc == expected
