"""Two blocks through the K-block engine equal the two-block fit.

The K-block fit combines each block's pieces into one Gram matrix and takes
its leading eigenvectors; with two blocks the only piece is the cross
moment, so the Gram of block a is ``X X^T`` (up to the piece's scale) and
its eigenvectors are the left singular vectors of the two-block ``X_lin``.
The subspaces must agree to rounding and the eigenvalues must be the squared
singular values times one common factor, for both estimators and for
independent or correlated blocks.
"""

from __future__ import annotations

import numpy as np
import pytest

import jdr_stats as jdr
from jdr_stats.fitting._kfit import fit_kblocks
from jdr_stats.metrics import principal_angles


def _designs():
    for seed, corr in [(0, 0.0), (1, 0.5), (2, 0.8)]:
        sim = jdr.simulate.bilinear(800, 6, 5, 2, seed=seed)
        yield seed, sim.y, sim.a, sim.b + corr * sim.a[:, :5]


@pytest.mark.parametrize("independent_blocks", [True, False])
@pytest.mark.parametrize("design", list(_designs()), ids=lambda d: f"seed{d[0]}")
def test_k_engine_at_two_blocks_equals_the_two_block_fit(design, independent_blocks):
    _, y, a, b = design
    model = jdr.JointDimReduction(y, a, b)
    two = model.fit(2, independent_blocks=independent_blocks, whitening="sample")
    kres = fit_kblocks(model, 2, whitening="sample", independent_blocks=independent_blocks,
                       sparsity=None, rank_method="auto", alpha=0.05, seed=None)
    assert kres.settings["estimator"] == two.settings.estimator.name
    for name, dirs in (("a", two.directions_a), ("b", two.directions_b)):
        angles = np.degrees(principal_angles(np.asarray(dirs), np.asarray(kres.directions[name])))
        assert angles.max() < 1e-8, (name, angles)
        # eigenvalues of the block's Gram: the squared singular values, one common factor
        sv2 = np.asarray(two.singular_values, float) ** 2
        eig = np.asarray(kres.eigenvalues[name], float)[: len(sv2)]
        ratio = eig[:3] / sv2[:3]
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-9)
