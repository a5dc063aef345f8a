"""Issue 23 items 1-2: a full report rendered in every format and checked.

scikit-learn's diabetes data (y = progression; a = age, sex, bmi, bp;
b = s1..s6): fit("auto", seed=0) with its chi2 rank tests, bootstrap(99,
seed=1), select_support(seed=2).  Writes into OUT (default
/tmp/issue23_report): report.txt, report.html, report.tex (a plain article:
one section per summary) and floats.tex (each summary as its table float),
report.csv (one long table) and tables/ (one CSV per table); compiles both
.tex files with pdflatex and prints the log's Overfull/Underfull/float
warnings, the LaTeX font size each float chose, the rule widths of the text
and the shape pandas reads from the CSV.  Then the same check of
``as_latex()`` on longer summaries (simulated blocks of 12 x 10 to 60 x 50
variables: fits with two rank-test tables, support selections): the font
each chose, the number of floats, and the log's warnings.  Look at the PDF
pages with
``pdftoppm -png -r 70 OUT/report.pdf OUT/page`` and at the HTML in a browser.

Run from the repository root:

    PYTHONPATH=. OMP_NUM_THREADS=1 python studies/issue23_full_report.py [OUT]

Recorded output: studies/results/issue23_full_report.txt
"""
import re
import shutil
import subprocess
import sys
import warnings
from pathlib import Path

import pandas as pd
from sklearn.datasets import load_diabetes

import jdr_stats as jdr
from jdr_stats.report._report import csv_text, html_document, latex_document, write_csv_dir

OUT = Path(sys.argv[1] if len(sys.argv) > 1 else "/tmp/issue23_report")
OUT.mkdir(parents=True, exist_ok=True)
d = load_diabetes(as_frame=True, scaled=False).frame
model = jdr.JointDimReduction(d["target"], d[["age", "sex", "bmi", "bp"]],
                              d[[f"s{i}" for i in range(1, 7)]])
with warnings.catch_warnings():
    warnings.simplefilter("ignore", jdr.exceptions.JDRWarning)  # correlated blocks: reported
    res = model.fit("auto", seed=0)
    chi2 = res.rank_tests("chi2")
    boot = res.bootstrap(99, seed=1)
    support = model.select_support(rank=res.rank, seed=2)
parts = [res.summary(rank_tests=chi2), boot.summary(), support.summary()]

text = "\n\n".join(s.as_text() for s in parts)
(OUT / "report.txt").write_text(text + "\n")
for s in parts:
    widths = {len(line) for line in s.as_text().splitlines() if line and set(line) <= set("=-")}
    print(f"text  {s.title!r}: rule widths {sorted(widths)}")
(OUT / "report.html").write_text(html_document(parts))
(OUT / "report.csv").write_text(csv_text(parts))
frame = pd.read_csv(OUT / "report.csv")
print(f"csv   one read_csv call: {frame.shape[0]} rows x {frame.shape[1]} columns; "
      f"tables: {list(dict.fromkeys(frame['table']))}")
files = write_csv_dir(parts, OUT / "tables")
print(f"csv   --output-dir: {len(files)} files")
(OUT / "report.tex").write_text(latex_document(parts))
floats = "\n".join(s.as_latex() for s in parts)
(OUT / "floats.tex").write_text("\\documentclass{article}\n\\begin{document}\n" + floats
                                + "\\end{document}\n")
for s in parts:
    size = re.search(r"^\\(small|footnotesize|scriptsize|tiny)$", s.as_latex(), re.M)
    print(f"latex {s.title!r}: float in \\{size.group(1) if size else '?'}")
if shutil.which("pdflatex") is None:
    print("pdflatex not installed: LaTeX not compiled")
else:
    for name in ("report", "floats"):
        run = subprocess.run(["pdflatex", "-interaction=nonstopmode", f"{name}.tex"], cwd=OUT,
                             capture_output=True, text=True)
        log = (OUT / f"{name}.log").read_text(errors="replace")
        bad = [ln for ln in log.splitlines()
               if ln.startswith(("Overfull", "Underfull")) or "Float too large" in ln]
        pages = re.search(r"Output written on .*\((\d+) page", log)
        print(f"latex {name}.tex: rc={run.returncode}, {pages.group(1) if pages else '?'} pages, "
              f"box/float warnings: {bad or 'none'}")


print("long summaries, each as_latex() alone in a plain article:")
for n1, n2, r in ((12, 10, 2), (20, 15, 3), (30, 25, 2), (60, 50, 2)):
    sim = jdr.simulate.bilinear(6000, n1, n2, r, seed=1)
    m = jdr.JointDimReduction(sim.y, sim.a, sim.b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", jdr.exceptions.JDRWarning)
        fit = m.fit("auto", seed=0, rank_method="chi2")
        extra = fit.rank_tests("wald") if n1 < 40 else None  # wald: <= 2048 entries
        cases = {f"fit {n1}x{n2} r={r}": fit.summary(rank_tests=extra),
                 f"support {n1}x{n2}": m.select_support(rank=fit.rank, seed=0).summary()}
    for name, smry in cases.items():
        tex = smry.as_latex()
        stem = re.sub(r"\W+", "_", name)
        (OUT / f"{stem}.tex").write_text("\\documentclass{article}\n\\begin{document}\n"
                                         + tex + "\\end{document}\n")
        if shutil.which("pdflatex") is None:
            continue
        subprocess.run(["pdflatex", "-interaction=nonstopmode", f"{stem}.tex"], cwd=OUT,
                       capture_output=True)
        log = (OUT / f"{stem}.log").read_text(errors="replace")
        bad = [ln for ln in log.splitlines()
               if ln.startswith(("Overfull", "Underfull")) or "Float too large" in ln]
        size = re.search(r"^\\(small|footnotesize|scriptsize|tiny)$", tex, re.M)
        print(f"  {name:22s} \\{size.group(1) if size else '?':12s} "
              f"{tex.count(chr(92) + 'begin{table}')} float(s), warnings: {bad or 'none'}")
