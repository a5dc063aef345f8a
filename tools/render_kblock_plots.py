"""Render every plot of a K-block fit to PNG files, to look at them.

Three blocks (genes, lipids, clinical, one block in mixed units) with
``y`` their three-way interaction: the scree plot of a ``rank="auto"``
fit, the loadings, the sufficient summary plots (every block, one block,
a categorical response), the response surface of two blocks, the
bootstrap angles and the support of a sparse fit; with ``--all`` also
five blocks of per-block ranks and two blocks of per-block ranks.

Usage (from the repository root)::

    PYTHONPATH=. python tools/render_kblock_plots.py /tmp/kplots [--all]
"""

import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
import numpy as np
import pandas as pd

import jdr_stats as jdr
from jdr_stats import plotting


def main(out: pathlib.Path, every: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    m = 800
    g, lip, c = (rng.standard_normal((m, n)) for n in (6, 4, 3))
    y = (g[:, 0] + g[:, 1]) * lip[:, 0] * c[:, 0] + 0.5 * rng.standard_normal(m)
    blocks = {"genes": pd.DataFrame(g, columns=[f"gene{j}" for j in range(6)]),
              "lipids": pd.DataFrame(lip, columns=[f"lipid{j}" for j in range(4)]),
              "clinical": pd.DataFrame(c * [1, 100, 0.01], columns=["age", "bmi", "crp"])}
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    res = model.fit("auto")
    figs = {
        "k3_scree": plotting.plot_scree(res),
        "k3_loadings": plotting.plot_loadings(res),
        "k3_summary": plotting.plot_sufficient_summary(res),
        "k3_summary_one": plotting.plot_sufficient_summary(res, block="lipids"),
        "k3_surface": plotting.plot_response_surface(res, blocks=("genes", "lipids")),
        "k3_boot": plotting.plot_bootstrap_angles(res.bootstrap(n_boot=49, seed=1)),
        "k3_support": plotting.plot_support(
            model.fit(1, sparsity={"genes": 2, "lipids": 2, "clinical": 2})),
        "k3_summary_classes": plotting.plot_sufficient_summary(
            jdr.JointDimReduction.from_blocks(np.where(y > 0, "high", "low"),
                                              blocks).fit(1)),
    }
    if every:
        rng = np.random.default_rng(2)
        b5 = {f"block{k}": rng.standard_normal((600, w))
              for k, w in enumerate([3, 2, 2, 2, 3], 1)}
        y5 = np.prod([x[:, 0] for x in b5.values()], axis=0) + 0.4 * rng.standard_normal(600)
        r5 = jdr.JointDimReduction.from_blocks(y5, b5).fit(
            {"block1": 2, "block2": 1, "block3": 1, "block4": 1, "block5": 1})
        sim = jdr.simulate.bilinear(600, 4, 3, 2, seed=5)
        r2 = jdr.JointDimReduction(sim.y, sim.a, sim.b).fit({"a": 2, "b": 1})
        figs.update({
            "k5_scree": plotting.plot_scree(r5, rank_tests=r5.rank_tests()),
            "k5_loadings": plotting.plot_loadings(r5),
            "k5_summary": plotting.plot_sufficient_summary(r5),
            "k5_boot": plotting.plot_bootstrap_angles(r5.bootstrap(n_boot=19, seed=1)),
            "k2_loadings": plotting.plot_loadings(r2),
            "k2_surface": plotting.plot_response_surface(r2),
        })
    for name, fig in figs.items():
        fig.savefig(out / f"{name}.png", dpi=80)
        print(out / f"{name}.png")


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/kplots"),
         "--all" in sys.argv)
