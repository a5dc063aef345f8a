"""Formulas (formulaic): new data rebuilt with the training transformations."""

import pickle

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr


@pytest.fixture(scope="module")
def frame():
    sim = jdr.simulate.bilinear(600, 4, 3, 1, seed=11)
    df = sim.frame
    df["grp"] = np.where(df["a3"] > 0.3, "hi", np.where(df["a3"] < -0.3, "lo", "mid"))
    df["a2"] = df["a2"].abs() + 0.5
    return df


FORMULA = "y ~ a0 + center(a1) + np.log(a2) + C(grp) | b0 + b1 + scale(b2)"


def test_transform_new_data_uses_training_codings(frame):
    train, new = frame.iloc[:500], frame.iloc[500:].copy()
    res = jdr.JointDimReduction.from_formula(FORMULA, train).fit(1)
    assert "C(grp)[T.lo]" in res.directions_a.index
    got = res.transform(data=new)
    # by hand: the training mean of a1 and the training sd of b2 (formulaic's
    # scale uses ddof=1), the training levels of grp
    a = pd.DataFrame({
        "a0": new["a0"],
        "center(a1)": new["a1"] - train["a1"].mean(),
        "np.log(a2)": np.log(new["a2"]),
        "C(grp)[T.lo]": (new["grp"] == "lo").astype(float),
        "C(grp)[T.mid]": (new["grp"] == "mid").astype(float),
    })
    b = pd.DataFrame({
        "b0": new["b0"], "b1": new["b1"],
        "scale(b2)": (new["b2"] - train["b2"].mean()) / train["b2"].std(ddof=1),
    })
    assert list(res.directions_a.index) == list(a.columns)
    want = res.transform(a, b)
    np.testing.assert_allclose(got.to_numpy(), want.to_numpy(), atol=1e-10)
    assert got.index.equals(new.index)
    # one level only in the new rows: still the training coding (three levels)
    only_lo = new[new["grp"] == "lo"]
    np.testing.assert_allclose(res.transform(data=only_lo).to_numpy(),
                               got.loc[only_lo.index].to_numpy(), atol=1e-10)
    # the training rows reproduce transform()
    np.testing.assert_allclose(res.transform(data=train).to_numpy(),
                               res.transform().to_numpy(), atol=1e-10)


def test_transform_data_errors(frame):
    res = jdr.JointDimReduction.from_formula(FORMULA, frame).fit(1)
    with pytest.raises(ValueError, match="not both"):
        res.transform(frame[["a0"]], frame[["b0"]], data=frame)
    with pytest.raises(ValueError, match="cannot build exog_a"):
        res.transform(data=frame.drop(columns="a0"))
    arr = jdr.JointDimReduction(frame["y"], frame[["a0", "a1"]], frame[["b0", "b1"]]).fit(1)
    with pytest.raises(ValueError, match="from_formula"):
        arr.transform(data=frame)


def test_formula_results_pickle(frame):
    res = jdr.JointDimReduction.from_formula(FORMULA, frame).fit(1)
    back = pickle.loads(pickle.dumps(res))
    np.testing.assert_allclose(back.transform(data=frame.iloc[:5]).to_numpy(),
                               res.transform(data=frame.iloc[:5]).to_numpy())
