"""Bundled and statsmodels data sets: shapes, blocks and sanity of values."""

import numpy as np

from jdr_stats import datasets


def test_concrete():
    df = datasets.load_concrete()
    assert df.shape == (1030, 9)
    blocks = datasets.CONCRETE_BLOCKS
    assert set(blocks["binder"]) | set(blocks["other"]) | {"compressive_strength"} == set(df.columns)
    # the published summary of the UCI data
    means = df.mean()
    np.testing.assert_allclose(
        means[["cement", "water", "age", "compressive_strength"]],
        [281.167864, 181.567282, 45.662136, 35.817961], atol=1e-5)
    assert df["age"].between(1, 365).all() and (df["cement"] > 0).all()
    assert df.notna().all().all()


def test_star98():
    df = datasets.load_star98()
    assert df.shape == (303, 14)
    assert df["PCTABOVE"].between(0, 1).all()
    cols = sum(datasets.STAR98_BLOCKS.values(), [])
    assert len(set(cols)) == 12 and set(cols) <= set(df.columns)


def test_anes96():
    df = datasets.load_anes96()
    assert df.shape == (944, 10)
    assert set(df["vote"].unique()) == {0.0, 1.0}
    cols = sum(datasets.ANES96_BLOCKS.values(), [])
    assert set(cols) | {"vote"} == set(df.columns)
