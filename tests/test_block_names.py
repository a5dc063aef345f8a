"""Block names: one validation for the model and for K-block moments.

``JointDimReduction.from_blocks`` and ``Moments.from_blocks`` accept and
refuse the same names, with the same message naming the argument and the
names refused.
"""

import numpy as np
import pytest

import jdr_stats as jdr

BAD = [{"genes": 0, "two words": 1, "c": 2}, {"g": 0, "1x": 1, "c": 2},
       {"g": 0, "l-x": 1, "c": 2}, {"g": 0, 3: 1, "c": 2}]


def _blocks(keys, m=40, seed=0):
    rng = np.random.default_rng(seed)
    return rng.normal(size=m), {k: rng.normal(size=(m, 2)) for k in keys}


@pytest.mark.parametrize("keys", BAD, ids=lambda k: repr(list(k)))
def test_both_paths_refuse_the_same_names_alike(keys):
    y, blocks = _blocks(keys)
    msgs = []
    for build in (jdr.JointDimReduction.from_blocks, jdr.Moments.from_blocks):
        with pytest.raises(ValueError, match="blocks: names must be identifiers") as exc:
            build(y, blocks)
        msgs.append(str(exc.value))
    assert msgs[0] == msgs[1]


def test_both_paths_accept_identifiers():
    y, blocks = _blocks(["genes_1", "Lipids", "c"])
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    mom = jdr.Moments.from_blocks(y, blocks)
    assert model.block_names == mom.block_names == ("genes_1", "Lipids", "c")
