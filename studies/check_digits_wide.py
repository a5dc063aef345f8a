"""The default rank test on a small real data set much wider than its sample.

``sklearn.datasets.load_digits`` (8 x 8 images, not bundled with the
package): block a = the pixels of the top half, block b = those of the
bottom half (each kept when nonzero in over 30% of all 1797 images and with
over 5 distinct values: 22 + 22 pixels), y = the digit, and the first 24
images of a seeded permutation, so ``n1 n2 / m = 20.2``: the default
(``"auto"``) runs the combined test.  Prints the k = 0 row of the default
table and of the robust test alone.  Run from the repository root (needs
scikit-learn)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_digits_wide.py
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from sklearn.datasets import load_digits

import jdr_stats as jdr


def digits_wide(m: int = 24) -> tuple[pd.Series, pd.DataFrame, pd.DataFrame]:
    d = load_digits()
    img = d.data.reshape(-1, 8, 8)
    top = pd.DataFrame(img[:, :4, :].reshape(-1, 32),
                       columns=[f"T{r}{c}" for r in range(4) for c in range(8)])
    bottom = pd.DataFrame(img[:, 4:, :].reshape(-1, 32),
                          columns=[f"B{r}{c}" for r in range(4, 8) for c in range(8)])

    def keep(x: pd.DataFrame) -> pd.DataFrame:
        return x[[c for c in x if (x[c] != 0).mean() > 0.3 and x[c].nunique() > 5]]

    rows = np.random.default_rng(1).permutation(len(d.target))[:m]
    y = pd.Series(d.target.astype(float), name="digit")
    return (y.iloc[rows].reset_index(drop=True), keep(top).iloc[rows].reset_index(drop=True),
            keep(bottom).iloc[rows].reset_index(drop=True))


def main() -> None:
    y, a, b = digits_wide()
    print(f"# digits: m = {len(y)}, n1 = {a.shape[1]}, n2 = {b.shape[1]}, "
          f"n1 n2 / m = {a.shape[1] * b.shape[1] / len(y):.1f}")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = jdr.JointDimReduction(y, a, b).fit(1)
        for method in ("auto", "robust"):
            rt = res.rank_tests(method, max_rank=0, seed=1)
            print(f"method={method!r} ran {rt.method!r}:")
            print(rt.table.round(4).to_string())


if __name__ == "__main__":
    main()
