"""The command line streams Parquet files and chunked CSV files."""

import pytest

import jdr_stats as jdr
from jdr_stats.cli import main

ARGS = ["--y", "y", "--a", "a0,a1,a2,a3", "--b", "b0,b1,b2"]


@pytest.fixture(scope="module")
def sim():
    return jdr.simulate.bilinear(1500, 4, 3, 2, seed=8)


def _loadings(out):
    """The printed summary minus its header lines (which hold a timestamp-free title)."""
    return out[out.index("k  "):]


def test_chunked_csv_and_parquet_print_the_in_memory_summary(sim, tmp_path, capsys):
    csv = tmp_path / "d.csv"
    sim.frame.to_csv(csv, index=False, float_format="%.17g")
    assert main(["fit", str(csv), *ARGS, "--rank", "2"]) == 0
    in_memory = capsys.readouterr().out
    assert main(["fit", str(csv), *ARGS, "--rank", "2", "--chunksize", "200"]) == 0
    chunked = capsys.readouterr().out
    assert _loadings(chunked) == _loadings(in_memory)
    pytest.importorskip("pyarrow")
    pq = tmp_path / "d.parquet"
    sim.frame.to_parquet(pq, row_group_size=300)
    assert main(["fit", str(pq), *ARGS, "--rank", "auto", "--rank-method", "chi2"]) == 0
    out = capsys.readouterr().out
    assert "Rank tests (chi2)" in out and "No. observations:   1500" in out


def test_default_rank_selection_streams(sim, tmp_path, capsys):
    # --rank auto with the default (robust) tests: one more streamed pass,
    # the same summary (rank tests included) as the in-memory fit
    csv = tmp_path / "d.csv"
    sim.frame.to_csv(csv, index=False, float_format="%.17g")
    assert main(["fit", str(csv), *ARGS, "--rank", "auto"]) == 0
    in_memory = capsys.readouterr().out
    assert "Rank tests (robust)" in in_memory
    assert main(["fit", str(csv), *ARGS, "--rank", "auto", "--chunksize", "200"]) == 0
    assert _loadings(capsys.readouterr().out) == _loadings(in_memory)
    pytest.importorskip("pyarrow")
    pq = tmp_path / "d.parquet"
    sim.frame.to_parquet(pq, row_group_size=300)
    assert main(["fit", str(pq), *ARGS, "--rank", "auto"]) == 0
    assert _loadings(capsys.readouterr().out) == _loadings(in_memory)


def test_streamed_errors_are_one_line(sim, tmp_path, capsys):
    csv = tmp_path / "d.csv"
    sim.frame.to_csv(csv, index=False)
    assert main(["fit", str(csv), *ARGS, "--rank", "2", "--chunksize", "0"]) == 2
    assert "expected a positive integer" in capsys.readouterr().err
    assert main(["fit", str(csv), *ARGS, "--rank", "auto", "--rank-method", "permutation",
                 "--chunksize", "100"]) == 2
    err = capsys.readouterr().err
    assert "the permutation rank test needs the rows" in err and err.count("\n") == 1
    assert main(["fit", str(csv), "--y", "y", "--a", "a0,zz", "--b", "b0", "--rank", "1",
                 "--chunksize", "100"]) == 2
    assert "column(s) ['zz'] not in the CSV file" in capsys.readouterr().err
    assert main(["fit", str(csv), *ARGS, "--rank", "1", "--chunksize", "100",
                 "--missing", "drop"]) == 2
    assert "--missing drop needs the rows" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "none.parquet"), *ARGS, "--rank", "1"]) == 2
    assert "does not exist" in capsys.readouterr().err
