"""Input types: strings and categories refused with a TypeError, booleans as 0/1."""

import numpy as np
import pandas as pd
import pytest

import jdr_stats as jdr


@pytest.fixture(scope="module")
def sim():
    return jdr.simulate.bilinear(300, 3, 3, 1, seed=2)


@pytest.mark.parametrize(
    "make",
    [
        lambda a: pd.DataFrame(a).astype(str),                 # numeric-looking strings
        lambda a: a.astype(str),                                # numpy unicode
        lambda a: a.astype(str).astype(object),                 # object array of text
        lambda a: pd.DataFrame(a).assign(z=pd.Categorical(["u", "v", "w"] * 100)),
        lambda a: a.astype(str).tolist(),                       # list of lists of text
    ],
)
def test_text_blocks_refused(sim, make):
    with pytest.raises(TypeError, match="exog_b must be numeric"):
        jdr.JointDimReduction(sim.y, sim.a, make(sim.b))


def test_text_response_refused(sim):
    with pytest.raises(TypeError, match="endog must be numeric or categorical; it holds"):
        jdr.JointDimReduction(sim.y.astype(str), sim.a, sim.b)


def test_baselines_refuse_text(sim):
    with pytest.raises(TypeError, match="must be numeric"):
        jdr.SIR(sim.y, pd.DataFrame(sim.a).astype(str))


def test_object_numbers_and_booleans_accepted(sim):
    b = pd.DataFrame(sim.b, columns=["u", "v", "w"])
    b["flag"] = b["u"] > 0
    res = jdr.JointDimReduction(sim.y, sim.a.astype(object), b).fit(1)
    np.testing.assert_array_equal(res.model.exog_b[:, 3], (b["u"] > 0).astype(float))
    np.testing.assert_array_equal(res.model.exog_a, sim.a)
