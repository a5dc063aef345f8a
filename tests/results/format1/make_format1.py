"""Write the version-1 results files of this folder (run on commit f645b23,
the last that wrote format version 1):

    git worktree add /tmp/old f645b23
    cd /tmp/old && OMP_NUM_THREADS=1 PYTHONPATH=. python \
        <this checkout>/tests/results/format1/make_format1.py <this folder>

A two-block fit (top class ``JDRResults``, the two-block fit's own
attributes) and a three-block fit (top class ``KBlockResults``), both of
the design below, which ``tests/test_persistence_safety.py`` refits and
compares with what it loads.
"""

import sys
import warnings

import numpy as np

import jdr_stats as jdr


def design() -> tuple[np.ndarray, dict[str, np.ndarray]]:
    rng = np.random.default_rng(11)
    blocks = {n: rng.standard_normal((80, w)) for n, w in (("a", 3), ("b", 2), ("c", 2))}
    y = blocks["a"][:, 0] * blocks["b"][:, 0] + blocks["c"][:, 1] * blocks["a"][:, 0] \
        + 0.5 * rng.standard_normal(80)
    return y, blocks


if __name__ == "__main__":
    out = sys.argv[1]
    y, blocks = design()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        two = jdr.JointDimReduction.from_blocks(y, {n: blocks[n] for n in "ab"}).fit(1)
        three = jdr.JointDimReduction.from_blocks(y, blocks).fit(1)
    two.save(f"{out}/two_block.jdr")
    three.save(f"{out}/three_block.jdr")
