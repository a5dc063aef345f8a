"""One validation on every path, and the conventions of the ecosystem.

The same data and arguments are accepted or refused alike in memory, from
``from_blocks``, through a formula, from CSV and Parquet streams and through
dask; every refusal names the argument (or the command-line flag) and the
value; importing the package does not load the heavy scipy modules.
"""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["scipy.integrate", "scipy.stats"])
def test_import_does_not_load_heavy_scipy_modules(module: str) -> None:
    code = f"import jdr_stats, sys; print({module!r} in sys.modules)"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "False"


def test_lazy_scipy_stats_is_loaded_at_first_use() -> None:
    code = (
        "import sys\n"
        "from jdr_stats.runtime._lazy import stats\n"
        "print(abs(stats.chi2.sf(3.0, 3) - 0.3916251762710877) < 1e-12,"
        " 'scipy.stats' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert out.stdout.split() == ["True", "True"]


# ---------------------------------------------------------------------------
# One rule for case weights, arrays, seeds and memory on every path
# ---------------------------------------------------------------------------
import re  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

import jdr_stats as jdr  # noqa: E402
from jdr_stats import config  # noqa: E402
from jdr_stats.cli import main  # noqa: E402
from jdr_stats.sources import ArraySource  # noqa: E402

A_COLS, B_COLS, C_COLS = ["a0", "a1", "a2"], ["b0", "b1"], ["c0", "c1"]
ZERO_WEIGHT = r"weights must be positive .*got 0\.0 in row 5\b"


@pytest.fixture(scope="module")
def frame() -> pd.DataFrame:
    rng = np.random.default_rng(45)
    m = 200
    a, b, c = rng.normal(size=(m, 3)), rng.normal(size=(m, 2)), rng.normal(size=(m, 2))
    y = a[:, 0] * b[:, 0] + 0.3 * rng.normal(size=m)
    df = pd.DataFrame(np.column_stack([y, a, b, c]), columns=["y", *A_COLS, *B_COLS, *C_COLS])
    df["w"] = rng.integers(1, 4, size=m).astype(float)
    return df


@pytest.fixture(scope="module")
def zero_weight_files(frame, tmp_path_factory) -> dict[str, str]:
    df = frame.copy()
    df.loc[5, "w"] = 0.0
    folder = tmp_path_factory.mktemp("zero_weight")
    paths = {"csv": str(folder / "d.csv"), "parquet": str(folder / "d.parquet")}
    df.to_csv(paths["csv"], index=False)
    pytest.importorskip("pyarrow")
    df.to_parquet(paths["parquet"])
    return paths


def _zero_weights(frame: pd.DataFrame) -> np.ndarray:
    w = frame["w"].to_numpy().copy()
    w[5] = 0.0
    return w


def test_zero_weight_refused_in_memory_on_every_constructor(frame):
    w, df = _zero_weights(frame), frame
    y, a, b = df["y"], df[A_COLS], df[B_COLS]
    makers = {
        "arrays": lambda: jdr.JointDimReduction(y, a, b, weights=w),
        "from_blocks": lambda: jdr.JointDimReduction.from_blocks(y, [a, b], weights=w),
        "three blocks": lambda: jdr.JointDimReduction.from_blocks(
            y, [a, b, df[C_COLS]], weights=w),
        "formula": lambda: jdr.JointDimReduction.from_formula(
            "y ~ a0 + a1 + a2 | b0 + b1", df, weights=w),
        "source": lambda: jdr.JointDimReduction.from_source(
            ArraySource(y, a, b, weights=w)),
    }
    for name, make in makers.items():
        with pytest.raises(ValueError, match=ZERO_WEIGHT):
            make()
        assert name


@pytest.mark.parametrize("kind", ["csv", "parquet"])
@pytest.mark.parametrize("blocks", [2, 3])
def test_zero_weight_refused_when_streamed(zero_weight_files, kind, blocks):
    path = zero_weight_files[kind]
    spec = {"a": A_COLS, "b": B_COLS, **({"c": C_COLS} if blocks == 3 else {})}
    read = jdr.JointDimReduction.from_csv if kind == "csv" else jdr.JointDimReduction.from_parquet
    with pytest.raises(ValueError, match=ZERO_WEIGHT):
        read(path, y="y", blocks=spec, weights="w", batch_rows=64)


def test_zero_weight_in_a_late_chunk_names_its_row(frame, tmp_path):
    df = frame.copy()
    df.loc[150, "w"] = 0.0
    path = tmp_path / "late.csv"
    df.to_csv(path, index=False)
    with pytest.raises(ValueError, match=r"got 0\.0 in row 150\b"):
        jdr.JointDimReduction.from_csv(path, y="y", blocks={"a": A_COLS, "b": B_COLS},
                                       weights="w", batch_rows=64)


@pytest.mark.parametrize("stream", [False, True])
def test_cli_zero_weight_same_answer_streamed_or_not(zero_weight_files, capsys, stream):
    argv = ["fit", zero_weight_files["csv"], "--y", "y", "--a", ",".join(A_COLS),
            "--b", ",".join(B_COLS), "--rank", "1", "--weights", "w"]
    assert main(argv + (["--stream"] if stream else [])) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and re.search(ZERO_WEIGHT, err)


def test_moments_keep_taking_zero_weights(frame):
    w = _zero_weights(frame)
    mom = jdr.Moments.from_arrays(frame["y"], frame[A_COLS], frame[B_COLS], weights=w)
    assert mom.nobs == len(frame) and mom.weight == pytest.approx(w.sum())


def test_two_dimensional_weights_refused(frame):
    y, a, b = frame["y"], frame[A_COLS], frame[B_COLS]
    w2 = frame["w"].to_numpy().reshape(-1, 2)
    shape = re.escape(str(w2.shape))
    with pytest.raises(ValueError, match=f"weights must be one-dimensional.*{shape}"):
        jdr.JointDimReduction(y, a, b, weights=w2)
    with pytest.raises(ValueError, match=f"weights must be one-dimensional.*{shape}"):
        ArraySource(y, a, b, weights=w2)
    with pytest.raises(ValueError, match="weights must be one-dimensional"):
        jdr.JointDimReduction.from_blocks(y, [a, b, frame[C_COLS]], weights=w2)


def test_one_column_weights_equal_a_vector(frame):
    y, a, b, w = frame["y"], frame[A_COLS], frame[B_COLS], frame["w"].to_numpy()
    one = jdr.JointDimReduction(y, a, b, weights=w[:, None]).fit(rank=1)
    flat = jdr.JointDimReduction(y, a, b, weights=w).fit(rank=1)
    np.testing.assert_array_equal(one.singular_values, flat.singular_values)


@pytest.mark.parametrize("arg", ["endog", "exog_a", "exog_b"])
def test_complex_input_refused_naming_the_argument(frame, arg):
    inputs = {"endog": frame["y"].to_numpy(), "exog_a": frame[A_COLS].to_numpy(),
              "exog_b": frame[B_COLS].to_numpy()}
    inputs[arg] = inputs[arg] + 1j
    with pytest.raises(TypeError, match=f"{arg} holds complex numbers"):
        jdr.JointDimReduction(inputs["endog"], inputs["exog_a"], inputs["exog_b"])
    with pytest.raises(TypeError, match=f"{arg} holds complex numbers"):
        ArraySource(inputs["endog"], inputs["exog_a"], inputs["exog_b"])


def test_complex_columns_of_frames_and_dask_refused(frame):
    a = frame[A_COLS].astype(complex)
    with pytest.raises(TypeError, match=r"exog_a holds complex numbers \(dtype complex128\)"):
        jdr.JointDimReduction(frame["y"], a, frame[B_COLS])
    with pytest.raises(TypeError, match="block1 holds complex numbers"):  # K blocks' names
        jdr.JointDimReduction.from_blocks(frame["y"], [a, frame[B_COLS], frame[C_COLS]])
    with pytest.raises(TypeError, match="covariates holds complex numbers"):
        jdr.JointDimReduction(frame["y"], frame[A_COLS], frame[B_COLS],
                              covariates=frame[["c0"]].astype(complex))
    da = pytest.importorskip("dask.array")
    y = da.from_array(frame["y"].to_numpy(), chunks=50)
    b = da.from_array(frame[B_COLS].to_numpy(), chunks=(50, 2))
    with pytest.raises(TypeError, match="exog_a holds complex numbers"):
        jdr.JointDimReduction(y, da.from_array(a.to_numpy(), chunks=(50, 3)), b)


@pytest.fixture(scope="module")
def fitted(frame):
    return jdr.JointDimReduction(frame["y"], frame[A_COLS], frame[B_COLS]).fit(rank=1)


def test_negative_seed_refused_naming_seed(frame, fitted):
    msg = r"seed must be a nonnegative integer.*got seed=-1"
    with pytest.raises(ValueError, match=msg):
        fitted.bootstrap(49, seed=-1)
    with pytest.raises(ValueError, match=msg):
        fitted.association_test(n_perm=19, seed=-1)
    with pytest.raises(ValueError, match=msg):
        jdr.JointDimReduction(frame["y"], frame[A_COLS], frame[B_COLS]).fit("auto", seed=-1)
    three = jdr.JointDimReduction.from_blocks(
        frame["y"], [frame[A_COLS], frame[B_COLS], frame[C_COLS]]).fit(rank=1)
    with pytest.raises(ValueError, match=msg):
        three.bootstrap(5, seed=-1)
    with pytest.raises(TypeError, match=r"seed must be .*got seed=1\.5"):
        fitted.bootstrap(49, seed=1.5)


def test_cli_negative_seed_names_the_flag(zero_weight_files, capsys):
    argv = ["fit", zero_weight_files["csv"], "--y", "y", "--a", ",".join(A_COLS),
            "--b", ",".join(B_COLS), "--rank", "1", "--seed", "-1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == "jdr_stats: error: --seed must be a nonnegative integer; got -1\n"


def test_bootstrap_beyond_memory_refused_up_front(fitted, frame, monkeypatch):
    with pytest.raises(ValueError, match=r"n_boot=1000000000 needs about \d+\.\d GiB"):
        fitted.bootstrap(10**9)
    # against a configured budget: 999 replicates of (3 + 2) x 1 directions and
    # 2 singular values need 999 x 58 bytes
    monkeypatch.setattr(config, "MEMORY_LIMIT", 999 * 58 - 1)
    with pytest.raises(ValueError, match=r"n_boot=999 needs about .* GiB .*MEMORY_LIMIT"):
        fitted.bootstrap(999, seed=0)
    monkeypatch.setattr(config, "MEMORY_LIMIT", 999 * 58)
    assert len(fitted.bootstrap(999, seed=0).angles_a) == 999
    three = jdr.JointDimReduction.from_blocks(
        frame["y"], [frame[A_COLS], frame[B_COLS], frame[C_COLS]]).fit(rank=1)
    monkeypatch.setattr(config, "MEMORY_LIMIT", None)
    with pytest.raises(ValueError, match=r"n_boot=10000000000 needs about .* GiB"):
        three.bootstrap(10**10)


def test_cli_n_jobs_without_joblib_is_one_line(zero_weight_files, tmp_path):
    ok = tmp_path / "ok.csv"
    pd.read_csv(zero_weight_files["csv"]).assign(w=1.0).to_csv(ok, index=False)
    code = (
        "import sys; sys.modules['joblib'] = None\n"
        "from jdr_stats.cli import main\n"
        f"sys.exit(main(['fit', {str(ok)!r}, '--y', 'y', '--a', 'a0,a1,a2', '--b', 'b0,b1',"
        " '--rank', '1', '--bootstrap', '49', '--n-jobs', '2']))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr and out.stderr.count("\n") == 1
    assert "--n-jobs 2 needs joblib" in out.stderr


def test_cli_out_of_memory_is_one_line(zero_weight_files, tmp_path, capsys, monkeypatch):
    ok = tmp_path / "ok.csv"
    pd.read_csv(zero_weight_files["csv"]).assign(w=1.0).to_csv(ok, index=False)

    def too_big(*args, **kwargs):
        raise MemoryError("Unable to allocate 45.0 GiB for an array")

    monkeypatch.setattr(jdr.JointDimReduction, "fit", too_big)
    argv = ["fit", str(ok), "--y", "y", "--a", "a0,a1,a2", "--b", "b0,b1", "--rank", "1"]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err == "jdr_stats: error: out of memory: Unable to allocate 45.0 GiB for an array\n"


@pytest.mark.parametrize(("formula", "where"), [
    ("y ~ a0 + a1 | ", r"block 2 \(exog_b, after '\|' number 1\)"),
    ("y ~  | b0", r"block 1 \(exog_a, before the first '\|'\)"),
])
def test_empty_formula_block_is_named(frame, formula, where):
    with pytest.raises(ValueError, match=f"formula has an empty block: {where} has no terms"):
        jdr.JointDimReduction.from_formula(formula, frame)


def test_empty_block_of_a_three_block_formula_is_named(frame):
    with pytest.raises(ValueError, match=r"block 2 .* has no terms"):
        jdr.JointDimReduction.from_formula("y ~ a0 + a1 | | c0", frame)


def test_formula_errors_carry_no_terminal_codes(frame):
    with pytest.raises(ValueError) as info:
        jdr.JointDimReduction.from_formula("y ~ a0 + + | b0", frame)
    text = str(info.value)
    assert "cannot build exog_a" in text and "\x1b" not in text and "\n" not in text
