"""The command line: demo, fit on a CSV file, one-line errors with exit code 2."""

import re
import subprocess
import sys

import pytest

import jdr_stats as jdr
from jdr_stats.cli import main


@pytest.fixture
def csv_file(tmp_path):
    sim = jdr.simulate.bilinear(400, 4, 3, 1, seed=3)
    path = tmp_path / "data.csv"
    sim.frame.to_csv(path, index=False)
    return path


def test_demo(capsys):
    assert main(["demo"]) == 0
    out = capsys.readouterr().out
    assert "Joint Dimension Reduction Results" in out
    assert "LBM" in out
    # what the data support: the default test's rank (0: no evidence, so no
    # directions and no bootstrap), the warnings in words (no rank given by hand)
    assert "Rank chosen by the default (robust) rank tests at alpha 0.05: r = 0" in out
    # the default joint estimator (the blocks correlate: 0.75), said in words
    assert "Estimator: joint (default: the joint estimator (each block's residual on the " \
        "other block, whitened with the sample covariance of both blocks together), valid " \
        "when the blocks correlate; independent_blocks=True for the paper's per-block " \
        "estimator, which assumes independent blocks)." in out
    assert "p = 0.282; not rejected" in out
    # no interactions, but the body block's main effect (its test is on the first line)
    flat = " ".join(out.split())
    assert "rank 0, no directions" in out and "Found: no interactions (rank 0 not rejected" in flat
    assert "b: a main effect (p " in flat
    assert "With 95% confidence" not in out  # rank 0: nothing to bound
    assert "Warning: no rank test rejected H0: r = 0" in out
    assert re.search(r"Rank:\s+0\s", out)


def test_fit_csv(csv_file, capsys):
    assert main(["fit", str(csv_file), "--y", "y", "--a", "a0,a1,a2,a3", "--b", "b0,b1,b2", "--rank", "1"]) == 0
    out = capsys.readouterr().out
    assert "No. observations:" in out and "400" in out and "b2" in out


@pytest.mark.parametrize("method", ["permutation", "spectral"])
def test_fit_auto_rank(csv_file, capsys, method):
    assert main(["fit", str(csv_file), "--y", "y", "--a", "a0,a1,a2,a3", "--b", "b0,b1,b2",
                 "--rank", "auto", "--rank-method", method, "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert f"{method} tests, alpha=0.05" in out and f"Rank tests ({method})" in out


def test_fit_sparse(csv_file, capsys):
    assert main(["fit", str(csv_file), "--y", "y", "--a", "a0,a1,a2,a3", "--b", "b0,b1,b2",
                 "--rank", "1", "--sparsity", "2,2"]) == 0
    assert "(2, 2)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args,msg",
    [
        (["fit", "nofile.csv", "--y", "y", "--a", "a0", "--b", "b0", "--rank", "1"], "file not found"),
        (["fit", "{csv}", "--y", "zz", "--a", "a0", "--b", "b0", "--rank", "1"], "no column(s) ['zz']"),
        (["fit", "{csv}", "--y", "y", "--a", "a0,a1", "--b", "b0", "--rank", "2"], "rank must be between 0 and 1"),
        (["fit", "{csv}", "--y", "y", "--a", "a0,a1", "--b", "b0", "--rank", "x"], "rank must be an integer"),
        (["fit", "{csv}", "--y", "y", "--a", "a0,a1", "--b", "b0,b1", "--rank", "1", "--sparsity", "3"], "two integers"),
        (["fit", "{csv}", "--y", "y", "--a", "a0,a1", "--b", "a1,b1", "--rank", "1"], "in both --a and --b"),
        (["fit", "{csv}", "--y", "y", "--a", "a0"], "required"),
        (["frobnicate"], "invalid choice"),
        ([], "required"),
    ],
)
def test_bad_arguments_one_line_exit_2(csv_file, capsys, args, msg):
    args = [a.replace("{csv}", str(csv_file)) for a in args]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("jdr_stats: error:")
    assert msg in err


def test_module_entry_point_no_traceback(tmp_path):
    bad = tmp_path / "bad.csv"
    bad.write_text("y,a0,b0\n1,2,3\n1,2,3\n1,2,3\n1,2,3\n")
    proc = subprocess.run(
        [sys.executable, "-m", "jdr_stats", "fit", str(bad), "--y", "y", "--a", "a0", "--b", "b0", "--rank", "1"],
        capture_output=True, text=True,
    )
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "single value" in proc.stderr


# ---------------------------------------------------------------------------
# formats, flags and pipes
# ---------------------------------------------------------------------------
import json  # noqa: E402
import shutil  # noqa: E402
import xml.etree.ElementTree as ET  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

BASE = ["--y", "y", "--a", "a0,a1,a2,a3", "--b", "b0,b1,b2"]


def test_version(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"jdr_stats {jdr.__version__}"


def test_json_output(csv_file, capsys):
    assert main(["fit", str(csv_file), *BASE, "--rank", "auto", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    data = pd.read_csv(csv_file)
    res = jdr.JointDimReduction(data["y"], data[["a0", "a1", "a2", "a3"]],
                                data[["b0", "b1", "b2"]]).fit(doc["rank"])
    assert doc["nobs"] == 400 and doc["endog"] == "y" and doc["rank_method"] == "robust"
    np.testing.assert_allclose(doc["singular_values"], res.singular_values)
    dirs = doc["directions"]  # records {"block", "variable", "dir1", ...}
    assert [d["variable"] for d in dirs if d["block"] == "a"] == ["a0", "a1", "a2", "a3"]
    cols = [f"dir{k + 1}" for k in range(doc["rank"])]
    np.testing.assert_allclose([[d[c] for c in cols] for d in dirs if d["block"] == "b"],
                               res.directions_b.to_numpy())
    assert doc == jdr.JointDimReduction(data["y"], data[["a0", "a1", "a2", "a3"]],
                                        data[["b0", "b1", "b2"]]).fit("auto").to_dict()
    assert doc["rank_tests"]["method"] == "robust"  # the default rank test
    tests = doc["rank_tests"]["tests"]
    assert [t["k"] for t in tests] == list(range(len(tests))) and len(tests) >= 1
    assert all(0 < t["pvalue"] <= 1 for t in tests)
    # the sequence stops at the first test not rejected at 0.05: that k is the rank
    assert tests[-1]["pvalue"] > 0.05 and tests[-1]["k"] == doc["rank"]


def test_formula_weights_bootstrap_support_json(csv_file, tmp_path, capsys):
    data = pd.read_csv(csv_file)
    data["w"] = np.linspace(1, 2, len(data))
    path = tmp_path / "w.csv"
    data.to_csv(path, index=False)
    assert main(["fit", str(path), "--formula", "y ~ a0 + a1 + np.exp(a2) + a3 | b0 + b1 + b2",
                 "--rank", "1", "--weights", "w", "--bootstrap", "49", "--seed", "1",
                 "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)

    assert doc["weights"] is True
    assert "np.exp(a2)" in [d["variable"] for d in doc["directions"] if d["block"] == "a"]
    assert doc["formula"].startswith("y ~") and doc["bootstrap"]["n_boot"] == 49
    assert 0 < doc["bootstrap"]["max_angle_bound_deg"]["a"] < 90
    # --n-jobs: the same bootstrap in two processes
    assert main(["fit", str(path), "--formula", "y ~ a0 + a1 + np.exp(a2) + a3 | b0 + b1 + b2",
                 "--rank", "1", "--weights", "w", "--bootstrap", "49", "--seed", "1",
                 "--n-jobs", "2", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["bootstrap"] == doc["bootstrap"]
    # support selection does not take weights: a one-line error
    assert main(["fit", str(path), *BASE, "--rank", "1", "--weights", "w", "--support"]) == 2
    assert "weights" in capsys.readouterr().err
    assert main(["fit", str(csv_file), *BASE, "--rank", "1", "--support", "--seed", "2",
                 "--format", "json"]) == 0
    sup = json.loads(capsys.readouterr().out)["support"]
    assert len(sup["tests"]) == 7 and set(sup["selected_a"]) <= {"a0", "a1", "a2", "a3"}


@pytest.mark.parametrize("fmt", ["text", "csv", "latex", "html"])
def test_formats_to_file(csv_file, tmp_path, fmt, capsys):
    out = tmp_path / f"out.{fmt}"
    assert main(["fit", str(csv_file), *BASE, "--rank", "1", "--bootstrap", "39", "--seed", "3",
                 "--format", fmt, "--output", str(out)]) == 0
    assert capsys.readouterr().out == ""
    text = out.read_text()
    if fmt == "text":
        assert "Joint Dimension Reduction Results" in text and "Bootstrap" in text
    elif fmt == "csv":  # one long table: pandas reads it in one call
        frame = pd.read_csv(out)
        assert list(frame.columns[:3]) == ["summary", "table", "row"]
        loadings = frame[frame["table"] == "per-SD loadings, block a"]
        assert list(loadings["row"]) == ["a0", "a1", "a2", "a3"]
    elif fmt == "latex":  # a complete document
        assert text.startswith("\\documentclass{article}") and text.count("\\section*") == 2
        if shutil.which("pdflatex"):
            (tmp_path / "d.tex").write_text(text)
            run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "d.tex"],
                                 cwd=tmp_path, capture_output=True, text=True, timeout=60)
            assert run.returncode == 0
    else:  # a complete document, one section per summary
        assert text.startswith("<!DOCTYPE html>") and '<meta charset="utf-8"/>' in text
        root = ET.fromstring(text.split("\n", 1)[1])
        assert len(root.findall(".//section")) == 2


def test_features_out(csv_file, tmp_path):
    out = tmp_path / "feats.csv"
    assert main(["fit", str(csv_file), *BASE, "--rank", "2", "--features-out", str(out),
                 "--output", str(tmp_path / "s.txt")]) == 0
    feats = pd.read_csv(out, index_col="row")
    assert list(feats.columns) == ["a_dir1", "a_dir2", "b_dir1", "b_dir2"]
    data = pd.read_csv(csv_file)
    res = jdr.JointDimReduction(data["y"], data[["a0", "a1", "a2", "a3"]],
                                data[["b0", "b1", "b2"]]).fit(2)
    np.testing.assert_allclose(feats.to_numpy(), res.transform().to_numpy(), atol=1e-9)


def test_formula_and_columns_conflict(csv_file, capsys):
    assert main(["fit", str(csv_file), "--formula", "y ~ a0 | b0", "--y", "y", "--rank", "1"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main(["fit", str(csv_file), "--rank", "1"]) == 2
    assert "--formula" in capsys.readouterr().err


def test_closed_pipe_no_traceback(csv_file):
    cmd = (f"{sys.executable} -m jdr_stats fit {csv_file} --y y --a a0,a1,a2,a3 --b b0,b1,b2 "
           "--rank 1 --format csv | head -1")
    proc = subprocess.run(["bash", "-c", "set -o pipefail; " + cmd], capture_output=True, text=True)
    assert proc.stdout.count("\n") == 1
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_warnings_are_one_line_without_source(tmp_path, capsys):
    # correlated blocks: the fit warns (AssumptionWarning); the command line
    # prints it as one "jdr_stats: warning:" line, without a file path
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    z = rng.standard_normal((600, 1))
    a = z + 0.3 * rng.standard_normal((600, 3))
    b = z + 0.3 * rng.standard_normal((600, 2))
    y = a[:, 0] * b[:, 0] + rng.standard_normal(600)
    frame = pd.DataFrame(np.column_stack([y, a, b]), columns=["y", "a0", "a1", "a2", "b0", "b1"])
    path = tmp_path / "corr.csv"
    frame.to_csv(path, index=False)
    # the per-block estimator's premise check warns of the correlated blocks
    assert main(["fit", str(path), "--y", "y", "--a", "a0,a1,a2", "--b", "b0,b1",
                 "--rank", "auto", "--independent-blocks", "yes"]) == 0
    err = capsys.readouterr().err.splitlines()
    lines = [line for line in err if line.strip()]
    assert lines and all(line.startswith("jdr_stats: warning: ") for line in lines)
    assert any("the blocks are correlated" in line for line in lines)
    assert not any(".py:" in line for line in lines)


# -- messages in terms of flags, --sep, help --------------------------
@pytest.fixture
def fair_like(tmp_path):
    """A semicolon file as a newcomer writes it: a text column and a missing value."""
    sim = jdr.simulate.bilinear(300, 3, 3, 1, seed=5)
    frame = sim.frame.copy()
    frame.loc[4, "a1"] = float("nan")
    frame["grade"] = ["x", "y", "z"] * 100
    path = tmp_path / "semi.csv"
    frame.to_csv(path, sep=";", index=False)
    return path


def _err(args, capsys):
    assert main(args) == 2
    err = capsys.readouterr().err
    last = err.splitlines()[-1]  # warnings (one line each) may come before
    assert last.startswith("jdr_stats: error: ")
    assert all(line.startswith("jdr_stats: ") for line in err.splitlines())
    return last


def test_errors_speak_flags(fair_like, capsys):
    base = ["fit", str(fair_like), "--sep", ";", "--rank", "1"]
    cols = ["--y", "y", "--a", "a0,a1,a2", "--b", "b0,b1,b2"]
    err = _err(base + cols, capsys)
    assert "--a columns: NaN in column 'a1' (1 row) (1 of" in err
    assert "rows, --missing none); pass --missing drop" in err
    err = _err([*base, "--y", "y", "--a", "a0,a2", "--b", "b0,grade", "--missing", "drop"],
               capsys)
    assert "--b columns must be numeric; column(s) grade" in err
    assert "recode them as numbers in the file, or code a categorical variable in --formula" in err
    assert "pd.to_numeric" not in err
    err = _err(base + cols + ["--missing", "drop", "--sparsity", "5,2"], capsys)
    assert "--sparsity S1 must be between" in err
    # the warning of the dropped row, in flags too
    assert main(base + cols + ["--missing", "drop"]) == 0
    assert "jdr_stats: warning: dropped 1 of 300 rows with missing values (--missing drop)\n" in (
        capsys.readouterr().err)


@pytest.mark.parametrize("text,words", [
    ('pass missing="drop" to drop them', "pass --missing drop to drop them"),
    ("(or fit with standardize=False)", "(or pass --no-standardize)"),
    ('fit(rank="auto"): the blocks are correlated', "--rank auto: the blocks are correlated"),
    ("rank_tests('chi2')", "--rank auto --rank-method chi2"),
    ('the bootstrap (method="pairs" resamples rows)', "the bootstrap (--bootstrap-method pairs resamples rows)"),
    ("got n_boot=19", "got --bootstrap 19"),
    ("exog_a has constant column(s)", "--a columns has constant column(s)"),
    ("endog has a single value", "--y column has a single value"),
])
def test_flag_words(text, words):
    from jdr_stats.io._cli_input import flag_words

    assert flag_words(text, formula=False) == words


def test_too_few_rows_says_no_standardize(tmp_path, capsys):
    sim = jdr.simulate.bilinear(8, 8, 2, 1, seed=1)
    path = tmp_path / "few.csv"
    sim.frame.to_csv(path, index=False)
    args = ["fit", str(path), "--y", "y", "--a", ",".join(f"a{j}" for j in range(8)),
            "--b", "b0,b1"]
    # a block as wide as the rows fits with the regularised whitening
    assert main([*args, "--rank", "1"]) == 0
    capsys.readouterr()
    err = _err([*args, "--rank", "auto"], capsys)  # the rank tests need m >= n + 2
    assert "--rank auto runs tests" in err
    assert "standardize=" not in err and "exog" not in err


@pytest.mark.parametrize("sep,flag", [(";", ";"), ("\t", "tab"), ("\t", "\\t"), ("|", "|")])
def test_sep(csv_file, tmp_path, capsys, sep, flag):
    path = tmp_path / "d.txt"
    pd.read_csv(csv_file).to_csv(path, sep=sep, index=False)
    cols = ["--y", "y", "--a", "a0,a1,a2,a3", "--b", "b0,b1,b2", "--rank", "1"]
    assert main(["fit", str(csv_file), *cols]) == 0
    comma = capsys.readouterr().out
    assert main(["fit", str(path), "--sep", flag, *cols]) == 0
    assert capsys.readouterr().out == comma
    # without --sep the error says which flag to pass
    err = _err(["fit", str(path), *cols], capsys)
    shown = "tab" if sep == "\t" else sep
    assert f"pass --sep '{shown}'" in err


def test_bad_sep(csv_file, capsys):
    err = _err(["fit", str(csv_file), "--sep", ";;", "--y", "y", "--a", "a0", "--b", "b0",
                "--rank", "1"], capsys)
    assert "argument --sep: expected one character" in err


@pytest.mark.parametrize("flag", ["--a", "--b"])
def test_response_in_a_block_is_refused(csv_file, capsys, flag):
    blocks = {"--a": "a0,a1", "--b": "b0,b1"}
    blocks[flag] += ",y"
    err = _err(["fit", str(csv_file), "--y", "y", "--a", blocks["--a"], "--b", blocks["--b"],
                "--rank", "1"], capsys)
    assert f"the response --y y is also in {flag}" in err


def _fit_actions():
    from jdr_stats.cli import _build_parser

    parser = _build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    return parser, sub.choices


def test_every_flag_has_help_and_the_description_is_plain():
    parser, commands = _fit_actions()
    for name, cmd in commands.items():
        for action in cmd._actions:
            assert action.help, (name, action.option_strings)
    text = parser.format_help() + commands["fit"].format_help()
    assert "``" not in text and ":class:" not in text
    assert "CSV or Parquet" in parser.format_help() and "CSV or Parquet" in commands["fit"].format_help()


def test_cli_guide_table_lists_every_flag():
    """docs/guide/cli.md's option table names every flag of `fit` and `demo`."""
    from pathlib import Path

    _, commands = _fit_actions()
    flags = {opt for cmd in commands.values() for a in cmd._actions
             for opt in a.option_strings if opt.startswith("--") and opt != "--help"}
    guide = (Path(__file__).resolve().parents[1] / "docs" / "guide" / "cli.md").read_text()
    rows = [line for line in guide.splitlines() if line.startswith("| `")]
    documented = set()
    for row in rows:
        first_cell = row.split(" | ")[0]
        documented |= set(re.findall(r"--[a-z][a-z-]*", first_cell))
    assert flags - documented == set(), "flags missing from the guide's table"
    assert documented - flags == set(), "the guide's table names flags the parser lacks"


def test_sparsity_auto(csv_file, capsys):
    assert main(["fit", str(csv_file), "--y", "y", "--a", "a0,a1,a2,a3", "--b", "b0,b1,b2",
                 "--rank", "1", "--sparsity", "auto", "--fdr", "0.05", "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "(auto)" in out
    err = _err(["fit", str(csv_file), "--y", "y", "--a", "a0", "--b", "b0", "--rank", "1",
                "--sparsity", "2"], capsys)
    assert 'two integers S1,S2 or "auto"' in err


@pytest.mark.parametrize("kind", ["sample", "shrinkage", "diagonal", "none"])
def test_whitening_flag_is_the_fits_whitening(csv_file, capsys, kind):
    assert main(["fit", str(csv_file), *BASE, "--rank", "1", "--whitening", kind,
                 "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    data = pd.read_csv(csv_file)
    res = jdr.JointDimReduction(data["y"], data[["a0", "a1", "a2", "a3"]],
                                data[["b0", "b1", "b2"]]).fit(1, whitening=kind)
    assert doc["whitening"] == res.whitening
    np.testing.assert_allclose(doc["singular_values"], res.singular_values, rtol=1e-12)


def test_no_standardize_is_whitening_none_and_a_contradiction_is_refused(csv_file, capsys):
    assert main(["fit", str(csv_file), *BASE, "--rank", "1", "--no-standardize",
                 "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["whitening"] == "none"
    code = main(["fit", str(csv_file), *BASE, "--rank", "1", "--no-standardize",
                 "--whitening", "shrinkage"])
    err = capsys.readouterr().err
    assert code == 2 and "--no-standardize and --whitening shrinkage" in err
    assert err.count("\n") == 1


def test_refused_bootstrap_still_prints_the_fit(tmp_path, capsys):
    """Issue 36, item 1: a bootstrap that cannot run (whitening none at
    n >= m) is refused on stderr, in flags, and the fit is still printed."""
    sim = jdr.simulate.bilinear(30, 40, 5, 1, seed=0)
    path = tmp_path / "wide.csv"
    sim.frame.to_csv(path, index=False)
    a = ",".join(f"a{j}" for j in range(40))
    b = ",".join(f"b{j}" for j in range(5))
    code = main(["fit", str(path), "--y", "y", "--a", a, "--b", b, "--rank", "1",
                 "--whitening", "none", "--bootstrap", "9"])
    out, err = capsys.readouterr()
    assert code == 2
    assert "Joint Dimension Reduction Results" in out
    assert "--bootstrap was not run" in err and "--whitening shrinkage" in err
    assert "--a columns has 40 columns" in err


def test_bootstrap_at_n_above_m_runs_from_the_command_line(tmp_path, capsys):
    sim = jdr.simulate.bilinear(40, 60, 5, 1, seed=0)
    path = tmp_path / "wide.csv"
    sim.frame.to_csv(path, index=False)
    a = ",".join(f"a{j}" for j in range(60))
    b = ",".join(f"b{j}" for j in range(5))
    code = main(["fit", str(path), "--y", "y", "--a", a, "--b", b, "--rank", "1",
                 "--bootstrap", "39"])
    out = capsys.readouterr().out
    assert code == 0 and "Bootstrap" in out


def test_flags_in_messages_are_never_doubled(tmp_path, capsys):
    """Issue 36: "fit with sparsity=(s1, s2)" was said "----sparsity S1,s2"."""
    from jdr_stats.io._cli_input import flag_words

    said = flag_words("with sparsity=(s1, s2) for a sparse fit; sparsity s1", formula=False)
    assert said == "with --sparsity S1,S2 for a sparse fit; --sparsity S1"
    sim = jdr.simulate.bilinear(30, 40, 5, 1, seed=0)
    path = tmp_path / "wide.csv"
    sim.frame.to_csv(path, index=False)
    a = ",".join(f"a{j}" for j in range(40))
    b = ",".join(f"b{j}" for j in range(5))
    for extra in (["--rank", "auto"], ["--rank", "1", "--support"]):
        main(["fit", str(path), "--y", "y", "--a", a, "--b", b, *extra])
        err = capsys.readouterr().err
        assert "--sparsity S1,S2" in err and "---" not in err
        assert "standardize" not in err


def test_block_columns_by_glob_regex_and_range(tmp_path, capsys):
    """Issue 36: a user with 120 gene columns selects them without listing them."""
    rng = np.random.default_rng(0)
    genes = pd.DataFrame(rng.standard_normal((60, 12)), columns=[f"gene_{j}" for j in range(1, 13)])
    lipids = pd.DataFrame(rng.standard_normal((60, 3)), columns=["lipA", "lipB", "lipC"])
    frame = pd.concat([pd.DataFrame({"y": rng.standard_normal(60)}), genes, lipids], axis=1)
    path = tmp_path / "omics.csv"
    frame.to_csv(path, index=False)
    base = ["fit", str(path), "--y", "y", "--rank", "1"]
    outs = []
    for a, b in (("gene_*", "lip*"), (r"re:^gene_\d{1,2}$", "lipA:lipC"),
                 ("gene_1:gene_12", "lipA,lipB,lipC")):
        assert main([*base, "--a", a, "--b", b, "--format", "json"]) == 0
        doc = json.loads(capsys.readouterr().out)
        outs.append(doc)
    assert outs[0] == outs[1] == outs[2]
    assert "gene_12" in json.dumps(outs[0]) and "lipC" in json.dumps(outs[0])
    # a pattern that selects nothing, or a broken range, names the flag
    assert main([*base, "--a", "prot_*", "--b", "lip*"]) == 2
    assert "--a: the pattern 'prot_*' matches no column" in capsys.readouterr().err
    assert main([*base, "--a", "gene_1:gene_99", "--b", "lip*"]) == 2
    assert "no column(s) ['gene_99']" in capsys.readouterr().err
    assert main([*base, "--a", "gene_12:gene_1", "--b", "lip*"]) == 2
    assert "runs backwards" in capsys.readouterr().err


def test_named_blocks_and_the_joint_estimator(tmp_path, capsys):
    """--block NAME=COLS (twice) is --a and --b with names; --independent-blocks no
    fits the joint estimator; messages name the flags the user gave."""
    sim = jdr.simulate.bilinear(600, 5, 4, 1, design="correlated", rho=0.5, seed=2)
    frame = pd.DataFrame(np.column_stack([sim.y, sim.a, sim.b]),
                         columns=["y", *[f"g{j}" for j in range(5)],
                                  *[f"l{j}" for j in range(4)]])
    path = tmp_path / "two.csv"
    frame.to_csv(path, index=False)
    base = ["fit", str(path), "--y", "y", "--rank", "1"]
    assert main([*base, "--block", "genes=g*", "--block", "lipids=l0:l3",
                 "--independent-blocks", "no"]) == 0
    out = capsys.readouterr().out
    assert "block a: genes" in out and "block b: lipids" in out
    assert "Estimator: joint" in out and "sample (across blocks)" in out
    assert main([*base, "--block", "genes=g*", "--block", "lipids=l0:l3", "--format",
                 "json"]) == 0
    named = json.loads(capsys.readouterr().out)
    assert named["blocks"] == ["genes", "lipids"]
    assert main([*base, "--a", "g*", "--b", "l*", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["directions"] == named["directions"]
    assert main([*base, "--block", "genes=g*", "--block", "lipids=g1,l*"]) == 2
    assert "in both --block genes and --block lipids" in capsys.readouterr().err
    assert main([*base, "--block", "genes=g*"]) == 2
    assert "--block: give two or more blocks; got 1 (genes)" in capsys.readouterr().err
    assert main([*base, "--block", "genes=g*", "--block", "x=l*", "--a", "g0"]) == 2
    assert "not both" in capsys.readouterr().err
    assert main([*base, "--block", "9x=l*"]) == 2
    assert "expected NAME=COLS" in capsys.readouterr().err


def _three_block_file(tmp_path, m=700, seed=5):
    rng = np.random.default_rng(seed)
    g, lip, c = (rng.standard_normal((m, n)) for n in (4, 3, 3))
    y = g[:, 0] * lip[:, 0] + lip[:, 0] * c[:, 1] + g[:, 0] * lip[:, 0] * c[:, 1] \
        + 0.5 * rng.standard_normal(m)
    frame = pd.DataFrame(np.column_stack([y, g, lip, c]),
                         columns=["y", *[f"g{j}" for j in range(4)],
                                  *[f"l{j}" for j in range(3)], *[f"c{j}" for j in range(3)]])
    path = tmp_path / "three.csv"
    frame.to_csv(path, index=False)
    return path, frame


def test_three_named_blocks_fit_the_k_block_estimator(tmp_path, capsys):
    """Issue 35: --block NAME=COLS three times fits the K-block estimator; the
    summary has one section per block, JSON and the features match the API."""
    path, frame = _three_block_file(tmp_path)
    base = ["fit", str(path), "--y", "y", "--block", "genes=g*", "--block", "lipids=l0:l2",
            "--block", "clinical=re:^c\\d$", "--independent-blocks", "yes"]
    assert main([*base, "--rank", "1"]) == 0
    out = capsys.readouterr().out
    assert "Joint dimension reduction of K blocks" in out
    for name in ("genes", "lipids", "clinical"):
        assert f"{name}: rank 1" in out
    api = jdr.JointDimReduction.from_blocks(
        frame["y"], {"genes": frame[[f"g{j}" for j in range(4)]],
                     "lipids": frame[["l0", "l1", "l2"]],
                     "clinical": frame[["c0", "c1", "c2"]]}).fit(1, independent_blocks=True)
    feats = tmp_path / "feats.csv"
    assert main([*base, "--rank", "1", "--format", "json", "--features-out", str(feats)]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["blocks"] == ["genes", "lipids", "clinical"]
    assert doc["rank"] == 1 and doc["ranks"] == {"genes": 1, "lipids": 1, "clinical": 1}
    np.testing.assert_allclose(doc["directions"]["lipids"]["data"],
                               api.directions["lipids"].to_numpy(), rtol=1e-10, atol=1e-12)
    got = pd.read_csv(feats, index_col="row")
    assert got.columns.tolist() == ["genes_1", "lipids_1", "clinical_1"]
    np.testing.assert_allclose(got.to_numpy(), api.transform().to_numpy(), rtol=1e-8,
                               atol=1e-10)
    # one rank per block, the bootstrap, and rank "auto"
    assert main([*base, "--rank", "genes=2,lipids=1,clinical=1", "--bootstrap", "39",
                 "--seed", "1", "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["rank"] == {"genes": 2, "lipids": 1, "clinical": 1}
    assert set(doc["bootstrap"]["max_angle_bound_deg"]) == {"genes", "lipids", "clinical"}
    assert doc["bootstrap"]["rank"] == {"genes": 2, "lipids": 1, "clinical": 1}
    # too few replicates for the 95% intervals: the two-block fit's refusal
    assert main([*base, "--rank", "1", "--bootstrap", "5", "--seed", "1"]) == 2
    assert "needs at least 39 replicates" in capsys.readouterr().err
    assert main([*base, "--rank", "auto"]) == 0
    out = capsys.readouterr().out
    assert "robust per-block tests" in out and "genes: rank <= 0" in out
    for fmt in ("csv", "html", "latex"):
        assert main([*base, "--rank", "1", "--format", fmt]) == 0
        assert "lipids" in capsys.readouterr().out


def test_three_blocks_by_formula_and_refusals(tmp_path, capsys):
    path, _ = _three_block_file(tmp_path)
    assert main(["fit", str(path), "--formula", "y ~ g0 + g1 + g2 + g3 | l0 + l1 + l2 | "
                 "c0 + c1 + c2", "--rank", "1", "--independent-blocks", "yes"]) == 0
    assert "block3: rank 1" in capsys.readouterr().out
    base = ["fit", str(path), "--y", "y", "--block", "genes=g*", "--block", "lipids=l*",
            "--block", "clinical=c*", "--rank", "1"]
    for extra, words in ((["--chunksize", "100"], "streamed input"),
                         (["--whitening", "none"], "--whitening none")):
        assert main([*base, *extra]) == 2
        err = capsys.readouterr().err
        assert "three or more blocks do not take" in err and words in err
    # the Poisson bootstrap runs at every K, as in Python
    assert main([*base, "--bootstrap", "39", "--bootstrap-method", "poisson"]) == 0
    assert "poisson" in capsys.readouterr().out.lower()
    assert main([*base[:-2], "--rank", "genes=1,lipids=1"]) == 2
    assert "missing ['clinical']" in capsys.readouterr().err
    assert main([*base[:-2], "--rank", "genes=x"]) == 2
    assert "NAME=R" in capsys.readouterr().err
    assert main([*base[:4], "--block", "genes=g*", "--block", "lipids=g1,l*",
                 "--block", "clinical=c*", "--rank", "1"]) == 2
    assert "in both --block genes and --block lipids" in capsys.readouterr().err
    assert main([*base[:4], "--block", "genes=g*", "--block", "lipids=l*",
                 "--block", "clinical=c*,y", "--rank", "1"]) == 2
    assert "also in --block clinical" in capsys.readouterr().err


def test_three_block_rank_auto_json_is_strict_json(tmp_path, capsys):
    """A K-block --rank auto fit's tables hold NaN df (the robust per-block
    tests have none); the JSON output writes them as null, parseable by a
    strict reader, and keeps every block's rank."""
    rng = np.random.default_rng(3)
    m = 500
    xs = [rng.normal(size=(m, n)) for n in (4, 3, 3)]
    y = xs[0][:, 0] * xs[1][:, 0] * xs[2][:, 0] + xs[0][:, 1] * xs[1][:, 1] + rng.normal(size=m)
    cols = [f"g{j}" for j in range(4)] + [f"l{j}" for j in range(3)] + [f"c{j}" for j in range(3)]
    import pandas as pd

    path = tmp_path / "k3.csv"
    pd.DataFrame(np.column_stack([y, *xs]), columns=["y", *cols]).to_csv(path, index=False)
    assert main(["fit", str(path), "--y", "y", "--block", "g=g*", "--block", "l=l*",
                 "--block", "c=c*", "--rank", "auto", "--format", "json"]) == 0
    text = capsys.readouterr().out
    doc = json.loads(text, parse_constant=lambda c: pytest.fail(f"non-JSON constant {c}"))
    assert "NaN" not in text
    assert set(doc["rank"]) == {"g", "l", "c"}
