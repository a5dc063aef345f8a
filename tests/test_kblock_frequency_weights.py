"""Three blocks with whole-number case weights fit as the rows repeated:
directions, eigenvalues, the automatic whitening, the shrinkage, the rank
tests (statistics, references, p-values) and the chosen ranks, in memory
and streamed from Parquet and CSV."""

import warnings

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr
from jdr_stats.core._linalg import principal_angles
from jdr_stats.exceptions import RankSelectionWarning

NAMES = ("genes", "lipids", "clinical")


def _frame(m=60, widths=(4, 3, 3), seed=0):
    """Few rows (the whitening's choice and the shrinkage depend on the
    count), a mixed link, weights 1 to 3."""
    rng = np.random.default_rng(seed)
    xs = [rng.normal(size=(m, n)) for n in widths]
    xs[1][:, 0] += 0.5 * xs[0][:, 0]
    y = (xs[0][:, 0] * xs[1][:, 0] + xs[0][:, 0] * xs[1][:, 0] * xs[2][:, 0]
         + 0.5 * rng.normal(size=m))
    cols = {n: [f"{n}{j}" for j in range(x.shape[1])] for n, x in zip(NAMES, xs, strict=True)}
    df = pd.DataFrame(np.hstack(xs), columns=[c for v in cols.values() for c in v])
    df["y"] = y
    df["w"] = rng.integers(1, 4, size=m).astype(float)
    return df, cols


def _repeated(df):
    return df.loc[df.index.repeat(df["w"].astype(int))].reset_index(drop=True)


def _blocks(df, cols):
    return {n: df[c] for n, c in cols.items()}


def _text(res):
    return " ".join(str(res.summary()).split())


def _same(weighted, repeated, tests=True):
    assert weighted.settings["whitening"] == repeated.settings["whitening"]
    assert weighted.rank == repeated.rank
    for n in NAMES:
        np.testing.assert_allclose(weighted.eigenvalues[n].to_numpy(),
                                   repeated.eigenvalues[n].to_numpy(), rtol=1e-9, atol=0)
        if weighted.ranks[n]:
            assert np.max(principal_angles(weighted.directions[n].to_numpy(),
                                           repeated.directions[n].to_numpy())) < 1e-7
    if tests:
        ta, tb = weighted.rank_tests().tables, repeated.rank_tests().tables
        for n in NAMES:
            pd.testing.assert_frame_equal(ta[n], tb[n], rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize(("independent", "whitening"), [
    (True, "auto"), (True, "shrinkage"), (True, "sample"), (True, "diagonal"),
    (False, "auto")])
def test_integer_weights_equal_repeated_rows_in_memory(independent, whitening):
    df, cols = _frame()
    rep = _repeated(df)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankSelectionWarning)
        weighted = jdr.JointDimReduction.from_blocks(df.y, _blocks(df, cols), weights=df.w).fit(
            "auto", independent_blocks=independent, whitening=whitening)
        repeated = jdr.JointDimReduction.from_blocks(rep.y, _blocks(rep, cols)).fit(
            "auto", independent_blocks=independent, whitening=whitening)
    _same(weighted, repeated)
    # the rank tests read each copy's analytic influence, as the repeated rows'
    assert weighted.settings["influence"]["name"] == repeated.settings["influence"]["name"]
    count = f"No. observations: {len(rep)} ({len(df)} rows, whole-number case weights)"
    assert count in _text(weighted)
    assert f"No. observations: {len(rep)} Piece weights" in _text(repeated)


def test_auto_whitening_and_shrinkage_count_the_weights():
    """60 rows of 4 columns per block stand for 122 observations: the auto
    rule's ratio and the OAS intensity are the repeated rows' (the row
    count's ratio 4 / 60 would shrink; 4 / 122 does not)."""
    df, cols = _frame()
    weighted = jdr.JointDimReduction.from_blocks(df.y, _blocks(df, cols), weights=df.w).fit(
        1, independent_blocks=True)
    assert weighted.settings["whitening"] == "sample"
    assert "max(n_k)/m = 0.0328" in weighted.settings["whitening_reason"]
    frac = jdr.JointDimReduction.from_blocks(df.y, _blocks(df, cols),
                                             weights=df.w + 0.5).fit(1, independent_blocks=True)
    assert frac.settings["whitening"] == "shrinkage"  # not whole numbers: the rows count
    assert "No. observations: 60 Piece weights" in _text(frac)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_integer_weights_equal_repeated_rows_streamed(tmp_path, fmt):
    df, cols = _frame()
    rep = _repeated(df)
    read = getattr(jdr.JointDimReduction, f"from_{fmt}")
    paths = {}
    for name, frame in (("w", df), ("rep", rep)):
        paths[name] = tmp_path / f"{name}.{fmt}"
        if fmt == "parquet":
            frame.to_parquet(paths[name], row_group_size=25)
        else:
            frame.to_csv(paths[name], index=False)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RankSelectionWarning)
        weighted = read(paths["w"], y="y", blocks=cols, weights="w", batch_rows=17).fit(
            "auto", independent_blocks=True)
        repeated = read(paths["rep"], y="y", blocks=cols, batch_rows=17).fit(
            "auto", independent_blocks=True)
        memory = jdr.JointDimReduction.from_blocks(df.y, _blocks(df, cols), weights=df.w).fit(
            "auto", independent_blocks=True)
    _same(weighted, repeated)
    # streamed rank tests: the sums of the in-memory tables', the same ranks
    # (rank 0 included: block clinical shows no evidence here)
    assert weighted.rank == memory.rank and memory.ranks["clinical"] == 0
    ta, tm = weighted.rank_tests().tables, memory.rank_tests().tables
    for n in NAMES:
        pd.testing.assert_frame_equal(ta[n], tm[n], rtol=1e-8, atol=1e-12)
    assert f"No. observations: {len(rep)} ({len(df)} rows" in _text(weighted)


@pytest.mark.parametrize("fmt", ["parquet", "csv"])
def test_streamed_fractional_weights_refuse_the_rank_tests(tmp_path, fmt):
    from jdr_stats.exceptions import RowsNotInMemoryError

    df, cols = _frame()
    df["w"] = df["w"] + 0.5
    path = tmp_path / f"x.{fmt}"
    df.to_parquet(path) if fmt == "parquet" else df.to_csv(path, index=False)
    model = getattr(jdr.JointDimReduction, f"from_{fmt}")(path, y="y", blocks=cols,
                                                           weights="w")
    with pytest.raises(RowsNotInMemoryError, match="not all whole numbers"):
        model.fit("auto", independent_blocks=True)


def test_kblock_moments_with_integer_weights_fit_as_repeated_rows():
    """``Moments.from_blocks`` with whole-number weights (merged parts
    included): the auto whitening and the shrinkage count the total weight,
    as the repeated rows' moments do; fractional weights count the rows."""
    df, cols = _frame()
    rep = _repeated(df)
    parts = sum(jdr.Moments.from_blocks(df.y[i:i + 30], _blocks(df.iloc[i:i + 30], cols),
                                        weights=df.w[i:i + 30]) for i in (0, 30))
    assert parts.whole_weights
    repeated = jdr.Moments.from_blocks(rep.y, _blocks(rep, cols))
    for whitening in ("auto", "shrinkage"):
        a = jdr.JointDimReduction.from_moments(parts).fit(1, independent_blocks=True,
                                                          whitening=whitening)
        b = jdr.JointDimReduction.from_moments(repeated).fit(1, independent_blocks=True,
                                                             whitening=whitening)
        _same(a, b, tests=False)
    assert a.settings["whitening"] == "shrinkage" and "No. observations: 122" in _text(a)
    frac = jdr.Moments.from_blocks(df.y, _blocks(df, cols), weights=df.w + 0.5)
    assert not frac.whole_weights
    res = jdr.JointDimReduction.from_moments(frac).fit(1, independent_blocks=True)
    assert res.settings["whitening"] == "shrinkage" and "No. observations: 60 " in _text(res)
