"""The command line streams Parquet files and chunked CSV files."""

import json

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
    assert main(["fit", str(pq), *ARGS, "--rank", "auto", "--rank-method", "chi2",
                 "--stream"]) == 0
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
    assert main(["fit", str(pq), *ARGS, "--rank", "auto", "--stream"]) == 0
    assert _loadings(capsys.readouterr().out) == _loadings(in_memory)
    assert main(["fit", str(pq), *ARGS, "--rank", "auto"]) == 0  # small: read into memory
    assert _loadings(capsys.readouterr().out) == _loadings(in_memory)


def test_streamed_errors_are_one_line(sim, tmp_path, capsys):
    csv = tmp_path / "d.csv"
    sim.frame.to_csv(csv, index=False)
    assert main(["fit", str(csv), *ARGS, "--rank", "2", "--chunksize", "0"]) == 2
    assert "expected a positive integer" in capsys.readouterr().err
    assert main(["fit", str(csv), *ARGS, "--rank", "auto", "--rank-method", "permutation",
                 "--chunksize", "100"]) == 2
    err = capsys.readouterr().err
    assert err == ("jdr_stats: error: --rank-method permutation needs the rows in memory, but "
                   "the CSV file is streamed (--chunksize was given); drop --chunksize to read "
                   "it into memory\n")
    assert main(["fit", str(csv), *ARGS, "--rank", "auto", "--rank-method", "spectral",
                 "--chunksize", "100"]) == 2
    assert "--rank-method spectral needs the rows in memory" in capsys.readouterr().err
    assert main(["fit", str(csv), "--y", "y", "--a", "a0,zz", "--b", "b0", "--rank", "1",
                 "--chunksize", "100"]) == 2
    assert "column(s) ['zz'] not in the CSV file" in capsys.readouterr().err
    assert main(["fit", str(csv), *ARGS, "--rank", "1", "--chunksize", "100",
                 "--missing", "drop"]) == 2
    assert "--missing drop needs the rows" in capsys.readouterr().err
    assert main(["fit", str(tmp_path / "none.parquet"), *ARGS, "--rank", "1"]) == 2
    assert "does not exist" in capsys.readouterr().err


@pytest.fixture
def parquet_file(sim, tmp_path):
    pytest.importorskip("pyarrow")
    pq = tmp_path / "d.parquet"
    sim.frame.to_parquet(pq, row_group_size=300)
    return pq


def test_small_parquet_is_read_into_memory(parquet_file, tmp_path, capsys):
    # 1500 rows x 8 columns x 8 bytes = 96 kB, far below CLI_IN_MEMORY_BYTES:
    # every procedure works, as on a CSV file
    feats = tmp_path / "f.csv"
    assert main(["fit", str(parquet_file), *ARGS, "--rank", "2", "--bootstrap", "39",
                 "--support", "--seed", "1", "--features-out", str(feats)]) == 0
    out = capsys.readouterr().out
    assert "Bootstrap" in out and "Support" in out
    assert feats.read_text().startswith("row,a_dir1,a_dir2,b_dir1,b_dir2\n")


def test_threshold_is_the_config_knob(parquet_file, monkeypatch, capsys):
    from jdr_stats import config

    monkeypatch.setattr(config, "CLI_IN_MEMORY_BYTES", 1500 * 8 * 8 - 1)
    assert main(["fit", str(parquet_file), *ARGS, "--rank", "2", "--bootstrap", "39",
                 "--support", "--features-out", "f.csv"]) == 2
    err = capsys.readouterr().err
    assert err == (
        "jdr_stats: error: --bootstrap (pairs; --bootstrap-method poisson streams), "
        "--support, --features-out need the rows in memory, but Parquet input is streamed "
        "(its columns take 0 MB as float64, above the 0 MB read into memory "
        "(jdr_stats.config.CLI_IN_MEMORY_BYTES)); raise "
        "jdr_stats.config.CLI_IN_MEMORY_BYTES to read it into memory\n")
    monkeypatch.setattr(config, "CLI_IN_MEMORY_BYTES", 1500 * 8 * 8)
    assert main(["fit", str(parquet_file), *ARGS, "--rank", "2", "--bootstrap", "39"]) == 0
    capsys.readouterr()


def test_poisson_bootstrap_streams(sim, parquet_file, tmp_path, capsys):
    # the same Poisson replicates streamed and in memory (weights seeded by row block)
    args = [*ARGS, "--rank", "2", "--bootstrap", "39", "--bootstrap-method", "poisson",
            "--seed", "5", "--format", "json"]
    assert main(["fit", str(parquet_file), *args, "--stream"]) == 0
    streamed = json.loads(capsys.readouterr().out)["bootstrap"]
    csv = tmp_path / "d.csv"
    sim.frame.to_csv(csv, index=False, float_format="%.17g")
    assert main(["fit", str(csv), *args, "--chunksize", "250"]) == 0
    chunked = json.loads(capsys.readouterr().out)["bootstrap"]
    assert main(["fit", str(csv), *args]) == 0
    in_memory = json.loads(capsys.readouterr().out)["bootstrap"]
    assert streamed["max_angle_bound_deg"] == pytest.approx(in_memory["max_angle_bound_deg"],
                                                            rel=1e-9)
    # the chunked CSV parse rounds some values differently (observed 8e-8)
    assert chunked["max_angle_bound_deg"] == pytest.approx(in_memory["max_angle_bound_deg"],
                                                           rel=1e-6)


def test_streamed_weights_and_sep(sim, tmp_path, capsys):
    frame = sim.frame.assign(w=1.0 + (sim.frame.index % 3))
    csv = tmp_path / "d.tsv"
    frame.to_csv(csv, index=False, sep="\t", float_format="%.17g")
    args = ["fit", str(csv), *ARGS, "--weights", "w", "--sep", "tab", "--rank", "2"]
    assert main(args) == 0
    in_memory = capsys.readouterr().out
    assert main([*args, "--chunksize", "333"]) == 0
    assert _loadings(capsys.readouterr().out) == _loadings(in_memory)
