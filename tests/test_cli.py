"""The command line: demo, fit on a CSV file, one-line errors with exit code 2."""

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
    assert "logRCC" in out and "logWt" in out and "LBM" in out


def test_fit_csv(csv_file, capsys):
    assert main(["fit", str(csv_file), "--y", "y", "--a", "a0,a1,a2,a3", "--b", "b0,b1,b2", "--rank", "1"]) == 0
    out = capsys.readouterr().out
    assert "No. observations:" in out and "400" in out and "b2" in out


def test_fit_auto_rank(csv_file, capsys):
    assert main(["fit", str(csv_file), "--y", "y", "--a", "a0,a1,a2,a3", "--b", "b0,b1,b2",
                 "--rank", "auto", "--rank-method", "permutation", "--seed", "4"]) == 0
    out = capsys.readouterr().out
    assert "permutation tests, alpha=0.05" in out and "Rank tests (permutation)" in out


def test_fit_sparse(csv_file, capsys):
    assert main(["fit", str(csv_file), "--y", "y", "--a", "a0,a1,a2,a3", "--b", "b0,b1,b2",
                 "--rank", "1", "--sparsity", "2,2"]) == 0
    assert "(2, 2)" in capsys.readouterr().out


@pytest.mark.parametrize(
    "args,msg",
    [
        (["fit", "nofile.csv", "--y", "y", "--a", "a0", "--b", "b0", "--rank", "1"], "file not found"),
        (["fit", "{csv}", "--y", "zz", "--a", "a0", "--b", "b0", "--rank", "1"], "no column(s) ['zz']"),
        (["fit", "{csv}", "--y", "y", "--a", "a0,a1", "--b", "b0", "--rank", "2"], "rank must be between 1 and 1"),
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
